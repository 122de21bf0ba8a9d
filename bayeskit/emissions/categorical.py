"""Product of categorical tables: one discrete distribution per feature and state.

Features are integer codes ``0 .. t_j - 1``; a code of ``-1`` marks a value that
is missing (or unknown and ignored) and is left out of both the statistics and
the product. The tables of all features are stacked into one array of shape
``(sum_j t_j, n_states)`` so that the likelihood and the counts of all features
are one sparse-times-dense matrix product each.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..priors.dirichlet import log_m_estimate

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
        self.offsets = np.concatenate([[0], np.cumsum(self.n_categories)])

    @property
    def n_total(self) -> int:
        return int(self.offsets[-1])

    def one_hot(self, codes: np.ndarray) -> sp.csr_matrix:
        """Sparse indicator matrix ``(n, sum_j t_j)`` of the observed codes."""
        n, d = codes.shape
        flat = codes + self.offsets[:-1]
        observed = codes >= 0
        if observed.all():
            indices = flat.ravel()
            indptr = np.arange(0, n * d + 1, d)
        else:
            indices = flat[observed]
            indptr = np.concatenate([[0], np.cumsum(observed.sum(axis=1))])
        data = np.ones(indices.shape[0])
        return sp.csr_matrix((data, indices, indptr), shape=(n, self.n_total))

    def log_likelihood(self, codes: np.ndarray, params: CategoricalParams):
        """``sum_j log P(x_j | z = k)`` over the observed features, ``(n, K)``."""
        return np.asarray(self.one_hot(codes) @ params.log_prob)

    def stats(self, codes: np.ndarray, weights: np.ndarray) -> CategoricalStats:
        """Counts of every category weighted by ``weights`` of shape ``(n, K)``."""
        return CategoricalStats(np.asarray(self.one_hot(codes).T @ weights))

    def zeros(self, n_states: int) -> CategoricalStats:
        return CategoricalStats(np.zeros((self.n_total, n_states)))

    def feature_totals(self, stats: CategoricalStats) -> np.ndarray:
        """Weight of the observed values of each feature per state, ``(d, K)``."""
        return np.add.reduceat(stats.counts, self.offsets[:-1], axis=0)

    def map_params(
        self, stats: CategoricalStats, m: np.ndarray, p: np.ndarray
    ) -> CategoricalParams:
        """The m-estimate of every table (reference notes 004).

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
