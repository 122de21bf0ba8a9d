"""Tests of bayeskit.graph.dag against hand examples and brute-force joints.

The key check enumerates the full joint of random small networks and compares
every d-separation verdict with the numerical (in)dependence it predicts. A
second, independent d-separation test (active trails, "Bayes ball") written
below on the raw edge list is compared with ``DAG.is_dseparated`` on larger
random graphs.
"""

import itertools
import pickle

import numpy as np
import pytest

from bayeskit.graph.dag import DAG, CycleError

# The network of eqn. (12.3) in the reference notes (000_..., section 12.1):
# P(X1) P(X2) P(X3 | X1, X2) P(X4 | X3) P(X5 | X1).
LECTURE_EDGES = [("X1", "X3"), ("X2", "X3"), ("X3", "X4"), ("X1", "X5")]

# A hand example: a v-structure at C, a fork at C, a second v-structure at E.
#   A   B
#    \ /
#     C   F
#    / \ /
#   D   E
#       |
#       G
HAND_EDGES = [
    ("A", "C"),
    ("B", "C"),
    ("C", "D"),
    ("C", "E"),
    ("F", "E"),
    ("E", "G"),
]

SEPARATED_TOL = 1e-10
DEPENDENT_MIN_GAP = 1e-6


@pytest.fixture
def rng():
    return np.random.default_rng(20240607)


# ----------------------------------------------------------------------
# Independent helpers: random networks, brute-force joint, active trails


def _parents_from_edges(nodes, edges):
    parents = {v: [] for v in nodes}
    for parent, child in edges:
        parents[child].append(parent)
    return parents


def _random_network(rng, n_nodes, p_edge=0.5):
    """Labels in random insertion order, edges consistent with a hidden order."""
    labels = [f"V{i}" for i in range(n_nodes)]
    rank = rng.permutation(n_nodes)
    edges = [
        (labels[i], labels[j])
        for i in range(n_nodes)
        for j in range(n_nodes)
        if rank[i] < rank[j] and rng.random() < p_edge
    ]
    edges = [edges[k] for k in rng.permutation(len(edges))]
    return labels, edges


def _random_joint(rng, nodes, edges):
    """Joint array (one axis per node, in ``nodes`` order) of random CPTs.

    CPT entries are drawn from [0.1, 1) before normalisation, so no entry is
    near zero and no independence holds by accident.
    """
    axis = {v: i for i, v in enumerate(nodes)}
    cards = [int(c) for c in rng.integers(2, 4, size=len(nodes))]
    parents = _parents_from_edges(nodes, edges)
    operands = []
    for v in nodes:
        axes = [axis[p] for p in parents[v]] + [axis[v]]
        table = rng.uniform(0.1, 1.0, size=[cards[a] for a in axes])
        table /= table.sum(axis=-1, keepdims=True)
        operands += [table, axes]
    joint = np.einsum(*operands, list(range(len(nodes))))
    np.testing.assert_allclose(joint.sum(), 1.0)
    return joint


def _independence_gap(joint, nodes, xs, ys, zs):
    """max |P(x, y | z) - P(x | z) P(y | z)| over all values of x, y, z."""
    axis = {v: i for i, v in enumerate(nodes)}
    keep = [axis[v] for v in (*xs, *ys, *zs)]
    drop = tuple(a for a in range(joint.ndim) if a not in keep)
    marginal = joint.sum(axis=drop)
    kept_sorted = sorted(keep)
    marginal = np.transpose(marginal, [kept_sorted.index(a) for a in keep])
    size = [
        int(np.prod([joint.shape[axis[v]] for v in group])) for group in (xs, ys, zs)
    ]
    marginal = marginal.reshape(size)
    cond = marginal / marginal.sum(axis=(0, 1))
    product = cond.sum(axis=1, keepdims=True) * cond.sum(axis=0, keepdims=True)
    return float(np.max(np.abs(cond - product)))


def _active_trail_separated(nodes, edges, xs, ys, given):
    """d-separation by reachability along active trails (Bayes ball).

    Walk (node, direction) states from xs: "up" when arriving from a child,
    "down" when arriving from a parent. An unobserved node passes the ball on
    in every direction it may go; an observed node stops a chain or fork but
    opens a collider, and so does a collider with an observed descendant.
    """
    parents = _parents_from_edges(nodes, edges)
    children = {v: [] for v in nodes}
    for parent, child in edges:
        children[parent].append(child)
    given = set(given)
    opens_collider = set(given)
    stack = list(given)
    while stack:
        for p in parents[stack.pop()]:
            if p not in opens_collider:
                opens_collider.add(p)
                stack.append(p)
    seen = set()
    stack = [(x, "up") for x in xs]
    while stack:
        node, direction = stack.pop()
        if (node, direction) in seen:
            continue
        seen.add((node, direction))
        if node in ys:
            return False
        if node not in given:
            stack += [(c, "down") for c in children[node]]
            if direction == "up":
                stack += [(p, "up") for p in parents[node]]
        if direction == "down" and node in opens_collider:
            stack += [(p, "up") for p in parents[node]]
    return True


def _subsets(items):
    for r in range(len(items) + 1):
        yield from itertools.combinations(items, r)


# ----------------------------------------------------------------------
# The reference notes' network


@pytest.mark.parametrize(
    ("xs", "ys", "given"),
    [
        ("X1", "X2", ()),
        ("X4", ["X1", "X2", "X5"], "X3"),
        ("X5", ["X2", "X3", "X4"], "X1"),
    ],
)
def test_lecture_independences(xs, ys, given):
    dag = DAG(LECTURE_EDGES)
    assert dag.is_dseparated(xs, ys, given)
    assert dag.is_dseparated(ys, xs, given)


@pytest.mark.parametrize("given", ["X3", "X4", ["X3", "X5"], ["X4", "X5"]])
def test_lecture_explaining_away(given):
    dag = DAG(LECTURE_EDGES)
    assert dag.is_dseparated("X1", "X2")
    assert not dag.is_dseparated("X1", "X2", given)
    assert not dag.is_dseparated("X2", "X1", given)


def test_lecture_statements_hold_numerically(rng):
    nodes = ("X1", "X2", "X3", "X4", "X5")
    joint = _random_joint(rng, nodes, LECTURE_EDGES)
    gap = _independence_gap
    assert gap(joint, nodes, ["X1"], ["X2"], []) < SEPARATED_TOL
    assert gap(joint, nodes, ["X4"], ["X1", "X2", "X5"], ["X3"]) < SEPARATED_TOL
    assert gap(joint, nodes, ["X5"], ["X2", "X3", "X4"], ["X1"]) < SEPARATED_TOL
    assert gap(joint, nodes, ["X1"], ["X2"], ["X3"]) > DEPENDENT_MIN_GAP
    assert gap(joint, nodes, ["X1"], ["X2"], ["X4"]) > DEPENDENT_MIN_GAP


# ----------------------------------------------------------------------
# d-separation against the joint and against active trails


def test_dseparation_matches_brute_force_joint(rng):
    """Separated <=> P(x, y | z) = P(x | z) P(y | z) on random networks."""
    n_separated = n_connected = n_sets = 0
    for trial in range(30):
        nodes, edges = _random_network(rng, n_nodes=4 + trial % 3)
        dag = DAG(edges, nodes=nodes)
        joint = _random_joint(rng, nodes, edges)
        triples = []
        for x, y in itertools.combinations(nodes, 2):
            rest = [v for v in nodes if v not in (x, y)]
            triples += [([x], [y], list(z)) for z in _subsets(rest)]
        for _ in range(20):  # disjoint sets of several nodes
            labels = rng.integers(0, 3, size=len(nodes))
            groups = [[v for v, g in zip(nodes, labels) if g == k] for k in range(3)]
            if groups[0] and groups[1]:
                triples.append(tuple(groups))
                n_sets += 1
        for xs, ys, zs in triples:
            separated = dag.is_dseparated(xs, ys, zs)
            gap = _independence_gap(joint, nodes, xs, ys, zs)
            where = f"trial {trial}, edges {edges}, xs {xs}, ys {ys}, given {zs}"
            if separated:
                n_separated += 1
                assert gap < SEPARATED_TOL, f"separated but dependent: {where}"
            else:
                n_connected += 1
                assert gap > DEPENDENT_MIN_GAP, f"connected but independent: {where}"
    # Both verdicts must have been exercised often for the check to mean much.
    assert n_separated > 300
    assert n_connected > 300
    assert n_sets > 300


def test_dseparation_matches_active_trails(rng):
    n_separated = n_connected = 0
    for trial in range(40):
        nodes, edges = _random_network(rng, n_nodes=5 + trial % 6, p_edge=0.3)
        dag = DAG(edges, nodes=nodes)
        for _ in range(50):
            labels = rng.integers(0, 4, size=len(nodes))
            xs, ys, zs = (
                [v for v, g in zip(nodes, labels) if g == k] for k in range(3)
            )
            if not xs or not ys:
                continue
            expected = _active_trail_separated(nodes, edges, xs, ys, zs)
            assert dag.is_dseparated(xs, ys, zs) == expected, (edges, xs, ys, zs)
            n_separated += expected
            n_connected += not expected
    assert n_separated > 100
    assert n_connected > 100


def test_active_trail_reference_agrees_with_hand_cases():
    # Guards the second implementation itself: chain, fork, collider.
    nodes = list("ABCDEFG")
    assert _active_trail_separated(nodes, HAND_EDGES, ["A"], ["B"], [])
    assert not _active_trail_separated(nodes, HAND_EDGES, ["A"], ["B"], ["G"])
    assert _active_trail_separated(nodes, HAND_EDGES, ["D"], ["E"], ["C"])
    assert not _active_trail_separated(nodes, HAND_EDGES, ["A"], ["G"], [])
    assert _active_trail_separated(nodes, HAND_EDGES, ["A"], ["G"], ["E"])


def test_local_markov_property_and_blanket_numerically(rng):
    """Each node is independent of its non-descendants given its parents,
    and of everything else given its Markov blanket, which is minimal."""
    for trial in range(10):
        nodes, edges = _random_network(rng, n_nodes=4 + trial % 3)
        dag = DAG(edges, nodes=nodes)
        joint = _random_joint(rng, nodes, edges)
        for v in nodes:
            parents = list(dag.parents(v))
            others = [u for u in nodes if u not in dag.descendants(v)]
            others = [u for u in others if u != v and u not in parents]
            if others:
                assert dag.is_dseparated(v, others, parents)
                gap = _independence_gap(joint, nodes, [v], others, parents)
                assert gap < SEPARATED_TOL
            blanket = [u for u in nodes if u in dag.markov_blanket(v)]
            rest = [u for u in nodes if u != v and u not in blanket]
            if rest:
                assert dag.is_dseparated(v, rest, blanket)
                gap = _independence_gap(joint, nodes, [v], rest, blanket)
                assert gap < SEPARATED_TOL
            for member in blanket:
                smaller = [u for u in blanket if u != member]
                assert not dag.is_dseparated(v, member, smaller)
                gap = _independence_gap(joint, nodes, [v], [member], smaller)
                assert gap > DEPENDENT_MIN_GAP


# ----------------------------------------------------------------------
# Structure queries on hand examples


def test_nodes_keep_insertion_order():
    dag = DAG([("b", "a"), ("c", "b")], nodes=["z"])
    assert dag.nodes == ("z", "b", "a", "c")
    assert dag.edges == (("b", "a"), ("c", "b"))
    assert list(dag) == ["z", "b", "a", "c"]
    assert len(dag) == 4
    assert "z" in dag
    assert "y" not in dag
    assert [] not in dag


def test_isolated_nodes_and_empty_graph():
    dag = DAG(nodes=[3, 1, 2])
    assert dag.nodes == (3, 1, 2)
    assert dag.edges == ()
    assert dag.topological_order() == (3, 1, 2)
    assert dag.is_dseparated(3, [1, 2])
    assert dag.moral_graph() == {3: set(), 1: set(), 2: set()}
    assert DAG().nodes == ()


def test_parents_children_in_edge_order():
    dag = DAG([("B", "C"), ("A", "C"), ("C", "E"), ("C", "D")])
    assert dag.parents("C") == ("B", "A")
    assert dag.children("C") == ("E", "D")
    assert dag.parents("A") == ()
    assert dag.children("D") == ()


def test_ancestors_and_descendants():
    dag = DAG(HAND_EDGES)
    assert dag.ancestors("E") == {"A", "B", "C", "F"}
    assert dag.ancestors("A") == set()
    assert dag.descendants("C") == {"D", "E", "G"}
    assert dag.descendants("G") == set()
    # A given node is included only if it is reachable from another one.
    assert dag.ancestors(["C", "E"]) == {"A", "B", "C", "F"}
    assert dag.ancestors(["D", "F"]) == {"A", "B", "C"}
    assert dag.descendants(["C", "E"]) == {"D", "E", "G"}
    assert dag.descendants(iter(["A", "F"])) == {"C", "D", "E", "G"}


def test_markov_blanket():
    dag = DAG(HAND_EDGES)
    assert dag.markov_blanket("C") == {"A", "B", "D", "E", "F"}
    assert dag.markov_blanket("E") == {"C", "F", "G"}
    assert dag.markov_blanket("A") == {"B", "C"}
    assert dag.markov_blanket("G") == {"E"}
    assert DAG(nodes=["lonely"]).markov_blanket("lonely") == set()


def test_topological_order_hand_example():
    dag = DAG([("C", "A"), ("B", "A")], nodes=["A", "B", "C"])
    # Ready at first: B and C, taken in insertion order; A comes last.
    assert dag.topological_order() == ("B", "C", "A")
    # Nodes already given in a topological order come out unchanged.
    assert DAG(HAND_EDGES, nodes=list("AFBCDEG")).topological_order() == tuple(
        "AFBCDEG"
    )
    # First-seen order A, C, B, D, E, F, G is not topological: C waits for B,
    # and E waits for F.
    assert DAG(HAND_EDGES).nodes == tuple("ACBDEFG")
    assert DAG(HAND_EDGES).topological_order() == tuple("ABCDFEG")
    dag = DAG(HAND_EDGES, nodes=list("GFEDCBA"))
    # Ready: F, B, A (in that insertion order); then C; then E before D; then G
    # (inserted before D) as soon as E is placed.
    assert dag.topological_order() == tuple("FBACEGD")


def test_topological_order_puts_parents_first(rng):
    for trial in range(30):
        nodes, edges = _random_network(rng, n_nodes=3 + trial % 8)
        order = DAG(edges, nodes=nodes).topological_order()
        assert sorted(order) == sorted(nodes)
        position = {v: i for i, v in enumerate(order)}
        for parent, child in edges:
            assert position[parent] < position[child]


def test_moral_graph_marries_parents_of_v_structure():
    dag = DAG([("A", "C"), ("B", "C")])
    assert dag.moral_graph() == {"A": {"B", "C"}, "B": {"A", "C"}, "C": {"A", "B"}}
    assert list(dag.moral_graph()) == ["A", "C", "B"]
    # Restricted to an induced subgraph without the child: nothing to marry.
    assert dag.moral_graph(["B", "A"]) == {"A": set(), "B": set()}


def test_moral_graph_hand_example():
    moral = DAG(HAND_EDGES).moral_graph()
    expected = {
        "A": {"B", "C"},
        "B": {"A", "C"},
        "C": {"A", "B", "D", "E", "F"},
        "D": {"C"},
        "E": {"C", "F", "G"},
        "F": {"C", "E"},
        "G": {"E"},
    }
    assert moral == expected
    # The ancestral moral graph of {A, B, D}: C is there, so A and B marry.
    ancestral = DAG(HAND_EDGES).moral_graph(["A", "B", "C", "D"])
    assert ancestral == {
        "A": {"B", "C"},
        "B": {"A", "C"},
        "C": {"A", "B", "D"},
        "D": {"C"},
    }


def test_moral_graph_is_symmetric_and_covers_edges(rng):
    for trial in range(20):
        nodes, edges = _random_network(rng, n_nodes=3 + trial % 6)
        moral = DAG(edges, nodes=nodes).moral_graph()
        assert list(moral) == nodes
        for v, neighbours in moral.items():
            assert v not in neighbours
            assert all(v in moral[u] for u in neighbours)
        for parent, child in edges:
            assert child in moral[parent]
        for parents in _parents_from_edges(nodes, edges).values():
            for p, q in itertools.combinations(parents, 2):
                assert q in moral[p]


def test_single_node_and_iterable_arguments_agree():
    dag = DAG(LECTURE_EDGES)
    assert dag.is_dseparated("X4", "X1", "X3") == dag.is_dseparated(
        ["X4"], ("X1",), {"X3"}
    )
    assert dag.is_dseparated([], "X1")
    assert dag.is_dseparated(["X1", "X1"], "X2")


def test_tuple_and_mixed_labels():
    a, b = ("a", 1), ("b", 2)
    dag = DAG([(a, b), (0, b), (b, "c")])
    assert dag.nodes == (a, b, 0, "c")
    assert dag.parents(b) == (a, 0)
    assert dag.ancestors(b) == {a, 0}  # the tuple is a node, not a set of nodes
    assert dag.ancestors([b]) == {a, 0}
    assert not dag.is_dseparated(a, 0, given="c")
    assert dag.is_dseparated(a, 0)


def test_numpy_edge_array():
    dag = DAG(np.array([[0, 1], [1, 2]]))
    assert dag.nodes == (0, 1, 2)
    assert dag.is_dseparated(0, 2, given=1)


def test_pickle_round_trip():
    dag = DAG(HAND_EDGES, nodes=["Z"])
    copy = pickle.loads(pickle.dumps(dag))
    assert copy.nodes == dag.nodes
    assert copy.edges == dag.edges
    assert copy.topological_order() == dag.topological_order()
    error = pickle.loads(pickle.dumps(CycleError(["A", "B"])))
    assert error.cycle == ("A", "B")
    assert str(error) == "the edges form a cycle: A -> B -> A"


def test_repr():
    assert repr(DAG([("A", "B")], nodes=["C"])) == (
        "DAG(edges=[('A', 'B')], nodes=['C', 'A', 'B'])"
    )


# ----------------------------------------------------------------------
# Validation


def test_cycle_error_names_the_cycle():
    with pytest.raises(ValueError, match=r"cycle: A -> B -> C -> A$"):
        DAG([("A", "B"), ("B", "C"), ("C", "A")])
    # A tail into the cycle and a branch out of it are not part of the message.
    with pytest.raises(CycleError, match=r"cycle: B -> C -> D -> B$") as info:
        DAG([("A", "B"), ("D", "B"), ("B", "C"), ("C", "D"), ("C", "E")])
    assert info.value.cycle == ("B", "C", "D")
    with pytest.raises(CycleError, match=r"cycle: 1 -> 2 -> 1$"):
        DAG([(1, 2), (2, 1)])


def test_cycle_error_on_random_graphs_reports_a_real_cycle(rng):
    for trial in range(30):
        nodes, edges = _random_network(rng, n_nodes=3 + trial % 8, p_edge=0.4)
        order = DAG(edges, nodes=nodes).topological_order()
        # Close a long path: an edge from a late node back to the first node.
        i, j = sorted(rng.choice(len(order), size=2, replace=False))
        path = [(order[k], order[k + 1]) for k in range(i, j)]
        cyclic = edges + [e for e in path if e not in edges] + [(order[j], order[i])]
        with pytest.raises(CycleError) as info:
            DAG(cyclic, nodes=nodes)
        cycle = info.value.cycle
        assert len(set(cycle)) == len(cycle) >= 2
        for k, node in enumerate(cycle):
            assert (node, cycle[(k + 1) % len(cycle)]) in cyclic
        assert all(name in str(info.value) for name in cycle)


def test_self_loop_raises():
    with pytest.raises(ValueError, match="self-loop on node 'A'"):
        DAG([("A", "B"), ("A", "A")])


@pytest.mark.parametrize(
    "edge", [("A", "B", "C"), ("A",), "AB", 5, {"A", "B"}, {"A": "B"}, None]
)
def test_edge_that_is_not_a_pair_raises(edge):
    with pytest.raises(ValueError, match=r"\(parent, child\) pair"):
        DAG([("X", "Y"), edge])


def test_duplicates_raise():
    with pytest.raises(ValueError, match="'A' -> 'B' is listed twice"):
        DAG([("A", "B"), ("A", "B")])
    with pytest.raises(ValueError, match="node 'A' is listed twice"):
        DAG(nodes=["A", "B", "A"])


def test_bad_labels_raise_type_error():
    with pytest.raises(TypeError, match="not a string"):
        DAG(nodes="AB")
    with pytest.raises(TypeError, match="hashable"):
        DAG([(["A"], "B")])


@pytest.mark.parametrize(
    "query",
    [
        lambda dag: dag.parents("Z"),
        lambda dag: dag.children("Z"),
        lambda dag: dag.markov_blanket("Z"),
        lambda dag: dag.ancestors(["A", "Z"]),
        lambda dag: dag.descendants("Z"),
        lambda dag: dag.moral_graph(["A", "Z"]),
        lambda dag: dag.is_dseparated("Z", "A"),
        lambda dag: dag.is_dseparated("A", ["B", "Z"]),
        lambda dag: dag.is_dseparated("A", "B", given="Z"),
    ],
)
def test_unknown_node_raises(query):
    dag = DAG(HAND_EDGES)
    with pytest.raises(ValueError, match="unknown node 'Z'"):
        query(dag)


@pytest.mark.parametrize(
    ("xs", "ys", "given", "names"),
    [
        ("A", "A", (), "xs and ys"),
        ("A", ["B", "C"], "C", "ys and given"),
        (["A", "D"], "B", ["D"], "xs and given"),
    ],
)
def test_overlapping_sets_raise(xs, ys, given, names):
    dag = DAG(HAND_EDGES)
    with pytest.raises(ValueError, match=f"{names} must be disjoint"):
        dag.is_dseparated(xs, ys, given)


def test_relevant_evidence_is_the_evidence_not_dseparated_from_the_targets(rng):
    """Each evidence node e is relevant exactly when the targets and e are not
    d-separated by the rest of the evidence (``is_dseparated`` node by node)."""
    n_relevant = n_irrelevant = 0
    for trial in range(40):
        nodes, edges = _random_network(rng, n_nodes=5 + trial % 8, p_edge=0.3)
        dag = DAG(edges, nodes=nodes)
        for _ in range(20):
            labels = rng.integers(0, 3, size=len(nodes))
            targets = [v for v, g in zip(nodes, labels) if g == 0]
            evidence = [v for v, g in zip(nodes, labels) if g == 1]
            if not targets:
                continue
            expected = {
                e
                for e in evidence
                if not dag.is_dseparated(targets, [e], [u for u in evidence if u != e])
            }
            assert dag.relevant_evidence(targets, evidence) == expected
            n_relevant += len(expected)
            n_irrelevant += len(evidence) - len(expected)
    assert n_relevant > 50
    assert n_irrelevant > 50


def test_relevant_evidence_checks_its_arguments():
    dag = DAG(LECTURE_EDGES)
    assert dag.relevant_evidence("X4", ["X3", "X5"]) == {"X3"}
    assert dag.relevant_evidence(["X1"], []) == frozenset()
    with pytest.raises(ValueError, match="unknown node"):
        dag.relevant_evidence("X9", ["X3"])
    with pytest.raises(ValueError, match="disjoint"):
        dag.relevant_evidence(["X1", "X3"], ["X3"])
    # The bit sets are kept, and a pickled graph answers the same.
    again = pickle.loads(pickle.dumps(dag))
    assert again.relevant_evidence("X2", ["X3", "X5"]) == {"X3", "X5"}
