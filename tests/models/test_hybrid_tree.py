"""Hybrid networks answered by the strong junction tree, and soft evidence.

The references are those of ``test_hybrid_network``: enumeration of every
joint discrete configuration with dense Gaussian conditioning from the fitted
tables (here with the soft evidence's likelihood multiplied in by hand), and,
for a chain of 30 discrete nodes, a forward-backward recursion written here.
"""

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp
from scipy.stats import norm
from test_hybrid_network import CONT, EDGES, random_rows, reference, simulate

from bayeskit import BayesianNetwork
from bayeskit.graph.clg import CLGNetwork
from bayeskit.graph.clg_tree import CLGJunctionTree


def simulate_big(rng, n=500):
    """``simulate``'s network and discrete f | a (3 states), g | f, and a
    continuous k | g, c: 36 joint discrete configurations."""
    df = simulate(rng, n)
    f = np.where(
        df["a"].to_numpy() == "hi",
        rng.choice(["u", "v", "w"], size=n, p=[0.7, 0.2, 0.1]),
        rng.choice(["u", "v", "w"], size=n, p=[0.2, 0.3, 0.5]),
    )
    g = np.where(rng.random(n) < np.where(f == "u", 0.8, 0.25), "on", "off")
    k = np.where(g == "on", 2.0, -1.0) + 0.5 * df["c"].to_numpy() + rng.normal(size=n)
    return df.assign(f=f, g=g, k=k)


EDGES_BIG = [*EDGES, ("a", "f"), ("f", "g"), ("g", "k"), ("c", "k")]
CONT_BIG = [*CONT, "k"]
NETWORKS = {
    "enumeration": (simulate, EDGES, CONT, CLGNetwork),
    "tree": (simulate_big, EDGES_BIG, CONT_BIG, CLGJunctionTree),
}


def _weights_with(w, disc, soft, bn):
    """The reference weights times the likelihood vectors, renormalised; the
    log of the normaliser."""
    out = {}
    for conf, wc in w.items():
        for v, lik in soft.items():
            wc = wc * lik[conf[disc.index(v)]]
        out[conf] = wc
    z = sum(out.values())
    return {c: x / z for c, x in out.items()}, np.log(z)


@pytest.mark.parametrize("which", list(NETWORKS))
@pytest.mark.parametrize("seed", range(4))
def test_queries_equal_enumeration_with_soft_evidence(which, seed):
    sim, edges, cont, engine = NETWORKS[which]
    rng = np.random.default_rng(seed)
    df = sim(rng)
    bn = BayesianNetwork(edges, continuous=cont).fit(df)
    assert isinstance(bn._clg_, engine)
    rows = random_rows(rng, df, 8)
    for v in cont:
        if v not in CONT:
            rows[v] = rows[v].astype(float)
    disc = [v for v in bn.variables_ if v not in cont]
    ll = bn.score_samples(rows)
    filled = bn.predict(rows)
    for i in range(len(rows)):
        row = {k: v for k, v in rows.iloc[i].items() if not pd.isna(v)}
        ev, w, moments, _ = reference(bn, row)
        np.testing.assert_allclose(ll[i], ev, rtol=1e-10, atol=1e-10)
        best = max(w, key=w.get)
        for j, v in enumerate(disc):
            assert filled[v].iloc[i] == bn.states_[v][best[j]]
        hidden_disc = [v for v in disc if v not in row]
        if not hidden_disc:
            continue
        s = hidden_disc[int(rng.integers(len(hidden_disc)))]
        lik = rng.uniform(0.05, 1.0, size=len(bn.states_[s]))
        ws, _ = _weights_with(w, disc, {s: lik}, bn)
        for v in [v for v in bn.variables_ if v not in row]:
            q = bn.query(v, evidence=row, soft_evidence={s: lik})
            if v in cont:
                mean = sum(wc * moments[c][0][v] for c, wc in ws.items())
                second = sum(
                    wc * (moments[c][1][v] + moments[c][0][v] ** 2)
                    for c, wc in ws.items()
                )
                np.testing.assert_allclose(
                    (q["weight"] * q["mean"]).sum(), mean, rtol=1e-10, atol=1e-10
                )
                got = (q["weight"] * (q["variance"] + q["mean"] ** 2)).sum()
                np.testing.assert_allclose(got, second, rtol=1e-9, atol=1e-9)
            else:
                j = disc.index(v)
                want = [
                    sum(wc for c, wc in ws.items() if c[j] == k)
                    for k in range(len(bn.states_[v]))
                ]
                np.testing.assert_allclose(q.to_numpy(), want, atol=1e-10)
        pair = [hidden_disc[0], hidden_disc[-1]]
        if pair[0] != pair[1]:
            q = bn.query(pair, evidence=row, soft_evidence={s: lik})
            j0, j1 = disc.index(pair[0]), disc.index(pair[1])
            table = np.zeros((len(bn.states_[pair[0]]), len(bn.states_[pair[1]])))
            for c, wc in ws.items():
                table[c[j0], c[j1]] += wc
            np.testing.assert_allclose(q.to_numpy(), table.ravel(), atol=1e-10)
        got = bn.map_query(evidence=row, soft_evidence={s: lik})
        best = max(ws, key=ws.get)
        assert got == {v: bn.states_[v][best[disc.index(v)]] for v in hidden_disc}


@pytest.mark.parametrize("which", list(NETWORKS))
def test_predict_proba_takes_a_likelihood_per_row(which):
    sim, edges, cont, _ = NETWORKS[which]
    rng = np.random.default_rng(11)
    df = sim(rng)
    bn = BayesianNetwork(edges, continuous=cont).fit(df)
    rows = df.drop(columns=["a", "d"]).iloc[:10].reset_index(drop=True)
    lik = rng.uniform(0.05, 1.0, size=(10, 3))
    proba = bn.predict_proba(rows, soft_evidence={"a": lik})
    disc = [v for v in bn.variables_ if v not in cont]
    for i in range(10):
        row = {k: v for k, v in rows.iloc[i].items() if not pd.isna(v)}
        _, w, _, _ = reference(bn, row)
        ws, _ = _weights_with(w, disc, {"a": lik[i]}, bn)
        for j, v in enumerate(disc):
            for k, state in enumerate(bn.states_[v]):
                want = sum(wc for c, wc in ws.items() if c[j] == k)
                np.testing.assert_allclose(proba[(v, state)].iloc[i], want, atol=1e-10)


def test_soft_evidence_is_checked():
    rng = np.random.default_rng(2)
    df = simulate_big(rng, 200)
    bn = BayesianNetwork(EDGES_BIG, continuous=CONT_BIG).fit(df)
    with pytest.raises(ValueError, match="'k', a continuous node"):
        bn.query("a", soft_evidence={"k": [1.0, 2.0]})
    with pytest.raises(ValueError, match="both evidence and soft_evidence"):
        bn.query("a", evidence={"f": "u"}, soft_evidence={"f": [1, 1, 1]})
    with pytest.raises(ValueError, match=r"soft_evidence\['f'\] has shape"):
        bn.query("a", soft_evidence={"f": [1, 1]})
    with pytest.raises(ValueError, match="both evidence and soft_evidence"):
        bn.predict_proba(df.iloc[:3], soft_evidence={"f": [1, 1, 1]})


def test_thirty_discrete_nodes_fit_and_equal_a_forward_backward_recursion():
    """A discrete chain of 30 binary nodes, each with a Gaussian child: 2^30
    joint configurations (enumeration refused beyond 1e5). The fitted network
    answers, and ``predict_proba`` and ``score_samples`` equal the HMM
    forward-backward recursion on its fitted tables."""
    rng = np.random.default_rng(0)
    length, n = 30, 3000
    d = np.zeros((n, length), dtype=int)
    d[:, 0] = rng.random(n) < 0.4
    for i in range(1, length):
        stay = rng.random(n) < 0.8
        d[:, i] = np.where(stay, d[:, i - 1], 1 - d[:, i - 1])
    x = d * 2.0 + rng.normal(size=(n, length))
    df = pd.DataFrame(
        {
            **{f"d{i}": np.array(["no", "yes"])[d[:, i]] for i in range(length)},
            **{f"x{i}": x[:, i] for i in range(length)},
        }
    )
    edges = [(f"d{i - 1}", f"d{i}") for i in range(1, length)]
    edges += [(f"d{i}", f"x{i}") for i in range(length)]
    cont = [f"x{i}" for i in range(length)]
    bn = BayesianNetwork(edges, continuous=cont).fit(df)
    assert isinstance(bn._clg_, CLGJunctionTree)
    rows = df.iloc[:5].copy()
    rows[[f"d{i}" for i in range(length)]] = np.nan
    rows.loc[rows.index[1:], "x3"] = np.nan
    proba = bn.predict_proba(rows)
    ll = bn.score_samples(rows)
    states = bn.states_["d0"].tolist()
    for r in range(5):
        log_e = np.zeros((length, 2))
        for i in range(length):
            xi = rows[f"x{i}"].iloc[r]
            if not np.isnan(xi):
                cpd = bn.get_cpd(f"x{i}").loc[states]
                log_e[i] = norm.logpdf(
                    xi, cpd["intercept"].to_numpy(), np.sqrt(cpd["variance"].to_numpy())
                )
        fwd = np.zeros((length, 2))
        fwd[0] = np.log(bn.cpds_["d0"]) + log_e[0]
        for i in range(1, length):
            t = np.log(bn.cpds_[f"d{i}"])
            fwd[i] = logsumexp(fwd[i - 1][:, None] + t, axis=0) + log_e[i]
        bwd = np.zeros((length, 2))
        for i in range(length - 2, -1, -1):
            t = np.log(bn.cpds_[f"d{i + 1}"])
            bwd[i] = logsumexp(t + (log_e[i + 1] + bwd[i + 1])[None, :], axis=1)
        log_z = logsumexp(fwd[-1])
        np.testing.assert_allclose(ll[r], log_z, rtol=1e-10)
        for i in range(length):
            p = np.exp(fwd[i] + bwd[i] - log_z)
            got = proba[f"d{i}"].iloc[r][states].to_numpy(dtype=float)
            np.testing.assert_allclose(got, p, atol=1e-10)


def test_the_tree_budget_is_an_error_at_fit_naming_it():
    """Connected continuous nodes with 21 binary discrete parents in all (a
    switching linear-Gaussian chain): their boundary is one clique of 2^21
    configurations, beyond the tree's memory budget, an error naming it."""
    rng = np.random.default_rng(0)
    k, n = 21, 300
    d = rng.integers(0, 2, size=(n, k))
    h = np.cumsum(d + rng.normal(size=(n, k)), axis=1)
    df = pd.DataFrame(
        {
            **{f"d{i}": np.array(["a", "b"])[d[:, i]] for i in range(k)},
            **{f"h{i}": h[:, i] for i in range(k)},
        }
    )
    edges = [(f"d{i}", f"h{i}") for i in range(k)]
    edges += [(f"h{i - 1}", f"h{i}") for i in range(1, k)]
    cont = [f"h{i}" for i in range(k)]
    with pytest.raises(ValueError, match=r"2097152 .*max_clique_entries=1000000"):
        BayesianNetwork(edges, continuous=cont).fit(df)
    # Cut the chain in two: two cliques of 2^10 and 2^11, answered.
    cut = [e for e in edges if e != ("h9", "h10")]
    bn = BayesianNetwork(cut, continuous=cont).fit(df)
    assert isinstance(bn._clg_, CLGJunctionTree)
    assert bn._clg_.clique_entries == 2**11
    assert np.isfinite(bn.score_samples(df.iloc[:5])).all()
