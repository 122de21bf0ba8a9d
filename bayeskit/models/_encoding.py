"""Turning columns of categories (any labels, missing values) into integer codes."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["encode_column", "fit_categories", "is_missing"]


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
            codes[(codes < 0) | (codes >= k)] = -2
            return codes
        pos = np.clip(np.searchsorted(categories, col), 0, k - 1)
        return np.where(categories[pos] == col, pos, -2).astype(np.intp)
    codes = pd.Index(categories).get_indexer(col).astype(np.intp)
    codes[codes < 0] = -2
    codes[missing] = -1
    return codes
