"""The interpreted path of small work agrees with the compiled kernels.

Small work runs a kernel's own source in the interpreter (``bayeskit._jit.
run_small``) instead of compiling it; these tests force each path in turn on
the same random inputs and ask for agreement to 1e-12.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from bayeskit import _jit
from bayeskit.graph import _chain_numpy, chain, triangulation


@pytest.fixture
def force(monkeypatch):
    """``force("interpreted")`` or ``force("compiled")`` for the chain kernels."""

    def set_path(path):
        # Neither runs the numpy recursions (tests/graph/test_chain_numpy.py).
        monkeypatch.setattr(chain, "_numpy_first", lambda *args: False)
        if path == "interpreted":
            monkeypatch.setattr(chain, "_INTERPRET_WORK", 1 << 62)
            monkeypatch.setattr(_jit, "_INTERPRET_BUDGET", np.inf)
            monkeypatch.setattr(_jit, "_compiled", lambda kernel: False)
        else:
            monkeypatch.setattr(chain, "_INTERPRET_WORK", 0)

    return set_path


def _random_chain(rng, n_states, n_steps, zeros):
    start = rng.dirichlet(np.ones(n_states))
    trans = rng.dirichlet(np.ones(n_states), size=n_states)
    if zeros:  # left-to-right: structural zeros, the log-space fallback
        trans = np.triu(trans + 0.1)
        trans /= trans.sum(axis=1, keepdims=True)
        start = np.eye(n_states)[0]
    log_em = rng.normal(scale=3.0, size=(n_steps, n_states))
    with np.errstate(divide="ignore"):
        return np.log(start), np.log(trans), log_em


def _run_all(log_start, log_trans, log_em, lengths, symbols=None):
    table = log_em if symbols is None else log_em[: symbols.max() + 1]
    f = chain.forward(log_start, log_trans, table, lengths, symbols=symbols)
    fb = chain.forward_backward(log_start, log_trans, table, lengths, symbols=symbols)
    path, log_prob = chain.viterbi(
        log_start, log_trans, table, lengths, symbols=symbols
    )
    return f, fb, path, log_prob


@pytest.mark.parametrize("zeros", [False, True])
@pytest.mark.parametrize("use_symbols", [False, True])
def test_chain_kernels_interpreted_match_compiled(force, zeros, use_symbols):
    rng = np.random.default_rng(42 + zeros + 2 * use_symbols)
    log_start, log_trans, log_em = _random_chain(rng, 5, 120, zeros)
    if zeros:
        log_em[40:45] -= 800.0  # underflow the scaled recursion
    lengths = np.array([50, 1, 39, 30])
    symbols = rng.integers(0, 7, size=120) if use_symbols else None
    results = {}
    for path in ("compiled", "interpreted"):
        force(path)
        results[path] = _run_all(log_start, log_trans, log_em, lengths, symbols)
    (f1, fb1, p1, lp1), (f2, fb2, p2, lp2) = results.values()
    kw = {"rtol": 1e-12, "atol": 1e-12}
    assert_allclose(f1.log_likelihood, f2.log_likelihood, **kw)
    assert_allclose(f1.log_final_filtered, f2.log_final_filtered, **kw)
    assert_allclose(fb1.log_likelihood, fb2.log_likelihood, **kw)
    assert_allclose(fb1.posterior, fb2.posterior, **kw)
    assert_allclose(fb1.transition_counts, fb2.transition_counts, **kw)
    if use_symbols:
        assert_allclose(fb1.symbol_counts, fb2.symbol_counts, **kw)
    assert_array_equal(p1, p2)
    assert_allclose(lp1, lp2, **kw)


def test_small_chain_work_compiles_nothing(monkeypatch):
    """Small work plans no thread: the kernels run interpreted, whatever this
    process compiled earlier (taken as not compiled here)."""
    monkeypatch.setattr(_jit, "_interpreted_seconds", {})
    monkeypatch.setattr(_jit, "_compiled", lambda kernel: False)
    # Whatever numpy passes this process ran before (a worker of the whole
    # suite): below the second after which a background compile is started.
    monkeypatch.setattr(_chain_numpy, "_spent", [0.0])
    compiled = []
    monkeypatch.setattr(
        _jit._Pair, "variant", lambda self, parallel: compiled.append(self)
    )
    rng = np.random.default_rng(0)
    log_start, log_trans, log_em = _random_chain(rng, 3, 200, False)
    chain.forward_backward(log_start, log_trans, log_em, [100, 100])
    chain.viterbi(log_start, log_trans, log_em, [100, 100])
    assert compiled == []


def test_interpreted_budget_hands_over_to_the_compiled_kernel(monkeypatch):
    calls = []

    class Kernel:
        signatures = []

        def __call__(self, x):
            calls.append("compiled")
            return x

        def py_func(x):
            calls.append("interpreted")
            return x

    kernel = Kernel()
    monkeypatch.setattr(_jit, "interpreted", lambda k: Kernel.py_func)
    monkeypatch.setattr(_jit, "_interpreted_seconds", {})
    assert _jit.run_small(kernel, 1) == 1
    _jit._interpreted_seconds[kernel] = _jit._INTERPRET_BUDGET
    assert _jit.run_small(kernel, 2) == 2
    assert calls == ["interpreted", "compiled"]


@pytest.mark.parametrize("n", [5, 12, 16])
def test_elimination_interpreted_matches_compiled(n):
    rng = np.random.default_rng(n)
    adj = {i: set() for i in range(n)}
    for i in range(1, n):
        for j in rng.choice(i, size=min(i, 3), replace=False):
            adj[i].add(int(j))
            adj[int(j)].add(i)
    groups, offsets = triangulation._edge_groups(adj, list(adj))
    cards = rng.integers(2, 5, size=n).astype(np.int64)
    for given in (np.array([], dtype=np.int64), rng.permutation(n)):
        args = (n, np.array(groups), np.array(offsets), cards, np.log(cards), given)
        kernel = triangulation._elimination_kernel
        for ours, theirs in zip(_jit.interpreted(kernel)(*args), kernel(*args)):
            assert_array_equal(ours, theirs)


def test_a_kernel_in_the_disk_cache_runs_compiled(monkeypatch, tmp_path):
    """Loading a cached kernel costs milliseconds: small work then runs it
    compiled rather than interpreted."""
    from types import SimpleNamespace

    calls = []
    index = tmp_path / "kernel.nbi"

    class Kernel:
        signatures = []
        _cache = SimpleNamespace(_cache_file=SimpleNamespace(_index_path=str(index)))

        def __call__(self, x):
            calls.append("compiled")
            return x

    monkeypatch.setattr(_jit, "interpreted", lambda k: lambda x: calls.append("i"))
    monkeypatch.setattr(_jit, "_interpreted_seconds", {})
    kernel = Kernel()
    _jit.run_small(kernel, 1)
    index.write_bytes(b"")
    _jit.run_small(kernel, 2)
    assert calls == ["i", "compiled"]
