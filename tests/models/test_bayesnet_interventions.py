"""Interventions: do-queries, backdoor adjustment sets, average treatment effects.

Every do-query is checked against the mutilated network built by hand (the
edges into the set variables removed, their tables point masses) and
enumerated; adjustment sets against the backdoor formula; the cases of
pgmpy's issue 3543 (and 1701) against numbers derived by hand.
"""

import itertools

import numpy as np
import pandas as pd
import pytest
from test_bayesnet import conditional, joint_of, marginal_of, random_network

from bayeskit import BayesianNetwork
from bayeskit.network import UnknownStateError


def mutilated_by_hand(bn, do):
    """The network with the edges into ``do``'s variables removed and their
    tables point masses at the states they are set to."""
    edges = [(u, w) for u, w in bn.dag_.edges if w not in do]
    states = {v: bn.states_[v].tolist() for v in bn.variables_}
    out = BayesianNetwork(edges, states=states)
    for v in bn.dag_.topological_order():
        if v in do:
            table = np.eye(len(states[v]))[states[v].index(do[v])]
        else:
            table = bn.cpds_[v]
        out.set_cpd(v, table)
    return out


def enumerated(bn, joint, target, evidence):
    cond, _, hidden = conditional(bn, joint, evidence)
    return marginal_of(cond, hidden, [target])


def pick(rng, bn, variables, k):
    chosen = rng.choice(len(variables), size=k, replace=False)
    return {
        variables[i]: bn.states_[variables[i]].tolist()[
            rng.integers(len(bn.states_[variables[i]]))
        ]
        for i in chosen
    }


def test_do_queries_equal_the_mutilated_network_enumerated(rng):
    n_differ = 0
    for trial in range(24):
        bn = random_network(rng, 3 + trial % 6, p_edge=0.5)
        names = list(bn.variables_)
        do = pick(rng, bn, names, 1 + trial % 2)
        rest = [v for v in names if v not in do]
        evidence = pick(rng, bn, rest, int(rng.integers(0, len(rest))))
        mut = mutilated_by_hand(bn, do)
        joint = joint_of(mut)
        plain = joint_of(bn)
        for target in [v for v in rest if v not in evidence]:
            got = bn.query(target, evidence=evidence, do=do).to_numpy()
            expected = enumerated(mut, joint, target, evidence)
            np.testing.assert_allclose(got, expected, atol=1e-12)
            seen = enumerated(bn, plain, target, {**evidence, **do})
            n_differ += not np.allclose(expected, seen, atol=1e-6)
            # Soft evidence too: as on the mutilated network by hand.
            free = [v for v in rest if v not in evidence and v != target]
            if free:
                k = len(bn.states_[free[0]])
                soft = {free[0]: rng.uniform(0.1, 1.0, k)}
                got = bn.query(target, evidence=evidence, do=do, soft_evidence=soft)
                ref = mut.query(target, evidence=evidence, soft_evidence=soft)
                np.testing.assert_allclose(got.to_numpy(), ref.to_numpy(), atol=1e-12)
        # predict_proba: every row under the same intervention.
        df = bn.sample(6, random_state=trial).astype(object)
        df = df.mask(rng.random(df.shape) < 0.5, None)
        proba = bn.predict_proba(df, do=do)
        for r, (_, row) in enumerate(df.iterrows()):
            ev = {v: s for v, s in row.items() if not pd.isna(s) and v not in do}
            for v in names:
                got = proba.iloc[r][v].to_numpy()
                if v in do or v in ev:
                    value = do.get(v, ev.get(v))
                    expected = np.eye(len(got))[bn.states_[v].tolist().index(value)]
                else:
                    expected = enumerated(mut, joint, v, ev)
                np.testing.assert_allclose(got, expected, atol=1e-12)
    assert n_differ > 0  # intervening is not conditioning on these networks


def sprinkler():
    """pgmpy issue 3543, bug 1: C -> S, C -> R, S -> W, R -> W (pgmpy's
    TabularCPD columns are the parents' joint states, the first slowest)."""
    bn = BayesianNetwork([("C", "S"), ("C", "R"), ("S", "W"), ("R", "W")])
    bn.set_cpd("C", [0.5, 0.5], states=[0, 1])
    bn.set_cpd("S", [[0.5, 0.5], [0.9, 0.1]], states=[0, 1])
    bn.set_cpd("R", [[0.8, 0.2], [0.2, 0.8]], states=[0, 1])
    w = [[1.0, 0.0], [0.1, 0.9], [0.1, 0.9], [0.01, 0.99]]
    bn.set_cpd("W", np.reshape(w, (2, 2, 2)), states=[0, 1])
    return bn


def test_pgmpy_3543_evidence_outside_the_adjustment_set():
    bn = sprinkler()
    # After the surgery S is a root set to 1 and R is seen at 1: W's table at
    # (S=1, R=1) is the answer, whatever C.
    got = bn.query("W", evidence={"R": 1}, do={"S": 1})
    np.testing.assert_allclose(got.to_numpy(), [0.01, 0.99], atol=1e-15)
    # C given R = 1 only (S no longer tells about C): 0.5 * 0.8 / 0.5.
    got = bn.query("C", evidence={"R": 1}, do={"S": 1})
    np.testing.assert_allclose(got.to_numpy(), [0.2, 0.8], atol=1e-15)
    assert bn.adjustment_set("S", "W") == ["C"]


def test_pgmpy_3543_interventions_on_a_parent_and_its_child():
    # Bug 2: A -> B, A -> C, B -> C.
    bn = BayesianNetwork([("A", "B"), ("A", "C"), ("B", "C")])
    bn.set_cpd("A", [0.6, 0.4], states=[0, 1])
    bn.set_cpd("B", [[0.7, 0.3], [0.2, 0.8]], states=[0, 1])
    c = [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5], [0.0, 1.0]]
    bn.set_cpd("C", np.reshape(c, (2, 2, 2)), states=[0, 1])
    # Both set: C's table at (A=1, B=1), with nothing summed over.
    got = bn.query("C", do={"A": 1, "B": 1})
    np.testing.assert_allclose(got.to_numpy(), [0.0, 1.0], atol=1e-15)
    # B alone set: A keeps its prior, 0.6 [.5 .5] + 0.4 [0 1].
    got = bn.query("C", do={"B": 1})
    np.testing.assert_allclose(got.to_numpy(), [0.3, 0.7], atol=1e-15)
    # Conditioning on B = 1 instead: P(A=1 | B=1) = 0.32 / 0.5 = 0.64.
    seen = bn.query("C", evidence={"B": 1})
    np.testing.assert_allclose(seen.to_numpy(), [0.18, 0.82], atol=1e-15)


def test_pgmpy_1701_do_with_evidence_on_a_common_child():
    # X -> Y, X -> Z, Y -> Z: P(Y | do(X=1), Z=0) is P(Y | X=1, Z=0) (X is a
    # root), that is P(Y | X=1) P(Z=0 | X=1, Y) normalised.
    bn = BayesianNetwork([("X", "Y"), ("X", "Z"), ("Y", "Z")])
    bn.set_cpd("X", [0.3, 0.7], states=[0, 1])
    bn.set_cpd("Y", [[0.9, 0.1], [0.25, 0.75]], states=[0, 1])
    z = [[0.5, 0.5], [0.4, 0.6], [0.8, 0.2], [0.1, 0.9]]
    bn.set_cpd("Z", np.reshape(z, (2, 2, 2)), states=[0, 1])
    weights = np.array([0.25 * 0.8, 0.75 * 0.1])
    got = bn.query("Y", evidence={"Z": 0}, do={"X": 1})
    np.testing.assert_allclose(got.to_numpy(), weights / weights.sum(), atol=1e-15)


def test_adjustment_sets_satisfy_the_backdoor_formula(rng):
    checked = 0
    for trial in range(30):
        bn = random_network(rng, 3 + trial % 5, p_edge=0.6)
        joint = joint_of(bn)
        x, y = rng.choice(bn.variables_, size=2, replace=False)
        if y in bn.dag_.ancestors(x):
            with pytest.raises(ValueError, match="cause of treatment"):
                bn.adjustment_set(x, y)
            continue
        z = bn.adjustment_set(x, y)
        assert not set(z) & (bn.dag_.descendants(x) | {x, y})
        assert len(z) <= len(bn.dag_.parents(x))
        for value in bn.states_[x].tolist():
            # sum_z P(y | x, z) P(z), each term by enumeration of the joint.
            expected = 0.0
            for zs in itertools.product(*(bn.states_[v].tolist() for v in z)):
                ev = dict(zip(z, zs))
                _, pz, _ = conditional(bn, joint, ev)
                expected = expected + pz * enumerated(bn, joint, y, {x: value, **ev})
            got = bn.query(y, do={x: value}).to_numpy()
            np.testing.assert_allclose(got, expected, atol=1e-12)
            checked += 1
    assert checked > 20


def test_average_treatment_effect_by_hand():
    # Z -> X, Z -> Y, X -> Y with numeric Y: E[Y | do(X=x)] = sum_z P(z) E[Y | x, z].
    bn = BayesianNetwork([("Z", "X"), ("Z", "Y"), ("X", "Y")])
    bn.set_cpd("Z", [0.3, 0.7], states=["a", "b"])
    bn.set_cpd("X", [[0.8, 0.2], [0.1, 0.9]], states=["no", "yes"])
    y = [[0.5, 0.3, 0.2], [0.2, 0.3, 0.5], [0.6, 0.3, 0.1], [0.1, 0.2, 0.7]]
    bn.set_cpd("Y", np.reshape(y, (2, 2, 3)), states=[0, 5, 10])
    mean = np.reshape(y, (2, 2, 3)) @ np.array([0.0, 5.0, 10.0])  # (z, x)
    effect = 0.3 * (mean[0, 1] - mean[0, 0]) + 0.7 * (mean[1, 1] - mean[1, 0])
    assert bn.average_treatment_effect("X", "Y") == pytest.approx(effect, abs=1e-13)
    assert bn.average_treatment_effect(
        "X", "Y", treated="no", control="yes"
    ) == pytest.approx(-effect, abs=1e-13)
    risk = 0.3 * (0.5 - 0.2) + 0.7 * (0.7 - 0.1)
    got = bn.average_treatment_effect("X", "Y", outcome_state=10)
    assert got == pytest.approx(risk, abs=1e-13)
    assert bn.adjustment_set("X", "Y") == ["Z"]
    with pytest.raises(ValueError, match="not numbers"):
        bn.average_treatment_effect("X", "Z")
    with pytest.raises(ValueError, match="both treated and control"):
        bn.average_treatment_effect("X", "Y", treated="yes")


def test_latent_confounding_is_a_clear_error(rng):
    n = 400
    u = rng.integers(0, 2, n)
    x = np.where(rng.random(n) < 0.8, u, 1 - u)
    y = np.where(rng.random(n) < 0.7, x ^ u, rng.integers(0, 2, n))
    bn = BayesianNetwork(
        [("U", "X"), ("U", "Y"), ("X", "Y")],
        latent=["U"],
        states={"U": 2},
        random_state=0,
    ).fit(pd.DataFrame({"X": x, "Y": y}))
    with pytest.raises(ValueError, match="latent variables \\['U'\\]"):
        bn.adjustment_set("X", "Y")
    # The do-query is still answered, from the fitted tables (U's included).
    mut = mutilated_by_hand(bn, {"X": 1})
    expected = enumerated(mut, joint_of(mut), "Y", {})
    np.testing.assert_allclose(bn.query("Y", do={"X": 1}), expected, atol=1e-12)


def test_bad_interventions_are_clear_errors():
    bn = sprinkler()
    with pytest.raises(ValueError, match="unknown variable"):
        bn.query("W", do={"Q": 1})
    with pytest.raises(UnknownStateError):
        bn.query("W", do={"S": 7})
    with pytest.raises(ValueError, match="both observed \\(evidence\\) and set"):
        bn.query("W", evidence={"S": 1}, do={"S": 1})
    with pytest.raises(ValueError, match="queried and set by do"):
        bn.query("S", do={"S": 1})
    with pytest.raises(TypeError, match="do must be a dict"):
        bn.query("W", do=[("S", 1)])
    with pytest.raises(ValueError, match="do is empty"):
        bn.query("W", do={})
    # an intervention is answered exactly: an approximate engine is refused
    for method in ("loopy", "sampling"):
        with pytest.raises(ValueError, match="method must be 'auto' or 'exact'"):
            bn.query("W", do={"S": 1}, method=method)
        with pytest.raises(ValueError, match="method must be 'auto' or 'exact'"):
            bn.predict_proba(pd.DataFrame({"R": [1]}), "W", do={"S": 1}, method=method)
    # The second query of a pattern may be read from the compiled calibration
    # (bayeskit.graph._compiled_tree.for_query): equal up to rounding.
    np.testing.assert_allclose(
        bn.query("W", do={"S": 1}, method="exact").to_numpy(),
        bn.query("W", do={"S": 1}).to_numpy(),
        rtol=0,
        atol=1e-15,
    )


def test_the_mutilated_structure_is_kept_and_follows_new_tables():
    bn = sprinkler()
    first = bn.query("W", evidence={"R": 1}, do={"S": 1})
    assert ("do", frozenset({"S"})) in bn._engine_.memo
    bn.set_cpd("W", np.full((2, 2, 2), 0.5))
    again = bn.query("W", evidence={"R": 1}, do={"S": 1})
    np.testing.assert_allclose(again.to_numpy(), [0.5, 0.5], atol=1e-15)
    assert not np.allclose(first.to_numpy(), again.to_numpy())
