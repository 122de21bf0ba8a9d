"""Emission families: the messages from observed features into the latent structure.

Every family offers the same three operations, and knows nothing about the
latent structure it feeds:

- ``log_likelihood(X, params)``: ``log p(x_i | z = k)``, shape ``(n, n_states)``;
- ``stats(X, weights)``: additive sufficient statistics, ``weights`` of shape
  ``(n, n_states)`` (one-hot labels times sample weights, or posteriors);
- ``map_params(stats, ...)``: parameters from statistics and a prior.

The full protocol is :class:`bayeskit.emissions.base.Emission`. Families:
categorical tables, Bernoulli (two-category tables), Gaussian (its
covariance structure an object), Poisson counts, multinomial counts, a
Gaussian mixture per state, independent exponential, gamma and log-normal
features, and negative binomial counts.
"""

from .base import Emission, family_from_spec, family_names
from .bernoulli import Bernoulli, BernoulliParams, BernoulliStats
from .categorical import Categorical, CategoricalParams, CategoricalStats
from .covariance import DIAG, FULL, SPHERICAL, TIED, Covariance, covariance_from_name
from .exponential import Exponential, ExponentialParams, ExponentialStats
from .gamma import Gamma, GammaParams, GammaStats
from .gaussian import Gaussian, GaussianParams, GaussianStats
from .lognormal import LogNormal, LogNormalParams, LogNormalStats
from .mixture import GaussianMixtureEmission, MixtureParams, MixturePrior
from .multinomial import Multinomial, MultinomialParams, MultinomialStats
from .negative_binomial import (
    NegativeBinomial,
    NegativeBinomialParams,
    NegativeBinomialStats,
)
from .poisson import Poisson, PoissonParams, PoissonStats
from .product import Product

__all__ = [
    "DIAG",
    "FULL",
    "SPHERICAL",
    "TIED",
    "Bernoulli",
    "BernoulliParams",
    "BernoulliStats",
    "Categorical",
    "CategoricalParams",
    "CategoricalStats",
    "Covariance",
    "Emission",
    "Exponential",
    "ExponentialParams",
    "ExponentialStats",
    "Gamma",
    "GammaParams",
    "GammaStats",
    "Gaussian",
    "GaussianMixtureEmission",
    "GaussianParams",
    "GaussianStats",
    "LogNormal",
    "LogNormalParams",
    "LogNormalStats",
    "MixtureParams",
    "MixturePrior",
    "Multinomial",
    "MultinomialParams",
    "MultinomialStats",
    "NegativeBinomial",
    "NegativeBinomialParams",
    "NegativeBinomialStats",
    "Poisson",
    "PoissonParams",
    "PoissonStats",
    "Product",
    "covariance_from_name",
    "family_from_spec",
    "family_names",
]
