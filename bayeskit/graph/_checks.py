"""The checks of the graph objects' constructors: what their public
parameters must be, with messages that name the parameter.

Only the constructors of the public objects call these (once per object);
the operations inside the core trust what they were built from.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Iterable, Mapping

import numpy as np

__all__ = [
    "cardinality",
    "mapping",
    "node_labels",
    "real_array",
    "sequence",
]

# numpy's limit on the axes of an array (32 before numpy 2).
MAX_AXES = 64 if int(np.__version__.split(".")[0]) >= 2 else 32


def _shown(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def cardinality(value, what: str) -> int:
    """A number of states: a positive integer (an ``int``, a numpy integer or
    an integral float such as ``2.0``), never a bool, a string, NaN or 2.5."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{what} must be a positive int (a number of states), got "
            f"{_shown(value)} of type {type(value).__name__}"
        )
    if not math.isfinite(value) or value != int(value) or value < 1:
        raise ValueError(
            f"{what} must be a positive int (a number of states), got {_shown(value)}"
        )
    return int(value)


def sequence(value, what: str, of: str) -> list:
    """``value`` as a list: an iterable that is not a string, a mapping or a
    scalar."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(f"{what} must be a sequence of {of}, got {_shown(value)}")
    return list(value)


def mapping(value, what: str, of: str) -> Mapping:
    """``value`` if it is a mapping (a dict)."""
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{what} must be a mapping (a dict) of {of}, got "
            f"{type(value).__name__} {_shown(value)}"
        )
    return value


def node_labels(values, what: str) -> tuple:
    """Hashable labels, all different."""
    labels = tuple(sequence(values, what, "hashable labels"))
    for label in labels:
        if not isinstance(label, Hashable):
            raise TypeError(f"{what} must be hashable labels, got {_shown(label)}")
    return labels


def real_array(values, what: str) -> np.ndarray:
    """``values`` as a float array: numbers (not strings, complex, None)."""
    arr = np.asarray(values)
    if arr.dtype.kind == "c":
        raise TypeError(f"{what} must be real numbers, got complex values")
    if arr.dtype.kind in "biuf":
        return arr.astype(float, copy=False)
    try:
        return np.asarray(arr, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(
            f"{what} must be an array of numbers, got values of type {arr.dtype}"
        ) from None
