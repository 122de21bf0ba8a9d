"""Product of categorical tables: one discrete distribution per feature and state.

Features are integer codes ``0 .. t_j - 1``; a code of ``-1`` marks a value that
is missing (or unknown and ignored) and is left out of both the statistics and
the product. The tables of all features are stacked into one array of shape
``(sum_j t_j, n_states)``, row ``offsets[j] + a`` for value ``a`` of feature
``j``: the likelihood of a row is a gather of one table row per feature, and
the counts one addition per cell (one per cell and state for soft weights),
each a single compiled pass over the codes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..priors.dirichlet import log_m_estimate
from ._kernels import (
    categorical_counts,
    categorical_log_likelihood,
    categorical_soft_counts,
)

__all__ = ["Categorical", "CategoricalParams", "CategoricalStats"]


@dataclass(frozen=True)
class CategoricalStats:
    """Weighted counts ``n[k, j, a]`` stacked as ``counts[offset_j + a, k]``."""

    counts: np.ndarray

    def __add__(self, other: CategoricalStats) -> CategoricalStats:
        return CategoricalStats(self.counts + other.counts)


@dataclass(frozen=True)
class CategoricalParams:
    """``log_prob[offset_j + a, k] = log P(x_j = a | z = k)``."""

    log_prob: np.ndarray


class Categorical:
    """The emission family of categorical naive Bayes.

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
        self, stats: CategoricalStats, m: np.ndarray, p: np.ndarray
    ) -> CategoricalParams:
        """The m-estimate of every table (Mitchell, 1997, section 6.9.1).

        ``P(x_j = a | z = k) = (n_kja + m_j p_ja) / (n_kj + m_j)`` with ``m`` of
        shape ``(d,)`` and ``p`` stacked like the counts, ``(sum_j t_j,)``.
        ``m_j = 0`` is the maximum-likelihood estimate (zero counts give
        ``-inf``); a state with no observed value of feature ``j`` and
        ``m_j = 0`` takes ``p_j`` (the limit of the estimate as ``m -> 0``).
        """
        reps = self.n_categories
        totals = np.repeat(self.feature_totals(stats), reps, axis=0)
        m_rows = np.repeat(m, reps)[:, None]
        return CategoricalParams(
            log_m_estimate(stats.counts, totals, m_rows, p[:, None])
        )


def _as_codes(codes: np.ndarray) -> np.ndarray:
    """Codes as the kernels read them: a C-ordered ``intp`` matrix (no copy if
    they are one already)."""
    return np.ascontiguousarray(codes, dtype=np.intp)
