"""A model's triple built once per fit, and kept while nothing it reads changed.

``_make_components()`` builds a model's :class:`~bayeskit._base.classifier.Triple`
from its hyperparameters and from what the data fixed (the classes, the number
of features, a network's states). Validation, statistics and prediction read
the one kept by :func:`stored_triple`; it is built again when a hyperparameter
(``set_params`` or an assignment, also an array changed in place) or what the
data fixed has changed since, so that a model answers as one built afresh.

The hidden Markov models keep a copy of these helpers in ``hmm/_base.py``:
their prediction path is held to a small number of calls across files.
"""

from __future__ import annotations

import functools
from numbers import Number

import numpy as np

__all__ = ["forget_triple", "frozen", "hyperparameters", "stored_triple", "unchanged"]


@functools.cache
def hyperparameters(cls) -> tuple:
    """The names of the hyperparameters of ``cls`` (its ``__init__``'s)."""
    return tuple(cls._get_param_names())


def frozen(values) -> tuple:
    """``(value, copy)`` for every value: a copy of an array-like value (to
    see it changed in place), None for any other."""
    kept = []
    for value in values:
        copy = None
        if isinstance(value, (np.ndarray, list)):
            try:
                copy = np.array(value, copy=True)
            except ValueError:  # ragged: compared by identity only
                pass
        kept.append((value, copy))
    return tuple(kept)


def unchanged(stored, values) -> bool:
    """Whether ``values`` are those ``stored`` by :func:`frozen`: the same
    objects, with the same contents, or equal numbers and strings."""
    if len(stored) != len(values):
        return False
    for (value, copy), now in zip(stored, values):
        if copy is not None:
            if now is not value or not np.array_equal(now, copy):
                return False
        elif now is not value and not (
            isinstance(now, (Number, str)) and type(now) is type(value) and now == value
        ):
            return False
    return True


def stored_triple(est, fixed: tuple = ()):
    """``est``'s triple, built by ``est._make_components()`` unless the one
    kept was built from the same hyperparameters and the same ``fixed``
    values (what the data fixed that the triple reads)."""
    key = (*(getattr(est, name) for name in hyperparameters(type(est))), *fixed)
    found = est.__dict__
    stored = found.get("_triple_of")
    if stored is None or found.get("_triple") is None or not unchanged(stored, key):
        est._triple = est._make_components()
        est._triple_of = frozen(key)
    return est._triple


def forget_triple(est) -> None:
    """Drop the kept triple (a fit starts afresh)."""
    est.__dict__.pop("_triple", None)
    est.__dict__.pop("_triple_of", None)
