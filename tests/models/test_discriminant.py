"""LDA and QDA: the notes' hyperplane, scikit-learn parity, statistics that add."""

import contextlib
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import multivariate_normal
from sklearn import discriminant_analysis as skda
from sklearn.cluster import KMeans
from sklearn.covariance import OAS, LedoitWolf, ShrunkCovariance
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline

from bayeskit import LinearDiscriminantAnalysis as LDA
from bayeskit import QuadraticDiscriminantAnalysis as QDA


def problem(seed, k, d, n=400):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    X = (
        rng.normal(size=(n, d)) @ rng.normal(size=(d, d))
        + 0.8 * rng.normal(size=(k, d))[y]
    )
    return X, y


def datasets():
    yield from (
        ("random", *problem(s, k, d))
        for s, (k, d) in enumerate([(2, 2), (5, 2), (2, 50), (5, 50)])
    )
    for name, load in (
        ("iris", load_iris),
        ("wine", load_wine),
        ("cancer", load_breast_cancer),
    ):
        X, y = load(return_X_y=True)
        yield name, X, y


DATA = list(datasets())
SOLVERS = [
    ("svd", None),
    ("lsqr", None),
    ("lsqr", 0.3),
    ("lsqr", "auto"),
    ("eigen", None),
    ("eigen", 0.2),
    ("eigen", "auto"),
]


@pytest.mark.parity
@pytest.mark.parametrize("solver, shrinkage", SOLVERS)
@pytest.mark.parametrize("name, X, y", DATA, ids=[d[0] for d in DATA])
def test_lda_parity_with_sklearn(name, X, y, solver, shrinkage):
    ours = LDA(solver=solver, shrinkage=shrinkage).fit(X, y)
    theirs = skda.LinearDiscriminantAnalysis(solver=solver, shrinkage=shrinkage).fit(
        X, y
    )
    np.testing.assert_allclose(
        ours.predict_proba(X), theirs.predict_proba(X), atol=1e-8
    )
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_allclose(ours.means_, theirs.means_, rtol=1e-12)
    scale = np.abs(theirs.coef_).max()
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-7 * scale)
    np.testing.assert_allclose(
        ours.explained_variance_ratio_ if solver != "lsqr" else 0,
        theirs.explained_variance_ratio_ if solver != "lsqr" else 0,
        atol=1e-8,
    )
    if solver != "lsqr":
        a, b = ours.transform(X), theirs.transform(X)
        sign = np.sign(np.sum(a * b, axis=0))
        np.testing.assert_allclose(a * sign, b, atol=1e-7 * np.abs(b).max())


@pytest.mark.parity
@pytest.mark.parametrize("reg_param", [0.0, 0.3])
@pytest.mark.parametrize("name, X, y", DATA[:3] + DATA[4:6], ids=lambda v: str(v)[:8])
def test_qda_parity_with_sklearn(name, X, y, reg_param):
    ours = QDA(reg_param=reg_param, store_covariance=True).fit(X, y)
    theirs = skda.QuadraticDiscriminantAnalysis(
        reg_param=reg_param, store_covariance=True
    ).fit(X, y)
    np.testing.assert_allclose(
        ours.predict_proba(X), theirs.predict_proba(X), atol=1e-8
    )
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    for a, b in zip(ours.covariance_, theirs.covariance_):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for a, b in zip(ours.scalings_, theirs.scalings_):
        np.testing.assert_allclose(a, b, rtol=1e-9)


def test_two_class_boundary_is_the_notes_hyperplane(rng):
    X, _ = problem(3, 2, 4)
    # Balanced classes: every solver's covariance_ is the one its scores use.
    y = np.arange(len(X)) % 2
    X = X + 0.8 * y[:, None]
    for solver in ("svd", "lsqr", "eigen"):
        lda = LDA(solver=solver, priors=[0.5, 0.5], store_covariance=True).fit(X, y)
        mu1, mu2 = lda.means_
        sigma = lda.covariance_
        w = np.linalg.solve(sigma, mu1 - mu2)
        # The fitted log odds of class 0 vs 1 are w^T (x - (mu1 + mu2) / 2).
        np.testing.assert_allclose(-lda.coef_[0], w, rtol=1e-10)
        np.testing.assert_allclose(-lda.intercept_[0], -w @ (mu1 + mu2) / 2, rtol=1e-10)
        pts = rng.normal(size=(20, 4))
        np.testing.assert_allclose(
            -lda.decision_function(pts), (pts - (mu1 + mu2) / 2) @ w, rtol=1e-9
        )


def test_joint_log_proba_is_the_gaussian_density(rng):
    X, y = problem(4, 3, 3)
    for est in (LDA(solver="lsqr"), LDA(solver="svd"), QDA(store_covariance=True)):
        est.fit(X, y)
        q = rng.normal(size=(10, 3))
        joint = est.predict_joint_log_proba(q)
        for k in range(3):
            cov = (
                est.covariance_[k]
                if isinstance(est, QDA)
                else np.cov((X - est.means_[y]).T, bias=True)
            )
            ref = multivariate_normal(est.means_[k], cov).logpdf(q) + np.log(
                est.priors_[k]
            )
            np.testing.assert_allclose(joint[:, k], ref, rtol=1e-9)


@pytest.mark.parametrize(
    "est",
    [
        LDA(),
        LDA(solver="lsqr", shrinkage=0.2),
        LDA(solver="eigen"),
        QDA(),
        QDA(covariance_prior_weight=2.0, reg_param=0.1),
    ],
)
def test_partial_fit_equals_fit(est, rng):
    X, y = problem(5, 3, 4)
    full = est.fit(X, y).predict_proba(X)
    chunked = type(est)(**est.get_params())
    for part in np.array_split(rng.permutation(len(y)), 5):
        chunked.partial_fit(X[part], y[part], classes=[0, 1, 2])
    np.testing.assert_allclose(chunked.predict_proba(X), full, atol=1e-10)


def test_auto_shrinkage_needs_one_fit():
    X, y = problem(6, 2, 3)
    lda = LDA(solver="lsqr", shrinkage="auto").partial_fit(X, y)
    with pytest.raises(ValueError, match="shrinkage='auto'"):
        lda.partial_fit(X, y)


@pytest.mark.parametrize("est", [LDA(), LDA(solver="eigen", shrinkage=0.1), QDA()])
def test_integer_weights_equal_repetition(est, rng):
    X, y = problem(7, 3, 3)
    w = rng.integers(0, 4, len(y))
    a = est.fit(X, y, sample_weight=w).predict_proba(X)
    b = est.fit(np.repeat(X, w, axis=0), np.repeat(y, w)).predict_proba(X)
    np.testing.assert_allclose(a, b, atol=1e-10)


@pytest.mark.parametrize("est", [LDA(), LDA(solver="lsqr"), QDA()])
def test_far_from_origin_and_log_proba_without_underflow(est):
    X, y = problem(8, 3, 3)
    base = est.fit(X, y).predict_proba(X)
    shifted = est.fit(X + 1e6, y).predict_proba(X + 1e6)
    np.testing.assert_allclose(shifted, base, atol=1e-6)
    far = X[:2] + 1e6 + 200.0
    logp = est.predict_log_proba(far)
    assert np.all(np.isfinite(logp)) and logp.min() < -800
    np.testing.assert_allclose(np.exp(logp), est.predict_proba(far))


def test_collinear_and_constant_features(rng):
    X, y = problem(9, 3, 3)
    X = np.column_stack([X, X[:, 0] + X[:, 1], np.full(len(X), 2.0)])
    for est in (
        LDA(),
        LDA(solver="lsqr", shrinkage="auto"),
        LDA(solver="eigen", shrinkage=0.1),
        QDA(covariance_prior_weight=1.0),
    ):
        proba = est.fit(X, y).predict_proba(X)
        assert np.all(np.isfinite(proba)) and (est.predict(X) == y).mean() > 0.5
    # As scikit-learn: 'lsqr' takes the minimum-norm solution, 'eigen' cannot.
    proba = LDA(solver="lsqr").fit(X, y).predict_proba(X)
    np.testing.assert_allclose(
        proba,
        skda.LinearDiscriminantAnalysis(solver="lsqr").fit(X, y).predict_proba(X),
        atol=1e-8,
    )
    with pytest.raises(np.linalg.LinAlgError, match=r"singular.*shrinkage"):
        LDA(solver="eigen").fit(X, y)
    with pytest.raises(np.linalg.LinAlgError):
        skda.LinearDiscriminantAnalysis(solver="eigen").fit(X, y)
    with pytest.raises(np.linalg.LinAlgError, match="covariance_prior_weight"):
        QDA().fit(X, y)


def test_one_sample_class_needs_a_prior():
    X = np.array([[0.0, 1.0], [1.0, 0.5], [2.0, 2.0], [1.5, 0.2], [5.0, 5.0]])
    y = np.array([0, 0, 0, 0, 1])
    with pytest.raises(ValueError, match="only 1 sample in class 1"):
        QDA().fit(X, y)
    S = np.array([[2.0, 0.5], [0.5, 1.0]])
    qda = QDA(covariance_prior=S, covariance_prior_weight=3.0, store_covariance=True)
    qda.fit(X, y)
    # Sigma_c = (S_c + eta S) / (n_c + eta): the one-sample class has S_c = 0.
    np.testing.assert_allclose(qda.covariance_[1], 3.0 * S / 4.0)
    Xc = X[:4] - X[:4].mean(0)
    np.testing.assert_allclose(qda.covariance_[0], (Xc.T @ Xc + 3.0 * S) / 7.0)
    assert np.all(np.isfinite(qda.predict_proba(X)))


def test_transformer_in_pipelines_and_pandas_output():
    X, y = load_iris(return_X_y=True, as_frame=True)
    lda = LDA(n_components=1).set_output(transform="pandas").fit(X, y)
    out = lda.transform(X)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == ["lineardiscriminantanalysis0"]
    pipe = make_pipeline(LDA(n_components=2), QDA()).fit(X, y)
    assert pipe.score(X, y) > 0.9
    assert list(lda.feature_names_in_) == list(X.columns)


def test_costs():
    X, y = problem(10, 2, 2)
    base = LDA().fit(X, y)
    P = base.predict_proba(X)
    C = np.array([[0.0, 1.0], [8.0, 0.0]])
    np.testing.assert_array_equal(
        LDA(costs=C).fit(X, y).predict(X), np.argmin(P @ C, axis=1)
    )


@pytest.mark.parametrize(
    "est, match",
    [
        (LDA(n_components=5), "n_components cannot be larger.*got n_components=5"),
        (LDA(priors=[0.5, -0.6]), "priors must be non-negative"),
        (QDA(priors=[0.5, 0.5, 0.0]), r"priors must have shape \(2,\)"),
        (LDA(solver="lsqr", covariance_estimator=KMeans(2)), "covariance_"),
        (
            QDA(solver="eigen", shrinkage=0.1, covariance_estimator=LedoitWolf()),
            "Only one of the two can be set",
        ),
        (QDA(covariance_estimator=LedoitWolf()), "solver='eigen'"),
        (LDA(covariance_estimator=LedoitWolf()), "solver='lsqr' or 'eigen'"),
        (
            QDA(solver="eigen", shrinkage=0.1, covariance_prior_weight=1.0),
            "covariance_prior_weight",
        ),
        (QDA(covariance_prior=np.eye(3)), r"covariance_prior must have shape \(2, 2\)"),
        (
            QDA(covariance_prior=-np.eye(2), covariance_prior_weight=1.0),
            "positive definite",
        ),
        (QDA(reg_param=2.0), "'reg_param' parameter"),
    ],
)
def test_bad_parameters(est, match):
    X, y = problem(11, 2, 2)
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)


def test_transform_needs_directions():
    X, y = problem(12, 3, 3)
    with pytest.raises(NotImplementedError, match="transform not implemented"):
        LDA(solver="lsqr").fit(X, y).transform(X)
    with pytest.raises(ValueError, match="features"):
        LDA().fit(X, y).predict(X[:, :2])


def unbalanced(seed=20, d=3, n=120):
    """Three classes of 60, 40 and 20 rows: class frequencies differ from
    uniform priors, so covariances weighted by the priors differ from the
    pooled ones."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], [n // 2, n // 3, n - n // 2 - n // 3])
    scale = np.array([1.0, 2.0, 0.5])[y, None]
    X = rng.normal(size=(n, d)) * scale + rng.normal(size=(3, d))[y]
    return X, y


@pytest.mark.parity
@pytest.mark.parametrize("solver", ["svd", "lsqr", "eigen"])
def test_lda_priors_weight_the_covariance_as_sklearn(solver):
    X, y = unbalanced()
    priors = [0.2, 0.3, 0.5]
    ours = LDA(solver=solver, priors=priors, store_covariance=True).fit(X, y)
    theirs = skda.LinearDiscriminantAnalysis(
        solver=solver, priors=priors, store_covariance=True
    ).fit(X, y)
    np.testing.assert_allclose(ours.covariance_, theirs.covariance_, rtol=1e-10)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, rtol=1e-8)
    np.testing.assert_allclose(
        ours.predict_proba(X), theirs.predict_proba(X), atol=1e-10
    )


@pytest.mark.parity
@pytest.mark.parametrize("est", [LDA, QDA])
def test_priors_not_summing_to_one_are_renormalised_with_a_warning(est):
    X, y = unbalanced()
    with pytest.warns(UserWarning, match="do not sum to 1") as record:
        ours = est(priors=[1.0, 2.0, 1.0]).fit(X, y)
    assert record[0].filename == __file__  # it points at the caller's line
    np.testing.assert_allclose(ours.priors_, [0.25, 0.5, 0.25])
    peer = getattr(skda, est.__name__)
    with pytest.warns(UserWarning) if est is LDA else warnings_as_errors():
        theirs = peer(priors=[1.0, 2.0, 1.0]).fit(X, y)
    np.testing.assert_allclose(
        ours.predict_proba(X), theirs.predict_proba(X), atol=1e-10
    )
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    # Within scikit-learn's tolerance of 1e-5 there is no warning.
    with warnings_as_errors():
        est(priors=[0.25, 0.5, 0.25 + 1e-7]).fit(X, y)


@contextlib.contextmanager
def warnings_as_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.mark.parity
def test_lda_on_digits_singular_covariance_as_sklearn():
    # Constant pixels make the within-class covariance singular.
    X, y = load_digits(return_X_y=True)
    X, y = X[:600], y[:600]
    ours = LDA(solver="lsqr").fit(X, y)
    theirs = skda.LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    np.testing.assert_allclose(
        ours.predict_proba(X), theirs.predict_proba(X), atol=1e-6
    )
    np.testing.assert_allclose(
        ours.coef_, theirs.coef_, atol=1e-6 * np.abs(theirs.coef_).max()
    )
    # The joint log-probability is the density on the covariance's subspace:
    # a posterior that agrees with predict_log_proba.
    joint = ours.predict_joint_log_proba(X[:20])
    np.testing.assert_allclose(
        joint - np.logaddexp.reduce(joint, axis=1, keepdims=True),
        ours.predict_log_proba(X[:20]),
        atol=1e-8,
    )
    for solver in ("eigen",):
        with pytest.raises(np.linalg.LinAlgError):
            skda.LinearDiscriminantAnalysis(solver=solver).fit(X, y)
        with pytest.raises(np.linalg.LinAlgError):
            LDA(solver=solver).fit(X, y)


@pytest.mark.parity
@pytest.mark.parametrize("solver", ["lsqr", "eigen"])
@pytest.mark.parametrize(
    "make", [LedoitWolf, OAS, lambda: ShrunkCovariance(shrinkage=0.3)]
)
def test_lda_covariance_estimator_parity(solver, make):
    X, y = unbalanced(d=4)
    estimator = make()
    ours = LDA(solver=solver, covariance_estimator=estimator).fit(X, y)
    assert not hasattr(estimator, "covariance_"), "the estimator is cloned"
    theirs = skda.LinearDiscriminantAnalysis(
        solver=solver, covariance_estimator=make()
    ).fit(X, y)
    np.testing.assert_allclose(ours.covariance_, theirs.covariance_, rtol=1e-10)
    np.testing.assert_allclose(
        ours.predict_proba(X), theirs.predict_proba(X), atol=1e-10
    )
    if solver == "eigen":
        np.testing.assert_allclose(
            ours.explained_variance_ratio_, theirs.explained_variance_ratio_
        )


def test_covariance_estimator_needs_one_fit_and_unit_weights():
    X, y = unbalanced()
    lda = LDA(solver="lsqr", covariance_estimator=LedoitWolf()).partial_fit(X, y)
    with pytest.raises(ValueError, match="covariance_estimator needs all the data"):
        lda.partial_fit(X, y)
    w = np.ones(len(y))
    w[:10] = 0
    a = lda.fit(X, y, sample_weight=w).predict_proba(X)
    b = lda.fit(X[10:], y[10:]).predict_proba(X)
    np.testing.assert_allclose(a, b, atol=1e-12)
    w[:10] = 2
    with pytest.raises(ValueError, match="sample_weight must be 0 or 1"):
        lda.fit(X, y, sample_weight=w)


@pytest.mark.parity
@pytest.mark.parametrize(
    "params",
    [
        dict(solver="eigen"),
        dict(solver="eigen", shrinkage=0.3),
        dict(solver="eigen", shrinkage="auto"),
        dict(solver="eigen", covariance_estimator=OAS()),
        dict(solver="svd", reg_param=0.2),
    ],
    ids=str,
)
def test_qda_solvers_parity(params):
    X, y = unbalanced(d=5)
    ours = QDA(store_covariance=True, **params).fit(X, y)
    theirs = skda.QuadraticDiscriminantAnalysis(store_covariance=True, **params)
    theirs.fit(X, y)
    np.testing.assert_allclose(
        ours.predict_proba(X), theirs.predict_proba(X), atol=1e-10
    )
    np.testing.assert_allclose(
        ours.decision_function(X), theirs.decision_function(X), rtol=1e-9
    )
    for attr in ("covariance_", "scalings_"):
        for a, b in zip(getattr(ours, attr), getattr(theirs, attr)):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    for a, b in zip(ours.rotations_, theirs.rotations_):
        np.testing.assert_allclose(np.abs(a), np.abs(b), atol=1e-8)


@pytest.mark.parity
def test_qda_eigen_ignores_reg_param_with_a_warning():
    X, y = unbalanced()
    with pytest.warns(UserWarning, match="reg_param is not used"):
        ours = QDA(solver="eigen", reg_param=0.5).fit(X, y)
    theirs = skda.QuadraticDiscriminantAnalysis(solver="eigen", reg_param=0.5)
    np.testing.assert_allclose(
        ours.predict_proba(X), theirs.fit(X, y).predict_proba(X), atol=1e-10
    )


@pytest.mark.parity
@pytest.mark.parametrize("n_small", [2, 3, 4, 5])
@pytest.mark.parametrize(
    "params",
    [
        dict(),
        dict(reg_param=0.3),
        dict(solver="eigen"),
        dict(solver="eigen", shrinkage=0.3),
    ],
    ids=str,
)
def test_qda_rank_errors_as_sklearn(params, n_small):
    # 4 features; the small class has 2 to 5 rows: scikit-learn's 'svd' fails
    # below 4 rows even with reg_param, fits at 4 only with reg_param.
    rng = np.random.default_rng(n_small)
    X = rng.normal(size=(20 + n_small, 4))
    y = np.r_[np.zeros(20, int), np.ones(n_small, int)]
    peer = skda.QuadraticDiscriminantAnalysis(**params)
    try:
        expected = peer.fit(X, y).predict_proba(X)
    except np.linalg.LinAlgError:
        with pytest.raises(np.linalg.LinAlgError, match="class 1 is not full rank"):
            QDA(**params).fit(X, y)
    else:
        np.testing.assert_allclose(
            QDA(**params).fit(X, y).predict_proba(X), expected, atol=1e-8
        )


def test_failed_fit_leaves_the_estimator_unfitted():
    X, y = problem(13, 2, 3)
    qda = QDA().fit(X, y)
    X_const = np.column_stack([X, np.zeros(len(X))])
    with pytest.raises(np.linalg.LinAlgError):
        qda.fit(X_const, y)
    with pytest.raises(NotFittedError):
        qda.predict(X_const)


def test_lda_needs_more_samples_than_classes():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]])
    with pytest.raises(ValueError, match="number of samples must be more"):
        LDA().fit(X, [0, 1, 2])
    # Rows of zero weight do not count as samples.
    with pytest.raises(ValueError, match="number of samples must be more"):
        LDA().fit(X, [0, 1, 1], sample_weight=[1, 1, 0])


@pytest.mark.parametrize(
    "est", [LDA(), LDA(solver="lsqr", shrinkage="auto"), LDA(solver="eigen"), QDA()]
)
def test_float32_input_keeps_float32_attributes(est):
    X, y = unbalanced()
    est32 = clone_of(est).fit(X.astype(np.float32), y)
    est64 = clone_of(est).fit(X.astype(np.float32).astype(np.float64), y)
    names = (
        ["coef_", "intercept_", "means_"]
        if isinstance(est, LDA)
        else ["means_", "scalings_", "rotations_"]
    )
    for name in names:
        a, b = getattr(est32, name), getattr(est64, name)
        for u, v in zip(np.atleast_1d(a), np.atleast_1d(b)):
            assert np.asarray(u).dtype == np.float32
            assert np.asarray(v).dtype == np.float64
            np.testing.assert_allclose(u, v, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(
        est32.predict_proba(X), est64.predict_proba(X), atol=1e-6
    )


def clone_of(est):
    return type(est)(**est.get_params())


def test_lda_whitening_with_a_dropped_direction_is_scikit_learns_answer():
    """Counts near the uint64 limit (1.8e19) and small ones: a column of the
    whitening underflows to zero. Its log-determinant leaves that direction
    out, as the quadratic form does (no log(0) warning, which setup.cfg makes
    an error); scikit-learn's posterior is the reference."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA

    from bayeskit import LinearDiscriminantAnalysis

    top = np.iinfo(np.uint64).max
    rng = np.random.default_rng(7)
    for _ in range(8):
        X = rng.integers(0, 2, size=(7, 3)).astype(np.uint64)
        X[3:5] = 0
        X[3, 0], X[4, 0] = top, top - 1  # the fuzzer's case, other cells drawn
        X[4, int(rng.integers(1, 3))] = top
        y = np.array([1, 1, 1, 0, 0, 0, 0])
        ours = LinearDiscriminantAnalysis().fit(X, y).predict_proba(X)
        theirs = SkLDA().fit(X, y).predict_proba(X)
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)
