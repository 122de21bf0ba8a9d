"""Latent variables of a hybrid network: nodes never observed, learnt by EM.

*What is missing is latent*: a latent node is a column missing in every row,
so EM's exact E-step is the one :mod:`~bayeskit.network._hybrid_em` runs for
missing cells (every row's posterior over the discrete configurations and, in
each, the conditional Gaussian of its hidden continuous cells), and the M-step
is the complete-data one. A discrete latent parent of Gaussian children is a
mixture of regressions (a Gaussian mixture when it has one child and nothing
else); a continuous latent parent of Gaussian children is a factor analyser
(Bishop 2006, section 12.2.4).

EM needs a start that tells a latent node's states (or directions) apart: a
uniform start is a fixed point. As for a discrete network's latent variables,
the tables of a discrete latent node and of its discrete children start as
rows of the flat Dirichlet; a continuous child of a latent node starts from
the available-case regression on its observed parents, its intercept moved
in every configuration of its discrete latent parents, and its coefficient
on a continuous latent parent drawn, by the residual standard deviation
times a standard normal; a continuous latent node starts as
:math:`\\mathcal{N}(0, 1)`. ``random_state`` seeds the draws, ``n_init`` starts
are run and the one of the highest objective is kept; ``cpds_init`` replaces
the start of any node (in every run).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._warnings import warn
from ..graph import DAG
from ..graph.clg import CLGNode
from ._em import check_latent, latent_states

__all__ = ["checked_latent", "latent_frame", "latent_start"]


def _observed_descendant(dag: DAG, v, latent: set) -> bool:
    return any(d not in latent for d in dag.descendants(v))


def checked_latent(est, names: list) -> list:
    """``latent`` checked against the columns ``names`` (see
    :func:`~bayeskit.network._em.check_latent`; a continuous latent node
    needs no states), with a warning for a latent node none of whose
    descendants is observed: the data say nothing about its parameters,
    which stay near their random start."""
    latent = check_latent(est, names)
    edges = [] if est.edges is None else [tuple(e) for e in est.edges]
    dag = DAG(edges, nodes=list(names) + latent)
    hidden = set(latent)
    for v in latent:
        if not _observed_descendant(dag, v, hidden):
            warn(
                f"latent variable {v!r} has no observed descendant: the data do "
                "not inform its parameters (nor, through it, anything else); "
                "give it an observed child or leave it out"
            )
    return latent


def _clg_from_frame(v, frame: pd.DataFrame, dp: tuple, cp: tuple, states):
    """A CLGNode from :meth:`~bayeskit.BayesianNetwork.get_cpd`'s layout."""
    shape = tuple(len(states[p]) for p in dp)
    cols = ["intercept", *(f"coef[{p}]" for p in cp), "variance"]
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise ValueError(
            f"cpds_init[{v!r}] has no columns {missing!r}: a continuous node's "
            f"start is a CLGNode, or a DataFrame with the columns {cols!r} "
            "(get_cpd's layout)"
        )
    if len(frame) != int(np.prod(shape)):
        raise ValueError(
            f"cpds_init[{v!r}] has {len(frame)} rows; {v!r} has "
            f"{int(np.prod(shape))} configurations of its discrete parents {dp!r}"
        )
    if dp:
        want = pd.MultiIndex.from_product([states[p] for p in dp], names=list(dp))
        frame = frame.reindex(want if len(dp) > 1 else want.get_level_values(0))
        if frame.isna().any().any():
            raise ValueError(
                f"cpds_init[{v!r}]: its index must list every state of the "
                f"discrete parents {dp!r}"
            )
    coef = frame[[f"coef[{p}]" for p in cp]].to_numpy(dtype=float)
    return CLGNode(
        dp,
        cp,
        frame["intercept"].to_numpy(dtype=float).reshape(shape),
        coef.reshape((*shape, len(cp))),
        frame["variance"].to_numpy(dtype=float).reshape(shape),
    )


def _init_node(v, given, dp, cp, states) -> CLGNode:
    if isinstance(given, pd.DataFrame):
        given = _clg_from_frame(v, given, dp, cp, states)
    if not isinstance(given, CLGNode):
        raise TypeError(
            f"cpds_init[{v!r}] of a continuous node must be a CLGNode (as in "
            f"cpds_) or a DataFrame in get_cpd's layout, got {type(given).__name__}"
        )
    if tuple(given.discrete_parents) != dp or tuple(given.continuous_parents) != cp:
        raise ValueError(
            f"cpds_init[{v!r}] has the parents {given.discrete_parents!r} and "
            f"{given.continuous_parents!r}; the network's are {dp!r} (discrete) "
            f"and {cp!r} (continuous)"
        )
    shape = tuple(len(states[p]) for p in dp)
    intercept = np.asarray(given.intercept, dtype=float).reshape(shape)
    coef = np.asarray(given.coef, dtype=float).reshape((*shape, len(cp)))
    variance = np.asarray(given.variance, dtype=float).reshape(shape)
    if not (np.isfinite(variance).all() and (variance > 0).all()):
        raise ValueError(f"cpds_init[{v!r}] has a variance that is not positive")
    return CLGNode(dp, cp, intercept, coef, variance)


def latent_start(est, X: pd.DataFrame, latent: list, layout: tuple, rng) -> None:
    """Install EM's start (see the module) on ``est`` for the rows ``X`` (the
    observed columns) and the ``layout`` of every node, latent ones included."""
    from ._hybrid_stats import _inner, _parts, install_hybrid

    names, continuous, edges = layout
    dag, cset, discrete, cont, inner_edges = _parts(layout)
    hidden = set(latent)
    states = latent_states(est)
    obs_edges = [e for e in edges if not hidden & set(e)]
    obs_cont = [v for v in continuous if v not in hidden]
    # The available-case network of the observed nodes: the untouched nodes'
    # start, and the base of a latent node's children.
    base = type(est)(
        obs_edges,
        m=est.m,
        p=est.p,
        states={v: s for v, s in states.items() if v not in hidden} or None,
        handle_unknown=est.handle_unknown,
        continuous=obs_cont or None,
        continuous_prior=est.continuous_prior,
        missing="available",
    ).fit(X)
    init = est.cpds_init or {}
    if not isinstance(init, dict):
        raise TypeError(
            f"cpds_init must be a dict from variable to table, got "
            f"{type(init).__name__}"
        )
    unknown = [v for v in init if v not in set(names)]
    if unknown:
        raise ValueError(
            f"cpds_init names {unknown!r}, which are not variables of the network "
            f"{list(names)!r}"
        )
    inner, labels = None, {}
    if discrete:
        declared = {
            v: (states[v] if v in hidden else base.states_[v]) for v in discrete
        }
        inner = _inner(est, inner_edges, declared)
        for v in discrete:  # topological order: parents first
            parents = dag.parents(v)
            if v in init:
                inner.set_cpd(v, init[v])
            elif v in hidden or hidden & set(parents):
                shape = [len(declared[u]) for u in (*parents, v)]
                rows = rng.dirichlet(np.ones(shape[-1]), size=int(np.prod(shape[:-1])))
                inner.set_cpd(v, rows.reshape(shape))
            else:
                inner.set_cpd(v, base.cpds_[v])
        labels = dict(inner.states_)
    nodes = {}
    for v in cont:
        parents = dag.parents(v)
        dp = tuple(p for p in parents if p not in cset)
        cp = tuple(p for p in parents if p in cset)
        if v in init:
            nodes[v] = _init_node(v, init[v], dp, cp, labels)
            continue
        shape = tuple(len(labels[p]) for p in dp)
        if v in hidden:
            nodes[v] = CLGNode(
                dp, cp, np.zeros(shape), np.zeros((*shape, len(cp))), np.ones(shape)
            )
            continue
        b = base.cpds_[v]
        # The base's axes (its observed discrete parents) spread over the
        # network's discrete parents.
        bd = list(b.discrete_parents)
        grid = np.indices(shape).reshape(len(dp), -1) if dp else np.zeros((0, 1), int)
        at = tuple(grid[dp.index(p)] for p in bd)
        g, k = grid.shape[1], len(b.continuous_parents)
        intercept = np.broadcast_to(np.asarray(b.intercept)[at], (g,)).reshape(shape)
        variance = np.broadcast_to(np.asarray(b.variance)[at], (g,)).reshape(shape)
        bcoef = np.broadcast_to(np.asarray(b.coef)[at], (g, k)).reshape((*shape, k))
        sd = np.sqrt(variance)
        if hidden & set(dp):
            intercept = intercept + sd * rng.standard_normal(shape)
        coef = np.zeros((*shape, len(cp)))
        for j, p in enumerate(cp):
            if p in hidden:
                coef[..., j] = sd * rng.standard_normal(shape)
            else:
                coef[..., j] = bcoef[..., list(b.continuous_parents).index(p)]
        nodes[v] = CLGNode(dp, cp, intercept, coef, variance)
    install_hybrid(est, layout, inner, nodes)
    est.latent_ = list(latent)


def latent_frame(X: pd.DataFrame, latent: list, continuous) -> pd.DataFrame:
    """``X`` with a column per latent node, missing in every row."""
    out = X.copy()
    for v in latent:
        if v in set(continuous):
            out[v] = np.nan
        else:
            out[v] = pd.Series(None, index=X.index, dtype=object)
    return out
