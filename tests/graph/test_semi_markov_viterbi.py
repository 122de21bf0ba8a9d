"""The semi-Markov Viterbi kernel against the numpy recursions, bit for bit.

The kernel (``_semi_markov_viterbi``: rings of whole vectors holding ``-inf``
where no segment is open, steps two at a time, maxima taken in vector lanes,
durations found again in the backtrace by exact sums, states by the forward
pass's comparisons) and ``_semi_markov_numpy.viterbi`` (whole-array argmaxes,
the durations and states kept) form the same sums in the same order: they
must give the same paths and the same log-probabilities, to the bit. The
models are those where the two could part: ties everywhere (equal
emissions, equal durations), ties up to rounding (emissions on a lattice far
from zero), durations of probability zero, sequences shorter than the longest
duration or of one step, and numbers of states and durations on either side
of the vector width.
"""

from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayeskit import _jit
from bayeskit._logmath import safe_log
from bayeskit.graph import _semi_markov_numpy
from bayeskit.graph import _semi_markov_viterbi as v
from bayeskit.graph.semi_markov import _arrays, _bounds

KINDS = ["ties", "lattice", "zeros", "random"]


def _model(rng, kind, k, D, n_steps):
    """Start, transition and duration probabilities and log emissions."""
    start = np.full(k, 1.0 / k)
    trans = np.ones((k, k))
    if k > 1:
        np.fill_diagonal(trans, 0.0)
    trans /= trans.sum(axis=1, keepdims=True)
    pmf = np.full((k, D), 1.0 / D)
    em = np.zeros((n_steps, k))
    if kind == "ties":  # every state and step alike: ties everywhere
        em += -1.25
    elif kind == "lattice":  # equal sums in reals, not always in floats
        em += rng.choice([0.1, 0.2, 0.3], size=(n_steps, 1)) - 1e3
    elif kind == "zeros":  # durations of probability zero
        pmf = rng.dirichlet(np.ones(D), size=k) * (rng.random((k, D)) < 0.5)
        pmf[np.arange(k), rng.integers(0, D, size=k)] += 0.1
        em = rng.normal(size=(n_steps, k))
    else:
        start = rng.dirichlet(np.ones(k))
        trans = rng.dirichlet(np.ones(k), size=k) if k > 1 else trans
        pmf = rng.dirichlet(np.full(D, 0.5), size=k)
        em = rng.normal(scale=3.0, size=(n_steps, k))
    pmf /= pmf.sum(axis=1, keepdims=True)
    return safe_log(start), safe_log(trans), pmf, em


def _kernel(run, tables, em, bounds, n_tasks=1):
    n_steps, k = em.shape
    cols = max(k, 4)  # at most four states are padded to four
    A, F = np.empty((n_steps, cols)), np.empty((n_steps, cols))
    path = np.full(n_steps, -1, dtype=np.int64)
    log_prob = np.empty(len(bounds) - 1)
    run(*tables, em, bounds, n_tasks, A, F, path, log_prob)
    return path, log_prob


def _assert_same(found, expected, bounds):
    (path, log_prob), (path_np, log_prob_np) = found, expected
    # The same bits: -0.0 is not 0.0, and a NaN would not equal itself.
    np.testing.assert_array_equal(log_prob.view(np.int64), log_prob_np.view(np.int64))
    for n, possible in enumerate(log_prob > -np.inf):
        if possible:  # an impossible sequence's path is not written
            rows = slice(bounds[n], bounds[n + 1])
            np.testing.assert_array_equal(path[rows], path_np[rows])


@pytest.fixture
def numpy_viterbi(monkeypatch):
    """``_semi_markov_numpy.viterbi`` whatever its budget in this process."""
    monkeypatch.setattr(_semi_markov_numpy, "_spent", [0.0])

    def run(*args):
        found = _semi_markov_numpy.viterbi(*args, waiting=True)
        assert found is not None
        return found

    return run


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 7])
@pytest.mark.parametrize("D", [1, 3, 8, 9, 17])
def test_viterbi_kernel_equals_the_numpy_recursions_bit_for_bit(
    kind, k, D, numpy_viterbi
):
    rng = np.random.default_rng([k, D, KINDS.index(kind)])
    # One, two and three steps (no pair of steps, one), shorter than D, D,
    # one more, and longer, of either parity.
    lengths = np.unique([1, 2, 3, max(D - 1, 1), D, D + 1, 3 * D + 5])
    log_start, log_trans, pmf, em = _model(rng, kind, k, D, lengths.sum())
    *tables, em = _arrays(log_start, log_trans, pmf, em)
    bounds = _bounds(lengths, len(em))
    expected = numpy_viterbi(*tables, em, bounds)
    compiled = _kernel(v._viterbi_pass.variant(False), tables, em, bounds)
    _assert_same(compiled, expected, bounds)
    # The kernel's source run by Python (what small first calls run).
    interpreted = _kernel(_jit.interpreted(v._viterbi_pass), tables, em, bounds)
    _assert_same(interpreted, expected, bounds)
    if kind != "zeros":
        assert (compiled[1] > -np.inf).all()


@pytest.mark.parametrize("kind", KINDS)
def test_viterbi_kernel_on_threads_equals_the_numpy_recursions(kind, numpy_viterbi):
    """Many short sequences, shared out to the parallel variant's tasks."""
    rng = np.random.default_rng(KINDS.index(kind))
    k, D = 4, 12
    lengths = rng.integers(1, 40, size=64)
    log_start, log_trans, pmf, em = _model(rng, kind, k, D, lengths.sum())
    *tables, em = _arrays(log_start, log_trans, pmf, em)
    bounds = _bounds(lengths, len(em))

    def run(*args):
        _jit.run_parallel(v._viterbi_pass, 2, 1, *args)

    found = _kernel(run, tables, em, bounds, n_tasks=16)
    _assert_same(found, numpy_viterbi(*tables, em, bounds), bounds)


@settings(max_examples=60, deadline=None)
@given(
    k=st.integers(1, 6),
    D=st.integers(1, 20),
    lengths=st.lists(st.integers(1, 70), min_size=1, max_size=5),
    kind=st.sampled_from(KINDS),
    seed=st.integers(0, 2**32 - 1),
)
def test_viterbi_kernel_equals_the_numpy_recursions_on_any_shape(
    k, D, lengths, kind, seed
):
    """Any number of states, longest duration and sequence lengths (pairs of
    steps, a step left over or not, rings wrapping round or not): the kernel
    gives the numpy recursions' paths and log-probabilities, bit for bit."""
    rng = np.random.default_rng(seed)
    lengths = np.array(lengths)
    log_start, log_trans, pmf, em = _model(rng, kind, k, D, lengths.sum())
    *tables, em = _arrays(log_start, log_trans, pmf, em)
    bounds = _bounds(lengths, len(em))
    with patch.object(_semi_markov_numpy, "_spent", [0.0]):
        expected = _semi_markov_numpy.viterbi(*tables, em, bounds, waiting=True)
    compiled = _kernel(v._viterbi_pass.variant(False), tables, em, bounds)
    _assert_same(compiled, expected, bounds)
