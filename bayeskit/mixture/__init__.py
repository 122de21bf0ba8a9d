"""Mixture models fitted by EM: Gaussian, Poisson and any emission family.

As :mod:`sklearn.mixture`: ``from bayeskit.mixture import GaussianMixture``.
Every mixture is one component node x an emission family x a prior;
:class:`MixtureModel` is that triple over any family.
"""

from ._bayesian_mixture import BayesianGaussianMixture
from ._classifier import GaussianMixtureClassifier
from ._gaussian_mixture import GaussianMixture
from ._model import MixtureModel
from ._poisson import PoissonMixture
from ._selection import select_mixture

__all__ = [
    "BayesianGaussianMixture",
    "GaussianMixture",
    "GaussianMixtureClassifier",
    "MixtureModel",
    "PoissonMixture",
    "select_mixture",
]
