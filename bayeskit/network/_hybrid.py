"""Hybrid Bayesian networks: discrete and conditional linear Gaussian nodes.

:class:`~bayeskit.BayesianNetwork` with ``continuous=[...]`` comes here: its
discrete nodes (with discrete parents only) are a discrete network of their
own, learnt as every network is; its continuous nodes are regressions on
their continuous parents, one per configuration of their discrete parents
(:mod:`bayeskit.network._hybrid_fit`); every query is exact inference in the
graph core, batched over the rows that share a pattern of observed continuous
cells: enumeration of the joint discrete configurations
(:class:`~bayeskit.graph.clg.CLGNetwork`) for a few of them, the strong
junction tree (:class:`~bayeskit.graph.clg_tree.CLGJunctionTree`) beyond
(:func:`~bayeskit.graph.clg_tree.exact_clg` picks). Soft evidence on discrete
nodes is virtual evidence, a likelihood vector multiplied in.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from .._collections import handler_for
from ._approximate import exact_only
from ._data import completed_frame
from ._hybrid_stats import (
    HybridStats,
    fit_hybrid,
    hybrid_from_stats,
    hybrid_partial_fit,
    hybrid_summarize,
)
from ._queries import soft_messages

__all__ = [
    "fit_hybrid",
    "hybrid_aware",
    "hybrid_log_likelihood",
    "hybrid_map_query",
    "hybrid_n_parameters",
    "hybrid_predict",
    "hybrid_predict_proba",
    "hybrid_query",
    "hybrid_sample",
    "not_for_hybrid",
]


def not_for_hybrid(est, what: str, hint: str = "") -> None:
    """A ValueError for what this first version of hybrid networks lacks."""
    if _declared(est) or hasattr(est, "continuous_"):
        raise ValueError(
            f"{what} is not available for a network with continuous nodes yet{hint}"
        )


def _check_node(est, v) -> None:
    try:
        ok = v in set(est.variables_)
    except TypeError:
        ok = False
    if not ok:
        raise ValueError(
            f"unknown variable {v!r}; the variables are {est.variables_!r}"
        )


def _frame(est, X, reset: bool) -> pd.DataFrame:
    if handler_for(X) is not None:
        raise ValueError(
            "Dask input is not available for a network with continuous nodes "
            "yet: compute the rows into a pandas DataFrame first"
        )
    if isinstance(X, pd.DataFrame):
        frame = X
    else:
        arr = np.asarray(X, dtype=object)
        if arr.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {arr.shape}")
        frame = pd.DataFrame(arr)
        latent = getattr(est, "latent_", ())
        if not reset and latent and arr.shape[1] == est.n_features_in_ - len(latent):
            for v in latent:  # a latent node's column: missing in every row
                frame[v] = None
    if len(frame) == 0:
        raise ValueError("X has 0 samples; at least one is required")
    if reset:
        return frame
    frame = completed_frame(est, frame)  # the variables a frame leaves out: missing
    cols = list(frame.columns)
    if hasattr(est, "feature_names_in_") and cols != list(est.feature_names_in_):
        missing = [v for v in est.variables_ if v not in cols]
        raise ValueError(
            f"X must have the columns seen in fit, {est.variables_!r}; "
            f"missing {missing!r}"
        )
    if frame.shape[1] != est.n_features_in_:
        raise ValueError(
            f"X has {frame.shape[1]} columns; the network has "
            f"{est.n_features_in_} variables"
        )
    return frame


def _continuous_values(frame, names) -> np.ndarray:
    """The continuous columns as floats, NaN where missing; a string is an
    error naming its column."""
    dtypes = frame.dtypes
    if all(isinstance(t, np.dtype) and t.kind in "biuf" for t in dtypes):
        # Every column a numpy number (the all-continuous case): one copy of
        # the frame's block, not one per column.
        out = frame.to_numpy(dtype=float)[:, frame.columns.get_indexer(names)]
        _check_finite(out, names)
        return out
    out = np.empty((len(frame), len(names)))
    for j, v in enumerate(names):
        col = frame[v]
        if col.dtype.kind in "biuf":
            out[:, j] = col.to_numpy(dtype=float)
            continue
        if col.dtype == object or isinstance(col.dtype, pd.CategoricalDtype):
            bad = [x for x in col.tolist() if isinstance(x, (str, bytes))]
            if bad:
                raise ValueError(
                    f"continuous node {v!r} has non-numeric values such as "
                    f"{bad[0]!r}; a continuous column holds numbers (NaN for missing)"
                )
        try:
            out[:, j] = pd.to_numeric(col.astype(object), errors="raise").astype(float)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"continuous node {v!r} has values that are not numbers: {exc}"
            ) from None
    _check_finite(out, names)
    return out


def _check_finite(out, names) -> None:
    if np.isinf(out).any():
        j = int(np.flatnonzero(np.isinf(out).any(axis=0))[0])
        raise ValueError(f"continuous node {names[j]!r} has infinite values")


def _evidence_rows(est, X) -> tuple:
    """Discrete codes and continuous values of ``X`` in the engine's order."""
    frame = _frame(est, X, reset=False)
    clg = est._clg_
    if clg.discrete:
        codes, _ = est._discrete_net_._codes(frame[clg.discrete])
    else:
        codes = np.zeros((len(frame), 0), dtype=int)
    return codes, _continuous_values(frame, clg.continuous), frame


def _evidence_dict(est, evidence) -> tuple:
    if evidence is None:
        evidence = {}
    if not isinstance(evidence, Mapping):
        raise TypeError(f"evidence must be a dict, got {type(evidence).__name__}")
    for v in evidence:
        _check_node(est, v)
    row = pd.DataFrame(
        {v: [evidence.get(v, np.nan)] for v in est.variables_}, dtype=object
    )
    row.columns = pd.Index(est.variables_, dtype=object)
    if hasattr(est, "feature_names_in_"):
        row.columns = pd.Index(est.feature_names_in_)
    codes, values, _ = _evidence_rows(est, row)
    return codes, values, set(evidence)


def hybrid_log_likelihood(est, X) -> np.ndarray:
    """``log p(observed cells)`` of every row (a density in continuous cells)."""
    codes, values, _ = _evidence_rows(est, X)
    return est._clg_.posterior(codes, values).log_evidence


def _check_evidence(post) -> None:
    if not np.isfinite(post.log_evidence).all():
        raise ValueError("the evidence has probability zero under the network")


def hybrid_query(est, variables, evidence, soft_evidence=None):
    """``query`` of a hybrid network."""
    targets = list(variables) if isinstance(variables, (list, tuple)) else [variables]
    for v in targets:
        _check_node(est, v)
    codes, values, seen = _evidence_dict(est, evidence)
    clash = [v for v in targets if v in seen]
    if clash:
        raise ValueError(f"variables {clash!r} are both queried and observed")
    clg = est._clg_
    post = clg.posterior(codes, values, _soft(est, soft_evidence, seen))
    _check_evidence(post)
    cont = [v for v in targets if v in clg.continuous]
    if cont:
        if len(targets) > 1:
            raise ValueError(
                "query one continuous variable at a time (its posterior is a "
                f"mixture of Gaussians), got {targets!r}"
            )
        return _mixture_frame(est, post, targets[0])
    idx = [clg.discrete.index(v) for v in targets]
    table = post.joint_table(idx, 0)
    name = f"P({', '.join(map(str, targets))} | evidence)"
    if len(targets) == 1:
        index = est._labels_[targets[0]]
    else:
        index = pd.MultiIndex.from_product(
            [est.states_[v] for v in targets], names=targets
        )
    return pd.Series(np.ravel(table), index=index, name=name)


def _mixture_frame(est, post, v) -> pd.DataFrame:
    """The mixture posterior of continuous ``v`` in the first row of
    ``post``: one row per configuration, of positive weight, of the discrete
    parents of the continuous nodes joined to ``v`` by hidden ones."""
    clg = est._clg_
    names, configs, w, means, var = post.mixture(clg.continuous.index(v), 0)
    keep = w > 0
    data = {"weight": w[keep], "mean": means[keep], "variance": var[keep]}
    if names:
        labels = [est.states_[d][configs[keep, k]] for k, d in enumerate(names)]
        index = (
            pd.Index(labels[0], name=names[0])
            if len(labels) == 1
            else pd.MultiIndex.from_arrays(labels, names=names)
        )
    else:
        index = pd.RangeIndex(1)
    return pd.DataFrame(data, index=index)


def _soft(est, soft_evidence, seen=(), n_rows=None) -> dict:
    """``soft_evidence`` checked: ``{discrete index: log likelihood}``."""
    if not soft_evidence:
        return {}
    if not isinstance(soft_evidence, Mapping):
        raise TypeError(
            "soft_evidence must be a dict from variable to likelihoods over its "
            f"states, got {type(soft_evidence).__name__}"
        )
    clg = est._clg_
    for v in soft_evidence:
        _check_node(est, v)
        if v in clg.continuous:
            raise ValueError(
                f"soft_evidence on {v!r}, a continuous node: soft evidence is a "
                "likelihood over the states of a discrete node; give a continuous "
                "node's value as evidence"
            )
    both = [v for v in soft_evidence if v in seen]
    if both:
        raise ValueError(
            f"variables {both!r} have both evidence and soft_evidence: give one"
        )
    soft = soft_messages(est, soft_evidence, n_rows)
    return {clg.discrete.index(v): lik for v, lik in soft.items()}


def hybrid_predict_proba(est, X, variable, soft_evidence=None) -> pd.DataFrame:
    """``predict_proba`` of a hybrid network: discrete variables only."""
    codes, values, frame = _evidence_rows(est, X)
    clg = est._clg_
    if variable is not None:
        _check_node(est, variable)
        if variable in clg.continuous:
            raise ValueError(
                f"{variable!r} is continuous: predict_proba gives the posterior of "
                "a discrete variable; use predict for its posterior mean, or query "
                "for its mixture"
            )
    soft = _soft(est, soft_evidence, (), len(frame))
    for j in soft:
        if (codes[:, j] >= 0).any():
            raise ValueError(
                f"variables {[clg.discrete[j]]!r} have both evidence and "
                "soft_evidence: give one"
            )
    post = clg.posterior(codes, values, soft)
    index = frame.index if isinstance(X, pd.DataFrame) else None
    targets = clg.discrete if variable is None else [variable]
    parts = []
    for v in targets:
        j = clg.discrete.index(v)
        probs = post.discrete_marginal(j, len(est.states_[v]))
        parts.append(pd.DataFrame(probs, columns=est._labels_[v], index=index))
    if variable is not None:
        return parts[0]
    return pd.concat(parts, axis=1, keys=targets)


def hybrid_predict(est, X):
    """Missing discrete cells: their most probable joint state; missing
    continuous cells: their posterior mean."""
    codes, values, frame = _evidence_rows(est, X)
    clg = est._clg_
    post = clg.posterior(codes, values)
    hidden = np.isnan(values)
    filled = np.where(hidden, post.mean(), values) if hidden.any() else values
    if not clg.discrete and all(t == np.float64 for t in frame.dtypes):
        # Every column continuous and float: one block, in the frame's order.
        at = [clg.continuous.index(v) for v in frame.columns.tolist()]
        out = pd.DataFrame(
            filled[:, at], index=frame.index, columns=frame.columns, copy=False
        )
    else:
        cols = {v: frame[v] for v in frame.columns}  # given columns, unchanged
        missing = codes < 0
        best = post.map_assignment() if missing.any() else None
        for j, v in enumerate(clg.discrete):
            miss = missing[:, j]
            if miss.any():
                col = np.array(frame[v].to_numpy(), dtype=object)
                col[miss] = est.states_[v][best[miss, j]]
                cols[v] = pd.Series(col, index=frame.index).infer_objects()
        for j, v in enumerate(clg.continuous):
            if hidden[:, j].any():
                cols[v] = filled[:, j]
        out = pd.DataFrame(cols, index=frame.index, columns=frame.columns)
    if isinstance(X, pd.DataFrame):
        if not X.columns.equals(out.columns):  # as pgmpy: given, then predicted
            shown = X.columns.tolist()
            out = out[shown + [v for v in out.columns.tolist() if v not in shown]]
        return out
    return out.to_numpy()


def hybrid_map_query(est, variables, evidence, soft_evidence=None) -> dict:
    """The most probable joint state of discrete variables given evidence on
    either kind (the continuous variables integrated out)."""
    codes, values, seen = _evidence_dict(est, evidence)
    clg = est._clg_
    hidden = [v for v in clg.discrete if v not in seen]
    if variables is None:
        variables = hidden
    cont = [v for v in variables if v in clg.continuous]
    if cont:
        raise ValueError(
            f"map_query of a hybrid network is over discrete variables; {cont!r} "
            "are continuous (query gives their posterior)"
        )
    post = clg.posterior(codes, values, _soft(est, soft_evidence, seen))
    _check_evidence(post)
    idx = [clg.discrete.index(v) for v in variables]
    if set(variables) == set(hidden):  # the joint MAP, by max-product
        best = post.map_assignment()[0, idx]
    else:
        table = post.joint_table(idx, 0)
        best = np.unravel_index(int(np.argmax(table)), np.shape(table))
    return {v: est.states_[v][k] for v, k in zip(variables, best)}


def hybrid_sample(est, n_samples, random_state) -> pd.DataFrame:
    """Forward sampling: labels for discrete variables, floats for continuous."""
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive int, got {n_samples!r}")
    if not isinstance(random_state, np.random.Generator):
        random_state = check_random_state(random_state)
    clg = est._clg_
    codes, values = clg.sample(int(n_samples), random_state)
    cols = {}
    for v in est.variables_:
        if v in clg.continuous:
            cols[v] = values[:, clg.continuous.index(v)]
        else:
            cols[v] = est.states_[v][codes[:, clg.discrete.index(v)]]
    return pd.DataFrame(cols, columns=pd.Index(est.variables_))


def hybrid_n_parameters(est) -> int:
    """The discrete network's parameters, plus per continuous node and
    configuration of its discrete parents an intercept, a coefficient per
    continuous parent and a variance."""
    n = 0 if est._discrete_net_ is None else est._discrete_net_.n_parameters()
    for v in est.continuous_:
        node = est.cpds_[v]
        n += int(np.size(node.variance)) * (2 + len(node.continuous_parents))
    return n


def hybrid_get_cpd(est, variable):
    """A discrete node's table, or a continuous node's regressions: a
    DataFrame with one row per state of its discrete parents and columns
    ``intercept``, one coefficient per continuous parent, ``variance``."""
    _check_node(est, variable)
    node = est.cpds_[variable]
    if variable not in est.continuous_:
        return est._discrete_net_.get_cpd(variable)
    dp, cp = node.discrete_parents, node.continuous_parents
    n = int(np.size(node.variance))
    data = {"intercept": np.ravel(node.intercept)}
    for j, p in enumerate(cp):
        data[f"coef[{p}]"] = np.reshape(node.coef, (n, len(cp)))[:, j]
    data["variance"] = np.ravel(node.variance)
    if len(dp) == 1:
        index = pd.Index(est.states_[dp[0]], name=dp[0])
    elif dp:
        index = pd.MultiIndex.from_product([est.states_[p] for p in dp], names=dp)
    else:
        index = pd.RangeIndex(1)
    return pd.DataFrame(data, index=index)


def hybrid_to_pgmpy(est):
    """An all-continuous network as pgmpy's ``LinearGaussianBayesianNetwork``."""
    if est._clg_.discrete:
        raise ValueError(
            "to_pgmpy of a network with discrete and continuous nodes: pgmpy has "
            "no hybrid networks; only an all-continuous network converts (to a "
            "LinearGaussianBayesianNetwork)"
        )
    try:
        from pgmpy.factors.continuous import LinearGaussianCPD
        from pgmpy.models import LinearGaussianBayesianNetwork
    except ImportError as exc:  # pragma: no cover - pgmpy is optional
        raise ImportError("to_pgmpy needs pgmpy: pip install pgmpy") from exc
    model = LinearGaussianBayesianNetwork(list(est.dag_.edges))
    model.add_nodes_from(est.variables_)
    for v in est.variables_:
        node = est.cpds_[v]
        model.add_cpds(
            LinearGaussianCPD(
                v,
                [float(node.intercept), *np.asarray(node.coef, dtype=float).tolist()],
                float(np.sqrt(node.variance)),
                list(node.continuous_parents),
            )
        )
    return model


def _no_do(do=None) -> None:
    if do:
        raise ValueError(
            "do (an intervention) is not available for a network with continuous "
            "nodes yet"
        )


def _fit(est, X, y=None, sample_weight=None):
    return fit_hybrid(est, X, sample_weight)


def _query(
    est, variables, evidence=None, *, soft_evidence=None, do=None, method="auto"
):
    _no_do(do)
    exact_only(method)
    return hybrid_query(est, variables, evidence, soft_evidence)


def _map_query(est, variables=None, evidence=None, *, soft_evidence=None):
    return hybrid_map_query(est, variables, evidence, soft_evidence)


def _predict_proba(
    est, X, variable=None, *, soft_evidence=None, do=None, method="auto"
):
    _no_do(do)
    exact_only(method)
    return hybrid_predict_proba(est, X, variable, soft_evidence)


def _refuse(what, hint=""):
    def method(est, *args, **kwargs):
        not_for_hybrid(est, what, hint)

    return method


_METHODS = {
    "fit": _fit,
    "partial_fit": hybrid_partial_fit,
    "summarize": hybrid_summarize,
    "from_stats": hybrid_from_stats,
    "query": _query,
    "map_query": _map_query,
    "log_likelihood": hybrid_log_likelihood,
    "predict": hybrid_predict,
    "predict_proba": _predict_proba,
    "n_parameters": hybrid_n_parameters,
    "get_cpd": hybrid_get_cpd,
    "set_cpd": _refuse("set_cpd"),
    "to_pgmpy": hybrid_to_pgmpy,
    "sample": lambda est, n_samples=1, random_state=None, *, evidence=None: (
        hybrid_sample(est, n_samples, random_state)
        if evidence is None
        else not_for_hybrid(est, "sample given evidence")
    ),
}


def hybrid_aware(method):
    """Decorate a method of :class:`~bayeskit.BayesianNetwork` so that a
    network with continuous nodes (``continuous`` given to ``fit``, and
    ``continuous_`` after it) runs this module's version instead."""
    name = method.__name__
    impl = _METHODS[name]
    if name not in _DECLARED_FIRST and name not in _MAPPED:

        @functools.wraps(method)
        def fitted_only(self, *args, **kwargs):
            # Most methods (the queries): only the fitted network decides.
            if hasattr(self, "continuous_"):
                return impl(self, *args, **kwargs)
            return method(self, *args, **kwargs)

        return fitted_only

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        hybrid = hasattr(self, "continuous_")
        if name == "fit":
            hybrid = _declared(self)
        elif name in {"partial_fit", "summarize", "from_stats", "set_cpd"}:
            hybrid = hybrid or _declared(self)
            if name == "from_stats":  # statistics of a hybrid network say so
                stats = args[0] if args else kwargs.get("stats")
                hybrid = hybrid or isinstance(stats, HybridStats)
        if hybrid and name in _MAPPED and args and handler_for(args[0]) is not None:
            # Dask input: the method maps itself over the partitions, and each
            # pandas partition comes back here.
            return method(self, *args, **kwargs)
        if hybrid:
            return impl(self, *args, **kwargs)
        return method(self, *args, **kwargs)

    return wrapper


# The methods that map themselves over a Dask DataFrame's partitions.
_MAPPED = frozenset({"predict", "predict_proba"})
# The methods for which what ``fit`` was given (or the statistics) decide too.
_DECLARED_FIRST = frozenset(
    {"fit", "partial_fit", "summarize", "from_stats", "set_cpd"}
)


def _declared(est) -> bool:
    declared = getattr(est, "continuous", None)
    return declared is not None and len(declared) > 0
