"""Bayesian networks, Chow-Liu trees and TAN against enumeration of the joint.

Every query, MAP assignment, posterior per row and log-likelihood of random
networks (up to 12 nodes, 2-3 states, several disconnected parts) must equal
what the brute-force joint gives; CPTs learnt from data must be the
m-estimate by hand; pgmpy's VariableElimination must agree (parity).
"""

import dataclasses
import gc
import itertools
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

from bayeskit import (
    BayesianNetwork,
    CategoricalNB,
    TreeAugmentedNB,
    chow_liu_tree,
)
from bayeskit.datasets import flu_network
from bayeskit.graph import CycleError

TOL = 1e-10


# -- random networks and their joint ---------------------------------------------------
def random_network(rng, n_nodes, p_edge=0.35, max_parents=3, int_labels=False):
    """A hand-built network over v0..v{n-1}: random DAG, labels, CPTs."""
    names = [f"v{i}" for i in range(n_nodes)]
    rank = rng.permutation(n_nodes)
    edges = []
    for j in range(n_nodes):
        earlier = [i for i in range(n_nodes) if rank[i] < rank[j]]
        rng.shuffle(earlier)
        edges += [(names[i], names[j]) for i in earlier if rng.random() < p_edge][
            :max_parents
        ]
    states = {}
    for i, v in enumerate(names):
        k = int(rng.integers(2, 4))
        if int_labels or i % 3 == 0:
            states[v] = list(rng.permutation(10)[:k] + 1)  # unsorted integers
        else:
            states[v] = [f"{v}{s}" for s in "zyx"[:k]]
    bn = BayesianNetwork(edges, states=states)
    order = sorted(range(n_nodes), key=lambda i: rank[i])
    for i in order:
        v = names[i]
        pcards = [len(states[u]) for u, w in edges if w == v]
        table = rng.uniform(0.05, 1.0, size=(*pcards, len(states[v])))
        bn.set_cpd(v, table / table.sum(axis=-1, keepdims=True))
    return bn


def joint_of(bn):
    """The full joint as an array, one axis per variable (order of variables_)."""
    names = bn.variables_
    letters = {v: chr(ord("a") + i) for i, v in enumerate(names)}
    operands = []
    for v in names:
        scope = [*bn.dag_.parents(v), v]
        operands += [bn.cpds_[v], [names.index(u) for u in scope]]
    joint = np.einsum(*operands, list(range(len(names))))
    assert letters and np.isclose(joint.sum(), 1.0)
    return joint


def conditional(bn, joint, evidence):
    """P(hidden | evidence) over the hidden variables (in order) and P(evidence)."""
    idx = []
    for v in bn.variables_:
        if v in evidence:
            idx.append(bn.states_[v].tolist().index(evidence[v]))
        else:
            idx.append(slice(None))
    sub = joint[tuple(idx)]
    pe = sub.sum()
    hidden = [v for v in bn.variables_ if v not in evidence]
    return sub / pe, pe, hidden


def marginal_of(table, hidden, targets):
    axes = tuple(i for i, v in enumerate(hidden) if v not in targets)
    out = table.sum(axis=axes)
    kept = [v for v in hidden if v in targets]
    return np.transpose(out, [kept.index(v) for v in targets])


def random_evidence(rng, bn, n_max=None):
    names = bn.variables_
    k = int(rng.integers(0, len(names) if n_max is None else n_max))
    chosen = rng.choice(len(names), size=k, replace=False)
    return {
        names[i]: bn.states_[names[i]].tolist()[rng.integers(len(bn.states_[names[i]]))]
        for i in chosen
    }


# -- exact inference -------------------------------------------------------------------
def test_queries_match_enumeration(rng):
    n_checked = 0
    for trial in range(22):
        bn = random_network(rng, 2 + trial % 11, p_edge=0.2 + 0.3 * (trial % 3) / 2)
        joint = joint_of(bn)
        for _ in range(4):
            evidence = random_evidence(rng, bn)
            cond, _, hidden = conditional(bn, joint, evidence)
            if not hidden:
                continue
            k = int(rng.integers(1, min(3, len(hidden)) + 1))
            targets = list(rng.choice(hidden, size=k, replace=False))
            got = bn.query(targets, evidence=evidence)
            expected = marginal_of(cond, hidden, targets)
            np.testing.assert_allclose(got.to_numpy(), expected.ravel(), atol=TOL)
            assert list(got.index.names) == targets
            n_checked += 1
            # A single variable by name gives the same as a list of one.
            single = bn.query(targets[0], evidence=evidence)
            np.testing.assert_allclose(
                single.to_numpy(), marginal_of(cond, hidden, targets[:1]), atol=TOL
            )
            assert list(single.index) == bn.states_[targets[0]].tolist()
    assert n_checked > 60


def test_map_queries_match_enumeration(rng):
    for trial in range(22):
        bn = random_network(rng, 2 + trial % 11)
        joint = joint_of(bn)
        for _ in range(3):
            evidence = random_evidence(rng, bn)
            cond, _, hidden = conditional(bn, joint, evidence)
            if not hidden:
                assert bn.map_query(evidence=evidence) == {}
                continue
            best = np.unravel_index(np.argmax(cond), cond.shape)
            expected = {v: bn.states_[v].tolist()[s] for v, s in zip(hidden, best)}
            assert bn.map_query(evidence=evidence) == expected
            # Marginal MAP of a subset: argmax of its joint posterior.
            k = int(rng.integers(1, len(hidden) + 1))
            targets = list(rng.choice(hidden, size=k, replace=False))
            table = marginal_of(cond, hidden, targets)
            best = np.unravel_index(np.argmax(table), table.shape)
            expected = {v: bn.states_[v].tolist()[s] for v, s in zip(targets, best)}
            assert bn.map_query(targets, evidence=evidence) == expected


def test_map_query_is_not_per_variable_maxima():
    # The marginals' argmaxes (a=0, b=1) have joint probability zero; the
    # joint's argmax is (a=0, b=0).
    bn = BayesianNetwork([("a", "b")], states={"a": [0, 1, 2], "b": [0, 1]})
    bn.set_cpd("a", [0.4, 0.3, 0.3])
    bn.set_cpd("b", [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    assert bn.query("a").idxmax() == 0 and bn.query("b").idxmax() == 1
    assert bn.map_query() == {"a": 0, "b": 0}
    assert bn.map_query(["a", "b"]) == {"a": 0, "b": 0}
    assert bn.map_query(["b"]) == {"b": 1}


def frame_with_missing(rng, bn, n_rows, p_missing=0.4):
    df = bn.sample(n_rows, random_state=int(rng.integers(1 << 30)))
    df = df.astype(object)
    mask = rng.random(df.shape) < p_missing
    df = df.mask(mask, None)
    return df


def test_batched_methods_match_enumeration(rng):
    for trial in range(10):
        bn = random_network(rng, 3 + trial)
        joint = joint_of(bn)
        df = frame_with_missing(rng, bn, 30)
        ll = bn.log_likelihood(df)
        proba_all = bn.predict_proba(df)
        target = bn.variables_[trial % len(bn.variables_)]
        proba = bn.predict_proba(df, target)
        filled = bn.predict(df)
        assert filled.index.equals(df.index)
        for r, (_, row) in enumerate(df.iterrows()):
            evidence = {v: s for v, s in row.items() if not pd.isna(s)}
            cond, pe, hidden = conditional(bn, joint, evidence)
            np.testing.assert_allclose(ll[r], np.log(pe), atol=TOL)
            for v in bn.variables_:
                got = proba_all.loc[df.index[r], v].to_numpy()
                if v in evidence:
                    expected = np.eye(len(bn.states_[v]))[
                        bn.states_[v].tolist().index(evidence[v])
                    ]
                else:
                    expected = marginal_of(cond, hidden, [v])
                np.testing.assert_allclose(got, expected, atol=TOL)
                if v == target:
                    np.testing.assert_allclose(proba.iloc[r].to_numpy(), got)
            if hidden:
                best = np.unravel_index(np.argmax(cond), cond.shape)
                for v, s in zip(hidden, best):
                    assert filled.loc[df.index[r], v] == bn.states_[v].tolist()[s]
            for v in evidence:
                assert filled.loc[df.index[r], v] == evidence[v]
        assert list(proba.columns) == bn.states_[target].tolist()
        np.testing.assert_allclose(bn.score(df), ll.mean())


def test_kept_patterns_are_few_objects_and_give_the_same_answers(rng, monkeypatch):
    """Rows of many patterns: every compiled pattern is kept (under a bound
    above what these rows need), as tuples and arrays mostly (little for the
    garbage collector to walk), and a second call that finds them all gives
    the same answers."""
    import bayeskit.graph.network as graph_network

    monkeypatch.setattr(graph_network, "MAX_PATTERNS", 100_000)
    bn = random_network(rng, 14, p_edge=0.4)
    df = frame_with_missing(rng, bn, 300, p_missing=0.3)
    for method in ("log_likelihood", "predict_proba", "predict"):
        getattr(bn, method)(df.iloc[:2])  # the network's tree, lazy imports
        bn._engine_._patterns.clear()
        gc.collect()
        before = len(gc.get_objects())
        first = getattr(bn, method)(df)
        gc.collect()
        n_patterns = len(bn._engine_._patterns)
        assert n_patterns > 100
        assert (len(gc.get_objects()) - before) / n_patterns < 40
        second = getattr(bn, method)(df)
        if method == "log_likelihood":
            np.testing.assert_array_equal(first, second)
        else:
            pd.testing.assert_frame_equal(first, second)


def test_disconnected_network_and_isolated_variables(rng):
    edges = [("a", "b"), ("c", "d"), ("c", "e"), ("d", "f"), ("e", "f")]
    states = {v: ["0", "1", "2"][: 2 + (i % 2)] for i, v in enumerate("abcdefg")}
    bn = BayesianNetwork(edges, states=states)
    for v in ["a", "c", "g", "b", "d", "e", "f"]:
        pcards = [len(states[u]) for u, w in edges if w == v]
        t = rng.uniform(0.1, 1, size=(*pcards, len(states[v])))
        bn.set_cpd(v, t / t.sum(-1, keepdims=True))
    tree = bn.junction_tree()
    assert len(tree.edges) < len(tree.cliques) - 1  # a forest
    joint = joint_of(bn)
    for evidence in [{}, {"b": "1"}, {"f": "0", "a": "1"}, {"g": "1", "d": "1"}]:
        cond, pe, hidden = conditional(bn, joint, evidence)
        for targets in (["a"], ["a", "f"], ["g", "c"]):
            if set(targets) & set(evidence):
                continue
            np.testing.assert_allclose(
                bn.query(targets, evidence).to_numpy(),
                marginal_of(cond, hidden, targets).ravel(),
                atol=TOL,
            )
        best = np.unravel_index(np.argmax(cond), cond.shape)
        assert bn.map_query(evidence=evidence) == {
            v: bn.states_[v].tolist()[s] for v, s in zip(hidden, best)
        }
        row = pd.DataFrame([evidence]) if evidence else pd.DataFrame({"a": [None]})
        np.testing.assert_allclose(bn.log_likelihood(row), [np.log(pe)], atol=TOL)


def random_query(rng, bn, evidence):
    hidden = [v for v in bn.variables_ if v not in evidence]
    k = int(rng.integers(1, min(3, len(hidden)) + 1))
    return list(rng.choice(hidden, size=k, replace=False))


def test_many_patterns_share_the_network_tree_and_new_cpts_reset_it(rng):
    bn = random_network(rng, 11, p_edge=0.4)
    for step in range(3):
        joint = joint_of(bn)
        seen = []
        for _ in range(25):  # evidence on many different subsets
            evidence = random_evidence(rng, bn)
            cond, _, hidden = conditional(bn, joint, evidence)
            if not hidden:
                continue
            targets = random_query(rng, bn, evidence)
            got = bn.query(targets, evidence=evidence).to_numpy()
            expected = marginal_of(cond, hidden, targets).ravel()
            np.testing.assert_allclose(got, expected, atol=TOL)
            seen.append((targets, evidence, got))
        engine = bn._engine_
        network = engine._networks[()]
        assert len(engine._patterns) > 10
        # Asked again, in another order: the kept plans give the same answers.
        for targets, evidence, got in reversed(seen):
            np.testing.assert_allclose(bn.query(targets, evidence).to_numpy(), got)
        assert engine._networks[()] is network  # one tree for every pattern
        # New CPTs: every kept tree, message and plan is dropped, so the same
        # queries see them.
        if step == 0:
            v = bn.variables_[int(rng.integers(len(bn.variables_)))]
            table = rng.uniform(0.05, 1.0, size=bn.cpds_[v].shape)
            bn.set_cpd(v, table / table.sum(axis=-1, keepdims=True))
        elif step == 1:
            bn = BayesianNetwork(bn.dag_.edges, states=bn.states_).fit(
                bn.sample(300, random_state=int(rng.integers(1 << 30)))
            )
            _ = [bn.query(t, e) for t, e, _ in seen]  # fill the caches
            bn.partial_fit(bn.sample(300, random_state=int(rng.integers(1 << 30))))
        joint = joint_of(bn)
        for targets, evidence, _ in seen:
            cond, _, hidden = conditional(bn, joint, evidence)
            np.testing.assert_allclose(
                bn.query(targets, evidence=evidence).to_numpy(),
                marginal_of(cond, hidden, targets).ravel(),
                atol=TOL,
            )


def test_query_looks_only_at_the_evidence_it_depends_on():
    bn = BayesianNetwork(
        [("a", "t"), ("a", "b")], states={v: [0, 1] for v in ["a", "t", "b"]}
    )
    bn.set_cpd("a", [1.0, 0.0]).set_cpd("t", [[0.9, 0.1], [0.2, 0.8]])
    bn.set_cpd("b", [[1.0, 0.0], [0.5, 0.5]])
    # b = 1 is impossible (a is 0), but given a, t does not depend on b.
    np.testing.assert_allclose(bn.query("t", {"a": 0, "b": 1}), [0.9, 0.1])
    with pytest.raises(ValueError, match="probability zero"):
        bn.query("t", {"a": 1})
    with pytest.raises(ValueError, match="probability zero"):
        bn.query("t", {"b": 1})
    np.testing.assert_allclose(bn.query("b", {"t": 1}), [1.0, 0.0])


# -- the flu network -------------------------------------------------------------------
def test_flu_network():
    bn = flu_network()
    assert bn.variables_ == [
        "flu",
        "fever",
        "sinus_infection",
        "temperature",
        "sinus_swelling",
        "headache",
    ]
    assert bn.n_parameters() == 13  # against 2**6 - 1 = 63 for the full table
    joint = joint_of(bn)
    evidence = {"headache": "yes", "temperature": "high"}
    cond, _, hidden = conditional(bn, joint, evidence)
    answer = bn.query("flu", evidence=evidence)
    np.testing.assert_allclose(answer.to_numpy(), marginal_of(cond, hidden, ["flu"]))
    assert answer["yes"] > bn.query("flu")["yes"]  # the evidence raises P(flu)
    assert bn.markov_blanket("fever") == {
        "flu",
        "temperature",
        "headache",
        "sinus_swelling",
    }
    moral = bn.moral_graph()
    assert "sinus_swelling" in moral["fever"]  # married parents of headache
    assert bn.is_dseparated("temperature", "headache", given="fever")
    assert not bn.is_dseparated("temperature", "sinus_swelling", given="headache")
    tree = bn.junction_tree()
    assert all(isinstance(c, frozenset) for c in tree.cliques)
    for v in bn.variables_:
        family = {v, *bn.dag_.parents(v)}
        assert any(family <= c for c in tree.cliques)
    assert all(isinstance(i, int) and isinstance(j, int) for i, j in tree.edges)


def test_dseparation_agrees_with_independence_in_queries(rng):
    """When the DAG separates x from y given z, P(x | y, z) = P(x | z) by query."""
    n_separated = n_connected = 0
    for _ in range(6):
        bn = random_network(rng, 5, p_edge=0.5)
        joint = joint_of(bn)
        names = bn.variables_
        for x, y in itertools.combinations(names, 2):
            rest = [v for v in names if v not in (x, y)]
            z = list(rng.choice(rest, size=int(rng.integers(0, 3)), replace=False))
            ev = {v: bn.states_[v].tolist()[0] for v in z}
            gap = 0.0
            pz = conditional(bn, joint, ev)[1]
            for y_state in bn.states_[y].tolist():
                if conditional(bn, joint, {**ev, y: y_state})[1] < 1e-12 * pz:
                    continue
                both = bn.query(x, {**ev, y: y_state}).to_numpy()
                gap = max(gap, np.abs(both - bn.query(x, ev).to_numpy()).max())
            if bn.is_dseparated(x, y, z):
                n_separated += 1
                assert gap < 1e-10
            else:
                n_connected += 1
                assert gap > 1e-6
    assert n_separated > 5 and n_connected > 5


# -- learning --------------------------------------------------------------------------
def test_cpts_equal_the_m_estimate_by_hand():
    df = pd.DataFrame(
        {
            "rain": ["no", "yes", "yes", "no", "no", None, "yes", "no"],
            "wet": ["dry", "wet", "wet", "dry", "wet", "wet", None, "dry"],
        }
    )
    # Available-case counts (EM's start, see test_bayesnet_missing.py).
    avail = {"missing": "available"}
    bn = BayesianNetwork([("rain", "wet")], m=2.0, p={"wet": [0.25, 0.75]}, **avail)
    bn.fit(df)
    assert bn.states_["rain"].tolist() == ["no", "yes"]  # sorted
    assert bn.states_["wet"].tolist() == ["dry", "wet"]
    # P(rain): 7 observed values, 4 no and 3 yes; uniform p, m = 2.
    np.testing.assert_allclose(bn.cpds_["rain"], [(4 + 1) / 9, (3 + 1) / 9])
    # P(wet | rain): rows with both observed; no: 3 dry 1 wet, yes: 0 dry 2 wet.
    np.testing.assert_allclose(
        bn.cpds_["wet"],
        [
            [(3 + 0.5) / 6, (1 + 1.5) / 6],
            [(0 + 0.5) / 4, (2 + 1.5) / 4],
        ],
    )
    # m = 0: maximum likelihood, with a zero.
    ml = BayesianNetwork([("rain", "wet")], m=0, **avail).fit(df)
    np.testing.assert_allclose(ml.cpds_["wet"], [[0.75, 0.25], [0.0, 1.0]])
    assert (
        ml.log_likelihood(pd.DataFrame({"rain": ["yes"], "wet": ["dry"]}))[0] == -np.inf
    )
    # Per-variable m.
    mixed = BayesianNetwork([("rain", "wet")], m={"rain": 0.0}, **avail).fit(df)
    np.testing.assert_allclose(mixed.cpds_["rain"], [4 / 7, 3 / 7])
    np.testing.assert_allclose(mixed.cpds_["wet"][1], [0.5 / 3, 2.5 / 3])


def test_learning_recovers_the_cpts_of_a_known_network():
    truth = flu_network()
    df = truth.sample(200_000, random_state=7)
    states = {v: s.tolist() for v, s in truth.states_.items()}
    learnt = BayesianNetwork(truth.dag_.edges, states=states).fit(df)
    for v in truth.variables_:
        np.testing.assert_allclose(learnt.cpds_[v], truth.cpds_[v], atol=0.01)
    # Without declared states the labels are sorted ("high" before "normal",
    # which the known network declares the other way); the tables are the
    # same once aligned by label.
    free = BayesianNetwork(truth.dag_.edges).fit(df)
    for v in truth.variables_:
        got, expected = free.get_cpd(v), truth.get_cpd(v)
        if expected.ndim == 2:
            got = got.reindex(columns=expected.columns)
        got = got.reindex(index=expected.index)
        np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), atol=0.01)


def test_partial_fit_and_weights_are_additive(rng):
    truth = random_network(rng, 6)
    df = frame_with_missing(rng, truth, 300, p_missing=0.2)
    states = {v: s.tolist() for v, s in truth.states_.items()}
    edges = truth.dag_.edges
    kw = {"states": states, "missing": "available"}  # counts that add
    full = BayesianNetwork(edges, **kw).fit(df)
    chunked = BayesianNetwork(edges, **kw)
    for chunk in np.array_split(np.arange(len(df)), 4):
        chunked.partial_fit(df.iloc[chunk])
    for v in full.variables_:
        np.testing.assert_allclose(chunked.cpds_[v], full.cpds_[v], rtol=1e-12)
    w = rng.integers(0, 3, size=len(df))
    weighted = BayesianNetwork(edges, **kw).fit(df, sample_weight=w)
    repeated = BayesianNetwork(edges, **kw).fit(df.loc[df.index.repeat(w)])
    for v in full.variables_:
        np.testing.assert_allclose(weighted.cpds_[v], repeated.cpds_[v], rtol=1e-12)
    total = sum(c.sum() for c in (full.stats_ + full.stats_).counts)
    assert total == 2 * sum(c.sum() for c in full.stats_.counts)


def test_fit_does_not_mutate_and_keeps_labels():
    df = pd.DataFrame(
        {
            "size": pd.Categorical(["s", "l", "s", None], categories=["s", "m", "l"]),
            "n": [3, 1, 3, 2],
            "flag": [True, False, True, True],
        }
    )
    before = df.copy()
    bn = BayesianNetwork([("size", "n")]).fit(df)
    pd.testing.assert_frame_equal(df, before)
    assert bn.states_["size"].tolist() == ["s", "m", "l"]  # the categories' order
    assert bn.states_["n"].tolist() == [1, 2, 3]  # sorted, as pgmpy sorts them
    assert bn.states_["flag"].tolist() == [False, True]
    declared = BayesianNetwork(states={"n": [1, 2, 3, 4]}).fit(df)
    assert declared.states_["n"].tolist() == [1, 2, 3, 4]
    assert declared.cpds_["n"].shape == (4,)
    filled = bn.predict(df)
    assert filled["size"].dtype == df["size"].dtype
    assert filled["size"].iloc[3] in {"s", "m", "l"}
    pd.testing.assert_frame_equal(df, before)


def test_predict_on_arrays_keeps_numbers():
    X = np.array([[0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    bn = BayesianNetwork([(0, 1)]).fit(X)
    filled = bn.predict(np.array([[np.nan, 1.0], [1.0, np.nan]]))
    assert filled.dtype == float
    assert not np.isnan(filled).any()
    proba = bn.predict_proba(np.array([[np.nan, 1.0]]), 0)
    np.testing.assert_allclose(proba.to_numpy().sum(), 1.0)


# -- parameters have effects -----------------------------------------------------------
def test_every_parameter_has_an_effect():
    df = pd.DataFrame({"a": list("xyxxyx"), "b": list("uvuuvv")})
    plain = BayesianNetwork().fit(df)
    chained = BayesianNetwork([("a", "b")]).fit(df)
    assert chained.score(df) != plain.score(df)
    assert not np.allclose(BayesianNetwork(m=5).fit(df).cpds_["a"], plain.cpds_["a"])
    skewed = BayesianNetwork(p={"a": [0.9, 0.1]}).fit(df)
    assert skewed.cpds_["a"][0] > plain.cpds_["a"][0]
    declared = BayesianNetwork(states={"a": ["y", "x", "z"]}).fit(df)
    assert declared.states_["a"].tolist() == ["y", "x", "z"]
    unseen = pd.DataFrame({"a": ["w"], "b": ["u"]})
    with pytest.raises(ValueError, match=r"'w'.*handle_unknown"):
        plain.score(unseen)
    ignoring = BayesianNetwork(handle_unknown="ignore").fit(df)
    np.testing.assert_allclose(
        ignoring.log_likelihood(unseen), np.log(ignoring.cpds_["b"][0])
    )
    assert ignoring.predict(unseen)["a"].iloc[0] in {"x", "y"}


# -- bad input -------------------------------------------------------------------------
def test_bad_input_raises_clear_errors():
    df = pd.DataFrame({"a": list("xyxy"), "b": list("uvuv"), "c": list("pqqp")})
    with pytest.raises(CycleError, match="a -> b -> c -> a"):
        BayesianNetwork([("a", "b"), ("b", "c"), ("c", "a")]).fit(df)
    with pytest.raises(ValueError, match=r"'zz'.*not columns of X"):
        BayesianNetwork([("a", "zz")]).fit(df)
    bn = BayesianNetwork([("a", "b")]).fit(df)
    with pytest.raises(ValueError, match="unknown variable 'q'"):
        bn.query("a", evidence={"q": "x"})
    with pytest.raises(ValueError, match="'b' the state 'w'"):
        bn.query("a", evidence={"b": "w"})
    with pytest.raises(ValueError, match="unknown variable 'q'"):
        bn.query("q")
    with pytest.raises(ValueError, match="both queried and observed"):
        bn.query("a", evidence={"a": "x"})
    with pytest.raises(ValueError, match="twice"):
        bn.query(["a", "a"])
    with pytest.raises(ValueError, match="variable 'c' has state 'r'"):
        bn.predict(pd.DataFrame({"a": ["x"], "b": [None], "c": ["r"]}))
    with pytest.raises(ValueError, match="not among its states"):
        bn.partial_fit(pd.DataFrame({"a": ["x"], "b": ["new"], "c": ["p"]}))
    with pytest.raises(TypeError, match="evidence must be a dict"):
        bn.query("a", evidence=[("b", "u")])
    with pytest.raises(ValueError, match="weight"):
        BayesianNetwork().fit(df, sample_weight=np.zeros(4))
    with pytest.raises(ValueError, match="states names"):
        BayesianNetwork(states={"zz": [1, 2]}).fit(df)
    with pytest.raises(ValueError, match="m names"):
        BayesianNetwork(m={"zz": 1.0}).fit(df)
    with pytest.raises(ValueError, match="p\\['a'\\]"):
        BayesianNetwork(p={"a": [0.5, 0.2]}).fit(df)
    with pytest.raises(ValueError, match="repeat"):
        BayesianNetwork(states={"a": ["x", "x"]}).fit(df)


def test_set_cpd_validates_and_builds_a_network():
    bn = BayesianNetwork([("a", "b")], states={"a": ["lo", "hi"]})
    with pytest.raises(ValueError, match="sum to one"):
        bn.set_cpd("a", [0.5, 0.6])
    with pytest.raises(ValueError, match="shape"):
        bn.set_cpd("a", [0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match=">= 0"):
        bn.set_cpd("a", [1.5, -0.5])
    bn.set_cpd("a", [0.3, 0.7])
    with pytest.raises(ValueError, match="no CPD for variables \\['b'\\]"):
        bn.query("a")
    with pytest.raises(ValueError, match="shape"):
        bn.set_cpd("b", [[0.5, 0.5]], states=["no", "yes"])
    bn.set_cpd("b", [[0.9, 0.1], [0.2, 0.8]], states=["no", "yes"])
    np.testing.assert_allclose(bn.query("b")["yes"], 0.3 * 0.1 + 0.7 * 0.8)
    cpd = bn.get_cpd("b")
    assert list(cpd.index) == ["lo", "hi"] and list(cpd.columns) == ["no", "yes"]
    bn.set_cpd("b", cpd.to_numpy())  # round trip through get_cpd
    # A parent whose states are unknown must come first.
    other = BayesianNetwork([("x", "y")])
    with pytest.raises(ValueError, match="parents of 'y'"):
        other.set_cpd("y", [[0.5, 0.5], [0.5, 0.5]])
    other.set_cpd("x", [0.5, 0.5]).set_cpd("y", [[0.5, 0.5], [0.1, 0.9]])
    assert other.states_["x"].tolist() == [0, 1]
    with pytest.raises(ValueError, match="already"):
        other.set_cpd("x", [0.5, 0.5], states=["p", "q"])
    # The estimator parameters are left as given.
    assert bn.get_params()["states"] == {"a": ["lo", "hi"]}


def test_zero_probability_evidence():
    bn = BayesianNetwork([("a", "b")], states={"a": [0, 1], "b": [0, 1]})
    bn.set_cpd("a", [1.0, 0.0]).set_cpd("b", [[1.0, 0.0], [0.5, 0.5]])
    with pytest.raises(ValueError, match="probability zero"):
        bn.query("a", evidence={"b": 1})
    with pytest.raises(ValueError, match="probability zero"):
        bn.map_query(evidence={"b": 1})
    df = pd.DataFrame({"a": [None, None], "b": [1, 0]})
    with pytest.warns(RuntimeWarning, match="probability zero"):
        proba = bn.predict_proba(df, "a")
    np.testing.assert_allclose(proba.to_numpy(), [[0.5, 0.5], [1.0, 0.0]])
    assert np.isneginf(bn.log_likelihood(df)[0])
    assert not np.isnan(bn.log_likelihood(df)).any()


# -- sampling, pickling, information criteria ------------------------------------------
def test_sample_pickle_and_criteria(rng):
    bn = flu_network()
    a = bn.sample(50, random_state=3)
    b = bn.sample(50, random_state=np.random.default_rng(3))
    assert a.equals(bn.sample(50, random_state=3))
    assert list(a.columns) == bn.variables_ and len(b) == 50
    restored = pickle.loads(pickle.dumps(bn))
    ev = {"headache": "yes"}
    np.testing.assert_allclose(restored.query("flu", ev), bn.query("flu", ev))
    df = bn.sample(500, random_state=1)
    fitted = BayesianNetwork(bn.dag_.edges).fit(df)
    empty = BayesianNetwork().fit(df)
    n = len(df)
    ll = fitted.log_likelihood(df).sum()
    np.testing.assert_allclose(fitted.bic(df), -2 * ll + 13 * np.log(n))
    np.testing.assert_allclose(fitted.aic(df), -2 * ll + 26)
    assert empty.n_parameters() == 6
    with pytest.raises(ValueError, match="n_samples"):
        bn.sample(0)


# -- Chow-Liu and TAN ------------------------------------------------------------------
def tree_data(rng, n, d, flip=0.1, n_classes=None):
    """Features on a chain x0 - x1 - ... (each a noisy copy of its parent),
    optionally with the class shifting the root."""
    y = None if n_classes is None else rng.integers(n_classes, size=n)
    cols = []
    root = rng.integers(3, size=n) if y is None else (y + (rng.random(n) < 0.3)) % 3
    cols.append(root)
    for j in range(1, d):
        parent = cols[j - 1]
        noise = rng.random(n) < flip
        cols.append(np.where(noise, rng.integers(3, size=n), (parent + 1) % 3))
    X = np.column_stack(cols)
    return X, y


def test_chow_liu_recovers_a_chain(rng):
    X, _ = tree_data(rng, 5000, 5)
    perm = [3, 0, 4, 1, 2]
    df = pd.DataFrame(X[:, perm], columns=[f"x{j}" for j in perm])
    edges = chow_liu_tree(df)
    undirected = {frozenset(e) for e in edges}
    assert undirected == {frozenset((f"x{j}", f"x{j + 1}")) for j in range(4)}
    assert edges[0][0] == "x3"  # the first column is the root
    assert chow_liu_tree(df, root="x0")[0][0] == "x0"
    with pytest.raises(ValueError, match="root"):
        chow_liu_tree(df, root="nope")
    bn = BayesianNetwork(edges).fit(df)
    assert bn.score(df) > BayesianNetwork().fit(df).score(df)


def tan_data(rng, n):
    """Class -> every feature, and each feature a near copy of the previous one."""
    y = rng.integers(2, size=n)
    cols = [np.where(rng.random(n) < 0.7, y, 1 - y)]
    for _ in range(5):
        prev = cols[-1]
        copy = np.where(rng.random(n) < 0.92, prev, rng.integers(2, size=n))
        cols.append(np.where(rng.random(n) < 0.05, y, copy))
    return np.column_stack(cols), y


def test_tan_beats_naive_bayes_on_dependent_features(rng):
    X, y = tan_data(rng, 4000)
    Xt, yt = tan_data(rng, 4000)
    tan = TreeAugmentedNB().fit(X, y)
    nb = CategoricalNB().fit(X, y)

    def log_loss(clf):
        p = clf.predict_proba(Xt)[np.arange(len(yt)), yt]
        return -np.mean(np.log(p))

    assert log_loss(tan) < log_loss(nb) - 0.05
    # The learnt tree is the chain of copies.
    parents = tan.feature_parents_
    assert {frozenset((j, p)) for j, p in enumerate(parents) if p >= 0} == {
        frozenset((j, j + 1)) for j in range(5)
    }


def test_tan_marginalises_missing_features_exactly(rng):
    X, y = tan_data(rng, 500)
    labels = np.array(["a", "b"])[y]
    tan = TreeAugmentedNB(m=2.0).fit(X, labels)
    row = X[:1].astype(float)
    row[0, [1, 3]] = np.nan
    got = tan.predict_joint_log_proba(row)[0]
    # Brute force: sum the complete-row joint over the missing features' values.
    filled = []
    for a, b in itertools.product(range(2), repeat=2):
        r = X[:1].copy()
        r[0, 1], r[0, 3] = a, b
        filled.append(tan.predict_joint_log_proba(r)[0])
    np.testing.assert_allclose(got, logsumexp(filled, axis=0), atol=TOL)


def test_tan_partial_fit_weights_and_parameters(rng):
    X, y = tan_data(rng, 600)
    full = TreeAugmentedNB().fit(X, y)
    chunked = TreeAugmentedNB()
    for chunk in np.array_split(np.arange(600), 3):
        chunked.partial_fit(X[chunk], y[chunk], classes=[0, 1])
    np.testing.assert_allclose(chunked.predict_proba(X), full.predict_proba(X))
    w = rng.integers(0, 3, size=600)
    np.testing.assert_allclose(
        TreeAugmentedNB().fit(X, y, sample_weight=w).predict_proba(X),
        TreeAugmentedNB()
        .fit(np.repeat(X, w, axis=0), np.repeat(y, w))
        .predict_proba(X),
    )
    base = full.predict_proba(X[:5])
    assert not np.allclose(TreeAugmentedNB(m=20).fit(X, y).predict_proba(X[:5]), base)
    p = [[0.9, 0.1]] * X.shape[1]
    assert not np.allclose(TreeAugmentedNB(p=p).fit(X, y).predict_proba(X[:5]), base)
    assert (
        TreeAugmentedNB(min_categories=3).fit(X, y).feature_log_prob_[0].shape[-1] == 3
    )
    cats = [np.array([1, 0])] * X.shape[1]
    relabelled = TreeAugmentedNB(categories=cats).fit(X, y)
    np.testing.assert_allclose(relabelled.predict_proba(X[:5]), base)
    assert relabelled.categories_[0].tolist() == [1, 0]
    with pytest.raises(ValueError, match="not among its categories"):
        TreeAugmentedNB(handle_unknown="error").fit(X, y).predict(X[:1] + 5)
    np.testing.assert_allclose(
        full.predict_proba(X[:1] + 5), np.exp(full.class_log_prior_)[None]
    )
    assert (TreeAugmentedNB(priors=[0.99, 0.01]).fit(X, y).predict(X) == 0).mean() > 0.9
    Xs, ys = np.vstack([X[y == 0][:100], X]), np.concatenate([np.zeros(100), y])
    skewed = TreeAugmentedNB().fit(Xs, ys)
    flat = TreeAugmentedNB(prior_m=1e6).fit(Xs, ys)
    assert abs(np.exp(skewed.class_log_prior_[0]) - 0.5) > 0.05
    np.testing.assert_allclose(np.exp(flat.class_log_prior_), 0.5, atol=1e-3)
    assert (TreeAugmentedNB(costs=[1.0, 100.0]).fit(X, y).predict(X) == 1).mean() > 0.9


# -- pgmpy parity ----------------------------------------------------------------------
def to_pgmpy(bn):
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    model = DiscreteBayesianNetwork()
    model.add_nodes_from(bn.variables_)
    model.add_edges_from(bn.dag_.edges)
    for v in bn.variables_:
        parents = list(bn.dag_.parents(v))
        k = len(bn.states_[v])
        names = {u: bn.states_[u].tolist() for u in [v, *parents]}
        model.add_cpds(
            TabularCPD(
                v,
                k,
                np.moveaxis(bn.cpds_[v], -1, 0).reshape(k, -1),
                evidence=parents or None,
                evidence_card=[len(bn.states_[u]) for u in parents] or None,
                state_names=names,
            )
        )
    return model


@pytest.mark.parity
def test_parity_with_pgmpy_variable_elimination(rng):
    pytest.importorskip("pgmpy")
    from pgmpy.inference import VariableElimination

    for trial in range(6):
        bn = random_network(rng, 4 + trial, int_labels=True)
        ve = VariableElimination(to_pgmpy(bn))
        for _ in range(3):
            evidence = random_evidence(rng, bn, n_max=3)
            hidden = [v for v in bn.variables_ if v not in evidence]
            targets = list(rng.choice(hidden, size=min(2, len(hidden)), replace=False))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = ve.query(targets, evidence=evidence, show_progress=False)
                # pgmpy 1.1.2's map_query(variables=None) drops barren nodes
                # before maximising, which is not the joint MAP; name them all.
                their_map = ve.map_query(hidden, evidence=evidence, show_progress=False)
                their_marginal_map = ve.map_query(
                    targets, evidence=evidence, show_progress=False
                )
            values = np.transpose(
                theirs.values, [theirs.variables.index(v) for v in targets]
            )
            for v in targets:
                assert theirs.state_names[v] == bn.states_[v].tolist()
            np.testing.assert_allclose(
                bn.query(targets, evidence).to_numpy(), values.ravel(), atol=1e-10
            )
            assert bn.map_query(evidence=evidence) == their_map
            assert bn.map_query(targets, evidence=evidence) == their_marginal_map


# -- the state order: sorted, declared, or a categorical's own -------------------------
def test_states_are_sorted_whatever_the_row_order(rng):
    truth = random_network(rng, 6)
    df = frame_with_missing(rng, truth, 400, p_missing=0.1)
    bn = BayesianNetwork(truth.dag_.edges).fit(df)
    shuffled = BayesianNetwork(truth.dag_.edges).fit(df.sample(frac=1, random_state=0))
    for v in bn.variables_:
        expected = sorted(df[v].dropna().unique().tolist())
        assert bn.states_[v].tolist() == expected
        assert shuffled.states_[v].tolist() == expected
        np.testing.assert_allclose(shuffled.cpds_[v], bn.cpds_[v], rtol=1e-12)
    # CPT axes and predict_proba columns follow the states.
    v = bn.variables_[-1]
    assert list(bn.predict_proba(df.head(3), v).columns) == bn.states_[v].tolist()
    assert bn.cpds_[v].shape[-1] == len(bn.states_[v])


def test_weights_equal_removed_and_repeated_rows_in_any_order():
    # scikit-learn's check (zero weights = removed rows, integer weights =
    # repeated rows, in another order): with the states sorted the two fits
    # agree; unseen states of removed rows are ignored at predict time here.
    from sklearn.utils.estimator_checks import (
        check_sample_weight_equivalence_on_dense_data,
    )

    check_sample_weight_equivalence_on_dense_data(
        "BayesianNetwork", BayesianNetwork(handle_unknown="ignore")
    )


def test_declared_and_categorical_states_keep_absent_states():
    df = pd.DataFrame(
        {
            "a": pd.Categorical(["y", "x", "y"], categories=["z", "y", "x"]),
            "b": ["u", "v", "u"],
        }
    )
    bn = BayesianNetwork([("a", "b")], states={"b": ["w", "v", "u"]}).fit(df)
    assert bn.states_["a"].tolist() == ["z", "y", "x"]
    assert bn.states_["b"].tolist() == ["w", "v", "u"]
    # Absent states get the m-estimate's share: a = z has no rows, so its row
    # of P(b | a) is the prior p (uniform), and P(a = z) = m p / (n + m).
    np.testing.assert_allclose(bn.cpds_["b"][0], [1 / 3] * 3)
    np.testing.assert_allclose(
        bn.cpds_["a"], [1 / 3 / 4, (2 + 1 / 3) / 4, (1 + 1 / 3) / 4]
    )


@pytest.mark.parity
def test_learnt_tables_and_state_order_match_pgmpy(rng):
    pytest.importorskip("pgmpy")
    from pgmpy.models import DiscreteBayesianNetwork
    from pgmpy.parameter_estimator import DiscreteBayesianEstimator, DiscreteMLE

    for trial in range(3):
        truth = random_network(rng, 5 + trial, int_labels=trial == 1)
        df = truth.sample(600, random_state=trial)
        edges = list(truth.dag_.edges)
        for m, estimator in (
            (0.0, DiscreteMLE()),
            (None, DiscreteBayesianEstimator(prior_type="K2")),
        ):
            theirs = DiscreteBayesianNetwork(edges)
            theirs.add_nodes_from(df.columns)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs.fit(df, estimator=estimator)
            # K2 is one pseudo-count per state: m = k with uniform p.
            ms = m if m is not None else {v: float(df[v].nunique()) for v in df}
            ours = BayesianNetwork(edges, m=ms).fit(df)
            for v in ours.variables_:
                cpd = theirs.get_cpds(v)
                assert cpd.state_names[v] == ours.states_[v].tolist()
                parents = list(ours.dag_.parents(v))
                values = cpd.get_values()  # states x parents' joint states
                order = [cpd.variables[1:].index(u) for u in parents]
                shape = [len(cpd.state_names[u]) for u in cpd.variables[1:]]
                table = values.reshape(len(ours.states_[v]), *shape)
                table = np.moveaxis(
                    np.transpose(table, [0, *(1 + i for i in order)]), 0, -1
                )
                np.testing.assert_allclose(ours.cpds_[v], table, atol=1e-12)


# -- summarize / from_stats ------------------------------------------------------------
def test_summarize_of_chunks_summed_is_one_fit(rng):
    truth = random_network(rng, 7)
    df = frame_with_missing(rng, truth, 500, p_missing=0.2)
    w = rng.integers(0, 3, size=len(df)).astype(float)
    edges = truth.dag_.edges
    # Available-case counts: they add (EM needs the rows themselves).
    one = BayesianNetwork(edges, m=2.0, missing="available").fit(df, sample_weight=w)
    est = BayesianNetwork(edges, m=2.0, missing="available")
    # The first chunk fixes the states: it shows every one of them.
    first = est.summarize(df.iloc[:300], sample_weight=w[:300])
    assert not hasattr(est, "cpds_")  # summarize does not fit
    chunks = [
        est.summarize(df.iloc[i : i + 50], w[i : i + 50]) for i in (450, 300, 400, 350)
    ]
    total = first
    for c in chunks:
        total = c + total
    est.from_stats(total)
    # stats_ holds the counts themselves (their layout is now the network's).
    assert all(a is b for a, b in zip(est.stats_.counts, total.counts))
    for v in one.variables_:
        assert est.states_[v].tolist() == one.states_[v].tolist()
        np.testing.assert_allclose(est.cpds_[v], one.cpds_[v], rtol=1e-12)
    np.testing.assert_allclose(est.log_likelihood(df), one.log_likelihood(df))
    # fit is that reduce, and counts add with a zero.
    structure = one._make_components().structure
    zero = structure.zeros()
    for a, b in zip((zero + one.stats_).counts, one.stats_.counts):
        np.testing.assert_array_equal(a, b)


def test_from_stats_rejects_what_summarize_did_not_make(rng):
    df = pd.DataFrame({"a": list("xyxy"), "b": list("uvuu")})
    with pytest.raises(ValueError, match="call summarize"):
        BayesianNetwork().from_stats(None)
    est = BayesianNetwork([("a", "b")])
    stats = est.summarize(df)
    with pytest.raises(TypeError, match="NetworkStats of summarize"):
        est.from_stats(stats.counts)
    other = BayesianNetwork([("a", "b")], states={"a": list("xyz")}).summarize(df)
    # Counts without the layout summarize attaches must fit this network;
    # with it, they describe the network they make, and add by union.
    with pytest.raises(TypeError, match="NetworkStats of summarize"):
        est.from_stats(dataclasses.replace(other, layout=None))
    with pytest.raises(ValueError, match="do not add"):
        dataclasses.replace(stats, layout=None) + dataclasses.replace(
            other, layout=None
        )
    assert list(est.from_stats(other).states_["a"]) == list("xyz")
    assert list(BayesianNetwork().from_stats(stats + other).states_["a"]) == list("xyz")
    with pytest.raises(ValueError, match="'w', not among its states"):
        est.summarize(df.assign(a=["w", "x", "x", "y"]))


def test_the_triple_of_a_network(rng):
    bn = BayesianNetwork([("a", "b")], m={"a": 0.0}, p={"b": [0.9, 0.1]}).fit(
        pd.DataFrame({"a": list("xxyy"), "b": list("uvuu")})
    )
    structure, emission, prior = bn._make_components()
    assert emission is None and structure.n_parameters() == bn.n_parameters() == 3
    assert prior.m == {"a": 0.0, "b": 1.0}
    log_cpds = structure.map_params(bn.stats_, prior)
    for v in bn.variables_:
        np.testing.assert_allclose(np.exp(log_cpds[v]), bn.cpds_[v])
    # The log prior is the Dirichlet (m p + 1) whose mode is the m-estimate:
    # sum over the rows of b's table of m p_b log P(b | a).
    expected = sum(
        (1.0 * np.array([0.9, 0.1]) * np.log(bn.cpds_["b"][i])).sum() for i in range(2)
    )
    np.testing.assert_allclose(structure.log_prior(log_cpds, prior), expected)


def test_statistics_keep_their_class_paths_for_old_pickles():
    # NetworkStats moved to the graph core; pickles name the old path.
    from bayeskit.graph.network import NetworkStats
    from bayeskit.network._network import NetworkStats as old_path
    from bayeskit.network._tan import TreeStats

    assert old_path is NetworkStats
    df = flu_network().sample(200, random_state=0)
    fitted = BayesianNetwork(flu_network().dag_.edges).fit(df)
    restored = pickle.loads(pickle.dumps(fitted))
    assert type(restored.stats_) is NetworkStats
    np.testing.assert_allclose(restored.log_likelihood(df), fitted.log_likelihood(df))
    tan = TreeAugmentedNB().fit(df.drop(columns="flu"), df["flu"])
    assert type(pickle.loads(pickle.dumps(tan)).stats_.emission) is TreeStats
