"""The exponential family: log-likelihood against scipy.stats.expon (with
missing cells), additive statistics, the MLE and the Gamma posterior mean by
hand, the log prior against scipy.stats.gamma, sampling moments, starts and
the support check."""

import numpy as np
import pytest
from family_checks import (
    chunking_test,
    init_test,
    reference_log_likelihood,
    repeated_rows_test,
    with_nan,
)
from numpy.testing import assert_allclose
from scipy import stats as ss

from bayeskit.emissions import Exponential, ExponentialParams
from bayeskit.emissions.base import Emission
from bayeskit.priors import Gamma


@pytest.fixture
def data(rng):
    X = with_nan(rng.exponential(2.0, size=(60, 3)), rng)
    w = rng.dirichlet(np.ones(2), size=60)
    return X, w


def test_protocol():
    family = Exponential(3)
    assert isinstance(family, Emission)
    assert family.missing_coordinates
    assert family.n_parameters(2) == 6


def test_log_likelihood_against_scipy(rng, data):
    X, _ = data
    rates = rng.uniform(0.1, 3.0, size=(2, 3))
    expected = reference_log_likelihood(
        X, rates, lambda x, k: ss.expon.logpdf(x, scale=1 / rates[k])
    )
    got = Exponential(3).log_likelihood(X, ExponentialParams(rates))
    assert_allclose(got, expected, rtol=1e-12)
    complete = np.nan_to_num(X, nan=1.5)
    expected = reference_log_likelihood(
        complete, rates, lambda x, k: ss.expon.logpdf(x, scale=1 / rates[k])
    )
    got = Exponential(3).log_likelihood(complete, ExponentialParams(rates))
    assert_allclose(got, expected, rtol=1e-12)


def test_statistics_add_over_chunks(data):
    X, w = data
    chunking_test(Exponential(3), X, w)


def test_integer_weights_are_repeated_rows(rng, data):
    repeated_rows_test(Exponential(3), data[0], rng)


def test_missing_cells_add_nothing(rng, data):
    X, w = data
    family = Exponential(3)
    stats = family.stats(X, w)
    observed = ~np.isnan(X)
    assert_allclose(stats.counts, w.T @ observed)
    assert_allclose(stats.weight, w.sum(axis=0))
    assert_allclose(stats.sums, w.T @ np.nan_to_num(X))


def test_map_params_is_the_weighted_mle(data):
    X, w = data
    family = Exponential(3)
    ml = family.map_params(family.stats(X, w)).rates
    for k in range(2):
        for j in range(3):
            x = X[:, j]
            seen = ~np.isnan(x)
            wk = w[seen, k]
            # the weighted log-likelihood sum w (log l - l x) is maximal at
            # l = sum w / sum w x
            assert ml[k, j] == pytest.approx(wk.sum() / (wk * x[seen]).sum(), 1e-12)


def test_map_params_with_a_gamma_prior(data):
    X, w = data
    family = Exponential(3)
    stats = family.stats(X, w)
    prior = Gamma(2.0, np.array([0.5, 1.0, 3.0]))
    got = family.map_params(stats, prior).rates
    n = w.T @ ~np.isnan(X)
    s = w.T @ np.nan_to_num(X)
    assert_allclose(got, (2.0 + n) / (np.array([0.5, 1.0, 3.0]) + s), rtol=1e-12)
    # the zero prior is maximum likelihood exactly
    assert_array = family.map_params(stats, Gamma(0.0, 0.0)).rates
    assert np.array_equal(assert_array, family.map_params(stats).rates)


def test_log_prior_is_the_gamma_density_up_to_a_constant(rng):
    family = Exponential(2)
    prior = Gamma(2.5, 1.5)
    a, b = rng.uniform(0.2, 4, size=(2, 3, 2))
    got = family.log_prior(ExponentialParams(a), prior) - family.log_prior(
        ExponentialParams(b), prior
    )
    ref = ss.gamma(3.5, scale=1 / 1.5)
    assert got == pytest.approx(ref.logpdf(a).sum() - ref.logpdf(b).sum(), rel=1e-10)
    assert family.log_prior(ExponentialParams(a)) == 0.0


def test_the_update_maximises_the_posterior_it_monitors(rng, data):
    X, w = data
    family = Exponential(3)
    prior = Gamma(1.5, 2.0)
    best = family.map_params(family.stats(X, w), prior)

    def objective(rates):
        ll = (w * family.log_likelihood(X, ExponentialParams(rates))).sum()
        return ll + family.log_prior(ExponentialParams(rates), prior)

    top = objective(best.rates)
    for _ in range(20):
        other = best.rates * np.exp(rng.normal(scale=0.05, size=best.rates.shape))
        assert objective(other) <= top + 1e-9


def test_sample_moments(rng):
    family = Exponential(2)
    rates = np.array([[0.5, 2.0], [4.0, 1.0]])
    n = 40000
    draws = family.sample(
        ExponentialParams(rates), np.repeat([0, 1], n), np.random.RandomState(0)
    )
    assert draws.shape == (2 * n, 2) and (draws >= 0).all()
    for k in range(2):
        mean = 1 / rates[k]
        se = mean / np.sqrt(n)  # the standard deviation equals the mean
        assert np.all(np.abs(draws[k * n : (k + 1) * n].mean(axis=0) - mean) < 5 * se)


def test_init_params(data):
    X, _ = data
    drawn, _ = init_test(Exponential(3), X, 3, lambda name, v: np.all(v > 0))
    assert not np.allclose(drawn.rates[0], drawn.rates[1])
    # constant data: no spread to draw from
    const = np.full((10, 3), 2.0)
    start = Exponential(3).init_params(
        const, np.ones((10, 1)), 2, np.random.RandomState(0)
    )
    assert_allclose(start.rates, 0.5)


def test_a_state_with_only_zeros_keeps_its_previous_rate():
    family = Exponential(1)
    stats = family.stats(np.zeros((3, 1)), np.ones((3, 1)))
    assert_allclose(family.map_params(stats).rates, 1.0)
    previous = ExponentialParams(np.array([[7.0]]))
    assert_allclose(family.map_params(stats, None, previous).rates, 7.0)


def test_check_support():
    family = Exponential(2)
    family.check_support(np.array([[0.0, np.nan], [1.0, 2.0]]))
    with pytest.raises(ValueError, match=r"X holds .* exponential"):
        family.check_support(np.array([[0.0, -1.0]]))
    with pytest.raises(ValueError, match="exponential"):
        family.check_support(np.array([[np.inf, 1.0]]))
