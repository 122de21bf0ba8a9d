"""EM for a Bayesian network whose data miss cells or never show a variable.

"What is missing is latent": a missing cell and a declared latent variable
are both unobserved variables of a row. EM (Dempster, Laird and Rubin 1977;
for graphical models Lauritzen 1995; Koller and Friedman 2009, section 19.2)
alternates the E-step, the expected counts of every family given each row's
observed cells (:func:`bayeskit.graph._network_em.expected_stats`, batched
over the rows that share a pattern of missing cells), and the M-step, the
m-estimate of those counts (:meth:`BayesNet.map_params`).

The m-estimate ``(n_ua + m p_a) / (n_u + m)`` is the mode of the posterior
under a Dirichlet prior of concentration ``m p + 1`` on every CPT row, so EM
maximises the log posterior

    sum_rows w log P(observed cells) + sum_v sum_rows(v) sum_a m_v p_va log theta

and never decreases it (the prior's log density up to its constant; 0 for
``m = 0``, the maximum-likelihood estimate).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from .._warnings import warn
from ..graph._network_em import expected_stats
from ..graph.network import BayesNet, NetworkStats
from ._data import checked_table

__all__ = ["check_latent", "fit_em", "latent_states"]


def check_latent(est, names: list) -> list:
    """The ``latent`` parameter, checked against the columns ``names`` and the
    edges: a list of variables that are on an edge, are no column, and have
    their states declared in ``states`` (a list, or a number of states) unless
    they are continuous (``continuous``)."""
    latent = [] if est.latent is None else list(est.latent)
    if len(set(latent)) != len(latent):
        raise ValueError(f"latent lists a variable twice: {latent!r}")
    if latent and est.missing == "available":
        raise ValueError(
            "latent variables are learnt by EM: set missing='em' (missing="
            f"{est.missing!r} would leave their tables at the prior)"
        )
    on_edges = {u for edge in ([] if est.edges is None else est.edges) for u in edge}
    states = est.states or {}
    continuous = set(getattr(est, "continuous", None) or ())
    for v in latent:
        if v in set(names):
            raise ValueError(
                f"latent names {v!r}, which is a column of X: a latent variable "
                "is never observed (a column with missing cells is learnt by EM "
                "without being declared)"
            )
        if v not in on_edges:
            raise ValueError(f"latent names {v!r}, which is on no edge of the network")
        if v not in states and v not in continuous:
            raise ValueError(
                f"latent variable {v!r} has no states: declare them in states, "
                f"e.g. states={{{v!r}: 2}} or a list of labels"
            )
    return latent


def latent_states(est) -> dict:
    """The ``states`` parameter with a latent variable's number of states as
    the labels ``0 .. k - 1``."""
    out = dict(est.states or {})
    for v in est.latent or ():
        k = out.get(v)
        if isinstance(k, Integral) and not isinstance(k, bool):
            if k < 2:
                raise ValueError(
                    f"states of the latent variable {v!r} is {k}: at least 2 "
                    "states are needed"
                )
            out[v] = list(range(int(k)))
    return out


def start_tables(
    est, structure: BayesNet, stats: NetworkStats, prior, rng=None
) -> dict:
    """EM's start: the available-case m-estimate, a random table (every row
    drawn from the flat Dirichlet, seeded by ``random_state``) for a latent
    variable and its children, and the tables of ``cpds_init`` as given.

    A variable with ``m = 0`` starts from ``m = 1``: EM never turns a zero of
    its start into a positive probability, and an unseen combination of the
    available-case counts may be what an incomplete row needs."""
    positive = type(prior)({v: m or 1.0 for v, m in prior.m.items()}, prior.p)
    start = structure.map_params(stats, positive)
    latent = set(est.latent_)
    touched = [
        v
        for v in structure.variables
        if v in latent or latent & set(structure.dag.parents(v))
    ]
    rng = check_random_state(est.random_state) if rng is None else rng
    for v in touched:
        shape = start[v].shape
        rows = rng.dirichlet(np.ones(shape[-1]), size=int(np.prod(shape[:-1])))
        start[v] = np.log(rows.reshape(shape))
    init = est.cpds_init or {}
    if not isinstance(init, dict):
        raise TypeError(
            f"cpds_init must be a dict from variable to table, got "
            f"{type(init).__name__}"
        )
    for v, table in init.items():
        if v not in structure.cards:
            raise ValueError(
                f"cpds_init names {v!r}, which is not a variable of the network "
                f"{list(structure.variables)!r}"
            )
        values, states = checked_table(est, v, table, None)
        if not np.array_equal(states, est.states_[v]):
            raise ValueError(
                f"cpds_init[{v!r}] has the states {states.tolist()!r}; the "
                f"network's are {est.states_[v].tolist()!r}"
            )
        with np.errstate(divide="ignore"):
            start[v] = np.log(values)
    return start


def complete_objective(structure: BayesNet, stats: NetworkStats, log_cpds, prior):
    """The objective of complete data at ``log_cpds``, per unit of weight."""
    total = 0.0
    for v, counts in zip(structure.variables, stats.counts):
        seen = counts > 0
        total += float(np.dot(counts[seen], log_cpds[v][seen]))
    weight = stats.counts[0].sum() if stats.counts else 0.0
    return (total + structure.log_prior(log_cpds, prior)) / weight


def run_em(est, structure: BayesNet, prior, codes, weights, start: dict):
    """EM from the tables ``start``: the expected counts of the last E-step
    (whose m-estimate is the fitted tables), the objective of every iteration
    (``(sum_rows w log P(observed cells) + log prior) / sum w`` at the tables
    of that E-step), the number of iterations and whether the objective's
    change fell below ``tol``."""
    total = float(weights.sum())
    log_cpds, bounds, plans = start, [], {}
    converged = False
    for _ in range(est.max_iter):
        engine = structure.with_cpds(log_cpds)
        stats, log_lik = expected_stats(engine, codes, weights, plans)
        bounds.append((log_lik + structure.log_prior(log_cpds, prior)) / total)
        log_cpds = structure.map_params(stats, prior)
        if len(bounds) > 1 and abs(bounds[-1] - bounds[-2]) < est.tol:
            converged = True
            break
    if not converged:
        warn(
            f"EM did not converge in {est.max_iter} iterations (tol={est.tol}): "
            "increase max_iter or tol",
            ConvergenceWarning,
        )
    return stats, bounds, len(bounds), converged


def fit_em(est, structure: BayesNet, prior, stats: NetworkStats, codes, weights):
    """``est`` fitted by EM to the rows ``codes`` (their counts ``stats``):
    with no missing cell, the counts' m-estimate and no iteration."""
    if stats.incomplete_weight == 0:
        est.from_stats(stats)
        bound = complete_objective(structure, stats, est._log_cpds_, prior)
        est.n_iter_, est.converged_ = 0, True
        est.lower_bound_, est.lower_bounds_ = bound, [bound]
        return est
    keep = weights > 0
    rng = check_random_state(est.random_state)
    best = None
    for _ in range(est.n_init if est.latent_ else 1):  # one start without latent
        start = start_tables(est, structure, stats, prior, rng)
        run = run_em(est, structure, prior, codes[keep], weights[keep], start)
        if best is None or run[1][-1] > best[1][-1]:
            best = run
    stats, bounds, n_iter, converged = best
    est.from_stats(stats)
    est.n_iter_, est.converged_ = n_iter, converged
    est.lower_bound_, est.lower_bounds_ = bounds[-1], bounds
    return est
