"""Networks drawn: one arrow per edge, no overlapping nodes, posterior bars
equal to brute-force enumeration, CPT tables and structure differences."""

import itertools

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
