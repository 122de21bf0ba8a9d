"""Junction trees against hand examples and brute-force enumeration of the joint.

Random DAGs of up to 12 nodes with 2-3 states: every clique marginal, the log
partition function (log P(evidence)) and the max-product assignment must equal
what enumerating the full joint gives, with evidence on random subsets of the
nodes for a batch of rows at once.
"""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from bayeskit._logmath import safe_log
from bayeskit.graph import DAG, MAX_PRODUCT, LogFactor
from bayeskit.graph.calibration import CalibrationPlan
from bayeskit.graph.junction_tree import JunctionTree
from bayeskit.graph.spanning_tree import maximum_spanning_tree
from bayeskit.graph.triangulation import maximal_cliques, min_fill_order, triangulate

TOL = 1e-10


# -- random networks and their joint ---------------------------------------------
def random_network(rng, n_nodes, p_edge=0.35, max_parents=3, zeros=False):
    """A random DAG with random CPTs: (dag, cards, log CPT factors)."""
    names = [f"X{i}" for i in range(n_nodes)]
    rank = rng.permutation(n_nodes)
    edges = []
    for j in range(n_nodes):
        parents = [i for i in range(n_nodes) if rank[i] < rank[j]]
        rng.shuffle(parents)
        chosen = [i for i in parents if rng.random() < p_edge][:max_parents]
        edges += [(names[i], names[j]) for i in chosen]
    dag = DAG(edges, nodes=names)
    cards = {v: int(rng.integers(2, 4)) for v in names}
    factors = []
    for v in names:
        scope = (*dag.parents(v), v)
        table = rng.uniform(0.05, 1.0, size=[cards[u] for u in scope])
        if zeros:
            table[rng.random(table.shape) < 0.15] = 0.0
            table[..., 0] += 0.01  # every row keeps some mass
        table /= table.sum(axis=-1, keepdims=True)
        factors.append(
            LogFactor.from_probabilities(scope, [cards[u] for u in scope], table)
        )
    return dag, cards, factors


def log_joint(names, factors):
    """Log of the product of the factors over every variable, axes in ``names``."""
    axis = {v: i for i, v in enumerate(names)}
    cards = {}
    for f in factors:
        cards.update(zip(f.variables, f.cardinalities))
    total = np.zeros([cards[v] for v in names])
    for f in factors:
        idx = [axis[v] for v in f.variables]
        order = np.argsort(idx)
        vals = np.transpose(f.log_values, order)
        shape = [1] * len(names)
        for v in f.variables:
            shape[axis[v]] = cards[v]
        total = total + vals.reshape(shape)
    return total


def condition(joint, names, evidence):
    """The joint with evidence axes indexed per row: shape (n, *other axes)."""
    obs = [v for v in names if v in evidence]
    rest = [v for v in names if v not in evidence]
    perm = [names.index(v) for v in obs + rest]
    moved = np.transpose(joint, perm)
    cards = moved.shape[: len(obs)]
    flat = moved.reshape((-1, *moved.shape[len(obs) :]))
    if obs:
        index = np.ravel_multi_index(tuple(evidence[v] for v in obs), cards)
    else:
        index = np.zeros(1, dtype=np.intp)
    return flat[index], rest


def random_evidence(rng, names, cards, n_rows):
    k = int(rng.integers(0, len(names)))
    observed = list(rng.choice(names, size=k, replace=False))
    return {v: rng.integers(0, cards[v], size=n_rows) for v in observed}


# -- triangulation -------------------------------------------------------------------
CYCLE = {"A": {"B", "D"}, "B": {"A", "C"}, "C": {"B", "D"}, "D": {"A", "C"}}


def test_four_cycle_gets_one_chord():
    order = min_fill_order(CYCLE)
    chordal = triangulate(CYCLE, order)
    n_edges = sum(len(nb) for nb in chordal.values()) // 2
    assert n_edges == 5
    cliques = maximal_cliques(CYCLE, order)
    assert sorted(map(sorted, cliques)) == [["A", "B", "D"], ["B", "C", "D"]]


def test_min_fill_prefers_no_fill_and_small_tables():
    # A star: eliminating a leaf adds no edge; the hub would add many.
    star = {"hub": {"a", "b", "c"}, "a": {"hub"}, "b": {"hub"}, "c": {"hub"}}
    assert min_fill_order(star)[0] == "a"
    # Ties in fill are broken by table size: the 2-state leaf goes first.
    assert min_fill_order(star, {"hub": 2, "a": 5, "b": 2, "c": 3})[0] == "b"


def is_perfect_elimination(chordal, order):
    position = {v: i for i, v in enumerate(order)}
    for v in order:
        later = [u for u in chordal[v] if position[u] > position[v]]
        for a, b in itertools.combinations(later, 2):
            if b not in chordal[a]:
                return False
    return True


def test_triangulation_is_chordal_on_random_graphs(rng):
    for _ in range(30):
        n = int(rng.integers(3, 15))
        nodes = list(range(n))
        adj = {v: set() for v in nodes}
        for a, b in itertools.combinations(nodes, 2):
            if rng.random() < 0.3:
                adj[a].add(b)
                adj[b].add(a)
        order = min_fill_order(adj)
        assert sorted(order) == nodes
        chordal = triangulate(adj, order)
        assert all(adj[v] <= chordal[v] for v in nodes)
        assert is_perfect_elimination(chordal, order)
        cliques = [frozenset(c) for c in maximal_cliques(adj, order)]
        for c in cliques:  # cliques of the chordal graph, and maximal
            assert all(b in chordal[a] for a, b in itertools.combinations(c, 2))
            assert not any(c < other for other in cliques)
        assert set().union(*cliques) == set(nodes)


def reference_min_fill(adj, cards):
    """Min-fill on sets of names, one step at a time: order and maximal cliques.

    The plain statement of the heuristic (the implementation before the
    compiled one): fewest fill edges, then the smallest clique table, then the
    node listed first; a clique is kept unless an earlier one contains it.
    """
    adj = {v: set(nb) for v, nb in adj.items()}
    index = {v: i for i, v in enumerate(adj)}
    order, cliques = [], []
    while adj:

        def score(v):
            nbs = adj[v]
            fill = sum(b not in adj[a] for a, b in itertools.combinations(nbs, 2))
            size = np.prod([cards[u] for u in (v, *nbs)], dtype=float)
            return fill, size, index[v]

        v = min(adj, key=score)
        nbs = adj.pop(v)
        for a in nbs:
            adj[a].discard(v)
            adj[a] |= nbs - {a}
        order.append(v)
        clique = frozenset((v, *nbs))
        if not any(clique <= c for c in cliques):
            cliques.append(clique)
    return order, cliques


def random_graph(rng, n, p):
    nodes = [f"v{i}" for i in rng.permutation(n)]
    adj = {v: set() for v in nodes}
    for a, b in itertools.combinations(nodes, 2):
        if rng.random() < p:
            adj[a].add(b)
            adj[b].add(a)
    return adj


def table_sizes(cliques, cards):
    return sum(int(np.prod([cards[v] for v in c])) for c in cliques)


def test_min_fill_matches_the_plain_statement_of_the_heuristic(rng):
    """Same order and cliques (so the same widths and table sizes) as the
    reference, and a junction tree on exactly those cliques."""
    for _ in range(300):
        adj = random_graph(rng, int(rng.integers(1, 26)), rng.uniform(0.05, 0.6))
        cards = {v: int(rng.integers(1, 6)) for v in adj}
        order, cliques = reference_min_fill(adj, cards)
        assert min_fill_order(adj, cards) == order
        tree = JunctionTree.from_graph(adj, cards)
        assert tree.elimination_order == order
        assert tree.cliques == cliques
        assert table_sizes(tree.cliques, cards) == table_sizes(cliques, cards)
        assert maximal_cliques(adj, order) == tree.layouts
        # A maximum spanning tree on separator sizes: a junction tree.
        JunctionTree(tree.layouts, tree.edges)
        weights = sum(len(s) for s in tree.separators)
        sets = tree.cliques
        candidates = [
            (i, j, len(sets[i] & sets[j]))
            for i, j in itertools.combinations(range(len(sets)), 2)
            if sets[i] & sets[j]
        ]
        best = maximum_spanning_tree(len(sets), candidates)
        assert weights == sum(len(sets[i] & sets[j]) for i, j in best)
    # Without cardinalities every node counts as binary.
    adj = random_graph(rng, 12, 0.3)
    assert min_fill_order(adj) == reference_min_fill(adj, dict.fromkeys(adj, 2))[0]


def test_maximum_spanning_tree_weight():
    edges = [(0, 1, 1.0), (1, 2, 3.0), (0, 2, 2.0), (2, 3, 0.5), (1, 3, 4.0)]
    tree = maximum_spanning_tree(4, edges)
    weight = {(i, j): w for i, j, w in edges}
    assert sum(weight[e] for e in tree) == 9.0
    # Disconnected candidates give a forest.
    assert maximum_spanning_tree(4, [(0, 1, 1.0), (2, 3, 1.0)]) == [(0, 1), (2, 3)]
    with pytest.raises(ValueError, match="not between"):
        maximum_spanning_tree(2, [(0, 2, 1.0)])


def test_maximum_spanning_tree_matches_brute_force(rng):
    for _ in range(20):
        n = 5
        edges = [
            (i, j, float(rng.integers(0, 4)))
            for i, j in itertools.combinations(range(n), 2)
            if rng.random() < 0.7
        ]
        tree = maximum_spanning_tree(n, edges)
        weight = {(i, j): w for i, j, w in edges}
        best = 0.0
        for k in range(len(tree), len(tree) + 1):
            for subset in itertools.combinations(edges, k):
                parent = list(range(n))

                def find(i, parent=parent):
                    while parent[i] != i:
                        i = parent[i]
                    return i

                ok = True
                for i, j, _ in subset:
                    ri, rj = find(i), find(j)
                    if ri == rj:
                        ok = False
                        break
                    parent[ri] = rj
                if ok:
                    best = max(best, sum(w for *_, w in subset))
        assert sum(weight[e] for e in tree) == best


# -- the tree --------------------------------------------------------------------------
def test_from_dag_covers_every_family_and_is_a_tree(rng):
    for n in range(1, 13):
        dag, cards, _ = random_network(rng, n)
        tree = JunctionTree.from_dag(dag)
        # The cliques of min-fill's own elimination, as maximal_cliques finds.
        moral = dag.moral_graph()
        assert JunctionTree.from_dag(dag, cards).layouts == maximal_cliques(
            moral, min_fill_order(moral, cards)
        )
        assert tree.elimination_order == min_fill_order(moral)
        for v in dag.nodes:
            family = {v, *dag.parents(v)}
            assert any(family <= c for c in tree.cliques), (v, tree)
        assert len(tree.edges) == len(tree.cliques) - len(tree._components)
        assert set(tree.variables) == set(dag.nodes)
        assert all(len(s) > 0 for s in tree.separators)


def test_family_homes_are_where_a_plan_puts_the_cpts(rng):
    for n in range(1, 13):
        dag, cards, _ = random_network(rng, n)
        for given in (cards, None):
            tree = JunctionTree.from_dag(dag, given)
            scopes = [(*dag.parents(v), v) for v in dag.nodes]
            cards_used = cards if given is not None else dict.fromkeys(cards, 2)
            assert tree.family_homes == tree.plan(scopes, cards_used).homes
    assert JunctionTree.from_graph(dag.moral_graph()).family_homes is None


def test_disconnected_network_is_a_forest():
    dag = DAG(
        [("A", "B"), ("C", "D"), ("C", "E")], nodes=["A", "B", "C", "D", "E", "F"]
    )
    tree = JunctionTree.from_dag(dag)
    assert len(tree._components) == 3
    assert sorted(map(sorted, tree.cliques)) == [
        ["A", "B"],
        ["C", "D"],
        ["C", "E"],
        ["F"],
    ]


def test_invalid_trees_raise():
    with pytest.raises(ValueError, match="running intersection"):
        JunctionTree([("A", "B"), ("C",), ("B", "D")], [(0, 1), (1, 2)])
    with pytest.raises(ValueError, match="cycle"):
        JunctionTree([("A",), ("A", "B"), ("A", "C")], [(0, 1), (1, 2), (2, 0)])
    with pytest.raises(ValueError, match="does not join"):
        JunctionTree([("A",)], [(0, 1)])
    with pytest.raises(ValueError, match="twice"):
        JunctionTree([("A", "A")])
    with pytest.raises(ValueError, match="not symmetric"):
        JunctionTree.from_graph({"A": {"B"}, "B": set()})
    tree = JunctionTree([("A", "B"), ("B", "C")], [(0, 1)])
    with pytest.raises(ValueError, match="no clique contains"):
        tree.clique_containing(["A", "C"])
    with pytest.raises(ValueError, match="no clique contains the scope"):
        CalibrationPlan(tree, [("A", "C")], {"A": 2, "B": 2, "C": 2})
    assert tree.width == 1
    assert "JunctionTree" in repr(tree)


# -- calibration against enumeration ---------------------------------------------------
def indicator(variable, k, states):
    """Batched evidence as a factor: log 1 at the observed state, -inf elsewhere."""
    values = np.full((len(states), k), -np.inf)
    values[np.arange(len(states)), states] = 0.0
    return LogFactor([variable], [k], values)


@pytest.mark.parametrize("zeros", [False, True])
def test_calibration_matches_enumeration(rng, zeros):
    """Every clique marginal and log P(evidence), rows of evidence batched."""
    for trial in range(24):
        n_nodes = 2 + trial % 11
        dag, cards, factors = random_network(rng, n_nodes, zeros=zeros)
        names = list(dag.nodes)
        tree = JunctionTree.from_dag(dag, cards)
        joint = log_joint(names, factors)
        n_rows = 4
        evidence = random_evidence(rng, names, cards, n_rows)
        ev_factors = [indicator(v, cards[v], s) for v, s in evidence.items()]
        cal = tree.calibrate(factors + ev_factors)
        cond, _ = condition(joint, names, evidence)
        log_pe = logsumexp(cond.reshape(n_rows if evidence else 1, -1), axis=1)
        np.testing.assert_allclose(
            np.broadcast_to(cal.log_evidence, log_pe.shape), log_pe, atol=TOL
        )
        possible = np.isfinite(log_pe)
        for clique in tree.cliques:
            for size in (1, len(clique)):
                variables = sorted(clique)[:size]
                got = cal.marginal(variables).to_probabilities()
                for r in np.flatnonzero(possible):
                    row = cond[r if evidence else 0]
                    full = np.zeros([cards[v] for v in names])
                    idx = tuple(
                        evidence[v][r] if v in evidence else slice(None) for v in names
                    )
                    full[idx] = np.exp(row - log_pe[r])
                    axes = tuple(i for i, v in enumerate(names) if v not in variables)
                    expected = full.sum(axis=axes)
                    kept = [v for v in names if v in variables]
                    expected = np.transpose(
                        expected, [kept.index(v) for v in variables]
                    )
                    got_r = got[r] if cal.beliefs[0].batched else got
                    np.testing.assert_allclose(got_r, expected, atol=TOL)
                if not evidence:
                    continue
                assert not np.isnan(cal.marginal(variables).log_values).any()


def test_max_product_matches_enumeration(rng):
    for trial in range(24):
        n_nodes = 2 + trial % 11
        dag, cards, factors = random_network(rng, n_nodes)
        names = list(dag.nodes)
        tree = JunctionTree.from_dag(dag, cards)
        joint = log_joint(names, factors)
        n_rows = 3
        evidence = random_evidence(rng, names, cards, n_rows)
        ev_factors = [indicator(v, cards[v], s) for v, s in evidence.items()]
        result = tree.max_product(factors + ev_factors)
        cond, rest = condition(joint, names, evidence)
        for r in range(n_rows if evidence else 1):
            row = cond[r if evidence else 0]
            best = np.unravel_index(np.argmax(row), row.shape)
            expected = {v: best[rest.index(v)] for v in rest}
            expected.update({v: s[r] for v, s in evidence.items()})
            got = dict(zip(result.nodes, result.assignment[r]))
            assert got == expected, (trial, r)
            np.testing.assert_allclose(result.log_score[r], row.max(), atol=TOL)


def test_reduced_factors_on_the_tree_of_the_unobserved_variables(rng):
    """What the estimators do: reduce the CPTs by evidence, build a tree of the rest."""
    for trial in range(20):
        n_nodes = 3 + trial % 10
        dag, cards, factors = random_network(rng, n_nodes)
        names = list(dag.nodes)
        evidence = random_evidence(rng, names, cards, 5)
        hidden = [v for v in names if v not in evidence]
        if not hidden:
            continue
        reduced = [
            f.reduce({v: s for v, s in evidence.items() if v in f.variables})
            for f in factors
        ]
        adjacency = {v: set() for v in hidden}
        for f in reduced:
            for a, b in itertools.combinations(f.variables, 2):
                adjacency[a].add(b)
                adjacency[b].add(a)
        tree = JunctionTree.from_graph(adjacency, cards)
        # Constants (factors over observed variables only) go to the partition.
        plan = tree.plan([f.variables for f in reduced], cards)
        arrays = [f.log_values if f.batched else f.log_values[None] for f in reduced]
        beliefs, log_z = plan.calibrate(arrays)
        cond, rest = condition(log_joint(names, factors), names, evidence)
        n_rows = 5 if evidence else 1
        flat = cond.reshape(n_rows, -1)
        np.testing.assert_allclose(log_z, logsumexp(flat, axis=1), atol=TOL)
        v = hidden[0]
        c = tree.clique_containing([v])
        got = plan.normalized_marginal(beliefs[c], c, [v])
        axes = tuple(1 + i for i, u in enumerate(rest) if u != v)
        expected = np.exp(
            cond - logsumexp(flat, axis=1).reshape((-1,) + (1,) * len(rest))
        )
        np.testing.assert_allclose(
            np.exp(got), np.broadcast_to(expected.sum(axis=axes), got.shape), atol=TOL
        )
        # collect into that clique gives the same belief.
        root_belief, log_z2 = plan.collect(arrays, root=c)
        np.testing.assert_allclose(log_z2, log_z, atol=TOL)
        np.testing.assert_allclose(
            plan.normalized_marginal(root_belief, c, [v]), got, atol=TOL
        )
        assignment, score = plan.max_product(arrays)
        for r in range(n_rows):
            np.testing.assert_allclose(score[r], flat[r].max(), atol=TOL)
            best = np.unravel_index(np.argmax(cond[r]), cond.shape[1:])
            assert [assignment[r, tree.variables.index(u)] for u in rest] == list(best)


def test_static_messages_are_reused_but_evidence_is_not(rng):
    dag, cards, factors = random_network(rng, 9, p_edge=0.5)
    names = list(dag.nodes)
    leaf = names[-1]
    tree = JunctionTree.from_dag(dag, cards)
    scopes = [f.variables for f in factors] + [(leaf,)]
    static = [True] * len(factors) + [False]
    plan = tree.plan(scopes, cards, static)
    base = [f.log_values[None] for f in factors]
    joint = log_joint(names, factors)
    for state in range(cards[leaf]):  # same plan, new evidence each time
        ev = indicator(leaf, cards[leaf], [state]).log_values
        c = tree.clique_containing([names[0]])
        belief, log_z = plan.collect([*base, ev], root=c)
        marg = plan.normalized_marginal(belief, c, [names[0]])[0]
        cond = np.take(joint, state, axis=names.index(leaf))
        axes = tuple(range(1, cond.ndim))
        expected = logsumexp(cond, axis=axes)
        np.testing.assert_allclose(log_z[0], logsumexp(cond), atol=TOL)
        np.testing.assert_allclose(marg, expected - logsumexp(cond), atol=TOL)
    assert plan._cache  # some messages were static


def test_zero_evidence_gives_minus_inf_not_nan():
    dag = DAG([("A", "B")])
    a = LogFactor.from_probabilities(["A"], [2], [1.0, 0.0])
    b = LogFactor.from_probabilities(["A", "B"], [2, 2], [[1.0, 0.0], [0.5, 0.5]])
    tree = JunctionTree.from_dag(dag)
    ev = indicator("B", 2, [1, 0])
    cal = tree.calibrate([a, b, ev])
    assert cal.log_evidence[0] == -np.inf
    assert cal.log_evidence[1] == 0.0
    marg = cal.marginal(["A"]).log_values
    assert not np.isnan(marg).any()
    assert np.isneginf(marg[0]).all()
    np.testing.assert_allclose(np.exp(marg[1]), [1.0, 0.0])
    best = tree.max_product([a, b, ev])
    assert best.log_score[0] == -np.inf
    assert list(best.assignment[1]) == [0, 0]


def test_max_marginals_and_constants():
    a = LogFactor.from_probabilities(["A"], [2], [0.3, 0.7])
    ab = LogFactor.from_probabilities(
        ["A", "B"], [2, 3], [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]
    )
    const = LogFactor([], [], safe_log(0.5))
    tree = JunctionTree([("A", "B")])
    cal = tree.calibrate([a, ab, const], MAX_PRODUCT)
    # Constants go to the log-evidence only, not to the clique beliefs.
    np.testing.assert_allclose(
        np.exp(cal.marginal(["B"]).log_values), [0.42, 0.21, 0.15]
    )
    np.testing.assert_allclose(np.exp(cal.log_evidence), 0.5 * 0.42)
    sp = tree.calibrate([a, ab, const])
    np.testing.assert_allclose(np.exp(sp.log_evidence), 0.5)
    np.testing.assert_allclose(
        np.exp(sp.marginal(["B", "A"]).log_values),
        (np.array([[0.3], [0.7]]) * [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]).T,
    )


def test_factor_errors():
    tree = JunctionTree([("A", "B")])
    a = LogFactor.from_probabilities(["A"], [2], [0.3, 0.7])
    with pytest.raises(ValueError, match="no factor mentions"):
        tree.calibrate([a])
    ab = LogFactor(["A", "B"], [3, 2], np.zeros((3, 2)))
    with pytest.raises(ValueError, match="states in one factor"):
        tree.calibrate([a, ab])
    b1 = LogFactor(["B"], [2], np.zeros((2, 2)))
    b2 = LogFactor(["A"], [2], np.zeros((3, 2)))
    with pytest.raises(ValueError, match="batch sizes"):
        tree.calibrate([b1, b2])


# -- parts of a tree: spans, restrictions, single messages ----------------------------
def behind(tree, c, d):
    """The cliques on ``c``'s side of the edge (c, d), ``c`` first."""
    order = [(c, d)]
    for x, parent in order:
        order.extend((nb, x) for nb in tree.neighbours(x) if nb != parent)
    return [x for x, _ in order]


def test_span_reaches_every_variable_and_is_minimal(rng):
    for trial in range(30):
        dag, cards, _ = random_network(rng, 3 + trial % 10, p_edge=0.3)
        names = list(dag.nodes)
        tree = JunctionTree.from_dag(dag, cards)
        variables = list(rng.choice(names, size=int(rng.integers(0, 4)), replace=False))
        root = int(rng.integers(len(tree.cliques))) if trial % 2 else None
        span = tree.span(variables, root)
        assert span == sorted(set(span))
        if root is not None:
            assert root in span
        for v in variables:
            assert any(v in tree.cliques[c] for c in span)
        # Leaving the span: whatever is held beyond is on the separator.
        for d in span:
            for c in tree.neighbours(d):
                if c in span:
                    continue
                beyond = set().union(*(tree.cliques[x] for x in behind(tree, c, d)))
                sep = tree.cliques[c] & tree.cliques[d]
                assert set(variables) & beyond <= sep
        # Minimal: in the root's component, every leaf of the span but the
        # root is the only clique of the span holding one of the variables.
        if root is None:
            continue
        component = behind(tree, root, None)
        for c in span:
            inside = [nb for nb in tree.neighbours(c) if nb in span]
            if c != root and c in component and len(inside) == 1:
                rest = set().union(*(tree.cliques[x] for x in span if x != c))
                assert (set(variables) & tree.cliques[c]) - rest


def test_restrict_keeps_the_running_intersection_property(rng):
    for trial in range(30):
        dag, cards, _ = random_network(rng, 3 + trial % 10, p_edge=0.4)
        names = list(dag.nodes)
        tree = JunctionTree.from_dag(dag, cards)
        removed = set(
            rng.choice(names, size=int(rng.integers(0, len(names))), replace=False)
        )
        chosen = list(rng.choice(names, size=int(rng.integers(0, 3)), replace=False))
        span = tree.span(chosen, int(rng.integers(len(tree.cliques))))
        if trial % 2:
            span = range(len(tree.cliques))  # the whole tree, as for max-product
        sub, index = tree.restrict(span, removed)
        JunctionTree(sub.layouts, sub.edges)  # validates: a forest with the property
        assert set(index) == set(span)
        kept = set()
        for c in span:
            left = tree.cliques[c] - removed
            kept |= left
            if index[c] is None:
                assert not left
            else:
                assert left <= sub.cliques[index[c]]
        assert set(sub.variables) == kept
        for i, j in sub.edges:  # cliques held by a neighbour were merged into it
            assert not sub.cliques[i] <= sub.cliques[j]
            assert not sub.cliques[j] <= sub.cliques[i]


def test_single_messages_and_posterior_match_enumeration(rng):
    n_ones = 0
    for trial in range(12):
        dag, cards, factors = random_network(rng, 4 + trial % 8, p_edge=0.5)
        tree = JunctionTree.from_dag(dag, cards)
        plan = tree.plan([f.variables for f in factors], cards, [True] * len(factors))
        arrays = [f.log_values[None] for f in factors]
        for c, d in [*tree.edges, *((j, i) for i, j in tree.edges)]:
            side = behind(tree, c, d)
            mine = [f for f, h in zip(factors, plan.homes) if h in side]
            held = list(dict.fromkeys(v for x in side for v in tree.layouts[x]))
            joint = (
                log_joint(held, mine) if mine else np.zeros([cards[v] for v in held])
            )
            sep = [v for v in tree.layouts[d] if v in tree.cliques[c]]
            out = tuple(i for i, v in enumerate(held) if v not in sep)
            expected = logsumexp(joint, axis=out) if out else joint
            expected = np.transpose(
                expected, [[v for v in held if v in sep].index(v) for v in sep]
            )
            got = plan.message(c, d, arrays)
            np.testing.assert_allclose(got.reshape(expected.shape), expected, atol=TOL)
            assert plan.message(c, d, arrays) is got  # static: computed once
        # Messages known to be one (CPTs of their own side's variables only)
        # can be left out, with the same results.
        ones = {
            (c, d)
            for c, d in [*tree.edges, *((j, i) for i, j in tree.edges)]
            if np.allclose(plan.message(c, d, arrays), 0.0, atol=1e-12)
        }
        n_ones += len(ones)
        fresh = tree.plan([f.variables for f in factors], cards, [True] * len(factors))
        for c, d in [*tree.edges, *((j, i) for i, j in tree.edges)]:
            np.testing.assert_allclose(
                fresh.message(c, d, arrays, ones=lambda k, x, o=ones: (k, x) in o),
                plan.message(c, d, arrays),
                atol=TOL,
            )
        # posterior == collect then normalized_marginal.
        root = int(rng.integers(len(tree.cliques)))
        variables = list(tree.layouts[root])[::-1][:2]
        post, log_z = plan.posterior(arrays, variables, root)
        belief, log_z2 = plan.collect(arrays, root=root)
        np.testing.assert_allclose(log_z, log_z2, atol=TOL)
        np.testing.assert_allclose(
            post, plan.normalized_marginal(belief, root, variables), atol=TOL
        )
        np.testing.assert_allclose(log_z, 0.0, atol=TOL)  # CPTs: the joint sums to 1
    assert n_ones > 10
    with pytest.raises(ValueError, match="not neighbours"):
        JunctionTree([("A",), ("B",)]).plan([], {"A": 2, "B": 2}).message(0, 1, [])


def test_factors_go_to_the_cliques_given():
    tree = JunctionTree([("A", "B"), ("B", "C")], [(0, 1)])
    cards = {"A": 2, "B": 2, "C": 2}
    assert tree.plan([("B",), ("B",)], cards).homes == [0, 0]
    plan = tree.plan([("B",), ("B",), ()], cards, homes=[1, 0, 0])
    assert plan.homes == [1, 0, None]
    b = np.log([[0.25, 0.75]])
    post, log_z = plan.posterior([b, np.zeros((1, 2)), np.log([0.5])], ["B"], 0)
    np.testing.assert_allclose(np.exp(post), [[0.25, 0.75]])
    np.testing.assert_allclose(log_z, [np.log(0.5) + np.log(2 * 2)])
    with pytest.raises(ValueError, match="does not contain its scope"):
        tree.plan([("A",)], cards, homes=[1])


def test_calibration_names_its_normaliser_log_evidence_and_reads_the_old_name():
    a = LogFactor.from_probabilities(["A"], [2], [0.3, 0.7])
    ab = LogFactor.from_probabilities(
        ["A", "B"], [2, 3], [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]
    )
    cal = JunctionTree([("A", "B")]).calibrate([a, ab, indicator("B", 3, [2, 0])])
    np.testing.assert_allclose(np.exp(cal.log_evidence), [0.22, 0.48])
    assert cal.log_partition is cal.log_evidence


def test_span_does_not_depend_on_the_order_of_the_variables():
    """A set of variables iterates in an order that changes with the
    process's hash seed: the span (and so a likelihood's sums) must not."""
    import itertools

    rng = np.random.default_rng(3)
    for _ in range(30):
        n = int(rng.integers(2, 7))
        # A random tree of cliques over shared variables (a forest sometimes).
        cliques = [("v0", "v1")]
        edges = []
        for i in range(1, n):
            parent = int(rng.integers(0, i))
            shared = cliques[parent][int(rng.integers(0, 2))]
            cliques.append((shared, f"v{i + 1}"))
            if rng.random() < 0.8:
                edges.append((parent, i))
            else:  # another component: its own variable names
                cliques[-1] = (f"w{i}", f"v{i + 1}")
        tree = JunctionTree(cliques, edges)
        names = sorted({v for c in cliques for v in c})
        picked = list(rng.choice(names, size=min(3, len(names)), replace=False))
        for root in (None, int(rng.integers(0, n))):
            spans = {
                tuple(tree.span(list(order), root))
                for order in itertools.permutations(picked)
            }
            assert len(spans) == 1, (cliques, edges, picked, root, spans)
            (span,) = spans
            # still the subtree that reaches every variable
            for v in picked:
                assert any(v in cliques[c] for c in span)


def test_span_orders_the_variables_as_the_tree_lists_them():
    """``span`` takes the variables in the order of the tree's variables (a
    rank kept per tree, not a pass over every variable per call): the same
    spans as that pass (the rule it replaces), and a KeyError naming a
    variable of no clique."""

    def by_pass(tree, variables, root):  # the rule as written before
        wanted = set(variables)
        ordered = [v for v in tree._holders if v in wanted]
        roots, chosen = {}, set()
        if root is not None:
            roots[tree._component_of[root]] = root
            chosen.add(root)
        for v in ordered:
            holding = tree._holders[v]
            r = roots.setdefault(tree._component_of[holding[0]], holding[0])
            chosen.add(r)
            parent, depth = tree._rooted_at(r)
            c = min(holding, key=depth.__getitem__)
            while c not in chosen:
                chosen.add(c)
                c = parent[c]
        return sorted(chosen)

    rng = np.random.default_rng(5)
    for _ in range(60):
        n = int(rng.integers(2, 8))
        cliques, edges = [("v0", "v1")], []
        for i in range(1, n):
            parent = int(rng.integers(0, i))
            if rng.random() < 0.75:
                cliques.append((cliques[parent][int(rng.integers(0, 2))], f"v{i + 1}"))
                edges.append((parent, i))
            else:  # another component
                cliques.append((f"w{i}", f"v{i + 1}"))
        tree = JunctionTree(cliques, edges)
        names = sorted({v for c in cliques for v in c})
        picked = list(rng.choice(names, size=int(rng.integers(1, 4)), replace=False))
        for root in (None, int(rng.integers(0, n))):
            assert tree.span(picked, root) == by_pass(tree, picked, root)
        with pytest.raises(KeyError, match="nowhere"):
            tree.span([*picked, "nowhere"])
