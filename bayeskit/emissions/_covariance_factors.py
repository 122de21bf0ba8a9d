"""Numerical helpers of the covariance structures: precision factors, scatters.

The precision factor ``P`` of a covariance ``Sigma`` satisfies ``P P^T =
Sigma^{-1}``: the transposed inverse of the lower Cholesky factor of ``Sigma``
(from LAPACK's triangular inversion, never an explicit inverse) for matrices,
``1 / sigma`` for variances (Bishop 2006, section 2.3). Scatters are sums of
weighted outer products of deviations from the state means (centred).

References
----------
.. [1] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, section 2.3 (the Gaussian distribution).
"""

from __future__ import annotations

import logging

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

__all__ = [
    "precision_cholesky",
    "precision_cholesky_from_precision",
    "row_blocks",
]

_LOG_2PI = np.log(2.0 * np.pi)
_EPS = np.finfo(float).eps
_log = logging.getLogger("bayeskit.emissions")


def row_blocks(n_rows: int, width: int, elements: int = 1 << 20):
    """Slices of about ``elements / width`` rows covering ``range(n_rows)``.

    Row-wise work on blocks this size (centring, a matrix product, a
    reduction) stays in cache instead of streaming full-size temporaries.
    """
    step = max(1, elements // max(width, 1))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


def _class_residuals(X, weights, means, labels):
    """Per class, its rows' deviations from its mean times sqrt(weight).

    One sorted copy of ``X`` makes every class a contiguous block, so that
    ``r.T @ r`` is the class's weighted scatter with no further gathering.
    """
    order = np.argsort(labels, kind="stable")
    counts = np.bincount(labels, minlength=means.shape[0])
    xs = X[order]
    w = weights[order, labels[order]]
    root = None if np.all(w == 1.0) else np.sqrt(w)[:, None]
    start = 0
    for j, c in enumerate(counts):
        r = xs[start : start + c]
        r -= means[j]
        if root is not None:
            r *= root[start : start + c]
        start += c
        yield r


# Up to this many deviations (rows x states x features) a scatter takes every
# state's deviations at once, in one temporary and one batched product: on
# small data (a mixture on a few hundred rows) the calls per state, not the
# arithmetic, are what costs.
_DIRECT_CELLS = 1 << 15

# Entries (features x rows) of each buffer of a larger scatter's blocks: the
# block's transposed rows, deviations and weighted deviations stay in cache.
_SCATTER_CELLS = 1 << 16


def _matrix_scatter(X, weights, means, labels):
    """Every state's full scatter matrix, ``(K, d, d)``."""
    k, d = means.shape
    if labels is not None:
        out = np.empty((k, d, d))
        for j, r in enumerate(_class_residuals(X, weights, means, labels)):
            out[j] = r.T @ r
        return out
    if X.shape[0] * k * d <= _DIRECT_CELLS:
        # r[j] = X - means[j]; scatter[j] = (r[j] * w[:, j])^T r[j].
        r = (X[:, None, :] - means).transpose(1, 0, 2)
        return np.matmul(r.transpose(0, 2, 1) * weights.T[:, None, :], r)
    # A block of rows transposed, features x rows: every state's deviations
    # and their weighting are then operations along the rows of the block
    # (long vectors, not one short row of d features at a time) into buffers
    # made once, and its scatter one product of two (d, rows) matrices.
    out = np.zeros((k, d, d))
    step = max(1, _SCATTER_CELLS // d)
    part = np.empty((d, d))
    for start in range(0, X.shape[0], step):
        xt = np.ascontiguousarray(X[start : start + step].T, dtype=float)
        wt = np.ascontiguousarray(weights[start : start + step].T, dtype=float)
        if start == 0 or len(wt[0]) < step:  # the first and the last block
            r, rw = np.empty_like(xt), np.empty_like(xt)
        for j in range(k):
            np.subtract(xt, means[j][:, None], out=r)
            np.multiply(r, wt[j], out=rw)
            out[j] += np.matmul(rw, r.T, out=part)
    return out


def _add_to_matrix_diagonal(cov, value):
    out = np.array(cov, dtype=float, copy=True)
    # The diagonal as a writeable view of the copy.
    np.einsum("...ii->...i", out)[...] += value
    return out


def _matrix_layout(covariances, ndim, name, shape):
    """``covariances`` as a float copy of ``ndim`` dimensions whose last two
    are square, or a ValueError naming ``name`` and ``shape``."""
    c = np.array(covariances, dtype=float, copy=True)
    if c.ndim != ndim or c.shape[-1] != c.shape[-2]:
        raise ValueError(f"{name} must have shape {shape}, got {c.shape}")
    return c


def _matrix_values(cov, name):
    """ValueError naming ``name`` unless the matrix ``cov`` is finite,
    symmetric and positive definite (every eigenvalue above zero)."""
    cov = np.asarray(cov, dtype=float)
    if not np.all(np.isfinite(cov)):
        raise ValueError(f"{name} must be finite")
    if not np.allclose(cov, cov.T):
        raise ValueError(f"{name} must be symmetric")
    if np.linalg.eigvalsh(cov).min() <= 0:
        raise ValueError(f"{name} must be positive definite")


def _is_upper(P) -> bool:
    return not np.any(np.tril(P, -1))


def _ratio(num, den, fallback, min_denominator=0.0):
    """``num / max(den, min_denominator)``; where that is zero (no data, no
    prior weight) ``fallback``.

    Without a fallback such a state's covariance is undefined: a LinAlgError.
    """
    if min_denominator:
        den = np.maximum(den, min_denominator)
    empty = den == 0
    if not empty.any():
        return num / den
    if fallback is None:
        raise np.linalg.LinAlgError(
            "a state has no data and no prior weight: its covariance is undefined"
        )
    out = num / np.where(empty, 1.0, den)
    return np.where(empty, np.broadcast_to(fallback, out.shape), out)


def _inverse_sqrt(variances: np.ndarray) -> np.ndarray:
    """``1 / sigma``: the precision factor of variances, which must be positive."""
    if not (variances > 0).all():
        raise np.linalg.LinAlgError("a variance is not positive")
    return 1.0 / np.sqrt(variances)


def _prec_chol(cov: np.ndarray, rounding_floor: bool = True) -> np.ndarray:
    """Upper factor ``P`` with ``P P^T = cov^{-1}``: the inverse of the Cholesky
    factor (LAPACK's triangular inversion), transposed."""
    chol = np.linalg.cholesky(cov)  # raises LinAlgError when not PD
    d = cov.shape[0]
    # A pivot at rounding level means a singular matrix that rounding let through.
    if rounding_floor:
        scale = np.abs(np.diagonal(cov)).max()
        if np.diagonal(chol).min() ** 2 <= d * _EPS * scale:
            raise np.linalg.LinAlgError("the covariance matrix is singular")
    inv, info = lapack.dtrtri(chol, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError("the covariance matrix is singular")
    return inv.T


def _stacked_prec_chol(covs: np.ndarray, rounding_floor: bool) -> np.ndarray | None:
    """:func:`_prec_chol` of every matrix of the stack ``covs`` ``(K, d, d)``,
    with one factorisation call for all of them (the same LAPACK routine on
    the same matrices: the same factors); None when one of them would raise.
    """
    try:
        chol = np.linalg.cholesky(covs)
    except np.linalg.LinAlgError:
        return None
    d = covs.shape[-1]
    pivots = np.diagonal(chol, axis1=1, axis2=2)
    if rounding_floor:
        scale = np.max(np.abs(np.diagonal(covs, axis1=1, axis2=2)), axis=1)
        if np.any(np.min(pivots, axis=1) ** 2 <= d * _EPS * scale):
            return None
    out = np.empty_like(chol)
    for k in range(chol.shape[0]):
        inv, info = lapack.dtrtri(chol[k], lower=1)
        if info != 0:
            return None
        out[k] = inv.T
    return out


def _jittered(cov: np.ndarray, rounding_floor: bool, jitter: float) -> np.ndarray:
    """:func:`_prec_chol` of ``cov``; if ``jitter`` and ``cov`` is singular,
    of ``cov + jitter I`` instead (logged)."""
    try:
        return _prec_chol(cov, rounding_floor)
    except np.linalg.LinAlgError:
        if not jitter:
            raise
    _log.warning(
        "a covariance matrix is singular; its densities use it plus %g on its diagonal",
        jitter,
    )
    return _prec_chol(_add_to_matrix_diagonal(cov, jitter), rounding_floor)


def _from_precision(precision: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(P, Sigma)`` of one precision matrix: ``Sigma = P^{-T} P^{-1}``, with
    ``P^{-1}`` from a triangular solve."""
    P = precision_cholesky_from_precision(precision)
    inv = linalg.solve_triangular(P, np.eye(P.shape[0]), lower=False)
    return P, inv.T @ inv


def precision_cholesky(cov: np.ndarray) -> np.ndarray:
    """Public name of the factor ``P`` (``P P^T = cov^{-1}``) of one matrix."""
    return _prec_chol(cov)


def precision_cholesky_from_precision(precision: np.ndarray) -> np.ndarray:
    """The upper factor ``P`` with ``P P^T = precision`` of one matrix.

    It is the factor :func:`precision_cholesky` gives for ``precision^{-1}``
    (the upper triangular factor with a positive diagonal is unique), taken
    from the precision itself: the lower Cholesky factor of the matrix with
    rows and columns reversed, reversed back. Raises LinAlgError if not PD.
    """
    flipped = np.linalg.cholesky(precision[::-1, ::-1])
    return np.ascontiguousarray(flipped[::-1, ::-1])
