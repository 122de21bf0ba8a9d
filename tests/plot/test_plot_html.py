"""Notebook displays: a network's HTML holds every node and every CPT value,
mixtures and HMMs their parameters; scikit-learn's display stays for
pipelines and unfitted estimators."""

import re
from html.parser import HTMLParser

import numpy as np
import pytest
import sklearn
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import estimator_html_repr

import bayeskit as bk
from bayeskit.datasets import flu_network, load_network


class Tables(HTMLParser):
    """Every <table> as rows of cell texts; every <rect data-node>, every
    <polyline data-edge> and every <summary>."""

    def __init__(self):
        super().__init__()
        self.tables, self.rects, self.edges, self.summaries = [], [], [], []
        self._cell = self._summary = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = ""
        elif tag == "summary":
            self._summary = ""
        elif tag == "rect" and "data-node" in attrs:
            self.rects.append(attrs)
        elif tag == "polyline" and "data-edge" in attrs:
            self.edges.append(attrs)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(self._cell)
            self._cell = None
        elif tag == "summary":
            self.summaries.append(self._summary)
            self._summary = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
        if self._summary is not None:
            self._summary += data


def parse(html):
    p = Tables()
    p.feed(html)
    return p


@pytest.mark.parametrize("name", ["flu", "asia", "alarm"])
def test_network_html_holds_every_node_and_cpt_value(name):
    bn = flu_network() if name == "flu" else load_network(name)
    page = parse(bn._repr_html_())
    assert sorted(r["data-node"] for r in page.rects) == sorted(map(str, bn.dag_.nodes))
    assert sorted(e["data-edge"] for e in page.edges) == sorted(
        f"{u}\u2192{v}" for u, v in bn.dag_.edges
    )
    # one CPT per variable, in the order of the nodes, each value written
    titles = [s for s in page.summaries if s.startswith("P(")]
    assert len(titles) == len(bn.dag_.nodes)
    tables = page.tables[: len(bn.dag_.nodes)]
    for v, title, table in zip(bn.dag_.nodes, titles, tables):
        parents = bn.dag_.parents(v)
        assert title == (f"P({v} | {', '.join(parents)})" if parents else f"P({v})")
        header, *rows = table
        states = [str(s) for s in bn.states_[v]]
        assert header[-len(states) :] == states
        cpd = bn.cpds_[v].reshape(-1, len(states))
        values = np.array([[float(c) for c in row[-len(states) :]] for row in rows])
        np.testing.assert_allclose(values, cpd, rtol=5e-4, atol=1e-12)
        if parents:  # each row names its parents' states
            combos = np.unravel_index(
                np.arange(cpd.shape[0]), [len(bn.states_[u]) for u in parents]
            )
            for r, row in enumerate(rows):
                assert row[0] == ", ".join(
                    str(bn.states_[u][c[r]]) for u, c in zip(parents, combos)
                )


def test_network_svg_boxes_do_not_overlap():
    bn = load_network("alarm")
    page = parse(bn._repr_html_())
    rects = [
        tuple(float(r[k]) for k in ("x", "y", "width", "height")) for r in page.rects
    ]
    for a in range(len(rects)):
        for b in range(a + 1, len(rects)):
            xa, ya, wa, ha = rects[a]
            xb, yb, wb, hb = rects[b]
            assert xa + wa <= xb or xb + wb <= xa or ya + ha <= yb or yb + hb <= ya


def test_mixture_and_hmm_html_hold_their_parameters(rng):
    X = np.vstack([rng.normal(c, 1.0, size=(100, 2)) for c in (0, 5)])
    gmm = bk.GaussianMixture(2, random_state=0).fit(X)
    (table,) = parse(gmm._repr_html_()).tables[:1]
    values = np.array([[float(c) for c in row[1:]] for row in table[1:]])
    np.testing.assert_allclose(values, np.c_[gmm.weights_, gmm.means_], rtol=5e-4)
    hmm = bk.GaussianHMM(2, random_state=0).fit(X)
    start, trans, means = parse(hmm._repr_html_()).tables[:3]
    np.testing.assert_allclose([float(c) for c in start[1]], hmm.startprob_, rtol=5e-4)
    got = np.array([[float(c) for c in row[1:]] for row in trans[1:]])
    np.testing.assert_allclose(got, hmm.transmat_, rtol=5e-4, atol=1e-12)
    got = np.array([[float(c) for c in row[1:]] for row in means[1:]])
    np.testing.assert_allclose(got, hmm.means_, rtol=5e-4)


def test_scikit_learn_display_stays_for_pipelines_and_unfitted_models(rng):
    X = rng.normal(size=(60, 2))
    # the ids of scikit-learn's display are counters: compare without them
    strip = re.compile(r"(?<=id-)\d+")
    unfitted = bk.GaussianMixture(2)
    assert strip.sub("", unfitted._repr_html_()) == strip.sub(
        "", estimator_html_repr(unfitted)
    )
    pipe = make_pipeline(StandardScaler(), bk.GaussianMixture(2, random_state=0))
    pipe.fit(X)
    html = pipe._repr_html_()
    assert "bk-repr" not in html
    assert strip.sub("", html) == strip.sub("", estimator_html_repr(pipe))
    # a fitted model folds scikit-learn's display under its own
    fitted = pipe[-1]
    assert (
        "bk-repr" in fitted._repr_html_() and "sk-top-container" in fitted._repr_html_()
    )
    # display='text' turns the HTML off, as for every scikit-learn estimator
    with sklearn.config_context(display="text"):
        assert not hasattr(fitted, "_repr_html_")
        assert "text/html" not in fitted._repr_mimebundle_()
    assert "bk-repr" in fitted._repr_mimebundle_()["text/html"]


def test_names_are_escaped():
    bn = bk.BayesianNetwork([("<a>", "b&c")]).fit(
        __import__("pandas").DataFrame({"<a>": [0, 1, 1], "b&c": [1, 1, 0]})
    )
    html = bn._repr_html_()
    assert "<a>" not in html.split("parameters")[0]
    assert "&lt;a&gt;" in html and "b&amp;c" in html


def test_a_structure_learner_displays_its_learnt_network():
    from bayeskit.plot import NetworkDisplay, StructureDiffDisplay

    asia = load_network("asia")
    hc = bk.HillClimbSearch().fit(asia.sample(2000, random_state=0))
    page = parse(hc._repr_html_())
    assert sorted(e["data-edge"] for e in page.edges) == sorted(
        f"{u}\u2192{v}" for u, v in hc.edges_
    )
    disp = NetworkDisplay.from_estimator(hc, evidence={"smoke": "yes"})
    assert set(disp.arrows_) == set(hc.edges_)
    diff = StructureDiffDisplay.from_estimator(hc, asia)
    drawn = {e for arrows in diff.arrows_.values() for e in arrows}
    assert drawn == set(hc.edges_) | {
        e for e in asia.dag_.edges if e not in hc.edges_ and e[::-1] not in hc.edges_
    }


def test_query_html_is_pgmpys_factor_table_with_named_states(rng):
    """A query's notebook table holds, row by row, the joint states of the
    queried variables and the probability pgmpy's VariableElimination gives
    them, on random queries with random evidence."""
    pgmpy_inference = pytest.importorskip("pgmpy.inference")
    import pandas as pd

    bn = load_network("asia")
    ve = pgmpy_inference.VariableElimination(bn.to_pgmpy())
    nodes = list(bn.dag_.nodes)
    for _ in range(15):
        k = int(rng.integers(1, 4))
        chosen = [nodes[i] for i in rng.permutation(len(nodes))[: k + 2]]
        targets, observed = chosen[:k], chosen[k:]
        evidence = {
            v: bn.states_[v][int(rng.integers(len(bn.states_[v])))]
            for v in observed[: int(rng.integers(0, 3))]
        }
        try:
            result = bn.query(targets, evidence=evidence or None)
        except ValueError:  # evidence of probability zero
            continue
        assert isinstance(result, pd.Series)
        header, *rows = parse(result._repr_html_()).tables[0]
        assert header == [*map(str, targets), f"P({', '.join(targets)} | evidence)"]
        factor = ve.query(targets, evidence=evidence or None, show_progress=False)
        assert len(rows) == np.prod([len(bn.states_[v]) for v in targets])
        for row in rows:
            assignment = dict(zip(targets, row[:-1]))
            expected = factor.get_value(**assignment)
            np.testing.assert_allclose(float(row[-1]), expected, rtol=5e-4, atol=1e-9)


def test_query_result_is_a_series_and_what_it_makes_is_plain(rng):
    import pandas as pd

    bn = load_network("asia")
    q = bn.query("lung", evidence={"smoke": "yes"})
    plain = pd.Series(q.to_numpy(), index=q.index, name=q.name)
    pd.testing.assert_series_equal(pd.Series(q), plain)
    for made in (q * 2, q.copy(), q.iloc[:1], q.sort_values()):
        assert type(made) is pd.Series
    assert type(bn.query(["lung", "tub"])).__name__ == "PosteriorSeries"
