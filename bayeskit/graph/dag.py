"""Directed acyclic graphs: topological order, moral graph and d-separation.

:class:`DAG` is the structure of a Bayesian network. It holds node labels and
``(parent, child)`` edges, nothing else: no states, no probabilities. The
junction tree is built from its moral graph, CPTs are laid out along its
parents, and conditional independences are read off it by d-separation.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Hashable, Iterable, Mapping, Set

__all__ = ["DAG", "CycleError"]

Node = Hashable


class CycleError(ValueError):
    """The edges given to :class:`DAG` contain a directed cycle.

    Parameters
    ----------
    cycle : sequence of hashable
        The nodes of one directed cycle, in the direction of its edges, each
        node once (the edge from the last node back to the first is implied).

    Attributes
    ----------
    cycle : tuple of hashable
        The nodes of the cycle as given.
    """

    def __init__(self, cycle: Iterable[Node]) -> None:
        self.cycle = tuple(cycle)
        path = " -> ".join(str(node) for node in (*self.cycle, self.cycle[0]))
        super().__init__(f"the edges form a cycle: {path}")

    def __reduce__(self):
        return (type(self), (self.cycle,))


class DAG:
    """A directed acyclic graph over hashable node labels.

    The graph is immutable: it is validated once, when it is built, and every
    query after that is read-only. Nodes keep the order in which they were
    given (first ``nodes``, then any further node in the order it first
    appears in ``edges``); nothing is ever re-sorted, so node labels need not
    be comparable with one another.

    Parameters
    ----------
    edges : iterable of (parent, child) pairs, default=()
        The directed edges. Each edge is a pair (a tuple, a list or any other
        two-element sequence other than a string) of hashable labels.
    nodes : iterable of hashable, default=None
        Nodes in the order they should be kept, typically to add nodes that
        lie on no edge. Nodes that appear in ``edges`` but not here are
        appended after these, in the order they first appear in ``edges``.

    Attributes
    ----------
    nodes : tuple of hashable
        All nodes, in insertion order.
    edges : tuple of (parent, child) tuples
        All edges, in the order they were given.

    Raises
    ------
    ValueError
        If an edge is not a pair, is a self-loop or is listed twice, or if a
        node is listed twice in ``nodes``.
    CycleError
        A subclass of :class:`ValueError`, if the edges form a directed cycle.
        Its message and its ``cycle`` attribute name the nodes of one cycle
        in order.
    TypeError
        If ``nodes`` is a string or a node label is not hashable.

    See Also
    --------
    DAG.is_dseparated : Conditional independence read off the graph.
    DAG.moral_graph : The undirected graph the junction tree is built from.

    Notes
    -----
    A distribution *factorises* according to the DAG when

    .. math::

        P(X_1, \\ldots, X_n) = \\prod_{i=1}^{n} P(X_i \\mid \\mathrm{pa}(X_i)).

    Every such distribution satisfies the conditional independences that
    :meth:`is_dseparated` reports, and for all but a measure-zero set of
    conditional probability tables it satisfies no others.

    :meth:`topological_order` is Kahn's algorithm. Among the nodes whose
    parents have all been placed it always takes the one given first, so the
    order is deterministic, and nodes already given in a topological order
    come out unchanged.

    References
    ----------
    .. [1] A. B. Kahn, "Topological sorting of large networks",
       Communications of the ACM, 5(11), 1962.
    .. [2] S. L. Lauritzen, A. P. Dawid, B. N. Larsen and H.-G. Leimer,
       "Independence properties of directed Markov fields", Networks, 20(5),
       1990.
    .. [3] D. Koller and N. Friedman, "Probabilistic Graphical Models:
       Principles and Techniques", MIT Press, 2009, chapter 3.

    Examples
    --------
    >>> from bayeskit.graph.dag import DAG
    >>> dag = DAG([("X1", "X3"), ("X2", "X3"), ("X3", "X4"), ("X1", "X5")])
    >>> dag.topological_order()
    ('X1', 'X2', 'X3', 'X4', 'X5')
    >>> dag.parents("X3")
    ('X1', 'X2')
    >>> dag.is_dseparated("X1", "X2")
    True
    >>> dag.is_dseparated("X1", "X2", given="X4")
    False
    >>> DAG([("A", "B"), ("B", "C"), ("C", "A")])
    Traceback (most recent call last):
    ...
    bayeskit.graph.dag.CycleError: the edges form a cycle: A -> B -> C -> A
    """

    def __init__(
        self,
        edges: Iterable[tuple[Node, Node]] = (),
        nodes: Iterable[Node] | None = None,
    ) -> None:
        index: dict[Node, int] = {}
        if nodes is not None:
            if isinstance(nodes, (str, bytes)):
                raise TypeError(
                    "nodes must be an iterable of node labels, not a string; "
                    f"use nodes=[{nodes!r}] for a single node"
                )
            if not isinstance(nodes, Iterable):
                raise TypeError(
                    f"nodes must be an iterable of node labels, got {nodes!r}"
                )
            for node in nodes:
                if _add_node(index, node):
                    raise ValueError(f"node {node!r} is listed twice in nodes")

        if isinstance(edges, (str, bytes, Mapping)) or not isinstance(edges, Iterable):
            raise TypeError(
                "edges must be an iterable of (parent, child) pairs, got "
                f"{type(edges).__name__} {edges!r:.60}"
            )
        edge_list: list[tuple[Node, Node]] = []
        seen_edges: set[tuple[Node, Node]] = set()
        for edge in edges:
            parent, child = _as_pair(edge)
            if parent == child:
                raise ValueError(
                    f"self-loop on node {parent!r}: an edge must join two "
                    "different nodes"
                )
            _add_node(index, parent)
            _add_node(index, child)
            if (parent, child) in seen_edges:
                raise ValueError(f"the edge {parent!r} -> {child!r} is listed twice")
            seen_edges.add((parent, child))
            edge_list.append((parent, child))

        self._nodes: tuple[Node, ...] = tuple(index)
        self._index = index
        self._edges: tuple[tuple[Node, Node], ...] = tuple(edge_list)
        parents: dict[Node, list[Node]] = {node: [] for node in self._nodes}
        children: dict[Node, list[Node]] = {node: [] for node in self._nodes}
        for parent, child in self._edges:
            parents[child].append(parent)
            children[parent].append(child)
        self._parents = {node: tuple(p) for node, p in parents.items()}
        self._children = {node: tuple(c) for node, c in children.items()}
        self._order = self._kahn()
        # Bit sets for relevant_evidence, made when first needed.
        self._relevance_bits: tuple | None = None

    # ------------------------------------------------------------------
    # Structure

    @property
    def nodes(self) -> tuple[Node, ...]:
        """All nodes, in insertion order."""
        return self._nodes

    @property
    def edges(self) -> tuple[tuple[Node, Node], ...]:
        """All ``(parent, child)`` edges, in the order they were given."""
        return self._edges

    def __len__(self) -> int:
        return len(self._nodes)

    def __iter__(self):
        return iter(self._nodes)

    def __contains__(self, node: object) -> bool:
        try:
            return node in self._index
        except TypeError:
            return False

    def __repr__(self) -> str:
        return f"DAG(edges={list(self._edges)!r}, nodes={list(self._nodes)!r})"

    def parents(self, node: Node) -> tuple[Node, ...]:
        """The parents of one node.

        Parameters
        ----------
        node : hashable
            A node of the graph.

        Returns
        -------
        parents : tuple of hashable
            The parents, in the order their edges into ``node`` were given.
        """
        return self._parents[self._check_node(node)]

    def children(self, node: Node) -> tuple[Node, ...]:
        """The children of one node.

        Parameters
        ----------
        node : hashable
            A node of the graph.

        Returns
        -------
        children : tuple of hashable
            The children, in the order their edges out of ``node`` were given.
        """
        return self._children[self._check_node(node)]

    def ancestors(self, nodes: Node | Iterable[Node]) -> set[Node]:
        """The nodes from which a directed path leads into ``nodes``.

        Parameters
        ----------
        nodes : hashable or iterable of hashable
            One node or a collection of nodes. An argument that is itself a
            node of the graph (a tuple label, say) is taken as that one node.

        Returns
        -------
        ancestors : set of hashable
            Every node with a directed path of at least one edge into some
            node of ``nodes``. A given node is included only if it is an
            ancestor of another given node (a DAG has no node that is its own
            ancestor); add ``nodes`` to the result for the ancestral set.
        """
        return _reach(self._node_list(nodes, "nodes"), self._parents)

    def descendants(self, nodes: Node | Iterable[Node]) -> set[Node]:
        """The nodes reached by a directed path out of ``nodes``.

        Parameters
        ----------
        nodes : hashable or iterable of hashable
            One node or a collection of nodes, read as in :meth:`ancestors`.

        Returns
        -------
        descendants : set of hashable
            Every node reached by a directed path of at least one edge from
            some node of ``nodes``. A given node is included only if it is a
            descendant of another given node.
        """
        return _reach(self._node_list(nodes, "nodes"), self._children)

    def topological_order(self) -> tuple[Node, ...]:
        """All nodes, every parent before each of its children.

        Returns
        -------
        order : tuple of hashable
            Kahn's order: among the nodes whose parents are all placed, the
            one given first comes next. If the nodes were given in a
            topological order, that order is returned unchanged.
        """
        return self._order

    def markov_blanket(self, node: Node) -> set[Node]:
        """The Markov blanket of one node.

        Given its Markov blanket, a node is independent of every other node
        of the graph.

        Parameters
        ----------
        node : hashable
            A node of the graph.

        Returns
        -------
        blanket : set of hashable
            The parents of ``node``, its children and the other parents of its
            children. ``node`` itself is not included.
        """
        node = self._check_node(node)
        blanket = set(self._parents[node])
        for child in self._children[node]:
            blanket.add(child)
            blanket.update(self._parents[child])
        blanket.discard(node)
        return blanket

    # ------------------------------------------------------------------
    # Moral graph and d-separation

    def moral_graph(self, nodes: Iterable[Node] | None = None) -> dict[Node, set[Node]]:
        """The moral graph: parents married, directions dropped.

        Parameters
        ----------
        nodes : iterable of hashable, default=None
            Build the moral graph of the subgraph induced by these nodes: only
            edges between two of them are kept, and only parents among them
            are married. ``None`` means all nodes. For an ancestral set (one
            that holds the parents of each of its nodes, such as a set of nodes
            together with their :meth:`ancestors`) this is the ancestral moral
            graph used by :meth:`is_dseparated`.

        Returns
        -------
        adjacency : dict of hashable to set of hashable
            For each kept node, in insertion order, the set of its neighbours:
            its parents, its children and the other parents of its children,
            all within the kept nodes. The relation is symmetric and no node
            is its own neighbour.
        """
        if nodes is None:
            keep: Set[Node] | Mapping[Node, int] = self._index
        else:
            keep = set(self._node_list(nodes, "nodes"))
        adjacency: dict[Node, set[Node]] = {
            node: set() for node in self._nodes if node in keep
        }
        for child in adjacency:
            parents = [p for p in self._parents[child] if p in keep]
            for i, parent in enumerate(parents):
                adjacency[parent].add(child)
                adjacency[child].add(parent)
                for other in parents[i + 1 :]:
                    adjacency[parent].add(other)
                    adjacency[other].add(parent)
        return adjacency

    def is_dseparated(
        self,
        xs: Node | Iterable[Node],
        ys: Node | Iterable[Node],
        given: Node | Iterable[Node] = (),
    ) -> bool:
        """Whether ``xs`` and ``ys`` are d-separated by ``given``.

        If they are, every distribution that factorises according to the
        graph has ``xs`` independent of ``ys`` given ``given``.

        Parameters
        ----------
        xs, ys : hashable or iterable of hashable
            Two disjoint sets of nodes. A single node may be passed as is; an
            argument that is itself a node of the graph is taken as that node.
        given : hashable or iterable of hashable, default=()
            The conditioning nodes, disjoint from ``xs`` and ``ys``.

        Returns
        -------
        separated : bool
            ``True`` if no path joins ``xs`` to ``ys`` in the moral graph of
            the ancestral set of ``xs``, ``ys`` and ``given`` once the
            ``given`` nodes are deleted. An empty ``xs`` or ``ys`` is
            trivially separated.

        Raises
        ------
        ValueError
            If a node is not in the graph, or if ``xs``, ``ys`` and ``given``
            share a node.

        Notes
        -----
        The test follows the four steps of Lauritzen et al. (1990): (1) keep the
        ancestral graph of ``xs``, ``ys`` and ``given``; (2) moralise it, by
        joining the parents of every node; (3) drop the directions of the
        edges; (4) delete the conditioning nodes. What is left is searched
        breadth first from ``xs``.
        """
        sets = {
            "xs": self._node_list(xs, "xs"),
            "ys": self._node_list(ys, "ys"),
            "given": self._node_list(given, "given"),
        }
        names = list(sets)
        for i, first in enumerate(names):
            for second in names[i + 1 :]:
                other = set(sets[second])
                shared = [v for v in sets[first] if v in other]
                if shared:
                    raise ValueError(
                        f"{first} and {second} must be disjoint, but both "
                        f"contain {', '.join(repr(v) for v in shared)}"
                    )
        sources, targets = sets["xs"], set(sets["ys"])
        if not sources or not targets:
            return True

        relevant = set(sources) | targets | set(sets["given"])
        relevant |= _reach(relevant, self._parents)  # step 1: ancestral set
        adjacency = self.moral_graph(relevant)  # steps 2 and 3
        visited = set(sets["given"])  # step 4: the given nodes are deleted
        visited.update(sources)
        queue = deque(sources)
        while queue:
            node = queue.popleft()
            for neighbour in adjacency[node]:
                if neighbour in targets:
                    return False
                if neighbour not in visited:
                    visited.add(neighbour)
                    queue.append(neighbour)
        return True

    def relevant_evidence(
        self, targets: Node | Iterable[Node], evidence: Node | Iterable[Node]
    ) -> frozenset:
        """The evidence that ``targets`` are not d-separated from.

        Given the rest of the evidence, an evidence node d-separated from the
        targets tells nothing about them: a query of the targets needs only
        the nodes returned, and evidence of probability zero among the others
        cannot change the answer.

        Parameters
        ----------
        targets : hashable or iterable of hashable
            The queried nodes.
        evidence : hashable or iterable of hashable
            The observed nodes, disjoint from ``targets``.

        Returns
        -------
        relevant : frozenset of hashable
            The nodes ``e`` of ``evidence`` for which ``targets`` and ``e``
            are not d-separated by the rest of ``evidence``.

        Raises
        ------
        ValueError
            If a node is not in the graph, or if ``targets`` and ``evidence``
            share a node.

        See Also
        --------
        is_dseparated : The test for one pair of node sets.

        Notes
        -----
        One search answers for every evidence node at once: in the moral
        graph of the ancestors of the targets and the evidence, breadth
        first from the targets through unobserved nodes only (Lauritzen et
        al., 1990); an evidence node is relevant when the search reaches it.
        Nodes are bits of Python integers, so a network of hundreds of nodes
        costs a few integer operations per node; the bit sets of the graph
        are computed once and kept (the graph is immutable).

        Examples
        --------
        >>> from bayeskit.graph import DAG
        >>> dag = DAG([("X1", "X3"), ("X2", "X3"), ("X3", "X4"), ("X1", "X5")])
        >>> sorted(dag.relevant_evidence("X4", ["X3", "X5"]))
        ['X3']
        >>> sorted(dag.relevant_evidence("X2", ["X3", "X5"]))
        ['X3', 'X5']
        """
        targets = self._node_list(targets, "targets")
        evidence = self._node_list(evidence, "evidence")
        both = set(targets).intersection(evidence)
        if both:
            raise ValueError(
                "targets and evidence must be disjoint, but both contain "
                f"{', '.join(repr(v) for v in both)}"
            )
        return self._relevant_evidence(targets, evidence)

    def _relevant_evidence(self, targets, evidence) -> frozenset:
        """:meth:`relevant_evidence` on checked sequences of nodes (the hot
        path of ``BayesNet``, which compiles a pattern of evidence with it)."""
        if self._relevance_bits is None:
            index = self._index
            family = [
                sum(1 << index[u] for u in (*self._parents[v], v)) for v in self._nodes
            ]
            ancestors = [0] * len(index)
            for v in self._order:
                i = index[v]
                ancestors[i] = 1 << i
                for u in self._parents[v]:
                    ancestors[i] |= ancestors[index[u]]
            children = [[index[w] for w in self._children[v]] for v in self._nodes]
            self._relevance_bits = (family, ancestors, children)
        index = self._index
        family, ancestors, children = self._relevance_bits
        obs = 0
        for v in evidence:
            obs |= 1 << index[v]
        kept = obs
        for v in evidence:
            kept |= ancestors[index[v]]
        stack = [index[v] for v in targets]
        reach = 0
        for i in stack:
            reach |= 1 << i
            kept |= ancestors[i]
        hidden = kept & ~obs
        relevant = 0
        while stack:
            u = stack.pop()
            near = family[u]
            for w in children[u]:
                if kept >> w & 1:
                    near |= family[w]
            relevant |= near & obs
            new = near & hidden & ~reach
            reach |= new
            while new:
                low = new & -new
                stack.append(low.bit_length() - 1)
                new ^= low
        return frozenset(v for v in evidence if relevant >> index[v] & 1)

    # ------------------------------------------------------------------
    # Helpers

    def _check_node(self, node: object) -> Node:
        """Return ``node`` if it is a node of the graph, else raise."""
        if node not in self:
            raise ValueError(f"unknown node {node!r}: it is not a node of the DAG")
        return node

    def _node_list(self, arg: object, what: str) -> list[Node]:
        """Read one node or an iterable of nodes into a list without repeats."""
        if arg in self:
            return [arg]
        if isinstance(arg, (str, bytes)) or not isinstance(arg, Iterable):
            raise ValueError(f"unknown node {arg!r} in {what}")
        out: dict[Node, None] = {}
        for node in arg:
            if node not in self:
                raise ValueError(f"unknown node {node!r} in {what}")
            out[node] = None
        return list(out)

    def _kahn(self) -> tuple[Node, ...]:
        """Kahn's algorithm, taking ready nodes by insertion index."""
        index = self._index
        waiting = {node: len(self._parents[node]) for node in self._nodes}
        ready = [index[node] for node in self._nodes if waiting[node] == 0]
        heapq.heapify(ready)
        order: list[Node] = []
        while ready:
            node = self._nodes[heapq.heappop(ready)]
            order.append(node)
            for child in self._children[node]:
                waiting[child] -= 1
                if waiting[child] == 0:
                    heapq.heappush(ready, index[child])
        if len(order) < len(self._nodes):
            raise CycleError(self._find_cycle(waiting))
        return tuple(order)

    def _find_cycle(self, waiting: Mapping[Node, int]) -> list[Node]:
        """One directed cycle among the nodes Kahn's algorithm could not place.

        Each unplaced node has an unplaced parent, so walking from parent to
        parent must come back to a node already seen.
        """
        node = next(v for v in self._nodes if waiting[v] > 0)
        path: list[Node] = []
        position: dict[Node, int] = {}
        while node not in position:
            position[node] = len(path)
            path.append(node)
            node = next(p for p in self._parents[node] if waiting[p] > 0)
        cycle = path[position[node] :][::-1]  # walked backwards: reverse it
        start = min(range(len(cycle)), key=lambda i: self._index[cycle[i]])
        return cycle[start:] + cycle[:start]


def _add_node(index: dict[Node, int], node: Node) -> bool:
    """Add ``node`` to ``index`` if new; return whether it was already there."""
    try:
        if node in index:
            return True
    except TypeError:
        raise TypeError(f"node labels must be hashable, got {node!r}") from None
    index[node] = len(index)
    return False


def _as_pair(edge: object) -> tuple[Node, Node]:
    """Unpack one edge into ``(parent, child)`` or raise a ValueError."""
    if not isinstance(edge, (str, bytes, Set, Mapping)):
        try:
            parent, child = edge  # type: ignore[misc]
        except (TypeError, ValueError):
            pass
        else:
            return parent, child
    raise ValueError(f"each edge must be a (parent, child) pair, got {edge!r}")


def _reach(start: Iterable[Node], step: Mapping[Node, tuple[Node, ...]]) -> set[Node]:
    """Nodes reached from ``start`` by one or more ``step`` moves."""
    reached: set[Node] = set()
    stack = list(start)
    while stack:
        for node in step[stack.pop()]:
            if node not in reached:
                reached.add(node)
                stack.append(node)
    return reached
