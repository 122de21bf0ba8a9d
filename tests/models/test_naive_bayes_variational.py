"""NaiveBayes(inference="variational"), the Bayesian naive Bayes: the
posterior predictive against its closed form written out with scipy's
distributions, its limit (the MAP naive Bayes) with many rows or a strong
prior, statistics that add, and what it refuses."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats
from scipy.special import logsumexp

from bayeskit import NaiveBayes
from bayeskit.emissions import FULL, Gaussian, Multinomial
from bayeskit.priors import Gamma, NormalInverseGamma, NormalInverseWishart


def _labels(rng, n, k):
    y = rng.randint(k, size=n)
    y[:k] = np.arange(k)
    return y


def _closed_form(Xtr, y, Xte, log_predictive, prior_m):
    """``log P(x, y = c | data)`` by hand: the Dirichlet posterior mean of the
    class plus the class's posterior predictive of ``x`` (``log_predictive(
    rows of the class, Xte)``)."""
    classes = np.unique(y)
    n_c = np.array([np.sum(y == c) for c in classes], dtype=float)
    log_class = np.log((n_c + prior_m / len(classes)) / (len(y) + prior_m))
    return np.column_stack(
        [log_class[i] + log_predictive(Xtr[y == c], Xte) for i, c in enumerate(classes)]
    )


def _diag_t(m0, kappa0, a0, b0):
    def predictive(rows, Xte):
        n = len(rows)
        xbar = rows.mean(axis=0)
        S = ((rows - xbar) ** 2).sum(axis=0)
        kappa = kappa0 + n
        m = (kappa0 * m0 + n * xbar) / kappa
        a = a0 + n / 2
        b = b0 + S / 2 + kappa0 * n * (xbar - m0) ** 2 / (2 * kappa)
        scale = np.sqrt(b * (kappa + 1) / (a * kappa))
        return stats.t.logpdf(Xte, df=2 * a, loc=m, scale=scale).sum(axis=1)

    return predictive


def _full_t(m0, kappa0, nu0, psi0):
    def predictive(rows, Xte):
        n, d = rows.shape
        xbar = rows.mean(axis=0)
        S = (rows - xbar).T @ (rows - xbar)
        kappa, nu = kappa0 + n, nu0 + n
        m = (kappa0 * m0 + n * xbar) / kappa
        psi = psi0 + S + kappa0 * n / kappa * np.outer(xbar - m0, xbar - m0)
        dof = nu - d + 1
        return stats.multivariate_t(
            loc=m, shape=psi * (kappa + 1) / (kappa * dof), df=dof
        ).logpdf(Xte)

    return predictive


def _negative_binomial(a0, b0):
    def predictive(rows, Xte):
        a, b = a0 + rows.sum(axis=0), b0 + len(rows)
        return stats.nbinom.logpmf(Xte, a, b / (b + 1)).sum(axis=1)

    return predictive


def _lomax(a0, b0):
    def predictive(rows, Xte):
        a, b = a0 + len(rows), b0 + rows.sum(axis=0)
        return stats.lomax.logpdf(Xte, a, scale=b).sum(axis=1)

    return predictive


def _polya(alpha0):
    def predictive(rows, Xte):
        alpha = alpha0 + rows.sum(axis=0)
        return np.array(
            [stats.dirichlet_multinomial.logpmf(x, alpha, x.sum()) for x in Xte]
        )

    return predictive


def _case(name, rng):
    """``(emission, prior, X, by-hand predictive)`` with a random proper prior."""
    n, d = 40, 3
    if name == "gaussian":
        m0, kappa0 = rng.normal(size=d), rng.uniform(0.2, 3)
        a0, b0 = rng.uniform(0.5, 3, d), rng.uniform(0.2, 2, d)
        prior = NormalInverseGamma(m0, kappa0, 2 * b0, 2 * a0 + 3)
        X = rng.normal(size=(n, d)) * 2 + 1
        return "gaussian", prior, X, _diag_t(m0, kappa0, a0, b0)
    if name == "full":
        m0, kappa0, nu0 = rng.normal(size=d), rng.uniform(0.2, 3), d + rng.uniform(0, 3)
        a = rng.normal(size=(d, d))
        psi0 = a @ a.T + np.eye(d)
        prior = NormalInverseWishart.from_normal_wishart(m0, kappa0, nu0, psi0)
        X = rng.normal(size=(n, d)) @ a + 1
        return Gaussian(FULL), prior, X, _full_t(m0, kappa0, nu0, psi0)
    if name == "poisson":
        a0, b0 = rng.uniform(0.5, 3, d), rng.uniform(0.2, 2, d)
        X = rng.poisson(rng.uniform(1, 8, d), (n, d)).astype(float)
        return "poisson", Gamma(a0, b0), X, _negative_binomial(a0, b0)
    if name == "exponential":
        a0, b0 = rng.uniform(0.5, 3, d), rng.uniform(0.2, 2, d)
        X = rng.exponential(rng.uniform(0.5, 3, d), (n, d))
        return "exponential", Gamma(a0, b0), X, _lomax(a0, b0)
    from bayeskit.priors import Dirichlet

    alpha0 = rng.uniform(0.3, 3, d)
    X = rng.multinomial(8, [0.2, 0.3, 0.5], size=n).astype(float)
    return Multinomial(d), Dirichlet(alpha0), X, _polya(alpha0)


NAMES = ["gaussian", "full", "poisson", "exponential", "multinomial"]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("name", NAMES)
def test_predictive_equals_the_closed_form(name, seed):
    """predict_joint_log_proba is the class's posterior predictive mean times
    the rows' posterior predictive density, written out with scipy's Student
    t, negative binomial, Lomax and Dirichlet-multinomial; no iteration."""
    rng = np.random.RandomState(seed)
    emission, prior, X, predictive = _case(name, rng)
    y = _labels(rng, len(X), 3)
    prior_m = [0.0, 2.5][seed % 2]
    nb = NaiveBayes(
        emission=emission, emission_prior=prior, prior_m=prior_m,
        inference="variational",
    ).fit(X[:30], y[:30])  # fmt: skip
    expected = _closed_form(X[:30], y[:30], X[30:], predictive, prior_m)
    assert_allclose(nb.predict_joint_log_proba(X[30:]), expected, rtol=1e-10)
    assert_allclose(
        nb.predict_proba(X[30:]),
        np.exp(expected - logsumexp(expected, axis=1, keepdims=True)),
        rtol=1e-9,
        atol=1e-14,
    )


@pytest.mark.parametrize("name", NAMES)
def test_many_rows_give_the_map_naive_bayes(name):
    """With many rows per class the posterior concentrates: the predictive
    tends to the density at the MAP parameters, and the class posteriors to
    the MAP naive Bayes's (here n = 20,000 per class, differences O(1/n))."""
    rng = np.random.RandomState(0)
    emission, prior, _, _ = _case(name, rng)
    _, _, X, _ = _case(name, np.random.RandomState(1))
    big = np.concatenate([X[rng.randint(len(X), size=20000)] for _ in range(2)])
    shift = np.ones(big.shape[1]) * (0.5 if name in ("gaussian", "full") else 0)
    big[20000:] = big[20000:] + shift
    if name in ("poisson", "multinomial"):
        big[20000:, 0] += 1
    y = np.repeat([0, 1], 20000)
    vb = NaiveBayes(emission=emission, emission_prior=prior, inference="variational")
    em = NaiveBayes(emission=emission)
    vb.fit(big, y)
    em.fit(big, y)
    test = big[::997]
    assert_allclose(vb.predict_proba(test), em.predict_proba(test), atol=2e-3)
    far = np.abs(vb.predict_joint_log_proba(test) - em.predict_joint_log_proba(test))
    assert far.max() < 5e-3 * big.shape[1]


def test_a_strong_prior_gives_the_naive_bayes_of_its_parameters():
    """Gamma(s * lambda0, s) with s huge: the predictive is Poisson(lambda0)
    whatever the few rows say."""
    rng = np.random.RandomState(0)
    lam0 = np.array([[2.0, 7.0], [5.0, 1.0]])
    X = rng.poisson(3.0, (20, 2)).astype(float)
    y = np.repeat([0, 1], 10)
    s = 1e9
    nb = NaiveBayes(
        emission="poisson", emission_prior=Gamma(s * lam0, s), inference="variational"
    ).fit(X, y)
    expected = np.column_stack(
        [stats.poisson.logpmf(X, lam0[c]).sum(axis=1) for c in range(2)]
    )
    assert_allclose(
        nb.predict_joint_log_proba(X) - np.log(0.5), expected, rtol=1e-6, atol=1e-6
    )


@pytest.mark.parametrize("name", NAMES)
def test_chunks_give_the_exact_posterior_of_all_rows(name):
    rng = np.random.RandomState(2)
    emission, prior, X, _ = _case(name, rng)
    y = _labels(rng, len(X), 3)
    kw = dict(emission=emission, emission_prior=prior, inference="variational")
    whole = NaiveBayes(**kw).fit(X, y)
    parts = NaiveBayes(**kw)
    for chunk in np.array_split(np.arange(len(X)), 4):
        parts.partial_fit(X[chunk], y[chunk], classes=[0, 1, 2])
    assert_allclose(
        parts.predict_joint_log_proba(X), whole.predict_joint_log_proba(X), rtol=1e-9
    )


def test_what_it_refuses():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(30, 2))
    y = _labels(rng, 30, 2)
    with pytest.raises(ValueError, match="inference"):
        NaiveBayes(inference="vb").fit(X, y)
    with pytest.raises(ValueError, match=r"inference='variational'.*no conjugate"):
        NaiveBayes(emission="gamma", inference="variational").fit(np.exp(X), y)
    with pytest.raises(ValueError, match="emission_prior"):
        NaiveBayes(emission_prior=Gamma(1.0, 1.0), inference="variational").fit(X, y)


# -- semi-supervised: the variational loop ----------------------------------------
def _partly_labelled(rng, name, n=120):
    y = np.repeat([0, 1], n // 2)
    if name == "gaussian":
        X = rng.normal(size=(n, 2)) + 2.0 * y[:, None]
    elif name == "poisson":
        X = rng.poisson(2.0 + 4.0 * y[:, None], (n, 2)).astype(float)
    else:
        X = rng.multinomial(6, [0.2, 0.3, 0.5], size=n).astype(float)
        X[y == 1] = rng.multinomial(6, [0.5, 0.3, 0.2], size=n // 2)
    yu = y.astype(object)
    yu[rng.rand(n) < 0.8] = "?"
    yu[0], yu[-1] = 0, 1
    return X, yu


@pytest.mark.parametrize("seed", range(50))
def test_semi_supervised_bound_never_decreases(seed):
    rng = np.random.RandomState(seed)
    name = ["gaussian", "poisson", "multinomial"][seed % 3]
    X, y = _partly_labelled(rng, name)
    emission = Multinomial(3) if name == "multinomial" else name
    nb = NaiveBayes(
        emission=emission, unlabeled="?", prior_m=rng.uniform(0.5, 3),
        unlabeled_weight=rng.uniform(0.2, 1), inference="variational",
    ).fit(X, y)  # fmt: skip
    bounds = np.array(nb.em_lower_bounds_)
    assert nb.em_n_iter_ >= 1
    assert (np.diff(bounds) >= -1e-9 * np.abs(bounds[1:])).all()


@pytest.mark.parametrize("seed", range(4))
def test_semi_supervised_bound_is_the_elbo_of_the_fitted_posterior(seed):
    """The last bound, by hand for Poisson counts: labelled rows' expected
    log joint, the unlabelled rows' log normalisers, minus the KL divergences
    (scipy's entropies; E[log lambda] integrated numerically)."""
    rng = np.random.RandomState(seed)
    X, y = _partly_labelled(rng, "poisson", n=40)
    a0, b0 = rng.uniform(0.5, 2, 2), rng.uniform(0.2, 1, 2)
    prior_m, lam = 2.0, 0.7
    nb = NaiveBayes(
        emission="poisson", emission_prior=Gamma(a0, b0), unlabeled="?",
        prior_m=prior_m, unlabeled_weight=lam, inference="variational",
    ).fit(X, y)  # fmt: skip
    assert nb.em_converged_
    q = nb.emission_posterior_
    a, b = q.shape, q.rate
    e_log_lam = np.vectorize(lambda s, r: stats.gamma(s, scale=1 / r).expect(np.log))(
        a, b
    )
    alpha = prior_m / 2 + nb.class_count_
    e_log_pi = np.array(
        [stats.beta(alpha[c], alpha[1 - c]).expect(np.log) for c in range(2)]
    )
    from scipy.special import gammaln

    def e_joint(x):  # (n, K): E[log pi_c] + E[log Poisson(x | lambda_c)]
        return (
            e_log_pi
            + x @ e_log_lam.T
            - (a / b).sum(axis=1)
            - gammaln(x + 1).sum(axis=1)[:, None]
        )

    lab = np.array([v != "?" for v in y])
    yl = np.array([int(v) for v in y[lab]])
    bound = e_joint(X[lab])[np.arange(lab.sum()), yl].sum()
    bound += lam * logsumexp(e_joint(X[~lab]), axis=1).sum()
    p_pi = np.full(2, prior_m / 2)
    bound -= -stats.dirichlet(alpha).entropy() - (
        gammaln(p_pi.sum()) - gammaln(p_pi).sum() + ((p_pi - 1) * e_log_pi).sum()
    )
    for c in range(2):
        for j in range(2):
            g = stats.gamma(a[c, j], scale=1 / b[c, j])
            e_log_p = (
                a0[j] * np.log(b0[j])
                - gammaln(a0[j])
                + (a0[j] - 1) * e_log_lam[c, j]
                - b0[j] * g.mean()
            )
            bound -= -g.entropy() - e_log_p
    assert_allclose(nb.em_lower_bound_, bound, rtol=1e-7)


def test_semi_supervised_with_no_weight_on_unlabelled_rows_is_the_labelled_fit():
    rng = np.random.RandomState(0)
    X, y = _partly_labelled(rng, "gaussian")
    lab = np.array([v != "?" for v in y])
    kw = dict(prior_m=1.0, inference="variational")
    semi = NaiveBayes(unlabeled="?", unlabeled_weight=0.0, **kw).fit(X, y)
    labelled = NaiveBayes(**kw).fit(X[lab], y[lab].astype(int))
    # the default prior reads every row in the semi-supervised fit: give one
    prior = semi.emission_prior_
    labelled = NaiveBayes(emission_prior=prior, **kw).fit(X[lab], y[lab].astype(int))
    assert_allclose(
        semi.predict_joint_log_proba(X), labelled.predict_joint_log_proba(X), rtol=1e-12
    )


def test_semi_supervised_refusals():
    rng = np.random.RandomState(0)
    X, y = _partly_labelled(rng, "gaussian")
    with pytest.raises(ValueError, match="prior_m"):
        NaiveBayes(unlabeled="?", inference="variational").fit(X, y)
    nb = NaiveBayes(unlabeled="?", prior_m=1.0, inference="variational").fit(X, y)
    with pytest.raises(ValueError, match="partial_fit"):
        nb.partial_fit(X, y)
    with pytest.raises(ValueError, match="summarize"):
        nb.summarize(X, y)
