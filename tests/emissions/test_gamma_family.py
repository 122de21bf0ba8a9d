"""The gamma family: log-likelihood against scipy.stats.gamma (with missing
cells), additive statistics, the MLE and the MAP against scipy.optimize
maximising the weighted log posterior, the rate given the shape by hand,
the log prior against scipy, sampling moments, starts and the support."""

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
from scipy.special import digamma

from bayeskit.emissions import Gamma, GammaParams
from bayeskit.emissions.base import Emission
from bayeskit.emissions.gamma import gamma_shape
from bayeskit.priors import Gamma as GammaPrior


@pytest.fixture
def data(rng):
    X = np.column_stack(
        [rng.gamma(a, 1 / b, size=80) for a, b in ((0.7, 2.0), (3.0, 0.5), (20.0, 4.0))]
    )
    return with_nan(X, rng), rng.dirichlet(np.ones(2), size=80)


def _params(rng, k=2, d=3):
    return GammaParams(rng.uniform(0.3, 6, (k, d)), rng.uniform(0.2, 3, (k, d)))


def test_protocol():
    family = Gamma(3)
    assert isinstance(family, Emission)
    assert family.missing_coordinates
    assert family.n_parameters(2) == 12


def test_log_likelihood_against_scipy(rng, data):
    X, _ = data
    p = _params(rng)
    expected = reference_log_likelihood(
        X,
        p.shapes,
        lambda x, k: ss.gamma.logpdf(x, p.shapes[k], scale=1 / p.rates[k]),
    )
    assert_allclose(Gamma(3).log_likelihood(X, p), expected, rtol=1e-12)


def test_statistics_add_over_chunks(data):
    chunking_test(Gamma(3), *data)


def test_integer_weights_are_repeated_rows(rng, data):
    repeated_rows_test(Gamma(3), data[0], rng)


def _numerical_map(x, w, alpha=0.0, beta=0.0):
    """Maximise sum w log Gamma(x | a, b) + alpha log b - beta b over
    (log a, log b) with scipy.optimize, from the method of moments."""
    total = w.sum()

    def loss(theta):
        a, b = np.exp(theta)
        ll = (w * ss.gamma.logpdf(x, a, scale=1 / b)).sum()
        return -(ll + alpha * np.log(b) - beta * b) / total

    mean = np.average(x, weights=w)
    var = np.average((x - mean) ** 2, weights=w)
    start = np.log([mean**2 / var, mean / var])
    res = optimize.minimize(loss, start, method="BFGS", options={"gtol": 1e-11})
    res = optimize.minimize(
        loss, res.x, method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-15}
    )
    return np.exp(res.x)


def test_map_params_is_the_weighted_mle(data):
    X, w = data
    family = Gamma(3)
    ml = family.map_params(family.stats(X, w))
    for k in range(2):
        for j in range(3):
            seen = ~np.isnan(X[:, j])
            a, b = _numerical_map(X[seen, j], w[seen, k])
            assert ml.shapes[k, j] == pytest.approx(a, rel=1e-6)
            assert ml.rates[k, j] == pytest.approx(b, rel=1e-6)
    # the rate given the shape, by hand: b = a n / s
    n = w.T @ ~np.isnan(X)
    s = w.T @ np.nan_to_num(X)
    assert_allclose(ml.rates, ml.shapes * n / s, rtol=1e-12)
    zero = family.map_params(family.stats(X, w), GammaPrior(0.0, 0.0))
    assert np.array_equal(zero.shapes, ml.shapes)
    assert np.array_equal(zero.rates, ml.rates)


def test_map_params_with_a_rate_prior(data):
    X, w = data
    family = Gamma(3)
    prior = GammaPrior(4.0, 2.5)
    got = family.map_params(family.stats(X, w), prior)
    n = w.T @ ~np.isnan(X)
    s = w.T @ np.nan_to_num(X)
    assert_allclose(got.rates, (4.0 + got.shapes * n) / (2.5 + s), rtol=1e-12)
    for k in range(2):
        j = 0
        seen = ~np.isnan(X[:, j])
        a, b = _numerical_map(X[seen, j], w[seen, k], 4.0, 2.5)
        assert got.shapes[k, j] == pytest.approx(a, rel=1e-6)
        assert got.rates[k, j] == pytest.approx(b, rel=1e-6)


def test_log_prior_is_the_gamma_density_up_to_a_constant(rng):
    family = Gamma(3)
    prior = GammaPrior(2.0, 0.5)
    a, b = _params(rng), _params(rng)
    ref = ss.gamma(3.0, scale=1 / 0.5)
    got = family.log_prior(a, prior) - family.log_prior(b, prior)
    assert got == pytest.approx(ref.logpdf(a.rates).sum() - ref.logpdf(b.rates).sum())
    assert family.log_prior(a) == 0.0


def test_the_shape_iteration_converges_in_a_few_steps(rng):
    for shape in (0.05, 1.0, 40.0, 1e4):
        x = rng.gamma(shape, 1.0, size=300)
        args = (np.array([300.0]), np.array([x.sum()]), np.array([np.log(x).sum()]))
        a = gamma_shape(*args)
        assert a[0] == pytest.approx(gamma_shape(*args, max_iter=4)[0], rel=1e-12)
        # the profile likelihood's equation log a - digamma(a) = log mean - mean log
        lhs = np.log(a[0]) - digamma(a[0])
        assert lhs == pytest.approx(np.log(x.mean()) - np.log(x).mean(), rel=1e-9)


def test_equal_values_give_max_shape():
    family = Gamma(1, max_shape=1e6)
    stats = family.stats(np.full((5, 1), 2.0), np.ones((5, 1)))
    p = family.map_params(stats)
    assert p.shapes[0, 0] == 1e6
    assert p.rates[0, 0] == pytest.approx(1e6 / 2.0)
    assert Gamma(1).map_params(stats).shapes[0, 0] == 1e8


def test_a_state_without_observed_cells_keeps_its_parameters():
    family = Gamma(2)
    X = np.array([[1.0, np.nan], [2.0, np.nan]])
    stats = family.stats(X, np.ones((2, 1)))
    p = family.map_params(
        stats, None, GammaParams(np.array([[1.0, 5.0]]), np.array([[1.0, 7.0]]))
    )
    assert p.shapes[0, 1] == 5.0 and p.rates[0, 1] == 7.0


def test_sample_moments():
    family = Gamma(2)
    p = GammaParams(
        np.array([[0.5, 3.0], [10.0, 1.0]]), np.array([[2.0, 1.0], [0.5, 4.0]])
    )
    n = 40000
    draws = family.sample(p, np.repeat([0, 1], n), np.random.RandomState(0))
    assert draws.shape == (2 * n, 2) and (draws > 0).all()
    for k in range(2):
        mean = p.shapes[k] / p.rates[k]
        sd = np.sqrt(p.shapes[k]) / p.rates[k]
        got = draws[k * n : (k + 1) * n].mean(axis=0)
        assert np.all(np.abs(got - mean) < 5 * sd / np.sqrt(n))


def test_init_params(data):
    X, _ = data
    drawn, _ = init_test(Gamma(3), X, 3, lambda name, v: np.all(v > 0))
    assert not np.allclose(drawn.rates[0], drawn.rates[1])


def test_check_support():
    family = Gamma(2)
    family.check_support(np.array([[0.5, np.nan]]))
    with pytest.raises(ValueError, match="gamma family"):
        family.check_support(np.array([[0.0, 1.0]]))
