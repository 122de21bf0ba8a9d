"""Conditional linear Gaussian networks: exact inference on a strong junction tree.

Enumerating the joint configurations of the discrete nodes
(:mod:`bayeskit.graph.clg`) is exponential in their number. This module is
exact inference whose cost grows with the cliques instead, by the strong
elimination order of Lauritzen (1992) and Cowell, Dawid, Lauritzen and
Spiegelhalter (1999, chapter 7): every continuous node is eliminated before
any discrete node.

**Continuous elimination.** Given a pattern of observed continuous cells,
the conditional Gaussian factors ``p(x_v | pa(v))`` fall into *components*,
the sets of factors joined by shared hidden continuous nodes (an observed
cell is a constant and joins nothing). Integrating a component's hidden
nodes out leaves a factor over its *boundary*, the discrete parents of its
members, whose value at a boundary configuration is the Gaussian density of
the component's observed cells. A component of the network with nothing
observed contains the component of any pattern, so the boundaries of the
unobserved network, made complete, hold every pattern's: they are the fill
edges of eliminating the continuous nodes first, and each lies in a clique of
the junction tree of the discrete nodes (the strong root of its component).

The Gaussian algebra is that of Lauritzen and Jensen (2001): every component
is kept as a list of univariate regressions, one per node, in a topological
order, and changed only by *exchanges*, the reversal of an arc ``h -> o`` of
Shachter and Kenley (1989)::

    o | z      : a_o + b a_h,  c_o + b g_h,  s_o' = s_o + b**2 s_h
    h | o, z   : k = b s_h / s_o',  h = a_h + g_h z + k (o - E[o | z]),
                 s_h' = s_h s_o / s_o'

for ``h = a_h + g_h z + e`` (variance ``s_h``) and
``o = a_o + b h + c_o z + e`` (variance ``s_o``), ``z`` the other nodes. An
observed cell is made a root by exchanges with its latest hidden parent,
one after the other (no other directed path can join them), and then gives
its density and its value to the regressions that now condition on it. A
hidden node's posterior is its regression with its hidden parents
substituted, latest first. Every variance is then a sum of non-negative terms
or a product of positive numbers, and no precision matrix is formed or
inverted: the canonical-form update, which adds precisions of order
``1 / variance`` and then subtracts them, loses every digit when variances
are tiny and coefficients large, where this stays accurate to rounding.

**Discrete propagation.** The components' boundary factors, the CPTs, the
discrete evidence (indicators) and the soft evidence (likelihood vectors,
as virtual evidence) are calibrated on the junction tree of the discrete
nodes by :class:`~bayeskit.graph.junction_tree.JunctionTree`, batched over the
rows that share a pattern of observed continuous cells. The posterior of a
hidden continuous node is the mixture over its component's boundary, whose
weights are that boundary's posterior marginal (a clique's).

References
----------
.. [1] S. L. Lauritzen, "Propagation of probabilities, means and variances in
   mixed graphical association models", Journal of the American Statistical
   Association 87(420), 1992.
.. [2] S. L. Lauritzen and F. Jensen, "Stable local computation with
   conditional Gaussian distributions", Statistics and Computing 11, 2001.
.. [3] R. G. Cowell, A. P. Dawid, S. L. Lauritzen and D. J. Spiegelhalter,
   "Probabilistic Networks and Expert Systems", Springer, 1999, chapter 7.
.. [4] R. D. Shachter and C. R. Kenley, "Gaussian influence diagrams",
   Management Science 35(5), 1989.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .clg import CLGNetwork, _patterns, continuous_components
from .factor import LogFactor
from .junction_tree import JunctionTree

__all__ = [
    "ENUMERATION_LIMIT",
    "MAX_CLIQUE_ENTRIES",
    "CLGJunctionTree",
    "CLGTreePosterior",
    "exact_clg",
]

MAX_CLIQUE_ENTRIES = 1_000_000
ENUMERATION_LIMIT = 8
MAX_CONDITION = 1e3
_LOG_2PI = np.log(2 * np.pi)


def _batch(cal, names, n: int) -> np.ndarray:
    """The posterior log marginal of ``names``, with a batch axis of ``n``."""
    f = cal.marginal(names)
    return (
        f.log_values
        if f.batched
        else np.broadcast_to(f.log_values, (n, *f.cardinalities))
    )


@dataclass(eq=False)
class _Group:
    """The rows of one pattern of observed continuous cells, solved."""

    rows: np.ndarray
    factors: list
    calibration: object
    mixtures: dict = field(default_factory=dict)


@dataclass(eq=False)
class CLGTreePosterior:
    """Exact posteriors of a batch of rows from :class:`CLGJunctionTree`.

    Attributes
    ----------
    log_evidence : ndarray of shape (n,)
        ``log p(observed cells)`` of every row (times the soft evidence's
        likelihoods).
    marginals : list of ndarray
        ``P(discrete node j = a | row)``, ``(n, card_j)``, one per discrete
        node.
    mean_ : ndarray of shape (n, n_continuous)
        The posterior mean of every continuous node (observed cells keep
        their value).
    variance_ : ndarray of shape (n, n_continuous)
        The posterior variance (of the mixture; zero for observed cells).
    """

    engine: CLGJunctionTree
    log_evidence: np.ndarray
    marginals: list
    mean_: np.ndarray
    variance_: np.ndarray
    groups: list
    where: np.ndarray  # (n, 2): the group of every row and its place in it

    def discrete_marginal(self, j: int, card: int) -> np.ndarray:
        """``P(discrete node j = a | row)``, shape ``(n, card)``."""
        return self.marginals[j]

    def mean(self) -> np.ndarray:
        """The posterior mean of every continuous node, ``(n, n_continuous)``."""
        return self.mean_

    def variance(self) -> np.ndarray:
        """The posterior variance of every continuous node, ``(n, n_continuous)``."""
        return self.variance_

    def mixture(self, j: int, row: int = 0) -> tuple:
        """The posterior of continuous node ``j`` in ``row``, a mixture.

        Returns
        -------
        names : list
            The discrete nodes its components are indexed by (the boundary of
            its component; empty when the posterior is one Gaussian).
        configs : ndarray of shape (m, len(names))
        weights, means, variances : ndarray of shape (m,)
        """
        g, i = self.where[row]
        group = self.groups[g]
        names, configs, log_w, means, var = group.mixtures[j]
        with np.errstate(under="ignore"):
            w = np.exp(log_w[i])
        return names, configs, w, means[i], var

    def joint_table(self, idx: list, row: int = 0) -> np.ndarray:
        """``P(discrete nodes idx | row)``, an array over their states."""
        g, i = self.where[row]
        group = self.groups[g]
        names = [self.engine.discrete[j] for j in idx]
        if len(names) == 1:
            return self.marginals[idx[0]][row]
        tree = self.engine.tree_with(names)
        cal = tree.calibrate(group.factors)
        with np.errstate(under="ignore"):
            return np.exp(_batch(cal, names, len(group.rows))[i])

    def map_assignment(self) -> np.ndarray:
        """The most probable joint state of the discrete nodes of every row,
        ``(n, n_discrete)`` (max-product)."""
        eng = self.engine
        out = np.zeros((len(self.log_evidence), len(eng.discrete)), dtype=int)
        if not eng.discrete:
            return out
        for group in self.groups:
            best = eng.tree.max_product(group.factors)
            order = [best.nodes.index(v) for v in eng.discrete]
            out[group.rows] = best.assignment[:, order]
        return out


class CLGJunctionTree:
    """A conditional linear Gaussian network on a strong junction tree.

    Parameters
    ----------
    discrete : list
        The discrete nodes, in a topological order.
    cards : dict
        Number of states of every discrete node.
    log_cpds : dict
        ``{node: (parents, log table)}`` of every discrete node, the table of
        shape ``(*parent cardinalities, k)``.
    continuous : list
        The continuous nodes, in a topological order.
    nodes : dict
        ``{node: CLGNode}`` of every continuous node.
    max_clique_entries : int, default=MAX_CLIQUE_ENTRIES
        The most entries of the largest clique's table (per row of a batch),
        the memory estimate of the tree; beyond it, an error.

    Attributes
    ----------
    tree : JunctionTree or None
        The junction tree of the discrete nodes under the strong elimination
        order (None without discrete nodes).
    clique_entries : int
        Entries of the largest clique's table.
    """

    def __init__(
        self,
        discrete: list,
        cards: dict,
        log_cpds: dict,
        continuous: list,
        nodes: dict,
        max_clique_entries: int = MAX_CLIQUE_ENTRIES,
    ):
        self.discrete = list(discrete)
        self.continuous = list(continuous)
        self.cards = {v: int(cards[v]) for v in self.discrete}
        self.log_cpds = log_cpds
        self.nodes = nodes
        self.max_clique_entries = int(max_clique_entries)
        adj = {v: set() for v in self.discrete}

        def join(scope):
            for a in scope:
                adj[a].update(b for b in scope if b != a)

        for v in self.discrete:
            join((*log_cpds[v][0], v))
        hidden = np.zeros(len(self.continuous), dtype=bool)
        for members in continuous_components(self.continuous, nodes, hidden):
            join(self._boundary(members))
        self._adjacency = adj
        self._trees: dict = {}
        self.tree = self.tree_with(()) if self.discrete else None
        self.clique_entries = self._entries(self.tree)
        self._cpt_factors = [
            LogFactor._trusted(
                (*log_cpds[v][0], v),
                tuple(self.cards[p] for p in (*log_cpds[v][0], v)),
                np.asarray(log_cpds[v][1], dtype=float),
            )
            for v in self.discrete
        ]
        self._solved: dict = {}

    def _entries(self, tree) -> int:
        if tree is None:
            return 1
        return max(
            int(np.prod([self.cards[v] for v in c], dtype=float)) for c in tree.cliques
        )

    def tree_with(self, joined) -> JunctionTree:
        """The strong junction tree, with the discrete nodes ``joined`` in
        one clique too (for a joint query of them); checked against the
        memory budget."""
        key = frozenset(joined)
        tree = self._trees.get(key)
        if tree is None:
            adj = {v: set(nb) for v, nb in self._adjacency.items()}
            for a in key:
                adj[a].update(b for b in key if b != a)
            tree = JunctionTree.from_graph(adj, self.cards)
            entries = self._entries(tree)
            if entries > self.max_clique_entries:
                raise ValueError(
                    f"the largest clique of the junction tree has {entries} "
                    f"discrete configurations, more than max_clique_entries="
                    f"{self.max_clique_entries} (the memory budget of exact "
                    "inference); use fewer or smaller discrete parents of "
                    "connected continuous nodes"
                )
            self._trees[key] = tree
        return tree

    def _boundary(self, members) -> list:
        """The discrete parents of a component's members, in ``discrete``'s
        order."""
        seen = set()
        for j in members:
            seen.update(self.nodes[self.continuous[j]].discrete_parents)
        return [v for v in self.discrete if v in seen]

    # -- the Gaussian part ---------------------------------------------------
    def _regression(self, j, names, configs):
        """Intercept, coefficients on the continuous parents and variance of
        node ``j`` at every configuration of ``names``, ``(M,)``,
        ``(M, n_parents)``, ``(M,)``."""
        node = self.nodes[self.continuous[j]]
        u = tuple(configs[:, names.index(p)] for p in node.discrete_parents)
        m = len(configs)
        intercept = np.broadcast_to(np.asarray(node.intercept, dtype=float)[u], (m,))
        coef = np.asarray(node.coef, dtype=float)[u]
        coef = np.broadcast_to(coef, (m, len(node.continuous_parents)))
        var = np.broadcast_to(np.asarray(node.variance, dtype=float)[u], (m,))
        return intercept, coef, var

    def _solve_component(self, members, obs, x):
        """Eliminate the hidden nodes of one component for the rows ``x``
        (``(n, n_continuous)``, all with the observed mask ``obs``).

        Returns the boundary, its configurations, ``log p(observed cells of
        the component | configuration)`` ``(n, M)`` and, per hidden member,
        its posterior mean ``(n, M)`` and variance ``(M,)``.
        """
        names = self._boundary(members)
        shape = [self.cards[v] for v in names]
        configs = (
            np.indices(shape).reshape(len(shape), -1).T
            if shape
            else np.zeros((1, 0), dtype=int)
        )
        n, m = len(x), len(configs)
        hidden = [j for j in members if not obs[j]]
        hpos = {j: i for i, j in enumerate(hidden)}
        nh = len(hidden)
        index = {v: j for j, v in enumerate(self.continuous)}
        alpha = np.zeros((nh, n, m))
        gamma = np.zeros((nh, m, nh))
        s = np.zeros((nh, m))
        observations = []
        for j in members:
            a0, coef, var = self._regression(j, names, configs)
            a = np.broadcast_to(a0, (n, m)).copy()
            g = np.zeros((m, nh))
            for k, p in enumerate(self.nodes[self.continuous[j]].continuous_parents):
                q = index[p]
                if obs[q]:
                    a += x[:, q, None] * coef[None, :, k]
                else:
                    g[:, hpos[q]] = coef[:, k]
            if obs[j]:
                observations.append((j, a, g, var.copy()))
            else:
                i = hpos[j]
                alpha[i], gamma[i], s[i] = a, g, var
        log_lik = np.zeros((n, m))
        for j, a, g, so in observations:
            y = x[:, j, None]
            while True:  # exchange with the latest hidden parent
                nz = np.flatnonzero(np.any(g != 0, axis=0))
                if not len(nz):
                    break
                h = int(nz[-1])
                b = g[:, h].copy()
                g[:, h] = 0.0
                sh = s[h]
                s_new = so + b * b * sh
                a = a + b * alpha[h]
                g = g + b[:, None] * gamma[h]
                k = b * sh / s_new
                alpha[h] = alpha[h] + k * (y - a)
                gamma[h] = gamma[h] - k[:, None] * g
                s[h] = sh * so / s_new
                so = s_new
            r = y - a
            log_lik += -0.5 * (_LOG_2PI + np.log(so) + r * r / so)
        moments = {}
        for j in hidden:
            i = hpos[j]
            a, g, v = alpha[i].copy(), gamma[i].copy(), s[i].copy()
            for p in range(i - 1, -1, -1):  # substitute the latest parent first
                b = g[:, p]
                if not np.any(b != 0):
                    continue
                a += b * alpha[p]
                g = g + b[:, None] * gamma[p]
                g[:, p] = 0.0
                v = v + b * b * s[p]
            moments[j] = (a, v)
        return names, configs, log_lik, moments

    def sample(self, n: int, rng) -> tuple:
        """Ancestral sampling: discrete codes ``(n, n_discrete)`` and continuous
        values ``(n, n_continuous)``."""
        codes = np.zeros((n, len(self.discrete)), dtype=int)
        d_index = {v: j for j, v in enumerate(self.discrete)}
        for j, v in enumerate(self.discrete):
            parents, table = self.log_cpds[v]
            p = np.exp(table)[tuple(codes[:, d_index[q]] for q in parents)]
            p = np.broadcast_to(p, (n, self.cards[v]))
            cum = np.cumsum(p, axis=1)
            u = rng.random(n)[:, None] * cum[:, -1:]
            codes[:, j] = np.minimum((u >= cum).sum(axis=1), self.cards[v] - 1)
        c_index = {v: j for j, v in enumerate(self.continuous)}
        values = np.zeros((n, len(self.continuous)))
        for j, v in enumerate(self.continuous):
            node = self.nodes[v]
            u = tuple(codes[:, d_index[q]] for q in node.discrete_parents)
            mean = np.broadcast_to(np.asarray(node.intercept, dtype=float)[u], (n,))
            coef = np.asarray(node.coef, dtype=float)[u]
            coef = np.broadcast_to(coef, (n, len(node.continuous_parents)))
            for k, q in enumerate(node.continuous_parents):
                mean = mean + coef[:, k] * values[:, c_index[q]]
            sd = np.sqrt(np.asarray(node.variance, dtype=float)[u])
            values[:, j] = mean + sd * rng.standard_normal(n)
        return codes, values

    # -- queries -------------------------------------------------------------
    def posterior(
        self, codes: np.ndarray, values: np.ndarray, soft: dict | None = None
    ) -> CLGTreePosterior:
        """Exact posteriors of every row.

        Parameters
        ----------
        codes : ndarray of shape (n, n_discrete)
            Discrete evidence, ``-1`` where unobserved.
        values : ndarray of shape (n, n_continuous)
            Continuous evidence, NaN where unobserved.
        soft : dict, default=None
            ``{j: log likelihood}`` of discrete node ``j``, of shape
            ``(1, card)`` or ``(n, card)``: virtual evidence.

        Returns
        -------
        CLGTreePosterior
        """
        soft = soft or {}
        n, c = len(values), len(self.continuous)
        observed = ~np.isnan(values)
        log_evidence = np.zeros(n)
        marginals = [np.zeros((n, self.cards[v])) for v in self.discrete]
        mean = np.where(observed, values, 0.0)
        variance = np.zeros((n, c))
        groups, where = [], np.zeros((n, 2), dtype=int)
        for g, (obs, rows) in enumerate(_patterns(observed)):
            where[rows, 0] = g
            where[rows, 1] = np.arange(len(rows))
            x = np.where(obs, values[rows], 0.0)
            factors = list(self._cpt_factors)
            for j, v in enumerate(self.discrete):
                seen = codes[rows, j] >= 0
                if seen.any():
                    k = self.cards[v]
                    ind = np.zeros((len(rows), k))
                    ind[seen] = -np.inf
                    ind[seen, codes[rows[seen], j]] = 0.0
                    factors.append(LogFactor._trusted((v,), (k,), ind))
            for j, lik in soft.items():
                v = self.discrete[j]
                lik = np.asarray(lik, dtype=float)
                lik = lik[rows] if lik.shape[0] == n and n > 1 else lik[0]
                factors.append(LogFactor._trusted((v,), (self.cards[v],), lik))
            solved = []
            constant = np.zeros(len(rows))
            for members in continuous_components(self.continuous, self.nodes, obs):
                names, configs, log_lik, moments = self._solve_component(
                    members, obs, x
                )
                solved.append((names, configs, moments))
                if not any(obs[j] for j in members):
                    continue  # a density integrates to one
                if names:
                    cards = tuple(self.cards[v] for v in names)
                    factors.append(
                        LogFactor._trusted(
                            tuple(names), cards, log_lik.reshape(len(rows), *cards)
                        )
                    )
                else:
                    constant += log_lik[:, 0]
            group = _Group(rows, factors, None)
            if self.tree is not None:
                cal = self.tree.calibrate(factors)
                group.calibration = cal
                log_evidence[rows] = np.broadcast_to(cal.log_evidence, len(rows))
                for j, v in enumerate(self.discrete):
                    with np.errstate(under="ignore"):
                        marginals[j][rows] = np.exp(_batch(cal, [v], len(rows)))
            log_evidence[rows] += constant
            for names, configs, moments in solved:
                if names:
                    log_w = _batch(cal, names, len(rows)).reshape(len(rows), -1)
                else:
                    log_w = np.zeros((len(rows), 1))
                with np.errstate(under="ignore"):
                    w = np.exp(log_w)
                for j, (m, v) in moments.items():
                    mu = np.einsum("nm,nm->n", w, m)
                    mean[rows, j] = mu
                    variance[rows, j] = np.einsum(
                        "nm,nm->n", w, v[None, :] + (m - mu[:, None]) ** 2
                    )
                    group.mixtures[j] = (names, configs, log_w, m, v)
            groups.append(group)
        return CLGTreePosterior(
            self, log_evidence, marginals, mean, variance, groups, where
        )


def exact_clg(
    discrete: list,
    cards: dict,
    log_cpds: dict,
    continuous: list,
    nodes: dict,
    enumeration_limit: int | None = None,
):
    """The exact engine for a CLG network.

    Enumeration of the joint discrete configurations
    (:class:`~bayeskit.graph.clg.CLGNetwork`) up to ``enumeration_limit`` of
    them (default ``ENUMERATION_LIMIT``), where it is the faster, and when
    its algebra is well conditioned; the strong junction tree
    (:class:`CLGJunctionTree`) otherwise. Enumeration solves normal equations
    in the whitened factor ``W = D^{-1/2} (I - B)`` of every configuration,
    which lose about ``2 log10 cond(W)`` digits (a column subset ``W_H`` is
    no worse conditioned than ``W``): beyond ``cond(W) = MAX_CONDITION``
    (keeping about ten digits), near-deterministic relations go to the
    tree's exchanges instead.
    """
    limit = ENUMERATION_LIMIT if enumeration_limit is None else enumeration_limit
    n_configs = float(np.prod([int(cards[v]) for v in discrete], dtype=float))
    if n_configs <= limit:
        net = CLGNetwork(discrete, cards, log_cpds, continuous, nodes)
        if all(_condition(g) <= MAX_CONDITION for g in net._gaussians):
            return net
    return CLGJunctionTree(discrete, cards, log_cpds, continuous, nodes)


def _condition(gaussian) -> float:
    """``cond(D^{-1/2} (I - B))`` of one configuration ``(a, B, var)``."""
    _, B, var = gaussian
    if not len(var):
        return 1.0
    W = (np.eye(len(var)) - B) / np.sqrt(var)[:, None]
    return float(np.linalg.cond(W))
