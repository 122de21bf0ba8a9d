"""The semi-Markov kernels against brute-force enumeration and equivalent HMMs."""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from bayeskit._logmath import safe_log
from bayeskit.graph import forward_backward
from bayeskit.graph._semi_markov_kernels import (
    _duration_rings,
    _scaled_forward_sequence,
    _scaled_width,
)
from bayeskit.graph.semi_markov import (
    _arrays,
    _scaled,
    semi_markov_forward,
    semi_markov_forward_backward,
    semi_markov_viterbi,
)


def _random_model(rng, k, D, n):
    start = rng.dirichlet(np.ones(k))
    trans = rng.dirichlet(np.ones(k), size=k)
    np.fill_diagonal(trans, 0.0)
    trans /= trans.sum(axis=1, keepdims=True)
    pmf = rng.dirichlet(np.ones(D), size=k)
    log_em = rng.normal(size=(n, k)) * 2
    return start, trans, pmf, log_em


def _path_log_prob(path, start, trans, pmf, log_em):
    """log p(x, z) of a state path: its runs are the segments (a_ii = 0), the
    last one censored (its duration at least its length)."""
    D = pmf.shape[1]
    runs = [(s, len(list(g))) for s, g in itertools.groupby(path)]
    total = np.log(start[runs[0][0]])
    for i, (state, d) in enumerate(runs):
        last = i == len(runs) - 1
        p = pmf[state, d - 1 :].sum() if last else (pmf[state, d - 1] if d <= D else 0)
        if d > D or p == 0:
            return -np.inf
        total += np.log(p)
        if not last:
            total += np.log(trans[state, runs[i + 1][0]])
    return total + log_em[np.arange(len(path)), path].sum()


def _brute_force(start, trans, pmf, log_em):
    n, k = log_em.shape
    paths = np.array(list(itertools.product(range(k), repeat=n)))
    with np.errstate(divide="ignore"):
        lp = np.array([_path_log_prob(p, start, trans, pmf, log_em) for p in paths])
    return paths, lp


def _brute_counts(paths, lp, k, D):
    w = np.exp(lp - logsumexp(lp))
    durations = np.zeros((k, D))
    trans = np.zeros((k, k))
    for p, wi in zip(paths, w):
        runs = [(s, len(list(g))) for s, g in itertools.groupby(p)]
        if wi == 0:
            continue
        for i, (s, d) in enumerate(runs[:-1]):
            durations[s, d - 1] += wi
            trans[s, runs[i + 1][0]] += wi
    return durations, trans


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("seed", range(20))
def test_forward_backward_equals_enumeration(seed, exact):
    rng = np.random.default_rng(seed)
    k, D, n = int(rng.integers(2, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 7))
    start, trans, pmf, log_em = _random_model(rng, k, D, n)
    paths, lp = _brute_force(start, trans, pmf, log_em)
    evidence = logsumexp(lp)
    post = semi_markov_forward_backward(
        safe_log(start), safe_log(trans), pmf, log_em, exact=exact
    )
    np.testing.assert_allclose(post.log_evidence, [evidence], rtol=1e-12)
    w = np.exp(lp - evidence)
    gamma = np.stack([w @ (paths == j) for j in range(k)], axis=1)
    np.testing.assert_allclose(post.posterior, gamma, atol=1e-12)
    np.testing.assert_allclose(post.start_counts, gamma[0], atol=1e-12)
    durations, transitions = _brute_counts(paths, lp, k, D)
    np.testing.assert_allclose(post.transition_counts, transitions, atol=1e-12)
    # The complete segments are counted as they are; the censored last one is
    # spread over the durations it may have had, pmf[d'] / surv[d] for d' >= d.
    censored = np.zeros((k, D))
    for p, wi in zip(paths, w):
        state = p[-1]
        d = len(list(next(itertools.groupby(p[::-1]))[1]))
        if wi > 0:
            censored[state, d - 1 :] += (
                wi * pmf[state, d - 1 :] / pmf[state, d - 1 :].sum()
            )
    np.testing.assert_allclose(post.duration_counts, durations + censored, atol=1e-12)
    np.testing.assert_allclose(
        semi_markov_forward(safe_log(start), safe_log(trans), pmf, log_em, exact=exact),
        [evidence],
        rtol=1e-12,
    )


@pytest.mark.parametrize("seed", range(20))
def test_viterbi_equals_enumeration(seed):
    rng = np.random.default_rng(100 + seed)
    k, D, n = int(rng.integers(2, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 7))
    start, trans, pmf, log_em = _random_model(rng, k, D, n)
    paths, lp = _brute_force(start, trans, pmf, log_em)
    path, log_prob = semi_markov_viterbi(safe_log(start), safe_log(trans), pmf, log_em)
    np.testing.assert_allclose(log_prob, [lp.max()], rtol=1e-12)
    np.testing.assert_array_equal(path, paths[np.argmax(lp)])


def test_batched_sequences_equal_one_by_one():
    rng = np.random.default_rng(7)
    k, D = 3, 6
    lengths = rng.integers(1, 40, size=30)
    start, trans, pmf, log_em = _random_model(rng, k, D, lengths.sum())
    weights = rng.uniform(0.1, 3, size=len(lengths))
    args = (safe_log(start), safe_log(trans), pmf)
    post = semi_markov_forward_backward(*args, log_em, lengths, weights)
    path, log_prob = semi_markov_viterbi(*args, log_em, lengths)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    counts = np.zeros((k, D))
    for n, (s, e) in enumerate(itertools.pairwise(bounds)):
        one = semi_markov_forward_backward(*args, log_em[s:e])
        np.testing.assert_allclose(post.log_evidence[n], one.log_evidence[0])
        np.testing.assert_allclose(post.posterior[s:e], one.posterior, atol=1e-13)
        counts += weights[n] * one.duration_counts
        p1, l1 = semi_markov_viterbi(*args, log_em[s:e])
        np.testing.assert_array_equal(path[s:e], p1)
        np.testing.assert_allclose(log_prob[n], l1[0])
    np.testing.assert_allclose(post.duration_counts, counts, rtol=1e-12)


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_posteriors_without_counts_are_the_posteriors_with_them(seed, exact):
    """``counts=False`` (what ``predict_proba`` runs) skips the expected
    counts and changes nothing else: the log evidence and every step's
    posterior are the full pass's to 1e-12, on batches of sequences large
    enough for the compiled kernels, the scaled and the log-space paths."""
    rng = np.random.default_rng(300 + seed)
    k, D = int(rng.integers(2, 6)), int(rng.integers(1, 60))
    lengths = rng.integers(1, 400, size=int(rng.integers(1, 12)))
    start, trans, pmf, log_em = _random_model(rng, k, D, lengths.sum())
    log_em *= rng.uniform(0.1, 20)  # far apart states send some to log space
    args = (safe_log(start), safe_log(trans), pmf, log_em, lengths)
    full = semi_markov_forward_backward(*args, exact=exact)
    alone = semi_markov_forward_backward(*args, exact=exact, counts=False)
    np.testing.assert_allclose(alone.log_evidence, full.log_evidence, rtol=1e-12)
    np.testing.assert_allclose(alone.posterior, full.posterior, atol=1e-12)
    assert alone.duration_counts is None and alone.transition_counts is None


@pytest.mark.parametrize("k", range(1, 8))
def test_the_unrolled_and_the_general_scaled_passes_equal_the_log_space_ones(k):
    """At most four states take the unrolled scaled passes (padded to four
    states that never start), more take the general ones: both give the
    log-space recursions' evidence, posteriors and expected counts, on
    sequences of one step, of fewer steps than the longest duration and of
    many more."""
    rng = np.random.default_rng(500 + k)
    D = 9
    lengths = np.array([1, 2, 7, 500, 40])
    with np.errstate(invalid="ignore"):  # one state: no other to move to
        start, trans, pmf, log_em = _random_model(rng, k, D, lengths.sum())
    if k == 1:
        trans = np.ones((1, 1))  # a segment of the one state follows another
    args = (safe_log(start), safe_log(trans), pmf, log_em, lengths)
    scaled = semi_markov_forward_backward(*args)
    exact = semi_markov_forward_backward(*args, exact=True)
    np.testing.assert_allclose(scaled.log_evidence, exact.log_evidence, rtol=1e-12)
    np.testing.assert_allclose(scaled.posterior, exact.posterior, atol=1e-10)
    for name in ("start_counts", "transition_counts", "duration_counts"):
        np.testing.assert_allclose(
            getattr(scaled, name), getattr(exact, name), rtol=1e-9, atol=1e-10
        )
    np.testing.assert_allclose(
        semi_markov_forward(*args), exact.log_evidence, rtol=1e-12
    )


@pytest.mark.parametrize("seed", range(10))
def test_geometric_durations_equal_the_hmm(seed):
    """Durations geometric with stay probability a_ii (truncated where the
    tail is below 1e-15) and transitions a_ij / (1 - a_ii): the HMM."""
    rng = np.random.default_rng(200 + seed)
    k, n = 3, 60
    hmm_trans = rng.dirichlet(np.ones(k), size=k)
    np.fill_diagonal(hmm_trans, rng.uniform(0.3, 0.8, size=k))
    hmm_trans /= hmm_trans.sum(axis=1, keepdims=True)
    start = rng.dirichlet(np.ones(k))
    stay = np.diag(hmm_trans).copy()
    D = int(np.ceil(np.log(1e-16) / np.log(stay.max()))) + 1
    d = np.arange(1, D + 1)
    pmf = (1 - stay)[:, None] * stay[:, None] ** (d - 1)
    pmf /= pmf.sum(axis=1, keepdims=True)
    trans = hmm_trans / (1 - stay)[:, None]
    np.fill_diagonal(trans, 0.0)
    log_em = rng.normal(size=(n, k)) * 2
    lengths = [25, 1, 34]
    hmm = forward_backward(safe_log(start), safe_log(hmm_trans), log_em, lengths)
    with np.errstate(divide="ignore"):
        post = semi_markov_forward_backward(
            safe_log(start), safe_log(trans), pmf, log_em, lengths
        )
    np.testing.assert_allclose(post.log_evidence, hmm.log_evidence, rtol=1e-10)
    np.testing.assert_allclose(post.posterior, hmm.posterior, atol=1e-10)
    # Segment transitions are the HMM's off-diagonal transitions.
    off = hmm.transition_counts * (1 - np.eye(k))
    np.testing.assert_allclose(post.transition_counts, off, atol=1e-9)


def _expanded_hmm(start, trans, pmf):
    """The HMM on (state, steps left) of the semi-Markov chain: K * D states."""
    k, D = pmf.shape
    big_start = (start[:, None] * pmf).ravel()
    big = np.zeros((k * D, k * D))
    for j in range(k):
        for r in range(1, D):
            big[j * D + r, j * D + r - 1] = 1.0  # count down
        big[j * D, :] = (trans[j][:, None] * pmf).ravel()  # segment ends
    return big_start, big


@pytest.mark.parametrize("seed", range(10))
def test_table_durations_equal_the_expanded_hmm(seed):
    rng = np.random.default_rng(300 + seed)
    k, D, n = 3, 7, 80
    start, trans, pmf, log_em = _random_model(rng, k, D, n)
    pmf[0, 0] = 0.0  # structural zeros in the table too
    pmf /= pmf.sum(axis=1, keepdims=True)
    lengths = [30, 3, 47]
    big_start, big = _expanded_hmm(start, trans, pmf)
    with np.errstate(divide="ignore"):
        hmm = forward_backward(
            safe_log(big_start), safe_log(big), np.repeat(log_em, D, axis=1), lengths
        )
    post = semi_markov_forward_backward(
        safe_log(start), safe_log(trans), pmf, log_em, lengths
    )
    np.testing.assert_allclose(post.log_evidence, hmm.log_evidence, rtol=1e-10)
    gamma = hmm.posterior.reshape(n, k, D).sum(axis=2)
    np.testing.assert_allclose(post.posterior, gamma, atol=1e-10)


def test_an_impossible_sequence_is_an_error_and_scores_minus_inf():
    start, trans = np.array([1.0, 0.0]), np.array([[0.0, 1.0], [1.0, 0.0]])
    pmf = np.array([[1.0], [1.0]])
    log_em = np.array([[0.0, -np.inf], [0.0, -np.inf]])  # state 0 twice: impossible
    with np.errstate(divide="ignore"):
        args = (safe_log(start), safe_log(trans), pmf, log_em)
    assert semi_markov_forward(*args)[0] == -np.inf
    with pytest.raises(ValueError, match="probability zero"):
        semi_markov_forward_backward(*args)
    with pytest.raises(ValueError, match="probability zero"):
        semi_markov_viterbi(*args)


def test_a_step_the_scaled_recursion_loses_goes_to_log_space():
    """State 0 stays exactly 5 steps, state 1 one step; step 2 (surely state
    0) has emission e^-800 there: the scaled step's mass underflows to 0, and
    the sequence is recomputed in log space."""
    start, trans = np.array([1.0, 0.0]), np.array([[0.0, 1.0], [1.0, 0.0]])
    pmf = np.array([[0, 0, 0, 0, 1.0], [1.0, 0, 0, 0, 0]])
    log_em = np.zeros((12, 2))
    log_em[2] = [-800.0, 0.0]
    args = (safe_log(start), safe_log(trans), pmf, log_em)
    start_, trans_, pmf_, surv_, bt, shift = _scaled(*_arrays(*args))
    width = _scaled_width(5)
    fwd_pmf, fwd_surv, _ = _duration_rings(pmf_, surv_, width)
    A, F, gamma = np.zeros((2, 12)), np.zeros((2, 12)), np.zeros((12, 2))
    ring = np.empty((2, width))
    tables = (fwd_pmf, fwd_surv, bt, shift)
    log_lik = _scaled_forward_sequence(
        start_, trans_, *tables, 0, 12, A, F, np.zeros(12), gamma, ring, True
    )
    assert np.isnan(log_lik)
    path = np.array([0] * 5 + [1] + [0] * 5 + [1])
    for exact in (False, True):
        post = semi_markov_forward_backward(*args, exact=exact)
        np.testing.assert_allclose(post.log_evidence, [-800.0], rtol=1e-14)
        np.testing.assert_allclose(post.posterior, np.eye(2)[path], atol=1e-14)
        np.testing.assert_allclose(semi_markov_forward(*args, exact=exact), [-800.0])
    assert (
        semi_markov_forward(*args[:3], np.where(log_em < 0, -np.inf, 0.0))[0] == -np.inf
    )


@pytest.mark.parametrize("seed", range(3))
def test_long_sequences_with_far_apart_states_equal_the_log_space_recursions(seed):
    """Long stays and emissions tens to hundreds of nats apart: the scaled
    messages of the unlikely segments fall below 1e-200 (flushed to zero in
    the rings rather than computed as subnormal numbers); the scaled
    recursions still give the log-space ones."""
    rng = np.random.default_rng(seed)
    k, D, lengths = 4, 50, [3000, 2000, 1000]
    start, trans, _, _ = _random_model(rng, k, D, 1)
    d = np.arange(1, D + 1)
    pmf = np.exp(-((d - rng.uniform(5, 30, size=(k, 1))) ** 2) / 20)
    pmf /= pmf.sum(axis=1, keepdims=True)
    states, state = [], 0
    while len(states) < sum(lengths):
        states += [state] * (1 + rng.choice(D, p=pmf[state]))
        state = rng.choice(k, p=trans[state])
    states = np.array(states[: sum(lengths)])
    x = rng.normal(10.0 * states, 1.0)
    log_em = -0.5 * (x[:, None] - 10.0 * np.arange(k)) ** 2
    args = (safe_log(start), safe_log(trans), pmf, log_em, lengths)
    scaled = semi_markov_forward_backward(*args)
    exact = semi_markov_forward_backward(*args, exact=True)
    np.testing.assert_allclose(scaled.log_evidence, exact.log_evidence, rtol=1e-12)
    np.testing.assert_allclose(scaled.posterior, exact.posterior, atol=1e-9)
    for name in ("start_counts", "transition_counts", "duration_counts"):
        np.testing.assert_allclose(
            getattr(scaled, name), getattr(exact, name), rtol=1e-9, atol=1e-9
        )
    np.testing.assert_allclose(
        semi_markov_forward(*args), exact.log_evidence, rtol=1e-12
    )


@pytest.mark.parametrize("bad", ["start", "transitions", "durations"])
def test_nan_or_infinite_parameters_are_refused_by_name(bad):
    """The kernels' maxima assume no NaN: a NaN start or transition log
    probability, or a NaN duration probability, is an error naming it, in
    every pass."""
    rng = np.random.default_rng(0)
    start, trans, pmf, log_em = _random_model(rng, 3, 4, 20)
    args = [safe_log(start), safe_log(trans), pmf, log_em]
    index, value, name = {
        "start": (0, np.nan, "log_startprob"),
        "transitions": (1, np.inf, "log_transmat"),
        "durations": (2, np.nan, "pmf"),
    }[bad]
    args[index] = args[index].copy()
    args[index].flat[1] = value
    for run in (semi_markov_forward, semi_markov_forward_backward, semi_markov_viterbi):
        with pytest.raises(ValueError, match=name):
            run(*args)
