"""A layered drawing of a DAG in pure Python (no Graphviz needed).

The Sugiyama scheme (Sugiyama, Tagawa and Toda 1981), in its simplest
complete form:

1. **Layers.** Every node goes on the layer of its longest path from a root
   (a node with no parents), so every edge points down; a root then moves
   down to just above its highest child.
2. **Virtual nodes.** An edge that spans several layers passes through one
   virtual node on each layer between its ends; it is drawn as a polyline
   through them, so no edge runs through a box.
3. **Order.** The nodes of each layer are ordered by the barycentre (mean
   position) of their neighbours in the layer above, then below, for a few
   sweeps, keeping the order with the fewest crossings (Di Battista et al.
   1999, section 9.2).
4. **Coordinates.** Each layer is packed left to right with the given gap
   between boxes, then every node is pulled towards the mean position of its
   neighbours, the layer re-packed after each pull so that boxes never
   overlap (a simple form of the priority method).

The layout works in abstract units: the caller gives every node's box size
(``width, height``) and gets centres back; ``y`` grows downwards, layer by
layer, as in SVG.

References
----------
.. [1] K. Sugiyama, S. Tagawa and M. Toda, "Methods for visual understanding
   of hierarchical system structures", IEEE Transactions on Systems, Man, and
   Cybernetics 11(2), 1981, pp. 109-125.
.. [2] G. Di Battista, P. Eades, R. Tamassia and I. G. Tollis, "Graph
   Drawing: Algorithms for the Visualization of Graphs", Prentice Hall, 1999,
   chapter 9.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from .dag import DAG

__all__ = ["Layout", "edge_path", "layered_layout"]


@dataclass(frozen=True)
class Layout:
    """Where a DAG's nodes and edges go.

    Attributes
    ----------
    positions : dict
        ``{node: (x, y)}``, the centre of every node's box.
    sizes : dict
        ``{node: (width, height)}``, the boxes as given.
    routes : dict
        ``{(parent, child): array of shape (n_points, 2)}``, every edge as a
        polyline from the parent's centre to the child's centre (through the
        virtual nodes of a long edge).
    layers : list of list
        The nodes of every layer, left to right.
    """

    positions: dict
    sizes: dict
    routes: dict
    layers: list

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """``(x_min, x_max, y_min, y_max)`` of the boxes and the edges."""
        if not self.positions:
            return (0.0, 1.0, 0.0, 1.0)
        centres = np.array(list(self.positions.values()), dtype=float)
        half = np.array([self.sizes[v] for v in self.positions], dtype=float) / 2
        lo = (centres - half).min(axis=0)
        hi = (centres + half).max(axis=0)
        for route in self.routes.values():
            lo = np.minimum(lo, route.min(axis=0))
            hi = np.maximum(hi, route.max(axis=0))
        return (float(lo[0]), float(hi[0]), float(lo[1]), float(hi[1]))


def _layers(dag: DAG) -> dict:
    """The longest-path layer of every node."""
    layer = {}
    order = dag.topological_order()
    for v in order:
        layer[v] = 1 + max((layer[u] for u in dag.parents(v)), default=-1)
    # A root sits just above its highest child, not on the top layer: its
    # edges stay short (the longest-path layering alone would stretch them).
    for v in reversed(order):
        children = dag.children(v)
        if children and not dag.parents(v):
            layer[v] = min(layer[c] for c in children) - 1
    return layer


def _crossings(upper: list, lower: list, down: Mapping) -> int:
    """Edge crossings between two adjacent layers (pairs of inverted edges)."""
    pos = {v: i for i, v in enumerate(lower)}
    ends = [pos[w] for v in upper for w in sorted(down.get(v, ()), key=pos.get)]
    ends = np.asarray(ends)
    if ends.size < 2:
        return 0
    # Inversions of the sequence of lower ends, read in upper order.
    return int(np.triu(ends[:, None] > ends[None, :], 1).sum())


def _sweep(order: list, up: Mapping, down: Mapping, downwards: bool) -> None:
    """One barycentre sweep over the layers, in place."""
    rng = range(1, len(order)) if downwards else range(len(order) - 2, -1, -1)
    for i in rng:
        fixed = order[i - 1] if downwards else order[i + 1]
        pos = {v: k for k, v in enumerate(fixed)}
        neighbours = up if downwards else down
        current = {v: k for k, v in enumerate(order[i])}

        def key(v, pos=pos, neighbours=neighbours, current=current):
            ns = [pos[u] for u in neighbours.get(v, ()) if u in pos]
            return (sum(ns) / len(ns)) if ns else current[v]

        order[i] = sorted(order[i], key=key)


def _pack(xs: np.ndarray, widths: np.ndarray, gap: float) -> np.ndarray:
    """Move the centres ``xs`` (in layer order) the least so that boxes keep
    ``gap`` between them: a forward pass pushes right, a backward pass left,
    and their mean keeps the layer where the pull wanted it."""
    n = xs.size
    if n < 2:
        return xs.copy()
    need = (widths[:-1] + widths[1:]) / 2 + gap
    right = xs.copy()
    for i in range(1, n):
        right[i] = max(right[i], right[i - 1] + need[i - 1])
    left = xs.copy()
    for i in range(n - 2, -1, -1):
        left[i] = min(left[i], left[i + 1] - need[i])
    mid = (right + left) / 2
    # The mean of two feasible packings can still be too tight: pack it again.
    for i in range(1, n):
        mid[i] = max(mid[i], mid[i - 1] + need[i - 1])
    return mid


def layered_layout(
    nodes: Iterable[Hashable],
    edges: Iterable[tuple],
    sizes: Mapping | None = None,
    *,
    node_gap: float = 0.3,
    layer_gap: float = 0.8,
    sweeps: int = 12,
) -> Layout:
    """Lay a DAG out in layers, every edge pointing down.

    Parameters
    ----------
    nodes : iterable of hashable
        The nodes (nodes on no edge included), in the order to start from.
    edges : iterable of (parent, child)
        The directed edges; they must form no cycle.
    sizes : dict, default=None
        ``{node: (width, height)}`` of every box; missing nodes are
        ``(1, 0.5)``.
    node_gap : float, default=0.3
        The least horizontal space between two boxes of a layer.
    layer_gap : float, default=0.8
        The vertical space between the boxes of two adjacent layers.
    sweeps : int, default=12
        Barycentre sweeps (each down then up) of the crossing reduction.

    Returns
    -------
    Layout
    """
    dag = DAG(edges, nodes=nodes)
    sizes = {v: tuple((sizes or {}).get(v, (1.0, 0.5))) for v in dag.nodes}
    layer = _layers(dag)
    n_layers = 1 + max(layer.values(), default=0)
    # Virtual nodes on long edges; ``chain`` holds each edge's path.
    order: list[list] = [[] for _ in range(n_layers)]
    for v in dag.nodes:
        order[layer[v]].append(v)
    up: dict = {}
    down: dict = {}
    chains = {}
    for u, v in dag.edges:
        path = [u]
        for k in range(layer[u] + 1, layer[v]):
            dummy = ("__virtual__", u, v, k)
            order[k].append(dummy)
            sizes[dummy] = (0.0, 0.0)
            path.append(dummy)
        path.append(v)
        chains[(u, v)] = path
        for a, b in pairwise(path):
            down.setdefault(a, []).append(b)
            up.setdefault(b, []).append(a)

    # Crossing reduction: keep the best order seen.
    def total(o):
        return sum(_crossings(o[i], o[i + 1], down) for i in range(len(o) - 1))

    best = [list(level) for level in order]
    best_count = total(best)
    for _ in range(sweeps):
        if best_count == 0:
            break
        _sweep(order, up, down, downwards=True)
        _sweep(order, up, down, downwards=False)
        count = total(order)
        if count < best_count:
            best, best_count = [list(level) for level in order], count
    order = best
    # Coordinates: packed layers, then pulls towards the neighbours.
    heights = [max((sizes[v][1] for v in level), default=0.0) for level in order]
    ys = (
        np.concatenate(
            [
                [0.0],
                np.cumsum(
                    np.asarray(heights[:-1]) / 2
                    + np.asarray(heights[1:]) / 2
                    + layer_gap
                ),
            ]
        )
        if n_layers > 1
        else np.zeros(1)
    )
    x: dict = {}
    for level in order:
        widths = np.array([sizes[v][0] for v in level])
        xs = _pack(np.zeros(len(level)), widths, node_gap)
        xs -= xs.mean() if xs.size else 0.0
        x.update(zip(level, xs))
    for it in range(8):
        levels = range(1, n_layers) if it % 2 == 0 else range(n_layers - 2, -1, -1)
        for i in levels:
            level = order[i]
            widths = np.array([sizes[v][0] for v in level])
            want = np.array(
                [
                    np.mean([x[u] for u in (up if it % 2 == 0 else down).get(v, ())])
                    if (up if it % 2 == 0 else down).get(v)
                    else x[v]
                    for v in level
                ]
            )
            packed = _pack(want, widths, node_gap)
            x.update(zip(level, packed))
    positions = {v: (float(x[v]), float(ys[layer[v]])) for v in dag.nodes}
    routes = {}
    for edge, path in chains.items():
        routes[edge] = np.array(
            [(x[p], ys[layer[edge[0]] + k]) for k, p in enumerate(path)], dtype=float
        )
    layers = [[v for v in level if v in layer] for level in order]
    return Layout(
        positions=positions,
        sizes={v: sizes[v] for v in dag.nodes},
        routes=routes,
        layers=layers,
    )


def _clip(center, size, toward) -> np.ndarray:
    """Where the segment from a box's centre towards ``toward`` leaves the box."""
    c = np.asarray(center, dtype=float)
    d = np.asarray(toward, dtype=float) - c
    half = np.asarray(size, dtype=float) / 2
    moving = np.abs(d) > 0
    t = np.min(half[moving] / np.abs(d[moving]), initial=np.inf)
    return c + min(t, 1.0) * d


def edge_path(points, tail_size, head_size) -> np.ndarray:
    """An edge's polyline with its ends moved from the centres of its boxes
    (of sizes ``tail_size`` and ``head_size``) to their borders."""
    pts = np.array(points, dtype=float)
    pts[0] = _clip(pts[0], tail_size, pts[1])
    pts[-1] = _clip(pts[-1], head_size, pts[-2])
    return pts
