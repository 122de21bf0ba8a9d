"""InputOutputHMM: against HiddenMarkovModel with constant covariates,
brute-force enumeration, a generic optimiser for the M-step, monotone EM,
and recovery of covariate-driven switching."""

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import log_softmax, logsumexp
from scipy.stats import norm

from bayeskit import HiddenMarkovModel, InputOutputHMM
from bayeskit.hmm._logistic import (
    SoftmaxRow,
    data_terms,
    softmax_objective,
    update_softmax_row,
    update_softmax_rows,
)


def _data(seed, n=300, k=2, d=1):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(20, 80, size=4)
    lengths[-1] = max(n - lengths[:-1].sum(), 5)
    n = int(lengths.sum())
    U = rng.normal(size=(n, d))
    X = rng.normal(size=(n, 1)) + 2.0 * (rng.random((n, 1)) < 0.5)
    return X, lengths, U


# -- constant covariates: HiddenMarkovModel --------------------------------------
@pytest.mark.parametrize("emission", ["gaussian", "poisson"])
@pytest.mark.parametrize("value", [0.0, 2.5])
@pytest.mark.parametrize("seed", range(4))
def test_constant_covariates_are_the_hmm(seed, value, emission):
    # With u_t = u for every step and no covariate effect at the optimum (the
    # L2 prior puts W at 0: the intercept alone fits the counts), the
    # transition matrix of every step is transmat_ and EM takes
    # HiddenMarkovModel's steps from the same start.
    X, lengths, _ = _data(seed)
    if emission == "poisson":
        X = np.floor(np.abs(X) * 3)
    U = np.full((len(X), 2), value)
    kw = dict(emission=emission, random_state=seed, n_iter=8, tol=0.0)
    io = InputOutputHMM(3, **kw).fit(X, lengths, covariates=U)
    hmm = HiddenMarkovModel(3, **kw).fit(X, lengths)
    np.testing.assert_allclose(io.lower_bounds_, hmm.lower_bounds_, rtol=1e-10)
    np.testing.assert_allclose(io.transmat_, hmm.transmat_, atol=1e-10)
    np.testing.assert_allclose(io.startprob_, hmm.startprob_, atol=1e-10)
    np.testing.assert_allclose(
        io.predict_proba(X, lengths, covariates=U),
        hmm.predict_proba(X, lengths),
        atol=1e-10,
    )
    np.testing.assert_allclose(
        io.score(X, lengths, covariates=U), hmm.score(X, lengths), rtol=1e-10
    )
    np.testing.assert_array_equal(
        io.predict(X, lengths, covariates=U), hmm.predict(X, lengths)
    )
    np.testing.assert_allclose(io.transmat_coef_, 0.0, atol=1e-8)


def test_transition_matrix_of_a_step():
    # P(z_t = j | z_{t-1} = i, u) = A_ij exp(W_ij u) / sum_k A_ik exp(W_ik u).
    X, lengths, U = _data(0)
    model = InputOutputHMM(2, random_state=0, n_iter=3).fit(X, lengths, covariates=U)
    rng = np.random.default_rng(1)
    model.transmat_coef_ = rng.normal(size=model.transmat_coef_.shape)
    u = np.array([[0.7]])
    _, log_trans = model._tables(model._current_params().structure, u, [1])
    expected = model.transmat_ * np.exp(model.transmat_coef_ @ u[0])
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(np.exp(log_trans[0]), expected, rtol=1e-12)


# -- enumeration on tiny models -------------------------------------------------
def _random_model(rng, k, d):
    X, lengths, U = _data(0, d=d)
    model = InputOutputHMM(k, random_state=0, n_iter=1).fit(X, lengths, covariates=U)
    model.startprob_ = rng.dirichlet(np.ones(k))
    model.transmat_ = rng.dirichlet(np.ones(k), size=k)
    model.startprob_coef_ = rng.normal(size=(k, d))
    model.transmat_coef_ = rng.normal(size=(k, k, d))
    return model


def _brute_force(model, X, U, lengths):
    means = model.means_[:, 0]
    sd = np.sqrt(model.covariances_[:, 0, 0])
    k = len(means)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    total, post, best = 0.0, np.zeros((len(X), k)), []
    path = np.zeros(len(X), dtype=int)
    for s in range(len(lengths)):
        a, b = bounds[s], bounds[s + 1]
        paths = np.array(list(itertools.product(range(k), repeat=b - a)))
        log_start = log_softmax(
            np.log(model.startprob_) + model.startprob_coef_ @ U[a], axis=0
        )
        joint = log_start[paths[:, 0]]
        for r in range(b - a):
            t = a + r
            if r:
                logits = np.log(model.transmat_) + model.transmat_coef_ @ U[t]
                trans = log_softmax(logits, axis=1)
                joint = joint + trans[paths[:, r - 1], paths[:, r]]
            if not np.isnan(X[t, 0]):  # a gap (NaN) emits message 1
                joint = joint + norm.logpdf(
                    X[t, 0], means[paths[:, r]], sd[paths[:, r]]
                )
        ll = logsumexp(joint)
        total += ll
        w = np.exp(joint - ll)
        for r in range(b - a):
            np.add.at(post[a + r], paths[:, r], w)
        i = int(np.argmax(joint))
        path[a:b] = paths[i]
        best.append(joint[i])
    return total, post, path, float(np.sum(best))


@pytest.mark.parametrize("seed", range(10))
def test_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    k, d = int(rng.integers(2, 4)), int(rng.integers(1, 3))
    model = _random_model(rng, k, d)
    lengths = rng.integers(1, 6, size=3)
    n = int(lengths.sum())
    X = rng.normal(size=(n, 1)) * 2
    if seed % 2:
        X[rng.integers(n)] = np.nan  # a gap: what is missing is latent
    U = rng.normal(size=(n, d))
    total, post, path, best = _brute_force(model, X, U, lengths)
    assert model.score(X, lengths, covariates=U) == pytest.approx(total, rel=1e-12)
    np.testing.assert_allclose(
        model.predict_proba(X, lengths, covariates=U), post, atol=1e-12
    )
    log_prob, got = model.decode(X, lengths, covariates=U)
    np.testing.assert_array_equal(got, path)
    assert log_prob == pytest.approx(best, rel=1e-12)


# -- the M-step ------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(10))
def test_m_step_reaches_the_optimum_of_a_generic_optimiser(seed):
    rng = np.random.default_rng(seed)
    n, k, d = 200, 3, 2
    inputs = rng.normal(size=(n, d))
    counts = rng.dirichlet(np.ones(k), size=n) * rng.random((n, 1))
    pseudo = rng.random(k) * 2
    penalty = 0.5
    start_row, start_coef = np.log(np.full(k, 1.0 / k)), np.zeros((k, d))
    row, coef = update_softmax_row(
        counts, inputs, start_row, start_coef, pseudo, penalty, True
    )

    def negative(theta):
        c, w = theta[:k], theta[k:].reshape(k, d)
        return -softmax_objective(counts, inputs, c, w, pseudo, penalty)

    ref = minimize(negative, np.zeros(k * (d + 1)), method="BFGS", tol=1e-12)
    ours = softmax_objective(counts, inputs, row, coef, pseudo, penalty)
    assert ours >= -ref.fun - 1e-9
    ref_c = log_softmax(ref.x[:k])
    np.testing.assert_allclose(row, ref_c, atol=1e-5)
    np.testing.assert_allclose(coef, ref.x[k:].reshape(k, d), atol=1e-5)


@pytest.mark.parametrize("seed", range(10))
def test_m_step_of_rows_in_lockstep_over_split_steps_is_each_rows_own(seed):
    """The Dask fit's M-step: every row's Newton steps with the data terms
    summed over any split of the steps (as partitions do) reach what each
    row's in-memory M-step reaches, and from a structural zero too."""
    rng = np.random.default_rng(seed)
    n, k, d = 150, 3, 2
    inputs = rng.normal(size=(n, d))
    counts = [rng.dirichlet(np.ones(k), size=n) * rng.random((n, 1)) for _ in "ab"]
    rows = [
        SoftmaxRow(np.log(rng.dirichlet(np.ones(k))), np.zeros((k, d)), p, 0.3, True)
        for p in (rng.random(k), np.zeros(k))
    ]
    rows[1].log_row[0] = -np.inf  # a transition no covariate allows
    cuts = np.sort(rng.integers(0, n, size=int(rng.integers(0, 5))))

    def evaluate(asks):
        # Every split's terms, added.
        out = []
        for i, point in asks:
            parts = [
                data_terms(c, u, *point)
                for c, u in zip(np.split(counts[i], cuts), np.split(inputs, cuts))
            ]
            f = sum(p[0] for p in parts)
            if point[-1]:
                out.append((f, sum(p[1] for p in parts), sum(p[2] for p in parts)))
            else:
                out.append((f, None, None))
        return out

    got = update_softmax_rows(rows, [c.sum() for c in counts], evaluate)
    for (row, coef), r, c in zip(got, rows, counts):
        ref_row, ref_coef = update_softmax_row(
            c, inputs, r.log_row, r.coef, r.pseudo, r.penalty, True
        )
        np.testing.assert_allclose(row, ref_row, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(coef, ref_coef, rtol=1e-10, atol=1e-10)
    assert got[1][0][0] == -np.inf and not got[1][1][0].any()


@pytest.mark.parametrize("seed", range(50))
def test_penalised_objective_never_decreases(seed):
    rng = np.random.default_rng(seed)
    X, lengths, U = _data(seed, d=int(rng.integers(1, 3)))
    model = InputOutputHMM(
        int(rng.integers(2, 4)),
        random_state=seed,
        n_iter=15,
        tol=0.0,
        transition_alpha=float(rng.choice([0.0, 0.1, 1.0, 10.0])),
        transmat_prior=float(rng.choice([1.0, 2.0])),
    ).fit(X, lengths, covariates=U)
    bounds = np.array(model.lower_bounds_)
    assert np.all(np.diff(bounds) >= -1e-9 * np.abs(bounds[1:]))


# -- recovery of covariate-driven switching ---------------------------------------
def _switching(seed, n_sequences=60, length=50):
    """Sequences whose regime is 1 when the covariate is above 0 (in
    probability: ``P(z_t = 1 | u_t) = sigmoid(6 u_t)``), seen through
    heavily overlapping emissions (unit variances, means 0 and 1): the
    regime is in the covariates, not in the temporal pattern an HMM sees."""
    rng = np.random.default_rng(seed)
    n = n_sequences * length
    u = rng.normal(size=(n, 1))
    z = (rng.random(n) < 1 / (1 + np.exp(-6 * u[:, 0]))).astype(int)
    X = rng.normal(np.array([0.0, 1.0])[z], 1.0)[:, None]
    return X, z, u, np.full(n_sequences, length)


def _accuracy(states, z):
    return max(np.mean(states == z), np.mean(states != z))


@pytest.mark.parametrize("seed", range(3))
def test_recovers_covariate_driven_switching_better_than_an_hmm(seed):
    X, z, U, lengths = _switching(seed)
    cut = int(lengths[:40].sum())
    train, test = slice(0, cut), slice(cut, None)
    io = InputOutputHMM(2, random_state=seed, n_iter=100)
    io.fit(X[train], lengths[:40], covariates=U[train])
    hmm = HiddenMarkovModel(2, random_state=seed, n_iter=100)
    hmm.fit(X[train], lengths[:40])
    acc_io = _accuracy(io.predict(X[test], lengths[40:], covariates=U[test]), z[test])
    acc_hmm = _accuracy(hmm.predict(X[test], lengths[40:]), z[test])
    assert acc_io > acc_hmm + 0.1
    assert acc_io > 0.85


# -- input: covariates and the other methods ------------------------------------
@pytest.mark.parametrize(
    "covariates, message",
    [
        (None, "covariates are required"),
        (np.zeros((10, 1)), "covariates must have shape"),
        (np.full((300, 1), np.nan), "covariates must be finite"),
        (np.zeros((300, 0)), "covariates must have shape"),
        (np.zeros((300, 3)), "covariates have 3 columns"),
    ],
)
def test_bad_covariates_are_value_errors_naming_them(covariates, message):
    X, _lengths, U = _data(0)
    X, U = X[:300], U[:300]
    model = InputOutputHMM(2, random_state=0, n_iter=2)
    if "columns" in message:
        model.fit(X, covariates=U)
        with pytest.raises(ValueError, match=message):
            model.score(X, covariates=covariates)
        return
    with pytest.raises(ValueError, match=message):
        model.fit(X, covariates=covariates)
    model.fit(X, covariates=U)
    for method in ("score", "predict", "predict_proba", "decode", "score_samples"):
        with pytest.raises(ValueError, match=message):
            getattr(model, method)(X, covariates=covariates)
    with pytest.raises(ValueError, match="covariates"):
        model.sample(5, covariates=None)


def test_list_of_sequences_with_a_list_of_covariates():
    X, lengths, U = _data(1)
    Xs, Us = np.split(X, np.cumsum(lengths)[:-1]), np.split(U, np.cumsum(lengths)[:-1])
    a = InputOutputHMM(2, random_state=0, n_iter=5).fit(X, lengths, covariates=U)
    b = InputOutputHMM(2, random_state=0, n_iter=5).fit(Xs, covariates=Us)
    np.testing.assert_allclose(a.transmat_coef_, b.transmat_coef_, rtol=1e-12)
    per_seq = b.predict_proba(Xs, covariates=Us)
    np.testing.assert_allclose(
        np.concatenate(per_seq), a.predict_proba(X, lengths, covariates=U)
    )
    with pytest.raises(ValueError, match="covariates must have one array"):
        b.predict(Xs, covariates=Us[:-1])


def test_summarize_and_from_stats_are_one_em_step():
    X, lengths, U = _data(2)
    model = InputOutputHMM(2, random_state=0, n_iter=3, tol=0.0)
    model.fit(X, lengths, covariates=U)
    cut = int(lengths[:2].sum())
    stats = model.summarize(X[:cut], lengths[:2], covariates=U[:cut]) + (
        model.summarize(X[cut:], lengths[2:], covariates=U[cut:])
    )
    stepped = InputOutputHMM(2, random_state=0, n_iter=4, tol=0.0)
    stepped.fit(X, lengths, covariates=U)
    model.from_stats(stats)
    np.testing.assert_allclose(model.transmat_coef_, stepped.transmat_coef_, atol=1e-9)
    np.testing.assert_allclose(model.transmat_, stepped.transmat_, atol=1e-9)
    np.testing.assert_allclose(model.means_, stepped.means_, atol=1e-9)


def test_sample_follows_the_covariates():
    # Transitions that go to state 1 when u > 0 and to state 0 otherwise.
    X, _lengths, U = _data(3)
    model = InputOutputHMM(2, random_state=0, n_iter=1).fit(X, covariates=U)
    model.startprob_ = np.array([0.5, 0.5])
    model.transmat_ = np.full((2, 2), 0.5)
    model.startprob_coef_ = np.array([[-20.0], [20.0]])
    model.transmat_coef_ = np.array([[[-20.0], [20.0]], [[-20.0], [20.0]]])
    u = np.where(np.arange(400) % 50 < 25, 1.0, -1.0)[:, None]
    _, states = model.sample(400, random_state=0, covariates=u)
    np.testing.assert_array_equal(states, (u[:, 0] > 0).astype(int))
    with pytest.raises(ValueError, match="covariates must have shape"):
        model.sample(10, covariates=u)


def test_transition_alpha_shrinks_the_coefficients():
    X, _z, U, lengths = _switching(0, n_sequences=30)
    norms = []
    for alpha in (0.0, 10.0, 1000.0):
        model = InputOutputHMM(2, random_state=0, n_iter=30, transition_alpha=alpha)
        model.fit(X, lengths, covariates=U)
        norms.append(np.linalg.norm(model.transmat_coef_))
    assert norms[0] > norms[1] > norms[2]


def test_transmat_prior_below_one_is_refused():
    X, _lengths, U = _data(0)
    with pytest.raises(ValueError, match="transmat_prior"):
        InputOutputHMM(2, transmat_prior=0.5).fit(X, covariates=U)


def test_params_letters_keep_what_is_left_out():
    X, lengths, U = _data(4)
    model = InputOutputHMM(2, random_state=0, n_iter=5, params="e")
    model.fit(X, lengths, covariates=U)
    np.testing.assert_array_equal(model.transmat_coef_, 0.0)
    np.testing.assert_array_equal(model.startprob_coef_, 0.0)


def test_covariates_are_routed_metadata_in_a_pipeline():
    from sklearn import config_context
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    X, _lengths, U = _data(5)
    X = np.hstack([X, X**2])
    with config_context(enable_metadata_routing=True):
        est = InputOutputHMM(2, random_state=0, n_iter=5)
        est.set_fit_request(covariates=True).set_predict_proba_request(covariates=True)
        pipe = Pipeline([("scale", StandardScaler()), ("hmm", est)])
        proba = pipe.fit(X, covariates=U).predict_proba(X, covariates=U)
    scaled = StandardScaler().fit_transform(X)
    direct = InputOutputHMM(2, random_state=0, n_iter=5).fit(scaled, covariates=U)
    np.testing.assert_allclose(proba, direct.predict_proba(scaled, covariates=U))


def test_transmat_prior_pulls_the_table_at_zero_toward_uniform():
    X, lengths, U = _data(6)
    spread = []
    for prior in (1.0, 1e4):
        model = InputOutputHMM(
            2, random_state=0, n_iter=10, transmat_prior=prior, transition_alpha=1e6
        )
        model.fit(X, lengths, covariates=U)
        spread.append(np.abs(model.transmat_ - 0.5).max())
    assert spread[1] < 0.01 < spread[0]
