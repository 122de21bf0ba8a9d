"""The Gamma prior of Poisson rates and the m-estimate as a prior object,
against their closed forms."""

import numpy as np
import pytest
from scipy.stats import gamma as gamma_dist

from bayeskit.priors import log_m_estimate
from bayeskit.priors.dirichlet import Dirichlet, MEstimate
from bayeskit.priors.gamma import Gamma


@pytest.mark.parametrize("bad", [-1.0, np.inf, np.nan, [1.0, -0.5]])
def test_gamma_hyperparameters_are_non_negative_and_finite(bad):
    with pytest.raises(ValueError, match="shape must be non-negative"):
        Gamma(bad, 1.0)
    with pytest.raises(ValueError, match="rate must be non-negative"):
        Gamma(1.0, bad)


def test_gamma_map_is_the_posterior_mean_and_the_mode_one_higher():
    sums = np.array([[12.0, 0.0], [3.0, 7.5]])
    weight = np.array([4.0, 0.0])
    previous = np.array([[1.0, 2.0], [3.0, 4.0]])
    alpha, beta = np.array([2.0, 0.5]), 3.0
    rates = Gamma(alpha, beta).map(sums, weight, previous)
    np.testing.assert_allclose(rates, (alpha + sums) / (beta + weight[:, None]))
    # The mean of the posterior Gamma(alpha + s, beta + n) is the mode of
    # Gamma(alpha + 1 + s, beta + n): (shape - 1) / rate.
    post = gamma_dist(alpha + sums[0], scale=1 / (beta + weight[0]))
    np.testing.assert_allclose(rates[0], post.mean())
    # No prior and no data: the previous rate.
    ml = Gamma(0.0, 0.0).map(sums, weight, previous)
    np.testing.assert_allclose(ml[0], sums[0] / 4.0)
    np.testing.assert_array_equal(ml[1], previous[1])


def test_gamma_log_density_is_that_of_shape_plus_one_up_to_a_constant():
    alpha, beta = np.array([2.0, 0.5]), 3.0
    prior = Gamma(alpha, beta)
    a, b = np.array([0.7, 2.0]), np.array([1.5, 0.2])
    exact = gamma_dist(alpha + 1, scale=1 / beta)
    expected = exact.logpdf(a).sum() - exact.logpdf(b).sum()
    assert prior.log_density(a) - prior.log_density(b) == pytest.approx(expected)
    assert Gamma(0.0, 0.0).log_density(np.array([0.0, 5.0])) == 0.0


def test_m_estimate_object_is_the_m_estimate_and_its_dirichlet_mode():
    counts, totals = np.array([4.0, 1.0, 0.0]), 5.0
    m, p = 3.0, np.array([0.2, 0.3, 0.5])
    prior = MEstimate(m, p)
    np.testing.assert_allclose(
        prior.log_estimate(counts, totals), log_m_estimate(counts, totals, m, p)
    )
    prob = np.exp(prior.log_estimate(counts, totals))
    mode, _ = Dirichlet(m * p + 1.0).map(counts, np.ones(3))
    np.testing.assert_allclose(prob, mode)
    assert prior.log_density(prob) == pytest.approx(
        Dirichlet(m * p + 1.0).log_density(prob)
    )
