"""The only import point for scikit-learn's validation helpers.

Several of these are private in scikit-learn; importing them here, once, means
one file absorbs scikit-learn's changes.
"""

from __future__ import annotations

import numbers
import threading
from contextlib import contextmanager

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    _num_samples,
    check_is_fitted,
)
from sklearn.utils.validation import validate_data as _validate_data

__all__ = [
    "ElementwiseInterval",
    "HasMethods",
    "Interval",
    "StrOptions",
    "_fit_context",
    "_num_samples",
    "check_classification_targets",
    "check_covariance_prior",
    "check_is_fitted",
    "check_n_samples",
    "check_probability_vector",
    "check_sample_weight",
    "random_state_of",
    "validate_data",
]


class ElementwiseInterval(Interval):
    """An :class:`Interval` that an array-like parameter satisfies when every
    element does (a scalar is checked as by :class:`Interval`).

    Array-valued hyperparameters (a Dirichlet concentration per state, a
    number of categories per feature) are declared with it in
    ``_parameter_constraints``, so a negative or NaN element is reported by
    the same boundary, in the same words, as a bad scalar.
    """

    def is_satisfied_by(self, val):
        if isinstance(val, (str, bytes)):
            return False
        if np.ndim(val) == 0:
            return super().is_satisfied_by(val.item() if hasattr(val, "item") else val)
        try:
            arr = np.asarray(val)
        except (TypeError, ValueError):
            return False
        if arr.size == 0 or arr.dtype.kind not in "iuf":
            return False
        if self.type is numbers.Integral and arr.dtype.kind == "f":
            return False
        return all(
            super(ElementwiseInterval, self).is_satisfied_by(v)
            for v in arr.ravel().tolist()
        )

    def __str__(self):
        return f"{super().__str__()}, or an array-like of such values"


def validate_data(estimator, X="no_validation", y="no_validation", **check_params):
    """scikit-learn's ``validate_data``, with one message for values that are
    not numbers where numbers are needed.

    scikit-learn lets numpy's or pandas' conversion error through for some
    inputs (text in an object array or a DataFrame, ``pd.NA``); here that is
    a ValueError that names ``X`` and says what to do.
    """
    columns = getattr(X, "columns", None)
    if (
        columns is not None
        and len(columns) == 0
        and check_params.get("ensure_min_features", 1) >= 1
        and not check_params.get("skip_check_array", False)
    ):
        # scikit-learn lets numpy's "at least one array or dtype is required"
        # through for a DataFrame without columns; its message for an array of
        # that shape, naming X.
        raise ValueError(
            f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of "
            f"1 is required by {type(estimator).__name__}: X is a DataFrame "
            "without columns"
        )
    try:
        # scikit-learn's finiteness test sums the values: float16 data with
        # inf overflow or inf - inf there is what the test reports, not a
        # numpy warning of ours.
        with np.errstate(over="ignore", invalid="ignore"):
            out = _validate_data(estimator, X, y, **check_params)
        numeric = check_params.get("dtype", "numeric") == "numeric"
        if numeric and not isinstance(X, str):
            # A DataFrame's categorical columns of text come back as objects,
            # unread: the text "nan" or "inf" would be read as a number later,
            # past the finiteness test.
            Xv = out if isinstance(y, str) else out[0]
            if isinstance(Xv, np.ndarray) and Xv.dtype == object:
                Xv = np.asarray(Xv, dtype=np.float64)
                _check_finite(estimator, Xv, check_params)
                out = Xv if isinstance(y, str) else (Xv, out[1])
    except _NotFinite as exc:
        raise ValueError(str(exc)) from None
    except (ValueError, TypeError) as exc:
        tb = exc.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        inside = tb.tb_frame.f_code.co_filename.replace("\\", "/")
        if str(exc) == "Input contains NaN":
            # scikit-learn's test of object arrays names no input
            raise ValueError(
                f"Input X contains NaN: {type(estimator).__name__} does not "
                "accept missing values encoded as NaN"
            ) from None
        if inside.endswith("/sklearn/utils/validation.py") and (
            "bytes/strings" not in str(exc)  # text where numbers are needed
        ):
            raise  # scikit-learn's own message names the input
        # The same class as the conversion's (a dict in X is a TypeError).
        raise type(exc)(
            f"X must hold numbers for {type(estimator).__name__}, but a value "
            f"could not be read as one ({exc}); encode text or categorical "
            "columns as numbers first, or use a model for categorical features "
            "(CategoricalNB, MixedNB)"
        ) from None
    return out


def _check_finite(estimator, X, check_params) -> None:
    """scikit-learn's finiteness test of ``X`` as ``ensure_all_finite`` asks,
    for values read from text (scikit-learn's own test ran before them)."""
    allowed = check_params.get("ensure_all_finite", True)
    if allowed is not True and allowed != "allow-nan":
        return
    bad = np.isinf(X) if allowed == "allow-nan" else ~np.isfinite(X)
    if bad.any():
        what = "NaN" if np.isnan(X[bad]).any() else "infinity"
        raise _NotFinite(
            f"Input X contains {what}: {type(estimator).__name__} read the text "
            f"{str(X[bad][0])!r} of a categorical column as a number"
        )


class _NotFinite(ValueError):
    """A value read from text that the finiteness test refuses."""


def check_sample_weight(sample_weight, X, allow_all_zero=False) -> np.ndarray:
    """Non-negative float64 weights of shape (n_samples,), ones when None.

    ``allow_all_zero``: weights that are all zero are valid (one chunk of
    many, whose rows all count for nothing).
    """
    if sample_weight is None:  # scikit-learn's default, without its checks
        return np.ones(_num_samples(X))
    _check_numeric_weights(sample_weight)
    if allow_all_zero:
        w = np.asarray(sample_weight)
        if w.ndim == 1 and w.shape[0] == _num_samples(X) and w.size and not w.any():
            return np.zeros(w.shape[0])
    return _check_sample_weight(
        sample_weight, X, dtype=np.float64, ensure_non_negative=True
    )


def _check_numeric_weights(sample_weight) -> None:
    """TypeError naming ``sample_weight`` when it holds text (numpy would
    parse ``'2'`` as a number, or fail with a message naming no argument)."""
    if isinstance(sample_weight, (str, bytes)):
        raise TypeError(f"sample_weight must hold numbers, got {sample_weight!r}")
    if np.isscalar(sample_weight):
        return
    w = np.asarray(sample_weight)
    if w.dtype.kind in "USO" and any(
        isinstance(v, (str, bytes)) for v in w.ravel().tolist()
    ):
        raise TypeError(f"sample_weight must hold numbers, got text (dtype {w.dtype})")


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


def check_n_samples(n_samples) -> None:
    """TypeError or ValueError naming ``n_samples`` unless it is a
    non-negative integer (hmmlearn passes other values on to numpy or
    ``range``, whose messages do not say which argument is wrong)."""
    if isinstance(n_samples, (bool, np.bool_)) or not isinstance(
        n_samples, numbers.Integral
    ):
        raise TypeError(
            f"n_samples must be a non-negative integer, got {n_samples!r} "
            f"({type(n_samples).__name__})"
        )
    if n_samples < 0:
        raise ValueError(f"n_samples must be a non-negative integer, got {n_samples}")


# Generators of this thread free to be seeded again (random_state_of).
_SPARE = threading.local()


@contextmanager
def random_state_of(seed):
    """``check_random_state(seed)`` for the duration of a ``with`` block.

    An integer seed gives a generator in the very state of
    ``numpy.random.RandomState(seed)`` (the same draws), taken from this
    thread's spare generators and seeded again (``RandomState.seed``): a new
    ``RandomState`` first seeds a fresh bit generator from the operating
    system's entropy, which costs about as much as an EM iteration on
    iris-sized data, before the seed replaces it. The generator goes back
    to the spares when the block ends, so it must not outlive the block;
    ``None`` and ``RandomState`` instances are ``check_random_state``'s.
    """
    if not isinstance(seed, numbers.Integral):
        yield check_random_state(seed)
        return
    spares = _SPARE.__dict__.setdefault("generators", [])
    rng = spares.pop() if spares else np.random.RandomState()
    rng.seed(seed)
    try:
        yield rng
    finally:
        spares.append(rng)
