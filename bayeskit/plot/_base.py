"""What every display shares: matplotlib imported on first use, the axes."""

from __future__ import annotations

import numpy as np

__all__ = ["check_matplotlib", "get_axes"]


def check_matplotlib(what: str):
    """``matplotlib.pyplot``, or an ImportError that names the ``plot`` extra."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - tested in a subprocess
        raise ImportError(
            f"{what} needs matplotlib: install bayeskit's plot extra "
            "(pip install 'bayeskit[plot]') or matplotlib itself"
        ) from exc
    return plt


def get_axes(ax, what: str, **subplots):
    """The given axes, or new ones on a new figure."""
    plt = check_matplotlib(what)
    if ax is None:
        _, ax = plt.subplots(**subplots)
    return ax


def check_fitted(est, attributes, what: str) -> None:
    """A TypeError naming ``estimator`` when ``est`` lacks a fitted attribute."""
    from sklearn.utils.validation import check_is_fitted

    missing = [a for a in attributes if not hasattr(est, a)]
    if missing:
        check_is_fitted(est)  # NotFittedError for an estimator not yet fitted
        raise TypeError(
            f"{what} needs an estimator with {', '.join(attributes)}; "
            f"{type(est).__name__} has no {', '.join(missing)}"
        )


def feature_pair(features, n_features: int, name: str = "features") -> tuple:
    """Two distinct column indices in range, or a ValueError naming ``name``."""
    try:
        pair = tuple(int(f) for f in features)
    except TypeError:
        raise TypeError(f"{name} must be a pair of column indices") from None
    if len(pair) != 2 or pair[0] == pair[1]:
        raise ValueError(
            f"{name} must be two distinct column indices, got {features!r}"
        )
    if not all(0 <= f < n_features for f in pair):
        raise ValueError(
            f"{name} must be column indices below n_features={n_features}, "
            f"got {features!r}"
        )
    return pair


def as_2d(X, name: str = "X") -> np.ndarray:
    """``X`` as a float array of shape (n_samples, n_features), not copied
    when it is one already; the caller's array is never written."""
    arr = np.asarray(X, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional, got shape {arr.shape}")
    return arr
