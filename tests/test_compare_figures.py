"""The compare tool's figure of the scores (--comparison-plot) and its HTML
report (--html): what they show is what the cross-validation measured."""

import base64
import json
import re
import sys
from html.parser import HTMLParser

import numpy as np
import pytest

from bayeskit.cli import compare as cmp
from bayeskit.cli import data as cd
from bayeskit.cli.main import main

pytest.importorskip("matplotlib")
PNG = b"\x89PNG\r\n\x1a\n"


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.images, self._cell = [], [], None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = ""
        elif tag == "img":
            self.images.append(dict(attrs)["src"])

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.rows[-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def test_comparison_figure_bars_hold_the_fold_means():
    from bayeskit.cli.figures import comparison_figure

    comparison = cmp.compare(cd.load_dataset("playtennis"), progress=False)
    fig = comparison_figure(comparison)
    accuracy, log_loss = fig.axes[:2]
    ok = [r for r in comparison.results if not r.error]
    for ax, metric in [(accuracy, "accuracy"), (log_loss, "log_loss")]:
        widths = [p.get_width() for p in ax.patches]
        np.testing.assert_allclose(
            widths, [np.mean(r.scores[metric]) for r in ok], rtol=1e-12
        )
    labels = [t.get_text() for t in accuracy.get_yticklabels()]
    assert labels == [f"{r.name} ({r.library})" for r in ok]


def test_html_report_holds_the_printed_table_and_the_figures(tmp_path, capsys):
    html, png, out_json = tmp_path / "r.html", tmp_path / "c.png", tmp_path / "r.json"
    argv = ["compare", "--dataset", "iris", "--cv", "3", "--no-progress"]
    argv += ["--html", str(html), "--comparison-plot", str(png)]
    argv += ["--json", str(out_json), "--learning-curve"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert f"HTML report written to {html}" in printed
    assert png.read_bytes()[:8] == PNG
    page = Page()
    page.feed(html.read_text(encoding="utf-8"))
    header, *rows = page.rows
    assert header == list(cmp.COLUMNS)
    payload = json.loads(out_json.read_text())
    assert len(rows) == len(payload["results"])
    for row, result in zip(rows, payload["results"]):
        assert row[:3] == [result["model"], result["library"], result["input"]]
        mean = result["accuracy"]["mean"]
        std = result["accuracy"]["std"]
        assert row[3] == f"{mean:.3f} ± {std:.3f}"
        # the same row, character for character, in the printed table
        assert re.search(re.escape(row[3]), printed)
    # the comparison figure and the learning curve, embedded as PNG
    assert len(page.images) == 2
    for src in page.images:
        prefix = "data:image/png;base64,"
        assert src.startswith(prefix)
        assert base64.b64decode(src[len(prefix) :])[:8] == PNG


def test_html_without_matplotlib_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    html = tmp_path / "r.html"
    assert main(["compare", "--dataset", "iris", "--html", str(html)]) == 2
    assert "pip install matplotlib" in capsys.readouterr().err
    assert not html.exists()


def test_unwritable_html_path_names_it(tmp_path, capsys):
    target = tmp_path / "no_such_dir" / "r.html"
    argv = ["compare", "--dataset", "playtennis", "--no-progress", "--html"]
    assert main([*argv, str(target)]) == 2
    assert str(target) in capsys.readouterr().err
