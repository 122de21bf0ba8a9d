"""MixtureModel over any family, and PoissonMixture, against references.

- the Gaussian family's mixture equals scikit-learn-style GaussianMixture
  (bayeskit's, with no ridge) from the same start, iteration for iteration;
- the Poisson mixture equals a plain numpy EM written from the textbook
  update (McLachlan and Peel 2000, section 2.8) from the same start, with
  scipy's Poisson log-pmf;
- the objective never decreases; statistics of chunks add to those of all
  rows; partial_fit is one EM step; integer weights are repeated rows.
"""

import copy
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp
from scipy.stats import poisson
from sklearn.exceptions import ConvergenceWarning

from bayeskit import GaussianMixture, MixtureModel, PoissonMixture
from bayeskit.emissions import DIAG, Gaussian
from bayeskit.priors import Gamma


def _counts(rng, n=120, rates=((1.0, 4.0), (9.0, 2.0), (20.0, 12.0))):
    z = rng.integers(len(rates), size=n)
    return rng.poisson(np.asarray(rates)[z]).astype(float)


def _blobs(rng, n=150, d=3):
    z = rng.integers(3, size=n)
    return rng.normal(size=(n, d)) + 4.0 * np.eye(3, d)[z]


@pytest.mark.parametrize("init_params", ["kmeans", "random"])
@pytest.mark.parametrize("seed", range(3))
def test_gaussian_family_equals_gaussian_mixture(init_params, seed):
    """The same triple (node x Gaussian x reg_covar's ridge) through the one
    EM loop gives GaussianMixture's fit at its defaults: parameters, the bound
    and the iterations."""
    rng = np.random.default_rng(seed)
    X = _blobs(rng)
    common = dict(init_params=init_params, random_state=seed, tol=1e-6)
    ref = GaussianMixture(3, **common).fit(X)
    ours = MixtureModel(3, **common).fit(X)
    np.testing.assert_allclose(ours.weights_, ref.weights_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.means_, ref.means_, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(ours.covariances_, ref.covariances_, atol=1e-9)
    assert ours.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(ours.lower_bound_, ref.lower_bound_, rtol=1e-10)
    np.testing.assert_allclose(ours.score_samples(X), ref.score_samples(X), rtol=1e-9)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-9)


def _numpy_poisson_em(X, weights, rates, n_iter):
    """EM for a Poisson mixture as the textbook writes it: responsibilities
    from scipy's log-pmf, then weighted means (no prior)."""
    for _ in range(n_iter):
        log_joint = np.log(weights) + np.stack(
            [poisson.logpmf(X, lam).sum(axis=1) for lam in rates], axis=1
        )
        resp = np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))
        nk = resp.sum(axis=0)
        weights = nk / nk.sum()
        rates = resp.T @ X / nk[:, None]
    return weights, rates


@pytest.mark.parametrize("seed", range(5))
def test_poisson_mixture_equals_textbook_em(seed):
    rng = np.random.default_rng(seed)
    X = _counts(rng)
    start = PoissonMixture(3, max_iter=0, random_state=seed).fit(X)
    for n_iter in (1, 7):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            ours = PoissonMixture(3, max_iter=n_iter, tol=0, random_state=seed).fit(X)
        weights, rates = _numpy_poisson_em(X, start.weights_, start.lambdas_, n_iter)
        np.testing.assert_allclose(ours.weights_, weights, rtol=1e-12)
        np.testing.assert_allclose(ours.lambdas_, rates, rtol=1e-12)
    # The density is the mixture's: scipy's log-pmf summed over the components.
    log_joint = np.log(ours.weights_) + np.stack(
        [poisson.logpmf(X, lam).sum(axis=1) for lam in ours.lambdas_], axis=1
    )
    np.testing.assert_allclose(ours.score_samples(X), logsumexp(log_joint, axis=1))


def test_poisson_mixture_is_the_poisson_family_of_mixture_model(rng):
    X = _counts(rng)
    prior = {"lambdas_prior": 2.0, "lambdas_weight": 0.5}
    named = PoissonMixture(3, random_state=0, **prior).fit(X)
    composed = MixtureModel(
        3, emission="poisson", emission_prior=Gamma(2.0, 0.5), random_state=0
    ).fit(X)
    np.testing.assert_array_equal(named.lambdas_, composed.lambdas_)
    np.testing.assert_array_equal(named.weights_, composed.weights_)


def test_gamma_prior_is_the_posterior_mean(rng):
    """With the prior, the M-step is (alpha + sum r x) / (beta + sum r)."""
    X = _counts(rng)
    m = PoissonMixture(3, lambdas_prior=3.0, lambdas_weight=2.0, random_state=0)
    m.fit(X)
    resp = m.predict_proba(X)  # at convergence: one more step changes little
    s = m.summarize(X)
    np.testing.assert_allclose(s.structure.counts, resp.sum(axis=0), rtol=1e-12)
    expected = (3.0 + resp.T @ X) / (2.0 + resp.sum(axis=0))[:, None]
    after = copy.deepcopy(m).from_stats(s)
    np.testing.assert_allclose(after.lambdas_, expected, rtol=1e-12)


@pytest.mark.parametrize(
    "make, data",
    [
        (lambda s: PoissonMixture(3, random_state=s, max_iter=30, tol=0), _counts),
        (
            lambda s: MixtureModel(
                3, emission=Gaussian(DIAG), random_state=s, max_iter=30, tol=0
            ),
            _blobs,
        ),
    ],
    ids=["poisson", "gaussian-diag"],
)
def test_objective_never_decreases(make, data):
    for seed in range(50):
        X = data(np.random.default_rng(seed))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            bounds = np.asarray(make(seed).fit(X).lower_bounds_)
        assert np.all(np.diff(bounds) >= -1e-10 * np.abs(bounds[1:])), seed


@settings(max_examples=25, deadline=None)
@given(cuts=st.lists(st.integers(1, 119), max_size=4, unique=True))
def test_chunk_statistics_add_to_all_rows(cuts):
    X = _counts(np.random.default_rng(1))
    m = PoissonMixture(3, random_state=0, max_iter=3, tol=1.0).fit(X)
    whole = m.summarize(X)
    parts = sum(m.summarize(c) for c in np.split(X, sorted(cuts)))
    np.testing.assert_allclose(parts.structure.counts, whole.structure.counts)
    np.testing.assert_allclose(parts.emission.sums, whole.emission.sums)
    np.testing.assert_allclose(parts.log_evidence, whole.log_evidence)


def test_first_partial_fit_is_one_em_iteration(rng):
    X = _counts(rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        one = PoissonMixture(3, max_iter=1, tol=0, random_state=0).fit(X)
    step = PoissonMixture(3, random_state=0).partial_fit(X)
    np.testing.assert_allclose(step.lambdas_, one.lambdas_, rtol=1e-12)
    np.testing.assert_allclose(step.weights_, one.weights_, rtol=1e-12)


def test_integer_weights_are_repeated_rows(rng):
    """From the same fitted start (warm start), weights 0..3 equal the rows
    repeated that many times."""
    X = _counts(rng)
    w = rng.integers(0, 4, size=len(X))
    base = PoissonMixture(3, random_state=0).fit(X)
    a = copy.deepcopy(base).set_params(warm_start=True, max_iter=5, tol=0)
    b = copy.deepcopy(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a.fit(X, sample_weight=w)
        b.fit(np.repeat(X, w, axis=0))
    np.testing.assert_allclose(a.lambdas_, b.lambdas_, rtol=1e-10)
    np.testing.assert_allclose(a.lower_bound_, b.lower_bound_, rtol=1e-10)


def test_max_iter_spent_warns_as_scikit_learn(rng):
    X = _counts(rng)
    with pytest.warns(ConvergenceWarning, match="did not converge in 1 iterations"):
        m = PoissonMixture(3, max_iter=1, tol=0, random_state=0).fit(X)
    assert not m.converged_ and m.n_iter_ == 1


def test_sample_draws_the_mixture(rng):
    m = PoissonMixture(2, random_state=0).fit(_counts(rng, rates=((2, 2), (30, 5))))
    m.set_params(random_state=1)
    X, z = m.sample(20000)
    assert np.all(np.diff(z) >= 0)  # grouped by component, as scikit-learn
    np.testing.assert_allclose(np.bincount(z) / len(z), m.weights_, atol=0.02)
    for k in range(2):
        se = np.sqrt(m.lambdas_[k] / (z == k).sum())
        assert np.all(np.abs(X[z == k].mean(axis=0) - m.lambdas_[k]) < 5 * se)


def test_bad_input_names_what_is_wrong(rng):
    X = _counts(rng)
    with pytest.raises(ValueError, match="emission must be one of"):
        MixtureModel(2, emission="weibull").fit(X)
    with pytest.raises(TypeError, match="emission must be"):
        MixtureModel(2, emission=3).fit(X)
    with pytest.raises(ValueError, match="X must hold counts"):
        PoissonMixture(2).fit(X + 0.5)
    with pytest.raises(ValueError, match="X must hold counts"):
        PoissonMixture(2).fit(-X)
    with pytest.raises(ValueError, match=r"X has too few rows.*minimum of 5"):
        PoissonMixture(5).fit(X[:3])


def test_fit_never_mutates_the_input(rng):
    X = _counts(rng)
    before = X.copy()
    w = np.ones(len(X))
    PoissonMixture(2, random_state=0).fit(X, sample_weight=w)
    np.testing.assert_array_equal(X, before)
    np.testing.assert_array_equal(w, 1.0)


def test_counts_beyond_exact_float64_integers_are_refused(rng):
    X = _counts(rng)
    X[0, 0] = 1e300
    with pytest.raises(ValueError, match=r"X holds counts above 2\*\*53"):
        PoissonMixture(2).fit(X)
