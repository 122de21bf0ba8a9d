"""Log-space arithmetic shared by every layer of bayeskit.

All functions are pure: arrays in, arrays out. ``-inf`` (a probability of
exactly zero) is a legal value everywhere and never turns into NaN: the
log-sum-exp of a row whose every entry is ``-inf`` is ``-inf``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "log_matmul",
    "log_normalize",
    "logdet_chol",
    "logsumexp",
    "safe_log",
]


def safe_log(x: np.ndarray) -> np.ndarray:
    """Natural logarithm with ``log(0) = -inf`` and no divide warning."""
    with np.errstate(divide="ignore"):
        return np.log(x)


def _finite_max(a: np.ndarray, axis, keepdims: bool = True) -> np.ndarray:
    """Maximum along ``axis`` with rows of only ``-inf`` mapped to 0.

    The shift keeps ``exp(a - shift)`` finite; a row of ``-inf`` then sums
    to zero and its log is ``-inf`` again instead of ``-inf - -inf = NaN``.
    """
    amax = np.max(a, axis=axis, keepdims=keepdims)
    return np.where(np.isfinite(amax), amax, 0.0)


def logsumexp(a: np.ndarray, axis=None, keepdims: bool = False) -> np.ndarray:
    """``log(sum(exp(a), axis))`` computed without overflow or underflow.

    Unlike a naive shift by the maximum, a slice of only ``-inf`` gives
    ``-inf`` (not NaN) and a slice holding ``+inf`` gives ``+inf``.
    """
    a = np.asarray(a, dtype=float)
    if a.size == 0:
        return np.log(np.sum(np.exp(a), axis=axis, keepdims=keepdims))
    shift = _finite_max(a, axis)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = np.log(np.sum(np.exp(a - shift), axis=axis, keepdims=True)) + shift
    if not keepdims:
        out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())
    return out


def log_normalize(a: np.ndarray, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """Normalise log-weights along ``axis``.

    Returns ``(a - lse, lse)`` where ``lse = logsumexp(a, axis)`` keeps its
    axis. A slice whose every entry is ``-inf`` stays ``-inf`` (it has no
    mass to normalise) and its ``lse`` is ``-inf``; the caller decides what
    such a slice means.
    """
    lse = logsumexp(a, axis=axis, keepdims=True)
    finite = np.isfinite(lse)
    out = a - np.where(finite, lse, 0.0)
    return out, lse


def log_matmul(log_a: np.ndarray, log_b: np.ndarray) -> np.ndarray:
    """``log(exp(log_a) @ exp(log_b))`` for log-space matrices.

    The rows of ``log_a`` and the columns of ``log_b`` are shifted by their
    maxima before exponentiating, so entries far below zero (long products of
    small probabilities) keep their precision. Batched over leading axes as
    :func:`numpy.matmul` is.
    """
    sa = _finite_max(log_a, axis=-1)
    sb = _finite_max(log_b, axis=-2)
    with np.errstate(divide="ignore"):
        prod = np.exp(log_a - sa) @ np.exp(log_b - sb)
        return np.log(prod) + sa + sb


def logdet_chol(chol: np.ndarray) -> np.ndarray:
    """Log-determinant of ``L L^T`` from its (batched) triangular factor ``L``."""
    diag = np.diagonal(chol, axis1=-2, axis2=-1)
    return 2.0 * np.sum(np.log(diag), axis=-1)
