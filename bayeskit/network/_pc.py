"""The PC algorithm on discrete data: conditional independence tests from
counts, the skeleton search in pgmpy's three variants, and the orientation of
its edges in pgmpy's order.

The skeleton removes, level by level (conditioning sets of ``l`` variables,
``l = 0, 1, ...``), the edge ``u - v`` when ``u`` and ``v`` test independent
given ``l`` neighbours of ``u`` or of ``v``. In the stable variant (Colombo and
Maathuis 2014) the neighbours are those at the start of the level, every
candidate set is tested, and the separating set is the union of those that
tested independent (as pgmpy's ``variant="stable"`` and ``"parallel"``); in
the original variant (Spirtes, Glymour and Scheines 2000) the edges are visited
in the order of the columns, an edge goes as soon as one set separates it, and
the next edges see the neighbours left. Colliders ``x -> z <- y`` are oriented
where ``z`` is not in the separating set of ``x`` and ``y`` (the pairs in the
order of the variables' names, the first orientation kept), then Meek's rules
1-3 (Meek 1995) as pgmpy applies them, and a DAG in the equivalence class is
drawn from the partially directed graph (Dor and Tarsi 1992).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, permutations

import numpy as np
from scipy import special

from .._warnings import warn
from ._gauss_ci import GaussianCI, cg_test

__all__ = [
    "LAMBDAS",
    "Knowledge",
    "ci_test",
    "extend_to_dag",
    "learn",
    "meek",
    "orient",
    "skeleton",
]

#: pgmpy's names of the discrete tests, as the lambda of the Cressie-Read
#: power divergence (Cressie and Read 1984): Pearson's chi-square (1), the
#: G-test (0), the modified log-likelihood (-1) and Cressie and Read's 2/3.
LAMBDAS = {
    "chi_square": 1.0,
    "g_sq": 0.0,
    "log_likelihood": 0.0,
    "modified_log_likelihood": -1.0,
    "power_divergence": 2.0 / 3.0,
}


def _terms(observed: np.ndarray, expected: np.ndarray, lambda_: float) -> float:
    """The power divergence statistic: the sum of the cells' terms (the cells
    with a positive expected count; the others count zero)."""
    safe = expected > 0
    o, e = observed[safe], expected[safe]
    if lambda_ == 1.0:
        return float(np.add.reduce((o - e) ** 2 / e))
    if lambda_ == 0.0:
        return float(2.0 * np.add.reduce(special.xlogy(o, o) - special.xlogy(o, e)))
    with np.errstate(divide="ignore", invalid="ignore"):
        if lambda_ == -1.0:
            terms = 2.0 * (special.xlogy(e, e) - special.xlogy(e, o))
        else:
            terms = o * (np.power(o / e, lambda_) - 1.0)
            terms /= 0.5 * lambda_ * (lambda_ + 1.0)
    return float(np.add.reduce(terms))


def ci_test(
    codes: np.ndarray, cards: np.ndarray, x: int, y: int, given, g=1.0, gaps=None
):
    """The statistic, degrees of freedom and p-value of ``x`` independent of
    ``y`` given ``given``.

    ``g`` is the lambda of the power divergence (:data:`LAMBDAS`; ``False``
    is Pearson's chi-square, ``True`` the G-test). One contingency table per
    joint state of ``given`` seen in the data; in each, the degrees of freedom
    of the states of ``x`` and of ``y`` seen there, Yates's continuity
    correction where that is one (as ``scipy.stats.chi2_contingency``); the
    statistics and degrees of freedom summed (as pgmpy's discrete tests).
    ``gaps``, if given, tells which columns have a missing value (rows with
    one in a column tested are left out).
    """
    lambda_ = float(g if not isinstance(g, bool) else (0.0 if g else 1.0))
    rx, ry = int(cards[x]), int(cards[y])
    flat = codes[x] * ry + codes[y]
    n_strata = 1
    for v in given:
        flat = flat + codes[v] * (n_strata * rx * ry)
        n_strata *= int(cards[v])
    cols = [x, y, *given]
    if gaps is None or gaps[cols].any():
        complete = (codes[cols] >= 0).all(axis=0)
        if not complete.all():
            flat = flat[complete]
    if n_strata * rx * ry > max(4 * flat.shape[0], 4096):
        # Many more joint states than rows: the states seen only.
        _, stratum = np.unique(flat // (rx * ry), return_inverse=True)
        flat = stratum * (rx * ry) + flat % (rx * ry)
        n_strata = int(stratum.max()) + 1 if flat.size else 1
    observed = np.bincount(flat, minlength=n_strata * rx * ry).reshape(n_strata, rx, ry)
    seen = observed.any(axis=(1, 2))
    if not seen.all():
        observed = observed[seen]
    observed = observed.astype(np.float64)
    row_sums = observed.sum(axis=2)
    col_sums = observed.sum(axis=1)
    n = row_sums.sum(axis=1)
    expected = row_sums[:, :, None] * col_sums[:, None, :] / n[:, None, None]
    dofs = np.maximum((row_sums > 0).sum(axis=1) - 1, 0) * np.maximum(
        (col_sums > 0).sum(axis=1) - 1, 0
    )
    yates = dofs == 1
    if yates.any():
        diff = expected[yates] - observed[yates]
        observed[yates] += np.minimum(0.5, np.abs(diff)) * np.sign(diff)
    stat = _terms(observed, expected, lambda_)
    dof = int(dofs.sum())
    if dof == 0 and not given:
        # No two states on both sides (a constant column, a single row): the
        # data cannot show a dependence, and the test does not reject
        # independence (scipy.stats.chi2_contingency's p-value of 1). Given
        # other variables, a sum of no degree of freedom keeps an undefined
        # p-value (NaN), which never removes an edge.
        return stat, dof, 1.0
    # The chi-square survival function (scipy.stats.chi2.sf, undefined
    # without a degree of freedom).
    p_value = float(special.chdtrc(dof, stat)) if dof > 0 else np.nan
    return stat, dof, p_value


@dataclass(frozen=True)
class Knowledge:
    """Expert knowledge as pgmpy's PC uses it, on variable indices.

    ``forbidden[u, v]``: the edge ``u -> v`` is forbidden (the search
    space's complement included); ``required[u, v]``: it is required;
    ``tiers``: every variable's tier in a temporal order (None: no order);
    ``enforce``: pgmpy's ``enforce_expert_knowledge``.
    """

    forbidden: np.ndarray
    required: np.ndarray
    tiers: np.ndarray | None
    enforce: bool

    def start(self) -> np.ndarray | None:
        """The skeleton's first edges: enforced, no forbidden pair."""
        if not self.enforce:
            return None
        start = ~(self.forbidden | self.forbidden.T)
        np.fill_diagonal(start, False)
        return start

    def keep(self) -> np.ndarray | None:
        """The pairs never tested: enforced, the required ones."""
        return (self.required | self.required.T) if self.enforce else None

    def apply(self, graph: np.ndarray, names) -> np.ndarray:
        """pgmpy's ``ExpertKnowledge.apply_expert_knowledge``: an undirected
        edge of a forbidden pair ``u -> v`` (an edge backward in time
        included) is oriented ``v -> u``, one of a required pair ``u -> v``
        is oriented ``u -> v``; a directed edge against the knowledge (or an
        orientation that would close a directed cycle, where pgmpy orients
        it anyway) is left as it is, with a warning, in the pairs' order of
        the columns."""
        graph = graph.copy()
        forbidden = self.forbidden.copy()
        if self.tiers is not None:
            forbidden |= self.tiers[:, None] > self.tiers[None, :]

        def orient_edge(a, b, what) -> None:
            reach = _reach(graph & ~graph.T)
            if reach[b, a]:
                _conflict(names, b, a, what, "it would close a directed cycle")
            else:
                graph[b, a] = False

        for u, v in zip(*np.nonzero(forbidden)):
            if graph[u, v] and graph[v, u]:
                orient_edge(v, u, "forbidden")
            elif graph[u, v]:
                _conflict(names, u, v, "forbidden")
        for u, v in zip(*np.nonzero(self.required)):
            if graph[u, v] and graph[v, u]:
                orient_edge(u, v, "required")
            elif not graph[u, v]:
                _conflict(names, u, v, "required")
        return graph


def _conflict(names, u, v, what, why=None) -> None:
    """pgmpy's warning of a knowledge conflicting with the learnt graph."""
    warn(
        "Specified expert knowledge conflicts with learned structure. Ignoring "
        f"edge {names[u]}->{names[v]} from {what} edges" + (f" ({why})" if why else "")
    )


def _repr_sorted(items, names):
    return sorted(items, key=lambda i: repr(names[i]))


def skeleton(
    independent,
    d: int,
    max_cond_vars: int,
    variant: str,
    names,
    start=None,
    keep=None,
    tiers=None,
):
    """The undirected adjacency matrix and the separating sets (a dict from
    ``frozenset((u, v))`` to a tuple of variables) of pgmpy's PC.

    ``independent(u, v, given)`` decides a test. The candidate sets of an
    edge are those of ``l`` neighbours of ``u`` and those of ``v`` (each
    sorted by the ``repr`` of the names, as pgmpy); the original variant
    tries them in the order of pgmpy's Python set of them, so its separating
    set (not its skeleton) can depend on Python's string hashing as pgmpy's.
    ``start`` (symmetric): the edges to start from (None: all); ``keep``
    (symmetric): edges never tested, so never removed; ``tiers``: the tier
    of every variable in a temporal order, where the candidates of ``u - v``
    are the neighbours of a tier no later than both (pgmpy's temporally
    consistent separating sets).
    """
    index = {name: i for i, name in enumerate(names)}
    adjacent = ~np.eye(d, dtype=bool) if start is None else start.copy()
    sepsets: dict = {}
    level = 0
    while (adjacent.sum(axis=1) >= level).any():
        fixed = adjacent.copy()
        for u, v in zip(*np.nonzero(np.triu(fixed))):
            u, v = int(u), int(v)
            if variant == "orig":
                nbrs = adjacent
                if not nbrs[u, v]:
                    continue
            else:
                nbrs = fixed
            if keep is not None and keep[u, v]:
                continue
            latest = None if tiers is None else min(tiers[u], tiers[v])
            sides = [
                [
                    names[w]
                    for w in _repr_sorted(np.flatnonzero(nbrs[a]), names)
                    if w != b and (latest is None or tiers[w] <= latest)
                ]
                for a, b in ((u, v), (v, u))
            ]
            candidates = set(combinations(sides[0], level)) | set(
                combinations(sides[1], level)
            )
            found: set | None = None
            for given in candidates:
                idx = tuple(index[name] for name in given)
                if independent(u, v, idx):
                    if variant == "orig":
                        found = idx
                        break
                    found = (found or set()) | set(idx)
            if found is not None:
                adjacent[u, v] = adjacent[v, u] = False
                sepsets[frozenset((u, v))] = tuple(_repr_sorted(found, names))
        if level >= max_cond_vars:
            break
        level += 1
    return adjacent, sepsets


def _reach(directed: np.ndarray) -> np.ndarray:
    """``reach[a, b]``: a directed path of one edge or more leads from a to b."""
    reach = directed.copy()
    while True:
        longer = reach | ((reach.astype(np.int64) @ reach.astype(np.int64)) > 0)
        if (longer == reach).all():
            return reach
        reach = longer


def _name_order(names) -> list[int]:
    try:
        return sorted(range(len(names)), key=lambda i: names[i])
    except TypeError:
        return sorted(range(len(names)), key=lambda i: repr(names[i]))


def orient(
    adjacent: np.ndarray, sepsets: dict, names=None, tiers=None, knowledge=None
) -> np.ndarray:
    """The partially directed graph: ``graph[a, b] and not graph[b, a]`` is
    ``a -> b``, both is ``a - b``.

    As pgmpy's PC: the colliders ``x -> z <- y`` for the non-adjacent pairs
    in the order of the names, a collider that would undo an earlier one
    ignored; then, until nothing changes, a sweep of Meek's rule 1 (``w -> u
    - v``, ``w`` and ``v`` not adjacent: ``u -> v``, unless that makes a new
    unshielded collider at ``v`` or closes a directed cycle), of rule 2 (``u
    -> w -> v``, ``u - v``: ``u -> v``) and of rule 3 (``u`` undirected
    to ``w1``, ``w2`` and ``v``, ``w1 -> v <- w2`` with ``w1`` and ``w2`` not
    adjacent: ``u -> v``). pgmpy 1.1.2's rule 3 omits the condition that
    ``w1`` and ``w2`` be non-adjacent, and so can orient an edge that the
    equivalence class leaves open; here the rule is Meek's (1995), so that
    with correct tests exactly the compelled edges are oriented.

    Tests that contradict each other (finite samples) can ask for an
    orientation that closes a directed cycle, where pgmpy orients it (a
    collider, or rule 3) and leaves a graph with a directed cycle. Here no
    edge is oriented so as to close a directed cycle (it stays undirected;
    Spirtes, Glymour and Scheines 2000, section 5.4.2), so the directed part
    is always acyclic and :func:`extend_to_dag` finds a DAG. Where pgmpy's
    answer has no directed cycle, this is pgmpy's answer.

    ``tiers`` (a temporal order): a collider at ``z`` only where ``z`` is in
    a tier no earlier than ``x``'s and ``y``'s, as pgmpy. ``knowledge``
    (:class:`Knowledge`) is applied in pgmpy's order: with a temporal
    order, right after the colliders; otherwise, unless enforced, after
    Meek's rules 1-3; then the rules again, with rule 4 (:func:`meek`).
    """
    d = adjacent.shape[0]
    order = _name_order(names) if names is not None else list(range(d))
    graph = adjacent.copy()
    reach = np.zeros((d, d), dtype=bool)
    for i, x in enumerate(order):
        for y in order[i + 1 :]:
            if adjacent[x, y]:
                continue
            for z in np.flatnonzero(adjacent[x] & adjacent[y]):
                # A pair the knowledge removed untested has no separating
                # set, and says nothing of colliders (pgmpy raises KeyError).
                sepset = sepsets.get(frozenset((x, y)))
                if sepset is None or z in sepset:
                    continue
                if tiers is not None and tiers[z] < max(tiers[x], tiers[y]):
                    continue
                if graph[x, z] and graph[y, z] and not (reach[z, x] or reach[z, y]):
                    graph[z, x] = graph[z, y] = False
                    reach = _reach(graph & ~graph.T)

    if knowledge is None:
        return meek(graph, adjacent)
    if knowledge.tiers is None:
        if knowledge.enforce:
            return meek(graph, adjacent)
        graph = meek(graph, adjacent)
    graph = knowledge.apply(graph, names)
    return meek(graph, adjacent, rule_4=True)


def meek(graph: np.ndarray, adjacent: np.ndarray, rule_4: bool = False) -> np.ndarray:
    """Meek's rules 1-3 (and 4, with ``rule_4``) on the partially directed
    ``graph`` until nothing changes, as :func:`orient` describes; rule 4
    (``d -> c -> b``, ``a - b``, ``a - d``, ``a`` adjacent to ``c``, ``b``
    and ``d`` not adjacent: ``a -> b``; Meek 1995) matters only with
    background knowledge. No orientation closes a directed cycle."""
    graph = graph.copy()
    reach = _reach(graph & ~graph.T)
    d = graph.shape[0]

    def undirected(a):
        return np.flatnonzero(graph[a] & graph[:, a])

    def directed(a, b):
        return graph[a, b] and not graph[b, a]

    def orient_edge(a, b):
        nonlocal reach
        graph[b, a] = False
        reach = _reach(graph & ~graph.T)

    nodes = list(range(d))
    changed = True
    while changed:
        changed = False
        for u in nodes:  # rule 1
            for w in np.flatnonzero(graph[:, u] & ~graph[u]):
                for v in undirected(u):
                    if not (graph[u, v] and graph[v, u]) or adjacent[w, v]:
                        continue
                    parents = np.flatnonzero(graph[:, v] & ~graph[v])
                    if any(p != u and not adjacent[u, p] for p in parents):
                        continue  # a new unshielded collider at v
                    if reach[v, u]:
                        continue  # closes a cycle
                    orient_edge(u, v)
                    changed = True
        for w in nodes:  # rule 2
            us = np.flatnonzero(graph[:, w] & ~graph[w])
            vs = np.flatnonzero(graph[w] & ~graph[:, w])
            for u in us:
                for v in vs:
                    if graph[u, v] and graph[v, u]:
                        orient_edge(u, v)
                        changed = True
        for u in nodes:  # rule 3
            nbrs = undirected(u)
            if len(nbrs) < 3:
                continue
            for w1, w2, v in permutations(nbrs, 3):
                if (
                    directed(w1, v)
                    and directed(w2, v)
                    and not adjacent[w1, w2]
                    and not reach[v, u]
                ):
                    orient_edge(u, v)
                    changed = True
                    break
        if not rule_4:
            continue
        for c in nodes:  # rule 4
            for b in np.flatnonzero(graph[c] & ~graph[:, c]):
                for e in np.flatnonzero(graph[:, c] & ~graph[c]):
                    if b == e or adjacent[b, e]:
                        continue
                    for a in undirected(b):
                        if (
                            graph[a, e]
                            and graph[e, a]
                            and adjacent[a, c]
                            and graph[a, b]
                            and graph[b, a]
                            and not reach[b, a]
                        ):
                            orient_edge(a, b)
                            changed = True
                            break
    return graph


def extend_to_dag(graph: np.ndarray, names=None) -> np.ndarray:
    """A DAG with the skeleton and the colliders of a partially directed graph
    (Dor and Tarsi 1992), as pgmpy's ``PDAG.to_dag``: repeatedly take the
    first variable (in the order of the names) with no outgoing directed edge
    whose undirected neighbours are adjacent to all its other neighbours,
    point its undirected edges into it, and remove it."""
    d = graph.shape[0]
    order = _name_order(names) if names is not None else list(range(d))
    dag = np.zeros((d, d), dtype=bool)
    left = graph.copy()
    alive = np.ones(d, dtype=bool)
    while alive.any():
        for x in order:
            if not alive[x] or (left[x] & ~left[:, x]).any():
                continue
            adjacent = left[x] | left[:, x]
            adjacent[x] = False
            ok = all(
                ((left[y] | left[:, y]) | (np.arange(d) == y))[adjacent].all()
                for y in np.flatnonzero(left[x] & left[:, x])
            )
            if ok:
                break
        else:
            # Not extendable (conflicting tests): a sink of the directed part
            # (acyclic, by :func:`orient`) takes its undirected edges in, so
            # the result stays acyclic, at the price of a collider more.
            sinks = [v for v in order if alive[v] and not (left[v] & ~left[:, v]).any()]
            x = sinks[0] if sinks else next(v for v in order if alive[v])
        dag[left[:, x] | left[x], x] = True
        left[x, :] = left[:, x] = False
        alive[x] = False
    return dag


def learn(
    codes,
    cards,
    names,
    params,
    knowledge: Knowledge | None = None,
    values=None,
    is_cont=None,
):
    """pgmpy's PC on encoded data (or on the continuous ``values`` for the
    partial-correlation tests, or both for the conditional Gaussian test,
    ``is_cont`` saying which variables are continuous), with the test,
    significance level, largest conditioning set and variant of ``params``
    (a :class:`~bayeskit.PC`) and the expert ``knowledge``: the directed and
    undirected edges, a DAG of them and the separating sets, in the
    variables' names."""
    test, level = params.ci_test, params.significance_level
    if is_cont is not None:

        def independent(u, v, given):
            return cg_test(codes, cards, values, is_cont, u, v, given)[2] >= level
    elif values is not None:
        gauss = GaussianCI(values)

        def independent(u, v, given):
            return gauss.test(u, v, given, test)[1] >= level
    elif callable(test):

        def independent(u, v, given):
            z = tuple(names[w] for w in given)
            return bool(test(names[u], names[v], z, significance_level=level))
    else:
        lambda_, gaps = LAMBDAS[test], (codes < 0).any(axis=1)

        def independent(u, v, given):
            return ci_test(codes, cards, u, v, given, lambda_, gaps)[2] >= level

    adjacent, sepsets = skeleton(
        independent,
        len(names),
        params.max_cond_vars,
        params.variant,
        names,
        start=None if knowledge is None else knowledge.start(),
        keep=None if knowledge is None else knowledge.keep(),
        tiers=None if knowledge is None else knowledge.tiers,
    )
    tiers = None if knowledge is None else knowledge.tiers
    graph = orient(adjacent, sepsets, names, tiers, knowledge)
    dag = extend_to_dag(graph, names)
    pairs = list(zip(*np.nonzero(graph)))
    directed = [(names[a], names[b]) for a, b in pairs if not graph[b, a]]
    undirected = [(names[a], names[b]) for a, b in pairs if a < b and graph[b, a]]
    edges = [(names[x], names[y]) for y, x in zip(*np.nonzero(dag.T))]
    separating_sets = {
        frozenset(names[i] for i in pair): tuple(names[i] for i in given)
        for pair, given in sepsets.items()
    }
    return directed, undirected, edges, separating_sets
