"""The numeric side of naive Bayes: float X, the diagonal Gaussian, mixed X.

- :class:`NaiveGaussian`: the diagonal Gaussian family as Gaussian naive Bayes
  calls it, with its variance prior an object (:class:`VarianceSmoothing`);
- :func:`read_float`: how GaussianNB reads ``X``;
- :func:`read_mixed`: how MixedNB reads ``X``: categorical columns through the
  one encoder, numeric columns as floats, one block each for the
  :class:`~bayeskit.emissions.product.Product` of the two families.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np
import pandas as pd

from .._base.categorical import (
    _HINT,
    declared_list,
    feature_name,
    kept_rows,
    validated,
    warn_nearly_unique,
)
from .._base.classifier import InsufficientData, float_input
from .._base.encoding import (
    CategoryEncoder,
    holds_real_numbers,
    is_missing,
    split_columns,
)
from .._validation import validate_data
from ..emissions import DIAG, Gaussian, GaussianStats

__all__ = ["NaiveGaussian", "VarianceSmoothing", "read_float", "read_mixed"]


@dataclass(frozen=True)
class VarianceSmoothing:
    """The variance prior of Gaussian naive Bayes.

    Each class variance shrinks toward the pooled within-class variance of its
    feature with ``m`` virtual samples (a conjugate prior on the variance,
    whose MAP estimate is ``(S_cj + m s_j^2) / (n_cj + m)``), and
    ``var_smoothing`` times the largest total variance is added to every
    variance, as scikit-learn does.
    """

    m: float = 0.0
    var_smoothing: float = 0.0

    def epsilon(self, stats) -> float:
        """What ``var_smoothing`` adds to every variance."""
        return float(self.var_smoothing * stats.total_variance().max())


class NaiveGaussian(Gaussian):
    """The diagonal Gaussian family, called with a :class:`VarianceSmoothing`.

    Parameters
    ----------
    n_features : int
        Number of features (for the parameter count).
    """

    def __init__(self, n_features: int) -> None:
        super().__init__(DIAG)
        self.n_features = int(n_features)

    def map_params(self, stats, prior: VarianceSmoothing | None = None, previous=None):
        prior = VarianceSmoothing() if prior is None else prior
        try:
            return Gaussian.map_params(
                self,
                stats,
                prior_weight=prior.m,
                prior_scatter=stats.within_variance(),
                reg=prior.epsilon(stats),
            )
        except np.linalg.LinAlgError:
            raise InsufficientData(
                "a feature has zero variance within a class (constant values, or "
                "one sample); set var_smoothing > 0 or m > 0"
            ) from None

    def zeros(self, n_states: int) -> GaussianStats:
        """The statistics of no data: no weight, means and scatter zero."""
        shape = (n_states, self.n_features)
        return GaussianStats(np.zeros(shape), np.zeros(shape), np.zeros(shape), DIAG)

    def n_parameters(self, n_states: int) -> int:
        return 2 * n_states * self.n_features


def read_float(est, X, reset, sample_weight, grows):
    """Float ``X`` (float64 or float32, NaN allowed) in float64; the input's
    dtype is kept in ``est._dtype`` for the fitted attributes."""
    X = validate_data(
        est,
        X,
        reset=reset,
        dtype=[np.float64, np.float32],
        ensure_all_finite="allow-nan",
    )
    if reset:
        est._dtype = X.dtype
    return float_input(X), False


def _auto_categorical(dtype, col: np.ndarray) -> bool:
    """``categorical_features='auto'`` for one column: categorical if its
    dtype is a pandas categorical, a string or bool dtype, or object with
    values other than real numbers; numeric otherwise (an object column of
    numbers, as ``SimpleImputer(strategy='most_frequent')`` gives, included)."""
    if isinstance(dtype, pd.CategoricalDtype):
        return True
    kind = getattr(dtype, "kind", "O")
    if kind == "O" and str(dtype) not in ("string", "str"):
        return not holds_real_numbers(col)
    return kind in "OSUb" or str(dtype) in ("string", "str")


def categorical_mask(est, X, cols) -> np.ndarray:
    """MixedNB's ``categorical_features`` as a boolean mask over the columns."""
    d = len(cols)
    spec = est.categorical_features
    if isinstance(spec, str):
        dtypes = X.dtypes if hasattr(X, "dtypes") else [X.dtype] * d
        return np.array([_auto_categorical(dt, c) for dt, c in zip(dtypes, cols)])
    spec = np.asarray(spec)
    if spec.dtype == bool:
        if spec.shape != (d,):
            raise ValueError(
                f"categorical_features mask has shape {spec.shape}, expected ({d},)"
            )
        return spec
    mask = np.zeros(d, dtype=bool)
    names = getattr(est, "feature_names_in_", None)
    for item in spec.tolist():
        if isinstance(item, str):
            if names is None or item not in names:
                raise ValueError(
                    f"categorical_features names column {item!r}, which X does not have"
                )
            mask[list(names).index(item)] = True
        elif isinstance(item, Integral) and -d <= item < d:
            mask[item] = True
        else:
            raise ValueError(
                f"categorical_features has {item!r}: not a column index of X with "
                f"{d} columns"
            )
    return mask


def _as_float(col: np.ndarray) -> np.ndarray:
    """A numeric column in float64, NaN where missing: an object column's None,
    pd.NA and pd.NaT too (the encoder's missing values, which
    ``categorical_features='auto'`` skips when it reads the column as numeric)."""
    if col.dtype.kind == "O":
        missing = is_missing(col)
        if missing.any():
            col = np.where(missing, np.nan, col)
    return np.asarray(col, dtype=np.float64)


def read_mixed(est, X, reset, sample_weight, grows):
    """``(codes, floats)`` of mixed ``X``: codes of the categorical columns
    (None if there are none) and the numeric columns in float64 (None if
    none)."""
    X = validated(est, X, reset)
    cols, dtypes = split_columns(X)
    keep = kept_rows(sample_weight)
    if reset:
        mask = est.categorical_features_ = categorical_mask(est, X, cols)
        idx = np.flatnonzero(mask)
        est._encoder = (
            CategoryEncoder.fit(
                [cols[j] for j in idx],
                [feature_name(est, j) for j in idx],
                dtypes=[dtypes[j] for j in idx],
                declared=declared_list(est.categories, len(idx)),
                keep=keep,
            )
            if len(idx)
            else None
        )
    mask = est.categorical_features_
    encoder = est._encoder
    cat_cols = [c for c, is_cat in zip(cols, mask) if is_cat]
    grew = grows and encoder is not None and encoder.extend(cat_cols, keep)
    codes = None
    if encoder is not None:
        codes = encoder.encode(
            cat_cols,
            unknown=est.handle_unknown,
            fitting=sample_weight is not None,
            keep=keep,
            hint=_HINT,
        )
        if reset and sample_weight is not None:
            warn_nearly_unique(
                est, codes, encoder.n_categories, keep, np.flatnonzero(mask)
            )
    numeric = [c for c, is_cat in zip(cols, mask) if not is_cat]
    Xnum = None
    if numeric:
        try:
            Xnum = np.column_stack([_as_float(c) for c in numeric])
        except (TypeError, ValueError) as exc:
            raise ValueError(
                "a numeric column of X holds non-numeric values; mark it in "
                f"categorical_features ({exc})"
            ) from None
        if np.isinf(Xnum).any():
            raise ValueError("numeric columns of X contain infinity")
        Xnum = float_input(Xnum, np.flatnonzero(~np.asarray(mask, dtype=bool)))
    return (codes, Xnum), bool(grew)
