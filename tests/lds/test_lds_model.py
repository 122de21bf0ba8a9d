"""LinearGaussianSSM's behaviour: EM's objective, recovery of a simulated
system, statistics that add, sequence weights, the two input forms, missing
cells, forecasting, sampling, priors and errors at the boundary."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.cluster import KMeans
from sklearn.pipeline import make_pipeline

from bayeskit import LinearGaussianSSM
from bayeskit.lds import LDSStats


def _spd(rng, n, scale=1.0):
    M = rng.normal(size=(n, n))
    return scale * (M @ M.T / n + 0.5 * np.eye(n))


def true_model(rng, k, d):
    A = rng.normal(size=(k, k))
    A *= 0.9 / np.abs(np.linalg.eigvals(A)).max()
    model = LinearGaussianSSM(
        k,
        transition_matrices=A,
        observation_matrices=rng.normal(size=(d, k)),
        transition_covariance=_spd(rng, k, 0.3),
        observation_covariance=_spd(rng, d, 0.2),
        transition_offsets=np.zeros(k),
        observation_offsets=rng.normal(size=d),
        initial_state_mean=np.zeros(k),
        initial_state_covariance=np.eye(k),
        em_vars=[],
        n_iter=0,
    )
    return model


def simulate(model, lengths, rng):
    model = model.fit(np.zeros((2, model.observation_matrices.shape[0])))
    seqs = [
        model.sample(int(n), random_state=int(rng.integers(2**31)))[0] for n in lengths
    ]
    return seqs


# -- EM -------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(50))
def test_em_never_decreases_the_log_posterior(seed):
    """50 seeds: random systems, several sequences of random weights, cells and
    whole steps missing, and covariance priors on or off."""
    rng = np.random.default_rng(seed)
    k, d = int(rng.integers(1, 4)), int(rng.integers(1, 5))
    truth = true_model(rng, k, d)
    lengths = rng.integers(2, 30, size=int(rng.integers(1, 4)))
    X = np.concatenate(simulate(truth, lengths, rng))
    X[rng.random(X.shape) < 0.15] = np.nan
    prior = float(rng.choice([0.0, 2.0]))
    ridge = float(rng.choice([0.0, 3.0]))
    n = int(rng.integers(1, 4))
    model = LinearGaussianSSM(
        n,
        n_iter=25,
        tol=0,
        observation_covariance_prior_weight=prior,
        transition_covariance_prior_weight=prior,
        initial_state_covariance_prior_weight=prior,
        transition_matrices_prior=0.5 * np.eye(n),
        transition_matrices_prior_weight=ridge,
        observation_matrices_prior_weight=ridge,
        initial_state_mean_prior=np.ones(n),
        initial_state_mean_prior_weight=ridge,
        random_state=seed,
    )
    model.fit(X, lengths, sequence_weight=rng.uniform(0.5, 2, size=len(lengths)))
    history = np.array(model.monitor_.history)
    gains = np.diff(history)
    assert (gains >= -1e-8 * np.abs(history[1:])).all(), gains.min()


@pytest.mark.slow
def test_em_recovers_the_system_up_to_the_latent_basis():
    """The latent state is identified up to an invertible map T (A -> T A T^-1,
    C -> C T^-1, Q -> T Q T^T): what EM must recover are the invariants, the
    eigenvalues of A and the stationary autocovariances C A^j S C^T of the
    observations (S the stationary state covariance), and it must find a
    likelihood at least the true system's. (R itself converges slowly under
    EM, as the noise splits between R and Q only over many iterations.)"""
    rng = np.random.default_rng(3)
    k, d = 2, 4
    truth = true_model(rng, k, d)
    truth.set_params(transition_matrices=np.array([[0.9, 0.2], [-0.2, 0.7]]))
    seqs = simulate(truth, [50] * 150, rng)
    model = LinearGaussianSSM(k, n_iter=80, tol=1e-6).fit(seqs)
    assert model.score(seqs) > truth.score(seqs)

    def invariants(m, suffix):
        A, C, Q = (
            getattr(m, f"transition_matrices{suffix}"),
            getattr(m, f"observation_matrices{suffix}"),
            getattr(m, f"transition_covariance{suffix}"),
        )
        S = np.eye(k)
        for _ in range(500):  # the stationary covariance, S = A S A^T + Q
            S = A @ S @ A.T + Q
        gammas = [C @ np.linalg.matrix_power(A, j) @ S @ C.T for j in range(3)]
        gammas[0] = gammas[0] + getattr(m, f"observation_covariance{suffix}")
        return np.sort_complex(np.linalg.eigvals(A)), gammas

    true_eig, true_gammas = invariants(truth, "")
    eig, gammas = invariants(model, "_")
    np.testing.assert_allclose(eig, true_eig, atol=0.03)
    for g, t in zip(gammas, true_gammas):
        np.testing.assert_allclose(g, t, atol=0.08 * np.abs(t).max())
    np.testing.assert_allclose(
        model.observation_offsets_, truth.observation_offsets, atol=0.1
    )


# -- statistics -----------------------------------------------------------------------
def _fitted(rng, k=2, d=3):
    truth = true_model(rng, k, d)
    seqs = simulate(truth, rng.integers(1, 15, size=6), rng)
    for s in seqs:
        s[rng.random(s.shape) < 0.2] = np.nan
    model = LinearGaussianSSM(k, n_iter=3).fit(seqs)
    return model, seqs


def _assert_stats_equal(a: LDSStats, b: LDSStats):
    for name in LDSStats.__dataclass_fields__:
        if name == "layout":  # what the numbers are over, not a number
            continue
        np.testing.assert_allclose(
            getattr(a, name), getattr(b, name), rtol=1e-10, atol=1e-10, err_msg=name
        )


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), data=st.data())
def test_statistics_of_chunks_add_up_to_those_of_all(seed, data):
    rng = np.random.default_rng(seed)
    model, seqs = _fitted(rng)
    cuts = sorted(data.draw(st.sets(st.integers(1, len(seqs) - 1), max_size=4)))
    chunks = [seqs[a:b] for a, b in zip([0, *cuts], [*cuts, len(seqs)])]
    before = [s.copy() for s in seqs]
    whole = model.summarize(seqs)
    parts = sum(model.summarize(c) for c in chunks)
    _assert_stats_equal(parts, whole)
    one = clone(model).set_params(n_iter=3).fit(seqs)
    a = one.from_stats(parts)
    b = clone(one).fit(seqs).from_stats(whole)
    for name in ("transition_matrices_", "observation_covariance_"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-9)
    for s, s0 in zip(seqs, before):  # the input is never changed
        assert np.array_equal(s, s0, equal_nan=True)


def test_fit_is_summarize_then_from_stats():
    """One EM iteration of fit equals from_stats(summarize) from the start."""
    rng = np.random.default_rng(1)
    model, seqs = _fitted(rng)
    start = {n[:-1]: getattr(model, n) for n in _PARAMS}
    one = LinearGaussianSSM(2, **start, n_iter=1).fit(seqs)
    zero = LinearGaussianSSM(2, **start, n_iter=0).fit(seqs)
    by_hand = zero.from_stats(zero.summarize(seqs))
    for name in _PARAMS:
        np.testing.assert_allclose(
            getattr(one, name), getattr(by_hand, name), rtol=1e-12, err_msg=name
        )


def test_partial_fit_is_incremental_em():
    """partial_fit adds the chunk's statistics under the current parameters to
    stats_ and derives the parameters from the sum."""
    rng = np.random.default_rng(13)
    model, seqs = _fitted(rng)
    start = {n[:-1]: getattr(model, n) for n in _PARAMS}
    online = LinearGaussianSSM(2, **start)
    online.partial_fit(seqs[:3]).partial_fit(seqs[3:])
    by_hand = LinearGaussianSSM(2, **start, n_iter=0).fit(seqs[:1])
    first = by_hand.summarize(seqs[:3])
    by_hand.from_stats(first)
    total = first + by_hand.summarize(seqs[3:])
    by_hand.from_stats(total)
    _assert_stats_equal(online.stats_, total)
    for name in _PARAMS:
        np.testing.assert_allclose(
            getattr(online, name), getattr(by_hand, name), rtol=1e-10, err_msg=name
        )


_PARAMS = (
    "transition_matrices_",
    "observation_matrices_",
    "transition_covariance_",
    "observation_covariance_",
    "transition_offsets_",
    "observation_offsets_",
    "initial_state_mean_",
    "initial_state_covariance_",
)


def test_integer_sequence_weights_equal_repeated_sequences():
    rng = np.random.default_rng(2)
    _, seqs = _fitted(rng)
    weights = np.array([2, 1, 3, 1, 0, 1])
    repeated = [s for s, w in zip(seqs, weights) for _ in range(w)]
    a = LinearGaussianSSM(2, n_iter=4).fit(seqs, sequence_weight=weights)
    b = LinearGaussianSSM(2, n_iter=4).fit(repeated)
    # The data start reads rows, not weights: start both from a's start.
    start = {n[:-1]: getattr(a, n) for n in _PARAMS}
    a = LinearGaussianSSM(2, **start, n_iter=3).fit(seqs, sequence_weight=weights)
    b = LinearGaussianSSM(2, **start, n_iter=3).fit(repeated)
    for name in _PARAMS:
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-9)
    np.testing.assert_allclose(a.lower_bound_, b.lower_bound_, rtol=1e-10)


def test_rows_with_lengths_equal_a_list_of_sequences():
    rng = np.random.default_rng(4)
    model, seqs = _fitted(rng)
    rows, lengths = np.concatenate(seqs), [len(s) for s in seqs]
    a = clone(model).fit(seqs)
    b = clone(model).fit(rows, lengths)
    for name in _PARAMS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    means, covs = a.smooth(seqs)
    assert isinstance(means, list) and len(means) == len(seqs)
    np.testing.assert_array_equal(np.concatenate(means), a.smooth(rows, lengths)[0])
    np.testing.assert_array_equal(np.concatenate(covs), a.smooth(rows, lengths)[1])
    np.testing.assert_allclose(
        a.score_sequences(seqs).sum(), a.score(rows, lengths), rtol=1e-13
    )
    np.testing.assert_array_equal(a.transform(seqs), a.predict(rows, lengths))


def test_missing_cells_give_the_expected_statistics_of_the_joint_gaussian():
    """The E-step's statistics with some cells missing: the moments of the
    missing observations and the states under the dense joint Gaussian of the
    sequence conditioned on the observed cells."""
    rng = np.random.default_rng(5)
    k, d, T = 2, 3, 5
    model = true_model(rng, k, d).fit(np.zeros((2, d)))
    Y = rng.normal(size=(T, d))
    Y[[0, 2, 3], [1, 0, 2]] = np.nan
    Y[4] = np.nan  # a whole step: no observation statistics at all
    stats = model.summarize(Y)
    # The joint of (x_0..x_T-1, y_0..y_T-1) as a linear map of the noises.
    A, C = model.transition_matrices_, model.observation_matrices_
    b, off = model.transition_offsets_, model.observation_offsets_
    LQ = np.linalg.cholesky(model.transition_covariance_)
    LR = np.linalg.cholesky(model.observation_covariance_)
    L0 = np.linalg.cholesky(model.initial_state_covariance_)
    n_noise = k * T + d * T
    Lx, mx = [np.zeros((k, n_noise))], [model.initial_state_mean_]
    Lx[0][:, :k] = L0
    for t in range(1, T):
        L = A @ Lx[-1]
        L[:, k * t : k * t + k] += LQ
        Lx.append(L)
        mx.append(A @ mx[-1] + b)
    Ly = []
    for t in range(T):
        L = C @ Lx[t]
        L[:, k * T + d * t : k * T + d * t + d] += LR
        Ly.append(L)
    L = np.concatenate(Lx + Ly)
    mean = np.concatenate(mx + [C @ m + off for m in mx])
    cov = L @ L.T
    obs = np.concatenate([np.zeros(k * T, bool), ~np.isnan(Y).ravel()])
    gain = np.linalg.solve(cov[np.ix_(obs, obs)], cov[np.ix_(~obs, obs)].T).T
    post_mean = mean.copy()
    post_mean[~obs] += gain @ (Y.ravel()[obs[k * T :]] - mean[obs])
    post_mean[obs] = Y.ravel()[obs[k * T :]]
    post_cov = np.zeros_like(cov)
    post_cov[np.ix_(~obs, ~obs)] = (
        cov[np.ix_(~obs, ~obs)] - gain @ cov[np.ix_(~obs, obs)].T
    )
    second = post_cov + np.outer(post_mean, post_mean)  # E[z z^T]
    xs = [slice(k * t, k * t + k) for t in range(T)]
    ys = [slice(k * T + d * t, k * T + d * t + d) for t in range(T)]
    seen = range(T - 1)  # the steps with a value observed
    np.testing.assert_allclose(stats.y, sum(post_mean[ys[t]] for t in seen))
    np.testing.assert_allclose(stats.yy, sum(second[ys[t], ys[t]] for t in seen))
    np.testing.assert_allclose(stats.yx, sum(second[ys[t], xs[t]] for t in seen))
    np.testing.assert_allclose(stats.xx_obs, sum(second[xs[t], xs[t]] for t in seen))
    np.testing.assert_allclose(
        stats.x_cross, sum(second[xs[t + 1], xs[t]] for t in range(T - 1))
    )
    assert stats.n_obs == T - 1 and stats.n_pairs == T - 1 and stats.n_seq == 1


# -- forecasting, sampling, pipelines -------------------------------------------------
def test_forecast_equals_the_filter_through_missing_steps():
    """h steps ahead = the predicted observations of h appended missing steps."""
    rng = np.random.default_rng(6)
    model, seqs = _fitted(rng)
    X = seqs[0]
    means, covs = model.forecast(X, n_steps=4)
    padded = np.concatenate([X, np.full((4, X.shape[1]), np.nan)])
    state_means, state_covs = model.filter(padded)
    C, R = model.observation_matrices_, model.observation_covariance_
    np.testing.assert_allclose(
        means, state_means[-4:] @ C.T + model.observation_offsets_, rtol=1e-10
    )
    np.testing.assert_allclose(covs, C @ state_covs[-4:] @ C.T + R, rtol=1e-10)
    many = model.forecast(seqs, n_steps=2)
    np.testing.assert_allclose(many[0][0], means[:2])


def test_sample_draws_from_the_model():
    rng = np.random.default_rng(7)
    truth = true_model(rng, 2, 3).fit(np.zeros((2, 3)))
    X, states = truth.sample(20000, random_state=0)
    noise = X - states @ truth.observation_matrices_.T - truth.observation_offsets_
    np.testing.assert_allclose(
        np.cov(noise.T), truth.observation_covariance_, atol=0.03
    )
    steps = states[1:] - states[:-1] @ truth.transition_matrices_.T
    np.testing.assert_allclose(np.cov(steps.T), truth.transition_covariance_, atol=0.03)
    again, _ = truth.sample(5, random_state=0)
    np.testing.assert_array_equal(again, X[:5])


def test_transform_feeds_a_pipeline():
    rng = np.random.default_rng(8)
    _, seqs = _fitted(rng)
    X = np.nan_to_num(np.concatenate(seqs))
    y = rng.integers(0, 2, len(X))
    pipe = make_pipeline(LinearGaussianSSM(2, n_iter=3), KMeans(2, n_init=1))
    labels = pipe.fit(X, y).predict(X)
    assert labels.shape == (len(X),)
    Z = pipe[0].transform(X)
    np.testing.assert_array_equal(labels, pipe[1].predict(Z))


# -- priors and parameters ------------------------------------------------------------
def test_a_covariance_prior_is_the_closed_form_map_estimate():
    """R = (scatter + eta S) / (n + eta): from the same statistics, the MAP
    estimate with prior weight eta and the ML one differ by exactly that."""
    rng = np.random.default_rng(9)
    model, seqs = _fitted(rng)
    S = np.diag([1.0, 2.0, 3.0])
    eta = 5.0
    stats = model.summarize(seqs)
    fixed = dict(em_vars=["observation_covariance"])
    start = {n[:-1]: getattr(model, n) for n in _PARAMS}
    ml = LinearGaussianSSM(2, **start, **fixed, n_iter=0).fit(seqs).from_stats(stats)
    prior = LinearGaussianSSM(
        2,
        **start,
        **fixed,
        n_iter=0,
        observation_covariance_prior=S,
        observation_covariance_prior_weight=eta,
    )
    prior = prior.fit(seqs).from_stats(stats)
    n = stats.n_obs
    expected = (ml.observation_covariance_ * n + eta * S) / (n + eta)
    np.testing.assert_allclose(prior.observation_covariance_, expected, rtol=1e-12)
    # Only the observation covariance was learned.
    np.testing.assert_array_equal(
        prior.transition_matrices_, model.transition_matrices_
    )


def test_matrix_and_mean_priors_are_the_closed_form_ridge():
    """A = (S_cross - b S_prev^T + lambda M)(S_prev + lambda I)^{-1}, the
    initial mean (sum + kappa m0) / (n + kappa), and Q's scatter gains
    lambda (A - M)(A - M)^T with k more virtual steps."""
    rng = np.random.default_rng(11)
    model, seqs = _fitted(rng)
    stats = model.summarize(seqs)
    start = {n[:-1]: getattr(model, n) for n in _PARAMS}
    M, lam, m0, kappa = np.array([[0.5, 0.1], [0.0, 0.5]]), 4.0, np.ones(2), 3.0
    fitted = LinearGaussianSSM(
        2,
        **start,
        n_iter=0,
        transition_matrices_prior=M,
        transition_matrices_prior_weight=lam,
        initial_state_mean_prior=m0,
        initial_state_mean_prior_weight=kappa,
    ).fit(seqs)
    ml = clone(fitted).set_params(
        transition_matrices_prior_weight=0.0, initial_state_mean_prior_weight=0.0
    )
    ml = ml.fit(seqs).from_stats(stats)
    fitted.from_stats(stats)
    b = start["transition_offsets"]
    A = np.linalg.solve(
        stats.xx_prev + lam * np.eye(2),
        (stats.x_cross - np.outer(b, stats.x_prev) + lam * M).T,
    ).T
    np.testing.assert_allclose(fitted.transition_matrices_, A, rtol=1e-10)
    np.testing.assert_allclose(
        fitted.initial_state_mean_, (stats.x0 + kappa * m0) / (stats.n_seq + kappa)
    )
    assert not np.allclose(ml.transition_matrices_, A)
    # Q: the same scatter at the new A, plus lambda D D^T over n + k steps.
    D = A - M
    refit = LinearGaussianSSM(
        2,
        **{**start, "transition_matrices": A},
        n_iter=0,
        em_vars=["transition_covariance"],
    ).fit(seqs)
    scatter = refit.from_stats(stats).transition_covariance_ * stats.n_pairs
    np.testing.assert_allclose(
        fitted.transition_covariance_,
        (scatter + lam * D @ D.T) / (stats.n_pairs + 2),
        rtol=1e-10,
    )


def test_tol_stops_em_and_verbose_reports_every_iteration(capsys):
    rng = np.random.default_rng(12)
    _, seqs = _fitted(rng)
    loose = LinearGaussianSSM(2, n_iter=50, tol=1e3).fit(seqs)
    assert loose.n_iter_ == 2 and loose.converged_
    strict = LinearGaussianSSM(2, n_iter=5, tol=0, verbose=True).fit(seqs)
    assert strict.n_iter_ == 5
    assert len(capsys.readouterr().err.strip().splitlines()) == 5


def test_n_init_keeps_the_best_start():
    rng = np.random.default_rng(10)
    _, seqs = _fitted(rng)
    runs = [
        LinearGaussianSSM(2, n_iter=5, n_init=1, random_state=0).fit(seqs),
        LinearGaussianSSM(2, n_iter=5, n_init=4, random_state=0).fit(seqs),
    ]
    assert runs[1].lower_bound_ >= runs[0].lower_bound_


def test_n_components_defaults_from_the_given_parameters():
    X = np.random.default_rng(0).normal(size=(20, 2))
    model = LinearGaussianSSM(transition_matrices=np.eye(3) * 0.5, n_iter=2).fit(X)
    assert model.n_components_ == 3
    assert LinearGaussianSSM(n_iter=1).fit(X).n_components_ == 1


# -- errors at the boundary -----------------------------------------------------------
BAD = [
    ({"transition_matrices": np.ones((2, 3))}, "transition_matrices"),
    ({"observation_matrices": np.ones((4, 2))}, "observation_matrices"),
    ({"transition_covariance": np.array([[1.0, 2], [2, 1]])}, "transition_covariance"),
    ({"observation_covariance": -np.eye(3)}, "observation_covariance"),
    ({"initial_state_covariance": [[1.0, 0.5], [0.4, 1]]}, "initial_state_covariance"),
    ({"initial_state_mean": [0.0, np.inf]}, "initial_state_mean"),
    ({"transition_matrices": np.ones((5, 2, 2))}, "transition_matrices"),
    ({"em_vars": ["transition_matrix"]}, "em_vars"),
    ({"observation_covariance_prior": np.eye(2)}, "observation_covariance_prior"),
    ({"n_components": 0}, "n_components"),
    ({"n_components": 3, "transition_matrices": np.eye(2)}, "transition_matrices"),
]


@pytest.mark.parametrize("params, name", BAD)
def test_bad_parameters_are_value_errors_naming_them(params, name):
    X = np.random.default_rng(0).normal(size=(10, 3))
    kwargs = {"n_components": 2, **params}
    if "observation_covariance_prior" in params:
        kwargs["observation_covariance_prior_weight"] = 1.0
    with pytest.raises(ValueError, match=name):
        LinearGaussianSSM(**kwargs).fit(X)


def test_bad_data_are_errors_and_nan_cells_are_data():
    X = np.random.default_rng(0).normal(size=(10, 3))
    with pytest.raises(ValueError, match="inf"):
        LinearGaussianSSM(2).fit(np.where(X > 1, np.inf, X))
    with pytest.raises(ValueError, match="lengths"):
        LinearGaussianSSM(2).fit(X, [3, 3])
    with pytest.raises(ValueError, match="sequence_weight"):
        LinearGaussianSSM(2).fit(X, sequence_weight=[1.0, 2.0])
    holes = X.copy()
    holes[::3, 1] = np.nan
    holes[4] = np.nan
    model = LinearGaussianSSM(2, n_iter=3).fit(holes)
    assert np.isfinite(model.score(holes))
    with pytest.raises(ValueError, match="features"):
        model.score(X[:, :2])
    with pytest.raises(ValueError, match="n_steps"):
        model.forecast(X, n_steps=0)
    with pytest.raises(TypeError, match="stats"):
        model.from_stats({"n_obs": 1})
    with pytest.raises(ValueError, match="singular observation_covariance"):
        LinearGaussianSSM(3, n_iter=3).fit(X[:1])


def test_a_singular_noise_of_observed_cells_conditions_as_its_limit():
    """A fit on one row with a missing cell drove the observed coordinates'
    noise to zero, and the E-step's solve for the missing cell raised numpy's
    LinAlgError from inside (found by the thorough fuzzing profile). Now the
    gain of a singular ``R_oo`` is the minimum-norm one, the limit of the
    gains of ``R_oo + eps I``, and the fit stops at the boundary's error."""
    from bayeskit import KalmanFilter
    from bayeskit.lds._stats import _conditional_gain

    R = np.array(  # the first coordinate observed without noise
        [[0, 0, 0, 0], [0, 2, 0.5, 0.3], [0, 0.5, 1, 0.2], [0, 0.3, 0.2, 1.0]]
    )
    o = np.array([True, True, True, False])
    R_oo, R_om = R[np.ix_(o, o)], R[np.ix_(o, ~o)]
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.solve(R_oo, R_om)
    limit = np.linalg.solve(R_oo + 1e-9 * np.eye(3), R_om)
    np.testing.assert_allclose(_conditional_gain(R_oo, R_om), limit, atol=1e-6)
    # A nonsingular block: the solve itself.
    R_full = R + np.eye(4)
    np.testing.assert_array_equal(
        _conditional_gain(R_full[np.ix_(o, o)], R_full[np.ix_(o, ~o)]),
        np.linalg.solve(R_full[np.ix_(o, o)], R_full[np.ix_(o, ~o)]),
    )
    X = np.array([[-0.652, -0.1747, 1.664, np.nan]], dtype=np.float16)
    with pytest.raises(ValueError, match="observation_covariance"):
        KalmanFilter(n_iter=3, random_state=0).fit(X)
