"""Edge lists given by a user (lists of pairs, a DAG, pgmpy's or networkx's
graphs) as pairs of variable indices and adjacency matrices, checked at the
boundary of the structure learners and :func:`~bayeskit.score_structure`."""

from __future__ import annotations

import numpy as np

__all__ = ["EXPERT_KEYS", "edge_matrix", "edge_pairs", "expert_parts", "tier_matrix"]


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


def tier_matrix(value, name: str, index: dict) -> np.ndarray:
    """The edges a temporal order forbids, as a boolean adjacency matrix.

    ``value`` is a list of tiers, each a list of variable names, earliest
    first (pgmpy's ``temporal_order``; bnlearn's ``tiers2blacklist``): an edge
    from a variable of a later tier to one of an earlier tier is forbidden;
    edges within a tier, and those of a variable in no tier, are not. A name
    that is not a column, a name in two tiers, or a tier that is not a list
    of names is an error naming ``name``.
    """
    d = len(index)
    forbidden = np.zeros((d, d), dtype=bool)
    if value is None:
        return forbidden
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(
            f"{name} must be a list of tiers, each a list of column names, got "
            f"{value!r}"
        )
    tier_of: dict[int, int] = {}
    for t, tier in enumerate(value):
        if isinstance(tier, (str, bytes)) or not hasattr(tier, "__iter__"):
            raise TypeError(
                f"{name} must be a list of tiers, each a list of column names; "
                f"its tier {t} is {tier!r} (write [{tier!r}] for a tier of one)"
            )
        for v in tier:
            try:
                i = index[v]
            except (KeyError, TypeError):
                raise ValueError(
                    f"{name} names {v!r}, which is not a column of X; the "
                    f"columns are {list(index)!r}"
                ) from None
            if i in tier_of:
                raise ValueError(
                    f"{name} places {v!r} in tiers {tier_of[i]} and {t}: each "
                    "variable belongs to one tier"
                )
            tier_of[i] = t
    for x, tx in tier_of.items():
        for y, ty in tier_of.items():
            forbidden[x, y] = tx > ty
    return forbidden


#: The attributes of pgmpy's ``ExpertKnowledge`` (and keys of a dict) that
#: :func:`expert_parts` reads, with their names among the learners' parameters.
EXPERT_KEYS = {
    "forbidden_edges": "black_list",
    "required_edges": "fixed_edges",
    "search_space": "white_list",
    "temporal_order": "temporal_order",
}


def expert_parts(value) -> dict:
    """pgmpy's ``ExpertKnowledge`` (or a dict of its keys) as a dict from
    :data:`EXPERT_KEYS` to the values given; empty parts (pgmpy's defaults:
    empty sets, a temporal order of one empty tier) are left out. The value
    is read, never changed."""
    if value is None:
        return {}
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(EXPERT_KEYS), key=repr)
        if unknown:
            raise ValueError(
                f"expert_knowledge has unknown keys {unknown!r}; its keys are "
                f"{sorted(EXPERT_KEYS)!r} (pgmpy's ExpertKnowledge)"
            )
        parts = dict(value)
    elif any(hasattr(value, key) for key in EXPERT_KEYS):
        parts = {key: getattr(value, key, None) for key in EXPERT_KEYS}
    else:
        raise TypeError(
            "expert_knowledge must be pgmpy's ExpertKnowledge or a dict with keys "
            f"{sorted(EXPERT_KEYS)!r}, got {type(value).__name__}"
        )
    out = {}
    for key, part in parts.items():
        if part is None:
            continue
        if key == "temporal_order":
            if all(not len(tier) for tier in part):
                continue
        elif not len(part):
            continue
        out[key] = part
    return out
