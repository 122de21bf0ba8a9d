"""A network with every node continuous to and from pyAgrum's conditional
linear Gaussian model (``pyagrum.clg.CLG``).

pyAgrum is optional: :func:`clg_from_pyagrum` reads a model through its public
methods (``names``, ``variable(name).mu()`` / ``.sigma()``, ``parent_names``
and ``coefArc``) without importing pyAgrum, and :func:`clg_to_pyagrum`
imports it when called. In pyAgrum a node is ``N(mu + sum_p coef_p x_p,
sigma^2)``: ``mu`` is the regression's intercept and ``sigma`` its residual
standard deviation.
"""

from __future__ import annotations

import numpy as np

__all__ = ["clg_from_pyagrum", "clg_to_pyagrum"]


def clg_to_pyagrum(est):
    """An all-continuous fitted network as a ``pyagrum.clg.CLG``."""
    if not hasattr(est, "continuous_") or len(est.continuous_) != len(est.variables_):
        raise ValueError(
            "to_pyagrum converts a network whose every node is continuous (to "
            "pyAgrum's CLG model); for a discrete network write a file pyAgrum "
            "reads (bayeskit.io.write_bif, write_uai or write_xdsl)"
        )
    try:
        from pyagrum import clg
    except ImportError as exc:  # pragma: no cover - pyAgrum is optional
        raise ImportError("to_pyagrum needs pyAgrum: pip install pyagrum") from exc
    model = clg.CLG()
    for v in est.dag_.topological_order():
        node = est.cpds_[v]
        model.add(
            clg.GaussianVariable(
                str(v), float(node.intercept), float(np.sqrt(node.variance))
            )
        )
    for v in est.dag_.topological_order():
        node = est.cpds_[v]
        for p, b in zip(node.continuous_parents, np.asarray(node.coef, dtype=float)):
            model.addArc(str(p), str(v), float(b))
    return model


def clg_from_pyagrum(cls, model):
    """A ``cls`` with every node continuous, from a ``pyagrum.clg.CLG``."""
    from ..graph.clg import CLGNode
    from ..graph.dag import DAG
    from ._hybrid_stats import install_hybrid

    needed = ("names", "variable", "parent_names", "coefArc")
    if not all(callable(getattr(model, a, None)) for a in needed):
        raise TypeError(
            "model must be a pyAgrum CLG (pyagrum.clg.CLG, with names, variable, "
            f"parent_names and coefArc), got {type(model).__name__}"
        )
    names = [str(v) for v in model.names()]
    if not names:
        raise ValueError("model has no variable: a network needs at least one node")
    parents = {v: [str(p) for p in model.parent_names(v)] for v in names}
    edges = [(p, v) for v in names for p in parents[v]]
    dag = DAG(edges, nodes=names)
    nodes = {}
    for v in names:
        var = model.variable(v)
        mu, sigma = float(var.mu()), float(var.sigma())
        cp = tuple(dag.parents(v))
        coef = np.array([float(model.coefArc(p, v)) for p in cp])
        if not (np.isfinite(mu) and np.isfinite(coef).all() and sigma > 0):
            raise ValueError(
                f"model's variable {v!r} needs a finite mu and coefficients and "
                f"a positive sigma, got mu={mu!r}, sigma={sigma!r}"
            )
        nodes[v] = CLGNode((), cp, np.asarray(mu), coef, np.asarray(sigma**2))
    network = cls(edges, continuous=names)
    network._validate_params()
    install_hybrid(network, (tuple(names), tuple(names), tuple(edges)), None, nodes)
    return network
