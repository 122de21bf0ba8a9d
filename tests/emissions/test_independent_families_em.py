"""EM over a two-state mixture of every family with independent features,
with missing cells: the log-likelihood plus the family's log prior never
decreases (Dempster, Laird and Rubin 1977), with and without a prior; the
statistics of a missing cell are marginalised, not imputed."""

import numpy as np
import pytest
from scipy.special import logsumexp

from bayeskit.emissions import Exponential, Gamma, LogNormal, NegativeBinomial, Poisson
from bayeskit.priors import Beta, NormalInverseGamma
from bayeskit.priors import Gamma as GammaPrior


def _case(name, rng, n=400):
    z = rng.integers(0, 2, n)[:, None] == 0
    return {
        "exponential": (
            Exponential(2),
            np.where(z, rng.exponential(1, (n, 2)), rng.exponential(5, (n, 2))),
            GammaPrior(1.0, 1.0),
        ),
        "gamma": (
            Gamma(2),
            np.where(z, rng.gamma(2, 1, (n, 2)), rng.gamma(9, 1, (n, 2))),
            GammaPrior(1.0, 0.5),
        ),
        "lognormal": (
            LogNormal(2),
            np.where(z, rng.lognormal(0, 1, (n, 2)), rng.lognormal(2, 0.5, (n, 2))),
            NormalInverseGamma(0.0, 1.0, 1.0, 2.0),
        ),
        "negative binomial": (
            NegativeBinomial(2, 3.0),
            np.where(
                z,
                rng.negative_binomial(3, 0.6, (n, 2)),
                rng.negative_binomial(3, 0.2, (n, 2)),
            ).astype(float),
            Beta(1.0, 1.0),
        ),
        "poisson": (
            Poisson(2),
            np.where(z, rng.poisson(2, (n, 2)), rng.poisson(9, (n, 2))).astype(float),
            GammaPrior(1.0, 1.0),
        ),
    }[name]


@pytest.mark.parametrize(
    "name", ["exponential", "gamma", "lognormal", "negative binomial", "poisson"]
)
@pytest.mark.parametrize("with_prior", [False, True])
def test_em_never_decreases_its_objective(rng, name, with_prior):
    family, X, prior = _case(name, rng)
    prior = prior if with_prior else None
    X[rng.random(X.shape) < 0.15] = np.nan
    X = X[~np.isnan(X).all(axis=1)]
    params = family.map_params(family.stats(X, rng.dirichlet([1, 1], len(X))), prior)
    log_w, last = np.log([0.5, 0.5]), -np.inf
    for _ in range(40):
        joint = family.log_likelihood(X, params) + log_w
        total = logsumexp(joint, axis=1)
        objective = total.sum() + family.log_prior(params, prior)
        assert objective >= last - 1e-9 * abs(objective)
        last = objective
        resp = np.exp(joint - total[:, None])
        params = family.map_params(family.stats(X, resp), prior, params)
        log_w = np.log(resp.mean(axis=0))
    assert np.isfinite(last)
