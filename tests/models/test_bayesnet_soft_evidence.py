"""Soft (virtual) evidence equals hard evidence on an added child whose CPT
is the likelihood: the definition of virtual evidence (Pearl 1988)."""

import numpy as np
import pandas as pd
import pytest

from bayeskit import BayesianNetwork
from bayeskit.datasets import load_network


def with_virtual_children(bn, likelihoods):
    """``bn`` plus one observed child per soft-evidenced variable, ``P(child =
    'seen' | v) = lambda(v) / max(lambda)``."""
    edges = list(bn.dag_.edges) + [(v, f"{v}*") for v in likelihoods]
    states = {v: bn.states_[v].tolist() for v in bn.variables_}
    states.update({f"{v}*": ["seen", "unseen"] for v in likelihoods})
    out = BayesianNetwork(edges, states=states)
    for v in bn.variables_:
        out.set_cpd(v, bn.cpds_[v])
    for v, lik in likelihoods.items():
        p = np.asarray(lik, float) / np.max(lik)
        out.set_cpd(f"{v}*", np.stack([p, 1 - p], axis=-1))
    return out, {f"{v}*": "seen" for v in likelihoods}


@pytest.mark.parametrize("name", ["asia", "child"])
def test_soft_evidence_is_hard_evidence_on_a_virtual_child(name, rng):
    bn = load_network(name)
    for _ in range(12):
        chosen = rng.choice(bn.variables_, size=4, replace=False).tolist()
        soft_vars, hard_vars = chosen[:2], chosen[2:3]
        soft = {v: rng.uniform(0.0, 2.0, size=len(bn.states_[v])) for v in soft_vars}
        evidence = {v: bn.states_[v].tolist()[0] for v in hard_vars}
        targets = [chosen[3]] if rng.random() < 0.5 else [chosen[3], soft_vars[0]]
        virtual, seen = with_virtual_children(bn, soft)
        try:
            expected = virtual.query(targets, {**evidence, **seen})
        except ValueError:
            with pytest.raises(ValueError, match="probability zero"):
                bn.query(targets, evidence, soft_evidence=soft)
            continue
        got = bn.query(targets, evidence, soft_evidence=soft)
        np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), atol=1e-12)
        assert got.index.equals(expected.index)
        assert bn.map_query(targets, evidence, soft_evidence=soft) == (
            virtual.map_query(targets, {**evidence, **seen})
        )


def test_batched_soft_evidence_per_row_and_shared(rng):
    bn = load_network("asia")
    rows = bn.sample(40, random_state=1)
    mask = rng.random(rows.shape) < 0.6
    rows = rows.mask(mask)
    per_row = rng.uniform(0.1, 1.0, size=(len(rows), 2))
    shared = np.array([0.9, 0.2])
    soft = {"lung": shared, "xray": per_row}
    got = bn.predict_proba(rows, soft_evidence=soft)
    got_one = bn.predict_proba(rows, "either", soft_evidence=soft)
    np.testing.assert_allclose(got["either"].to_numpy(), got_one.to_numpy(), atol=1e-12)
    for i in range(len(rows)):
        row = rows.iloc[i]
        evidence = {v: s for v, s in row.items() if pd.notna(s)}
        active = {"lung": shared, "xray": per_row[i]}
        active = {v: lik for v, lik in active.items() if v not in evidence}
        virtual, seen = with_virtual_children(bn, active)
        for v in bn.variables_:
            if v in evidence:
                continue
            expected = virtual.query(v, {**evidence, **seen}).to_numpy()
            np.testing.assert_allclose(got[v].iloc[i].to_numpy(), expected, atol=1e-12)


def test_soft_evidence_errors():
    bn = load_network("asia")
    with pytest.raises(ValueError, match=r"soft_evidence\['lung'\] has shape \(3,\)"):
        bn.query("dysp", soft_evidence={"lung": [0.1, 0.2, 0.3]})
    with pytest.raises(ValueError, match=r"soft_evidence\['lung'\] must be finite"):
        bn.query("dysp", soft_evidence={"lung": [-0.1, 0.2]})
    with pytest.raises(ValueError, match=r"soft_evidence\['lung'\] is zero"):
        bn.query("dysp", soft_evidence={"lung": [0.0, 0.0]})
    with pytest.raises(ValueError, match="both evidence and soft_evidence"):
        bn.query("dysp", {"lung": "yes"}, soft_evidence={"lung": [0.5, 0.5]})
    with pytest.raises(TypeError, match="soft_evidence must be a dict"):
        bn.query("dysp", soft_evidence=[0.5, 0.5])
    with pytest.raises(ValueError, match="unknown variable"):
        bn.query("dysp", soft_evidence={"nope": [0.5, 0.5]})
    with pytest.raises(ValueError, match="needs variables"):
        bn.map_query(soft_evidence={"lung": [0.5, 0.2]})
    with pytest.raises(ValueError, match="variables is empty"):
        bn.query([], soft_evidence={"lung": [0.5, 0.2]})
    rows = bn.sample(3, random_state=0).assign(dysp=None)
    with pytest.raises(ValueError, match=r"expected \(2,\) or \(3, 2\)"):
        bn.predict_proba(rows, soft_evidence={"lung": np.ones((4, 2))})
    # A likelihood of zero on the only possible state: probability zero.
    with pytest.raises(ValueError, match="probability zero"):
        bn.query(
            "dysp",
            {"smoke": "yes"},
            soft_evidence={"either": [1.0, 0.0], "tub": [0.0, 1.0], "lung": [0.0, 1.0]},
        )
