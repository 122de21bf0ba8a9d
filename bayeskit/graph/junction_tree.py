"""Junction trees: moralise, triangulate (min-fill), clique tree, calibrate.

Exact inference on any Bayesian network is belief propagation on a tree whose
nodes are sets of variables. The construction has four steps:

1. **moralise** the DAG (:meth:`DAG.moral_graph`): marry the parents of every
   node and drop the directions, so that every family is a clique;
2. **triangulate** the moral graph by eliminating its nodes one by one in the
   greedy *min-fill* order (``triangulation.min_fill_order``), adding the
   fill edges that make the graph chordal;
3. take the **maximal cliques** of the chordal graph
   (``triangulation.maximal_cliques``);
4. join them by a **maximum-weight spanning tree** on separator sizes
   (``spanning_tree.maximum_spanning_tree``; the compiled elimination of
   step 2 builds it), which has the running intersection property: the
   cliques that hold a variable form a connected subtree.

:class:`JunctionTree` is the result, and this module holds it with the
structure that serves every pattern of evidence from one tree:
:meth:`JunctionTree.span` finds the part of it that reaches the observed
variables and :meth:`JunctionTree.restrict` takes them out of that part. Its
calibration is Shafer-Shenoy message passing in log space with a
:class:`~bayeskit.graph.Semiring` (sum-product for marginals and the
log-evidence, max-product for the most probable assignment with
traceback), compiled once for given factor scopes as a ``CalibrationPlan``
(``bayeskit.graph.calibration``): it runs on raw log arrays with a leading
batch axis, so the evidence of ``n`` rows propagates in one pass, and is what
estimators call on their hot path; its ``message`` gives the messages into
the part that ``span`` found from the rest, which hold no evidence.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ._checks import node_labels, sequence
from .calibration import CalibrationPlan
from .dag import DAG
from .factor import LogFactor
from .semiring import SUM_PRODUCT, Semiring, SumProduct
from .tree import TreeMAP
from .triangulation import (
    Adjacency,
    _cards_of,
    _eliminate,
    _Elimination,
    _elimination_game,
)

__all__ = ["JunctionTree", "JunctionTreeCalibration"]

Node = Hashable


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
        for i, clique in enumerate(sequence(cliques, "cliques", "cliques")):
            if isinstance(clique, (str, bytes)):
                raise TypeError(
                    f"clique {i} is a string; give an iterable of variables"
                )
            layout = node_labels(clique, f"cliques[{i}]")
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

        for edge in sequence(edges, "edges", "(i, j) pairs of clique indices"):
            i, j = _clique_pair(edge, n)
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
        self._rank_of: dict | None = None
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
        if not isinstance(dag, DAG):
            raise TypeError(
                f"dag must be a bayeskit.graph.DAG, got {type(dag).__name__}: build "
                "one with DAG(edges) (a dict of parents: DAG([(p, v) for v in "
                "parents for p in parents[v]], nodes=parents))"
            )
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
    def _rank(self) -> dict:
        """Every variable's place in the order of :attr:`_holders` (a KeyError
        for a variable of no clique)."""
        if self._rank_of is None:
            self._rank_of = {v: i for i, v in enumerate(self._holders)}
        return self._rank_of

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
            first clique holding the first of them in the tree's order of
            variables (whatever the order ``variables`` come in).

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
        # In the tree's order of variables, not the order given: a set's order
        # changes with the process's hash seed, and the first variable of a
        # component picks the clique its paths start from.
        ordered = sorted(set(variables), key=self._rank.__getitem__)
        for v in ordered:
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
            factor over no variable (a per-row constant) goes to the
            log-evidence. Batched factors (one table per row of
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
    """A calibrated junction tree: one belief per clique and the log-evidence.

    Attributes
    ----------
    tree : JunctionTree
    beliefs : list of LogFactor
        The belief of every clique, in log space and unnormalised: for
        sum-product the log of the sum of the product of all factors over
        every variable outside the clique; for max-product the same with max.
        Factors over no variable are left out of them (they are constants).
    log_evidence : float or ndarray of shape (n,)
        Sum-product: the log of the sum over all assignments of the product of
        the factors (``log P(evidence)`` for CPTs reduced by evidence), the
        normaliser of every row, named as in
        :class:`~bayeskit.graph.tree.Posterior`. Max-product: the log of its
        largest term.
    semiring : Semiring
    """

    tree: JunctionTree
    beliefs: list
    log_evidence: object
    semiring: Semiring

    @property
    def log_partition(self):
        """The former name of :attr:`log_evidence`."""
        return self.log_evidence

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


def _clique_pair(edge, n: int) -> tuple[int, int]:
    """An edge of cliques: two integer indices (not 1.5, not a string)."""
    if isinstance(edge, (str, bytes)) or not isinstance(edge, Iterable):
        raise TypeError(f"edges must hold (i, j) pairs of clique indices, got {edge!r}")
    pair = list(edge)
    if len(pair) != 2 or any(
        isinstance(e, (bool, np.bool_)) or not isinstance(e, (int, np.integer))
        for e in pair
    ):
        raise ValueError(
            f"edges must hold (i, j) pairs of integer clique indices, got {edge!r}"
        )
    return int(pair[0]), int(pair[1])
