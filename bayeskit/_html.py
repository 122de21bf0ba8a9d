"""Notebook displays of fitted models: HTML written by hand, no matplotlib.

A fitted estimator's ``_repr_html_`` (scikit-learn's, which Jupyter calls)
goes through its ``_html_repr``; the estimators that override it call
:func:`estimator_html`, which shows what the model has learnt (a network's
graph as SVG, from the same pure-Python layered layout as
:class:`bayeskit.plot.NetworkDisplay`, and its CPTs; a mixture's or an HMM's
parameters) above scikit-learn's own display of the parameters. An estimator
not fitted yet shows scikit-learn's display alone, and a pipeline holding
any of them is drawn by scikit-learn as always.
"""

from __future__ import annotations

from html import escape

import numpy as np
import pandas as pd
from sklearn.utils import estimator_html_repr

from .graph._layout import edge_path, layered_layout

__all__ = ["estimator_html", "network_svg", "posterior_html"]

_STYLE = """<style>
.bk-repr{font-family:sans-serif;font-size:13px;color:#222}
.bk-repr table{border-collapse:collapse;margin:4px 0 8px 0;font-size:12px}
.bk-repr th,.bk-repr td{border:1px solid #ccd;padding:2px 6px;text-align:right}
.bk-repr th{background:#eef3fb}
.bk-repr summary{cursor:pointer;margin:2px 0}
.bk-repr .bk-title{font-weight:bold;margin-bottom:4px}
</style>"""

# SVG units are pixels; at 12 px, sans-serif capitals and digits are about
# 8.7 px wide, other characters about 6.7 px.
_BOX_H = 26.0


def _text_width(text: str) -> float:
    return sum(8.7 if c.isupper() or c.isdigit() else 6.7 for c in text)


def _fmt(x) -> str:
    return f"{float(x):.4g}"


def _table(rows, columns, index=None, index_name="") -> str:
    """An HTML table of numbers (``rows``: 2-d), headed by ``columns``."""
    head = "".join(f"<th>{escape(str(c))}</th>" for c in columns)
    if index is not None:
        head = f"<th>{escape(str(index_name))}</th>" + head
    body = []
    for r, row in enumerate(rows):
        cells = "".join(f"<td>{_fmt(v)}</td>" for v in row)
        if index is not None:
            cells = f"<th>{escape(str(index[r]))}</th>" + cells
        body.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def network_svg(nodes, edges) -> str:
    """An SVG drawing of a DAG: a box per node, an arrow per edge.

    Parameters
    ----------
    nodes : iterable of hashable
    edges : iterable of (parent, child)

    Returns
    -------
    str
        ``<svg>...</svg>``; every box is a ``<rect>`` with the node's name in
        its ``data-node`` attribute, every edge a ``<polyline>`` with
        ``data-edge``.
    """
    nodes = list(nodes)
    edges = [tuple(e) for e in edges]
    sizes = {v: (_text_width(str(v)) + 16.0, _BOX_H) for v in nodes}
    lay = layered_layout(nodes, edges, sizes, node_gap=14.0, layer_gap=34.0)
    x0, x1, y0, y1 = lay.bounds
    pad = 6.0
    width, height = x1 - x0 + 2 * pad, y1 - y0 + 2 * pad
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="{x0 - pad:.1f} {y0 - pad:.1f} '
        f'{width:.1f} {height:.1f}" font-family="sans-serif" font-size="12">',
        '<defs><marker id="bk-arrow" viewBox="0 0 10 10" refX="10" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z" fill="#444"/></marker></defs>',
    ]
    for (u, v), route in lay.routes.items():
        pts = edge_path(route, lay.sizes[u], lay.sizes[v])
        coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        parts.append(
            f'<polyline data-edge="{escape(str(u))}&#8594;{escape(str(v))}" '
            f'points="{coords}" fill="none" stroke="#444" stroke-width="1.2" '
            'marker-end="url(#bk-arrow)"/>'
        )
    for v, (x, y) in lay.positions.items():
        w, h = lay.sizes[v]
        name = escape(str(v))
        parts.append(
            f'<rect data-node="{name}" x="{x - w / 2:.1f}" y="{y - h / 2:.1f}" '
            f'width="{w:.1f}" height="{h:.1f}" rx="5" fill="#eef3fb" '
            'stroke="#34558b"/>'
            f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle">{name}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _network_body(est) -> str:
    dag = est.dag_
    n_params = est.n_parameters() if hasattr(est, "n_parameters") else None
    head = (
        f"<div class='bk-title'>{escape(type(est).__name__)}: {len(dag.nodes)} "
        f"variables, {len(dag.edges)} edges"
        + (f", {n_params} free parameters" if n_params is not None else "")
        + "</div>"
    )
    cpts = []
    for v in dag.nodes:
        if v in getattr(est, "continuous_", ()):  # a regression per parent state
            frame = est.get_cpd(v)
            title = f"{v} | {', '.join(map(str, dag.parents(v)))}"
            table = _table(frame.to_numpy(), frame.columns, frame.index.tolist())
            cpts.append(f"<details><summary>{escape(title)}</summary>{table}</details>")
            continue
        cpd = np.asarray(est.cpds_[v], dtype=float)
        states = list(est.states_[v])
        parents = list(dag.parents(v))
        rows = cpd.reshape(-1, len(states))
        if parents:
            cards = [len(est.states_[u]) for u in parents]
            combos = np.unravel_index(np.arange(rows.shape[0]), cards)
            index = [
                ", ".join(str(est.states_[u][c[r]]) for u, c in zip(parents, combos))
                for r in range(rows.shape[0])
            ]
            title = f"P({v} | {', '.join(map(str, parents))})"
            table = _table(rows, states, index, ", ".join(map(str, parents)))
        else:
            title = f"P({v})"
            table = _table(rows, states)
        cpts.append(f"<details><summary>{escape(title)}</summary>{table}</details>")
    return (
        head
        + network_svg(dag.nodes, dag.edges)
        + "<details><summary>conditional probability tables</summary>"
        + "".join(cpts)
        + "</details>"
    )


def _mixture_body(est) -> str:
    means = np.asarray(est.means_, dtype=float)
    k, d = means.shape
    names = getattr(est, "feature_names_in_", None)
    columns = (
        [str(c) for c in names] if names is not None else [f"x{j}" for j in range(d)]
    )
    head = (
        f"<div class='bk-title'>{escape(type(est).__name__)}: {k} components, "
        f"{escape(str(getattr(est, 'covariance_type', '')))} covariances, "
        f"{d} features</div>"
    )
    weights = np.asarray(est.weights_, dtype=float)
    body = _table(
        np.c_[weights, means],
        ["weight", *[f"mean {c}" for c in columns]],
        list(range(k)),
        "component",
    )
    return head + body + _fit_lines(est)


def _hmm_body(est) -> str:
    A = np.asarray(est.transmat_, dtype=float)
    k = A.shape[0]
    head = f"<div class='bk-title'>{escape(type(est).__name__)}: {k} states</div>"
    parts = [
        head,
        "start probabilities",
        _table(np.asarray(est.startprob_, dtype=float)[None, :], list(range(k))),
        "transition matrix (row: from, column: to)",
        _table(A, list(range(k)), list(range(k)), "state"),
    ]
    for attr, label in (
        ("means_", "means"),
        ("lambdas_", "Poisson rates"),
        ("emissionprob_", "emission probabilities"),
    ):
        values = getattr(est, attr, None)
        if values is not None:
            values = np.asarray(values, dtype=float).reshape(k, -1)
            parts += [
                label,
                _table(values, list(range(values.shape[1])), list(range(k)), "state"),
            ]
            break
    return "".join(parts) + _fit_lines(est)


def _fit_lines(est) -> str:
    facts = []
    if hasattr(est, "n_iter_"):
        facts.append(f"{est.n_iter_} EM iterations")
    if hasattr(est, "converged_"):
        facts.append("converged" if est.converged_ else "not converged")
    if hasattr(est, "lower_bound_"):
        facts.append(f"lower bound {_fmt(est.lower_bound_)}")
    return f"<div>{escape(', '.join(facts))}</div>" if facts else ""


def estimator_html(est) -> str:
    """The notebook display of a bayeskit estimator.

    Parameters
    ----------
    est : estimator

    Returns
    -------
    str
        What the fitted model holds, then scikit-learn's display of the
        estimator (folded); scikit-learn's display alone before fitting.
    """
    sklearn_html = estimator_html_repr(est)
    network = getattr(est, "network_", est)  # a structure learner's network
    if hasattr(network, "cpds_") and hasattr(network, "dag_"):
        body = _network_body(network)
    elif hasattr(est, "transmat_"):
        body = _hmm_body(est)
    elif hasattr(est, "weights_") and hasattr(est, "means_"):
        body = _mixture_body(est)
    else:
        return sklearn_html
    return (
        f"{_STYLE}<div class='bk-repr'>{body}"
        f"<details><summary>parameters</summary>{sklearn_html}</details></div>"
    )


def posterior_html(series) -> str:
    """A query's posterior as an HTML table with named states.

    Parameters
    ----------
    series : Series
        Probabilities indexed by the states of one variable (the index named
        after it) or by a MultiIndex over several variables' states.

    Returns
    -------
    str
        A table with one column per variable (headed by its name, holding
        its states), then the probability (headed by the Series' name), one
        row per joint state.
    """
    index = series.index
    if isinstance(index, pd.MultiIndex):
        names = [str(n) for n in index.names]
        rows = [[str(s) for s in r] for r in index]
    else:
        names = [str(index.name) if index.name is not None else "state"]
        rows = [[str(s)] for s in index]
    title = str(series.name) if series.name is not None else "probability"
    head = "".join(f"<th>{escape(h)}</th>" for h in [*names, title])
    body = "".join(
        "<tr>"
        + "".join(f"<th>{escape(s)}</th>" for s in r)
        + f"<td>{_fmt(p)}</td></tr>"
        for r, p in zip(rows, series.to_numpy(dtype=float))
    )
    return f"{_STYLE}<div class='bk-repr'><table><tr>{head}</tr>{body}</table></div>"
