"""The graph objects' constructors refuse nonsense with a ValueError or
TypeError that names the parameter, and build the same object from every
spelling of a valid one (``2``, ``2.0``, ``np.int64(2)``)."""

import math
import os
import traceback

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bayeskit
from bayeskit.graph import (
    DAG,
    BayesNet,
    JunctionTree,
    LatentChain,
    LatentNode,
    LogFactor,
    TreeBP,
)

_BAYESKIT = os.path.dirname(bayeskit.__file__)

TWO = np.zeros(2)
CASES = {
    "LogFactor cardinality 2.5": (
        lambda: LogFactor(["a"], [2.5], TWO),
        "cardinalities",
    ),
    "LogFactor cardinality '2'": (
        lambda: LogFactor(["a"], ["2"], TWO),
        "cardinalities",
    ),
    "LogFactor cardinality True": (
        lambda: LogFactor(["a"], [True], np.zeros(1)),
        "cardinalities",
    ),
    "LogFactor cardinality nan": (
        lambda: LogFactor(["a"], [math.nan], np.zeros(1)),
        "cardinalities",
    ),
    "LogFactor cardinalities 2": (lambda: LogFactor(["a"], 2, TWO), "cardinalities"),
    "LogFactor variables 'ab'": (
        lambda: LogFactor("ab", [2, 2], np.zeros((2, 2))),
        "variables",
    ),
    "LogFactor variable [1]": (lambda: LogFactor([[1]], [2], TWO), "variables"),
    "LogFactor complex values": (lambda: LogFactor(["a"], [2], [1j, 0]), "log_values"),
    "LogFactor text values": (lambda: LogFactor(["a"], [2], ["x", "y"]), "log_values"),
    "LogFactor 70 variables": (
        lambda: LogFactor([f"v{i}" for i in range(70)], [1] * 70, 0.0),
        "variables",
    ),
    "from_dag of a dict": (lambda: JunctionTree.from_dag({"a": ["b"]}), "dag"),
    "from_dag of edges": (lambda: JunctionTree.from_dag([("a", "b")]), "dag"),
    "from_dag cardinality 2.5": (
        lambda: JunctionTree.from_dag(DAG([("a", "b")]), {"a": 2.5, "b": 2}),
        "cardinalities",
    ),
    "from_dag cardinalities list": (
        lambda: JunctionTree.from_dag(DAG([("a", "b")]), [2, 2]),
        "cardinalities",
    ),
    "from_graph of edges": (
        lambda: JunctionTree.from_graph([("a", "b")]),
        "adjacency",
    ),
    "from_graph neighbours 'bc'": (
        lambda: JunctionTree.from_graph({"a": "bc", "b": "a", "c": "a"}),
        "adjacency",
    ),
    "JunctionTree edge (0, 1.5)": (
        lambda: JunctionTree([["a"], ["a", "b"]], [(0, 1.5)]),
        "edges",
    ),
    "JunctionTree edge '01'": (
        lambda: JunctionTree([["a"], ["a", "b"]], ["01"]),
        "edges",
    ),
    "JunctionTree cliques 5": (lambda: JunctionTree(5), "cliques"),
    "JunctionTree clique 5": (lambda: JunctionTree([5]), "cliques"),
    "DAG edges 5": (lambda: DAG(5), "edges"),
    "DAG edges dict": (lambda: DAG({"a": "b"}), "edges"),
    "DAG nodes 5": (lambda: DAG(nodes=5), "nodes"),
    "TreeBP cardinalities list": (lambda: TreeBP([2, 2]), "cardinalities"),
    "TreeBP cardinality nan": (
        lambda: TreeBP({"a": math.nan}),
        "cardinalities",
    ),
    "TreeBP cardinality None": (lambda: TreeBP({"a": None}), "cardinalities"),
    "TreeBP edge of 3": (
        lambda: TreeBP({"a": 2, "b": 2}, [("a", "b", "c")], [np.ones((2, 2))]),
        "edges",
    ),
    "TreeBP edges 5": (lambda: TreeBP({"a": 2, "b": 2}, 5, []), "edges"),
    "TreeBP edge_potentials None": (
        lambda: TreeBP({"a": 2, "b": 2}, [("a", "b")], None),
        "edge_potentials",
    ),
    "TreeBP node_potentials list": (
        lambda: TreeBP({"a": 2}, node_potentials=[1, 2]),
        "node_potentials",
    ),
    "from_cpts entry 5": (lambda: TreeBP.from_cpts({"a": 2}, {"a": 5}), "cpts"),
    "from_cpts text table": (
        lambda: TreeBP.from_cpts({"a": 2}, {"a": (None, "xy")}),
        "cpts",
    ),
    "BayesNet dag dict": (lambda: BayesNet({"a": []}, {"a": 2}), "dag"),
    "BayesNet cards 2.5": (lambda: BayesNet(DAG(nodes=["a"]), {"a": 2.5}), "cards"),
    "BayesNet cards missing": (lambda: BayesNet(DAG(nodes=["a"]), {}), "cards"),
    "BayesNet log_cpds shape": (
        lambda: BayesNet(DAG(nodes=["a"]), {"a": 2}, {"a": np.zeros(3)}),
        "log_cpds",
    ),
    "LatentNode 2.5": (lambda: LatentNode(2.5), "n_states"),
    "LatentNode 0": (lambda: LatentNode(0), "n_states"),
    "LatentChain -1": (lambda: LatentChain(-1), "n_states"),
    "LatentChain '3'": (lambda: LatentChain("3"), "n_states"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_nonsense_is_refused_naming_the_parameter(case):
    make, name = CASES[case]
    with pytest.raises((ValueError, TypeError)) as info:
        make()
    assert name in str(info.value), str(info.value)
    innermost = traceback.extract_tb(info.value.__traceback__)[-1].filename
    assert os.path.abspath(innermost).startswith(_BAYESKIT), innermost


VALUES = st.one_of(
    st.integers(-3, 6),
    st.floats(min_value=-3, max_value=6),
    st.sampled_from([math.nan, math.inf, -math.inf, 2.0, 2.5]),
    st.sampled_from([True, False, "2", None, np.int64(3), np.float32(2.0), 2 + 0j]),
)


@settings(max_examples=200, deadline=None)
@given(value=VALUES)
def test_a_cardinality_is_a_positive_integer_however_it_is_spelled(value):
    """Accepted exactly when it is a real, non-bool number with a positive
    integral value; then every constructor holds that int."""
    valid = (
        not isinstance(value, (bool, np.bool_, str, complex))
        and value is not None
        and math.isfinite(value)
        and value == int(value)
        and value >= 1
    )
    k = int(value) if valid else None
    makers = [
        lambda: LogFactor(["a"], [value], np.zeros(k or 1)).cardinalities[0],
        lambda: TreeBP({"a": value}).cardinalities["a"],
        lambda: LatentNode(value).zeros().counts.shape[0],
        lambda: (
            JunctionTree.from_dag(DAG(nodes=["a"]), {"a": value}).variables[0] and k
        ),
        lambda: BayesNet(DAG(nodes=["a"]), {"a": value}).zeros().counts[0].shape[0],
    ]
    for make in makers:
        if valid:
            assert make() == k
        else:
            with pytest.raises((ValueError, TypeError)):
                make()


def test_valid_spellings_build_the_same_factor(rng):
    values = rng.normal(size=(2, 3))
    ref = LogFactor(["a", "b"], [2, 3], values)
    for cards in ([2.0, 3.0], [np.int64(2), np.uint8(3)], (2, np.float64(3.0))):
        f = LogFactor(("a", "b"), cards, values)
        assert f.cardinalities == ref.cardinalities
        assert all(type(c) is int for c in f.cardinalities)
        np.testing.assert_array_equal(f.log_values, ref.log_values)
