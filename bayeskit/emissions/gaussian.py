"""The Gaussian emission family: one family, its covariance structure an object.

``Gaussian(FULL)`` is QDA's and the full mixtures' emission, ``Gaussian(TIED)``
LDA's, ``Gaussian(DIAG)`` Gaussian naive Bayes', ``Gaussian(SPHERICAL)`` the
spherical mixtures'. Statistics are the weight, the mean and the centred
scatter of every state; they merge pairwise (Chan, Golub and LeVeque), never
as ``E[x^2] - E[x]^2``. Parameters come from statistics and a prior in one
formula for every structure, the MAP update under a conjugate prior on the
covariance (Fraley and Raftery 2007; Bishop 2006, section 2.3.6):

.. math::

    \\Sigma_k = \\frac{S_k + \\eta\\, S_0}{n_k + \\eta} + \\text{reg}\\, I,

with ``eta = 0`` the maximum-likelihood estimate. The log-density is evaluated
through the precision Cholesky factor ``P`` (``P P^T = Sigma^{-1}``, from a
triangular solve, never an explicit inverse) in coordinates centred on the
training mean, so data far from the origin keeps its precision.

With the diagonal structure, missing values (NaN) are marginalised: a missing
feature is left out of the statistics of its row and of its density. Its
density (one compiled pass over the rows) and its statistics in a supervised
fit (two) take deviations from the means themselves
(:mod:`bayeskit.emissions._kernels`), which keeps data far from the origin
just as precise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._kernels import diag_class_moments, diag_log_likelihood
from .covariance import DIAG, Covariance, row_blocks

__all__ = ["Gaussian", "GaussianParams", "GaussianStats"]

_LOG_2PI = np.log(2.0 * np.pi)


@dataclass(frozen=True)
class GaussianStats:
    """Weight ``(K,)`` (``(K, d)`` for DIAG), mean ``(K, d)`` and centred scatter.

    The scatter's shape is the covariance structure's: ``(K, d, d)`` full,
    ``(d, d)`` tied, ``(K, d)`` diagonal, ``(K,)`` spherical.
    """

    weight: np.ndarray
    mean: np.ndarray
    scatter: np.ndarray
    covariance: Covariance

    def __add__(self, other: GaussianStats) -> GaussianStats:
        w = self.weight + other.weight
        safe = np.where(w > 0, w, 1.0)
        frac = np.where(w > 0, other.weight / safe, 0.0)
        delta = other.mean - self.mean
        mean = self.mean + delta * (frac if frac.ndim == 2 else frac[:, None])
        coef = self.weight * frac  # = w_a w_b / (w_a + w_b)
        scatter = self.scatter + other.scatter + self.covariance.outer(delta, coef)
        return GaussianStats(w, mean, scatter, self.covariance)

    def state_weight(self) -> np.ndarray:
        """Total weight of every state, ``(K,)`` (with missing values: the
        largest over the features)."""
        w = self.weight
        return w if w.ndim == 1 else w.max(axis=1)

    def _feature_weights(self) -> np.ndarray:
        w = self.weight
        return w if w.ndim == 2 else np.broadcast_to(w[:, None], self.mean.shape)

    def grand_mean(self) -> np.ndarray:
        """Weighted mean of every feature over all states."""
        w = self._feature_weights()
        tot = w.sum(axis=0)
        return (w * self.mean).sum(axis=0) / np.where(tot > 0, tot, 1.0)

    def within_variance(self) -> np.ndarray:
        """Pooled within-state variance of every feature (DIAG statistics)."""
        tot = self._feature_weights().sum(axis=0)
        return self.scatter.sum(axis=0) / np.where(tot > 0, tot, 1.0)

    def total_variance(self) -> np.ndarray:
        """Variance of every feature over all states (DIAG statistics)."""
        w = self._feature_weights()
        tot = w.sum(axis=0)
        between = (w * (self.mean - self.grand_mean()) ** 2).sum(axis=0)
        return (self.scatter.sum(axis=0) + between) / np.where(tot > 0, tot, 1.0)


@dataclass(frozen=True)
class GaussianParams:
    """Means ``(K, d)``, covariances, precision Cholesky factors, ``log det P``."""

    means: np.ndarray
    covariances: np.ndarray
    precisions_cholesky: np.ndarray
    log_det: np.ndarray
    center: np.ndarray


class Gaussian:
    """Gaussian emissions with the given covariance structure.

    Parameters
    ----------
    covariance : Covariance
        ``FULL``, ``TIED``, ``DIAG`` or ``SPHERICAL`` from
        :mod:`bayeskit.emissions.covariance`.
    """

    def __init__(self, covariance: Covariance) -> None:
        self.covariance = covariance

    def stats(
        self, X: np.ndarray, weights: np.ndarray, labels: np.ndarray | None = None
    ) -> GaussianStats:
        """Statistics of ``X`` under ``weights`` of shape ``(n, K)``.

        ``labels`` may be given when every row's weight sits on one state (a
        supervised fit, ``weights[i, labels[i]]`` the row's weight): the
        deviations then take one pass over ``X`` (with the diagonal structure,
        two compiled passes in all). NaN in ``X`` (missing values) is only
        allowed with the diagonal structure.
        """
        if self.covariance is DIAG and labels is not None:
            shape = (weights.shape[1], X.shape[1])
            weight, mean, scatter = np.zeros(shape), np.zeros(shape), np.zeros(shape)
            diag_class_moments(
                np.ascontiguousarray(X, dtype=float),
                np.ascontiguousarray(weights, dtype=float),
                np.ascontiguousarray(labels, dtype=np.intp),
                np.empty(X.shape[1]),
                weight,
                mean,
                scatter,
                np.zeros(shape),
            )
            return GaussianStats(weight, mean, scatter, DIAG)
        missing = np.isnan(X) if self.covariance is DIAG else None
        if missing is not None and missing.any():
            # Weights spread over the states: NaN cells drop out of each sum.
            observed = (~missing).astype(float)
            X = np.where(missing, 0.0, X)
            weight = weights.T @ observed
            safe = np.where(weight > 0, weight, 1.0)
            mean = (weights.T @ X) / safe
            # Deviations of missing cells are zeroed through the observed mask.
            scatter = np.stack(
                [
                    weights[:, k] @ (((X - mean[k]) * observed) ** 2)
                    for k in range(weights.shape[1])
                ]
            )
            return GaussianStats(weight, mean, scatter, DIAG)
        weight = weights.sum(axis=0)
        safe = np.where(weight > 0, weight, 1.0)
        mean = (weights.T @ X) / safe[:, None]
        if self.covariance is DIAG:
            weight = np.broadcast_to(weight[:, None], mean.shape).copy()
        scatter = self.covariance.scatter(X, weights, mean, labels)
        return GaussianStats(weight, mean, scatter, self.covariance)

    def map_params(
        self,
        stats: GaussianStats,
        prior_weight: float = 0.0,
        prior_scatter=None,
        reg: float = 0.0,
        shrink: float = 0.0,
        rounding_floor: bool = True,
    ) -> GaussianParams:
        """MAP parameters; ``prior_scatter`` ``S_0`` defaults to the identity.

        ``shrink`` in [0, 1] pulls the covariance toward the identity,
        ``(1 - shrink) Sigma + shrink I`` (QDA's ``reg_param``), and ``reg`` is
        added to its diagonal afterwards.

        Raises :class:`numpy.linalg.LinAlgError` when a covariance is not
        positive definite; the estimator turns it into an error that names
        its own remedies. With ``rounding_floor`` (the default), a variance
        or Cholesky pivot at the rounding level of the data counts as zero;
        without it, only a covariance that is not positive definite in
        floating point is rejected (scikit-learn's mixtures).
        """
        d = stats.mean.shape[1]
        if prior_scatter is None:
            prior_scatter = np.eye(d)
        cov = self.covariance.covariances(
            stats.scatter, stats.weight, prior_weight, prior_scatter, reg, shrink
        )
        if rounding_floor and self.covariance.name in ("diag", "spherical"):
            # Deviations of identical points are at most rounding of the mean:
            # a variance at that level is zero that rounding let through.
            floor = d * (np.finfo(float).eps * np.max(np.abs(stats.mean))) ** 2
            if np.any(cov <= floor):
                raise np.linalg.LinAlgError("a variance is zero")
        prec = self.covariance.precision_cholesky(cov, rounding_floor)
        log_det = self.covariance.log_det_precision_cholesky(prec, d)
        center = stats.grand_mean()
        # A state with no data for a feature takes the mean over all states.
        means = np.where(stats._feature_weights() > 0, stats.mean, center)
        return GaussianParams(means, cov, prec, log_det, center)

    def log_likelihood(self, X: np.ndarray, params: GaussianParams) -> np.ndarray:
        """``log N(x_i; mu_k, Sigma_k)`` for every row and state, ``(n, K)``."""
        if self.covariance is DIAG:
            prec_chol = params.precisions_cholesky  # 1 / sigma, (K, d)
            log_norm = np.log(prec_chol) - 0.5 * _LOG_2PI
            out = np.empty((X.shape[0], prec_chol.shape[0]))
            diag_log_likelihood(
                np.ascontiguousarray(X, dtype=float),
                np.ascontiguousarray(params.means, dtype=float),
                0.5 * prec_chol * prec_chol,
                log_norm,
                log_norm.sum(axis=1),
                out,
            )
            return out
        mu_c = params.means - params.center
        n, d = X.shape
        out = np.empty((n, mu_c.shape[0]))
        for rows in row_blocks(n, mu_c.size):
            maha = self.covariance.mahalanobis(
                X[rows] - params.center, mu_c, params.precisions_cholesky
            )
            out[rows] = -0.5 * (maha + d * _LOG_2PI) + params.log_det
        return out
