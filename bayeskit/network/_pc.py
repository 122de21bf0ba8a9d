"""The PC algorithm on discrete data: conditional independence tests from
counts, the stable skeleton search, and the orientation of its edges.

The skeleton is PC-stable (Colombo and Maathuis 2014): at each size ``l`` of
conditioning set, the neighbours of every variable are fixed at the start of
the level, and an edge ``u - v`` is removed as soon as ``u`` and ``v`` test
independent given some ``l`` neighbours of ``u`` (then of ``v``); so the
skeleton does not depend on the order of the variables. Colliders
``x -> z <- y`` are oriented where ``z`` is not in the separating set of ``x``
and ``y``, then Meek's rules 1-3 (Meek 1995) orient what follows, and a DAG
in the equivalence class is drawn from the partially directed graph (Dor and
Tarsi 1992).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from scipy import stats

__all__ = ["ci_test", "extend_to_dag", "orient", "skeleton"]


def _divergence(observed: np.ndarray, expected: np.ndarray, g: bool) -> float:
    """Pearson's chi-square or the G statistic of a table."""
    if g:
        pos = observed > 0
        return float(
            2.0 * np.sum(observed[pos] * np.log(observed[pos] / expected[pos]))
        )
    return float(np.sum((observed - expected) ** 2 / expected))


def _table_statistic(table: np.ndarray, g: bool) -> tuple[float, int]:
    """The statistic and degrees of freedom of the independence of the rows
    and columns of a contingency table (Yates's continuity correction when
    it has one degree of freedom, as ``scipy.stats.chi2_contingency``)."""
    n = table.sum()
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / n
    dof = (table.shape[0] - 1) * (table.shape[1] - 1)
    if dof == 0:
        return 0.0, 0
    observed = table.astype(np.float64)
    if dof == 1:
        diff = expected - observed
        observed = observed + np.minimum(0.5, np.abs(diff)) * np.sign(diff)
    return _divergence(observed, expected, g), dof


def ci_test(codes: np.ndarray, cards: np.ndarray, x: int, y: int, given, g: bool):
    """The statistic, degrees of freedom and p-value of ``x`` independent of
    ``y`` given ``given`` (chi-square, or the G-test with ``g``).

    Without conditioning variables, one table of all the states of x and y;
    with them, one table per joint state of ``given`` seen in the data, over
    the states of x and of y seen in it, the statistics and degrees of
    freedom summed (as pgmpy's ``chi_square`` and ``g_sq``).
    """
    cols = [x, y, *given]
    rows = (codes[cols] >= 0).all(axis=0)
    cx, cy = codes[x][rows], codes[y][rows]
    rx, ry = int(cards[x]), int(cards[y])
    if not given:
        table = np.bincount(cx * ry + cy, minlength=rx * ry).reshape(rx, ry)
        table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
        stat, dof = _table_statistic(table, g)
    else:
        z = np.zeros(rows.sum(), dtype=np.int64)
        for v in given:
            z = z * int(cards[v]) + codes[v][rows]
        _, stratum = np.unique(z, return_inverse=True)
        n_strata = int(stratum.max()) + 1
        tables = np.bincount(
            (stratum * rx + cx) * ry + cy, minlength=n_strata * rx * ry
        ).reshape(n_strata, rx, ry)
        stat, dof = 0.0, 0
        for table in tables:
            table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
            s, d = _table_statistic(table, g)
            stat += s
            dof += d
    if dof == 0 and not given:
        # No two states on both sides (a constant column, a single row): the
        # data cannot show a dependence, and the test does not reject
        # independence, as scipy.stats.chi2_contingency's p-value of 1 in
        # pgmpy. Given other variables, a sum of no degree of freedom keeps
        # pgmpy's undefined p-value (NaN), which never removes an edge.
        return stat, dof, 1.0
    with np.errstate(invalid="ignore"):
        p_value = 1.0 - stats.chi2.cdf(stat, df=dof)
    return stat, dof, float(p_value)


def skeleton(
    codes: np.ndarray,
    cards: np.ndarray,
    significance_level: float,
    max_cond_vars: int,
    g: bool,
) -> tuple[np.ndarray, dict]:
    """The undirected adjacency matrix and the separating sets (a dict from
    ``frozenset((u, v))`` to a tuple of variables) of PC-stable."""
    d = len(cards)
    adjacent = ~np.eye(d, dtype=bool)
    sepsets: dict = {}
    level = 0
    while (adjacent.sum(axis=1) >= level).any():
        neighbours = [set(np.flatnonzero(adjacent[u])) for u in range(d)]
        for u, v in zip(*np.nonzero(np.triu(adjacent))):
            u, v = int(u), int(v)
            candidates = [
                *combinations(sorted(neighbours[u] - {v}), level),
                *combinations(sorted(neighbours[v] - {u}), level),
            ]
            for given in candidates:
                _, _, p = ci_test(codes, cards, u, v, given, g)
                if p >= significance_level:
                    adjacent[u, v] = adjacent[v, u] = False
                    sepsets[frozenset((u, v))] = tuple(int(w) for w in given)
                    break
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


def orient(adjacent: np.ndarray, sepsets: dict) -> np.ndarray:
    """The partially directed graph: ``graph[a, b] and not graph[b, a]`` is
    ``a -> b``, both is ``a - b``.

    Tests that contradict each other (finite samples) can ask for a collider
    against an earlier one, or for an orientation that closes a directed
    cycle. As in pgmpy and the conservative practice of the literature
    (Spirtes, Glymour and Scheines 2000, section 5.4.2; Meek 1995), no edge
    is oriented against an earlier orientation or so as to close a directed
    cycle (it stays undirected), and Meek's rule 1 does not create a new
    unshielded collider; so the directed part is always acyclic, and
    :func:`extend_to_dag` always finds a DAG.
    """
    d = adjacent.shape[0]
    graph = adjacent.copy()
    reach = np.zeros((d, d), dtype=bool)
    for x, y in combinations(range(d), 2):
        if adjacent[x, y]:
            continue
        for z in np.flatnonzero(adjacent[x] & adjacent[y]):
            if z not in sepsets.get(frozenset((x, y)), ()):
                # x -> z <- y, unless that would undo an earlier collider or
                # close a cycle (a directed path from z to x or y).
                if graph[x, z] and graph[y, z] and not (reach[z, x] or reach[z, y]):
                    graph[z, x] = graph[z, y] = False
                    reach = _reach(graph & ~graph.T)
    changed = True
    while changed:
        changed = False
        directed = graph & ~graph.T
        undirected = graph & graph.T
        for a, b in zip(*np.nonzero(np.triu(undirected))):
            for u, v in ((a, b), (b, a)):
                if not (graph[u, v] and graph[v, u]) or reach[v, u]:
                    continue  # oriented already, or u -> v would close a cycle
                # R1: w -> u - v, w and v not adjacent: u -> v, unless v has
                # a parent not adjacent to u (a new unshielded collider).
                r1 = (directed[:, u] & ~adjacent[:, v]).copy()
                r1[v] = False
                collider = directed[:, v] & ~adjacent[:, u]
                collider[u] = False
                # R2: u -> w -> v: u -> v.
                r2 = directed[u] & directed[:, v]
                # R3: u - w1 -> v <- w2 - u, w1 and w2 not adjacent: u -> v.
                ws = np.flatnonzero(undirected[u] & directed[:, v])
                r3 = any(not adjacent[w1, w2] for w1, w2 in combinations(ws, 2))
                if (r1.any() and not collider.any()) or r2.any() or r3:
                    graph[v, u] = False
                    directed = graph & ~graph.T
                    undirected = graph & graph.T
                    reach = _reach(directed)
                    changed = True
    return graph


def extend_to_dag(graph: np.ndarray) -> np.ndarray:
    """A DAG with the skeleton and the colliders of a partially directed graph
    (Dor and Tarsi 1992): repeatedly take a variable with no outgoing directed
    edge whose undirected neighbours are adjacent to all its other
    neighbours, point its undirected edges into it, and remove it."""
    d = graph.shape[0]
    dag = np.zeros((d, d), dtype=bool)
    left = graph.copy()
    alive = np.ones(d, dtype=bool)
    while alive.any():
        for x in np.flatnonzero(alive):
            directed_out = left[x] & ~left[:, x]
            undirected = left[x] & left[:, x]
            adjacent = left[x] | left[:, x]
            if directed_out.any():
                continue
            ok = all(
                ((left[y] | left[:, y]) | (np.arange(d) == y))[adjacent].all()
                for y in np.flatnonzero(undirected)
            )
            if ok:
                break
        else:
            # Not extendable (conflicting tests): a sink of the directed part
            # (acyclic, by :func:`orient`) takes its undirected edges in, so
            # the result stays acyclic, at the price of a collider more.
            sinks = [
                v for v in np.flatnonzero(alive) if not (left[v] & ~left[:, v]).any()
            ]
            x = int(sinks[0])
        parents = left[:, x].copy()
        dag[parents, x] = True
        dag[x, left[x] & ~left[:, x]] = True
        left[x, :] = left[:, x] = False
        alive[x] = False
    return dag
