"""The statistics of a Gaussian mixture: the one EM loop's statistics, with
the rows' total sample weight (scikit-learn's objective is per sample)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._base.em import LatentParams, LatentStats
from .._base.rounding import singular_at_rounding
from .._layout import add_described
from .._warnings import warn
from ..emissions._guarded_gaussian import TINY
from ..graph import NodeParams

__all__ = ["MixtureStats", "m_step"]

# The covariance types made of variances (one per state, or per state and feature).
_VARIANCES = ("diag", "spherical")


@dataclass(frozen=True)
class MixtureStats(LatentStats):
    """Expected sufficient statistics of a Gaussian mixture on some rows.

    Attributes
    ----------
    structure : NodeStats
        The weight of every component.
    emission : GaussianStats
        The Gaussian family's statistics under the responsibilities (times
        the sample weights): every component's weight, mean and scatter
        (also named ``gaussian``).
    log_evidence : float
        ``sum_i w_i log p(x_i)`` under the parameters the responsibilities
        came from (also named ``log_likelihood``).
    sample_weight : float
        The rows' total sample weight (also named ``total_weight``).

    Statistics of chunks add with ``+`` (exactly: pairwise merges of centred
    scatters), so statistics computed where each chunk lives can be summed
    before :meth:`GaussianMixture.from_stats`.
    """

    sample_weight: float = 0.0

    def __add__(self, other: MixtureStats) -> MixtureStats:
        if not isinstance(other, MixtureStats):
            return NotImplemented
        return add_described(self, other, _add_mixture_stats)

    @property
    def gaussian(self):
        """The Gaussian family's statistics (``emission``)."""
        return self.emission

    @property
    def log_likelihood(self) -> float:
        """``sum_i w_i log p(x_i)`` (``log_evidence``)."""
        return self.log_evidence

    @property
    def total_weight(self) -> float:
        """The rows' total sample weight."""
        return self.sample_weight

    @property
    def row_weight(self) -> float:
        return self.sample_weight


def _add_mixture_stats(a: MixtureStats, b: MixtureStats) -> MixtureStats:
    return MixtureStats(
        a.structure + b.structure,
        a.emission + b.emission,
        a.log_evidence + b.log_evidence,
        sample_weight=a.sample_weight + b.sample_weight,
    )


def m_step(est, raw, prior, family, total=None) -> LatentParams:
    """Parameters from the Gaussian statistics ``raw`` (responsibilities
    already weighted by sample_weight).

    As scikit-learn, every component's weight gets ``10 eps`` more (the
    family's guard), as if that much mass sat at the origin without
    scatter: an empty component has mean 0 and covariance ``reg_covar``
    (not an error only if ``reg_covar > 0``), and a covariance is
    rejected only when it is not positive definite in floating point.
    The weights are divided by ``total`` (default: their sum).
    """
    try:
        params, strict_of = family.map_params_and_strict(raw, prior.emission)
    except np.linalg.LinAlgError:
        raise ValueError(
            "a component's covariance is singular (it collapsed on too few "
            "distinct points, or the data have fewer points than dimensions): "
            "set covariance_prior_weight > 0 (the MAP prior), or increase "
            "reg_covar"
        ) from None
    # A variance at its feature's rounding level is zero when nothing
    # regularises it; reg_covar or the prior add a variance that is real.
    floor = est.reg_covar == 0 and est.covariance_prior_weight == 0
    try:
        # The stricter test of the other Gaussian models, on the statistics
        # without the guard (an empty component keeps what the guard gave),
        # with the rounding level of every feature in its own units.
        strict = strict_of()
        if strict is params and not floor and est.covariance_type in _VARIANCES:
            # Without the floor, the test of variances is that they are
            # positive: what the factors of params already required.
            collapsed = False
        else:
            collapsed = singular_at_rounding(
                est.covariance_type, strict.covariances, strict.means, floor=floor
            )
    except np.linalg.LinAlgError:
        collapsed = True
    if collapsed:
        warn(
            "a component's covariance collapsed to the rounding level of the "
            "data (a component on one point, or on fewer points than "
            "dimensions): its likelihood is unbounded; set reg_covar or "
            "covariance_prior_weight > 0",
            UserWarning,
        )
    weight = raw.state_weight() + TINY  # the guard's weights
    weights = weight / (weight.sum() if total is None else total)
    return LatentParams(NodeParams(weights), params)
