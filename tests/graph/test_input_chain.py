"""The chain with a transition matrix per step (bayeskit.graph.input_chain):
equal to the chain of bayeskit.graph.chain when every step has the same
matrix, and to brute-force enumeration over every state path."""

import itertools

import numpy as np
import pytest

from bayeskit._logmath import logsumexp, safe_log
from bayeskit.graph import forward, forward_backward, input_chain, viterbi
from bayeskit.graph.input_chain import (
    forward_backward_inputs,
    forward_inputs,
    viterbi_inputs,
)


def _tables(rng, k, lengths, zeros=False):
    n_seq, n = len(lengths), int(np.sum(lengths))
    start = np.log(rng.dirichlet(np.ones(k), size=n_seq))
    trans = rng.dirichlet(np.full(k, 0.7), size=(n, k))
    if zeros:  # structural zeros (each row keeps its diagonal)
        mask = rng.random((n, k, k)) < 0.3
        mask[:, np.arange(k), np.arange(k)] = False
        trans = np.where(mask, 0.0, trans)
        trans /= trans.sum(axis=2, keepdims=True)
    with np.errstate(divide="ignore"):
        trans = np.log(trans)
    emission = rng.normal(scale=3.0, size=(n, k))
    return start, trans, emission


def _enumerate(start, trans, emission, lengths):
    """log p(x), posteriors, pairwise marginals and the best path by
    enumerating every state path of every sequence."""
    k = emission.shape[1]
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    log_ev, post, pair = [], np.zeros_like(emission), np.zeros((len(emission), k, k))
    path, best = np.zeros(len(emission), dtype=int), []
    for s, n in enumerate(lengths):
        a = bounds[s]
        paths = np.array(list(itertools.product(range(k), repeat=int(n))))
        joint = start[s, paths[:, 0]] + emission[a, paths[:, 0]]
        for r in range(1, n):
            joint = joint + trans[a + r, paths[:, r - 1], paths[:, r]]
            joint = joint + emission[a + r, paths[:, r]]
        total = logsumexp(joint)
        log_ev.append(total)
        w = np.exp(joint - total)
        for r in range(n):
            np.add.at(post[a + r], paths[:, r], w)
            if r:
                np.add.at(pair[a + r], (paths[:, r - 1], paths[:, r]), w)
        # The best path, ties to the lexicographically... first maximum.
        i = int(np.argmax(joint))
        path[a : a + n] = paths[i]
        best.append(joint[i])
    return np.array(log_ev), post, pair, path, np.array(best)


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("seed", range(25))
def test_equals_brute_force_enumeration(seed, exact):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 4))
    lengths = rng.integers(1, 6, size=int(rng.integers(1, 4)))
    start, trans, emission = _tables(rng, k, lengths, zeros=seed % 3 == 0)
    log_ev, post, pair, path, best = _enumerate(start, trans, emission, lengths)
    got = forward_backward_inputs(start, trans, emission, lengths, exact=exact)
    np.testing.assert_allclose(got.log_evidence, log_ev, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.posterior, post, atol=1e-12)
    np.testing.assert_allclose(got.pairwise, pair, atol=1e-12)
    filtered = forward_inputs(start, trans, emission, lengths, exact=exact)
    np.testing.assert_allclose(filtered.log_evidence, log_ev, rtol=1e-12, atol=1e-12)
    got_path, got_best = viterbi_inputs(start, trans, emission, lengths)
    np.testing.assert_allclose(got_best, best, rtol=1e-12, atol=1e-12)
    # The path found has the best joint probability (a tie may pick another).
    np.testing.assert_array_equal(got_path, path)


@pytest.mark.parametrize("seed", range(25))
def test_one_matrix_for_every_step_is_the_chain(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 6))
    lengths = rng.integers(1, 40, size=int(rng.integers(1, 6)))
    n = int(lengths.sum())
    start = np.log(rng.dirichlet(np.ones(k)))
    trans = np.log(rng.dirichlet(np.ones(k), size=k))
    emission = rng.normal(scale=5.0, size=(n, k))
    every = np.broadcast_to(trans, (n, k, k))
    chain = forward_backward(start, trans, emission, lengths)
    for exact in (False, True):
        got = forward_backward_inputs(start, every, emission, lengths, exact=exact)
        np.testing.assert_allclose(got.log_evidence, chain.log_evidence, rtol=1e-12)
        np.testing.assert_allclose(got.posterior, chain.posterior, atol=1e-12)
        np.testing.assert_allclose(
            got.transition_counts, chain.transition_counts, atol=1e-11
        )
        filtered = forward_inputs(start, every, emission, lengths, exact=exact)
        reference = forward(start, trans, emission, lengths)
        np.testing.assert_allclose(
            filtered.log_final_filtered, reference.log_final_filtered, atol=1e-12
        )
    path, log_prob = viterbi_inputs(start, every, emission, lengths)
    ref_path, ref_log_prob = viterbi(start, trans, emission, lengths)
    np.testing.assert_array_equal(path, ref_path)
    np.testing.assert_allclose(log_prob, ref_log_prob, rtol=1e-12)


@pytest.mark.parametrize("eps", [1e-200, 1e-300, 1e-320])
def test_tiny_transitions(eps):
    # A state reached only through transitions of probability eps (below the
    # scaled pass's safe bound: the exact pass takes the sequence), and
    # emissions that favour it by exp(600) later.
    k, n = 2, 6
    trans = np.log(np.array([[1.0 - eps, eps], [eps, 1.0 - eps]]))
    trans = np.broadcast_to(trans, (n, k, k))
    start = np.log([1.0, 1e-300])
    start = start - logsumexp(start)
    emission = np.zeros((n, k))
    emission[3:, 1] = 600.0
    log_ev, post, *_ = _enumerate(start[None], trans, emission, [n])
    got = forward_backward_inputs(start, trans, emission)
    np.testing.assert_allclose(got.log_evidence, log_ev, rtol=1e-12)
    np.testing.assert_allclose(got.posterior, post, atol=1e-12)


def test_a_scaled_pass_that_underflows_is_redone_exactly():
    # Transitions above the safe bound, but the start puts state 1 at
    # exp(-800) (zero as a probability) and the first step's emission rules
    # out state 0: the scaled pass finds no mass, the exact pass answers.
    trans = np.log(np.broadcast_to([[0.5, 0.5], [0.5, 0.5]], (3, 2, 2)))
    start = np.array([0.0, -800.0])
    start = start - logsumexp(start)
    emission = np.array([[-np.inf, 0.0], [0.0, 1.0], [2.0, 0.0]])
    log_ev, post, pair, *_ = _enumerate(start[None], trans, emission, [3])
    assert np.isfinite(log_ev[0])
    got = forward_backward_inputs(start, trans, emission)
    np.testing.assert_allclose(got.log_evidence, log_ev, rtol=1e-12)
    np.testing.assert_allclose(got.posterior, post, atol=1e-12)
    np.testing.assert_allclose(got.pairwise, pair, atol=1e-12)


def test_impossible_sequence():
    trans = safe_log(np.broadcast_to(np.eye(2), (3, 2, 2)))
    start = safe_log(np.array([1.0, 0.0]))
    emission = np.array([[0.0, 0.0], [0.0, 0.0], [-np.inf, 0.0]])
    assert forward_inputs(start, trans, emission).log_evidence[0] == -np.inf
    with pytest.raises(ValueError, match="probability zero"):
        forward_backward_inputs(start, trans, emission)


@pytest.mark.parametrize(
    "change, name",
    [
        (lambda s, t, e, n: (s[:, :1], t, e, n), "log_startprob"),
        (lambda s, t, e, n: (s + 1.0, t, e, n), "log_startprob"),
        (lambda s, t, e, n: (s, t[:-1], e, n), "log_transmat"),
        (lambda s, t, e, n: (s, t + 1.0, e, n), "log_transmat"),
        (lambda s, t, e, n: (s, t, np.where(e > 0, np.nan, e), n), "log_emission"),
        (lambda s, t, e, n: (s, t, e, [2, 2]), "lengths"),
    ],
)
def test_bad_arguments_are_named(change, name):
    rng = np.random.default_rng(0)
    start, trans, emission = _tables(rng, 2, [3, 2])
    args = change(start, trans, emission, [3, 2])
    with pytest.raises(ValueError, match=name):
        forward_backward_inputs(*args)


def _forbid(monkeypatch, name):
    def refuse(*args, **kwargs):
        raise AssertionError(f"{name} was not to run")

    monkeypatch.setattr(input_chain, name, refuse)


def test_safe_transitions_take_the_scaled_pass(monkeypatch):
    rng = np.random.default_rng(0)
    lengths = [7, 3, 5]
    start, trans, emission = _tables(rng, 3, lengths)
    log_ev, _post, pair, *_ = _enumerate(start, trans, emission, lengths)
    _forbid(monkeypatch, "_log_pass")
    got = forward_backward_inputs(start, trans, emission, lengths)
    np.testing.assert_allclose(got.log_evidence, log_ev, rtol=1e-12)
    np.testing.assert_allclose(got.pairwise, pair, atol=1e-12)


def test_a_tiny_transition_takes_the_exact_pass(monkeypatch):
    rng = np.random.default_rng(1)
    start, trans, emission = _tables(rng, 2, [4])
    trans[2] = np.log([[1 - 1e-200, 1e-200], [0.5, 0.5]])
    log_ev, post, *_ = _enumerate(start, trans, emission, [4])
    _forbid(monkeypatch, "_scaled_pass")
    got = forward_backward_inputs(start, trans, emission, [4])
    np.testing.assert_allclose(got.log_evidence, log_ev, rtol=1e-12)
    np.testing.assert_allclose(got.posterior, post, atol=1e-12)
