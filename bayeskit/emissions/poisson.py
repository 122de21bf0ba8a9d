"""Independent Poisson counts: one rate per feature and state.

A row of counts ``x`` (non-negative integers) under state ``k`` has the
log-likelihood

.. math::

    \\log p(x \\mid z = k) = \\sum_{j \\text{ observed}} \\left(x_j \\log
        \\lambda_{kj} - \\lambda_{kj} - \\log x_j!\\right),

with ``0 log 0 = 0`` (a zero rate emits only zeros). A row holding a count of
1024 or more is scored by Loader's saddle-point form instead
(:mod:`bayeskit.emissions._poisson_exact`), which keeps the relative
precision that the terms of order ``x log x`` above lose to cancellation
(at ``x = lambda = 1e15``: -18.188, where the form above gives -16). A
missing cell (NaN) is marginalised: its probabilities sum to one, so it adds
0. The statistics are each state's weight, the weight ``n_kj`` of its
observed cells of every feature and the weighted sums ``s_kj`` of the counts;
the rates come from them and a
:class:`~bayeskit.priors.gamma.Gamma` prior by its posterior mean, ``(alpha +
s_kj) / (beta + n_kj)`` (no prior: the weighted mean of the observed cells, the
maximum-likelihood estimate).

References
----------
.. [1] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, sections 2.3.6 and 13.2.
.. [2] C. Loader, "Fast and accurate computation of binomial probabilities",
   technical note, 2000.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from .._logmath import safe_log
from ..priors.gamma import Gamma
from ._independent import CellStats, cell_weights, observed_cells
from ._poisson_exact import LARGE_COUNT, poisson_rows
from .base import Emission

__all__ = ["Poisson", "PoissonParams", "PoissonStats"]


@dataclass(frozen=True)
class PoissonParams:
    """``lambdas[k, j]``: the rate of feature ``j`` in state ``k``."""

    lambdas: np.ndarray


@dataclass(frozen=True)
class PoissonStats(CellStats):
    """Weight ``(k,)`` of every state, weight ``counts`` ``(k, d)`` of its
    observed cells of every feature, and weighted sums ``(k, d)`` of the
    counts."""

    sums: np.ndarray


# numpy's Poisson sampler refuses larger rates ('lam value too large').
MAX_SAMPLED_RATE = float(np.iinfo(np.int64).max) - 10 * np.sqrt(np.iinfo(np.int64).max)


class Poisson(Emission):
    """Poisson counts, independent across features given the state.

    A missing cell (NaN) is marginalised: it adds 0 to its row's
    log-likelihood and nothing to the statistics, which keep the weight of the
    observed cells of every state and feature.

    Parameters
    ----------
    n_features : int, default=None
        Number of count features ``d`` (None: set by :meth:`for_data`).
    """

    name = "poisson"
    support = "counts"
    #: A step with some counts missing is scored, counted and started from its
    #: observed cells, so a hidden Markov model may pass it.
    missing_coordinates = True

    def __init__(self, n_features: int | None = None) -> None:
        self.n_features = n_features

    def log_likelihood(self, X: np.ndarray, params: PoissonParams) -> np.ndarray:
        lambdas = np.asarray(params.lambdas, dtype=float)
        log_rate = safe_log(lambdas)
        zero = lambdas == 0
        X, observed = observed_cells(X, 0.0)  # a missing cell reads as count 0
        out = X @ np.where(zero, 0.0, log_rate).T
        if observed is None:
            out -= lambdas.sum(axis=1)
        else:  # ... whose rate term only its observed cells pay
            out -= observed.astype(float) @ lambdas.T
        out -= gammaln(X + 1.0).sum(axis=1)[:, None]
        if X.size and X.max() >= LARGE_COUNT:  # rows the form above rounds off
            rows = (X >= LARGE_COUNT).any(axis=1)
            mask = None if observed is None else observed[rows]
            out[rows] = poisson_rows(X[rows], lambdas, mask)
        if zero.any():  # a count on a zero rate is impossible
            out[(X > 0) @ zero.T] = -np.inf
        return out

    def stats(self, X, weights: np.ndarray, labels=None) -> PoissonStats:
        X, observed = observed_cells(X, 0.0)
        weight, counts = cell_weights(weights, observed, self.n_features)
        return PoissonStats(weight, counts, weights.T @ X)

    def zeros(self, n_states: int) -> PoissonStats:
        shape = (n_states, self.n_features)
        return PoissonStats(np.zeros(n_states), np.zeros(shape), np.zeros(shape))

    def map_params(
        self,
        stats: PoissonStats,
        prior: Gamma | None = None,
        previous: PoissonParams | None = None,
    ) -> PoissonParams:
        """The rates from the statistics: the posterior mean under ``prior``
        (None: the weighted mean of the observed cells); a state and feature
        with no weight and no prior keep their previous rate."""
        prior = prior or Gamma(0.0, 0.0)
        old = np.ones_like(stats.sums) if previous is None else previous.lambdas
        return PoissonParams(prior.posterior_mean(stats.sums, stats.counts, old))

    def log_prior(self, params: PoissonParams, prior: Gamma | None = None) -> float:
        return 0.0 if prior is None else prior.log_density(params.lambdas)

    def n_parameters(self, n_states: int) -> int:
        return n_states * self.n_features

    def init_params(self, X, weights, n_states, random_state) -> PoissonParams:
        """hmmlearn's start: rates drawn from the Gamma distribution whose mean
        and variance are those of all the observed counts (the method of
        moments); ``weights`` ``(n, 1)`` weigh the rows."""
        w = np.asarray(weights, dtype=float)[:, :1]
        observed = ~np.isnan(X)
        if observed.all() and np.all(w == 1.0):  # hmmlearn's moments, to the last bit
            mean, var = X.mean(), X.var()
        else:  # the moments of the observed cells, each weighed by its row
            w = np.where(observed, w, 0.0)
            total = w.sum()
            if not total > 0:
                raise ValueError(
                    "X has no observed count of positive weight to start the "
                    "Poisson rates from"
                )
            X = np.where(observed, X, 0.0)
            mean = (w * X).sum() / total
            var = (w * (X - mean) ** 2).sum() / total
        shape = (n_states, self.n_features)
        if not var > 0 or not mean > 0:  # constant counts: no spread to draw from
            return PoissonParams(np.full(shape, mean))
        return PoissonParams(
            random_state.gamma(shape=mean**2 / var, scale=var / mean, size=shape)
        )

    def sample(self, params: PoissonParams, states, random_state) -> np.ndarray:
        """Counts drawn from the rates of ``states``; ValueError naming the
        rates beyond what numpy draws (about 9.2e18, its Poisson limit)."""
        lambdas = np.asarray(params.lambdas)[states]
        if lambdas.size and not lambdas.max() <= MAX_SAMPLED_RATE:
            raise ValueError(
                f"lambdas up to {lambdas.max():.3g} are too large to sample: "
                f"numpy draws Poisson counts for rates up to {MAX_SAMPLED_RATE:.3g}"
            )
        return random_state.poisson(lambdas)
