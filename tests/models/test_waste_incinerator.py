"""The bundled waste incinerator (Lauritzen 1992).

Prior moments against the closed form written here (the law of total
expectation over the eight discrete configurations, each continuous node a
linear function of its parents); posteriors against the dense enumeration of
``test_hybrid_network`` and against the strong junction tree; the figure
printed by the BayesNetBP paper (Yu et al., Journal of Statistical Software
2020, section 3.2, on data simulated from these tables):
P(F = intact, B = unstable | W = industrial, L = 1.1, C = -0.9) = 0.99.
"""

import itertools

import numpy as np
import pytest
from test_hybrid_network import reference

from bayeskit.datasets import load_waste_incinerator
from bayeskit.graph.clg_tree import CLGJunctionTree, exact_clg

P_B, P_F, P_W = [0.85, 0.15], [0.95, 0.05], [2 / 7, 5 / 7]
E_MEAN = {(0, 0): -3.9, (0, 1): -3.2, (1, 0): -0.4, (1, 1): -0.5}  # (F, W)
E_VAR = {(0, 0): 2e-5, (0, 1): 2e-5, (1, 0): 1e-4, (1, 1): 1e-4}
D_ADD = {(0, 0): 6.5, (0, 1): 6.0, (1, 0): 7.5, (1, 1): 7.0}  # (B, W)
D_VAR = {(0, 0): 0.03, (0, 1): 0.04, (1, 0): 0.1, (1, 1): 0.1}
C_MOM = [(-2.0, 0.1), (-1.0, 0.3)]
MIN_MOM = [(0.5, 0.01), (-0.5, 0.005)]


def closed_form_moments():
    """Mean and variance of every continuous node with nothing observed."""
    first, second = {}, {}
    for b, f, w in itertools.product(range(2), repeat=3):
        p = P_B[b] * P_F[f] * P_W[w]
        e = (E_MEAN[f, w], E_VAR[f, w])
        d = (D_ADD[b, w] + e[0], D_VAR[b, w] + e[1])
        m_in = MIN_MOM[w]
        comp = {
            "E": e,
            "C": C_MOM[b],
            "Min": m_in,
            "D": d,
            "L": (3 - d[0] / 2, 0.25 + d[1] / 4),
            "Mout": (d[0] + m_in[0], d[1] + m_in[1] + 0.002),
        }
        for v, (m, s) in comp.items():
            first[v] = first.get(v, 0.0) + p * m
            second[v] = second.get(v, 0.0) + p * (s + m * m)
    return {v: (first[v], second[v] - first[v] ** 2) for v in first}


def _moments(frame):
    mean = (frame["weight"] * frame["mean"]).sum()
    var = (frame["weight"] * (frame["variance"] + frame["mean"] ** 2)).sum()
    return mean, var - mean**2


def test_the_tables_are_the_published_ones():
    bn = load_waste_incinerator()
    assert bn.continuous_ == ["E", "C", "Min", "D", "L", "Mout"]
    assert set(bn.dag_.edges) == {
        ("F", "E"),
        ("W", "E"),
        ("B", "C"),
        ("W", "Min"),
        ("B", "D"),
        ("W", "D"),
        ("E", "D"),
        ("D", "L"),
        ("D", "Mout"),
        ("Min", "Mout"),
    }
    np.testing.assert_allclose(bn.get_cpd("W").to_numpy().ravel(), P_W)
    d = bn.get_cpd("D")
    assert d.loc[("unstable", "industrial"), "intercept"] == 7.5
    assert d.loc[("stable", "household"), "variance"] == 0.04
    assert bn.get_cpd("L")["coef[D]"].iloc[0] == -0.5


def test_prior_marginals_equal_the_closed_form():
    bn = load_waste_incinerator()
    for v, (mean, var) in closed_form_moments().items():
        got = _moments(bn.query(v))
        np.testing.assert_allclose(got, (mean, var), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(bn.query("W").to_numpy(), P_W, rtol=1e-12)


@pytest.mark.parametrize("tree", [False, True])
def test_the_published_evidence_case(tree):
    """W industrial, L = 1.1, C = -0.9: every posterior equals the dense
    enumeration; the tree engine gives the same."""
    bn = load_waste_incinerator()
    if tree:
        clg = bn._clg_
        bn._clg_ = exact_clg(
            clg.discrete, clg.cards, clg.log_cpds, clg.continuous, clg.nodes, 1
        )
        assert isinstance(bn._clg_, CLGJunctionTree)
    evidence = {"W": "industrial", "L": 1.1, "C": -0.9}
    _, w, moments, disc = reference(bn, evidence)
    joint = bn.query(["F", "B"], evidence=evidence)
    for (f, b), p in joint.items():
        want = sum(
            wc
            for c, wc in w.items()
            if bn.states_["F"][c[disc.index("F")]] == f
            and bn.states_["B"][c[disc.index("B")]] == b
        )
        np.testing.assert_allclose(p, want, atol=1e-12)
    assert round(joint[("intact", "unstable")], 2) == 0.99  # as printed
    for v in ["E", "Min", "D", "Mout"]:
        mean = sum(wc * moments[c][0][v] for c, wc in w.items())
        var = sum(
            wc * (moments[c][1][v] + moments[c][0][v] ** 2) for c, wc in w.items()
        )
        got = _moments(bn.query(v, evidence=evidence))
        np.testing.assert_allclose(got, (mean, var - mean**2), rtol=1e-9, atol=1e-12)


def test_a_network_of_tables_has_no_statistics_to_add_to():
    bn = load_waste_incinerator()
    rows = bn.sample(400, random_state=0)
    # No statistics of rows: partial_fit learns from its chunk alone, as fit
    # (and as a discrete network set by hand).
    assert not hasattr(bn, "stats_")
    chunk = load_waste_incinerator().partial_fit(rows)
    alone = type(bn)(list(bn.dag_.edges), continuous=bn.continuous_).fit(rows)
    np.testing.assert_allclose(chunk.score_samples(rows), alone.score_samples(rows))
    # Fitting it on its own samples recovers its tables.
    big = load_waste_incinerator().sample(100_000, random_state=1)
    refit = type(bn)(list(bn.dag_.edges), continuous=bn.continuous_).fit(big)
    want, got = bn.get_cpd("D"), refit.get_cpd("D")
    names = list(want.index.names)
    got = got.reorder_levels(names) if got.index.names != names else got
    np.testing.assert_allclose(
        got.loc[want.index, "intercept"].to_numpy(),
        want["intercept"].to_numpy(),
        atol=0.1,  # about 4 standard errors of the rarest configuration
    )
