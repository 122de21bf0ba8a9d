"""Loopy belief propagation on a Bayesian network's factor graph, batched over rows.

Sum-product message passing (Pearl 1988) run on the factor graph of the
network, one factor per conditional probability table, whether or not the
graph has loops: on a polytree (a DAG whose skeleton is a forest) the factor
graph is a tree and the beliefs at the fixed point are the exact marginals;
with loops they are the Bethe approximation (Yedidia, Freeman and Weiss 2005),
which may be far off (on ALARM the marginal of EXPCO2 is off by about 0.24 in
total variation) and may not converge at all. Messages are damped,

.. math::

    m^{(t+1)} = (1 - \\delta)\\, \\tilde m^{(t+1)} + \\delta\\, m^{(t)},

the schedule is synchronous (every message of an iteration from those of the
one before), and the iterations stop when the largest change of a message,
the residual, falls below ``tol`` in every row, or after ``max_iter``.

Messages are kept as probabilities normalised to sum to one (the scaled
recursion of the chain kernels): every product involves one table and a few
normalised vectors, so nothing underflows that a log-space pass would keep.
Every evidence row is one slice of a leading batch axis; observed variables
enter as one-hot unary factors, soft evidence as positive ones.

References
----------
.. [1] J. Pearl, "Probabilistic Reasoning in Intelligent Systems", Morgan
   Kaufmann, 1988, section 4.3.
.. [2] K. P. Murphy, Y. Weiss and M. I. Jordan, "Loopy belief propagation for
   approximate inference: an empirical study", UAI 1999.
.. [3] J. S. Yedidia, W. T. Freeman and Y. Weiss, "Constructing free-energy
   approximations and generalized belief propagation algorithms", IEEE
   Transactions on Information Theory 51(7), 2005.
.. [4] D. Koller and N. Friedman, "Probabilistic Graphical Models", MIT Press,
   2009, section 11.3.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .._logmath import safe_log

__all__ = ["LoopyBP", "LoopyResult", "loopy_belief_propagation"]


class LoopyResult(NamedTuple):
    """What :func:`loopy_belief_propagation` returns.

    Attributes
    ----------
    log_marginals : dict of node -> ndarray of shape (n, k)
        The log belief of every variable not observed (normalised).
    log_evidence : ndarray of shape (n,)
        0 where the evidence is possible, ``-inf`` where the messages show it
        impossible (a belief of all zeros). Not ``log P(evidence)``.
    converged : ndarray of bool of shape (n,)
        Whether the row's residual fell below ``tol``.
    residual : ndarray of shape (n,)
        The largest change of a message in the last iteration, per row.
    n_iter : int
        The iterations run.
    lambdas : dict of node -> ndarray of shape (n, k)
        Of every variable not observed, the product of its soft evidence and
        of the messages from its children's tables (what the evidence below
        it says about it, normalised): the likelihood that
        :func:`~bayeskit.graph.likelihood_weighting` folds into its
        proposal with ``proposal="loopy"``.
    """

    log_marginals: dict
    log_evidence: np.ndarray
    converged: np.ndarray
    residual: np.ndarray
    n_iter: int
    lambdas: dict = {}


def _normalise(p: np.ndarray) -> np.ndarray:
    """``p`` over its sum along the last axis; a row of zeros stays zero."""
    total = p.sum(axis=-1, keepdims=True)
    total[total == 0] = 1.0
    return p / total


def _unaries(net, observed: tuple, values: np.ndarray, soft: Mapping, n: int) -> dict:
    """The unary factor of every variable: one-hot for the observed ones, the
    soft evidence's likelihoods, or None (no factor)."""
    out: dict = {}
    for j, v in enumerate(observed):
        u = np.zeros((n, net.cards[v]))
        u[np.arange(n), values[:, j]] = 1.0
        out[v] = u
    for v, log_lik in soft.items():
        if v in out:
            continue
        out[v] = np.broadcast_to(_normalise(np.exp(log_lik)), (n, net.cards[v]))
    return out


def loopy_belief_propagation(
    net,
    observed: tuple,
    values: np.ndarray,
    *,
    soft: Mapping | None = None,
    damping: float = 0.5,
    tol: float = 1e-6,
    max_iter: int = 100,
) -> LoopyResult:
    """Posterior marginals of every variable by (damped) loopy belief propagation.

    Parameters
    ----------
    net : BayesNet
        The network, with its tables.
    observed, values
        The evidence, as :meth:`BayesNet.evidence` returns it: ``values`` of
        shape ``(n, len(observed))``, one row per case.
    soft : mapping of node -> ndarray of shape (1, k) or (n, k), default=None
        Log likelihoods of soft evidence on unobserved variables.
    damping : float in [0, 1), default=0.5
        The weight of the previous message (0: no damping).
    tol : float, default=1e-6
        The residual (largest change of a message, in probability) below
        which a row has converged.
    max_iter : int, default=100
        The most iterations.

    Returns
    -------
    LoopyResult
    """
    soft = {} if soft is None else soft
    n = values.shape[0]
    cards = net.cards
    tables = net._tables()
    unary = _unaries(net, observed, values, soft, n)
    letters = string.ascii_letters
    factors = []  # (table, scope, [einsum subscripts per position])
    incident: dict = {v: [] for v in net.variables}
    for v in net.variables:
        scope = net.families[v]
        table = np.exp(tables[v])
        sub = letters[1 : len(scope) + 1]
        specs = []
        for i in range(len(scope)):
            ins = [sub] + ["a" + sub[j] for j in range(len(scope)) if j != i]
            specs.append(",".join(ins) + "->a" + sub[i])
        f = len(factors)
        factors.append((table, scope, specs))
        for i, u in enumerate(scope):
            incident[u].append((f, i))
    # r[f][i]: factor f -> its i-th variable; q[f][i]: the other way.
    r = [[np.full((n, cards[u]), 1.0 / cards[u]) for u in sc] for _, sc, _ in factors]
    q = [[m.copy() for m in ms] for ms in r]
    residual = np.full(n, np.inf)
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007  (n_iter is returned)
        _to_factors(incident, unary, r, q, cards, n)
        new = _to_variables(factors, q, n)
        residual = np.zeros(n)
        for f, msgs in enumerate(new):
            for i, m in enumerate(msgs):
                if damping:
                    m = (1.0 - damping) * m + damping * r[f][i]
                np.maximum(residual, np.abs(m - r[f][i]).max(axis=1), out=residual)
                r[f][i] = m
        if residual.max() < tol:
            break
    # The beliefs from one undamped update: the same fixed point, and
    # messages that are exactly zero where the evidence rules a state out.
    _to_factors(incident, unary, r, q, cards, n)
    r = _to_variables(factors, q, n)
    log_marginals, lambdas = {}, {}
    possible = np.ones(n, dtype=bool)
    seen = set(observed)
    own = {
        v: (f, len(scope) - 1)
        for f, (_, scope, _) in enumerate(factors)
        for v in scope[-1:]
    }
    for v, inc in incident.items():
        lam = unary.get(v)
        lam = np.ones((n, cards[v])) if lam is None else lam.copy()
        for f, i in inc:
            if (f, i) != own[v]:
                lam *= r[f][i]
        belief = lam * r[own[v][0]][own[v][1]]
        total = belief.sum(axis=1)
        possible &= total > 0
        if v not in seen:
            log_marginals[v] = safe_log(_normalise(belief))
            lambdas[v] = _normalise(lam)
    return LoopyResult(
        log_marginals,
        np.where(possible, 0.0, -np.inf),
        residual < tol,
        residual,
        n_iter,
        lambdas,
    )


def _to_factors(incident, unary, r, q, cards, n) -> None:
    """Every variable -> factor message (in ``q``), from the messages ``r``."""
    for v, inc in incident.items():
        for f, i in inc:
            msg = unary.get(v)
            msg = np.ones((n, cards[v])) if msg is None else msg.copy()
            for g, j in inc:
                if (g, j) != (f, i):
                    msg *= r[g][j]
            q[f][i] = _normalise(msg)


def _to_variables(factors, q, n) -> list:
    """Every factor -> variable message, normalised, from the messages ``q``."""
    out = []
    for f, (table, scope, specs) in enumerate(factors):
        msgs = []
        for i in range(len(scope)):
            if len(scope) == 1:
                new = np.broadcast_to(table, (n, table.shape[0]))
            else:
                others = [q[f][j] for j in range(len(scope)) if j != i]
                new = np.einsum(specs[i], table, *others)
            msgs.append(_normalise(new))
        out.append(msgs)
    return out


@dataclass(frozen=True)
class LoopyBP:
    """Approximate inference by damped loopy belief propagation.

    Give an instance as ``method=`` to :meth:`bayeskit.BayesianNetwork.query`
    or :meth:`~bayeskit.BayesianNetwork.predict_proba` (``method="loopy"`` is
    ``LoopyBP()``). Exact on polytrees; on networks with loops the beliefs
    are the Bethe approximation, which can be far from the posterior (see
    ``bayeskit.graph.loopy``). Rows whose messages do not converge get a
    ``ConvergenceWarning``.

    Parameters
    ----------
    damping : float in [0, 1), default=0.5
        The weight of the previous message in every update.
    tol : float, default=1e-6
        The residual (largest change of a message) that counts as converged.
    max_iter : int, default=200
        The most iterations.
    """

    damping: float = 0.5
    tol: float = 1e-6
    max_iter: int = 200

    name = "loopy"

    def __post_init__(self):
        if not 0 <= self.damping < 1:
            raise ValueError(f"damping must be in [0, 1), got {self.damping!r}")
        if not self.tol > 0:
            raise ValueError(f"tol must be > 0, got {self.tol!r}")
        if int(self.max_iter) != self.max_iter or self.max_iter < 1:
            raise ValueError(f"max_iter must be an int >= 1, got {self.max_iter!r}")

    def run(self, net, observed, values, soft=None) -> LoopyResult:
        """:func:`loopy_belief_propagation` with these settings."""
        return loopy_belief_propagation(
            net,
            observed,
            values,
            soft=soft,
            damping=self.damping,
            tol=self.tol,
            max_iter=int(self.max_iter),
        )
