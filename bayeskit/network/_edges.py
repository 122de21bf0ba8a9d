"""Edge lists given by a user (lists of pairs, a DAG, pgmpy's or networkx's
graphs) as pairs of variable indices and adjacency matrices, checked at the
boundary of the structure learners and :func:`~bayeskit.score_structure`."""

from __future__ import annotations

import numpy as np

__all__ = ["edge_matrix", "edge_pairs"]


def edge_pairs(
    value, name: str, index: dict, self_loops: bool = False
) -> list[tuple[int, int]]:
    """``value`` (pairs, a :class:`~bayeskit.graph.DAG`, or a graph with an
    ``edges`` attribute or method, such as pgmpy's or networkx's) as pairs of
    variable indices; an unknown variable is a ValueError naming ``name``, and
    so is a self-loop, unless ``self_loops`` (then it is left out: forbidding
    or allowing an edge that is never legal changes nothing, as in pgmpy)."""
    if value is None:
        return []
    edges = getattr(value, "edges", value)
    if callable(edges):
        edges = edges()
    pairs = []
    try:
        edges = list(edges)
    except TypeError:
        raise TypeError(
            f"{name} must be a list of (parent, child) pairs, got {value!r}"
        ) from None
    for edge in edges:
        if (
            isinstance(edge, (str, bytes))
            or not hasattr(edge, "__len__")
            or len(edge) != 2
        ):
            raise ValueError(f"{name} must hold (parent, child) pairs, got {edge!r}")
        parent, child = edge
        for v in (parent, child):
            try:
                hash(v)
            except TypeError:
                raise TypeError(
                    f"{name} must hold (parent, child) pairs of variable names, "
                    f"got {edge!r}, whose {v!r} is not a name (unhashable "
                    f"{type(v).__name__})"
                ) from None
        unknown = [v for v in (parent, child) if v not in index]
        if unknown:
            raise ValueError(
                f"{name} names {unknown!r}, which are not columns of X; the "
                f"columns are {list(index)!r}"
            )
        if parent == child:
            if self_loops:
                continue
            raise ValueError(f"{name} holds a self-loop on {parent!r}")
        pairs.append((index[parent], index[child]))
    return pairs


def edge_matrix(pairs, d: int) -> np.ndarray:
    """The boolean adjacency matrix of ``pairs`` of indices."""
    out = np.zeros((d, d), dtype=bool)
    for x, y in pairs:
        out[x, y] = True
    return out
