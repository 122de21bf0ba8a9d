"""Statistics of a hybrid network that add over chunks of rows.

A hybrid network's statistics are the counts of its discrete part (the
:class:`~bayeskit.graph.network.NetworkStats` of a discrete network) and, for
every continuous node, the triangular factors of its regressions' weighted
designs, one per configuration of its discrete parents
(:func:`~bayeskit.network._hybrid_fit.regression_stats`). Both add: counts by
``+`` over the union of the states seen, factors by stacking and factoring
again. So ``fit`` is ``from_stats(summarize(X))``, ``partial_fit`` adds a
chunk to what the network has seen, and chunks summarized by separate
networks (the workers of a map-reduce) add into one fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._collections import handler_for
from .._validation import check_sample_weight
from ..graph import DAG
from ..graph.clg_tree import exact_clg
from ._hybrid_em import fit_hybrid_em, partial_fit_hybrid_em
from ._hybrid_fit import (
    add_regression_stats,
    clg_from_stats,
    prior_of,
    regression_stats,
)

__all__ = [
    "HybridStats",
    "fit_hybrid",
    "hybrid_from_stats",
    "hybrid_from_tables",
    "hybrid_partial_fit",
    "hybrid_summarize",
]


@dataclass(frozen=True, eq=False)
class HybridStats:
    """The statistics of some rows for a network with continuous nodes.

    Attributes
    ----------
    discrete : NetworkStats or None
        The weighted counts of the discrete nodes' families (None without
        discrete nodes), carrying their states.
    regressions : dict
        For every continuous node, ``{labels of its discrete parents: (R,
        weight)}``: the triangular factor of the weighted design and response
        of its complete rows in that configuration, and their weight.
    layout : tuple
        ``(variables, continuous, edges)``: what the statistics are over.
        Statistics of other networks do not add.
    """

    discrete: object
    regressions: dict
    layout: tuple

    def __add__(self, other: HybridStats) -> HybridStats:
        if not isinstance(other, HybridStats):
            return NotImplemented
        if self.layout != other.layout:
            raise ValueError(
                "these statistics belong to networks with other variables, "
                "continuous nodes or edges; they do not add"
            )
        discrete = None
        if self.discrete is not None:
            discrete = self.discrete + other.discrete
        regressions = {
            v: add_regression_stats(r, other.regressions[v])
            for v, r in self.regressions.items()
        }
        return HybridStats(discrete, regressions, self.layout)


def _layout(est, names) -> tuple:
    """``(variables, continuous, edges)`` of ``est``'s parameters for a
    frame of columns ``names``, checked: the conditional linear Gaussian
    restriction (a discrete node has discrete parents only)."""
    continuous = list(est.continuous)
    unknown = [v for v in continuous if v not in names]
    if unknown or len(set(continuous)) != len(continuous):
        raise ValueError(
            f"continuous must name distinct columns of X; {unknown!r} are not "
            f"columns (the columns are {names!r})"
        )
    edges = [] if est.edges is None else [tuple(e) for e in est.edges]
    dag = DAG(edges, nodes=names)
    extra = [v for v in dag.nodes if v not in set(names)]
    if extra:
        raise ValueError(f"edges name {extra!r}, which are not columns of X")
    cset = set(continuous)
    for parent, child in edges:
        if parent in cset and child not in cset:
            raise ValueError(
                f"discrete node {child!r} has the continuous parent {parent!r}: "
                "in a conditional linear Gaussian network a discrete node has "
                "discrete parents only; reverse the edge, or declare "
                f"{child!r} continuous"
            )
    return tuple(names), tuple(v for v in names if v in cset), tuple(edges)


def _parts(layout) -> tuple:
    names, continuous, edges = layout
    dag = DAG(list(edges), nodes=list(names))
    cset = set(continuous)
    order = dag.topological_order()
    discrete = [v for v in order if v not in cset]
    cont = [v for v in order if v in cset]
    inner_edges = [e for e in edges if e[0] not in cset and e[1] not in cset]
    return dag, cset, discrete, cont, inner_edges


def _inner(est, edges, states=None):
    """The discrete part as a discrete network of ``est``'s parameters
    (``states``, when given, for the declared ones)."""
    return type(est)(
        edges,
        m=est.m,
        p=est.p,
        states=est.states if states is None else states,
        handle_unknown=est.handle_unknown,
        missing="available",
    )


def hybrid_summarize(est, X, sample_weight=None, *, fit=False) -> HybridStats:
    """The statistics of the rows ``X`` (see the module). A fitted network
    reads them with its states; an unfitted one with its parameters. With
    ``fit``, weights that are zero for every row are an error."""
    from ._hybrid import _continuous_values, _frame

    fitted = hasattr(est, "continuous_")
    if est.latent and not fitted:
        raise ValueError(
            f"latent variables {list(est.latent)!r} are learnt by EM, which needs "
            "the rows themselves: fit the network on data in memory"
        )
    frame = _frame(est, X, reset=not fitted)
    if fitted:
        layout = est._layout_
    else:
        est._validate_params()
        layout = _layout(est, list(frame.columns))
    dag, cset, discrete, cont, inner_edges = _parts(layout)
    sw = check_sample_weight(sample_weight, np.empty((len(frame), 0)))
    if fit and not (sw > 0).any():
        raise ValueError("sample_weight is zero for every row")
    counts, codes, states = None, np.zeros((len(frame), 0), dtype=np.intp), {}
    if discrete:
        # A fresh discrete network, so that its counts add to the others'; a
        # fitted network's states are declared, so a chunk of partial_fit
        # shows no other state (as a discrete network's partial_fit).
        declared = dict(est._discrete_net_.states_) if fitted else None
        inner = _inner(est, inner_edges, declared)
        counts = inner.summarize(frame[discrete], sample_weight=sw)
        codes, _ = inner._encode(frame[discrete], sw, reset=False)
        states = inner.states_
    values = _continuous_values(frame, cont)
    d_index = {v: j for j, v in enumerate(discrete)}
    c_index = {v: j for j, v in enumerate(cont)}
    regressions = {}
    for v in cont:
        parents = dag.parents(v)
        dp = tuple(p for p in parents if p not in cset)
        cp = tuple(p for p in parents if p in cset)
        dc = codes[:, [d_index[p] for p in dp]]
        xc = values[:, [c_index[p] for p in cp]]
        y = values[:, c_index[v]]
        ok = (dc >= 0).all(axis=1) & ~np.isnan(xc).any(axis=1) & ~np.isnan(y)
        regressions[v] = regression_stats(dp, cp, states, dc[ok], xc[ok], y[ok], sw[ok])
    return HybridStats(counts, regressions, layout)


def hybrid_from_stats(est, stats: HybridStats):
    """Set every node's CPD from ``stats`` (summed over chunks); the network
    takes their variables, continuous nodes and edges."""
    if not isinstance(stats, HybridStats):
        raise TypeError(
            "stats must be the statistics of summarize of a network with "
            f"continuous nodes, got {type(stats).__name__}"
        )
    est._validate_params()
    est._reset()
    dag, cset, discrete, cont, inner_edges = _parts(stats.layout)
    inner, states = None, {}
    if discrete:
        inner = _inner(est, inner_edges).from_stats(stats.discrete)
        states = dict(inner.states_)
    cards = {v: len(states[v]) for v in discrete}
    nodes = {}
    for v in cont:
        parents = dag.parents(v)
        dp = tuple(p for p in parents if p not in cset)
        cp = tuple(p for p in parents if p in cset)
        nodes[v] = clg_from_stats(
            v, dp, cp, cards, states, stats.regressions[v], prior_of(est, v)
        )
    install_hybrid(est, stats.layout, inner, nodes)
    est.stats_ = stats
    return est


def install_hybrid(est, layout, inner, nodes) -> None:
    """Set the fitted attributes of ``est`` (``layout``: its variables,
    continuous nodes and edges) from its discrete part ``inner`` (a fitted
    discrete network, or None when every node is continuous) and every
    continuous node's :class:`~bayeskit.graph.clg.CLGNode` in ``nodes``."""
    names, continuous, _ = layout
    dag, _, discrete, cont, _ = _parts(layout)
    states = {} if inner is None else dict(inner.states_)
    cards = {v: len(states[v]) for v in discrete}
    log_cpds = {
        v: (tuple(inner.dag_.parents(v)), np.log(inner.cpds_[v])) for v in discrete
    }
    est.dag_ = dag
    est.variables_ = list(names)
    est.continuous_ = list(continuous)
    est.states_ = {v: states[v] for v in names if v in states}
    est._labels_ = {v: inner._labels_[v] for v in discrete}
    est._state_index_ = {v: inner._state_index_[v] for v in discrete}
    est.cpds_ = {v: inner.cpds_[v] if v in states else nodes[v] for v in names}
    est.n_features_in_ = len(names)
    if all(isinstance(v, str) for v in names):
        est.feature_names_in_ = np.asarray(names, dtype=object)
    est._discrete_net_ = inner
    est._layout_ = layout
    est.latent_ = [v for v in (est.latent or ()) if v in set(names)]
    est._clg_ = exact_clg(discrete, cards, log_cpds, cont, nodes)


def hybrid_from_tables(est, tables: dict, regressions: dict):
    """A network with continuous nodes from its tables, without data.

    Parameters
    ----------
    est : BayesianNetwork
        Unfitted, with ``edges``, ``continuous`` and ``states`` (the states
        of every discrete node).
    tables : dict
        ``{discrete node: table}`` in :meth:`BayesianNetwork.set_cpd`'s
        layouts.
    regressions : dict
        ``{continuous node: CLGNode}``, its discrete parents in the order of
        the network's parents.

    Returns
    -------
    est
        Fitted, without statistics ``stats_`` (there were no rows): as
        for a discrete network set by hand, ``partial_fit`` learns from its
        chunk alone.
    """
    est._validate_params()
    est._reset()
    names = list(est.states) + [v for v in est.continuous if v not in est.states]
    layout = _layout(est, names)
    _, _, discrete, _, inner_edges = _parts(layout)
    inner = None
    if discrete:
        inner = _inner(est, inner_edges, {v: est.states[v] for v in discrete})
        for v in discrete:
            inner.set_cpd(v, tables[v])
    install_hybrid(est, layout, inner, dict(regressions))
    return est


def fit_hybrid(est, X, sample_weight):
    """Fit a network with continuous nodes (``est.continuous``):
    ``from_stats(summarize(X))``, on a Dask DataFrame too; by EM with
    ``missing='em'``."""
    if (handler := handler_for(X)) is not None:
        if est._by_em():
            raise ValueError(
                "missing='em' (and latent variables) with continuous nodes take a "
                "pandas DataFrame, not Dask input: compute the rows first, or use "
                "missing='available'"
            )
        return handler.fit_hybrid_network(est, X, sample_weight)
    if est._by_em():
        return fit_hybrid_em(est, X, sample_weight)
    est._reset()
    return hybrid_from_stats(est, hybrid_summarize(est, X, sample_weight, fit=True))


def hybrid_partial_fit(est, X, y=None, sample_weight=None):
    """Add the statistics of a chunk of rows to what the network has seen
    and set its CPDs from the sum (the first call is ``fit``)."""
    if not hasattr(est, "stats_"):  # the first chunk, or a network built by hand
        return fit_hybrid(est, X, sample_weight)
    if (handler := handler_for(X)) is not None:
        if est._by_em():
            raise ValueError(
                "missing='em' (and latent variables) with continuous nodes take a "
                "pandas DataFrame, not Dask input: compute the rows first, or use "
                "missing='available'"
            )
        return handler.fit_hybrid_network(est, X, sample_weight, partial=True)
    if est._by_em():
        return partial_fit_hybrid_em(est, X, sample_weight)
    return hybrid_from_stats(est, est.stats_ + hybrid_summarize(est, X, sample_weight))
