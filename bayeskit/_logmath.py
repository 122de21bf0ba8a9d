"""Log-space arithmetic shared by every layer of bayeskit.

All functions are pure: arrays in, arrays out. ``-inf`` (a probability of
exactly zero) is a legal value everywhere and never turns into NaN: the
log-sum-exp of a row whose every entry is ``-inf`` is ``-inf``.

:func:`logsumexp` and :func:`log_normalize` reduce over the last axis of a
C-ordered matrix (other axes are moved there first). numpy reduces a narrow
last axis (a million rows of a few classes) one short row at a time, several
times slower than the arithmetic, so the row maxima and shifts, the row sums
and the subtractions are small compiled passes on the calling thread; the
``exp`` and ``log`` between them stay in numpy, whose vectorised functions are
several times faster than the scalar ones a compiled loop would call.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import njit, numpy_first, run_numpy

try:  # numpy >= 2.0
    from numpy.lib.array_utils import normalize_axis_tuple
except ImportError:  # pragma: no cover - numpy 1.x
    from numpy.core.numeric import normalize_axis_tuple

__all__ = [
    "has_nan",
    "log_matmul",
    "log_normalize",
    "logdet_chol",
    "logsumexp",
    "logsumexp_rows",
    "row_plogp",
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

    ``axis`` is an int, a tuple of ints or None (all axes). Unlike a naive
    shift by the maximum, a slice of only ``-inf`` gives ``-inf`` (not NaN), a
    slice holding ``+inf`` gives ``+inf`` and a slice holding NaN gives NaN.
    """
    return _reduce_rows(a, axis, keepdims)[1]


def log_normalize(a: np.ndarray, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """Normalise log-weights along ``axis``.

    Returns ``(a - lse, lse)`` where ``lse = logsumexp(a, axis)`` keeps its
    axis. A slice whose every entry is ``-inf`` stays ``-inf`` (it has no
    mass to normalise) and its ``lse`` is ``-inf``; the caller decides what
    such a slice means. A slice whose ``lse`` is not finite (``+inf``: it holds
    ``+inf``; NaN: it holds NaN) is returned unchanged.
    """
    return _reduce_rows(a, axis, keepdims=True)


def _reduce_rows(a, axis, keepdims: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(a - lse, lse)`` over ``axis``, computed on a ``(rows, reduced)`` matrix.

    The reduced axes are moved last and flattened, so every call runs the same
    compiled kernels on one C-ordered float64 matrix.
    """
    a = np.asarray(a, dtype=float)
    if a.ndim == 2 and axis in (-1, 1) and a.flags.c_contiguous:
        out, lse = _normalize_rows(a)
        return out, lse[:, None] if keepdims else lse
    axes = range(a.ndim) if axis is None else normalize_axis_tuple(axis, a.ndim)
    kept = [ax for ax in range(a.ndim) if ax not in axes]
    order = kept + sorted(axes)
    moved = a.transpose(order)
    kept_shape = moved.shape[: len(kept)]
    n_rows = math.prod(kept_shape)
    rows = np.ascontiguousarray(moved).reshape(
        n_rows, math.prod(moved.shape[len(kept) :])
    )
    out, lse = _normalize_rows(rows)
    inverse = [0] * a.ndim
    for position, ax in enumerate(order):
        inverse[ax] = position
    out = out.reshape(moved.shape).transpose(inverse)
    if keepdims:
        return out, lse.reshape(
            [1 if ax in axes else n for ax, n in enumerate(a.shape)]
        )
    return out, lse.reshape(kept_shape)


def _normalize_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(a - lse, lse)`` of every row of a C-ordered float64 matrix.

    Three compiled passes (shift by the row maximum; row sums; subtract) with
    numpy's vectorised ``exp`` and ``log`` between them.
    """
    if a.size < _NUMPY_SIZE:
        return _normalize_rows_numpy(a)
    if numpy_first(_shift_rows, _row_sums, _subtract_rows):  # a fresh environment
        return run_numpy(_shift_rows, _normalize_rows_numpy, a)
    out = np.empty_like(a)
    shift = np.empty(a.shape[0])
    _shift_rows(a, out, shift)
    total = np.empty(a.shape[0])
    _row_sums(np.exp(out), total)
    log_total = safe_log(total)
    lse = log_total + shift
    _subtract_rows(a, out, log_total, lse)
    return out, lse


# Below this many entries the rows are normalised by numpy alone: the
# compiled passes save microseconds there, and compiling them takes a second or
# more in an environment whose disk cache is empty (a first fit). Above it,
# numpy too while the passes are not compiled (``bayeskit._jit.numpy_first``).
_NUMPY_SIZE = 1 << 14


def _normalize_rows_numpy(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_normalize_rows` in numpy: the same shifts, sums and results."""
    top = a.max(axis=1, initial=-np.inf)  # NaN where the row holds NaN
    if np.isfinite(top).all():
        # Every maximum finite (a small EM fit's every E-step): then every
        # shifted entry is <= 0, each row's sum of exponentials >= 1 and its
        # log finite, and nothing can warn. The same operations as below,
        # without the masks and the error state (a quarter of the time at
        # iris size).
        out = a - top[:, None]
        log_total = np.log(np.exp(out).sum(axis=1))
        out -= log_total[:, None]
        return out, log_total + top
    shift = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        out = a - shift[:, None]
        log_total = np.log(np.exp(out).sum(axis=1))  # log(0) = -inf
        lse = log_total + shift
        finite = np.abs(lse) < np.inf
        if finite.all():  # every row has mass (small fits call this per iteration)
            out -= log_total[:, None]
        else:
            out = np.where(finite[:, None], out - log_total[:, None], a)
    return out, lse


_JIT = {"nogil": True, "error_model": "numpy"}


@njit(**_JIT)
def _shift_rows(a, shifted, shift):  # pragma: no cover - compiled
    """``shift[i]`` the maximum of row ``i`` and ``shifted = a - shift``.

    A row whose maximum is not finite (only ``-inf``, or holding ``+inf``) or
    that holds NaN gets ``shift = 0``: such a row is left as it is.
    """
    n, m = a.shape
    for i in range(n):
        top = -np.inf
        check = 0.0
        for k in range(m):
            x = a[i, k]
            top = max(top, x)
            check += x - x  # NaN once the row holds NaN or an infinity
        if check != 0.0:
            if not abs(top) < np.inf:
                top = 0.0
            for k in range(m):
                if a[i, k] != a[i, k]:
                    top = 0.0
        shift[i] = top
        for k in range(m):
            shifted[i, k] = a[i, k] - top


@njit(**_JIT)
def _row_sums(e, total):  # pragma: no cover - compiled
    """``total[i] = sum(e[i])``."""
    n, m = e.shape
    for i in range(n):
        s = 0.0
        for k in range(m):
            s += e[i, k]
        total[i] = s


@njit(**_JIT)
def _subtract_rows(a, shifted, log_total, lse):  # pragma: no cover - compiled
    """``shifted -= log_total`` per row; a row whose ``lse`` is not finite (no
    mass, ``+inf`` or NaN) is copied from ``a`` unchanged."""
    n, m = a.shape
    for i in range(n):
        if abs(lse[i]) < np.inf:  # finite (np.isfinite compiles slower)
            for k in range(m):
                shifted[i, k] -= log_total[i]
        else:
            for k in range(m):
                shifted[i, k] = a[i, k]


#: Below it, a shifted product of :func:`log_matmul` may have lost terms that
#: underflowed (each below ``exp(-745)`` of its shift): recomputed exactly.
_LOST_BELOW = 1e-280


def log_matmul(log_a: np.ndarray, log_b: np.ndarray) -> np.ndarray:
    """``log(exp(log_a) @ exp(log_b))`` for log-space matrices.

    The rows of ``log_a`` and the columns of ``log_b`` are shifted by their
    maxima before exponentiating, so entries far below zero (long products of
    small probabilities) keep their precision. Batched over leading axes as
    :func:`numpy.matmul` is.

    Where the shifted product is tiny, the row's or column's largest terms met
    zeros of the other factor and the rest may have underflowed (a row of
    ``[1257, -1321]`` against a column ``[-inf, 0]`` is ``-1321``, not
    ``-inf``): those entries are summed again term by term in log space.
    """
    sa = _finite_max(log_a, axis=-1)
    sb = _finite_max(log_b, axis=-2)
    with np.errstate(divide="ignore"):
        prod = np.exp(log_a - sa) @ np.exp(log_b - sb)
        out = np.log(prod) + sa + sb
    lost = prod < _LOST_BELOW
    if lost.any():
        lead = prod.shape[:-2]
        a = np.broadcast_to(log_a, lead + np.shape(log_a)[-2:])
        b_t = np.swapaxes(np.broadcast_to(log_b, lead + np.shape(log_b)[-2:]), -1, -2)
        *at, i, j = np.nonzero(lost)
        terms = a[(*at, i)] + b_t[(*at, j)]  # one row of k terms per entry
        out[lost] = logsumexp(terms, axis=-1)
    return out


def logdet_chol(chol: np.ndarray) -> np.ndarray:
    """Log-determinant of ``L L^T`` from its (batched) triangular factor ``L``."""
    diag = np.diagonal(chol, axis1=-2, axis2=-1)
    return 2.0 * np.sum(np.log(diag), axis=-1)


def has_nan(X: np.ndarray) -> bool:
    """Whether the float array ``X`` holds a NaN, in one read and no mask.

    A NaN makes the sum NaN; a sum of values without NaN is a number or, when
    it overflows, an infinity, so only a sum that is not finite needs the
    element-wise test (which also settles infinities in ``X`` itself).
    """
    X = np.asarray(X)
    if X.dtype.kind not in "fc" or X.size == 0:
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(X.sum()):
            return False
    return bool(np.isnan(X).any())


#: Rows taken at once by :func:`logsumexp_rows` and :func:`row_plogp`, whose
#: temporaries then do not grow with the data.
BLOCK_ROWS = 1 << 14

#: Widest rows whose sums the compiled passes add in numpy's order (the
#: pairwise summation's block: wider rows numpy splits in halves).
_PAIRWISE_BLOCK = 128


def logsumexp_rows(a: np.ndarray) -> np.ndarray:
    """scipy's ``logsumexp(a, axis=1)`` of a 2-D array, bit for bit, a block
    of rows at a time (each row's value is the one of the whole array at once).

    scipy's arithmetic: the row's maximum ``M`` and its ``m`` occurrences set
    apart, ``s`` the sum of ``exp(a - M)`` over the other entries (in numpy's
    order), and ``log1p(s / m) + log(m) + M``; a row whose result is not
    finite (only ``-inf``, holding ``+inf`` or NaN) is ``log(sum(exp(a)))``
    (``-inf``, ``+inf``, NaN). Without scipy's array-API layers, and on large
    arrays with two compiled passes (maxima and shifts; sums) around numpy's
    ``exp`` on one block-sized buffer.
    """
    a = np.ascontiguousarray(a, dtype=float)
    n, width = a.shape
    if width == 0:
        return np.full(n, -np.inf)
    fast = a.size >= _NUMPY_SIZE and width <= _PAIRWISE_BLOCK
    if not fast or numpy_first(_lse_shift_rows, _pairwise_row_sums):
        lse = _lse_rows_numpy if not fast else _lse_rows_numpy_counted
        return np.concatenate(
            [lse(a[i : i + BLOCK_ROWS]) for i in range(0, n, BLOCK_ROWS)] or [[]]
        )
    out = np.empty(n)
    shifted = np.empty((min(n, BLOCK_ROWS), width))
    count, total = np.empty(len(shifted)), np.empty(len(shifted))
    for i in range(0, n, BLOCK_ROWS):
        block = a[i : i + BLOCK_ROWS]
        m = len(block)
        _lse_shift_rows(block, shifted[:m], out[i : i + m], count[:m])
        np.exp(shifted[:m], out=shifted[:m])
        _pairwise_row_sums(shifted[:m], total[:m])
        out[i : i + m] = _lse_finish(block, total[:m], count[:m], out[i : i + m])
    return out


def _lse_finish(a, s, count, top):
    """scipy's last steps: ``log1p(s / m) + log(m) + M``, where finite."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        np.divide(s, count, out=s, where=s != 0)
        out = np.log1p(s)
        out += np.log(count)
        out += top
        bad = ~np.isfinite(out)
        if bad.any():
            out[bad] = np.log(np.exp(a[bad]).sum(axis=1))
    return out


def _lse_rows_numpy(a: np.ndarray) -> np.ndarray:
    """:func:`logsumexp_rows` of one block by numpy alone (scipy's steps)."""
    top = a.max(axis=1, keepdims=True)  # NaN where the row holds NaN
    mask = a == top
    count = mask.sum(axis=1, dtype=float)
    with np.errstate(invalid="ignore"):
        s = np.exp(np.where(mask, -np.inf, a) - top).sum(axis=1)
    return _lse_finish(a, s, count, top[:, 0])


def _lse_rows_numpy_counted(a: np.ndarray) -> np.ndarray:
    """:func:`_lse_rows_numpy` standing in for the compiled passes, its time
    counted against their budget."""
    return run_numpy(_lse_shift_rows, _lse_rows_numpy, a)


@njit(**_JIT)
def _lse_shift_rows(a, shifted, top, count):  # pragma: no cover - compiled
    """Row ``i``'s maximum ``top[i]`` (NaN if it holds NaN, as numpy's), the
    count of its occurrences, and ``shifted = a - top`` with ``-inf`` at
    them. A row whose maximum is not finite gets NaN shifts and count 0: its
    result is then not finite and taken from ``log(sum(exp(a)))``."""
    n, m = a.shape
    for i in range(n):
        t = a[i, 0]
        for k in range(m):
            x = a[i, k]
            if x != x:
                t = x
                break
            if x > t:
                t = x
        top[i] = t
        if not abs(t) < np.inf:  # +-inf or NaN
            count[i] = 0.0
            for k in range(m):
                shifted[i, k] = np.nan
            continue
        c = 0.0
        for k in range(m):
            if a[i, k] == t:
                c += 1.0
                shifted[i, k] = -np.inf
            else:
                shifted[i, k] = a[i, k] - t
        count[i] = c


@njit(**_JIT)
def _pairwise_row(x, i, m):  # pragma: no cover - compiled
    """``x[i, :m].sum()`` added in numpy's order for ``m <= 128`` (its
    pairwise summation: eight running sums, then the rest; numpy's reduction
    starts from 0)."""
    if m < 8:
        s = 0.0
        for k in range(m):
            s += x[i, k]
        return 0.0 + s
    r0, r1, r2, r3 = x[i, 0], x[i, 1], x[i, 2], x[i, 3]
    r4, r5, r6, r7 = x[i, 4], x[i, 5], x[i, 6], x[i, 7]
    k = 8
    stop = m - m % 8
    while k < stop:
        r0 += x[i, k]
        r1 += x[i, k + 1]
        r2 += x[i, k + 2]
        r3 += x[i, k + 3]
        r4 += x[i, k + 4]
        r5 += x[i, k + 5]
        r6 += x[i, k + 6]
        r7 += x[i, k + 7]
        k += 8
    s = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while k < m:
        s += x[i, k]
        k += 1
    return 0.0 + s


@njit(**_JIT)
def _pairwise_row_sums(e, total):  # pragma: no cover - compiled
    """``total[i] = e[i].sum()``, in numpy's order."""
    n, m = e.shape
    for i in range(n):
        total[i] = _pairwise_row(e, i, m)


def row_plogp(p: np.ndarray, log_p: np.ndarray) -> np.ndarray:
    """``sum_k p_k log p_k`` of every row (``0 log 0 = 0``), as numpy's
    ``np.where(p > 0, p * log_p, 0).sum(axis=1)`` bit for bit: one compiled
    pass (no temporaries), or numpy a block of rows at a time."""
    p = np.ascontiguousarray(p, dtype=float)
    log_p = np.ascontiguousarray(log_p, dtype=float)
    out = np.empty(len(p))
    fast = p.size >= _NUMPY_SIZE and p.shape[1] <= _PAIRWISE_BLOCK
    if not fast:
        _row_plogp_numpy(p, log_p, out)
    elif numpy_first(_row_plogp):  # a fresh environment
        run_numpy(_row_plogp, _row_plogp_numpy, p, log_p, out)
    else:
        _row_plogp(p, log_p, out, np.empty((1, p.shape[1])))
    return out


def _row_plogp_numpy(p, log_p, out):
    """:func:`_row_plogp` by numpy, a block of rows at a time."""
    with np.errstate(invalid="ignore"):
        for a in range(0, len(p), BLOCK_ROWS):
            r, log_r = p[a : a + BLOCK_ROWS], log_p[a : a + BLOCK_ROWS]
            out[a : a + len(r)] = np.where(r > 0, r * log_r, 0.0).sum(axis=1)


@njit(**_JIT)
def _row_plogp(p, log_p, out, terms):  # pragma: no cover - compiled
    """``out[i]`` the sum, in numpy's order, of ``p[i, k] log_p[i, k]`` over
    the entries with ``p > 0`` (0 for the others); ``terms`` a (1, m) buffer."""
    n, m = p.shape
    for i in range(n):
        for k in range(m):
            terms[0, k] = p[i, k] * log_p[i, k] if p[i, k] > 0.0 else 0.0
        out[i] = _pairwise_row(terms, 0, m)
