"""The Gaussian family's paths for small complete data (a mixture's EM on a few
hundred rows): every state's scatter at once, statistics without a NaN test,
the flat prior's mode from the moments, the diagonal density's direct numpy
pass, and a mixture's components built once per hyperparameters. Each gives
what the general path, a brute-force sum or scipy gives."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import norm
from sklearn.mixture import GaussianMixture as SkGM

from bayeskit import GaussianMixture
from bayeskit.emissions import DIAG, FULL, SPHERICAL, TIED, Gaussian
from bayeskit.emissions import _covariance_factors as factors
from bayeskit.emissions import covariance as cov_module
from bayeskit.emissions import gaussian as gaussian_module
from bayeskit.priors import NormalInverseWishart

STRUCTURES = [FULL, TIED, DIAG, SPHERICAL]
SHAPES = [(1, 1, 1), (7, 2, 3), (150, 3, 4), (40, 5, 2), (300, 4, 6)]


def brute_force(X, W):
    """Weights, means and the full centred scatter of every state, row by row."""
    k, d = W.shape[1], X.shape[1]
    weight = W.sum(axis=0)
    mean = np.stack([W[:, j] @ X / weight[j] for j in range(k)])
    scatter = np.zeros((k, d, d))
    for j in range(k):
        for i in range(X.shape[0]):
            r = X[i] - mean[j]
            scatter[j] += W[i, j] * np.outer(r, r)
    return weight, mean, scatter


def as_structure(structure, scatter):
    if structure in (FULL, TIED):
        return scatter
    diagonal = np.diagonal(scatter, axis1=1, axis2=2)
    return diagonal if structure is DIAG else diagonal.sum(axis=1)


@pytest.mark.parametrize("structure", STRUCTURES, ids=lambda s: s.name)
@pytest.mark.parametrize("shape", SHAPES)
def test_complete_stats_direct_and_blocked_equal_brute_force(
    structure, shape, monkeypatch
):
    n, k, d = shape
    for seed in range(6):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n, d)) * rng.uniform(0.1, 10, d) + rng.normal(size=d)
        W = rng.dirichlet(np.ones(k), size=n) * rng.integers(1, 4, (n, 1))
        weight, mean, scatter = structure.complete_stats(X, W)
        ref_w, ref_m, ref_s = brute_force(X, W)
        assert n * k * d <= factors._DIRECT_CELLS  # the direct path ran
        assert_allclose(np.broadcast_to(weight.T, (d, k)).T[:, 0], ref_w)
        assert_allclose(mean, ref_m, rtol=1e-12, atol=1e-12)
        assert_allclose(scatter, as_structure(structure, ref_s), rtol=1e-10)
        # The blocked pass (for large inputs) gives the same statistics.
        monkeypatch.setattr(factors, "_DIRECT_CELLS", 0)
        monkeypatch.setattr(cov_module, "_DIRECT_CELLS", 0)
        blocked = structure.complete_stats(X, W)
        monkeypatch.undo()
        assert_allclose(blocked[2], scatter, rtol=1e-12, atol=1e-12)
        # And the statistics that look for NaN first.
        assert_allclose(structure.stats(X, W)[2], scatter, rtol=0, atol=0)


@pytest.mark.parametrize("structure", STRUCTURES, ids=lambda s: s.name)
def test_flat_prior_mode_is_the_general_update(structure, monkeypatch):
    for seed in range(8):
        rng = np.random.default_rng(seed)
        n, k, d = rng.integers(5, 60), rng.integers(1, 5), rng.integers(1, 5)
        X = rng.normal(size=(n, d)) * 3 + 100
        W = rng.dirichlet(np.ones(k), size=n)
        if seed % 2:
            W[:, 0] = 0.0  # an empty state: the general update's fallback
        family = Gaussian(structure)
        stats = family.stats(X, W)
        previous = family.params_from(
            rng.normal(size=(k, d)), structure.from_matrix(np.eye(d), k)
        )
        for reg in (0.0, 1e-6, 0.5):
            prior = NormalInverseWishart.from_covariance(1.0, 0.0, reg=reg)
            fast = family.map_params(stats, prior, previous, rounding_floor=False)
            with monkeypatch.context() as m:
                m.setattr(gaussian_module, "_moments", lambda *a: False)
                general = family.map_params(
                    stats, prior, previous, rounding_floor=False
                )
            for field in ("means", "covariances", "precisions_cholesky", "log_det"):
                assert_array_equal(getattr(fast, field), getattr(general, field))


@pytest.mark.parametrize("n", [1, 5, 150, 1000])
def test_small_diagonal_density_matches_scipy(n):
    rng = np.random.default_rng(n)
    k, d = 3, 4
    X = rng.normal(size=(n, d)) * 2 + 1e3
    X[rng.random((n, d)) < 0.2] = np.nan  # missing cells are left out
    means = rng.normal(size=(k, d)) + 1e3
    variances = rng.uniform(0.5, 3.0, (k, d))
    params = Gaussian(DIAG).params_from(means, variances)
    ll = DIAG.log_likelihood(X, params)
    for j in range(k):
        terms = norm.logpdf(X, means[j], np.sqrt(variances[j]))
        ref = np.where(np.isnan(X), 0.0, terms).sum(axis=1)
        assert_allclose(ll[:, j], ref, rtol=1e-12)


def test_components_built_once_follow_every_hyperparameter():
    # Fits of one process share a mixture's components per hyperparameters:
    # each fit still gets scikit-learn's answer for its own.
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(size=(60, 3)), rng.normal(size=(60, 3)) + 4])
    gm = GaussianMixture(2, random_state=0)
    for cov in ("full", "tied", "diag", "spherical", "full"):
        for reg in (1e-6, 0.3, 1e-6):
            gm.set_params(covariance_type=cov, reg_covar=reg).fit(X)
            sk = SkGM(2, covariance_type=cov, reg_covar=reg, random_state=0).fit(X)
            assert_allclose(gm.covariances_, sk.covariances_, rtol=1e-8)
            assert_allclose(gm.means_, sk.means_, rtol=1e-8, atol=1e-10)
    # A prior weight is part of the key: a MAP fit differs from the ML one.
    ml = GaussianMixture(2, random_state=0).fit(X).covariances_
    gm = GaussianMixture(2, random_state=0, covariance_prior_weight=50.0)
    assert not np.allclose(gm.fit(X).covariances_, ml)
