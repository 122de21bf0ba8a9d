"""Gibbs sampling of a Bayesian network given evidence, many chains at once.

Each unobserved variable in turn is redrawn from its distribution given all
the others, which depends only on its Markov blanket (Pearl 1987; Koller and
Friedman 2009, section 12.3.1):

.. math::

    P(x_v \\mid x_{-v}) \\propto P(x_v \\mid \\mathrm{pa}(v))
    \\prod_{c \\in \\mathrm{ch}(v)} P(x_c \\mid \\mathrm{pa}(c)).

A sweep redraws every unobserved variable once, parents first, in all chains
at once (one array axis). Chains start from draws of likelihood weighting
resampled by their weights (so every start is consistent with the evidence),
run ``burn_in`` sweeps, and then give one row every ``thin`` sweeps, chain
after chain, until ``n`` rows are drawn. The rows are draws of a Markov chain
whose stationary distribution is the posterior given the evidence: dependent
within a chain, and exact only in the limit; a network with deterministic
tables can make the chain reducible (it then never leaves the start's
region).

References
----------
.. [1] S. Geman and D. Geman, "Stochastic relaxation, Gibbs distributions, and
   the Bayesian restoration of images", IEEE Transactions on Pattern Analysis
   and Machine Intelligence 6(6), 1984.
.. [2] J. Pearl, "Evidential reasoning using stochastic simulation of causal
   models", Artificial Intelligence 32(2), 1987.
.. [3] D. Koller and N. Friedman, "Probabilistic Graphical Models", MIT Press,
   2009, section 12.3.
"""

from __future__ import annotations

import numpy as np

__all__ = ["gibbs_sample"]


def _start(net, observed: tuple, values: np.ndarray, n_chains: int, rng):
    """Start states: likelihood-weighting draws resampled by their weights."""
    tables = net._tables()
    n_draws = 10 * n_chains
    column = {v: j for j, v in enumerate(observed)}
    states = np.empty((n_draws, len(net.variables)), dtype=np.intp)
    position = {v: i for i, v in enumerate(net.variables)}
    logw = np.zeros(n_draws)
    for v in net.dag.topological_order():
        parents = net.dag.parents(v)
        k = net.cards[v]
        table = tables[v].reshape(-1, k)
        flat = np.zeros(n_draws, dtype=np.intp)
        if parents:
            flat = np.ravel_multi_index(
                tuple(states[:, position[u]] for u in parents),
                [net.cards[u] for u in parents],
            )
        if v in column:
            x = np.full(n_draws, values[0, column[v]], dtype=np.intp)
            logw += table[flat, x]
        else:
            cdf = np.cumsum(np.exp(table[flat]), axis=1)
            u = rng.random(n_draws) * cdf[:, -1]
            x = np.minimum((u[:, None] >= cdf).sum(axis=1), k - 1)
        states[:, position[v]] = x
    if not np.isfinite(logw).any():
        raise ValueError(
            "no start consistent with the evidence was found: the evidence has "
            "probability zero (or very nearly) under the network"
        )
    w = np.exp(logw - logw.max())
    picked = rng.choice(n_draws, n_chains, p=w / w.sum())
    return states[picked]


def gibbs_sample(
    net,
    observed: tuple,
    values: np.ndarray,
    n: int,
    *,
    n_chains: int = 200,
    burn_in: int = 100,
    thin: int = 1,
    random_state=None,
) -> np.ndarray:
    """Rows drawn from the network given one row of evidence, by Gibbs sampling.

    Parameters
    ----------
    net : BayesNet
        The network, with its tables.
    observed, values
        One row of evidence, as :meth:`BayesNet.evidence` returns it
        (``values`` of shape ``(1, len(observed))``).
    n : int
        The rows to draw.
    n_chains : int, default=200
        Chains run side by side (fewer if ``n`` is smaller).
    burn_in : int, default=100
        Sweeps of every chain before its first row.
    thin : int, default=1
        Sweeps between two rows of a chain.
    random_state : numpy.random.Generator or RandomState, default=None
        The source of uniform numbers; None: a fresh unseeded Generator.

    Returns
    -------
    ndarray of int of shape (n, n_variables)
        State codes, columns in the order of ``net.variables``; the observed
        columns hold the evidence.
    """
    rng = np.random.default_rng() if random_state is None else random_state
    tables = net._tables()
    n_chains = max(1, min(n_chains, n))
    states = _start(net, observed, values, n_chains, rng)
    position = {v: i for i, v in enumerate(net.variables)}
    seen = set(observed)
    hidden = [v for v in net.dag.topological_order() if v not in seen]
    cards = net.cards

    def flat_index(v, override=None):
        """The row of ``v``'s table for every chain (``override``: the axis
        of one parent held at a value)."""
        parents = net.dag.parents(v)
        if not parents:
            return np.zeros(n_chains, dtype=np.intp)
        cols = [
            np.full(n_chains, override[1])
            if override and u == override[0]
            else states[:, position[u]]
            for u in parents
        ]
        return np.ravel_multi_index(tuple(cols), [cards[u] for u in parents])

    def sweep():
        for v in hidden:
            k = cards[v]
            log_p = tables[v].reshape(-1, k)[flat_index(v)]  # (chains, k)
            for c in net.dag.children(v):
                tc = tables[c].reshape(-1, cards[c])
                xc = states[:, position[c]]
                for a in range(k):
                    log_p[:, a] = log_p[:, a] + tc[flat_index(c, (v, a)), xc]
            p = np.exp(log_p - log_p.max(axis=1, keepdims=True))
            cdf = np.cumsum(p, axis=1)
            u = rng.random(n_chains) * cdf[:, -1]
            states[:, position[v]] = np.minimum((u[:, None] >= cdf).sum(axis=1), k - 1)

    for _ in range(burn_in):
        sweep()
    per_chain = -(-n // n_chains)
    out = np.empty((per_chain, n_chains, len(net.variables)), dtype=np.intp)
    for t in range(per_chain):
        for _ in range(thin):
            sweep()
        out[t] = states
    # Chain after chain: a chain's rows stay together, in order.
    return out.transpose(1, 0, 2).reshape(-1, len(net.variables))[:n]
