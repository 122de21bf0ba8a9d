"""PC against pgmpy 1.1.2's ``causal_discovery.PC`` on the same data and
parameters: the skeleton, the separating sets and the directed and undirected
edges, for the stable (default) and original variants; and user-supplied
conditional independence tests."""

import itertools
import warnings

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from bayeskit import PC
from bayeskit.datasets import load_network
from bayeskit.graph import DAG
from bayeskit.network._pc import LAMBDAS, ci_test
from bayeskit.network._scores import encode_frame, split_frame

pytestmark = pytest.mark.parity

# (network, rows, largest conditioning set): 25 samples, each drawn with its
# own seed; columns that came out constant are dropped (pgmpy 1.1.2's tests
# give them an undefined p-value, a dependence on everything; see
# test_tests_with_no_degree_of_freedom_do_not_reject_independence).
SAMPLES = [
    *[("asia", n, 3) for n in (300, 500, 800, 1200, 2000, 3000, 5000, 10000)],
    *[("child", n, 3) for n in (300, 500, 1000, 2000, 3000, 5000)],
    *[("insurance", n, 2) for n in (300, 500, 1000, 2000, 3000, 5000)],
    *[("alarm", n, 2) for n in (500, 1000, 2000)],
    ("asia", 400, 2),
    ("child", 700, 2),
]


def _sample(name, n, seed):
    df = load_network(name).sample(n, random_state=seed)
    return df.loc[:, df.nunique() > 1]


def _pgmpy(df, variant, max_cond_vars, ci="chi_square"):
    from pgmpy.causal_discovery import PC as PgmpyPC

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return PgmpyPC(
            variant=variant,
            ci_test=ci,
            max_cond_vars=max_cond_vars,
            return_type="pdag",
            show_progress=False,
            n_jobs=1,
        ).fit(df)


def _meek_in_column_order(est, columns):
    """pgmpy's Meek rules on pgmpy's collider graph, its nodes held in the
    order of the columns (pgmpy holds them in Python's set order of its
    edges, which changes with the string hash seed)."""
    from pgmpy.base import PDAG

    colliders = est._orient_colliders()
    directed, undirected = (
        set(colliders.directed_edges),
        set(colliders.undirected_edges),
    )
    pdag = PDAG()
    pdag.add_nodes_from(columns)
    pdag.add_edges_from(directed | undirected | {(b, a) for a, b in undirected})
    pdag.directed_edges, pdag.undirected_edges = directed, undirected
    pdag.apply_meeks_rules(inplace=True)
    return pdag


def _edges(pdag):
    return set(pdag.directed_edges), {frozenset(e) for e in pdag.undirected_edges}


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["stable", "orig"])
@pytest.mark.parametrize("seed", range(len(SAMPLES)))
def test_pc_equals_pgmpys_pc(seed, variant):
    pytest.importorskip("pgmpy")
    name, n, max_cond_vars = SAMPLES[seed]
    df = _sample(name, n, seed)
    ours = PC(max_cond_vars=max_cond_vars, variant=variant).fit(df)
    est = _pgmpy(df, variant, max_cond_vars)
    # The skeleton and the separating sets (for orig, the first set found in
    # pgmpy's order of the candidates, which depends on Python's string hash
    # seed, in this process the same for both).
    skeleton = {frozenset(e) for e in est.skeleton_.edges()}
    assert {frozenset(e) for e in ours.directed_edges_ + ours.undirected_edges_} == (
        skeleton
    )
    assert ours.separating_sets_ == {
        k: tuple(v) for k, v in est.separating_sets_.items()
    }
    # The orientations: pgmpy's, except where they depend on the order in
    # which pgmpy holds the nodes (conflicting tests); then pgmpy's rules with
    # the nodes in the columns' order. A directed cycle in pgmpy's answer is
    # refused here (the edge stays undirected).
    mine = set(ours.directed_edges_), {frozenset(e) for e in ours.undirected_edges_}
    theirs = _edges(est.causal_graph_)
    if mine != theirs:
        cyclic = not nx.is_directed_acyclic_graph(nx.DiGraph(list(theirs[0])))
        assert cyclic or mine == _edges(_meek_in_column_order(est, list(df.columns)))
    assert nx.is_directed_acyclic_graph(nx.DiGraph(ours.directed_edges_))
    assert nx.is_directed_acyclic_graph(nx.DiGraph(ours.edges_))
    assert set(ours.directed_edges_) <= set(ours.edges_)


@pytest.mark.slow
def test_parallel_is_stable():
    df = _sample("child", 1000, 0)
    stable = PC(max_cond_vars=3).fit(df)
    parallel = PC(max_cond_vars=3, variant="parallel").fit(df)
    assert parallel.separating_sets_ == stable.separating_sets_
    assert parallel.directed_edges_ == stable.directed_edges_
    assert parallel.undirected_edges_ == stable.undirected_edges_


def test_a_pgmpy_ci_test_object_as_ci_test_gives_the_named_tests_answer():
    # pgmpy's CI-test objects are callables with the data bound: passed as
    # ci_test, the answer is the one of the test by name.
    pytest.importorskip("pgmpy")
    from pgmpy.ci_tests import ChiSquare

    df = _sample("asia", 3000, 1)
    calls = []

    def counted(X, Y, Z, significance_level):
        calls.append((X, Y, Z))
        return ChiSquare(df)(X, Y, list(Z), significance_level=significance_level)

    by_name = PC(max_cond_vars=2).fit(df)
    by_object = PC(ChiSquare(df), max_cond_vars=2).fit(df)
    by_function = PC(counted, max_cond_vars=2).fit(df)
    for pc in (by_object, by_function):
        assert pc.separating_sets_ == by_name.separating_sets_
        assert pc.directed_edges_ == by_name.directed_edges_
        assert pc.undirected_edges_ == by_name.undirected_edges_
    names = set(df.columns)
    assert calls and all(
        {x, y} <= names and isinstance(z, tuple) and set(z) <= names - {x, y}
        for x, y, z in calls
    )


@pytest.mark.parametrize("name", ["log_likelihood", "modified_log_likelihood"])
def test_named_power_divergence_tests_equal_pgmpys(rng, name):
    pytest.importorskip("pgmpy")
    from pgmpy.ci_tests import get_ci_test

    df = _sample("child", 2000, 0)
    names = list(df.columns)
    codes, cards = encode_frame(*split_frame(df))
    theirs = get_ci_test(name, data=df)
    compared = 0
    for _ in range(40):
        x, y, *z = (
            int(v) for v in rng.choice(len(names), 2 + rng.integers(0, 3), False)
        )
        stat, dof, p = ci_test(codes, cards, x, y, z, LAMBDAS[name])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs(names[x], names[y], [names[i] for i in z])
        if not np.isfinite(theirs.p_value_):
            # pgmpy 1.1.2 sums over every joint state of z, and 0 log 0 on
            # the states no row has is NaN for it; here they count zero.
            continue
        compared += 1
        assert dof == theirs.dof_
        assert stat == pytest.approx(theirs.statistic_, rel=1e-9, abs=1e-12)
        assert p == pytest.approx(theirs.p_value_, rel=1e-7, abs=1e-12)
    assert compared >= 10


def test_power_divergence_equals_pgmpys_cressie_read(rng):
    pytest.importorskip("pgmpy")
    from pgmpy.ci_tests import PowerDivergence

    df = _sample("insurance", 2000, 0)
    names = list(df.columns)
    codes, cards = encode_frame(*split_frame(df))
    theirs = PowerDivergence(df)  # lambda_="cressie-read", 2/3
    for _ in range(40):
        x, y, *z = (
            int(v) for v in rng.choice(len(names), 2 + rng.integers(0, 3), False)
        )
        stat, dof, p = ci_test(codes, cards, x, y, z, LAMBDAS["power_divergence"])
        theirs(names[x], names[y], [names[i] for i in z])
        assert dof == theirs.dof_
        assert stat == pytest.approx(theirs.statistic_, rel=1e-9, abs=1e-12)
        assert p == pytest.approx(theirs.p_value_, rel=1e-7, abs=1e-12)


@pytest.mark.parametrize("bad", ["fisher_z", "pearsonr", 3, None])
def test_pc_rejects_a_ci_test_it_cannot_run(bad):
    with pytest.raises((ValueError, TypeError), match="ci_test"):
        PC(bad).fit(_sample("asia", 100, 0))


def test_pc_rejects_an_unknown_variant():
    with pytest.raises(ValueError, match="variant"):
        PC(variant="fast").fit(_sample("asia", 100, 0))


def _compelled(nodes, edges):
    """The edges oriented alike in every DAG of the Markov equivalence class
    of ``edges`` (same skeleton and unshielded colliders), by enumerating
    every orientation of the skeleton."""

    def colliders(es):
        es = set(es)
        return {
            (frozenset((a, c)), b)
            for (a, b) in es
            for (c, b2) in es
            if b2 == b and a < c and (a, c) not in es and (c, a) not in es
        }

    def acyclic(es):
        try:
            DAG(es, nodes=nodes).topological_order()
        except Exception:
            return False
        return True

    target = colliders(edges)
    skeleton = [tuple(sorted(e)) for e in edges]
    members = []
    for flips in itertools.product((False, True), repeat=len(skeleton)):
        es = [(b, a) if f else (a, b) for (a, b), f in zip(skeleton, flips)]
        if colliders(es) == target and acyclic(es):
            members.append(set(es))
    return set.intersection(*members)


def test_with_an_oracle_pc_orients_exactly_the_compelled_edges():
    # Meek's rules (Meek 1995) are sound and complete: with a d-separation
    # oracle, PC's directed edges are those every DAG of the class shares
    # (brute force over the orientations of the skeleton), no more (pgmpy
    # 1.1.2's rule 3 omits the condition that the two parents be
    # non-adjacent, which can orient an edge the class leaves open) and no
    # fewer.
    rng = np.random.default_rng(11)
    names = ["a", "b", "c", "d", "e", "f"]
    # A DAG where pgmpy's form of rule 3 orients g -> e, which 20 DAGs of
    # the class do not share, then 60 random DAGs.
    shielded = [
        *[("d", x) for x in "fbagec"],
        *[("f", x) for x in "bge"],
        *[("b", x) for x in "agec"],
        *[("a", x) for x in "ge"],
        ("g", "e"),
        ("g", "c"),
    ]
    cases = [(list("abcdefg"), shielded)]
    for _ in range(60):
        d = int(rng.integers(4, 7))
        nodes = names[:d]
        order = list(rng.permutation(nodes))
        edges = [
            (order[i], order[j])
            for i in range(d)
            for j in range(i + 1, d)
            if rng.random() < 0.55
        ]
        cases.append((nodes, edges))
    for nodes, edges in cases:
        d = len(nodes)
        dag = DAG(edges, nodes=nodes)
        df = pd.DataFrame(rng.integers(0, 2, size=(40, d)), columns=nodes)

        def oracle(x, y, z, significance_level, dag=dag):
            return dag.is_dseparated(x, y, list(z))

        pc = PC(oracle, max_cond_vars=d).fit(df)
        assert set(pc.directed_edges_) == _compelled(nodes, edges), edges
        assert {frozenset(e) for e in pc.undirected_edges_} == {
            frozenset(e) for e in edges
        } - {frozenset(e) for e in pc.directed_edges_}
