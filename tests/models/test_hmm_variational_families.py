"""HiddenMarkovModel(inference="variational") over any conjugate family: the
variational HMMs' answers from the same start, the bound against enumeration
of the paths (KL terms from scipy's distributions), monotonicity, the fixed
point, sequence weights, and what it refuses."""

from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats
from scipy.special import digamma, gammaln, logsumexp

from bayeskit import HiddenMarkovModel
from bayeskit.emissions import DIAG, SPHERICAL, Categorical, Gaussian, Multinomial
from bayeskit.hmm import VariationalCategoricalHMM, VariationalGaussianHMM
from bayeskit.priors import Dirichlet, Gamma, NormalInverseGamma, NormalInverseWishart


def _spd(rng, d, scale):
    a = rng.normal(size=(d, d))
    return scale * (a @ a.T + d * np.eye(d))


def _chain(rng, k, n_seq, n_steps):
    return {
        "startprob_prior": rng.uniform(0.2, 2.0, k),
        "startprob_posterior_": rng.uniform(0.5, 3.0, k) * n_seq / k,
        "transmat_prior": rng.uniform(0.2, 2.0, (k, k)),
        "transmat_posterior_": rng.uniform(0.5, 3.0, (k, k)) * n_steps / k,
    }


def _model(k, family, chain, prior, posterior, **kw):
    """A model continuing from the posteriors given (``init_params=''``)."""
    kw = {"n_iter": 1, "tol": 0.0, "init_params": "", **kw}
    model = HiddenMarkovModel(
        k,
        emission=family,
        emission_prior=prior,
        startprob_prior=chain["startprob_prior"],
        transmat_prior=chain["transmat_prior"],
        inference="variational",
        **kw,
    )
    model.startprob_posterior_ = chain["startprob_posterior_"].copy()
    model.transmat_posterior_ = chain["transmat_posterior_"].copy()
    model.emission_posterior_ = posterior
    return model


def _gaussian_posterior(rng, k, d, n):
    m0, beta0 = rng.normal(size=(k, d)), rng.uniform(0.5, 2.0, k)
    nu0, s0 = d + rng.uniform(0.5, 2, k), np.stack([_spd(rng, d, 0.1)] * k)
    m, beta = rng.normal(size=(k, d)) * 2, rng.uniform(1.0, 5.0, k) * n / k
    nu = d + rng.uniform(1, 5, k) * n / k
    s = np.stack([_spd(rng, d, n / 4) for _ in range(k)])
    prior = NormalInverseWishart.from_normal_wishart(m0, beta0, nu0, s0)
    post = NormalInverseWishart.from_normal_wishart(m, beta, nu, s)
    return prior, post, (m0, beta0, nu0, s0), (m, beta, nu, s)


# -- the variational HMMs' answers from the same start --------------------------------
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("d", [1, 2, 3])
def test_gaussian_equals_variational_gaussian_hmm(d, seed):
    rng = np.random.RandomState(seed)
    k, lengths = 3, [30, 20, 25]
    centres = rng.normal(scale=4, size=(3, d))
    X = centres[rng.randint(3, size=sum(lengths))] + rng.normal(size=(75, d))
    chain = _chain(rng, k, len(lengths), len(X))
    prior, post, (m0, b0, nu0, s0), (m, b, nu, s) = _gaussian_posterior(
        rng, k, d, len(X)
    )
    ours = _model(k, "gaussian", chain, prior, post, n_iter=6).fit(X, lengths)
    theirs = VariationalGaussianHMM(k, n_iter=6, tol=0.0, init_params="")
    for name, value in {
        **{n: v for n, v in chain.items() if n.endswith("_")},
        "startprob_prior_": chain["startprob_prior"],
        "transmat_prior_": chain["transmat_prior"],
        "means_prior_": m0, "beta_prior_": b0, "dof_prior_": nu0,
        "scale_prior_": s0, "means_posterior_": m, "beta_posterior_": b,
        "dof_posterior_": nu, "scale_posterior_": s,
    }.items():  # fmt: skip
        setattr(theirs, name, np.copy(value))
    theirs.fit(X, lengths)
    assert_allclose(ours.lower_bounds_, theirs.lower_bounds_, rtol=1e-10)
    for name in ("startprob_posterior_", "transmat_posterior_", "startprob_"):
        assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-10)
    m, b, nu, s = ours.emission_posterior_.normal_wishart(k, d)
    assert_allclose(m, theirs.means_posterior_, rtol=1e-10, atol=1e-12)
    assert_allclose(b, theirs.beta_posterior_, rtol=1e-10)
    assert_allclose(nu, theirs.dof_posterior_, rtol=1e-10)
    assert_allclose(s, theirs.scale_posterior_, rtol=1e-10)
    assert_allclose(ours.transmat_, theirs.transmat_, rtol=1e-10)
    assert_allclose(ours.means_, theirs.means_, rtol=1e-10, atol=1e-12)
    assert_allclose(ours.covariances_, theirs.covars_, rtol=1e-10)
    assert_allclose(ours.score(X, lengths), theirs.score(X, lengths), rtol=1e-10)


@pytest.mark.parametrize("seed", range(6))
def test_categorical_equals_variational_categorical_hmm(seed):
    rng = np.random.RandomState(seed)
    k, m, lengths = 3, 4, [25, 1, 40, 12]
    X = rng.randint(m, size=(sum(lengths), 1))
    X[:m, 0] = np.arange(m)
    chain = _chain(rng, k, len(lengths), len(X))
    alpha0, alpha = rng.uniform(0.2, 2, (k, m)), rng.uniform(1, 10, (k, m))
    ours = _model(
        k, Categorical([m]), chain, Dirichlet(alpha0), (Dirichlet(alpha),), n_iter=8
    ).fit(X, lengths)
    theirs = VariationalCategoricalHMM(k, n_iter=8, tol=0.0, init_params="")
    theirs.startprob_prior_ = chain["startprob_prior"]
    theirs.transmat_prior_ = chain["transmat_prior"]
    theirs.startprob_posterior_ = chain["startprob_posterior_"]
    theirs.transmat_posterior_ = chain["transmat_posterior_"]
    theirs.emissionprob_prior_, theirs.emissionprob_posterior_ = alpha0, alpha
    theirs.fit(X, lengths)
    assert_allclose(ours.lower_bounds_, theirs.lower_bounds_, rtol=1e-10)
    assert_allclose(
        ours.emission_posterior_[0].concentration,
        theirs.emissionprob_posterior_,
        rtol=1e-10,
    )
    assert_allclose(ours.transmat_posterior_, theirs.transmat_posterior_, rtol=1e-10)
    assert_allclose(
        np.exp(ours.emission_params_.log_prob).T, theirs.emissionprob_, rtol=1e-10
    )
    assert_allclose(ours.score(X, lengths), theirs.score(X, lengths), rtol=1e-10)


# -- the bound against enumeration -----------------------------------------------------
def _enumerated_bound(log_start, log_trans, log_emit):
    """``max_q(Z) E_q[log p(x, Z | theta)] + H(q)`` by enumerating the paths."""
    t_len, k = log_emit.shape
    weights = []
    for path in itertools.product(range(k), repeat=t_len):
        w = log_start[path[0]] + log_emit[0, path[0]]
        for t in range(1, t_len):
            w += log_trans[path[t - 1], path[t]] + log_emit[t, path[t]]
        weights.append(w)
    weights = np.array(weights)
    q = np.exp(weights - logsumexp(weights))
    return float(q @ weights - q @ np.log(q))


def _e_log_dirichlet(a):
    return digamma(a) - digamma(a.sum(axis=-1, keepdims=True))


def _dirichlet_kl(q, p):
    """KL(Dir(q) || Dir(p)) as -H(q) - E_q[log p], with scipy's entropy."""
    log_norm = gammaln(p.sum()) - gammaln(p).sum()
    return -stats.dirichlet(q).entropy() - (
        log_norm + ((p - 1) * _e_log_dirichlet(q)).sum()
    )


def _gamma_kl(a, b, a0, b0):
    """KL(Gamma(a, b) || Gamma(a0, b0)) from scipy's entropy, E[log x]
    integrated numerically and the prior's log density."""
    q = stats.gamma(a, scale=1 / b)
    e_log = q.expect(np.log)
    e_log_p = a0 * np.log(b0) - gammaln(a0) + (a0 - 1) * e_log - b0 * q.mean()
    return -q.entropy() - e_log_p


def _niw_kl(m, beta, nu, s, m0, beta0, nu0, s0):
    """KL of a Normal-Wishart from another: scipy's Wishart entropy and log
    density for the precision, the Gaussian's expected KL for the mean."""
    d = len(m)
    e_prec = nu * np.linalg.inv(s)
    q = stats.wishart(df=nu, scale=np.linalg.inv(s))
    e_log_det = digamma((nu - np.arange(d)) / 2).sum() + d * np.log(2)
    e_log_det -= np.linalg.slogdet(s)[1]
    p = stats.wishart(df=nu0, scale=np.linalg.inv(s0))
    c0 = p.logpdf(np.eye(d)) + 0.5 * np.trace(s0)
    e_log_p = c0 + (nu0 - d - 1) / 2 * e_log_det - 0.5 * np.trace(s0 @ e_prec)
    diff = m - m0
    normal = 0.5 * (
        d * np.log(beta / beta0) + d * beta0 / beta - d + beta0 * diff @ e_prec @ diff
    )
    return normal + (-q.entropy() - e_log_p)


def _case(family, rng, k):
    """``(family, X, prior, posterior, E[log p(x_t | theta_j)] (T, k), KL)``
    of a start drawn for ``family`` on T = 4 steps (the third a gap for the
    families that read numbers), the expectations by hand."""
    if family == "poisson" or family == "exponential":
        d = 2
        a0, b0 = rng.uniform(0.5, 2, d), rng.uniform(0.5, 2, d)
        a, b = rng.uniform(1, 6, (k, d)), rng.uniform(0.5, 3, (k, d))
        if family == "poisson":
            X = rng.poisson(2.0, (4, d)).astype(float)
        else:
            X = rng.exponential(1.0, (4, d))
        X[2] = np.nan
        e_log_lam = np.vectorize(
            lambda a_, b_: stats.gamma(a_, scale=1 / b_).expect(np.log)
        )(a, b)
        e_lam = a / b
        log_emit = np.zeros((4, k))
        for t in (0, 1, 3):
            if family == "poisson":
                log_emit[t] = (
                    X[t] @ e_log_lam.T - e_lam.sum(axis=1) - gammaln(X[t] + 1).sum()
                )
            else:
                log_emit[t] = e_log_lam.sum(axis=1) - X[t] @ e_lam.T
        kl = sum(
            _gamma_kl(a[j, i], b[j, i], a0[i], b0[i])
            for j in range(k)
            for i in range(d)
        )
        return family, X, Gamma(a0, b0), Gamma(a, b), log_emit, kl
    if family == "gaussian":
        d = 2
        X = rng.normal(size=(4, d))
        X[2] = np.nan
        prior, post, p0, p1 = _gaussian_posterior(rng, k, d, 4)
        log_emit = np.zeros((4, k))
        for j in range(k):
            m, beta, nu, s = (v[j] for v in p1)
            w = np.linalg.inv(s)
            e_log_det = (
                digamma((nu - np.arange(d)) / 2).sum()
                + d * np.log(2)
                + np.linalg.slogdet(w)[1]
            )
            for t in (0, 1, 3):
                maha = (X[t] - m) @ (nu * w) @ (X[t] - m)
                log_emit[t, j] = 0.5 * (
                    e_log_det - d * np.log(2 * np.pi) - d / beta - maha
                )
        kl = sum(_niw_kl(*(v[j] for v in p1), *(v[j] for v in p0)) for j in range(k))
        return "gaussian", X, prior, post, log_emit, kl
    if family == "diag":
        d = 2
        X = rng.normal(size=(4, d))
        X[2] = np.nan
        m0, k0 = rng.normal(size=d), rng.uniform(0.5, 2, d)
        a0, b0 = rng.uniform(0.5, 2, d), rng.uniform(0.5, 2, d)
        m, kap = rng.normal(size=(k, d)), rng.uniform(1, 5, (k, d))
        a, b = rng.uniform(1, 4, (k, d)), rng.uniform(0.5, 3, (k, d))
        prior = NormalInverseGamma(m0, k0, 2 * b0, 2 * a0 + 3)
        post = NormalInverseGamma(m, kap, 2 * b, 2 * a + 3)
        e_log_lam = np.vectorize(
            lambda a_, b_: stats.gamma(a_, scale=1 / b_).expect(np.log)
        )(a, b)
        log_emit = np.zeros((4, k))
        for t in (0, 1, 3):
            log_emit[t] = 0.5 * (
                e_log_lam - np.log(2 * np.pi) - 1 / kap - a / b * (X[t] - m) ** 2
            ).sum(axis=1)
        kl = 0.0
        for j in range(k):
            for i in range(d):
                kl += _gamma_kl(a[j, i], b[j, i], a0[i], b0[i])
                # E_lambda KL(N(m, 1/(kap lambda)) || N(m0, 1/(k0 lambda)))
                kl += 0.5 * (
                    np.log(kap[j, i] / k0[i]) + k0[i] / kap[j, i] - 1
                    + k0[i] * a[j, i] / b[j, i] * (m[j, i] - m0[i]) ** 2
                )  # fmt: skip
        return Gaussian(DIAG), X, prior, post, log_emit, kl
    if family == "categorical":
        sizes = [3, 2]
        X = np.column_stack([rng.randint(t, size=4) for t in sizes]).astype(float)
        alphas0 = [rng.uniform(0.3, 2, (k, t)) for t in sizes]
        alphas = [rng.uniform(0.5, 5, (k, t)) for t in sizes]
        log_emit = sum(
            _e_log_dirichlet(alpha)[:, X[:, j].astype(int)].T
            for j, alpha in enumerate(alphas)
        )
        kl = sum(
            _dirichlet_kl(alpha[j], alpha0[j])
            for alpha, alpha0 in zip(alphas, alphas0)
            for j in range(k)
        )
        # one prior for both features: a scalar concentration per state
        alphas0 = [np.broadcast_to(alphas0[0][:, :1], (k, t)) for t in sizes]
        kl = sum(
            _dirichlet_kl(alpha[j], alpha0[j])
            for alpha, alpha0 in zip(alphas, alphas0)
            for j in range(k)
        )
        prior = Dirichlet(alphas0[0][:, :1])
        post = tuple(Dirichlet(alpha) for alpha in alphas)
        return Categorical(sizes), X, prior, post, log_emit, kl
    d = 3
    X = rng.multinomial(5, [0.2, 0.3, 0.5], size=4).astype(float)
    alpha0, alpha = rng.uniform(0.3, 2, (k, d)), rng.uniform(0.5, 5, (k, d))
    coef = gammaln(X.sum(axis=1) + 1) - gammaln(X + 1).sum(axis=1)
    log_emit = X @ _e_log_dirichlet(alpha).T + coef[:, None]
    kl = sum(_dirichlet_kl(alpha[j], alpha0[j]) for j in range(k))
    return Multinomial(d), X, Dirichlet(alpha0), Dirichlet(alpha), log_emit, kl


FAMILIES = ["poisson", "exponential", "gaussian", "categorical", "multinomial"]
FAMILIES += ["diag"]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("family", FAMILIES)
def test_bound_equals_enumeration(family, seed):
    """The bound of a start set by hand on K=2, T=4: the paths enumerated with
    the expected log densities written out, minus KL divergences from
    scipy's entropies."""
    rng = np.random.RandomState(seed)
    k = 2
    family, X, prior, post, log_emit, kl = _case(family, rng, k)
    chain = _chain(rng, k, 1, len(X))
    model = _model(k, family, chain, prior, post).fit(X)
    expected = _enumerated_bound(
        _e_log_dirichlet(chain["startprob_posterior_"]),
        _e_log_dirichlet(chain["transmat_posterior_"]),
        log_emit,
    )
    expected -= _dirichlet_kl(chain["startprob_posterior_"], chain["startprob_prior"])
    for q, p in zip(chain["transmat_posterior_"], chain["transmat_prior"]):
        expected -= _dirichlet_kl(q, p)
    expected -= kl
    assert_allclose(model.lower_bounds_[0], expected, rtol=1e-7)


def _data(family, rng, lengths):
    n = sum(lengths)
    z = rng.randint(3, size=n)
    if family == "poisson":
        return rng.poisson(np.array([1.0, 6.0, 15.0])[z][:, None], (n, 2)), None
    if family == "exponential":
        return rng.exponential(np.array([0.5, 3.0, 9.0])[z][:, None], (n, 2)), None
    if family == "gaussian":
        centres = rng.normal(scale=4, size=(3, 2))
        return centres[z] + rng.normal(size=(n, 2)), None
    if family == "diag":
        centres = rng.normal(scale=4, size=(3, 2))
        return centres[z] + rng.normal(size=(n, 2)), Gaussian(DIAG)
    if family == "categorical":
        return rng.randint(4, size=(n, 2)), Categorical([4, 4])
    return rng.multinomial(6, [0.1, 0.3, 0.6], size=n), Multinomial(3)


@pytest.mark.parametrize("seed", range(50))
def test_bound_never_decreases(seed):
    rng = np.random.RandomState(seed)
    name = FAMILIES[seed % len(FAMILIES)]
    lengths = [15, 1, 20, 9]
    X, family = _data(name, rng, lengths)
    model = HiddenMarkovModel(
        3, emission=family or name, inference="variational", n_iter=30, tol=0.0,
        random_state=seed,
    ).fit(X, lengths)  # fmt: skip
    bounds = np.array(model.lower_bounds_)
    assert len(bounds) > 5
    assert (np.diff(bounds) >= -1e-9 * np.abs(bounds[1:])).all()


@pytest.mark.parametrize("name", FAMILIES)
def test_one_more_step_at_convergence_changes_nothing(name):
    rng = np.random.RandomState(3)
    lengths = [40, 30, 50]
    X, family = _data(name, rng, lengths)
    model = HiddenMarkovModel(
        2, emission=family or name, inference="variational", n_iter=5000,
        tol=1e-11, random_state=0,
    ).fit(X, lengths)  # fmt: skip
    assert model.converged_
    before = [model.startprob_posterior_, model.transmat_posterior_]
    emission = model.emission_params_
    bound = model.lower_bound_
    model.set_params(n_iter=1, init_params="").fit(X, lengths)
    assert abs(model.lower_bound_ - bound) < 1e-9
    assert_allclose(model.startprob_posterior_, before[0], rtol=1e-6, atol=1e-9)
    assert_allclose(model.transmat_posterior_, before[1], rtol=1e-6, atol=1e-9)
    for a, b in zip(vars(model.emission_params_).values(), vars(emission).values()):
        if a is not None:
            assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", FAMILIES)
def test_integer_sequence_weights_are_repeated_sequences(name):
    """From the same start, a sequence of weight 2 is that sequence twice:
    the same bounds and posteriors."""
    rng = np.random.RandomState(1)
    lengths = [12, 7, 9]
    X, family = _data(name, rng, lengths)
    first = HiddenMarkovModel(
        2, emission=family or name, inference="variational", n_iter=1,
        random_state=0,
    ).fit(X, lengths)  # fmt: skip
    parts = np.split(np.asarray(X), np.cumsum(lengths)[:-1])
    repeated = np.concatenate([parts[0], parts[1], parts[1], parts[2]])
    models = []
    for data, lens, weight in (
        (X, lengths, [1, 2, 1]),
        (repeated, [12, 7, 7, 9], None),
    ):
        model = HiddenMarkovModel(
            2, emission=family or name, inference="variational", n_iter=5,
            tol=0.0, init_params="",
        )  # fmt: skip
        for attr in ("startprob_posterior_", "transmat_posterior_"):
            setattr(model, attr, getattr(first, attr).copy())
        model.emission_posterior_ = first.emission_posterior_
        model.emission_prior = first.emission_prior_
        models.append(model.fit(data, lens, sequence_weight=weight))
    weighted, repeated = models
    assert_allclose(weighted.lower_bounds_, repeated.lower_bounds_, rtol=1e-10)
    assert_allclose(
        weighted.transmat_posterior_, repeated.transmat_posterior_, rtol=1e-10
    )
    assert_allclose(
        weighted.startprob_posterior_, repeated.startprob_posterior_, rtol=1e-10
    )


def test_the_point_parameters_are_the_posterior_means():
    rng = np.random.RandomState(0)
    X, _ = _data("poisson", rng, [80])
    model = HiddenMarkovModel(
        2, emission="poisson", inference="variational", random_state=0
    ).fit(X)
    q = model.emission_posterior_
    assert_allclose(model.lambdas_, q.shape / q.rate)
    assert_allclose(
        model.transmat_,
        model.transmat_posterior_ / model.transmat_posterior_.sum(1, keepdims=True),
    )
    # and the inference reads them: score is the EM model's with them set
    em = HiddenMarkovModel(2, emission="poisson").fit(X)
    em.startprob_, em.transmat_ = model.startprob_, model.transmat_
    em.lambdas_ = model.lambdas_
    em._emission_value = model.emission_params_
    assert_allclose(model.score(X), em.score(X), rtol=1e-12)


# -- what it refuses --------------------------------------------------------------
@pytest.mark.parametrize(
    "family, why",
    [
        ("gamma", "no conjugate prior"),
        ("negative_binomial", "no conjugate prior"),
        ("lognormal", "not written"),
        (Gaussian(SPHERICAL), "VariationalGaussianHMM"),
    ],
)
def test_families_without_a_conjugate_posterior_name_inference(family, why):
    X = np.random.RandomState(0).gamma(2.0, size=(40, 2)).round() + 1
    with pytest.raises(ValueError, match=f"inference='variational'.*{why}"):
        HiddenMarkovModel(2, emission=family, inference="variational").fit(X)
    HiddenMarkovModel(2, emission=family, n_iter=2).fit(X)  # EM takes them


def test_bad_input_names_itself():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 2))
    with pytest.raises(ValueError, match="inference"):
        HiddenMarkovModel(2, inference="vb").fit(X)
    with pytest.raises(ValueError, match="emission_prior"):
        HiddenMarkovModel(
            2, emission="poisson", emission_prior=Dirichlet(1.0),
            inference="variational",
        ).fit(rng.poisson(2, (40, 2)))  # fmt: skip
    with pytest.raises(ValueError, match="emission_prior"):
        HiddenMarkovModel(
            2, emission_prior=Gamma(1.0, 1.0), inference="variational"
        ).fit(X)
    with pytest.raises(ValueError, match="states"):
        HiddenMarkovModel(2, inference="variational").fit(X, states=np.r_[0, [-1] * 39])
    Xp = X.copy()
    Xp[3, 0] = np.nan
    with pytest.raises(ValueError, match="X has steps with some"):
        HiddenMarkovModel(2, inference="variational").fit(Xp)
    model = HiddenMarkovModel(2, inference="variational", random_state=0).fit(X)
    model.set_params(init_params="")
    model.transmat_posterior_ = np.ones((3, 3))
    with pytest.raises(ValueError, match="transmat_posterior_"):
        model.fit(X)


def test_em_is_unchanged_by_default():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 2))
    a = HiddenMarkovModel(2, random_state=0).fit(X)
    b = HiddenMarkovModel(2, random_state=0, inference="em").fit(X)
    assert_allclose(a.means_, b.means_)
    assert hasattr(a, "partial_fit") and not hasattr(a, "emission_posterior_")


@pytest.mark.parametrize("seed", range(12))
def test_statistics_of_any_chunking_are_one_iteration(seed):
    """``from_stats`` of the summed ``summarize`` of the sequences cut into
    random chunks is one more iteration of ``fit`` on all of them: the same
    posteriors, and the bound of the posterior they ran under."""
    rng = np.random.RandomState(seed)
    name = FAMILIES[seed % len(FAMILIES)]
    lengths = list(rng.randint(1, 15, size=7))
    X, family = _data(name, rng, lengths)
    weights = rng.randint(1, 4, size=7).astype(float) if seed % 2 else None
    model = HiddenMarkovModel(
        2, emission=family or name, inference="variational", n_iter=3,
        random_state=seed,
    ).fit(X, lengths, sequence_weight=weights)  # fmt: skip
    step = copy.deepcopy(model).set_params(n_iter=1, init_params="")
    step.fit(X, lengths, sequence_weight=weights)
    cuts = np.sort(rng.choice(np.arange(1, 7), size=rng.randint(0, 4), replace=False))
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    parts = []
    for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, 7]):
        rows = slice(bounds[lo], bounds[hi])
        w = None if weights is None else weights[lo:hi]
        parts.append(model.summarize(X[rows], lengths[lo:hi], sequence_weight=w))
    model.from_stats(sum(parts[1:], parts[0]))
    assert_allclose(model.lower_bound_, step.lower_bounds_[0], rtol=1e-10)
    assert_allclose(model.transmat_posterior_, step.transmat_posterior_, rtol=1e-10)
    assert_allclose(
        model.startprob_posterior_, step.startprob_posterior_, rtol=1e-10, atol=1e-12
    )
    for a, b in zip(
        vars(model.emission_params_).values(), vars(step.emission_params_).values()
    ):
        if a is not None:
            assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_from_stats_takes_only_variational_statistics():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 2))
    model = HiddenMarkovModel(2, inference="variational", random_state=0).fit(X)
    em = HiddenMarkovModel(2, random_state=0).fit(X)
    with pytest.raises(TypeError, match="VariationalChainStats"):
        model.from_stats(em.summarize(X))
