"""Conditional linear Gaussian inference against enumeration and dense algebra.

The reference builds, for every joint discrete configuration, the joint
Gaussian of the continuous nodes in moment form by dense linear algebra
(``Sigma = A D A^T`` with ``A = (I - B)^{-1}`` from numpy's inverse), scores
the observed cells with scipy's multivariate normal and conditions the hidden
ones by the textbook formula; nothing of it goes through the module tested.
"""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal

from bayeskit.graph.clg import CLGNetwork, CLGNode


def random_clg(rng, n_discrete, n_continuous):
    """A random CLG network: discrete nodes with discrete parents, continuous
    nodes with discrete and continuous parents (topological orders)."""
    disc = [f"d{i}" for i in range(n_discrete)]
    cont = [f"c{i}" for i in range(n_continuous)]
    cards = {v: int(rng.integers(2, 4)) for v in disc}
    log_cpds = {}
    for i, v in enumerate(disc):
        parents = tuple(p for p in disc[:i] if rng.random() < 0.5)
        shape = [cards[p] for p in parents] + [cards[v]]
        table = rng.dirichlet(np.ones(cards[v]), size=shape[:-1] or None)
        log_cpds[v] = (parents, np.log(np.asarray(table).reshape(shape)))
    nodes = {}
    for i, v in enumerate(cont):
        dp = tuple(p for p in disc if rng.random() < 0.5)
        cp = tuple(p for p in cont[:i] if rng.random() < 0.6)
        shape = tuple(cards[p] for p in dp)
        nodes[v] = CLGNode(
            dp,
            cp,
            rng.normal(0, 2, size=shape),
            rng.normal(0, 1, size=(*shape, len(cp))),
            rng.uniform(0.2, 2.0, size=shape),
        )
    return disc, cards, log_cpds, cont, nodes


def dense_reference(disc, cards, log_cpds, cont, nodes, codes, values):
    """Per row: log evidence, P(config), and per config the conditional mean
    and covariance of the continuous nodes, by enumeration."""
    configs = list(itertools.product(*[range(cards[v]) for v in disc]))
    c = len(cont)
    idx = {v: j for j, v in enumerate(cont)}
    out = []
    for row_codes, row in zip(codes, values):
        obs = ~np.isnan(row)
        logw, means, covs = [], [], []
        for conf in configs:
            z = dict(zip(disc, conf))
            if any(k >= 0 and k != conf[j] for j, k in enumerate(row_codes)):
                logw.append(-np.inf)
                means.append(np.zeros(c))
                covs.append(np.zeros((c, c)))
                continue
            lp = sum(
                log_cpds[v][1][(*tuple(z[p] for p in log_cpds[v][0]), z[v])]
                for v in disc
            )
            a, B, var = np.zeros(c), np.zeros((c, c)), np.zeros(c)
            for v in cont:
                node = nodes[v]
                u = tuple(z[p] for p in node.discrete_parents)
                a[idx[v]] = node.intercept[u]
                var[idx[v]] = node.variance[u]
                for p, b in zip(node.continuous_parents, node.coef[u]):
                    B[idx[v], idx[p]] = b
            A = np.linalg.inv(np.eye(c) - B)
            mu, S = A @ a, A @ np.diag(var) @ A.T
            if obs.any():
                lp += multivariate_normal(mu[obs], S[np.ix_(obs, obs)]).logpdf(row[obs])
            m = row.copy()
            cov = np.zeros((c, c))
            h = ~obs
            if h.any():
                Soo = S[np.ix_(obs, obs)]
                Sho = S[np.ix_(h, obs)]
                gain = (
                    np.linalg.solve(Soo, Sho.T).T
                    if obs.any()
                    else np.zeros((h.sum(), 0))
                )
                m[h] = mu[h] + gain @ (row[obs] - mu[obs])
                cov[np.ix_(h, h)] = S[np.ix_(h, h)] - gain @ Sho.T
            logw.append(lp)
            means.append(m)
            covs.append(cov)
        logw = np.array(logw)
        ev = logsumexp(logw)
        out.append((ev, np.exp(logw - ev), np.array(means), np.array(covs)))
    return configs, out


def random_evidence(rng, net, n):
    codes, values = net.sample(n, rng)
    codes = np.where(rng.random(codes.shape) < 0.5, -1, codes)
    values = np.where(rng.random(values.shape) < 0.5, np.nan, values)
    return codes, values


@pytest.mark.parametrize("seed", range(40))
def test_hybrid_posteriors_equal_enumeration(seed):
    rng = np.random.default_rng(seed)
    spec = random_clg(rng, int(rng.integers(0, 4)), int(rng.integers(1, 5)))
    net = CLGNetwork(*spec)
    codes, values = random_evidence(rng, net, 12)
    post = net.posterior(codes, values)
    configs, ref = dense_reference(*spec, codes, values)
    assert [tuple(c) for c in post.configs] == configs
    u_w = np.exp(post.component_log_weights())
    for i, (ev, w, means, covs) in enumerate(ref):
        np.testing.assert_allclose(post.log_evidence[i], ev, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(np.exp(post.log_joint[i]), w, atol=1e-10)
        live = w > 0
        comp = post.component[live]
        np.testing.assert_allclose(post.means[i, comp], means[live], atol=1e-9)
        np.testing.assert_allclose(
            post.covariances[post.pattern[i], comp], covs[live], atol=1e-9
        )
        # The mixture's mean and marginals.
        mean = np.einsum("k,kc->c", w, means)
        np.testing.assert_allclose(post.mean()[i], mean, atol=1e-9)
        np.testing.assert_allclose(u_w[i].sum(), 1.0, atol=1e-12)
        for j, v in enumerate(spec[0]):
            marg = [w[[c[j] == a for c in configs]].sum() for a in range(spec[1][v])]
            np.testing.assert_allclose(
                post.discrete_marginal(j, spec[1][v])[i], marg, atol=1e-10
            )


@pytest.mark.parametrize("seed", range(12))
def test_many_rows_of_one_pattern_equal_enumeration(seed):
    """Patterns of 300 rows or more (conditioned through maps formed once per
    pattern) give the dense reference's answers, one pattern or two."""
    rng = np.random.default_rng(100 + seed)
    spec = random_clg(rng, int(rng.integers(0, 3)), int(rng.integers(2, 5)))
    net = CLGNetwork(*spec)
    codes, values = net.sample(600, rng)
    codes = np.where(rng.random(codes.shape) < 0.3, -1, codes)
    masks = rng.random((2, values.shape[1])) < 0.5
    masks[:, 0] = seed % 3 == 0  # some with the first node observed or hidden
    which = np.zeros(600, dtype=int) if seed % 2 else np.repeat([0, 1], 300)
    values = np.where(masks[which], np.nan, values)
    post = net.posterior(codes, values)
    rows = rng.choice(600, size=8, replace=False)
    _, ref = dense_reference(*spec, codes[rows], values[rows])
    for i, (ev, w, means, covs) in zip(rows, ref):
        np.testing.assert_allclose(post.log_evidence[i], ev, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(np.exp(post.log_joint[i]), w, atol=1e-10)
        live = w > 0
        comp = post.component[live]
        np.testing.assert_allclose(post.means[i, comp], means[live], atol=1e-9)
        np.testing.assert_allclose(
            post.covariances[post.pattern[i], comp], covs[live], atol=1e-9
        )
        observed = ~np.isnan(values[i])
        assert (post.means[i, :, observed] == values[i, observed][:, None]).all()


@pytest.mark.parametrize("seed", range(20))
def test_linear_gaussian_posteriors_equal_dense_conditioning(seed):
    """All-continuous: one Gaussian; the mean, covariance and the log
    density of the observed cells, and the moment form of the joint."""
    rng = np.random.default_rng(100 + seed)
    spec = random_clg(rng, 0, int(rng.integers(2, 7)))
    net = CLGNetwork(*spec)
    _, values = random_evidence(rng, net, 30)
    post = net.posterior(np.zeros((30, 0), dtype=int), values)
    _, ref = dense_reference(*spec, np.zeros((30, 0), dtype=int), values)
    for i, (ev, _, means, covs) in enumerate(ref):
        np.testing.assert_allclose(post.log_evidence[i], ev, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(post.means[i, 0], means[0], rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(
            post.covariances[post.pattern[i], 0], covs[0], atol=1e-10
        )
    c = len(spec[3])
    mean, cov = net.joint_gaussian(0)
    _, ref = dense_reference(
        *spec, np.zeros((1, 0), dtype=int), np.full((1, c), np.nan)
    )
    np.testing.assert_allclose(mean, ref[0][2][0], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(cov, ref[0][3][0], rtol=1e-10, atol=1e-10)


def test_mixture_variance_is_the_law_of_total_variance():
    rng = np.random.default_rng(7)
    spec = random_clg(rng, 2, 3)
    net = CLGNetwork(*spec)
    codes, values = random_evidence(rng, net, 50)
    post = net.posterior(codes, values)
    _configs, ref = dense_reference(*spec, codes, values)
    for i, (_, w, means, covs) in enumerate(ref):
        m = w @ means
        var = w @ (np.diagonal(covs, axis1=1, axis2=2) + (means - m) ** 2)
        np.testing.assert_allclose(post.variance()[i], var, atol=1e-9)


def test_too_many_discrete_configurations_is_an_error():
    rng = np.random.default_rng(0)
    spec = random_clg(rng, 3, 1)
    with pytest.raises(ValueError, match="joint configurations"):
        CLGNetwork(*spec, max_configurations=2)


def test_sample_moments_match_the_joint_gaussian():
    """Forward sampling of a linear-Gaussian chain: mean and covariance."""
    rng = np.random.default_rng(3)
    spec = random_clg(rng, 0, 3)
    net = CLGNetwork(*spec)
    _, values = net.sample(200_000, rng)
    mean, cov = net.joint_gaussian(0)
    se = np.sqrt(np.diag(cov) / len(values))
    assert np.all(np.abs(values.mean(axis=0) - mean) < 5 * se)
    np.testing.assert_allclose(np.cov(values.T), cov, rtol=0.03, atol=0.03)


@pytest.mark.parametrize("seed", range(20))
def test_conditioning_stays_accurate_with_tiny_variances(seed):
    """A chain x1 -> ... -> xL with variances down to 1e-14, x1 queried given
    xL: the closed form ``var(x1 | xL) = v1 V / (B^2 v1 + V)`` (B the product
    of the coefficients, V the variance of the summed noise) is met to 1e-9
    relative. The moment form (Sigma_11 - Sigma_1L^2 / Sigma_LL) subtracts two
    numbers equal to about 1: on these chains it is off by 3e-8 to 2e-4
    relative, and would fail here."""
    rng = np.random.default_rng(seed)
    length = int(rng.integers(2, 6))
    names = [f"c{i}" for i in range(length)]
    b = rng.uniform(0.5, 2.0, size=length)
    a = rng.normal(size=length)
    v = np.concatenate([[1.0], 10.0 ** -rng.uniform(10, 14, size=length - 1)])
    nodes = {
        name: CLGNode(
            (),
            (names[i - 1],) if i else (),
            np.array(a[i]),
            np.array([b[i]] if i else []),
            np.array(v[i]),
        )
        for i, name in enumerate(names)
    }
    net = CLGNetwork([], {}, {}, names, nodes)
    B = np.prod(b[1:])
    V = sum(v[i] * np.prod(b[i + 1 :]) ** 2 for i in range(1, length))
    A = sum(a[i] * np.prod(b[i + 1 :]) for i in range(1, length))
    x_last = rng.normal(0, 3)
    values = np.full((1, length), np.nan)
    values[0, -1] = x_last
    post = net.posterior(np.zeros((1, 0), dtype=int), values)
    var = v[0] * V / (B**2 * v[0] + V)
    mean = a[0] + v[0] * B / (B**2 * v[0] + V) * (x_last - A - B * a[0])
    np.testing.assert_allclose(post.covariances[0, 0, 0, 0], var, rtol=1e-9)
    np.testing.assert_allclose(post.means[0, 0, 0], mean, rtol=1e-9, atol=1e-12)
    log_density = -0.5 * (
        np.log(2 * np.pi * (B**2 * v[0] + V))
        + (x_last - A - B * a[0]) ** 2 / (B**2 * v[0] + V)
    )
    np.testing.assert_allclose(post.log_evidence[0], log_density, rtol=1e-9)
