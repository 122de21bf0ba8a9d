"""LinearGaussianSSM and KalmanFilter against pykalman 0.11.2: every EM iterate,
filtering, smoothing and the log-likelihood, on random systems and on
pykalman's own example parameters."""

import numpy as np
import pytest

from bayeskit import KalmanFilter, LinearGaussianSSM

pykalman = pytest.importorskip("pykalman")

pytestmark = pytest.mark.parity

NAMES = (
    "transition_matrices",
    "observation_matrices",
    "transition_covariance",
    "observation_covariance",
    "transition_offsets",
    "observation_offsets",
    "initial_state_mean",
    "initial_state_covariance",
)


def _spd(rng, n):
    M = rng.normal(size=(n, n))
    return M @ M.T / n + 0.5 * np.eye(n)


def random_start(rng, k, d):
    A = rng.normal(size=(k, k))
    A *= 0.9 / max(1.0, np.abs(np.linalg.eigvals(A)).max())
    return {
        "transition_matrices": A,
        "observation_matrices": rng.normal(size=(d, k)),
        "transition_covariance": _spd(rng, k),
        "observation_covariance": _spd(rng, d),
        "transition_offsets": rng.normal(size=k) * 0.1,
        "observation_offsets": rng.normal(size=d),
        "initial_state_mean": rng.normal(size=k),
        "initial_state_covariance": _spd(rng, k),
    }


def assert_same_parameters(ours, theirs, tol=1e-10):
    for name in NAMES:
        np.testing.assert_allclose(
            getattr(ours, f"{name}_"),
            np.asarray(getattr(theirs, name)),
            rtol=tol,
            atol=tol,
            err_msg=name,
        )


EM_VARS = [
    None,
    "all",
    ["transition_matrices", "observation_offsets"],
    ["observation_matrices", "observation_covariance", "initial_state_mean"],
]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("em_vars", EM_VARS, ids=["default", "all", "A-d", "C-R-mu"])
def test_each_em_iterate_equals_pykalman(seed, em_vars):
    rng = np.random.default_rng(seed)
    k, d = int(rng.integers(1, 4)), int(rng.integers(1, 5))
    start = random_start(rng, k, d)
    Y = rng.normal(size=(int(rng.integers(5, 60)), d))
    for n_iter in (1, 2, 3):
        theirs = pykalman.KalmanFilter(**start).em(Y, n_iter=n_iter, em_vars=em_vars)
        ours = KalmanFilter(**start, em_vars=em_vars, n_iter=n_iter).fit(Y)
        assert ours.n_iter_ == n_iter
        assert_same_parameters(ours, theirs)
        np.testing.assert_allclose(ours.score(Y), theirs.loglikelihood(Y), rtol=1e-11)
        # LinearGaussianSSM is the same model: from the same start, the same EM.
        same = LinearGaussianSSM(**start, em_vars=em_vars, n_iter=n_iter, tol=0)
        assert_same_parameters(same.fit(Y), theirs)


@pytest.mark.parametrize("seed", range(4))
def test_em_with_masked_steps_equals_pykalman(seed):
    """Whole steps missing: NaN here, a masked step in pykalman."""
    rng = np.random.default_rng(50 + seed)
    start = random_start(rng, 2, 3)
    Y = rng.normal(size=(40, 3))
    Y[rng.random(40) < 0.25] = np.nan
    masked = np.ma.masked_invalid(Y)
    theirs = pykalman.KalmanFilter(**start).em(masked, n_iter=3, em_vars="all")
    ours = KalmanFilter(**start, em_vars="all", n_iter=3).fit(Y)
    assert_same_parameters(ours, theirs)
    # A masked array is read as pykalman reads it.
    again = KalmanFilter(**start, em_vars="all", n_iter=3).fit(masked)
    assert_same_parameters(again, theirs)
    np.testing.assert_allclose(ours.score(Y), theirs.loglikelihood(masked), rtol=1e-11)


def test_pykalman_calls_mean_what_they_mean_in_pykalman():
    """pykalman's README example: em(X, n_iter=5) writes the learned values
    back into the parameters, a second em goes on from them, and filter,
    smooth, loglikelihood and sample answer as pykalman's."""
    A, C = [[1, 1], [0, 1]], [[0.1, 0.5], [-0.3, 0.0]]
    X = np.asarray([[1, 0], [0, 0], [0, 1]], dtype=float)
    theirs = pykalman.KalmanFilter(transition_matrices=A, observation_matrices=C)
    ours = KalmanFilter(transition_matrices=A, observation_matrices=C)
    # Before any fit: pykalman's defaults for what was not given.
    for method in ("filter", "smooth"):
        for a, b in zip(getattr(ours, method)(X), getattr(theirs, method)(X)):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.loglikelihood(X), theirs.loglikelihood(X))
    theirs = theirs.em(X, n_iter=5)
    ours = ours.em(X, n_iter=5)
    for name in NAMES:
        np.testing.assert_allclose(
            getattr(ours, name), getattr(theirs, name), rtol=1e-10, atol=1e-12
        )
    theirs = theirs.em(X, n_iter=2, em_vars="all")
    ours = ours.em(X, n_iter=2, em_vars="all")
    for name in NAMES:
        np.testing.assert_allclose(
            getattr(ours, name), getattr(theirs, name), rtol=1e-9, atol=1e-12
        )
    for a, b in zip(ours.smooth(X), theirs.smooth(X)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.loglikelihood(X), theirs.loglikelihood(X))
    states, observations = ours.sample(7, random_state=0)
    assert states.shape == (7, 2) and observations.shape == (7, 2)
    start = [3.0, -1.0]
    states, _ = ours.sample(3, initial_state=start, random_state=0)
    np.testing.assert_array_equal(states[0], start)


def test_n_dim_state_and_n_dim_obs_are_pykalmans():
    X = np.random.default_rng(0).normal(size=(30, 3))
    kf = KalmanFilter(n_dim_state=2, n_dim_obs=3, em_vars="all", n_iter=2).fit(X)
    assert kf.transition_matrices_.shape == (2, 2)
    assert kf.observation_matrices_.shape == (3, 2)
    with pytest.raises(ValueError, match="n_dim_obs"):
        KalmanFilter(n_dim_obs=2).fit(X)
    with pytest.raises(ValueError, match="transition_matrices"):
        KalmanFilter(n_dim_state=3, transition_matrices=np.eye(2)).fit(X)


def test_a_partly_masked_step_is_an_error_saying_what_to_write():
    """pykalman drops a step with any cell masked; bayeskit would use its
    observed cells: the two answers differ, so a masked array with a partly
    masked step is an error that says how to write either."""
    X = np.ma.masked_array(np.ones((4, 2)), mask=[[0, 0], [1, 0], [0, 0], [1, 1]])
    with pytest.raises(ValueError, match="NaN for the missing cells"):
        KalmanFilter().fit(X)
