"""The only import point for scikit-learn's validation helpers.

Several of these are private in scikit-learn; importing them here, once, means
one file absorbs scikit-learn's changes.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    _num_samples,
    check_is_fitted,
    validate_data,
)

__all__ = [
    "HasMethods",
    "Interval",
    "StrOptions",
    "_fit_context",
    "_num_samples",
    "check_classification_targets",
    "check_covariance_prior",
    "check_is_fitted",
    "check_probability_vector",
    "check_sample_weight",
    "validate_data",
]


def check_sample_weight(sample_weight, X, allow_all_zero=False) -> np.ndarray:
    """Non-negative float64 weights of shape (n_samples,), ones when None.

    ``allow_all_zero``: weights that are all zero are valid (one chunk of
    many, whose rows all count for nothing).
    """
    if allow_all_zero and sample_weight is not None:
        w = np.asarray(sample_weight)
        if w.ndim == 1 and w.shape[0] == _num_samples(X) and w.size and not w.any():
            return np.zeros(w.shape[0])
    return _check_sample_weight(
        sample_weight, X, dtype=np.float64, ensure_non_negative=True
    )


def check_probability_vector(p, name: str, size: int | None = None) -> np.ndarray:
    """A 1-d array of non-negative numbers summing to one, or a clear ValueError."""
    arr = np.asarray(p, dtype=float)
    if arr.ndim != 1 or (size is not None and arr.shape[0] != size):
        expected = f"shape ({size},)" if size is not None else "one dimension"
        raise ValueError(f"{name} must have {expected}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or (arr < 0).any():
        raise ValueError(f"{name} must be finite and non-negative, got {arr}")
    # To the precision of the numbers given: float32 weights sum to one only
    # to about 1e-7.
    given = np.asarray(p).dtype
    precision = np.finfo(given).eps if given.kind == "f" else 0.0
    if not np.isclose(arr.sum(), 1.0, rtol=0, atol=max(1e-8, arr.size * precision)):
        raise ValueError(f"{name} must sum to one, it sums to {arr.sum():.10g}")
    return arr


def is_number(x) -> bool:
    """A real scalar (not a bool)."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def check_covariance_prior(covariance_prior, n_features: int) -> np.ndarray:
    """The prior scatter ``S`` of the MAP covariance estimate: None is the
    identity; otherwise a symmetric positive definite (d, d) matrix."""
    if covariance_prior is None:
        return np.eye(n_features)
    S = np.asarray(covariance_prior, dtype=float)
    d = n_features
    if S.shape != (d, d):
        raise ValueError(f"covariance_prior must have shape ({d}, {d}), got {S.shape}")
    if not np.allclose(S, S.T) or np.any(np.linalg.eigvalsh(S) <= 0):
        raise ValueError("covariance_prior must be symmetric positive definite")
    return S
