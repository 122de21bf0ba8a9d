"""Scale-aware tests of a covariance that is singular up to rounding.

A feature measured in other units (a column of order 1e-8 beside one of order
1e8) must not make a covariance look singular: the tests here compare every
variance with the rounding level of its own feature, and every Cholesky pivot
with its own feature's variance, so that they do not change when a feature is
multiplied by a constant (the Gaussian models are equivariant under such
rescaling, Bishop 2006, section 2.3).
"""

from __future__ import annotations

import numpy as np

__all__ = ["singular_at_rounding"]

_EPS = np.finfo(float).eps


def _variance_floor(means: np.ndarray, d: int) -> np.ndarray:
    """Deviations of identical points are at most rounding of their mean:
    ``d (eps |mean_j|)**2`` for every feature ``j``."""
    with np.errstate(over="ignore"):  # means beyond 1e154: the floor is inf
        return d * (_EPS * np.abs(means)) ** 2


def _full_singular(cov: np.ndarray, floor: np.ndarray) -> bool:
    """One (d, d) covariance: a variance at its feature's rounding floor, or a
    pivot of the correlation matrix's Cholesky factor at rounding level.

    The squared pivot ``i`` of the correlation matrix is the variance of
    feature ``i`` left after regressing it on the features before it,
    relative to its own variance: a number that no rescaling of the features
    changes.
    """
    d = cov.shape[0]
    var = np.diagonal(cov)
    if not (var > floor).all():  # also catches NaN
        return True
    std = np.sqrt(var)
    try:
        chol = np.linalg.cholesky(cov / np.outer(std, std))
    except np.linalg.LinAlgError:
        return True
    return bool(np.diagonal(chol).min() ** 2 <= d * _EPS)


def _any_full_singular(covs: np.ndarray, floors: np.ndarray) -> bool:
    """Whether :func:`_full_singular` holds for any of the ``(K, d, d)``
    covariances ``covs`` with the floors ``(K, d)``: the same test on the
    stack at once (one factorisation call for all the correlation matrices)."""
    d = covs.shape[-1]
    var = np.diagonal(covs, axis1=1, axis2=2)
    if not (var > floors).all():  # also catches NaN
        return True
    std = np.sqrt(var)
    try:
        chol = np.linalg.cholesky(covs / (std[:, :, None] * std[:, None, :]))
    except np.linalg.LinAlgError:
        return True
    pivots = np.diagonal(chol, axis1=1, axis2=2)
    return bool((pivots.min(axis=1) ** 2 <= d * _EPS).any())


def singular_at_rounding(
    covariance_type: str, covariances, means, *, floor: bool = True
) -> bool:
    """Whether a covariance of a Gaussian family is singular up to rounding.

    Parameters
    ----------
    covariance_type : {'full', 'tied', 'diag', 'spherical'}
    covariances : ndarray
        ``(K, d, d)``, ``(d, d)``, ``(K, d)`` or ``(K,)``, by type.
    means : ndarray of shape (K, d)
        The means, which set the rounding level of every feature.
    floor : bool, default=True
        Whether a variance at its feature's rounding level counts as zero:
        true of a maximum-likelihood covariance (the scatter of identical
        points is rounding of their mean), not of a regularised one, whose
        added variance is real.

    Returns
    -------
    bool
    """
    if not floor:
        # Every variance is compared with zero (the floor of zero means).
        if covariance_type == "full":
            return _any_full_singular(covariances, 0.0)
        if covariance_type == "tied":
            return _full_singular(covariances, 0.0)
        return not bool((np.asarray(covariances) > 0.0).all())
    means = np.asarray(means, dtype=float)
    d = means.shape[1]
    if covariance_type == "full":
        return _any_full_singular(covariances, _variance_floor(means, d))
    if covariance_type == "tied":
        top = np.max(np.abs(means), axis=0, initial=0.0)
        return _full_singular(covariances, _variance_floor(top, d))
    if covariance_type == "diag":
        return bool(np.any(~(covariances > _variance_floor(means, d))))
    # One variance for every feature: the rounding level of the largest mean.
    top = np.max(np.abs(means), initial=0.0)
    return bool(np.any(~(covariances > _variance_floor(top, d))))
