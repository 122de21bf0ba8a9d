"""MixtureModel(inference='variational') over codes: Categorical tables and
Multinomial counts (Dirichlet posteriors on every state's probabilities).

References: the evidence lower bound by enumeration of the component
assignments on tiny data (expectations from scipy's digamma, the Dirichlet
entropies from scipy.stats), its monotonicity, and surplus components dying
away on data simulated from fewer components.
"""

import itertools
import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import digamma, gammaln
from sklearn.exceptions import ConvergenceWarning

from bayeskit import MixtureModel
from bayeskit.emissions import Categorical, Multinomial
from bayeskit.priors import Dirichlet


def _fit(model, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X)


def _e_log(alpha):
    alpha = np.asarray(alpha, dtype=float)
    return digamma(alpha) - digamma(alpha.sum(axis=-1, keepdims=True))


def _kl(a, b):
    """KL(Dir(a) || Dir(b)) of every row: minus the entropy of Dir(a) minus
    E_a[log Dir(theta; b)]."""
    a, b = np.atleast_2d(a), np.broadcast_to(b, np.shape(np.atleast_2d(a)))
    out = 0.0
    for ar, br in zip(a, b):
        cross = gammaln(br.sum()) - gammaln(br).sum() + ((br - 1) * _e_log(ar)).sum()
        out += -stats.dirichlet(ar).entropy() - cross
    return out


def _enumerated_bound(resp, e_log_pi, e_log_lik, kl):
    """``sum_Z q(Z) (E[log p(X, Z | theta)] - log q(Z)) - KL``, summing over
    every assignment Z of the rows to components."""
    n, k = resp.shape
    total = 0.0
    for z in itertools.product(range(k), repeat=n):
        rows = np.arange(n)
        q = np.prod(resp[rows, z])
        if q == 0:
            continue
        total += q * ((e_log_pi[list(z)] + e_log_lik[rows, z]).sum() - np.log(q))
    return total - kl


def _last_step(model, X):
    """One more E-step and M-step of the fitted run: ``q(Z)``, and the bound
    the run reports for it (times the number of rows)."""
    run = model._vb_run
    log_resp = run._e_step(X)
    stats_ = run._stats(X, log_resp, np.ones(len(X)))
    run._from_stats(stats_)
    return np.exp(log_resp), run._lower_bound(stats_) * len(X), run


@pytest.mark.parametrize("seed", range(6))
def test_categorical_bound_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    k, sizes = int(rng.integers(2, 4)), [3, 2]
    X = np.column_stack([rng.integers(0, t, 6) for t in sizes])
    alpha0 = float(rng.uniform(0.3, 2.0))
    beta0 = float(rng.uniform(0.5, 2.0))
    model = _fit(
        MixtureModel(
            k, emission=Categorical(sizes), emission_prior=Dirichlet(beta0),
            weights_prior=alpha0, inference="variational", random_state=seed,
            max_iter=int(rng.integers(1, 5)),
        ),
        X,
    )  # fmt: skip
    resp, bound, run = _last_step(model, X)
    tables = [q.concentration for q in run.q_emission]
    e_log_lik = sum(_e_log(t)[:, X[:, j]].T for j, t in enumerate(tables))
    kl = _kl(run.q_weights.concentration, alpha0)
    kl += sum(_kl(t, beta0) for t in tables)
    ref = _enumerated_bound(resp, _e_log(run.q_weights.concentration), e_log_lik, kl)
    np.testing.assert_allclose(bound, ref, rtol=1e-10)


@pytest.mark.parametrize("seed", range(6))
def test_multinomial_bound_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    k, d = int(rng.integers(2, 4)), 3
    X = rng.integers(0, 5, (6, d))
    alpha0 = float(rng.uniform(0.3, 2.0))
    beta0 = rng.uniform(0.5, 2.0, d)
    model = _fit(
        MixtureModel(
            k, emission=Multinomial(d), emission_prior=Dirichlet(beta0),
            weights_prior=alpha0, inference="variational", random_state=seed,
            max_iter=int(rng.integers(1, 5)),
        ),
        X,
    )  # fmt: skip
    resp, bound, run = _last_step(model, X)
    table = run.q_emission.concentration
    coef = gammaln(X.sum(axis=1) + 1) - gammaln(X + 1).sum(axis=1)
    e_log_lik = coef[:, None] + X @ _e_log(table).T
    kl = _kl(run.q_weights.concentration, alpha0) + _kl(table, beta0)
    ref = _enumerated_bound(resp, _e_log(run.q_weights.concentration), e_log_lik, kl)
    np.testing.assert_allclose(bound, ref, rtol=1e-10)


@pytest.mark.parametrize("seed", range(50))
def test_bound_never_decreases(seed):
    rng = np.random.default_rng(900 + seed)
    n, k = int(rng.integers(10, 80)), int(rng.integers(2, 6))
    init = ["kmeans", "random", "random_from_data", "k-means++"][seed % 4]
    if seed % 2:
        sizes = list(rng.integers(2, 5, size=3))
        X = np.column_stack([rng.integers(0, t, n) for t in sizes])
        emission = Categorical(sizes)
    else:
        X = rng.poisson(rng.choice([1.0, 6.0], (n, 1)) * rng.uniform(0.2, 2, 4))
        emission = Multinomial(4)
    model = _fit(
        MixtureModel(
            k, emission=emission, weights_prior=float(rng.choice([0.01, 1.0, 3.0])),
            inference="variational", init_params=init, random_state=seed,
            max_iter=200, tol=1e-10,
        ),
        X,
    )  # fmt: skip
    bounds = np.asarray(model.lower_bounds_)
    assert len(bounds) > 1
    assert (np.diff(bounds) >= -1e-10 * np.abs(bounds).max()).all()


TABLES = [
    np.array([[0.8, 0.1, 0.05, 0.05], [0.05, 0.05, 0.1, 0.8]]),
    np.array([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]]),
    np.array([[0.9, 0.1], [0.1, 0.9]]),
]


@pytest.mark.parametrize("seed", range(3))
def test_surplus_categorical_components_die_away(seed):
    """Rows from two components, fitted with eight: the weights put at least
    0.99 on two, whose tables are the simulated ones."""
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 2, 600)
    X = np.column_stack([[rng.choice(len(t[0]), p=t[c]) for c in z] for t in TABLES])
    model = _fit(
        MixtureModel(
            8, emission=Categorical([4, 3, 2]), weights_prior=1e-3,
            inference="variational", random_state=seed, max_iter=2000, tol=1e-9,
        ),
        X,
    )  # fmt: skip
    top = np.argsort(model.weights_)[-2:]
    assert model.weights_[top].sum() >= 0.99
    first = model.emission_posterior_[0].mean()[top]
    np.testing.assert_allclose(
        first[np.argsort(first[:, 0])], TABLES[0][::-1], atol=0.06
    )


@pytest.mark.parametrize("seed", range(3))
def test_surplus_multinomial_components_die_away(seed):
    rng = np.random.default_rng(seed)
    probs = np.array([[0.6, 0.3, 0.05, 0.05], [0.05, 0.05, 0.3, 0.6]])
    z = rng.integers(0, 2, 400)
    X = np.array([rng.multinomial(20, probs[c]) for c in z])
    model = _fit(
        MixtureModel(
            6, emission=Multinomial(4), weights_prior=1e-3, inference="variational",
            random_state=seed, max_iter=2000, tol=1e-9,
        ),
        X,
    )  # fmt: skip
    top = np.argsort(model.weights_)[-2:]
    assert model.weights_[top].sum() >= 0.99
    found = model.emission_posterior_.mean()[top]
    np.testing.assert_allclose(found[np.argsort(found[:, 0])], probs[::-1], atol=0.03)
