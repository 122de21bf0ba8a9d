"""Input that lives in another library's collections (Dask arrays and
DataFrames): the handlers the estimators hand it to.

The estimators sit below the edge modules that know those libraries, so they
do not import them: an edge module registers a handler here (``register``),
and an estimator's ``fit`` or prediction asks :func:`handler_for` whether its
input belongs to one. Plain input finds none, and nothing else is imported.
A handler is a module (or object) with ``accepts(X)`` and the functions the
estimators call (``fit_classifier``, ``fit_mixture``, ``predict``, ...).
"""

from __future__ import annotations

__all__ = ["handler_for", "register"]

_HANDLERS: list = []


def register(handler) -> None:
    """Make ``handler`` answer for the input its ``accepts`` recognises."""
    if handler not in _HANDLERS:
        _HANDLERS.append(handler)


def handler_for(X):
    """The registered handler of ``X``, or None for plain input."""
    for handler in _HANDLERS:
        if handler.accepts(X):
            return handler
    return None
