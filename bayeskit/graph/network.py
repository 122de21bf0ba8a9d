"""Discrete Bayesian networks: the latent structure "any DAG, via its junction tree".

:class:`BayesNet` is a :class:`~bayeskit.graph.DAG` over discrete variables
with one conditional probability table (CPT) per variable, in log space. As a
structure it has its own statistics (the weighted counts of every family,
:class:`NetworkStats`, which add), its parameters from statistics and a prior
(:meth:`BayesNet.map_params`), the log density of that prior, its parameter
count and forward sampling. With its tables it answers every query: the
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
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .._layout import add_described
from .._logmath import safe_log
from ._checks import cardinality, mapping
from .calibration import CalibrationPlan
from .dag import DAG
from .junction_tree import JunctionTree
from .network_sampling import forward_sample
from .semiring import SUM_PRODUCT
from .tree import Posterior

__all__ = ["BayesNet", "NetworkStats"]


@dataclass(frozen=True)
class NetworkStats:
    """Weighted counts of every family of a Bayesian network.

    ``counts[i]`` belongs to the ``i``-th variable (in the order of the
    network) and has shape ``(*parent cardinalities, k_i)``: the weight of the
    rows in which the variable and all of its parents are observed, per joint
    state. Counts of chunks add; :meth:`BayesNet.zeros` is the zero.
    """

    counts: tuple
    #: The weight of the rows with a missing cell: not counted in the tables
    #: of the families that miss it (0 for expected counts).
    incomplete_weight: float = 0.0
    #: What the counts are over, as the estimator that made them describes it
    #: (its variables and their states; ``bayeskit._layout.Layout``), or
    #: None.
    layout: object = field(default=None, compare=False, repr=False)

    def __add__(self, other: NetworkStats) -> NetworkStats:
        if not isinstance(other, NetworkStats):
            return NotImplemented
        return add_described(self, other, _add_counts)

    @property
    def total_weight(self) -> np.ndarray:
        """The weight counted in every variable's table, ``(n_variables,)``."""
        return np.array([float(c.sum()) for c in self.counts])


def _add_counts(a: NetworkStats, b: NetworkStats) -> NetworkStats:
    if len(a.counts) != len(b.counts) or any(
        x.shape != y.shape for x, y in zip(a.counts, b.counts)
    ):
        raise ValueError(
            "these statistics belong to networks with different variables or "
            "states; they do not add"
        )
    return NetworkStats(
        tuple(x + y for x, y in zip(a.counts, b.counts)),
        a.incomplete_weight + b.incomplete_weight,
    )


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
        tables = engine._tables()
        self.arrays = [tables[v][None] for v in variables]
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


#: The most entries a network keeps compiled for its patterns of evidence
#: (each a plan with its reduced tables: about 0.4 MB on INSURANCE): data
#: whose rows show ever new patterns must not grow the network without end.
MAX_PATTERNS = 2048


class _Patterns(dict):
    """What a network compiled per pattern of evidence: forgotten all at once
    when it would hold more than :data:`MAX_PATTERNS` entries (one
    ``clear``, safe while other threads read it; they compile again what
    they miss)."""

    def __setitem__(self, key, value) -> None:
        if len(self) >= MAX_PATTERNS and key not in self:
            self.clear()
        super().__setitem__(key, value)


class BayesNet:
    """A discrete Bayesian network: its statistics, parameters and exact inference.

    The latent structure "any DAG, via its junction tree" of DESIGN.md: a
    :class:`DAG` over discrete variables with one conditional probability
    table per variable. It knows state codes and log-probabilities only (no
    labels, no estimator); ``bayeskit.BayesianNetwork`` reads labelled data
    and calls it.

    As a structure (no tables needed): :meth:`stats` counts every family in
    codes of data, :meth:`zeros` is the counts of no data, :meth:`map_params`
    turns counts and a prior into tables, :meth:`log_prior` is that prior's
    log density at tables, :meth:`n_parameters` counts free parameters. With
    tables (given here or by :meth:`with_cpds`): :meth:`sample` draws rows by
    forward sampling, and every query is belief propagation on a junction
    tree, batched over the rows that share a pattern of observed variables.

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
    log_cpds : mapping of node -> ndarray, default=None
        ``log P(v | parents)`` of every variable ``v``, of shape
        ``(*cardinalities of dag.parents(v), cardinalities[v])``: one axis per
        parent, in the order of :meth:`DAG.parents`, then ``v``'s own. Kept by
        reference: build a new ``BayesNet`` (:meth:`with_cpds`) for new
        tables, since the compiled patterns hold messages computed from these.
        None: the structure alone (queries need tables).

    Attributes
    ----------
    dag : DAG
    variables : tuple of hashable
        The nodes of ``dag``, in its order (the order of observed variables
        in :meth:`evidence`).
    cards : mapping of node -> int
        ``cardinalities`` as given.
    log_cpds : mapping of node -> ndarray or None
        As given.
    families : dict of node -> tuple
        ``(*parents, v)`` for every variable: the scope of its table.

    See Also
    --------
    JunctionTree : The tree the queries run on.
    DAG.relevant_evidence : Which evidence a query uses.

    Notes
    -----
    The prior of :meth:`map_params` and :meth:`log_prior` is any object with
    two methods: ``log_estimate(variable, counts)``, the log table of
    ``variable`` from its counts (same shape), and ``log_density(variable,
    log_cpd)``, the log density of the prior at a table up to its constant
    (``bayeskit.BayesianNetwork`` gives the m-estimate's). With no prior the
    tables are the maximum-likelihood estimates.

    Every query method takes the evidence as :meth:`evidence` returns it: the
    observed variables, in network order, and ``values``, their state codes,
    of shape ``(n, k)`` (one row per case, one column per observed variable).
    All rows of one call share the same observed variables; :meth:`group_rows`
    splits rows with missing values into such groups. A row of evidence of
    probability zero has ``log_evidence = -inf``; its posteriors are then
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
    >>> post = net.posterior(observed, values, ("rain",))
    >>> np.exp(post.log_marginals[("rain",)]).round(4)
    array([[0.3333, 0.6667],
           [0.9474, 0.0526]])
    >>> np.exp(post.log_evidence).round(4)
    array([0.24, 0.76])

    The structure alone learns tables from codes of data (here ``m = 0``,
    maximum likelihood):

    >>> structure = BayesNet(DAG([("rain", "wet")]), {"rain": 2, "wet": 2})
    >>> stats = structure.stats(np.array([[0, 0], [0, 1], [1, 1], [1, 1]]))
    >>> stats.counts[1]
    array([[1., 1.],
           [0., 2.]])
    >>> np.exp(structure.map_params(stats)["wet"])
    array([[0.5, 0.5],
           [0. , 1. ]])
    """

    def __init__(self, dag: DAG, cards: Mapping, log_cpds: Mapping | None = None):
        if not isinstance(dag, DAG):
            raise TypeError(
                f"dag must be a bayeskit.graph.DAG, got {type(dag).__name__}: build "
                "one with DAG(edges)"
            )
        mapping(cards, "cards", "variable -> number of states")
        missing = [v for v in dag.nodes if v not in cards]
        if missing:
            raise ValueError(f"cards has no number of states for {missing!r:.80}")
        cards = {v: cardinality(cards[v], f"cards[{v!r}]") for v in dag.nodes}
        if log_cpds is not None:
            mapping(log_cpds, "log_cpds", "variable -> log table")
            for v, table in log_cpds.items():
                if v not in cards:
                    raise ValueError(f"log_cpds names unknown variable {v!r}")
                shape = tuple(cards[u] for u in (*dag.parents(v), v))
                if np.shape(table) != shape:
                    raise ValueError(
                        f"log_cpds[{v!r}] has shape {np.shape(table)}; expected "
                        f"{shape} (the parents' states, then {v!r}'s)"
                    )
        self.dag = dag
        self.variables = dag.nodes
        self.cards = cards
        self.log_cpds = log_cpds
        self.families = {v: (*dag.parents(v), v) for v in self.variables}
        self._position = {v: i for i, v in enumerate(self.variables)}
        self._patterns = _Patterns()
        self._networks: dict = {}
        #: What callers compile from these tables and keep beside them (the
        #: estimator's readers of labels, say): a new ``BayesNet`` starts empty.
        self.memo: dict = {}

    def with_cpds(self, log_cpds: Mapping) -> BayesNet:
        """The same structure with these tables (and nothing compiled yet)."""
        return BayesNet(self.dag, self.cards, log_cpds)

    # -- the structure: statistics, parameters, prior, sampling ---------------
    def _shape(self, v) -> tuple:
        return tuple(self.cards[u] for u in self.families[v])

    def zeros(self) -> NetworkStats:
        """The counts of no data: the zero of ``+``."""
        return NetworkStats(tuple(np.zeros(self._shape(v)) for v in self.variables))

    def stats(self, codes: np.ndarray, weights: np.ndarray | None = None):
        """The weighted counts of every family in rows of codes.

        Parameters
        ----------
        codes : ndarray of int of shape (n, n_variables)
            The state code of every variable (columns in the order of
            ``variables``), -1 where it is missing: a row counts in the table
            of every variable whose family it observes whole.
        weights : ndarray of shape (n,), default=None
            The weight of every row; None: one each.

        Returns
        -------
        NetworkStats
        """
        n = codes.shape[0]
        weights = np.ones(n) if weights is None else np.asarray(weights, float)
        column = self._position
        counts = []
        for v in self.variables:
            shape = self._shape(v)
            sub = codes[:, [column[u] for u in self.families[v]]]
            ok = (sub >= 0).all(axis=1)
            flat = np.ravel_multi_index(tuple(sub[ok].T), shape)
            c = np.bincount(flat, weights=weights[ok], minlength=math.prod(shape))
            counts.append(c.reshape(shape))
        incomplete = float(weights[(codes < 0).any(axis=1)].sum())
        return NetworkStats(tuple(counts), incomplete)

    def map_params(self, stats: NetworkStats, prior=None) -> dict:
        """The log table of every variable from its counts and ``prior``.

        Parameters
        ----------
        stats : NetworkStats
        prior : object, default=None
            See the Notes of the class; None: maximum likelihood (a row of
            the table with no counts is uniform).

        Returns
        -------
        dict of node -> ndarray
            ``log P(v | parents)``, shaped as the counts.
        """
        out = {}
        for v, counts in zip(self.variables, stats.counts):
            if prior is not None:
                out[v] = prior.log_estimate(v, counts)
                continue
            total = counts.sum(axis=-1, keepdims=True)
            empty = total == 0
            prob = np.where(empty, 1.0 / counts.shape[-1], counts)
            out[v] = safe_log(prob / np.where(empty, 1.0, total))
        return out

    def log_prior(self, log_cpds: Mapping, prior=None) -> float:
        """The log density of ``prior`` at the tables, up to its constant
        (0 without a prior)."""
        if prior is None:
            return 0.0
        return float(sum(prior.log_density(v, log_cpds[v]) for v in self.variables))

    def n_parameters(self) -> int:
        """Free parameters of the tables: ``sum_v (k_v - 1) prod_{u in pa(v)} k_u``."""
        cards = self.cards
        return int(
            sum(
                (cards[v] - 1) * math.prod(cards[u] for u in self.dag.parents(v))
                for v in self.variables
            )
        )

    def sample(self, n: int, random_state) -> np.ndarray:
        """Rows drawn by forward (ancestral) sampling, parents first
        (``bayeskit.graph.network_sampling.forward_sample``).

        Parameters
        ----------
        n : int
            Number of rows.
        random_state : numpy.random.Generator or RandomState
            The source of uniform numbers (its ``random(n)``).

        Returns
        -------
        ndarray of int of shape (n, n_variables)
            State codes, columns in the order of ``variables``.
        """
        return forward_sample(self, n, random_state)

    def _tables(self) -> Mapping:
        if self.log_cpds is None:
            raise ValueError(
                "this network has no tables: give log_cpds, or use with_cpds"
            )
        return self.log_cpds

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_patterns"] = _Patterns()
        state["_networks"] = {}
        state["memo"] = {}
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
        Posterior
            ``log_marginals[targets]`` (the tuple) of shape ``(n, k_1, ...,
            k_m)``: ``log P(targets | evidence)``, one axis per variable of
            ``targets``, in that order, ``k_i`` its number of states; it may
            be a read-only broadcast view. ``log_evidence`` of shape ``(n,)``
            or ``(1,)``: ``log P(evidence)`` of the evidence ``targets`` are
            not d-separated from (the rest cannot change the posterior).
        """
        n = values.shape[0]
        pat = self._pattern(observed, targets, "marginal")
        arrays = self._arrays(pat, values)
        post, log_z = pat.plan.posterior(arrays, targets, pat.root, n)
        if post.shape[0] != n:
            post = np.broadcast_to(post, (n, *post.shape[1:]))
        return Posterior({targets: post}, log_z)

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
        Posterior
            ``log_marginals[v]`` of shape ``(n, k)``: ``log P(v | evidence)``
            for every variable ``v`` not observed, ``k`` its number of states
            (arrays may be read-only views); ``log_evidence`` of shape
            ``(n,)``: ``log P(evidence)``.
        """
        n = values.shape[0]
        pat = self._pattern(observed, (), "all")
        beliefs, log_z = pat.plan.calibrate(self._arrays(pat, values), SUM_PRODUCT, n=n)
        out = pat.plan.variable_marginals(beliefs, pat.clique_of, pat.hidden)
        for v, post in out.items():
            if post.shape[0] != n:
                out[v] = np.broadcast_to(post, (n, post.shape[1]))
        return Posterior(out, log_z)

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
        if missing.shape[0] == 1:  # one row (a query of one row): one group
            yield np.zeros(1, dtype=np.intp), ~missing[0]
            return
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
