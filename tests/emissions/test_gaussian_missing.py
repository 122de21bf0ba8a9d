"""Missing coordinates (NaN) in the Gaussian family, against brute force:
scipy's multivariate normal on the observed sub-vector, numerical
integration over the missing coordinate, and closed-form or Monte-Carlo
conditional moments."""

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import multivariate_normal

from bayeskit.emissions import DIAG, FULL, SPHERICAL, TIED, Gaussian
from bayeskit.emissions.base import Emission

STRUCTURES = [FULL, TIED, DIAG, SPHERICAL]


def _params(structure, k, d, rng):
    g = Gaussian(structure, d)
    means = rng.normal(size=(k, d))
    A = rng.normal(size=(k, d, d))
    S = A @ A.transpose(0, 2, 1) + np.eye(d)
    if structure is TIED:
        cov = S[0]
    elif structure is DIAG:
        cov = np.diagonal(S, axis1=1, axis2=2).copy()
    elif structure is SPHERICAL:
        cov = np.arange(1.0, k + 1)
    else:
        cov = S
    return g, g.params_from(means, cov), structure.dense_all(cov, k, d)


def _holes(rng, n, d, rate=0.3):
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < rate] = np.nan
    X[0] = np.nan  # a row with nothing observed
    X[1, :-1] = np.nan
    return X


def test_attribute():
    assert Gaussian.missing_coordinates is True
    assert Emission.missing_coordinates is False


@pytest.mark.parametrize("structure", STRUCTURES, ids=lambda s: s.name)
def test_marginal_log_likelihood_is_scipy_on_observed(structure):
    rng = np.random.default_rng(1)
    k, d, n = 3, 4, 60
    g, params, dense = _params(structure, k, d, rng)
    X = _holes(rng, n, d)
    ll = g.log_likelihood(X, params)
    ref = np.zeros((n, k))
    for i in range(n):
        o = ~np.isnan(X[i])
        for j in range(k):
            if o.any():
                ref[i, j] = multivariate_normal(
                    params.means[j, o], dense[j][np.ix_(o, o)]
                ).logpdf(X[i, o])
    np.testing.assert_allclose(ll, ref, rtol=1e-10, atol=1e-10)
    assert np.all(ll[0] == 0.0)
    # The relative form differs from it by a constant per row.
    rel = g.relative_log_likelihood(X, params)
    diff = rel - ll
    np.testing.assert_allclose(diff, diff[:, :1] + 0 * diff, atol=1e-9)


@pytest.mark.parametrize("structure", [FULL, TIED], ids=lambda s: s.name)
def test_marginal_equals_numerical_integration(structure):
    rng = np.random.default_rng(2)
    g, params, dense = _params(structure, 2, 2, rng)
    x = np.array([[0.3, np.nan], [np.nan, -0.7]])
    ll = g.log_likelihood(x, params)
    for j in range(2):
        full = multivariate_normal(params.means[j], dense[j])
        a = integrate.quad(lambda t, f=full: f.pdf([0.3, t]), -np.inf, np.inf)[0]
        b = integrate.quad(lambda t, f=full: f.pdf([t, -0.7]), -np.inf, np.inf)[0]
        np.testing.assert_allclose(np.exp(ll[:, j]), [a, b], rtol=1e-7)


def test_two_missing_coordinates_by_double_integration():
    rng = np.random.default_rng(3)
    g, params, dense = _params(FULL, 1, 3, rng)
    x = np.array([[np.nan, 0.2, np.nan]])
    full = multivariate_normal(params.means[0], dense[0])
    ref = integrate.dblquad(
        lambda s, t: full.pdf([t, 0.2, s]),
        -60,
        60,
        -60,
        60,
        epsabs=1e-12,
    )[0]
    np.testing.assert_allclose(np.exp(g.log_likelihood(x, params))[0, 0], ref, 1e-6)


def _brute_stats(X, W, means, dense):
    n, d = X.shape
    k = W.shape[1]
    wt, s1, s2 = np.zeros(k), np.zeros((k, d)), np.zeros((k, d, d))
    for i in range(n):
        o = ~np.isnan(X[i])
        m = ~o
        if not o.any():
            continue
        for j in range(k):
            S = dense[j]
            x = X[i].copy()
            x[m] = means[j, m] + S[np.ix_(m, o)] @ np.linalg.solve(
                S[np.ix_(o, o)], X[i, o] - means[j, o]
            )
            C = np.zeros((d, d))
            C[np.ix_(m, m)] = S[np.ix_(m, m)] - S[np.ix_(m, o)] @ np.linalg.solve(
                S[np.ix_(o, o)], S[np.ix_(o, m)]
            )
            wt[j] += W[i, j]
            s1[j] += W[i, j] * x
            s2[j] += W[i, j] * (np.outer(x, x) + C)
    mu = s1 / wt[:, None]
    return wt, mu, s2 - wt[:, None, None] * np.einsum("ki,kj->kij", mu, mu)


@pytest.mark.parametrize("structure", STRUCTURES, ids=lambda s: s.name)
def test_expected_stats_are_conditional_moments(structure):
    rng = np.random.default_rng(4)
    k, d, n = 3, 4, 80
    g, params, dense = _params(structure, k, d, rng)
    X = _holes(rng, n, d)
    W = rng.random((n, k))
    st = g.expected_stats(X, W, params)
    wt, mu, sc = _brute_stats(X, W, params.means, dense)
    if structure is DIAG:
        sc = np.diagonal(sc, axis1=1, axis2=2)
        assert st.weight.shape == (k, d)
    elif structure is SPHERICAL:
        sc = np.trace(sc, axis1=1, axis2=2)
    np.testing.assert_allclose(st.state_weight(), wt, rtol=1e-12)
    np.testing.assert_allclose(st.mean, mu, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(st.scatter, sc, rtol=1e-10, atol=1e-10)


def test_conditional_moments_by_monte_carlo():
    """The completed row and its conditional covariance are the mean and
    covariance of draws of the full vector kept when they match the observed
    part (conditioning by sampling the missing part given the observed)."""
    rng = np.random.default_rng(5)
    g, params, dense = _params(FULL, 1, 3, rng)
    x = np.array([[0.5, np.nan, np.nan]])
    st = g.expected_stats(x, np.ones((1, 1)), params)
    # Draw (x1, x2) | x0 = 0.5 from the joint by the regression on x0 of a
    # large joint sample (exact in expectation for a Gaussian).
    draws = rng.multivariate_normal(params.means[0], dense[0], size=400_000)
    coef = np.linalg.lstsq(
        np.c_[np.ones(len(draws)), draws[:, 0]], draws[:, 1:], rcond=None
    )[0]
    resid = draws[:, 1:] - np.c_[np.ones(len(draws)), draws[:, 0]] @ coef
    mc_mean = coef[0] + 0.5 * coef[1]
    mc_cov = np.cov(resid.T)
    np.testing.assert_allclose(st.mean[0, 1:], mc_mean, atol=0.02)
    np.testing.assert_allclose(st.scatter[0][1:, 1:], mc_cov, atol=0.03)
    assert abs(st.mean[0, 0] - 0.5) < 1e-14


@pytest.mark.parametrize("structure", STRUCTURES, ids=lambda s: s.name)
def test_complete_data_unchanged(structure):
    rng = np.random.default_rng(6)
    g, params, _ = _params(structure, 3, 4, rng)
    X = rng.normal(size=(40, 4))
    W = rng.random((40, 3))
    a, b = g.expected_stats(X, W, params), g.stats(X, W)
    assert np.array_equal(a.mean, b.mean) and np.array_equal(a.scatter, b.scatter)
    assert np.array_equal(
        g.log_likelihood(X, params), structure.log_likelihood(X, params)
    )


def test_rows_missing_everything_add_nothing():
    rng = np.random.default_rng(7)
    g, params, _ = _params(FULL, 2, 3, rng)
    X = _holes(rng, 30, 3)
    W = rng.random((30, 2))
    extra = np.vstack([X, np.full((5, 3), np.nan)])
    a = g.expected_stats(X, W, params)
    b = g.expected_stats(extra, np.vstack([W, np.ones((5, 2))]), params)
    np.testing.assert_allclose(a.weight, b.weight)
    np.testing.assert_allclose(a.scatter, b.scatter)


def test_input_not_mutated():
    rng = np.random.default_rng(8)
    g, params, _ = _params(FULL, 2, 3, rng)
    X = _holes(rng, 30, 3)
    before = X.copy()
    g.expected_stats(X, rng.random((30, 2)), params)
    g.log_likelihood(X, params)
    np.testing.assert_array_equal(X, before)


@pytest.mark.parametrize("structure", STRUCTURES, ids=lambda s: s.name)
# A few rows per pattern, and patterns of more rows than a block of the
# compiled passes (_BLOCK) holds.
@pytest.mark.parametrize("d, n", [(5, 300), (3, 3000)])
def test_compiled_pass_equals_numpy_by_pattern(structure, d, n, monkeypatch):
    from bayeskit.emissions import _gaussian_missing as gm

    calls = []
    kernel = gm.missing_log_likelihood
    monkeypatch.setattr(gm, "_COMPILED_WORK", 0)
    monkeypatch.setattr(gm, "numpy_first", lambda *kernels: False)
    monkeypatch.setattr(
        gm, "missing_log_likelihood", lambda *a: calls.append(1) or kernel(*a)
    )

    rng = np.random.default_rng(9)
    k = 3
    _, params, _ = _params(structure, k, d, rng)
    X = _holes(rng, n, d, rate=0.4) + 1e4  # far from the origin
    params = params.__class__(
        params.means + 1e4,
        params.covariances,
        params.precisions_cholesky,
        params.log_det,
        params.center + 1e4,
    )
    W = rng.random((n, k))
    missing = np.isnan(X)
    np.testing.assert_allclose(
        gm.marginal_log_likelihood(structure, X, params, missing),
        gm._marginal_log_likelihood_numpy(structure, X, params, missing),
        rtol=1e-10,
    )
    a = gm.expected_dense_stats(X, W, params, structure, missing)
    b = gm._expected_dense_stats_numpy(X, W, params, structure, missing)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-9)
    assert calls  # the compiled pass ran


def test_stats_without_parameters_name_expected_stats():
    X = np.array([[1.0, np.nan], [2.0, 3.0]])
    with pytest.raises(ValueError, match="expected_stats"):
        Gaussian(FULL, 2).stats(X, np.ones((2, 1)))
    # The diagonal structure leaves missing cells out of each feature.
    st = Gaussian(DIAG, 2).stats(X, np.ones((2, 1)))
    np.testing.assert_allclose(st.weight, [[2.0, 1.0]])


@pytest.mark.parametrize("seed", range(5))
def test_pattern_factors_equal_lapack_by_pattern(seed):
    """The compiled factors of every pattern's observed block equal LAPACK's
    Cholesky factor inverted by a solve, and the conditional moments written
    out with them (Bishop 2006, section 2.3.1); a block that is not positive
    definite is reported by its pattern."""
    from bayeskit.emissions._missing_kernels import pattern_factors

    rng = np.random.default_rng(seed)
    k, d, n_pat = 3, 6, 40
    A = rng.normal(size=(k, d, d))
    dense = A @ A.transpose(0, 2, 1) + 0.1 * np.eye(d)
    masks = rng.random((n_pat, d)) < 0.4
    masks[:, rng.integers(d)] = False  # something observed in every pattern
    ranked = np.argsort(masks, axis=1, kind="stable").astype(np.intp)
    n_obs = (~masks).sum(axis=1).astype(np.intp)
    U, G, C = (np.full((n_pat, k, d, d), np.nan) for _ in range(3))
    const = np.empty((n_pat, k))
    assert pattern_factors(dense, ranked, n_obs, True, U, const, G, C) == -1
    for p in range(n_pat):
        o, m = ranked[p, : n_obs[p]], ranked[p, n_obs[p] :]
        for s in range(k):
            L = np.linalg.cholesky(dense[s][np.ix_(o, o)])
            inv = np.linalg.solve(L, np.eye(o.size))
            np.testing.assert_allclose(U[p, s, : o.size, : o.size], inv, atol=1e-10)
            expected = -0.5 * o.size * np.log(2 * np.pi) - np.log(np.diag(L)).sum()
            np.testing.assert_allclose(const[p, s], expected, rtol=1e-12)
            gain = (inv @ dense[s][np.ix_(o, m)]).T
            np.testing.assert_allclose(G[p, s, : m.size, : o.size], gain, atol=1e-10)
            cond = dense[s][np.ix_(m, m)] - gain @ gain.T
            np.testing.assert_allclose(C[p, s, : m.size, : m.size], cond, atol=1e-10)
    # A state whose observed block is singular: that pattern is reported.
    bad = dense.copy()
    j = ranked[7, 0]
    bad[1][j, :] = bad[1][:, j] = 0.0
    first = min(p for p in range(n_pat) if j in ranked[p, : n_obs[p]])
    assert pattern_factors(bad, ranked, n_obs, False, U, const, G, C) == first


_FIRST_FIT = """
import json, warnings
import numpy as np
import bayeskit
from bayeskit.emissions import _missing_kernels as mk

warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = rng.normal(size=(5000, 10))
X[rng.random(X.shape) < 0.3] = np.nan
model = bayeskit.GaussianMixture(8, max_iter=3, random_state=0).fit(X)
model.score_samples(X)
kernels = [mk.missing_log_likelihood, mk.missing_moments, mk.pattern_factors]
print(json.dumps({kern.py_func.__name__: len(kern.signatures) for kern in kernels}))
"""


def test_a_first_fit_with_nan_cells_compiles_no_kernel(tmp_path):
    """A first GaussianMixture fit on 5,000 rows with 30% NaN cells, in a
    fresh process with an empty numba cache, runs the numpy passes pattern by
    pattern: none of the three missing-cell kernels is compiled."""
    import json
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, "-c", _FIRST_FIT],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    compiled = json.loads(out.strip().splitlines()[-1])
    assert compiled == dict.fromkeys(compiled, 0)
