"""The E-step of a Bayesian network with missing cells: expected family counts.

EM for a discrete Bayesian network whose data miss some cells (or never show
a latent variable) needs, for every row and every family (a variable and its
parents), the posterior of the family's missing cells given the row's observed
ones (Lauritzen 1995; Koller and Friedman 2009, section 19.2). Rows are
grouped by their pattern of missing cells; each group is calibrated in one
batched pass of the network's junction tree (:meth:`BayesNet.marginals`'s
compiled pattern), and the posterior of a family's missing cells is read off
a clique that holds them all (the moral graph joins every family, so one
does). Rows with no missing cell are counted directly.
"""

from __future__ import annotations

import math

import numpy as np

from .junction_tree import JunctionTree
from .network import BayesNet, NetworkStats
from .semiring import SUM_PRODUCT

__all__ = ["expected_stats"]

# A pattern of missing cells shared by this many rows is compiled (its tree
# reduced by the evidence); rarer ones go through the whole tree with the
# evidence as factors, this many rows at a time.
_MIN_PATTERN_ROWS = 16
_CHUNK = 1024
_INDICATOR = ("expected counts", "indicators")


def _strides(shape: tuple) -> np.ndarray:
    """C-order strides (in elements) of an array of ``shape``."""
    return np.array(
        [math.prod(shape[i + 1 :]) for i in range(len(shape))], dtype=np.intp
    )


def _log_likelihood_complete(stats: NetworkStats, log_cpds: list) -> float:
    """``sum_v sum counts_v log theta_v``: the log-likelihood of whole rows."""
    total = 0.0
    for counts, log_cpd in zip(stats.counts, log_cpds):
        seen = counts > 0
        total += float(np.dot(counts[seen], log_cpd[seen]))
    return total


def expected_stats(
    net: BayesNet, codes: np.ndarray, weights: np.ndarray, plans: dict | None = None
) -> tuple[NetworkStats, float]:
    """Expected counts of every family, and the observed-data log-likelihood.

    Parameters
    ----------
    net : BayesNet
        The network, with tables (the current parameters of EM).
    codes : ndarray of int of shape (n, n_variables)
        State codes, columns in the order of ``net.variables``; -1 for a
        missing cell (a latent variable's column is all -1).
    weights : ndarray of shape (n,)
        The weight of every row.
    plans : dict, default=None
        Where to keep what depends on the structure only (the calibration
        plan of rows of rare patterns), so that EM's iterations share it.

    Returns
    -------
    stats : NetworkStats
        ``counts[i][u, a]``: the weighted sum over rows of the posterior
        probability that the ``i``-th variable has state ``a`` and its
        parents ``u``, given the row's observed cells (one-hot where they are
        all observed); ``incomplete_weight`` is 0.
    log_likelihood : float
        ``sum_rows w log P(observed cells of the row)`` under the tables;
        ``-inf`` when a row of positive weight has probability zero.
    """
    variables = net.variables
    tables = net._tables()
    log_cpds = [tables[v] for v in variables]
    missing = codes < 0
    incomplete = missing.any(axis=1)
    whole = net.stats(codes[~incomplete], weights[~incomplete])
    log_lik = _log_likelihood_complete(whole, log_cpds)
    shapes = [c.shape for c in whole.counts]
    counts = [c.ravel().astype(float) for c in whole.counts]
    codes, weights = codes[incomplete], weights[incomplete]
    few = []  # rows whose pattern of missing cells is rare
    for rows, observed in BayesNet.group_rows(missing[incomplete]):
        if len(rows) < _MIN_PATTERN_ROWS:
            few.append(rows)
            continue
        log_lik += _pattern_counts(net, codes, weights, rows, observed, counts, shapes)
    if few:
        rows = np.sort(np.concatenate(few))
        for start in range(0, len(rows), _CHUNK):
            chunk = rows[start : start + _CHUNK]
            log_lik += _indicator_counts(
                net, codes[chunk], weights[chunk], counts, plans
            )
    stats = NetworkStats(tuple(c.reshape(s) for c, s in zip(counts, shapes)))
    return stats, log_lik


def _pattern_counts(net, codes, weights, rows, observed, counts, shapes) -> float:
    """Add the expected counts of ``rows``, which share the pattern of
    observed cells ``observed``, by one calibration of the pattern's compiled
    tree (reduced by the evidence); their weighted log-likelihood."""
    variables = net.variables
    position = {v: j for j, v in enumerate(variables)}
    log_lik = 0.0
    columns = np.flatnonzero(observed)
    names = tuple(variables[j] for j in columns)
    values = codes[rows[:, None], columns]
    w = weights[rows]
    pattern = net._pattern(names, (), "all")
    plan = pattern.plan
    beliefs, log_z = plan.calibrate(
        net._arrays(pattern, values), SUM_PRODUCT, n=len(rows)
    )
    log_z = np.broadcast_to(log_z, (len(rows),))
    live = w > 0
    log_lik += float(np.dot(w[live], log_z[live]))
    for i, v in enumerate(variables):
        family = net.families[v]
        seen = [k for k, u in enumerate(family) if observed[position[u]]]
        hidden = [k for k, u in enumerate(family) if not observed[position[u]]]
        base = np.zeros(len(rows), dtype=np.intp)
        for k in seen:
            base += codes[rows, position[family[k]]] * _strides(shapes[i])[k]
        size = len(counts[i])
        if not hidden:
            counts[i] += np.bincount(base, weights=w, minlength=size)
            continue
        targets = tuple(family[k] for k in hidden)
        c = plan.tree.clique_containing(targets)
        post = np.exp(plan.normalized_marginal(beliefs[c], c, targets))
        post = post.reshape(post.shape[0], -1)
        offsets = np.zeros(1, dtype=np.intp)
        for k in hidden:
            step = np.arange(shapes[i][k], dtype=np.intp) * _strides(shapes[i])[k]
            offsets = (offsets[:, None] + step[None, :]).ravel()
        index = base[:, None] + offsets[None, :]
        mass = post * w[:, None]
        flat = np.bincount(index.ravel(), weights=mass.ravel(), minlength=size)
        counts[i] += flat
    return log_lik


def _indicator_counts(net, codes, weights, counts, plans) -> float:
    """Add the expected counts of rows of any patterns by one calibration of
    the whole tree, every variable hidden and each row's evidence a factor
    per variable (0 at the observed state, -inf elsewhere; 0 everywhere when
    missing); their weighted log-likelihood."""
    variables = net.variables
    n = codes.shape[0]
    plan, homes = _indicator_plan(net, {} if plans is None else plans)
    arrays = [net._tables()[v][None] for v in variables]
    for j, v in enumerate(variables):
        states = np.arange(net.cards[v])
        col = codes[:, j, None]
        arrays.append(np.where((col < 0) | (col == states), 0.0, -np.inf))
    beliefs, log_z = plan.calibrate(arrays, SUM_PRODUCT, n=n)
    live = weights > 0
    log_lik = float(np.dot(weights[live], np.broadcast_to(log_z, (n,))[live]))
    for i, v in enumerate(variables):
        c = homes[i]
        post = np.exp(plan.normalized_marginal(beliefs[c], c, net.families[v]))
        counts[i] += weights @ post.reshape(n, -1)
    return log_lik


def _indicator_plan(net, plans: dict):
    """The plan of the whole tree for the CPTs and one evidence factor per
    variable, with the home clique of every family. No factor is static (every
    clique holds evidence), so the plan keeps no message and serves any
    tables of the structure."""
    hit = plans.get(_INDICATOR)
    if hit is None:
        tree = JunctionTree.from_dag(net.dag, net.cards)
        variables = net.variables
        homes = list(tree.family_homes)
        plan = tree.plan(
            [net.families[v] for v in variables] + [(v,) for v in variables],
            net.cards,
            [False] * (2 * len(variables)),
            homes + [tree.clique_containing([v]) for v in variables],
        )
        hit = plans[_INDICATOR] = (plan, homes)
    return hit
