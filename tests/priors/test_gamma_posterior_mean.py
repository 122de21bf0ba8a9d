"""Gamma.posterior_mean: the mean of Gamma(alpha + shape_add, beta +
rate_add) element-wise, the Poisson update of Gamma.map when the rate's
addition is the state's weight."""

import numpy as np

from bayeskit.priors import Gamma


def test_posterior_mean_by_hand(rng):
    a, b = rng.uniform(0, 5, (2, 3, 2))
    prior = Gamma(np.array([1.0, 0.0]), 2.0)
    got = prior.posterior_mean(a, b, np.zeros((3, 2)))
    np.testing.assert_allclose(got, (prior.shape + a) / (2.0 + b), rtol=1e-15)


def test_it_is_map_for_a_weight_per_state(rng):
    sums, weight = rng.uniform(0, 9, (3, 4)), rng.uniform(0, 3, 3)
    prior = Gamma(0.5, np.array([0.0, 1.0, 2.0, 0.25]))
    previous = np.ones((3, 4))
    np.testing.assert_array_equal(
        prior.posterior_mean(sums, np.repeat(weight[:, None], 4, axis=1), previous),
        prior.map(sums, weight, previous),
    )


def test_zero_denominators_keep_the_previous_value():
    got = Gamma(0.0, 0.0).posterior_mean(
        np.array([[2.0, 0.0]]), np.array([[0.0, 0.0]]), np.array([[7.0, 8.0]])
    )
    np.testing.assert_array_equal(got, [[7.0, 8.0]])
