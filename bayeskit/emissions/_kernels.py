"""Compiled row kernels of the emission families.

Each kernel is one pass over the rows of a C-ordered matrix, the work numpy
would spread over several full-size temporaries (or a sparse matrix): the
diagonal Gaussian's log-density and supervised moments, the full Gaussian's
log-density (a triangular whitening per state, blocked over rows), and the
categorical family's table gather and counts. They assume valid input, write into arrays
they are given (allocating inside a kernel doubles its compile time), and are
compiled once per machine (cached on disk, see ``bayeskit._jit``) for the one
argument type each is called with: float64 data, ``intp`` codes, offsets and
labels.

The kernels run on the calling thread. Measured on a shared two-core machine,
numba's parallel loops (OpenMP workers) were no faster than one thread on a
million rows, where these passes are bound by memory, and 30 to 1500 times
slower on 500 to 10,000 rows whenever another process held a core, as the
workers spin while they wait. Setting ``OMP_WAIT_POLICY`` would cure that for
the whole process, other libraries included, which a library must not do; and
a serial kernel compiles three to four times faster than a parallel one.

The full Gaussian's density is bound by arithmetic, not memory: on large
inputs :func:`split_rows` runs it on blocks of rows in a few Python threads
(the kernel releases the GIL), as many as numba's configured thread count
(``NUMBA_NUM_THREADS``). A thread that waits blocks instead of spinning, so a
busy machine costs it no more than one thread would.
"""

from __future__ import annotations

import functools
import itertools
import threading

import numba
import numpy as np

from .._jit import njit, numpy_first, run_numpy, run_small

__all__ = [
    "categorical_counts",
    "categorical_log_likelihood",
    "categorical_soft_counts",
    "diag_class_moments",
    "diag_log_likelihood",
    "full_log_likelihood",
    "split_rows",
]

_JIT = {"nogil": True, "error_model": "numpy"}

# Below this many cells (rows x features x states) a kernel runs its source in
# the interpreter (see bayeskit._jit.run_small): a millisecond or two there,
# where compiling it takes about a second in an environment whose disk cache
# is empty (a first fit).
_INTERPRET_CELLS = 1 << 13


def _small_work(size, numpy=None):
    """Decorate a compiled kernel: calls whose ``size(*args)`` is below
    ``_INTERPRET_CELLS`` run ``numpy(*args)`` (the same result by whole-array
    operations, as fast as the compiled kernel at that size) or, without one,
    the kernel interpreted; larger calls run ``numpy`` too while the kernel is
    not compiled (see ``bayeskit._jit.numpy_first``: a fresh environment's
    first fits compile nothing) and the work is below ``_NUMPY_FIRST_CELLS``.
    ``.compiled`` is the kernel."""

    def decorate(kernel):
        @functools.wraps(kernel.py_func)
        def call(*args):
            work = size(*args)
            if work < _INTERPRET_CELLS:
                if numpy is not None:
                    return numpy(*args)
                return run_small(kernel, *args)
            if numpy is not None and work < _NUMPY_FIRST_CELLS and numpy_first(kernel):
                return run_numpy(kernel, numpy, *args)
            return kernel(*args)

        call.compiled = kernel
        return call

    return decorate


# Above this many cells, the kernel is compiled even in a fresh environment:
# its numpy stand-in's temporaries grow with the cells.
_NUMPY_FIRST_CELLS = 1 << 24


# Rows summed in one block before the block's sum joins the total: sums of
# many terms then grow their rounding error with the number of blocks, not of
# rows.
_BLOCK = 4096


def _diag_log_likelihood_numpy(X, means, half_prec, log_norm, norm, out):
    """:func:`diag_log_likelihood` by numpy, for small ``X`` (the kernel's
    ``(n, n_states, d)`` deviations fit in a few cache lines' worth)."""
    r = X[:, None, :] - means
    with np.errstate(over="ignore"):  # a square beyond float64: -inf, as compiled
        sq = half_prec * r
        sq *= r
    quad = sq.sum(axis=2)
    np.subtract(norm, quad, out=out)
    total = quad.sum()  # NaN only where a row holds NaN (the terms are >= 0)
    if total != total:  # rows with missing values: sum over the observed features
        redo = np.isnan(quad)
        observed = ~np.isnan(X)[:, None, :]
        terms = np.where(observed, log_norm[None] - np.where(observed, sq, 0.0), 0.0)
        out[redo] = terms.sum(axis=2)[redo]


# Reassociation lets LLVM vectorise the sum over features (only the order of
# the additions changes; NaN and infinities keep their IEEE meaning).
@_small_work(lambda X, means, *_: X.size * len(means), numpy=_diag_log_likelihood_numpy)
@njit(**_JIT, fastmath={"reassoc", "contract"})
def diag_log_likelihood(X, means, half_prec, log_norm, norm, out):  # pragma: no cover
    """``out[i, k] = sum_j log_norm[k, j] - half_prec[k, j] (x_ij - mu_kj)^2``
    over the observed (non-NaN) features ``j`` of row ``i``.

    ``norm[k]`` is ``sum_j log_norm[k, j]``. The deviations are taken from the
    means themselves, so data far from the origin keeps its precision. A row
    without NaN takes no test in the inner loop; a NaN makes the row's sum NaN,
    and the row is then summed again over its observed features.
    """
    n, d = X.shape
    n_states = means.shape[0]
    for i in range(n):
        for k in range(n_states):
            quad = 0.0
            for j in range(d):
                r = X[i, j] - means[k, j]
                quad += half_prec[k, j] * r * r
            if quad == quad:
                out[i, k] = norm[k] - quad
            else:
                acc = 0.0
                for j in range(d):
                    x = X[i, j]
                    if x == x:
                        r = x - means[k, j]
                        acc += log_norm[k, j] - half_prec[k, j] * r * r
                out[i, k] = acc


def _diag_class_moments_numpy(X, weights, labels, ref, weight, mean, scatter, block):
    """:func:`diag_class_moments` by numpy: the same sums in the same order
    (``np.bincount`` adds its weights in row order, as the kernel's loop)."""
    n, d = X.shape
    n_states = weight.shape[0]
    observed = X == X
    first = observed.argmax(axis=0)
    ref[:] = np.where(observed.any(axis=0), X[first, np.arange(d)], 0.0)
    w = weights[np.arange(n), labels]

    def sums(values, start, stop):
        return np.stack(
            [
                np.bincount(labels[start:stop], values[:, j], minlength=n_states)
                for j in range(d)
            ],
            axis=1,
        )

    weight += sums(np.where(observed, w[:, None], 0.0), 0, n)
    for start in range(0, n, _BLOCK):
        stop = min(n, start + _BLOCK)
        deviation = w[start:stop, None] * (X[start:stop] - ref)
        scatter += sums(np.where(observed[start:stop], deviation, 0.0), start, stop)
    mean[...] = np.where(
        weight > 0, ref + scatter / np.where(weight > 0, weight, 1.0), mean
    )
    scatter[...] = 0.0
    for start in range(0, n, _BLOCK):
        stop = min(n, start + _BLOCK)
        r = X[start:stop] - mean[labels[start:stop]]
        squares = w[start:stop, None] * r * r
        scatter += sums(np.where(r == r, squares, 0.0), start, stop)


@_small_work(lambda X, *_: X.size, numpy=_diag_class_moments_numpy)
@njit(**_JIT)
def diag_class_moments(
    X, weights, labels, ref, weight, mean, scatter, block
):  # pragma: no cover - compiled
    """Weight, mean and centred sum of squares of every state and feature.

    Row ``i`` belongs to state ``labels[i]`` with weight
    ``weights[i, labels[i]]``; NaN (a missing value) is left out of its
    feature's three statistics. ``weight``, ``mean``, ``scatter`` and the
    scratch ``block``, all ``(n_states, d)``, come in as zeros and ``ref``,
    ``(d,)``, as anything. Two passes: the first sums the deviations from a
    reference value of every feature (its first observed value, stored in
    ``ref``), so that the mean of data far from the origin keeps its
    precision; the second sums the squared deviations from that mean. A state
    without data keeps mean 0.
    """
    n, d = X.shape
    n_states = weight.shape[0]
    for j in range(d):
        ref[j] = 0.0
        for i in range(n):
            if X[i, j] == X[i, j]:
                ref[j] = X[i, j]
                break
    # Pass 1: the weights, and the sums of deviations from ref (in scatter).
    for start in range(0, n, _BLOCK):
        for i in range(start, min(n, start + _BLOCK)):
            k = labels[i]
            w = weights[i, k]
            for j in range(d):
                x = X[i, j]
                observed = x == x
                weight[k, j] += w if observed else 0.0
                block[k, j] += w * (x - ref[j]) if observed else 0.0
        for k in range(n_states):
            for j in range(d):
                scatter[k, j] += block[k, j]
                block[k, j] = 0.0
    for k in range(n_states):
        for j in range(d):
            if weight[k, j] > 0:
                mean[k, j] = ref[j] + scatter[k, j] / weight[k, j]
            scatter[k, j] = 0.0
    # Pass 2: the squared deviations from the means.
    for start in range(0, n, _BLOCK):
        for i in range(start, min(n, start + _BLOCK)):
            k = labels[i]
            w = weights[i, k]
            for j in range(d):
                r = X[i, j] - mean[k, j]
                block[k, j] += w * r * r if r == r else 0.0
        for k in range(n_states):
            for j in range(d):
                scatter[k, j] += block[k, j]
                block[k, j] = 0.0


# Rows whitened together by the full Gaussian's kernel: each entry of a
# triangular factor is loaded once for this many rows (register blocking).
_ROWS = 8


@njit(**_JIT, fastmath={"reassoc", "contract"})
def full_log_likelihood(X, center, shift, PT, const, out):  # pragma: no cover
    """``out[i, k] = const[k] - ||(x_i - c) P_k - m_k||^2 / 2`` for every row.

    ``PT[k]`` is the transposed (lower triangular) precision factor of state
    ``k``, ``shift[k] = (mu_k - c) P_k`` and ``c = center``: the deviations
    are whitened in coordinates centred on the data, so data far from the
    origin keeps its precision. One triangular product per state and row,
    ``d (d + 1) / 2`` multiply-adds, computed for ``_ROWS`` rows at once (a
    factor entry loaded once serves them all); no temporary grows with ``n``.
    """
    n, d = X.shape
    n_states = PT.shape[0]
    z = np.zeros((_ROWS, d))
    acc = np.empty(_ROWS)
    for start in range(0, n, _ROWS):
        rows = min(_ROWS, n - start)
        for q in range(rows):
            for r in range(d):
                z[q, r] = X[start + q, r] - center[r]
        for q in range(rows, _ROWS):
            for r in range(d):
                z[q, r] = 0.0
        for k in range(n_states):
            a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
            for c in range(d):
                m = -shift[k, c]
                s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = m
                for r in range(c + 1):
                    p = PT[k, c, r]
                    s0 += p * z[0, r]
                    s1 += p * z[1, r]
                    s2 += p * z[2, r]
                    s3 += p * z[3, r]
                    s4 += p * z[4, r]
                    s5 += p * z[5, r]
                    s6 += p * z[6, r]
                    s7 += p * z[7, r]
                a0 += s0 * s0
                a1 += s1 * s1
                a2 += s2 * s2
                a3 += s3 * s3
                a4 += s4 * s4
                a5 += s5 * s5
                a6 += s6 * s6
                a7 += s7 * s7
            acc[0] = a0
            acc[1] = a1
            acc[2] = a2
            acc[3] = a3
            acc[4] = a4
            acc[5] = a5
            acc[6] = a6
            acc[7] = a7
            for q in range(rows):
                out[start + q, k] = const[k] - 0.5 * acc[q]


# Work (multiply-adds) below which a row-wise kernel runs on one thread, and
# the fewest rows a thread is given: a thread costs tens of microseconds.
_THREAD_WORK = 1 << 25
_THREAD_ROWS = 4096


def split_rows(kernel, X, args, out, work):
    """``kernel(X, *args, out)`` with the rows of ``X`` and ``out`` split into
    blocks run in parallel threads when ``work`` (its multiply-adds) is large
    (see the module); the first block runs on the calling thread."""
    n = X.shape[0]
    n_threads = min(numba.config.NUMBA_NUM_THREADS, n // _THREAD_ROWS)
    if work < _THREAD_WORK or n_threads < 2:
        kernel(X, *args, out)
        return
    bounds = np.linspace(0, n, n_threads + 1).astype(int)
    errors = []
    kernel(X[:0], *args, out[:0])  # compiled (or loaded) once, here

    def run(a, b):
        try:
            kernel(X[a:b], *args, out[a:b])
        except BaseException as error:  # pragma: no cover - re-raised below
            errors.append(error)

    threads = [
        threading.Thread(target=run, args=(a, b))
        for a, b in itertools.pairwise(bounds[1:])
    ]
    for thread in threads:
        thread.start()
    run(bounds[0], bounds[1])
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def _categorical_log_likelihood_numpy(codes, offsets, log_prob, out):
    """:func:`categorical_log_likelihood` by numpy, for small ``codes``."""
    observed = codes >= 0
    rows = np.where(observed, offsets[None, : codes.shape[1]] + codes, 0)
    out[...] = np.where(observed[:, :, None], log_prob[rows], 0.0).sum(axis=1)


@_small_work(
    lambda codes, offsets, log_prob, out: out.size * codes.shape[1],
    numpy=_categorical_log_likelihood_numpy,
)
@njit(**_JIT)
def categorical_log_likelihood(codes, offsets, log_prob, out):  # pragma: no cover
    """``out[i, k] = sum_j log_prob[offsets[j] + codes[i, j], k]`` over the
    observed features (``codes[i, j] >= 0``)."""
    n, d = codes.shape
    n_states = log_prob.shape[1]
    for i in range(n):
        for k in range(n_states):
            out[i, k] = 0.0
        for j in range(d):
            a = codes[i, j]
            if a >= 0:
                r = offsets[j] + a
                for k in range(n_states):
                    out[i, k] += log_prob[r, k]


def _categorical_counts_numpy(codes, offsets, weights, labels, counts):
    """:func:`categorical_counts` by numpy: each cell's additions in row
    order, as the kernel's loop (``np.bincount`` over the cells, row-major)."""
    n, d = codes.shape
    n_states = counts.shape[1]
    observed = codes >= 0
    cells = (offsets[None, :d] + codes) * n_states + labels[:, None]
    w = np.broadcast_to(weights[np.arange(n), labels][:, None], (n, d))
    counts += np.bincount(cells[observed], w[observed], minlength=counts.size).reshape(
        counts.shape
    )


def _categorical_soft_counts_numpy(codes, offsets, weights, counts):
    """:func:`categorical_soft_counts` by numpy (per state, as
    :func:`_categorical_counts_numpy`)."""
    n, d = codes.shape
    observed = codes >= 0
    rows = (offsets[None, :d] + codes)[observed]
    which = np.broadcast_to(np.arange(n)[:, None], (n, d))[observed]
    for k in range(counts.shape[1]):
        counts[:, k] += np.bincount(rows, weights[which, k], minlength=len(counts))


@_small_work(lambda codes, *_: codes.size, numpy=_categorical_counts_numpy)
@njit(**_JIT)
def categorical_counts(codes, offsets, weights, labels, counts):  # pragma: no cover
    """``counts[offsets[j] + codes[i, j], labels[i]] += weights[i, labels[i]]``
    over the observed cells: one addition per cell (a supervised fit)."""
    n, d = codes.shape
    for i in range(n):
        k = labels[i]
        w = weights[i, k]
        for j in range(d):
            a = codes[i, j]
            if a >= 0:
                counts[offsets[j] + a, k] += w


@_small_work(
    lambda codes, offsets, weights, counts: codes.size * weights.shape[1],
    numpy=_categorical_soft_counts_numpy,
)
@njit(**_JIT)
def categorical_soft_counts(codes, offsets, weights, counts):  # pragma: no cover
    """``counts[offsets[j] + codes[i, j], :] += weights[i, :]`` over the
    observed cells (weights spread over the states: posteriors)."""
    n, d = codes.shape
    n_states = weights.shape[1]
    for i in range(n):
        for j in range(d):
            a = codes[i, j]
            if a >= 0:
                r = offsets[j] + a
                for k in range(n_states):
                    counts[r, k] += weights[i, k]
