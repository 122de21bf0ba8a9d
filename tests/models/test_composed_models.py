"""NaiveBayes and HiddenMarkovModel over any family, against references:
the named estimators built from the same triple, closed forms and scipy."""

import pickle

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm, poisson

from bayeskit import GaussianNB, HiddenMarkovModel, NaiveBayes, PoissonHMM
from bayeskit.emissions import DIAG, Gaussian
from bayeskit.priors import NormalInverseWishart


def _count_classes(rng, n=90):
    y = rng.integers(3, size=n)
    rates = np.array([[1.0, 6.0], [5.0, 2.0], [12.0, 12.0]])
    return rng.poisson(rates[y]).astype(float), y


def test_poisson_naive_bayes_is_the_closed_form(rng):
    """Rates are the weighted class means (the Poisson MLE); the posterior is
    the class prior times scipy's pmf, normalised."""
    X, y = _count_classes(rng)
    w = rng.uniform(0.5, 2.0, size=len(y))
    nb = NaiveBayes(emission="poisson").fit(X, y, sample_weight=w)
    rates = np.stack(
        [np.average(X[y == c], axis=0, weights=w[y == c]) for c in range(3)]
    )
    np.testing.assert_allclose(nb.lambdas_, rates, rtol=1e-12)
    prior = np.array([w[y == c].sum() for c in range(3)]) / w.sum()
    log_joint = np.log(prior) + np.stack(
        [poisson.logpmf(X, r).sum(axis=1) for r in rates], axis=1
    )
    want = np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))
    np.testing.assert_allclose(nb.predict_proba(X), want, rtol=1e-10, atol=1e-14)


def test_diagonal_gaussian_naive_bayes_is_gaussian_nb(rng):
    """With no ridge and no variance smoothing, the same triple."""
    y = rng.integers(3, size=120)
    X = rng.normal(size=(120, 4)) + y[:, None]
    flat = NormalInverseWishart.from_covariance(1.0, 0.0)
    ours = NaiveBayes(emission=Gaussian(DIAG), emission_prior=flat).fit(X, y)
    ref = GaussianNB(var_smoothing=0.0).fit(X, y)
    np.testing.assert_allclose(ours.means_, ref.theta_, rtol=1e-12)
    np.testing.assert_allclose(ours.covariances_, ref.var_, rtol=1e-12)
    np.testing.assert_allclose(
        ours.predict_log_proba(X), ref.predict_log_proba(X), rtol=1e-10, atol=1e-12
    )
    # And the densities are scipy's.
    joint = ours.predict_joint_log_proba(X[:5])
    dens = np.stack(
        [
            norm.logpdf(X[:5], m, np.sqrt(v)).sum(axis=1)
            for m, v in zip(ref.theta_, ref.var_)
        ],
        axis=1,
    )
    np.testing.assert_allclose(joint, dens + ours.class_log_prior_, rtol=1e-10)


def test_the_name_gaussian_is_the_naive_form(rng):
    y = rng.integers(2, size=50)
    X = rng.normal(size=(50, 3))
    nb = NaiveBayes().fit(X, y)
    assert nb.covariances_.shape == (2, 3)  # one variance per class and feature


@pytest.mark.parametrize("seed", range(4))
def test_poisson_hmm_is_the_poisson_family_of_hidden_markov_model(seed):
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.poisson(lam, (40, 2)) for lam in (1, 9, 3, 9)])
    lengths = [70, 90]
    ours = HiddenMarkovModel(3, emission="poisson", random_state=seed, n_iter=8)
    ref = PoissonHMM(3, random_state=seed, n_iter=8, params="stl", init_params="stl")
    ours.fit(X, lengths)
    ref.fit(X, lengths)
    np.testing.assert_allclose(ours.lambdas_, ref.lambdas_, rtol=1e-12)
    np.testing.assert_allclose(ours.transmat_, ref.transmat_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(
        ours.score(X, lengths), ref.score(X, lengths), rtol=1e-12
    )
    np.testing.assert_array_equal(ours.predict(X, lengths), ref.predict(X, lengths))


def test_fitted_family_attributes_and_pickling(rng):
    X, y = _count_classes(rng)
    nb = NaiveBayes(emission="poisson").fit(X, y)
    assert nb.emission_params_.lambdas is nb.lambdas_
    with pytest.raises(AttributeError, match="no attribute 'means_'"):
        nb.means_  # noqa: B018
    with pytest.raises(AttributeError):
        NaiveBayes(emission="poisson").emission_params_  # noqa: B018
    again = pickle.loads(pickle.dumps(nb))
    np.testing.assert_array_equal(again.predict_proba(X), nb.predict_proba(X))


def test_bad_input_is_named(rng):
    X, y = _count_classes(rng)
    with pytest.raises(ValueError, match="X must hold counts"):
        NaiveBayes(emission="poisson").fit(X + 0.25, y)
    with pytest.raises(ValueError, match="emission must be one of"):
        HiddenMarkovModel(2, emission="zipf").fit(X)
    with pytest.raises(ValueError, match="X must hold counts"):
        HiddenMarkovModel(2, emission="poisson").fit(-X)


def test_hidden_markov_model_samples_its_chain_and_family():
    rng = np.random.default_rng(3)
    X = np.concatenate([rng.poisson(lam, (100, 1)) for lam in (2, 20, 2, 20)])
    hmm = HiddenMarkovModel(2, emission="poisson", random_state=0).fit(X)
    Y, z = hmm.sample(4000, random_state=1)
    assert Y.shape == (4000, 1) and set(np.unique(z)) <= {0, 1}
    for k in range(2):
        rate = hmm.lambdas_[k, 0]
        se = np.sqrt(rate / (z == k).sum())
        assert abs(Y[z == k].mean() - rate) < 5 * se
    # The chain's transitions, counted on the drawn path.
    counts = np.zeros((2, 2))
    np.add.at(counts, (z[:-1], z[1:]), 1)
    np.testing.assert_allclose(
        counts / counts.sum(axis=1, keepdims=True), hmm.transmat_, atol=0.05
    )


def test_too_few_steps_for_the_states_is_named():
    with pytest.raises(ValueError, match=r"X has too few steps.*n_samples = 1"):
        HiddenMarkovModel(2).fit(np.zeros((1, 1)))
