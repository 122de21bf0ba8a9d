"""Belief propagation on trees (and forests) of discrete variables.

The sum-product message (Bishop 2006, section 8.4.4; Koller and Friedman 2009,
section 10.2): node ``i`` sends to its
neighbour ``j``, once it has heard from all its other neighbours,

.. math::

    m_{ij}(x_j) = \\bigoplus_{x_i} \\psi_{ij}(x_i, x_j)\\, \\phi_i(x_i)
                  \\prod_{l \\in N(i) \\setminus j} m_{li}(x_i),

with :math:`\\bigoplus` a sum (sum-product) or a max (max-product). The
marginal of a node is the normalised product of its unary potential and all
its incoming messages. Every quantity lives in log space and carries a leading
batch axis of ``n`` rows of evidence, so the two passes cost
``O(|E| k^2)`` array operations for all rows at once.

The smallest tree, one node with no edges, is the posterior of every
classifier of bayeskit: :func:`node_belief` normalises the product of a prior
and incoming log-messages, and :class:`TreeBP` uses the same function for
every node of a larger tree.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .._logmath import _normalize_rows, log_matmul, log_normalize, safe_log
from ._checks import cardinality, mapping, real_array, sequence

__all__ = ["Posterior", "TreeBP", "TreeMAP", "TreeMarginals", "node_belief"]


def node_belief(*log_messages: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Normalised product of log-messages into one node.

    Parameters
    ----------
    *log_messages : ndarray of shape (n, k) or (k,)
        The node's unary log-potential (its prior, evidence) and its incoming
        messages; they broadcast against each other.

    Returns
    -------
    log_marginal : ndarray of shape (n, k)
        ``log P(x | evidence)``; a row with no mass stays ``-inf``.
    log_evidence : ndarray of shape (n,)
        Log of the row's normaliser (``-inf`` for a row with no mass).
    """
    total = log_messages[0]
    for m in log_messages[1:]:
        total = total + m
    if (
        isinstance(total, np.ndarray)
        and total.ndim == 2
        and total.dtype == np.float64
        and total.flags.c_contiguous
    ):
        # Rows of one matrix (every E-step): what log_normalize runs on them.
        return _normalize_rows(total)
    log_marginal, lse = log_normalize(np.atleast_2d(total), axis=-1)
    return log_marginal, lse[..., 0]


@dataclass(frozen=True)
class Posterior:
    """Sum-product result for ``n`` rows of evidence: posteriors and evidence.

    The result of :meth:`TreeBP.sum_product` and of the queries of
    :class:`~bayeskit.graph.BayesNet`; its normaliser is named as the one
    latent node's (:class:`~bayeskit.graph.NodePosterior`) and the junction
    tree's (``JunctionTreeCalibration``).

    Attributes
    ----------
    log_marginals : dict
        ``log P(v | evidence)`` of shape ``(n, k)`` for every variable ``v``
        (for a joint posterior, a tuple of variables maps to an array with
        one axis per variable after the row axis). A row of evidence of
        probability zero stays ``-inf``.
    log_evidence : ndarray of shape (n,)
        The log of every row's normaliser: the sum over all joint assignments
        of the product of the potentials and the evidence (``log P(evidence)``
        for conditional probability tables).
    """

    log_marginals: dict
    log_evidence: np.ndarray

    @property
    def log_partition(self) -> np.ndarray:
        """The former name of ``log_evidence``."""
        return self.log_evidence

    def marginal(self, node: Hashable) -> np.ndarray:
        """Posterior probabilities of ``node``, shape ``(n, k)``."""
        return np.exp(self.log_marginals[node])


#: The former name of :class:`Posterior`, the result of :meth:`TreeBP.sum_product`.
TreeMarginals = Posterior


@dataclass(frozen=True)
class TreeMAP:
    """Max-product result: the most probable joint assignment and its log score."""

    assignment: np.ndarray
    log_score: np.ndarray
    nodes: tuple


class TreeBP:
    """Exact belief propagation on a tree (or forest) of discrete variables.

    Parameters
    ----------
    cardinalities : mapping of node -> int
        The variables and their numbers of states. Nodes keep this order in
        every result (the columns of ``TreeMAP.assignment``).
    edges : sequence of (u, v)
        Undirected edges; together they must form a forest (no cycle).
    edge_potentials : sequence of array-like of shape (k_u, k_v)
        One non-negative potential per edge, indexed ``[x_u, x_v]``. A
        conditional probability table ``P(v | u)`` is one.
    node_potentials : mapping of node -> array-like of shape (k,), optional
        Non-negative unary potentials that every row shares (a root's prior).

    See Also
    --------
    TreeBP.from_cpts : build from a tree-shaped Bayesian network.

    Examples
    --------
    The network ``P(A) P(B | A)`` with B observed:

    >>> from bayeskit.graph import TreeBP
    >>> bp = TreeBP.from_cpts({"A": 2, "B": 2},
    ...                       {"A": (None, [0.5, 0.5]),
    ...                        "B": ("A", [[0.9, 0.1], [0.2, 0.8]])})
    >>> res = bp.sum_product(evidence={"B": [0, 1]})
    >>> res.marginal("A").round(3)
    array([[0.818, 0.182],
           [0.111, 0.889]])
    """

    def __init__(
        self,
        cardinalities: Mapping[Hashable, int],
        edges: Sequence[tuple[Hashable, Hashable]] = (),
        edge_potentials: Sequence = (),
        node_potentials: Mapping[Hashable, object] | None = None,
    ) -> None:
        mapping(cardinalities, "cardinalities", "node -> number of states")
        self.nodes = tuple(cardinalities)
        self.cardinalities = {}
        for node, k in cardinalities.items():
            self.cardinalities[node] = cardinality(k, f"cardinalities[{node!r}]")
        edges = [
            _node_pair(e) for e in sequence(edges, "edges", "(u, v) pairs of nodes")
        ]
        edge_potentials = sequence(edge_potentials, "edge_potentials", "arrays")
        if node_potentials is not None:
            mapping(node_potentials, "node_potentials", "node -> array")
        if len(edges) != len(edge_potentials):
            raise ValueError(
                f"{len(edges)} edges but {len(edge_potentials)} edge_potentials"
            )
        self._index = {node: i for i, node in enumerate(self.nodes)}
        # _log_pot[(u, v)] is indexed [x_u, x_v]; both directions are stored.
        self._log_pot: dict = {}
        self._neighbours: dict = {node: [] for node in self.nodes}
        for (u, v), pot in zip(edges, edge_potentials):
            self._check_node(u, "edges")
            self._check_node(v, "edges")
            if u == v:
                raise ValueError(f"edge ({u!r}, {v!r}) is a self-loop")
            if (u, v) in self._log_pot:
                raise ValueError(f"edge ({u!r}, {v!r}) is given twice")
            shape = (self.cardinalities[u], self.cardinalities[v])
            log_pot = self._log_potential(
                pot, shape, f"potential of edge ({u!r}, {v!r})"
            )
            self._log_pot[(u, v)] = log_pot
            self._log_pot[(v, u)] = log_pot.T
            self._neighbours[u].append(v)
            self._neighbours[v].append(u)
        self._log_unary: dict = {}
        for node, pot in (node_potentials or {}).items():
            self._check_node(node, "node_potentials")
            k = self.cardinalities[node]
            self._log_unary[node] = self._log_potential(
                pot, (k,), f"node potential of {node!r}"
            )
        self._schedule = self._make_schedule()

    @classmethod
    def from_cpts(
        cls,
        cardinalities: Mapping[Hashable, int],
        cpts: Mapping[Hashable, tuple[Hashable | None, object]],
        *,
        atol: float = 1e-8,
    ) -> TreeBP:
        """A tree-shaped Bayesian network from its conditional probability tables.

        Parameters
        ----------
        cardinalities : mapping of node -> int
        cpts : mapping of node -> (parent, table)
            For a root, ``(None, P(node))`` of shape ``(k,)``; otherwise
            ``(parent, P(node | parent))`` of shape ``(k_parent, k)`` whose rows
            sum to one.
        atol : float, default=1e-8
            Tolerance of the sums to one.
        """
        mapping(cardinalities, "cardinalities", "node -> number of states")
        mapping(cpts, "cpts", "node -> (parent, table)")
        edges, pots, unary = [], [], {}
        for node, entry in cpts.items():
            if isinstance(entry, (str, bytes)) or not isinstance(entry, Sequence):
                raise TypeError(
                    f"cpts[{node!r}] must be a (parent, table) pair, got {entry!r:.60}"
                )
            if len(entry) != 2:
                raise ValueError(
                    f"cpts[{node!r}] must be a (parent, table) pair, got "
                    f"{len(entry)} items"
                )
            parent, table = entry
            if node not in cardinalities:
                raise ValueError(f"cpts names unknown variable {node!r}")
            table = real_array(table, f"cpts[{node!r}]")
            if parent is not None and parent not in cardinalities:
                raise ValueError(f"parent {parent!r} of {node!r} is unknown")
            shape = (
                (cardinalities[node],)
                if parent is None
                else (cardinalities[parent], cardinalities[node])
            )
            if table.shape != shape:
                raise ValueError(
                    f"CPT of {node!r} has shape {table.shape}, expected {shape}"
                )
            if (table < 0).any() or np.isnan(table).any():
                raise ValueError(f"CPT of {node!r} has negative or NaN entries")
            sums = table.sum(axis=-1)
            if not np.allclose(sums, 1.0, rtol=0, atol=atol):
                raise ValueError(
                    f"CPT of {node!r} must sum to one over {node!r} (each row "
                    f"of a conditional table); the sums are {np.round(sums, 6)}"
                )
            if parent is None:
                unary[node] = table
            else:
                edges.append((parent, node))
                pots.append(table)
        missing = [n for n in cardinalities if n not in cpts]
        if missing:
            raise ValueError(f"no CPT given for {missing}")
        return cls(cardinalities, edges, pots, unary)

    # -- validation -----------------------------------------------------
    def _check_node(self, node, where: str) -> None:
        if node not in self._index:
            raise ValueError(
                f"{where} names unknown variable {node!r}; the variables are "
                f"{list(self.nodes)}"
            )

    @staticmethod
    def _log_potential(pot, shape, what: str) -> np.ndarray:
        arr = real_array(pot, what)
        if arr.shape != shape:
            raise ValueError(f"{what} has shape {arr.shape}, expected {shape}")
        if np.isnan(arr).any() or (arr < 0).any() or np.isinf(arr).any():
            raise ValueError(f"{what} must have finite non-negative entries")
        return safe_log(arr)

    def _make_schedule(self) -> list:
        """Roots and a parent-before-child order of every component."""
        order: list = []  # (node, parent or None)
        seen: set = set()
        for root in self.nodes:
            if root in seen:
                continue
            seen.add(root)
            stack = [(root, None)]
            while stack:
                node, parent = stack.pop()
                order.append((node, parent))
                for nb in self._neighbours[node]:
                    if nb == parent:
                        continue
                    if nb in seen:
                        raise ValueError(
                            f"the edges contain a cycle through {node!r} and {nb!r}: "
                            "belief propagation here needs a tree or a forest"
                        )
                    seen.add(nb)
                    stack.append((nb, node))
        return order

    def _unary(self, n: int | None, evidence, log_unary) -> tuple[int, dict]:
        """Unary log-potentials per node, shape (n, k), from evidence and messages."""
        evidence = dict(evidence or {})
        log_unary = dict(log_unary or {})
        rows = set()
        for name, src in (("evidence", evidence), ("log_unary", log_unary)):
            for node, val in src.items():
                self._check_node(node, name)
                arr = np.asarray(val)
                if name == "evidence" and arr.ndim == 1:
                    rows.add(arr.shape[0])
                if name == "log_unary" and arr.ndim == 2:
                    rows.add(arr.shape[0])
        if n is not None:
            rows.add(n)
        if len(rows) > 1:
            raise ValueError(f"evidence and log_unary disagree on the rows: {rows}")
        n = rows.pop() if rows else 1
        out = {}
        for node in self.nodes:
            k = self.cardinalities[node]
            u = np.zeros((n, k))
            if node in self._log_unary:
                u = u + self._log_unary[node]
            if node in log_unary:
                lu = np.asarray(log_unary[node], dtype=float)
                if lu.shape not in ((k,), (n, k)):
                    raise ValueError(
                        f"log_unary of {node!r} must have shape ({n}, {k}) or "
                        f"({k},); got {lu.shape}"
                    )
                if np.isnan(lu).any() or (lu == np.inf).any():
                    # +inf is no log-potential: it would make the evidence
                    # infinite and the marginals inf - inf = NaN.
                    raise ValueError(
                        f"log_unary of {node!r} must be log-potentials: finite "
                        "or -inf, without NaN or +inf"
                    )
                u = u + lu
            if node in evidence:
                ev = np.asarray(evidence[node])
                ev = np.broadcast_to(ev, (n,))
                if ev.dtype.kind == "f" and np.any(ev != np.floor(ev)):
                    raise ValueError(f"evidence of {node!r} must be integer states")
                ev = ev.astype(np.intp)
                bad = (ev < -1) | (ev >= k)
                if bad.any():
                    raise ValueError(
                        f"evidence of {node!r} is out of range: states are "
                        f"0..{k - 1} (or -1 for unobserved), got "
                        f"{np.unique(ev[bad])[:5]}"
                    )
                observed = ev >= 0
                mask = np.where(observed[:, None], -np.inf, np.zeros((n, k)))
                mask[observed, ev[observed]] = 0.0
                u = u + mask
            out[node] = u
        return n, out

    # -- inference --------------------------------------------------------
    def sum_product(
        self,
        evidence: Mapping[Hashable, object] | None = None,
        log_unary: Mapping[Hashable, object] | None = None,
        n: int | None = None,
    ) -> Posterior:
        """Every node's posterior marginal and the log-evidence of every row.

        Parameters
        ----------
        evidence : mapping of node -> int or array-like of shape (n,), optional
            Observed state per row; ``-1`` marks a row where the node is not
            observed.
        log_unary : mapping of node -> array-like of shape (n, k) or (k,), optional
            Extra log-potentials (emission messages, soft evidence).
        n : int, optional
            Number of rows when neither evidence nor log_unary is batched.

        Returns
        -------
        Posterior
            ``log_marginals[node]`` of shape ``(n, k)`` and ``log_evidence``
            of shape ``(n,)``: the log of the sum over all joint assignments of
            the product of every potential and the evidence.
        """
        n, unary = self._unary(n, evidence, log_unary)
        up = self._upward(unary, max_product=False)[0]
        down: dict = {}
        for node, parent in self._schedule:
            for child in self._neighbours[node]:
                if child == parent:
                    continue
                incoming = [unary[node]]
                incoming += [
                    up[c] for c in self._neighbours[node] if c not in (parent, child)
                ]
                if parent is not None:
                    incoming.append(down[node])
                belief = sum(incoming[1:], incoming[0])
                down[child] = log_matmul(belief, self._log_pot[(node, child)])
        log_marginals, log_z = {}, np.zeros(n)
        for node, parent in self._schedule:
            msgs = [unary[node]]
            msgs += [up[c] for c in self._neighbours[node] if c != parent]
            if parent is not None:
                msgs.append(down[node])
            log_marginals[node], lse = node_belief(*msgs)
            if parent is None:
                log_z = log_z + lse
        return Posterior({node: log_marginals[node] for node in self.nodes}, log_z)

    def max_product(
        self,
        evidence: Mapping[Hashable, object] | None = None,
        log_unary: Mapping[Hashable, object] | None = None,
        n: int | None = None,
    ) -> TreeMAP:
        """The most probable joint assignment of every node, per row.

        Parameters are those of :meth:`sum_product`. Ties go to the lowest
        state index. Returns a :class:`TreeMAP` with ``assignment`` of shape
        ``(n, n_nodes)`` (columns in the order of ``nodes``) and
        ``log_score`` of shape ``(n,)``, the log of the unnormalised joint at
        that assignment (``-inf`` when every assignment has zero weight).
        """
        n, unary = self._unary(n, evidence, log_unary)
        up, back = self._upward(unary, max_product=True)
        assignment = np.zeros((n, len(self.nodes)), dtype=np.intp)
        log_score = np.zeros(n)
        rows = np.arange(n)
        for node, parent in self._schedule:
            col = self._index[node]
            if parent is None:
                belief = unary[node]
                for c in self._neighbours[node]:
                    belief = belief + up[c]
                assignment[:, col] = np.argmax(belief, axis=1)
                log_score = log_score + belief[rows, assignment[:, col]]
            else:
                parent_state = assignment[:, self._index[parent]]
                assignment[:, col] = back[node][rows, parent_state]
        return TreeMAP(assignment, log_score, self.nodes)

    def _upward(self, unary: dict, max_product: bool):
        """Messages from every node to its parent, leaves first.

        ``up[node]`` is the message node -> parent, shape ``(n, k_parent)``;
        with max-product, ``back[node][r, x_parent]`` is node's best state.
        """
        up: dict = {}
        back: dict = {}
        for node, parent in reversed(self._schedule):
            if parent is None:
                continue
            belief = unary[node]
            for c in self._neighbours[node]:
                if c != parent:
                    belief = belief + up[c]
            pot = self._log_pot[(node, parent)]  # [x_node, x_parent]
            if max_product:
                scores = belief[:, :, None] + pot[None, :, :]
                back[node] = np.argmax(scores, axis=1)
                up[node] = np.take_along_axis(scores, back[node][:, None, :], axis=1)[
                    :, 0, :
                ]
            else:
                up[node] = log_matmul(belief, pot)
        return up, back


def _node_pair(edge) -> tuple:
    """An undirected edge: exactly two nodes."""
    if isinstance(edge, (str, bytes)) or not isinstance(edge, Iterable):
        raise TypeError(f"edges must hold (u, v) pairs of nodes, got {edge!r:.60}")
    pair = tuple(edge)
    if len(pair) != 2:
        raise ValueError(f"edges must hold (u, v) pairs of nodes, got {edge!r:.60}")
    return pair
