"""Gaussian belief propagation on a chain (the square-root Kalman filter and RTS
smoother) against pykalman, against the dense joint Gaussian of a whole
sequence, and against high-precision arithmetic on a stiff system."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayeskit.graph.gaussian_chain import (
    GaussianChainParams,
    kalman_filter,
    kalman_smoother,
)

pykalman = pytest.importorskip("pykalman")
from pykalman import standard as pk_standard  # noqa: E402


def _spd(rng, n, scale=1.0):
    M = rng.normal(size=(n, n))
    return scale * (M @ M.T / n + 0.5 * np.eye(n))


def random_params(rng, k, d):
    A = rng.normal(size=(k, k))
    A *= 0.95 / max(1.0, np.abs(np.linalg.eigvals(A)).max())
    return GaussianChainParams(
        transition_matrix=A,
        transition_offset=rng.normal(size=k),
        transition_covariance=_spd(rng, k),
        observation_matrix=rng.normal(size=(d, k)),
        observation_offset=rng.normal(size=d),
        observation_covariance=_spd(rng, d),
        initial_mean=rng.normal(size=k),
        initial_covariance=_spd(rng, k, 2.0),
    )


def _pykalman(p):
    return pykalman.KalmanFilter(
        transition_matrices=p.transition_matrix,
        observation_matrices=p.observation_matrix,
        transition_covariance=p.transition_covariance,
        observation_covariance=p.observation_covariance,
        transition_offsets=p.transition_offset,
        observation_offsets=p.observation_offset,
        initial_state_mean=p.initial_mean,
        initial_state_covariance=p.initial_covariance,
    )


def _pykalman_pass(p, Z):
    """pykalman's filter, smoother and lag-one covariances on Z (masked)."""
    pred_m, pred_P, _, filt_m, filt_P = pk_standard._filter(
        p.transition_matrix,
        p.observation_matrix,
        p.transition_covariance,
        p.observation_covariance,
        p.transition_offset,
        p.observation_offset,
        p.initial_mean,
        p.initial_covariance,
        Z,
    )
    sm, sP, gains = pk_standard._smooth(
        p.transition_matrix, filt_m, filt_P, pred_m, pred_P
    )
    pair = pk_standard._smooth_pair(sP, gains)
    return pred_m, pred_P, filt_m, filt_P, sm, sP, pair


@pytest.mark.parametrize("seed", range(12))
def test_filter_and_smoother_equal_pykalman(seed):
    rng = np.random.default_rng(seed)
    k, d = rng.integers(1, 5), rng.integers(1, 5)
    p = random_params(rng, k, d)
    T = int(rng.integers(1, 40))
    Y = rng.normal(size=(T, d)) * 2
    Z = np.ma.asarray(Y)
    pred_m, pred_P, filt_m, filt_P, sm, sP, pair = _pykalman_pass(p, Z)
    f = kalman_filter(Y, np.array([T]), p)
    s = kalman_smoother(Y, np.array([T]), p)
    tol = {"rtol": 1e-10, "atol": 1e-10}
    np.testing.assert_allclose(f.predicted_means, pred_m, **tol)
    np.testing.assert_allclose(f.predicted_covariances, pred_P, **tol)
    np.testing.assert_allclose(f.filtered_means, filt_m, **tol)
    np.testing.assert_allclose(f.filtered_covariances, filt_P, **tol)
    np.testing.assert_allclose(s.means, sm, **tol)
    np.testing.assert_allclose(s.covariances, sP, **tol)
    np.testing.assert_allclose(s.cross_covariances[1:], pair[1:], **tol)
    assert not s.cross_covariances[0].any()
    ll = _pykalman(p).loglikelihood(Z)
    np.testing.assert_allclose(f.log_likelihood, [ll], rtol=1e-12)
    np.testing.assert_allclose(s.log_likelihood, [ll], rtol=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_whole_missing_steps_equal_pykalman_masked_steps(seed):
    rng = np.random.default_rng(100 + seed)
    k, d = 2, 3
    p = random_params(rng, k, d)
    T = 30
    Y = rng.normal(size=(T, d))
    gone = rng.random(T) < 0.3
    Y[gone] = np.nan
    Z = np.ma.masked_invalid(Y)
    _, _, filt_m, filt_P, sm, sP, pair = _pykalman_pass(p, Z)
    s = kalman_smoother(Y, np.array([T]), p)
    f = kalman_filter(Y, np.array([T]), p)
    np.testing.assert_allclose(f.filtered_means, filt_m, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(f.filtered_covariances, filt_P, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(s.means, sm, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(s.covariances, sP, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(s.cross_covariances[1:], pair[1:], atol=1e-10)
    ll = _pykalman(p).loglikelihood(Z)
    np.testing.assert_allclose(s.log_likelihood, [ll], rtol=1e-12)


def dense_joint(p, T):
    """Mean and covariance of (x_0..x_{T-1}, y_0..y_{T-1}) stacked, by writing
    every variable as a linear map of the independent noises."""
    k, d = p.n_state, p.n_obs
    n_noise = k + (T - 1) * k + T * d
    Lx = np.zeros((T, k, n_noise))
    mx = np.zeros((T, k))
    L0 = np.linalg.cholesky(p.initial_covariance)
    LQ = np.linalg.cholesky(p.transition_covariance)
    LR = np.linalg.cholesky(p.observation_covariance)
    Lx[0][:, :k] = L0
    mx[0] = p.initial_mean
    for t in range(1, T):
        Lx[t] = p.transition_matrix @ Lx[t - 1]
        j = k + (t - 1) * k
        Lx[t][:, j : j + k] += LQ
        mx[t] = p.transition_matrix @ mx[t - 1] + p.transition_offset
    Ly = np.zeros((T, d, n_noise))
    my = np.zeros((T, d))
    for t in range(T):
        Ly[t] = p.observation_matrix @ Lx[t]
        j = k + (T - 1) * k + t * d
        Ly[t][:, j : j + d] += LR
        my[t] = p.observation_matrix @ mx[t] + p.observation_offset
    L = np.concatenate([Lx.reshape(T * k, -1), Ly.reshape(T * d, -1)])
    return np.concatenate([mx.ravel(), my.ravel()]), L @ L.T


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_some_missing_coordinates_equal_the_conditioned_joint_gaussian(seed):
    """Steps with some coordinates missing: the smoother's moments and the
    log-likelihood equal those of the dense joint Gaussian of the sequence
    conditioned on the observed cells."""
    rng = np.random.default_rng(seed)
    k, d = int(rng.integers(1, 4)), int(rng.integers(2, 4))
    T = int(rng.integers(1, 7))
    p = random_params(rng, k, d)
    Y = rng.normal(size=(T, d)) * 2
    Y[rng.random((T, d)) < 0.4] = np.nan
    mean, cov = dense_joint(p, T)
    obs = np.concatenate([np.zeros(T * k, bool), ~np.isnan(Y).ravel()])
    lat = np.arange(T * k)
    y_o = Y.ravel()[~np.isnan(Y).ravel()]
    S_oo = cov[np.ix_(obs, obs)]
    S_lo = cov[np.ix_(lat, obs)]
    gain = np.linalg.solve(S_oo, S_lo.T).T if obs.any() else np.zeros((T * k, 0))
    post_mean = mean[lat] + gain @ (y_o - mean[obs])
    post_cov = cov[np.ix_(lat, lat)] - gain @ S_lo.T
    s = kalman_smoother(Y, np.array([T]), p)
    np.testing.assert_allclose(s.means.ravel(), post_mean, rtol=1e-8, atol=1e-8)
    for t in range(T):
        block = post_cov[t * k : (t + 1) * k, t * k : (t + 1) * k]
        np.testing.assert_allclose(s.covariances[t], block, rtol=1e-8, atol=1e-8)
        if t:
            cross = post_cov[t * k : (t + 1) * k, (t - 1) * k : t * k]
            np.testing.assert_allclose(
                s.cross_covariances[t], cross, rtol=1e-8, atol=1e-8
            )
    if obs.any():
        r = y_o - mean[obs]
        _, logdet = np.linalg.slogdet(S_oo)
        ll = -0.5 * (
            obs.sum() * np.log(2 * np.pi) + logdet + r @ np.linalg.solve(S_oo, r)
        )
    else:
        ll = 0.0
    np.testing.assert_allclose(s.log_likelihood, [ll], rtol=1e-9, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 12), min_size=1, max_size=6),
    seed=st.integers(0, 2**32 - 1),
)
def test_many_sequences_at_once_equal_each_alone(lengths, seed):
    rng = np.random.default_rng(seed)
    p = random_params(rng, 2, 3)
    lengths = np.array(lengths)
    Y = rng.normal(size=(lengths.sum(), 3))
    Y[rng.random(Y.shape) < 0.2] = np.nan
    before = Y.copy()
    together = kalman_smoother(Y, lengths, p)
    assert np.array_equal(before, Y, equal_nan=True)  # the input is not changed
    start = 0
    for i, n in enumerate(lengths):
        alone = kalman_smoother(Y[start : start + n], np.array([n]), p)
        rows = slice(start, start + n)
        np.testing.assert_allclose(together.means[rows], alone.means, atol=1e-12)
        np.testing.assert_allclose(
            together.covariances[rows], alone.covariances, atol=1e-12
        )
        np.testing.assert_allclose(
            together.cross_covariances[rows], alone.cross_covariances, atol=1e-12
        )
        np.testing.assert_allclose(
            together.log_likelihood[i], alone.log_likelihood[0], rtol=1e-13
        )
        start += n


def _plain_filter(Y, p):
    """The textbook covariance form, P - K C P (the form the square root replaces)."""
    m, P = p.initial_mean.copy(), p.initial_covariance.copy()
    A, C = p.transition_matrix, p.observation_matrix
    out = []
    for y in Y:
        S = C @ P @ C.T + p.observation_covariance
        K = np.linalg.solve(S, C @ P).T
        m = m + K @ (y - C @ m - p.observation_offset)
        P = P - K @ C @ P
        out.append(P)
        m = A @ m + p.transition_offset
        P = A @ P @ A.T + p.transition_covariance
    return out


def _mp_filter(Y, p, dps=60):
    """The covariance form in 60-digit arithmetic (the reference)."""
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(dps):
        M = lambda a: mpmath.matrix(np.asarray(a).tolist())  # noqa: E731
        A, C = M(p.transition_matrix), M(p.observation_matrix)
        Q, R = M(p.transition_covariance), M(p.observation_covariance)
        P = M(p.initial_covariance)
        out = []
        for _ in Y:
            S = C * P * C.T + R
            K = P * C.T * mpmath.inverse(S)
            P = P - K * C * P
            out.append(np.array(P.tolist(), dtype=float))
            P = A * P * A.T + Q
        return out


def test_square_root_form_keeps_a_stiff_system_positive_definite():
    """A vague prior (1e8) meets nearly noiseless measurements (1e-12) of
    nearly collinear coordinates: the plain covariance update cancels
    catastrophically and returns matrices with large negative eigenvalues;
    the square-root form stays positive semi-definite and agrees with the
    60-digit reference to 1e-7 relative."""
    eps = 1e-3
    p = GaussianChainParams(
        transition_matrix=np.array([[1, eps, 0], [0, 1, eps], [0, 0, 1.0]]),
        transition_offset=np.zeros(3),
        transition_covariance=1e-12 * np.eye(3),
        observation_matrix=np.array([[1.0, 0, 0], [1, 1e-8, 0]]),
        observation_offset=np.zeros(2),
        observation_covariance=1e-12 * np.eye(2),
        initial_mean=np.zeros(3),
        initial_covariance=1e8 * np.eye(3),
    )
    Y = np.random.default_rng(0).normal(size=(10, 2))
    ours = kalman_filter(Y, np.array([10]), p).filtered_covariances
    plain = _plain_filter(Y, p)
    reference = _mp_filter(Y, p)
    assert min(np.linalg.eigvalsh(P).min() for P in plain) < -0.1
    for P, ref in zip(ours, reference):
        assert np.linalg.eigvalsh(P).min() >= 0
        scale = np.abs(ref).max()
        assert np.abs(P - ref).max() <= 1e-7 * scale


@pytest.mark.parametrize("path", ["interpreted", "serial", "parallel"])
def test_every_path_of_the_kernels_agrees(monkeypatch, path):
    """The kernels' source run by the interpreter (small work), compiled
    serial, and compiled parallel give the same answer (to 1e-12)."""
    from bayeskit import _jit
    from bayeskit.graph import gaussian_chain

    rng = np.random.default_rng(7)
    p = random_params(rng, 3, 4)
    lengths = np.array([30, 1, 17, 25])
    Y = rng.normal(size=(lengths.sum(), 4))
    Y[rng.random(Y.shape) < 0.2] = np.nan
    Y[5:8] = np.nan
    reference = kalman_smoother(Y, lengths, p)
    threads = {"interpreted": 0, "serial": 1, "parallel": 2}[path]
    if path == "interpreted":
        monkeypatch.setattr(_jit, "_INTERPRET_BUDGET", np.inf)
        monkeypatch.setattr(_jit, "_compiled", lambda kernel: False)
    monkeypatch.setattr(gaussian_chain, "_n_threads", lambda n, s: threads)
    monkeypatch.setattr(gaussian_chain, "_numpy_first", lambda *args: False)
    got = kalman_smoother(Y, lengths, p)
    for name in ("means", "covariances", "cross_covariances", "log_likelihood"):
        np.testing.assert_allclose(
            getattr(got, name), getattr(reference, name), rtol=1e-12, atol=1e-12
        )
