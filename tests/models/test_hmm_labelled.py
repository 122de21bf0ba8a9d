"""Partly labelled hidden Markov models: known states as evidence on the chain.

References are computed here, independently of the package: the counts of a
fully labelled fit by hand (bincounts and the priors' MAP formulas), the
E-step of a partly labelled sequence by enumerating every state path that
agrees with the labels, and unlabelled Baum-Welch for "none known".
"""

import copy
import dataclasses
import itertools
import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm, poisson

from bayeskit import (
    GMMHMM,
    CategoricalHMM,
    GaussianHMM,
    HiddenMarkovModel,
    MultinomialHMM,
    PoissonHMM,
)


def chain(hmm, rng, k):
    hmm.startprob_ = rng.dirichlet(np.ones(k))
    hmm.transmat_ = rng.dirichlet(np.ones(k), size=k)
    return hmm


def labelled_sample(rng, k, kind, lengths):
    """Sequences drawn from a random model of ``kind`` with ``k`` states, and
    their states."""
    if kind == "categorical":
        true = chain(CategoricalHMM(k, n_features=5), rng, k)
        true.emissionprob_ = rng.dirichlet(np.ones(5), size=k)
    elif kind == "gaussian":
        true = chain(GaussianHMM(k, "diag"), rng, k)
        true.means_ = rng.normal(size=(k, 2)) * 3
        true.covars_ = rng.uniform(0.5, 2, size=(k, 2))
    elif kind == "poisson":
        true = chain(PoissonHMM(k), rng, k)
        true.lambdas_ = rng.uniform(0.5, 8, size=(k, 2))
    else:  # multinomial
        true = chain(MultinomialHMM(k, n_trials=6), rng, k)
        true.emissionprob_ = rng.dirichlet(np.ones(4), size=k)
    Xs, Zs = zip(*(true.sample(n, random_state=rng) for n in lengths))
    return np.concatenate(Xs), np.concatenate(Zs)


def hand_chain_counts(Z, lengths, k):
    starts = np.cumsum(lengths) - lengths
    start = np.bincount(Z[starts], minlength=k).astype(float)
    trans = np.zeros((k, k))
    for s, n in zip(starts, lengths):
        for t in range(s, s + n - 1):
            trans[Z[t], Z[t + 1]] += 1
    return start, trans


def dirichlet_map(counts, alpha):
    top = np.maximum(counts + alpha - 1, 0)
    return top / top.sum(axis=-1, keepdims=True)


LENGTHS = [40, 25, 60, 35]


@pytest.mark.parametrize(
    "kind", ["categorical", "gaussian", "poisson", "multinomial", "model"]
)
@pytest.mark.parametrize("seed", range(3))
def test_all_known_is_the_counts_map(kind, seed):
    rng = np.random.RandomState(seed)
    k = 3
    sample_kind = "poisson" if kind == "model" else kind
    X, Z = labelled_sample(rng, k, sample_kind, LENGTHS)
    a_s, a_t = 1.5, 2.0
    common = dict(startprob_prior=a_s, transmat_prior=a_t, random_state=seed)
    start, trans = hand_chain_counts(Z, LENGTHS, k)
    if kind == "categorical":
        hmm = CategoricalHMM(k, n_features=5, emissionprob_prior=1.7, **common)
        counts = np.zeros((k, 5))
        np.add.at(counts, (Z, X[:, 0]), 1)
        expected = {"emissionprob_": dirichlet_map(counts, 1.7)}
    elif kind == "gaussian":
        hmm = GaussianHMM(k, "diag", covars_prior=0.3, **common)
        means = np.array([X[Z == j].mean(0) for j in range(k)])
        scatter = np.array([((X[Z == j] - means[j]) ** 2).sum(0) for j in range(k)])
        n = np.bincount(Z, minlength=k)[:, None]
        # hmmlearn's diagonal MAP with covars_weight=1, means_weight=0.
        expected = {"means_": means, "covars_": (0.3 + scatter) / n}
    elif kind == "poisson":
        hmm = PoissonHMM(k, **common)
        expected = {"lambdas_": np.array([X[Z == j].mean(0) for j in range(k)])}
    elif kind == "multinomial":
        hmm = MultinomialHMM(k, n_trials=6, **common)
        counts = np.array([X[Z == j].sum(0) for j in range(k)], dtype=float)
        expected = {"emissionprob_": counts / counts.sum(1, keepdims=True)}
    else:
        hmm = HiddenMarkovModel(k, emission="poisson", **common)
        expected = {"lambdas_": np.array([X[Z == j].mean(0) for j in range(k)])}
    hmm.fit(X, LENGTHS, states=Z)
    assert hmm.n_iter_ == 1 and hmm.converged_
    np.testing.assert_allclose(hmm.startprob_, dirichlet_map(start, a_s), atol=1e-12)
    np.testing.assert_allclose(hmm.transmat_, dirichlet_map(trans, a_t), atol=1e-12)
    for name, value in expected.items():
        got = getattr(hmm, name)
        if name == "covars_":  # hmmlearn's covars_ of 'diag' is the full matrices
            got = np.diagonal(got, axis1=1, axis2=2)
        np.testing.assert_allclose(got, value, rtol=1e-12, atol=1e-12)
    # The statistics are the counts, their evidence the joint likelihood at
    # the fitted parameters; summarize with every state known (the clamped
    # forward-backward) gives the same counts.
    np.testing.assert_allclose(hmm.stats_.structure.transitions, trans, atol=1e-12)
    assert hmm.stats_.log_evidence == pytest.approx(hmm.score(X, LENGTHS, states=Z))
    again = hmm.summarize(X, LENGTHS, states=Z)
    np.testing.assert_allclose(again.structure.transitions, trans, atol=1e-9)
    np.testing.assert_allclose(again.structure.start, start, atol=1e-9)


def test_all_known_gmmhmm_chain_is_the_counts():
    # The states known, the mixture's components are still latent: EM runs
    # on them, and the chain's tables are the counts' from the first step.
    rng = np.random.RandomState(0)
    X, Z = labelled_sample(rng, 2, "gaussian", LENGTHS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hmm = GMMHMM(2, n_mix=2, random_state=0, n_iter=20).fit(X, LENGTHS, states=Z)
    start, trans = hand_chain_counts(Z, LENGTHS, 2)
    np.testing.assert_allclose(hmm.startprob_, start / start.sum(), atol=1e-12)
    np.testing.assert_allclose(
        hmm.transmat_, trans / trans.sum(1, keepdims=True), atol=1e-12
    )
    assert np.all(np.diff(hmm.monitor_.history) >= -1e-9)


MAKERS = {
    "categorical": lambda s: CategoricalHMM(3, n_features=5, random_state=s),
    "gaussian": lambda s: GaussianHMM(3, "diag", random_state=s),
    "poisson": lambda s: PoissonHMM(3, random_state=s),
    "multinomial": lambda s: MultinomialHMM(3, n_trials=6, random_state=s),
    "gmm": lambda s: GMMHMM(2, n_mix=2, random_state=s),
    "model": lambda s: HiddenMarkovModel(3, emission="gaussian", random_state=s),
}


@pytest.mark.parametrize("kind", list(MAKERS))
@pytest.mark.parametrize("unknown", [-1, np.nan])
def test_none_known_is_baum_welch_bit_for_bit(kind, unknown):
    rng = np.random.RandomState(1)
    sample = {"gmm": "gaussian", "model": "gaussian"}.get(kind, kind)
    X, _ = labelled_sample(rng, 3, sample, LENGTHS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = MAKERS[kind](0).fit(X, LENGTHS)
        states = np.full(len(X), unknown)
        labelled = MAKERS[kind](0).fit(X, LENGTHS, states=states)
    assert plain.monitor_.history == labelled.monitor_.history
    for name in ("startprob_", "transmat_", *plain._param_names.values()):
        assert same(getattr(plain, name), getattr(labelled, name)), name


def same(a, b):
    """Bit-for-bit equality of arrays, or of every field of parameters."""
    if dataclasses.is_dataclass(a):
        return all(
            same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
        )
    return np.array_equal(a, b)


def enumerate_paths(log_start, log_trans, log_emit, labels):
    """log evidence, step posteriors and expected transitions of one sequence
    by summing over every state path that agrees with the known labels."""
    T, k = log_emit.shape
    joint, paths = [], []
    for path in itertools.product(range(k), repeat=T):
        path = np.array(path)
        known = labels >= 0
        if np.any(path[known] != labels[known]):
            continue
        lp = log_start[path[0]] + log_emit[np.arange(T), path].sum()
        lp += log_trans[path[:-1], path[1:]].sum()
        joint.append(lp)
        paths.append(path)
    joint = np.array(joint)
    evidence = logsumexp(joint)
    w = np.exp(joint - evidence)
    gamma = np.zeros((T, k))
    xi = np.zeros((k, k))
    for weight, path in zip(w, paths):
        gamma[np.arange(T), path] += weight
        np.add.at(xi, (path[:-1], path[1:]), weight)
    return evidence, gamma, xi


def tiny(kind, rng, k):
    if kind == "categorical":
        hmm = chain(CategoricalHMM(k, n_features=3, init_params=""), rng, k)
        hmm.emissionprob_ = rng.dirichlet(np.ones(3), size=k)
    elif kind == "gaussian":
        hmm = chain(GaussianHMM(k, "diag", init_params=""), rng, k)
        hmm.means_ = rng.normal(size=(k, 1)) * 2
        hmm.covars_ = rng.uniform(0.5, 2, size=(k, 1))
    else:
        hmm = chain(PoissonHMM(k, init_params=""), rng, k)
        hmm.lambdas_ = rng.uniform(0.5, 5, size=(k, 1))
    return hmm


def log_emission(hmm, kind, X):
    if kind == "categorical":
        gap = np.isnan(X[:, 0])
        codes = np.where(gap, 0, X[:, 0]).astype(int)
        out = np.log(hmm.emissionprob_[:, codes].T)
        out[gap] = np.nan  # (a gap's message is 1: made 0 below)
        return out
    if kind == "gaussian":
        sd = np.sqrt(hmm.covars_[:, :, 0] if hmm.covars_.ndim == 3 else hmm.covars_)
        return norm.logpdf(X[:, :1], hmm.means_[:, 0], sd[:, 0])
    return poisson.logpmf(X[:, :1], hmm.lambdas_[:, 0])


@pytest.mark.parametrize("kind", ["categorical", "gaussian", "poisson"])
@pytest.mark.parametrize("seed", range(8))
def test_e_step_equals_enumeration(kind, seed):
    rng = np.random.RandomState(seed)
    k = 2 + seed % 2
    hmm = tiny(kind, rng, k)
    lengths = [rng.randint(2, 7), rng.randint(1, 7)]
    Xs, _ = zip(*(hmm.sample(n, random_state=rng) for n in lengths))
    X = np.concatenate(Xs)
    if kind != "poisson":
        X = X.astype(float)
        X[rng.rand(len(X)) < 0.15] = np.nan  # gaps, with or without a label
    labels = np.where(rng.rand(len(X)) < 0.4, rng.randint(0, k, len(X)), -1)
    hmm.n_features = 3 if kind == "categorical" else 1
    stats = hmm.summarize(X, lengths, states=labels)
    log_emit = np.nan_to_num(log_emission(hmm, kind, X), nan=0.0)
    log_start, log_trans = np.log(hmm.startprob_), np.log(hmm.transmat_)
    evidence, start, xi, gammas = 0.0, np.zeros(k), np.zeros((k, k)), []
    for s, n in zip(np.cumsum(lengths) - lengths, lengths):
        e, g, x = enumerate_paths(
            log_start, log_trans, log_emit[s : s + n], labels[s : s + n]
        )
        evidence += e
        start += g[0]
        xi += x
        gammas.append(g)
    gamma = np.concatenate(gammas)
    assert stats.log_evidence == pytest.approx(evidence, rel=1e-10)
    assert hmm.score(X, lengths, states=labels) == pytest.approx(evidence, rel=1e-10)
    np.testing.assert_allclose(stats.structure.start, start, atol=1e-10)
    np.testing.assert_allclose(stats.structure.transitions, xi, atol=1e-10)
    np.testing.assert_allclose(stats.structure.occupancy, gamma.sum(0), atol=1e-10)
    np.testing.assert_allclose(
        hmm.predict_proba(X, lengths).sum(), len(X)
    )  # predict ignores the labels: unchanged
    if kind == "categorical":  # the folded table: expected symbol counts
        expected = np.zeros((3, k))
        seen = ~np.isnan(X[:, 0])
        np.add.at(expected, X[seen, 0].astype(int), gamma[seen])
        np.testing.assert_allclose(stats.emission.counts, expected, atol=1e-10)


@pytest.mark.parametrize("kind", ["categorical", "gaussian", "poisson"])
def test_objective_never_decreases(kind):
    for seed in range(50):
        rng = np.random.RandomState(seed)
        X, Z = labelled_sample(rng, 3, kind, [30, 20])
        labels = np.where(rng.rand(len(Z)) < 0.2, Z, -1)
        hmm = MAKERS[kind](seed).set_params(n_iter=30, tol=0)
        hmm.fit(X, [30, 20], states=labels)
        history = np.array(hmm.monitor_.history)
        assert np.all(np.diff(history) >= -1e-8 * np.abs(history[1:])), seed
        # The monitored objective is the joint likelihood of the data and
        # the labelled states (plus the log prior), which score returns.
        last = hmm.summarize(X, [30, 20], states=labels).log_evidence
        assert last == pytest.approx(hmm.score(X, [30, 20], states=labels))


def test_list_of_sequences_and_states_per_sequence():
    rng = np.random.RandomState(3)
    X, Z = labelled_sample(rng, 2, "gaussian", [30, 20])
    labels = np.where(rng.rand(50) < 0.3, Z, -1)
    rows = GaussianHMM(2, random_state=0, n_iter=5).fit(X, [30, 20], states=labels)
    seqs = GaussianHMM(2, random_state=0, n_iter=5).fit(
        [X[:30], X[30:]], states=[labels[:30], labels[30:]]
    )
    np.testing.assert_array_equal(rows.means_, seqs.means_)


def test_summarize_partial_fit_and_from_stats_take_states():
    rng = np.random.RandomState(4)
    X, Z = labelled_sample(rng, 3, "categorical", [40, 40])
    labels = np.where(rng.rand(80) < 0.3, Z, -1)
    hmm = CategoricalHMM(3, n_features=5, random_state=0, n_iter=3).fit(X, [40, 40])
    chunks = hmm.summarize(X[:40], states=labels[:40]) + hmm.summarize(
        X[40:], states=labels[40:]
    )
    whole = hmm.summarize(X, [40, 40], states=labels)
    np.testing.assert_allclose(chunks.emission.counts, whole.emission.counts)
    assert chunks.log_evidence == pytest.approx(hmm.score(X, [40, 40], states=labels))
    # partial_fit: the chunk's clamped E-step added to stats_, then the M-step.
    stepped = copy.deepcopy(hmm).partial_fit(X, [40, 40], states=labels)
    reference = copy.deepcopy(hmm).from_stats(hmm.stats_ + whole)
    np.testing.assert_allclose(stepped.emissionprob_, reference.emissionprob_)
    np.testing.assert_allclose(stepped.transmat_, reference.transmat_)
    unlabelled = copy.deepcopy(hmm).partial_fit(X, [40, 40])
    assert not np.allclose(unlabelled.emissionprob_, stepped.emissionprob_)


@pytest.mark.parametrize(
    "states, match",
    [
        (np.zeros(49), "one entry per step"),
        (np.full(50, 3), "0 .. 2"),
        (np.full(50, 0.5), "0 .. 2"),
        (np.full(50, -2), "0 .. 2"),
        (np.array(["a"] * 50), "name 1 states"),  # names must name every state
        (np.zeros((50, 1)), "1-d"),
        ([np.zeros(25), np.zeros(25)], "lengths"),
    ],
)
def test_bad_states_are_errors_naming_states(states, match):
    X = np.random.RandomState(0).normal(size=(50, 1))
    with pytest.raises(ValueError, match="states") as info:
        GaussianHMM(3).fit(X, [30, 20], states=states)
    assert match in str(info.value)


def test_impossible_labels_are_an_error_naming_states():
    hmm = CategoricalHMM(2, n_features=2, init_params="", params="ste")
    hmm.startprob_ = np.array([1.0, 0.0])
    hmm.transmat_ = np.array([[1.0, 0.0], [0.0, 1.0]])
    hmm.emissionprob_ = np.full((2, 2), 0.5)
    X = np.array([[0], [1], [0]])
    with pytest.raises(ValueError, match="known states are impossible"):
        hmm.fit(X, states=[-1, 1, -1])
    hmm.n_features = 2
    assert hmm.score(X, states=[-1, 1, -1]) == -np.inf


def test_positional_fit_is_unchanged():
    # hmmlearn's fit(X, lengths): a labelling cannot be given positionally.
    X = np.random.RandomState(0).normal(size=(20, 1))
    with pytest.raises(ValueError, match="lengths"):
        GaussianHMM(2).fit(X, np.zeros(20, dtype=int))


def best_permutation_accuracy(z, predicted, k):
    return max(
        np.mean(np.asarray(perm)[predicted] == z)
        for perm in itertools.permutations(range(k))
    )


def test_five_percent_labelled_beats_unlabelled_em_with_the_best_permutation():
    # Three overlapping Gaussian states; 10 training and 10 held-out
    # sequences of 100 steps, 5% of the training steps labelled. Over seeds,
    # the labelled fit's held-out accuracy (labels fix the states' names)
    # beats unlabelled Baum-Welch's even after its best relabelling.
    k, wins, gains = 3, 0, []
    for seed in range(6):
        rng = np.random.RandomState(seed)
        true = GaussianHMM(k, "diag")
        true.startprob_ = np.full(k, 1 / k)
        true.transmat_ = np.full((k, k), 0.1) + 0.7 * np.eye(k)
        true.means_ = rng.normal(size=(k, 2)) * 1.2
        true.covars_ = np.ones((k, 2))
        Xs, Zs = zip(*(true.sample(100, random_state=rng) for _ in range(20)))
        X, Z = np.concatenate(Xs[:10]), np.concatenate(Zs[:10])
        test_X, test_Z = np.concatenate(Xs[10:]), np.concatenate(Zs[10:])
        labels = np.where(rng.rand(len(Z)) < 0.05, Z, -1)
        lengths = [100] * 10

        labelled = GaussianHMM(k, "diag", random_state=seed, n_iter=30)
        labelled.fit(X, lengths, states=labels)
        plain = GaussianHMM(k, "diag", random_state=seed, n_iter=30).fit(X, lengths)
        ours = np.mean(labelled.predict(test_X, lengths) == test_Z)
        theirs = best_permutation_accuracy(test_Z, plain.predict(test_X, lengths), k)
        wins += ours > theirs
        gains.append(ours - theirs)
    assert np.mean(gains) > 0 and wins >= 4, gains


def test_states_with_a_dask_collection_are_refused_naming_states():
    da = pytest.importorskip("dask.array")
    X = np.random.RandomState(0).normal(size=(40, 1))
    with pytest.raises(ValueError, match="states is not taken with a Dask"):
        GaussianHMM(2).fit(da.from_array(X, chunks=20), states=np.zeros(40))
    fitted = GaussianHMM(2, random_state=0, n_iter=2).fit(X)
    with pytest.raises(ValueError, match="states is not taken with a Dask"):
        fitted.score(da.from_array(X, chunks=20), states=np.zeros(40))
