"""The normal-inverse-gamma prior: validation, the mode by hand and as the
maximiser of the log posterior, zero strength as maximum likelihood, and its
log density against scipy (normal times inverse gamma)."""

import numpy as np
import pytest
from scipy import optimize
from scipy import stats as ss

from bayeskit.priors import NormalInverseGamma


@pytest.mark.parametrize("name", ["mean_weight", "scatter", "variance_weight"])
def test_weights_are_non_negative(name):
    with pytest.raises(ValueError, match=f"NormalInverseGamma {name}"):
        NormalInverseGamma(**{name: -1.0})
    with pytest.raises(ValueError, match="finite"):
        NormalInverseGamma(mean=np.inf)


def test_zero_strength_is_maximum_likelihood(rng):
    n = rng.uniform(1, 5, (2, 3))
    ybar, S = rng.normal(size=(2, 3)), rng.uniform(0.1, 2, (2, 3))
    means, variances = NormalInverseGamma().map(n, ybar, S, 0 * n, 0 * n)
    np.testing.assert_array_equal(means, ybar)
    np.testing.assert_array_equal(variances, S / n)


def test_the_mode_maximises_the_log_posterior(rng):
    """The sample's log-likelihood plus log_density, maximised numerically."""
    y, w = rng.normal(1.0, 2.0, 30), rng.uniform(0.2, 1.5, 30)
    prior = NormalInverseGamma(
        mean=-0.5, mean_weight=3.0, scatter=2.0, variance_weight=4.0
    )
    n, ybar = w.sum(), np.average(y, weights=w)
    S = (w * (y - ybar) ** 2).sum()
    mu, v = prior.map(np.array([[n]]), np.array([[ybar]]), np.array([[S]]), 0, 1)

    def loss(theta):
        m, log_v = theta
        ll = (w * ss.norm.logpdf(y, m, np.exp(0.5 * log_v))).sum()
        return -(ll + prior.log_density(np.array([m]), np.array([np.exp(log_v)])))

    res = optimize.minimize(loss, [0.0, 0.0], method="Nelder-Mead",
                            options={"xatol": 1e-10, "fatol": 1e-12})  # fmt: skip
    assert mu[0, 0] == pytest.approx(res.x[0], abs=1e-6)
    assert v[0, 0] == pytest.approx(np.exp(res.x[1]), rel=1e-6)


def test_no_data_and_no_prior_keep_the_previous_values():
    means, variances = NormalInverseGamma().map(
        np.zeros((1, 1)), np.zeros((1, 1)), np.zeros((1, 1)), np.full((1, 1), 4.0),
        np.full((1, 1), 9.0),
    )  # fmt: skip
    assert means[0, 0] == 4.0 and variances[0, 0] == 9.0


def test_log_density_against_scipy(rng):
    prior = NormalInverseGamma(
        mean=0.3, mean_weight=1.5, scatter=2.0, variance_weight=6.0
    )
    m, v = rng.normal(size=(2, 4)), rng.uniform(0.3, 3, (2, 4))

    def ref(i):
        return (
            ss.norm.logpdf(m[i], 0.3, np.sqrt(v[i] / 1.5))
            + ss.invgamma.logpdf(v[i], (6.0 - 3) / 2, scale=1.0)
        ).sum()

    got = prior.log_density(m[0], v[0]) - prior.log_density(m[1], v[1])
    assert got == pytest.approx(ref(0) - ref(1), rel=1e-12)
    assert NormalInverseGamma().log_density(m, v) == 0.0
