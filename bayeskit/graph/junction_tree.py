"""Junction trees: moralise, triangulate (min-fill), clique tree, calibrate.

Exact inference on any Bayesian network is belief propagation on a tree whose
nodes are sets of variables. The construction has four steps:

1. **moralise** the DAG (:meth:`DAG.moral_graph`): marry the parents of every
   node and drop the directions, so that every family is a clique;
2. **triangulate** the moral graph by eliminating its nodes one by one in the
   greedy *min-fill* order (:func:`min_fill_order`), adding the fill edges
   that make the graph chordal;
3. take the **maximal cliques** of the chordal graph (:func:`maximal_cliques`);
4. join them by a **maximum-weight spanning tree** on separator sizes
   (:func:`maximum_spanning_tree`), which has the running intersection
   property: the cliques that hold a variable form a connected subtree.

:class:`JunctionTree` is the result. Its calibration is Shafer-Shenoy message
passing in log space with a :class:`~bayeskit.graph.Semiring` (sum-product
for marginals and the log partition function, max-product for the most
probable assignment with traceback). Every message carries a leading batch
axis, so the evidence of ``n`` rows propagates in one pass.
``CalibrationPlan`` is the schedule compiled once for given factor
scopes; it runs on raw log arrays and is what estimators call on their hot
path. A tree built once serves every pattern of evidence:
:meth:`JunctionTree.span` finds the part of it that reaches the observed
variables, :meth:`JunctionTree.restrict` takes them out of that part, and
:meth:`CalibrationPlan.message` gives the messages into it from the rest,
which hold no evidence.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .._jit import njit
from .dag import DAG
from .factor import LogFactor
from .semiring import MAX_PRODUCT, SUM_PRODUCT, Semiring, SumProduct
from .tree import TreeMAP

__all__ = [
    "CalibrationPlan",
    "JunctionTree",
    "JunctionTreeCalibration",
    "maximal_cliques",
    "maximum_spanning_tree",
    "min_fill_order",
    "triangulate",
]

Node = Hashable
Adjacency = Mapping[Node, Iterable[Node]]


# ---------------------------------------------------------------------------
# Triangulation


def _copy_adjacency(adjacency: Adjacency) -> dict[Node, set[Node]]:
    """A mutable, checked copy: symmetric, no self-loop, no unknown node."""
    adj = {node: set(nbs) for node, nbs in adjacency.items()}
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

    >>> from bayeskit.graph.junction_tree import min_fill_order
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
    out = []
    for node in nodes:
        if node not in cardinalities:
            raise ValueError(f"cardinalities has no entry for node {node!r}")
        k = int(cardinalities[node])
        if k < 1:
            raise ValueError(f"cardinality of {node!r} must be positive, got {k}")
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
    out = _elimination_kernel(
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


def maximum_spanning_tree(
    n_nodes: int, weighted_edges: Iterable[tuple[int, int, float]]
) -> list[tuple[int, int]]:
    """A maximum-weight spanning forest (Kruskal's algorithm).

    Parameters
    ----------
    n_nodes : int
        Nodes are ``0 .. n_nodes - 1``.
    weighted_edges : iterable of (i, j, weight)
        Candidate edges. Only these can be chosen, so nodes joined by no
        candidate path end up in different trees of the forest.

    Returns
    -------
    edges : list of (i, j)
        The chosen edges, heaviest first; ties go to the edge listed first.
        Their total weight is the largest of all spanning forests of the
        candidate graph.

    Examples
    --------
    >>> from bayeskit.graph.junction_tree import maximum_spanning_tree
    >>> maximum_spanning_tree(3, [(0, 1, 1.0), (1, 2, 3.0), (0, 2, 2.0)])
    [(1, 2), (0, 2)]
    """
    candidates = []
    for i, j, w in weighted_edges:
        i, j = int(i), int(j)
        if not (0 <= i < n_nodes and 0 <= j < n_nodes) or i == j:
            raise ValueError(f"edge ({i}, {j}) is not between two of {n_nodes} nodes")
        candidates.append((i, j, float(w)))
    return _kruskal(n_nodes, candidates)


def _kruskal(n_nodes: int, candidates: list[tuple]) -> list[tuple[int, int]]:
    """Kruskal on checked (i, j, weight) edges; ties go to the edge listed first."""
    parent = list(range(n_nodes))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    chosen = []
    for i, j, _ in sorted(candidates, key=lambda e: -e[2]):  # stable
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[ri] = rj
            chosen.append((i, j))
    return chosen


# ---------------------------------------------------------------------------
# The tree


class JunctionTree:
    """A clique tree (or forest) with the running intersection property.

    Parameters
    ----------
    cliques : sequence of iterable of hashable
        The variables of every clique. A clique given as a sequence keeps its
        order, which is the axis order of that clique's tables; a set is laid
        out in its iteration order.
    edges : sequence of (int, int), default=()
        Undirected edges between clique indices. They must form a forest, and
        the cliques that contain any one variable must form a connected part
        of it (the running intersection property). Cliques of disconnected
        parts of a network are simply not joined.

    Attributes
    ----------
    cliques : list of frozenset
        The variables of every clique.
    edges : list of (int, int)
        The edges between cliques.
    separators : list of frozenset
        ``cliques[i] & cliques[j]`` for every edge ``(i, j)``.
    variables : tuple
        Every variable once, in order of first appearance in ``cliques``.
    elimination_order : list or None
        The order that triangulated the graph, for trees built by
        :meth:`from_graph` or :meth:`from_dag`.
    family_homes : list of int or None
        For trees built by :meth:`from_dag`: for every node of the DAG (in
        its order), a clique holding the node and its parents, the first of
        those with the fewest table entries (with the cardinalities given, or
        two states per node). It is where ``CalibrationPlan`` puts the
        node's conditional probability table by default.

    See Also
    --------
    DAG.moral_graph : The graph a Bayesian network's tree is built from.
    TreeBP : Belief propagation on a tree of single variables.

    Notes
    -----
    Calibration is Shafer-Shenoy message passing: the message from clique
    :math:`i` to its neighbour :math:`j` is

    .. math::

        \\mu_{i \\to j}(s_{ij}) = \\bigoplus_{c_i \\setminus s_{ij}}
            \\psi_i(c_i) \\prod_{k \\in N(i) \\setminus j} \\mu_{k \\to i}(s_{ki}),

    where :math:`\\psi_i` is the product of the factors assigned to clique
    :math:`i` and :math:`\\oplus` is the semiring's elimination (a sum for
    marginals, a max for the most probable assignment). Everything is in log
    space, where products are sums; no message is ever divided, so zero
    potentials stay ``-inf`` and never become NaN. After a pass from the
    leaves to a root and back, the belief of every clique is its (unnormalised)
    marginal.

    References
    ----------
    .. [1] S. L. Lauritzen and D. J. Spiegelhalter, "Local computations with
       probabilities on graphical structures and their application to expert
       systems", JRSS B, 50(2), 1988.
    .. [2] G. Shafer and P. P. Shenoy, "Probability propagation", Annals of
       Mathematics and Artificial Intelligence, 2, 1990.
    .. [3] D. Koller and N. Friedman, "Probabilistic Graphical Models", MIT
       Press, 2009, chapters 9-10 (min-fill: section 9.4.3.2).

    Examples
    --------
    The network ``P(A) P(B | A) P(C | A) P(D | B, C)``: moralising marries B
    and C, and the tree has two cliques.

    >>> import numpy as np
    >>> from bayeskit.graph import DAG, LogFactor
    >>> from bayeskit.graph.junction_tree import JunctionTree
    >>> dag = DAG([("A", "B"), ("A", "C"), ("B", "D"), ("C", "D")])
    >>> tree = JunctionTree.from_dag(dag)
    >>> [sorted(c) for c in tree.cliques], tree.edges
    ([['A', 'B', 'C'], ['B', 'C', 'D']], [(0, 1)])
    >>> cpts = [
    ...     LogFactor.from_probabilities(["A"], [2], [0.6, 0.4]),
    ...     LogFactor.from_probabilities(["A", "B"], [2, 2], [[0.7, 0.3], [0.2, 0.8]]),
    ...     LogFactor.from_probabilities(["A", "C"], [2, 2], [[0.9, 0.1], [0.5, 0.5]]),
    ...     LogFactor.from_probabilities(
    ...         ["B", "C", "D"], [2, 2, 2],
    ...         [[[0.99, 0.01], [0.4, 0.6]], [[0.3, 0.7], [0.05, 0.95]]]),
    ... ]

    Evidence D = 1 is one more factor, an indicator:

    >>> d_is_1 = LogFactor.from_probabilities(["D"], [2], [0.0, 1.0])
    >>> cal = tree.calibrate([*cpts, d_is_1])
    >>> np.exp(cal.marginal(["A"]).log_values).round(4)
    array([0.3561, 0.6439])
    >>> tree.max_product([*cpts, d_is_1]).assignment  # A, B, C, D
    array([[1, 1, 1, 1]])
    """

    def __init__(
        self,
        cliques: Sequence[Iterable[Node]],
        edges: Sequence[tuple[int, int]] = (),
    ) -> None:
        layouts = []
        for i, clique in enumerate(cliques):
            if isinstance(clique, (str, bytes)):
                raise TypeError(
                    f"clique {i} is a string; give an iterable of variables"
                )
            layout = tuple(clique)
            if not layout:
                raise ValueError(f"clique {i} is empty")
            if len(set(layout)) != len(layout):
                raise ValueError(f"clique {i} lists a variable twice: {layout!r}")
            layouts.append(layout)
        n = len(layouts)
        edge_list: list[tuple[int, int]] = []
        parent = list(range(n))

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for edge in edges:
            i, j = (int(e) for e in edge)
            if not (0 <= i < n and 0 <= j < n) or i == j:
                raise ValueError(f"edge {edge!r} does not join two of the {n} cliques")
            ri, rj = find(i), find(j)
            if ri == rj:
                raise ValueError(
                    f"edge ({i}, {j}) closes a cycle: the edges must form a forest"
                )
            parent[ri] = rj
            edge_list.append((i, j))
        self._setup(layouts, edge_list)
        self._check_running_intersection()

    @classmethod
    def _trusted(cls, layouts: list[tuple], edges: list[tuple[int, int]]):
        """A tree from parts known to be valid: no checks."""
        tree = cls.__new__(cls)
        tree._setup(layouts, edges)
        return tree

    def _setup(self, layouts: list[tuple], edges: list[tuple[int, int]]) -> None:
        n = len(layouts)
        self._layout: list[tuple] = layouts
        self.cliques: list[frozenset] = [frozenset(c) for c in layouts]
        self.edges: list[tuple[int, int]] = edges
        self._separators: list[frozenset] | None = None
        self._holders_of: dict | None = None
        self.variables: tuple = tuple(dict.fromkeys(itertools.chain(*layouts)))
        self.elimination_order: list | None = None
        self.family_homes: list | None = None
        neighbours: list[list[int]] = [[] for _ in range(n)]
        for i, j in edges:
            neighbours[i].append(j)
            neighbours[j].append(i)
        # Tuples of numbers: kept by every compiled pattern, and tuples of
        # untracked objects are soon left alone by the garbage collector.
        self._neighbours = [tuple(nbs) for nbs in neighbours]
        # Components, each in increasing order, ordered by their first clique.
        component_of = [-1] * n
        components: list[list[int]] = []
        for i in range(n):
            if component_of[i] < 0:
                component_of[i] = len(components)
                members = [i]
                for c in members:
                    for nb in neighbours[c]:
                        if component_of[nb] < 0:
                            component_of[nb] = component_of[i]
                            members.append(nb)
                components.append(tuple(sorted(members)))
        self._components: list[tuple[int, ...]] = components
        self._component_of: list[int] = component_of
        self._plans: dict = {}
        self._rooted: dict = {}
        # Message layouts, shared with the trees restricted from this one.
        self._edge_infos: dict = {}

    def _check_running_intersection(self) -> None:
        holders = self._holders
        n_edges = dict.fromkeys(self.variables, 0)
        for sep in self.separators:
            for v in sep:
                n_edges[v] += 1
        for v, cl in holders.items():
            if n_edges[v] != len(cl) - 1:
                raise ValueError(
                    f"the cliques holding variable {v!r} ({cl}) are not connected "
                    "in the tree: the running intersection property fails"
                )

    @classmethod
    def from_graph(
        cls,
        adjacency: Adjacency,
        cardinalities: Mapping[Node, int] | None = None,
        order: Sequence[Node] | None = None,
    ) -> JunctionTree:
        """The junction tree of an undirected graph.

        Parameters
        ----------
        adjacency : mapping of node -> iterable of nodes
            A symmetric undirected graph; every node becomes a variable.
        cardinalities : mapping of node -> int, default=None
            Numbers of states, used by min-fill to break ties towards small
            tables.
        order : sequence of hashable, default=None
            An elimination order to use instead of min-fill.

        Returns
        -------
        JunctionTree
            Maximal cliques of the triangulated graph, joined by a
            maximum-weight spanning forest on separator sizes.
        """
        nodes, elim = _elimination_game(adjacency, order, cardinalities)
        return cls._from_elimination(nodes, elim)

    @classmethod
    def _from_elimination(cls, nodes: list, elim: _Elimination) -> JunctionTree:
        # A maximum spanning forest of the maximal cliques of a chordal graph
        # on separator sizes is a junction tree: no need to check it.
        layouts = [tuple(map(nodes.__getitem__, c)) for c in elim.cliques]
        tree = cls._trusted(layouts, elim.edges)
        tree.elimination_order = [nodes[i] for i in elim.order]
        return tree

    @classmethod
    def from_dag(
        cls, dag: DAG, cardinalities: Mapping[Node, int] | None = None
    ) -> JunctionTree:
        """The junction tree of a Bayesian network's DAG (of its moral graph).

        Parameters
        ----------
        dag : DAG
        cardinalities : mapping of node -> int, default=None
            As :meth:`from_graph`.

        Returns
        -------
        JunctionTree
            Every family (a node and its parents) lies in some clique, so
            every conditional probability table can be assigned to one.
        """
        nodes = list(dag.nodes)
        index = {node: i for i, node in enumerate(nodes)}
        groups: list[int] = []
        offsets = [0]
        parents = dag._parents
        for node in nodes:  # moralising makes every family a clique
            groups.append(index[node])
            groups += map(index.__getitem__, parents[node])
            offsets.append(len(groups))
        elim = _eliminate(len(nodes), groups, offsets, _cards_of(nodes, cardinalities))
        tree = cls._from_elimination(nodes, elim)
        tree.family_homes = elim.homes
        return tree

    @property
    def _holders(self) -> dict:
        """The cliques holding every variable, in increasing order."""
        if self._holders_of is None:
            holders: dict = {}
            for i, layout in enumerate(self._layout):
                for v in layout:
                    holders.setdefault(v, []).append(i)
            self._holders_of = {v: tuple(cl) for v, cl in holders.items()}
        return self._holders_of

    @property
    def separators(self) -> list[frozenset]:
        """``cliques[i] & cliques[j]`` for every edge ``(i, j)``."""
        if self._separators is None:
            cl = self.cliques
            self._separators = [cl[i] & cl[j] for i, j in self.edges]
        return self._separators

    @property
    def width(self) -> int:
        """Size of the largest clique minus one (the treewidth of this tree)."""
        return max((len(c) for c in self.cliques), default=0) - 1

    @property
    def layouts(self) -> list[tuple]:
        """The variables of every clique, in the axis order of its tables."""
        return list(self._layout)

    def neighbours(self, clique: int) -> list[int]:
        """The cliques joined to ``clique`` by an edge."""
        return list(self._neighbours[clique])

    def __repr__(self) -> str:
        cl = ", ".join("{" + ", ".join(map(str, c)) + "}" for c in self._layout)
        return f"JunctionTree(cliques=[{cl}], edges={self.edges})"

    def _rooted_at(self, root: int) -> tuple[list, list]:
        """Parent and depth of every clique of ``root``'s component (None elsewhere)."""
        hit = self._rooted.get(root)
        if hit is None:
            n = len(self._layout)
            parent: list = [None] * n
            depth: list = [None] * n
            depth[root] = 0
            queue = [root]
            for c in queue:
                for nb in self._neighbours[c]:
                    if depth[nb] is None:
                        parent[nb], depth[nb] = c, depth[c] + 1
                        queue.append(nb)
            hit = self._rooted[root] = (parent, depth)
        return hit

    def span(self, variables: Iterable[Node], root: int | None = None) -> list[int]:
        """The smallest subtree that contains ``root`` and reaches ``variables``.

        Parameters
        ----------
        variables : iterable of hashable
            Variables of the tree.
        root : int, default=None
            A clique the subtree must contain.

        Returns
        -------
        cliques : list of int
            In increasing order: ``root`` and, for every variable, the path from
            ``root`` to the nearest clique that holds it. In a forest, the
            variables of a component without ``root`` are reached from the
            first clique holding the first of them.

        Notes
        -----
        A variable held beyond an edge that leaves the span is on that edge's
        separator (the cliques holding it are connected): the message across
        the edge sums over none of ``variables``. With ``variables`` the
        observed ones, such a message can be computed without the evidence
        and reduced by it afterwards.

        Examples
        --------
        >>> from bayeskit.graph.junction_tree import JunctionTree
        >>> cliques = [("A", "B"), ("B", "C"), ("C", "D")]
        >>> chain = JunctionTree(cliques, [(0, 1), (1, 2)])
        >>> chain.span(["C"], root=0), chain.span(["A", "D"])
        ([0, 1], [0, 1, 2])
        """
        roots: dict = {}
        chosen: set = set()
        if root is not None:
            roots[self._component_of[root]] = root
            chosen.add(root)
        for v in variables:
            holding = self._holders[v]
            r = roots.setdefault(self._component_of[holding[0]], holding[0])
            chosen.add(r)
            parent, depth = self._rooted_at(r)
            c = min(holding, key=depth.__getitem__)
            while c not in chosen:
                chosen.add(c)
                c = parent[c]
        return sorted(chosen)

    def restrict(
        self, cliques: Iterable[int], removed: Iterable[Node] = ()
    ) -> tuple[JunctionTree, dict]:
        """The tree of some cliques, with some variables taken out of them.

        Parameters
        ----------
        cliques : iterable of int
            Cliques forming a connected part of each component of the tree,
            such as a :meth:`span`.
        removed : iterable of hashable, default=()
            Variables to take out of every clique, such as observed ones.

        Returns
        -------
        tree : JunctionTree
            The cliques without the removed variables, in the order given; a
            clique left with no variables, or with variables that a neighbour
            holds too, is merged into that neighbour, and a clique left empty
            with no neighbour is dropped. It has the running intersection
            property.
        index : dict of int to int or None
            For every given clique, the clique of ``tree`` that holds what is
            left of it (``None`` for a dropped clique).
        """
        removed = set(removed)
        members = list(dict.fromkeys(int(c) for c in cliques))
        layout = {
            c: tuple(v for v in self._layout[c] if v not in removed) for c in members
        }
        rep = {c: c for c in members}

        def find(c: int) -> int:
            while rep[c] != c:
                rep[c] = rep[rep[c]]
                c = rep[c]
            return c

        edges = [(a, b) for a, b in self.edges if a in layout and b in layout]
        for a, b in edges:
            ra, rb = find(a), find(b)
            if layout[ra] == layout[rb] or set(layout[ra]) <= set(layout[rb]):
                rep[ra] = rb
            elif set(layout[rb]) <= set(layout[ra]):
                rep[rb] = ra
        kept = [c for c in members if find(c) == c and layout[c]]
        local = {c: i for i, c in enumerate(kept)}
        tree_edges = []
        for a, b in edges:
            ra, rb = find(a), find(b)
            if ra != rb:
                tree_edges.append((local[ra], local[rb]))
        tree = JunctionTree._trusted([layout[c] for c in kept], tree_edges)
        tree._edge_infos = self._edge_infos
        return tree, {c: local.get(find(c)) for c in members}

    def clique_containing(self, variables: Iterable[Node]) -> int:
        """Index of a smallest clique that contains every one of ``variables``.

        Raises
        ------
        ValueError
            If no clique holds them all (they do not form a clique of the
            triangulated graph).
        """
        wanted = set(variables)
        best = None
        candidates = (
            self._holders.get(next(iter(wanted)), ())
            if wanted
            else range(len(self.cliques))
        )
        for i in candidates:
            clique = self.cliques[i]
            if wanted <= clique and (
                best is None or len(clique) < len(self.cliques[best])
            ):
                best = i
        if best is None:
            raise ValueError(
                f"no clique contains all of {sorted(map(repr, wanted))}; build the "
                "tree from a graph in which they are joined"
            )
        return best

    # -- calibration on factors -------------------------------------------
    def plan(
        self,
        scopes: Sequence[Sequence[Node]],
        cardinalities: Mapping[Node, int],
        static: Sequence[bool] | None = None,
        homes: Sequence[int] | None = None,
    ) -> CalibrationPlan:
        """The message schedule for factors of these scopes.

        See ``CalibrationPlan`` for the parameters.
        """
        return CalibrationPlan(self, scopes, cardinalities, static, homes)

    def _factor_plan(self, factors: Sequence[LogFactor]):
        cards: dict = {}
        for f in factors:
            for v, k in zip(f.variables, f.cardinalities):
                if cards.setdefault(v, k) != k:
                    raise ValueError(
                        f"variable {v!r} has {cards[v]} states in one factor and "
                        f"{k} in another"
                    )
        missing = [v for v in self.variables if v not in cards]
        if missing:
            raise ValueError(
                f"no factor mentions variables {missing!r}: their number of states "
                "is unknown (add a factor of log-potentials 0 over each of them)"
            )
        key = tuple((f.variables, f.cardinalities) for f in factors)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = CalibrationPlan(
                self, [f.variables for f in factors], cards
            )
        sizes = {f.n_batch for f in factors if f.batched}
        if len(sizes) > 1:
            raise ValueError(f"batched factors have different batch sizes {sizes}")
        n = sizes.pop() if sizes else None
        arrays = [f.log_values if f.batched else f.log_values[None] for f in factors]
        return plan, arrays, n

    def calibrate(
        self, factors: Sequence[LogFactor], semiring: Semiring = SUM_PRODUCT
    ) -> JunctionTreeCalibration:
        """Calibrate the tree: a pass from the leaves to the roots and back.

        Parameters
        ----------
        factors : sequence of LogFactor
            The potentials, such as conditional probability tables reduced by
            evidence. Each goes to a smallest clique that contains its scope; a
            factor over no variable (a per-row constant) goes to the log
            partition function. Batched factors (one table per row of
            evidence) make the whole calibration batched.
        semiring : Semiring, default=SUM_PRODUCT
            ``SUM_PRODUCT`` for marginals, ``MAX_PRODUCT`` for max-marginals.

        Returns
        -------
        JunctionTreeCalibration
        """
        plan, arrays, n = self._factor_plan(factors)
        beliefs, log_z = plan.calibrate(arrays, semiring, n=n)
        batched = n is not None
        out = []
        for layout, b in zip(self._layout, beliefs):
            cards = tuple(plan.cardinalities[v] for v in layout)
            if batched:
                values = np.broadcast_to(b, (n, *cards)).copy()
            else:
                values = np.array(b[0])
            out.append(LogFactor._trusted(layout, cards, values))
        return JunctionTreeCalibration(
            self, out, log_z if batched else float(log_z[0]), semiring
        )

    def max_product(self, factors: Sequence[LogFactor]) -> TreeMAP:
        """The most probable joint assignment of every variable, per row.

        Parameters
        ----------
        factors : sequence of LogFactor
            As :meth:`calibrate`.

        Returns
        -------
        TreeMAP
            ``assignment`` of shape ``(n, n_variables)`` (columns in the order
            of ``variables``; ``n = 1`` without batched factors),
            ``log_score`` of shape ``(n,)``: the log of the unnormalised
            product of the factors at that assignment (``-inf`` when every
            assignment has weight zero). Ties go to the lowest state indices.
        """
        plan, arrays, n = self._factor_plan(factors)
        assignment, log_score = plan.max_product(arrays, n=n)
        return TreeMAP(assignment, log_score, self.variables)


@dataclass(frozen=True)
class JunctionTreeCalibration:
    """A calibrated junction tree: one belief per clique and the log partition.

    Attributes
    ----------
    tree : JunctionTree
    beliefs : list of LogFactor
        The belief of every clique, in log space and unnormalised: for
        sum-product the log of the sum of the product of all factors over
        every variable outside the clique; for max-product the same with max.
        Factors over no variable are left out of them (they are constants).
    log_partition : float or ndarray of shape (n,)
        Sum-product: the log of the sum over all assignments of the product of
        the factors (``log P(evidence)`` for CPTs reduced by evidence).
        Max-product: the log of its largest term.
    semiring : Semiring
    """

    tree: JunctionTree
    beliefs: list
    log_partition: object
    semiring: Semiring

    def marginal(self, variables: Sequence[Node]) -> LogFactor:
        """The marginal over ``variables``, which must share a clique.

        Parameters
        ----------
        variables : sequence of hashable
            Axes of the result, in this order.

        Returns
        -------
        LogFactor
            Sum-product: the normalised posterior marginal (per row when
            batched; a row of zero probability stays ``-inf``). Max-product:
            the log max-marginal, unnormalised.
        """
        variables = tuple(variables)
        belief = self.beliefs[self.tree.clique_containing(variables)]
        others = [v for v in belief.variables if v not in variables]
        factor = belief.marginalize(others, self.semiring).transpose(variables)
        if not isinstance(self.semiring, SumProduct):
            return factor
        return factor.normalize()[0]


# ---------------------------------------------------------------------------
# The compiled schedule


def _reduce(semiring: Semiring, values: np.ndarray, axes: tuple) -> np.ndarray:
    """``semiring.eliminate`` of ``axes``, with a lean path for sum-product.

    Messages are small arrays, where numpy's own reductions cost less than the
    call overhead of the row kernels behind ``logsumexp``; the result is the
    same: shifted by the maximum, and ``-inf`` (never NaN) where all is ``-inf``.
    """
    if type(semiring) is not SumProduct:
        return semiring.eliminate(values, axes)
    top = values.max(axis=axes, keepdims=True)
    finite = np.isfinite(top)
    if finite.all():
        out = np.log(np.exp(values - top).sum(axis=axes, keepdims=True)) + top
    else:
        top = np.where(finite, top, 0.0)
        with np.errstate(divide="ignore"):
            out = np.log(np.exp(values - top).sum(axis=axes, keepdims=True)) + top
    return out.squeeze(axis=axes)


class _EdgeInfo:
    """How a message from clique ``c`` becomes an array in clique ``d``'s layout."""

    __slots__ = (
        "elim_axes",  # axes of c's belief (batch axis 0) summed or maximised out
        "elim_cards",
        "elim_vars",  # the eliminated variables in c's order
        "perm",  # separator order of c -> order of d (None: identity)
        "sep_cards_c",  # separator cardinalities in c's order
        "sep_first",  # transposition of c's belief: separator axes, then the rest
        "sep_vars_c",  # separator variables in c's order
        "shape_in_d",  # d's layout with 1 on every axis outside the separator
    )

    def __init__(self, lay_c: tuple, lay_d: tuple, cards: Mapping) -> None:
        in_d = set(lay_d)
        sep_c: list = []
        sep_axes: list = []
        elim_vars: list = []
        elim_axes: list = []
        for axis, v in enumerate(lay_c, 1):
            if v in in_d:
                sep_c.append(v)
                sep_axes.append(axis)
            else:
                elim_vars.append(v)
                elim_axes.append(axis)
        sep = set(sep_c)
        sep_d = [v for v in lay_d if v in sep]
        self.sep_vars_c = tuple(sep_c)
        self.elim_vars = tuple(elim_vars)
        self.elim_axes = tuple(elim_axes)
        self.perm = (
            None if sep_d == sep_c else (0, *(1 + sep_c.index(v) for v in sep_d))
        )
        self.sep_first = (0, *sep_axes, *elim_axes)
        self.sep_cards_c = tuple(cards[v] for v in sep_c)
        self.elim_cards = tuple(cards[v] for v in elim_vars)
        self.shape_in_d = tuple(cards[v] if v in sep else 1 for v in lay_d)


class CalibrationPlan:
    """The message schedule of a junction tree for factors of given scopes.

    Compiled once (which factor goes to which clique, how every message is
    eliminated and laid out), a plan runs on raw log arrays; estimators keep
    plans for the patterns of evidence they meet and call them on their hot
    path. Everything has a leading batch axis of size 1 or ``n``.

    Parameters
    ----------
    tree : JunctionTree
    scopes : sequence of sequence of hashable
        The variables of every factor, in the axis order of its array. An
        empty scope is a per-row constant added to the log partition.
    cardinalities : mapping of node -> int
        Number of states of every variable of the tree.
    static : sequence of bool, default=None
        For every factor, whether its values are the same in every call (no
        evidence in it). A message that depends on static factors only is
        computed once and reused.
    homes : sequence of int, default=None
        For every factor, the clique it goes to, which must contain its scope
        (ignored for an empty scope). ``None`` puts each factor in a smallest
        clique (fewest table entries) that contains its scope.

    Raises
    ------
    ValueError
        If no clique contains the scope of some factor, or its home does not.

    Attributes
    ----------
    homes : list of int or None
        The clique of every factor (``None`` for a constant).

    Notes
    -----
    Arrays returned by the methods may share memory with the messages the plan
    keeps (those of static factors): treat them as read-only.
    """

    def __init__(
        self,
        tree: JunctionTree,
        scopes: Sequence[Sequence[Node]],
        cardinalities: Mapping[Node, int],
        static: Sequence[bool] | None = None,
        homes: Sequence[int] | None = None,
    ) -> None:
        self.tree = tree
        self.scopes = [tuple(s) for s in scopes]
        self.cardinalities = {v: int(cardinalities[v]) for v in tree.variables}
        for scope in self.scopes:
            for v in scope:
                if v not in self.cardinalities:
                    raise ValueError(
                        f"a factor is over variable {v!r}, which is in no clique"
                    )
        layouts = tree._layout
        card = self.cardinalities.__getitem__
        self._cards = [tuple(map(card, lay)) for lay in layouts]
        n_cliques = len(layouts)
        static = [False] * len(self.scopes) if static is None else list(static)
        if len(static) != len(self.scopes):
            raise ValueError(
                f"static has {len(static)} entries for {len(scopes)} scopes"
            )

        # Factor -> clique: the smallest clique (fewest table entries) holding it.
        size = [math.prod(c) for c in self._cards] if homes is None else []
        self._assigned: list[list[int]] = [[] for _ in range(n_cliques)]
        self._constants: list[int] = []
        self.homes: list[int | None] = [None] * len(self.scopes)
        clique_static = [True] * n_cliques
        for f, scope in enumerate(self.scopes):
            if not scope:
                self._constants.append(f)
                continue
            if homes is not None:
                c = int(homes[f])
                if not tree.cliques[c].issuperset(scope):
                    raise ValueError(
                        f"factor {f} over {scope!r} is sent to clique {c}, which "
                        "does not contain its scope"
                    )
            else:
                holders = [
                    c
                    for c in tree._holders.get(scope[0], ())
                    if tree.cliques[c].issuperset(scope)
                ]
                if not holders:
                    raise ValueError(
                        f"no clique contains the scope {scope!r} of factor {f}: "
                        "the tree must be built from a graph in which its "
                        "variables are joined"
                    )
                c = min(holders, key=lambda h: (size[h], h))
            self.homes[f] = c
            self._assigned[c].append(f)
            clique_static[c] = clique_static[c] and static[f]
        self._assigned = [tuple(fs) for fs in self._assigned]

        # How factors are laid out in their cliques, message layouts and static
        # flags of directed edges: made when first used.
        self._clique_static = clique_static
        self._placed: dict[int, tuple] = {}
        self._edge: dict[tuple[int, int], _EdgeInfo] = {}
        self._static_edge: dict[tuple[int, int], bool] = {}
        self._cache: dict = {}
        self._schedules: dict = {}
        self._zeros: dict = {}

    def _place(self, c: int) -> tuple[tuple[int, tuple | None, tuple], ...]:
        """(factor, transposition into the clique's order, shape) per factor of c."""
        layout = self.tree._layout[c]
        out = []
        for f in self._assigned[c]:
            scope = self.scopes[f]
            perm = tuple(scope.index(v) for v in layout if v in scope)
            perm = (
                None
                if perm == tuple(range(len(scope)))
                else (0, *(1 + p for p in perm))
            )
            shape = tuple(self.cardinalities[v] if v in scope else 1 for v in layout)
            out.append((f, perm, shape))
        return tuple(out)

    def _info(self, c: int, d: int) -> _EdgeInfo:
        info = self._edge.get((c, d))
        if info is None:
            layouts = self.tree._layout
            key = (layouts[c], layouts[d], self._cards[c])
            shared = self.tree._edge_infos
            info = shared.get(key)
            if info is None:
                info = shared[key] = _EdgeInfo(
                    layouts[c], layouts[d], self.cardinalities
                )
            self._edge[(c, d)] = info
        return info

    def _static(self, c: int, d: int) -> bool:
        """Whether the message c -> d depends on static factors only."""
        flag = self._static_edge.get((c, d))
        if flag is None:
            flag = self._clique_static[c] and all(
                self._static(k, c) for k in self.tree._neighbours[c] if k != d
            )
            self._static_edge[(c, d)] = flag
        return flag

    def _schedule(self, root: int | None) -> tuple[tuple, tuple]:
        """(clique, parent) pairs, parents first, and the root of each component."""
        hit = self._schedules.get(root)
        if hit is not None:
            return hit
        order: list[tuple[int, int | None]] = []
        roots = []
        for component in self.tree._components:
            r = root if root is not None and root in component else component[0]
            roots.append(r)
            order.append((r, None))
            head = len(order) - 1
            while head < len(order):
                c, parent = order[head]
                head += 1
                order.extend((nb, c) for nb in self.tree._neighbours[c] if nb != parent)
        hit = self._schedules[root] = (tuple(order), tuple(roots))
        return hit

    # -- running ------------------------------------------------------------
    def _batch_size(self, arrays: Sequence[np.ndarray], n: int | None) -> int:
        if len(arrays) != len(self.scopes):
            raise ValueError(
                f"expected {len(self.scopes)} arrays (one per scope), got {len(arrays)}"
            )
        sizes = {a.shape[0] for a in arrays} - {1}
        if n is not None:
            sizes.add(int(n))
        if len(sizes) > 1:
            raise ValueError(f"the arrays disagree on the batch size: {sorted(sizes)}")
        return sizes.pop() if sizes else 1

    def _potential(self, c: int, arrays, memo: dict) -> np.ndarray:
        psi = memo.get(c)
        if psi is None:
            placed = self._placed.get(c)
            if placed is None:
                placed = self._placed[c] = self._place(c)
            for f, perm, shape in placed:
                a = arrays[f]
                if perm is not None:
                    a = a.transpose(perm)
                a = a.reshape((a.shape[0], *shape))
                psi = a if psi is None else psi + a
            if psi is None or psi.shape[1:] != self._cards[c]:
                zeros = self._zeros.get(c)
                if zeros is None:
                    zeros = self._zeros[c] = np.zeros((1, *self._cards[c]))
                psi = zeros if psi is None else zeros + psi
            memo[c] = psi
        return psi

    def potential(self, c: int, arrays: Sequence[np.ndarray]) -> np.ndarray:
        """The product of the factors that go to clique ``c`` (a sum of logs).

        Parameters
        ----------
        c : int
            A clique.
        arrays : sequence of ndarray
            As :meth:`collect`.

        Returns
        -------
        ndarray of shape (1 or n, *cards of clique c)
            In the layout of ``tree.cliques[c]``; zeros for a clique without
            factors.
        """
        return self._potential(c, arrays, {})

    def _send(self, c, d, arrays, memo, inbox, semiring, argmax=None) -> np.ndarray:
        static = self._static(c, d)
        key = (c, d, semiring, argmax is not None)
        if static:
            hit = self._cache.get(key)
            if hit is not None:
                if argmax is not None:
                    argmax[c] = hit[1]
                return hit[0]
        belief = self._potential(c, arrays, memo)
        for k in self.tree._neighbours[c]:
            if k != d:
                incoming = inbox.get((k, c))  # absent: known to be one
                if incoming is not None:
                    belief = belief + incoming
        info = self._info(c, d)
        arg = None
        if argmax is not None:
            b = belief.transpose(info.sep_first).reshape(
                belief.shape[0], math.prod(info.sep_cards_c), -1
            )
            arg = b.argmax(axis=2)
            out = np.take_along_axis(b, arg[:, :, None], axis=2)
            out = out.reshape((b.shape[0], *info.sep_cards_c))
            argmax[c] = arg
        elif info.elim_axes:
            out = _reduce(semiring, belief, info.elim_axes)
        else:
            out = belief
        if info.perm is not None:
            out = out.transpose(info.perm)
        out = out.reshape((out.shape[0], *info.shape_in_d))
        if static:
            self._cache[key] = (out, arg)
        return out

    def _collect(self, arrays, semiring, root, argmax=None):
        memo: dict = {}
        inbox: dict = {}
        order, roots = self._schedule(root)
        for c, parent in reversed(order):
            if parent is not None:
                inbox[(c, parent)] = self._send(
                    c, parent, arrays, memo, inbox, semiring, argmax
                )
        root_beliefs = {}
        for r in roots:
            belief = self._potential(r, arrays, memo)
            for k in self.tree._neighbours[r]:
                belief = belief + inbox[(k, r)]
            root_beliefs[r] = belief
        return memo, inbox, order, root_beliefs

    def message(
        self,
        c: int,
        d: int,
        arrays: Sequence[np.ndarray],
        semiring: Semiring = SUM_PRODUCT,
        ones: Callable[[int, int], bool] | None = None,
    ) -> np.ndarray:
        """The message from clique ``c`` to its neighbour ``d``.

        It combines the factors of every clique on ``c``'s side of the edge
        and eliminates all of their variables but the separator; a static
        message is computed once and kept.

        Parameters
        ----------
        c, d : int
            Two neighbouring cliques.
        arrays : sequence of ndarray
            As :meth:`collect`.
        semiring : Semiring, default=SUM_PRODUCT
        ones : callable, default=None
            ``ones(k, x)`` is true when the message from ``k`` to ``x`` is known
            to be one everywhere (zero in log space) for ``semiring``, such as
            the sum-product message of a part of a Bayesian network that holds
            the conditional distributions of its own variables only. Such
            messages on ``c``'s side are neither computed nor combined.

        Returns
        -------
        ndarray of shape (1 or n, ...)
            In the layout of clique ``d``, with an axis of length 1 for every
            variable of ``d`` outside the separator.
        """
        if d not in self.tree._neighbours[c]:
            raise ValueError(f"cliques {c} and {d} are not neighbours")
        if self._static(c, d):
            hit = self._cache.get((c, d, semiring, False))
            if hit is not None:
                return hit[0]
        order = [(c, d)]
        head = 0
        while head < len(order):
            x, parent = order[head]
            head += 1
            order.extend(
                (nb, x)
                for nb in self.tree._neighbours[x]
                if nb != parent and not (ones is not None and ones(nb, x))
            )
        memo: dict = {}
        inbox: dict = {}
        for x, parent in reversed(order):
            inbox[(x, parent)] = self._send(x, parent, arrays, memo, inbox, semiring)
        return inbox[(c, d)]

    def _log_partition(self, root_beliefs, semiring, arrays, n) -> np.ndarray:
        total = np.zeros(n)
        for belief in root_beliefs.values():
            flat = belief.reshape(belief.shape[0], -1)
            total = total + _reduce(semiring, flat, (1,))
        for f in self._constants:
            total = total + arrays[f].reshape(-1)
        return total

    def collect(
        self,
        arrays: Sequence[np.ndarray],
        semiring: Semiring = SUM_PRODUCT,
        root: int | None = None,
        n: int | None = None,
    ) -> tuple[np.ndarray | None, np.ndarray]:
        """One pass from the leaves to the roots.

        Parameters
        ----------
        arrays : sequence of ndarray
            The log-values of every factor, shape ``(1 or n, *cards)`` with the
            axes in the order of its scope.
        semiring : Semiring, default=SUM_PRODUCT
        root : int, default=None
            The clique to collect into; its component's messages all flow to
            it. Other components (and ``root=None``) use their first clique.
        n : int, default=None
            Number of rows when no array has more than one.

        Returns
        -------
        belief : ndarray of shape (1 or n, *cards of the root clique) or None
            The root's belief, in the layout of ``tree.cliques[root]``
            (``None`` when ``root`` is None).
        log_partition : ndarray of shape (n,)
            Log partition function (sum-product) or log of the largest term
            (max-product) of all components and constants.
        """
        n = self._batch_size(arrays, n)
        _, _, _, root_beliefs = self._collect(arrays, semiring, root)
        log_z = self._log_partition(root_beliefs, semiring, arrays, n)
        return (None if root is None else root_beliefs[root]), log_z

    def calibrate(
        self,
        arrays: Sequence[np.ndarray],
        semiring: Semiring = SUM_PRODUCT,
        n: int | None = None,
    ) -> tuple[list[np.ndarray], np.ndarray]:
        """Two passes: the belief of every clique and the log partition.

        Parameters are those of :meth:`collect`. Returns the list of clique
        beliefs (each of shape ``(1 or n, *cards)`` in its clique's layout)
        and the log partition of shape ``(n,)``.
        """
        n = self._batch_size(arrays, n)
        memo, inbox, order, root_beliefs = self._collect(arrays, semiring, None)
        for c, parent in order:
            if parent is not None:
                inbox[(parent, c)] = self._send(
                    parent, c, arrays, memo, inbox, semiring
                )
        beliefs = []
        for c in range(len(self._cards)):
            if c in root_beliefs:
                beliefs.append(root_beliefs[c])
                continue
            belief = self._potential(c, arrays, memo)
            for k in self.tree._neighbours[c]:
                belief = belief + inbox[(k, c)]
            beliefs.append(belief)
        return beliefs, self._log_partition(root_beliefs, semiring, arrays, n)

    def max_product(
        self, arrays: Sequence[np.ndarray], n: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The most probable joint assignment, by max-product and traceback.

        Parameters are those of :meth:`collect`. Returns ``assignment`` of
        shape ``(n, n_variables)`` (columns in the order of
        ``tree.variables``) and ``log_score`` of shape ``(n,)``. Ties go to the
        lowest state index (of the joint index of a clique's eliminated
        variables).
        """
        n = self._batch_size(arrays, n)
        argmax: dict = {}
        _, _, order, root_beliefs = self._collect(arrays, MAX_PRODUCT, None, argmax)
        column = {v: i for i, v in enumerate(self.tree.variables)}
        assignment = np.zeros((n, len(column)), dtype=np.intp)
        rows = np.arange(n)
        for r, belief in root_beliefs.items():
            best = belief.reshape(belief.shape[0], -1).argmax(axis=1)
            states = np.unravel_index(best, self._cards[r])
            for v, s in zip(self.tree._layout[r], states):
                assignment[:, column[v]] = s
        for c, parent in order:
            if parent is None:
                continue
            info = self._info(c, parent)
            if not info.elim_vars:
                continue
            if info.sep_vars_c:
                sep = np.ravel_multi_index(
                    tuple(assignment[:, column[v]] for v in info.sep_vars_c),
                    info.sep_cards_c,
                )
            else:
                sep = np.zeros(n, dtype=np.intp)
            table = argmax[c]
            best = table[rows if table.shape[0] == n else 0, sep]
            states = np.unravel_index(best, info.elim_cards)
            for v, s in zip(info.elim_vars, states):
                assignment[:, column[v]] = s
        log_score = self._log_partition(root_beliefs, MAX_PRODUCT, arrays, n)
        return assignment, log_score

    def posterior(
        self,
        arrays: Sequence[np.ndarray],
        variables: Sequence[Node],
        root: int,
        n: int | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The normalised joint marginal of variables that share a clique.

        One sum-product pass into ``root``, then the root's belief summed down
        to ``variables``.

        Parameters
        ----------
        arrays : sequence of ndarray
            As :meth:`collect`.
        variables : sequence of hashable
            Variables of clique ``root``: the axes of the result, in this order.
        root : int
            The clique to collect into.
        n : int, default=None
            Number of rows when no array has more than one.

        Returns
        -------
        log_posterior : ndarray of shape (1 or n, *cards of variables)
            Every row sums to one in probability (a row of zero mass stays
            ``-inf``).
        log_partition : ndarray of shape (n,)
            As :meth:`collect`.
        """
        n = self._batch_size(arrays, n)
        _, _, _, root_beliefs = self._collect(arrays, SUM_PRODUCT, root)
        marginal = self._sum_down(root_beliefs.pop(root), root, variables)
        flat = marginal.reshape(marginal.shape[0], -1)
        norm = _reduce(SUM_PRODUCT, flat, (1,))
        log_z = self._log_partition(root_beliefs, SUM_PRODUCT, arrays, n) + norm
        norm = np.where(np.isfinite(norm), norm, 0.0)  # no mass: stays -inf
        return (flat - norm[:, None]).reshape(marginal.shape), log_z

    def _sum_down(self, belief: np.ndarray, clique: int, variables) -> np.ndarray:
        """A clique belief summed down to ``variables``, in that order."""
        layout = self.tree._layout[clique]
        variables = tuple(variables)
        others = tuple(1 + i for i, v in enumerate(layout) if v not in variables)
        out = _reduce(SUM_PRODUCT, belief, others) if others else belief
        kept = [v for v in layout if v in variables]
        perm = [kept.index(v) for v in variables]
        if perm != list(range(len(perm))):
            out = out.transpose((0, *(1 + p for p in perm)))
        return out

    def normalized_marginal(
        self, belief: np.ndarray, clique: int, variables: Sequence[Node]
    ) -> np.ndarray:
        """Sum a clique belief down to ``variables`` (in that order) and normalise.

        Returns an array of shape ``(1 or n, *cards of variables)`` whose every
        row sums to one in probability (a row of zero mass stays ``-inf``).
        """
        out = self._sum_down(belief, clique, variables)
        flat = out.reshape(out.shape[0], -1)
        norm = _reduce(SUM_PRODUCT, flat, (1,))
        norm = np.where(np.isfinite(norm), norm, 0.0)  # no mass: stays -inf
        return (flat - norm[:, None]).reshape(out.shape)
