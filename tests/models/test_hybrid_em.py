"""Missing cells of a hybrid network by EM (``missing='em'``).

The reference for one EM step is written out by hand on a small network
(a discrete ``a``, continuous ``b`` and ``c`` with ``a -> b``, ``a -> c``,
``b -> c``): every row's posterior over ``a`` by enumeration and, in each
state of ``a``, the Gaussian of ``(b, c)`` conditioned densely on the observed
cells; then the expected counts' m-estimate and each regression's expected
normal equations. EM's objective never decreases, and complete data need no
iteration.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import multivariate_normal, norm

from bayeskit import BayesianNetwork

EDGES = [("a", "b"), ("a", "c"), ("b", "c")]
CONT = ["b", "c"]
STATES = ["lo", "mid", "hi"]


def simulate(rng, n):
    a = rng.choice(STATES, size=n, p=[0.5, 0.3, 0.2])
    k = np.searchsorted(STATES, a, sorter=np.argsort(STATES))
    shift = np.array([-1.0, 0.5, 2.0])[np.argsort(np.argsort(STATES))][k]
    b = shift + rng.normal(size=n)
    c = 0.5 + np.where(a == "hi", 1.5, -0.7) * b + rng.normal(scale=0.8, size=n)
    return pd.DataFrame({"a": a, "b": b, "c": c})


def with_holes(rng, df, p=0.25):
    holes = df.astype({"a": object}).copy()
    for v in ("a", "b", "c"):
        holes.loc[rng.random(len(df)) < p, v] = None if v == "a" else np.nan
    return holes


def one_step_by_hand(bn, holes):
    """The tables after one EM step from ``bn``'s, by enumeration."""
    states = list(bn.states_["a"])
    pa = bn.cpds_["a"]
    nb, nc = bn.cpds_["b"], bn.cpds_["c"]
    counts = np.zeros(len(states))
    # Expected scatter of (1, b) for b's regressions and (1, b, c) for c's.
    Sb = np.zeros((len(states), 2, 2))
    Sc = np.zeros((len(states), 3, 3))
    for _, row in holes.iterrows():
        logw, moments = [], []
        for k in range(len(states)):
            mb = nb.intercept[k]
            vb = nb.variance[k]
            bc = nc.coef[k][0]
            mc = nc.intercept[k] + bc * mb
            S = np.array([[vb, bc * vb], [bc * vb, bc * bc * vb + nc.variance[k]]])
            mu = np.array([mb, mc])
            x = np.array([row["b"], row["c"]], dtype=float)
            obs = ~np.isnan(x)
            lw = np.log(pa[k])
            if row["a"] is not None and row["a"] == row["a"] and row["a"] != states[k]:
                lw = -np.inf
            if obs.all():
                lw += multivariate_normal(mu, S).logpdf(x)
            elif obs.any():
                j = int(np.flatnonzero(obs)[0])
                lw += norm(mu[j], np.sqrt(S[j, j])).logpdf(x[j])
            m, C = x.copy(), np.zeros((2, 2))
            h = ~obs
            if h.any():
                if obs.any():
                    g = S[np.ix_(h, obs)] @ np.linalg.inv(S[np.ix_(obs, obs)])
                    m[h] = mu[h] + g @ (x[obs] - mu[obs])
                    C[np.ix_(h, h)] = S[np.ix_(h, h)] - g @ S[np.ix_(obs, h)]
                else:
                    m, C = mu, S
            logw.append(lw)
            moments.append((m, C))
        logw = np.array(logw)
        r = np.exp(logw - np.logaddexp.reduce(logw))
        for k in range(len(states)):
            m, C = moments[k]
            counts[k] += r[k]
            z = np.array([1.0, m[0], m[1]])
            E = np.outer(z, z)
            E[1:, 1:] += C
            Sc[k] += r[k] * E
            Sb[k] += r[k] * E[:2, :2]
    m_est = bn.m
    table = (counts + m_est / len(states)) / (counts.sum() + m_est)
    out = {"a": table, "b": [], "c": []}
    for k in range(len(states)):
        n = Sb[k][0, 0]
        out["b"].append((Sb[k][0, 1] / n, (Sb[k][1, 1] - Sb[k][0, 1] ** 2 / n) / n))
        theta = np.linalg.solve(Sc[k][:2, :2], Sc[k][:2, 2])
        var = (Sc[k][2, 2] - theta @ Sc[k][:2, 2]) / n
        out["c"].append((theta, var))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_one_em_step_is_the_expected_statistics_by_hand(seed):
    rng = np.random.default_rng(seed)
    holes = with_holes(rng, simulate(rng, 120))
    start = BayesianNetwork(EDGES, continuous=CONT, states={"a": STATES}).fit(holes)
    ref = one_step_by_hand(start, holes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one iteration does not converge
        bn = BayesianNetwork(
            EDGES, continuous=CONT, states={"a": STATES}, missing="em", max_iter=1
        ).fit(holes)
    np.testing.assert_allclose(bn.cpds_["a"], ref["a"], rtol=1e-10)
    for k in range(len(STATES)):
        mean, var = ref["b"][k]
        assert bn.cpds_["b"].intercept[k] == pytest.approx(mean, rel=1e-9)
        assert bn.cpds_["b"].variance[k] == pytest.approx(var, rel=1e-9)
        theta, var = ref["c"][k]
        assert bn.cpds_["c"].intercept[k] == pytest.approx(
            theta[0], rel=1e-9, abs=1e-12
        )
        assert bn.cpds_["c"].coef[k][0] == pytest.approx(theta[1], rel=1e-9)
        assert bn.cpds_["c"].variance[k] == pytest.approx(var, rel=1e-9)


@pytest.mark.parametrize("seed", range(50))
def test_the_em_objective_never_decreases(seed):
    rng = np.random.default_rng(seed)
    holes = with_holes(rng, simulate(rng, 150), p=0.25)
    bn = BayesianNetwork(
        EDGES, continuous=CONT, missing="em", max_iter=30, tol=1e-12, m=2.0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bn.fit(holes)
    bounds = np.asarray(bn.lower_bounds_)
    assert np.all(np.diff(bounds) >= -1e-10 * np.abs(bounds[1:])), bounds
    # The objective is the observed cells' log density plus the log prior.
    assert bounds[-1] * len(holes) == pytest.approx(
        bn.score(holes) * len(holes) + _log_prior_of_a(bn), rel=1e-3
    )


def _log_prior_of_a(bn):
    # m / |states| pseudo-counts on every state of a; the regressions' prior is flat.
    k = len(bn.states_["a"])
    return float((bn.m / k) * np.log(bn.cpds_["a"]).sum())


def test_complete_data_need_no_iteration_and_equal_the_plain_fit(rng):
    df = simulate(rng, 200)
    em = BayesianNetwork(EDGES, continuous=CONT, missing="em").fit(df)
    plain = BayesianNetwork(EDGES, continuous=CONT).fit(df)
    assert em.n_iter_ == 0 and em.converged_
    np.testing.assert_allclose(
        em.score_samples(df), plain.score_samples(df), rtol=1e-12
    )


def test_at_convergence_one_more_step_changes_nothing(rng):
    holes = with_holes(rng, simulate(rng, 150))
    bn = BayesianNetwork(EDGES, continuous=CONT, missing="em", max_iter=500, tol=1e-13)
    bn.fit(holes)
    assert bn.converged_
    again = one_step_by_hand(bn, holes)
    np.testing.assert_allclose(bn.cpds_["a"], again["a"], rtol=1e-6)
    for k in range(len(bn.states_["a"])):
        assert bn.cpds_["c"].coef[k][0] == pytest.approx(again["c"][k][0][1], rel=1e-5)


def test_em_with_continuous_nodes_refuses_dask_input(rng):
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.from_pandas(simulate(rng, 50), npartitions=2)
    with pytest.raises(ValueError, match=r"missing='em'.*Dask"):
        BayesianNetwork(EDGES, continuous=CONT, missing="em").fit(ddf)
