"""The Beta prior: validation, the posterior mean by hand, zero strength as
maximum likelihood, and its log density against scipy.stats.beta."""

import numpy as np
import pytest
from scipy import stats as ss

from bayeskit.priors import Beta


@pytest.mark.parametrize("bad", [-1.0, np.inf, np.nan, [1.0, -0.5]])
def test_hyperparameters_are_checked(bad):
    with pytest.raises(ValueError, match="Beta alpha"):
        Beta(bad, 1.0)
    with pytest.raises(ValueError, match="Beta beta"):
        Beta(1.0, bad)


def test_repr_and_immutability():
    prior = Beta([1.0, 2.0], 0.5)
    assert repr(prior) == "Beta(alpha=[1.0, 2.0], beta=0.5)"
    with pytest.raises(ValueError):
        prior.alpha[0] = 3.0


def test_posterior_mean(rng):
    u, v = rng.uniform(0, 10, (2, 3, 4))
    alpha, beta = rng.uniform(0, 3, 4), 1.5
    got = Beta(alpha, beta).posterior_mean(u, v, np.zeros((3, 4)))
    np.testing.assert_allclose(got, (alpha + u) / (alpha + beta + u + v), rtol=1e-14)
    np.testing.assert_array_equal(
        Beta(0.0, 0.0).posterior_mean(u, v, np.zeros((3, 4))), u / (u + v)
    )


def test_no_data_and_no_prior_keep_the_previous_value():
    got = Beta(0.0, 0.0).posterior_mean(
        np.zeros((1, 2)), np.array([[0.0, 3.0]]), np.full((1, 2), 0.25)
    )
    np.testing.assert_array_equal(got, [[0.25, 0.0]])


def test_log_density_is_beta_plus_one_up_to_a_constant(rng):
    prior = Beta(np.array([0.0, 2.0, 3.5]), 1.25)
    a, b = rng.uniform(0.01, 0.99, (2, 2, 3))
    ref = ss.beta(prior.alpha + 1, prior.beta + 1)
    got = prior.log_density(a) - prior.log_density(b)
    assert got == pytest.approx(ref.logpdf(a).sum() - ref.logpdf(b).sum(), rel=1e-12)
    # zero strength: a flat density, also at p = 0 or 1
    assert Beta(0.0, 0.0).log_density(np.array([0.0, 1.0])) == 0.0
