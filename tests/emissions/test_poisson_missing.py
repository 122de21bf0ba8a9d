"""Poisson counts with missing cells: a NaN cell adds 0 to the log-likelihood
(scipy.stats.poisson summed over the observed cells) and nothing to the
statistics, which keep a weight per state and feature; complete data give
the statistics and rates of the formulas they always had."""

import numpy as np
import pytest
from family_checks import (
    chunking_test,
    reference_log_likelihood,
    repeated_rows_test,
    with_nan,
)
from numpy.testing import assert_allclose
from scipy import stats as ss

from bayeskit.emissions import Poisson, PoissonParams
from bayeskit.priors import Gamma


@pytest.fixture
def data(rng):
    X = with_nan(rng.poisson(3.0, size=(70, 4)), rng)
    w = rng.dirichlet(np.ones(3), size=70)
    return X, w


def test_log_likelihood_marginalises_missing_cells(rng, data):
    X, _ = data
    lam = rng.uniform(0.2, 6.0, size=(3, 4))
    expected = reference_log_likelihood(
        X, lam, lambda x, k: ss.poisson.logpmf(x, lam[k])
    )
    got = Poisson(4).log_likelihood(X, PoissonParams(lam))
    assert_allclose(got, expected, rtol=1e-12)


def test_a_zero_rate_forbids_observed_counts_only(data):
    X, _ = data
    lam = np.full((3, 4), 2.0)
    lam[1, 2] = 0.0
    got = Poisson(4).log_likelihood(X, PoissonParams(lam))
    forbidden = X[:, 2] > 0  # NaN > 0 is False: a missing cell is allowed
    assert np.all(np.isneginf(got[forbidden, 1]))
    assert np.all(np.isfinite(got[~forbidden, 1]))
    assert np.isnan(X[~forbidden, 2]).any()


def test_statistics_of_missing_cells(data):
    X, w = data
    stats = Poisson(4).stats(X, w)
    assert_allclose(stats.weight, w.sum(axis=0))
    assert_allclose(stats.counts, w.T @ ~np.isnan(X))
    assert_allclose(stats.sums, w.T @ np.nan_to_num(X))
    assert_allclose(stats.total_weight, w.sum(axis=0))


def test_statistics_add_over_chunks_and_repeat(rng, data):
    X, w = data
    chunking_test(Poisson(4), X, w)
    repeated_rows_test(Poisson(4), X, rng, 3)


def test_rates_are_the_mean_of_the_observed_cells(data):
    X, w = data
    family = Poisson(4)
    stats = family.stats(X, w)
    ml = family.map_params(stats).lambdas
    for k in range(3):
        for j in range(4):
            seen = ~np.isnan(X[:, j])
            expected = np.average(X[seen, j], weights=w[seen, k])
            assert ml[k, j] == pytest.approx(expected, rel=1e-12)
    post = family.map_params(stats, Gamma(2.0, 3.0)).lambdas
    n = w.T @ ~np.isnan(X)
    assert_allclose(post, (2.0 + w.T @ np.nan_to_num(X)) / (3.0 + n), rtol=1e-12)


def test_complete_data_keep_the_state_weight_for_every_feature(rng):
    X = rng.poisson(2.0, size=(30, 3)).astype(float)
    w = rng.dirichlet(np.ones(2), size=30)
    stats = Poisson(3).stats(X, w)
    assert np.array_equal(stats.counts, np.repeat(w.sum(axis=0)[:, None], 3, 1))
    ml = Poisson(3).map_params(stats).lambdas
    assert np.array_equal(ml, (w.T @ X) / w.sum(axis=0)[:, None])
