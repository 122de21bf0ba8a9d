"""The Normal-inverse-Wishart prior: its mode is hmmlearn's and scikit-learn's
M-step, the conjugate posterior mode of Murphy (2012), and maximum likelihood
at zero strength; its log density is the one the mode maximises."""

import warnings
from itertools import pairwise

import numpy as np
import pytest
from scipy.stats import invwishart, multivariate_normal

from bayeskit.emissions import DIAG, FULL, SPHERICAL, TIED, Gaussian
from bayeskit.priors import NormalInverseWishart

STRUCTURES = [FULL, TIED, DIAG, SPHERICAL]
NAMES = [s.name for s in STRUCTURES]


def dense(structure, covariances, k, d):
    return np.stack([structure.dense(covariances, j, d) for j in range(k)])


def mixture_data(rng, n=240, d=3, k=3):
    centres = rng.normal(scale=3.0, size=(k, d))
    A = np.eye(d) + 0.4 * rng.normal(size=(d, d))
    X = centres[rng.integers(0, k, n)] + rng.normal(size=(n, d)) @ A
    return X


def posterior(X, weights, means, covs):
    """Responsibilities of a Gaussian mixture, from scipy's densities."""
    log = np.column_stack(
        [
            np.log(w) + multivariate_normal(m, c).logpdf(X)
            for w, m, c in zip(weights, means, covs)
        ]
    )
    log -= log.max(axis=1, keepdims=True)
    p = np.exp(log)
    return p / p.sum(axis=1, keepdims=True)


def start(rng, structure, k, d):
    """Initial parameters in the structure's own shape, and as dense matrices."""
    mats = []
    for _ in range(k):
        B = rng.normal(size=(d, d))
        mats.append(B @ B.T / d + np.eye(d))
    mats = np.stack(mats)
    own = {
        "full": mats,
        "tied": mats[0],
        "diag": np.diagonal(mats, axis1=1, axis2=2).copy(),
        "spherical": np.diagonal(mats, axis1=1, axis2=2).mean(axis=1),
    }[structure.name]
    return own, dense(structure, own, k, d)


@pytest.mark.parity
@pytest.mark.parametrize("structure", STRUCTURES, ids=NAMES)
@pytest.mark.parametrize("hmmlearn_defaults", [True, False], ids=["default", "strong"])
def test_mode_is_hmmlearns_m_step(structure, hmmlearn_defaults, rng):
    """One Baum-Welch step of hmmlearn's GaussianHMM from identical parameters:
    the mode of from_hmmlearn(...) given the Gaussian statistics of its
    posteriors is its new means and covariances."""
    hmm = pytest.importorskip("hmmlearn.hmm")
    k, d = 3, 3
    X = mixture_data(rng, d=d, k=k)
    if hmmlearn_defaults:
        priors = {}
    else:
        if structure.block_size(d) == 1:
            covars_prior = rng.uniform(0.5, 2.0, size=(k, d))
            covars_weight = 3.5
        else:
            B = rng.normal(size=(d, d))
            covars_prior = B @ B.T + np.eye(d)
            if structure is FULL:
                covars_prior = np.stack([covars_prior * (j + 1) for j in range(k)])
            covars_weight = d + 4.0
        priors = {
            "means_prior": rng.normal(size=(k, d)),
            "means_weight": 2.5,
            "covars_prior": covars_prior,
            "covars_weight": covars_weight,
        }
    model = hmm.GaussianHMM(
        k,
        covariance_type=structure.name,
        n_iter=1,
        init_params="",
        params="stmc",
        **priors,
    )
    own, _ = start(rng, structure, k, d)
    model.startprob_ = np.full(k, 1.0 / k)
    model.transmat_ = np.full((k, k), 0.1) + 0.7 * np.eye(k)
    model.means_ = rng.normal(scale=3.0, size=(k, d))
    model.covars_ = own
    post = model.predict_proba(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X)

    prior = NormalInverseWishart.from_hmmlearn(
        structure,
        d,
        **{
            "means_prior": model.means_prior,
            "means_weight": model.means_weight,
            "covars_prior": model.covars_prior,
            "covars_weight": model.covars_weight,
        },
    ).check(structure, k, d)
    stats = Gaussian(structure).stats(X, post)
    means, covs = prior.map(structure, stats)
    np.testing.assert_allclose(means, model.means_, rtol=1e-10)
    if structure is SPHERICAL:
        # hmmlearn keeps one variance per state, repeated for every feature.
        theirs = np.asarray(model._covars_).reshape(k, -1)
        np.testing.assert_allclose(theirs, theirs[:, :1] * np.ones_like(theirs))
        np.testing.assert_allclose(covs, theirs[:, 0], rtol=1e-10)
    else:
        np.testing.assert_allclose(
            dense(structure, covs, k, d), model.covars_, rtol=1e-10, atol=1e-12
        )


@pytest.mark.parity
@pytest.mark.parametrize("structure", STRUCTURES, ids=NAMES)
def test_mode_is_sklearns_gaussian_mixture_m_step(structure, rng):
    """scikit-learn's M-step with reg_covar is the flat prior's mode plus the
    ridge: NormalInverseWishart(reg=reg_covar)."""
    skm = pytest.importorskip("sklearn.mixture")
    k, d, reg = 3, 3, 1e-2
    X = mixture_data(rng, d=d, k=k)
    own, mats = start(rng, structure, k, d)
    weights = np.array([0.2, 0.3, 0.5])
    means = rng.normal(scale=3.0, size=(k, d))
    precisions = structure.precision(structure.precision_cholesky(own))
    sk = skm.GaussianMixture(
        k,
        covariance_type=structure.name,
        reg_covar=reg,
        max_iter=1,
        weights_init=weights,
        means_init=means,
        precisions_init=precisions,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk.fit(X)
    resp = posterior(X, weights, means, mats)
    stats = Gaussian(structure).stats(X, resp)
    got_means, got_covs = NormalInverseWishart(reg=reg).map(structure, stats)
    np.testing.assert_allclose(got_means, sk.means_, rtol=1e-10)
    np.testing.assert_allclose(got_covs, sk.covariances_, rtol=1e-10)
    np.testing.assert_allclose(
        stats.state_weight() / stats.state_weight().sum(), sk.weights_, rtol=1e-10
    )


@pytest.mark.parametrize("structure", STRUCTURES, ids=NAMES)
def test_zero_strength_is_maximum_likelihood_exactly(structure, rng):
    X = mixture_data(rng) + 1e6
    resp = rng.dirichlet(np.ones(3), size=len(X))
    stats = Gaussian(structure).stats(X, resp)
    prior = NormalInverseWishart()
    assert prior.is_flat
    means, covs = prior.map(structure, stats)
    np.testing.assert_array_equal(means, stats.mean)
    w, S, d = stats.weight, stats.scatter, X.shape[1]
    expected = {
        "full": S / w[:, None, None],
        "tied": S.sum(axis=0) / w.sum(),
        "diag": S / w,
        "spherical": S / d / w,
    }[structure.name]
    np.testing.assert_array_equal(covs, expected)
    # The keyword form of the Gaussian family agrees, and the flat prior's
    # log density is zero.
    params = Gaussian(structure).map_params(stats, prior)
    np.testing.assert_array_equal(params.covariances, expected)
    assert prior.log_density(structure, means, params.precisions_cholesky) == 0.0


def test_conjugate_mode_is_murphys_closed_form(rng):
    """Murphy (2012), eqs. 4.209-4.215: the posterior NIW(m_N, kappa_N, nu_N,
    S_N) and its mode (m_N, S_N / (nu_N + d + 2))."""
    d, n = 3, 40
    X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) + 5.0
    m0, kappa0, nu0 = rng.normal(size=d), 2.0, d + 1.5
    B = rng.normal(size=(d, d))
    S0 = B @ B.T + np.eye(d)
    prior = NormalInverseWishart.conjugate(
        mean=m0, mean_weight=kappa0, dof=nu0, scale=S0, structure=FULL, n_features=d
    )
    stats = Gaussian(FULL).stats(X, np.ones((n, 1)))
    means, covs = prior.map(FULL, stats)
    xbar = X.mean(axis=0)
    S = (X - xbar).T @ (X - xbar)
    kappa_n, nu_n = kappa0 + n, nu0 + n
    m_n = (kappa0 * m0 + n * xbar) / kappa_n
    S_n = S0 + S + kappa0 * n / kappa_n * np.outer(xbar - m0, xbar - m0)
    np.testing.assert_allclose(means[0], m_n, rtol=1e-12)
    np.testing.assert_allclose(covs[0], S_n / (nu_n + d + 2), rtol=1e-12)


def test_log_density_is_the_niw_density_up_to_its_constant(rng):
    """Differences of log_density between two points equal those of scipy's
    N(mu | m0, Sigma / kappa0) IW(Sigma | S0, nu0) (Murphy 2012, eq. 4.200)."""
    d = 3
    m0, kappa0, nu0 = rng.normal(size=d), 1.5, d + 2.0
    B = rng.normal(size=(d, d))
    S0 = B @ B.T + np.eye(d)
    prior = NormalInverseWishart.conjugate(
        mean=m0, mean_weight=kappa0, dof=nu0, scale=S0, structure=FULL, n_features=d
    )

    def ours(mu, sigma):
        P = FULL.precision_cholesky(sigma[None])
        return prior.log_density(FULL, mu[None], P)

    def scipy(mu, sigma):
        return invwishart(df=nu0, scale=S0).logpdf(sigma) + multivariate_normal(
            m0, sigma / kappa0
        ).logpdf(mu)

    points = []
    for _ in range(3):
        C = rng.normal(size=(d, d))
        points.append((rng.normal(size=d), C @ C.T + 0.5 * np.eye(d)))
    for (mu_a, s_a), (mu_b, s_b) in pairwise(points):
        np.testing.assert_allclose(
            ours(mu_a, s_a) - ours(mu_b, s_b),
            scipy(mu_a, s_a) - scipy(mu_b, s_b),
            rtol=1e-10,
        )


@pytest.mark.parametrize("structure", STRUCTURES, ids=NAMES)
def test_mode_maximises_likelihood_plus_log_density(structure, rng):
    """The weighted log-likelihood plus the log density is largest at the
    mode: random perturbations of the means and covariances only lower it."""
    k, d = 3, 3
    X = mixture_data(rng, n=90, d=d, k=k)
    resp = rng.dirichlet(np.ones(k), size=len(X))
    g = Gaussian(structure)
    stats = g.stats(X, resp)
    per_feature = structure.block_size(d) == 1
    B = rng.normal(size=(d, d))
    prior = NormalInverseWishart(
        scatter=B @ B.T + np.eye(d),
        covariance_weight=2.0 if structure.shared else rng.uniform(1.0, 3.0, k),
        mean=rng.normal(size=(k, d)),
        mean_weight=rng.uniform(0.5, 2.0, (k, d) if per_feature else k),
    ).check(structure, k, d)

    def objective(means, covs):
        params = g.params_from(means, covs, center=stats.grand_mean())
        return np.sum(resp * g.log_likelihood(X, params)) + g.log_prior(params, prior)

    means, covs = prior.map(structure, stats)
    best = objective(means, covs)
    for _ in range(20):
        m = means + 0.05 * rng.normal(size=means.shape)
        factor = np.exp(0.05 * rng.normal(size=np.shape(covs)))
        c = covs * factor if per_feature else structure.add_to_diagonal(covs, 0.0)
        if not per_feature:
            E = 0.05 * rng.normal(size=(d, d))
            c = c + (E + E.T) / 2 * np.diagonal(c, axis1=-2, axis2=-1).mean()
        assert objective(m, c) < best


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"scatter": [[1.0, 2.0], [0.0, 1.0]]}, "symmetric"),
        ({"scatter": [[1.0, 0.0], [0.0, -1.0]]}, "positive semi-definite"),
        ({"scatter": -1.0}, "non-negative"),
        ({"scatter": np.ones((2, 2, 3))}, "square"),
        ({"covariance_weight": -1.0}, "covariance_weight must be non-negative"),
        ({"mean_weight": [1.0, -2.0]}, "mean_weight must be non-negative"),
        ({"mean": [np.nan, 0.0]}, "mean must be finite"),
        ({"shrink": 1.5}, r"shrink must be in \[0, 1\]"),
        ({"reg": -1e-3}, "reg must be non-negative"),
    ],
)
def test_bad_values_are_errors_naming_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        NormalInverseWishart(**kwargs)


def test_check_rejects_shapes_that_do_not_fit_the_model():
    k, d = 3, 2
    with pytest.raises(ValueError, match="scatter"):
        NormalInverseWishart(scatter=np.eye(3)).check(FULL, k, d)
    with pytest.raises(ValueError, match="scatter"):
        NormalInverseWishart(scatter=np.stack([np.eye(d)] * k)).check(TIED, k, d)
    with pytest.raises(ValueError, match="covariance_weight"):
        NormalInverseWishart(covariance_weight=np.ones(k)).check(TIED, k, d)
    with pytest.raises(ValueError, match="mean_weight"):
        NormalInverseWishart(mean_weight=np.ones((k, d))).check(FULL, k, d)
    with pytest.raises(ValueError, match="mean must"):
        NormalInverseWishart(mean=np.ones(d + 1)).check(DIAG, k, d)
    prior = NormalInverseWishart(mean_weight=np.ones((k, d)))
    assert prior.check(DIAG, k, d) is prior
    with pytest.raises(TypeError, match="shrink"):
        NormalInverseWishart(shrink="a lot")


def test_a_state_neither_data_nor_prior_reached(rng):
    """Its covariance is undefined: previous parameters fill it, or it is an
    error; the mean over all states fills its mean."""
    X = rng.normal(size=(20, 2))
    weights = np.zeros((20, 2))
    weights[:, 0] = 1.0
    stats = Gaussian(FULL).stats(X, weights)
    with pytest.raises(np.linalg.LinAlgError, match="no data"):
        NormalInverseWishart().map(FULL, stats)
    means, covs = NormalInverseWishart(scatter=np.eye(2), covariance_weight=1.0).map(
        FULL, stats
    )
    np.testing.assert_allclose(covs[1], np.eye(2))
    np.testing.assert_allclose(means[1], X.mean(axis=0))

    class Previous:
        means = np.array([[0.0, 0.0], [7.0, 8.0]])
        covariances = np.stack([np.eye(2), 3 * np.eye(2)])

    means, covs = NormalInverseWishart(reg=0.5).map(FULL, stats, Previous)
    np.testing.assert_allclose(means[1], [7.0, 8.0])
    np.testing.assert_allclose(covs[1], 3.5 * np.eye(2))


@pytest.mark.parametrize("structure", STRUCTURES, ids=NAMES)
def test_shrink_and_reg_act_after_the_mode(structure, rng):
    """``(1 - shrink) Sigma + (shrink + reg) I``, outside the density."""
    X = mixture_data(rng)
    stats = Gaussian(structure).stats(X, rng.dirichlet(np.ones(3), size=len(X)))
    base = NormalInverseWishart(scatter=2.0, covariance_weight=1.5)
    shrunk = NormalInverseWishart(
        scatter=2.0, covariance_weight=1.5, shrink=0.3, reg=0.1
    )
    _, a = base.map(structure, stats)
    _, b = shrunk.map(structure, stats)
    np.testing.assert_allclose(b, structure.add_to_diagonal(0.7 * a, 0.4), rtol=1e-12)
    P = structure.precision_cholesky(b)
    means = stats.mean
    assert shrunk.log_density(structure, means, P) == base.log_density(
        structure, means, P
    )


@pytest.mark.parametrize("structure", STRUCTURES, ids=NAMES)
def test_mode_is_bayeskits_gaussian_hmm_m_step(structure, rng):
    """bayeskit's GaussianHMM adds a covariance prior (eta virtual samples of
    S) and a ridge to hmmlearn's priors: from_hmmlearn(...) with them gives
    its Baum-Welch step too, so that the HMM can move onto this object."""
    from bayeskit import GaussianHMM

    k, d = 3, 3
    X = mixture_data(rng, d=d, k=k)
    B = rng.normal(size=(d, d))
    S = B @ B.T + np.eye(d)
    params = dict(
        means_prior=rng.normal(size=(k, d)),
        means_weight=1.5,
        covars_prior=1e-2,
        covars_weight=d + 2.0 if structure.block_size(d) > 1 else 2.0,
        covariance_prior=S,
        covariance_prior_weight=2.0,
        reg_covar=1e-3,
    )
    model = GaussianHMM(
        k, covariance_type=structure.name, n_iter=1, init_params="", **params
    )
    own, _ = start(rng, structure, k, d)
    model.startprob_ = np.full(k, 1.0 / k)
    model.transmat_ = np.full((k, k), 0.1) + 0.7 * np.eye(k)
    model.means_ = rng.normal(scale=3.0, size=(k, d))
    model.covars_ = own
    post = model.predict_proba(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X)
    prior = NormalInverseWishart.from_hmmlearn(structure, d, **params)
    means, covs = prior.map(structure, Gaussian(structure).stats(X, post))
    np.testing.assert_allclose(means, model.means_, rtol=1e-10)
    np.testing.assert_allclose(covs, model.covariances_, rtol=1e-10)
    # Its log density is the one the HMM monitors (up to the same constant).
    P = structure.precision_cholesky(model.covariances_)
    np.testing.assert_allclose(
        prior.log_density(structure, model.means_, P),
        _hmm_emission_log_prior(model),
        rtol=1e-10,
    )


def _hmm_emission_log_prior(model):
    """The log prior of a GaussianHMM's emission parameters, as its EM
    monitors it: the emission family's log prior under the model's own
    prior object."""
    _, emission, prior = model._make_components()
    return emission.log_prior(model._emission_params(), prior.emission)
