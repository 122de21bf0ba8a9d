"""A Bayesian network to and from pgmpy's ``DiscreteBayesianNetwork``.

pgmpy is optional: :func:`network_from_pgmpy` reads a model through its
public methods (``nodes``, ``edges``, ``get_cpds`` and each ``TabularCPD``'s
``variables``, ``get_values`` and ``state_names``) without importing pgmpy,
and :func:`network_to_pgmpy` imports it when called. A ``TabularCPD``'s
``values`` have one row per state of the variable and one column per joint
state of its ``evidence`` (the first parent varying slowest); a
:class:`~bayeskit.BayesianNetwork` table has the parents' axes first, in the
network's order, and the variable's last: each table is reordered by its
labels on the way (:func:`~bayeskit.network._data.checked_table`).
"""

from __future__ import annotations

import numpy as np

from ._data import _is_tabular_cpd

__all__ = ["network_from_pgmpy", "network_to_pgmpy"]

_EXTRA = (
    "pgmpy is needed for this: install it with `pip install pgmpy` (or the "
    "extra `pip install bayeskit[pgmpy]`)"
)


def network_from_pgmpy(cls, model):
    """A ``cls`` with the structure, states and tables of a pgmpy model."""
    needed = ("nodes", "edges", "get_cpds")
    if not all(callable(getattr(model, a, None)) for a in needed):
        raise TypeError(
            "model must be a pgmpy DiscreteBayesianNetwork (with nodes, edges and "
            f"get_cpds), got {type(model).__name__}"
        )
    cpds = {}
    found = list(model.get_cpds())
    if found and all(_is_linear_gaussian_cpd(cpd) for cpd in found):
        return _linear_gaussian_from_pgmpy(cls, model, found)
    for cpd in found:
        if not _is_tabular_cpd(cpd):
            raise TypeError(
                "model must hold pgmpy TabularCPDs (a discrete network) or "
                "LinearGaussianCPDs only (a LinearGaussianBayesianNetwork), got a "
                f"{type(cpd).__name__}"
            )
        cpds[cpd.variable] = cpd
    nodes = list(model.nodes())
    if not nodes:
        raise ValueError(
            "model has no variable: a network needs at least one node with its "
            "CPD (pgmpy's model.add_node and model.add_cpds)"
        )
    missing = [v for v in nodes if v not in cpds]
    if missing:
        raise ValueError(
            f"model has no CPD for {missing!r}: add one for every node "
            "(pgmpy's model.add_cpds) before converting it"
        )
    for v in nodes:
        parents = set(model.get_parents(v)) if hasattr(model, "get_parents") else None
        if parents is not None and set(cpds[v].variables[1:]) != parents:
            raise ValueError(
                f"model's CPD of {v!r} is conditioned on "
                f"{list(cpds[v].variables[1:])!r}, but its parents in the graph are "
                f"{sorted(parents, key=str)!r}"
            )
    states = {v: list(cpds[v].state_names[v]) for v in nodes}
    network = cls([tuple(e) for e in model.edges()], states=states)
    for v in nodes:
        network.set_cpd(v, cpds[v])
    return network


def network_to_pgmpy(est):
    """pgmpy's ``DiscreteBayesianNetwork`` of a network with every table set."""
    try:
        from pgmpy.factors.discrete import TabularCPD
    except ImportError as exc:
        raise ImportError(_EXTRA) from exc
    try:
        from pgmpy.models import DiscreteBayesianNetwork as Model
    except ImportError:  # pgmpy < 1.0
        from pgmpy.models import BayesianNetwork as Model

    model = Model()
    model.add_nodes_from(est.variables_)
    model.add_edges_from(est.dag_.edges)
    for v in est.variables_:
        parents = list(est.dag_.parents(v))
        k = len(est.states_[v])
        names = {u: est.states_[u].tolist() for u in [v, *parents]}
        values = np.moveaxis(est.cpds_[v], -1, 0).reshape(k, -1)
        model.add_cpds(
            TabularCPD(
                v,
                k,
                values,
                evidence=parents or None,
                evidence_card=[len(est.states_[u]) for u in parents] or None,
                state_names=names,
            )
        )
    return model


def _is_linear_gaussian_cpd(cpd) -> bool:
    return all(hasattr(cpd, a) for a in ("variable", "beta", "std", "evidence"))


def _linear_gaussian_from_pgmpy(cls, model, found):
    """A ``cls`` with every node continuous, from pgmpy's
    ``LinearGaussianBayesianNetwork``: each ``LinearGaussianCPD``'s ``beta``
    (the intercept, then one coefficient per ``evidence`` variable) and
    ``std`` (the residual standard deviation) become the node's regression."""
    from ..graph.clg import CLGNode
    from ..graph.dag import DAG
    from ._hybrid_stats import install_hybrid

    nodes = list(model.nodes())
    cpds = {cpd.variable: cpd for cpd in found}
    missing = [v for v in nodes if v not in cpds]
    if not nodes or missing:
        raise ValueError(
            f"model has no CPD for {missing!r}: add one for every node "
            "(pgmpy's model.add_cpds) before converting it"
        )
    edges = [tuple(e) for e in model.edges()]
    dag = DAG(edges, nodes=nodes)
    regressions = {}
    for v in nodes:
        cpd, parents = cpds[v], tuple(dag.parents(v))
        evidence = tuple(cpd.evidence or ())
        beta = np.asarray(cpd.beta, dtype=float).ravel()
        std = float(cpd.std)
        if set(evidence) != set(parents) or len(beta) != 1 + len(evidence):
            raise ValueError(
                f"model's CPD of {v!r} is conditioned on {list(evidence)!r} with "
                f"{len(beta)} coefficients, but its parents in the graph are "
                f"{list(parents)!r}"
            )
        if not (np.isfinite(beta).all() and np.isfinite(std) and std > 0):
            raise ValueError(
                f"model's CPD of {v!r} needs finite coefficients and a positive "
                f"std, got beta={beta.tolist()!r}, std={std!r}"
            )
        by_name = dict(zip(evidence, beta[1:]))
        regressions[v] = CLGNode(
            (),
            parents,
            np.asarray(beta[0]),
            np.array([by_name[p] for p in parents]),
            np.asarray(std**2),
        )
    network = cls(edges, continuous=nodes)
    network._validate_params()
    layout = (tuple(nodes), tuple(nodes), tuple(edges))
    install_hybrid(network, layout, None, regressions)
    return network
