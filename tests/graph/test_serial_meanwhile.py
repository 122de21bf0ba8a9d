"""While a child compiles the parallel kernels, their serial variants answer.

In a fresh environment, work planned for threads (a fit on 1,000 sequences)
ran the numpy stand-ins until the background child had compiled the parallel
kernels, some twenty seconds of calls. The child now compiles the serial
variants first, on the first sequence of the call that asked, and while it
compiles the parallel ones the serial variants answer work planned for threads
(on one thread, about the CPU time the threads take together). These tests
count which path answers and which variants the child's replay runs (no
timing); the kernels run as their source (nothing compiled), and the answers
are the numpy stand-ins'.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from test_gaussian_chain import random_params

from bayeskit import _jit
from bayeskit._logmath import safe_log
from bayeskit.graph import (
    _gaussian_kernels,
    _gaussian_numpy,
    _semi_markov_numpy,
    gaussian_chain,
    semi_markov,
)

KW = {"rtol": 1e-12, "atol": 1e-12}
SEMI_MARKOV = ("forward_backward", "forward", "viterbi")
SEMI_MARKOV_KERNELS = (
    semi_markov._forward_backward_pass,
    semi_markov._forward_pass,
    semi_markov._viterbi_pass,
)
KALMAN_KERNELS = (_gaussian_kernels.filter_kernel, _gaussian_kernels.smoother_kernel)


def _record_kernels(monkeypatch, module):
    """The (kernel, threads) of every kernel run of ``module``, each run as
    its source."""
    runs = []

    def run(pair, n_threads, chunksize, *args):
        runs.append((pair.func.__name__, n_threads))
        return _jit.interpreted(pair)(*args)

    monkeypatch.setattr(module, "run_parallel", run)
    return runs


def _record_stand_ins(monkeypatch, module, names):
    asked = []
    for name in names:
        run = getattr(module, name)

        def spy(*args, run=run, name=name):
            asked.append(name)
            return run(*args)

        monkeypatch.setattr(module, name, spy)
    return asked


def _semi_markov_model(rng, k=3, D=5, lengths=(30, 25, 30, 12)):
    start = rng.dirichlet(np.ones(k))
    trans = rng.dirichlet(np.ones(k), size=k)
    np.fill_diagonal(trans, 0.0)
    trans /= trans.sum(axis=1, keepdims=True)
    pmf = rng.dirichlet(np.ones(D), size=k)
    log_em = rng.normal(scale=3.0, size=(sum(lengths), k))
    return safe_log(start), safe_log(trans), pmf, log_em, list(lengths)


def _semi_markov_passes(args):
    post = semi_markov.semi_markov_forward_backward(*args)
    return (
        post,
        semi_markov.semi_markov_forward(*args),
        semi_markov.semi_markov_viterbi(*args),
    )


@pytest.fixture
def threads_planned(monkeypatch):
    """Work of several sequences planned for two threads, of one for one;
    no kernel compiled yet, and a fresh budget for the stand-ins."""
    monkeypatch.setattr(
        semi_markov, "_plan", lambda n, k, D, s: (2, min(s, 4)) if s > 1 else (1, 1)
    )
    monkeypatch.setattr(gaussian_chain, "_n_threads", lambda n, s: 2 if s > 1 else 1)
    monkeypatch.setattr(semi_markov, "_COMPILED", set())
    monkeypatch.setattr(gaussian_chain, "_COMPILED", set())
    monkeypatch.setattr(_semi_markov_numpy, "_spent", [0.0])
    monkeypatch.setattr(_gaussian_numpy, "_spent", [0.0])
    monkeypatch.setattr(_jit, "_compiled", lambda kernel: False)


def test_semi_markov_serial_variants_answer_while_the_parallel_compile(
    threads_planned, monkeypatch
):
    args = _semi_markov_model(np.random.default_rng(0))
    runs = _record_kernels(monkeypatch, semi_markov)
    asked = _record_stand_ins(monkeypatch, _semi_markov_numpy, SEMI_MARKOV)
    monkeypatch.setattr(semi_markov, "_in_background", lambda *args: False)
    # Nothing compiled: the stand-ins answer.
    post, log_lik, (path, log_prob) = _semi_markov_passes(args)
    assert asked == list(SEMI_MARKOV) and runs == []
    # The serial variants compiled, the parallel ones compiling: the serial
    # variants answer, on one thread, with the stand-ins' answers.
    serial = {kernel.variant(False) for kernel in SEMI_MARKOV_KERNELS}
    monkeypatch.setattr(_jit, "_compiled", lambda kernel: kernel in serial)
    keys = []
    monkeypatch.setattr(_jit, "compiling", lambda key, k: keys.append(key) or True)
    post2, log_lik2, (path2, log_prob2) = _semi_markov_passes(args)
    assert asked == list(SEMI_MARKOV)  # not asked again
    assert runs == [("_" + name + "_pass", 1) for name in SEMI_MARKOV]
    assert set(keys) == {"semi_markov_parallel"}
    for name in ("log_evidence", "posterior", "transition_counts", "duration_counts"):
        assert_allclose(getattr(post2, name), getattr(post, name), **KW)
    assert_allclose(log_lik2, log_lik, **KW)
    assert_array_equal(path2, path)
    assert_array_equal(log_prob2, log_prob)
    # No compile under way (it ended, or failed): the stand-ins again, until
    # the parallel variants are compiled.
    monkeypatch.setattr(_jit, "compiling", lambda key, k: False)
    _semi_markov_passes(args)
    assert asked == list(SEMI_MARKOV) * 2 and len(runs) == 3
    # Work planned for one thread runs the serial variants (compiled).
    _semi_markov_passes([*args[:3], args[3][:30], [30]])
    assert runs[3:] == [("_" + name + "_pass", 1) for name in SEMI_MARKOV]


def test_semi_markov_child_compiles_the_serial_variants_first(
    threads_planned, monkeypatch
):
    args = _semi_markov_model(np.random.default_rng(1))
    replays = {}

    def start(key, kernel, replay):
        replays[key] = replay
        return True

    monkeypatch.setattr(_jit, "compile_in_background", start)
    monkeypatch.setattr(_semi_markov_numpy, "_spent", [_jit._BACKGROUND_AFTER])
    semi_markov.semi_markov_forward_backward(*args)
    assert list(replays) == ["semi_markov_parallel"]
    # The child's replay: stand-ins off, every kernel run.
    runs = _record_kernels(monkeypatch, semi_markov)
    monkeypatch.setattr(_jit, "_IN_CHILD", True)
    monkeypatch.setattr(_jit, "compile_in_background", lambda *args: False)
    replays["semi_markov_parallel"]()
    assert runs == [("_" + name + "_pass", n) for n in (1, 2) for name in SEMI_MARKOV]


def _kalman_data(rng, lengths=(20, 15, 20)):
    p = random_params(rng, 2, 3)
    return rng.normal(size=(sum(lengths), 3)), np.array(lengths), p


def test_kalman_serial_variants_answer_while_the_parallel_compile(
    threads_planned, monkeypatch
):
    Y, lengths, p = _kalman_data(np.random.default_rng(2))
    runs = _record_kernels(monkeypatch, gaussian_chain)
    asked = _record_stand_ins(
        monkeypatch, _gaussian_numpy, ["kalman_filter", "kalman_smoother"]
    )
    monkeypatch.setattr(gaussian_chain, "_in_background", lambda *args: False)
    smoothed = gaussian_chain.kalman_smoother(Y, lengths, p)
    assert asked == ["kalman_filter", "kalman_smoother"] and runs == []
    serial = {kernel.variant(False) for kernel in KALMAN_KERNELS}
    monkeypatch.setattr(_jit, "_compiled", lambda kernel: kernel in serial)
    keys = []
    monkeypatch.setattr(_jit, "compiling", lambda key, k: keys.append(key) or True)
    smoothed2 = gaussian_chain.kalman_smoother(Y, lengths, p)
    gaussian_chain.kalman_filter(Y, lengths, p)
    assert len(asked) == 2
    assert runs == [("filter_kernel", 1), ("smoother_kernel", 1), ("filter_kernel", 1)]
    assert set(keys) == {"gaussian_chain_parallel"}
    for name in ("means", "covariances", "cross_covariances", "log_likelihood"):
        assert_allclose(getattr(smoothed2, name), getattr(smoothed, name), **KW)
    monkeypatch.setattr(_jit, "compiling", lambda key, k: False)
    gaussian_chain.kalman_smoother(Y, lengths, p)
    assert len(asked) == 4 and len(runs) == 3


def test_kalman_child_compiles_the_serial_variants_first(threads_planned, monkeypatch):
    Y, lengths, p = _kalman_data(np.random.default_rng(3))
    replays = {}

    def start(key, kernel, replay):
        replays[key] = replay
        return True

    monkeypatch.setattr(_jit, "compile_in_background", start)
    monkeypatch.setattr(_gaussian_numpy, "_spent", [_jit._BACKGROUND_AFTER])
    gaussian_chain.kalman_smoother(Y, lengths, p)
    assert list(replays) == ["gaussian_chain_parallel"]
    runs = _record_kernels(monkeypatch, gaussian_chain)
    monkeypatch.setattr(_jit, "_IN_CHILD", True)
    monkeypatch.setattr(_jit, "compile_in_background", lambda *args: False)
    replays["gaussian_chain_parallel"]()
    assert runs == [
        ("filter_kernel", 1), ("smoother_kernel", 1),
        ("filter_kernel", 2), ("smoother_kernel", 2),
    ]  # fmt: skip
