"""What statistics are over: the description that makes them self-contained.

A model's ``summarize`` returns statistics that add (``a + b``), and its
``from_stats`` turns a sum of them into parameters. For a map-reduce written
by hand (workers summarising chunks, a driver adding the results), the driver
must know what the numbers are over: the classes, the encoding of every
column, the variables and their states, and, for the expected statistics of
EM, the parameters they were computed under. A :class:`Layout` carries that
with the statistics, so that ``clone(est).from_stats(a + b)`` on a fresh
estimator equals ``est.fit`` on all the rows, and the statistics pickle as
one value.

Two statistics with equal layouts add as numbers. Two with different
layouts (chunks that showed different classes, or different states of a
variable) are first re-laid over the union, in the estimator's one ordering
policy, by the estimator class that made them (``_union_stats``); where that
is not defined, adding them is a ValueError that says what differs. The
expected statistics of EM (an estimator class with ``_em_statistics``) add
under any parameters of one model, as incremental EM adds them; the sum
carries the model of its last term.

This module imports no estimator: the statistics of the graph core carry a
layout as an opaque value.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import io
import pickle
import types

__all__ = ["Layout", "add_described", "fixed_by"]


class Layout:
    """The description of what some statistics are over.

    Parameters
    ----------
    estimator : type
        The estimator class that summarized the statistics.
    state : dict
        Attribute name -> value: what ``from_stats`` sets on a fresh estimator
        of that class before it reads the statistics (copied here, so that
        the estimator can change afterwards).
    """

    __slots__ = ("_key", "estimator", "state")

    def __init__(self, estimator: type, state: dict):
        self.estimator = estimator
        self.state = copy.deepcopy(dict(state))
        self._key = None

    @property
    def key(self) -> bytes:
        """A fingerprint of the class and the state: equal layouts, equal keys."""
        if self._key is None:
            items = sorted((k, _canonical(v)) for k, v in self.state.items())
            blob = _dump(
                (self.estimator.__module__, self.estimator.__qualname__, items)
            )
            self._key = hashlib.sha256(blob).digest()
        return self._key

    def differing(self, other: Layout) -> list:
        """The names of the attributes whose values differ between the two."""
        names = sorted(set(self.state) | set(other.state))
        return [
            name
            for name in names
            if _dump(_canonical(self.state.get(name)))
            != _dump(_canonical(other.state.get(name)))
        ]

    def apply(self, estimator) -> None:
        """Set the described attributes on ``estimator`` (a copy of each)."""
        if not isinstance(estimator, self.estimator):
            raise TypeError(
                f"these statistics were summarized by {self.estimator.__name__}, "
                f"not by {type(estimator).__name__}: from_stats needs an estimator "
                "of the same class"
            )
        vars(estimator).update(copy.deepcopy(self.state))
        estimator._layout = self

    def apply_if_fresh(self, estimator) -> None:
        """:meth:`apply` on an estimator not fitted yet (a map-reduce's
        driver); a fitted one keeps its own state, as its statistics' M-step
        reads it."""
        if not _fitted(estimator):
            estimator._validate_params()
            self.apply(estimator)

    def __getstate__(self):
        return {"estimator": self.estimator, "state": self.state}

    def __setstate__(self, state):
        self.estimator = state["estimator"]
        self.state = state["state"]
        self._key = None

    def __repr__(self) -> str:
        return f"Layout({self.estimator.__name__}, {sorted(self.state)})"


def fixed_by(estimator, before: dict) -> tuple:
    """The attributes a reset of ``estimator`` set (new, or another object
    than in ``before``, a snapshot of ``vars`` taken before it): what its
    statistics' layout holds."""
    return tuple(
        k
        for k, v in vars(estimator).items()
        if k != "_layout_keys" and (k not in before or before[k] is not v)
    )


def _canonical(value):
    """``value``, or a set as its members in one order: a set's iteration
    order follows the history of its insertions and the string hash seed, so
    two equal sets (one pickled and loaded again, or built in another
    process) can write their members in different orders."""
    if isinstance(value, (set, frozenset)):
        return (type(value).__name__, sorted(value, key=repr))
    return value


# What pickle writes as a name, never as a state.
_BY_NAME = (
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.ModuleType,
)


class _Pickler(pickle.Pickler):
    """The pickler of :func:`_dump`: an object's attributes that are sets are
    written in one order, and those its class names in ``_layout_ignores``
    are left out. Those are caches (an HMM's stored triple and the
    parameters validated under it), rebuilt from the rest, whose last bits
    can depend on which kernels the process compiled."""

    def reducer_override(self, obj):
        if isinstance(obj, _BY_NAME) or not hasattr(obj, "__dict__"):
            return NotImplemented
        try:
            reduced = obj.__reduce_ex__(4)
        except TypeError:  # pickled otherwise (or not at all: left to pickle)
            return NotImplemented
        if not isinstance(reduced, tuple) or len(reduced) < 3:
            return NotImplemented
        if not isinstance(reduced[2], dict):
            return NotImplemented
        ignored = getattr(type(obj), "_layout_ignores", ())
        state = {k: _canonical(v) for k, v in reduced[2].items() if k not in ignored}
        return (*reduced[:2], state, *reduced[3:])


def _dump(value) -> bytes:
    """``value``'s pickle without the memo: equal values give equal bytes
    whether or not their parts are shared objects (the same label reached
    through two containers is one object in one process and two after a
    pickle round trip, which the memo would write differently)."""
    buffer = io.BytesIO()
    pickler = _Pickler(buffer, protocol=4)
    pickler.fast = True  # no memo: every object written out where it occurs
    try:
        pickler.dump(value)
    except (RecursionError, ValueError):  # a self-referencing value
        return pickle.dumps(value, protocol=4)
    return buffer.getvalue()


def add_described(a, b, plain):
    """``a + b`` for statistics (frozen dataclasses with a ``layout`` field).

    ``plain(a, b)`` adds the numbers of statistics over one layout. Equal
    layouts (or a missing one) add as numbers and keep the layout; different
    layouts are re-laid over their union by the estimator class that made
    them, or refused with a ValueError naming what differs.
    """
    la, lb = a.layout, b.layout
    if la is None or lb is None or la is lb or la.key == lb.key:
        return dataclasses.replace(plain(a, b), layout=la if la is not None else lb)
    if lb.estimator is la.estimator and getattr(la.estimator, "_em_statistics", False):
        # Expected statistics under different parameters of one model add:
        # that is incremental EM (Neal and Hinton 1998). The sum carries the
        # model of its last term (the newest, in a running sum).
        return dataclasses.replace(plain(a, b), layout=lb)
    union = getattr(la.estimator, "_union_stats", None)
    if union is not None and lb.estimator is la.estimator:
        return union(a, b)
    raise ValueError(
        "these statistics were summarized over different layouts "
        f"({', '.join(la.differing(lb)) or la.estimator.__name__} differ) and "
        "do not add: summarize every chunk with estimators prepared alike (the "
        "same parameters, or a first fit on a chunk showing every class, "
        "category and state)"
    )


def _fitted(estimator) -> bool:
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(estimator)
    except NotFittedError:
        return False
    return True
