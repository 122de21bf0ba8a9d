"""Turning columns of categories (any labels, missing values) into integer codes.

Columns of any labels go through pandas, one column at a time. A matrix of
integers, the most common coded input, has a faster path over the whole
matrix: its categories from one pass for the range of every column and one
pass marking the values seen (:func:`integer_categories`), and, when every
feature's categories are ``0 .. t_j - 1``, the matrix itself as the codes once
a pass has found no value out of range (:func:`count_out_of_range`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._jit import njit

__all__ = [
    "categorical_input_tags",
    "count_out_of_range",
    "encode_column",
    "fit_categories",
    "integer_categories",
    "is_integer_matrix",
    "is_missing",
]


def is_missing(col: np.ndarray) -> np.ndarray:
    """NaN, None and pd.NA, as a boolean mask."""
    if col.dtype.kind in "iub":
        return np.zeros(col.shape, dtype=bool)
    return np.asarray(pd.isna(col), dtype=bool)


def fit_categories(col: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """Sorted distinct observed values of a column (first-seen order if unsortable)."""
    values = pd.unique(col[~missing]) if missing.any() else pd.unique(col)
    values = np.asarray(values)
    try:
        return np.sort(values, kind="stable")
    except TypeError:
        return values


def encode_column(
    col: np.ndarray, categories: np.ndarray, missing: np.ndarray
) -> np.ndarray:
    """Codes ``0 .. len(categories) - 1``; ``-1`` for missing, ``-2`` for unknown."""
    k = len(categories)
    if col.dtype.kind in "iu" and categories.dtype.kind in "iu":
        if np.array_equal(categories, np.arange(k)):
            codes = col.astype(np.intp, copy=True)
            if codes.size and (codes.min() < 0 or codes.max() >= k):
                codes[(codes < 0) | (codes >= k)] = -2
            return codes
        if np.all(categories[:-1] < categories[1:]):  # sorted: binary search
            pos = np.clip(np.searchsorted(categories, col), 0, k - 1)
            return np.where(categories[pos] == col, pos, -2).astype(np.intp)
    codes = pd.Index(categories).get_indexer(col).astype(np.intp)
    codes[codes < 0] = -2
    codes[missing] = -1
    return codes


def is_integer_matrix(X) -> bool:
    """Whether ``X`` is a 2-d ndarray of integers that ``intp`` holds exactly."""
    return (
        isinstance(X, np.ndarray)
        and X.ndim == 2
        and (X.dtype.kind == "i" or (X.dtype.kind == "u" and X.dtype.itemsize < 8))
    )


def integer_categories(X: np.ndarray) -> list | None:
    """Sorted distinct values of every column of an integer matrix.

    None when ``X`` has no rows, or when the columns' ranges together span more
    values than ``X`` has cells (plus 65536): marking seen values would then
    cost more than sorting each column.
    """
    values = np.ascontiguousarray(X, dtype=np.intp)
    n, d = values.shape
    if n == 0:
        return None
    low = np.empty(d, dtype=np.intp)
    high = np.empty(d, dtype=np.intp)
    if values.size < _NUMPY_SIZE:
        values.min(axis=0, out=low)
        values.max(axis=0, out=high)
    else:
        _column_ranges(values, low, high)
    spans = [int(h) - int(lo) + 1 for lo, h in zip(low, high)]  # no overflow
    if sum(spans) > values.size + (1 << 16):
        return None
    offsets = np.zeros(d + 1, dtype=np.intp)
    np.cumsum(spans, out=offsets[1:])
    seen = np.zeros(offsets[-1], dtype=np.bool_)
    if values.size < _NUMPY_SIZE:
        seen[values + (offsets[:-1] - low)] = True
    else:
        _mark_values(values, offsets[:-1] - low, seen)
    return [
        (low[j] + np.flatnonzero(seen[offsets[j] : offsets[j + 1]])).astype(X.dtype)
        for j in range(d)
    ]


def count_out_of_range(codes: np.ndarray, n_categories: np.ndarray) -> int:
    """Number of entries of column ``j`` of ``codes`` outside ``0 .. t_j - 1``.

    ``codes`` is a C-ordered ``intp`` matrix.
    """
    n_categories = np.asarray(n_categories, dtype=np.intp)
    if codes.size < _NUMPY_SIZE:
        return int(np.count_nonzero((codes < 0) | (codes >= n_categories)))
    return int(_count_out_of_range(codes, n_categories))


# Below this many cells numpy does the passes below: the compiled ones save
# microseconds there, and compiling them takes a second in an environment whose
# disk cache is empty (a first fit).
_NUMPY_SIZE = 1 << 14


# Serial, as the emission kernels are (see bayeskit.emissions._kernels).
_JIT = {"nogil": True}


@njit(**_JIT)
def _column_ranges(X, low, high):  # pragma: no cover - compiled
    """Minimum and maximum of every column, one pass over the rows."""
    n, d = X.shape
    for j in range(d):
        low[j] = X[0, j]
        high[j] = X[0, j]
    for i in range(1, n):
        for j in range(d):
            v = X[i, j]
            low[j] = min(low[j], v)
            high[j] = max(high[j], v)


@njit(**_JIT)
def _mark_values(X, base, seen):  # pragma: no cover - compiled
    """``seen[base[j] + x] = True`` for every value ``x`` of column ``j``."""
    n, d = X.shape
    for i in range(n):
        for j in range(d):
            seen[base[j] + X[i, j]] = True


@njit(**_JIT)
def _count_out_of_range(X, n_categories):  # pragma: no cover - compiled
    n, d = X.shape
    bad = 0
    for i in range(n):
        for j in range(d):
            v = X[i, j]
            bad += (v < 0) | (v >= n_categories[j])
    return bad


def categorical_input_tags(tags):
    """Declare what every categorical estimator takes: category labels of any
    type (strings included), with missing values."""
    tags.input_tags.categorical = True
    tags.input_tags.string = True
    tags.input_tags.allow_nan = True
    return tags
