"""PC on continuous data: the partial-correlation tests against their closed
forms and pgmpy 1.1.2's ``ci_tests.Pearsonr`` / ``FisherZ``, and the whole
search against pgmpy's ``causal_discovery.PC`` with the same test."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from bayeskit import PC
from bayeskit.network._gauss_ci import GaussianCI


def _linear_gaussian(seed, n, d=6, p_edge=0.4):
    """Rows of a random linear-Gaussian DAG over ``v0 .. v{d-1}`` (edges from
    lower to higher index, coefficients of magnitude 0.5 to 1.5)."""
    rng = np.random.default_rng(seed)
    data = np.empty((n, d))
    for j in range(d):
        x = rng.normal(size=n) * rng.uniform(0.5, 1.5)
        for i in range(j):
            if rng.random() < p_edge:
                x += rng.choice([-1, 1]) * rng.uniform(0.5, 1.5) * data[:, i]
        data[:, j] = x
    return pd.DataFrame(data, columns=[f"v{j}" for j in range(d)])


def _closed_form(df, x, y, z, method):
    """Residuals of least squares with an intercept, their correlation, then
    the t-test (n - |Z| - 2 degrees of freedom) or Fisher's z."""
    n = len(df)
    design = np.column_stack([np.ones(n), df[list(z)].to_numpy()])
    rx = df[x] - design @ np.linalg.lstsq(design, df[x], rcond=None)[0]
    ry = df[y] - design @ np.linalg.lstsq(design, df[y], rcond=None)[0]
    r = stats.pearsonr(rx, ry)[0]
    if method == "fisher_z":
        zz = np.arctanh(r) * np.sqrt(n - len(z) - 3)
        return zz, 2 * stats.norm.sf(abs(zz))
    dof = n - len(z) - 2
    t = r * np.sqrt(dof / (1 - r**2))
    return r, 2 * stats.t.sf(abs(t), dof)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(20, 300),
    k=st.integers(0, 3),
    method=st.sampled_from(["pearsonr", "fisher_z"]),
)
def test_partial_correlation_tests_are_the_closed_form(seed, n, k, method):
    df = _linear_gaussian(seed, n)
    rng = np.random.default_rng(seed)
    x, y, *z = rng.permutation(df.columns)[: 2 + k]
    ci = GaussianCI(df.to_numpy().T)
    idx = {v: i for i, v in enumerate(df.columns)}
    got = ci.test(idx[x], idx[y], tuple(idx[v] for v in z), method)
    np.testing.assert_allclose(got, _closed_form(df, x, y, z, method), rtol=1e-7)


def test_rows_with_missing_values_are_left_out_of_the_test():
    df = _linear_gaussian(3, 200)
    gaps = df.mask(np.random.default_rng(0).random(df.shape) < 0.1)
    ci = GaussianCI(gaps.to_numpy().T)
    rows = gaps[["v0", "v1", "v2", "v3"]].dropna()
    for method in ("pearsonr", "fisher_z"):
        np.testing.assert_allclose(
            ci.test(0, 1, (2, 3), method),
            _closed_form(rows, "v0", "v1", ["v2", "v3"], method),
            rtol=1e-7,
        )


@pytest.mark.parity
@pytest.mark.parametrize("method", ["pearsonr", "fisher_z"])
def test_tests_equal_pgmpys(method):
    ci_tests = pytest.importorskip("pgmpy.ci_tests")
    peer = {"pearsonr": ci_tests.Pearsonr, "fisher_z": ci_tests.FisherZ}[method]
    for seed in range(10):
        df = _linear_gaussian(seed, 150)
        rng = np.random.default_rng(seed)
        x, y, *z = rng.permutation(df.columns)[: 2 + seed % 4]
        ours = GaussianCI(df.to_numpy().T).test(
            df.columns.get_loc(x),
            df.columns.get_loc(y),
            tuple(df.columns.get_loc(v) for v in z),
            method,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = peer(df)._compute_result(X=x, Y=y, Z=list(z))
        np.testing.assert_allclose(ours, (theirs.statistic, theirs.p_value), rtol=1e-7)


@pytest.mark.parity
@pytest.mark.parametrize("method", ["pearsonr", "fisher_z"])
@pytest.mark.parametrize("seed", range(4))
def test_pc_equals_pgmpys_pc_on_linear_gaussian_samples(method, seed):
    pytest.importorskip("pgmpy")
    from pgmpy.causal_discovery import PC as PgmpyPC

    df = _linear_gaussian(seed, 1000, d=7)
    ours = PC(method, max_cond_vars=3).fit(df)
    est = PgmpyPC(
        ci_test=method,
        max_cond_vars=3,
        variant="stable",
        return_type="pdag",
        show_progress=False,
        n_jobs=1,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(df)
    skeleton = {frozenset(e) for e in est.skeleton_.edges()}
    assert {frozenset(e) for e in ours.directed_edges_ + ours.undirected_edges_} == (
        skeleton
    )
    assert ours.separating_sets_ == {
        k: tuple(v) for k, v in est.separating_sets_.items()
    }
    pdag = est.causal_graph_
    assert set(ours.directed_edges_) == set(pdag.directed_edges)
    assert {frozenset(e) for e in ours.undirected_edges_} == {
        frozenset(e) for e in pdag.undirected_edges
    }
    # the network is a linear-Gaussian network on a DAG of the class
    assert ours.network_.continuous_ == list(df.columns)
    assert set(map(frozenset, ours.edges_)) == skeleton


def test_a_non_numeric_column_names_itself():
    df = _linear_gaussian(0, 50).assign(v2=list("ab") * 25)
    with pytest.raises(ValueError, match="continuous column 'v2'"):
        PC("fisher_z").fit(df)


# -- the conditional Gaussian likelihood-ratio test of mixed data ------------------


def _cg_ll_by_hand(df, disc, cont):
    """Log-likelihood and parameter count of a heterogeneous conditional
    Gaussian model, cell by cell with numpy's ML covariance and slogdet."""
    n = len(df)
    groups = df.groupby(disc) if disc else [((), df)]
    ll = 0.0
    for _, g in groups:
        n_j = len(g)
        ll += n_j * np.log(n_j / n)
        if cont:
            cov = np.atleast_2d(np.cov(g[cont].to_numpy().T, bias=True))
            p = len(cont)
            ll -= 0.5 * n_j * (p * np.log(2 * np.pi) + np.linalg.slogdet(cov)[1] + p)
    q = int(np.prod([df[v].nunique() for v in disc])) if disc else 1
    p = len(cont)
    return ll, (q - 1) + q * (p + p * (p + 1) // 2)


def _mixed(seed, n):
    rng = np.random.default_rng(seed)
    d0 = rng.integers(0, 2, n)
    d1 = (d0 + (rng.random(n) < 0.3)) % 3
    c0 = d0 + rng.normal(size=n)
    c1 = 0.5 * c0 + d1 + rng.normal(size=n) * (1 + d0)
    d2 = rng.integers(0, 2, n)
    c2 = rng.normal(size=n) - c1 * 0.3
    return pd.DataFrame({"d0": d0, "d1": d1, "d2": d2, "c0": c0, "c1": c1, "c2": c2})


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(0, 2))
def test_cg_test_is_the_likelihood_ratio_of_conditional_gaussian_models(seed, k):
    from bayeskit.network._gauss_ci import cg_test

    df = _mixed(seed, 400)
    rng = np.random.default_rng(seed)
    x, y, *z = rng.permutation(df.columns)[: 2 + k]
    names = list(df.columns)
    is_cont = np.array([v.startswith("c") for v in names])
    codes = np.array(
        [
            df[v].to_numpy() if not c else np.zeros(400, int)
            for v, c in zip(names, is_cont)
        ]
    )
    values = np.array(
        [
            df[v].to_numpy(float) if c else np.full(400, np.nan)
            for v, c in zip(names, is_cont)
        ]
    )
    got = cg_test(
        codes,
        np.full(len(names), 3),
        values,
        is_cont,
        names.index(x),
        names.index(y),
        tuple(names.index(v) for v in z),
    )

    def model(vs):
        return _cg_ll_by_hand(
            df,
            [v for v in vs if v.startswith("d")],
            [v for v in vs if v.startswith("c")],
        )

    (la, ka), (ls, ks), (lx, kx), (ly, ky) = (
        model(vs) for vs in ([x, y, *z], z, [x, *z], [y, *z])
    )
    stat, dof = max(2 * (la + ls - lx - ly), 0.0), ka + ks - kx - ky
    np.testing.assert_allclose(got[0], stat, rtol=1e-8, atol=1e-9)
    assert got[1] == dof
    np.testing.assert_allclose(got[2], stats.chi2.sf(stat, dof), rtol=1e-6, atol=1e-12)


def test_cg_test_reduces_to_the_g_test_and_to_the_partial_correlation():
    from bayeskit.network._gauss_ci import cg_test

    df = _mixed(7, 2000)
    names = list(df.columns)
    is_cont = np.array([v.startswith("c") for v in names])
    codes = np.array(
        [
            df[v].to_numpy() if not c else np.zeros(2000, int)
            for v, c in zip(names, is_cont)
        ]
    )
    values = np.array(
        [
            df[v].to_numpy(float) if c else np.full(2000, np.nan)
            for v, c in zip(names, is_cont)
        ]
    )
    cards = np.full(len(names), 3)
    # discrete pair, discrete condition: the G-test summed over the strata
    got = cg_test(codes, cards, values, is_cont, 0, 1, (2,))
    stat = dof = 0
    for _, g in df.groupby("d2"):
        g_stat, _, g_dof, _ = stats.chi2_contingency(
            pd.crosstab(g.d0, g.d1), lambda_="log-likelihood", correction=False
        )
        stat, dof = stat + g_stat, dof + g_dof
    np.testing.assert_allclose(got[:2], (stat, dof), rtol=1e-9)
    # continuous pair, continuous condition: -n log(1 - r^2), one dof
    got = cg_test(codes, cards, values, is_cont, 3, 5, (4,))
    r, _ = _closed_form(df, "c0", "c2", ["c1"], "pearsonr")
    np.testing.assert_allclose(got[:2], (-2000 * np.log(1 - r**2), 1), rtol=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_pc_with_the_cg_test_recovers_a_hybrid_network(seed):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from hybrid_structure_recovery import TRUE_EDGES, sample

    df = sample(seed, 2000)
    pc = PC("mi_cg").fit(df)
    found = {frozenset(e) for e in pc.directed_edges_ + pc.undirected_edges_}
    assert found == {frozenset(e) for e in TRUE_EDGES}
    cont = pc.network_.continuous_
    assert cont == ["x", "y", "z", "u"]
    for p, c in pc.edges_:  # no discrete node has a continuous parent
        assert not (p in cont and c not in cont)


def test_continuous_is_for_the_cg_test():
    df = _mixed(0, 100)
    with pytest.raises(ValueError, match="continuous is for ci_test='mi_cg'"):
        PC("chi_square", continuous=["c0"]).fit(df)
    with pytest.raises(ValueError, match="continuous must name"):
        PC("mi_cg", continuous=["nope"]).fit(df)
