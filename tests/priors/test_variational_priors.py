"""The priors' variational side: posteriors, expected log-parameters and KL
divergences, checked against scipy's densities and Monte-Carlo estimates."""

import numpy as np
import pytest
from scipy import stats
from scipy.special import digamma

from bayeskit.priors import Beta, Dirichlet, Gamma, NormalInverseWishart, StickBreaking


def _mc_kl(sample, log_q, log_p):
    """``E_q[log q - log p]`` over the draws, with its standard error."""
    diff = log_q(sample) - log_p(sample)
    return diff.mean(), diff.std() / np.sqrt(len(diff))


@pytest.mark.parametrize("seed", range(5))
def test_dirichlet_expectations_and_kl(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    q = Dirichlet(rng.uniform(0.5, 5.0, k))
    p = Dirichlet(rng.uniform(0.5, 5.0, k))
    draws = stats.dirichlet(q.concentration).rvs(200_000, random_state=rng)
    # E[log p] against the Monte-Carlo mean, and the closed form of the mean.
    np.testing.assert_allclose(q.expected_log(), np.log(draws).mean(0), atol=0.02)
    np.testing.assert_allclose(q.mean(), stats.dirichlet(q.concentration).mean())
    kl, se = _mc_kl(
        draws,
        lambda x: stats.dirichlet(q.concentration).logpdf(x.T),
        lambda x: stats.dirichlet(p.concentration).logpdf(x.T),
    )
    assert abs(float(q.kl(p)) - kl) < 5 * se + 1e-3
    assert float(q.kl(q)) == pytest.approx(0.0, abs=1e-12)


def test_dirichlet_posterior_adds_the_counts_row_by_row():
    prior = Dirichlet(0.5)
    post = prior.posterior([[1.0, 2.0, 0.0], [0.0, 0.0, 4.0]])
    np.testing.assert_array_equal(
        post.concentration, [[1.5, 2.5, 0.5], [0.5, 0.5, 4.5]]
    )
    alpha = post.concentration
    np.testing.assert_allclose(
        post.expected_log(), digamma(alpha) - digamma(alpha.sum(1, keepdims=True))
    )
    assert post.kl(prior).shape == (2,)


@pytest.mark.parametrize("seed", range(5))
def test_beta_and_gamma_kl_against_monte_carlo(seed):
    rng = np.random.default_rng(100 + seed)
    a, b, a0, b0 = rng.uniform(0.5, 6.0, 4)
    q, p = Beta(a, b), Beta(a0, b0)
    x = stats.beta(a, b).rvs(400_000, random_state=rng)
    log_p, log_q = q.expected_log()
    assert log_p == pytest.approx(np.log(x).mean(), abs=0.01)
    assert log_q == pytest.approx(np.log1p(-x).mean(), abs=0.01)
    kl, se = _mc_kl(x, stats.beta(a, b).logpdf, stats.beta(a0, b0).logpdf)
    assert abs(q.kl(p) - kl) < 5 * se + 1e-3

    g, g0 = Gamma(a, b), Gamma(a0, b0)
    y = stats.gamma(a, scale=1 / b).rvs(400_000, random_state=rng)
    assert g.mean() == pytest.approx(stats.gamma(a, scale=1 / b).mean())
    assert g.expected_log() == pytest.approx(np.log(y).mean(), abs=0.01)
    kl, se = _mc_kl(
        y, stats.gamma(a, scale=1 / b).logpdf, stats.gamma(a0, scale=1 / b0).logpdf
    )
    assert abs(g.kl(g0) - kl) < 5 * se + 1e-3
    post = g.posterior(3.0, 2.0)
    assert (post.shape, post.rate) == (a + 3.0, b + 2.0)


@pytest.mark.parametrize("seed", range(5))
def test_stick_breaking_weights_and_expected_logs(seed):
    """E[log pi_k] of the sticks against Monte-Carlo draws of the sticks."""
    rng = np.random.default_rng(200 + seed)
    k = 4
    prior = StickBreaking.dirichlet_process(rng.uniform(0.1, 3.0), k)
    counts = rng.uniform(0.0, 20.0, k)
    post = prior.posterior(counts)
    after = counts[::-1].cumsum()[::-1] - counts
    np.testing.assert_allclose(post.sticks.alpha, 1.0 + counts)
    np.testing.assert_allclose(post.sticks.beta, prior.sticks.beta + after)
    v = stats.beta(post.sticks.alpha, post.sticks.beta).rvs(
        (200_000, k), random_state=rng
    )
    pi = v * np.concatenate([np.ones((len(v), 1)), np.cumprod(1 - v, 1)[:, :-1]], 1)
    np.testing.assert_allclose(post.expected_log(), np.log(pi).mean(0), atol=0.02)
    mean = pi.mean(0)
    np.testing.assert_allclose(post.mean(), mean / mean.sum(), atol=0.01)
    expected = sum(
        Beta(a, b).kl(Beta(a0, b0))
        for a, b, a0, b0 in zip(
            post.sticks.alpha, post.sticks.beta, prior.sticks.alpha, prior.sticks.beta
        )
    )
    assert post.kl(prior) == pytest.approx(expected)


def _mvn_logpdf(x, mean, cov):
    """log N(x_i; mean_i, cov_i) for stacked rows and matrices."""
    d = x.shape[-1]
    chol = np.linalg.cholesky(cov)
    z = np.linalg.solve(chol, (x - mean)[..., None])[..., 0]
    log_det = 2 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)
    return -0.5 * ((z * z).sum(-1) + log_det + d * np.log(2 * np.pi))


def _niw_logpdf(mu, cov, m, kappa, nu, psi):
    """log NIW(mu, Sigma) from scipy's inverse Wishart and the normal density
    of mu given Sigma (Sigma stacked on the first axis)."""
    iw = stats.invwishart(df=nu, scale=psi).logpdf(np.moveaxis(cov, 0, -1))
    return iw + _mvn_logpdf(mu, m, cov / kappa)


@pytest.mark.parametrize("seed", range(4))
def test_niw_expectations_and_kl_against_monte_carlo(seed):
    rng = np.random.default_rng(300 + seed)
    d = int(rng.integers(1, 4))
    A = rng.normal(size=(d, d))
    psi = A @ A.T + d * np.eye(d)
    B = rng.normal(size=(d, d))
    psi0 = B @ B.T + np.eye(d)
    m, m0 = rng.normal(size=d), rng.normal(size=d)
    kappa, kappa0 = rng.uniform(0.5, 5.0, 2)
    nu, nu0 = d + rng.uniform(0.5, 6.0, 2)
    q = NormalInverseWishart.from_normal_wishart(m[None], [kappa], [nu], psi[None])
    p = NormalInverseWishart.from_normal_wishart(m0[None], [kappa0], [nu0], psi0[None])

    n = 20_000
    cov = stats.invwishart(df=nu, scale=psi).rvs(n, random_state=rng)
    cov = cov.reshape(n, d, d)
    # mu | Sigma ~ N(m, Sigma / kappa)
    mu = m + np.einsum(
        "nij,nj->ni", np.linalg.cholesky(cov / kappa), rng.normal(size=(n, d))
    )
    # E[log |Lambda|] (Bishop 2006, eq. 10.65).
    log_det_prec = -np.linalg.slogdet(cov)[1]
    assert q.expected_log_det_precision(1, d)[0] == pytest.approx(
        log_det_prec.mean(), abs=5 * log_det_prec.std() / np.sqrt(n)
    )
    # E[log N(x | mu, Sigma)] at a few points.
    X = rng.normal(size=(3, d))
    ll = _mvn_logpdf(X[None, :, :], mu[:, None, :], cov[:, None, :, :])
    np.testing.assert_allclose(
        q.expected_log_likelihood(X)[:, 0],
        ll.mean(0),
        atol=float(5 * ll.std(0).max() / np.sqrt(n)),
    )
    # KL(q || p) against the Monte-Carlo mean of log q - log p.
    diff = _niw_logpdf(mu, cov, m, kappa, nu, psi) - _niw_logpdf(
        mu, cov, m0, kappa0, nu0, psi0
    )
    kl = q.kl(p)[0]
    assert abs(kl - diff.mean()) < 5 * diff.std() / np.sqrt(n) + 1e-3
    assert q.kl(q)[0] == pytest.approx(0.0, abs=1e-10)


def test_niw_expected_log_likelihood_of_blocks_of_rows(rng):
    """The function of the rows (the posterior's own terms computed once, for
    an E-step in blocks) gives expected_log_likelihood of every block bit for
    bit, and that is the closed form of Bishop (2006), eq. 10.64, state by
    state."""
    k, d = 3, 2
    A = rng.normal(size=(k, d, d))
    psi = A @ A.transpose(0, 2, 1) + np.eye(d)
    m, kappa, nu = (
        rng.normal(size=(k, d)),
        rng.uniform(1, 5, k),
        d + rng.uniform(1, 5, k),
    )
    q = NormalInverseWishart.from_normal_wishart(m, kappa, nu, psi)
    X = rng.normal(size=(50, d)) * 3
    whole = q.expected_log_likelihood(X)
    expected = q.expected_log_likelihood_function(d)
    for rows in (slice(0, 7), slice(7, 8), slice(8, 50)):
        np.testing.assert_array_equal(expected(X[rows]), whole[rows])
    for j in range(k):
        r = X - m[j]
        maha = np.einsum("ni,ij,nj->n", r, np.linalg.inv(psi[j]), r)
        e_log_det = q.expected_log_det_precision(k, d)[j]
        want = 0.5 * (e_log_det - d * np.log(2 * np.pi) - d / kappa[j] - nu[j] * maha)
        np.testing.assert_allclose(whole[:, j], want, rtol=1e-12, atol=1e-12)


def test_niw_posterior_is_murphys_update(rng):
    d, k = 2, 3
    prior = NormalInverseWishart.from_normal_wishart(
        np.array([0.5, -1.0]), 2.0, 4.0, np.eye(d)
    )
    X = rng.normal(size=(30, d))
    resp = rng.dirichlet(np.ones(k), size=30)
    n = resp.sum(0)
    xbar = resp.T @ X / n[:, None]
    S = np.stack(
        [(resp[:, j, None] * (X - xbar[j])).T @ (X - xbar[j]) for j in range(k)]
    )

    class Stats:
        weight, mean, scatter = n, xbar, S

    post = prior.posterior(Stats)
    m, kappa, nu, psi = post.normal_wishart(k, d)
    np.testing.assert_allclose(kappa, 2.0 + n)
    np.testing.assert_allclose(nu, 4.0 + n)
    np.testing.assert_allclose(
        m, (2.0 * np.array([0.5, -1.0]) + resp.T @ X) / kappa[:, None]
    )
    # Psi_n = Psi_0 + sum r x x^T + kappa_0 m_0 m_0^T - kappa_n m_n m_n^T (eq. 4.214).
    raw = np.einsum("nk,ni,nj->kij", resp, X, X)
    m0 = np.array([0.5, -1.0])
    expected = (
        np.eye(d)
        + raw
        + 2.0 * np.outer(m0, m0)
        - kappa[:, None, None] * (m[:, :, None] * m[:, None, :])
    )
    np.testing.assert_allclose(psi, expected, atol=1e-12)


def test_improper_niw_has_no_variational_side():
    with pytest.raises(ValueError, match="mean_weight"):
        NormalInverseWishart().normal_wishart(2, 2)
    with pytest.raises(ValueError, match="covariance_weight"):
        NormalInverseWishart(mean_weight=1.0, scatter=1.0).normal_wishart(2, 2)
