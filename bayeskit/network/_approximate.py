"""How a network's query is computed: exactly, or approximately when it must be.

``method=`` of :meth:`~bayeskit.BayesianNetwork.query` and
:meth:`~bayeskit.BayesianNetwork.predict_proba` is resolved here, once per
call: ``"exact"`` is the junction tree (:mod:`bayeskit.network._queries`),
``"loopy"`` and ``"sampling"`` (or a :class:`~bayeskit.graph.loopy.LoopyBP` or
:class:`~bayeskit.graph.sampling.LikelihoodWeighting` with its own settings)
the approximate engines of the graph core, and ``"auto"`` exact when the
junction tree's estimated size (:func:`~bayeskit.graph.budget.junction_tree_size`,
found without building a table) fits ``memory_budget`` (for ``query``, the tree
of the sub-network of the queried and observed variables and their ancestors:
the rest is barren), and importance sampling otherwise (``"sampling"``:
likelihood weighting whose proposal is informed by loopy belief propagation,
drawn until every variable's standard errors are small): loopy belief
propagation alone is not chosen automatically,
since its error is unknown and can be large on networks with loops (0.24 in
total variation on ALARM's EXPCO2). What was chosen, and its error estimate,
go in the result's ``attrs``.
"""

from __future__ import annotations

import weakref

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from .._warnings import warn
from ..graph.budget import fits, junction_tree_size
from ..graph.dag import DAG
from ..graph.loopy import LoopyBP
from ..graph.network import BayesNet
from ..graph.sampling import LikelihoodWeighting
from ._data import evidence_codes
from ._queries import (
    PosteriorSeries,
    _impossible,
    _with_soft,
    posterior_frame,
    posterior_series,
    soft_messages,
)

__all__ = ["approximate_frame", "approximate_series", "exact_only", "resolve_method"]

METHODS = ("auto", "exact", "loopy", "sampling")

#: ``tol`` of ``method="sampling"`` (and of ``"auto"``'s sampling): draws until
#: half the sum of a variable's standard errors is 0.003, which puts its
#: error in total variation below 0.01 with a wide margin.
SAMPLING_TOL = 0.003


# The estimate of every fitted network's tree, kept by its engine (never in
# the estimator's __dict__: a query does not change the estimator).
_SIZES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def tree_size(est):
    """The estimated junction tree of the fitted network, kept per engine."""
    engine = est._engine_
    size = _SIZES.get(engine)
    if size is None:
        size = _SIZES[engine] = junction_tree_size(engine.dag, engine.cards)
    return size


def resolve_method(est, method):
    """``method`` as an engine: None for exact, else a LoopyBP or a
    LikelihoodWeighting."""
    if isinstance(method, (LoopyBP, LikelihoodWeighting)):
        return method
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(
            f"method must be one of {METHODS!r}, a bayeskit.graph.LoopyBP or a "
            f"bayeskit.graph.LikelihoodWeighting, got {method!r}"
        )
    if method == "exact":
        return None
    if method == "loopy":
        return LoopyBP()
    if method == "auto" and fits(tree_size(est), est.memory_budget):
        return None
    return LikelihoodWeighting(
        tol=SAMPLING_TOL, proposal="loopy", random_state=est.random_state
    )


# Per engine: the ancestral sub-networks of queries, by their variables (None
# for one whose junction tree does not fit either).
_SUBNETWORKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_KEPT = 16


def _ancestral(est, variables: tuple) -> BayesNet | None:
    """The sub-network of ``variables`` and their ancestors, when its junction
    tree fits ``memory_budget``. The other variables are barren: summed out,
    their tables are one, so a query's posterior on the sub-network is the
    exact one (Koller and Friedman 2009, section 9.7; Shachter 1986)."""
    net: BayesNet = est._engine_
    keep = net.dag.ancestors(list(variables)) | set(variables)
    kept = _SUBNETWORKS.setdefault(net, {})
    key = frozenset(keep)
    if key not in kept:
        if len(kept) >= _KEPT:  # the oldest goes: memory stays bounded
            del kept[next(iter(kept))]
        order = [v for v in net.variables if v in keep]
        dag = DAG([(p, v) for v in order for p in net.dag.parents(v)], nodes=order)
        cards = {v: net.cards[v] for v in order}
        sub = None
        if fits(junction_tree_size(dag, cards), est.memory_budget):
            sub = BayesNet(dag, cards, {v: net.log_cpds[v] for v in order})
        kept[key] = sub
    return kept[key]


def _exact_on(est, sub: BayesNet, targets: tuple, codes: dict, soft: dict):
    """``query`` answered exactly on the ancestral sub-network ``sub``."""
    extra = tuple(v for v in soft if v not in targets)
    post = sub.posterior(*sub.evidence(codes), targets + extra)
    log_post = post.log_marginals[targets + extra]
    log_z = post.log_evidence
    if soft:
        log_post, log_z = _with_soft(log_post, targets, extra, soft)
    if np.isneginf(log_z[0]) or np.isneginf(post.log_evidence[0]):
        raise ValueError("the evidence has probability zero under the network")
    out = _series(est, targets, np.exp(log_post[0]).ravel())
    out.attrs.update(method="exact", n_variables=len(sub.variables))
    return out


def _series(est, targets: tuple, probs: np.ndarray) -> PosteriorSeries:
    name = f"P({', '.join(map(str, targets))} | evidence)"
    if len(targets) == 1:
        index = est._labels_[targets[0]]
    else:
        index = pd.MultiIndex.from_product(
            [est.states_[v] for v in targets], names=list(targets)
        )
    return PosteriorSeries(probs, index=index, name=name)


def _warn_unconverged(converged: np.ndarray, residual: float) -> None:
    bad = int((~converged).sum())
    if bad:
        warn(
            f"loopy belief propagation did not converge in {bad} of "
            f"{converged.size} row(s) (largest residual {residual:.3g}); its beliefs "
            "there are not a fixed point: raise max_iter or damping of "
            "bayeskit.graph.LoopyBP, or use method='sampling'",
            ConvergenceWarning,
        )


def approximate_series(est, targets: tuple, evidence, soft_evidence, method):
    """``query``: the exact series, or the chosen engine's estimate, with
    ``attrs`` saying which (and its error estimate)."""
    engine = resolve_method(est, method)
    if engine is None:
        out = posterior_series(est, targets, evidence, soft_evidence)
        out.attrs["method"] = "exact"
        return out
    codes = evidence_codes(est, evidence)
    soft = soft_messages(est, soft_evidence)
    both = [v for v in targets if v in codes]
    if both:
        raise ValueError(f"variables {both!r} are both queried and observed")
    both = [v for v in soft if v in codes]
    if both:
        raise ValueError(
            f"variables {both!r} have both evidence and soft_evidence: give one"
        )
    net: BayesNet = est._engine_
    if method == "auto":
        sub = _ancestral(est, (*targets, *codes, *soft))
        if sub is not None:
            return _exact_on(est, sub, targets, codes, soft)
    observed, values = net.evidence(codes)
    attrs: dict = {"method": engine.name}
    if isinstance(engine, LoopyBP):
        if len(targets) > 1:
            raise ValueError(
                "method='loopy' gives the marginal of one variable at a time; the "
                "joint posterior of several needs method='sampling' or 'exact'"
            )
        result = engine.run(net, observed, values, soft)
        _warn_unconverged(result.converged, float(result.residual.max()))
        log_ev = result.log_evidence
        probs = np.exp(result.log_marginals[targets[0]][0])
        attrs.update(
            converged=bool(result.converged[0]),
            residual=float(result.residual[0]),
            n_iter=result.n_iter,
        )
    else:
        result = engine.run(net, observed, values, [targets], soft)
        log_ev = result.log_evidence
        probs = result.probs[targets][0].ravel()
        attrs.update(
            stderr=result.stderr[targets][0].ravel(),
            ess=float(result.ess[0]),
            n_samples=int(result.n_samples[0]),
        )
    if np.isneginf(log_ev[0]):
        raise ValueError(
            "the evidence has probability zero under the network (no draw or "
            "message reached it)"
        )
    out = _series(est, targets, probs)
    out.attrs.update(attrs)
    return out


def exact_only(method) -> None:
    """ValueError unless ``method`` allows the exact answer (an intervention
    is answered exactly on the mutilated network)."""
    if not (isinstance(method, str) and method in ("auto", "exact")):
        raise ValueError(
            f"method must be 'auto' or 'exact' with do=, got {method!r}: an "
            "intervention is answered exactly on the network with the edges "
            "into the set variables cut"
        )


def approximate_frame(est, codes, index, variable, soft_evidence, method):
    """``predict_proba``: the exact frame, or the chosen engine's estimate,
    batched over the rows that share a pattern of observed cells, with
    ``attrs`` saying which method (and its error estimates)."""
    engine = resolve_method(est, method)
    if engine is None:
        out = posterior_frame(est, codes, index, variable, soft_evidence)
        out.attrs["method"] = "exact"
        return out
    targets = est.variables_ if variable is None else [variable]
    n = codes.shape[0]
    soft = soft_messages(est, soft_evidence, n)
    probs = {v: np.zeros((n, len(est.states_[v]))) for v in targets}
    stderr = {v: np.zeros_like(p) for v, p in probs.items()}
    ess = np.full(n, np.nan)
    converged = np.ones(n, dtype=bool)
    residual = 0.0
    position = {v: j for j, v in enumerate(est.variables_)}
    net: BayesNet = est._engine_
    sampling = isinstance(engine, LikelihoodWeighting)
    for rows, observed in BayesNet.group_rows(codes < 0):
        for v in targets:
            if observed[position[v]]:
                probs[v][rows, codes[rows, position[v]]] = 1.0
        hidden = [v for v in targets if not observed[position[v]]]
        if not hidden:
            continue
        columns = np.flatnonzero(observed)
        names = tuple(est.variables_[j] for j in columns)
        values = codes[rows[:, None], columns]
        active = {
            v: m if m.shape[0] == 1 else m[rows]
            for v, m in soft.items()
            if not observed[position[v]]
        }
        if sampling:
            result = engine.run(net, names, values, [(v,) for v in hidden], active)
            post = {v: result.probs[(v,)] for v in hidden}
            for v in hidden:
                stderr[v][rows] = result.stderr[(v,)]
            ess[rows] = result.ess
        else:
            result = engine.run(net, names, values, active)
            post = {v: np.exp(result.log_marginals[v]) for v in hidden}
            converged[rows] = result.converged
            residual = max(residual, float(result.residual.max()))
        bad = _impossible(result.log_evidence, "their posterior is uniform")
        for v in hidden:
            p = post[v]
            if bad.any():
                p = np.where(bad[:, None], 1.0 / p.shape[1], p)
            probs[v][rows] = p
    if not sampling:
        _warn_unconverged(converged, residual)
    if variable is not None:
        columns = pd.Index(est.states_[variable], name=variable)
    else:
        columns = pd.MultiIndex.from_tuples(
            [(v, s) for v in targets for s in est.states_[v].tolist()],
            names=["variable", "state"],
        )
    out = pd.DataFrame(
        np.hstack([probs[v] for v in targets]), index=index, columns=columns
    )
    out.attrs["method"] = engine.name
    if sampling:
        out.attrs["stderr"] = np.hstack([stderr[v] for v in targets])
        out.attrs["ess"] = ess
    else:
        out.attrs["converged"] = converged
    return out
