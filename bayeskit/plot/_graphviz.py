"""A DAG laid out by Graphviz's ``dot`` through pydot, when both are there.

pydot (a Python package) writes the graph in the DOT language and runs the
``dot`` program (Graphviz, installed by the system's package manager, not by
pip), whose ``plain`` output gives every node's centre and every edge's
control points in inches (Gansner et al. 1993 describe its layered layout).
Without either, :func:`choose_layout` falls back on bayeskit's own layered
layout (:func:`bayeskit.graph._layout.layered_layout`), which needs nothing.
"""

from __future__ import annotations

import shlex
from itertools import pairwise

import numpy as np

from ..graph._layout import Layout, layered_layout

__all__ = ["choose_layout", "dot_graph", "dot_layout", "parse_plain"]

_LAYOUTS = ("auto", "dot", "layered")


def dot_graph(nodes, edges, sizes, *, node_gap, layer_gap):
    """The DAG as a ``pydot.Dot``: fixed-size boxes named ``n0, n1, ...`` in
    the order of ``nodes`` (any hashable can be a node), top to bottom."""
    import pydot

    graph = pydot.Dot(
        graph_type="digraph",
        rankdir="TB",
        nodesep=node_gap,
        ranksep=layer_gap,
        splines="polyline",
    )
    ids = {v: f"n{i}" for i, v in enumerate(nodes)}
    for v, name in ids.items():
        w, h = sizes[v]
        graph.add_node(
            pydot.Node(name, shape="box", fixedsize="true", width=w, height=h, label="")
        )
    for u, v in edges:
        graph.add_edge(pydot.Edge(ids[u], ids[v]))
    return graph


def _inside(point, center, size) -> bool:
    half = np.asarray(size, dtype=float) / 2
    return bool(np.all(np.abs(np.asarray(point) - center) <= half))


def parse_plain(text: str, nodes, edges, sizes) -> Layout:
    """A :class:`~bayeskit.graph._layout.Layout` from ``dot -Tplain`` output.

    The centres are dot's, with ``y`` turned to grow downwards (as the
    layered layout's); the boxes keep the given sizes (dot rounds them to
    points). Every edge's route runs from its parent's centre to its child's
    through dot's control points outside both boxes.
    """
    nodes = list(nodes)
    ids = {f"n{i}": v for i, v in enumerate(nodes)}
    centres, controls = {}, {}
    for line in text.splitlines():
        parts = shlex.split(line)
        if not parts:
            continue
        if parts[0] == "node":
            centres[ids[parts[1]]] = (float(parts[2]), -float(parts[3]))
        elif parts[0] == "edge":
            n = int(parts[3])
            xy = np.array(parts[4 : 4 + 2 * n], dtype=float).reshape(n, 2)
            xy[:, 1] *= -1
            controls[(ids[parts[1]], ids[parts[2]])] = xy
    missing = [v for v in nodes if v not in centres]
    if missing:
        raise ValueError(f"dot's output places no node for {missing!r}")
    routes = {}
    for u, v in edges:
        cu, cv = np.array(centres[u]), np.array(centres[v])
        between = [
            p
            for p in controls.get((u, v), ())
            if not _inside(p, cu, sizes[u]) and not _inside(p, cv, sizes[v])
        ]
        pts = [cu, *between, cv]
        keep = [pts[0]] + [q for p, q in pairwise(pts) if not np.allclose(p, q)]
        routes[(u, v)] = np.array(keep, dtype=float)
    ys = sorted({round(y, 6) for _, y in centres.values()})
    layers = [
        sorted(
            (v for v in nodes if round(centres[v][1], 6) == y),
            key=lambda v: centres[v][0],
        )
        for y in ys
    ]
    return Layout(
        positions={v: centres[v] for v in nodes},
        sizes={v: sizes[v] for v in nodes},
        routes=routes,
        layers=layers,
    )


def dot_layout(nodes, edges, sizes, *, node_gap, layer_gap) -> Layout:
    """The DAG laid out by Graphviz's ``dot`` (sizes and gaps in inches).

    Raises
    ------
    ImportError
        Without pydot.
    FileNotFoundError
        Without Graphviz's ``dot`` program.
    """
    nodes = list(nodes)
    edges = [tuple(e) for e in edges]
    graph = dot_graph(nodes, edges, sizes, node_gap=node_gap, layer_gap=layer_gap)
    text = graph.create(prog="dot", format="plain").decode()
    return parse_plain(text, nodes, edges, sizes)


def choose_layout(layout, nodes, edges, sizes, *, node_gap, layer_gap) -> Layout:
    """The layout asked for: ``'dot'`` (Graphviz through pydot, an error
    without them), ``'layered'`` (bayeskit's own) or ``'auto'`` (dot when
    pydot and Graphviz are installed, the layered layout otherwise)."""
    if layout not in _LAYOUTS:
        raise ValueError(f"engine must be one of {_LAYOUTS}, got {layout!r}")
    if layout != "layered":
        try:
            return dot_layout(
                nodes, edges, sizes, node_gap=node_gap, layer_gap=layer_gap
            )
        except ImportError as exc:
            if layout == "dot":
                raise ImportError(
                    "engine='dot' needs pydot (pip install pydot) and Graphviz's "
                    "dot program; engine='layered' needs neither"
                ) from exc
        except FileNotFoundError as exc:
            if layout == "dot":
                raise FileNotFoundError(
                    "engine='dot' needs Graphviz's dot program on the PATH "
                    "(pydot is installed; Graphviz comes from the system's "
                    "package manager); engine='layered' needs neither"
                ) from exc
    return layered_layout(nodes, edges, sizes, node_gap=node_gap, layer_gap=layer_gap)
