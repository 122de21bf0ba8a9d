"""Discrete Bayesian networks: exact, batched inference on a junction tree.

:class:`BayesNet` is a :class:`~bayeskit.graph.DAG` with one conditional
probability table per variable, in log space, and every query on it: the
posterior of some variables, the marginals of all, the log-likelihood, the
most probable assignment, for ``n`` rows of evidence at once. Rows that share
a pattern of observed variables are solved together, by one calibration of a
``CalibrationPlan`` (:mod:`bayeskit.graph.calibration`) compiled for the
pattern and kept.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from .calibration import CalibrationPlan
from .dag import DAG
from .junction_tree import JunctionTree
from .semiring import SUM_PRODUCT

__all__ = ["BayesNet"]


class _Gather(NamedTuple):
    """A clique's table laid out for some observed variables: those axes first.

    ``table[flat]`` with ``flat = sum_u codes[u] * strides[u]`` over the
    observed variables is the table reduced by the evidence, shape
    ``(n, *cards of scope)`` (``(1, ...)`` when nothing of it is observed).
    Tuples of strings, numbers and arrays: once the garbage collector has
    seen one, it no longer tracks it.
    """

    observed: tuple
    strides: tuple
    table: np.ndarray
    scope: tuple


class _Pattern(NamedTuple):
    """A compiled pattern of observed variables: everything but the arrays.

    ``tables`` holds one array per factor of ``plan``; those at ``lookups``
    are indexed per row by ``values @ strides`` (one column each), where
    ``values`` are the codes of the observed variables, in network order.
    """

    tables: tuple
    lookups: tuple
    strides: np.ndarray
    plan: CalibrationPlan
    hidden: tuple
    root: int | None
    clique_of: dict | None


class _Network:
    """The junction tree of the whole network, shared by every pattern.

    Built once per fitted network (and once per set of queried variables that
    no clique of it holds together): where every CPT goes, and the messages
    that depend on no evidence, computed when first needed and kept.
    """

    def __init__(self, engine: BayesNet, joined: tuple = ()) -> None:
        if joined:
            adjacency = engine.dag.moral_graph()
            for a, b in itertools.combinations(joined, 2):
                adjacency[a].add(b)
                adjacency[b].add(a)
            self.tree = JunctionTree.from_graph(adjacency, engine.cards)
        else:
            self.tree = JunctionTree.from_dag(engine.dag, engine.cards)
        variables = engine.variables
        self.plan = self.tree.plan(
            [engine.families[v] for v in variables],
            engine.cards,
            [True] * len(variables),
            self.tree.family_homes,  # from_dag's: where the plan would put them
        )
        self.arrays = [engine.log_cpds[v][None] for v in variables]
        self.layouts = self.tree.layouts
        self.neighbours = [self.tree.neighbours(c) for c in range(len(self.layouts))]
        self._clique_of: dict = {}
        self.n_homed = [0] * len(self.layouts)
        for c in self.plan.homes:
            self.n_homed[c] += 1
        self._potentials: dict = {}
        self._sides: dict = {}
        self._gathers: dict = {}

    def clique_of(self, v) -> int:
        """A smallest clique holding variable ``v``."""
        c = self._clique_of.get(v)
        if c is None:
            c = self._clique_of[v] = self.tree.clique_containing([v])
        return c

    def potential(self, c: int) -> np.ndarray:
        """The sum of the log CPTs that go to clique ``c``, in its layout."""
        psi = self._potentials.get(c)
        if psi is None:
            psi = self._potentials[c] = self.plan.potential(c, self.arrays)
        return psi

    def is_one(self, c: int, d: int) -> bool:
        """Whether the sum-product message c -> d is one everywhere.

        It is when the CPTs on ``c``'s side are those of the variables held
        there only: summed over those variables, children before parents,
        each CPT sums to one (the variables are barren). The CPT of every
        such variable goes to a clique holding it, so it is enough to count:
        as many CPTs go to ``c``'s side as it has variables of its own.
        """
        sides = self._sides
        if (c, d) not in sides:
            cliques, neighbours = self.tree.cliques, self.neighbours
            order = [(c, d)]
            for x, parent in order:  # grows while it is read
                order.extend(
                    (k, x) for k in neighbours[x] if k != parent and (k, x) not in sides
                )
            for x, parent in reversed(order):
                own = len(cliques[x] - cliques[parent])
                homed = self.n_homed[x]
                for k in neighbours[x]:
                    if k != parent:
                        own_k, homed_k = sides[(k, x)]
                        own += own_k
                        homed += homed_k
                sides[(x, parent)] = (own, homed)
        own, homed = sides[(c, d)]
        return own == homed

    def gather(self, c: int, outside: tuple, observed: tuple) -> _Gather:
        """Clique ``c``'s CPTs and its messages from the cliques ``outside``,
        laid out to be reduced by ``observed`` (variables of ``c``, in its
        order). Kept: patterns that meet the clique alike share it."""
        key = (c, outside, observed)
        hit = self._gathers.get(key)
        if hit is not None:
            return hit
        table = self.potential(c)
        for nb in outside:
            incoming = self.message(nb, c)
            if incoming is not None:
                table = table + incoming
        table, scope = table[0], self.layouts[c]
        if observed:
            rest = tuple(u for u in scope if u not in observed)
            perm = [scope.index(u) for u in observed + rest]
            table = np.ascontiguousarray(np.transpose(table, perm))
            shape = table.shape
            table = table.reshape((-1, *shape[len(observed) :]))
            strides = tuple(
                math.prod(shape[i + 1 : len(observed)]) for i in range(len(observed))
            )
            scope = rest
        else:
            table, strides = table[None], ()
        out = self._gathers[key] = _Gather(observed, strides, table, scope)
        return out

    def message(self, c: int, d: int) -> np.ndarray | None:
        """The message c -> d without evidence, in the layout of ``d``;
        ``None`` when it is one everywhere."""
        if self.is_one(c, d):
            return None
        return self.plan.message(c, d, self.arrays, ones=self.is_one)


class BayesNet:
    """A discrete Bayesian network with its CPTs: exact inference, batched.

    The latent structure "any DAG, via its junction tree" of DESIGN.md: a
    :class:`DAG` over discrete variables with one conditional probability
    table per variable, on which every query is belief propagation on a
    junction tree, batched over the rows that share a pattern of observed
    variables. It knows state codes and log-probabilities only (no labels,
    no estimator); ``bayeskit.BayesianNetwork`` learns the tables and calls it.

    The junction tree of the whole network is built once, when first needed.
    A pattern of observed variables (and of queried ones) is compiled once
    and kept: only the evidence the queried variables are not d-separated
    from (:meth:`DAG.relevant_evidence`), the smallest subtree that reaches
    it, and for the rest of the tree the messages into that subtree, which
    depend on no evidence and are shared by all patterns.

    Parameters
    ----------
    dag : DAG
        The structure; every node is a variable.
    cardinalities : mapping of node -> int
        Number of states of every variable.
    log_cpds : mapping of node -> ndarray
        ``log P(v | parents)`` of every variable ``v``, of shape
        ``(*cardinalities of dag.parents(v), cardinalities[v])``: one axis per
        parent, in the order of :meth:`DAG.parents`, then ``v``'s own. Kept by
        reference: build a new ``BayesNet`` for new tables, since the compiled
        patterns hold messages computed from these.

    Attributes
    ----------
    dag : DAG
    variables : tuple of hashable
        The nodes of ``dag``, in its order (the order of observed variables
        in :meth:`evidence`).
    cards : mapping of node -> int
        ``cardinalities`` as given.
    log_cpds : mapping of node -> ndarray
        As given.
    families : dict of node -> tuple
        ``(*parents, v)`` for every variable: the scope of its table.

    See Also
    --------
    JunctionTree : The tree the queries run on.
    DAG.relevant_evidence : Which evidence a query uses.

    Notes
    -----
    Every query method takes the evidence as :meth:`evidence` returns it: the
    observed variables, in network order, and ``values``, their state codes,
    of shape ``(n, k)`` (one row per case, one column per observed variable).
    All rows of one call share the same observed variables; :meth:`group_rows`
    splits rows with missing values into such groups. A row of evidence of
    probability zero has ``log_z = -inf``; its posteriors are then
    meaningless.

    Examples
    --------
    Rain makes the grass wet; the grass is seen wet in one case and dry in
    another:

    >>> import numpy as np
    >>> from bayeskit.graph import DAG, BayesNet
    >>> net = BayesNet(
    ...     DAG([("rain", "wet")]),
    ...     {"rain": 2, "wet": 2},
    ...     {"rain": np.log([0.8, 0.2]), "wet": np.log([[0.9, 0.1], [0.2, 0.8]])},
    ... )
    >>> observed, values = net.evidence({"wet": np.array([1, 0])})
    >>> log_post, log_z = net.posterior(observed, values, ("rain",))
    >>> np.exp(log_post).round(4)
    array([[0.3333, 0.6667],
           [0.9474, 0.0526]])
    >>> np.exp(log_z).round(4)
    array([0.24, 0.76])
    """

    def __init__(self, dag: DAG, cards: Mapping, log_cpds: Mapping) -> None:
        self.dag = dag
        self.variables = dag.nodes
        self.cards = cards
        self.log_cpds = log_cpds
        self.families = {v: (*dag.parents(v), v) for v in self.variables}
        self._position = {v: i for i, v in enumerate(self.variables)}
        self._patterns: dict = {}
        self._networks: dict = {}

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_patterns"] = {}
        state["_networks"] = {}
        return state

    def _pattern(self, observed: tuple, targets: tuple, mode: str) -> _Pattern:
        key = (observed, targets, mode)
        pat = self._patterns.get(key)
        if pat is None:
            pat = self._patterns[key] = self._compile(observed, targets, mode)
        return pat

    def _network(self, targets: tuple = ()) -> tuple[_Network, int | None]:
        """The network's tree and a smallest clique holding all of ``targets``."""
        net = self._networks.get(())
        if net is None:
            net = self._networks[()] = _Network(self)
        if not targets:
            return net, None
        if len(targets) == 1:
            return net, net.clique_of(targets[0])
        try:
            return net, net.tree.clique_containing(targets)
        except ValueError:  # joint targets that share no clique
            key = frozenset(targets)
            joined = self._networks.get(key)
            if joined is None:
                joined = self._networks[key] = _Network(self, targets)
            return joined, joined.tree.clique_containing(targets)

    def _compile(self, observed: tuple, targets: tuple, mode: str) -> _Pattern:
        # A query needs only the evidence that the targets depend on, and the
        # likelihood only the parts of the tree that hold evidence (the rest
        # sums to one): their spans. Max-product and the marginals of every
        # variable need the whole tree.
        net, root = self._network(targets)
        tree = net.tree
        if mode == "marginal":
            # The nodes are the network's own: skip the public checks (a few
            # microseconds per new pattern, about 6% of predict_proba on the
            # ALARM benchmark's rows of many patterns).
            evidence = self.dag._relevant_evidence(targets, observed)
            span = tree.span(evidence, root)
        elif mode == "likelihood":
            evidence = frozenset(observed)
            span = tree.span(evidence)
        else:
            evidence = frozenset(observed)
            span = range(len(net.layouts))
        sub, index = tree.restrict(span, evidence)
        # One table per clique of the span: its CPTs and the messages into it
        # from the rest of the tree (which depend on no evidence), reduced by
        # the evidence.
        gathers, homes = [], []
        for c, local in index.items():
            outside = tuple(nb for nb in net.neighbours[c] if nb not in index)
            obs = tuple(u for u in net.layouts[c] if u in evidence)
            gathers.append(net.gather(c, outside, obs))
            homes.append(0 if local is None else local)
        plan = sub.plan(
            [g.scope for g in gathers],
            self.cards,
            [not g.observed for g in gathers],
            homes,
        )
        hidden = ()
        if mode in ("all", "map"):
            hidden = tuple(v for v in self.variables if v not in evidence)
        clique_of = (
            {v: sub.clique_containing([v]) for v in hidden} if mode == "all" else None
        )
        column = {v: j for j, v in enumerate(observed)}
        lookups = [i for i, g in enumerate(gathers) if g.observed]
        # Floats: the product is a matrix product of BLAS, exact for indices.
        strides = np.zeros((len(observed), len(lookups)))
        for j, i in enumerate(lookups):
            for u, stride in zip(gathers[i].observed, gathers[i].strides):
                strides[column[u], j] = stride
        return _Pattern(
            tuple(g.table for g in gathers),
            tuple(lookups),
            strides,
            plan,
            hidden,
            index.get(root),
            clique_of,
        )

    def evidence(self, codes: Mapping) -> tuple[tuple, np.ndarray]:
        """Evidence as the query methods take it.

        Parameters
        ----------
        codes : mapping of node -> array-like of int of shape (n,)
            The state code of every observed variable in each of ``n`` rows.

        Returns
        -------
        observed : tuple of hashable
            The observed variables, in network order.
        values : ndarray of shape (n, k)
            Their codes, one column per variable of ``observed``; ``(1, 0)``
            for no evidence.
        """
        if not codes:
            return (), np.zeros((1, 0), dtype=np.intp)
        observed = tuple(sorted(codes, key=self._position.__getitem__))
        return observed, np.array([codes[v] for v in observed]).T

    @staticmethod
    def _arrays(pattern: _Pattern, values: np.ndarray) -> list:
        out = list(pattern.tables)
        if pattern.lookups:
            flat = (values @ pattern.strides).astype(np.intp)
            for j, i in enumerate(pattern.lookups):
                out[i] = out[i][flat[:, j]]
        return out

    def posterior(self, observed: tuple, values: np.ndarray, targets: tuple):
        """The joint posterior of some unobserved variables, per row.

        Parameters
        ----------
        observed, values
            The evidence, as :meth:`evidence` returns it.
        targets : tuple of hashable
            Unobserved variables (none of ``observed``).

        Returns
        -------
        log_posterior : ndarray of shape (n, k_1, ..., k_m)
            ``log P(targets | evidence)``, one axis per variable of
            ``targets``, in that order, ``k_i`` its number of states; it may
            be a read-only broadcast view.
        log_z : ndarray of shape (n,) or (1,)
            ``log P(evidence)`` of the evidence ``targets`` are not
            d-separated from (the rest cannot change the posterior).
        """
        n = values.shape[0]
        pat = self._pattern(observed, targets, "marginal")
        arrays = self._arrays(pat, values)
        post, log_z = pat.plan.posterior(arrays, targets, pat.root, n)
        if post.shape[0] != n:
            post = np.broadcast_to(post, (n, *post.shape[1:]))
        return post, log_z

    def log_likelihood(self, observed: tuple, values: np.ndarray) -> np.ndarray:
        """``log P(evidence)`` of every row.

        Parameters
        ----------
        observed, values
            The evidence, as :meth:`evidence` returns it.

        Returns
        -------
        log_likelihood : ndarray of shape (n,)
            The log-probability of each row's observed values, the unobserved
            variables summed out; ``-inf`` for a row of probability zero.
        """
        pat = self._pattern(observed, (), "likelihood")
        arrays = self._arrays(pat, values)
        return pat.plan.collect(arrays, SUM_PRODUCT, n=values.shape[0])[1]

    def marginals(self, observed: tuple, values: np.ndarray):
        """The posterior marginal of every unobserved variable, per row.

        Parameters
        ----------
        observed, values
            The evidence, as :meth:`evidence` returns it.

        Returns
        -------
        log_marginals : dict of node -> ndarray of shape (n, k)
            ``log P(v | evidence)`` for every variable ``v`` not observed,
            ``k`` its number of states; arrays may be read-only views.
        log_z : ndarray of shape (n,)
            ``log P(evidence)``.
        """
        n = values.shape[0]
        pat = self._pattern(observed, (), "all")
        beliefs, log_z = pat.plan.calibrate(self._arrays(pat, values), SUM_PRODUCT, n=n)
        out = {}
        for v in pat.hidden:
            c = pat.clique_of[v]
            post = pat.plan.normalized_marginal(beliefs[c], c, (v,))
            out[v] = np.broadcast_to(post, (n, post.shape[1]))
        return out, log_z

    def map(self, observed: tuple, values: np.ndarray):
        """The most probable joint state of the unobserved variables, per row.

        Parameters
        ----------
        observed, values
            The evidence, as :meth:`evidence` returns it.

        Returns
        -------
        assignment : dict of node -> ndarray of int of shape (n,)
            The state code of every variable not observed. Ties go to the
            lowest state indices.
        log_score : ndarray of shape (n,)
            ``log P(assignment, evidence)``; ``-inf`` for a row of probability
            zero.
        """
        pat = self._pattern(observed, (), "map")
        arrays = self._arrays(pat, values)
        assignment, score = pat.plan.max_product(arrays, n=values.shape[0])
        column = {v: i for i, v in enumerate(pat.plan.tree.variables)}
        return {v: assignment[:, column[v]] for v in pat.hidden}, score

    @staticmethod
    def group_rows(missing: np.ndarray):
        """Group rows by their pattern of missing cells.

        Parameters
        ----------
        missing : ndarray of bool of shape (n, d)
            Whether each cell is missing.

        Yields
        ------
        rows : ndarray of int
            The rows that share one pattern, in increasing order.
        observed : ndarray of bool of shape (d,)
            The columns observed in those rows.
        """
        d = missing.shape[1]
        if d <= 62:
            keys = missing.astype(np.int64) @ (
                np.int64(1) << np.arange(d, dtype=np.int64)
            )
            uniq, inverse = np.unique(keys, return_inverse=True)
            masks = ((uniq[:, None] >> np.arange(d)) & 1).astype(bool)
        else:
            masks, inverse = np.unique(missing, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        order = np.argsort(inverse, kind="stable")
        bounds = np.concatenate(
            [[0], np.cumsum(np.bincount(inverse, minlength=len(masks)))]
        )
        for p, mask in enumerate(masks):
            yield order[bounds[p] : bounds[p + 1]], ~mask
