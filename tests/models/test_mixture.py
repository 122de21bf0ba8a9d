"""Gaussian mixtures: scikit-learn parity, the MAP prior, monotone EM, selection."""

import warnings

import numpy as np
import pytest
from sklearn import mixture as skm
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import GridSearchCV, KFold

from bayeskit import (
    GaussianMixture,
    GaussianMixtureClassifier,
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
    select_mixture,
)

TYPES = ["full", "tied", "diag", "spherical"]


def blobs(seed=0, n=150, d=3, centres=(0, 4, 8)):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(d, d))
    return np.vstack([rng.normal(c, 1 + c / 8, size=(n, d)) @ A for c in centres])


def sk_start(X, cov, k=3):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sk = skm.GaussianMixture(k, covariance_type=cov, random_state=0, max_iter=1)
        sk.fit(X)
    return {
        "weights_init": sk.weights_,
        "means_init": sk.means_,
        "precisions_init": sk.precisions_,
    }


@pytest.mark.parity
@pytest.mark.parametrize("cov", TYPES)
def test_parity_with_sklearn_from_the_same_start(cov):
    X = blobs()
    init = sk_start(X, cov)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        theirs = skm.GaussianMixture(
            3, covariance_type=cov, max_iter=25, tol=0, **init
        ).fit(X)
        ours = GaussianMixture(3, covariance_type=cov, max_iter=25, tol=0, **init).fit(
            X
        )
    np.testing.assert_allclose(ours.lower_bounds_, theirs.lower_bounds_, rtol=1e-8)
    for attr in (
        "weights_",
        "means_",
        "covariances_",
        "precisions_",
        "precisions_cholesky_",
    ):
        np.testing.assert_allclose(
            getattr(ours, attr), getattr(theirs, attr), rtol=1e-8, atol=1e-10
        )
    np.testing.assert_allclose(
        ours.score_samples(X), theirs.score_samples(X), rtol=1e-10
    )
    np.testing.assert_allclose(
        ours.predict_proba(X), theirs.predict_proba(X), atol=1e-8
    )
    assert ours.bic(X) == pytest.approx(theirs.bic(X), rel=1e-10)
    assert ours.aic(X) == pytest.approx(theirs.aic(X), rel=1e-10)


@pytest.mark.parametrize("cov", TYPES)
@pytest.mark.parametrize("prior", [0.0, 2.0])
def test_lower_bound_never_decreases(cov, prior):
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(c, 1.0, size=(30, 2)) for c in (0, 2, 5)])
    worst = 0.0
    for seed in range(50):
        gm = GaussianMixture(
            3,
            covariance_type=cov,
            init_params="random",
            covariance_prior_weight=prior,
            reg_covar=0.0,
            max_iter=60,
            tol=0,
            random_state=seed,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            gm.fit(X)
        b = np.asarray(gm.lower_bounds_)
        worst = min(worst, np.min(np.diff(b) / np.abs(b[1:])))
    assert worst > -1e-10


def test_map_update_and_prior_density():
    X = blobs(2, n=40)
    S = np.diag([2.0, 1.0, 0.5])
    gm = GaussianMixture(
        3,
        covariance_prior=S,
        covariance_prior_weight=4.0,
        reg_covar=0.0,
        max_iter=5,
        tol=0,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        gm.fit(X)
    # One more M-step by hand from the final E-step reproduces the parameters'
    # formula: Sigma_k = (sum tau (x - mu)(x - mu)^T + eta S) / (sum tau + eta).
    tau = gm.predict_proba(X)
    nk = tau.sum(0)
    mu = tau.T @ X / nk[:, None]
    step = GaussianMixture(
        3,
        covariance_prior=S,
        covariance_prior_weight=4.0,
        reg_covar=0.0,
        max_iter=1,
        tol=0,
        weights_init=gm.weights_,
        means_init=gm.means_,
        precisions_init=gm.precisions_,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        step.fit(X)
    for k in range(3):
        r = X - mu[k]
        expected = ((r * tau[:, k, None]).T @ r + 4.0 * S) / (nk[k] + 4.0)
        np.testing.assert_allclose(step.covariances_[k], expected, rtol=1e-10)


def test_integer_weights_equal_repetition():
    X = blobs(3, n=40)
    rng = np.random.default_rng(3)
    w = rng.integers(0, 4, len(X))
    init = sk_start(X, "full")
    kw = dict(max_iter=20, tol=0, **init)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = GaussianMixture(3, **kw).fit(X, sample_weight=w)
        b = GaussianMixture(3, **kw).fit(np.repeat(X, w, axis=0))
    for attr in ("weights_", "means_", "covariances_"):
        np.testing.assert_allclose(getattr(a, attr), getattr(b, attr), rtol=1e-10)
    np.testing.assert_allclose(a.lower_bounds_, b.lower_bounds_, rtol=1e-10)


@pytest.mark.parametrize("cov", TYPES)
def test_degenerate_data_needs_the_prior(cov):
    rng = np.random.default_rng(4)
    pts = rng.normal(size=(3, 5))
    X = np.repeat(pts, 10, axis=0)  # 30 rows, 3 distinct points in 5 dimensions
    gm = GaussianMixture(
        3,
        covariance_type=cov,
        covariance_prior_weight=1.0,
        reg_covar=0.0,
        random_state=0,
    ).fit(X)
    covs = gm.covariances_
    if cov == "full":
        full = covs
    elif cov == "tied":
        full = covs[None]
    elif cov == "diag":
        full = [np.diag(c) for c in covs]
    else:
        full = [np.eye(5) * c for c in covs]
    assert all(np.linalg.eigvalsh(c).min() > 0 for c in full)
    assert np.all(np.isfinite(gm.score_samples(X)))
    # Without the prior: an error where the covariance is not positive definite
    # (scikit-learn's criterion), otherwise a warning that it collapsed.
    bare = GaussianMixture(3, covariance_type=cov, reg_covar=0.0, random_state=0)
    if cov == "full":
        with pytest.raises(ValueError, match=r"covariance_prior_weight.*reg_covar"):
            bare.fit(X)
    else:
        with pytest.warns(UserWarning, match="rounding level"):
            bare.fit(X)


@pytest.mark.parity
@pytest.mark.parametrize("cov", TYPES)
def test_collapsed_and_empty_components_as_sklearn(cov):
    # Two distinct points, ten components: the empty ones have covariance
    # reg_covar (scikit-learn's n_k + 10 eps), so reg_covar=0 is an error and
    # reg_covar > 0 fits; the same for scikit-learn.
    X = np.vstack((np.ones((5, 5)), np.zeros((5, 5))))
    kw = dict(n_components=10, covariance_type=cov, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="reg_covar"):
            skm.GaussianMixture(reg_covar=0, **kw).fit(X)
        with pytest.raises(ValueError, match="reg_covar"):
            GaussianMixture(reg_covar=0, **kw).fit(X)
        ours = GaussianMixture(max_iter=1, **kw).fit(X)
        theirs = skm.GaussianMixture(max_iter=1, **kw).fit(X)
    for attr in ("weights_", "means_", "covariances_"):
        np.testing.assert_allclose(
            getattr(ours, attr), getattr(theirs, attr), rtol=1e-6, atol=1e-12
        )


def test_component_on_one_point_fits_with_a_warning():
    # scikit-learn gh-18216: reg_covar=0 and a component left on one point.
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(30, 3))
    kw = dict(
        n_components=3,
        covariance_type="spherical",
        reg_covar=0,
        max_iter=1,
        means_init=X[[0, 1, 2]] + [[0.0], [0.0], [0.3]],
        weights_init=[0.2, 0.2, 0.6],
        precisions_init=[1e6, 1e6, 10.0],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        theirs = skm.GaussianMixture(**kw).fit(X)
        with pytest.warns(UserWarning, match="rounding level"):
            ours = GaussianMixture(**kw).fit(X)
    assert theirs.covariances_[0] < 1e-12 and ours.covariances_[0] < 1e-12
    np.testing.assert_allclose(ours.weights_, theirs.weights_, rtol=1e-8)
    np.testing.assert_allclose(ours.means_, theirs.means_, rtol=1e-8)
    assert ours.n_iter_ == 1 and not ours.converged_ and len(ours.lower_bounds_) == 1


@pytest.mark.parity
@pytest.mark.parametrize("init", ["kmeans", "k-means++", "random", "random_from_data"])
def test_init_params_draw_as_sklearn(init):
    X = np.random.RandomState(1).randn(60, 2)
    ours = GaussianMixture(3, init_params=init, random_state=0, max_iter=0).fit(X)
    theirs = skm.GaussianMixture(3, init_params=init, random_state=0, max_iter=0)
    theirs.fit(X)
    for attr in ("weights_", "means_", "covariances_", "precisions_cholesky_"):
        np.testing.assert_allclose(
            getattr(ours, attr), getattr(theirs, attr), rtol=1e-10, atol=1e-14
        )


@pytest.mark.parity
@pytest.mark.parametrize("init", ["kmeans", "k-means++", "random", "random_from_data"])
def test_tied_start_and_fit_are_sklearns_for_every_init(init):
    # scikit-learn's first tied covariance takes the second moment of every
    # row, those that seed no component included (one seed row per component
    # for k-means++ and random_from_data): the same draws give the same fit.
    for seed in range(8):
        rng = np.random.RandomState(seed)
        X = rng.randn(80, 3) @ rng.randn(3, 3) + 5.0 * rng.randn(3)
        for max_iter in (0, 100):
            kwargs = dict(
                covariance_type="tied",
                init_params=init,
                random_state=seed,
                max_iter=max_iter,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                ours = GaussianMixture(3, **kwargs).fit(X)
                theirs = skm.GaussianMixture(3, **kwargs).fit(X)
            for attr in ("weights_", "means_", "covariances_"):
                np.testing.assert_allclose(
                    getattr(ours, attr), getattr(theirs, attr), rtol=1e-8, atol=1e-10
                )
            assert ours.n_iter_ == theirs.n_iter_


@pytest.mark.parity
@pytest.mark.parametrize("cov", TYPES)
def test_sample_draws_as_sklearn(cov):
    X = blobs(10)
    init = sk_start(X, cov)
    kw = dict(covariance_type=cov, max_iter=5, tol=0, random_state=3, **init)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = GaussianMixture(3, **kw).fit(X)
        theirs = skm.GaussianMixture(3, **kw).fit(X)
    a, la = ours.sample(500)
    b, lb = theirs.sample(500)
    np.testing.assert_array_equal(la, lb)
    np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
    with pytest.raises(ValueError, match="n_samples"):
        ours.sample(0)


@pytest.mark.parametrize("cov", TYPES)
def test_precisions_init_factor(cov):
    # The factor is the upper triangular P with P P^T the precision, the one
    # the M-step (and scikit-learn) gives: inv(chol(covariance)).T.
    X = blobs(11)
    init = sk_start(X, cov)
    prec = init["precisions_init"]
    gm = GaussianMixture(3, covariance_type=cov, max_iter=0, **init).fit(X)
    P = gm.precisions_cholesky_
    np.testing.assert_allclose(gm.precisions_, prec, rtol=1e-10)
    if cov in ("full", "tied"):
        Ps, precs = (P, prec) if cov == "full" else (P[None], prec[None])
        for p, q in zip(Ps, precs):
            np.testing.assert_allclose(np.triu(p), p)
            expected = np.linalg.inv(np.linalg.cholesky(np.linalg.inv(q))).T
            np.testing.assert_allclose(p, expected, rtol=1e-8)
        covs = gm.covariances_ if cov == "full" else gm.covariances_[None]
        for c, q in zip(covs, precs):
            np.testing.assert_allclose(c @ q, np.eye(3), atol=1e-8)
    else:
        np.testing.assert_allclose(P, np.sqrt(prec))
        np.testing.assert_allclose(gm.covariances_, 1 / prec)


def test_all_initial_parameters_given_draws_and_estimates_nothing(monkeypatch):
    X = blobs(12)
    init = sk_start(X, "full")
    from bayeskit.emissions import FULL
    from bayeskit.mixture import _start as _mixture_start

    def forbidden(*args, **kwargs):
        raise AssertionError("an initialisation ran")

    monkeypatch.setattr(_mixture_start, "KMeans", forbidden)
    calls = []
    # Statistics of the rows: the covariance structure's kernel (of complete
    # rows, what EM on data without missing cells gathers).
    real = type(FULL).complete_stats
    monkeypatch.setattr(
        type(FULL),
        "complete_stats",
        lambda self, *a, **k: calls.append(1) or real(self, *a, **k),
    )
    rng = np.random.RandomState(0)
    state = rng.get_state()[1].copy()
    gm = GaussianMixture(3, random_state=rng, **init).fit(X)
    assert len(calls) == gm.n_iter_
    np.testing.assert_array_equal(rng.get_state()[1], state)
    with pytest.raises(AssertionError, match="an initialisation ran"):
        GaussianMixture(3, random_state=0, means_init=init["means_init"]).fit(X)


@pytest.mark.parametrize("cov", TYPES)
def test_convergence_warning_every_type(cov):
    with pytest.warns(ConvergenceWarning):
        GaussianMixture(3, covariance_type=cov, max_iter=1, random_state=0).fit(
            blobs(13)
        )


def test_selection_in_parallel_gives_the_same_table_and_mixture():
    """Candidates fitted through joblib (two processes) give the table and
    the mixture of the fits one after the other."""
    import pandas as pd

    X = blobs(6, n=90, d=2, centres=(0, 8))
    table, best = select_mixture(X, range(1, 4), TYPES, random_state=0)
    par_table, par_best = select_mixture(
        X, range(1, 4), TYPES, random_state=0, n_jobs=2
    )
    pd.testing.assert_frame_equal(par_table, table)
    np.testing.assert_array_equal(par_best.means_, best.means_)
    np.testing.assert_array_equal(par_best.covariances_, best.covariances_)


def test_selection_picks_three_components():
    X = blobs(5, n=120, d=2, centres=(0, 8, 16))
    table, best = select_mixture(X, range(1, 6), TYPES, random_state=0)
    assert best.n_components == 3
    assert list(table.columns) == ["n_components", "covariance_type", "bic", "aic"]
    assert len(table) == 20 and table["bic"].is_monotonic_increasing
    search = GridSearchCV(
        GaussianMixture(random_state=0),
        {"n_components": [1, 2, 3]},
        cv=KFold(3, shuffle=True, random_state=0),
    ).fit(X)
    assert search.best_params_["n_components"] == 3


def test_mixture_classifier_on_alternating_blobs():
    rng = np.random.default_rng(6)
    centres = [0, 8, 16, 24, 32]
    X = np.vstack(
        [
            np.column_stack([rng.normal(c, 1.0, 100), rng.normal(0, 1, 100)])
            for c in centres
        ]
    )
    y = np.repeat([0, 1, 0, 1, 0], 100)
    clf = GaussianMixtureClassifier(n_components=[3, 2], random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.99
    assert LinearDiscriminantAnalysis().fit(X, y).score(X, y) < 0.8
    assert QuadraticDiscriminantAnalysis().fit(X, y).score(X, y) < 0.8


def test_one_component_per_class_is_qda():
    X = blobs(7, n=80)
    y = np.repeat([0, 1, 2], 80)
    gmc = GaussianMixtureClassifier(1, reg_covar=0.0).fit(X, y)
    qda = QuadraticDiscriminantAnalysis().fit(X, y)
    np.testing.assert_array_equal(gmc.predict(X), qda.predict(X))
    np.testing.assert_allclose(gmc.predict_proba(X), qda.predict_proba(X), atol=1e-8)


def test_sample_fit_predict_verbose_and_warning(capsys):
    X = blobs(8)
    gm = GaussianMixture(3, random_state=0).fit(X)
    a, la = gm.sample(50, random_state=1)
    b, _ = gm.sample(50, random_state=1)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (50, 3) and np.bincount(la, minlength=3).sum() == 50
    np.testing.assert_array_equal(
        GaussianMixture(3, random_state=0).fit_predict(X), gm.predict(X)
    )
    GaussianMixture(3, random_state=0, verbose=2, verbose_interval=1).fit(X)
    out = capsys.readouterr().out
    assert "Initialization 0" in out and "Iteration 1" in out
    with pytest.warns(ConvergenceWarning, match="increase max_iter"):
        GaussianMixture(3, max_iter=1, random_state=0).fit(X)


_NOT_PD = np.stack([np.eye(3)] * 3)
_NOT_PD[0, 0, 0] = -1.0
_NOT_SYM = np.stack([np.eye(3)] * 3)
_NOT_SYM[1, 0, 1] = 0.5


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"weights_init": [0.5, 0.6, 0.1]}, "weights_init must sum to one"),
        ({"weights_init": np.full((3, 1), 1 / 3)}, r"weights_init must have shape"),
        ({"weights_init": [1.5, 0.5, -1.0]}, "weights_init must be finite and non-"),
        ({"weights_init": [np.nan, 0.5, 0.5]}, "weights_init must be finite"),
        ({"means_init": np.zeros((2, 3))}, r"means_init must have shape \(3, 3\)"),
        ({"means_init": np.full((3, 3), np.nan)}, "means_init must be finite"),
        ({"means_init": np.full((3, 3), np.inf)}, "means_init must be finite"),
        ({"precisions_init": np.ones(3)}, "precisions_init must have shape"),
        ({"precisions_init": _NOT_PD}, "precisions_init must be positive definite"),
        ({"precisions_init": _NOT_SYM}, "precisions_init must be symmetric"),
        (
            {"precisions_init": _NOT_PD[0], "covariance_type": "tied"},
            "precisions_init must be positive definite",
        ),
        (
            {"precisions_init": -np.ones((3, 3)), "covariance_type": "diag"},
            "precisions_init must be positive",
        ),
        (
            {"precisions_init": [1.0, 0.0, 1.0], "covariance_type": "spherical"},
            "precisions_init must be positive",
        ),
        (
            {"precisions_init": np.ones(4), "covariance_type": "spherical"},
            "precisions_init must have shape",
        ),
        (
            {"covariance_prior": np.eye(2), "covariance_prior_weight": 1.0},
            r"covariance_prior must have shape \(3, 3\)",
        ),
        ({"n_components": 500}, "n_samples >= n_components"),
        ({"covariance_prior_weight": -1.0}, "'covariance_prior_weight' parameter"),
    ],
)
def test_bad_input(kwargs, match):
    params = {"n_components": 3, **kwargs}
    with pytest.raises(ValueError, match=match):
        GaussianMixture(**params).fit(blobs(9, n=20))


@pytest.mark.parity
@pytest.mark.parametrize("init_params", ["kmeans", "k-means++", "random"])
def test_no_iteration_keeps_the_last_start_as_scikit_learn(init_params):
    """max_iter=0 computes no bound: of n_init starts, the last is kept."""
    sk_mixture = pytest.importorskip("sklearn.mixture")
    X = np.random.default_rng(0).normal(size=(200, 2))
    kwargs = dict(n_init=3, max_iter=0, random_state=0, init_params=init_params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = GaussianMixture(3, **kwargs).fit(X)
        theirs = sk_mixture.GaussianMixture(3, **kwargs).fit(X)
    np.testing.assert_allclose(ours.means_, theirs.means_, rtol=1e-12)
    np.testing.assert_allclose(ours.weights_, theirs.weights_, rtol=1e-12)
    np.testing.assert_allclose(ours.covariances_, theirs.covariances_, rtol=1e-10)


@pytest.mark.parametrize("covariance_type", ["full", "tied", "diag", "spherical"])
def test_float32_input_whose_fit_overflows_float32_is_an_error_naming_x(
    covariance_type,
):
    """Fitted attributes beyond float32's range (here a variance of 1.7e40)
    would be cast to infinity: a ValueError naming X, no numpy warning; the
    same data in float64 fit."""
    X = np.array([[1.2573022e20], [-1.3210486e20]], dtype=np.float32)
    model = GaussianMixture(covariance_type=covariance_type, max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match=r"X is float32.*covariances_"):
            model.fit(X)
        fitted = model.fit(X.astype(np.float64))
    assert np.isfinite(fitted.covariances_).all()
    assert fitted.covariances_.max() > np.finfo(np.float32).max


@pytest.mark.parametrize("covariance_type", ["full", "tied", "diag", "spherical"])
def test_float32_input_gives_float32_attributes_and_results(covariance_type):
    """As scikit-learn's: float32 in, float32 out; computed in float64, so the
    values are the float64 fit's, rounded."""
    X = np.random.default_rng(3).normal(size=(300, 3)) * [1.0, 5.0, 0.1]
    kwargs = dict(n_components=2, covariance_type=covariance_type, random_state=0)
    single = GaussianMixture(**kwargs).fit(X.astype(np.float32))
    double = GaussianMixture(**kwargs).fit(X.astype(np.float32).astype(np.float64))
    for name in (
        "weights_",
        "means_",
        "covariances_",
        "precisions_",
        "precisions_cholesky_",
    ):
        assert getattr(single, name).dtype == np.float32, name
        np.testing.assert_allclose(
            getattr(single, name), getattr(double, name), rtol=1e-6, err_msg=name
        )
    X32 = X[:20].astype(np.float32)
    assert single.score_samples(X32).dtype == np.float32
    assert single.predict_proba(X32).dtype == np.float32
    X64 = X32.astype(np.float64)
    assert single.score_samples(X64).dtype == np.float64  # follows the input
    np.testing.assert_allclose(
        single.score_samples(X64), double.score_samples(X64), rtol=1e-5
    )


def test_float32_weights_init_sums_to_one_at_float32_precision():
    weights = np.array([0.1, 0.2, 0.3, 0.4], dtype=np.float32)  # sum: 1 - 3e-8
    X = np.random.default_rng(0).normal(size=(100, 2)).astype(np.float32)
    GaussianMixture(4, weights_init=weights, random_state=0).fit(X)
    with pytest.raises(ValueError, match="weights_init must sum to one"):
        GaussianMixture(4, weights_init=weights.astype(float) * 1.001).fit(X)


# -- statistics: summarize, from_stats, partial_fit --------------------------------
@pytest.mark.parametrize("cov", TYPES)
def test_fit_keeps_the_statistics_its_parameters_came_from(cov):
    X = blobs(14)
    gm = GaussianMixture(3, covariance_type=cov, random_state=0).fit(X)
    again = GaussianMixture(3, covariance_type=cov, random_state=0).fit(X)
    again.from_stats(gm.stats_)
    for attr in ("weights_", "means_", "covariances_", "precisions_cholesky_"):
        np.testing.assert_allclose(
            getattr(again, attr), getattr(gm, attr), rtol=1e-12, atol=1e-15
        )
    assert again.stats_ is gm.stats_


@pytest.mark.parity
@pytest.mark.parametrize("cov", TYPES)
def test_from_stats_of_summed_chunks_is_one_em_step_as_sklearn(cov, rng):
    """summarize on chunks (with weights), summed in any order, then
    from_stats: scikit-learn's EM iteration from the same parameters."""
    X = blobs(15)
    init = sk_start(X, cov)
    w = rng.integers(1, 4, len(X)).astype(float)
    gm = GaussianMixture(3, covariance_type=cov, max_iter=0, **init).fit(X)
    parts = np.array_split(rng.permutation(len(X)), 4)
    stats = [gm.summarize(X[p], sample_weight=w[p]) for p in parts]
    total = stats[3] + (stats[1] + stats[0]) + stats[2]
    whole = gm.summarize(X, sample_weight=w)
    np.testing.assert_allclose(
        total.gaussian.scatter, whole.gaussian.scatter, rtol=1e-10
    )
    np.testing.assert_allclose(total.log_likelihood, whole.log_likelihood, rtol=1e-12)
    assert total.total_weight == pytest.approx(w.sum())
    assert gm.from_stats(total) is gm
    # One EM iteration of scikit-learn from the same start, on repeated rows.
    Xr = np.repeat(X, w.astype(int), axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        theirs = skm.GaussianMixture(3, covariance_type=cov, max_iter=1, **init)
        theirs.fit(Xr)
    for attr in ("weights_", "means_", "covariances_", "precisions_"):
        np.testing.assert_allclose(
            getattr(gm, attr), getattr(theirs, attr), rtol=1e-8, atol=1e-12
        )


def test_statistics_are_checked():
    X = blobs(16)
    with pytest.raises(ValueError, match="call fit or partial_fit first"):
        GaussianMixture(2).from_stats(None)
    gm = GaussianMixture(2, random_state=0).fit(X)
    other = GaussianMixture(3, random_state=0).fit(X)
    with pytest.raises(TypeError, match="stats must be the MixtureStats"):
        gm.from_stats(other.stats_)
    with pytest.raises(ValueError, match="no weight"):
        gm.from_stats(gm.summarize(X, sample_weight=np.zeros(len(X))))
    with pytest.raises(NotFittedError):
        GaussianMixture(2).summarize(X)


@pytest.mark.parametrize("cov", TYPES)
def test_partial_fit_never_decreases_the_chunks_log_likelihood(cov):
    """Each stepwise EM update raises the log-likelihood of the chunk it saw
    (Neal and Hinton 1998): without a ridge, the parameters before the step
    maximise the prior plus the statistics seen before it."""
    rng = np.random.default_rng(17)
    X = blobs(17, n=400)[rng.permutation(1200)]
    gm = GaussianMixture(
        3,
        covariance_type=cov,
        reg_covar=0.0,
        covariance_prior_weight=1.0,
        random_state=0,
    )
    worst = np.inf
    for chunk in np.array_split(X, 12):
        if hasattr(gm, "stats_"):
            before = gm.score(chunk)
            gm.partial_fit(chunk)
            worst = min(worst, gm.score(chunk) - before)
        else:
            gm.partial_fit(chunk)
    assert worst > -1e-12
    assert gm.n_iter_ == 12 and len(gm.lower_bounds_) == 12
    np.testing.assert_allclose(gm.stats_.total_weight, len(X))
    # The steps added every chunk's statistics: the weights are their shares.
    np.testing.assert_allclose(
        gm.weights_ * len(X), gm.stats_.gaussian.state_weight(), rtol=1e-10
    )


def test_first_partial_fit_is_a_one_step_fit_and_later_steps_continue_a_fit():
    X = blobs(18)
    kw = dict(n_components=3, random_state=0, max_iter=1)
    first = GaussianMixture(**kw).partial_fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        one = GaussianMixture(**kw).fit(X)
    for attr in ("weights_", "means_", "covariances_"):
        np.testing.assert_allclose(getattr(first, attr), getattr(one, attr), rtol=1e-12)
    # After fit, a step on new rows is the M-step of the fit's statistics
    # plus the new rows' E-step statistics.
    gm = GaussianMixture(3, random_state=0).fit(X[:300])
    expected = gm.stats_ + gm.summarize(X[300:])
    gm.partial_fit(X[300:])
    check = GaussianMixture(3, random_state=0).fit(X[:300]).from_stats(expected)
    np.testing.assert_allclose(gm.means_, check.means_, rtol=1e-12)
    with pytest.raises(ValueError, match="features"):
        gm.partial_fit(X[:, :2])
    # A later chunk may be one row, or rows of zero weight (nothing changes).
    means = gm.partial_fit(X[:1]).means_.copy()
    gm.partial_fit(X[:5], sample_weight=np.zeros(5))
    np.testing.assert_allclose(gm.means_, means, rtol=1e-12)
    with pytest.raises(ValueError, match="n_samples >= n_components"):
        GaussianMixture(3).partial_fit(X[:2])


def test_mixture_classifier_statistics_are_its_mixtures_statistics(rng):
    X = blobs(19, n=100)
    y = np.repeat([0, 1, 0], 100)
    clf = GaussianMixtureClassifier(2, random_state=0).fit(X, y)
    mixture_stats = clf.stats_.emission.mixtures
    assert all(s is gm.stats_ for s, gm in zip(mixture_stats, clf.mixtures_))
    # Chunks' statistics add; from_stats is one EM step of every class's
    # mixture (each class's rows only).
    parts = np.array_split(rng.permutation(len(y)), 3)
    total = clf.summarize(X[parts[0]], y[parts[0]])
    for p in parts[1:]:
        total = total + clf.summarize(X[p], y[p])
    expected = [gm.summarize(X[y == c]) for c, gm in enumerate(clf.mixtures_)]
    clf.from_stats(total)
    for c, gm in enumerate(clf.mixtures_):
        ref = GaussianMixture(2, random_state=0).fit(X[y == c]).from_stats(expected[c])
        np.testing.assert_allclose(gm.means_, ref.means_, rtol=1e-10)
        np.testing.assert_allclose(gm.covariances_, ref.covariances_, rtol=1e-10)
    # partial_fit: a stepwise update of every class's mixture.
    before = clf.stats_.emission.mixtures[0].total_weight
    clf.partial_fit(X[:50], y[:50])
    assert clf.stats_.emission.mixtures[0].total_weight == before + 50
    np.testing.assert_allclose(clf.class_count_, [250, 100])
