"""Product of categorical tables: one discrete distribution per feature and state.

Features are integer codes ``0 .. t_j - 1``; a code of ``-1`` marks a value that
is missing (or unknown and ignored) and is left out of both the statistics and
the product. The tables of all features are stacked into one array of shape
``(sum_j t_j, n_states)``, row ``offsets[j] + a`` for value ``a`` of feature
``j``: the likelihood of a row is a gather of one table row per feature, and
the counts one addition per cell (one per cell and state for soft weights),
each a single compiled pass over the codes.

Parameters come from the counts and a prior object (:meth:`Categorical.map_params`):
an :class:`~bayeskit.priors.dirichlet.MEstimate` is read by its posterior
mean (naive Bayes' m-estimate), a :class:`~bayeskit.priors.Dirichlet` by its
posterior mode per state (the hidden Markov models' Baum-Welch update, as
hmmlearn's), and no prior is maximum likelihood. With one feature, the
family's message into a chain is its table and the codes that index it
(:meth:`Categorical.messages`), and its statistics are the posterior weight
each table row received (:meth:`Categorical.table_stats`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._logmath import safe_log
from ..priors.dirichlet import Dirichlet, MEstimate
from ._kernels import (
    categorical_counts,
    categorical_log_likelihood,
    categorical_soft_counts,
)
from .base import Emission

__all__ = ["Categorical", "CategoricalParams", "CategoricalStats"]


@dataclass(frozen=True)
class CategoricalStats:
    """Weighted counts ``n[k, j, a]`` stacked as ``counts[offset_j + a, k]``."""

    counts: np.ndarray
    #: The axis of the latent states (the last; other families' is the first).
    state_axis: ClassVar[int] = -1

    def __add__(self, other: CategoricalStats) -> CategoricalStats:
        return CategoricalStats(self.counts + other.counts)


@dataclass(frozen=True)
class CategoricalParams:
    """``log_prob[offset_j + a, k] = log P(x_j = a | z = k)``."""

    log_prob: np.ndarray


class Categorical(Emission):
    """Product of categorical tables: naive Bayes' and the CategoricalHMM's family.

    Parameters
    ----------
    n_categories : sequence of int
        Number of categories ``t_j`` of every feature.
    """

    def __init__(self, n_categories) -> None:
        self.n_categories = np.asarray(n_categories, dtype=np.intp)
        self.offsets = np.zeros(len(self.n_categories) + 1, dtype=np.intp)
        np.cumsum(self.n_categories, out=self.offsets[1:])

    @property
    def n_total(self) -> int:
        return int(self.offsets[-1])

    def log_likelihood(
        self, codes: np.ndarray, params: CategoricalParams
    ) -> np.ndarray:
        """``sum_j log P(x_j | z = k)`` over the observed features, ``(n, K)``."""
        log_prob = np.ascontiguousarray(params.log_prob, dtype=float)
        out = np.empty((codes.shape[0], log_prob.shape[1]))
        categorical_log_likelihood(_as_codes(codes), self.offsets, log_prob, out)
        return out

    def stats(
        self, codes: np.ndarray, weights: np.ndarray, labels: np.ndarray | None = None
    ) -> CategoricalStats:
        """Counts of every category weighted by ``weights`` of shape ``(n, K)``.

        ``labels`` may be given when every row's weight sits on one state (a
        supervised fit, ``weights[i, labels[i]]`` the row's weight): each cell
        then adds to one count instead of ``K``.
        """
        weights = np.ascontiguousarray(weights, dtype=float)
        counts = np.zeros((self.n_total, weights.shape[1]))
        if labels is None:
            categorical_soft_counts(_as_codes(codes), self.offsets, weights, counts)
        else:
            labels = np.ascontiguousarray(labels, dtype=np.intp)
            categorical_counts(_as_codes(codes), self.offsets, weights, labels, counts)
        return CategoricalStats(counts)

    def grow(self, stats: CategoricalStats, n_categories) -> CategoricalStats:
        """``stats`` laid out for more categories: feature ``j`` gets
        ``n_categories[j] - t_j`` new categories after its own, counted zero.

        The family of the result is ``Categorical(n_categories)``; no feature
        may lose categories.
        """
        new = np.asarray(n_categories, dtype=np.intp)
        added = new - self.n_categories
        if (added < 0).any():
            raise ValueError("a feature cannot lose categories")
        # Row r of the old layout moves down by the categories added before it.
        shift = np.repeat(
            np.concatenate([[0], np.cumsum(added)[:-1]]), self.n_categories
        )
        counts = np.zeros((int(new.sum()), stats.counts.shape[1]))
        counts[np.arange(self.n_total) + shift] = stats.counts
        return CategoricalStats(counts)

    def zeros(self, n_states: int) -> CategoricalStats:
        return CategoricalStats(np.zeros((self.n_total, n_states)))

    def feature_totals(self, stats: CategoricalStats) -> np.ndarray:
        """Weight of the observed values of each feature per state, ``(d, K)``."""
        return np.add.reduceat(stats.counts, self.offsets[:-1], axis=0)

    def map_params(
        self,
        stats: CategoricalStats,
        prior: MEstimate | Dirichlet | None = None,
        previous: CategoricalParams | None = None,
    ) -> CategoricalParams:
        """Every table from the counts and a prior.

        - :class:`~bayeskit.priors.dirichlet.MEstimate` ``(m, p)``, ``m`` of
          shape ``(d,)`` and ``p`` stacked like the counts, ``(sum_j t_j,)``:
          the m-estimate (Mitchell, 1997, section 6.9.1),
          ``P(x_j = a | z = k) = (n_kja + m_j p_ja) / (n_kj + m_j)``. ``m_j =
          0`` is the maximum-likelihood estimate (zero counts give ``-inf``); a
          state with no observed value of feature ``j`` and ``m_j = 0`` takes
          ``p_j`` (the limit of the estimate as ``m -> 0``).
        - :class:`~bayeskit.priors.Dirichlet`: the posterior mode of every
          state's distribution of every feature, ``max(n_kja + alpha - 1, 0)``
          normalised (the concentration broadcasts against each feature's
          ``(n_states, t_j)`` table); exact zeros of ``previous`` stay zero and
          a state with nothing to normalise keeps its previous distribution.
        - None: maximum likelihood (the m-estimate with ``m = 0`` and uniform
          ``p``).

        The m-estimate may also be written with its two arrays,
        ``map_params(stats, m, p)`` (the form before prior objects).
        """
        if prior is not None and not isinstance(prior, (MEstimate, Dirichlet)):
            prior, previous = MEstimate(prior, previous), None
        if isinstance(prior, Dirichlet):
            old = (
                np.ones_like(stats.counts)
                if previous is None
                else np.exp(previous.log_prob)
            )
            prob = np.empty_like(stats.counts)
            for block in self._blocks():
                prob[block] = prior.map(stats.counts[block].T, old[block].T)[0].T
            return CategoricalParams(safe_log(prob))
        if prior is None:
            prior = MEstimate(
                np.zeros(len(self.n_categories)),
                np.repeat(1.0 / self.n_categories, self.n_categories),
            )
        reps = self.n_categories
        totals = np.repeat(self.feature_totals(stats), reps, axis=0)
        m_rows = np.repeat(np.asarray(prior.m, dtype=float), reps)[:, None]
        p_rows = np.asarray(prior.p, dtype=float)[:, None]
        return CategoricalParams(
            prior.log_estimate(stats.counts, totals, m_rows, p_rows)
        )

    def log_prior(self, params: CategoricalParams, prior=None) -> float:
        """Log density of ``prior`` at the tables, up to its constant."""
        if prior is None:
            return 0.0
        prob = np.exp(params.log_prob)
        if isinstance(prior, Dirichlet):
            return sum(prior.log_density(prob[block].T) for block in self._blocks())
        m_rows = np.repeat(np.asarray(prior.m, dtype=float), self.n_categories)
        return prior.log_density(prob, m_rows[:, None], np.asarray(prior.p)[:, None])

    def n_parameters(self, n_states: int) -> int:
        """``n_states * sum_j (t_j - 1)``: each state's tables, free of their sums."""
        return int(n_states * (self.n_categories - 1).sum())

    def init_params(self, X, weights, n_states: int, random_state) -> CategoricalParams:
        """hmmlearn's start: every state's tables drawn uniformly at random and
        normalised (``weights`` and ``X`` are not used)."""
        prob = random_state.rand(n_states, self.n_total)
        for block in self._blocks():
            prob[:, block] /= prob[:, block].sum(axis=1, keepdims=True)
        return CategoricalParams(safe_log(prob.T))

    def sample(self, params: CategoricalParams, states, random_state) -> np.ndarray:
        """The codes of one row drawn from each state in ``states``, ``(n, d)``."""
        states = np.asarray(states, dtype=np.intp)
        prob = np.exp(params.log_prob)
        codes = np.empty((len(states), len(self.n_categories)), dtype=np.intp)
        for j, block in enumerate(self._blocks()):
            cdf = np.cumsum(prob[block][:, states].T, axis=1)
            u = random_state.random_sample(len(states))[:, None]
            codes[:, j] = np.minimum((u > cdf).sum(axis=1), self.n_categories[j] - 1)
        return codes

    def messages(self, codes: np.ndarray, params: CategoricalParams):
        """With one feature, the table (one row per category) and the codes
        that index it, ``(log_prob, codes[:, 0])``; otherwise the dense
        log-likelihood.

        A missing value (code ``-1``) indexes one more row of the table, of
        zeros: its message is 1 under every state, so a chain passes through
        the step and its posterior comes from its neighbours; the weight that
        row receives is left out of :meth:`table_stats`.
        """
        codes = _as_codes(codes)
        if codes.shape[1] == 1:
            table = np.ascontiguousarray(params.log_prob, dtype=float)
            index = codes[:, 0]
            if index.size and index.min() < 0:
                table = np.concatenate([table, np.zeros((1, table.shape[1]))])
                index = np.where(index < 0, self.n_total, index)
            return table, index
        return self.log_likelihood(codes, params), None

    def table_stats(self, row_weights: np.ndarray) -> CategoricalStats:
        """The counts of a one-feature family from the posterior weight of every
        row of its table (the counts themselves; the row of missing values that
        :meth:`messages` may add counts nothing)."""
        row_weights = np.asarray(row_weights, dtype=float)
        return CategoricalStats(row_weights[: self.n_total].copy())

    def _blocks(self):
        """The rows of every feature in the stacked layout, as slices."""
        return [slice(a, b) for a, b in zip(self.offsets[:-1], self.offsets[1:])]


def _as_codes(codes: np.ndarray) -> np.ndarray:
    """Codes as the kernels read them: a C-ordered ``intp`` matrix (no copy if
    they are one already)."""
    return np.ascontiguousarray(codes, dtype=np.intp)
