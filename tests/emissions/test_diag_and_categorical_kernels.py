"""Compiled passes of the diagonal Gaussian and the categorical family.

The diagonal Gaussian's density (with missing values) against scipy, its
supervised moments against exact sums for data far from the origin, and the
categorical gather and counts against direct loops.
"""

import math

import numpy as np
import pytest
from scipy.stats import norm

from bayeskit.emissions import DIAG, Categorical, Gaussian
from bayeskit.priors import log_m_estimate


def diag_data(rng, n=400, d=5, k=3, shift=0.0, missing=0.2):
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 2.0, d) + shift
    labels = rng.integers(0, k, n)
    X[rng.random(X.shape) < missing] = np.nan
    return X, labels


@pytest.mark.parametrize("shift", [0.0, 1e6])
def test_diag_log_likelihood_with_missing_values_matches_scipy(shift, rng):
    X, labels = diag_data(rng, shift=shift)
    X[0] = np.nan  # a row with nothing observed has density 1
    X[1] = X[2]
    X[1, 0] = np.nan
    g = Gaussian(DIAG)
    params = g.map_params(g.stats(X, np.eye(3)[labels], labels))
    ll = g.log_likelihood(X, params)
    sd = np.sqrt(params.covariances)
    for k in range(3):
        dens = norm.logpdf(X, params.means[k], sd[k])
        ref = np.where(np.isnan(X), 0.0, dens).sum(axis=1)
        np.testing.assert_allclose(ll[:, k], ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ll[0], 0.0)


def test_diag_log_likelihood_is_minus_inf_at_infinity_never_nan(rng):
    X, labels = diag_data(rng, missing=0.0)
    g = Gaussian(DIAG)
    params = g.map_params(g.stats(X, np.eye(3)[labels], labels))
    q = np.array([[np.inf, 0.0, 0.0, 0.0, np.nan], [-np.inf] * 5])
    ll = g.log_likelihood(q, params)
    assert np.isneginf(ll).all()


def exact_moments(x, w):
    """Weighted mean and centred sum of squares, summed exactly (math.fsum)."""
    total = math.fsum(w)
    mean = math.fsum(wi * xi for wi, xi in zip(w, x)) / total
    # x - mean is exact for x near mean (Sterbenz), so only the sum rounds.
    return total, mean, math.fsum(wi * (xi - mean) ** 2 for wi, xi in zip(w, x))


@pytest.mark.parametrize("shift", [0.0, 1e6])
def test_supervised_diag_moments_are_exact_sums(shift, rng):
    n, d, k = 30_000, 3, 4
    X, labels = diag_data(rng, n=n, d=d, k=k, shift=shift, missing=0.1)
    X[0, 1] = np.nan  # the reference value of that feature is a later row
    sw = rng.integers(1, 4, n).astype(float)
    weights = np.zeros((n, k))
    weights[np.arange(n), labels] = sw
    st = Gaussian(DIAG).stats(X, weights, labels)
    ulp = np.spacing(max(abs(shift), 4.0))
    for c in range(k):
        for j in range(d):
            rows = (labels == c) & ~np.isnan(X[:, j])
            total, mean, scatter = exact_moments(X[rows, j], sw[rows])
            assert st.weight[c, j] == total
            assert abs(st.mean[c, j] - mean) <= 2 * ulp
            np.testing.assert_allclose(st.scatter[c, j], scatter, rtol=1e-12)


def test_supervised_moments_merge_and_empty_states(rng):
    X, labels = diag_data(rng, n=300, k=4)
    labels[labels == 3] = 0  # state 3 has no rows
    X[labels == 1, 2] = np.nan  # state 1 never observes feature 2
    weights = np.eye(4)[labels]
    weights[:10] = 0.0  # rows of weight zero count for nothing
    g = Gaussian(DIAG)
    st = g.stats(X, weights, labels)
    assert np.all(st.weight[3] == 0) and np.all(st.mean[3] == 0)
    assert st.weight[1, 2] == 0 and st.mean[1, 2] == 0 and st.scatter[1, 2] == 0
    ref = g.stats(X[10:], weights[10:], labels[10:])
    np.testing.assert_allclose(st.mean, ref.mean, rtol=1e-13)
    np.testing.assert_allclose(st.scatter, ref.scatter, rtol=1e-12)
    merged = g.stats(X[150:], weights[150:], labels[150:]) + g.stats(
        X[:150], weights[:150], labels[:150]
    )
    np.testing.assert_allclose(merged.weight, st.weight)
    np.testing.assert_allclose(merged.mean, st.mean, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(merged.scatter, st.scatter, rtol=1e-12, atol=1e-15)
    # The soft-weight path (no labels) gives the same statistics.
    soft = g.stats(X, weights)
    np.testing.assert_allclose(soft.weight, st.weight)
    np.testing.assert_allclose(soft.mean, st.mean, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(soft.scatter, st.scatter, rtol=1e-10, atol=1e-14)


def categorical_data(rng, n=200, t=(3, 1, 4, 2), k=3):
    codes = np.column_stack([rng.integers(0, tj, n) for tj in t])
    codes[rng.random(codes.shape) < 0.15] = -1  # missing or ignored
    labels = rng.integers(0, k, n)
    return Categorical(t), codes, labels


def test_categorical_log_likelihood_is_the_sum_of_table_entries(rng):
    family, codes, labels = categorical_data(rng)
    m = np.zeros(len(family.n_categories))  # m = 0: unseen values give -inf
    p = np.concatenate([np.full(t, 1.0 / t) for t in family.n_categories])
    params = family.map_params(family.stats(codes, np.eye(3)[labels]), m, p)
    ll = family.log_likelihood(codes, params)
    ref = np.zeros_like(ll)
    for i in range(codes.shape[0]):
        for j, a in enumerate(codes[i]):
            if a >= 0:
                ref[i] += params.log_prob[family.offsets[j] + a]
    np.testing.assert_array_equal(ll, ref)
    assert not np.isnan(ll).any()
    # F-ordered or int32 codes give the same answer.
    for other in (np.asfortranarray(codes), codes.astype(np.int32)):
        np.testing.assert_array_equal(family.log_likelihood(other, params), ll)


def test_categorical_counts_with_and_without_labels(rng):
    family, codes, labels = categorical_data(rng)
    sw = rng.uniform(0.0, 3.0, len(labels))
    weights = np.eye(3)[labels] * sw[:, None]
    hard = family.stats(codes, weights, labels).counts
    soft = family.stats(codes, weights).counts
    ref = np.zeros((family.n_total, 3))
    rows, cols = np.nonzero(codes >= 0)
    np.add.at(ref, (family.offsets[cols] + codes[rows, cols], labels[rows]), sw[rows])
    np.testing.assert_allclose(hard, ref, rtol=1e-13)
    np.testing.assert_allclose(soft, ref, rtol=1e-13)
    # Soft weights spread a row over the states.
    post = rng.dirichlet(np.ones(3), len(labels))
    spread = family.stats(codes, post).counts
    ref = np.zeros((family.n_total, 3))
    np.add.at(ref, family.offsets[cols] + codes[rows, cols], post[rows])
    np.testing.assert_allclose(spread, ref, rtol=1e-13)
    # Feature totals: every observed cell counted once.
    np.testing.assert_allclose(
        family.feature_totals(family.stats(codes, post)).sum(axis=1),
        (codes >= 0).sum(axis=0),
    )


def test_categorical_zero_probabilities_stay_minus_inf():
    family = Categorical([2, 2])
    codes = np.array([[0, 0], [0, 1], [1, 1], [-1, 0]])
    labels = np.array([0, 0, 1, 1])
    st = family.stats(codes, np.eye(2)[labels], labels)
    params = family.map_params(st, np.zeros(2), np.full(4, 0.5))
    ll = family.log_likelihood(codes, params)
    expected = log_m_estimate(
        st.counts, np.repeat(family.feature_totals(st), 2, 0), 0, 0.5
    )
    np.testing.assert_array_equal(params.log_prob, expected)
    assert np.isneginf(ll[2, 0]) and np.isfinite(ll[2, 1])
    assert not np.isnan(ll).any()
