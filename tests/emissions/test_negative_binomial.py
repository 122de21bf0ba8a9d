"""The negative binomial family: log-likelihood against scipy.stats.nbinom
(with missing cells) and against mpmath at counts up to 1e15, additive
statistics, the MLE against scipy.optimize, the Beta posterior mean by hand,
the log prior against scipy.stats.beta, sampling moments, starts and the
support check."""

import mpmath
import numpy as np
import pytest
from family_checks import (
    chunking_test,
    init_test,
    reference_log_likelihood,
    repeated_rows_test,
    with_nan,
)
from numpy.testing import assert_allclose
from scipy import optimize
from scipy import stats as ss

from bayeskit.emissions import NegativeBinomial, NegativeBinomialParams
from bayeskit.emissions.base import Emission
from bayeskit.emissions.negative_binomial import log_binomial_coefficient
from bayeskit.priors import Beta

R = np.array([0.5, 2.0, 7.5])


@pytest.fixture
def data(rng):
    X = np.column_stack([rng.negative_binomial(r, 0.3, size=80) for r in R])
    return with_nan(X, rng), rng.dirichlet(np.ones(2), size=80)


def _params(rng, k=2):
    return NegativeBinomialParams(rng.uniform(0.05, 0.95, (k, 3)), R)


def test_protocol():
    family = NegativeBinomial(3, R)
    assert isinstance(family, Emission)
    assert family.missing_coordinates
    assert family.n_parameters(2) == 6


def test_log_likelihood_against_scipy(rng, data):
    X, _ = data
    p = _params(rng)
    expected = reference_log_likelihood(
        X, p.probs, lambda x, k: ss.nbinom.logpmf(x, R, p.probs[k])
    )
    assert_allclose(NegativeBinomial(3, R).log_likelihood(X, p), expected, rtol=1e-12)


def _mp_logpmf(x, r, p):
    mpmath.mp.dps = 60
    x, r, p = mpmath.mpf(x), mpmath.mpf(r), mpmath.mpf(p)
    return float(
        mpmath.loggamma(x + r)
        - mpmath.loggamma(r)
        - mpmath.loggamma(x + 1)
        + r * mpmath.log(p)
        + x * mpmath.log1p(-p)
    )


@pytest.mark.parametrize("x", [0.0, 1.0, 1e3, 1e6, 1e9, 1e12, 1e15])
@pytest.mark.parametrize("r", [0.3, 2.5, 40.0])
def test_log_likelihood_at_extreme_counts_against_mpmath(x, r):
    """Near the mode (the mean at x) and far from it; scipy's difference of
    log-gammas loses units at 1e15, this form keeps ~1e-13 of the value."""
    for p in (r / (r + x) if x > 0 else 0.5, 0.5, 1e-3):
        family = NegativeBinomial(1, r)
        got = family.log_likelihood(
            np.array([[x]]), NegativeBinomialParams(np.array([[p]]), np.array([r]))
        )[0, 0]
        exact = _mp_logpmf(x, r, p)
        assert got == pytest.approx(exact, rel=1e-12, abs=1e-12 * abs(r * np.log(p)))


def test_the_coefficient_against_mpmath():
    """To 1e-12 at counts up to 1e15; a number of successes far above the
    count (1e6 against 5) keeps ~1e-10 (scipy's betaln there)."""
    for x in (0.0, 5.0, 1e8, 1e15):
        for r in (0.3, 2.5, 40.0, 1e6):
            rel = 1e-10 if r > 1e3 * max(x, 1.0) else 1e-12
            mpmath.mp.dps = 60
            exact = mpmath.loggamma(mpmath.mpf(x) + r) - mpmath.loggamma(r)
            exact -= mpmath.loggamma(mpmath.mpf(x) + 1)
            got = log_binomial_coefficient(np.array(x), np.array(r))
            assert float(got) == pytest.approx(float(exact), rel=rel, abs=1e-12)


def test_statistics_add_over_chunks(data):
    chunking_test(NegativeBinomial(3, R), *data)


def test_integer_weights_are_repeated_rows(rng, data):
    repeated_rows_test(NegativeBinomial(3, R), data[0], rng)


def test_map_params_is_the_weighted_mle(data):
    X, w = data
    family = NegativeBinomial(3, R)
    ml = family.map_params(family.stats(X, w))
    assert np.array_equal(ml.n_successes, R)
    for k in range(2):
        for j in range(3):
            seen = ~np.isnan(X[:, j])
            x, wk = X[seen, j], w[seen, k]
            res = optimize.minimize_scalar(
                lambda p, x=x, wk=wk, r=R[j]: -(wk * ss.nbinom.logpmf(x, r, p)).sum(),
                bounds=(1e-9, 1 - 1e-9),
                method="bounded",
                options={"xatol": 1e-12},
            )
            assert ml.probs[k, j] == pytest.approx(res.x, rel=1e-6)
    zero = family.map_params(family.stats(X, w), Beta(0.0, 0.0))
    assert np.array_equal(zero.probs, ml.probs)


def test_map_params_with_a_beta_prior(data):
    X, w = data
    family = NegativeBinomial(3, R)
    got = family.map_params(family.stats(X, w), Beta(2.0, 3.0)).probs
    n = w.T @ ~np.isnan(X)
    s = w.T @ np.nan_to_num(X)
    assert_allclose(got, (2.0 + R * n) / (5.0 + R * n + s), rtol=1e-12)


def test_log_prior_is_the_beta_density_up_to_a_constant(rng):
    family = NegativeBinomial(3, R)
    prior = Beta(2.0, 0.5)
    a, b = _params(rng), _params(rng)
    ref = ss.beta(3.0, 1.5)
    got = family.log_prior(a, prior) - family.log_prior(b, prior)
    assert got == pytest.approx(ref.logpdf(a.probs).sum() - ref.logpdf(b.probs).sum())
    assert family.log_prior(a) == 0.0


def test_the_update_maximises_the_posterior_it_monitors(rng, data):
    X, w = data
    family = NegativeBinomial(3, R)
    prior = Beta(1.5, 2.0)
    best = family.map_params(family.stats(X, w), prior)

    def objective(probs):
        p = NegativeBinomialParams(probs, R)
        return (w * family.log_likelihood(X, p)).sum() + family.log_prior(p, prior)

    top = objective(best.probs)
    for _ in range(20):
        logit = np.log(best.probs / (1 - best.probs))
        other = 1 / (1 + np.exp(-(logit + rng.normal(scale=0.05, size=logit.shape))))
        assert objective(other) <= top + 1e-9


def test_only_zeros_give_a_point_mass():
    family = NegativeBinomial(1, 2.0)
    p = family.map_params(family.stats(np.zeros((4, 1)), np.ones((4, 1))))
    assert p.probs[0, 0] == 1.0
    ll = family.log_likelihood(np.array([[0.0], [2.0], [np.nan]]), p)[:, 0]
    assert ll[0] == 0.0 and ll[1] == -np.inf and ll[2] == 0.0


def test_n_successes_has_an_effect(data):
    X, w = data
    a = NegativeBinomial(3, 1.0).map_params(NegativeBinomial(3, 1.0).stats(X, w))
    b = NegativeBinomial(3, 5.0).map_params(NegativeBinomial(3, 5.0).stats(X, w))
    assert np.all(b.probs > a.probs)


def test_sample_moments():
    family = NegativeBinomial(3, R)
    p = NegativeBinomialParams(np.array([[0.2, 0.5, 0.8], [0.6, 0.1, 0.4]]), R)
    n = 40000
    draws = family.sample(p, np.repeat([0, 1], n), np.random.RandomState(0))
    assert draws.shape == (2 * n, 3) and (draws >= 0).all()
    for k in range(2):
        q = p.probs[k]
        mean, sd = R * (1 - q) / q, np.sqrt(R * (1 - q)) / q
        got = draws[k * n : (k + 1) * n].mean(axis=0)
        assert np.all(np.abs(got - mean) < 5 * sd / np.sqrt(n))


def test_init_params(data):
    X, _ = data
    drawn, _ = init_test(
        NegativeBinomial(3, R),
        X,
        3,
        lambda name, v: np.all((v > 0) & (v <= 1)) if name == "probs" else True,
    )
    assert not np.allclose(drawn.probs[0], drawn.probs[1])


def test_check_support():
    family = NegativeBinomial(2)
    family.check_support(np.array([[0.0, np.nan], [3.0, 1e15]]))
    with pytest.raises(ValueError, match="negative binomial"):
        family.check_support(np.array([[0.5, 1.0]]))
    with pytest.raises(ValueError, match="X holds"):
        family.check_support(np.array([[-1.0, 1.0]]))
