"""Independent Poisson counts: one rate per feature and state.

A row of counts ``x`` (non-negative integers) under state ``k`` has the
log-likelihood

.. math::

    \\log p(x \\mid z = k) = \\sum_j \\left(x_j \\log \\lambda_{kj} - \\lambda_{kj}
        - \\log x_j!\\right),

with ``0 log 0 = 0`` (a zero rate emits only zeros). The statistics are each
state's weight and weighted sums of the counts; the rates come from them and a
:class:`~bayeskit.priors.gamma.Gamma` prior by its posterior mean, ``(alpha +
sum_t w_tk x_tj) / (beta + sum_t w_tk)`` (no prior: the weighted mean, the
maximum-likelihood estimate).

References
----------
.. [1] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, sections 2.3.6 and 13.2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from .._logmath import safe_log
from ..priors.gamma import Gamma
from .base import Emission

__all__ = ["Poisson", "PoissonParams", "PoissonStats"]


@dataclass(frozen=True)
class PoissonParams:
    """``lambdas[k, j]``: the rate of feature ``j`` in state ``k``."""

    lambdas: np.ndarray


@dataclass(frozen=True)
class PoissonStats:
    """Weight ``(k,)`` of every state and weighted sums ``(k, d)`` of the counts."""

    weight: np.ndarray
    sums: np.ndarray

    def __add__(self, other: PoissonStats) -> PoissonStats:
        return PoissonStats(self.weight + other.weight, self.sums + other.sums)

    @property
    def total_weight(self) -> np.ndarray:
        return self.weight


class Poisson(Emission):
    """Poisson counts, independent across features given the state.

    Parameters
    ----------
    n_features : int
        Number of count features ``d``.
    """

    def __init__(self, n_features: int) -> None:
        self.n_features = n_features

    def log_likelihood(self, X: np.ndarray, params: PoissonParams) -> np.ndarray:
        lambdas = np.asarray(params.lambdas, dtype=float)
        log_rate = safe_log(lambdas)
        zero = lambdas == 0
        out = X @ np.where(zero, 0.0, log_rate).T
        out -= lambdas.sum(axis=1)
        out -= gammaln(X + 1.0).sum(axis=1)[:, None]
        if zero.any():  # a count on a zero rate is impossible
            out[(X > 0) @ zero.T] = -np.inf
        return out

    def stats(self, X, weights: np.ndarray, labels=None) -> PoissonStats:
        return PoissonStats(weights.sum(axis=0), weights.T @ X)

    def zeros(self, n_states: int) -> PoissonStats:
        return PoissonStats(np.zeros(n_states), np.zeros((n_states, self.n_features)))

    def map_params(
        self,
        stats: PoissonStats,
        prior: Gamma | None = None,
        previous: PoissonParams | None = None,
    ) -> PoissonParams:
        """The rates from the statistics: the posterior mean under ``prior``
        (None: the weighted mean); a state with no weight and no prior keeps
        its previous rates."""
        prior = prior or Gamma(0.0, 0.0)
        old = np.ones_like(stats.sums) if previous is None else previous.lambdas
        return PoissonParams(prior.map(stats.sums, stats.weight, old))

    def log_prior(self, params: PoissonParams, prior: Gamma | None = None) -> float:
        return 0.0 if prior is None else prior.log_density(params.lambdas)

    def n_parameters(self, n_states: int) -> int:
        return n_states * self.n_features

    def init_params(self, X, weights, n_states, random_state) -> PoissonParams:
        """hmmlearn's start: rates drawn from the Gamma distribution whose mean
        and variance are those of all the counts (the method of moments);
        ``weights`` ``(n, 1)`` weigh the rows."""
        w = np.asarray(weights, dtype=float)[:, :1]
        if np.all(w == 1.0):  # hmmlearn's moments, to the last bit
            mean, var = X.mean(), X.var()
        else:
            w = np.broadcast_to(w, X.shape)
            mean = np.average(X, weights=w)
            var = np.average((X - mean) ** 2, weights=w)
        shape = (n_states, self.n_features)
        if not var > 0 or not mean > 0:  # constant counts: no spread to draw from
            return PoissonParams(np.full(shape, mean))
        return PoissonParams(
            random_state.gamma(shape=mean**2 / var, scale=var / mean, size=shape)
        )

    def sample(self, params: PoissonParams, states, random_state) -> np.ndarray:
        return random_state.poisson(np.asarray(params.lambdas)[states])
