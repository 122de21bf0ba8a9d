"""Partly labelled HiddenSemiMarkovModel: known states as evidence on the segments.

References: brute-force enumeration of every state path that agrees with the
known states (the runs of a path are its segments, the transition matrix
having a zero diagonal, the last one right-censored), and the counts of the
runs of fully labelled sequences.
"""

import itertools
import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm

from bayeskit import HiddenSemiMarkovModel


def _runs(path):
    return [(s, len(list(g))) for s, g in itertools.groupby(path)]


def _model(rng, k, D, duration="table"):
    """A fitted-shaped model with random parameters (1 Gaussian feature)."""
    hsmm = HiddenSemiMarkovModel(
        k, duration=duration, max_duration=D, random_state=0, n_iter=1
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hsmm.fit(rng.normal(size=(4 * k * D, 1)))
    hsmm.startprob_ = rng.dirichlet(np.ones(k))
    trans = rng.dirichlet(np.ones(k), size=k) if k > 1 else np.ones((1, 1))
    if k > 1:
        np.fill_diagonal(trans, 0.0)
        trans /= trans.sum(axis=1, keepdims=True)
    hsmm.transmat_ = trans
    if duration == "table":
        hsmm.durations_ = rng.dirichlet(np.ones(D), size=k)
    return hsmm


def _log_emission(hsmm, X):
    p = hsmm.emission_params_
    return norm.logpdf(X[:, :1], p.means[:, 0], np.sqrt(p.covariances[:, 0, 0]))


def _enumerate(hsmm, log_em, labels):
    """log evidence, posteriors and expected counts of one sequence by
    summing over every state path that agrees with ``labels``."""
    n, k = log_em.shape
    pmf = hsmm.duration_pmf_
    D = pmf.shape[1]
    start, trans = hsmm.startprob_, hsmm.transmat_
    paths, joint = [], []
    for path in itertools.product(range(k), repeat=n):
        path = np.array(path)
        known = labels >= 0
        if np.any(path[known] != labels[known]):
            continue
        runs = _runs(path)
        lp = np.log(start[runs[0][0]]) + log_em[np.arange(n), path].sum()
        for i, (state, d) in enumerate(runs):
            last = i == len(runs) - 1
            tail = pmf[state, d - 1 :].sum()
            p = 0.0 if d > D else (tail if last else pmf[state, d - 1])
            lp += np.log(p) if p > 0 else -np.inf
            if not last:
                t = trans[state, runs[i + 1][0]]
                lp += np.log(t) if t > 0 else -np.inf
        paths.append(path)
        joint.append(lp)
    joint = np.array(joint)
    evidence = logsumexp(joint)
    w = np.exp(joint - evidence)
    gamma, xi, durations = np.zeros((n, k)), np.zeros((k, k)), np.zeros((k, D))
    for wi, path in zip(w, paths):
        if wi == 0:
            continue
        gamma[np.arange(n), path] += wi
        runs = _runs(path)
        for i, (state, d) in enumerate(runs[:-1]):
            durations[state, d - 1] += wi
            xi[state, runs[i + 1][0]] += wi
        state, d = runs[-1]  # censored: spread over the durations it may have
        tail = pmf[state, d - 1 :]
        durations[state, d - 1 :] += wi * tail / tail.sum()
    return evidence, gamma, xi, durations


@pytest.mark.parametrize("seed", range(12))
def test_e_step_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    k, D = 2 + seed % 2, int(rng.integers(2, 5))
    hsmm = _model(rng, k, D, duration=("table", "poisson")[seed % 2])
    lengths = [int(rng.integers(2, 7)), int(rng.integers(1, 6))]
    X = rng.normal(0, 2, size=(sum(lengths), 1))
    labels = np.where(rng.random(len(X)) < 0.4, rng.integers(0, k, len(X)), -1)
    log_em = _log_emission(hsmm, X)
    evidence, gammas = 0.0, []
    start, xi, durations = np.zeros(k), np.zeros((k, k)), np.zeros((k, D))
    for s, n in zip(np.cumsum(lengths) - lengths, lengths):
        e, g, x, d = _enumerate(hsmm, log_em[s : s + n], labels[s : s + n])
        evidence += e
        gammas.append(g)
        start += g[0]
        xi += x
        durations += d
    gamma = np.concatenate(gammas)
    if not np.isfinite(evidence):  # labels the model forbids: an error
        with pytest.raises(ValueError, match="states"):
            hsmm.summarize(X, lengths, states=labels)
        return
    stats = hsmm.summarize(X, lengths, states=labels)
    assert stats.log_evidence == pytest.approx(evidence, rel=1e-12)
    assert hsmm.score(X, lengths, states=labels) == pytest.approx(evidence, rel=1e-12)
    np.testing.assert_allclose(stats.structure.start, start, atol=1e-12)
    np.testing.assert_allclose(stats.structure.transitions, xi, atol=1e-12)
    np.testing.assert_allclose(stats.structure.durations, durations, atol=1e-12)
    np.testing.assert_allclose(stats.structure.occupancy, gamma.sum(0), atol=1e-12)
    # The family's statistics: the observations weighted by those posteriors.
    means = (gamma * X).sum(0) / gamma.sum(0)
    fitted = hsmm.from_stats(stats)
    np.testing.assert_allclose(fitted.emission_params_.means[:, 0], means, rtol=1e-10)


def _sample(rng, hsmm, lengths):
    seeds = rng.integers(2**31, size=len(lengths))
    Xs, Zs = zip(*(hsmm.sample(n, random_state=int(s)) for n, s in zip(lengths, seeds)))
    return np.concatenate(Xs), np.concatenate(Zs)


@pytest.mark.parametrize("duration", ["table", "poisson"])
@pytest.mark.parametrize("seed", range(4))
def test_all_known_is_the_counts_of_the_runs(seed, duration):
    """Every state known, the segments are the runs of the labels: the
    E-step is their counts (the censored last run spread over the durations
    it may have had, in proportion to the table), and the fitted start,
    transition and emission parameters are those counts' estimates."""
    rng = np.random.default_rng(seed)
    k, D = 3, 8
    hsmm = _model(rng, k, D, duration)
    lengths = [40, 25, 33]
    X, Z = _sample(rng, hsmm, lengths)
    pmf = hsmm.duration_pmf_
    start, trans, durations = np.zeros(k), np.zeros((k, k)), np.zeros((k, D))
    for s, n in zip(np.cumsum(lengths) - lengths, lengths):
        runs = _runs(Z[s : s + n])
        start[runs[0][0]] += 1
        for i, (state, d) in enumerate(runs[:-1]):
            durations[state, d - 1] += 1
            trans[state, runs[i + 1][0]] += 1
        state, d = runs[-1]
        durations[state, d - 1 :] += pmf[state, d - 1 :] / pmf[state, d - 1 :].sum()
    stats = hsmm.summarize(X, lengths, states=Z)
    np.testing.assert_allclose(stats.structure.start, start, atol=1e-12)
    np.testing.assert_allclose(stats.structure.transitions, trans, atol=1e-12)
    np.testing.assert_allclose(stats.structure.durations, durations, atol=1e-12)
    np.testing.assert_allclose(
        stats.structure.occupancy, np.bincount(Z, minlength=k), atol=1e-12
    )
    fitted = HiddenSemiMarkovModel(
        k, duration=duration, max_duration=D, random_state=seed, n_iter=3
    ).fit(X, lengths, states=Z)
    np.testing.assert_allclose(fitted.startprob_, start / start.sum(), atol=1e-12)
    np.testing.assert_allclose(
        fitted.transmat_, trans / trans.sum(1, keepdims=True), atol=1e-12
    )
    means = np.array([X[Z == j, 0].mean() for j in range(k)])
    np.testing.assert_allclose(fitted.emission_params_.means[:, 0], means, rtol=1e-12)


@pytest.mark.parametrize("unknown", [-1, np.nan])
@pytest.mark.parametrize("duration", ["table", "poisson", "negative_binomial"])
def test_none_known_is_em_bit_for_bit(duration, unknown):
    rng = np.random.default_rng(5)
    X = np.concatenate([rng.normal(m, 1, (6, 2)) for m in [0, 4, 8] * 6])
    lengths = [36, 36, 36]
    make = lambda: HiddenSemiMarkovModel(  # noqa: E731
        3, duration=duration, max_duration=12, random_state=0, n_iter=4
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = make().fit(X, lengths)
        labelled = make().fit(X, lengths, states=np.full(len(X), unknown))
    assert list(plain.monitor_.history) == list(labelled.monitor_.history)
    for name in ("startprob_", "transmat_", "duration_pmf_"):
        np.testing.assert_array_equal(getattr(plain, name), getattr(labelled, name))
    np.testing.assert_array_equal(
        plain.emission_params_.means, labelled.emission_params_.means
    )


def test_objective_never_decreases():
    for seed in range(50):
        rng = np.random.default_rng(seed)
        truth = _model(rng, 3, 10, "poisson")
        X, Z = _sample(rng, truth, [40, 30])
        labels = np.where(rng.random(len(Z)) < 0.2, Z, -1)
        hsmm = HiddenSemiMarkovModel(
            3, duration=("poisson", "table")[seed % 2], max_duration=10,
            random_state=seed, n_iter=15, tol=0,
        )  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            hsmm.fit(X, [40, 30], states=labels)
        history = np.array(hsmm.monitor_.history)
        assert np.all(np.diff(history) >= -1e-8 * np.abs(history[1:])), seed
        last = hsmm.summarize(X, [40, 30], states=labels).log_evidence
        assert last == pytest.approx(hsmm.score(X, [40, 30], states=labels))


def test_a_labelled_run_longer_than_max_duration_is_an_error_naming_states():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 1))
    hsmm = HiddenSemiMarkovModel(2, max_duration=4, random_state=0)
    with pytest.raises(ValueError, match="states"):
        hsmm.fit(X, states=np.zeros(12, dtype=int))
