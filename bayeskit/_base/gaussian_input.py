"""Float input of the Gaussian models: validated input in float64, and
fitted attributes kept in the dtype of the training data (float32 or
float64), as scikit-learn's estimators keep them."""

from __future__ import annotations

import numpy as np

from .._logmath import has_nan

__all__ = [
    "GAUSSIAN_LIMIT",
    "float_input",
    "float_input_complete",
    "keep_input_dtype",
]


# Beyond this magnitude the squares that Gaussian statistics and densities
# need overflow float64 (1e150 ** 2 = 1e300, and sums of such squares).
GAUSSIAN_LIMIT = 1e150


def float_input(X: np.ndarray, features=None) -> np.ndarray:
    """Validated float input in float64, where statistics and scores are
    computed; the input's own dtype (float32 or float64) is ``X.dtype``.

    A value beyond :data:`GAUSSIAN_LIMIT` in magnitude is a ValueError naming
    its feature: a Gaussian model cannot square it in float64. ``features``
    gives the feature number of each column of ``X`` in the caller's ``X``
    (default: the column's own).
    """
    return float_input_complete(X, features)[0]


def float_input_complete(X: np.ndarray, features=None) -> tuple[np.ndarray, bool]:
    """:func:`float_input`, and whether no cell of ``X`` is missing (NaN): the
    magnitude test holds for no array with a NaN, so where it holds, no second
    pass over ``X`` looks for one."""
    X = X.astype(np.float64, copy=False)
    if not X.size or (X.max() <= GAUSSIAN_LIMIT and X.min() >= -GAUSSIAN_LIMIT):
        return X, True
    # The test fails on NaN (missing values) too: check the values exactly.
    with np.errstate(invalid="ignore"):
        big = np.abs(X) > GAUSSIAN_LIMIT
    if big.any():
        j = int(np.argmax(big.any(axis=0)))
        value = X[np.argmax(big[:, j]), j]
        name = j if features is None else int(features[j])
        raise ValueError(
            f"feature {name} of X has the value {value:.3g}: beyond "
            f"{GAUSSIAN_LIMIT:.0e} in magnitude the squares a Gaussian model "
            "needs overflow float64; rescale the feature (e.g. divide it by "
            "a power of ten, or StandardScaler)"
        )
    return X, not has_nan(X)


def keep_input_dtype(est, dtype, *names) -> None:
    """Fitted attributes ``names`` of ``est`` in the dtype of the training data:
    float32 data give float32 attributes, as scikit-learn's estimators keep
    them (everything is computed in float64; only the attributes are cast).

    A finite value beyond float32's range is a ValueError naming ``X`` (it
    would be cast to infinity), raised before any attribute is cast."""
    if dtype != np.float32:
        return
    fitted = {name: getattr(est, name, None) for name in names}
    for name, value in fitted.items():
        for array in value if isinstance(value, list) else [value]:
            _check_float32_range(array, name)
    for name, value in fitted.items():
        if isinstance(value, list):
            setattr(est, name, [np.asarray(v, np.float32) for v in value])
        elif value is not None:
            setattr(est, name, np.asarray(value, np.float32))


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _check_float32_range(array, name: str) -> None:
    array = np.asarray(array)
    if array.dtype.kind != "f":  # None (not fitted) is an object array
        return
    finite = np.abs(array[np.isfinite(array)])
    if finite.size and finite.max() > _FLOAT32_MAX:
        raise ValueError(
            f"X is float32, and the fitted {name} reaches {finite.max():.3g}, "
            f"beyond float32's largest value ({_FLOAT32_MAX:.3g}): the fitted "
            "attributes of float32 data are float32, as in scikit-learn; pass X "
            "as float64, or rescale it (e.g. StandardScaler)"
        )
