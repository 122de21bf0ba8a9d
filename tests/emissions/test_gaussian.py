"""The Gaussian family: densities vs scipy, statistics that merge, the MAP prior."""

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from bayeskit.emissions import DIAG, FULL, SPHERICAL, TIED, Gaussian

COVS = [FULL, TIED, DIAG, SPHERICAL]


def dense(cov, params, k, d):
    c = params.covariances
    if cov is FULL:
        return c[k]
    if cov is TIED:
        return c
    if cov is DIAG:
        return np.diag(c[k])
    return np.eye(d) * c[k]


def data(rng, shift=0.0):
    n, d, k = 150, 3, 4
    X = (
        rng.normal(size=(n, d)) @ np.array([[1, 0.5, 0], [0, 2, 0.3], [0, 0, 3]])
        + shift
    )
    soft = rng.dirichlet(np.ones(k), size=n)
    labels = rng.integers(0, k, n)
    hard = np.zeros((n, k))
    hard[np.arange(n), labels] = rng.uniform(0.5, 2.0, n)
    return X, soft, hard, labels


@pytest.mark.parametrize("cov", COVS, ids=lambda c: c.name)
@pytest.mark.parametrize("shift", [0.0, 1e6])
def test_log_likelihood_matches_scipy(cov, shift, rng):
    X, soft, _, _ = data(rng, shift)
    g = Gaussian(cov)
    params = g.map_params(g.stats(X, soft))
    ll = g.log_likelihood(X, params)
    for k in range(soft.shape[1]):
        ref = multivariate_normal(params.means[k], dense(cov, params, k, 3)).logpdf(X)
        np.testing.assert_allclose(ll[:, k], ref, rtol=1e-9)


@pytest.mark.parametrize("cov", COVS, ids=lambda c: c.name)
def test_statistics_are_the_weighted_moments_and_merge(cov, rng):
    X, soft, hard, labels = data(rng, 1e6)
    g = Gaussian(cov)
    for weights, lab in ((soft, None), (hard, labels)):
        st = g.stats(X, weights, lab)
        w = weights.sum(0)
        mean = (weights.T @ X) / w[:, None]
        np.testing.assert_allclose(st.mean, mean, rtol=1e-12)
        full = np.stack(
            [((X - mean[k]) * weights[:, k, None]).T @ (X - mean[k]) for k in range(4)]
        )
        expected = {
            "full": full,
            "tied": full,  # every state's scatter; pooled into the covariance
            "diag": np.diagonal(full, axis1=1, axis2=2),
            "spherical": np.trace(full, axis1=1, axis2=2),
        }[cov.name]
        np.testing.assert_allclose(st.scatter, expected, rtol=1e-7)
        parts = [slice(0, 40), slice(40, 41), slice(41, 150)]
        merged = None
        for sl in parts[::-1]:  # any order
            s = g.stats(X[sl], weights[sl], None if lab is None else lab[sl])
            merged = s if merged is None else merged + s
        np.testing.assert_allclose(merged.mean, st.mean, rtol=1e-12)
        np.testing.assert_allclose(merged.scatter, st.scatter, rtol=1e-7)
        np.testing.assert_allclose(merged.weight, st.weight, rtol=1e-12)


@pytest.mark.parametrize("cov", COVS, ids=lambda c: c.name)
def test_map_prior_formula(cov, rng):
    X, soft, _, _ = data(rng)
    g = Gaussian(cov)
    st = g.stats(X, soft)
    S0 = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.0], [0.0, 0.0, 0.5]])
    eta, reg = 3.0, 1e-3
    p = g.map_params(st, prior_weight=eta, prior_scatter=S0, reg=reg)
    w = soft.sum(0)
    if cov is FULL:
        expected = (st.scatter + eta * S0) / (w + eta)[:, None, None] + reg * np.eye(3)
    elif cov is TIED:
        expected = (st.scatter.sum(0) + eta * S0) / (w.sum() + eta) + reg * np.eye(3)
    elif cov is DIAG:
        expected = (st.scatter + eta * np.diag(S0)) / (w[:, None] + eta) + reg
    else:
        expected = (st.scatter / 3 + eta * np.diag(S0).mean()) / (w + eta) + reg
    np.testing.assert_allclose(p.covariances, expected, rtol=1e-12)
    # The precision factor is the covariance's inverse square root.
    for k in range(4 if cov is not TIED else 1):
        c = dense(cov, p, k, 3)
        P = p.precisions_cholesky if cov is TIED else p.precisions_cholesky[k]
        P = P if P.ndim == 2 else np.diag(np.broadcast_to(P, (3,)))
        np.testing.assert_allclose(P @ P.T @ c, np.eye(3), atol=1e-10)


def test_state_without_data_takes_the_prior(rng):
    X = rng.normal(size=(20, 2))
    weights = np.zeros((20, 2))
    weights[:, 0] = 1.0
    g = Gaussian(FULL)
    p = g.map_params(g.stats(X, weights), prior_weight=0.0, prior_scatter=np.eye(2) * 4)
    np.testing.assert_allclose(p.covariances[1], np.eye(2) * 4)
    np.testing.assert_allclose(p.means[1], X.mean(0))
    assert np.all(np.isfinite(g.log_likelihood(X, p)))


def test_singular_covariance_raises_linalg_error():
    X = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    g = Gaussian(FULL)
    with pytest.raises(np.linalg.LinAlgError):
        g.map_params(g.stats(X, np.ones((3, 1))))
    p = g.map_params(g.stats(X, np.ones((3, 1))), prior_weight=1.0)
    assert np.all(np.isfinite(g.log_likelihood(X, p)))


def test_diag_marginalises_missing_values(rng):
    X = rng.normal(size=(50, 3))
    X[rng.random(X.shape) < 0.2] = np.nan
    labels = rng.integers(0, 2, 50)
    weights = np.eye(2)[labels]
    g = Gaussian(DIAG)
    p = g.map_params(g.stats(X, weights, labels))
    for k in range(2):
        np.testing.assert_allclose(p.means[k], np.nanmean(X[labels == k], 0))
        np.testing.assert_allclose(p.covariances[k], np.nanvar(X[labels == k], 0))
    ll = g.log_likelihood(X, p)
    row = np.array([[0.1, np.nan, 2.0]])
    expected = [
        multivariate_normal(
            p.means[k][[0, 2]], np.diag(p.covariances[k][[0, 2]])
        ).logpdf(row[0, [0, 2]])
        for k in range(2)
    ]
    np.testing.assert_allclose(g.log_likelihood(row, p)[0], expected, rtol=1e-12)
    assert np.all(np.isfinite(ll))


@pytest.mark.parametrize("n", [3_300, 20_000])
def test_large_full_scatter_is_the_sum_of_weighted_outer_products(n):
    """The full scatter of many rows (transposed blocks of rows, the last one
    shorter) equals the brute-force sum of w (x - mu)(x - mu)^T per state."""
    from bayeskit.emissions._covariance_factors import _matrix_scatter

    rng = np.random.default_rng(n)
    k, d = 4, 11
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 10.0, d) + 1e4
    weights = rng.dirichlet(np.ones(k), size=n)
    means = (weights.T @ X) / weights.sum(axis=0)[:, None]
    got = _matrix_scatter(X, weights, means, None)
    for j in range(k):
        r = X - means[j]
        want = np.einsum("i,ia,ib->ab", weights[:, j], r, r)
        np.testing.assert_allclose(got[j], want, rtol=1e-11, atol=1e-9)
