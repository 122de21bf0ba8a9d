"""LDA, QDA and the mixture classifier with missing cells (NaN): EM over
them with the class known (Ghahramani and Jordan 1994), against brute force
(scipy's density of the observed sub-vector), GaussianNB's marginalisation on
diagonal models, the generating parameters, and EM's guarantees."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp
from scipy.stats import multivariate_normal
from sklearn.covariance import OAS
from sklearn.exceptions import ConvergenceWarning

from bayeskit import (
    GaussianMixtureClassifier,
    GaussianNB,
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)

MEANS = np.array([[0.0, 0.0, 0.0], [2.0, 1.0, -1.0], [-1.0, 2.0, 1.0]])
COVS = np.array(
    [
        [[1.0, 0.6, 0.3], [0.6, 1.5, 0.4], [0.3, 0.4, 1.0]],
        [[2.0, -0.5, 0.0], [-0.5, 1.0, 0.3], [0.0, 0.3, 0.8]],
        [[1.0, 0.0, 0.5], [0.0, 1.0, 0.5], [0.5, 0.5, 1.5]],
    ]
)


def _simulate(n, seed, tied=False, rate=0.3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=n)
    covs = np.broadcast_to(COVS[0], COVS.shape) if tied else COVS
    L = np.linalg.cholesky(covs)
    X = MEANS[y] + np.einsum("nij,nj->ni", L[y], rng.normal(size=(n, 3)))
    holes = X.copy()
    holes[rng.random(X.shape) < rate] = np.nan
    return X, holes, y


MODELS = [
    lambda: LinearDiscriminantAnalysis(),
    lambda: LinearDiscriminantAnalysis(solver="lsqr"),
    lambda: LinearDiscriminantAnalysis(solver="eigen", shrinkage=0.2),
    lambda: QuadraticDiscriminantAnalysis(),
    lambda: QuadraticDiscriminantAnalysis(covariance_prior_weight=2.0),
]


# The models whose M-step is the maximum of the expected log posterior (the
# others, a shrinkage or a pooling by the class priors, iterate the
# estimator's own update to a fixed point).
MAP_MODELS = [MODELS[0], MODELS[3], MODELS[4]]


@pytest.mark.parametrize("make", MAP_MODELS)
def test_objective_never_decreases(make):
    for seed in range(50):
        _, X, y = _simulate(90, seed)
        est = make().fit(X, y)
        bounds = np.array(est.lower_bounds_)
        assert len(bounds) >= 2
        assert np.all(np.diff(bounds) >= -1e-10 * np.abs(bounds[1:])), (seed, bounds)


def _dense(est):
    if isinstance(est, QuadraticDiscriminantAnalysis):
        return est._params.covariances
    return np.broadcast_to(est._params.covariances, (3, 3, 3))


@pytest.mark.parametrize("make", MODELS)
def test_posterior_is_the_marginal_one(make):
    _, X, y = _simulate(300, 1)
    X[0] = np.nan
    est = make().fit(X, y)
    covs = _dense(est)
    ref = np.empty((len(X), 3))
    for i, row in enumerate(X):
        o = ~np.isnan(row)
        for c in range(3):
            ll = 0.0
            if o.any():
                ll = multivariate_normal(
                    est.means_[c, o], covs[c][np.ix_(o, o)]
                ).logpdf(row[o])
            ref[i, c] = ll + est.class_log_prior_[c]
    proba = est.predict_proba(X)
    np.testing.assert_allclose(
        proba, np.exp(ref - logsumexp(ref, axis=1, keepdims=True)), atol=1e-9
    )
    np.testing.assert_allclose(proba[0], np.exp(est.class_log_prior_), rtol=1e-9)
    np.testing.assert_allclose(
        est.predict_joint_log_proba(X), ref, rtol=1e-9, atol=1e-9
    )


def _qda_error(est, covs):
    return np.abs(est.means_ - MEANS).max() + np.abs(_dense(est) - covs).max()


@pytest.mark.parametrize("tied", [False, True])
def test_recovery_beats_dropping_incomplete_rows(tied):
    errors_em, errors_drop, errors_all = [], [], []
    covs = np.broadcast_to(COVS[0], COVS.shape) if tied else COVS
    make = LinearDiscriminantAnalysis if tied else QuadraticDiscriminantAnalysis
    for seed in range(5):
        full, X, y = _simulate(600, seed, tied=tied)
        keep = ~np.isnan(X).any(axis=1)
        errors_em.append(_qda_error(make().fit(X, y), covs))
        errors_drop.append(_qda_error(make().fit(X[keep], y[keep]), covs))
        errors_all.append(_qda_error(make().fit(full, y), covs))
    em, drop, every = np.mean(errors_em), np.mean(errors_drop), np.mean(errors_all)
    print(
        f"{'LDA' if tied else 'QDA'} parameter error: EM {em:.3f}, dropped rows "
        f"{drop:.3f}, no cell hidden {every:.3f}"
    )
    assert em < drop
    assert em < 2.0 * every


@pytest.mark.parametrize("make", MODELS)
def test_one_em_step_at_convergence_is_a_fixed_point(make):
    _, X, y = _simulate(300, 2)
    est = make().set_params(em_tol=1e-12, max_iter=1000).fit(X, y)
    # One more step: expected statistics under the fitted parameters, then
    # the parameters from them.
    from bayeskit.emissions import FULL, Gaussian

    family = Gaussian(FULL, 3)
    params = family.params_from(est.means_, np.array(_dense(est)))
    weights = np.eye(3)[y]
    stats = family.expected_stats(X, weights, params)
    np.testing.assert_allclose(stats.mean, est.means_, rtol=1e-5, atol=1e-6)
    from bayeskit.discriminant_analysis._gaussian_classifier import _DAStats

    structure = est._make_components().emission.covariance
    import dataclasses

    stats = dataclasses.replace(stats, covariance=structure)
    _, covs = est._missing_m_step(
        _DAStats(stats, np.bincount(y).astype(float)), weights.sum(axis=0)
    )
    np.testing.assert_allclose(covs, _dense(est), rtol=1e-4, atol=1e-5)


def test_diagonal_models_agree_with_gaussian_nb():
    """On diagonal models the mixture classifier (one diagonal component per
    class) fitted by EM over the missing cells reaches GaussianNB's
    available-case estimate, and both marginalise the missing cells."""
    rng = np.random.default_rng(3)
    n = 400
    y = rng.integers(0, 2, size=n)
    X = rng.normal(size=(n, 4)) * [1.0, 2.0, 0.5, 1.0] + y[:, None] * [1, -1, 0.5, 2]
    X[rng.random(X.shape) < 0.3] = np.nan
    X[:3] = np.nan
    nb = GaussianNB(var_smoothing=0.0).fit(X, y)
    gmc = GaussianMixtureClassifier(
        1, covariance_type="diag", reg_covar=0.0, tol=1e-13, max_iter=1000
    ).fit(X, y)
    np.testing.assert_allclose(gmc.mixtures_[0].means_[0], nb.theta_[0], rtol=1e-6)
    np.testing.assert_allclose(gmc.mixtures_[1].covariances_[0], nb.var_[1], rtol=1e-6)
    np.testing.assert_allclose(gmc.predict_proba(X), nb.predict_proba(X), atol=1e-6)
    np.testing.assert_array_equal(gmc.predict(X), nb.predict(X))


def test_mixture_classifier_with_missing_cells():
    X, holes, y = _simulate(600, 4)
    clf = GaussianMixtureClassifier(2, random_state=0).fit(holes, y)
    assert clf.score(X, y) > 0.6
    proba = clf.predict_proba(holes)
    assert not np.isnan(proba).any()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_lda_decision_function_and_transform():
    _, X, y = _simulate(300, 5, tied=True)
    lda = LinearDiscriminantAnalysis().fit(X, y)
    scores = lda.decision_function(X)
    joint = lda.predict_joint_log_proba(X)
    # Scores are the joint log-likelihood up to a constant per row.
    diff = scores - joint
    np.testing.assert_allclose(diff, diff[:, :1] + 0 * diff, atol=1e-8)
    out = lda.transform(X)
    assert out.shape == (300, 2) and np.all(np.isfinite(out))
    complete = ~np.isnan(X).any(axis=1)
    np.testing.assert_allclose(
        out[complete], lda.transform(X[complete]), rtol=1e-12, atol=1e-12
    )


def test_unsupported_estimates_name_their_parameter():
    _, X, y = _simulate(200, 6)
    with pytest.raises(ValueError, match="shrinkage='auto'"):
        LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto").fit(X, y)
    with pytest.raises(ValueError, match="covariance_estimator"):
        LinearDiscriminantAnalysis(solver="lsqr", covariance_estimator=OAS()).fit(X, y)
    with pytest.raises(ValueError, match="infinity"):
        Z = X.copy()
        Z[0, 0] = np.inf
        QuadraticDiscriminantAnalysis().fit(Z, y)


@pytest.mark.parametrize("make", MODELS)
def test_input_is_not_mutated_and_complete_rows_unchanged(make):
    full, X, y = _simulate(200, 7)
    before = X.copy()
    est = make().fit(X, y)
    est.predict(X)
    np.testing.assert_array_equal(X, before)
    # A fit on complete data is the fit it was: no EM, no EM attributes.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ref = make().fit(full, y)
    assert not hasattr(ref, "lower_bounds_")


_CLASSIFIERS = {}


def _fitted_classifier(index):
    if index not in _CLASSIFIERS:
        _, X, y = _simulate(300, 8)
        makers = [*MODELS, lambda: GaussianMixtureClassifier(2, random_state=0)]
        _CLASSIFIERS[index] = makers[index]().fit(X, y)
    return _CLASSIFIERS[index]


@settings(max_examples=40, deadline=None)
@given(
    index=st.integers(0, len(MODELS)),
    mask=st.lists(
        st.lists(st.booleans(), min_size=3, max_size=3), min_size=1, max_size=12
    ),
    scale=st.sampled_from([1.0, 10.0, 1e3]),
)
def test_predictions_never_nan(index, mask, scale):
    est = _fitted_classifier(index)
    mask = np.array(mask)
    X = np.random.default_rng(len(mask)).normal(size=mask.shape) * scale
    X[mask] = np.nan
    proba = est.predict_proba(X)
    assert not np.isnan(proba).any()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(est.predict(X)) <= set(est.classes_)
    empty = mask.all(axis=1)
    prior = np.exp(est.class_log_prior_)
    np.testing.assert_allclose(proba[empty], np.broadcast_to(prior, proba[empty].shape))


@pytest.mark.parametrize("make", MODELS)
def test_em_tol_is_the_documented_stopping_rule(make):
    # EM stops at the first iteration whose change of the objective per sample
    # is at most em_tol times its magnitude (at least 1); a larger em_tol
    # stops earlier (at a lower objective, when the M-step maximises it).
    _, X, y = _simulate(200, 4, rate=0.4)
    for tol in (1e-3, 1e-5, 1e-8):
        est = make().set_params(em_tol=tol, max_iter=500).fit(X, y)
        b = np.array(est.lower_bounds_)
        changes = np.abs(np.diff(b)) <= tol * np.maximum(np.abs(b[1:]), 1.0)
        assert changes[-1] and not changes[:-1].any(), (tol, b)
    loose = make().set_params(em_tol=1e-2).fit(X, y)
    tight = make().set_params(em_tol=1e-8, max_iter=500).fit(X, y)
    assert loose.n_iter_ < tight.n_iter_
    if make in MAP_MODELS:  # the others' objective is not what EM maximises
        assert loose.lower_bounds_[-1] <= tight.lower_bounds_[-1] + 1e-12


@pytest.mark.parametrize("make", MODELS)
def test_max_iter_bounds_the_e_steps(make):
    _, X, y = _simulate(200, 4, rate=0.4)
    for max_iter in (1, 2, 5):
        with pytest.warns(ConvergenceWarning, match="max_iter"):
            est = make().set_params(max_iter=max_iter, em_tol=0.0).fit(X, y)
        assert est.n_iter_ == max_iter
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = make().set_params(max_iter=500).fit(X, y)
    assert est.n_iter_ < 500
    with pytest.raises(ValueError, match="max_iter"):
        make().set_params(max_iter=0).fit(X, y)
    with pytest.raises(ValueError, match="em_tol"):
        make().set_params(em_tol=-1.0).fit(X, y)


@pytest.mark.parametrize("make", MODELS)
def test_em_settings_unused_on_complete_data(make):
    X, _, y = _simulate(200, 4)
    a = make().fit(X, y)
    b = make().set_params(max_iter=1, em_tol=0.5).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert b.n_iter_ == 1 and not hasattr(b, "lower_bounds_")


def test_accelerated_em_reaches_plain_em_fixed_point():
    # The same maximum-likelihood estimate as plain EM (the classes' means and
    # covariances of Ghahramani and Jordan's EM, written out here in numpy
    # from scipy's conditional Gaussian formulas), to tight tolerance.
    _, X, y = _simulate(150, 6, rate=0.3)
    est = QuadraticDiscriminantAnalysis(
        store_covariance=True, em_tol=1e-13, max_iter=2000
    ).fit(X, y)
    for c in range(3):
        Xc = X[y == c]
        mu = np.nanmean(Xc, axis=0)
        cov = np.diag(np.nanvar(Xc, axis=0))
        for _ in range(3000):
            filled, extra = Xc.copy(), np.zeros((3, 3))
            for i, row in enumerate(Xc):
                m = np.isnan(row)
                if not m.any():
                    continue
                o = ~m
                if o.any():
                    gain = np.linalg.solve(cov[np.ix_(o, o)], cov[np.ix_(o, m)]).T
                    filled[i, m] = mu[m] + gain @ (row[o] - mu[o])
                    extra[np.ix_(m, m)] += cov[np.ix_(m, m)] - gain @ cov[np.ix_(o, m)]
                else:
                    filled[i, m] = mu[m]
                    extra[np.ix_(m, m)] += cov[np.ix_(m, m)]
            new_mu = filled.mean(axis=0)
            dev = filled - new_mu
            new_cov = (dev.T @ dev + extra) / len(Xc)
            done = max(np.abs(new_cov - cov).max(), np.abs(new_mu - mu).max()) < 1e-13
            mu, cov = new_mu, new_cov
            if done:
                break
        np.testing.assert_allclose(est.means_[c], mu, atol=1e-7)
        np.testing.assert_allclose(est.covariance_[c], cov, atol=1e-7)


@pytest.mark.parametrize("make", MODELS)
def test_a_complete_fit_tests_for_nan_once_and_never_scans(make, monkeypatch):
    """On data without NaN the blank-class check (every class has an observed
    cell) cannot fail, and the fit's own NaN test has found none: no
    ``pd.isna`` scan of X (a twelfth of an LDA fit on 1,000,000 x 50,
    benchmarks/bench_regression.py) and one NaN test, not two. The fitted
    model is exactly the one fitted with the scan (the family's test
    switched off)."""
    import bayeskit._base.classifier as base
    import bayeskit.discriminant_analysis._gaussian_classifier as gc

    X, _, y = _simulate(300, 0)
    scanned = make().fit(X, y)
    scans, tests = [], []
    monkeypatch.setattr(base, "check_every_class_observed", lambda *a: scans.append(a))
    monkeypatch.setattr(
        gc, "has_nan", lambda X: tests.append(X) or bool(np.isnan(X).any())
    )
    fast = make().fit(X, y)
    assert scans == [] and len(tests) == 1
    monkeypatch.setattr(gc._GaussianClassifier, "_missing_cells", lambda s, X: None)
    tests.clear()
    reference = make().fit(X, y)
    assert len(scans) == 1 and len(tests) == 1  # the scan, then the family's test
    for name in ("means_", "covariance_", "covariance", "coef_", "intercept_"):
        if hasattr(reference, name):
            np.testing.assert_array_equal(getattr(fast, name), getattr(reference, name))
            np.testing.assert_array_equal(getattr(fast, name), getattr(scanned, name))
    np.testing.assert_array_equal(fast.predict_proba(X), reference.predict_proba(X))


@pytest.mark.parametrize(
    "cls", [LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis]
)
def test_with_nan_the_blank_class_errors_are_the_scans(cls):
    """Where X holds a NaN the scan still runs: over random patterns of NaN
    and weights (classes blank, nearly blank, blank but for rows of weight
    0) the fit raises the blank-class error exactly when
    ``check_every_class_observed`` does, with its message."""
    from bayeskit._base.observed import check_every_class_observed

    raised = 0
    for seed in range(40):
        r = np.random.default_rng(seed)
        n, d = int(r.integers(12, 40)), int(r.integers(1, 4))
        X = r.normal(size=(n, d))
        y = r.choice(np.array(["a", "b", "c"]), n)
        y[:6] = ["a", "b", "c"] * 2
        X[r.random(X.shape) < r.uniform(0.05, 0.6)] = np.nan
        for label in ("a", "b", "c"):
            if r.random() < 0.2:
                X[y == label] = np.nan
        sw = r.choice([0.0, 0.5, 1.0, 2.0], size=n)
        sw[:6] = 1.0
        classes, idx = np.unique(y, return_inverse=True)
        try:
            check_every_class_observed(X, idx, sw, classes)
            expected = None
        except ValueError as exc:
            expected = str(exc)
        got = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                cls().fit(X, y, sample_weight=sw)
            except (ValueError, np.linalg.LinAlgError) as exc:
                if "has no observed value" in str(exc):
                    got = str(exc)
        assert got == expected, seed
        raised += expected is not None
    assert 5 < raised < 35  # both outcomes are drawn often


@pytest.mark.parametrize("compiled", [False, True])
def test_a_singular_observed_block_is_an_error_naming_x_and_the_features(
    compiled, monkeypatch
):
    """LDA on three rows with a constant feature: the pooled covariance is
    singular, so a row missing a value has no density of its observed ones.
    Both passes (numpy's and the compiled one) say so, naming X and the
    observed features, from bayeskit's code, not from numpy's Cholesky."""
    from bayeskit.emissions import _gaussian_missing as gm

    if compiled:
        monkeypatch.setattr(gm, "_COMPILED_WORK", 0)
        monkeypatch.setattr(gm, "numpy_first", lambda *kernels: False)
    X = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    model = LinearDiscriminantAnalysis().fit(X, [0, 1, 1])
    with pytest.raises(
        np.linalg.LinAlgError, match=r"^X has a row .* observed features \[1, 2\]"
    ) as caught:
        model.predict_proba([[np.nan, -0.1321, 0.6406]])
    assert isinstance(caught.value, ValueError)
    assert caught.traceback[-1].path.name == "_gaussian_missing.py"
