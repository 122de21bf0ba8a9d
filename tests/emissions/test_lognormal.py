"""The log-normal family: log-likelihood against scipy.stats.lognorm (with
missing cells), statistics that merge pairwise over any chunking, the MLE
and the normal-inverse-gamma mode by hand, the log prior against scipy's
densities, sampling moments, starts, reg_var and the support check."""

import numpy as np
import pytest
from family_checks import (
    assert_stats_close,
    chunking_test,
    init_test,
    reference_log_likelihood,
    repeated_rows_test,
    with_nan,
)
from numpy.testing import assert_allclose
from scipy import stats as ss

from bayeskit.emissions import LogNormal, LogNormalParams
from bayeskit.emissions.base import Emission
from bayeskit.priors import NormalInverseGamma


@pytest.fixture
def data(rng):
    X = with_nan(rng.lognormal(1.0, 0.7, size=(60, 3)), rng)
    w = rng.dirichlet(np.ones(2), size=60)
    return X, w


def _params(rng, k=2, d=3):
    return LogNormalParams(rng.normal(size=(k, d)), rng.uniform(0.2, 2.0, (k, d)))


def test_protocol():
    family = LogNormal(3)
    assert isinstance(family, Emission)
    assert family.missing_coordinates
    assert family.n_parameters(2) == 12


def test_log_likelihood_against_scipy(rng, data):
    X, _ = data
    p = _params(rng)
    expected = reference_log_likelihood(
        X,
        p.means,
        lambda x, k: ss.lognorm.logpdf(
            x, s=np.sqrt(p.variances[k]), scale=np.exp(p.means[k])
        ),
    )
    assert_allclose(LogNormal(3).log_likelihood(X, p), expected, rtol=1e-12)


def test_log_likelihood_far_from_the_origin_keeps_its_precision():
    """log x near 700 with a spread of 1e-6: the standardised values are
    computed per state, not from expanded squares."""
    mu = np.array([[700.0]])
    x = np.exp(mu + np.array([[0.0], [1e-6], [-2e-6]]))
    p = LogNormalParams(mu, np.array([[1e-12]]))
    expected = ss.norm.logpdf(np.log(x), 700.0, 1e-6) - np.log(x)
    assert_allclose(LogNormal(1).log_likelihood(x, p), expected, rtol=1e-9)


def test_statistics_add_over_chunks(data):
    X, w = data
    chunking_test(LogNormal(3), X, w)


def test_integer_weights_are_repeated_rows(rng, data):
    repeated_rows_test(LogNormal(3), data[0], rng)


def test_statistics_are_centred(data):
    X, w = data
    stats = LogNormal(3).stats(X, w)
    for k in range(2):
        for j in range(3):
            seen = ~np.isnan(X[:, j])
            y, wk = np.log(X[seen, j]), w[seen, k]
            mean = np.average(y, weights=wk)
            assert stats.counts[k, j] == pytest.approx(wk.sum(), rel=1e-12)
            assert stats.mean[k, j] == pytest.approx(mean, rel=1e-12)
            assert stats.scatter[k, j] == pytest.approx(
                (wk * (y - mean) ** 2).sum(), rel=1e-10
            )


def test_merge_keeps_a_small_spread_around_a_large_mean(rng):
    """E[y^2] - E[y]^2 would lose every digit here; the pairwise merge
    does not."""
    y = 300.0 + 1e-7 * rng.normal(size=400)
    X = np.exp(y)[:, None]
    w = np.ones((400, 1))
    family = LogNormal(1)
    parts = family.zeros(1)
    for chunk in np.array_split(np.arange(400), 7):
        parts = parts + family.stats(X[chunk], w[chunk])
    ref = ((np.log(X[:, 0]) - np.log(X[:, 0]).mean()) ** 2).sum()
    assert parts.scatter[0, 0] == pytest.approx(ref, rel=1e-8)


def test_map_params_is_the_weighted_mle(data):
    X, w = data
    family = LogNormal(3)
    ml = family.map_params(family.stats(X, w))
    for k in range(2):
        for j in range(3):
            seen = ~np.isnan(X[:, j])
            y, wk = np.log(X[seen, j]), w[seen, k]
            mean = np.average(y, weights=wk)
            assert ml.means[k, j] == pytest.approx(mean, rel=1e-12)
            assert ml.variances[k, j] == pytest.approx(
                np.average((y - mean) ** 2, weights=wk), rel=1e-10
            )
    zero = family.map_params(family.stats(X, w), NormalInverseGamma())
    assert np.array_equal(zero.means, ml.means)
    assert np.array_equal(zero.variances, ml.variances)


def test_map_params_with_a_prior_is_the_posterior_mode(data):
    X, w = data
    family = LogNormal(3)
    prior = NormalInverseGamma(
        mean=np.array([0.5, 1.0, 2.0]),
        mean_weight=2.0,
        scatter=1.5,
        variance_weight=3.0,
    )
    got = family.map_params(family.stats(X, w), prior)
    for k in range(2):
        for j in range(3):
            seen = ~np.isnan(X[:, j])
            y, wk = np.log(X[seen, j]), w[seen, k]
            n, m0 = wk.sum(), prior.mean[j]
            mu = (2.0 * m0 + (wk * y).sum()) / (2.0 + n)
            # the mode of the posterior: its sum of squares around mu, the
            # prior's scatter and its pseudo-observations of m0
            v = (1.5 + (wk * (y - mu) ** 2).sum() + 2.0 * (mu - m0) ** 2) / (3.0 + n)
            assert got.means[k, j] == pytest.approx(mu, rel=1e-12)
            assert got.variances[k, j] == pytest.approx(v, rel=1e-10)


def test_the_update_maximises_the_posterior_it_monitors(rng, data):
    X, w = data
    family = LogNormal(3)
    prior = NormalInverseGamma(
        mean=1.0, mean_weight=1.0, scatter=0.5, variance_weight=2.0
    )
    best = family.map_params(family.stats(X, w), prior)

    def objective(p):
        return (w * family.log_likelihood(X, p)).sum() + family.log_prior(p, prior)

    top = objective(best)
    for _ in range(30):
        other = LogNormalParams(
            best.means + rng.normal(scale=0.02, size=best.means.shape),
            best.variances * np.exp(rng.normal(scale=0.05, size=best.means.shape)),
        )
        assert objective(other) <= top + 1e-9


def test_log_prior_against_scipy(rng):
    family = LogNormal(2)
    prior = NormalInverseGamma(
        mean=0.5, mean_weight=2.0, scatter=3.0, variance_weight=7.0
    )
    a, b = _params(rng, 3, 2), _params(rng, 3, 2)

    def ref(p):  # N(mu | m0, v / kappa) Inv-Gamma(v | (c - 3) / 2, psi / 2)
        v = p.variances
        return (
            ss.norm.logpdf(p.means, 0.5, np.sqrt(v / 2.0))
            + ss.invgamma.logpdf(v, (7.0 - 3) / 2, scale=3.0 / 2)
        ).sum()

    got = family.log_prior(a, prior) - family.log_prior(b, prior)
    assert got == pytest.approx(ref(a) - ref(b), rel=1e-10)
    # no mean weight: the inverse gamma alone, shape (c - 2) / 2
    prior = NormalInverseGamma(scatter=3.0, variance_weight=7.0)
    got = family.log_prior(a, prior) - family.log_prior(b, prior)
    ig = ss.invgamma(2.5, scale=1.5)
    assert got == pytest.approx(
        ig.logpdf(a.variances).sum() - ig.logpdf(b.variances).sum(), rel=1e-10
    )
    assert family.log_prior(a) == 0.0


def test_reg_var_is_added_to_every_variance(data):
    X, w = data
    stats = LogNormal(3).stats(X, w)
    plain = LogNormal(3).map_params(stats)
    ridged = LogNormal(3, reg_var=0.25).map_params(stats)
    assert_allclose(ridged.variances, plain.variances + 0.25, rtol=1e-14)
    assert np.array_equal(ridged.means, plain.means)
    one = LogNormal(1, reg_var=0.1).map_params(
        LogNormal(1).stats(np.array([[2.0]]), np.ones((1, 1)))
    )
    assert one.variances[0, 0] == pytest.approx(0.1)


def test_sample_moments():
    family = LogNormal(2)
    p = LogNormalParams(
        np.array([[0.0, 2.0], [-1.0, 0.5]]), np.array([[1.0, 0.25], [4.0, 0.5]])
    )
    n = 40000
    draws = family.sample(p, np.repeat([0, 1], n), np.random.RandomState(0))
    assert draws.shape == (2 * n, 2) and (draws > 0).all()
    for k in range(2):
        y = np.log(draws[k * n : (k + 1) * n])
        sd = np.sqrt(p.variances[k])
        assert np.all(np.abs(y.mean(axis=0) - p.means[k]) < 5 * sd / np.sqrt(n))
        # the variance's standard error is v sqrt(2 / n)
        se = p.variances[k] * np.sqrt(2 / n)
        assert np.all(np.abs(y.var(axis=0) - p.variances[k]) < 5 * se)


def test_init_params(data):
    X, _ = data
    drawn, _ = init_test(
        LogNormal(3),
        X,
        3,
        lambda name, v: np.all(v > 0) if name == "variances" else True,
    )
    assert not np.allclose(drawn.means[0], drawn.means[1])


def test_stats_of_weighted_chunks_merge_with_the_zero(data):
    X, w = data
    family = LogNormal(3)
    assert_stats_close(family.zeros(2) + family.stats(X, w), family.stats(X, w))


def test_check_support():
    family = LogNormal(2)
    family.check_support(np.array([[0.5, np.nan]]))
    with pytest.raises(ValueError, match="log-normal"):
        family.check_support(np.array([[0.0, 1.0]]))
    with pytest.raises(ValueError, match="X holds"):
        family.check_support(np.array([[-2.0, 1.0]]))


def test_one_distinct_value_is_refused_without_a_ridge_and_kept_finite_with_one():
    # a state whose observed values of a feature are all equal has variance 0
    X = np.array([[2.0], [2.0], [3.0]])
    w = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(np.linalg.LinAlgError, match="reg_var"):
        LogNormal(1).map_params(LogNormal(1).stats(X, w))
    family = LogNormal.by_default().for_data(X)
    assert family.reg_var == 1e-6  # what emission="lognormal" builds
    params = family.map_params(family.stats(X, w))
    assert_allclose(params.variances, 1e-6)
    assert np.isfinite(family.log_likelihood(X, params)).all()


def test_a_mixture_with_a_one_row_component_is_finite_or_a_clear_error():
    from bayeskit import MixtureModel

    X = np.exp(np.random.default_rng(0).normal(size=(60, 2)))
    X[0] = [1e6, 1e6]  # a component of its own
    for method in ("fit", "partial_fit"):
        model = MixtureModel(2, emission="lognormal", random_state=0)
        getattr(model, method)(X)
        assert np.isfinite(model.score_samples(X)).all()
        assert np.isclose(model.weights_.min(), 1 / 60, atol=1e-3)
        with pytest.raises(ValueError, match=r"degenerate.*emission_prior"):
            getattr(MixtureModel(2, emission=LogNormal(), random_state=0), method)(X)
