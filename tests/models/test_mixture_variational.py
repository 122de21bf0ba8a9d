"""MixtureModel(inference='variational'): variational EM over (node, family,
prior) for the conjugate families, checked against scikit-learn's
BayesianGaussianMixture, a Monte-Carlo estimate of the bound, and its
monotonicity."""

import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.exceptions import ConvergenceWarning

from bayeskit import BayesianGaussianMixture, MixtureModel, PoissonMixture
from bayeskit.emissions import SPHERICAL, Gaussian
from bayeskit.priors import Gamma, NormalInverseWishart


def _fit(model, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X)


@pytest.mark.parametrize("seed", range(4))
def test_gaussian_equals_scikit_learns_variational_mixture(seed):
    """Over full Gaussians with a Normal-Wishart prior, the generic loop is
    scikit-learn's BayesianGaussianMixture with a Dirichlet on the weights
    (reg_covar=0, the same priors, the same k-means start): the same
    posterior, the same number of iterations, and bounds whose steps agree
    (scikit-learn's bound leaves out constants; ours is per sample)."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(80, 2)), rng.normal(size=(70, 2)) + 5])
    n = len(X)
    gamma = [1e-2, 1.0, 0.3, 5.0][seed]
    sk = _fit(
        BayesianGaussianMixture(
            n_components=4,
            weight_concentration_prior_type="dirichlet_distribution",
            weight_concentration_prior=gamma,
            reg_covar=0.0,
            random_state=seed,
            max_iter=200,
            tol=1e-6,
        ),
        X,
    )
    prior = NormalInverseWishart.from_normal_wishart(
        sk.mean_prior_,
        sk.mean_precision_prior_,
        float(sk.degrees_of_freedom_prior_),
        sk.covariance_prior_,
    )
    ours = _fit(
        MixtureModel(
            4,
            emission="gaussian",
            emission_prior=prior,
            weights_prior=gamma,
            inference="variational",
            random_state=seed,
            max_iter=200,
            tol=1e-6 / n,
        ),
        X,
    )
    np.testing.assert_allclose(ours.weights_, sk.weights_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.means_, sk.means_, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(ours.covariances_, sk.covariances_, rtol=1e-9)
    assert ours.n_iter_ == sk.n_iter_
    np.testing.assert_allclose(
        np.diff(ours.lower_bounds_) * n, np.diff(sk.lower_bounds_), rtol=1e-7, atol=1e-8
    )
    np.testing.assert_allclose(
        ours.predict_proba(X), sk.predict_proba(X), rtol=1e-8, atol=1e-12
    )
    np.testing.assert_allclose(
        ours.score_samples(X), sk.score_samples(X), rtol=1e-10, atol=1e-10
    )


def _poisson_elbo_monte_carlo(model, X, rng, draws=40_000):
    """E_q[log p(X, Z, pi, lambda) - log q(Z) - log q(pi) - log q(lambda)]
    by sampling q, with scipy's densities: the bound without formulas of
    ours."""
    qw, ql = model.weights_posterior_, model.emission_posterior_
    pw = np.full(model.n_components, model.weights_prior)
    pl = model._vb_run.emission_prior
    resp = model.predict_proba(X)
    k = model.n_components
    pi = rng.dirichlet(qw.concentration, size=draws)
    lam = rng.gamma(ql.shape, 1.0 / ql.rate, size=(draws, *ql.shape.shape))
    u = rng.random((draws, len(X), 1))
    z = (u > np.cumsum(resp, axis=1)[None]).sum(axis=2).clip(max=k - 1)
    rows = np.arange(len(X))
    log_joint = np.log(pi[np.arange(draws)[:, None], z])
    lam_z = lam[np.arange(draws)[:, None], z]  # (draws, n, d)
    log_joint += stats.poisson.logpmf(X[None], lam_z).sum(axis=2)
    log_joint = log_joint.sum(axis=1)
    log_joint += stats.dirichlet(pw).logpdf(pi.T)
    prior = stats.gamma(np.broadcast_to(pl.shape, ql.shape.shape), scale=1 / pl.rate)
    log_joint += prior.logpdf(lam).sum(axis=(1, 2))
    log_q = np.log(resp[rows, z]).sum(axis=1)
    log_q += stats.dirichlet(qw.concentration).logpdf(pi.T)
    log_q += stats.gamma(ql.shape, scale=1 / ql.rate).logpdf(lam).sum(axis=(1, 2))
    diff = log_joint - log_q
    return diff.mean(), diff.std() / np.sqrt(draws)


@pytest.mark.parametrize("seed", range(3))
def test_bound_equals_a_monte_carlo_estimate_on_tiny_models(seed):
    """lower_bound_ (per sample) is the evidence lower bound of the fitted
    q: the mean of log p(X, Z, theta) - log q over draws from q."""
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.poisson(1.5, (6, 2)), rng.poisson(9.0, (6, 2))]).astype(
        float
    )
    model = _fit(
        MixtureModel(
            2,
            emission="poisson",
            emission_prior=Gamma(1.5, 0.4),
            weights_prior=2.0,
            inference="variational",
            random_state=seed,
            max_iter=3,
        ),
        X,
    )
    # The bound of the last step: q(Z) of its E-step, q(theta) of its M-step.
    run = model._vb_run
    log_resp = run._e_step(X)
    stats_ = run._stats(X, log_resp, np.ones(len(X)))
    run._from_stats(stats_)
    bound = run._lower_bound(stats_) * len(X)
    # predict_proba now is the next E-step; draw Z from the last one instead.
    model.weights_posterior_, model.emission_posterior_ = run.q_weights, run.q_emission
    model.predict_proba = lambda _: np.exp(log_resp)
    mc, se = _poisson_elbo_monte_carlo(model, X, rng)
    assert abs(bound - mc) < 5 * se + 1e-3, (bound, mc, se)


@pytest.mark.parametrize("emission", ["poisson", "exponential", "gaussian"])
def test_bound_never_decreases(emission):
    for seed in range(12):
        rng = np.random.default_rng(500 + seed)
        n = int(rng.integers(20, 120))
        if emission == "poisson":
            X = rng.poisson(rng.choice([1.0, 5.0, 20.0], (n, 1)), (n, 2)).astype(float)
        elif emission == "exponential":
            X = rng.exponential(rng.choice([0.2, 1.0, 5.0], (n, 1)), (n, 2))
        else:
            X = rng.normal(size=(n, 2)) + rng.choice([0.0, 5.0], (n, 1))
        model = _fit(
            MixtureModel(
                int(rng.integers(2, 6)),
                emission=emission,
                weights_prior=float(rng.choice([0.01, 1.0, 3.0])),
                inference="variational",
                init_params=["kmeans", "random", "random_from_data"][seed % 3],
                random_state=seed,
                max_iter=200,
                tol=1e-10,
            ),
            X,
        )
        bounds = np.asarray(model.lower_bounds_)
        assert (np.diff(bounds) >= -1e-10 * np.abs(bounds).max()).all(), seed


def test_surplus_poisson_components_die_away():
    rng = np.random.default_rng(0)
    X = np.concatenate(
        [rng.poisson(lam, (300, 2)) for lam in (1.0, 15.0, 60.0)]
    ).astype(float)
    model = _fit(
        MixtureModel(
            8,
            emission="poisson",
            weights_prior=1e-3,
            inference="variational",
            random_state=0,
            max_iter=2000,
            tol=1e-9,
        ),
        X,
    )
    assert np.sort(model.weights_)[-3:].sum() >= 0.99
    top = np.argsort(model.weights_)[-3:]
    np.testing.assert_allclose(
        np.sort(model.lambdas_[top].mean(axis=1)), [1.0, 15.0, 60.0], rtol=0.1
    )


def test_unsupported_families_and_improper_priors_are_errors(rng):
    X = rng.normal(size=(30, 2))
    with pytest.raises(ValueError, match="BayesianGaussianMixture"):
        MixtureModel(2, emission=Gaussian(SPHERICAL), inference="variational").fit(X)
    with pytest.raises(ValueError, match="inference='variational'"):
        MixtureModel(2, emission="lognormal", inference="variational").fit(np.exp(X))
    counts = rng.poisson(3.0, (30, 2)).astype(float)
    with pytest.raises(ValueError, match="emission_prior"):
        MixtureModel(
            2,
            emission="poisson",
            emission_prior=Gamma(0.0, 0.0),
            inference="variational",
        ).fit(counts)
    with pytest.raises(ValueError, match="mean_weight"):
        MixtureModel(
            2,
            emission="gaussian",
            emission_prior=NormalInverseWishart(),
            inference="variational",
        ).fit(X)
    model = MixtureModel(2, emission="poisson", inference="variational").fit(counts)
    assert not hasattr(model, "partial_fit")
    assert not hasattr(model, "summarize")
    with pytest.raises(ValueError, match="NaN"):
        MixtureModel(2, emission="poisson", inference="variational").fit(
            np.where(counts > 4, np.nan, counts)
        )
    with pytest.raises(ValueError, match="inference"):
        MixtureModel(2, inference="vb").fit(X)


def test_em_is_unchanged_by_default(rng):
    """inference='em' (the default) is the MAP fit of PoissonMixture."""
    X = rng.poisson(4.0, (50, 2)).astype(float)
    a = MixtureModel(2, emission="poisson", random_state=0).fit(X)
    b = PoissonMixture(2, random_state=0).fit(X)
    np.testing.assert_allclose(a.lambdas_, b.lambdas_)


def test_a_method_variational_inference_lacks_says_why():
    """``partial_fit`` is EM's: with inference='variational' the
    AttributeError carries the reason (not lost in the fitted-attribute
    lookup)."""
    from bayeskit import MixtureModel

    model = MixtureModel(inference="variational")
    assert not hasattr(model, "partial_fit")
    with pytest.raises(AttributeError) as info:
        model.partial_fit  # noqa: B018
    assert "inference='variational'" in str(info.value.__cause__)
    with pytest.raises(AttributeError, match="no attribute 'means_'"):
        model.means_  # noqa: B018
