"""The classifiers that fit one model per class (HMMClassifier,
GaussianMixtureClassifier): their statistics add, and merging the statistics of
chunks is what the per-class models' own summarize / from_stats / partial_fit
give on each class's rows."""

import copy
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import BaseEstimator

from bayeskit import (
    CategoricalHMM,
    GaussianHMM,
    GaussianMixture,
    GaussianMixtureClassifier,
    HMMClassifier,
)
from bayeskit._base.per_class import PerClassStats
from bayeskit._base.sequences import _concatenate


def quiet(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


def symbol_sequences(rng, n=12):
    """Sequences of two classes: 'a' mostly repeats its symbol, 'b' alternates."""
    seqs, y = [], []
    for i in range(n):
        length = int(rng.integers(4, 9))
        if i % 2:
            s = np.cumsum(rng.random(length) < 0.9) % 3
            y.append("b")
        else:
            s = np.cumsum(rng.random(length) < 0.1) % 3
            y.append("a")
        seqs.append(s)
    return seqs, np.array(y)


def blobs(rng, n=60):
    centres = np.array([[0, 0], [5, 5], [0, 5], [5, 0]], dtype=float)
    X = np.vstack([rng.normal(c, 0.7, size=(n, 2)) for c in centres])
    return X, np.repeat([0, 0, 1, 1], n)


def hmm_params(model):
    return [model.startprob_, model.transmat_, model.emissionprob_]


# -- the statistics value ----------------------------------------------------------
def test_per_class_stats_add_class_by_class_and_none_is_zero():
    """None (a class with no rows) is the zero: x + None == x; the sum is
    associative and commutative entry by entry, and sum() starts from 0."""
    a = PerClassStats((1.0, None, 3.0))
    b = PerClassStats((None, 2.0, 4.0))
    c = PerClassStats((5.0, 6.0, None))
    assert (a + b).models == (1.0, 2.0, 7.0)
    assert ((a + b) + c).models == (a + (b + c)).models == (6.0, 8.0, 7.0)
    assert (a + b).models == (b + a).models
    assert sum([a, b, c]).models == (6.0, 8.0, 7.0)
    assert (a + PerClassStats.zeros(3)).models == a.models
    with pytest.raises(TypeError):
        a + PerClassStats((1.0,))  # other classes: no sum


# -- HMMClassifier: summarize, from_stats, partial_fit -----------------------------
def test_hmm_classifier_chunk_statistics_merge_to_one_baum_welch_step(rng):
    """from_stats of the summed statistics of three chunks gives every class's
    HMM the parameters of its own from_stats(summarize(all its sequences)):
    one Baum-Welch iteration over all the data, whatever the chunking."""
    seqs, y = symbol_sequences(rng, 15)
    clf = quiet(
        lambda: HMMClassifier(CategoricalHMM(2, n_iter=5, random_state=0)).fit(seqs, y)
    )
    reference = []
    for c, model in enumerate(clf.models_):
        own = copy.deepcopy(model)
        Xc, lengths = _concatenate(
            [s for s, lab in zip(seqs, y) if lab == clf.classes_[c]]
        )
        reference.append(own.from_stats(own.summarize(Xc, lengths)))
    parts = np.array_split(rng.permutation(len(y)), 3)
    chunks = [clf.summarize([seqs[i] for i in p], y[p]) for p in parts]
    clf.from_stats(sum(chunks[1:], chunks[0]))
    assert_allclose(clf.class_count_, [np.sum(y == "a"), np.sum(y == "b")])
    for model, ref in zip(clf.models_, reference):
        for ours, theirs in zip(hmm_params(model), hmm_params(ref)):
            assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)


def test_hmm_classifier_fit_is_from_stats_of_summarize(rng):
    """On a classifier not fitted yet, summarize fits every class's HMM on its
    chunk, and from_stats of those statistics is the fitted classifier."""
    seqs, y = symbol_sequences(rng)
    fitted = quiet(
        lambda: HMMClassifier(CategoricalHMM(2, n_iter=5, random_state=0)).fit(seqs, y)
    )
    reduced = HMMClassifier(CategoricalHMM(2, n_iter=5, random_state=0))
    quiet(lambda: reduced.from_stats(reduced.summarize(seqs, y)))
    assert_allclose(reduced.predict_proba(seqs), fitted.predict_proba(seqs))


def test_hmm_classifier_partial_fit_is_each_class_hmm_partial_fit(rng):
    """partial_fit of a chunk is, class by class, the HMM's own partial_fit
    (incremental EM) on the class's sequences of the chunk; a class with no
    sequence in the chunk keeps its HMM; the class counts add."""
    seqs, y = symbol_sequences(rng, 16)
    first, second = np.arange(10), np.arange(10, 16)
    clf = HMMClassifier(CategoricalHMM(2, n_iter=5, random_state=0))
    quiet(lambda: clf.partial_fit([seqs[i] for i in first], y[first]))
    before = copy.deepcopy(clf.models_)
    only_a = [i for i in second if y[i] == "a"]
    clf.partial_fit([seqs[i] for i in only_a], y[only_a])
    Xa, lengths = _concatenate([seqs[i] for i in only_a])
    expected_a = copy.deepcopy(before[0]).partial_fit(Xa, lengths)
    for ours, theirs in zip(hmm_params(clf.models_[0]), hmm_params(expected_a)):
        assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)
    for ours, theirs in zip(hmm_params(clf.models_[1]), hmm_params(before[1])):
        assert_array_equal(ours, theirs)
    assert_allclose(
        clf.class_count_,
        [np.sum(y[first] == "a") + len(only_a), np.sum(y[first] == "b")],
    )


def test_hmm_classifier_summarize_weights_are_repeated_sequences(rng):
    """Integer sample weights in summarize count a sequence that many times:
    the statistics equal those of the repeated sequences."""
    seqs, y = symbol_sequences(rng)
    clf = quiet(
        lambda: HMMClassifier(CategoricalHMM(2, n_iter=5, random_state=0)).fit(seqs, y)
    )
    w = np.arange(len(y)) % 3
    weighted = clf.summarize(seqs, y, sample_weight=w)
    repeated = clf.summarize(
        [s for s, k in zip(seqs, w) for _ in range(k)], np.repeat(y, w)
    )
    assert_allclose(weighted.class_weight, repeated.class_weight)
    for a, b in zip(weighted.emission.models, repeated.emission.models):
        assert_allclose(a.structure.transitions, b.structure.transitions, rtol=1e-12)
        assert_allclose(a.log_evidence, b.log_evidence, rtol=1e-12)


def test_hmm_classifier_from_stats_refuses_other_statistics(rng):
    seqs, y = symbol_sequences(rng)
    clf = quiet(
        lambda: HMMClassifier(CategoricalHMM(2, n_iter=5, random_state=0)).fit(seqs, y)
    )
    X, labels = blobs(rng)
    gmc = GaussianMixtureClassifier(random_state=0).fit(X, labels)
    with pytest.raises(TypeError, match=r"stats\.emission must be the PerClassStats"):
        clf.from_stats(gmc.stats_)
    with pytest.raises(TypeError, match=r"must be the _ClassMixtureStats"):
        gmc.from_stats(clf.stats_)
    # Both estimators are as they were.
    assert type(clf.stats_.emission) is PerClassStats
    assert_allclose(clf.predict_proba(seqs).sum(axis=1), 1.0)


def test_hmm_classifier_statistics_with_gaussian_template(rng):
    """Any bayeskit HMM as template: with GaussianHMM, the merged chunks are
    one Baum-Welch iteration of every class's HMM too."""
    seqs = [
        rng.normal(i % 2 * 3, 1, size=(int(rng.integers(5, 9)), 2)) for i in range(10)
    ]
    y = np.arange(10) % 2
    clf = quiet(
        lambda: HMMClassifier(GaussianHMM(2, n_iter=5, random_state=0)).fit(seqs, y)
    )
    reference = []
    for c, model in enumerate(clf.models_):
        Xc, lengths = _concatenate([s for s, lab in zip(seqs, y) if lab == c])
        own = copy.deepcopy(model)
        reference.append(own.from_stats(own.summarize(Xc, lengths)))
    clf.from_stats(clf.summarize(seqs[:4], y[:4]) + clf.summarize(seqs[4:], y[4:]))
    for model, ref in zip(clf.models_, reference):
        assert_allclose(model.means_, ref.means_, rtol=1e-12)
        assert_allclose(model.covars_, ref.covars_, rtol=1e-12)
        assert_allclose(model.transmat_, ref.transmat_, rtol=1e-12)


class _Unigram(BaseEstimator):
    """A sequence model with only fit and score_sequences: symbol frequencies
    (add-one smoothed over the symbols 0, 1, 2), steps independent."""

    def fit(self, X, lengths=None):
        counts = np.bincount(np.asarray(X).ravel(), minlength=3) + 1.0
        self.log_freq_ = np.log(counts / counts.sum())
        return self

    def score_sequences(self, X, lengths=None):
        steps = self.log_freq_[np.asarray(X).ravel()]
        return np.add.reduceat(steps, np.r_[0, np.cumsum(lengths)[:-1]])


def test_hmm_classifier_takes_a_template_without_statistics(rng):
    """A template with only fit and score_sequences still classifies (the
    posterior is the brute-force normalised prior times likelihood), and the
    classifier then offers no summarize / from_stats / partial_fit."""
    seqs, y = symbol_sequences(rng)
    clf = HMMClassifier(_Unigram()).fit(seqs, y)
    assert not hasattr(clf, "partial_fit") and not hasattr(clf, "summarize")
    joint = []
    for c in clf.classes_:
        counts = (
            np.bincount(
                np.concatenate([s for s, lab in zip(seqs, y) if lab == c]), minlength=3
            )
            + 1.0
        )
        log_freq = np.log(counts / counts.sum())
        joint.append([log_freq[s].sum() + np.log(np.mean(y == c)) for s in seqs])
    joint = np.array(joint).T
    expected = np.exp(joint - np.logaddexp.reduce(joint, axis=1, keepdims=True))
    assert_allclose(clf.predict_proba(seqs), expected, rtol=1e-12)
    assert hasattr(HMMClassifier(CategoricalHMM()), "partial_fit")


def test_partial_fit_needs_rows_of_every_declared_class_first(rng):
    """The first partial_fit fits every class's model: a class declared in
    ``classes`` with no row in that chunk is a ValueError naming it."""
    seqs, y = symbol_sequences(rng)
    with pytest.raises(ValueError, match="class 'c' has no rows of positive"):
        HMMClassifier(CategoricalHMM(1)).partial_fit(seqs, y, classes=["a", "b", "c"])
    X, labels = blobs(rng)
    with pytest.raises(ValueError, match="class 1 has no rows of positive"):
        GaussianMixtureClassifier().partial_fit(
            X[labels == 0], labels[labels == 0], classes=[0, 1]
        )


# -- GaussianMixtureClassifier -------------------------------------------------------
def test_mixture_classifier_partial_fit_keeps_a_class_absent_from_the_chunk(rng):
    """A chunk with rows of one class only: that class's mixture takes the step
    of GaussianMixture.partial_fit on them, the other keeps its parameters."""
    X, y = blobs(rng)
    clf = GaussianMixtureClassifier(2, random_state=0).fit(X, y)
    before = copy.deepcopy(clf.mixtures_)
    chunk = rng.normal([5, 5], 0.7, size=(20, 2))
    clf.partial_fit(chunk, np.zeros(20, dtype=int))
    expected = copy.deepcopy(before[0]).partial_fit(chunk)
    assert_allclose(clf.mixtures_[0].means_, expected.means_, rtol=1e-12)
    assert_allclose(clf.mixtures_[0].covariances_, expected.covariances_, rtol=1e-12)
    assert_array_equal(clf.mixtures_[1].means_, before[1].means_)
    assert_allclose(clf.class_count_, [np.sum(y == 0) + 20, np.sum(y == 1)])


@pytest.mark.parametrize(
    "n_components",
    [
        [1.5, 1],
        [2.0, 1],
        [0, 2],
        [-1, 2],
        [True, 1],
        ["2", 1],
        [None, 1],
        [[1, 2], [1]],
        np.array([1.5, 2.5]),
    ],
)
def test_mixture_classifier_n_components_per_class_are_positive_integers(
    rng, n_components
):
    """An array of n_components is positive integers, one per class: anything
    else (a fraction, which would be truncated, zero, a bool, a string) is a
    ValueError naming n_components, before any mixture is fitted."""
    X, y = blobs(rng)
    clf = GaussianMixtureClassifier(n_components, random_state=0)
    with pytest.raises(ValueError, match="n_components"):
        clf.fit(X, y)
    assert not hasattr(clf, "mixtures_")


@pytest.mark.parametrize(
    "n_components", [[1, 2, 3], [2], [[1, 2]], np.ones((2, 1), int)]
)
def test_mixture_classifier_n_components_one_per_class(rng, n_components):
    X, y = blobs(rng)
    with pytest.raises(
        ValueError, match=r"n_components must be one number or one per class \(2\)"
    ):
        GaussianMixtureClassifier(n_components, random_state=0).fit(X, y)


def test_mixture_classifier_n_components_of_each_class(rng):
    """Integers of any integer type, one per class, give each class's mixture
    its number of components; a 0-d array is one number for every class."""
    X, y = blobs(rng)
    clf = GaussianMixtureClassifier([np.int64(3), 1], random_state=0).fit(X, y)
    assert [gm.n_components for gm in clf.mixtures_] == [3, 1]
    assert [gm.means_.shape[0] for gm in clf.mixtures_] == [3, 1]
    clf = GaussianMixtureClassifier(np.array(2), random_state=0).fit(X, y)
    assert [gm.n_components for gm in clf.mixtures_] == [2, 2]
    with pytest.raises(ValueError, match="n_components"):
        GaussianMixtureClassifier(np.array(1.5), random_state=0).fit(X, y)


def test_mixture_classifier_is_a_mixture_per_class(rng):
    """Each class's mixture is GaussianMixture fitted on the class's rows with
    the classifier's random state drawn in class order, and the joint
    log-likelihood is the log prior plus its score_samples."""
    X, y = blobs(rng)
    clf = GaussianMixtureClassifier(2, random_state=0).fit(X, y)
    state = np.random.RandomState(0)
    joint = []
    for c in (0, 1):
        gm = GaussianMixture(2, random_state=state).fit(X[y == c])
        assert_allclose(clf.mixtures_[c].means_, gm.means_, rtol=1e-12)
        joint.append(gm.score_samples(X) + np.log(np.mean(y == c)))
    assert_allclose(clf.predict_joint_log_proba(X), np.column_stack(joint), rtol=1e-10)
