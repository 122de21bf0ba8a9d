"""GaussianMixture with missing cells (NaN): EM over them (Ghahramani and
Jordan 1994), against brute force (scipy's density of the observed
sub-vector), the generating parameters, and EM's own guarantees."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp
from scipy.stats import multivariate_normal

from bayeskit import GaussianMixture

TYPES = ["full", "tied", "diag", "spherical"]

MEANS = np.array([[0.0, 0.0, 0.0, 0.0], [6.0, 6.0, 0.0, 3.0], [0.0, 6.0, 6.0, -3.0]])


def _covariances(rng, k, d):
    A = rng.normal(size=(k, d, d)) * 0.6
    return A @ A.transpose(0, 2, 1) + 0.5 * np.eye(d)


def _simulate(n, seed, rate=0.3):
    rng = np.random.default_rng(seed)
    k, d = MEANS.shape
    covs = _covariances(np.random.default_rng(100), k, d)
    weights = np.array([0.5, 0.3, 0.2])
    z = rng.choice(k, size=n, p=weights)
    L = np.linalg.cholesky(covs)
    X = MEANS[z] + np.einsum("nij,nj->ni", L[z], rng.normal(size=(n, d)))
    holes = X.copy()
    holes[rng.random((n, d)) < rate] = np.nan
    return X, holes, weights, covs


@pytest.mark.parametrize("covariance_type", TYPES)
def test_objective_never_decreases(covariance_type):
    for seed in range(50):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(60, 3)) + 3 * rng.integers(0, 2, size=(60, 1))
        X[rng.random(X.shape) < 0.3] = np.nan
        gm = GaussianMixture(
            2,
            covariance_type=covariance_type,
            max_iter=25,
            tol=0,
            init_params="random",
            random_state=seed,
        )
        with pytest.warns(Warning):  # ConvergenceWarning: tol=0
            gm.fit(X)
        bounds = np.array(gm.lower_bounds_)
        assert len(bounds) == 25
        assert np.all(np.diff(bounds) >= -1e-9 * np.abs(bounds[1:])), (seed, bounds)


@pytest.mark.parametrize("covariance_type", TYPES)
def test_score_samples_is_the_marginal_density(covariance_type):
    _, X, _, _ = _simulate(300, 1)
    X[0] = np.nan
    gm = GaussianMixture(3, covariance_type=covariance_type, random_state=0).fit(X)
    k, d = gm.means_.shape
    dense = gm._family.covariance.dense_all(gm.covariances_, k, d)
    ref = np.empty(len(X))
    for i, row in enumerate(X):
        o = ~np.isnan(row)
        logs = [
            np.log(gm.weights_[j])
            + (
                multivariate_normal(gm.means_[j, o], dense[j][np.ix_(o, o)]).logpdf(
                    row[o]
                )
                if o.any()
                else 0.0
            )
            for j in range(k)
        ]
        ref[i] = logsumexp(logs)
    np.testing.assert_allclose(gm.score_samples(X), ref, rtol=1e-9, atol=1e-9)
    # The posterior of a row with nothing observed is the mixture weights.
    np.testing.assert_allclose(gm.predict_proba(X[:1])[0], gm.weights_, rtol=1e-12)
    assert abs(gm.score_samples(X[:1])[0]) < 1e-12


def _error(gm, weights, covs):
    order = [int(np.argmin(((gm.means_ - m) ** 2).sum(axis=1))) for m in MEANS]
    k, d = gm.means_.shape
    dense = gm._family.covariance.dense_all(gm.covariances_, k, d)[order]
    return (
        np.abs(gm.means_[order] - MEANS).max()
        + np.abs(dense - covs).max()
        + np.abs(gm.weights_[order] - weights).max()
    )


def test_recovery_beats_dropping_incomplete_rows():
    """30% of cells hidden: EM over them recovers the generating mixture
    closer than a fit on the complete rows only (about 24% of them)."""
    errors_em, errors_drop, errors_all = [], [], []
    for seed in range(5):
        full, X, weights, covs = _simulate(1500, seed)
        em = GaussianMixture(3, random_state=0, tol=1e-6).fit(X)
        drop = GaussianMixture(3, random_state=0, tol=1e-6).fit(
            X[~np.isnan(X).any(axis=1)]
        )
        every = GaussianMixture(3, random_state=0, tol=1e-6).fit(full)
        errors_em.append(_error(em, weights, covs))
        errors_drop.append(_error(drop, weights, covs))
        errors_all.append(_error(every, weights, covs))
    em, drop, every = np.mean(errors_em), np.mean(errors_drop), np.mean(errors_all)
    print(
        f"parameter error: EM {em:.3f}, dropped rows {drop:.3f}, "
        f"no cell hidden {every:.3f}"
    )
    assert em < drop
    assert em < 2.5 * every


@pytest.mark.parametrize("covariance_type", TYPES)
def test_one_em_step_at_convergence_is_a_fixed_point(covariance_type):
    _, X, _, _ = _simulate(400, 2)
    gm = GaussianMixture(
        3, covariance_type=covariance_type, tol=1e-12, max_iter=2000, random_state=0
    ).fit(X)
    before = (gm.weights_.copy(), gm.means_.copy(), gm.covariances_.copy())
    sw = np.ones(len(X))
    step = gm._params_from_stats(gm._stats_of(X, sw), gm._current_params(), gm._triple)
    gm._set_params(step)
    for a, b in zip(before, (gm.weights_, gm.means_, gm.covariances_)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


def test_summarize_from_stats_is_one_em_step():
    _, X, _, _ = _simulate(300, 3)
    gm = GaussianMixture(3, max_iter=3, random_state=0)
    with pytest.warns(Warning):
        gm.fit(X)
    a, b = X[:120], X[120:]
    stats = gm.summarize(a) + gm.summarize(b)
    # One more iteration of the loop from the same start.
    ref = GaussianMixture(3, max_iter=4, random_state=0)
    with pytest.warns(Warning):
        ref.fit(X)
    gm.from_stats(stats)
    np.testing.assert_allclose(gm.means_, ref.means_, rtol=1e-10)
    np.testing.assert_allclose(gm.covariances_, ref.covariances_, rtol=1e-10)


def test_input_is_not_mutated():
    _, X, _, _ = _simulate(200, 4)
    before = X.copy()
    gm = GaussianMixture(3, random_state=0).fit(X)
    gm.predict(X)
    gm.score_samples(X)
    gm.summarize(X)
    gm.partial_fit(X)
    np.testing.assert_array_equal(X, before)


@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_infinity_is_still_an_error(value):
    _, X, _, _ = _simulate(100, 5)
    X[3, 1] = value
    with pytest.raises(ValueError, match="infinity"):
        GaussianMixture(2).fit(X)
    gm = GaussianMixture(2, random_state=0).fit(X[4:])
    with pytest.raises(ValueError, match="infinity"):
        gm.predict(X)


def test_complete_rows_predict_as_without_missing_rows():
    """Rows without NaN score the same whether or not other rows have NaN."""
    X, holes, _, _ = _simulate(200, 6)
    gm = GaussianMixture(3, random_state=0).fit(holes)
    both = np.vstack([X[:20], holes[20:60]])
    np.testing.assert_array_equal(gm.score_samples(both)[:20], gm.score_samples(X[:20]))


_FITTED = {}


def _fitted(covariance_type):
    if covariance_type not in _FITTED:
        _, X, _, _ = _simulate(300, 7)
        _FITTED[covariance_type] = GaussianMixture(
            3, covariance_type=covariance_type, random_state=0
        ).fit(X)
    return _FITTED[covariance_type]


@settings(max_examples=40, deadline=None)
@given(
    covariance_type=st.sampled_from(TYPES),
    mask=st.lists(
        st.lists(st.booleans(), min_size=4, max_size=4), min_size=1, max_size=12
    ),
    scale=st.sampled_from([1.0, 10.0, 1e3]),
)
def test_predictions_never_nan(covariance_type, mask, scale):
    gm = _fitted(covariance_type)
    mask = np.array(mask)
    X = np.random.default_rng(len(mask)).normal(size=mask.shape) * scale
    X[mask] = np.nan
    proba = gm.predict_proba(X)
    assert not np.isnan(proba).any()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert not np.isnan(gm.score_samples(X)).any()
    assert np.all((gm.predict(X) >= 0) & (gm.predict(X) < 3))
    empty = mask.all(axis=1)
    np.testing.assert_allclose(
        proba[empty], np.broadcast_to(gm.weights_, proba[empty].shape)
    )


@pytest.mark.parametrize("covariance_type", TYPES)
def test_gaussian_hmm_marginalises_missing_coordinates(covariance_type):
    """score is the forward algorithm over the marginal densities of the
    observed coordinates (scipy), and Baum-Welch never decreases it."""
    from bayeskit import GaussianHMM

    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 3)) + 3 * (np.arange(120) // 30 % 2)[:, None]
    X[rng.random(X.shape) < 0.3] = np.nan
    hmm = GaussianHMM(
        2, covariance_type=covariance_type, n_iter=30, tol=0, random_state=0
    ).fit(X)
    history = np.array(hmm.monitor_.history)
    assert np.all(np.diff(history) >= -1e-9 * np.abs(history[1:]))
    k, d = hmm.means_.shape
    covs = hmm._make_components().emission.covariance.dense_all(
        np.asarray(hmm._emission_params().covariances), k, d
    )
    log_b = np.zeros((len(X), k))
    for i, row in enumerate(X):
        o = ~np.isnan(row)
        for j in range(k):
            if o.any():
                log_b[i, j] = multivariate_normal(
                    hmm.means_[j, o], covs[j][np.ix_(o, o)]
                ).logpdf(row[o])
    alpha = np.log(hmm.startprob_) + log_b[0]
    for t in range(1, len(X)):
        alpha = logsumexp(alpha[:, None] + np.log(hmm.transmat_), axis=0) + log_b[t]
    np.testing.assert_allclose(hmm.score(X), logsumexp(alpha), rtol=1e-9)
