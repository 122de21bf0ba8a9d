"""Chain kernels against brute-force enumeration of every state path, a plain
log-space recursion, and hmmlearn."""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from bayeskit._logmath import log_matmul, safe_log
from bayeskit.graph import chain
from bayeskit.graph.chain import forward, forward_backward, viterbi

# ---------------------------------------------------------------------------
# References
# ---------------------------------------------------------------------------


def random_model(rng, n_states, zeros=False):
    """Log start and transition probabilities; with ``zeros``, about a third
    of the transitions are exactly zero (every row keeps one entry)."""
    start = rng.dirichlet(np.ones(n_states))
    trans = rng.dirichlet(np.ones(n_states), size=n_states)
    if zeros and n_states > 1:
        mask = rng.random(trans.shape) < 0.35
        mask[0, 0] = True
        mask[np.arange(n_states), rng.integers(1, n_states, n_states)] = False
        trans = np.where(mask, 0.0, trans)
        trans /= trans.sum(axis=1, keepdims=True)
    return safe_log(start), safe_log(trans)


def log_joint_of_every_path(log_start, log_trans, log_emission):
    """``log p(x, z)`` for every path ``z``: an array with one axis per step."""
    n_steps, n_states = log_emission.shape

    def along(values, axes):
        shape = [1] * n_steps
        for axis in axes:
            shape[axis] = n_states
        return values.reshape(shape)

    joint = along(log_start, [0]) + along(log_emission[0], [0])
    for t in range(1, n_steps):
        joint = joint + along(log_trans, [t - 1, t]) + along(log_emission[t], [t])
    return joint


def enumerate_sequence(log_start, log_trans, log_emission):
    """Log-likelihood, posteriors, transition counts, best path and its log
    probability of one sequence, by summing and maximising over all paths."""
    n_steps, n_states = log_emission.shape
    joint = log_joint_of_every_path(log_start, log_trans, log_emission)

    def all_but(*keep):
        return tuple(a for a in range(n_steps) if a not in keep)

    log_lik = logsumexp(joint)
    posterior = np.array(
        [np.exp(logsumexp(joint, axis=all_but(t)) - log_lik) for t in range(n_steps)]
    )
    counts = np.zeros((n_states, n_states))
    for t in range(n_steps - 1):
        pair = logsumexp(joint, axis=all_but(t, t + 1)).reshape(n_states, n_states)
        counts += np.exp(pair - log_lik)
    best = np.array(np.unravel_index(np.argmax(joint), joint.shape))
    return log_lik, posterior, counts, best, joint.max()


def enumerate_all(log_start, log_trans, log_emission, lengths):
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    results = [
        enumerate_sequence(log_start, log_trans, log_emission[s:e])
        for s, e in itertools.pairwise(bounds)
    ]
    log_lik, posterior, counts, best, best_log_prob = zip(*results)
    return (
        np.array(log_lik),
        np.concatenate(posterior),
        np.sum(counts, axis=0),
        np.concatenate(best),
        np.array(best_log_prob),
    )


def log_space_forward_backward(log_start, log_trans, log_emission):
    """Textbook log-space forward-backward of one sequence (a second,
    independent reference for chains too long to enumerate)."""
    n_steps, n_states = log_emission.shape
    log_alpha = np.empty((n_steps, n_states))
    log_beta = np.zeros((n_steps, n_states))
    log_alpha[0] = log_start + log_emission[0]
    for t in range(1, n_steps):
        log_alpha[t] = logsumexp(log_alpha[t - 1][:, None] + log_trans, axis=0)
        log_alpha[t] += log_emission[t]
    for t in range(n_steps - 2, -1, -1):
        log_beta[t] = logsumexp(
            log_trans + (log_emission[t + 1] + log_beta[t + 1])[None, :], axis=1
        )
    log_lik = logsumexp(log_alpha[-1])
    posterior = np.exp(log_alpha + log_beta - log_lik)
    log_xi = (
        log_alpha[:-1, :, None]
        + log_trans[None]
        + (log_emission[1:] + log_beta[1:])[:, None, :]
    )
    counts = np.exp(logsumexp(log_xi, axis=0) - log_lik)
    return log_lik, posterior, counts


def random_problem(rng, max_states=4, max_steps=10, max_sequences=4):
    n_states = int(rng.integers(1, max_states + 1))
    lengths = rng.integers(
        1, max_steps + 1, size=int(rng.integers(1, max_sequences + 1))
    )
    if n_states == 4:  # keep the enumeration small: at most one long sequence
        lengths = np.minimum(lengths, [10] + [7] * (len(lengths) - 1))
    return n_states, lengths


def assert_matches_enumeration(log_start, log_trans, log_emission, lengths):
    log_lik, posterior, counts, _, _ = enumerate_all(
        log_start, log_trans, log_emission, lengths
    )
    post = forward_backward(log_start, log_trans, log_emission, lengths)
    filt = forward(log_start, log_trans, log_emission, lengths)
    np.testing.assert_allclose(post.log_likelihood, log_lik, rtol=1e-13, atol=1e-10)
    np.testing.assert_allclose(filt.log_likelihood, log_lik, rtol=1e-13, atol=1e-10)
    np.testing.assert_allclose(np.exp(post.log_posterior), posterior, atol=1e-10)
    np.testing.assert_allclose(post.transition_counts, counts, atol=1e-10)
    # The filtered distribution of a last step is its posterior.
    last = np.cumsum(lengths) - 1
    np.testing.assert_allclose(
        np.exp(filt.log_final_filtered), posterior[last], atol=1e-10
    )
    # Probability zero stays exactly zero, never NaN.
    np.testing.assert_array_equal(np.exp(post.log_posterior) == 0.0, posterior == 0.0)
    assert not np.isnan(post.log_posterior).any()
    return post


# ---------------------------------------------------------------------------
# Sum-product and max-product against enumeration
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(20))
def test_sum_product_matches_enumeration(seed):
    rng = np.random.default_rng(seed)
    n_states, lengths = random_problem(rng)
    log_start, log_trans = random_model(rng, n_states)
    log_emission = rng.normal(scale=2.0, size=(lengths.sum(), n_states))
    post = assert_matches_enumeration(log_start, log_trans, log_emission, lengths)
    np.testing.assert_allclose(np.exp(post.log_posterior).sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(post.transition_counts.sum(), np.sum(lengths - 1))


@pytest.mark.parametrize("seed", range(20))
def test_max_product_matches_enumeration(seed):
    rng = np.random.default_rng(seed)
    n_states, lengths = random_problem(rng)
    log_start, log_trans = random_model(rng, n_states, zeros=seed % 2 == 1)
    log_emission = rng.normal(scale=2.0, size=(lengths.sum(), n_states))
    _, _, _, best, best_log_prob = enumerate_all(
        log_start, log_trans, log_emission, lengths
    )
    path, log_prob = viterbi(log_start, log_trans, log_emission, lengths)
    assert path.shape == (lengths.sum(),)
    assert np.issubdtype(path.dtype, np.integer)
    np.testing.assert_array_equal(path, best)
    np.testing.assert_allclose(log_prob, best_log_prob, rtol=1e-13, atol=1e-10)


@pytest.mark.parametrize("seed", range(15))
def test_structural_zeros_match_enumeration(seed):
    rng = np.random.default_rng(seed)
    n_states, lengths = random_problem(rng)
    n_states = max(n_states, 2)
    log_start, log_trans = random_model(rng, n_states, zeros=True)
    # Zero emissions anywhere but on one path drawn from the chain, so that
    # every sequence stays possible.
    emission = rng.gamma(1.0, size=(lengths.sum(), n_states))
    emission[rng.random(emission.shape) < 0.3] = 0.0
    starts = np.concatenate([[0], np.cumsum(lengths)])
    for s, e in itertools.pairwise(starts):
        z = rng.choice(n_states, p=np.exp(log_start))
        for t in range(s, e):
            emission[t, z] = 1.0
            z = rng.choice(n_states, p=np.exp(log_trans[z]))
    log_emission = safe_log(emission)
    assert np.isneginf(log_trans).any() and np.isneginf(log_emission).any()
    assert_matches_enumeration(log_start, log_trans, log_emission, lengths)
    path, log_prob = viterbi(log_start, log_trans, log_emission, lengths)
    _, _, _, best, best_log_prob = enumerate_all(
        log_start, log_trans, log_emission, lengths
    )
    np.testing.assert_array_equal(path, best)
    np.testing.assert_allclose(log_prob, best_log_prob, rtol=1e-13)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("zeros", [False, True])
def test_emissions_far_from_zero_match_enumeration(seed, zeros):
    # Gaussian-like log-densities: per-step offsets down to -1e4 (and -1e5 on
    # one step); with dense transitions, spreads between the states of a step
    # of up to thousands of nats, far beyond the range of exp (745).
    rng = np.random.default_rng(seed)
    n_states, lengths = random_problem(rng)
    log_start, log_trans = random_model(rng, n_states, zeros=zeros)
    n_steps = lengths.sum()
    spread = (
        rng.uniform(0, 40, (n_steps, n_states))
        if zeros
        else rng.exponential(300.0, size=(n_steps, n_states))
    )
    log_emission = rng.uniform(-1e4, 0.0, size=(n_steps, 1)) - spread
    log_emission[0] -= 1e5
    assert_matches_enumeration(log_start, log_trans, log_emission, lengths)
    _, _, _, best, best_log_prob = enumerate_all(
        log_start, log_trans, log_emission, lengths
    )
    path, log_prob = viterbi(log_start, log_trans, log_emission, lengths)
    np.testing.assert_array_equal(path, best)
    np.testing.assert_allclose(log_prob, best_log_prob, rtol=1e-13)


def test_best_fitting_state_unreachable_matches_enumeration():
    # The chain starts in state 1 or 2 and can never enter state 0, whose
    # emissions are 1000 nats better at every step: the shifted emissions of
    # the reachable states underflow, and every step is redone with the shift
    # taken over the reachable states.
    log_start = safe_log(np.array([0.0, 0.6, 0.4]))
    log_trans = safe_log(np.array([[0.5, 0.5, 0.0], [0.0, 0.7, 0.3], [0.0, 0.2, 0.8]]))
    rng = np.random.default_rng(0)
    log_emission = rng.normal(size=(8, 3))
    log_emission[:, 0] += 1000.0
    log_emission[5, 1] = -np.inf
    lengths = [8]
    assert_matches_enumeration(log_start, log_trans, log_emission, lengths)
    _, _, _, best, best_log_prob = enumerate_all(
        log_start, log_trans, log_emission, lengths
    )
    path, log_prob = viterbi(log_start, log_trans, log_emission, lengths)
    np.testing.assert_array_equal(path, best)
    np.testing.assert_allclose(log_prob, best_log_prob, rtol=1e-13)


def test_state_dropped_by_the_scaling_and_needed_later():
    # State 1 cannot return to state 0. After step 0, state 0 is e^1000 less
    # likely than state 1, beyond the range of one scale per step; step 1 is
    # e^3000 less likely under state 1 than under state 0, so the best path is
    # 0 -> 0 and log p(x) is about -1000. The scaled recursion drops state 0
    # and the sequence is recomputed in log space.
    log_start = np.log([0.5, 0.5])
    log_trans = safe_log(np.array([[0.5, 0.5], [0.0, 1.0]]))
    log_emission = np.array([[-1000.0, 0.0], [0.0, -3000.0]])
    log_lik = enumerate_all(log_start, log_trans, log_emission, [2])[0]
    assert -1002 < log_lik[0] < -1000
    np.testing.assert_allclose(
        forward(log_start, log_trans, log_emission).log_likelihood, log_lik
    )
    assert_matches_enumeration(log_start, log_trans, log_emission, [2])
    # The same sequence between two ordinary ones, and in parallel tasks.
    ordinary = np.log([[0.5, 0.4], [0.3, 0.6], [0.2, 0.2]])
    log_emission = np.concatenate([ordinary, log_emission, ordinary[:2]])
    assert_matches_enumeration(log_start, log_trans, log_emission, [3, 2, 2])


def left_to_right_model(rng, n_states):
    """A left-to-right chain: a random start over the first two states, each
    state stays or moves on by one or two (every other transition is 0)."""
    start = np.zeros(n_states)
    start[:2] = rng.dirichlet(np.ones(2))
    trans = np.zeros((n_states, n_states))
    for i in range(n_states):
        ahead = min(3, n_states - i)
        trans[i, i : i + ahead] = rng.dirichlet(np.full(ahead, 0.5) + [5, 0, 0][:ahead])
    return safe_log(start), safe_log(trans)


def gaussian_left_to_right_problem(rng, n_states=5, max_steps=300, n_sequences=3):
    """Left-to-right model and Gaussian log-densities of data drawn from it:
    well separated means (d-dimensional, so hundreds to thousands of nats
    between states) and about 2% outliers far from every mean; a sequence
    may also restart in state 0 halfway, which only a path dropped by the
    scaling can explain."""
    log_start, log_trans = left_to_right_model(rng, n_states)
    dim = int(rng.integers(1, 30))
    means = np.arange(n_states)[:, None] * rng.uniform(3, 10) + rng.normal(
        size=(n_states, dim)
    )
    lengths = rng.integers(2, max_steps + 1, size=n_sequences)
    x = []
    for length in lengths:
        z = [rng.choice(n_states, p=np.exp(log_start))]
        for _ in range(length - 1):
            z.append(rng.choice(n_states, p=np.exp(log_trans[z[-1]])))
        z = np.array(z)
        if rng.random() < 0.3:
            z[length // 2 :] = 0
        steps = means[z] + rng.normal(size=(length, dim))
        outliers = rng.random(length) < 0.02
        steps[outliers] += rng.normal(scale=40.0, size=(outliers.sum(), dim))
        x.append(steps)
    x = np.concatenate(x)
    sq = ((x[:, None, :] - means[None]) ** 2).sum(axis=2)
    log_emission = -0.5 * sq - 0.5 * dim * np.log(2 * np.pi)
    return log_start, log_trans, log_emission, lengths


def assert_matches_log_space(log_start, log_trans, log_emission, lengths):
    """forward and forward_backward against the textbook log-space recursion,
    sequence by sequence; returns the number of possible sequences."""
    post = forward_backward(log_start, log_trans, log_emission, lengths)
    filt = forward(log_start, log_trans, log_emission, lengths)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    counts = np.zeros_like(post.transition_counts)
    for n, (s, e) in enumerate(itertools.pairwise(bounds)):
        log_lik, posterior, pair = log_space_forward_backward(
            log_start, log_trans, log_emission[s:e]
        )
        counts += pair
        np.testing.assert_allclose(post.log_likelihood[n], log_lik, rtol=1e-12)
        np.testing.assert_allclose(filt.log_likelihood[n], log_lik, rtol=1e-12)
        # Probabilities: 1e-8 relative, or 1e-12 absolute (the total is 1).
        np.testing.assert_allclose(
            np.exp(post.log_posterior[s:e]), posterior, rtol=1e-8, atol=1e-12
        )
        np.testing.assert_allclose(
            np.exp(filt.log_final_filtered[n]), posterior[-1], rtol=1e-8, atol=1e-12
        )
    np.testing.assert_allclose(post.transition_counts, counts, rtol=1e-8, atol=1e-10)
    assert not np.isnan(post.log_posterior).any()


@pytest.mark.parametrize("seed", range(40))
def test_left_to_right_with_huge_emission_spreads_matches_log_space(seed):
    rng = np.random.default_rng(seed)
    problem = gaussian_left_to_right_problem(rng)
    assert_matches_log_space(*problem)


def test_the_left_to_right_problems_defeat_the_scaling_alone(monkeypatch):
    # The stress test above is meaningful: without the detection of lost
    # states, the scaled recursion is wrong or fails on many of its problems.
    monkeypatch.setattr(chain, "_needs_detection", lambda trans_prob: False)
    n_wrong = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        log_start, log_trans, log_emission, lengths = gaussian_left_to_right_problem(
            rng
        )
        filt = forward(log_start, log_trans, log_emission, lengths)
        bounds = np.concatenate([[0], np.cumsum(lengths)])
        for n, (s, e) in enumerate(itertools.pairwise(bounds)):
            log_lik = log_space_forward_backward(
                log_start, log_trans, log_emission[s:e]
            )[0]
            n_wrong += not np.isclose(filt.log_likelihood[n], log_lik, rtol=1e-8)
    assert n_wrong >= 10


@pytest.mark.parametrize("seed", range(10))
def test_dense_model_with_huge_emission_spreads_matches_log_space(seed):
    # All transitions positive (tiny ones included): the scaling may drop
    # states, which is harmless; the kernels stay on the scaled recursion.
    rng = np.random.default_rng(100 + seed)
    log_start, _, log_emission, lengths = gaussian_left_to_right_problem(rng)
    n_states = len(log_start)
    trans = rng.dirichlet(np.ones(n_states), size=n_states)
    trans[rng.random(trans.shape) < 0.3] = 1e-150
    log_trans = np.log(trans / trans.sum(axis=1, keepdims=True))
    log_start = np.log(rng.dirichlet(np.ones(n_states)))
    assert not chain._needs_detection(np.exp(log_trans))
    assert_matches_log_space(log_start, log_trans, log_emission, lengths)


def test_gaussian_hmm_left_to_right_is_exact():
    # Reported: a two-state left-to-right GaussianHMM raised
    # FloatingPointError from forward_backward on 50 steps near 0, then 50
    # near 8.
    from scipy.stats import norm

    from bayeskit import GaussianHMM

    rng = np.random.default_rng(7)  # one of many seeds that raised
    X = np.concatenate([rng.normal(0.0, 1.0, 50), rng.normal(8.0, 1.0, 50)])[:, None]
    hmm = GaussianHMM(n_components=2, init_params="", n_iter=0)
    hmm.startprob_ = np.array([1.0, 0.0])
    hmm.transmat_ = np.array([[0.98, 0.02], [0.0, 1.0]])
    hmm.means_ = np.array([[0.13], [8.03]])
    hmm.covars_ = np.array([[0.91], [0.88]])
    hmm.fit(X)
    log_emission = norm.logpdf(X, hmm.means_[:, 0], np.sqrt(hmm.covariances_[:, 0]))
    log_lik, posterior, _ = log_space_forward_backward(
        safe_log(hmm.startprob_), safe_log(hmm.transmat_), log_emission
    )
    score = hmm.score(X)
    proba = hmm.predict_proba(X)
    assert np.isfinite(score) and np.isfinite(proba).all()
    np.testing.assert_allclose(score, log_lik, rtol=1e-10)
    np.testing.assert_allclose(proba, posterior, rtol=1e-8, atol=1e-12)
    assert (proba[:50, 0] > 0.99).all() and (proba[55:, 1] > 0.99).all()


def test_long_chain_matches_log_space_recursion():
    # Long enough for many exact power-of-two rescalings of the messages.
    rng = np.random.default_rng(1)
    log_start, log_trans = random_model(rng, 3, zeros=True)
    log_emission = rng.normal(scale=3.0, size=(3000, 3)) - 5.0
    log_lik, posterior, counts = log_space_forward_backward(
        log_start, log_trans, log_emission
    )
    post = forward_backward(log_start, log_trans, log_emission)
    np.testing.assert_allclose(post.log_likelihood, [log_lik], rtol=1e-12)
    np.testing.assert_allclose(np.exp(post.log_posterior), posterior, atol=1e-10)
    np.testing.assert_allclose(post.transition_counts, counts, rtol=1e-9, atol=1e-9)


def test_million_step_chain_continues_exactly_from_its_final_message():
    rng = np.random.default_rng(2)
    log_start, log_trans = random_model(rng, 3)
    n_steps = 10**6
    log_emission = rng.normal(scale=3.0, size=(n_steps, 3)) - 2.0
    half = n_steps // 2
    whole = forward(log_start, log_trans, log_emission)
    first = forward(log_start, log_trans, log_emission[:half])
    # The start of the second half: the one-step prediction from the first.
    log_next = log_matmul(first.log_final_filtered, log_trans)[0]
    second = forward(log_next, log_trans, log_emission[half:])
    assert np.isfinite(whole.log_likelihood).all()
    np.testing.assert_allclose(
        whole.log_likelihood, first.log_likelihood + second.log_likelihood, rtol=1e-8
    )
    np.testing.assert_allclose(
        whole.log_final_filtered, second.log_final_filtered, atol=1e-8
    )


def test_forward_backward_of_a_million_steps_is_finite_and_consistent():
    rng = np.random.default_rng(3)
    log_start, log_trans = random_model(rng, 4, zeros=True)
    log_emission = rng.normal(scale=3.0, size=(10**6, 4))
    post = forward_backward(log_start, log_trans, log_emission)
    filt = forward(log_start, log_trans, log_emission)
    np.testing.assert_allclose(post.log_likelihood, filt.log_likelihood, rtol=1e-12)
    assert not np.isnan(post.log_posterior).any()
    np.testing.assert_allclose(np.exp(post.log_posterior).sum(axis=1), 1.0, atol=1e-9)
    np.testing.assert_allclose(post.transition_counts.sum(), 10**6 - 1, rtol=1e-9)


def test_many_sequences_in_parallel_equal_one_at_a_time(monkeypatch):
    # Split the sequences into parallel tasks however small the work.
    monkeypatch.setattr(chain, "_MIN_PARALLEL_WORK", 0)
    rng = np.random.default_rng(7)
    log_start, log_trans = random_model(rng, 4, zeros=True)
    lengths = rng.integers(1, 200, size=300)
    log_emission = rng.normal(scale=2.0, size=(lengths.sum(), 4))
    post = forward_backward(log_start, log_trans, log_emission, lengths)
    filt = forward(log_start, log_trans, log_emission, lengths)
    path, log_prob = viterbi(log_start, log_trans, log_emission, lengths)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    counts = np.zeros((4, 4))
    monkeypatch.undo()
    for n, (s, e) in enumerate(itertools.pairwise(bounds)):
        one = forward_backward(log_start, log_trans, log_emission[s:e])
        np.testing.assert_allclose(post.log_likelihood[n], one.log_likelihood[0])
        np.testing.assert_allclose(filt.log_likelihood[n], one.log_likelihood[0])
        np.testing.assert_allclose(post.log_posterior[s:e], one.log_posterior)
        counts += one.transition_counts
        one_path, one_log_prob = viterbi(log_start, log_trans, log_emission[s:e])
        np.testing.assert_array_equal(path[s:e], one_path)
        np.testing.assert_allclose(log_prob[n], one_log_prob[0])
    np.testing.assert_allclose(post.transition_counts, counts)


# ---------------------------------------------------------------------------
# Ties, impossible sequences
# ---------------------------------------------------------------------------


def test_viterbi_breaks_ties_towards_the_lowest_state():
    # Every path has the same probability: the best path is all zeros.
    n_states = 3
    log_start = np.full(n_states, -np.log(n_states))
    log_trans = np.full((n_states, n_states), -np.log(n_states))
    log_emission = np.zeros((5, n_states))
    path, log_prob = viterbi(log_start, log_trans, log_emission, [2, 3])
    np.testing.assert_array_equal(path, np.zeros(5))
    np.testing.assert_allclose(log_prob, -np.log(n_states) * np.array([2, 3]))
    # A tie between states 1 and 2 at the last step, state 0 impossible there.
    log_emission[-1] = [-np.inf, 0.0, 0.0]
    path, _ = viterbi(log_start, log_trans, log_emission)
    assert path[-1] == 1


def test_impossible_sequence():
    rng = np.random.default_rng(4)
    log_start, log_trans = random_model(rng, 3)
    log_emission = rng.normal(size=(9, 3))
    log_emission[5] = -np.inf  # no state can emit step 5, in the second sequence
    lengths = [4, 3, 2]
    filt = forward(log_start, log_trans, log_emission, lengths)
    assert filt.log_likelihood[1] == -np.inf
    assert np.isneginf(filt.log_final_filtered[1]).all()
    others = forward(
        log_start, log_trans, np.concatenate([log_emission[:4], log_emission[7:]]),
        [4, 2],
    )  # fmt: skip
    np.testing.assert_allclose(filt.log_likelihood[[0, 2]], others.log_likelihood)
    np.testing.assert_allclose(
        filt.log_final_filtered[[0, 2]], others.log_final_filtered
    )
    with pytest.raises(ValueError, match=r"sequence 1 .* probability zero"):
        forward_backward(log_start, log_trans, log_emission, lengths)
    path, log_prob = viterbi(log_start, log_trans, log_emission, lengths)
    assert log_prob[1] == -np.inf and np.isfinite(log_prob[[0, 2]]).all()
    assert ((path >= 0) & (path < 3)).all()


def test_impossible_through_structural_zeros():
    # Each step alone is possible; no path connects them.
    log_start = safe_log(np.array([1.0, 0.0]))
    log_trans = safe_log(np.eye(2))
    log_emission = safe_log(np.array([[1.0, 1.0], [0.0, 1.0]]))
    assert forward(log_start, log_trans, log_emission).log_likelihood[0] == -np.inf
    with pytest.raises(ValueError, match="probability zero"):
        forward_backward(log_start, log_trans, log_emission)


# ---------------------------------------------------------------------------
# Parity with hmmlearn
# ---------------------------------------------------------------------------


@pytest.mark.parity
@pytest.mark.parametrize("implementation", ["log", "scaling"])
def test_parity_with_hmmlearn(implementation):
    hmm = pytest.importorskip("hmmlearn.hmm")
    rng = np.random.default_rng(5)
    n_states, n_symbols = 4, 6
    model = hmm.CategoricalHMM(n_components=n_states, implementation=implementation)
    model.n_features = n_symbols
    model.startprob_ = rng.dirichlet(np.ones(n_states))
    model.transmat_ = rng.dirichlet(np.ones(n_states), size=n_states)
    model.emissionprob_ = rng.dirichlet(np.ones(n_symbols), size=n_states)
    lengths = np.array([50, 1, 120, 30])
    # No symbol repeats at consecutive steps: repeats make exact ties between
    # paths, which hmmlearn breaks towards the highest state (see below).
    steps = rng.integers(1, n_symbols, size=lengths.sum())
    X = (np.cumsum(steps) % n_symbols)[:, None]
    log_start = np.log(model.startprob_)
    log_trans = np.log(model.transmat_)
    log_emission = np.log(model.emissionprob_.T)[X[:, 0]]

    post = forward_backward(log_start, log_trans, log_emission, lengths)
    filt = forward(log_start, log_trans, log_emission, lengths)
    np.testing.assert_allclose(filt.log_likelihood.sum(), model.score(X, lengths))
    np.testing.assert_allclose(post.log_likelihood.sum(), model.score(X, lengths))
    np.testing.assert_allclose(
        np.exp(post.log_posterior), model.predict_proba(X, lengths), atol=1e-10
    )
    path, log_prob = viterbi(log_start, log_trans, log_emission, lengths)
    their_log_prob, their_path = model.decode(X, lengths)
    np.testing.assert_array_equal(path, their_path)
    np.testing.assert_allclose(log_prob.sum(), their_log_prob)


@pytest.mark.parity
def test_viterbi_ties_both_optimal_as_in_hmmlearn():
    # With a repeated symbol, a detour a-b-a-a and a-a-b-a score the same.
    hmm = pytest.importorskip("hmmlearn.hmm")
    rng = np.random.default_rng(6)
    model = hmm.CategoricalHMM(n_components=2)
    model.n_features = 2
    model.startprob_ = np.array([0.9, 0.1])
    model.transmat_ = np.array([[0.6, 0.4], [0.7, 0.3]])
    model.emissionprob_ = rng.dirichlet(np.ones(2), size=2)
    X = rng.integers(0, 2, size=(200, 1))
    log_start = np.log(model.startprob_)
    log_trans = np.log(model.transmat_)
    log_emission = np.log(model.emissionprob_.T)[X[:, 0]]
    path, log_prob = viterbi(log_start, log_trans, log_emission)
    their_log_prob, _ = model.decode(X)
    joint = (
        log_start[path[0]]
        + log_trans[path[:-1], path[1:]].sum()
        + log_emission[np.arange(len(path)), path].sum()
    )
    np.testing.assert_allclose([joint], log_prob, rtol=1e-13)
    np.testing.assert_allclose(log_prob, [their_log_prob], rtol=1e-13)


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------

_START = np.log([0.5, 0.5])
_TRANS = np.log([[0.9, 0.1], [0.2, 0.8]])
_EMISSION = np.zeros((5, 2))


def _with_nan(x, index):
    x = np.array(x, dtype=float)
    x[index] = np.nan
    return x


_BAD_INPUTS = {
    "lengths not summing to N": (
        dict(lengths=[2, 2]), "lengths must sum to the number of rows"),
    "lengths negative": (dict(lengths=[6, -1]), "lengths must be non-negative"),
    # Their int64 sum wraps around to 5: the kernels would read out of bounds.
    "lengths wrapping around": (
        dict(lengths=[2**62] * 4 + [5]), "sequence 0 alone has 4611686018427387904"),
    "uint64 lengths too long": (
        dict(lengths=np.array([2**63, 2**63, 5], dtype=np.uint64)),
        "lengths must sum to the number of rows"),
    "empty sequence": (dict(lengths=[5, 0]), "lengths must be positive"),
    "lengths not integers": (dict(lengths=[2.5, 2.5]), "lengths must be integers"),
    "lengths 2-d": (dict(lengths=[[5]]), "lengths must be 1-dimensional"),
    "start 2-d": (dict(log_startprob=_START[None]), "log_startprob must be 1-dim"),
    "no states": (dict(log_startprob=np.array([])), "log_startprob must have at"),
    "transmat shape": (dict(log_transmat=_TRANS[:1]), "log_transmat must have shape"),
    "emission columns": (
        dict(log_emission=np.zeros((5, 3))), "log_emission must have 2 columns"),
    "emission 1-d": (dict(log_emission=np.zeros(5)), "log_emission must be 2-dim"),
    "emission empty": (dict(log_emission=np.zeros((0, 2))), "log_emission has no"),
    "transmat rows": (
        dict(log_transmat=np.log([[0.9, 0.2], [0.2, 0.8]])),
        "log_transmat rows .* row 0 sums to 1.1"),
    "start sum": (dict(log_startprob=np.log([0.5, 0.4])), "log_startprob must be log"),
    "NaN in start": (dict(log_startprob=_with_nan(_START, 0)), "log_startprob .*NaN"),
    "NaN in transmat": (
        dict(log_transmat=_with_nan(_TRANS, (1, 0))), "log_transmat .*NaN"),
    "NaN in emission": (
        dict(log_emission=_with_nan(_EMISSION, (3, 1))), "log_emission .*NaN"),
    "+inf in emission": (
        dict(log_emission=np.where(np.eye(5, 2) > 0, np.inf, 0.0)),
        r"log_emission .*\+inf"),
    "not numbers": (dict(log_emission=[["a", "b"]]), "log_emission must be an array"),
}  # fmt: skip


@pytest.mark.parametrize("function", [forward, forward_backward, viterbi])
@pytest.mark.parametrize("case", list(_BAD_INPUTS))
def test_bad_input_raises_value_error_naming_the_argument(function, case):
    changes, message = _BAD_INPUTS[case]
    kwargs = dict(
        log_startprob=_START, log_transmat=_TRANS, log_emission=_EMISSION, lengths=None
    )
    kwargs.update(changes)
    with pytest.raises(ValueError, match=message):
        function(**kwargs)


@pytest.mark.parametrize("function", [forward, forward_backward, viterbi])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("where", [(0, 0), (3, 2), (6, 4)])
def test_nan_or_inf_anywhere_in_emission_is_caught(function, bad, where):
    n_states = 5  # the kernels treat states 0-3 and state 4 differently
    log_emission = np.zeros((7, n_states))
    log_emission[where] = bad
    with pytest.raises(ValueError, match="log_emission contains"):
        function(
            np.full(n_states, -np.log(n_states)),
            np.full((n_states, n_states), -np.log(n_states)),
            log_emission,
            [3, 4],
        )


def test_valid_input_forms_are_accepted():
    # Lists, integer lengths of any width, a start that sums to 1 within 1e-8.
    post = forward_backward(
        [0.0, -np.inf], _TRANS.tolist(), _EMISSION.tolist(), np.array([3, 2], np.uint8)
    )
    assert post.log_posterior.shape == (5, 2)
    assert post.log_likelihood.shape == (2,)
    forward(np.log([0.5 + 4e-9, 0.5]), _TRANS, _EMISSION)


# ---------------------------------------------------------------------------
# Emissions as a table looked up by symbol, and kernels compiled for the exact
# number of states
# ---------------------------------------------------------------------------


def as_table(rng, log_emission, n_unused=2):
    """The same emissions as a table in shuffled order (plus rows no step
    uses) and the symbols that pick every step's row."""
    order = rng.permutation(len(log_emission))
    unused = rng.normal(size=(n_unused, log_emission.shape[1]))
    return np.concatenate([log_emission[order], unused]), np.argsort(order)


def assert_symbols_give_the_dense_results(
    log_start, log_trans, table, symbols, lengths
):
    dense = table[symbols]
    filt = forward(log_start, log_trans, dense, lengths)
    filt_s = forward(log_start, log_trans, table, lengths, symbols=symbols)
    np.testing.assert_allclose(filt_s.log_likelihood, filt.log_likelihood, rtol=1e-13)
    np.testing.assert_allclose(
        np.exp(filt_s.log_final_filtered), np.exp(filt.log_final_filtered), atol=1e-13
    )
    post = forward_backward(log_start, log_trans, dense, lengths)
    post_s = forward_backward(log_start, log_trans, table, lengths, symbols=symbols)
    np.testing.assert_allclose(post_s.log_likelihood, post.log_likelihood, rtol=1e-13)
    np.testing.assert_allclose(post_s.posterior, post.posterior, atol=1e-13)
    np.testing.assert_allclose(
        post_s.transition_counts, post.transition_counts, rtol=1e-12, atol=1e-12
    )
    # The posterior mass of every table row: the expected symbol counts.
    expected = np.zeros_like(table)
    np.add.at(expected, symbols, post.posterior)
    assert post.symbol_counts is None
    np.testing.assert_allclose(post_s.symbol_counts, expected, rtol=1e-12, atol=1e-12)
    path, log_prob = viterbi(log_start, log_trans, dense, lengths)
    path_s, log_prob_s = viterbi(log_start, log_trans, table, lengths, symbols=symbols)
    np.testing.assert_array_equal(path_s, path)
    np.testing.assert_array_equal(log_prob_s, log_prob)


@pytest.mark.parametrize("seed", range(10))
def test_symbols_give_the_dense_results(seed):
    # A categorical model: few symbols, each emitted by many steps.
    rng = np.random.default_rng(seed)
    n_states, n_symbols = int(rng.integers(1, 7)), int(rng.integers(1, 6))
    lengths = rng.integers(1, 60, size=int(rng.integers(1, 6)))
    log_start, log_trans = random_model(rng, n_states, zeros=seed % 2 == 1)
    table = safe_log(rng.dirichlet(np.ones(n_symbols), size=n_states).T)
    symbols = rng.integers(0, n_symbols, size=lengths.sum())
    assert_symbols_give_the_dense_results(log_start, log_trans, table, symbols, lengths)


@pytest.mark.parametrize("seed", range(6))
def test_symbols_give_the_dense_results_where_the_scaling_loses_a_state(seed):
    # The left-to-right problems send sequences to the log-space recursion.
    rng = np.random.default_rng(seed)
    log_start, log_trans, log_emission, lengths = gaussian_left_to_right_problem(rng)
    table, symbols = as_table(rng, log_emission)
    assert_symbols_give_the_dense_results(log_start, log_trans, table, symbols, lengths)


@pytest.mark.parametrize("n_states", [3, 5])
@pytest.mark.parametrize("by_symbol", [False, True])
def test_kernels_for_an_exact_number_of_states_match_enumeration(
    monkeypatch, n_states, by_symbol
):
    # Large problems get kernels compiled for their number of states; force
    # them on problems small enough to enumerate.
    monkeypatch.setattr(chain, "_SPECIALIZE_WORK", 0)
    assert chain._state_token(n_states, 1) == (0,) * n_states
    rng = np.random.default_rng(n_states)
    for zeros in (False, True):
        lengths = np.array([6, 1, 5])
        log_start, log_trans = random_model(rng, n_states, zeros=zeros)
        log_emission = rng.normal(scale=2.0, size=(lengths.sum(), n_states))
        if by_symbol:
            table, symbols = as_table(rng, log_emission)
            assert_symbols_give_the_dense_results(
                log_start, log_trans, table, symbols, lengths
            )
        assert_matches_enumeration(log_start, log_trans, log_emission, lengths)
        _, _, _, best, best_log_prob = enumerate_all(
            log_start, log_trans, log_emission, lengths
        )
        path, log_prob = viterbi(log_start, log_trans, log_emission, lengths)
        np.testing.assert_array_equal(path, best)
        np.testing.assert_allclose(log_prob, best_log_prob, rtol=1e-13, atol=1e-10)
    problem = gaussian_left_to_right_problem(rng, n_states=n_states)
    assert_matches_log_space(*problem)


def test_log_posterior_is_the_log_of_the_posterior():
    post = forward_backward(_START, _TRANS, _EMISSION - np.eye(5, 2) * 800)
    np.testing.assert_array_equal(post.log_posterior, safe_log(post.posterior))
    np.testing.assert_allclose(post.posterior.sum(axis=1), 1.0)


@pytest.mark.parametrize("function", [forward, forward_backward, viterbi])
@pytest.mark.parametrize(
    ("symbols", "message"),
    [
        ([[0, 1]], "symbols must be 1-dimensional"),
        ([0.0, 1.0], "symbols must be integers"),
        (np.array([], dtype=int), "symbols is empty"),
        ([0, 5, 1], "symbols must be row numbers of log_emission, 0 to 4; got 5"),
        ([0, -1], "symbols must be row numbers .* got -1"),
        ([0, 1, 2], "lengths must sum to the length of symbols .3."),
    ],
)
def test_bad_symbols_raise_value_error(function, symbols, message):
    with pytest.raises(ValueError, match=message):
        function(_START, _TRANS, _EMISSION, [1, 1], symbols=symbols)


@pytest.mark.parametrize("function", [forward, forward_backward, viterbi])
def test_nan_in_an_emission_table_is_caught_even_in_an_unused_row(function):
    table = _with_nan(_EMISSION, (4, 0))
    with pytest.raises(ValueError, match="log_emission contains NaN"):
        function(_START, _TRANS, table, symbols=[0, 1, 0])


@pytest.mark.parametrize("seed", range(4))
def test_weights_count_a_sequence_as_copies(seed):
    # Even seeds: left-to-right problems, whose sequences take the log-space
    # path; odd seeds: a categorical model on the scaled path.
    rng = np.random.default_rng(seed)
    if seed % 2 == 0:
        log_start, log_trans, log_emission, lengths = gaussian_left_to_right_problem(
            rng
        )
        table, symbols = as_table(rng, log_emission)
    else:
        log_start, log_trans = random_model(rng, 4)
        table = np.log(rng.dirichlet(np.ones(6), size=4).T)
        lengths = rng.integers(1, 50, size=5)
        symbols = rng.integers(0, 6, size=lengths.sum())
    weights = rng.integers(0, 4, size=len(lengths))
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    copies = np.concatenate(
        [
            np.arange(bounds[n], bounds[n + 1])
            for n, w in enumerate(weights)
            for _ in range(w)
        ]
    )
    copy_lengths = np.repeat(lengths, weights)
    whole = forward_backward(
        log_start, log_trans, table, lengths, symbols=symbols, weights=weights
    )
    repeated = forward_backward(
        log_start, log_trans, table, copy_lengths, symbols=symbols[copies]
    )
    np.testing.assert_allclose(
        whole.transition_counts, repeated.transition_counts, rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(
        whole.symbol_counts, repeated.symbol_counts, rtol=1e-12, atol=1e-12
    )
    unweighted = forward_backward(log_start, log_trans, table, lengths, symbols=symbols)
    np.testing.assert_array_equal(whole.posterior, unweighted.posterior)
    np.testing.assert_array_equal(whole.log_likelihood, unweighted.log_likelihood)


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ([1.0], "weights must have one entry per sequence .2."),
        ([1.0, -1.0], "weights must be non-negative and finite"),
        ([1.0, np.inf], "weights must be non-negative and finite"),
        ([1.0, np.nan], "weights must be non-negative and finite"),
        ([[1.0, 1.0]], "weights must be 1-dimensional"),
    ],
)
def test_bad_weights_raise_value_error(weights, message):
    with pytest.raises(ValueError, match=message):
        forward_backward(_START, _TRANS, _EMISSION, [2, 3], weights=weights)
