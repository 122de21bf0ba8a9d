"""Gaps in sequences: steps whose every value is NaN (a missing symbol).

A gap's emission message is 1: the chain moves through it, its state's
posterior comes from its neighbours, and it adds nothing to the emission
statistics. The references are enumeration over all state paths and over the
missing values (a sum over the symbols, or a numerical integral of the
complete-data likelihood), the closed forms of a chain with no evidence, and
hmmlearn on data without gaps (which it rejects).
"""

import itertools
import logging

import hmmlearn.hmm as hl
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import integrate, stats
from scipy.special import logsumexp

from bayeskit import (
    GMMHMM,
    CategoricalHMM,
    GaussianHMM,
    HMMClassifier,
    MultinomialHMM,
    PoissonHMM,
)
from bayeskit.emissions import Gaussian, Poisson

START = np.array([0.6, 0.3, 0.1])
TRANS = np.array([[0.5, 0.3, 0.2], [0.1, 0.7, 0.2], [0.3, 0.3, 0.4]])
EMIT = np.array([[0.6, 0.3, 0.1], [0.1, 0.2, 0.7], [0.3, 0.4, 0.3]])


def _categorical(k=3):
    m = CategoricalHMM(k, n_features=3)
    m.startprob_ = START[:k] / START[:k].sum()
    m.transmat_ = TRANS[:k, :k] / TRANS[:k, :k].sum(axis=1, keepdims=True)
    m.emissionprob_ = EMIT[:k]
    return m


def _gaussian():
    m = GaussianHMM(2, covariance_type="diag")
    m.startprob_ = np.array([0.7, 0.3])
    m.transmat_ = np.array([[0.8, 0.2], [0.4, 0.6]])
    m.means_ = np.array([[-1.0], [1.5]])
    m.covars_ = np.array([[0.8], [1.3]])
    return m


def _poisson():
    m = PoissonHMM(2)
    m.startprob_ = np.array([0.7, 0.3])
    m.transmat_ = np.array([[0.8, 0.2], [0.4, 0.6]])
    m.lambdas_ = np.array([[1.0], [4.0]])
    return m


# -- brute force ------------------------------------------------------------------
def _paths(start, trans, lik):
    """Every state path and its joint probability with the evidence ``lik``
    (``(T, K)`` likelihoods of each step under each state)."""
    T, K = lik.shape
    for path in itertools.product(range(K), repeat=T):
        p = start[path[0]] * lik[0, path[0]]
        for t in range(1, T):
            p *= trans[path[t - 1], path[t]] * lik[t, path[t]]
        yield path, p


def _categorical_brute(model, x):
    """Observed-data joint of every path, summing the complete-data likelihood
    over every value of the missing symbols."""
    x = np.asarray(x, dtype=float)
    gaps = np.flatnonzero(np.isnan(x))
    T, K = len(x), model.n_components
    joint = {}
    for path in itertools.product(range(K), repeat=T):
        total = 0.0
        for fill in itertools.product(range(3), repeat=len(gaps)):
            full = x.copy()
            full[gaps] = fill
            full = full.astype(int)
            p = model.startprob_[path[0]] * model.emissionprob_[path[0], full[0]]
            for t in range(1, T):
                p *= model.transmat_[path[t - 1], path[t]]
                p *= model.emissionprob_[path[t], full[t]]
            total += p
        joint[path] = total
    return joint


def _summary(joint, T, K):
    """``(log evidence, posteriors, best path, its log joint)``."""
    evidence = sum(joint.values())
    post = np.zeros((T, K))
    for path, p in joint.items():
        post[np.arange(T), path] += p
    best = max(joint, key=joint.get)
    return np.log(evidence), post / evidence, np.array(best), np.log(joint[best])


SEQUENCES = [
    [0, np.nan, 2],
    [np.nan, 1, 1, np.nan],
    [2, np.nan, np.nan, 0, 1],
    [np.nan],
    [np.nan, np.nan, np.nan],
    [1, 0, np.nan, 2, np.nan, 0],
]


@pytest.mark.parametrize("x", SEQUENCES)
@pytest.mark.parametrize("k", [2, 3])
def test_categorical_equals_enumeration(x, k):
    model = _categorical(k)
    if len(x) > 5 and k == 3:
        x = x[:5]
    X = np.array(x)[:, None]
    log_ev, post, best, best_lp = _summary(_categorical_brute(model, x), len(x), k)
    assert model.score(X) == pytest.approx(log_ev, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(model.predict_proba(X), post, atol=1e-12)
    log_prob, path = model.decode(X, algorithm="viterbi")
    assert log_prob == pytest.approx(best_lp, rel=1e-12, abs=1e-12)
    joint = _categorical_brute(model, x)
    assert joint[tuple(path)] == pytest.approx(joint[tuple(best)], rel=1e-12)
    map_lp, map_path = model.decode(X, algorithm="map")
    np.testing.assert_array_equal(map_path, post.argmax(axis=1))
    assert map_lp == pytest.approx(log_ev, rel=1e-12, abs=1e-12)


def test_categorical_summarize_equals_enumeration():
    model = _categorical(2)
    x = [1, np.nan, 0, np.nan, 2]
    joint = _categorical_brute(model, x)
    evidence = sum(joint.values())
    counts = np.zeros((3, 2))
    trans = np.zeros((2, 2))
    start = np.zeros(2)
    for path, p in joint.items():
        start[path[0]] += p / evidence
        for a, b in itertools.pairwise(path):
            trans[a, b] += p / evidence
        for t, s in enumerate(path):
            if not np.isnan(x[t]):
                counts[int(x[t]), s] += p / evidence
    stats_ = model.summarize(np.array(x)[:, None])
    np.testing.assert_allclose(stats_.structure.start, start, atol=1e-12)
    np.testing.assert_allclose(stats_.structure.transitions, trans, atol=1e-12)
    np.testing.assert_allclose(stats_.emission.counts, counts, atol=1e-12)
    # Occupancy counts the gaps' steps too (five steps in all).
    assert stats_.structure.occupancy.sum() == pytest.approx(5.0)
    assert stats_.log_evidence == pytest.approx(np.log(evidence), rel=1e-12)


def test_gap_equals_marginalising_the_symbol():
    """The score of a sequence with gaps is the log of the sum of the
    scores of every way of filling them in."""
    model = _categorical(3)
    x = np.array([2.0, np.nan, 1.0, np.nan, 0.0])
    filled = []
    for fill in itertools.product(range(3), repeat=2):
        full = x.copy()
        full[[1, 3]] = fill
        filled.append(model.score(full.astype(int)[:, None]))
    assert model.score(x[:, None]) == pytest.approx(logsumexp(filled), rel=1e-12)
    # A gap at the end is the sequence without it; at the start, the chain
    # starts one step earlier.
    assert model.score(np.array([[2.0], [1.0], [np.nan]])) == pytest.approx(
        model.score(np.array([[2], [1]])), rel=1e-12
    )
    shifted = _categorical(3)
    shifted.startprob_ = model.startprob_ @ model.transmat_
    assert model.score(np.array([[np.nan], [2.0], [1.0]])) == pytest.approx(
        shifted.score(np.array([[2], [1]])), rel=1e-12
    )


def test_gaussian_equals_integration_and_enumeration():
    model = _gaussian()
    x = np.array([0.3, np.nan, -1.2, 2.0])

    def complete(v):
        full = x.copy()
        full[1] = v
        lik = np.stack(
            [stats.norm.pdf(full, model.means_[k, 0], np.sqrt(model.covars_[k, 0, 0]))
             for k in range(2)], axis=1,
        )  # fmt: skip
        return sum(p for _, p in _paths(model.startprob_, model.transmat_, lik))

    integral, _ = integrate.quad(complete, -np.inf, np.inf, epsabs=1e-14)
    assert model.score(x[:, None]) == pytest.approx(np.log(integral), rel=1e-9)
    lik = np.ones((4, 2))
    for k in range(2):
        sd = np.sqrt(model.covars_[k, 0, 0])
        obs = ~np.isnan(x)
        lik[obs, k] = stats.norm.pdf(x[obs], model.means_[k, 0], sd)
    joint = dict(_paths(model.startprob_, model.transmat_, lik))
    log_ev, post, best, best_lp = _summary(joint, 4, 2)
    assert model.score(x[:, None]) == pytest.approx(log_ev, rel=1e-12)
    np.testing.assert_allclose(model.predict_proba(x[:, None]), post, atol=1e-12)
    log_prob, path = model.decode(x[:, None])
    np.testing.assert_array_equal(path, best)
    assert log_prob == pytest.approx(best_lp, rel=1e-12)


def test_poisson_equals_sum_over_missing_counts():
    model = _poisson()
    x = np.array([3.0, np.nan, 0.0, np.nan, 5.0])
    total = 0.0
    for fill in itertools.product(range(60), repeat=2):
        full = x.copy()
        full[[1, 3]] = fill
        lik = stats.poisson.pmf(full[:, None], model.lambdas_[:, 0][None, :])
        total += sum(p for _, p in _paths(model.startprob_, model.transmat_, lik))
    assert model.score(x[:, None]) == pytest.approx(np.log(total), rel=1e-10)
    lik = np.ones((5, 2))
    obs = ~np.isnan(x)
    lik[obs] = stats.poisson.pmf(x[obs, None], model.lambdas_[:, 0][None, :])
    log_ev, post, best, best_lp = _summary(
        dict(_paths(model.startprob_, model.transmat_, lik)), 5, 2
    )
    assert model.score(x[:, None]) == pytest.approx(log_ev, rel=1e-12)
    np.testing.assert_allclose(model.predict_proba(x[:, None]), post, atol=1e-12)
    log_prob, path = model.decode(x[:, None])
    np.testing.assert_array_equal(path, best)
    assert log_prob == pytest.approx(best_lp, rel=1e-12)


# -- a whole sequence missing --------------------------------------------------------
def _stats_close(a, b):
    """Every array inside two statistics objects (dataclasses, or objects
    holding arrays) agrees."""
    if isinstance(a, (np.ndarray, float, int)):
        np.testing.assert_allclose(a, b, atol=1e-12)
    elif isinstance(a, (tuple, list)):
        for u, v in zip(a, b, strict=True):
            _stats_close(u, v)
    elif a is not None and hasattr(a, "__dict__"):
        for name, u in vars(a).items():
            _stats_close(u, getattr(b, name))


@pytest.mark.parametrize("make", [_categorical, _gaussian, _poisson])
def test_whole_sequence_missing(make):
    """A sequence of gaps scores 0 and adds only the chain's expectations
    under no evidence: start pi, transitions sum_t diag(pi A^t) A."""
    model = make()
    T = 4
    gap = np.full((T, 1), np.nan)
    stats_ = model.summarize(gap)
    assert stats_.log_evidence == pytest.approx(0.0, abs=1e-12)
    assert model.score(gap) == pytest.approx(0.0, abs=1e-12)
    pi, A = model.startprob_, model.transmat_
    marginals = [pi @ np.linalg.matrix_power(A, t) for t in range(T)]
    np.testing.assert_allclose(stats_.structure.start, pi, atol=1e-12)
    expected = sum(m[:, None] * A for m in marginals[:-1])
    np.testing.assert_allclose(stats_.structure.transitions, expected, atol=1e-12)
    np.testing.assert_allclose(model.predict_proba(gap), np.array(marginals))
    # Beside an observed sequence it adds nothing to the emission statistics.
    obs = np.array([[0.0], [2.0], [1.0]])
    both = model.summarize([obs, gap])
    alone = model.summarize([obs])
    _stats_close(both.emission, alone.emission)
    # And fit takes it.
    model.set_params(init_params="", n_iter=3).fit([obs, gap, obs[::-1]])
    assert _nondecreasing(model.lower_bounds_)


def test_all_missing_needs_an_alphabet_or_parameters():
    with pytest.raises(ValueError, match="no observed symbol"):
        CategoricalHMM(2).fit(np.full((4, 1), np.nan))
    with pytest.raises(ValueError, match="no step without missing values"):
        GaussianHMM(2).fit(np.full((4, 1), np.nan))
    # With the alphabet declared, the emissions stay at their start.
    m = CategoricalHMM(2, n_features=3, random_state=0).fit(np.full((4, 1), np.nan))
    np.testing.assert_allclose(m.emissionprob_.sum(axis=1), 1.0)


# -- EM: the objective never decreases ----------------------------------------------
def _nondecreasing(bounds):
    bounds = np.asarray(bounds)
    return np.all(np.diff(bounds) >= -1e-9 * (1.0 + np.abs(bounds[1:])))


def _with_gaps(X, rng, fraction=0.3):
    X = np.array(X, dtype=float)
    X[rng.random(len(X)) < fraction] = np.nan
    return X


@pytest.mark.parametrize("family", ["categorical", "gaussian", "poisson"])
def test_objective_never_decreases(family, caplog):
    singular = 0
    for seed in range(50):
        rng = np.random.default_rng(seed)
        lengths = rng.integers(5, 25, size=3)
        n = lengths.sum()
        if family == "categorical":
            X = rng.integers(0, 3, size=(n, 1))
            model = CategoricalHMM(3, n_features=3, random_state=seed)
        elif family == "gaussian":
            X = rng.normal(size=(n, 2)) + 3 * rng.integers(0, 2, size=(n, 1))
            model = GaussianHMM(2, covariance_type="full", random_state=seed)
        else:
            X = rng.poisson(rng.choice([1.0, 6.0], size=(n, 1)), size=(n, 2))
            model = PoissonHMM(2, random_state=seed)
        X = _with_gaps(X, rng)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="bayeskit.emissions"):
            model.set_params(n_iter=15, tol=0.0).fit(X, lengths)
        if "singular" in caplog.text:
            # A state collapsed onto collinear steps: its densities use the
            # covariance plus min_covar on the diagonal, a density EM's
            # M-step did not maximise, so EM's guarantee does not cover it.
            singular += 1
            continue
        bounds = np.array(model.lower_bounds_)
        assert np.isfinite(bounds).all()
        assert _nondecreasing(bounds), seed
        assert list(model.monitor_.history) == list(
            bounds[-len(model.monitor_.history) :]
        )
        # The monitored objective is the observed-data log-likelihood plus
        # the log prior: the score under the parameters of that iteration.
    assert singular <= 2  # the exclusion is rare: the test keeps its power


def test_objective_is_the_observed_log_likelihood():
    rng = np.random.default_rng(3)
    X = _with_gaps(rng.integers(0, 3, size=(40, 1)), rng)
    model = CategoricalHMM(2, n_features=3, random_state=0, n_iter=1).fit(X)
    first = CategoricalHMM(2, n_features=3, random_state=0, n_iter=0).fit(X)
    # Flat Dirichlet priors: the log prior is 0, the objective the score.
    assert model.lower_bounds_[0] == pytest.approx(first.score(X), rel=1e-12)


@pytest.mark.parametrize("make", [
    lambda: MultinomialHMM(2, n_trials=4, random_state=0, n_iter=10, tol=0.0),
    lambda: GMMHMM(2, n_mix=2, random_state=0, n_iter=10, tol=0.0),
])  # fmt: skip
def test_other_families_take_gaps(make):
    rng = np.random.default_rng(0)
    model = make()
    if isinstance(model, MultinomialHMM):
        X = rng.multinomial(4, [0.2, 0.3, 0.5], size=60).astype(float)
    else:
        X = rng.normal(size=(60, 2)) + 4 * rng.integers(0, 2, size=(60, 1))
    X = _with_gaps(X, rng)
    model.fit(X, [30, 30])
    bounds = np.array(model.lower_bounds_)
    assert _nondecreasing(bounds)
    # A gap in the middle equals marginalising it: the score of the two
    # halves around a gap at the end equals the score without it.
    row = X[~np.isnan(X).any(axis=1)][:3]
    assert model.score(
        np.vstack([row, np.full((1, 2 + isinstance(model, MultinomialHMM)), np.nan)])
    ) == pytest.approx(model.score(row), rel=1e-12)
    proba = model.predict_proba(X, [30, 30])
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


# -- recovery ----------------------------------------------------------------------
def _truth_categorical():
    m = CategoricalHMM(2, n_features=3)
    m.startprob_ = np.array([0.9, 0.1])
    m.transmat_ = np.array([[0.1, 0.9], [0.8, 0.2]])
    m.emissionprob_ = np.array([[0.8, 0.15, 0.05], [0.05, 0.15, 0.8]])
    return m


def _truth_gaussian():
    m = GaussianHMM(2, covariance_type="diag")
    m.startprob_ = np.array([0.9, 0.1])
    m.transmat_ = np.array([[0.1, 0.9], [0.8, 0.2]])
    m.means_ = np.array([[-2.0], [2.0]])
    m.covars_ = np.array([[1.0], [1.0]])
    return m


def _error(fitted, truth, names):
    """Largest absolute error of the parameters, over both labellings."""
    best = np.inf
    for perm in ([0, 1], [1, 0]):
        err = 0.0
        for name in names:
            a = np.asarray(getattr(fitted, name))
            b = np.asarray(getattr(truth, name))
            a = a[perm][:, perm] if name == "transmat_" else a[perm]
            err = max(err, np.abs(a - b).max())
        best = min(best, err)
    return best


def _recovery(truth, make, names, seed=0):
    rng = np.random.RandomState(seed)
    seqs = [truth.sample(20, random_state=rng)[0].astype(float) for _ in range(300)]
    hidden = [s.copy() for s in seqs]
    for s in hidden:
        s[rng.random_sample(len(s)) < 0.3] = np.nan
    gaps = make().fit(hidden)
    # Cut at the gaps: every run of observed steps is a sequence.
    runs = []
    for s in hidden:
        obs = ~np.isnan(s[:, 0])
        edges = np.flatnonzero(np.diff(np.concatenate([[0], obs, [0]])))
        runs += [s[a:b] for a, b in zip(edges[::2], edges[1::2])]
    cut = make().fit(runs)
    # Drop the gaps: the observed steps joined up.
    dropped = make().fit(
        [s[~np.isnan(s[:, 0])] for s in hidden if (~np.isnan(s)).any()]
    )
    return [_error(m, truth, names) for m in (gaps, cut, dropped)]


@pytest.mark.parametrize("kind", ["categorical", "gaussian"])
def test_recovery_beats_cutting_and_dropping(kind):
    if kind == "categorical":
        truth, names = (
            _truth_categorical(),
            ["startprob_", "transmat_", "emissionprob_"],
        )

        def make():
            return CategoricalHMM(2, n_features=3, random_state=1, n_iter=300, tol=1e-8)
    else:
        truth, names = _truth_gaussian(), ["startprob_", "transmat_", "means_"]

        def make():
            return GaussianHMM(
                2, covariance_type="diag", random_state=1, n_iter=300, tol=1e-8
            )

    err_gaps, err_cut, err_drop = _recovery(truth, make, names)
    print(f"{kind}: max parameter error with gaps {err_gaps:.4f}, cut at gaps "
          f"{err_cut:.4f}, gaps dropped {err_drop:.4f}")  # fmt: skip
    assert err_gaps < 0.06
    assert err_gaps < err_cut
    assert err_gaps < err_drop


# -- without gaps nothing changes; hmmlearn rejects NaN --------------------------------
def test_without_gaps_equals_hmmlearn():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, size=(60, 1))
    ours, theirs = _categorical(3), hl.CategoricalHMM(3, n_features=3)
    for m in (ours, theirs):
        m.startprob_, m.transmat_ = START, TRANS
        m.emissionprob_ = EMIT
        m.set_params(init_params="", n_iter=5, tol=0.0)
    ours.fit(X, [30, 30])
    theirs.fit(X, [30, 30])
    for name in ("startprob_", "transmat_", "emissionprob_"):
        np.testing.assert_allclose(
            getattr(ours, name), getattr(theirs, name), rtol=1e-10
        )
    assert ours.score(X) == pytest.approx(theirs.score(X), rel=1e-12)
    with pytest.raises(ValueError):
        theirs.score(np.array([[0.0], [np.nan], [1.0]]))
    with pytest.raises(ValueError):
        hl.GaussianHMM(2).fit(np.array([[0.0], [np.nan], [1.0], [2.0]]))


def test_float_symbols_without_gaps_are_the_integers():
    model = _categorical(3)
    X = np.array([[0], [2], [1], [1]])
    assert model.score(X.astype(float)) == model.score(X)
    np.testing.assert_array_equal(
        model.predict_proba(X.astype(float)), model.predict_proba(X)
    )


# -- errors, inputs ------------------------------------------------------------------
def test_partial_steps_are_refused_by_families_without_them():
    X = np.array([[1.0, 2.0], [np.nan, 1.0], [0.0, 3.0], [2.0, 2.0]])
    with pytest.raises(ValueError, match="X has steps with some but not all"):
        MultinomialHMM(1).fit(X)
    with pytest.raises(ValueError, match="X has steps with some but not all"):
        GMMHMM(1, n_mix=1).fit(X)
    if not Gaussian.missing_coordinates:
        with pytest.raises(ValueError, match="X has steps with some but not all"):
            GaussianHMM(1).fit(X)


@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_infinite_values_are_refused(value):
    X = np.array([[1.0], [value], [0.0], [2.0]])
    with pytest.raises(ValueError, match="X"):
        GaussianHMM(1).fit(X)
    with pytest.raises(ValueError, match="X"):
        PoissonHMM(1).fit(X)
    with pytest.raises(ValueError, match="X has an infinite symbol"):
        CategoricalHMM(1).fit(X)
    model = _gaussian()
    with pytest.raises(ValueError, match="X"):
        model.score(X)


def test_inputs_are_not_mutated():
    rng = np.random.default_rng(0)
    X = _with_gaps(rng.integers(0, 3, size=(30, 1)), rng)
    G = _with_gaps(rng.normal(size=(30, 2)), rng)
    seqs = [X[:10], X[10:]]
    for model, data in (
        (CategoricalHMM(2, random_state=0), X),
        (CategoricalHMM(2, random_state=0), seqs),
        (GaussianHMM(2, random_state=0), G),
    ):
        before = [np.copy(a) for a in (data if isinstance(data, list) else [data])]
        model.fit(data)
        model.score(data)
        model.predict_proba(data)
        model.decode(data)
        model.summarize(data)
        model.partial_fit(data)
        after = data if isinstance(data, list) else [data]
        for a, b in zip(before, after):
            np.testing.assert_array_equal(a, b)


def test_partial_fit_with_gaps_is_one_baum_welch_step():
    rng = np.random.default_rng(1)
    X = _with_gaps(rng.integers(0, 3, size=(40, 1)), rng)
    one = _categorical(3).set_params(init_params="", n_iter=1)
    one.fit(X)
    inc = _categorical(3).set_params(init_params="").partial_fit(X)
    chunked = _categorical(3)
    chunked.from_stats(chunked.summarize(X[:15]) + chunked.summarize(X[15:]))
    for name in ("startprob_", "transmat_", "emissionprob_"):
        np.testing.assert_allclose(getattr(one, name), getattr(inc, name), atol=1e-12)
    # Chunks cut at step 15 are two sequences: the chain restarts there.
    two = _categorical(3).set_params(init_params="", n_iter=1).fit(X, [15, 25])
    for name in ("startprob_", "transmat_", "emissionprob_"):
        np.testing.assert_allclose(
            getattr(two, name), getattr(chunked, name), atol=1e-12
        )


def test_string_symbols_with_missing_values():
    seqs = [["a", None, "b", "b"], ["b", "a", None], [None, "a"]]
    model = CategoricalHMM(2, random_state=0, n_iter=5).fit(seqs)
    np.testing.assert_array_equal(model.symbols_, ["a", "b"])
    proba = model.predict_proba(seqs)
    assert all(np.isfinite(p).all() for p in proba)
    # None equals a NaN gap: the score of the codes with a NaN step.
    codes = np.array([[0.0], [np.nan], [1.0], [1.0]])
    hand = CategoricalHMM(2, n_features=2)
    hand.startprob_, hand.transmat_ = model.startprob_, model.transmat_
    hand.emissionprob_ = model.emissionprob_
    assert model.score_sequences([seqs[0]])[0] == pytest.approx(
        hand.score(codes), rel=1e-12
    )


# -- the classifier ------------------------------------------------------------------
def test_classifier_inherits_gaps():
    rng = np.random.RandomState(0)
    a, b = _truth_categorical(), _truth_categorical()
    b.transmat_ = np.array([[0.9, 0.1], [0.1, 0.9]])
    seqs, y = [], []
    for label, truth in (("a", a), ("b", b)):
        for _ in range(10):
            s = truth.sample(12, random_state=rng)[0].astype(float)
            s[rng.random_sample(12) < 0.3] = np.nan
            seqs.append(s[:, 0])
            y.append(label)
    clf = HMMClassifier(CategoricalHMM(2, random_state=0, n_iter=20)).fit(seqs, y)
    # Each class's HMM is the CategoricalHMM fitted on its sequences.
    for c, label in enumerate(clf.classes_):
        own = [s for s, t in zip(seqs, y) if t == label]
        ref = CategoricalHMM(2, random_state=0, n_iter=20, n_features=3).fit(own)
        np.testing.assert_allclose(clf.models_[c].emissionprob_, ref.emissionprob_)
    # The posterior of the class: prior times each class's likelihood.
    joint = clf.class_log_prior_ + np.stack(
        [m.score_sequences(seqs) for m in clf.models_], axis=1
    )
    expected = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
    np.testing.assert_allclose(clf.predict_proba(seqs), expected, atol=1e-12)
    assert (clf.predict(seqs) == np.array(y)).mean() > 0.8


def test_classifier_with_string_symbols_and_gaps():
    seqs = [["x", "y", None], ["y", "y"], ["x", None, "x"], ["y", None, "y"]]
    clf = HMMClassifier(CategoricalHMM(1, random_state=0)).fit(seqs, [0, 1, 0, 1])
    proba = clf.predict_proba([np.array(["x", None, "x"], dtype=object)])
    assert proba[0, 0] > 0.5
    assert np.isfinite(proba).all()


# -- partially missing steps (a family that marginalises them) -------------------------
def test_gaussian_partial_steps_equal_enumeration():
    assert Gaussian.missing_coordinates
    model = GaussianHMM(2, covariance_type="full")
    model.startprob_ = np.array([0.6, 0.4])
    model.transmat_ = np.array([[0.7, 0.3], [0.2, 0.8]])
    model.means_ = np.array([[0.0, 1.0], [2.0, -1.0]])
    model.covars_ = np.array([[[1.0, 0.3], [0.3, 0.8]], [[0.6, -0.2], [-0.2, 1.2]]])
    X = np.array([[0.1, 0.9], [np.nan, -0.5], [np.nan, np.nan], [1.8, np.nan]])
    lik = np.ones((4, 2))
    for t, row in enumerate(X):
        obs = ~np.isnan(row)
        if obs.any():
            for k in range(2):
                lik[t, k] = stats.multivariate_normal.pdf(
                    row[obs], model.means_[k][obs], model.covars_[k][np.ix_(obs, obs)]
                )
    joint = dict(_paths(model.startprob_, model.transmat_, lik))
    log_ev, post, best, _ = _summary(joint, 4, 2)
    assert model.score(X) == pytest.approx(log_ev, rel=1e-10)
    np.testing.assert_allclose(model.predict_proba(X), post, atol=1e-10)
    np.testing.assert_array_equal(model.predict(X), best)
    rng = np.random.default_rng(0)
    data = rng.normal(size=(80, 2)) + 3 * rng.integers(0, 2, size=(80, 1))
    data[rng.random(data.shape) < 0.2] = np.nan
    fitted = GaussianHMM(2, random_state=0, n_iter=20, tol=0.0).fit(data)
    bounds = np.array(fitted.lower_bounds_)
    assert _nondecreasing(bounds)


def test_poisson_partial_steps_equal_enumeration():
    assert Poisson.missing_coordinates
    model = PoissonHMM(2)
    model.startprob_ = np.array([0.6, 0.4])
    model.transmat_ = np.array([[0.7, 0.3], [0.2, 0.8]])
    model.lambdas_ = np.array([[1.0, 3.0], [4.0, 0.5]])
    X = np.array([[1.0, 2.0], [np.nan, 0.0], [np.nan, np.nan], [5.0, np.nan]])
    lik = np.ones((4, 2))
    for t, row in enumerate(X):
        obs = ~np.isnan(row)
        for k in range(2):
            lik[t, k] = stats.poisson.pmf(row[obs], model.lambdas_[k][obs]).prod()
    joint = dict(_paths(model.startprob_, model.transmat_, lik))
    log_ev, post, best, _ = _summary(joint, 4, 2)
    assert model.score(X) == pytest.approx(log_ev, rel=1e-10)
    np.testing.assert_allclose(model.predict_proba(X), post, atol=1e-10)
    np.testing.assert_array_equal(model.predict(X), best)


def test_poisson_start_reads_the_observed_cells_only():
    # hmmlearn's start draws the rates from the Gamma distribution with the
    # counts' mean and variance: with missing cells, those of the observed ones.
    rng = np.random.default_rng(3)
    X = rng.poisson(4.0, size=(60, 3)).astype(float)
    holes = rng.random(X.shape) < 0.3
    holes[:, 0] = False  # no step entirely missing
    X[holes] = np.nan
    w = rng.uniform(0.5, 2.0, size=(60, 1))
    seen = np.broadcast_to(w, X.shape)[~holes]
    mean = np.average(X[~holes], weights=seen)
    var = np.average((X[~holes] - mean) ** 2, weights=seen)
    want = np.random.RandomState(7).gamma(mean**2 / var, var / mean, size=(2, 3))
    got = Poisson(3).init_params(X, w, 2, np.random.RandomState(7)).lambdas
    np.testing.assert_allclose(got, want, rtol=1e-12)
    for seed in range(20):
        Y = rng.poisson(rng.choice([1.0, 6.0], size=(50, 1)), size=(50, 2))
        Y = Y.astype(float)
        Y[rng.random(Y.shape) < 0.25] = np.nan
        fitted = PoissonHMM(2, random_state=seed, n_iter=30, tol=0.0).fit(Y)
        assert np.isfinite(fitted.lambdas_).all(), seed
        assert _nondecreasing(np.array(fitted.lower_bounds_)), seed


# -- any pattern of gaps ---------------------------------------------------------------
_steps = st.one_of(st.sampled_from([0.0, 1.0, 2.0]), st.just(np.nan))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_steps, min_size=1, max_size=8), min_size=1, max_size=4))
def test_no_nan_in_posteriors_for_any_gaps(seqs):
    arrays = [np.array(s) for s in seqs]
    X, lengths = np.concatenate(arrays)[:, None], [len(s) for s in arrays]
    for model, data in ((_categorical(3), X), (_gaussian(), X), (_poisson(), X)):
        proba = model.predict_proba(data, lengths)
        assert np.isfinite(proba).all()
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        score = model.score(data, lengths)
        assert np.isfinite(score)
        assert np.isfinite(model.decode(data, lengths)[0])


@pytest.mark.parametrize("family", ["categorical", "poisson"])
def test_objective_with_priors_never_decreases(family):
    """MAP-EM: the observed-data log-likelihood plus the log prior densities."""
    for seed in range(20):
        rng = np.random.default_rng(100 + seed)
        if family == "categorical":
            X = rng.integers(0, 3, size=(40, 1))
            model = CategoricalHMM(
                3, startprob_prior=2.0, transmat_prior=1.5, emissionprob_prior=3.0,
                n_features=3, random_state=seed,
            )  # fmt: skip
        else:
            X = rng.poisson(rng.choice([1.0, 6.0], size=(40, 1)), size=(40, 2))
            model = PoissonHMM(
                2, transmat_prior=2.0, lambdas_prior=2.0, lambdas_weight=0.5,
                per_state_prior=True, random_state=seed,
            )  # fmt: skip
        X = _with_gaps(X, rng, 0.4)
        model.set_params(n_iter=15, tol=0.0).fit(X, [20, 20])
        bounds = np.array(model.lower_bounds_)
        assert _nondecreasing(bounds), seed


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.lists(_steps, min_size=1, max_size=10), min_size=1, max_size=4),
    st.integers(0, 2**16),
)
def test_fit_with_any_gaps_keeps_valid_parameters(seqs, seed):
    arrays = [np.array(s)[:, None] for s in seqs]
    model = CategoricalHMM(2, n_features=3, random_state=seed, n_iter=8, tol=0.0)
    model.fit(arrays)
    for name in ("startprob_", "transmat_", "emissionprob_"):
        value = getattr(model, name)
        assert np.isfinite(value).all()
        np.testing.assert_allclose(value.sum(axis=-1), 1.0)
    bounds = np.array(model.lower_bounds_)
    assert _nondecreasing(bounds)


def test_bic_counts_the_observed_steps():
    model = _categorical(3)
    X = np.array([[0.0], [np.nan], [2.0], [1.0], [np.nan]])
    n_free = 2 + 6 + 6  # start, transitions, emissions
    expected = -2 * model.score(X) + n_free * np.log(3)
    assert model.bic(X) == pytest.approx(expected, rel=1e-12)
    gauss = _gaussian()
    G = np.array([[0.3], [np.nan], [1.0], [2.0]])
    n_free = 1 + 2 + 2 + 2  # start, transitions, means, variances
    assert gauss.bic(G) == pytest.approx(-2 * gauss.score(G) + n_free * np.log(3))
    # Without gaps, n is every step, as hmmlearn's len(X).
    full = np.array([[0], [2], [1]])
    assert model.bic(full) == pytest.approx(-2 * model.score(full) + 14 * np.log(3))
