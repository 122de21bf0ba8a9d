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

from .network import BayesNet, NetworkStats
from .semiring import SUM_PRODUCT

__all__ = ["expected_stats"]


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
    net: BayesNet, codes: np.ndarray, weights: np.ndarray
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
    position = {v: j for j, v in enumerate(variables)}
    missing = codes < 0
    incomplete = missing.any(axis=1)
    whole = net.stats(codes[~incomplete], weights[~incomplete])
    log_lik = _log_likelihood_complete(whole, log_cpds)
    shapes = [c.shape for c in whole.counts]
    counts = [c.ravel().astype(float) for c in whole.counts]
    strides = [_strides(s) for s in shapes]
    codes, weights = codes[incomplete], weights[incomplete]
    for rows, observed in BayesNet.group_rows(missing[incomplete]):
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
                base += codes[rows, position[family[k]]] * strides[i][k]
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
                step = np.arange(shapes[i][k], dtype=np.intp) * strides[i][k]
                offsets = (offsets[:, None] + step[None, :]).ravel()
            index = base[:, None] + offsets[None, :]
            mass = post * w[:, None]
            flat = np.bincount(index.ravel(), weights=mass.ravel(), minlength=size)
            counts[i] += flat
    stats = NetworkStats(tuple(c.reshape(s) for c, s in zip(counts, shapes)))
    return stats, log_lik
