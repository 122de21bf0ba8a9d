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
