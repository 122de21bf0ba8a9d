"""Likelihood weighting: posterior probabilities by importance sampling, with errors.

Every row of evidence gets its own draws. A draw runs through the variables
parents first; an unobserved variable is sampled from its table given its
parents' drawn states, an observed one is set to its value and multiplies the
draw's weight by its probability given the parents (Fung and Chang 1990;
Shachter and Peot 1990; Koller and Friedman 2009, section 12.2.2). Soft
evidence multiplies the weight by its likelihood of the drawn state. The
proposal is the network with the evidence's incoming arcs cut, so the
estimate of a posterior probability is the self-normalised importance
sampling ratio

.. math::

    \\hat p_a = \\frac{\\sum_s w_s [x_s = a]}{\\sum_s w_s},

whose standard error is estimated by the delta method (Owen 2013, section
9.2; Kong 1992),

.. math::

    \\widehat{\\mathrm{se}}(\\hat p_a) = \\frac{\\sqrt{\\sum_s w_s^2
    ([x_s = a] - \\hat p_a)^2}}{\\sum_s w_s},

and the effective sample size is :math:`(\\sum_s w_s)^2 / \\sum_s w_s^2`.
The intervals :math:`\\hat p_a \\pm 1.96\\, \\widehat{\\mathrm{se}}` cover the
posterior probability about 95% of the time once the effective sample size
is large; for a probability near 0 or 1 seen in few draws the standard error
is unreliable (a state never drawn has an estimate and a standard error of 0).

With ``proposal="loopy"`` an unobserved variable is drawn instead from
its table times the likelihood that loopy belief propagation
(``bayeskit.graph.loopy``) gives it from the evidence below it, mixed with
10% of uniform where positive (evidence pre-propagation, after Yuan and
Druzdzel 2003), and the weight gains the ratio of the table to that proposal:
the estimate stays consistent whatever the loopy messages' quality, and the
weights are far more even when evidence lies below the query.

Only the ancestors of the targets and of the evidence are drawn (the other
variables are barren: they change neither the weights nor the targets).
Rows are drawn in blocks whose draws times variables stay under a fixed
number of cells, so the memory does not depend on the network's treewidth or
the number of rows. With ``tol``, blocks of ``n_samples`` draws are
added to every row until, for each target, half the sum of the standard
errors of its probabilities (the scale of the error in total variation,
:math:`\\frac12 \\sum_a |\\hat p_a - p_a|`) is at most ``tol`` (or
``max_samples`` draws are spent).

References
----------
.. [1] R. Fung and K.-C. Chang, "Weighing and integrating evidence for
   stochastic simulation in Bayesian networks", UAI 1989 (1990).
.. [2] R. D. Shachter and M. A. Peot, "Simulation approaches to general
   probabilistic inference on belief networks", UAI 1989 (1990).
.. [3] A. Kong, "A note on importance sampling using standardized weights",
   Technical report 348, University of Chicago, 1992.
.. [4] A. B. Owen, "Monte Carlo theory, methods and examples", 2013,
   chapter 9.
.. [5] D. Koller and N. Friedman, "Probabilistic Graphical Models", MIT Press,
   2009, section 12.2.
.. [6] C. Yuan and M. J. Druzdzel, "An importance sampling algorithm based on
   evidence pre-propagation", UAI 2003.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .loopy import loopy_belief_propagation

__all__ = ["LikelihoodWeighting", "SampledPosterior", "likelihood_weighting"]

# The most cells (draws x variables) one block of draws holds.
_BLOCK_CELLS = 2**22


class SampledPosterior(NamedTuple):
    """What :func:`likelihood_weighting` returns.

    Attributes
    ----------
    probs : dict of tuple -> ndarray of shape (n, k_1, ..., k_m)
        The estimate of the joint posterior of every tuple of targets asked
        for (one tuple per variable for the marginals of every unobserved
        variable).
    stderr : dict of tuple -> ndarray
        The delta-method standard error of every entry of ``probs``.
    ess : ndarray of shape (n,)
        The effective sample size of every row.
    n_samples : ndarray of int of shape (n,)
        The draws spent on every row.
    log_evidence : ndarray of shape (n,)
        The log of the mean weight: an unbiased estimate of ``P(evidence)``
        in log space; ``-inf`` when every draw had weight zero.
    """

    probs: dict
    stderr: dict
    ess: np.ndarray
    n_samples: np.ndarray
    log_evidence: np.ndarray


class _Sums:
    """Running sums of a block of rows: weights, squared weights, per target
    the weighted counts and squared-weight counts (scaled by a per-row shift,
    ``log w = shift + log(weights)``)."""

    def __init__(self, n: int, sizes: dict) -> None:
        self.shift = np.full(n, -np.inf)
        self.w = np.zeros(n)
        self.w2 = np.zeros(n)
        self.count = {t: np.zeros((n, s)) for t, s in sizes.items()}
        self.count2 = {t: np.zeros((n, s)) for t, s in sizes.items()}
        self.draws = np.zeros(n, dtype=np.int64)

    def add(self, logw: np.ndarray, flat: dict, rows: np.ndarray) -> None:
        """Add the draws ``logw`` (r, S) of ``rows`` (their joint states of
        each target in ``flat``)."""
        block_max = logw.max(axis=1)
        new = np.maximum(self.shift[rows], block_max)
        finite = np.isfinite(new)
        base = np.where(finite, new, 0.0)
        old = np.where(np.isfinite(self.shift[rows]), self.shift[rows] - base, -np.inf)
        a, a2 = np.exp(old), np.exp(2 * old)
        w = np.exp(logw - base[:, None])
        w2 = w * w
        self.w[rows] = self.w[rows] * a + w.sum(axis=1)
        self.w2[rows] = self.w2[rows] * a2 + w2.sum(axis=1)
        r, s = logw.shape
        for t, states in flat.items():
            size = self.count[t].shape[1]
            index = (np.arange(r)[:, None] * size + states).ravel()
            c = np.bincount(index, w.ravel(), r * size).reshape(r, size)
            c2 = np.bincount(index, w2.ravel(), r * size).reshape(r, size)
            self.count[t][rows] = self.count[t][rows] * a[:, None] + c
            self.count2[t][rows] = self.count2[t][rows] * a2[:, None] + c2
        self.shift[rows] = np.where(finite, new, self.shift[rows])
        self.draws[rows] += s

    def estimates(self, rows=slice(None)) -> tuple[dict, dict]:
        w, w2 = self.w[rows, None], self.w2[rows, None]
        probs, stderr = {}, {}
        ok = w > 0
        for t, c in self.count.items():
            p = np.divide(c[rows], w, out=np.zeros_like(c[rows]), where=ok)
            c2 = self.count2[t][rows]
            var = c2 * (1 - p) ** 2 + (w2 - c2) * p**2
            se = np.sqrt(np.maximum(var, 0.0))
            stderr[t] = np.divide(se, w, out=np.zeros_like(se), where=ok)
            probs[t] = p
        return probs, stderr


def _draw_block(net, order, observed, values, soft, lambdas, targets, rows, s, rng):
    """``s`` draws for each of ``rows``: their log weights and the flat joint
    state of every target tuple. A variable with a likelihood in ``lambdas``
    is drawn from its table times that likelihood (normalised)."""
    tables = net._tables()
    column = {v: j for j, v in enumerate(observed)}
    r = len(rows)
    states: dict = {}
    logw = np.zeros((r, s))
    for v in order:
        parents = net.dag.parents(v)
        k = net.cards[v]
        table = tables[v].reshape(-1, k)
        if parents:
            flat = np.ravel_multi_index(
                tuple(states[u] for u in parents), [net.cards[u] for u in parents]
            )
        else:
            flat = np.zeros((r, s), dtype=np.intp)
        if v in column:
            x = np.broadcast_to(values[rows, column[v]][:, None], (r, s))
            logw += table[flat, x]
        elif v in lambdas:
            # Q(x | pa) = P(x | pa) lambda(x) / z(pa): the weight gains
            # P / Q = z / lambda(x) (the soft evidence, in lambda, is added
            # back below).
            lam = lambdas[v][rows][:, None, :]
            q = np.exp(table)[flat] * lam
            cdf = np.cumsum(q, axis=2)
            z = cdf[..., -1]
            u = rng.random((r, s)) * z
            x = np.minimum((u[..., None] >= cdf[..., :-1]).sum(axis=2), k - 1)
            with np.errstate(divide="ignore"):
                logw += np.log(z) - np.log(np.take_along_axis(lam[:, 0], x, axis=1))
        else:
            cdf = np.cumsum(np.exp(table), axis=1)
            u = rng.random((r, s)) * cdf[flat, -1]
            x = np.zeros((r, s), dtype=np.intp)
            for a in range(k - 1):  # k - 1 comparisons, no (r, s, k) array
                x += u >= cdf[flat, a]
        if v not in column:
            lik = soft.get(v)
            if lik is not None:
                lik = lik[rows] if lik.shape[0] > 1 else np.broadcast_to(lik, (r, k))
                logw += np.take_along_axis(lik, x, axis=1)
        states[v] = x
    flat_targets = {}
    for t in targets:
        flat_targets[t] = np.ravel_multi_index(
            tuple(states[u] for u in t), [net.cards[u] for u in t]
        )
    return logw, flat_targets


def likelihood_weighting(
    net,
    observed: tuple,
    values: np.ndarray,
    targets: list | None = None,
    *,
    soft: Mapping | None = None,
    n_samples: int = 10_000,
    tol: float | None = None,
    max_samples: int = 1_000_000,
    proposal: str = "prior",
    random_state=None,
) -> SampledPosterior:
    """Posterior probabilities by likelihood weighting, with standard errors.

    Parameters
    ----------
    net : BayesNet
        The network, with its tables.
    observed, values
        The evidence, as :meth:`BayesNet.evidence` returns it.
    targets : list of tuple, default=None
        The tuples of unobserved variables whose joint posteriors to
        estimate; None: every unobserved variable on its own.
    soft : mapping of node -> ndarray of shape (1, k) or (n, k), default=None
        Log likelihoods of soft evidence on unobserved variables.
    n_samples : int, default=10000
        Draws per row (per round, with ``tol``).
    tol : float, default=None
        Keep adding ``n_samples`` draws to a row until, for every target,
        half the sum of the standard errors of its probabilities is at most
        this and the row's effective sample size is at least 100 (a row whose
        draws all have weight zero goes on), or ``max_samples`` draws are
        spent; None: one round.
    max_samples : int, default=1000000
        The most draws per row with ``tol``.
    proposal : {'prior', 'loopy'}, default='prior'
        ``'prior'``: every unobserved variable is drawn from its table
        (likelihood weighting). ``'loopy'``: from its table times what loopy
        belief propagation says the evidence below it is, mixed with 10% of
        uniform where that is positive (an importance sampler after Yuan and
        Druzdzel 2003; the weights keep the estimate consistent whatever the
        quality of the loopy messages).
    random_state : numpy.random.Generator, default=None
        The source of uniform numbers; None: a fresh unseeded one.

    Returns
    -------
    SampledPosterior
    """
    rng = np.random.default_rng() if random_state is None else random_state
    soft = {} if soft is None else soft
    n = values.shape[0]
    seen = set(observed)
    if targets is None:
        targets = [(v,) for v in net.variables if v not in seen]
    targets = [tuple(t) for t in targets]
    sizes = {t: math.prod(net.cards[u] for u in t) for t in targets}
    # Only the ancestors of what is asked or observed: the other variables
    # are barren, so they change neither the weights nor the targets.
    needed = {u for t in targets for u in t} | seen | set(soft)
    needed |= net.dag.ancestors(needed) if needed else set()
    order = [v for v in net.dag.topological_order() if v in needed]
    sums = _Sums(n, sizes)
    lambdas = {}
    if proposal == "loopy" and order:
        lambdas = _loopy_lambdas(net, observed, values, soft, set(order) - seen)
    widest = max((net.cards[v] for v in lambdas), default=0)
    block = max(1, _BLOCK_CELLS // (n_samples * (len(order) + 2 + widest)))
    active = np.arange(n)
    spent = 0
    while active.size:
        for start in range(0, active.size, block):
            rows = active[start : start + block]
            logw, flat = _draw_block(
                net,
                order,
                observed,
                values,
                soft,
                lambdas,
                targets,
                rows,
                n_samples,
                rng,
            )
            sums.add(logw, flat, rows)
        spent += n_samples
        if tol is None or spent + n_samples > max_samples:
            break
        _, stderr = sums.estimates(active)
        worst = np.max([se.sum(axis=1) / 2 for se in stderr.values()] or [0], axis=0)
        ess = _ess(sums, active)
        active = active[(worst > tol) | (ess < 100)]
    probs, stderr = sums.estimates()
    shape = {t: (n, *(net.cards[u] for u in t)) for t in targets}
    with np.errstate(divide="ignore"):
        log_evidence = sums.shift + np.log(sums.w) - np.log(sums.draws)
    return SampledPosterior(
        {t: p.reshape(shape[t]) for t, p in probs.items()},
        {t: se.reshape(shape[t]) for t, se in stderr.items()},
        _ess(sums, slice(None)),
        sums.draws,
        np.where(sums.w > 0, log_evidence, -np.inf),
    )


def _loopy_lambdas(net, observed, values, soft, hidden) -> dict:
    """The loopy likelihoods of the ``hidden`` variables, defensively mixed:
    90% of the loopy one and 10% of uniform where it is positive, so that
    every state it does not rule out keeps a share of the draws."""
    result = loopy_belief_propagation(
        net, observed, values, soft=soft, damping=0.3, tol=1e-3, max_iter=20
    )
    out = {}
    for v in hidden:
        lam = result.lambdas[v]
        positive = lam > 0
        k = np.maximum(positive.sum(axis=1, keepdims=True), 1)
        mixed = np.where(positive, 0.9 * lam + 0.1 / k, 0.0)
        # A row the messages rule out entirely: draw from the table alone.
        mixed[~positive.any(axis=1)] = 1.0
        out[v] = mixed
    return out


def _ess(sums: _Sums, rows) -> np.ndarray:
    w, w2 = sums.w[rows], sums.w2[rows]
    return np.divide(w * w, w2, out=np.zeros_like(w), where=w2 > 0)


@dataclass(frozen=True)
class LikelihoodWeighting:
    """Approximate inference by likelihood weighting (importance sampling).

    Give an instance as ``method=`` to :meth:`bayeskit.BayesianNetwork.query`
    or :meth:`~bayeskit.BayesianNetwork.predict_proba` (``method="sampling"``
    is ``LikelihoodWeighting(tol=0.003, proposal="loopy")`` seeded by the network's
    ``random_state``). Every posterior probability comes with its standard
    error, and every row with its effective sample size (see
    ``bayeskit.graph.sampling``).

    Parameters
    ----------
    n_samples : int, default=10000
        Draws per row, per round.
    tol : float, default=None
        Add rounds of ``n_samples`` draws to a row until, for every target,
        half the sum of the standard errors of its probabilities (the scale
        of its error in total variation) is at most this, or ``max_samples``
        are spent; None: one round.
    max_samples : int, default=1000000
        The most draws per row.
    proposal : {'prior', 'loopy'}, default='prior'
        Draw every unobserved variable from its table (likelihood weighting)
        or from its table times the likelihood loopy belief propagation
        gives it (importance sampling; see :func:`likelihood_weighting`).
    random_state : int, Generator or None, default=None
        Seeds the draws; None: unseeded.
    """

    n_samples: int = 10_000
    tol: float | None = None
    max_samples: int = 1_000_000
    proposal: str = "prior"
    random_state: object = None

    name = "sampling"

    def __post_init__(self):
        for field in ("n_samples", "max_samples"):
            value = getattr(self, field)
            if isinstance(value, bool) or int(value) != value or value < 1:
                raise ValueError(f"{field} must be an int >= 1, got {value!r}")
        if self.proposal not in ("prior", "loopy"):
            raise ValueError(
                f"proposal must be 'prior' or 'loopy', got {self.proposal!r}"
            )
        if self.tol is not None and not self.tol > 0:
            raise ValueError(f"tol must be > 0 or None, got {self.tol!r}")

    def run(self, net, observed, values, targets=None, soft=None) -> SampledPosterior:
        """:func:`likelihood_weighting` with these settings."""
        rng = self.random_state
        if not isinstance(rng, (np.random.Generator, np.random.RandomState)):
            rng = np.random.default_rng(rng)
        return likelihood_weighting(
            net,
            observed,
            values,
            targets,
            soft=soft,
            n_samples=int(self.n_samples),
            tol=self.tol,
            max_samples=int(self.max_samples),
            proposal=self.proposal,
            random_state=rng,
        )
