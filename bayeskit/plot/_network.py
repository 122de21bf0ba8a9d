"""Bayesian networks drawn: the DAG (with posterior bars), CPTs, structure
differences. The layout is bayeskit's own (no Graphviz needed)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..graph._layout import edge_path, layered_layout
from ._base import check_fitted, check_matplotlib
from ._graphviz import choose_layout

__all__ = [
    "CPTDisplay",
    "NetworkDisplay",
    "StructureDiffDisplay",
    "structure_difference",
]

# Box sizes are in inches at ``fontsize`` 9 points: a character is about
# 0.6 em wide.
_CHAR = 0.6 * 9 / 72
_LINE = 0.17
_MAX_STATES = 8
# The bars of a node start _BAR_LEFT from its box's left side (room for the
# state and its probability) and end _BAR_RIGHT from its right side.
_BAR_LEFT = 0.9
_BAR_RIGHT = 0.08


def _label(value, limit: int) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _network(est):
    """The fitted network of ``est``: itself, or the one a structure learner
    (HillClimbSearch, PC) fitted with the edges it found."""
    return getattr(est, "network_", est)


def _draw_arrow(ax, pts, **style):
    from matplotlib.patches import FancyArrowPatch
    from matplotlib.path import Path

    codes = [Path.MOVETO] + [Path.LINETO] * (len(pts) - 1)
    arrow = FancyArrowPatch(
        path=Path(pts, codes),
        arrowstyle="-|>,head_length=0.5,head_width=0.25",
        mutation_scale=12,
        shrinkA=0,
        shrinkB=0,
        **style,
    )
    # add_artist, not add_patch: the limits are set already, and add_patch
    # would transform every arrow's path to update them (a third of the
    # drawing time of a 37-node network).
    ax.add_artist(arrow)
    return arrow


def _new_axes(ax, bounds, what):
    """New axes sized to the layout (in inches), or the given ones; returns
    them with the scale of the text (below 1 when the drawing is shrunk)."""
    plt = check_matplotlib(what)
    x0, x1, y0, y1 = bounds
    width, height = x1 - x0 + 0.4, y1 - y0 + 0.4
    scale = min(1.0, 16 / width, 14 / height)
    if ax is None:
        _, ax = plt.subplots(
            figsize=(max(width * scale, 2.0), max(height * scale, 1.5))
        )
        ax.set_position([0, 0, 1, 1])
    ax.set_xlim(x0 - 0.2, x1 + 0.2)
    ax.set_ylim(y1 + 0.2, y0 - 0.2)  # y grows downwards, as in the layout
    ax.set_aspect("equal")
    ax.set_axis_off()
    return ax, scale


class NetworkDisplay:
    """A Bayesian network's DAG, each node with its posterior as bars.

    The nodes are laid out in layers, every edge pointing down, with one
    arrow per edge: by Graphviz's ``dot`` (Gansner et al. 1993) through
    pydot when both are installed, by bayeskit's own layered layout in pure
    Python otherwise (Sugiyama et al. 1981; ``engine`` chooses). With
    ``posteriors=True`` every node shows its marginal :math:`P(x_v \\mid e)`
    given the evidence (computed exactly by
    :meth:`bayeskit.BayesianNetwork.query`), as pyAgrum's notebooks do;
    observed nodes are outlined and show their observed state. A variable
    with more than eight states shows its first eight.

    Parameters
    ----------
    layout : Layout
        Where the nodes and edges go (``bayeskit.graph._layout``).
    marginals : dict or None
        ``{node: Series}`` of the posterior of every drawn node.
    evidence : dict

    Attributes
    ----------
    nodes_ : dict
        ``{node: FancyBboxPatch}``.
    arrows_ : dict
        ``{(parent, child): FancyArrowPatch}``, one per edge.
    bars_ : dict
        ``{node: ndarray of shape (n_states, 4, 2)}``: the corners of every
        state's bar (its length is the posterior times the bars' span, the
        box's width less 0.98 inch), with
        ``posteriors=True``; all are drawn by ``bar_collection_``.
    bar_collection_ : PolyCollection or None
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    References
    ----------
    .. [1] K. Sugiyama, S. Tagawa and M. Toda, "Methods for visual
       understanding of hierarchical system structures", IEEE Transactions on
       Systems, Man, and Cybernetics 11(2), 1981, pp. 109-125.
    .. [2] E. R. Gansner, E. Koutsofios, S. C. North and K.-P. Vo, "A
       technique for drawing directed graphs", IEEE Transactions on Software
       Engineering 19(3), 1993, pp. 214-230.

    Examples
    --------
    >>> from bayeskit.datasets import flu_network
    >>> from bayeskit.plot import NetworkDisplay
    >>> bn = flu_network()
    >>> disp = NetworkDisplay.from_estimator(bn, evidence={"headache": "yes"})
    >>> len(disp.arrows_) == len(bn.dag_.edges)
    True
    """

    def __init__(self, layout, marginals=None, evidence=None):
        self.layout = layout
        self.marginals = marginals
        self.evidence = evidence or {}

    @classmethod
    def from_estimator(
        cls, estimator, *, evidence=None, posteriors=True, engine="auto", ax=None
    ):
        """Draw a network with its CPTs set (fitted, read or built by hand).

        Parameters
        ----------
        estimator : BayesianNetwork, HillClimbSearch or PC
            A network, or a fitted structure learner (its ``network_``).
        evidence : dict, default=None
            Observed states, ``{variable: state}``, as for ``query``.
        posteriors : bool, default=True
            Draw every node's posterior marginal as bars (the structure only
            when False).
        engine : {'auto', 'dot', 'layered'}, default='auto'
            Who lays the graph out: Graphviz's ``dot`` through pydot
            (``'dot'``; an error without pydot or Graphviz), bayeskit's
            layered layout (``'layered'``; needs nothing), or ``dot`` when
            both are installed and the layered layout otherwise
            (``'auto'``).
        ax : matplotlib Axes, default=None

        Returns
        -------
        NetworkDisplay
        """
        check_matplotlib("NetworkDisplay")
        estimator = _network(estimator)
        check_fitted(estimator, ["dag_"], "NetworkDisplay")
        evidence = dict(evidence or {})
        dag = estimator.dag_
        marginals = None
        if posteriors:
            check_fitted(estimator, ["cpds_", "states_"], "NetworkDisplay")
            marginals = {}
            for v in dag.nodes:
                if v in evidence:
                    states = list(estimator.states_[v])
                    if evidence[v] not in states:
                        raise ValueError(
                            f"evidence: {evidence[v]!r} is no state of {v!r} "
                            f"(its states: {states})"
                        )
                    marginals[v] = pd.Series(
                        [float(s == evidence[v]) for s in states], index=states
                    )
                else:
                    marginals[v] = estimator.query(v, evidence=evidence or None)
        return cls._build(dag.nodes, dag.edges, marginals, evidence, engine).plot(ax=ax)

    @classmethod
    def from_edges(cls, edges, *, nodes=None, engine="auto", ax=None):
        """Draw a structure alone (learnt by a search, or written by hand).

        Parameters
        ----------
        edges : iterable of (parent, child)
        nodes : iterable, default=None
            Nodes to draw besides those on the edges.
        engine : {'auto', 'dot', 'layered'}, default='auto'
            As for :meth:`from_estimator`.
        ax : matplotlib Axes, default=None

        Returns
        -------
        NetworkDisplay
        """
        check_matplotlib("NetworkDisplay")
        edges = [tuple(e) for e in edges]
        all_nodes = list(
            dict.fromkeys([*(nodes or ()), *(v for e in edges for v in e)])
        )
        return cls._build(all_nodes, edges, None, {}, engine).plot(ax=ax)

    @classmethod
    def _build(cls, nodes, edges, marginals, evidence, engine="auto"):
        sizes = {}
        for v in nodes:
            width = _CHAR * len(_label(v, 24)) + 0.25
            height = 0.32
            if marginals is not None:
                k = min(len(marginals[v]), _MAX_STATES)
                width = max(width, 1.8)
                height = 0.3 + _LINE * k
            sizes[v] = (width, height)
        layout = choose_layout(
            engine, nodes, edges, sizes, node_gap=0.25, layer_gap=0.45
        )
        return cls(layout, marginals, evidence)

    def plot(self, ax=None):
        """Draw the display.

        Parameters
        ----------
        ax : matplotlib Axes, default=None

        Returns
        -------
        self
        """
        from matplotlib.collections import PolyCollection
        from matplotlib.patches import FancyBboxPatch

        lay = self.layout
        ax, scale = _new_axes(ax, lay.bounds, "NetworkDisplay")
        font = 9 * scale
        self.nodes_, self.arrows_, self.bars_ = {}, {}, {}
        bar_colors = []
        for v, (x, y) in lay.positions.items():
            w, h = lay.sizes[v]
            observed = v in self.evidence
            box = FancyBboxPatch(
                (x - w / 2, y - h / 2),
                w,
                h,
                boxstyle="round,pad=0,rounding_size=0.06",
                facecolor="#fdf3d8" if observed else "#eef3fb",
                edgecolor="#b5651d" if observed else "#34558b",
                linewidth=2.0 if observed else 1.0,
                zorder=2,
            )
            ax.add_artist(box)  # the limits are set: no update
            self.nodes_[v] = box
            if self.marginals is None:
                ax.text(
                    x,
                    y,
                    _label(v, 24),
                    ha="center",
                    va="center",
                    fontsize=font,
                    zorder=3,
                )
                continue
            top = y - h / 2
            ax.text(
                x,
                top + 0.14,
                _label(v, 24),
                ha="center",
                va="center",
                fontsize=font,
                fontweight="bold",
                zorder=3,
            )
            probs = self.marginals[v]
            shown = probs.iloc[:_MAX_STATES]
            ys = top + 0.3 + _LINE * (np.arange(len(shown)) + 0.5)
            left = x - w / 2 + _BAR_LEFT
            span = w - _BAR_LEFT - _BAR_RIGHT
            widths = span * shown.to_numpy(dtype=float)
            y0, y1 = ys - 0.375 * _LINE, ys + 0.375 * _LINE
            self.bars_[v] = np.stack(
                [
                    np.c_[np.full_like(ys, left), y0],
                    np.c_[left + widths, y0],
                    np.c_[left + widths, y1],
                    np.c_[np.full_like(ys, left), y1],
                ],
                axis=1,
            )
            bar_colors += ["#b5651d" if observed else "#5b84c4"] * len(ys)
            # One text per state, its name and probability (text is most of
            # the drawing time: one artist per state, not two).
            for yy, (state, p) in zip(ys, shown.items()):
                ax.text(
                    left - 0.04,
                    yy,
                    f"{_label(state, 7)} {p:.2f}",
                    ha="right",
                    va="center",
                    fontsize=font * 0.8,
                    zorder=3,
                )
        # Every bar of every node in one collection: one artist to draw.
        self.bar_collection_ = None
        if self.bars_:
            self.bar_collection_ = PolyCollection(
                list(np.concatenate(list(self.bars_.values()))),
                facecolors=bar_colors,
                linewidths=0,
                zorder=3,
            )
            ax.add_collection(self.bar_collection_, autolim=False)
        for (u, v), route in lay.routes.items():
            pts = edge_path(route, lay.sizes[u], lay.sizes[v])
            self.arrows_[(u, v)] = _draw_arrow(
                ax, pts, color="0.25", linewidth=1.0, zorder=1
            )
        self.ax_ = ax
        self.figure_ = ax.figure
        return self


def structure_difference(learnt, true) -> dict:
    """How a learnt structure differs from the true one, edge by edge.

    Parameters
    ----------
    learnt, true : iterable of (parent, child)

    Returns
    -------
    dict
        ``'common'`` (in both, same direction), ``'reversed'`` (in both,
        opposite directions; listed as learnt), ``'added'`` (learnt only, in
        neither direction in the true one) and ``'missing'`` (true only, in
        neither direction in the learnt one): lists of edges.
    """
    learnt = [tuple(e) for e in learnt]
    true = [tuple(e) for e in true]
    ls, ts = set(learnt), set(true)
    return {
        "common": [e for e in learnt if e in ts],
        "reversed": [e for e in learnt if e not in ts and e[::-1] in ts],
        "added": [e for e in learnt if e not in ts and e[::-1] not in ts],
        "missing": [e for e in true if e not in ls and e[::-1] not in ls],
    }


_DIFF_STYLE = {
    "common": {"color": "0.25", "linestyle": "-"},
    "reversed": {"color": "#e08a00", "linestyle": "-"},
    "added": {"color": "#2a9d3a", "linestyle": "-"},
    "missing": {"color": "#c0392b", "linestyle": "--"},
}


class StructureDiffDisplay:
    """A learnt structure against the true one: edges added, missing, reversed.

    The nodes sit where the true DAG's layered layout puts them; common edges
    are grey, reversed ones orange (drawn in the learnt direction), added ones
    green and missing ones dashed red, the usual reading of structural
    Hamming distance (Tsamardinos, Brown and Aliferis 2006).

    Parameters
    ----------
    layout : Layout
    difference : dict
        As :func:`structure_difference` returns.

    Attributes
    ----------
    arrows_ : dict
        ``{kind: {edge: FancyArrowPatch}}`` for every kind of
        :func:`structure_difference`.
    nodes_ : dict
        ``{node: FancyBboxPatch}``.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    References
    ----------
    .. [1] I. Tsamardinos, L. E. Brown and C. F. Aliferis, "The max-min
       hill-climbing Bayesian network structure learning algorithm", Machine
       Learning 65(1), 2006, pp. 31-78.
    """

    def __init__(self, layout, difference):
        self.layout = layout
        self.difference = difference

    @classmethod
    def from_edges(cls, learnt, true, *, nodes=None, ax=None):
        """Draw the difference of two edge lists.

        Parameters
        ----------
        learnt, true : iterable of (parent, child)
        nodes : iterable, default=None
            Nodes to draw besides those on the edges.
        ax : matplotlib Axes, default=None

        Returns
        -------
        StructureDiffDisplay
        """
        check_matplotlib("StructureDiffDisplay")
        learnt = [tuple(e) for e in learnt]
        true = [tuple(e) for e in true]
        all_nodes = list(
            dict.fromkeys([*(nodes or ()), *(v for e in true + learnt for v in e)])
        )
        sizes = {v: (_CHAR * len(_label(v, 24)) + 0.25, 0.32) for v in all_nodes}
        layout = layered_layout(all_nodes, true, sizes, node_gap=0.3, layer_gap=0.5)
        return cls(layout, structure_difference(learnt, true)).plot(ax=ax)

    @classmethod
    def from_estimator(cls, learnt, true, *, ax=None):
        """Draw the difference of two networks' structures.

        Parameters
        ----------
        learnt, true : BayesianNetwork, HillClimbSearch or PC
            Fitted networks, or structure learners (their ``network_``).
        ax : matplotlib Axes, default=None

        Returns
        -------
        StructureDiffDisplay
        """
        learnt, true = _network(learnt), _network(true)
        check_fitted(learnt, ["dag_"], "StructureDiffDisplay")
        check_fitted(true, ["dag_"], "StructureDiffDisplay")
        nodes = [*true.dag_.nodes, *learnt.dag_.nodes]
        return cls.from_edges(learnt.dag_.edges, true.dag_.edges, nodes=nodes, ax=ax)

    def plot(self, ax=None):
        """Draw the display.

        Parameters
        ----------
        ax : matplotlib Axes, default=None

        Returns
        -------
        self
        """
        from matplotlib.lines import Line2D
        from matplotlib.patches import FancyBboxPatch

        lay = self.layout
        x0, x1, y0, y1 = lay.bounds
        half = max((x1 - x0) / 2, 1.6)  # at least the legend's width
        mid = (x0 + x1) / 2
        ax, scale = _new_axes(
            ax, (mid - half, mid + half, y0, y1 + 0.6), "StructureDiffDisplay"
        )
        self.nodes_ = {}
        for v, (x, y) in lay.positions.items():
            w, h = lay.sizes[v]
            box = FancyBboxPatch(
                (x - w / 2, y - h / 2),
                w,
                h,
                boxstyle="round,pad=0,rounding_size=0.06",
                facecolor="#eef3fb",
                edgecolor="#34558b",
                zorder=2,
            )
            ax.add_artist(box)  # the limits are set: no update
            self.nodes_[v] = box
            ax.text(
                x,
                y,
                _label(v, 24),
                ha="center",
                va="center",
                fontsize=9 * scale,
                zorder=3,
            )
        self.arrows_ = {}
        handles = []
        for kind, edges in self.difference.items():
            style = _DIFF_STYLE[kind]
            self.arrows_[kind] = {}
            for u, v in edges:
                route = lay.routes.get((u, v))
                if route is None:
                    back = lay.routes.get((v, u))
                    route = (
                        back[::-1]
                        if back is not None
                        else np.array([lay.positions[u], lay.positions[v]])
                    )
                pts = edge_path(route, lay.sizes[u], lay.sizes[v])
                self.arrows_[kind][(u, v)] = _draw_arrow(
                    ax,
                    pts,
                    linewidth=1.6 if kind != "common" else 1.0,
                    zorder=1,
                    **style,
                )
            handles.append(
                Line2D([], [], label=f"{kind} ({len(edges)})", linewidth=1.6, **style)
            )
        # In the room kept beneath the nodes, two columns wide.
        ax.legend(
            handles=handles,
            loc="lower center",
            ncols=2,
            fontsize=8 * max(scale, 0.8),
            frameon=False,
        )
        self.ax_ = ax
        self.figure_ = ax.figure
        return self


class CPTDisplay:
    """A conditional probability table drawn as a table.

    One row per joint state of the parents, one column per state of the
    variable; every row sums to one.

    Parameters
    ----------
    frame : DataFrame
        The table, rows indexed by the parents' states.
    variable : hashable

    Attributes
    ----------
    table_ : matplotlib.table.Table
        The parents' states in its first ``n_index_columns_`` columns, then
        one column per state of the variable.
    n_index_columns_ : int
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure
    """

    def __init__(self, frame, variable):
        self.frame = frame
        self.variable = variable

    @classmethod
    def from_estimator(cls, estimator, variable, *, ax=None):
        """Draw one CPT of a network.

        Parameters
        ----------
        estimator : BayesianNetwork
        variable : hashable
        ax : matplotlib Axes, default=None

        Returns
        -------
        CPTDisplay
        """
        check_matplotlib("CPTDisplay")
        estimator = _network(estimator)
        check_fitted(estimator, ["cpds_"], "CPTDisplay")
        if variable not in estimator.cpds_:
            raise ValueError(f"variable: {variable!r} is no variable of the network")
        cpd = estimator.get_cpd(variable)
        frame = cpd.to_frame().T if isinstance(cpd, pd.Series) else cpd
        return cls(frame, variable).plot(ax=ax)

    def plot(self, ax=None, *, values_format=".3f"):
        """Draw the display.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
        values_format : str, default='.3f'

        Returns
        -------
        self
        """
        plt = check_matplotlib("CPTDisplay")
        frame = self.frame
        n_rows = frame.shape[0]
        # The parents' states are the first columns of the table (row labels
        # would be drawn outside the axes, and clipped).
        if isinstance(frame.index, pd.MultiIndex):
            index = [list(map(str, r)) for r in frame.index]
            names = [str(n) for n in frame.index.names]
        elif frame.index.name is not None and not str(frame.index.name).startswith(
            "P("
        ):
            index = [[str(r)] for r in frame.index]
            names = [str(frame.index.name)]
        else:  # no parents
            index, names = [[] for _ in range(n_rows)], []
        self.n_index_columns_ = len(names)
        widths = [
            max(len(h), *(len(r[j]) for r in index)) for j, h in enumerate(names)
        ] + [max(len(str(c)), 5) for c in frame.columns]
        if ax is None:
            _, ax = plt.subplots(
                figsize=(
                    0.4 + 0.1 * sum(w + 2 for w in widths),
                    0.6 + 0.28 * (n_rows + 1),
                )
            )
        ax.set_axis_off()
        cells = [
            r + [format(float(p), values_format) for p in row]
            for r, row in zip(index, frame.to_numpy())
        ]
        total = sum(w + 2 for w in widths)
        self.table_ = ax.table(
            cellText=cells,
            colLabels=names + [str(c) for c in frame.columns],
            colWidths=[(w + 2) / total for w in widths],
            loc="center",
            cellLoc="center",
        )
        for j in range(len(names)):  # the parents' columns read as headers
            for r in range(n_rows + 1):
                self.table_[r, j].set_facecolor("#eef3fb")
        title = ", ".join(names)
        self.table_.auto_set_font_size(False)
        self.table_.set_fontsize(9)
        ax.set_title(
            f"P({self.variable} | {title})" if title else f"P({self.variable})",
            fontsize="medium",
        )
        self.ax_ = ax
        self.figure_ = ax.figure
        return self
