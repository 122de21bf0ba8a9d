"""Expert knowledge in hill climbing: a temporal order of tiers (pgmpy's
``temporal_order``, bnlearn's tiers) and pgmpy's ``ExpertKnowledge``, against
an exhaustive search over the DAGs the order allows and against pgmpy's
HillClimbSearch given the same order."""

import itertools
import logging
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayeskit import HillClimbSearch, score_structure
from bayeskit.datasets import load_network
from bayeskit.graph import DAG
from bayeskit.graph.dag import CycleError
from bayeskit.network._scores import FamilyScores, encode_frame, split_frame

ASIA = load_network("asia")
ASIA_DATA = ASIA.sample(3000, random_state=0)


def _chain_data():
    """a -> b -> c -> d with strong dependences (four variables)."""
    gen = np.random.default_rng(5)
    n = 3000
    a = gen.integers(0, 2, n)
    b = np.where(gen.random(n) < 0.85, a, 1 - a)
    c = np.where(gen.random(n) < 0.8, b, gen.integers(0, 3, n))
    d = np.where(gen.random(n) < 0.9, c % 2, 1 - c % 2)
    return pd.DataFrame({"a": a, "b": b, "c": c, "d": d}).astype(str)


CHAIN = _chain_data()


def _all_dags(nodes):
    pairs = list(itertools.permutations(nodes, 2))
    for mask in range(1 << len(pairs)):
        edges = [pairs[i] for i in range(len(pairs)) if mask >> i & 1]
        try:
            DAG(edges, nodes=nodes)
        except CycleError:
            continue
        yield edges


CHAIN_DAGS = list(_all_dags(list(CHAIN.columns)))  # 543 (Robinson 1973)


def _tiers(assignment, nodes):
    """Tiers from a tier number per variable (-1: in no tier)."""
    n_tiers = max(assignment, default=-1) + 1
    return [[v for v, t in zip(nodes, assignment) if t == k] for k in range(n_tiers)]


def _against_the_order(edges, tiers):
    tier = {v: k for k, members in enumerate(tiers) for v in members}
    return [(p, c) for p, c in edges if p in tier and c in tier and tier[p] > tier[c]]


def _best_allowed(method, tiers):
    """The best score over every DAG of the chain data that the order allows."""
    nodes = list(CHAIN.columns)
    index = {v: i for i, v in enumerate(nodes)}
    codes, cards = encode_frame(*split_frame(CHAIN))
    scores = FamilyScores(codes, cards, method)
    return max(
        scores.score({index[v]: [index[p] for p, c in e if c == v] for v in nodes})
        for e in CHAIN_DAGS
        if not _against_the_order(e, tiers)
    )


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(-1, 3), min_size=8, max_size=8),
    st.sampled_from(["bic", "bdeu", "k2"]),
)
def test_no_edge_goes_from_a_later_tier_to_an_earlier_one(assignment, method):
    nodes = list(ASIA_DATA.columns)
    tiers = _tiers(assignment, nodes)
    hc = HillClimbSearch(method, temporal_order=tiers).fit(ASIA_DATA)
    assert _against_the_order(hc.edges_, tiers) == []
    assert hc.score_ == pytest.approx(
        score_structure(ASIA_DATA, hc.edges_, method), rel=1e-12
    )
    # A tier of unconstrained variables changes nothing.
    if all(t == -1 for t in assignment):
        assert hc.edges_ == HillClimbSearch(method).fit(ASIA_DATA).edges_


def test_every_temporal_order_of_four_variables_gives_the_exhaustive_optimum():
    # Every assignment of a, b, c, d to three tiers or none (256 orders): BIC
    # is score-equivalent and the dependences strong, so the search reaches
    # the best of the DAGs the order allows, enumerated one by one.
    nodes = list(CHAIN.columns)
    for assignment in itertools.product(range(-1, 3), repeat=4):
        tiers = _tiers(assignment, nodes)
        hc = HillClimbSearch("bic", temporal_order=tiers).fit(CHAIN)
        assert _against_the_order(hc.edges_, tiers) == []
        assert hc.score_ == pytest.approx(_best_allowed("bic", tiers), rel=1e-12)


@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.integers(-1, 2), min_size=4, max_size=4),
    st.sampled_from(["bdeu", "k2"]),
)
def test_bdeu_reaches_and_k2_never_beats_the_exhaustive_optimum(assignment, method):
    # K2 is not score-equivalent: greedy search may stop below the optimum
    # (14 of the 256 orders), never above it.
    tiers = _tiers(assignment, list(CHAIN.columns))
    hc = HillClimbSearch(method, temporal_order=tiers).fit(CHAIN)
    best = _best_allowed(method, tiers)
    assert _against_the_order(hc.edges_, tiers) == []
    assert hc.score_ <= best + 1e-9 * abs(best)
    if method == "bdeu":
        assert hc.score_ == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_a_total_order_gives_pgmpys_graph(seed):
    # Every variable in its own tier: no reversal is legal, so no tie between
    # an edge and its reversal, and pgmpy's search finds the same graph.
    pgmpy_estimators = pytest.importorskip("pgmpy.estimators")
    df = ASIA.sample(2000, random_state=seed)
    tiers = [[v] for v in np.random.default_rng(seed).permutation(df.columns)]
    ours = HillClimbSearch("bic", temporal_order=tiers, max_tabu=0).fit(df)
    knowledge = pgmpy_estimators.ExpertKnowledge(temporal_order=tiers)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        logging.disable(logging.WARNING)
        try:
            dag = pgmpy_estimators.HillClimbSearch(df.astype("category")).estimate(
                "bic-d", expert_knowledge=knowledge, show_progress=False
            )
        finally:
            logging.disable(logging.NOTSET)
    assert set(ours.edges_) == set(dag.edges())
    # pgmpy's object, passed as it is, means the same, and is not changed.
    knowledge = pgmpy_estimators.ExpertKnowledge(temporal_order=tiers)
    hc = HillClimbSearch("bic", expert_knowledge=knowledge, max_tabu=0).fit(df)
    assert hc.edges_ == ours.edges_
    assert knowledge.forbidden_edges == set()


def test_expert_knowledge_joins_the_parameters():
    # Its forbidden and required edges and search space act as black_list,
    # fixed_edges and white_list do; a dict with pgmpy's keys is the same.
    df = ASIA_DATA
    black, fixed = [("either", "xray")], [("asia", "smoke")]
    white = [("smoke", "lung"), ("lung", "smoke"), ("asia", "smoke"), ("tub", "xray")]
    ref = HillClimbSearch(black_list=black, fixed_edges=fixed, white_list=white).fit(df)
    knowledge = {
        "forbidden_edges": black,
        "required_edges": fixed,
        "search_space": white,
    }
    hc = HillClimbSearch(expert_knowledge=knowledge).fit(df)
    assert hc.edges_ == ref.edges_
    assert ("asia", "smoke") in hc.edges_ and set(hc.edges_) <= set(white)
    hc = HillClimbSearch(
        black_list=black, expert_knowledge={"required_edges": fixed}
    ).fit(df)
    assert ("asia", "smoke") in hc.edges_ and ("either", "xray") not in hc.edges_
    # pgmpy's empty defaults (empty sets, one empty tier) constrain nothing.
    empty = {"forbidden_edges": set(), "search_space": set(), "temporal_order": [[]]}
    assert (
        HillClimbSearch(expert_knowledge=empty).fit(df).edges_
        == HillClimbSearch().fit(df).edges_
    )


def test_start_dag_edges_against_the_order_are_dropped():
    df = ASIA_DATA
    tiers = [["asia", "smoke"], ["tub", "lung", "bronc"], ["either"], ["xray", "dysp"]]
    start = [("dysp", "bronc"), ("smoke", "lung")]
    hc = HillClimbSearch(temporal_order=tiers, start_dag=start, max_iter=0).fit(df)
    assert hc.edges_ == [("smoke", "lung")]


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"temporal_order": [["asia"], ["nope"]]}, ValueError, "temporal_order names"),
        (
            {"temporal_order": [["asia", "tub"], ["tub"]]},
            ValueError,
            "temporal_order places 'tub' in tiers 0 and 1",
        ),
        ({"temporal_order": ["asia", "tub"]}, TypeError, "temporal_order must be"),
        (
            {"temporal_order": [["tub"], ["asia"]], "fixed_edges": [("asia", "tub")]},
            ValueError,
            "fixed_edges holds .* temporal_order forbids",
        ),
        (
            {
                "temporal_order": [["tub"], ["asia"]],
                "expert_knowledge": {"temporal_order": [["asia"]]},
            },
            ValueError,
            "temporal_order is given twice",
        ),
        (
            {"expert_knowledge": {"forbidden": [("asia", "tub")]}},
            ValueError,
            "expert_knowledge has unknown keys",
        ),
        ({"expert_knowledge": 3}, TypeError, "expert_knowledge must be"),
        (
            {
                "expert_knowledge": {
                    "required_edges": [("asia", "tub")],
                    "search_space": [("tub", "asia")],
                }
            },
            ValueError,
            "is not in expert_knowledge's search_space",
        ),
        (
            {"expert_knowledge": {"required_edges": [("asia", "nope")]}},
            ValueError,
            "expert_knowledge's required_edges names",
        ),
        (
            {
                "expert_knowledge": {
                    "required_edges": [("asia", "tub")],
                    "forbidden_edges": [("asia", "tub")],
                }
            },
            ValueError,
            "expert_knowledge's required_edges holds .* black_list or "
            "expert_knowledge's forbidden_edges forbids",
        ),
    ],
)
def test_bad_knowledge_raises_naming_the_parameter(params, error, match):
    with pytest.raises(error, match=match):
        HillClimbSearch(**params).fit(ASIA_DATA.head(100))
