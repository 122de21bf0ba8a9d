"""The count families on sparse input: the multinomial family's statistics,
likelihood and m-estimate, and the Bernoulli family, against scipy.stats."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats as ss

import bayeskit
from bayeskit.emissions import Bernoulli, Multinomial, MultinomialParams
from bayeskit.emissions._count_kernels import CountMatrix, class_sums, scores
from bayeskit.priors import MEstimate


@pytest.fixture
def counts():
    rng = np.random.default_rng(0)
    X = rng.poisson(0.7, size=(40, 6))
    X[3] = 0  # an empty document
    labels = rng.integers(0, 3, 40)
    return X, labels


@pytest.mark.parametrize("layout", [np.asarray, sp.csr_matrix, sp.csc_array])
def test_multinomial_log_likelihood_is_scipy_logpmf(counts, layout):
    X, _ = counts
    prob = np.random.default_rng(1).dirichlet(np.ones(6), size=3)
    got = Multinomial(6).log_likelihood(layout(X), MultinomialParams(prob))
    want = np.array([[ss.multinomial.logpmf(x, x.sum(), p) for p in prob] for x in X])
    assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("layout", [sp.csr_matrix, sp.csc_matrix])
def test_class_sums_are_one_hot_products(counts, layout):
    X, labels = counts
    w = np.random.default_rng(2).uniform(0, 2, len(labels))
    Y = np.zeros((len(labels), 3))
    Y[np.arange(len(labels)), labels] = w
    got = Multinomial(6).stats(layout(X), Y, labels)
    assert_allclose(got.counts, Y.T @ X, rtol=1e-14)
    assert_allclose(got.weight, Y.sum(axis=0))
    soft = np.random.default_rng(3).dirichlet(np.ones(3), size=len(labels))
    assert_allclose(Multinomial(6).stats(layout(X), soft).counts, soft.T @ X)
    # statistics merge: two halves add up to the whole
    a = Multinomial(6).stats(layout(X[:20]), Y[:20], labels[:20])
    b = Multinomial(6).stats(layout(X[20:]), Y[20:], labels[20:])
    assert_allclose((a + b).counts, got.counts, rtol=1e-14)


def test_m_estimate_zero_is_maximum_likelihood(counts):
    X, labels = counts
    Y = np.eye(3)[labels]
    st = Multinomial(6).stats(X, Y, labels)
    params = Multinomial(6).map_params(st, MEstimate(0.0, np.full(6, 1 / 6)))
    assert_allclose(
        params.emissionprob, st.counts / st.counts.sum(axis=1, keepdims=True)
    )
    assert_allclose(params.log_emissionprob(), np.log(params.emissionprob))


@pytest.mark.parametrize("layout", [np.asarray, sp.csr_array, sp.csc_matrix])
def test_bernoulli_log_likelihood_is_scipy_bernoulli(counts, layout):
    X, labels = counts
    B = (X > 0).astype(int)
    family = Bernoulli(6, threshold=0.0)
    st = family.stats(layout(X), np.eye(3)[labels], labels)
    assert_array_equal(st.counts, np.vstack([B[labels == c].sum(0) for c in range(3)]))
    params = family.map_params(st, MEstimate(np.full(6, 2.0), np.full(6, 0.3)))
    theta = np.exp(params.log_prob)
    assert_allclose(np.exp(params.log_neg), 1 - theta, rtol=1e-12)
    want = np.array([[ss.bernoulli.logpmf(b, t).sum() for t in theta] for b in B])
    assert_allclose(family.log_likelihood(layout(X), params), want, rtol=1e-12)


def test_kernels_skip_zeros_and_binarize_without_copy():
    X = sp.csr_matrix(np.array([[0.0, 2.0, 0.5], [0.0, 0.0, 0.0]]))
    X.data[0] = 0.0  # an explicit zero in storage is still a zero
    C = CountMatrix.of(X)
    W = np.array([[-np.inf, 0.0], [1.0, 2.0], [3.0, -np.inf]])
    got = scores(C, W)
    assert not np.isnan(got).any()
    assert_array_equal(got, [[0.5 * 3.0, -np.inf], [0.0, 0.0]])
    assert_array_equal(scores(C, W, threshold=1.0), [[0.0, 0.0], [0.0, 0.0]])
    assert_array_equal(
        class_sums(C, np.array([1, 0]), np.array([2.0, 1.0]), 2, threshold=0.4),
        [[0.0, 0.0, 0.0], [0.0, 0.0, 2.0]],
    )
    assert X.data[0] == 0.0 and X.data[1] == 0.5  # the caller's matrix as it was


def test_integer_counts_are_read_without_a_copy(counts):
    X, labels = counts
    Xi = sp.csr_matrix(X.astype(np.int64))
    C = CountMatrix.of(Xi)
    assert C.data is Xi.data and C.indices is Xi.indices  # CountVectorizer's output
    W = np.random.default_rng(4).normal(size=(6, 3))
    assert_array_equal(scores(C, W), scores(CountMatrix.of(Xi.astype(float)), W))
    w = np.ones(len(labels))
    assert_array_equal(
        class_sums(C, labels, w, 3), class_sums(CountMatrix.of(X), labels, w, 3)
    )


@pytest.mark.parametrize("bad", [2.0, 0.5, -1.0])
@pytest.mark.parametrize("cls", [bayeskit.HiddenMarkovModel, bayeskit.MixtureModel])
def test_bernoulli_without_threshold_refuses_values_other_than_0_and_1(cls, bad):
    # Read as they are, such values would weigh a feature's log-odds by
    # themselves: a silent wrong likelihood, or NaN inside the fit.
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(30, 3)).astype(float)
    fitted = cls(2, emission=Bernoulli(None), random_state=0).fit(X)
    X_bad = X.copy()
    X_bad[3, 1] = bad
    with pytest.raises(ValueError, match="X must hold 0/1 values"):
        cls(2, emission=Bernoulli(None), random_state=0).fit(X_bad)
    with pytest.raises(ValueError, match="X must hold 0/1 values"):
        fitted.score(X_bad)
    # With a threshold, the values read as presences (above it) or absences.
    cut = cls(2, emission=Bernoulli(None, threshold=0.5), random_state=0)
    assert np.isfinite(cut.fit(X_bad).score(X_bad))
