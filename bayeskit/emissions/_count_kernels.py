"""Compiled kernels of the count families (multinomial, Bernoulli) on dense and
sparse matrices.

A matrix of counts comes as a :class:`CountMatrix`: a C-ordered array, or the
three arrays of a CSR or CSC matrix (sorted indices); every value is read as
a float64, exactly.
Two passes cover what the families need, in every layout:

- the class sums ``out[c, j] += w_i x_ij`` of a supervised fit, one addition
  per stored value (a product with one-hot weights, ``Y^T X``, would spend
  ``n_classes`` multiply-adds on each);
- the scores ``out[i, k] = sum_j x_ij W[j, k]``, the sparse-dense product
  that gives every row its class log-likelihoods (the class posterior is the
  graph core's, as for every classifier).

Values that are zero are skipped (a zero stored in a sparse matrix
too), and within every sum the terms are added in the order of the rows (class
sums) or of the features (scores) whatever the layout: a dense matrix and
the same matrix in CSR or CSC give bit-for-bit the same statistics and
scores, and a zero count times ``-inf`` (a word of probability zero) never
makes a NaN. With ``threshold`` not NaN a value counts as 1 when above it and
0 otherwise (the Bernoulli family's binarisation), without a copy of the
matrix. Small inputs run the kernels' source in the interpreter
(``bayeskit._jit.run_small``), the same arithmetic without compiling.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp

from .._jit import njit, run_small

__all__ = ["CountMatrix", "class_sums", "scores"]

_JIT = {"nogil": True, "error_model": "numpy"}

# Below this many multiply-adds a kernel runs interpreted (see the module).
_INTERPRET_WORK = 1 << 16


# Value types the kernels read as they are (each value is converted to float64
# as it is read, exactly); any other is converted to float64 first.
_KERNEL_DTYPES = (np.float64, np.float32, np.int64, np.int32)


def _dtype(X) -> type:
    return X.dtype.type if X.dtype.type in _KERNEL_DTYPES else np.float64


@dataclass(frozen=True)
class CountMatrix:
    """A validated matrix of counts in the layout the kernels read.

    ``layout`` is ``"dense"`` (``data`` the C-ordered array), or ``"csr"`` /
    ``"csc"`` (``data``, ``indices``, ``indptr`` of the sparse matrix, sorted
    indices). Values of float64, float32, int64 or int32 are read as they are
    (the integer counts of ``CountVectorizer`` are not copied), others as
    float64; the index arrays keep scipy's own integer type.
    """

    layout: str
    shape: tuple
    data: np.ndarray
    indices: np.ndarray | None = None
    indptr: np.ndarray | None = None

    @classmethod
    def of(cls, X) -> CountMatrix:
        """``X`` (an ndarray or a scipy.sparse matrix or array) as the kernels
        read it; copied only where its dtype or index order must change (the
        caller's matrix is never modified)."""
        if not sp.issparse(X):
            return cls("dense", X.shape, np.ascontiguousarray(X, dtype=_dtype(X)))
        if X.format not in ("csr", "csc"):
            X = X.tocsr()
        if not X.has_sorted_indices:
            X = X.sorted_indices()
        return cls(
            X.format,
            X.shape,
            np.asarray(X.data, dtype=_dtype(X.data)),
            X.indices,  # int32 or int64, as scipy chose: no copy
            X.indptr,
        )

    def min(self) -> float:
        """The smallest value (a sparse matrix's implicit zeros included)."""
        low = float(self.data.min()) if self.data.size else 0.0
        if self.layout != "dense" and self.data.size < self.shape[0] * self.shape[1]:
            low = min(low, 0.0)
        return low


# -- class sums -----------------------------------------------------------------------
@njit(**_JIT)
def _dense_class_sums(X, labels, w, threshold, out):  # pragma: no cover - compiled
    binarize = threshold == threshold
    n, d = X.shape
    for i in range(n):
        c = labels[i]
        wi = w[i]
        for j in range(d):
            x = float(X[i, j])
            if binarize:
                x = 1.0 if x > threshold else 0.0
            if x != 0.0:
                out[c, j] += wi * x


@njit(**_JIT)
def _csr_class_sums(
    data, indices, indptr, labels, w, threshold, out
):  # pragma: no cover - compiled
    binarize = threshold == threshold
    for i in range(indptr.shape[0] - 1):
        c = labels[i]
        wi = w[i]
        for q in range(indptr[i], indptr[i + 1]):
            x = float(data[q])
            if binarize:
                x = 1.0 if x > threshold else 0.0
            if x != 0.0:
                out[c, indices[q]] += wi * x


@njit(**_JIT)
def _csc_class_sums(
    data, indices, indptr, labels, w, threshold, out
):  # pragma: no cover - compiled
    binarize = threshold == threshold
    for j in range(indptr.shape[0] - 1):
        for q in range(indptr[j], indptr[j + 1]):
            x = float(data[q])
            if binarize:
                x = 1.0 if x > threshold else 0.0
            if x != 0.0:
                i = indices[q]
                out[labels[i], j] += w[i] * x


def _run(kernel, work, *args):
    if work < _INTERPRET_WORK:
        run_small(kernel, *args)
    else:
        kernel(*args)


def class_sums(
    X: CountMatrix, labels: np.ndarray, w: np.ndarray, n_classes: int, threshold=np.nan
) -> np.ndarray:
    """``out[c, j] = sum_{i: labels_i = c} w_i x_ij``, shape ``(n_classes, d)``.

    ``threshold`` not NaN: ``x_ij`` is 1 when above it, else 0.
    """
    out = np.zeros((n_classes, X.shape[1]))
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    w = np.ascontiguousarray(w, dtype=np.float64)
    threshold = float(threshold)
    if X.layout == "dense":
        _run(_dense_class_sums, X.data.size, X.data, labels, w, threshold, out)
    else:
        kernel = _csr_class_sums if X.layout == "csr" else _csc_class_sums
        _run(
            kernel, X.data.size, X.data, X.indices, X.indptr, labels, w, threshold, out
        )
    return out


# -- scores ---------------------------------------------------------------------------
@njit(**_JIT)
def _dense_scores(X, W, threshold, out):  # pragma: no cover - compiled
    binarize = threshold == threshold
    n, d = X.shape
    k = W.shape[1]
    for i in range(n):
        for j in range(d):
            x = float(X[i, j])
            if binarize:
                x = 1.0 if x > threshold else 0.0
            if x != 0.0:
                for c in range(k):
                    out[i, c] += x * W[j, c]


@njit(**_JIT)
def _csr_scores(data, indices, indptr, W, threshold, out):  # pragma: no cover
    binarize = threshold == threshold
    k = W.shape[1]
    for i in range(indptr.shape[0] - 1):
        for q in range(indptr[i], indptr[i + 1]):
            x = float(data[q])
            if binarize:
                x = 1.0 if x > threshold else 0.0
            if x != 0.0:
                j = indices[q]
                for c in range(k):
                    out[i, c] += x * W[j, c]


@njit(**_JIT)
def _csc_scores(data, indices, indptr, W, threshold, out):  # pragma: no cover
    binarize = threshold == threshold
    k = W.shape[1]
    for j in range(indptr.shape[0] - 1):
        for q in range(indptr[j], indptr[j + 1]):
            x = float(data[q])
            if binarize:
                x = 1.0 if x > threshold else 0.0
            if x != 0.0:
                i = indices[q]
                for c in range(k):
                    out[i, c] += x * W[j, c]


def scores(X: CountMatrix, W: np.ndarray, threshold=np.nan) -> np.ndarray:
    """``out[i, k] = sum_j x_ij W[j, k]`` over the non-zero ``x_ij``,
    shape ``(n, k)`` (``W`` of shape ``(d, k)``)."""
    W = np.ascontiguousarray(W, dtype=np.float64)
    out = np.zeros((X.shape[0], W.shape[1]))
    threshold = float(threshold)
    work = X.data.size * W.shape[1]
    if X.layout == "dense":
        blocks = _blocks(X.shape[0], work)
        _threaded(
            [(_dense_scores, X.data[a:b], W, threshold, out[a:b]) for a, b in blocks],
            work,
        )
    elif X.layout == "csr":
        blocks = _blocks(X.shape[0], work)
        _threaded(
            [
                (
                    _csr_scores,
                    X.data,
                    X.indices,
                    X.indptr[a : b + 1],
                    W,
                    threshold,
                    out[a:b],
                )
                for a, b in blocks
            ],
            work,
        )
    else:
        _run(_csc_scores, work, X.data, X.indices, X.indptr, W, threshold, out)
    return out


# Scores of at least this many multiply-adds are split into blocks of rows run
# in parallel threads (the kernels release the GIL), as many as numba's
# configured thread count; each row's sum is the same whatever the split.
_THREAD_WORK = 1 << 24


def _blocks(n: int, work: int) -> list:
    n_threads = 1 if work < _THREAD_WORK else min(numba.config.NUMBA_NUM_THREADS, n)
    bounds = np.linspace(0, n, max(n_threads, 1) + 1).astype(int)
    return list(itertools.pairwise(bounds))


def _empty(args: tuple) -> tuple:
    """The arguments of a block of no rows (the last is the output)."""
    *inputs, out = args
    if inputs[0].ndim == 2:  # dense rows
        return (inputs[0][:0], *inputs[1:], out[:0])
    data, indices, indptr, *rest = inputs
    return (data, indices, indptr[:1], *rest, out[:0])


def _threaded(calls: list, work: int) -> None:
    """Run ``kernel(*args)`` for every ``(kernel, *args)`` of ``calls``, the
    first on this thread and the others in threads of their own."""
    if len(calls) == 1:
        _run(calls[0][0], work, *calls[0][1:])
        return
    # compiled (or loaded from the disk cache) once, here, before the threads
    calls[0][0](*_empty(calls[0][1:]))
    errors = []

    def run(call):
        try:
            call[0](*call[1:])
        except BaseException as error:  # pragma: no cover - re-raised below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(call,)) for call in calls[1:]]
    for thread in threads:
        thread.start()
    run(calls[0])
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
