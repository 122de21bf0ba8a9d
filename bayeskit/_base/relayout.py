"""Statistics re-laid over more classes and categories: chunks' union.

Every statistic of a generative classifier is per class along its first axis
(the class node's states): the class weights, and every array of the
emission family's statistics (weights, counts, means, scatters). Statistics
of a chunk that did not show a class are zero for it, so statistics over
classes ``c`` become statistics over a superset ``u`` by placing each class's
slice at its position in ``u`` and zeros elsewhere. The ordering policy is
``fit``'s: the sorted distinct labels (:func:`numpy.unique`).

The categories of a column re-lay the same way along the stacked category
axis of the categorical statistics (``counts[offset_j + a, k]``): the
encoders' one policy orders the union (sorted values; ``0 .. max`` for
columns read as codes; declared categories must agree).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._layout import Layout

__all__ = ["union_of_classes"]


def union_of_classes(a, b):
    """``a + b`` for classifier statistics whose layouts differ in the classes
    or in the categories of the encoded columns."""
    la, lb = a.layout, b.layout
    differing = la.differing(lb)
    other = [name for name in differing if name not in ("classes_", "_encoder")]
    if other:
        raise ValueError(
            "these statistics were summarized by estimators that differ in more "
            f"than their classes and categories ({', '.join(other)} differ) and "
            "do not add: summarize every chunk with one fitted estimator (a copy "
            "of it per worker)"
        )
    state = dict(la.state)
    a, b = dataclasses.replace(a, layout=None), dataclasses.replace(b, layout=None)
    if "_encoder" in differing:
        encoder, rows_a, rows_b = _union_encoder(
            la.state["_encoder"], lb.state["_encoder"]
        )
        total = int(encoder.n_categories.sum())
        a = _recategorized(a, rows_a, total)
        b = _recategorized(b, rows_b, total)
        state["_encoder"] = encoder
    ca, cb = la.state["classes_"], lb.state["classes_"]
    try:
        union = np.union1d(ca, cb)
    except TypeError as exc:
        raise ValueError(
            f"the classes of these statistics ({list(ca)[:5]} and {list(cb)[:5]}) "
            "cannot be ordered together (labels of different types)"
        ) from exc
    state["classes_"] = union
    total = _over(a, ca, union) + _over(b, cb, union)
    return dataclasses.replace(total, layout=Layout(la.estimator, state))


def _union_encoder(ea, eb):
    """The encoder over both encoders' categories, and where each one's
    stacked category rows go in it."""
    same = (
        ea.names == eb.names
        and np.array_equal(ea.fixed, eb.fixed)
        and np.array_equal(ea.coded, eb.coded)
        and ea.noun == eb.noun
    )
    if not same:
        raise ValueError(
            "these statistics were summarized with differently read columns "
            "(names, declared or coded columns differ) and do not add"
        )
    categories = []
    for j, (ca, cb) in enumerate(zip(ea.categories, eb.categories)):
        if ea.fixed[j] or np.array_equal(ca, cb):
            if not np.array_equal(ca, cb):
                raise ValueError(
                    f"the declared categories of feature {ea.names[j]} differ "
                    "between these statistics"
                )
            categories.append(ca)
        elif ea.coded[j]:
            categories.append(np.arange(max(len(ca), len(cb)), dtype=ca.dtype))
        else:
            try:
                categories.append(np.union1d(ca, cb))
            except TypeError as exc:
                raise ValueError(
                    f"the categories of feature {ea.names[j]} in these statistics "
                    f"({list(ca)[:5]} and {list(cb)[:5]}) cannot be ordered "
                    "together: declare them with categories="
                ) from exc
    encoder = type(ea)(categories, ea.names, ea.fixed, ea.coded, ea.noun)
    offsets = np.concatenate([[0], np.cumsum(encoder.n_categories)[:-1]])

    def rows(enc):
        return np.concatenate(
            [
                offsets[j] + np.searchsorted(union, cats)
                for j, (union, cats) in enumerate(zip(categories, enc.categories))
            ]
        ).astype(np.intp)

    return encoder, rows(ea), rows(eb)


def _recategorized(stats, rows, total):
    """Classifier statistics with the stacked category rows moved to ``rows``
    of a layout of ``total`` categories."""
    from ..emissions.base import ProductStats
    from ..emissions.categorical import CategoricalStats

    def move(value):
        if isinstance(value, CategoricalStats):
            out = np.zeros((total, value.counts.shape[1]))
            out[rows] = value.counts
            return CategoricalStats(out)
        if isinstance(value, ProductStats):
            # The encoded columns are the categorical part's; the other
            # families' parts (Gaussian columns) are laid out by class only.
            parts = tuple(
                move(p) if isinstance(p, CategoricalStats) else p for p in value.parts
            )
            return dataclasses.replace(value, parts=parts)
        if hasattr(value, "pair_counts"):  # tree-augmented naive Bayes
            k = value.pair_counts.shape[0]
            out = np.zeros((k, total, total))
            out[:, rows[:, None], rows[None, :]] = value.pair_counts
            return dataclasses.replace(value, pair_counts=out)
        raise TypeError(
            f"statistics of type {type(value).__name__} cannot be re-laid over "
            "more categories"
        )

    return dataclasses.replace(stats, emission=move(stats.emission))


def _over(stats, classes, union):
    """``stats`` (over ``classes``) re-laid over ``union``."""
    k = len(classes)
    where = np.searchsorted(union, classes)
    return _relaid(dataclasses.replace(stats, layout=None), k, where, len(union))


def _relaid(value, k, where, n, axis=0):
    if value is None or isinstance(value, (int, float, np.floating, np.integer)):
        return value
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return value
        moved = np.moveaxis(value, axis, 0)
        if moved.shape[0] != k:
            raise TypeError(
                f"statistics array of shape {value.shape} has no class axis of "
                f"length {k}: they cannot be re-laid over more classes"
            )
        out = np.zeros((n, *moved.shape[1:]), dtype=value.dtype)
        out[where] = moved
        return np.moveaxis(out, 0, axis)
    models = getattr(value, "models", None)
    if dataclasses.is_dataclass(value) and isinstance(models, tuple):
        # One model's statistics per class (None for a class with no rows).
        slots = [None] * n
        for i, model in zip(where, models):
            slots[i] = model
        return dataclasses.replace(value, models=tuple(slots))
    if isinstance(value, tuple):
        # A product's parts (one family each, None for a family without
        # features): every part has the class axis.
        return tuple(_relaid(part, k, where, n) for part in value)
    if dataclasses.is_dataclass(value):
        axis = getattr(type(value), "state_axis", 0)
        changes = {}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if isinstance(item, (np.ndarray, tuple)) or dataclasses.is_dataclass(item):
                if dataclasses.is_dataclass(item) and not hasattr(item, "__add__"):
                    continue  # a description (a covariance structure), not numbers
                changes[f.name] = _relaid(item, k, where, n, axis)
        return dataclasses.replace(value, **changes)
    raise TypeError(
        f"statistics of type {type(value).__name__} cannot be re-laid over more classes"
    )
