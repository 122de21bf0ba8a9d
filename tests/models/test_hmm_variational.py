"""VariationalGaussianHMM and VariationalCategoricalHMM: hmmlearn's answers
from the same start, the bound against enumeration, monotonicity, the fixed
point and bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats
from scipy.special import digamma, gammaln, logsumexp

from bayeskit.hmm import VariationalCategoricalHMM, VariationalGaussianHMM

CHAIN = ["startprob_prior_", "startprob_posterior_", "transmat_prior_"]
CHAIN += ["transmat_posterior_"]
GAUSS = ["means_prior_", "means_posterior_", "beta_prior_", "beta_posterior_"]
GAUSS += ["dof_prior_", "dof_posterior_", "scale_prior_", "scale_posterior_"]


def _chain_start(rng, k, n_seq, n_steps):
    return {
        "startprob_prior_": rng.uniform(0.2, 2.0, k),
        "startprob_posterior_": rng.uniform(0.5, 3.0, k) * n_seq / k,
        "transmat_prior_": rng.uniform(0.2, 2.0, (k, k)),
        "transmat_posterior_": rng.uniform(0.5, 3.0, (k, k)) * n_steps / k,
    }


def _gaussian_start(rng, k, d, ctype, n):
    def spd(scale):
        a = rng.normal(size=(d, d))
        return scale * (a @ a.T + d * np.eye(d))

    start = {
        "means_prior_": rng.normal(size=(k, d)),
        "means_posterior_": rng.normal(size=(k, d)) * 2,
        "beta_prior_": rng.uniform(0.5, 2.0, k),
        "beta_posterior_": rng.uniform(1.0, 5.0, k) * n / k,
    }
    if ctype == "tied":
        start["dof_prior_"] = float(d + rng.uniform(0.5, 2))
        start["dof_posterior_"] = float(n + d)
        start["scale_prior_"] = spd(0.1)
        start["scale_posterior_"] = spd(n / 4)
    else:
        start["dof_prior_"] = d + rng.uniform(0.5, 2, k)
        start["dof_posterior_"] = d + rng.uniform(1, 5, k) * n / k
        if ctype == "full":
            start["scale_prior_"] = np.stack([spd(0.1) for _ in range(k)])
            start["scale_posterior_"] = np.stack([spd(n / 4) for _ in range(k)])
        elif ctype == "diag":
            start["scale_prior_"] = rng.uniform(0.1, 1, (k, d))
            start["scale_posterior_"] = rng.uniform(1, 3, (k, d)) * n / k
        else:
            start["scale_prior_"] = rng.uniform(0.1, 1, k)
            start["scale_posterior_"] = rng.uniform(1, 3, k) * n / k
    return start


def _set(model, values):
    for name, value in values.items():
        setattr(model, name, np.copy(value) if np.ndim(value) else value)
    return model


def _gaussian_data(rng, d, lengths):
    centres = rng.normal(scale=4, size=(3, d))
    z = rng.randint(3, size=sum(lengths))
    return centres[z] + rng.normal(size=(len(z), d))


# -- hmmlearn's answers from the same start -------------------------------------------
@pytest.mark.parity
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
    "ctype, d",
    [("full", 1), ("full", 3), ("tied", 1), ("tied", 2), ("diag", 1), ("spherical", 1)],
)
def test_gaussian_equals_hmmlearn_from_the_same_start(ctype, d, seed):
    vhmm = pytest.importorskip("hmmlearn.vhmm")
    rng = np.random.RandomState(seed)
    lengths = [30, 20, 25]
    X = _gaussian_data(rng, d, lengths)
    start = {
        **_chain_start(rng, 3, len(lengths), len(X)),
        **_gaussian_start(rng, 3, d, ctype, len(X)),
    }
    kw = dict(covariance_type=ctype, n_iter=6, tol=0.0, init_params="")
    theirs = _set(vhmm.VariationalGaussianHMM(3, random_state=0, **kw), start)
    ours = _set(VariationalGaussianHMM(3, **kw), start)
    theirs.fit(X, lengths)
    ours.fit(X, lengths)
    # hmmlearn's bound drops -n d / 2 log(2 pi) (see the class docstring).
    constant = len(X) * d / 2 * np.log(2 * np.pi)
    assert_allclose(
        np.array(ours.monitor_.history),
        np.array(theirs.monitor_.history) - constant,
        rtol=1e-10,
    )
    assert_allclose(ours.lower_bounds_, list(ours.monitor_.history), rtol=0)
    for name in CHAIN + GAUSS:
        assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-10)
    for name in ("startprob_", "transmat_", "means_", "covars_"):
        assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-10)
    assert_allclose(ours.score(X, lengths), theirs.score(X, lengths), rtol=1e-10)


@pytest.mark.parity
@pytest.mark.parametrize("seed", range(6))
def test_categorical_equals_hmmlearn_from_the_same_start(seed):
    vhmm = pytest.importorskip("hmmlearn.vhmm")
    rng = np.random.RandomState(seed)
    k, m = 3, 4
    lengths = [25, 1, 40, 12]
    X = rng.randint(m, size=(sum(lengths), 1))
    X[:m, 0] = np.arange(m)  # every symbol seen
    start = {
        **_chain_start(rng, k, len(lengths), len(X)),
        "emissionprob_prior_": rng.uniform(0.2, 2, (k, m)),
        "emissionprob_posterior_": rng.uniform(1, 10, (k, m)),
    }
    theirs = _set(
        vhmm.VariationalCategoricalHMM(k, n_iter=8, tol=0.0, init_params=""), start
    )
    ours = _set(VariationalCategoricalHMM(k, n_iter=8, tol=0.0, init_params=""), start)
    theirs.fit(X, lengths)
    ours.fit(X, lengths)
    assert_allclose(ours.monitor_.history, theirs.monitor_.history, rtol=1e-10)
    names = [*CHAIN, "emissionprob_prior_", "emissionprob_posterior_"]
    for name in [*names, "startprob_", "transmat_", "emissionprob_"]:
        assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-10)
    assert_allclose(ours.score(X, lengths), theirs.score(X, lengths), rtol=1e-10)


@pytest.mark.parity
@pytest.mark.parametrize("seed", [0, 7])
def test_hmmlearns_start_is_drawn_as_hmmlearn_draws_it(seed):
    """With ``init_params`` every letter, both libraries draw the same start
    from the same seed (hmmlearn's draws, its k-means)."""
    vhmm = pytest.importorskip("hmmlearn.vhmm")
    rng = np.random.RandomState(seed)
    lengths = [40, 40]
    X = _gaussian_data(rng, 2, lengths)
    kw = dict(n_iter=3, tol=0.0, random_state=seed)
    theirs = vhmm.VariationalGaussianHMM(3, **kw).fit(X, lengths)
    ours = VariationalGaussianHMM(3, **kw).fit(X, lengths)
    for name in CHAIN + GAUSS:
        assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-9)
    Xc = rng.randint(3, size=(80, 1))
    theirs = vhmm.VariationalCategoricalHMM(3, **kw).fit(Xc, lengths)
    ours = VariationalCategoricalHMM(3, **kw).fit(Xc, lengths)
    assert_allclose(ours.emissionprob_posterior_, theirs.emissionprob_posterior_)
    assert_allclose(ours.monitor_.history, theirs.monitor_.history, rtol=1e-10)


# -- the bound against enumeration ----------------------------------------------------
def _dirichlet_kl(q, p):
    """KL(Dir(q) || Dir(p)) as -H(q) - E_q[log p], with scipy's entropy."""
    e_log = digamma(q) - digamma(q.sum())
    log_norm = gammaln(p.sum()) - gammaln(p).sum()
    return -stats.dirichlet(q).entropy() - (log_norm + ((p - 1) * e_log).sum())


def _enumerated_bound(log_start, log_trans, log_emit):
    """``max_q(Z) E_q[log p(x, Z | theta)] + H(q)`` by enumerating the paths:
    ``sum_z q(z) w(z) + H(q)`` with ``q`` the softmax of the path weights."""
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


@pytest.mark.parametrize("seed", range(10))
def test_categorical_bound_equals_enumeration(seed):
    rng = np.random.RandomState(seed)
    k, m = 2, 3
    X = rng.randint(m, size=(3, 1))
    start = {
        **_chain_start(rng, k, 1, 3),
        "emissionprob_prior_": rng.uniform(0.2, 2, (k, m)),
        "emissionprob_posterior_": rng.uniform(0.5, 4, (k, m)),
    }
    model = _set(
        VariationalCategoricalHMM(k, n_iter=1, init_params="", n_features=m), start
    )
    model.fit(X)

    def e_log(a):
        return digamma(a) - digamma(a.sum(axis=-1, keepdims=True))

    expected = _enumerated_bound(
        e_log(start["startprob_posterior_"]),
        e_log(start["transmat_posterior_"]),
        e_log(start["emissionprob_posterior_"])[:, X[:, 0]].T,
    )
    expected -= _dirichlet_kl(start["startprob_posterior_"], start["startprob_prior_"])
    for name in ("transmat", "emissionprob"):
        for q, p in zip(start[f"{name}_posterior_"], start[f"{name}_prior_"]):
            expected -= _dirichlet_kl(q, p)
    assert_allclose(model.monitor_.history[0], expected, rtol=1e-12)


def _expected_log_normal(x, m, beta, nu, scale, ctype):
    """``E[log N(x | mu, Lambda)]``: for 'full' with the Wishart's
    ``E[log|Lambda|]`` (Bishop 2006, eq. B.81), for 'diag' and 'spherical'
    with ``E[log lambda]`` integrated numerically under scipy's Gamma."""
    d = len(x)
    if ctype == "full":
        w = np.linalg.inv(scale)
        e_log_det = (
            digamma((nu - np.arange(d)) / 2).sum()
            + d * np.log(2)
            + np.linalg.slogdet(w)[1]
        )
        maha = (x - m) @ (nu * w) @ (x - m)
    elif ctype == "diag":
        e_log_det = sum(stats.gamma(nu / 2, scale=2 / s).expect(np.log) for s in scale)
        maha = np.sum((x - m) ** 2 * nu / scale)
    else:
        e_log_det = d * stats.gamma(nu / 2, scale=2 / scale).expect(np.log)
        maha = np.sum((x - m) ** 2) * nu / scale
    return 0.5 * (e_log_det - d * np.log(2 * np.pi) - d / beta - maha)


def _normal_precision_kl(m, beta, nu, scale, m0, beta0, nu0, scale0, ctype, d):
    """KL of one state's Normal-Wishart (Normal-Gamma) posterior from its
    prior: scipy's entropy and log density for the precision, the Gaussian's
    expected KL for the mean."""
    if ctype == "full":
        e_prec = nu * np.linalg.inv(scale)
        q = stats.wishart(df=nu, scale=np.linalg.inv(scale))
        # E_q[log p0(Lambda)] in closed form from scipy's pieces
        e_log_det = digamma((nu - np.arange(d)) / 2).sum() + d * np.log(2)
        e_log_det -= np.linalg.slogdet(scale)[1]
        p = stats.wishart(df=nu0, scale=np.linalg.inv(scale0))
        # log p0(Lambda) = c0 + (nu0 - d - 1) / 2 log|Lambda| - tr(B0 Lambda) / 2,
        # c0 read from scipy's density at the identity
        c0 = p.logpdf(np.eye(d)) + 0.5 * np.trace(scale0)
        e_log_p = c0 + (nu0 - d - 1) / 2 * e_log_det - 0.5 * np.trace(scale0 @ e_prec)
        precision = -q.entropy() - e_log_p
    else:
        scales = np.atleast_1d(scale)
        scales0 = np.atleast_1d(scale0)
        precision = 0.0
        for s, s0 in zip(scales, scales0):
            q = stats.gamma(nu / 2, scale=2 / s)
            e_log = q.expect(np.log)
            e_log_p = (
                nu0 / 2 * np.log(s0 / 2)
                - gammaln(nu0 / 2)
                + (nu0 / 2 - 1) * e_log
                - s0 / 2 * q.mean()
            )
            precision += -q.entropy() - e_log_p
        e_prec = np.diag(np.broadcast_to(nu / scale, (d,)))
    diff = m - m0
    normal = 0.5 * (
        d * np.log(beta / beta0) + d * beta0 / beta - d + beta0 * diff @ e_prec @ diff
    )
    return normal + precision


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("ctype, d", [("full", 2), ("diag", 2), ("spherical", 3)])
def test_gaussian_bound_equals_enumeration(ctype, d, seed):
    """The bound of a start set by hand on K=2, T=3: enumeration of the paths
    with the expected log densities, minus the KL divergences, both from
    scipy's distributions (for 'diag' and 'spherical' with more than one
    feature this is where hmmlearn's bound differs)."""
    rng = np.random.RandomState(seed)
    k = 2
    X = rng.normal(size=(3, d))
    start = {**_chain_start(rng, k, 1, 3), **_gaussian_start(rng, k, d, ctype, 3)}
    model = _set(
        VariationalGaussianHMM(k, covariance_type=ctype, n_iter=1, init_params=""),
        start,
    )
    model.fit(X)

    def e_log(a):
        return digamma(a) - digamma(a.sum(axis=-1, keepdims=True))

    post = {name: start[name] for name in GAUSS}
    log_emit = np.array(
        [
            [
                _expected_log_normal(
                    x,
                    post["means_posterior_"][j],
                    post["beta_posterior_"][j],
                    post["dof_posterior_"][j],
                    post["scale_posterior_"][j],
                    ctype,
                )
                for j in range(k)
            ]
            for x in X
        ]
    )
    expected = _enumerated_bound(
        e_log(start["startprob_posterior_"]),
        e_log(start["transmat_posterior_"]),
        log_emit,
    )
    expected -= _dirichlet_kl(start["startprob_posterior_"], start["startprob_prior_"])
    for q, p in zip(start["transmat_posterior_"], start["transmat_prior_"]):
        expected -= _dirichlet_kl(q, p)
    for j in range(k):
        expected -= _normal_precision_kl(
            post["means_posterior_"][j],
            post["beta_posterior_"][j],
            post["dof_posterior_"][j],
            post["scale_posterior_"][j],
            post["means_prior_"][j],
            post["beta_prior_"][j],
            post["dof_prior_"][j],
            post["scale_prior_"][j],
            ctype,
            d,
        )
    assert_allclose(model.monitor_.history[0], expected, rtol=1e-7)


# -- monotone, and a fixed point ------------------------------------------------------
@pytest.mark.parametrize("seed", range(50))
def test_bound_never_decreases(seed):
    rng = np.random.RandomState(seed)
    lengths = [15, 1, 20, 9]
    ctype = ["full", "tied", "diag", "spherical"][seed % 4]
    d = 1 + seed % 3
    X = _gaussian_data(rng, d, lengths)
    model = VariationalGaussianHMM(
        3, covariance_type=ctype, n_iter=25, tol=0.0, random_state=seed
    ).fit(X, lengths)
    bounds = np.array(model.lower_bounds_)
    assert (np.diff(bounds) >= -1e-9 * np.abs(bounds[1:])).all()
    Xc = rng.randint(4, size=(sum(lengths), 1))
    model = VariationalCategoricalHMM(3, n_iter=25, tol=0.0, random_state=seed)
    bounds = np.array(model.fit(Xc, lengths).lower_bounds_)
    assert (np.diff(bounds) >= -1e-9 * np.abs(bounds[1:])).all()


@pytest.mark.parametrize("ctype", ["full", "tied", "diag", "spherical", None])
def test_one_more_step_at_convergence_changes_nothing(ctype):
    rng = np.random.RandomState(3)
    lengths = [40, 30, 50]
    if ctype is None:
        X = rng.randint(3, size=(sum(lengths), 1))
        model = VariationalCategoricalHMM(2, n_iter=5000, tol=1e-11, random_state=0)
        names = [*CHAIN, "emissionprob_posterior_"]
    else:
        X = _gaussian_data(rng, 2, lengths)
        model = VariationalGaussianHMM(
            3, covariance_type=ctype, n_iter=5000, tol=1e-11, random_state=0
        )
        names = CHAIN + GAUSS
    model.fit(X, lengths)
    assert model.converged_
    before = {name: np.copy(getattr(model, name)) for name in names}
    bound = model.lower_bound_
    model.set_params(n_iter=1, init_params="").fit(X, lengths)
    assert abs(model.lower_bound_ - bound) < 1e-9
    for name in names:
        assert_allclose(getattr(model, name), before[name], rtol=1e-5, atol=1e-9)


# -- point parameters and bad input ---------------------------------------------------
def test_point_parameters_are_the_posterior_means():
    rng = np.random.RandomState(0)
    X = _gaussian_data(rng, 2, [60])
    model = VariationalGaussianHMM(2, covariance_type="diag", random_state=0).fit(X)
    assert_allclose(
        model.startprob_, model.startprob_posterior_ / model.startprob_posterior_.sum()
    )
    assert_allclose(model.transmat_.sum(axis=1), 1.0)
    assert_allclose(model.means_, model.means_posterior_)
    assert_allclose(
        np.diagonal(model.covars_, axis1=1, axis2=2),
        model.scale_posterior_ / model.dof_posterior_[:, None],
    )


@pytest.mark.parametrize(
    "params, match",
    [
        ({"startprob_prior": 0.0}, "startprob_prior"),
        ({"transmat_prior": -1.0}, "transmat_prior"),
        ({"beta_prior": 0.0}, "beta_prior"),
        ({"dof_prior": 0.5}, "dof_prior"),  # n_features - 1 = 1
        ({"scale_prior": -np.eye(2)}, "scale_prior"),
        ({"means_prior": np.zeros((3, 2))}, "means_prior"),
        ({"covariance_type": "diag", "dof_prior": 0.0}, "dof_prior"),
        ({"covariance_type": "diag", "scale_prior": 0.0}, "scale_prior"),
    ],
)
def test_bad_gaussian_hyperparameters_name_themselves(params, match):
    X = _gaussian_data(np.random.RandomState(0), 2, [40])
    with pytest.raises(ValueError, match=match):
        VariationalGaussianHMM(2, random_state=0, **params).fit(X)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"startprob_prior": 0.0}, "startprob_prior"),
        ({"transmat_prior": [[1, 1], [1, 0]]}, "transmat_prior"),
        ({"emissionprob_prior": 0.0}, "emissionprob_prior"),
        ({"emissionprob_prior": -2.0}, "emissionprob_prior"),
    ],
)
def test_bad_categorical_hyperparameters_name_themselves(params, match):
    X = np.random.RandomState(0).randint(3, size=(40, 1))
    with pytest.raises(ValueError, match=match):
        VariationalCategoricalHMM(2, random_state=0, **params).fit(X)


def test_attributes_set_by_hand_are_checked():
    X = _gaussian_data(np.random.RandomState(0), 1, [40])
    model = VariationalGaussianHMM(2, init_params="stm", random_state=0)
    model.dof_prior_ = np.array([0.5, -1.0])
    model.dof_posterior_ = np.array([3.0, 3.0])
    model.scale_prior_ = np.ones((2, 1, 1))
    model.scale_posterior_ = np.ones((2, 1, 1))
    with pytest.raises(ValueError, match="dof_prior_"):
        model.fit(X)


def test_a_start_too_small_for_a_wishart_says_so():
    rng = np.random.RandomState(0)
    with pytest.raises(ValueError, match="n_samples = 1"):
        VariationalGaussianHMM(1).fit(rng.normal(size=(1, 3)))
    # Two clusters of two steps in 5 dimensions: dof_posterior_ (the cluster
    # sizes) would not exceed n_features - 1.
    X = np.repeat(rng.normal(scale=10, size=(2, 5)), 2, axis=0)
    X = X + 0.01 * rng.normal(size=X.shape)
    with pytest.raises(ValueError, match="dof_posterior_"):
        VariationalGaussianHMM(2, random_state=0).fit(X)


@pytest.mark.parametrize("letters", ["st", "t", "e", ""])
def test_params_leaves_the_other_posteriors_as_they_were(letters):
    rng = np.random.RandomState(1)
    X = rng.randint(3, size=(60, 1))
    model = VariationalCategoricalHMM(2, n_iter=3, random_state=0).fit(X)
    before = {n: np.copy(getattr(model, n)) for n in model._vb_names()}
    model.set_params(params=letters)
    model.set_params(init_params="").fit(X)
    for letter, names in model._vb_groups.items():
        for name in names:
            same = np.array_equal(getattr(model, name), before[name])
            assert same == (letter not in model.params or name.endswith("prior_"))
