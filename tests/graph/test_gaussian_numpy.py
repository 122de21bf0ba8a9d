"""The numpy Kalman filter and smoother that run while the kernels are not compiled.

A fresh environment (an empty numba cache) runs the linear Gaussian chain
through ``bayeskit.graph._gaussian_numpy`` instead of compiling its kernels:
these tests ask that it gives the compiled kernels' answers (to 1e-12) on many
random models, pykalman's, that it hands the steps with some coordinates
missing to the kernels, and that a first fit of a LinearGaussianSSM or a
KalmanFilter in a fresh process compiles no kernel.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from numpy.testing import assert_allclose
from test_gaussian_chain import _pykalman, _pykalman_pass, random_params

from bayeskit.graph import _gaussian_numpy, gaussian_chain
from bayeskit.graph.gaussian_chain import kalman_filter, kalman_smoother

KW = {"rtol": 1e-12, "atol": 1e-12}
FILTERED = (
    "predicted_means", "predicted_covariances", "filtered_means",
    "filtered_covariances", "log_likelihood",
)  # fmt: skip
SMOOTHED = ("means", "covariances", "cross_covariances", "log_likelihood")


@pytest.fixture
def force(monkeypatch):
    """``force("numpy")`` or ``force("kernels")`` for the Gaussian chain."""
    decide = gaussian_chain._numpy_first
    monkeypatch.setattr(_gaussian_numpy, "_spent", [0.0])

    def set_path(path):
        if path == "numpy":
            monkeypatch.setattr(gaussian_chain._jit, "_compiled", lambda k: False)
            monkeypatch.setattr(gaussian_chain, "_COMPILED", set())
            monkeypatch.setattr(gaussian_chain, "_numpy_first", decide)
        else:
            monkeypatch.setattr(gaussian_chain, "_numpy_first", lambda *args: False)

    return set_path


def _spy(monkeypatch, name):
    """Record whether ``_gaussian_numpy.<name>`` answered (False) or declined."""
    declined = []
    run = getattr(_gaussian_numpy, name)

    def spy(*args):
        found = run(*args)
        declined.append(found is None)
        return found

    monkeypatch.setattr(_gaussian_numpy, name, spy)
    return declined


@pytest.mark.parametrize("seed", range(40))
def test_numpy_passes_give_the_kernels_answers(force, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    k, d = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    p = random_params(rng, k, d)
    lengths = rng.integers(1, 50, size=int(rng.integers(1, 8)))
    Y = rng.normal(size=(lengths.sum(), d)) * rng.choice([0.1, 3.0, 100.0])
    if rng.random() < 0.5:
        Y[rng.random(len(Y)) < 0.2] = np.nan  # whole steps missing: latent
    declined = _spy(monkeypatch, "kalman_filter")
    results = {}
    for path in ("kernels", "numpy"):
        force(path)
        results[path] = (
            kalman_filter(Y, lengths, p), kalman_smoother(Y, lengths, p)
        )  # fmt: skip
    assert declined == [False, False]
    (f1, s1), (f2, s2) = results.values()
    for name in FILTERED:
        assert_allclose(getattr(f2, name), getattr(f1, name), **KW)
    for name in SMOOTHED:
        assert_allclose(getattr(s2, name), getattr(s1, name), **KW)


@pytest.mark.parametrize("seed", range(12))
def test_numpy_passes_equal_pykalman(force, seed):
    """Against pykalman's (covariance-form) filter, smoother and lag-one
    covariances, and its log-likelihood, whole steps masked."""
    force("numpy")
    rng = np.random.default_rng(50 + seed)
    k, d = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    p = random_params(rng, k, d)
    T = int(rng.integers(1, 40))
    Y = rng.normal(size=(T, d)) * 2
    Y[rng.random(T) < 0.2] = np.nan
    Z = np.ma.masked_invalid(Y)
    pred_m, pred_P, filt_m, filt_P, sm, sP, pair = _pykalman_pass(p, Z)
    f = kalman_filter(Y, np.array([T]), p)
    s = kalman_smoother(Y, np.array([T]), p)
    tol = {"rtol": 1e-10, "atol": 1e-10}
    assert_allclose(f.predicted_means, pred_m, **tol)
    assert_allclose(f.predicted_covariances, pred_P, **tol)
    assert_allclose(f.filtered_means, filt_m, **tol)
    assert_allclose(f.filtered_covariances, filt_P, **tol)
    assert_allclose(s.means, sm, **tol)
    assert_allclose(s.covariances, sP, **tol)
    assert_allclose(s.cross_covariances[1:], pair[1:], **tol)
    assert not s.cross_covariances[0].any()
    ll = _pykalman(p).loglikelihood(Z)
    assert_allclose(f.log_likelihood, [ll], rtol=1e-12)
    assert_allclose(s.log_likelihood, [ll], rtol=1e-12)


def test_householder_reflections_are_the_kernels(force):
    """The stacked reflections repeat the kernel's operations: the same
    triangular factor, to the last bit, on random stacks (zero columns too)."""
    from bayeskit import _jit
    from bayeskit.graph._gaussian_kernels import householder_r

    rng = np.random.default_rng(0)
    kernel = _jit.interpreted(householder_r)
    for shape in [(5, 3, 3), (4, 6, 3), (7, 4, 2), (3, 5, 5)]:
        M = rng.normal(size=shape)
        M[0, :, 0] = 0.0
        expected = M.copy()
        for matrix in expected:
            kernel(matrix)
        _gaussian_numpy.householder_r(M)
        np.testing.assert_array_equal(M, expected)


def test_some_coordinates_missing_and_a_spent_budget_go_to_the_kernels(
    force, monkeypatch
):
    rng = np.random.default_rng(3)
    p = random_params(rng, 2, 3)
    lengths = np.array([20, 15])
    Y = rng.normal(size=(35, 3))
    Y[4, 1] = np.nan  # one coordinate of a step: its own observed block
    declined = _spy(monkeypatch, "kalman_filter")
    force("numpy")
    got = kalman_smoother(Y, lengths, p)
    force("kernels")
    expected = kalman_smoother(Y, lengths, p)
    assert declined == [True]
    for name in SMOOTHED:
        assert_allclose(getattr(got, name), getattr(expected, name), **KW)
    assert _gaussian_numpy.fits(lengths, 3, 2)
    long = np.array([1, _gaussian_numpy.MAX_STEPS + 1])
    assert not _gaussian_numpy.fits(long, 3, 2)
    assert not _gaussian_numpy.fits(np.array([3, 0]), 3, 2)  # an empty sequence
    _gaussian_numpy._spent[0] = _gaussian_numpy.BUDGET
    assert not _gaussian_numpy.fits(lengths, 3, 2)


_FIRST_FIT = """
import json
import numpy as np
import bayeskit
from bayeskit.graph import _gaussian_kernels as k

rng = np.random.default_rng(0)
X = rng.normal(size=(10_000, 2)) + 3 * (np.arange(10_000) // 10 % 3)[:, None]
for model in [
    bayeskit.LinearGaussianSSM(2, n_iter=2, random_state=0),
    bayeskit.KalmanFilter(n_dim_state=2, n_dim_obs=2, n_iter=2, random_state=0),
]:
    for lengths in ([100], [100] * 100):
        data = X[: sum(lengths)]
        if isinstance(model, bayeskit.KalmanFilter):
            model.em(data[:100], n_iter=2)
            model.smooth(data[:100])
            model.filter(data[:100])
            continue
        model.fit(data, lengths)
        model.predict(data, lengths)
        model.score(data, lengths)
kernels = [k.filter_kernel, k.smoother_kernel]
print(json.dumps({kernel.func.__name__: [
    len(kernel.variant(p).signatures) for p in (False, True)] for kernel in kernels}))
"""


def test_a_first_fit_in_a_fresh_environment_compiles_no_kernel(tmp_path):
    """LinearGaussianSSM on one, then 100 sequences of 100 steps, and
    pykalman-style KalmanFilter calls, in a fresh process with an empty numba
    cache: none of them compiles the Kalman kernels (some fifteen seconds)."""
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
    assert compiled == {name: [0, 0] for name in compiled}
