"""Structure learning on mixed data: the conditional-Gaussian BIC against the
formula computed by hand (least squares per configuration) and against the
fitted hybrid network's log-likelihood, the Gaussian BIC against pgmpy's
BICGauss, hill climbing against pgmpy's on linear-Gaussian samples, the
conditional linear Gaussian restriction and the constraints."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayeskit import BayesianNetwork, HillClimbSearch, score_structure


def _random_frame(rng, n, n_disc, n_cont, cards):
    """Random discrete (labels) and continuous columns, the continuous ones
    depending on the discrete ones and on each other so that fits differ."""
    data = {}
    for k in range(n_disc):
        data[f"d{k}"] = rng.choice(list("abc")[: cards[k]], size=n)
    shift = (
        sum(
            (pd.Series(data[f"d{k}"]).map({"a": 0.0, "b": 1.0, "c": -1.5}))
            for k in range(n_disc)
        )
        if n_disc
        else 0.0
    )
    prev = np.zeros(n)
    for k in range(n_cont):
        x = 0.7 * prev + np.asarray(shift) + rng.normal(size=n) * (1 + k)
        data[f"x{k}"] = x
        prev = x
    return pd.DataFrame(data)


def _random_clg_dag(rng, names, cont, max_parents=3):
    """A random DAG along a random order in which no discrete node has a
    continuous parent."""
    order = list(rng.permutation(names))
    # discrete nodes first keeps the restriction for any edge along the order
    order = [v for v in order if v not in cont] + [v for v in order if v in cont]
    edges = []
    for i, child in enumerate(order):
        earlier = order[:i]
        k = int(rng.integers(0, min(len(earlier), max_parents) + 1))
        for p in rng.choice(earlier, size=k, replace=False) if k else []:
            edges.append((str(p), child))
    return edges


def _by_hand(df, edges, cont, weights=None, method="bic"):
    """The score by the formula: discrete families from their counts, each
    continuous family by numpy least squares in every configuration of its
    discrete parents."""
    n = len(df)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    big_n = w.sum()
    total = 0.0
    for v in df.columns:
        pa = [p for p, c in edges if c == v]
        dp = [p for p in pa if p not in cont]
        cp = [p for p in pa if p in cont]
        states = [sorted(df[p].unique()) for p in dp]
        q = int(np.prod([len(s) for s in states])) if dp else 1
        if v in cont:
            ll = 0.0
            for config in itertools.product(*states):
                rows = np.ones(n, dtype=bool)
                for p, s in zip(dp, config):
                    rows &= (df[p] == s).to_numpy()
                if rows.sum() <= 1 + len(cp):  # not determined: never taken
                    return -np.inf
                X = np.column_stack([np.ones(rows.sum()), df.loc[rows, cp]])
                y = df.loc[rows, v].to_numpy()
                sw = np.sqrt(w[rows])
                coef, *_ = np.linalg.lstsq(X * sw[:, None], y * sw, rcond=None)
                rss = float((w[rows] * (y - X @ coef) ** 2).sum())
                wj = w[rows].sum()
                ll += -0.5 * wj * (np.log(2 * np.pi * rss / wj) + 1)
            k = q * (len(cp) + 2)
        else:
            r = df[v].nunique()
            counts = pd.Series(w).groupby([df[p] for p in [*dp, v]]).sum()
            counts = counts[counts > 0]
            if dp:
                n_j = counts.groupby(level=list(range(len(dp)))).transform("sum")
            else:
                n_j = counts.sum()
            ll = float((counts * np.log(counts / n_j)).sum())
            k = q * (r - 1)
        penalty = {"bic": 0.5 * np.log(big_n) * k, "aic": k, "ll": 0.0}[method]
        total += ll - penalty
    return total


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n_disc=st.integers(0, 3),
    n_cont=st.integers(1, 4),
    weighted=st.booleans(),
    method=st.sampled_from(["bic", "aic", "ll"]),
)
def test_conditional_gaussian_score_is_the_formula(
    seed, n_disc, n_cont, weighted, method
):
    # Random mixed data, a random conditional linear Gaussian DAG: the score
    # is the sum of the families' scores computed by hand.
    rng = np.random.default_rng(seed)
    cards = rng.integers(2, 4, size=n_disc)
    df = _random_frame(rng, 120, n_disc, n_cont, cards)
    cont = [f"x{k}" for k in range(n_cont)]
    edges = _random_clg_dag(rng, list(df.columns), set(cont))
    w = rng.integers(1, 4, size=len(df)).astype(float) if weighted else None
    got = score_structure(df, edges, method, continuous=cont, sample_weight=w)
    want = _by_hand(df, edges, set(cont), w, method)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    if weighted:  # integer weights are repeated rows
        rep = df.loc[np.repeat(np.arange(len(df)), w.astype(int))]
        rep = rep.reset_index(drop=True)
        same = score_structure(rep, edges, method, continuous=cont)
        np.testing.assert_allclose(got, same, rtol=1e-10)


def test_score_is_the_fitted_hybrid_networks_likelihood_less_the_penalty():
    # Decomposability: the score of a DAG is the log-likelihood of the hybrid
    # network fitted to the same rows by maximum likelihood (m=0), less half
    # of log n per free parameter, and the sum of its families' scores.
    for seed in range(10):
        rng = np.random.default_rng(seed)
        n_disc, n_cont = int(rng.integers(1, 3)), int(rng.integers(1, 4))
        cards = rng.integers(2, 4, size=n_disc)
        df = _random_frame(rng, 300, n_disc, n_cont, cards)
        cont = [f"x{k}" for k in range(n_cont)]
        edges = _random_clg_dag(rng, list(df.columns), set(cont))
        net = BayesianNetwork(edges, continuous=cont, m=0).fit(df)
        ll = net.score_samples(df).sum()
        want = ll - 0.5 * np.log(len(df)) * net.n_parameters()
        got = score_structure(df, edges, "bic", continuous=cont)
        np.testing.assert_allclose(got, want, rtol=1e-10)
        np.testing.assert_allclose(
            score_structure(df, edges, "ll", continuous=cont), ll, rtol=1e-10
        )
        families = sum(
            score_structure(
                df, [(p, c) for p, c in edges if c == v], "bic", continuous=cont
            )
            - score_structure(df, [], "bic", continuous=cont)
            for v in df.columns
        ) + score_structure(df, [], "bic", continuous=cont)
        np.testing.assert_allclose(got, families, rtol=1e-10)


@pytest.mark.parity
@pytest.mark.parametrize("method", ["bic-g", "aic-g", "ll-g"])
def test_gaussian_scores_equal_pgmpys(method):
    pytest.importorskip("pgmpy")
    pytest.importorskip("statsmodels")
    from pgmpy.estimators import AICGauss, BICGauss, LogLikelihoodGauss
    from pgmpy.models import LinearGaussianBayesianNetwork

    peer = {"bic-g": BICGauss, "aic-g": AICGauss, "ll-g": LogLikelihoodGauss}[method]
    for seed in range(5):
        rng = np.random.default_rng(seed)
        df = _random_frame(rng, 200, 0, 5, [])
        edges = _random_clg_dag(rng, list(df.columns), set(df.columns))
        model = LinearGaussianBayesianNetwork(edges)
        model.add_nodes_from(df.columns)
        want = peer(df).score(model)
        np.testing.assert_allclose(score_structure(df, edges, method), want, rtol=1e-9)
        # every column continuous, as 'bic' with continuous= says
        base = method.split("-")[0]
        got = score_structure(df, edges, base, continuous=list(df.columns))
        np.testing.assert_allclose(got, want, rtol=1e-9)


def _linear_gaussian_sample(seed, n):
    """Rows of a random linear-Gaussian network of six nodes, and its edges."""
    rng = np.random.default_rng(seed)
    names = [f"v{k}" for k in range(6)]
    edges = _random_clg_dag(rng, names, set(names), max_parents=2)
    data = {}
    order = []
    remaining = list(names)
    while remaining:  # a topological order
        for v in remaining:
            if all(p in order for p, c in edges if c == v):
                order.append(v)
                remaining.remove(v)
                break
    for v in order:
        x = rng.normal(size=n) * rng.uniform(0.5, 1.5) + rng.normal()
        for p, c in edges:
            if c == v:
                x = x + rng.choice([-1, 1]) * rng.uniform(0.5, 1.5) * data[p]
        data[v] = x
    return pd.DataFrame({v: data[v] for v in names}), edges


@pytest.mark.parity
@pytest.mark.slow
def test_hill_climb_scores_at_least_pgmpys_on_linear_gaussian_samples():
    pytest.importorskip("statsmodels")
    pgmpy = pytest.importorskip("pgmpy.estimators")
    for seed in range(4):
        df, _ = _linear_gaussian_sample(seed, 500)
        ours = HillClimbSearch("bic-g").fit(df)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dag = pgmpy.HillClimbSearch(df).estimate(
                scoring_method="bic-g", show_progress=False
            )
        theirs = score_structure(df, list(dag.edges()), "bic-g")
        assert ours.score_ >= theirs - 1e-6
        np.testing.assert_allclose(
            ours.score_, score_structure(df, ours.edges_, "bic-g"), rtol=1e-12
        )


def _hybrid_sample(seed, n):
    """Rows of a hybrid network (three discrete, four continuous nodes) with
    strong dependencies, and its edges."""
    rng = np.random.default_rng(seed)
    a = rng.choice(["a0", "a1"], size=n, p=[0.4, 0.6])
    b = np.where(
        a == "a0",
        rng.choice(["b0", "b1"], size=n, p=[0.85, 0.15]),
        rng.choice(["b0", "b1"], size=n, p=[0.2, 0.8]),
    )
    c = rng.choice(["c0", "c1", "c2"], size=n)
    x = np.where(b == "b0", -1.0, 1.0) + rng.normal(size=n)
    y = 1.5 * x + pd.Series(c).map({"c0": 0.0, "c1": 2.0, "c2": -2.0}).to_numpy()
    y = y + rng.normal(size=n)
    z = -y + rng.normal(size=n)
    u = np.where(a == "a0", 0.5, -0.5) + 0.8 * z + rng.normal(size=n)
    df = pd.DataFrame({"a": a, "b": b, "c": c, "x": x, "y": y, "z": z, "u": u})
    edges = [
        ("a", "b"),
        ("b", "x"),
        ("x", "y"),
        ("c", "y"),
        ("y", "z"),
        ("a", "u"),
        ("z", "u"),
    ]
    return df, edges


def test_hybrid_search_recovers_the_skeleton():
    # Precision and recall of the skeleton over seeds (the table in the docs).
    recalls, precisions = [], []
    for seed in range(5):
        df, truth = _hybrid_sample(seed, 2000)
        hc = HillClimbSearch(continuous="float").fit(df)
        assert hc.continuous_ == ["x", "y", "z", "u"]
        true_sk = {frozenset(e) for e in truth}
        got_sk = {frozenset(e) for e in hc.edges_}
        recalls.append(len(true_sk & got_sk) / len(true_sk))
        precisions.append(len(true_sk & got_sk) / len(got_sk))
        for p, c in hc.edges_:  # the restriction holds
            assert not (p in hc.continuous_ and c not in hc.continuous_)
    assert np.mean(recalls) >= 0.9
    assert np.mean(precisions) >= 0.9


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(8, 40))
def test_learnt_structure_fits_and_keeps_the_restriction(seed, n):
    # Small samples, discrete nodes of up to three states: the search never
    # takes a family whose regression the data do not determine, so the
    # network learnt fits; no discrete node gets a continuous parent, and the
    # network is BayesianNetwork(edges_, continuous=continuous_).
    rng = np.random.default_rng(seed)
    cards = rng.integers(2, 4, size=2)
    df = _random_frame(rng, n, 2, 3, cards)
    if any(df[f"x{k}"].nunique() < 2 for k in range(3)):
        return
    hc = HillClimbSearch(
        continuous=["x0", "x1", "x2"], n_restarts=2, random_state=seed
    ).fit(df)
    for p, c in hc.edges_:
        assert not (p.startswith("x") and c.startswith("d"))
    net = BayesianNetwork(hc.edges_, continuous=hc.continuous_, m=1.0).fit(df)
    assert sorted(net.continuous_) == ["x0", "x1", "x2"]
    np.testing.assert_allclose(
        net.score_samples(df), hc.network_.score_samples(df), rtol=1e-12
    )
    assert np.isfinite(hc.score_)


def test_constraints_hold_with_continuous_columns():
    df, _ = _hybrid_sample(0, 1000)
    cont = ["x", "y", "z", "u"]
    hc = HillClimbSearch(
        continuous=cont,
        black_list=[("x", "y"), ("y", "x")],
        fixed_edges=[("c", "z")],
        max_indegree=2,
    ).fit(df)
    assert ("x", "y") not in hc.edges_ and ("y", "x") not in hc.edges_
    assert ("c", "z") in hc.edges_
    assert max(pd.Series([c for _, c in hc.edges_]).value_counts()) <= 2
    tiers = [["u", "z"], ["a", "b", "c", "x", "y"]]
    hc = HillClimbSearch(continuous=cont, temporal_order=tiers).fit(df)
    rank = {v: i for i, tier in enumerate(tiers) for v in tier}
    assert all(rank[p] <= rank[c] for p, c in hc.edges_)


def test_bad_input_names_the_parameter_or_the_edge():
    df, _ = _hybrid_sample(0, 200)
    cont = ["x", "y", "z", "u"]
    with pytest.raises(ValueError, match=r"fixed_edges holds \('x', 'b'\).*discrete"):
        HillClimbSearch(continuous=cont, fixed_edges=[("x", "b")]).fit(df)
    with pytest.raises(ValueError, match=r"\('y', 'c'\).*continuous parent"):
        score_structure(df, [("y", "c")], continuous=cont)
    with pytest.raises(ValueError, match=r"bic-cg.*continuous="):
        HillClimbSearch("bic-cg").fit(df)
    with pytest.raises(ValueError, match="scoring_method='bdeu'"):
        HillClimbSearch("bdeu", continuous=cont).fit(df)
    with pytest.raises(ValueError, match="continuous must name"):
        HillClimbSearch(continuous=["nope"]).fit(df)
    with pytest.raises(ValueError, match=r"continuous column 'a'.*non-numeric"):
        HillClimbSearch(continuous=["a", "x"]).fit(df)
    with pytest.raises(ValueError, match=r"continuous column 'a'.*non-numeric"):
        score_structure(df, [], "bic-g")
    with pytest.raises(ValueError, match=r"bic-g.*leaves out"):
        HillClimbSearch("bic-g", continuous=["x"]).fit(df)
    flat = df.assign(x=1.0)
    with pytest.raises(ValueError, match=r"continuous column 'x'.*two distinct"):
        HillClimbSearch(continuous=cont).fit(flat)
    with pytest.raises(ValueError, match="continuous"):
        HillClimbSearch(continuous="floats").fit(df)
