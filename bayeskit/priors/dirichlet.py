"""The m-estimate: a Dirichlet prior written as m virtual samples drawn from p.

Reference notes 004: ``P(a) = (n_a + m p_a) / (n + m)``, the posterior mean
under a Dirichlet prior of concentration ``m p`` (and the MAP estimate under
concentration ``m p + 1``). ``m = 0`` is the maximum-likelihood estimate.
"""

from __future__ import annotations

import numpy as np

from .._logmath import safe_log

__all__ = ["log_m_estimate"]


def log_m_estimate(counts, totals, m, p) -> np.ndarray:
    """``log((counts + m p) / (totals + m))``, broadcasting all four arguments.

    Where ``totals + m == 0`` (no data and no prior weight) the estimate is its
    limit as ``m -> 0`` with data still absent: ``p`` itself. Zero counts with
    ``m = 0`` give ``-inf``, never NaN.
    """
    counts, totals, m, p = np.broadcast_arrays(
        *(np.asarray(a, dtype=float) for a in (counts, totals, m, p))
    )
    den = totals + m
    empty = den == 0
    prob = np.where(empty, p, (counts + m * p) / np.where(empty, 1.0, den))
    return safe_log(prob)
