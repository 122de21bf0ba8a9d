"""The statistics of a Gaussian mixture, and scikit-learn's guard of empty
components in its M-step."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._layout import add_described
from ..emissions import GaussianStats

__all__ = ["MixtureStats"]

#: scikit-learn's extra weight of every component in its M-step.
_TINY = 10 * np.finfo(np.float64).eps


@dataclass(frozen=True)
class MixtureStats:
    """Expected sufficient statistics of a Gaussian mixture on some rows.

    Attributes
    ----------
    gaussian : GaussianStats
        The Gaussian family's statistics under the responsibilities (times
        the sample weights): every component's weight, mean and scatter.
    total_weight : float
        The rows' total sample weight.
    log_likelihood : float
        ``sum_i w_i log p(x_i)`` under the parameters the responsibilities
        came from (for a fitted model's own statistics, the E-step before its
        last M-step).

    Statistics of chunks add with ``+`` (exactly: pairwise merges of centred
    scatters), so statistics computed where each chunk lives can be summed
    before :meth:`GaussianMixture.from_stats`.
    """

    gaussian: GaussianStats
    total_weight: float
    log_likelihood: float
    #: The fitted mixture the statistics were computed under (set by the
    #: public ``summarize``; ``bayeskit._layout.Layout``).
    layout: object = field(default=None, compare=False, repr=False)

    def __add__(self, other: MixtureStats) -> MixtureStats:
        return add_described(self, other, _add_mixture_stats)


def _add_mixture_stats(a: MixtureStats, b: MixtureStats) -> MixtureStats:
    return MixtureStats(
        a.gaussian + b.gaussian,
        a.total_weight + b.total_weight,
        a.log_likelihood + b.log_likelihood,
    )


def _guard_empty(stats):
    """``stats`` with ``10 eps`` more weight per component at the origin.

    scikit-learn's M-step divides by ``n_k + 10 eps``: the mean shrinks to
    ``n_k mu_k / (n_k + 10 eps)`` and the scatter is taken around it (the
    added mass contributes none). Where every weight is so large that
    ``10 eps`` more rounds away (and the means are finite), the guarded
    statistics equal ``stats``: then ``stats`` itself is returned.
    """
    weight = stats.weight + _TINY
    if (weight == stats.weight).all() and np.isfinite(stats.mean).all():
        return stats
    frac = stats.weight / weight
    mean = stats.mean * (frac if frac.ndim == 2 else frac[:, None])
    shift = stats.covariance.outer(stats.mean - mean, stats.weight)
    return GaussianStats(weight, mean, stats.scatter + shift, stats.covariance)
