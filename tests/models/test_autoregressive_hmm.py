"""ARGaussianHMM: GaussianHMM at order 0, enumeration on tiny models, the MAP
M-step against least squares, EM monotone, recovery of the dynamics, input."""

import itertools
import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal

from bayeskit import ARGaussianHMM, GaussianHMM
from bayeskit.hmm._autoregressive import lagged_rows


def _simulate(seed, coef, intercept, noise, transmat, lengths):
    """Sequences of a switching AR process (the first ``p`` steps N(0, 1)),
    with their states."""
    rng = np.random.default_rng(seed)
    k, d, q = coef.shape
    p = q // d
    X, Z = [], []
    for n in lengths:
        x = np.zeros((n, d))
        z = np.zeros(n, dtype=int)
        z[0] = rng.integers(k)
        x[:p] = rng.normal(size=(p, d))
        for t in range(1, n):
            z[t] = rng.choice(k, p=transmat[z[t - 1]])
        for t in range(p, n):
            lags = x[t - p : t][::-1].ravel()
            x[t] = coef[z[t]] @ lags + intercept[z[t]] + noise * rng.normal(size=d)
        X.append(x)
        Z.append(z)
    return np.concatenate(X), np.concatenate(Z)


def _random_data(seed, d=2, order=1, k=2, n_seq=3):
    rng = np.random.default_rng(seed)
    coef = rng.uniform(-0.6, 0.6, size=(k, d, d * order)) / order
    intercept = rng.normal(scale=2.0, size=(k, d))
    trans = rng.dirichlet(np.ones(k), size=k) + 2 * np.eye(k)
    trans /= trans.sum(axis=1, keepdims=True)
    lengths = rng.integers(order + 8, 40, size=n_seq)
    X, _ = _simulate(seed, coef, intercept, 0.5, trans, lengths)
    return X, lengths


# -- order 0 is GaussianHMM --------------------------------------------------------
@pytest.mark.parametrize("covariance_type", ["diag", "full"])
@pytest.mark.parametrize("seed", range(5))
def test_order_zero_is_gaussian_hmm(covariance_type, seed):
    rng = np.random.default_rng(seed)
    X, lengths = _random_data(seed, d=2, order=1, k=3)
    X[rng.integers(len(X))] = np.nan  # a gap: marginalised by both
    kw = dict(covariance_type=covariance_type, random_state=seed, n_iter=8)
    prior = dict(covars_prior=0.1, covars_weight=4.0)
    ar = ARGaussianHMM(
        3, order=0, intercept_prior=0.5, intercept_weight=1.5, **kw, **prior
    ).fit(X, lengths)
    g = GaussianHMM(3, means_prior=0.5, means_weight=1.5, **kw, **prior).fit(X, lengths)
    tight = dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ar.startprob_, g.startprob_, **tight)
    np.testing.assert_allclose(ar.transmat_, g.transmat_, **tight)
    np.testing.assert_allclose(ar.intercept_, g.means_, **tight)
    np.testing.assert_allclose(ar.covars_, g.covars_, **tight)
    np.testing.assert_allclose(ar.covariances_, g.covariances_, **tight)
    np.testing.assert_allclose(ar.monitor_.history, g.monitor_.history, **tight)
    assert ar.coef_.shape == (3, 2, 0)
    np.testing.assert_allclose(ar.score(X, lengths), g.score(X, lengths), **tight)
    np.testing.assert_allclose(
        ar.predict_proba(X, lengths), g.predict_proba(X, lengths), **tight
    )
    np.testing.assert_array_equal(ar.predict(X, lengths), g.predict(X, lengths))
    np.testing.assert_allclose(ar.bic(X, lengths), g.bic(X, lengths), **tight)
    a, sa = ar.sample(20, random_state=seed)
    b, sb = g.sample(20, random_state=seed)
    np.testing.assert_array_equal(sa, sb)
    np.testing.assert_allclose(a, b, **tight)


# -- exact inference against enumeration ---------------------------------------------
def _hand_set(seed, k, d, order, covariance_type):
    rng = np.random.default_rng(seed)
    est = ARGaussianHMM(k, order=order, covariance_type=covariance_type)
    est.startprob_ = rng.dirichlet(np.ones(k))
    est.transmat_ = rng.dirichlet(np.ones(k), size=k)
    est.coef_ = rng.normal(scale=0.5, size=(k, d, d * order))
    est.intercept_ = rng.normal(size=(k, d))
    if covariance_type == "full":
        B = rng.normal(size=(k, d, d))
        est.covars_ = B @ B.transpose(0, 2, 1) + 0.5 * np.eye(d)
    else:
        est.covars_ = rng.uniform(0.3, 2.0, size=(k, d))
    return est


def _enumerate(est, x):
    """log p(x_{p+1:T} | x_{1:p}), the step posteriors and the best path, by
    summing over every state path (scipy's densities)."""
    k, p = est.n_components, est.order
    T = len(x)
    covs = est.covars_
    dens = np.zeros((T, k))
    for t in range(p, T):
        lags = x[t - p : t][::-1].ravel()
        for j in range(k):
            mean = est.coef_[j] @ lags + est.intercept_[j]
            dens[t, j] = multivariate_normal(mean, covs[j]).logpdf(x[t])
    logs, paths = [], list(itertools.product(range(k), repeat=T))
    for path in paths:
        lp = np.log(est.startprob_[path[0]])
        lp += sum(np.log(est.transmat_[a, b]) for a, b in itertools.pairwise(path))
        lp += sum(dens[t, path[t]] for t in range(T))
        logs.append(lp)
    logs = np.array(logs)
    total = logsumexp(logs)
    post = np.zeros((T, k))
    for lp, path in zip(logs, paths):
        post[np.arange(T), path] += np.exp(lp - total)
    best = int(np.argmax(logs))
    return total, post, np.array(paths[best]), logs[best]


@pytest.mark.parametrize("covariance_type", ["diag", "full"])
@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("seed", range(4))
def test_inference_equals_enumeration(covariance_type, order, seed):
    k, d = 2, 2
    est = _hand_set(seed, k, d, order, covariance_type)
    rng = np.random.default_rng(100 + seed)
    seqs = [rng.normal(size=(n, d)) for n in (order + 1, 5, 6)]
    X, lengths = np.concatenate(seqs), [len(s) for s in seqs]
    ref = [_enumerate(est, s) for s in seqs]
    np.testing.assert_allclose(
        est.score_sequences(X, lengths), [r[0] for r in ref], rtol=1e-10
    )
    np.testing.assert_allclose(
        est.predict_proba(X, lengths),
        np.concatenate([r[1] for r in ref]),
        atol=1e-10,
    )
    log_prob, path = est.decode(X, lengths)
    np.testing.assert_allclose(log_prob, sum(r[3] for r in ref), rtol=1e-10)
    np.testing.assert_array_equal(path, np.concatenate([r[2] for r in ref]))
    # The list form gives the same.
    np.testing.assert_allclose(est.score(seqs), est.score(X, lengths), rtol=1e-12)


# -- the M-step --------------------------------------------------------------------
@pytest.mark.parametrize("covariance_type", ["diag", "full"])
@pytest.mark.parametrize("seed", range(5))
def test_one_state_m_step_is_ridge_least_squares(covariance_type, seed):
    """With one state every posterior is 1: the M-step is the MAP regression,
    computed here by numpy's least squares on the prior-augmented system
    (the ridge and the intercept prior as extra rows)."""
    rng = np.random.default_rng(seed)
    d, p = 2, 2
    X, lengths = _random_data(seed, d=d, order=p, k=1, n_seq=3)
    lam, kappa, m0 = rng.uniform(0, 3), rng.uniform(0, 3), rng.normal(size=d)
    A0 = rng.normal(size=(d, d * p))
    est = ARGaussianHMM(
        1,
        order=p,
        covariance_type=covariance_type,
        coef_prior=A0,
        coef_weight=lam,
        intercept_prior=m0,
        intercept_weight=kappa,
        covars_prior=0.3,
        covars_weight=5.0,
        n_iter=1,
        random_state=0,
    ).fit(X, lengths)
    Z = lagged_rows(X, np.asarray(lengths), p)
    Z = Z[~np.isnan(Z).any(axis=1)]
    x, U = Z[:, :d], Z[:, d:]
    q = U.shape[1]
    # Rows: data [U 1], ridge sqrt(lam) [I 0] -> sqrt(lam) A0^T, intercept
    # sqrt(kappa) [0 1] -> sqrt(kappa) m0.
    design = np.vstack(
        [
            np.c_[U, np.ones(len(U))],
            np.c_[np.sqrt(lam) * np.eye(q), np.zeros(q)],
            np.r_[np.zeros(q), np.sqrt(kappa)][None],
        ]
    )
    target = np.vstack([x, np.sqrt(lam) * A0.T, np.sqrt(kappa) * m0[None]])
    W = np.linalg.lstsq(design, target, rcond=None)[0].T
    np.testing.assert_allclose(est.coef_[0], W[:, :q], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(est.intercept_[0], W[:, q], rtol=1e-8, atol=1e-10)
    resid = target - design @ W.T
    Q = resid.T @ resid
    n = len(x)
    if covariance_type == "full":
        expected = (0.3 + Q) / (max(5.0 - d, 0) + n)
    else:
        expected = np.diag((0.3 + np.diag(Q)) / (max(5.0 - 1, 0) + n))
    np.testing.assert_allclose(est.covars_[0], expected, rtol=1e-8)


@pytest.mark.parametrize("seed", range(50))
def test_em_never_decreases_the_objective(seed):
    """The log-likelihood plus the log prior density, over 50 draws of data and
    hyperparameters. The prior scatter is positive definite (hmmlearn's scalar
    covars_prior, added to every entry of a full matrix, is of rank one: a
    state on few steps then gets a singular covariance, whose density adds
    min_covar to it and is no longer the one the M-step maximised)."""
    rng = np.random.default_rng(seed)
    full = seed % 2 == 1
    order = int(rng.integers(1, 3))
    X, lengths = _random_data(seed, d=2, order=order, k=2, n_seq=3)
    est = ARGaussianHMM(
        int(rng.integers(2, 4)),
        order=order,
        covariance_type="full" if full else "diag",
        covars_prior=0.05 * np.eye(2) if full else 0.05,
        coef_weight=[0.0, 0.5][(seed // 2) % 2],
        intercept_weight=[0.0, 2.0][(seed // 4) % 2],
        intercept_prior=1.0,
        covars_weight=[1.0, 4.0][(seed // 8) % 2],
        n_iter=25,
        tol=0.0,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, lengths)
    history = np.asarray(est.monitor_.history)
    assert np.all(np.diff(history) >= -1e-9 * np.abs(history[1:]))


# -- recovery ----------------------------------------------------------------------
@pytest.mark.parametrize("order", [1, 2])
def test_recovers_the_dynamics_from_long_data(order):
    d = 2
    coef = np.zeros((2, d, d * order))
    coef[0, :, :d] = [[0.8, 0.1], [-0.2, 0.7]]
    coef[1, :, :d] = [[-0.5, 0.0], [0.3, -0.4]]
    if order == 2:
        coef[0, :, d:] = [[-0.2, 0.0], [0.0, 0.1]]
    intercept = np.array([[1.0, -1.0], [-1.0, 2.0]])
    trans = np.array([[0.95, 0.05], [0.1, 0.9]])
    X, Z = _simulate(0, coef, intercept, 0.3, trans, [2500] * 4)
    est = ARGaussianHMM(
        2, order=order, covariance_type="full", n_iter=200, n_init=3, random_state=0
    ).fit(X, [2500] * 4)
    # The states up to their order: match by the intercepts.
    perm = np.argsort([np.linalg.norm(est.intercept_[0] - b) for b in intercept])
    if perm[0] != 0:
        perm = perm[::-1]
    np.testing.assert_allclose(est.coef_[perm], coef, atol=0.05)
    np.testing.assert_allclose(est.intercept_[perm], intercept, atol=0.1)
    np.testing.assert_allclose(est.covars_[perm[0]], 0.09 * np.eye(d), atol=0.02)
    assert np.mean(perm[est.predict(X, [2500] * 4)] == Z) > 0.97


# -- sampling ----------------------------------------------------------------------
def test_sample_follows_the_dynamics_from_the_history():
    coef = np.array([[[0.9]], [[-0.5]]])
    est = ARGaussianHMM(2, order=1)
    est.startprob_ = np.array([0.5, 0.5])
    est.transmat_ = np.array([[0.9, 0.1], [0.2, 0.8]])
    est.coef_ = coef
    est.intercept_ = np.array([[1.0], [-2.0]])
    est.covars_ = np.array([[0.25], [0.04]])
    X, states = est.sample(20000, random_state=0, history=[[3.0]])
    assert X[0, 0] == 3.0
    resid = X[1:, 0] - coef[states[1:], 0, 0] * X[:-1, 0]
    resid -= est.intercept_[states[1:], 0]
    for j, var in enumerate([0.25, 0.04]):
        r = resid[states[1:] == j]
        assert abs(r.mean()) < 4 * np.sqrt(var / len(r))
        assert abs(r.var() / var - 1) < 0.05
    # The default history is zeros; n_samples within the history gives it.
    assert est.sample(1, random_state=0)[0].tolist() == [[0.0]]


# -- the letters, the start ---------------------------------------------------------
def test_params_and_init_params_letters_and_min_covar():
    X, lengths = _random_data(5, d=2, order=1, k=2, n_seq=3)
    # The start: coefficients 0, covariances the modelled steps' plus min_covar.
    start = ARGaussianHMM(2, order=1, min_covar=0.25, random_state=0)
    start._init(X, lengths)
    Z = lagged_rows(X, np.asarray(lengths), 1)
    x = Z[~np.isnan(Z).any(axis=1), :2]
    np.testing.assert_array_equal(start.coef_, 0.0)
    np.testing.assert_allclose(
        start.covars_[0], np.diag(np.diag(np.cov(x.T))) + 0.25 * np.eye(2)
    )
    # Without 'a' in params the coefficients keep their start; the rest move.
    fixed = ARGaussianHMM(2, order=1, params="stmc", random_state=0).fit(X, lengths)
    np.testing.assert_array_equal(fixed.coef_, 0.0)
    moved = ARGaussianHMM(2, order=1, random_state=0).fit(X, lengths)
    assert np.abs(moved.coef_).max() > 0.1
    # Coefficients set by hand and left out of init_params are EM's start.
    given = np.full((2, 2, 2), 0.1)
    est = ARGaussianHMM(2, order=1, init_params="stmc", params="", n_iter=1)
    est.coef_ = given
    est.fit(X, lengths)
    np.testing.assert_array_equal(est.coef_, given)
    # Without 'm' the intercepts are kept and the coefficients regress x - b
    # (one state: every posterior is 1).
    keep = ARGaussianHMM(1, order=1, params="stac", init_params="", n_iter=1)
    keep.startprob_, keep.transmat_ = np.array([1.0]), np.eye(1)
    keep.coef_, keep.intercept_ = given[:1], np.array([[1.0, -1.0]])
    keep.covars_ = np.ones((1, 2))
    keep.fit(X, lengths)
    np.testing.assert_array_equal(keep.intercept_[0], [1.0, -1.0])
    ref = np.linalg.lstsq(Z[~np.isnan(Z).any(axis=1), 2:], x - [1.0, -1.0], rcond=None)
    np.testing.assert_allclose(keep.coef_[0], ref[0].T, rtol=1e-10)


# -- input -------------------------------------------------------------------------
def test_bad_input_is_a_value_error_naming_it():
    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(ValueError, match="order"):
        ARGaussianHMM(2, order=-1).fit(X)
    with pytest.raises(ValueError, match="lengths"):
        ARGaussianHMM(2, order=3).fit(X, [3, 17])
    est = ARGaussianHMM(2, order=1, random_state=0).fit(X)
    with pytest.raises(ValueError, match="lengths"):
        est.score(X[:1])
    gap = X.copy()
    gap[4] = np.nan
    with pytest.raises(ValueError, match="X has missing values"):
        est.fit(gap)
    with pytest.raises(ValueError, match="X has missing values"):
        est.predict(gap)
    with pytest.raises(ValueError, match="history"):
        est.sample(5, history=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="coef_prior"):
        ARGaussianHMM(2, coef_prior=np.zeros((3, 3))).fit(X)
    with pytest.raises(ValueError, match="covariance_type"):
        ARGaussianHMM(2, covariance_type="tied").fit(X)
    est.coef_ = np.zeros((2, 2, 3))
    with pytest.raises(ValueError, match="coef_"):
        est.score(X)


def test_lengths_and_list_forms_agree_and_do_not_mutate_input():
    X, lengths = _random_data(3, d=2, order=2, k=2, n_seq=4)
    before = X.copy()
    a = ARGaussianHMM(2, order=2, random_state=0, n_iter=5).fit(X, lengths)
    seqs = np.split(X, np.cumsum(lengths)[:-1])
    b = ARGaussianHMM(2, order=2, random_state=0, n_iter=5).fit(seqs)
    np.testing.assert_array_equal(X, before)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12)
    np.testing.assert_allclose(a.score(X, lengths), b.score(seqs), rtol=1e-12)
