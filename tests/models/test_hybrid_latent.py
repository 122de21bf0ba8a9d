"""Latent nodes of a hybrid network (``latent=[...]`` with continuous nodes).

A latent node is a column missing in every row, learnt by EM with the exact
E-step of missing cells. References: one EM step written out by brute force
(enumeration of the discrete configurations, each with its joint Gaussian
conditioned densely on the observed cells, then the expected normal
equations); our GaussianMixture from the same start (a discrete latent
parent of one Gaussian child); scikit-learn's FactorAnalysis (one continuous
latent parent of Gaussian children); the parameters of simulated data.
"""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import multivariate_normal
from sklearn.decomposition import FactorAnalysis
from sklearn.exceptions import ConvergenceWarning

from bayeskit import BayesianNetwork, GaussianMixture
from bayeskit.graph.clg import CLGNode


def brute_force_step(bn, frame):
    """The log density of every row at ``bn``'s parameters and the tables
    after one EM step from them, by enumeration (``m`` of ``bn``, no prior on
    the regressions). ``frame`` has every variable, latent ones missing."""
    cont = list(bn.continuous_)
    disc = [v for v in bn.variables_ if v not in cont]
    order = [v for v in bn.dag_.topological_order() if v in cont]
    cards = [len(bn.states_[v]) for v in disc]
    ci = {v: j for j, v in enumerate(order)}
    counts = {v: np.zeros(np.shape(bn.cpds_[v])) for v in disc}
    scatter = {}
    log_dens = []
    for _, row in frame.iterrows():
        logw, moments = [], []
        for conf in itertools.product(*[range(k) for k in cards]):
            at = dict(zip(disc, conf))
            lw = 0.0
            for v in disc:
                pa = bn.dag_.parents(v)
                lw += np.log(bn.cpds_[v][(*[at[p] for p in pa], at[v])])
                x = row[v]
                if x is not None and x == x and bn.states_[v][at[v]] != x:
                    lw = -np.inf
            # x = B x + a + e in topological order.
            n = len(order)
            B, a, D = np.zeros((n, n)), np.zeros(n), np.zeros(n)
            for v in order:
                node = bn.cpds_[v]
                u = tuple(at[p] for p in node.discrete_parents)
                a[ci[v]] = np.asarray(node.intercept)[u]
                D[ci[v]] = np.asarray(node.variance)[u]
                for j, p in enumerate(node.continuous_parents):
                    B[ci[v], ci[p]] = np.asarray(node.coef)[u][j]
            A = np.linalg.inv(np.eye(n) - B)
            mu, S = A @ a, A @ np.diag(D) @ A.T
            x = np.array([row[v] for v in order], dtype=float)
            obs, hid = ~np.isnan(x), np.isnan(x)
            m, C = x.copy(), np.zeros((n, n))
            if obs.any() and np.isfinite(lw):
                lw += multivariate_normal(mu[obs], S[np.ix_(obs, obs)]).logpdf(x[obs])
            if hid.any():
                if obs.any():
                    g = S[np.ix_(hid, obs)] @ np.linalg.inv(S[np.ix_(obs, obs)])
                    m[hid] = mu[hid] + g @ (x[obs] - mu[obs])
                    C[np.ix_(hid, hid)] = S[np.ix_(hid, hid)] - g @ S[np.ix_(obs, hid)]
                else:
                    m, C = mu, S
            logw.append(lw)
            moments.append((at, m, C))
        logw = np.array(logw)
        total = np.logaddexp.reduce(logw)
        log_dens.append(total)
        r = np.exp(logw - total)
        for k, (at, m, C) in enumerate(moments):
            for v in disc:
                pa = bn.dag_.parents(v)
                counts[v][(*[at[p] for p in pa], at[v])] += r[k]
            for v in order:
                node = bn.cpds_[v]
                idx = [ci[p] for p in node.continuous_parents] + [ci[v]]
                z = np.concatenate([[1.0], m[idx]])
                E = np.outer(z, z)
                E[1:, 1:] += C[np.ix_(idx, idx)]
                key = (v, tuple(at[p] for p in node.discrete_parents))
                scatter[key] = scatter.get(key, 0.0) + r[k] * E
    tables = {}
    for v in disc:
        k = counts[v].shape[-1]
        c = counts[v]
        tables[v] = (c + bn.m / k) / (c.sum(axis=-1, keepdims=True) + bn.m)
    regressions = {}
    for (v, u), S in scatter.items():
        p = S.shape[0] - 1
        theta = np.linalg.solve(S[:p, :p], S[:p, p])
        var = (S[p, p] - theta @ S[:p, p]) / S[0, 0]
        regressions[v, u] = (theta, var)
    return np.array(log_dens), tables, regressions


def all_cpds(bn):
    return {v: bn.cpds_[v] for v in bn.variables_}


# (edges, continuous, latent, states, simulate)
def _mixture_of_regressions(rng, n):
    h = rng.integers(0, 3, n)
    b = np.array([-2.0, 0.5, 3.0])[h] + rng.normal(size=n)
    c = np.array([0.5, -1.0, 2.0])[h] * b + rng.normal(scale=0.7, size=n)
    d = rng.choice(["x", "y"], size=n)
    e = np.where(d == "x", 1.0, -1.0) + 0.4 * c + rng.normal(size=n)
    return pd.DataFrame({"b": b, "c": c, "d": d, "e": e})


def _factor(rng, n):
    z = rng.normal(size=n)
    d = rng.choice(["p", "q"], size=n)
    x1 = np.where(d == "p", 1.0, 2.0) + 1.2 * z + 0.5 * rng.normal(size=n)
    x2 = -0.8 * z + 0.6 * rng.normal(size=n)
    x3 = 0.5 + 0.9 * z + 0.4 * rng.normal(size=n)
    return pd.DataFrame({"d": d, "x1": x1, "x2": x2, "x3": x3})


def _both(rng, n):
    h = rng.integers(0, 2, n)
    z = np.where(h == 1, 1.5, -1.0) + rng.normal(size=n)
    x1 = z + 0.5 * rng.normal(size=n)
    x2 = 2.0 - z + 0.5 * rng.normal(size=n)
    x3 = np.where(h == 1, 3.0, 0.0) + rng.normal(size=n)
    return pd.DataFrame({"x1": x1, "x2": x2, "x3": x3})


CASES = {
    "mixture of regressions": (
        [("h", "b"), ("h", "c"), ("b", "c"), ("d", "e"), ("c", "e")],
        ["b", "c", "e"],
        ["h"],
        {"h": 3},
        _mixture_of_regressions,
    ),
    "factor": (
        [("z", "x1"), ("z", "x2"), ("z", "x3"), ("d", "x1")],
        ["z", "x1", "x2", "x3"],
        ["z"],
        None,
        _factor,
    ),
    "discrete and continuous latent": (
        [("h", "z"), ("z", "x1"), ("z", "x2"), ("h", "x3")],
        ["z", "x1", "x2", "x3"],
        ["h", "z"],
        {"h": 2},
        _both,
    ),
}


def _holes(rng, df, p=0.15):
    out = df.astype({c: object for c in df.columns if df[c].dtype == object})
    for v in out.columns:
        gap = rng.random(len(out)) < p
        out.loc[gap, v] = None if out[v].dtype == object else np.nan
    return out


def _net(case, **kw):
    edges, cont, latent, states, _ = CASES[case]
    return BayesianNetwork(edges, continuous=cont, latent=latent, states=states, **kw)


def _with_latent(bn, frame):
    out = frame.copy()
    for v in bn.latent_:
        out[v] = np.nan if v in bn.continuous_ else None
    return out


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("seed", range(3))
def test_one_em_step_is_the_brute_force_expected_statistics(case, seed):
    rng = np.random.default_rng(seed)
    df = _holes(rng, CASES[case][4](rng, 60))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = _net(case, max_iter=2, random_state=seed).fit(df)
        bn = _net(case, max_iter=1, cpds_init=all_cpds(start)).fit(df)
    log_dens, tables, regressions = brute_force_step(start, _with_latent(start, df))
    # m = 1 puts the Dirichlet's log density in the bound; the rows' part:
    m0 = _net(case, max_iter=1, m=0.0, cpds_init=all_cpds(start))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m0.fit(df)
    assert m0.lower_bounds_[0] == pytest.approx(log_dens.mean(), rel=1e-10)
    for v, table in tables.items():
        np.testing.assert_allclose(bn.cpds_[v], table, rtol=1e-10, atol=1e-14)
    for (v, u), (theta, var) in regressions.items():
        node = bn.cpds_[v]
        got = np.concatenate([[np.asarray(node.intercept)[u]], node.coef[u]])
        np.testing.assert_allclose(got, theta, rtol=1e-9, atol=1e-10)
        assert np.asarray(node.variance)[u] == pytest.approx(var, rel=1e-9)


@pytest.mark.parametrize("seed", range(50))
def test_the_objective_never_decreases(seed):
    rng = np.random.default_rng(seed)
    case = list(CASES)[seed % len(CASES)]
    df = _holes(rng, CASES[case][4](rng, 80), p=0.1 * (seed % 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        bn = _net(case, max_iter=30, tol=0.0, random_state=seed).fit(df)
    bounds = np.array(bn.lower_bounds_)
    assert len(bounds) == 30
    assert (np.diff(bounds) >= -1e-10 * np.abs(bounds[1:])).all()


@pytest.mark.parametrize("seed", range(5))
def test_a_discrete_latent_parent_of_one_gaussian_is_a_gaussian_mixture(seed):
    rng = np.random.default_rng(seed)
    k, n = 3, 300
    x = rng.normal(size=n) + rng.choice([-3.0, 0.0, 2.5], size=n)
    df = pd.DataFrame({"x": x})
    w = rng.dirichlet(np.ones(k))
    means = rng.normal(size=k)
    var = rng.uniform(0.5, 2.0, size=k)
    steps = 7
    gm = GaussianMixture(
        k,
        weights_init=w,
        means_init=means[:, None],
        precisions_init=(1 / var)[:, None, None],
        reg_covar=0.0,
        max_iter=steps,
        tol=0.0,
    )
    node = CLGNode(("h",), (), means, np.zeros((k, 0)), var)
    bn = BayesianNetwork(
        [("h", "x")],
        continuous=["x"],
        latent=["h"],
        states={"h": k},
        m=0.0,
        cpds_init={"h": w, "x": node},
        max_iter=steps,
        tol=0.0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        gm.fit(df[["x"]].to_numpy())
        bn.fit(df)
    np.testing.assert_allclose(bn.cpds_["h"], gm.weights_, rtol=1e-10)
    np.testing.assert_allclose(bn.cpds_["x"].intercept, gm.means_[:, 0], rtol=1e-10)
    np.testing.assert_allclose(
        bn.cpds_["x"].variance, gm.covariances_[:, 0, 0], rtol=1e-10
    )
    np.testing.assert_allclose(
        bn.predict_proba(df[[]].assign(x=x), "h").to_numpy(),
        gm.predict_proba(x[:, None]),
        rtol=1e-8,
        atol=1e-12,
    )


@pytest.mark.parametrize("seed", range(4))
def test_a_continuous_latent_parent_is_factor_analysis(seed):
    rng = np.random.default_rng(seed)
    n, p = 400, 4
    z = rng.normal(size=n)
    loadings = rng.uniform(0.6, 1.5, size=p) * rng.choice([-1, 1], size=p)
    X = z[:, None] * loadings + rng.normal(size=(n, p)) * rng.uniform(0.4, 0.9, p)
    X = X + rng.normal(size=p)
    cols = [f"x{j}" for j in range(p)]
    df = pd.DataFrame(X, columns=cols)
    bn = BayesianNetwork(
        [("z", c) for c in cols],
        continuous=["z", *cols],
        latent=["z"],
        random_state=seed,
        max_iter=5000,
        tol=1e-12,
    ).fit(df)
    fa = FactorAnalysis(1, tol=1e-12, max_iter=100_000).fit(X)
    # The average log-likelihood at the maximum, and the implied covariance.
    assert bn.lower_bound_ == pytest.approx(fa.score(X), rel=1e-8)
    s2 = float(bn.cpds_["z"].variance)
    b = np.array([float(bn.cpds_[c].coef[0]) for c in cols])
    psi = np.array([float(bn.cpds_[c].variance) for c in cols])
    cov = s2 * np.outer(b, b) + np.diag(psi)
    np.testing.assert_allclose(cov, fa.get_covariance(), rtol=1e-4, atol=1e-6)


def test_recovers_a_mixture_of_regressions():
    rng = np.random.default_rng(0)
    n = 4000
    h = rng.choice(2, size=n, p=[0.4, 0.6])
    x = np.where(h == 1, 2.0, -1.5) + rng.normal(size=n)
    y = np.where(h == 1, 1.0, -1.0) + np.where(h == 1, -0.5, 1.5) * x
    y = y + np.where(h == 1, 0.3, 0.6) * rng.normal(size=n)
    df = pd.DataFrame({"x": x, "y": y})
    bn = BayesianNetwork(
        [("h", "x"), ("h", "y"), ("x", "y")],
        continuous=["x", "y"],
        latent=["h"],
        states={"h": 2},
        n_init=3,
        random_state=0,
        tol=1e-8,
        max_iter=500,
    ).fit(df)
    k = int(np.argmax(bn.cpds_["h"]))  # the state of weight 0.6 is h = 1
    perm = [1 - k, k]
    np.testing.assert_allclose(bn.cpds_["h"][perm], [0.4, 0.6], atol=0.03)
    np.testing.assert_allclose(bn.cpds_["x"].intercept[perm], [-1.5, 2.0], atol=0.1)
    np.testing.assert_allclose(bn.cpds_["y"].intercept[perm], [-1.0, 1.0], atol=0.1)
    np.testing.assert_allclose(bn.cpds_["y"].coef[perm, 0], [1.5, -0.5], atol=0.05)
    np.testing.assert_allclose(bn.cpds_["y"].variance[perm], [0.36, 0.09], rtol=0.15)


def test_recovers_factor_loadings():
    rng = np.random.default_rng(1)
    n = 5000
    z = rng.normal(size=n)
    loadings = np.array([1.0, -0.7, 1.4])
    noise = np.array([0.5, 0.6, 0.4])
    X = 2.0 + z[:, None] * loadings + rng.normal(size=(n, 3)) * noise
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    bn = BayesianNetwork(
        [("z", v) for v in "abc"],
        continuous=["z", "a", "b", "c"],
        latent=["z"],
        random_state=0,
        tol=1e-9,
        max_iter=2000,
    ).fit(df)
    sd = np.sqrt(float(bn.cpds_["z"].variance))
    got = np.array([float(bn.cpds_[v].coef[0]) for v in "abc"]) * sd
    got = got * np.sign(got[0])  # the latent's sign is not identified
    np.testing.assert_allclose(got, loadings, atol=0.06)
    psi = np.array([float(bn.cpds_[v].variance) for v in "abc"])
    np.testing.assert_allclose(np.sqrt(psi), noise, atol=0.05)


def test_n_init_keeps_the_best_run():
    df = CASES["mixture of regressions"][4](np.random.default_rng(3), 150)
    better = 0
    for seed in range(4):
        kw = dict(random_state=seed, max_iter=25)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            one = _net("mixture of regressions", **kw).fit(df)
            many = _net("mixture of regressions", n_init=3, **kw).fit(df)
        # The first of the n_init starts is n_init=1's start.
        assert many.lower_bound_ >= one.lower_bound_ - 1e-12
        better += many.lower_bound_ > one.lower_bound_ + 1e-6
    assert better > 0


def test_n_init_of_a_discrete_network_with_a_latent_variable():
    rng = np.random.default_rng(0)
    h = rng.integers(0, 2, 300)
    p = np.where(h, 0.85, 0.2)
    df = pd.DataFrame({v: np.where(rng.random(300) < p, "t", "f") for v in "abcd"})
    edges = [("h", v) for v in "abcd"]
    better = 0
    for seed in range(4):
        kw = dict(latent=["h"], states={"h": 2}, random_state=seed, max_iter=20)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            one = BayesianNetwork(edges, **kw).fit(df)
            many = BayesianNetwork(edges, n_init=3, **kw).fit(df)
        assert many.lower_bound_ >= one.lower_bound_ - 1e-12
        better += many.lower_bound_ > one.lower_bound_ + 1e-6
    assert better > 0


def test_predict_fills_the_latent_nodes():
    rng = np.random.default_rng(0)
    df = _factor(rng, 200)
    bn = _net("factor", random_state=0).fit(df)
    out = bn.predict(df.head(5))
    # The latent's posterior mean, by brute force (one configuration: d seen).
    log_dens, _, _ = brute_force_step(bn, _with_latent(bn, df.head(5)))
    np.testing.assert_allclose(bn.log_likelihood(df.head(5)), log_dens, rtol=1e-10)
    assert "z" in out.columns and np.isfinite(out["z"].to_numpy(dtype=float)).all()


def test_rows_as_an_array_have_no_latent_column():
    rng = np.random.default_rng(0)
    X = CASES["factor"][4](rng, 100)[["x1", "x2", "x3"]].to_numpy()
    bn = BayesianNetwork(
        [("z", 0), ("z", 1), ("z", 2)],
        continuous=["z", 0, 1, 2],
        latent=["z"],
        random_state=0,
    ).fit(X)
    frame = pd.DataFrame(X[:5]).assign(z=np.nan)
    log_dens, _, _ = brute_force_step(bn, frame)
    np.testing.assert_allclose(bn.log_likelihood(X[:5]), log_dens, rtol=1e-10)


# -- bad input ----------------------------------------------------------------------
def test_a_latent_name_that_is_a_column_is_an_error():
    df = _factor(np.random.default_rng(0), 50)
    bn = BayesianNetwork(
        [("x1", "x2")], continuous=["x1", "x2"], latent=["x1"], random_state=0
    )
    with pytest.raises(ValueError, match=r"'x1'.*column"):
        bn.fit(df)


def test_a_discrete_latent_child_of_a_continuous_node_is_an_error():
    df = _factor(np.random.default_rng(0), 50)
    bn = BayesianNetwork(
        [("x1", "h"), ("h", "x2")],
        continuous=["x1", "x2", "x3"],
        latent=["h"],
        states={"h": 2},
    )
    with pytest.raises(ValueError, match="discrete node 'h' has the continuous parent"):
        bn.fit(df)


def test_a_discrete_latent_without_states_is_an_error():
    df = _factor(np.random.default_rng(0), 50)
    bn = BayesianNetwork([("h", "x1")], continuous=["x1", "x2", "x3"], latent=["h"])
    with pytest.raises(ValueError, match="latent variable 'h' has no states"):
        bn.fit(df)


def test_a_latent_node_without_observed_descendant_warns():
    df = _factor(np.random.default_rng(0), 50)
    bn = BayesianNetwork(
        [("w", "x1"), ("x1", "z")],
        continuous=["x1", "x2", "x3", "z", "w"],
        latent=["z", "w"],
        random_state=0,
    )
    with pytest.warns(UserWarning, match="'z' has no observed descendant") as rec:
        bn.fit(df)
    assert not any("'w'" in str(r.message) for r in rec)


def test_cpds_init_of_a_continuous_node_is_checked():
    df = _factor(np.random.default_rng(0), 50)
    wrong = CLGNode((), (), np.zeros(()), np.zeros((0,)), np.ones(()))
    bn = _net("factor", cpds_init={"x1": wrong})
    with pytest.raises(ValueError, match=r"cpds_init\['x1'\] has the parents"):
        bn.fit(df)
    bn = _net("factor", cpds_init={"x1": "table"})
    with pytest.raises(TypeError, match=r"cpds_init\['x1'\]"):
        bn.fit(df)


def test_cpds_init_takes_get_cpds_layout():
    rng = np.random.default_rng(2)
    df = _factor(rng, 80)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = _net("factor", random_state=0, max_iter=1).fit(df)
        a = _net("factor", max_iter=1, cpds_init=all_cpds(start)).fit(df)
        frames = {v: start.get_cpd(v) for v in start.continuous_}
        b = _net("factor", max_iter=1, cpds_init=frames).fit(df)
    for v in a.continuous_:
        np.testing.assert_allclose(a.cpds_[v].coef, b.cpds_[v].coef, rtol=1e-12)
        np.testing.assert_allclose(a.cpds_[v].variance, b.cpds_[v].variance)


def test_summarize_with_latent_nodes_is_an_error():
    df = _factor(np.random.default_rng(0), 50)
    with pytest.raises(ValueError, match=r"latent variables \['z'\] are learnt by EM"):
        _net("factor").summarize(df)
