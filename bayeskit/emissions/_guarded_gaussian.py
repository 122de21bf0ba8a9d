"""The Gaussian family with scikit-learn's mixture guards.

scikit-learn's ``GaussianMixture`` M-step gives every component ``10 eps``
more weight (an empty component then has mean 0 and covariance
``reg_covar``), and rejects a covariance only when it is not positive
definite in floating point. bayeskit's ``GaussianMixture`` keeps both habits
as behaviour of its family: :class:`GuardedGaussian` is the Gaussian family
whose :meth:`~GuardedGaussian.map_params` applies that guard, and whose
statistics are gathered in coordinates shifted by one row of the data (exact
for a constant column far from the origin; Chan, Golub and LeVeque 1983).

References
----------
.. [1] T. F. Chan, G. H. Golub and R. J. LeVeque, "Algorithms for computing
   the sample variance: analysis and recommendations", *The American
   Statistician* 37(3), 1983, pp. 242-247.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._logmath import has_nan
from .gaussian import Gaussian, GaussianParams, GaussianStats

__all__ = [
    "GuardedGaussian",
    "guard_empty",
    "shifted_stats",
    "unshifted",
    "unshifted_mean",
]

#: scikit-learn's extra weight of every component in its M-step.
TINY = 10 * np.finfo(np.float64).eps


def guard_empty(stats: GaussianStats) -> GaussianStats:
    """``stats`` with ``10 eps`` more weight per state at the origin.

    scikit-learn's M-step divides by ``n_k + 10 eps``: the mean shrinks to
    ``n_k mu_k / (n_k + 10 eps)`` and the scatter is taken around it (the
    added mass contributes none). Where every weight is so large that
    ``10 eps`` more rounds away (and the means are finite), the guarded
    statistics equal ``stats``: then ``stats`` itself is returned.
    """
    weight = stats.weight + TINY
    if (weight == stats.weight).all() and np.isfinite(stats.mean).all():
        return stats
    frac = stats.weight / weight
    mean = stats.mean * (frac if frac.ndim == 2 else frac[:, None])
    shift = stats.covariance.outer(stats.mean - mean, stats.weight)
    return GaussianStats(weight, mean, stats.scatter + shift, stats.covariance)


def _shift_of(X: np.ndarray) -> np.ndarray:
    """A row to shift the data by: every column's first observed value (0
    for a column with none)."""
    observed = ~np.isnan(X)
    first = np.argmax(observed, axis=0)
    shift = X[first, np.arange(X.shape[1])]
    return np.where(observed.any(axis=0), shift, 0.0)


def shifted_stats(family: Gaussian, X, weights, params=None) -> GaussianStats:
    """The Gaussian ``family``'s statistics of ``X`` under ``weights``, gathered
    in coordinates shifted by the first row; with missing cells, the expected
    statistics under ``params`` (shifted with the data), the shift being the
    first observed value of every column.

    A weighted mean of a column of magnitude ``c`` carries rounding of
    about ``n eps |c|``; a constant column at 1e12 then gets a spread of
    means across the components that, divided by ``reg_covar``, would
    decide the posteriors. Shifted, such a column is exactly zero, and its
    means exactly its value once the shift is added back; the scatter
    does not change (Chan, Golub and LeVeque 1983).
    """
    if X.shape[0] == 0:
        return Gaussian.stats(family, X, weights)
    if params is not None and has_nan(X):
        shift = _shift_of(X)
        moved = dataclasses.replace(
            params, means=params.means - shift, center=params.center - shift
        )
        stats = Gaussian.expected_stats(family, X - shift, weights, moved)
        return unshifted(stats, shift)
    shift = X[0].copy()
    return unshifted(Gaussian.stats(family, X - shift, weights), shift)


def unshifted(stats: GaussianStats, shift: np.ndarray) -> GaussianStats:
    """Statistics gathered in coordinates shifted by ``shift``, back in the
    data's (the means move; the scatter does not)."""
    mean = unshifted_mean(stats.weight, stats.mean, shift)
    return type(stats)(stats.weight, mean, stats.scatter, stats.covariance)


def unshifted_mean(weight, mean, shift) -> np.ndarray:
    """The means of :func:`unshifted` from the statistics' ``weight`` and
    ``mean`` (a state or feature without weight keeps its mean of 0)."""
    weight = weight if weight.ndim == 2 else weight[:, None]
    return np.where(weight > 0, mean + shift, mean)


class GuardedGaussian(Gaussian):
    """The Gaussian family with scikit-learn's mixture guards.

    Statistics are gathered in shifted coordinates (:func:`shifted_stats`);
    :meth:`map_params` adds ``10 eps`` of weight to every state first
    (:func:`guard_empty`) and rejects a covariance only when it is not
    positive definite in floating point (no rounding floor). What is
    otherwise the Gaussian family's: densities, missing coordinates, draws.
    """

    def stats(self, X, weights, labels=None) -> GaussianStats:
        """Statistics of ``X`` under ``weights``, in shifted coordinates."""
        return shifted_stats(self, X, weights)

    def complete_stats(self, X, weights, shifted=None) -> GaussianStats:
        """:meth:`stats` of rows known to hold no missing value (NaN): the
        structure's statistics in shifted coordinates, no test for NaN.
        ``shifted``: ``(X - X[0], X[0])``, if the caller has made them."""
        moved, shift = shifted or (None, X[0].copy())
        if moved is None:
            moved = X - shift
        w, m, s = self.covariance.complete_stats(moved, weights)
        return GaussianStats(w, unshifted_mean(w, m, shift), s, self.covariance)

    def expected_stats(self, X, weights, params: GaussianParams) -> GaussianStats:
        """Statistics for one EM step under ``params`` (missing cells
        completed), in shifted coordinates."""
        return shifted_stats(self, X, weights, params)

    def map_params(self, stats, prior=None, previous=None, **keywords):
        """MAP parameters of the guarded statistics (every state then has
        weight, so ``previous`` is not read); without the rounding floor.

        Raises
        ------
        numpy.linalg.LinAlgError
            When a covariance is not positive definite in floating point.
        """
        keywords.setdefault("rounding_floor", False)
        return super().map_params(guard_empty(stats), prior, **keywords)

    def map_params_and_strict(self, stats, prior):
        """:meth:`map_params` of ``stats``, and the family's MAP parameters
        of ``stats`` without the guard (for the stricter test of a collapsed
        covariance; the same object when the guard changes nothing).
        The second is computed only if the first succeeds."""
        guarded = guard_empty(stats)
        params = super().map_params(guarded, prior, rounding_floor=False)
        if guarded is stats:
            return params, (lambda: params)
        return params, (
            lambda: super(GuardedGaussian, self).map_params(
                stats, prior, params, rounding_floor=False
            )
        )
