"""The covariance structures as objects: the compiled full-covariance density,
precision round trips, and what each structure says about its own shapes."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.stats import multivariate_normal

from bayeskit import _jit
from bayeskit.emissions import DIAG, FULL, SPHERICAL, TIED, Gaussian
from bayeskit.emissions import _kernels as kernels
from bayeskit.emissions import covariance as cov_module
from bayeskit.emissions.gaussian import GaussianParams

STRUCTURES = [FULL, TIED, DIAG, SPHERICAL]


def full_params(rng, k, d, shift):
    A = [rng.normal(size=(d, d)) for _ in range(k)]
    covs = np.stack([a @ a.T / d + 0.5 * np.eye(d) for a in A])
    means = rng.normal(size=(k, d)) + shift
    return Gaussian(FULL).params_from(means, covs, center=means.mean(axis=0))


@pytest.mark.parametrize("shift", [0.0, 1e6])
def test_compiled_full_density_matches_scipy(shift, rng, monkeypatch):
    # Enough work for the compiled kernel; 4099 rows leave a partial block.
    n, k, d = 4099, 4, 32
    assert n * k * d * d >= cov_module._COMPILED_WORK
    monkeypatch.setattr(cov_module, "numpy_first", lambda *kernels: False)
    params = full_params(rng, k, d, shift)
    X = rng.normal(size=(n, d)) * 2.0 + shift
    ll = Gaussian(FULL).log_likelihood(X, params)
    for j in range(k):
        ref = multivariate_normal(params.means[j], params.covariances[j]).logpdf(X)
        assert_allclose(ll[:, j], ref, rtol=1e-9)
    # The numpy path (small work, or a factor that is not triangular) agrees.
    numpy_path = cov_module.Covariance.log_likelihood(FULL, X, params)
    assert_allclose(ll, numpy_path, rtol=1e-11)


def test_a_factor_that_is_not_triangular_takes_the_dense_path(rng):
    n, k, d = 3000, 3, 30
    params = full_params(rng, k, d, 0.0)
    # P Q with Q orthogonal is also a factor of the precision, but not upper
    # triangular: the compiled kernel (which reads only a triangle) is skipped.
    Q = np.linalg.qr(rng.normal(size=(d, d)))[0]
    dense = GaussianParams(
        params.means,
        params.covariances,
        params.precisions_cholesky @ Q,
        params.log_det,
        params.center,
    )
    X = rng.normal(size=(n, d))
    assert_allclose(
        Gaussian(FULL).log_likelihood(X, dense),
        Gaussian(FULL).log_likelihood(X, params),
        rtol=1e-10,
    )


def test_full_kernel_interpreted_equals_compiled(rng):
    n, k, d = 21, 3, 5
    params = full_params(rng, k, d, 1e3)
    X = rng.normal(size=(n, d)) + 1e3
    P = params.precisions_cholesky
    shift = np.einsum("kj,kji->ki", params.means - params.center, P)
    args = (
        X,
        params.center,
        shift,
        np.ascontiguousarray(np.swapaxes(P, 1, 2)),
        params.log_det - 0.5 * d * np.log(2 * np.pi),
    )
    a, b = np.empty((n, k)), np.empty((n, k))
    kernels.full_log_likelihood(*args, a)
    _jit.interpreted(kernels.full_log_likelihood)(*args, b)
    assert_allclose(a, b, rtol=1e-12)
    assert_allclose(
        a, cov_module.Covariance.log_likelihood(FULL, X, params), rtol=1e-12
    )


@pytest.mark.parametrize("structure", STRUCTURES, ids=lambda s: s.name)
def test_precision_round_trip_and_shapes(structure, rng):
    k, d = 3, 4
    A = [rng.normal(size=(d, d)) for _ in range(k)]
    mats = np.stack([a @ a.T + np.eye(d) for a in A])
    own = {
        "full": mats,
        "tied": mats[0],
        "diag": np.diagonal(mats, axis1=1, axis2=2).copy(),
        "spherical": np.diagonal(mats, axis1=1, axis2=2).mean(axis=1),
    }[structure.name]
    assert own.shape == structure.shape(k, d)
    P = structure.precision_cholesky(own)
    precisions = structure.precision(P)
    P2, covs = structure.from_precision(precisions)
    assert_allclose(P2, P, rtol=1e-10)
    assert_allclose(covs, own, rtol=1e-10)
    for j in range(k):
        dense = structure.dense(own, j, d)
        inverse = np.linalg.inv(dense)
        assert_allclose(structure.dense(precisions, j, d), inverse, rtol=1e-10)
    # Parameter counts: means aside, a symmetric matrix has d (d + 1) / 2.
    expected = {"full": k * 10, "tied": 10, "diag": k * d, "spherical": k}
    assert structure.n_parameters(k, d) == expected[structure.name]
    assert Gaussian(structure, d).n_parameters(k) == expected[structure.name] + k * d
    zero = Gaussian(structure, d).zeros(k)
    assert zero.scatter.shape == structure.scatter_shape(k, d)
    X = rng.normal(size=(30, d))
    stats = Gaussian(structure).stats(X, rng.dirichlet(np.ones(k), size=30))
    merged = zero + stats
    for a, b in ((merged.weight, stats.weight), (merged.mean, stats.mean)):
        assert_allclose(a, b, rtol=1e-15)
    assert_allclose(merged.scatter, stats.scatter, rtol=1e-15)


@pytest.mark.parametrize(
    "structure, precisions",
    [
        (FULL, np.array([[[1.0, 2.0], [2.0, 1.0]]])),
        (TIED, np.array([[1.0, 0.0], [0.0, -1.0]])),
        (DIAG, np.array([[1.0, 0.0], [2.0, 3.0]])),
        (SPHERICAL, np.array([1.0, 0.0])),
    ],
    ids=lambda v: getattr(v, "name", ""),
)
def test_precisions_that_are_not_positive_definite_are_linalg_errors(
    structure, precisions
):
    with pytest.raises(np.linalg.LinAlgError):
        structure.from_precision(precisions)


def test_rows_split_across_threads_give_the_same_densities(monkeypatch, rng):
    """On large inputs the full density runs on blocks of rows in threads;
    the blocks' results are the single thread's, bit for bit."""
    n, k, d = 1001, 3, 6
    params = full_params(rng, k, d, 10.0)
    X = rng.normal(size=(n, d)) + 10.0
    monkeypatch.setattr(cov_module, "_COMPILED_WORK", 0)
    monkeypatch.setattr(cov_module, "numpy_first", lambda *kernels: False)
    one = Gaussian(FULL).log_likelihood(X, params)
    calls = []
    kernel = kernels.full_log_likelihood
    monkeypatch.setattr(kernels, "_THREAD_WORK", 0)
    monkeypatch.setattr(kernels, "_THREAD_ROWS", 100)
    monkeypatch.setattr(kernels.numba.config, "NUMBA_NUM_THREADS", 3)
    monkeypatch.setattr(
        cov_module,
        "full_log_likelihood",
        lambda X, *a: calls.append(len(X)) or kernel(X, *a),
    )
    split = Gaussian(FULL).log_likelihood(X, params)
    assert sorted(calls) == [0, 333, 334, 334]
    np.testing.assert_array_equal(split, one)
