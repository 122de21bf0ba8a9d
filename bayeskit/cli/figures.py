"""The compare tool's figure of the scores and its HTML report.

``--comparison-plot PATH`` saves the accuracy and log-loss of every model
(mean and standard deviation over the folds) as a PNG; ``--html PATH`` writes
one self-contained page for sharing: the data, the table of results, that
figure and the learning curve (when computed), the figures embedded as PNG.
Both need matplotlib (the ``plot`` extra) and use no pyplot global state.
"""

from __future__ import annotations

import base64
import io
import math
from html import escape

import numpy as np

from .curve import check_plot, save_plot
from .report import write_atomic

__all__ = ["comparison_figure", "save_figure", "write_html"]


def comparison_figure(comparison):
    """Accuracy and log-loss of every model, mean ± std over the folds.

    Returns
    -------
    matplotlib.figure.Figure
    """
    check_plot()
    from matplotlib.figure import Figure

    results = [r for r in comparison.results if not r.error]
    labels = [f"{r.name} ({r.library})" for r in results]
    fig = Figure(figsize=(10, 0.9 + 0.32 * max(len(results), 1)), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    y = np.arange(len(results))
    colors = ["#2a6fb0" if r.library == "bayeskit" else "#999999" for r in results]
    for ax, metric, title in [
        (axes[0], "accuracy", "accuracy (higher is better)"),
        (axes[1], "log_loss", "log-loss (lower is better)"),
    ]:
        means = np.array([r.mean(metric) for r in results])
        stds = np.array([r.std(metric) for r in results])
        ax.barh(y, means, xerr=stds, color=colors, capsize=2)
        ax.set_title(title, fontsize="medium")
        ax.grid(axis="x", alpha=0.3)
        if metric == "accuracy" and results:
            low = np.nanmin(means - stds)
            ax.set_xlim(max(0.0, low - 0.05) if math.isfinite(low) else 0.0, 1.0)
    axes[0].set_yticks(y, labels)
    axes[0].invert_yaxis()
    fig.suptitle(
        f"{comparison.data.name}: {comparison.cv_description} (grey: scikit-learn)",
        fontsize="medium",
    )
    return fig


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    return buffer.getvalue()


def save_figure(fig, path: str) -> None:
    """Write ``fig`` as a PNG (atomically), or a :class:`CompareError` naming
    ``path``."""
    png = _png(fig)
    write_atomic(path, lambda f: f.write(png), binary=True)


def write_html(comparison, table, path: str, curve=None) -> None:
    """One self-contained HTML page: the data, the results, the figures.

    Parameters
    ----------
    comparison : Comparison
    table : DataFrame
        The results as printed (one row per model, text cells).
    path : str
    curve : LearningCurve, default=None
        The learning curve, when it was computed.
    """
    pngs = [_png(comparison_figure(comparison))]
    if curve is not None:
        buffer = io.BytesIO()
        save_plot(curve, buffer)  # the figure of --plot, in memory
        pngs.append(buffer.getvalue())
    images = "".join(
        '<p><img alt="figure" src="data:image/png;base64,'
        + base64.b64encode(png).decode("ascii")
        + '"></p>'
        for png in pngs
    )
    head = "".join(f"<th>{escape(str(c))}</th>" for c in table.columns)
    rows = "".join(
        "<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in row) + "</tr>"
        for row in table.itertuples(index=False)
    )
    notes = "".join(
        f"<li>failed: {escape(r.library)} {escape(r.name)}: {escape(r.error)}</li>"
        for r in comparison.results
        if r.error
    ) + "".join(
        f"<li>skipped: bayeskit {escape(n)} ({escape(why)})</li>"
        for n, why in comparison.skipped
    )
    page = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>bayeskit compare: {escape(comparison.data.name)}</title>"
        "<style>body{font-family:sans-serif;margin:2em;color:#222}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccd;"
        "padding:3px 8px;text-align:right}th{background:#eef3fb}"
        "td:nth-child(-n+3){text-align:left}img{max-width:100%}</style>"
        "</head><body>"
        f"<h1>bayeskit compare: {escape(comparison.data.name)}</h1>"
        f"<p>Data: {escape(comparison.data.describe())}<br>"
        f"Cross-validation: {escape(comparison.cv_description)}. Mean ± "
        "standard deviation over the folds; fit and predict are wall times "
        "per fold.</p>"
        f"<table><tr>{head}</tr>{rows}</table>"
        + (f"<ul>{notes}</ul>" if notes else "")
        + images
        + "</body></html>"
    )
    write_atomic(path, lambda f: f.write(page))
