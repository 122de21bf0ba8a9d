"""BayesianNetwork with continuous nodes: learning, queries and bad input.

References: weighted least squares (scikit-learn's LinearRegression with
sample weights, and the closed-form ridge solve for the prior), the density
by hand (enumeration of the discrete configurations, each configuration's
joint Gaussian in moment form by dense linear algebra, scipy's densities),
and pgmpy's LinearGaussianBayesianNetwork on all-continuous networks.
"""

import itertools
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp
from scipy.stats import multivariate_normal
from sklearn.linear_model import LinearRegression

from bayeskit import BayesianNetwork
from bayeskit.priors import NormalInverseGamma


def simulate(rng, n=400):
    """A hybrid network: discrete a -> d, a -> b, d -> c; continuous b -> c,
    e a root with child c."""
    a = rng.choice(["lo", "hi", "mid"], size=n, p=[0.5, 0.3, 0.2])
    d = np.where(rng.random(n) < np.where(a == "hi", 0.8, 0.3), "yes", "no")
    shift = {"lo": -1.0, "hi": 2.0, "mid": 0.5}
    b = np.array([shift[x] for x in a]) + rng.normal(size=n) * 0.7
    e = 3.0 + rng.normal(size=n)
    slope = np.where(d == "yes", 1.5, -0.5)
    c = 1.0 + slope * b + 0.4 * e + rng.normal(size=n) * np.where(d == "yes", 0.5, 1)
    return pd.DataFrame({"a": a, "d": d, "b": b, "e": e, "c": c})


EDGES = [("a", "d"), ("a", "b"), ("d", "c"), ("b", "c"), ("e", "c")]
CONT = ["b", "e", "c"]


def reference(bn, row: dict):
    """Enumeration: ``(log density of the observed cells, {config: weight},
    {config: (mean, cov)})`` from the fitted tables."""
    disc = [v for v in bn.variables_ if v not in bn.continuous_]
    cont = list(bn.dag_.topological_order())
    cont = [v for v in cont if v in bn.continuous_]
    idx = {v: j for j, v in enumerate(cont)}
    logw, moments = {}, {}
    for conf in itertools.product(*[range(len(bn.states_[v])) for v in disc]):
        z = dict(zip(disc, conf))
        if any(v in row and bn.states_[v][z[v]] != row[v] for v in disc):
            continue
        lp = 0.0
        for v in disc:
            pa = bn.dag_.parents(v)
            lp += np.log(bn.cpds_[v][(*[z[p] for p in pa], z[v])])
        k = len(cont)
        a, B, var = np.zeros(k), np.zeros((k, k)), np.zeros(k)
        for v in cont:
            node = bn.cpds_[v]
            u = tuple(z[p] for p in node.discrete_parents)
            a[idx[v]], var[idx[v]] = node.intercept[u], node.variance[u]
            for p, coef in zip(node.continuous_parents, node.coef[u]):
                B[idx[v], idx[p]] = coef
        A = np.linalg.inv(np.eye(k) - B)
        mu, S = A @ a, A @ np.diag(var) @ A.T
        obs = np.array([v in row for v in cont])
        x = np.array([row.get(v, np.nan) for v in cont], dtype=float)
        if obs.any():
            lp += multivariate_normal(mu[obs], S[np.ix_(obs, obs)]).logpdf(x[obs])
        h = ~obs
        m, cov = x.copy(), np.zeros((k, k))
        if h.any():
            gain = (
                np.linalg.solve(S[np.ix_(obs, obs)], S[np.ix_(h, obs)].T).T
                if obs.any()
                else np.zeros((h.sum(), 0))
            )
            m[h] = mu[h] + gain @ (x[obs] - mu[obs])
            cov[np.ix_(h, h)] = S[np.ix_(h, h)] - gain @ S[np.ix_(h, obs)].T
        logw[conf] = lp
        moments[conf] = (dict(zip(cont, m)), dict(zip(cont, np.diag(cov))))
    ev = logsumexp(list(logw.values()))
    return ev, {c: np.exp(w - ev) for c, w in logw.items()}, moments, disc


def random_rows(rng, df, n):
    rows = df.sample(n, random_state=int(rng.integers(1 << 31))).reset_index(drop=True)
    mask = rng.random(rows.shape) < 0.4
    rows = rows.astype(object).mask(mask)
    for v in CONT:
        rows[v] = rows[v].astype(float)
    return rows


@pytest.mark.parametrize("seed", range(12))
def test_queries_equal_enumeration(seed):
    rng = np.random.default_rng(seed)
    df = simulate(rng)
    bn = BayesianNetwork(EDGES, continuous=CONT).fit(df)
    rows = random_rows(rng, df, 20)
    ll = bn.score_samples(rows)
    proba = bn.predict_proba(rows)
    filled = bn.predict(rows)
    for i in range(len(rows)):
        row = {k: v for k, v in rows.iloc[i].items() if not pd.isna(v)}
        ev, w, moments, disc = reference(bn, row)
        np.testing.assert_allclose(ll[i], ev, rtol=1e-10, atol=1e-10)
        for j, v in enumerate(disc):
            for k, s in enumerate(bn.states_[v]):
                p = sum(wc for c, wc in w.items() if c[j] == k)
                np.testing.assert_allclose(proba[(v, s)].iloc[i], p, atol=1e-10)
        for v in CONT:
            mean = sum(wc * moments[c][0][v] for c, wc in w.items())
            np.testing.assert_allclose(filled[v].iloc[i], mean, rtol=1e-10, atol=1e-10)
        # The joint MAP of the missing discrete cells.
        best = max(w, key=w.get)
        for j, v in enumerate(disc):
            assert filled[v].iloc[i] == bn.states_[v][best[j]]
        # query: a continuous node's mixture, a discrete node's marginal.
        hidden = [v for v in bn.variables_ if v not in row]
        for v in hidden:
            q = bn.query(v, evidence=row)
            if v in CONT:
                np.testing.assert_allclose(
                    (q["weight"] * q["mean"]).sum(),
                    filled[v].iloc[i],
                    rtol=1e-10,
                    atol=1e-10,
                )
                np.testing.assert_allclose(q["weight"].sum(), 1.0, atol=1e-12)
                second = sum(
                    wc * (moments[c][1][v] + moments[c][0][v] ** 2)
                    for c, wc in w.items()
                )
                got = (q["weight"] * (q["variance"] + q["mean"] ** 2)).sum()
                np.testing.assert_allclose(got, second, rtol=1e-9, atol=1e-9)
            else:
                np.testing.assert_allclose(
                    q.to_numpy(), proba[v].iloc[i].to_numpy(), atol=1e-10
                )


@pytest.mark.parametrize("seed", range(10))
def test_learning_is_weighted_least_squares_per_parent_configuration(seed):
    rng = np.random.default_rng(seed)
    df = simulate(rng)
    w = rng.uniform(0.1, 3.0, size=len(df))
    bn = BayesianNetwork(EDGES, continuous=CONT).fit(df, sample_weight=w)
    node = bn.cpds_["c"]
    assert node.discrete_parents == ("d",) and node.continuous_parents == ("b", "e")
    for k, s in enumerate(bn.states_["d"]):
        rows = (df["d"] == s).to_numpy()
        X, y = df.loc[rows, ["b", "e"]].to_numpy(), df.loc[rows, "c"].to_numpy()
        lr = LinearRegression().fit(X, y, sample_weight=w[rows])
        np.testing.assert_allclose(node.intercept[k], lr.intercept_, rtol=1e-10)
        np.testing.assert_allclose(node.coef[k], lr.coef_, rtol=1e-10)
        resid = y - lr.predict(X)
        var = np.sum(w[rows] * resid**2) / w[rows].sum()
        np.testing.assert_allclose(node.variance[k], var, rtol=1e-10)
    # No continuous parent: the weighted mean and variance per state of a.
    b = bn.cpds_["b"]
    for k, s in enumerate(bn.states_["a"]):
        rows = (df["a"] == s).to_numpy()
        mean = np.average(df["b"][rows], weights=w[rows])
        var = np.average((df["b"][rows] - mean) ** 2, weights=w[rows])
        np.testing.assert_allclose([b.intercept[k], b.variance[k]], [mean, var])


def test_integer_weights_are_repeated_rows(rng):
    df = simulate(rng, 150)
    w = rng.integers(0, 4, size=len(df))
    a = BayesianNetwork(EDGES, continuous=CONT).fit(df, sample_weight=w)
    b = BayesianNetwork(EDGES, continuous=CONT).fit(df.loc[np.repeat(df.index, w)])
    rows = random_rows(rng, df, 30)
    np.testing.assert_allclose(a.score_samples(rows), b.score_samples(rows))


def test_map_under_normal_inverse_gamma_is_the_ridge_solve(rng):
    df = simulate(rng, 120)
    prior = NormalInverseGamma(
        mean=0.7, mean_weight=5.0, scatter=3.0, variance_weight=4.0
    )
    bn = BayesianNetwork(EDGES, continuous=CONT, continuous_prior=prior).fit(df)
    ml = BayesianNetwork(EDGES, continuous=CONT).fit(df)
    node = bn.cpds_["c"]
    assert not np.allclose(node.coef, ml.cpds_["c"].coef)
    theta0 = np.array([0.7, 0.0, 0.0])
    for k, s in enumerate(bn.states_["d"]):
        rows = (df["d"] == s).to_numpy()
        Z = np.column_stack([np.ones(rows.sum()), df.loc[rows, ["b", "e"]]])
        y = df.loc[rows, "c"].to_numpy()
        theta = np.linalg.solve(Z.T @ Z + 5.0 * np.eye(3), Z.T @ y + 5.0 * theta0)
        np.testing.assert_allclose(node.intercept[k], theta[0], rtol=1e-10)
        np.testing.assert_allclose(node.coef[k], theta[1:], rtol=1e-10)
        spread = (
            3.0 + np.sum((y - Z @ theta) ** 2) + 5.0 * np.sum((theta - theta0) ** 2)
        )
        np.testing.assert_allclose(node.variance[k], spread / (4.0 + rows.sum()))
    # No continuous parent: NormalInverseGamma's own mode.
    for k, s in enumerate(bn.states_["a"]):
        x = df.loc[(df["a"] == s).to_numpy(), "b"].to_numpy()
        m, v = prior.map(
            np.array([[len(x)]]),
            np.array([[x.mean()]]),
            np.array([[np.sum((x - x.mean()) ** 2)]]),
            np.zeros((1, 1)),
            np.ones((1, 1)),
        )
        np.testing.assert_allclose(bn.cpds_["b"].intercept[k], m[0, 0])
        np.testing.assert_allclose(bn.cpds_["b"].variance[k], v[0, 0])


def _chain(rng, n=300, k=4):
    """An all-continuous network: a random DAG over k nodes and its data."""
    names = [f"x{i}" for i in range(k)]
    edges = [
        (names[i], names[j]) for j in range(k) for i in range(j) if rng.random() < 0.6
    ]
    data = {}
    for _j, v in enumerate(names):
        pa = [p for p, c in edges if c == v]
        data[v] = rng.normal(0, 2) + sum(rng.normal() * data[p] for p in pa)
        data[v] = data[v] + rng.uniform(0.3, 1.5) * rng.normal(size=n)
    return names, edges, pd.DataFrame(data)


def _pgmpy_model(bn, edges):
    pytest.importorskip("pgmpy")
    from pgmpy.factors.continuous import LinearGaussianCPD
    from pgmpy.models import LinearGaussianBayesianNetwork

    model = LinearGaussianBayesianNetwork(edges)
    model.add_nodes_from(bn.variables_)
    for v in bn.variables_:
        node = bn.cpds_[v]
        model.add_cpds(
            LinearGaussianCPD(
                v,
                [float(node.intercept), *node.coef.tolist()],
                float(np.sqrt(node.variance)),
                list(node.continuous_parents),
            )
        )
    return model


@pytest.mark.parity
@pytest.mark.parametrize("seed", range(6))
def test_all_continuous_equals_pgmpy(seed):
    rng = np.random.default_rng(seed)
    names, edges, df = _chain(rng)
    bn = BayesianNetwork(edges, continuous=names).fit(df)
    model = _pgmpy_model(bn, edges)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(
            bn.score_samples(df).sum(), model.log_likelihood(df), rtol=1e-8
        )
        hide = [v for v in names if rng.random() < 0.5] or names[:1]
        seen = [v for v in names if v not in hide]
        variables, mu, cov = model.predict_probability(df[seen].head(25))
    filled = bn.predict(df.head(25).assign(**{v: np.nan for v in hide}))
    # pgmpy's posterior means agree to about 1e-8 (absolute); the dense
    # conditioning of the test below is the reference at 1e-10.
    np.testing.assert_allclose(filled[variables].to_numpy(), mu, rtol=1e-7, atol=1e-7)
    row = df.iloc[0]
    for j, v in enumerate(variables):
        q = bn.query(v, evidence={s: row[s] for s in seen})
        np.testing.assert_allclose(q["variance"].iloc[0], cov[j, j], rtol=1e-7)
    # pgmpy's learnt std is sqrt(RSS / (n - p)); the MLE divides by n.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = type(model)(edges)
        fitted.add_nodes_from(names)
        fitted.fit(df)
    for cpd in fitted.cpds:
        node = bn.cpds_[cpd.variable]
        p = 1 + len(node.continuous_parents)
        np.testing.assert_allclose(cpd.beta, [float(node.intercept), *node.coef])
        np.testing.assert_allclose(cpd.std**2 * (len(df) - p) / len(df), node.variance)


def test_all_continuous_joint_gaussian_by_dense_conditioning(rng):
    names, edges, df = _chain(rng, k=5)
    bn = BayesianNetwork(edges, continuous=names).fit(df)
    for _ in range(20):
        row = df.iloc[int(rng.integers(len(df)))]
        seen = [v for v in names if rng.random() < 0.5]
        ev, _w, moments, _ = reference(bn, {v: row[v] for v in seen})
        np.testing.assert_allclose(
            bn.score_samples(
                df.iloc[[0]]
                .assign(**{v: np.nan for v in names})
                .assign(**{v: row[v] for v in seen})
            ),
            ev,
            rtol=1e-10,
            atol=1e-10,
        )
        for v in names:
            if v in seen:
                continue
            q = bn.query(v, evidence={s: row[s] for s in seen})
            np.testing.assert_allclose(q["mean"].iloc[0], moments[()][0][v], rtol=1e-10)
            np.testing.assert_allclose(
                q["variance"].iloc[0], moments[()][1][v], rtol=1e-10
            )


def test_sample_then_fit_recovers_the_tables(rng):
    df = simulate(rng, 300)
    bn = BayesianNetwork(EDGES, continuous=CONT).fit(df)
    again = BayesianNetwork(EDGES, continuous=CONT).fit(
        bn.sample(40_000, random_state=1)
    )
    for v in CONT:
        np.testing.assert_allclose(again.cpds_[v].coef, bn.cpds_[v].coef, atol=0.05)
        np.testing.assert_allclose(
            again.cpds_[v].variance, bn.cpds_[v].variance, rtol=0.06
        )
    np.testing.assert_allclose(again.cpds_["d"], bn.cpds_["d"], atol=0.03)


def test_n_parameters_counts_every_regression(rng):
    bn = BayesianNetwork(EDGES, continuous=CONT).fit(simulate(rng, 200))
    # a: 2; d | a: 3; b | a: 3 x (intercept, variance); e: 2; c | d: 2 x 4.
    assert bn.n_parameters() == 2 + 3 + 6 + 2 + 8


def test_a_string_in_a_continuous_column_names_the_node(rng):
    df = simulate(rng, 50).astype({"b": object})
    df.loc[3, "b"] = "high"
    with pytest.raises(ValueError, match=r"continuous node 'b'.*'high'"):
        BayesianNetwork(EDGES, continuous=CONT).fit(df)
    bn = BayesianNetwork(EDGES, continuous=CONT).fit(simulate(rng, 50))
    with pytest.raises(ValueError, match="continuous node 'b'"):
        bn.score_samples(df)


def test_a_discrete_child_of_a_continuous_parent_is_refused(rng):
    df = simulate(rng, 50)
    with pytest.raises(
        ValueError, match="discrete node 'd' has the continuous parent 'b'"
    ):
        BayesianNetwork([*EDGES, ("b", "d")], continuous=CONT).fit(df)


def test_a_singular_regression_names_the_node(rng):
    df = simulate(rng, 60)
    df["f"] = 2 * df["b"] - 1  # collinear with b
    edges = [*EDGES, ("b", "g"), ("f", "g"), ("f", "c")]
    df["g"] = df["b"] + rng.normal(size=len(df))
    with pytest.raises(ValueError, match="continuous node 'g': singular regression"):
        BayesianNetwork(edges[:-1], continuous=[*CONT, "f", "g"]).fit(df)
    # A configuration of the discrete parents with no rows.
    df2 = simulate(rng, 60)
    df2 = df2[df2["a"] != "mid"]
    with pytest.raises(ValueError, match=r"continuous node 'b': no rows.*a='mid'"):
        BayesianNetwork(EDGES, continuous=CONT, states={"a": ["hi", "lo", "mid"]}).fit(
            df2
        )
    # The prior makes both identifiable.
    prior = NormalInverseGamma(mean_weight=1.0, scatter=1.0, variance_weight=1.0)
    BayesianNetwork(
        EDGES,
        continuous=CONT,
        states={"a": ["hi", "lo", "mid"]},
        continuous_prior=prior,
    ).fit(df2)


def test_not_yet_available_paths_say_so(rng):
    df = simulate(rng, 50)
    bn = BayesianNetwork(EDGES, continuous=CONT).fit(df)
    with pytest.raises(ValueError, match="continuous"):
        bn.predict_proba(df, "b")
    with pytest.raises(ValueError, match="soft_evidence on 'b', a continuous node"):
        bn.query("a", soft_evidence={"b": [1, 2]})
    with pytest.raises(ValueError, match=r"do .*continuous nodes"):
        bn.query("a", do={"d": df["d"].iloc[0]})


def test_the_caller_data_is_not_changed(rng):
    df = simulate(rng, 80)
    rows = random_rows(rng, df, 10)
    before = rows.copy()
    bn = BayesianNetwork(EDGES, continuous=CONT).fit(df)
    bn.predict(rows)
    pd.testing.assert_frame_equal(rows, before)


def test_map_query_is_the_argmax_of_the_discrete_posterior(rng):
    df = simulate(rng, 300)
    bn = BayesianNetwork(EDGES, continuous=CONT).fit(df)
    for _ in range(10):
        ev = {"b": rng.normal(0, 2), "c": rng.normal(0, 3)}
        _, w, _, disc = reference(bn, ev)
        best = max(w, key=w.get)
        assert bn.map_query(evidence=ev) == {
            v: bn.states_[v][k] for v, k in zip(disc, best)
        }


def test_get_cpd_labels_the_regressions(rng):
    df = simulate(rng, 200)
    bn = BayesianNetwork(EDGES, continuous=CONT).fit(df)
    table = bn.get_cpd("c")
    assert list(table.columns) == ["intercept", "coef[b]", "coef[e]", "variance"]
    assert list(table.index) == list(bn.states_["d"])
    for s in bn.states_["d"]:
        rows = (df["d"] == s).to_numpy()
        lr = LinearRegression().fit(df.loc[rows, ["b", "e"]], df.loc[rows, "c"])
        np.testing.assert_allclose(
            table.loc[s, ["intercept", "coef[b]", "coef[e]"]],
            [lr.intercept_, *lr.coef_],
            rtol=1e-10,
        )
    np.testing.assert_allclose(bn.get_cpd("d").to_numpy(), bn.cpds_["d"])
    assert "coef[b]" in bn._repr_html_()


@pytest.mark.parity
def test_to_pgmpy_of_an_all_continuous_network(rng):
    names, edges, df = _chain(rng)
    bn = BayesianNetwork(edges, continuous=names).fit(df)
    model = bn.to_pgmpy()
    assert model.check_model()
    reference = _pgmpy_model(bn, edges)
    mean, cov = model.to_joint_gaussian()
    ref_mean, ref_cov = reference.to_joint_gaussian()
    np.testing.assert_allclose(mean, ref_mean)
    np.testing.assert_allclose(cov, ref_cov)
    hybrid = BayesianNetwork(EDGES, continuous=CONT).fit(simulate(rng, 100))
    with pytest.raises(ValueError, match="only an all-continuous network"):
        hybrid.to_pgmpy()


def test_an_array_reads_as_the_frame_of_its_columns(rng):
    df = simulate(rng, 200)
    cols = {v: j for j, v in enumerate(df.columns)}
    edges = [(cols[a], cols[b]) for a, b in EDGES]
    by_array = BayesianNetwork(edges, continuous=[cols[v] for v in CONT]).fit(
        df.to_numpy()
    )
    by_frame = BayesianNetwork(EDGES, continuous=CONT).fit(df)
    rows = random_rows(rng, df, 15)
    np.testing.assert_allclose(
        by_array.score_samples(rows.to_numpy()), by_frame.score_samples(rows)
    )
    filled = by_array.predict(rows.to_numpy())
    assert isinstance(filled, np.ndarray)
    np.testing.assert_allclose(
        filled[:, cols["c"]].astype(float), by_frame.predict(rows)["c"].to_numpy()
    )


def test_continuous_prior_per_node_and_its_checks(rng):
    df = simulate(rng, 150)
    prior = NormalInverseGamma(mean_weight=3.0, scatter=1.0, variance_weight=2.0)
    bn = BayesianNetwork(EDGES, continuous=CONT, continuous_prior={"c": prior}).fit(df)
    ml = BayesianNetwork(EDGES, continuous=CONT).fit(df)
    # Only c's regressions move.
    np.testing.assert_allclose(bn.cpds_["b"].intercept, ml.cpds_["b"].intercept)
    assert not np.allclose(bn.cpds_["c"].coef, ml.cpds_["c"].coef)
    with pytest.raises(TypeError, match=r"continuous_prior.*'c'"):
        BayesianNetwork(EDGES, continuous=CONT, continuous_prior={"c": 1.0}).fit(df)
    with pytest.raises(ValueError, match="continuous must name distinct columns"):
        BayesianNetwork(EDGES, continuous=["b", "nope"]).fit(df)


def assert_same_network(got, ref, rtol=1e-10):
    assert got.variables_ == ref.variables_ and got.continuous_ == ref.continuous_
    for v in ref.variables_:
        a, b = got.cpds_[v], ref.cpds_[v]
        if v in ref.continuous_:
            for name in ("intercept", "coef", "variance"):
                x, y = getattr(a, name), getattr(b, name)
                np.testing.assert_allclose(x, y, rtol=rtol, atol=1e-12, err_msg=v)
        else:
            assert got.states_[v].tolist() == ref.states_[v].tolist()
            np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-15, err_msg=v)


@settings(max_examples=10, deadline=None)
@given(
    cuts=st.lists(st.integers(1, 299), min_size=1, max_size=5, unique=True),
    seed=st.integers(0, 2**16),
)
def test_statistics_of_any_chunking_in_any_order_equal_one_fit(cuts, seed):
    # Counts add, and so do the regressions' triangular factors: chunks
    # summarized by separate networks (half of them pickled, as a worker's)
    # and added in any order are one fit on all the weighted rows, and so is
    # partial_fit over the chunks.
    rng = np.random.default_rng(seed)
    df = simulate(rng, 300)
    df.loc[rng.random(300) < 0.05, "e"] = np.nan  # left out of c's regression
    w = rng.uniform(0, 2, 300) * (rng.random(300) > 0.1)
    bounds = [0, *sorted(cuts), len(df)]
    chunks = [np.arange(a, b) for a, b in itertools.pairwise(bounds)]
    w[bounds[:-1]] = 1.0  # every chunk has weight (partial_fit's first must)
    # Every regression identified from any chunk on (partial_fit refits after
    # each), and every state declared (partial_fit's first chunk fixes them).
    prior = NormalInverseGamma(
        mean=0.0, mean_weight=0.5, scatter=1.0, variance_weight=2.0
    )
    params = dict(
        edges=EDGES,
        continuous=CONT,
        continuous_prior=prior,
        states={"a": ["hi", "lo", "mid"], "d": ["no", "yes"]},
    )
    ref = BayesianNetwork(**params).fit(df, sample_weight=w)
    parts = []
    for i in rng.permutation(len(chunks)):
        stats = BayesianNetwork(**params).summarize(
            df.iloc[chunks[i]], sample_weight=w[chunks[i]]
        )
        parts.append(pickle.loads(pickle.dumps(stats)) if i % 2 else stats)
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    got = BayesianNetwork(continuous_prior=prior).from_stats(total)
    assert_same_network(got, ref)
    online = BayesianNetwork(**params)
    for idx in chunks:
        online.partial_fit(df.iloc[idx], sample_weight=w[idx])
    assert_same_network(online, ref)
    np.testing.assert_allclose(
        online.score_samples(df), ref.score_samples(df), rtol=1e-10
    )


def test_chunks_that_miss_a_state_add_by_union(rng):
    df = simulate(rng, 300)
    first = df[df["a"] != "mid"].iloc[:150]  # no row with a = "mid"
    second = df.iloc[150:]
    params = dict(edges=EDGES, continuous=CONT)
    ref = BayesianNetwork(**params).fit(pd.concat([first, second]))
    for a, b in ((first, second), (second, first)):
        total = BayesianNetwork(**params).summarize(a) + BayesianNetwork(
            **params
        ).summarize(b)
        assert_same_network(BayesianNetwork().from_stats(total), ref)
    # partial_fit, as a discrete network's, takes no state it has not seen.
    bn = BayesianNetwork(**params).partial_fit(first)
    with pytest.raises(ValueError, match="mid"):
        bn.partial_fit(second)


def test_statistics_of_other_structures_do_not_add(rng):
    df = simulate(rng, 100)
    mine = BayesianNetwork(EDGES, continuous=CONT).summarize(df)
    other = BayesianNetwork(EDGES[:-1], continuous=CONT).summarize(df)
    with pytest.raises(ValueError, match="do not add"):
        mine + other
    with pytest.raises(TypeError, match="stats must be"):
        BayesianNetwork(EDGES, continuous=CONT).from_stats({"b": 1})


def test_a_frame_leaving_variables_out_reads_them_as_missing(rng):
    # pgmpy's idiom, as for discrete networks: the columns to predict are left
    # out. The answers are those of the frame with those cells missing, which
    # the tests above compare with enumeration.
    df = simulate(rng, 300)
    bn = BayesianNetwork(EDGES, continuous=CONT).fit(df)
    rows = df.iloc[:20]
    for kept in (["c", "a"], ["e"], ["d", "b", "a"]):
        sub = rows[kept]
        full = rows.copy()
        for v in full.columns:
            if v not in kept:
                full[v] = np.nan if v in CONT else None
        np.testing.assert_array_equal(bn.score_samples(sub), bn.score_samples(full))
        np.testing.assert_array_equal(
            bn.predict_proba(sub, "d").to_numpy(),
            bn.predict_proba(full, "d").to_numpy(),
        )
        got = bn.predict(sub)
        assert got.columns.tolist()[: len(kept)] == kept  # the given first
        pd.testing.assert_frame_equal(got[full.columns], bn.predict(full))


def _pgmpy_example(name):
    pytest.importorskip("pgmpy")
    from pgmpy.utils import get_example_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pgmpy's deprecation of the loader
        return get_example_model(name)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["ecoli70", "magic-irri"])
def test_from_pgmpy_of_a_bnlearn_linear_gaussian_network(name):
    """pgmpy's copies of bnlearn's linear-Gaussian networks (46 and 64
    nodes): the converted network's log-likelihoods, posterior means and
    variances equal the joint Gaussian conditioned densely (1e-10) and
    pgmpy's (whose means are within about 4e-8 of the dense answer, checked
    at 40 digits), and to_pgmpy gives the CPDs back."""
    model = _pgmpy_example(name)
    bn = BayesianNetwork.from_pgmpy(model)
    assert bn.continuous_ == list(model.nodes()) == bn.variables_
    assert set(bn.dag_.edges) == {tuple(e) for e in model.edges()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = model.simulate(30, seed=1)
        np.testing.assert_allclose(
            bn.score_samples(df).sum(), model.log_likelihood(df), rtol=1e-8
        )
        rng = np.random.default_rng(len(name))
        hide = list(rng.choice(list(model.nodes()), 6, replace=False))
        seen = [v for v in df.columns if v not in hide]
        variables, mu, cov = model.predict_probability(df[seen])
    filled = bn.predict(df[seen])
    np.testing.assert_allclose(filled[variables].to_numpy(), mu, rtol=1e-6, atol=1e-6)
    for i in range(3):
        evidence = df[seen].iloc[i].to_dict()
        _, _, moments, _ = reference(bn, evidence)
        means, variances = moments[()]
        for j, v in enumerate(variables):
            one = bn.query(v, evidence=evidence)
            assert one["mean"].iloc[0] == pytest.approx(means[v], rel=1e-10, abs=1e-12)
            assert one["variance"].iloc[0] == pytest.approx(variances[v], rel=1e-10)
            assert filled[v].iloc[i] == pytest.approx(means[v], rel=1e-10, abs=1e-12)
            if i == 0:
                assert one["variance"].iloc[0] == pytest.approx(cov[j, j], rel=1e-6)
    back = bn.to_pgmpy()
    for v in model.nodes():
        theirs, ours = model.get_cpds(v), back.get_cpds(v)
        by_name = dict(zip(theirs.evidence, theirs.beta[1:]))
        assert ours.beta[0] == pytest.approx(theirs.beta[0], rel=1e-15)
        assert [by_name[p] for p in ours.evidence] == pytest.approx(
            list(ours.beta[1:]), rel=1e-15
        )
        assert ours.std == pytest.approx(theirs.std, rel=1e-15)


def test_from_pgmpy_round_trips_a_fitted_network(rng):
    names, edges, df = _chain(rng)
    bn = BayesianNetwork(edges, continuous=names).fit(df)
    again = BayesianNetwork.from_pgmpy(bn.to_pgmpy())
    for v in names:
        a, b = bn.cpds_[v], again.cpds_[v]
        np.testing.assert_allclose(
            [float(a.intercept), *a.coef, float(a.variance)],
            [float(b.intercept), *b.coef, float(b.variance)],
            rtol=1e-14,
        )
    np.testing.assert_allclose(
        again.score_samples(df), bn.score_samples(df), rtol=1e-12
    )
    # Built by hand, it has no statistics: partial_fit learns from its chunk.
    np.testing.assert_allclose(
        again.partial_fit(df[:150]).score_samples(df),
        BayesianNetwork(edges, continuous=names).fit(df[:150]).score_samples(df),
        rtol=1e-12,
    )


def test_from_pgmpy_refuses_a_cpd_that_is_not_its_node_s_regression(rng):
    pytest.importorskip("pgmpy")
    from pgmpy.factors.continuous import LinearGaussianCPD
    from pgmpy.models import LinearGaussianBayesianNetwork

    model = LinearGaussianBayesianNetwork([("a", "b")])
    model.add_cpds(LinearGaussianCPD("a", [0.5], 1.0))
    model.add_cpds(LinearGaussianCPD("b", [0.1], 2.0))  # no coefficient on a
    with pytest.raises(ValueError, match=r"'b'.*parents in the graph"):
        BayesianNetwork.from_pgmpy(model)
