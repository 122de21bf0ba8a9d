"""Multinomial counts: ``n`` trials over ``d`` categories per row.

A row of counts ``x`` with ``n = sum_j x_j`` under state ``k`` has the
log-likelihood

.. math::

    \\log p(x \\mid z = k) = \\log n! - \\sum_j \\log x_j!
        + \\sum_j x_j \\log p_{kj},

with ``0 log 0 = 0``. One trial per row is the categorical distribution. The
statistics are each state's weight and weighted category counts; the
probabilities come from them and a prior: a :class:`~bayeskit.priors.Dirichlet`
read by its posterior mode, ``p_kj`` proportional to ``max(c_kj + alpha - 1,
0)`` (no prior, or ``alpha = 1``: the counts normalised, the
maximum-likelihood estimate), or an :class:`~bayeskit.priors.MEstimate` read
by its posterior mean, ``p_kj = (c_kj + m q_j) / (c_k + m)`` with ``c_k`` the
state's total count and ``q`` a distribution over the categories (text naive
Bayes: ``q`` a background distribution of the vocabulary; Lidstone's additive
smoothing is ``m = alpha d``, ``q`` uniform).

``X`` may be a dense array or a scipy.sparse matrix (or a
:class:`~bayeskit.emissions._count_kernels.CountMatrix`): the statistics of a
supervised fit are class sums, one addition per stored count, and the
log-likelihood is a sparse-dense product; nothing is densified.

References
----------
.. [1] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, section 2.2 (multinomial variables, the Dirichlet distribution).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln

from .._logmath import safe_log
from ..priors.dirichlet import Dirichlet, MEstimate
from ._count_kernels import CountMatrix, class_sums, scores
from .base import Emission

__all__ = ["Multinomial", "MultinomialParams", "MultinomialStats"]


@dataclass(frozen=True, eq=False)
class MultinomialParams:
    """``emissionprob[k, j]``: the probability of category ``j`` in state ``k``.

    ``log_prob`` is its logarithm where it was computed in log space (the
    m-estimate); None computes it from ``emissionprob``. A model that reads
    only the logarithm (the count naive Bayes) leaves ``emissionprob`` None.
    """

    emissionprob: np.ndarray | None
    log_prob: np.ndarray | None = None

    def log_emissionprob(self) -> np.ndarray:
        """``log emissionprob`` (``-inf`` for a probability of zero)."""
        if self.log_prob is not None:
            return self.log_prob
        return safe_log(np.asarray(self.emissionprob, dtype=float))


def as_counts(X) -> CountMatrix:
    """``X`` in the layout of the count kernels (a CountMatrix as it is)."""
    return X if isinstance(X, CountMatrix) else CountMatrix.of(X)


@dataclass(frozen=True)
class MultinomialStats:
    """Weight ``(k,)`` of every state and weighted category counts ``(k, d)``."""

    weight: np.ndarray
    counts: np.ndarray

    def __add__(self, other: MultinomialStats) -> MultinomialStats:
        with np.errstate(over="ignore"):  # an estimator refuses infinite counts
            counts = self.counts + other.counts
        return MultinomialStats(self.weight + other.weight, counts)

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

    def log_likelihood(self, X, params: MultinomialParams) -> np.ndarray:
        """``log p(x | z = k)``, the multinomial coefficient included."""
        if isinstance(X, CountMatrix) or sp.issparse(X):
            C = as_counts(X)
            if C.layout == "dense":
                dense = C.data
            else:
                out = self.log_kernel(C, params)
                matrix = (sp.csr_matrix if C.layout == "csr" else sp.csc_matrix)(
                    (C.data, C.indices, C.indptr), shape=C.shape
                )
                total = np.asarray(matrix.sum(axis=1)).ravel()
                terms = matrix.copy()
                terms.data = gammaln(terms.data + 1.0)
                out += (gammaln(total + 1.0) - np.asarray(terms.sum(axis=1)).ravel())[
                    :, None
                ]
                return out
        else:
            dense = X
        log_prob = params.log_emissionprob()
        zero = np.isneginf(log_prob)
        out = dense @ np.where(zero, 0.0, log_prob).T
        out += (gammaln(dense.sum(axis=1) + 1.0) - gammaln(dense + 1.0).sum(axis=1))[
            :, None
        ]
        if zero.any():  # a count of a category of probability zero
            out[(dense > 0) @ zero.T] = -np.inf
        return out

    def log_kernel(self, X, params: MultinomialParams) -> np.ndarray:
        """``sum_j x_j log p_kj``: the log-likelihood without the multinomial
        coefficient (the part that depends on the state; what scikit-learn's
        MultinomialNB reports as its joint log-likelihood), ``(n, n_states)``.

        Zero counts are skipped, so a category of probability zero that a row
        does not use costs nothing (never ``0 * -inf``); ``X`` dense or sparse,
        bit-for-bit the same.
        """
        return scores(as_counts(X), params.log_emissionprob().T)

    def stats(self, X, weights: np.ndarray, labels=None) -> MultinomialStats:
        """Each state's weight and weighted counts. With ``labels`` (every
        row's weight on one state, ``weights[i, labels[i]]``), one addition
        per stored count, for dense and sparse ``X`` alike."""
        if labels is None and not (isinstance(X, CountMatrix) or sp.issparse(X)):
            return MultinomialStats(weights.sum(axis=0), weights.T @ X)
        C = as_counts(X)
        if labels is None:
            matrix = (
                C.data
                if C.layout == "dense"
                else (sp.csr_matrix if C.layout == "csr" else sp.csc_matrix)(
                    (C.data, C.indices, C.indptr), shape=C.shape
                )
            )
            return MultinomialStats(
                weights.sum(axis=0), np.asarray((matrix.T @ weights).T)
            )
        w = weights[np.arange(len(labels)), labels]
        return MultinomialStats(
            weights.sum(axis=0), class_sums(C, labels, w, weights.shape[1])
        )

    def zeros(self, n_states: int) -> MultinomialStats:
        d = self.n_features
        return MultinomialStats(np.zeros(n_states), np.zeros((n_states, d)))

    def map_params(
        self,
        stats: MultinomialStats,
        prior: Dirichlet | MEstimate | None = None,
        previous: MultinomialParams | None = None,
    ) -> MultinomialParams:
        """Every state's probabilities from its counts.

        - :class:`~bayeskit.priors.MEstimate` ``(m, p)``, ``m`` a number and
          ``p`` of shape ``(d,)``: the posterior mean ``(c_kj + m p_j) / (c_k +
          m)``, in log space (``m = 0``: the relative frequencies; a state
          with no counts and ``m = 0`` takes ``p``);
        - :class:`~bayeskit.priors.Dirichlet` or None (flat): the posterior
          mode; exact zeros of ``previous`` stay zero, and a state with
          nothing to normalise keeps its previous row.
        """
        if isinstance(prior, MEstimate):
            log_prob = self.map_log_prob(stats, prior)
            with np.errstate(under="ignore"):
                return MultinomialParams(np.exp(log_prob), log_prob)
        prior = prior or Dirichlet(1.0)
        old = np.ones_like(stats.counts) if previous is None else previous.emissionprob
        return MultinomialParams(prior.map(stats.counts, old)[0])

    def map_log_prob(self, stats: MultinomialStats, prior: MEstimate) -> np.ndarray:
        """``log((c_kj + m p_j) / (c_k + m))``, the log of the m-estimate, with
        one array of the counts' size (a state with no counts and ``m = 0``
        takes ``log p``; a zero count with ``m = 0`` is ``-inf``)."""
        m = float(prior.m)
        p = np.asarray(prior.p, dtype=float)
        den = stats.counts.sum(axis=1) + m
        with np.errstate(divide="ignore"):
            out = np.log(stats.counts + m * p)
            out -= np.log(np.where(den > 0, den, 1.0))[:, None]
            empty = den == 0
            if empty.any():
                out[empty] = np.log(p)
        return out

    def log_prior(self, params, prior: Dirichlet | MEstimate | None = None) -> float:
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
