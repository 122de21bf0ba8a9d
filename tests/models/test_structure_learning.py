"""Structure learning: scores against pgmpy and the published formulas, hill
climbing against brute force (every DAG of a tiny network, every move from
the result) and against pgmpy's HillClimbSearch, and its constraints."""

import itertools
import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayeskit import PC, BayesianNetwork, HillClimbSearch, score_structure
from bayeskit.datasets import load_network
from bayeskit.graph import DAG
from bayeskit.graph.dag import CycleError
from bayeskit.network._hill_climb import hill_climb, legal_moves, perturb
from bayeskit.network._pc import ci_test, extend_to_dag, orient
from bayeskit.network._scores import FamilyScores, encode_frame, split_frame

ASIA = load_network("asia")


def _asia(n, seed=0):
    return ASIA.sample(n, random_state=seed)


def _parents(edges, nodes):
    return {v: [p for p, c in edges if c == v] for v in nodes}


def _direct_score(df, edges, method, ess=10.0):
    """The published formulas, cell by cell over the full tables (zero cells
    and unseen parent states included); BDs as pgmpy 1.1.2 documents it, with
    Scutari's (2016) marginal uniform graph prior."""
    n = len(df)
    states = {v: sorted(df[v].unique()) for v in df.columns}
    total = 0.0
    if method == "bds":
        d = len(df.columns)
        total -= (len(edges) + d * (d - 1) / 2) * math.log(2.0)
    for v, pa in _parents(edges, df.columns).items():
        r = len(states[v])
        configs = list(itertools.product(*[states[p] for p in pa]))
        q = len(configs)
        if pa:
            counts = df.groupby([*pa, v]).size()
            seen = len(df.groupby(pa).size())
        else:
            counts = df.groupby(v).size()
            seen = 1
        for config in configs:
            n_jk = [
                float(counts.get((*config, s) if pa else s, 0.0)) for s in states[v]
            ]
            n_j = sum(n_jk)
            if method in ("bic", "aic", "ll"):
                total += sum(c * math.log(c / n_j) for c in n_jk if c > 0)
            elif method == "bds":  # alpha spread over the seen parent states
                a, b = ess / seen, ess / (q * r)
                if n_j > 0:
                    total += math.lgamma(a) - math.lgamma(n_j + a)
                else:
                    total -= math.lgamma(a)
                total += sum(math.lgamma(c + b) - math.lgamma(b) for c in n_jk)
            elif method == "bdeu":
                a, b = ess / q, ess / (q * r)
                total += math.lgamma(a) - math.lgamma(n_j + a)
                total += sum(math.lgamma(c + b) - math.lgamma(b) for c in n_jk)
            else:  # k2
                total += math.lgamma(r) - math.lgamma(n_j + r)
                total += sum(math.lgamma(c + 1) for c in n_jk)
        if method == "bic":
            total -= 0.5 * math.log(n) * q * (r - 1)
        elif method == "aic":
            total -= q * (r - 1)
    return total


def _random_dag(rng, nodes, p=0.3):
    order = list(rng.permutation(nodes))
    return [
        (order[i], order[j])
        for i in range(len(order))
        for j in range(i + 1, len(order))
        if rng.random() < p
    ]


def _skeleton(edges):
    return {frozenset(e) for e in edges}


def _precision_recall(found, true):
    hit = len(found & true)
    return hit / max(len(found), 1), hit / len(true)


# -- scores -------------------------------------------------------------------
@pytest.mark.parametrize("method", ["bic", "aic", "ll", "bdeu", "bds", "k2"])
def test_score_is_the_published_formula(rng, method):
    df = _asia(300)
    for edges in [list(ASIA.dag_.edges), [], _random_dag(rng, list(df.columns))]:
        ours = score_structure(df, edges, method, equivalent_sample_size=7.0)
        direct = _direct_score(df, edges, method, ess=7.0)
        assert ours == pytest.approx(direct, rel=1e-10)


def _pgmpy_score(df, edges, method, ess=10.0):
    pytest.importorskip("pgmpy")
    from pgmpy.models import DiscreteBayesianNetwork
    from pgmpy.structure_score import AIC, BIC, K2, BDeu, BDs, LogLikelihood

    model = DiscreteBayesianNetwork(edges)
    model.add_nodes_from(df.columns)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method in ("bdeu", "bds"):
            return {"bdeu": BDeu, "bds": BDs}[method](
                df, equivalent_sample_size=ess
            ).score(model)
        scores = {"bic": BIC, "aic": AIC, "ll": LogLikelihood, "k2": K2}
        return scores[method](df).score(model)


@pytest.mark.parity
@pytest.mark.parametrize("method", ["bic", "aic", "ll", "bdeu", "bds", "k2"])
def test_score_equals_pgmpys(rng, method):
    df = _asia(5000)
    graphs = [list(ASIA.dag_.edges), []]
    graphs += [_random_dag(rng, list(df.columns), 0.15) for _ in range(3)]
    for edges in graphs:
        for ess in (1.0, 10.0):
            ours = score_structure(df, edges, method, equivalent_sample_size=ess)
            theirs = _pgmpy_score(df, edges, method, ess)
            if method == "k2":
                # pgmpy adds log Gamma(r) for every parent state never seen.
                theirs -= _unseen_parent_states_term(df, edges)
            assert ours == pytest.approx(theirs, rel=1e-8)


def _unseen_parent_states_term(df, edges):
    total = 0.0
    for v, pa in _parents(edges, df.columns).items():
        if pa:
            q = np.prod([df[p].nunique() for p in pa])
            seen = len(df.groupby(pa).size())
            total += (q - seen) * math.lgamma(df[v].nunique())
    return total


@pytest.mark.parity
def test_k2_differs_from_pgmpys_by_its_unseen_parent_states_only():
    # x and y are both 'a' or 'b', never both 'b': one parent state unseen.
    gen = np.random.default_rng(0)
    xy = gen.choice(["aa", "ab", "ba"], 200)
    z = np.where(gen.random(200) < 0.7, [s[0] for s in xy], "c")
    df = pd.DataFrame({"x": [s[0] for s in xy], "y": [s[1] for s in xy], "z": z})
    edges = [("x", "z"), ("y", "z")]
    offset = _unseen_parent_states_term(df, edges)
    assert offset > 0
    ours = score_structure(df, edges, "k2")
    assert ours == pytest.approx(_direct_score(df, edges, "k2"), rel=1e-12)
    assert ours + offset == pytest.approx(_pgmpy_score(df, edges, "k2"), rel=1e-8)


def test_integer_weights_are_repeated_rows(rng):
    df = _asia(200)
    w = rng.integers(0, 4, size=len(df))
    repeated = df.loc[df.index.repeat(w)]
    edges = list(ASIA.dag_.edges)
    for method in ("bic", "bdeu", "k2"):
        assert score_structure(df, edges, method, sample_weight=w) == pytest.approx(
            score_structure(repeated, edges, method), rel=1e-10
        )


def test_a_row_with_a_missing_value_leaves_only_its_families():
    df = _asia(500).astype(object)
    df.iloc[:50, 0] = None  # 'asia' missing in 50 rows
    edges = [("asia", "tub"), ("smoke", "lung")]
    ours = score_structure(df, edges, "bdeu")
    complete = df.iloc[50:]
    assert complete["asia"].nunique() == 2
    # tub | asia and asia on the complete rows; lung | smoke and the rest on all.
    rest = df.drop(columns=["asia", "tub"])
    expected = _direct_score(
        complete[["asia", "tub"]], [("asia", "tub")], "bdeu"
    ) + _direct_score(rest, [("smoke", "lung")], "bdeu")
    assert ours == pytest.approx(expected, rel=1e-10)


def test_dense_and_sparse_counting_agree(monkeypatch):
    import bayeskit.network._scores as scores_module

    df = _asia(300)
    codes, cards = encode_frame(*split_frame(df))
    dense = FamilyScores(codes, cards, "bdeu").local_score(7, [0, 1, 2, 3, 4])
    monkeypatch.setattr(scores_module, "_DENSE_CELLS", 1)
    sparse = FamilyScores(codes, cards, "bdeu").counts(7, [0, 1, 2, 3, 4])
    assert sparse[2] == 32
    assert FamilyScores(codes, cards, "bdeu").local_score(
        7, [0, 1, 2, 3, 4]
    ) == pytest.approx(dense, rel=1e-12)


# -- hill climbing ----------------------------------------------------------
def _moves(edges, nodes):
    """Every graph one add, remove or reverse away that is still a DAG."""
    edges = set(edges)
    for x, y in itertools.permutations(nodes, 2):
        if (x, y) in edges:
            yield "-", (x, y), edges - {(x, y)}
            yield "flip", (x, y), (edges - {(x, y)}) | {(y, x)}
        elif (y, x) not in edges:
            yield "+", (x, y), edges | {(x, y)}


def _is_dag(edges, nodes):
    try:
        DAG(list(edges), nodes=nodes)
    except CycleError:
        return False
    return True


@pytest.mark.parametrize("method", ["bic", "bdeu", "k2"])
def test_the_result_is_a_local_optimum(method):
    df = _asia(2000, seed=1)
    nodes = list(df.columns)
    hc = HillClimbSearch(method, tabu_length=0).fit(df)
    assert _is_dag(hc.edges_, nodes)
    assert hc.score_ == pytest.approx(score_structure(df, hc.edges_, method), rel=1e-12)
    assert hc.score_ == pytest.approx(_direct_score(df, hc.edges_, method), rel=1e-10)
    for _, _, graph in _moves(hc.edges_, nodes):
        if _is_dag(graph, nodes):
            assert score_structure(df, list(graph), method) < hc.score_ + hc.epsilon


def _all_dags(nodes):
    pairs = list(itertools.permutations(nodes, 2))
    for mask in range(1 << len(pairs)):
        edges = [pairs[i] for i in range(len(pairs)) if mask >> i & 1]
        if _is_dag(edges, nodes):
            yield edges


def test_dag_enumeration_counts():
    assert sum(1 for _ in _all_dags(range(3))) == 25
    assert sum(1 for _ in _all_dags(range(4))) == 543  # Robinson (1973)


@pytest.mark.parametrize("method", ["bic", "bdeu", "k2"])
def test_hill_climbing_against_every_dag_of_a_tiny_network(method):
    # A chain a -> b -> c -> d with strong dependences: the greedy search
    # finds the optimum; on any data it never beats it.
    gen = np.random.default_rng(5)
    n = 3000
    a = gen.integers(0, 2, n)
    b = np.where(gen.random(n) < 0.85, a, 1 - a)
    c = np.where(gen.random(n) < 0.8, b, gen.integers(0, 3, n))
    d = np.where(gen.random(n) < 0.9, c % 2, 1 - c % 2)
    df = pd.DataFrame({"a": a, "b": b, "c": c, "d": d}).astype(str)
    codes, cards = encode_frame(*split_frame(df))
    scores = FamilyScores(codes, cards, method)
    best = max(scores.score(_parents(edges, range(4))) for edges in _all_dags(range(4)))
    hc = HillClimbSearch(method).fit(df)
    assert hc.score_ <= best + 1e-9
    assert hc.score_ == pytest.approx(best, rel=1e-12)
    assert _skeleton(hc.edges_) == _skeleton([("a", "b"), ("b", "c"), ("c", "d")])
    # Noise: three independent variables; the optimum is the empty graph.
    noise = pd.DataFrame(gen.integers(0, 3, (500, 3))).astype(str)
    hc = HillClimbSearch(method).fit(noise)
    codes, cards = encode_frame(*split_frame(noise))
    scores = FamilyScores(codes, cards, method)
    best = max(scores.score(_parents(e, range(3))) for e in _all_dags(range(3)))
    assert hc.score_ <= best + 1e-9


def test_max_indegree_black_white_and_fixed_edges():
    df = _asia(3000)
    nodes = list(df.columns)
    free = HillClimbSearch().fit(df)
    assert max(sum(1 for _, c in free.edges_ if c == v) for v in nodes) == 2
    hc = HillClimbSearch(max_indegree=1).fit(df)
    assert max(sum(1 for _, c in hc.edges_ if c == v) for v in nodes) == 1
    assert hc.score_ < free.score_

    black = [free.edges_[0], free.edges_[1][::-1]]
    hc = HillClimbSearch(black_list=black).fit(df)
    assert not set(black) & set(hc.edges_)

    white = [("smoke", "lung"), ("lung", "smoke"), ("either", "xray"), ("tub", "xray")]
    hc = HillClimbSearch(white_list=white).fit(df)
    assert set(hc.edges_) <= set(white) and hc.edges_

    fixed = [("xray", "asia"), ("dysp", "smoke")]  # against the data
    hc = HillClimbSearch(fixed_edges=fixed).fit(df)
    assert set(fixed) <= set(hc.edges_)
    assert _is_dag(hc.edges_, nodes)
    for e in (free, hc):
        assert e.score_ == pytest.approx(score_structure(df, e.edges_), rel=1e-12)


def test_self_loops_in_black_and_white_lists_are_ignored_as_in_pgmpy():
    # A self-loop is never a legal move: forbidding or allowing it changes
    # nothing (pgmpy ignores it); requiring it stays an error.
    df = _asia(2000)
    black = [("either", "xray")]
    loops = [("asia", "asia"), ("dysp", "dysp")]
    ref = HillClimbSearch(black_list=black).fit(df)
    hc = HillClimbSearch(black_list=loops + black).fit(df)
    assert hc.edges_ == ref.edges_ and ("either", "xray") not in hc.edges_
    white = [("smoke", "lung"), ("lung", "smoke"), ("either", "xray")]
    ref = HillClimbSearch(white_list=white).fit(df)
    hc = HillClimbSearch(white_list=white + loops).fit(df)
    assert hc.edges_ == ref.edges_ and set(hc.edges_) <= set(white)
    with pytest.raises(ValueError, match="fixed_edges holds a self-loop"):
        HillClimbSearch(fixed_edges=loops).fit(df)


def test_tabu_moves_are_not_legal():
    adjacency = np.zeros((3, 3), dtype=bool)
    adjacency[0, 1] = True
    allowed = ~np.eye(3, dtype=bool)
    required = np.zeros((3, 3), dtype=bool)
    add, remove, reverse = legal_moves(adjacency, allowed, required, np.inf)
    assert add[1, 2] and add[0, 2] and not add[1, 0] and not add[0, 1]
    assert remove[0, 1] and reverse[0, 1]
    tabu = [("-", 0, 1), ("+", 1, 2), ("flip", 1, 0)]
    add, remove, reverse = legal_moves(adjacency, allowed, required, np.inf, tabu)
    assert not remove[0, 1] and not add[1, 2] and not reverse[0, 1]
    # A reversal that would close a cycle through another path is not legal.
    adjacency[1, 2] = adjacency[0, 2] = True
    add, remove, reverse = legal_moves(adjacency, allowed, required, np.inf)
    assert not reverse[0, 2] and reverse[0, 1] and reverse[1, 2]
    assert not add.any()


def test_epsilon_max_iter_and_start_dag_have_their_effect():
    df = _asia(3000)
    full = HillClimbSearch().fit(df)
    assert full.n_iter_ > 2
    two = HillClimbSearch(max_iter=2, max_tabu=0).fit(df)
    assert two.n_iter_ == 2 and len(two.edges_) == 2 and two.score_ < full.score_
    none = HillClimbSearch(epsilon=1e9, max_tabu=0).fit(df)
    assert none.n_iter_ == 0 and none.edges_ == []
    # From the true graph, few moves are needed, and none makes it worse.
    start = HillClimbSearch(start_dag=list(ASIA.dag_.edges), max_tabu=0).fit(df)
    assert start.n_iter_ < full.n_iter_
    assert start.score_ >= score_structure(df, ASIA.dag_) + start.n_iter_ * 1e-4
    start = HillClimbSearch(start_dag=ASIA.dag_, max_iter=0).fit(df)
    assert set(start.edges_) == set(ASIA.dag_.edges)
    start = HillClimbSearch(
        start_dag=ASIA.dag_, black_list=[("asia", "tub")], max_iter=0
    ).fit(df)
    assert set(start.edges_) == set(ASIA.dag_.edges) - {("asia", "tub")}


def test_max_tabu_goes_past_the_first_local_optimum():
    alarm = load_network("alarm")
    df = alarm.sample(1000, random_state=2)
    greedy = HillClimbSearch(max_tabu=0, n_restarts=0).fit(df)
    tabu = HillClimbSearch(max_tabu=10, n_restarts=0).fit(df)
    assert tabu.n_iter_ > greedy.n_iter_
    assert tabu.score_ > greedy.score_ + 1.0  # -11889.9 against -11901.3
    assert tabu.score_ == pytest.approx(score_structure(df, tabu.edges_), rel=1e-12)


def test_an_edge_and_its_reversal_tie_whatever_the_rounding():
    # Two dependent variables: x -> y and y -> x gain the same BIC (their
    # computed gains differ by rounding). The tie goes to the first pair in
    # the order given, never to the one rounding favours.
    rng = np.random.default_rng(0)
    allowed = ~np.eye(2, dtype=bool)
    required = np.zeros((2, 2), dtype=bool)
    added = 0
    for _ in range(100):
        n = int(rng.integers(50, 400))
        a = rng.integers(0, int(rng.integers(2, 5)), n)
        b = (a + (rng.random(n) < 0.3) * rng.integers(0, 3, n)) % 4
        codes, cards = encode_frame(*split_frame(np.c_[a, b]))
        scores = FamilyScores(codes, cards, "bic")
        for order, edge in ((None, (0, 1)), (np.array([1, 0]), (1, 0))):
            found = hill_climb(scores, required, allowed, required, order=order)
            if found.adjacency.any():
                assert found.adjacency[edge] and found.adjacency.sum() == 1
                added += 1
    assert added > 100


@pytest.mark.parametrize("seed", range(3))
def test_ties_are_broken_in_both_column_orders(seed):
    # Equally good moves (an edge or its reversal) decide the local optimum:
    # the search tries the columns' order and the reverse order and keeps
    # the better, so reversing the columns changes nothing. With ties to the
    # first column only (the old search), child gave scores 60 apart.
    # (Greedy search only: the tabu phase walks through many more exact ties,
    # which the rounding of sums in another column order can break apart.)
    df = load_network("child").sample(1000, random_state=seed)
    greedy = HillClimbSearch(max_tabu=0, n_restarts=0).fit(df)
    back = HillClimbSearch(max_tabu=0, n_restarts=0).fit(df[df.columns[::-1]])
    assert back.score_ == pytest.approx(greedy.score_, rel=1e-12)
    hc = HillClimbSearch().fit(df)
    assert hc.score_ == pytest.approx(score_structure(df, hc.edges_), rel=1e-12)
    # tabu and restarts never end below the greedy search
    assert hc.score_ >= greedy.score_


@pytest.mark.parity
@pytest.mark.slow
def test_score_at_least_pgmpys_on_its_docstring_case_and_samples():
    # pgmpy's HillClimbSearch docstring: alarm, 1,000 rows simulated with
    # seed 42, scoring_method="bic-d" (the model from the bundled alarm file,
    # read by pgmpy's BIFReader: no download). pgmpy breaks
    # ties by the order of a set, so its answer changes from process to
    # process: ours must be at least as good as the one it gives here.
    pytest.importorskip("pgmpy")
    from pgmpy.readwrite import BIFReader

    path = Path(load_network.__code__.co_filename).parent / "data" / "alarm.bif"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = BIFReader(str(path)).get_model()
        df = model.simulate(1000, seed=42, show_progress=False)
    frames = [df] + [
        load_network("asia").sample(1000, random_state=s) for s in range(3)
    ]
    for frame in frames:
        ours = HillClimbSearch("bic-d").fit(frame)
        theirs = score_structure(frame, _pgmpy_hill_climb(frame, "bic"), "bic")
        assert ours.score_ >= theirs - 1e-8 * abs(theirs)


def test_tabu_length_changes_the_path_of_tabu_search():
    df = load_network("alarm").sample(1000, random_state=0)
    greedy = HillClimbSearch(max_tabu=0, n_restarts=0).fit(df).score_
    short = HillClimbSearch(tabu_length=0, max_tabu=20, n_restarts=0).fit(df)
    # (+31.6 and +49.9 over greedy; tabu_length=100 gives +31.6 here too)
    long = HillClimbSearch(tabu_length=20, max_tabu=20, n_restarts=0).fit(df)
    assert short.score_ != pytest.approx(long.score_, rel=1e-9)
    assert min(short.score_, long.score_) >= greedy


def test_pc_parameters_have_their_effect():
    df = _asia(10000)
    assert len(PC(max_cond_vars=0).fit(df).edges_) > len(PC().fit(df).edges_)
    strict = PC(significance_level=1e-6).fit(df)
    loose = PC(significance_level=0.2).fit(df)
    assert len(strict.edges_) < len(loose.edges_)  # 7 against 9


def test_bdeu_equivalent_sample_size_has_its_effect():
    df = _asia(200, seed=2)
    small = HillClimbSearch("bdeu", equivalent_sample_size=0.1).fit(df)
    large = HillClimbSearch("bdeu", equivalent_sample_size=100.0).fit(df)
    assert len(small.edges_) < len(large.edges_)


def test_network_is_fitted_with_the_m_estimate():
    df = _asia(1000)
    hc = HillClimbSearch(m=3.0).fit(df)
    ref = BayesianNetwork(hc.edges_, m=3.0).fit(df)
    for v in ref.variables_:
        np.testing.assert_array_equal(hc.network_.cpds_[v], ref.cpds_[v])
    X = df.head(5).astype(object)
    X["lung"] = None
    pd.testing.assert_frame_equal(hc.predict(X), ref.predict(X))
    pd.testing.assert_frame_equal(
        hc.predict_proba(X, "lung"), ref.predict_proba(X, "lung")
    )
    np.testing.assert_allclose(hc.score_samples(df), ref.score_samples(df))
    assert hc.score(df) == pytest.approx(ref.score(df))
    pd.testing.assert_series_equal(
        hc.query("lung", {"smoke": "yes"}), ref.query("lung", {"smoke": "yes"})
    )
    assert hc.sample(3, random_state=0).shape == (3, 8)
    assert hc.variables_ == list(df.columns)


def test_fit_does_not_mutate_the_data():
    df = _asia(300)
    copy = df.copy()
    HillClimbSearch(fixed_edges=[("asia", "tub")]).fit(df)
    pd.testing.assert_frame_equal(df, copy)


def test_pgmpys_score_name_is_accepted():
    df = _asia(1000)
    assert HillClimbSearch("bic-d").fit(df).edges_ == HillClimbSearch().fit(df).edges_


# -- bad input ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"scoring_method": "bdeus"}, "scoring_method"),
        ({"equivalent_sample_size": -1.0}, "equivalent_sample_size"),
        ({"equivalent_sample_size": 0.0}, "equivalent_sample_size"),
        ({"tabu_length": -1}, "tabu_length"),
        ({"max_indegree": -1}, "max_indegree"),
        ({"n_restarts": -1}, "n_restarts"),
        ({"perturb": 0}, "perturb"),
        ({"random_state": "zero"}, "random_state"),
        ({"black_list": [("asia", "nope")]}, "black_list names"),
        ({"white_list": [("nope", "asia")]}, "white_list names"),
        ({"fixed_edges": [("asia", "nope")]}, "fixed_edges names"),
        ({"start_dag": [("nope", "asia")]}, "start_dag names"),
        ({"fixed_edges": [("asia", "asia")]}, "fixed_edges holds a self-loop"),
        (
            {"fixed_edges": [("asia", "tub"), ("tub", "lung"), ("lung", "asia")]},
            "fixed_edges form a cycle",
        ),
        (
            {"fixed_edges": [("asia", "tub")], "black_list": [("asia", "tub")]},
            "fixed_edges holds .* black_list",
        ),
        (
            {"fixed_edges": [("asia", "tub")], "white_list": [("tub", "asia")]},
            "fixed_edges holds .* white_list",
        ),
        (
            {"fixed_edges": [("asia", "tub"), ("lung", "tub")], "max_indegree": 1},
            "max_indegree",
        ),
        (
            {"fixed_edges": [("asia", "tub")], "start_dag": [("tub", "asia")]},
            "fixed_edges and start_dag",
        ),
        ({"fixed_edges": ["ab"]}, "fixed_edges must hold"),
    ],
)
def test_bad_parameters_raise_value_errors_naming_them(params, match):
    df = _asia(50)
    with pytest.raises(ValueError, match=match):
        HillClimbSearch(**params).fit(df)


def test_score_structure_rejects_bad_input():
    df = _asia(50)
    with pytest.raises(ValueError, match="scoring_method"):
        score_structure(df, [], "aic-cg")
    with pytest.raises(ValueError, match="continuous column 'asia'"):
        score_structure(df, [], "aic-g")  # every column continuous
    with pytest.raises(ValueError, match="equivalent_sample_size"):
        score_structure(df, [], "bdeu", equivalent_sample_size=-1)
    with pytest.raises(ValueError, match="edges names"):
        score_structure(df, [("asia", "nope")])
    with pytest.raises(ValueError, match="edges form a cycle"):
        score_structure(df, [("asia", "tub"), ("tub", "asia")])


def test_perturb_keeps_a_dag_within_the_constraints():
    # Random constraints and start graphs: every perturbed graph is a DAG that
    # holds the required edges, no forbidden one and no variable over
    # max_indegree, and differs from its start by at most one edge per move.
    rng = np.random.default_rng(0)
    for draw in range(200):
        d = int(rng.integers(2, 8))
        allowed = rng.random((d, d)) < 0.8
        np.fill_diagonal(allowed, False)
        order = rng.permutation(d)
        rank = np.empty(d, dtype=int)
        rank[order] = np.arange(d)
        forward = rank[:, None] < rank[None, :]  # edges along a random order
        start = forward & allowed & (rng.random((d, d)) < 0.4)
        required = start & (rng.random((d, d)) < 0.3)
        max_indegree = int(max(start.sum(axis=0).max(), rng.integers(1, 4)))
        n_moves = int(rng.integers(1, 8))
        state = np.random.RandomState(draw)
        before = start.copy()
        kicked, made = perturb(start, allowed, required, max_indegree, n_moves, state)
        assert (start == before).all()  # the start is not changed in place
        edges = list(zip(*np.nonzero(kicked)))
        assert _is_dag(edges, range(d))
        assert not (required & ~kicked).any() and not (kicked & ~allowed).any()
        assert kicked.sum(axis=0).max() <= max_indegree
        assert made <= n_moves and (kicked != start).sum() <= 2 * made


def test_restarts_never_end_below_the_first_search_and_follow_random_state():
    for name, seed in [("alarm", 0), ("insurance", 3), ("child", 1)]:
        df = load_network(name).sample(500, random_state=seed)
        first = HillClimbSearch().fit(df)  # n_restarts=0 by default
        hc = HillClimbSearch(n_restarts=20, random_state=0).fit(df)
        again = HillClimbSearch(n_restarts=20, random_state=0).fit(df)
        assert hc.edges_ == again.edges_ and hc.score_ == again.score_
        assert hc.score_ >= first.score_
        assert hc.score_ == pytest.approx(score_structure(df, hc.edges_), rel=1e-12)
        assert _is_dag(hc.edges_, list(df.columns))


def test_n_restarts_perturb_and_random_state_have_their_effect():
    df = load_network("alarm").sample(1000, random_state=2)
    first = HillClimbSearch(n_restarts=0).fit(df).score_
    scores = {
        (n, k, seed): HillClimbSearch(n_restarts=n, perturb=k, random_state=seed)
        .fit(df)
        .score_
        for n, k, seed in [(20, 5, 0), (20, 5, 1), (20, 1, 0), (3, 5, 0)]
    }
    assert scores[20, 5, 0] > first + 1.0
    assert len({round(v, 6) for v in scores.values()}) > 1
    assert scores[20, 5, 0] != pytest.approx(scores[20, 1, 0], rel=1e-9)
    assert scores[20, 5, 0] >= scores[3, 5, 0]  # more restarts from the same draws


def test_the_search_does_not_depend_on_the_hash_seed():
    # pgmpy's result changes with PYTHONHASHSEED (the order of a set); ours
    # is a function of the data (and random_state) alone, by default and
    # with restarts.
    script = (
        "import warnings; warnings.simplefilter('ignore');"
        "from bayeskit import HillClimbSearch;"
        "from bayeskit.datasets import load_network;"
        "df = load_network('child').sample(500, random_state=4);"
        "print(HillClimbSearch().fit(df).edges_);"
        "print(HillClimbSearch(n_restarts=5, random_state=3).fit(df).edges_)"
    )
    root = Path(__file__).resolve().parents[2]
    outputs = set()
    for hash_seed in ("0", "1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(root)}
        run = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        outputs.add(run.stdout)
    assert len(outputs) == 1


# -- against pgmpy's HillClimbSearch on sampled data ----------------------------
def _pgmpy_hill_climb(df, method):
    pytest.importorskip("pgmpy")
    from pgmpy.estimators import HillClimbSearch as PgmpyHillClimb

    method = {"bic": "bic-d"}.get(method, method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dag = PgmpyHillClimb(df).estimate(scoring_method=method, show_progress=False)
    return [tuple(e) for e in dag.edges()]


def _pgmpy_hill_climb_hash_seed_0(name, seeds):
    """pgmpy's graphs on 1,000 rows of ``name`` sampled with ``seeds``, found in
    a process with PYTHONHASHSEED=0 (pgmpy breaks ties by the order of a set,
    so this fixes its answer)."""
    pytest.importorskip("pgmpy")
    script = (
        "import json, sys, warnings; warnings.simplefilter('ignore');"
        "from pgmpy.estimators import HillClimbSearch;"
        "from bayeskit.datasets import load_network;"
        "net = load_network(sys.argv[1]);"
        "print(json.dumps([[list(e) for e in HillClimbSearch("
        "net.sample(1000, random_state=int(s))).estimate("
        "scoring_method='bic-d', show_progress=False).edges()]"
        " for s in sys.argv[2:]]))"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(root)}
    run = subprocess.run(
        [sys.executable, "-c", script, name, *map(str, seeds)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    return [[tuple(e) for e in edges] for edges in json.loads(run.stdout)]


@pytest.mark.parity
@pytest.mark.slow
@pytest.mark.parametrize("name, seeds", [("insurance", [0, 2, 7]), ("alarm", [13])])
def test_score_at_least_pgmpys_where_the_old_search_lost(name, seeds):
    # With PYTHONHASHSEED=0, pgmpy's greedy search reached a better local
    # optimum than the search that let rounding break ties (103.2, 7.3 and
    # 56.7 lower on insurance, 66.8 on alarm) on these samples
    # (benchmarks/structure_quality.py). With gains within rounding taken as
    # ties, the default search is at least as high, and the restarts keep
    # it so, whatever the random_state.
    network = load_network(name)
    for seed, theirs in zip(seeds, _pgmpy_hill_climb_hash_seed_0(name, seeds)):
        df = network.sample(1000, random_state=seed)
        their_score = score_structure(df, theirs)
        for kw in [{}] + [{"n_restarts": 20, "random_state": r} for r in range(3)]:
            ours = HillClimbSearch("bic-d", **kw).fit(df)
            assert ours.score_ >= their_score - 1e-8 * abs(their_score)


def _recovery(hc, true_edges):
    skeleton = _precision_recall(_skeleton(hc.edges_), _skeleton(true_edges))
    directed = _precision_recall(set(hc.edges_), set(true_edges))
    return skeleton, directed


# Skeleton (precision, recall) at least these on asia sampled with seed 11; the
# measured values are in the comments.
ASIA_RECOVERY = {
    ("bic", 1000): (0.85, 0.75),  # 0.86 / 0.75
    ("bic", 10000): (1.0, 1.0),  # 1.00 / 1.00
    # 0.54 / 0.88 with the tabu phase (max_tabu=10): a graph of higher BDeu,
    # further from asia's (0.62 / 1.00 by the greedy search alone).
    ("bdeu", 1000): (0.5, 0.85),
    ("bdeu", 10000): (0.7, 1.0),  # 0.73 / 1.00
    ("k2", 1000): (0.55, 0.6),  # 0.56 / 0.62
    ("k2", 10000): (0.75, 0.85),  # 0.78 / 0.88
}


@pytest.mark.parity
@pytest.mark.parametrize("n", [1000, 10000])
@pytest.mark.parametrize("method", ["bic", "bdeu", "k2"])
def test_asia_skeleton_is_recovered_and_score_at_least_pgmpys(n, method):
    df = _asia(n, seed=11)
    hc = HillClimbSearch(method).fit(df)
    (sk_prec, sk_rec), _ = _recovery(hc, ASIA.dag_.edges)
    min_prec, min_rec = ASIA_RECOVERY[method, n]
    assert sk_prec >= min_prec and sk_rec >= min_rec
    theirs = score_structure(df, _pgmpy_hill_climb(df, method), method)
    if method == "bic":
        assert hc.score_ >= theirs - 1e-8 * abs(theirs)
    else:
        # Both searches are greedy; BDeu is score equivalent, so the two
        # break exact ties between an edge and its reversal differently and
        # may stop at different local optima, and pgmpy's K2 is another
        # objective where parent states go unseen. Close, not always above.
        assert hc.score_ >= theirs - 1e-3 * abs(theirs)


@pytest.mark.parity
@pytest.mark.slow
@pytest.mark.parametrize("n", [1000, 10000])
def test_alarm_skeleton_is_recovered_and_score_at_least_pgmpys(n):
    alarm = load_network("alarm")
    df = alarm.sample(n, random_state=0)
    hc = HillClimbSearch("bic").fit(df)
    (sk_prec, sk_rec), (dir_prec, dir_rec) = _recovery(hc, alarm.dag_.edges)
    print(
        f"alarm bic n={n}: skeleton P/R {sk_prec:.2f}/{sk_rec:.2f}, "
        f"directed P/R {dir_prec:.2f}/{dir_rec:.2f}"
    )
    assert sk_rec >= (0.8 if n == 1000 else 0.9)
    assert sk_prec >= 0.8
    assert hc.score_ == pytest.approx(score_structure(df, hc.edges_), rel=1e-12)
    # pgmpy breaks exact ties (an edge or its reversal) by the order of a set,
    # which changes from process to process: its local optimum varies, ours
    # is usually better, not always (it was 0.4% lower in one run of 1,000
    # rows).
    theirs = score_structure(df, _pgmpy_hill_climb(df, "bic"), "bic")
    assert hc.score_ >= theirs - 1e-2 * abs(theirs)


# -- scikit-learn -------------------------------------------------------------
def test_clone_pickle_and_grid_search():
    import pickle

    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV

    df = _asia(2000)
    hc = HillClimbSearch("bdeu", equivalent_sample_size=5.0, max_indegree=2)
    assert clone(hc).get_params() == hc.get_params()
    hc.fit(df)
    again = pickle.loads(pickle.dumps(hc))
    assert again.edges_ == hc.edges_
    np.testing.assert_array_equal(again.score_samples(df), hc.score_samples(df))
    # score is the held-out mean log-likelihood, so cross-validation picks a
    # score or a constraint as for any density model.
    search = GridSearchCV(HillClimbSearch(), {"max_indegree": [0, 2]}, cv=3)
    search.fit(df)
    assert search.best_params_ == {"max_indegree": 2}


def test_each_family_is_counted_once_and_a_move_rescores_one_or_two(monkeypatch):
    calls = []
    counts = FamilyScores.counts

    def counting(self, node, parents):
        calls.append((node, frozenset(parents)))
        return counts(self, node, parents)

    monkeypatch.setattr(FamilyScores, "counts", counting)
    df = _asia(2000)
    d = df.shape[1]
    HillClimbSearch(tabu_length=0).fit(df)  # two searches, one cache
    assert len(calls) == len(set(calls))  # never the same family twice
    # The first sweep scores every family of one parent or none; each move
    # then rescores the toggles of one child (add, remove) or two (reverse).
    calls.clear()
    codes, cards = encode_frame(*split_frame(df))
    empty, free = np.zeros((d, d), bool), ~np.eye(d, dtype=bool)
    result = hill_climb(FamilyScores(codes, cards, "bic"), empty, free, empty)
    assert len(calls) == len(set(calls))
    assert d + d * (d - 1) <= len(calls) <= d + d * (d - 1) + 2 * d * result.n_iter


# -- the PC algorithm -----------------------------------------------------------
@pytest.mark.parity
@pytest.mark.parametrize("g", [False, True])
def test_ci_tests_equal_pgmpys(rng, g):
    pytest.importorskip("pgmpy")
    from pgmpy.estimators.CITests import chi_square, g_sq

    df = _asia(2000)
    names = list(df.columns)
    codes, cards = encode_frame(*split_frame(df))
    for _ in range(25):
        x, y, *z = (int(v) for v in rng.choice(8, 2 + rng.integers(0, 3), False))
        stat, dof, p = ci_test(codes, cards, x, y, z, g)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = (g_sq if g else chi_square)(
                names[x], names[y], [names[i] for i in z], df, boolean=False
            )
        assert dof == theirs[2]
        assert stat == pytest.approx(theirs[0], rel=1e-10, abs=1e-12)
        assert p == pytest.approx(theirs[1], rel=1e-8, abs=1e-12)


def _oracle(dag):
    """A conditional independence test with pgmpy's signature that answers
    by d-separation in ``dag``."""

    def test(x, y, z, significance_level):
        return dag.is_dseparated(x, y, list(z))

    return test


def _v_structures(edges):
    edges = set(edges)
    parents = {}
    for a, b in edges:
        parents.setdefault(b, set()).add(a)
    return {
        (frozenset((a, c)), b)
        for b, ps in parents.items()
        for a, c in itertools.combinations(sorted(ps), 2)
        if (a, c) not in edges and (c, a) not in edges
    }


@pytest.mark.parametrize("name", ["asia", "alarm"])
@pytest.mark.parametrize("variant", ["stable", "orig"])
def test_pc_with_a_d_separation_oracle_finds_the_equivalence_class(name, variant):
    network = load_network(name)
    df = network.sample(200, random_state=0)
    oracle = _oracle(network.dag_)
    pc = PC(oracle, variant=variant, max_cond_vars=len(df.columns)).fit(df)
    true = list(network.dag_.edges)
    assert _skeleton(pc.edges_) == _skeleton(true)
    assert _v_structures(pc.edges_) == _v_structures(true)
    assert _is_dag(pc.edges_, list(df.columns))
    assert set(pc.directed_edges_) <= set(pc.edges_)
    if name == "asia":
        assert set(pc.directed_edges_) == {
            ("tub", "either"),
            ("lung", "either"),
            ("either", "xray"),
            ("either", "dysp"),
            ("bronc", "dysp"),
        }
        assert _skeleton(pc.undirected_edges_) == _skeleton(
            [("asia", "tub"), ("smoke", "lung"), ("smoke", "bronc")]
        )


@pytest.mark.parity
@pytest.mark.slow
def test_pc_skeleton_equals_pgmpys():
    pytest.importorskip("pgmpy")
    from pgmpy.estimators import PC as PgmpyPC

    df = _asia(2000)
    pc = PC(max_cond_vars=3).fit(df)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        skeleton, _ = PgmpyPC(df).estimate(
            variant="parallel",
            ci_test="chi_square",
            max_cond_vars=3,
            return_type="skeleton",
            show_progress=False,
            n_jobs=1,
        )
    assert _skeleton(pc.edges_) == _skeleton(skeleton.edges())


def _check_pdag_and_dag(pdag, dag, adjacent):
    """The directed part of ``pdag`` is acyclic, ``dag`` is a DAG on the
    skeleton ``adjacent`` that keeps every edge ``pdag`` oriented."""
    nodes = list(range(len(adjacent)))
    directed = pdag & ~pdag.T
    assert _is_dag(list(zip(*np.nonzero(directed))), nodes)
    assert _is_dag(list(zip(*np.nonzero(dag))), nodes)
    np.testing.assert_array_equal(dag | dag.T, adjacent)
    assert not (directed & ~dag).any()


def test_conflicting_colliders_never_close_a_cycle():
    # Separating sets that ask for the colliders a -> b <- x1, b -> c <- x2
    # and c -> a <- x3 on the triangle a, b, c: all three would make the
    # cycle a -> b -> c -> a (finite samples can give such tests). The third
    # is refused, and a DAG follows.
    a, b, c, x1, x2, x3 = range(6)
    adjacent = np.zeros((6, 6), dtype=bool)
    for u, v in [(a, b), (b, c), (c, a), (x1, b), (x2, c), (x3, a)]:
        adjacent[u, v] = adjacent[v, u] = True
    sepsets = {
        frozenset((a, x1)): (),
        frozenset((b, x2)): (),
        frozenset((c, x3)): (),
        frozenset((c, x1)): (b,),
        frozenset((a, x2)): (c,),
        frozenset((b, x3)): (a,),
        **{frozenset(p): () for p in [(x1, x2), (x1, x3), (x2, x3)]},
    }
    pdag = orient(adjacent, sepsets)
    directed = pdag & ~pdag.T
    assert directed[a, b] and directed[x1, b] and directed[b, c] and directed[x2, c]
    assert not directed[c, a]
    _check_pdag_and_dag(pdag, extend_to_dag(pdag), adjacent)


def test_meek_rules_never_close_a_cycle_on_random_separating_sets():
    # Random skeletons and random (mostly inconsistent) separating sets: the
    # orientation stays acyclic and always extends to a DAG.
    rng = np.random.default_rng(7)
    for _ in range(300):
        d = int(rng.integers(4, 9))
        upper = np.triu(rng.random((d, d)) < 0.45, 1)
        adjacent = upper | upper.T
        sepsets = {}
        for u, v in itertools.combinations(range(d), 2):
            if not adjacent[u, v]:
                common = np.flatnonzero(adjacent[u] & adjacent[v])
                sepsets[frozenset((u, v))] = tuple(
                    int(w) for w in common if rng.random() < 0.3
                )
        pdag = orient(adjacent, sepsets)
        _check_pdag_and_dag(pdag, extend_to_dag(pdag), adjacent)


@pytest.mark.parametrize(
    "name, n, seed",
    [("alarm", 5000, 0), ("alarm", 5000, 1), ("insurance", 500, 0), ("child", 300, 0)],
)
def test_pc_returns_a_dag_when_tests_conflict(name, n, seed):
    # alarm at 5,000 rows, seeds 0 and 1, used to close the cycle EXPCO2 ->
    # ARTCO2 -> VENTALV -> VENTLUNG -> EXPCO2 and raise CycleError.
    df = load_network(name).sample(n, random_state=seed)
    pc = PC("chi_square", significance_level=0.01).fit(df)
    nodes = list(df.columns)
    assert _is_dag(pc.edges_, nodes)
    assert _is_dag(pc.directed_edges_, nodes)
    assert set(pc.directed_edges_) <= set(pc.edges_)
    assert _skeleton(pc.edges_) == _skeleton(
        [*pc.directed_edges_, *pc.undirected_edges_]
    )
    assert list(pc.network_.variables_) == nodes


def test_pc_on_asia_recovers_its_colliders():
    df = _asia(10000)
    pc = PC().fit(df)
    (precision, recall), _ = _recovery(pc, ASIA.dag_.edges)
    assert precision == 1.0 and recall >= 0.85  # asia - tub is weak
    assert {("tub", "either"), ("lung", "either")} <= set(pc.directed_edges_)
    ref = BayesianNetwork(pc.edges_).fit(df)
    np.testing.assert_allclose(pc.score_samples(df), ref.score_samples(df))
    g = PC("g_sq", significance_level=0.05).fit(df)
    assert _skeleton(g.edges_) >= _skeleton(pc.edges_) - {frozenset(("asia", "tub"))}


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"ci_test": "fisher"}, "ci_test"),
        ({"significance_level": 1.5}, "significance_level"),
        ({"max_cond_vars": -1}, "max_cond_vars"),
    ],
)
def test_pc_bad_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        PC(**params).fit(_asia(50))


# -- continuous columns ----------------------------------------------------------------
def _recorded(fit):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        fit()
    return record


@pytest.mark.parametrize(
    "make", [HillClimbSearch, PC, BayesianNetwork], ids=lambda c: c.__name__
)
def test_continuous_columns_warn_once_at_the_callers_line(make):
    from sklearn.datasets import load_iris

    iris = load_iris(as_frame=True).frame
    record = _recorded(lambda: make().fit(iris))
    assert len(record) == 1
    w = record[0]
    assert w.category is UserWarning and w.filename == __file__
    text = str(w.message)
    assert text.startswith(f"{make.__name__}: ")
    for column in iris.columns[:4]:  # the measurements, not the class codes
        n = iris[column].nunique()
        assert f"{column!r} ({n} distinct values)" in text
    assert "'target'" not in text
    # Binned, the same data are categories: silent.
    binned = iris.apply(
        lambda c: pd.cut(c, 3, labels=False) if c.dtype.kind == "f" else c
    )
    assert not _recorded(lambda: make().fit(binned))
    # Whole numbers in a float column (NaN makes pandas store codes as float)
    # and declared states are not suspect.
    codes = binned.astype(float)
    codes.iloc[0, 0] = np.nan
    assert not _recorded(lambda: make().fit(codes))
    if make is BayesianNetwork:
        states = {c: sorted(iris[c].unique()) for c in iris.columns[:4]}
        assert not _recorded(lambda: make(states=states).fit(iris))


def test_nearly_unique_column_warns_by_categorical_nbs_rule():
    # Integer identifiers: about as many distinct values as rows (the rule
    # of CategoricalNB's warning), once, at the caller's line.
    df = _asia(200).assign(patient=np.arange(200))
    record = _recorded(lambda: HillClimbSearch().fit(df))
    assert len(record) == 1 and record[0].filename == __file__
    assert "'patient' (200 distinct values in 200 rows)" in str(record[0].message)
    assert not _recorded(lambda: HillClimbSearch().fit(_asia(200)))


def test_tests_with_no_degree_of_freedom_do_not_reject_independence():
    # scipy's chi2_contingency gives p = 1 where a table has no two states on
    # both sides (pgmpy 1.1.2's tests give NaN there and keep the edge, a
    # documented difference): a constant column is isolated, a single row has
    # no edge, the rest is learnt as without them.
    df = load_network("asia").sample(3000, random_state=0)
    for g in (False, True):
        assert ci_test(
            np.array([[0, 1, 0, 1], [0, 0, 0, 0]]), np.array([2, 1]), 0, 1, [], g
        )[1:] == (0, 1.0)
    with_constant = df.assign(constant="x")
    assert not [e for e in PC().fit(with_constant).edges_ if "constant" in e]
    assert sorted(PC().fit(with_constant).edges_) == sorted(PC().fit(df).edges_)
    assert PC().fit(df.iloc[:1]).edges_ == []
