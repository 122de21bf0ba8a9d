"""Multinomial counts: ``n`` trials over ``d`` categories per row.

A row of counts ``x`` with ``n = sum_j x_j`` under state ``k`` has the
log-likelihood

.. math::

    \\log p(x \\mid z = k) = \\log n! - \\sum_j \\log x_j!
        + \\sum_j x_j \\log p_{kj},

with ``0 log 0 = 0``. One trial per row is the categorical distribution. The
statistics are each state's weight and weighted category counts; the
probabilities come from them and a :class:`~bayeskit.priors.Dirichlet` prior
by its posterior mode, ``p_kj`` proportional to ``max(c_kj + alpha - 1, 0)``
(no prior, or ``alpha = 1``: the counts normalised, the maximum-likelihood
estimate).

References
----------
.. [1] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, section 2.2 (multinomial variables, the Dirichlet distribution).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from .._logmath import safe_log
from ..priors.dirichlet import Dirichlet
from .base import Emission

__all__ = ["Multinomial", "MultinomialParams", "MultinomialStats"]


@dataclass(frozen=True)
class MultinomialParams:
    """``emissionprob[k, j]``: the probability of category ``j`` in state ``k``."""

    emissionprob: np.ndarray


@dataclass(frozen=True)
class MultinomialStats:
    """Weight ``(k,)`` of every state and weighted category counts ``(k, d)``."""

    weight: np.ndarray
    counts: np.ndarray

    def __add__(self, other: MultinomialStats) -> MultinomialStats:
        return MultinomialStats(self.weight + other.weight, self.counts + other.counts)

    @property
    def total_weight(self) -> np.ndarray:
        return self.weight


class Multinomial(Emission):
    """Multinomial counts over ``n_features`` categories.

    Parameters
    ----------
    n_features : int
        Number of categories ``d``.
    n_trials : int, array-like or None, default=None
        Trials per row when sampling (one number for every row; the
        likelihood reads each row's own total).
    """

    def __init__(self, n_features: int, n_trials=None) -> None:
        self.n_features = n_features
        self.n_trials = n_trials

    def log_likelihood(self, X: np.ndarray, params: MultinomialParams) -> np.ndarray:
        prob = np.asarray(params.emissionprob, dtype=float)
        zero = prob == 0
        out = X @ np.where(zero, 0.0, safe_log(prob)).T
        out += (gammaln(X.sum(axis=1) + 1.0) - gammaln(X + 1.0).sum(axis=1))[:, None]
        if zero.any():  # a count of a category of probability zero
            out[(X > 0) @ zero.T] = -np.inf
        return out

    def stats(self, X, weights: np.ndarray, labels=None) -> MultinomialStats:
        return MultinomialStats(weights.sum(axis=0), weights.T @ X)

    def zeros(self, n_states: int) -> MultinomialStats:
        d = self.n_features
        return MultinomialStats(np.zeros(n_states), np.zeros((n_states, d)))

    def map_params(
        self,
        stats: MultinomialStats,
        prior: Dirichlet | None = None,
        previous: MultinomialParams | None = None,
    ) -> MultinomialParams:
        """Every state's probabilities from its counts: the posterior mode
        under ``prior`` (None: flat). Exact zeros of ``previous`` stay zero,
        and a state with nothing to normalise keeps its previous row."""
        prior = prior or Dirichlet(1.0)
        old = np.ones_like(stats.counts) if previous is None else previous.emissionprob
        return MultinomialParams(prior.map(stats.counts, old)[0])

    def log_prior(self, params, prior: Dirichlet | None = None) -> float:
        return 0.0 if prior is None else prior.log_density(params.emissionprob)

    def n_parameters(self, n_states: int) -> int:
        return n_states * (self.n_features - 1)

    def init_params(self, X, weights, n_states, random_state) -> MultinomialParams:
        """hmmlearn's start: every state's row drawn uniformly and normalised."""
        prob = random_state.rand(n_states, self.n_features)
        return MultinomialParams(prob / prob.sum(axis=1, keepdims=True))

    def sample(self, params: MultinomialParams, states, random_state) -> np.ndarray:
        """One row of ``n_trials`` trials from each state in ``states``."""
        trials = np.unique(np.asarray([] if self.n_trials is None else self.n_trials))
        if trials.size != 1:
            raise ValueError(
                "n_trials must be one number of trials to sample, got "
                f"{self.n_trials!r}"
            )
        states = np.asarray(states)
        out = np.empty((len(states), self.n_features), dtype=int)
        for k in np.unique(states):
            rows = states == k
            out[rows] = random_state.multinomial(
                int(trials[0]), params.emissionprob[k], size=rows.sum()
            )
        return out
