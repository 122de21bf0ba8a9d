"""Triangulation: min-fill elimination orders, chordal graphs, maximal cliques.

The second and third steps of building a junction tree (see
:mod:`bayeskit.graph.junction_tree`): eliminate the nodes of an undirected
graph one by one, in the greedy *min-fill* order (:func:`min_fill_order`) or a
given one, adding the fill edges that make it chordal (:func:`triangulate`);
the cliques the elimination creates give the maximal cliques of the chordal
graph (:func:`maximal_cliques`). The elimination game runs in one compiled
kernel, which also joins the maximal cliques by a maximum-weight spanning
forest on separator sizes, the junction tree's edges.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from .._jit import njit, run_small
from ._checks import cardinality, mapping, sequence

__all__ = ["maximal_cliques", "min_fill_order", "triangulate"]

Node = Hashable
Adjacency = Mapping[Node, Iterable[Node]]


# ---------------------------------------------------------------------------
# Triangulation


def _copy_adjacency(adjacency: Adjacency) -> dict[Node, set[Node]]:
    """A mutable, checked copy: symmetric, no self-loop, no unknown node."""
    mapping(adjacency, "adjacency", "node -> iterable of neighbours")
    adj = {
        node: set(sequence(nbs, f"adjacency[{node!r}]", "neighbours"))
        for node, nbs in adjacency.items()
    }
    for node, nbs in adj.items():
        if node in nbs:
            raise ValueError(f"node {node!r} is its own neighbour in adjacency")
        for other in nbs:
            if other not in adj:
                raise ValueError(
                    f"adjacency names node {other!r} as a neighbour of {node!r} "
                    "but has no entry for it"
                )
            if node not in adj[other]:
                raise ValueError(
                    f"adjacency is not symmetric: {other!r} is a neighbour of "
                    f"{node!r} but not the other way round"
                )
    return adj


def min_fill_order(
    adjacency: Adjacency, cardinalities: Mapping[Node, int] | None = None
) -> list[Node]:
    """A greedy elimination order that adds few fill edges (min-fill).

    Parameters
    ----------
    adjacency : mapping of node -> iterable of nodes
        An undirected graph (symmetric neighbour sets), such as the dict
        returned by :meth:`DAG.moral_graph`.
    cardinalities : mapping of node -> int, default=None
        Number of states of every node, used to break ties; ``None`` counts
        every node as binary.

    Returns
    -------
    order : list of hashable
        Every node once. At each step the node whose elimination adds the
        fewest edges between its remaining neighbours goes next; ties go to
        the smallest clique table (product of the cardinalities of the node
        and its neighbours), then to the node given first.

    Examples
    --------
    A four-cycle needs one chord; every node of it adds one edge, so the first
    node goes first:

    >>> from bayeskit.graph.triangulation import min_fill_order
    >>> cycle = {"A": {"B", "D"}, "B": {"A", "C"}, "C": {"B", "D"},
    ...          "D": {"A", "C"}}
    >>> min_fill_order(cycle)
    ['A', 'B', 'C', 'D']
    """
    adj = _copy_adjacency(adjacency)
    nodes = list(adj)
    groups, offsets = _edge_groups(adj, nodes)
    elim = _eliminate(len(nodes), groups, offsets, _cards_of(nodes, cardinalities))
    return [nodes[i] for i in elim.order]


def _cards_of(nodes: list, cardinalities: Mapping[Node, int] | None) -> np.ndarray:
    if cardinalities is None:
        return np.full(len(nodes), 2, dtype=np.int64)
    mapping(cardinalities, "cardinalities", "node -> number of states")
    out = []
    for node in nodes:
        if node not in cardinalities:
            raise ValueError(f"cardinalities has no entry for node {node!r}")
        k = cardinalities[node]
        if type(k) is not int or k < 1:  # a plain positive int passes as it is
            k = cardinality(k, f"cardinalities[{node!r}]")
        out.append(k)
    return np.array(out, dtype=np.int64)


def _edge_groups(adj: Mapping, nodes: list) -> tuple[list[int], list[int]]:
    """Every edge of a checked graph as a group of two positions in ``nodes``."""
    index = {node: i for i, node in enumerate(nodes)}
    flat: list[int] = []
    for i, node in enumerate(nodes):
        for nb in adj[node]:
            j = index[nb]
            if i < j:
                flat += (i, j)
    return flat, list(range(0, len(flat) + 1, 2))


def _positions(order: Sequence[Node], nodes: list) -> list[int]:
    """``order`` as positions in ``nodes``; it must list every node once."""
    index = {node: i for i, node in enumerate(nodes)}
    order = list(order)
    if len(order) != len(nodes) or set(order) != set(nodes):
        raise ValueError(
            "order must list every node of the graph exactly once; got "
            f"{len(order)} entries for {len(nodes)} nodes"
        )
    return [index[node] for node in order]


class _Elimination(NamedTuple):
    order: list  # positions of the nodes, in elimination order
    filled: np.ndarray  # (n, n) bool: the graph with the fill edges
    cliques: list  # maximal cliques (tuples of positions), in elimination order
    edges: list  # a maximum spanning forest of the cliques on separator sizes
    homes: list  # of every group, a smallest clique (fewest entries) holding it


def _eliminate(
    n: int,
    groups: list[int],
    offsets: list[int],
    cards: np.ndarray,
    order: list[int] | None = None,
) -> _Elimination:
    """The elimination game on the graph in which every group is a clique.

    ``groups[offsets[g]:offsets[g + 1]]`` are the positions of group ``g``
    (an edge, or a family of a DAG, which moralising makes a clique).
    ``order=None`` eliminates in min-fill order.
    """
    if n == 0:
        return _Elimination([], np.zeros((0, 0), dtype=bool), [], [], [])
    given = np.array([] if order is None else order, dtype=np.int64)
    kernel = _elimination_kernel
    if n <= _INTERPRET_NODES:
        kernel = functools.partial(run_small, _elimination_kernel)
    out = kernel(
        n,
        np.array(groups, dtype=np.int64),
        np.array(offsets, dtype=np.int64),
        cards,
        np.log(cards),
        given,
    )
    positions, filled, members, bounds, edges, homes = out
    members, bounds = members.tolist(), bounds.tolist()
    cliques = [tuple(members[a:b]) for a, b in itertools.pairwise(bounds)]
    edges = list(map(tuple, edges.tolist()))
    return _Elimination(positions.tolist(), filled, cliques, edges, homes.tolist())


# The kernels. Min-fill scores a node by the missing edges between its
# neighbours and, for ties, the log size of its clique table (rounded, so
# that sums in another order tie), then its position. Eliminating a node
# changes the score of its neighbours (recomputed) and of the nodes outside
# its clique next to both ends of a fill edge (one missing edge fewer) only.
_JIT = {"error_model": "numpy"}

# Graphs of at most this many nodes are eliminated by the kernel's source in
# the interpreter (see bayeskit._jit.run_small): a few milliseconds, where
# compiling the kernel takes seconds in an environment whose cache is empty.
_INTERPRET_NODES = 16


@njit(**_JIT)
def _score(work, log_cards, v, nb):
    """Min-fill's score of ``v``: missing edges between its neighbours, log size."""
    n = work.shape[0]
    k = 0
    weight = log_cards[v]
    for u in range(n):
        if work[v, u]:
            nb[k] = u
            k += 1
            weight += log_cards[u]
    missing = 0
    for s in range(k):
        a = nb[s]
        for t in range(s + 1, k):
            if not work[a, nb[t]]:
                missing += 1
    return missing, round(weight, 9)


@njit(**_JIT)
def _elimination_kernel(n, groups, offsets, cards, log_cards, given):
    """Eliminate in ``given`` order (min-fill's when empty); see ``_eliminate``.

    Returns the order, the filled graph, the maximal cliques (positions, flat,
    with their offsets), the edges of Kruskal's spanning forest and the home
    of every group: a maximal clique holding it with the fewest table entries
    (the first of them).
    """
    work = np.zeros((n, n), np.bool_)
    for g in range(offsets.shape[0] - 1):
        for s in range(offsets[g], offsets[g + 1]):
            for t in range(offsets[g], offsets[g + 1]):
                if groups[s] != groups[t]:
                    work[groups[s], groups[t]] = True
    filled = work.copy()
    choose = given.shape[0] == 0
    alive = np.ones(n, np.bool_)
    order = np.empty(n, np.int64)
    position = np.empty(n, np.int64)
    size = np.empty(n, np.int64)
    cand = np.zeros((n, n), np.bool_)
    fill = np.zeros(n, np.int64)
    weight = np.zeros(n)
    nb = np.empty(n, np.int64)
    scratch = np.empty(n, np.int64)
    if choose:
        for v in range(n):
            fill[v], weight[v] = _score(work, log_cards, v, scratch)
    for step in range(n):
        if choose:
            best = -1
            for v in range(n):
                if alive[v] and (
                    best < 0
                    or fill[v] < fill[best]
                    or (fill[v] == fill[best] and weight[v] < weight[best])
                ):
                    best = v
        else:
            best = given[step]
        order[step] = best
        position[best] = step
        alive[best] = False
        k = 0
        for u in range(n):
            if work[best, u]:
                nb[k] = u
                k += 1
                work[u, best] = False
                work[best, u] = False
                cand[step, u] = True
        cand[step, best] = True
        size[step] = k + 1
        for s in range(k):
            a = nb[s]
            for t in range(s + 1, k):
                b = nb[t]
                if not work[a, b]:
                    work[a, b] = work[b, a] = True
                    filled[a, b] = filled[b, a] = True
                    if choose:  # outside the clique, next to both ends
                        for c in range(n):
                            if (
                                alive[c]
                                and work[c, a]
                                and work[c, b]
                                and not cand[step, c]
                            ):
                                fill[c] -= 1
        if choose:
            for s in range(k):
                a = nb[s]
                fill[a], weight[a] = _score(work, log_cards, a, scratch)
    # A candidate inside an earlier one is that earlier candidate j without
    # its node: the first eliminated of the rest of j has all of that rest in
    # its candidate, so that candidate is maximal unless it is that rest.
    maximal = np.ones(n, np.bool_)
    for j in range(n):
        first = n
        for u in range(n):
            if cand[j, u] and u != order[j] and position[u] < first:
                first = position[u]
        if first < n and size[first] == size[j] - 1:
            maximal[first] = False
    keep = np.flatnonzero(maximal)
    m = keep.shape[0]
    members = np.empty(size[keep].sum(), np.int64)
    bounds = np.zeros(m + 1, np.int64)
    total = 0
    for i in range(m):
        for u in range(n):
            if cand[keep[i], u]:
                members[total] = u
                total += 1
        bounds[i + 1] = total
    n_groups = offsets.shape[0] - 1
    homes = np.empty(n_groups, np.int64)
    entries = np.ones(m, np.int64)
    for i in range(m):
        for s in range(bounds[i], bounds[i + 1]):
            entries[i] *= cards[members[s]]
    for g in range(n_groups):
        home = -1
        for i in range(m):
            inside = True
            for s in range(offsets[g], offsets[g + 1]):
                if not cand[keep[i], groups[s]]:
                    inside = False
                    break
            if inside and (home < 0 or entries[i] < entries[home]):
                home = i
        homes[g] = home
    # Kruskal on separator sizes, ties to the pair listed first.
    shared = np.zeros((m, m), np.int32)
    holders = np.empty(m, np.int64)
    for u in range(n):
        h = 0
        for i in range(m):
            if cand[keep[i], u]:
                holders[h] = i
                h += 1
        for s in range(h):
            for t in range(s + 1, h):
                shared[holders[s], holders[t]] += 1
    n_pairs = 0
    for i in range(m):
        for j in range(i + 1, m):
            if shared[i, j] > 0:
                n_pairs += 1
    pi = np.empty(n_pairs, np.int64)
    pj = np.empty(n_pairs, np.int64)
    pw = np.empty(n_pairs, np.int64)
    q = 0
    for i in range(m):
        for j in range(i + 1, m):
            if shared[i, j] > 0:
                pi[q] = i
                pj[q] = j
                pw[q] = -shared[i, j]
                q += 1
    rank = np.argsort(pw, kind="mergesort")
    parent = np.arange(m)
    edges = np.empty((max(m - 1, 0), 2), np.int64)
    e = 0
    for r in rank:
        i = pi[r]
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        j = pj[r]
        while parent[j] != j:
            parent[j] = parent[parent[j]]
            j = parent[j]
        if i != j:
            parent[i] = j
            edges[e, 0] = pi[r]
            edges[e, 1] = pj[r]
            e += 1
    return order, filled, members, bounds, edges[:e], homes


def triangulate(
    adjacency: Adjacency,
    order: Sequence[Node] | None = None,
    cardinalities: Mapping[Node, int] | None = None,
) -> dict[Node, set[Node]]:
    """Make a graph chordal by eliminating its nodes in ``order``.

    Parameters
    ----------
    adjacency : mapping of node -> iterable of nodes
        An undirected graph.
    order : sequence of hashable, default=None
        The elimination order; ``None`` uses :func:`min_fill_order`.
    cardinalities : mapping of node -> int, default=None
        Passed to :func:`min_fill_order` when ``order`` is None.

    Returns
    -------
    chordal : dict of hashable to set of hashable
        The graph with the fill edges added: eliminating a node joins all of
        its remaining neighbours. Every cycle of four or more nodes of the
        result has a chord, and ``order`` is a perfect elimination order of it.
    """
    nodes, elim = _elimination_game(adjacency, order, cardinalities)
    return {
        node: {nodes[j] for j in np.flatnonzero(row)}
        for node, row in zip(nodes, elim.filled)
    }


def maximal_cliques(
    adjacency: Adjacency,
    order: Sequence[Node] | None = None,
    cardinalities: Mapping[Node, int] | None = None,
) -> list[tuple]:
    """The maximal cliques of the graph triangulated by eliminating in ``order``.

    Parameters
    ----------
    adjacency, order, cardinalities
        As :func:`triangulate`.

    Returns
    -------
    cliques : list of tuple
        Eliminating a node creates the clique of the node and its remaining
        neighbours; the maximal ones among these are the maximal cliques of
        the triangulated graph. They come in elimination order, each with its
        nodes in the order of ``adjacency``. An isolated node is a clique of
        its own.
    """
    nodes, elim = _elimination_game(adjacency, order, cardinalities)
    return [tuple(map(nodes.__getitem__, c)) for c in elim.cliques]


def _elimination_game(
    adjacency: Adjacency, order: Sequence[Node] | None, cardinalities
) -> tuple[list, _Elimination]:
    """Check the graph and run the elimination game (min-fill for no order)."""
    adj = _copy_adjacency(adjacency)
    nodes = list(adj)
    positions = None if order is None else _positions(order, nodes)
    groups, offsets = _edge_groups(adj, nodes)
    cards = _cards_of(nodes, cardinalities if order is None else None)
    return nodes, _eliminate(len(nodes), groups, offsets, cards, positions)
