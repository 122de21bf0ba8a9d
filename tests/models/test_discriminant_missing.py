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
    est = make().fit(X, y)
    # One more step: expected statistics under the fitted parameters, then
    # the parameters from them.
    from bayeskit.emissions import FULL, Gaussian

    family = Gaussian(FULL, 3)
    params = family.params_from(est.means_, np.array(_dense(est)))
    weights = np.eye(3)[y]
    stats = family.expected_stats(X, weights, params)
    np.testing.assert_allclose(stats.mean, est.means_, rtol=1e-5, atol=1e-6)
    from bayeskit.models._gaussian_classifier import _DAStats

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
