"""Drawing rows of a Bayesian network: forward sampling, and exact draws given evidence.

Both draw every variable (or clique) for all rows at once, by inversion
(Devroye 1986, section 2.2): a table's rows, one distribution each, are laid
end to end as cumulative distributions, row ``r`` shifted by ``r`` (so the
whole table is one sorted array), and a draw from row ``r`` with the
uniform number ``u`` is ``searchsorted(table, r + u) - r k``: the number of
cumulative probabilities of its row at most ``u``. One ``searchsorted`` per
variable or clique, whatever the number of rows.

:func:`forward_sample` is ancestral sampling (Koller and Friedman 2009,
section 12.1.1): every variable in topological order from its table's row
picked by its parents' drawn states, one uniform number per variable and
row; the cumulative tables are compiled once per set of tables and kept in
the structure's ``memo``.

:func:`posterior_sample` draws given one row of evidence. The tables
reduced by the evidence are calibrated once on the network's junction tree;
every clique's belief is then proportional to the posterior of its
variables. The draws go down the tree from a root (Dawid 1992, section 6;
Koller and Friedman 2009, section 12.1.2): the root clique's variables
jointly from its normalised belief, and each other clique's new variables
from its belief given its separator with its parent, whose states are
drawn already (by the running intersection property the separator is all
that the clique shares with the cliques drawn before it). Every row is an
independent, exact draw from the posterior: unlike Gibbs sampling
(:mod:`bayeskit.graph.gibbs`) there is no burn-in, no dependence between
rows and no reducible chain.

References
----------
.. [1] L. Devroye, "Non-Uniform Random Variate Generation", Springer, 1986.
.. [2] A. P. Dawid, "Applications of a general propagation algorithm for
   probabilistic expert systems", Statistics and Computing 2(1), 1992.
.. [3] D. Koller and N. Friedman, "Probabilistic Graphical Models", MIT Press,
   2009, sections 10.2 and 12.1.
"""

from __future__ import annotations

import math

import numpy as np

from .factor import LogFactor
from .junction_tree import JunctionTree

__all__ = ["forward_sample", "inverse_cdf_draw", "posterior_sample"]


def cumulative_rows(probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``probs`` (one unnormalised distribution a row, shape
    ``(r, k)``; a row of zeros, never reached, is taken as uniform) as one
    sorted array of cumulative distributions, row ``r`` shifted by ``r``,
    and the last state of positive probability of each row (one number
    when it is the last state of every row)."""
    probs = np.array(probs, dtype=float)
    r, k = probs.shape
    probs[probs.sum(axis=1) <= 0] = 1.0
    cdf = np.cumsum(probs, axis=1)
    cdf /= cdf[:, -1:]
    cdf += np.arange(r)[:, None]
    last = (k - 1 - np.argmax(probs[:, ::-1] > 0, axis=1)).astype(np.intp)
    if (last == k - 1).all():
        last = last[:1]
    return cdf.ravel(), last


def _draw(cdf: np.ndarray, last: np.ndarray, k: int, rows, u: np.ndarray):
    """Draws from the rows ``rows`` (None: row 0) of a table compiled by
    :func:`cumulative_rows`, by inversion of ``u``. ``u`` is overwritten."""
    if rows is None:
        code = np.searchsorted(cdf, u, side="right")
        return np.minimum(code, last[0], out=code)
    u += rows
    code = np.searchsorted(cdf, u, side="right")
    code -= rows * k
    # r + u may round up to r + 1: never past the row's last state of
    # positive probability.
    return np.minimum(code, last[rows] if last.shape[0] > 1 else last[0], out=code)


def inverse_cdf_draw(probs: np.ndarray, rows, u: np.ndarray) -> np.ndarray:
    """Draws of the rows ``rows`` (None: every draw from row 0) of the table
    ``probs`` (one distribution a row, unnormalised, shape ``(r, k)``), by
    inversion of ``u`` (uniform in [0, 1), one per draw): the number of
    cumulative probabilities of the row at most ``u``, never a state past
    the row's last of positive probability."""
    cdf, last = cumulative_rows(probs)
    return _draw(cdf, last, np.shape(probs)[1], rows, np.array(u, dtype=float))


def forward_sample(net, n: int, random_state) -> np.ndarray:
    """Rows drawn by forward (ancestral) sampling, parents first.

    Parameters
    ----------
    net : BayesNet
        The network, with its tables.
    n : int
        Number of rows.
    random_state : numpy.random.Generator or RandomState
        The source of uniform numbers (its ``random(n)``, once per variable
        in topological order).

    Returns
    -------
    ndarray of int of shape (n, n_variables)
        State codes, columns in the order of ``net.variables``.
    """
    plan = net.memo.get("forward_sampling")
    if plan is None:
        plan = net.memo["forward_sampling"] = _forward_plan(net)
    out = np.empty((len(net.variables), n), dtype=np.intp)
    for j, k, parents, strides, cdf, last in plan:
        rows = None
        if parents:
            rows = out[parents[0]] * strides[0]
            for p, stride in zip(parents[1:], strides[1:]):
                rows += out[p] * stride
        out[j] = _draw(cdf, last, k, rows, random_state.random(n))
    return out.T.copy()


def _forward_plan(net) -> list:
    """Per variable in topological order: its column, number of states,
    parents' columns and strides (the row of its table), and its table
    compiled by :func:`cumulative_rows`."""
    log_cpds = net._tables()
    column = {v: j for j, v in enumerate(net.variables)}
    plan = []
    for v in net.dag.topological_order():
        parents = net.dag.parents(v)
        k = net.cards[v]
        cdf, last = cumulative_rows(np.exp(log_cpds[v]).reshape(-1, k))
        cards = [net.cards[u] for u in parents]
        strides = np.cumprod([1, *cards[:0:-1]])[::-1].tolist() if cards else []
        plan.append((column[v], k, [column[u] for u in parents], strides, cdf, last))
    return plan


def _tree(net) -> JunctionTree:
    tree = net.memo.get("sampling_tree")
    if tree is None:
        tree = net.memo["sampling_tree"] = JunctionTree.from_dag(net.dag, net.cards)
    return tree


def posterior_sample(
    net, observed: tuple, values: np.ndarray, n: int, random_state
) -> np.ndarray:
    """Independent rows drawn from the network's posterior given one row of
    evidence.

    Parameters
    ----------
    net : BayesNet
        The network, with its tables.
    observed, values
        One row of evidence, as :meth:`BayesNet.evidence` returns it
        (``values`` of shape ``(1, len(observed))``).
    n : int
        The rows to draw.
    random_state : numpy.random.Generator or RandomState
        The source of uniform numbers (its ``random(n)``).

    Returns
    -------
    ndarray of int of shape (n, n_variables)
        State codes, columns in the order of ``net.variables``; the observed
        columns hold the evidence.

    Raises
    ------
    ValueError
        If the evidence has probability zero under the network.
    """
    tables = net._tables()
    cards = net.cards
    factors = [
        LogFactor(net.families[v], [cards[u] for u in net.families[v]], tables[v])
        for v in net.variables
    ]
    for v, x in zip(observed, values[0]):
        indicator = np.full(cards[v], -np.inf)
        indicator[int(x)] = 0.0
        factors.append(LogFactor([v], [cards[v]], indicator))
    tree = _tree(net)
    calibrated = tree.calibrate(factors)
    if np.isneginf(calibrated.log_evidence):
        raise ValueError("the evidence has probability zero under the network")
    position = {v: j for j, v in enumerate(net.variables)}
    out = np.empty((len(net.variables), n), dtype=np.intp)
    drawn: set = set()
    n_cliques = len(tree.layouts)
    seen = [False] * n_cliques
    for root in range(n_cliques):
        if seen[root]:
            continue
        seen[root] = True
        queue = [root]
        for clique in queue:
            belief = calibrated.beliefs[clique]
            given = [v for v in belief.variables if v in drawn]
            new = [v for v in belief.variables if v not in drawn]
            for nb in tree.neighbours(clique):
                if not seen[nb]:
                    seen[nb] = True
                    queue.append(nb)
            if not new:
                continue
            table = belief.transpose(given + new).log_values
            n_given = math.prod(cards[v] for v in given)
            log_p = table.reshape(n_given, -1)
            with np.errstate(invalid="ignore"):
                probs = np.exp(log_p - log_p.max(axis=1, keepdims=True))
            probs[~np.isfinite(probs)] = 0.0
            rows = None
            if given:
                rows = np.ravel_multi_index(
                    tuple(out[position[v]] for v in given), [cards[v] for v in given]
                )
            flat = inverse_cdf_draw(probs, rows, random_state.random(n))
            for v, code in zip(
                new, np.unravel_index(flat, [cards[v] for v in new]), strict=True
            ):
                out[position[v]] = code
            drawn.update(new)
    return out.T.copy()
