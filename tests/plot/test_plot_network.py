"""Networks drawn: one arrow per edge, no overlapping nodes, posterior bars
equal to brute-force enumeration, CPT tables and structure differences."""

import itertools
import shutil
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayeskit.datasets import flu_network, load_network
from bayeskit.graph._layout import layered_layout
from bayeskit.plot import (
    CPTDisplay,
    NetworkDisplay,
    StructureDiffDisplay,
    structure_difference,
)
from bayeskit.plot._graphviz import choose_layout, dot_graph, parse_plain
from bayeskit.plot._network import _BAR_LEFT, _BAR_RIGHT


def box(patch):
    """(x0, x1, y0, y1) of a node's box."""
    x, y = patch.get_x(), patch.get_y()
    return x, x + patch.get_width(), y, y + patch.get_height()


def assert_no_overlap(boxes):
    for (a, ra), (b, rb) in itertools.combinations(boxes.items(), 2):
        apart = ra[1] <= rb[0] or rb[1] <= ra[0] or ra[3] <= rb[2] or rb[3] <= ra[2]
        assert apart, f"{a!r} and {b!r} overlap"


def on_border(point, rect, tol=1e-9):
    x, y = point
    x0, x1, y0, y1 = rect
    inside = x0 - tol <= x <= x1 + tol and y0 - tol <= y <= y1 + tol
    return inside and min(abs(x - x0), abs(x - x1), abs(y - y0), abs(y - y1)) < tol


def arrow_tip(arrow, head_box):
    """The drawn arrow's vertex on the border of the box it points to."""
    # The drawn path: the polyline from the tail, then the head around its
    # tip, which matplotlib pulls back by about a line width (here under
    # 0.03 inch, the unit of the drawing) so that the stroke ends on the point.
    on = [p for p in arrow.get_path().vertices if on_border(p, head_box, tol=0.03)]
    assert on, "the arrow does not reach the box it points to"
    return on[0]


def assert_arrow_between(arrow, tail_box, head_box):
    pts = arrow.get_path().vertices
    assert on_border(pts[0], tail_box), "the arrow does not leave its tail's box"
    arrow_tip(arrow, head_box)


def assert_drawn_graph(disp, edges, ax):
    from matplotlib.patches import FancyArrowPatch

    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == len(edges)  # one arrow per edge, no more
    assert set(disp.arrows_) == set(edges)
    boxes = {v: box(p) for v, p in disp.nodes_.items()}
    assert_no_overlap(boxes)
    for (u, v), arrow in disp.arrows_.items():
        assert_arrow_between(arrow, boxes[u], boxes[v])
        tip = arrow_tip(arrow, boxes[v])
        assert tip[1] > arrow.get_path().vertices[0][1]  # it points down


@pytest.mark.parametrize("name", ["asia", "child", "insurance", "alarm"])
def test_structure_has_one_arrow_per_edge_and_no_overlap(name):
    bn = load_network(name)
    edges = list(bn.dag_.edges)
    disp = NetworkDisplay.from_edges(edges, nodes=bn.dag_.nodes)
    assert set(disp.nodes_) == set(bn.dag_.nodes)
    assert_drawn_graph(disp, edges, disp.ax_)


def brute_force_marginals(bn, evidence):
    """P(v | evidence) of every variable by summing the joint over all states."""
    nodes = list(bn.dag_.nodes)
    cards = [len(bn.states_[v]) for v in nodes]
    index = {v: i for i, v in enumerate(nodes)}
    joint = np.ones(cards)
    for v in nodes:
        parents = bn.dag_.parents(v)
        table = bn.cpds_[v]  # axes: the parents in order, then v
        # broadcast the table onto the joint's axes
        order = [index[u] for u in parents] + [index[v]]
        shape = [1] * len(nodes)
        for axis, size in zip(order, table.shape):
            shape[axis] = size
        perm = np.argsort(order)
        joint = joint * np.transpose(table, perm).reshape(shape)
    for v, state in evidence.items():
        mask = np.asarray(bn.states_[v]) == state
        shape = [1] * len(nodes)
        shape[index[v]] = cards[index[v]]
        joint = joint * mask.reshape(shape)
    joint /= joint.sum()
    return {
        v: joint.sum(axis=tuple(a for a in range(len(nodes)) if a != index[v]))
        for v in nodes
    }


@pytest.mark.parametrize(
    ("name", "evidence"),
    [
        ("asia", {}),
        ("asia", {"xray": "yes", "smoke": "no"}),
        ("asia", {"dysp": "yes"}),
        ("flu", {"headache": "yes", "temperature": "high"}),
    ],
)
def test_posterior_bars_are_the_brute_force_marginals(name, evidence):
    bn = flu_network() if name == "flu" else load_network(name)
    disp = NetworkDisplay.from_estimator(bn, evidence=evidence)
    assert_drawn_graph(disp, list(bn.dag_.edges), disp.ax_)
    truth = brute_force_marginals(bn, evidence)
    for v, corners in disp.bars_.items():
        lengths = corners[:, 1, 0] - corners[:, 0, 0]
        x0, x1, _, _ = box(disp.nodes_[v])
        span = (x1 - x0) - _BAR_LEFT - _BAR_RIGHT  # a bar's full length
        np.testing.assert_allclose(lengths / span, truth[v], atol=1e-12)
        # every bar inside its node's box
        assert corners[:, :, 0].min() >= x0 and corners[:, :, 0].max() <= x1
    # one collection draws every bar
    assert len(disp.bar_collection_.get_paths()) == sum(
        len(bn.states_[v]) for v in bn.dag_.nodes
    )


def test_unknown_evidence_state_names_the_parameter():
    with pytest.raises(ValueError, match="evidence"):
        NetworkDisplay.from_estimator(flu_network(), evidence={"flu": "maybe"})


@st.composite
def dags(draw):
    n = draw(st.integers(1, 12))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True)) if pairs else []
    perm = draw(st.permutations(range(n)))
    names = [f"v{perm[i]}" * draw(st.integers(1, 3)) for i in range(n)]
    return names, [(names[i], names[j]) for i, j in chosen]


@settings(max_examples=60, deadline=None)
@given(dags())
def test_layout_of_any_dag_points_down_without_overlaps(graph):
    nodes, edges = graph
    sizes = {v: (0.3 + 0.1 * len(v), 0.4) for v in nodes}
    lay = layered_layout(nodes, edges, sizes)
    rects = {
        v: (x - sizes[v][0] / 2, x + sizes[v][0] / 2, y - 0.2, y + 0.2)
        for v, (x, y) in lay.positions.items()
    }
    assert_no_overlap(rects)
    layer_of = {v: k for k, level in enumerate(lay.layers) for v in level}
    assert sorted(layer_of) == sorted(nodes)
    for u, v in edges:
        assert layer_of[u] < layer_of[v]
        route = lay.routes[(u, v)]
        # one point per layer crossed, strictly downwards
        assert len(route) == layer_of[v] - layer_of[u] + 1
        assert np.all(np.diff(route[:, 1]) > 0)
        np.testing.assert_allclose(route[0], lay.positions[u])
        np.testing.assert_allclose(route[-1], lay.positions[v])


def random_change(rng, true):
    """A learnt structure made from the true one: some edges dropped, some
    reversed and some added, each kind known by construction."""
    true = list(true)
    rng.shuffle(true)
    n_drop, n_rev = rng.integers(0, 4, size=2)
    dropped, reversed_, kept = (
        true[:n_drop],
        true[n_drop : n_drop + n_rev],
        true[n_drop + n_rev :],
    )
    nodes = sorted({v for e in true for v in e})
    taken = {frozenset(e) for e in true}
    added = []
    for u, v in itertools.permutations(nodes, 2):
        if frozenset((u, v)) not in taken and rng.random() < 0.05:
            added.append((u, v))
            taken.add(frozenset((u, v)))
    learnt = kept + [e[::-1] for e in reversed_] + added
    return learnt, {
        "common": kept,
        "reversed": [e[::-1] for e in reversed_],
        "added": added,
        "missing": dropped,
    }


@pytest.mark.parametrize("name", ["asia", "child", "alarm"])
def test_structure_difference_finds_every_change(rng, name):
    true = list(load_network(name).dag_.edges)
    for _ in range(5):
        learnt, expected = random_change(rng, true)
        found = structure_difference(learnt, true)
        for kind in expected:
            assert sorted(found[kind]) == sorted(expected[kind]), kind
        disp = StructureDiffDisplay.from_edges(learnt, true)
        for kind in expected:
            assert sorted(disp.arrows_[kind]) == sorted(expected[kind])
        boxes = {v: box(p) for v, p in disp.nodes_.items()}
        assert_no_overlap(boxes)
        for arrows in disp.arrows_.values():
            for (u, v), arrow in arrows.items():
                assert_arrow_between(arrow, boxes[u], boxes[v])


def test_structure_difference_of_two_networks():
    true = load_network("asia")
    learnt_edges = [e for e in true.dag_.edges if e != ("asia", "tub")]
    from bayeskit import BayesianNetwork

    learnt = BayesianNetwork(learnt_edges).fit(true.sample(500, random_state=0))
    disp = StructureDiffDisplay.from_estimator(learnt, true)
    assert list(disp.arrows_["missing"]) == [("asia", "tub")]
    assert len(disp.arrows_["common"]) == len(true.dag_.edges) - 1


@pytest.mark.parametrize("variable", ["flu", "fever", "headache", "sinus_swelling"])
def test_cpt_table_holds_every_value(variable):
    bn = flu_network()
    disp = CPTDisplay.from_estimator(bn, variable)
    table = disp.table_
    cpd = bn.cpds_[variable].reshape(-1, len(bn.states_[variable]))
    cells = table.get_celld()
    parents = bn.dag_.parents(variable)
    m = disp.n_index_columns_
    assert m == len(parents)
    cards = [len(bn.states_[u]) for u in parents]
    combos = np.unravel_index(np.arange(cpd.shape[0]), cards) if parents else ()
    for r in range(cpd.shape[0]):
        for c in range(cpd.shape[1]):
            assert float(cells[(r + 1, m + c)].get_text().get_text()) == pytest.approx(
                cpd[r, c], abs=5e-4
            )
        for j, u in enumerate(parents):  # the row's parent states
            assert cells[(r + 1, j)].get_text().get_text() == str(
                bn.states_[u][combos[j][r]]
            )
    header = [cells[(0, c)].get_text().get_text() for c in range(m + cpd.shape[1])]
    assert header == [*map(str, parents), *map(str, bn.states_[variable])]
    with pytest.raises(ValueError, match="variable"):
        CPTDisplay.from_estimator(bn, "no_such_variable")


# -- Graphviz through pydot, and the fallback without them ------------------------
NO_DOT = "Graphviz's dot program is not installed (Debian: apt-get install graphviz)"


def network_and_sizes(name, rng):
    bn = load_network(name)
    nodes = list(bn.dag_.nodes)
    sizes = {v: (rng.uniform(0.5, 2.0), rng.uniform(0.3, 1.0)) for v in nodes}
    return nodes, list(bn.dag_.edges), sizes


@pytest.mark.parametrize("name", ["asia", "child", "alarm"])
def test_dot_graph_holds_every_box_and_edge(name, rng):
    """The DOT that pydot writes, read back by pydot's parser: a fixed-size
    box of the given size per node and one edge per edge."""
    pydot = pytest.importorskip("pydot")
    nodes, edges, sizes = network_and_sizes(name, rng)
    graph = dot_graph(nodes, edges, sizes, node_gap=0.25, layer_gap=0.45)
    (back,) = pydot.graph_from_dot_data(graph.to_string())
    read = {n.get_name(): n for n in back.get_nodes() if n.get_name().startswith("n")}
    assert len(read) == len(nodes)
    for i, v in enumerate(nodes):
        node = read[f"n{i}"]
        assert node.get("shape") == "box" and node.get("fixedsize") == "true"
        np.testing.assert_allclose(
            [float(node.get("width")), float(node.get("height"))], sizes[v]
        )
    got = sorted((e.get_source(), e.get_destination()) for e in back.get_edges())
    index = {v: f"n{i}" for i, v in enumerate(nodes)}
    assert got == sorted((index[u], index[v]) for u, v in edges)
    assert back.get("rankdir") == "TB"


def test_parse_plain_reads_centres_and_routes(rng):
    """``dot -Tplain`` as its format is documented: centres in inches with y
    up, each edge's control points; the routes run centre to centre through
    the control points outside both boxes."""
    nodes = ["a", "b c", 3]  # any hashable, names with spaces included
    sizes = {"a": (1.0, 0.4), "b c": (0.8, 0.3), 3: (1.2, 0.5)}
    centres = {"a": (2.0, 3.0), "b c": (1.0, 1.5), 3: (2.5, 0.2)}
    lines = ["graph 1 4 4"]
    for i, v in enumerate(nodes):
        x, y = centres[v]
        lines.append(f'node n{i} {x} {y} {sizes[v][0]} {sizes[v][1]} "" solid box')
    inner = rng.uniform(0.5, 2.5, size=(2, 2))
    # from inside a's box (dot's boxes are its rounded sizes), to the base
    # of the arrowhead, above b's box
    ctrl = np.r_[[[1.9, 2.85]], inner, [[1.1, 1.8]]]
    lines.append(
        "edge n0 n1 4 " + " ".join(f"{x} {y}" for x, y in ctrl) + " solid black"
    )
    lines.append("edge n0 n2 2 2.1 2.85 2.4 0.35 solid black")  # both in boxes
    lines.append("stop")
    lay = parse_plain("\n".join(lines), nodes, [("a", "b c"), ("a", 3)], sizes)
    for v in nodes:
        assert lay.positions[v] == (centres[v][0], -centres[v][1])
        assert lay.sizes[v] == sizes[v]
    route = lay.routes[("a", "b c")]
    np.testing.assert_array_equal(route[0], [2.0, -3.0])
    np.testing.assert_array_equal(route[-1], [1.0, -1.5])
    half = {v: np.array(sizes[v]) / 2 for v in nodes}
    outside = [
        p
        for p in ctrl * [1, -1]
        if (np.abs(p - [2.0, -3.0]) > half["a"]).any()
        and (np.abs(p - [1.0, -1.5]) > half["b c"]).any()
    ]
    assert len(outside) >= 1  # the arrowhead's base at least
    np.testing.assert_array_equal(route[1:-1], np.reshape(outside, (-1, 2)))
    np.testing.assert_array_equal(lay.routes[("a", 3)], [[2.0, -3.0], [2.5, -0.2]])
    assert lay.layers == [["a"], ["b c"], [3]]


@pytest.mark.skipif(shutil.which("dot") is None, reason=NO_DOT)
@pytest.mark.parametrize("name", ["asia", "child", "alarm"])
def test_dot_engine_draws_where_graphviz_puts_the_nodes(name):
    """Drawn with engine='dot', every box is centred where Graphviz itself
    (run here on the same DOT) places the node, no boxes overlap, and each
    edge is one arrow from its parent's box down to its child's."""
    pytest.importorskip("pydot")
    bn = load_network(name)
    edges = list(bn.dag_.edges)
    disp = NetworkDisplay.from_edges(edges, nodes=bn.dag_.nodes, engine="dot")
    assert_drawn_graph(disp, edges, disp.ax_)
    nodes = list(bn.dag_.nodes)
    graph = dot_graph(nodes, edges, disp.layout.sizes, node_gap=0.25, layer_gap=0.45)
    out = subprocess.run(
        ["dot", "-Tplain"],
        input=graph.to_string(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    placed = {}
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] == "node":
            placed[nodes[int(parts[1][1:])]] = (float(parts[2]), -float(parts[3]))
    for v, patch in disp.nodes_.items():
        centre = (
            patch.get_x() + patch.get_width() / 2,
            patch.get_y() + patch.get_height() / 2,
        )
        np.testing.assert_allclose(centre, placed[v], atol=1e-9)


def test_without_pydot_auto_is_the_layered_layout_and_dot_says_what_to_install(
    monkeypatch, rng
):
    nodes, edges, sizes = network_and_sizes("asia", rng)
    monkeypatch.setitem(sys.modules, "pydot", None)  # import pydot fails
    expected = layered_layout(nodes, edges, sizes, node_gap=0.25, layer_gap=0.45)
    lay = choose_layout("auto", nodes, edges, sizes, node_gap=0.25, layer_gap=0.45)
    assert lay.positions == expected.positions
    with pytest.raises(ImportError, match="pydot"):
        choose_layout("dot", nodes, edges, sizes, node_gap=0.25, layer_gap=0.45)


def test_without_the_dot_program_auto_falls_back(monkeypatch, rng):
    pytest.importorskip("pydot")
    nodes, edges, sizes = network_and_sizes("asia", rng)
    monkeypatch.setenv("PATH", "")  # no dot on the PATH
    expected = layered_layout(nodes, edges, sizes, node_gap=0.25, layer_gap=0.45)
    lay = choose_layout("auto", nodes, edges, sizes, node_gap=0.25, layer_gap=0.45)
    assert lay.positions == expected.positions
    with pytest.raises(FileNotFoundError, match="Graphviz"):
        choose_layout("dot", nodes, edges, sizes, node_gap=0.25, layer_gap=0.45)


def test_engine_is_checked():
    with pytest.raises(ValueError, match="engine"):
        NetworkDisplay.from_edges([("a", "b")], engine="neato")
