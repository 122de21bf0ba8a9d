"""The Poisson, multinomial and Gaussian-mixture families: log-likelihoods
against scipy.stats, statistics that add, MAP parameters against closed forms,
and log priors whose maximiser the update is."""

import numpy as np
import pytest
from scipy.stats import multinomial, multivariate_normal, poisson

from bayeskit.emissions import (
    GaussianMixtureEmission,
    MixturePrior,
    Multinomial,
    MultinomialParams,
    Poisson,
    PoissonParams,
)
from bayeskit.emissions.base import Emission
from bayeskit.priors import Dirichlet
from bayeskit.priors.gamma import Gamma


def test_poisson_family(rng):
    family = Poisson(3)
    assert isinstance(family, Emission)
    lam = rng.uniform(0.2, 5, size=(2, 3))
    X = rng.poisson(2.0, size=(50, 3)).astype(float)
    expected = np.column_stack([poisson.logpmf(X, lam[k]).sum(axis=1) for k in (0, 1)])
    np.testing.assert_allclose(
        family.log_likelihood(X, PoissonParams(lam)), expected, rtol=1e-12
    )
    w = rng.dirichlet(np.ones(2), size=50)
    a, b = family.stats(X[:20], w[:20]), family.stats(X[20:], w[20:])
    whole = family.zeros(2) + a + b
    np.testing.assert_allclose(whole.sums, family.stats(X, w).sums)
    np.testing.assert_allclose(whole.total_weight, w.sum(axis=0))
    ml = family.map_params(whole)
    np.testing.assert_allclose(ml.lambdas, (w.T @ X) / w.sum(axis=0)[:, None])
    post = family.map_params(whole, Gamma(2.0, 3.0), ml)
    np.testing.assert_allclose(
        post.lambdas, (2.0 + w.T @ X) / (3.0 + w.sum(axis=0))[:, None]
    )
    assert family.n_parameters(2) == 6
    draws = family.sample(
        PoissonParams(lam), np.repeat([0, 1], 20000), np.random.RandomState(0)
    )
    np.testing.assert_allclose(draws[:20000].mean(axis=0), lam[0], rtol=0.05)


def test_multinomial_family(rng):
    family = Multinomial(4, n_trials=6)
    p = rng.dirichlet(np.ones(4), size=3)
    X = rng.multinomial(6, [0.25] * 4, size=40).astype(float)
    expected = np.column_stack([multinomial.logpmf(X, 6, p[k]) for k in range(3)])
    np.testing.assert_allclose(
        family.log_likelihood(X, MultinomialParams(p)), expected, rtol=1e-12
    )
    w = rng.dirichlet(np.ones(3), size=40)
    stats = family.stats(X[:15], w[:15]) + family.stats(X[15:], w[15:])
    counts = w.T @ X
    np.testing.assert_allclose(
        family.map_params(stats).emissionprob,
        counts / counts.sum(axis=1, keepdims=True),
    )
    mode = family.map_params(stats, Dirichlet(2.0)).emissionprob
    np.testing.assert_allclose(
        mode, (counts + 1) / (counts + 1).sum(axis=1, keepdims=True)
    )
    assert family.log_prior(MultinomialParams(mode), Dirichlet(2.0)) == pytest.approx(
        np.log(mode).sum()
    )
    draws = family.sample(
        MultinomialParams(p), np.zeros(5, dtype=int), np.random.RandomState(0)
    )
    assert (draws.sum(axis=1) == 6).all()
    with pytest.raises(ValueError, match="n_trials"):
        Multinomial(4).sample(MultinomialParams(p), [0], np.random.RandomState(0))


def mixture_params(family, rng, k=2):
    m, d, cov = family.n_mix, family.n_features, family.covariance_type
    if cov in ("spherical", "diag"):
        covars = rng.uniform(0.5, 2.0, size=family.covars_shape(k))
    else:
        a = rng.normal(size=family.covars_shape(k)) * 0.5
        covars = a @ np.swapaxes(a, -1, -2) + np.eye(d)
    return family.params(
        rng.dirichlet(np.ones(m), size=k), rng.normal(size=(k, m, d)) * 2, covars
    )


def dense(family, params, k, j):
    d, cov = family.n_features, family.covariance_type
    c = params.covars
    return {
        "spherical": lambda: np.eye(d) * c[k, j],
        "diag": lambda: np.diag(c[k, j]),
        "full": lambda: c[k, j],
        "tied": lambda: c[k],
    }[cov]()


@pytest.mark.parametrize("cov", ["spherical", "diag", "full", "tied"])
def test_mixture_log_likelihood_and_statistics(rng, cov):
    family = GaussianMixtureEmission(3, cov, 2)
    params = mixture_params(family, rng)
    X = rng.normal(size=(60, 2)) * 2
    expected = np.column_stack(
        [
            np.log(
                sum(
                    params.weights[k, j]
                    * multivariate_normal(
                        params.means[k, j], dense(family, params, k, j)
                    ).pdf(X)
                    for j in range(3)
                )
            )
            for k in range(2)
        ]
    )
    np.testing.assert_allclose(family.log_likelihood(X, params), expected, rtol=1e-10)
    w = rng.dirichlet(np.ones(2), size=60)
    a = family.expected_stats(X[:25], w[:25], params)
    b = family.expected_stats(X[25:], w[25:], params)
    whole = family.expected_stats(X, w, params)
    merged = family.zeros(2) + a + b
    for field in ("weight", "mean", "scatter"):
        np.testing.assert_allclose(
            getattr(merged, field), getattr(whole, field), atol=1e-10
        )
    # The components' weights split each state's weight.
    np.testing.assert_allclose(
        whole.state_weight().reshape(2, 3).sum(axis=1), w.sum(axis=0), rtol=1e-12
    )
    with pytest.raises(TypeError, match="expected_stats"):
        family.stats(X, w)


def _objective(family, params, stats, prior):
    """The expected complete-data log-likelihood of the components under the
    statistics (up to constants) plus the family's log prior."""
    k, m, d = params.means.shape
    n = stats.state_weight().reshape(k, m)
    xbar, total = stats.mean.reshape(k, m, d), 0.0
    scatter = np.asarray(stats.scatter).reshape(
        (k, m, d, d) if family._full else (k, m, d)
    )
    for i in range(k):
        for j in range(m):
            sigma = dense(family, params, i, j)
            s = scatter[i, j] if family._full else np.diag(scatter[i, j])
            delta = xbar[i, j] - params.means[i, j]
            s = s + n[i, j] * np.outer(delta, delta)
            _, logdet = np.linalg.slogdet(sigma)
            total += n[i, j] * np.log(params.weights[i, j])
            total -= 0.5 * (n[i, j] * logdet + np.trace(np.linalg.solve(sigma, s)))
    return total + family.log_prior(params, prior)


@pytest.mark.parametrize("cov", ["spherical", "diag", "full", "tied"])
def test_mixture_map_params_maximise_the_log_prior_they_monitor(rng, cov):
    """With the previous means at the components' means (so the scatter is
    around the new means: an exact M-step), the update maximises the expected
    log-likelihood plus log_prior: no perturbation of it does better."""
    family = GaussianMixtureEmission(2, cov, 2)
    start = mixture_params(family, rng)
    X = rng.normal(size=(80, 2)) * 2
    stats = family.expected_stats(X, rng.dirichlet(np.ones(2), size=80), start)
    prior = MixturePrior.broadcast(
        (2, 2, 2), cov, weights_prior=2.0, means_weight=0.0,
        covars_prior=0.7 if cov in ("diag", "spherical") else 0.5 * np.eye(2),
        covars_weight=0.4 if cov in ("diag", "spherical") else 1.5,
    )  # fmt: skip
    previous = family.params(start.weights, stats.mean.reshape(2, 2, 2), start.covars)
    best = family.map_params(stats, prior, previous)
    top = _objective(family, best, stats, prior)
    for _ in range(30):
        weights = best.weights * np.exp(rng.normal(scale=0.05, size=best.weights.shape))
        weights /= weights.sum(axis=1, keepdims=True)
        covars = best.covars * np.exp(rng.normal(scale=0.05))
        if family._full:
            e = rng.normal(scale=0.05, size=best.covars.shape)
            covars = best.covars + e @ np.swapaxes(e, -1, -2)
        other = family.params(weights, best.means, covars)
        assert _objective(family, other, stats, prior) <= top + 1e-9
