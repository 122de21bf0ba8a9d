"""The numpy recursions that run while the chain kernels are not compiled.

A fresh environment (an empty numba cache) runs short sequences through
``bayeskit.graph._chain_numpy`` instead of compiling the kernels: these tests
ask that it gives the compiled kernels' answers (to 1e-12; Viterbi's exactly)
on many random models, that it hands the cases the kernels treat specially
(zero transitions, a step that underflows, an impossible sequence) to the
kernels, and that a first fit in a fresh process compiles no chain kernel.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from bayeskit.graph import _chain_numpy, chain

KW = {"rtol": 1e-12, "atol": 1e-12}


@pytest.fixture
def force(monkeypatch):
    """``force("numpy")`` or ``force("kernels")`` for the chain functions."""
    decide = chain._numpy_first

    def set_path(path):
        if path == "numpy":
            monkeypatch.setattr(chain._jit, "_compiled", lambda kernel: False)
            monkeypatch.setattr(chain, "_COMPILED", set())
            monkeypatch.setattr(chain, "_numpy_first", decide)
        else:
            monkeypatch.setattr(chain, "_numpy_first", lambda *args: False)

    return set_path


def _draw(rng):
    n_states = int(rng.integers(1, 8))
    lengths = rng.integers(1, 80, size=int(rng.integers(1, 9)))
    n_steps = int(lengths.sum())
    log_start = np.log(rng.dirichlet(np.full(n_states, 0.5)))
    log_trans = np.log(rng.dirichlet(np.full(n_states, 0.5), size=n_states))
    if rng.random() < 0.5:
        table = rng.normal(scale=rng.choice([0.1, 3.0, 30.0]), size=(n_steps, n_states))
        table += rng.normal(scale=1e3)  # far from 0: the shift matters
        symbols = None
    else:
        table = rng.normal(scale=3.0, size=(6, n_states))
        symbols = rng.integers(6, size=n_steps)
    return log_start, log_trans, table, lengths, symbols


def _all(log_start, log_trans, table, lengths, symbols, weights):
    args = (log_start, log_trans, table, lengths)
    return (
        chain.forward(*args, symbols=symbols),
        chain.forward_backward(*args, symbols=symbols, weights=weights),
        chain.viterbi(*args, symbols=symbols),
    )


@pytest.mark.parametrize("seed", range(40))
def test_numpy_recursions_give_the_kernels_answers(force, seed):
    rng = np.random.default_rng(seed)
    log_start, log_trans, table, lengths, symbols = _draw(rng)
    weights = rng.random(len(lengths)) * 3
    results = {}
    for path in ("kernels", "numpy"):
        force(path)
        results[path] = _all(log_start, log_trans, table, lengths, symbols, weights)
    (f1, fb1, (p1, lp1)), (f2, fb2, (p2, lp2)) = results.values()
    assert_allclose(f2.log_evidence, f1.log_evidence, **KW)
    assert_allclose(f2.log_final_filtered, f1.log_final_filtered, **KW)
    assert_allclose(fb2.log_evidence, fb1.log_evidence, **KW)
    assert_allclose(fb2.posterior, fb1.posterior, **KW)
    assert_allclose(fb2.transition_counts, fb1.transition_counts, **KW)
    if symbols is not None:
        assert_allclose(fb2.symbol_counts, fb1.symbol_counts, **KW)
    else:
        assert fb2.symbol_counts is None
    assert_array_equal(p2, p1)
    assert_array_equal(lp2, lp1)  # the same sums and comparisons


def test_numpy_recursions_match_brute_force_enumeration(force):
    """Against the definition: every state path of a short chain summed."""
    import itertools

    force("numpy")
    rng = np.random.default_rng(7)
    for _ in range(20):
        n_states, n_steps = int(rng.integers(1, 4)), int(rng.integers(1, 6))
        start = rng.dirichlet(np.ones(n_states))
        trans = rng.dirichlet(np.ones(n_states), size=n_states)
        em = rng.random((n_steps, n_states))
        joint = {}
        for z in itertools.product(range(n_states), repeat=n_steps):
            p = start[z[0]] * em[0, z[0]]
            for t in range(1, n_steps):
                p *= trans[z[t - 1], z[t]] * em[t, z[t]]
            joint[z] = p
        total = sum(joint.values())
        posterior = np.zeros((n_steps, n_states))
        counts = np.zeros((n_states, n_states))
        for z, p in joint.items():
            posterior[np.arange(n_steps), z] += p / total
            for t in range(1, n_steps):
                counts[z[t - 1], z[t]] += p / total
        args = (np.log(start), np.log(trans), np.log(em))
        fb = chain.forward_backward(*args)
        assert_allclose(fb.log_evidence, [np.log(total)], rtol=1e-12)
        assert_allclose(fb.posterior, posterior, atol=1e-12)
        assert_allclose(fb.transition_counts, counts, atol=1e-12)
        path, log_prob = chain.viterbi(*args)
        best = max(joint, key=joint.get)
        assert_allclose(log_prob, [np.log(joint[best])], rtol=1e-12)
        assert_array_equal(path, best)


def test_special_cases_go_to_the_kernels(force, monkeypatch):
    """Zero transitions, an underflowing step and an impossible sequence are
    the kernels' (the numpy pass declines them), with the kernels' answers."""
    rng = np.random.default_rng(3)
    trans = np.triu(rng.dirichlet(np.ones(4), size=4) + 0.1)
    trans /= trans.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore"):
        left_to_right = (np.log(np.eye(4)[0]), np.log(trans))
    free = (np.log(np.full(4, 0.25)), np.log(rng.dirichlet(np.ones(4), size=4)))
    em = rng.normal(size=(60, 4))
    # Transitions of 1e-100 need no watch for lost states, but a step that
    # only the unlikely state explains has a mass of about 2**-332.
    sticky = (np.log([1.0 - 1e-100, 1e-100]), np.log([[1.0, 1e-100], [1e-100, 1.0]]))
    underflow = np.zeros((60, 2))
    underflow[:, 1] = -5.0
    underflow[30] = [-2000.0, 0.0]
    impossible = em.copy()
    impossible[10] = -np.inf
    declined = []
    run = _chain_numpy.forward_backward

    def spy(*args):
        found = run(*args)
        declined.append(found is None)
        return found

    monkeypatch.setattr(_chain_numpy, "forward_backward", spy)
    for model, log_em in [(left_to_right, em), (sticky, underflow)]:
        results = {}
        for path in ("kernels", "numpy"):
            force(path)
            results[path] = chain.forward_backward(*model, log_em, [25, 35])
        assert_allclose(results["numpy"].posterior, results["kernels"].posterior)
    assert declined == [True]  # the left-to-right model never reaches numpy
    force("numpy")
    with pytest.raises(ValueError, match="probability zero"):
        chain.forward_backward(*free, impossible, [20, 40])
    assert chain.forward(*free, impossible, [20, 40]).log_evidence[0] == -np.inf
    with pytest.raises(ValueError, match="NaN"):
        chain.viterbi(*free, np.where(em > 2, np.nan, em), [20, 40])


def test_long_or_large_work_and_a_spent_budget_go_to_the_kernels(monkeypatch):
    monkeypatch.setattr(chain._jit, "_compiled", lambda kernel: False)
    monkeypatch.setattr(chain, "_COMPILED", set())
    monkeypatch.setattr(_chain_numpy, "_spent", [0.0])
    trans = np.full((2, 2), 0.5)  # probabilities, as the functions pass them
    short = np.array([0, _chain_numpy.MAX_STEPS])
    long = np.array([0, 1, _chain_numpy.MAX_STEPS + 2])
    n_large = _chain_numpy.MAX_WORK // 4 + 1  # steps x 2 states**2
    large = np.append(np.arange(0, n_large, 100), n_large)
    assert chain._numpy_first(chain._forward_pass, trans)
    assert _chain_numpy.fits(short, 2)
    assert _chain_numpy.fits(large[:-2], 2)
    assert not _chain_numpy.fits(long, 2)
    assert not _chain_numpy.fits(large, 2)
    for bounds in (long, large):  # declined: the kernels take them
        table = np.zeros((int(bounds[-1]), 2))
        start = np.full(2, 0.5)
        assert _chain_numpy.forward_pass(start, trans, table, None, bounds, 0) is None
        assert _chain_numpy.viterbi(np.log(start), trans, table, None, bounds) is None
    # The passes count their time; once they have taken the budget, the
    # kernels are compiled (they win it back on what remains).
    log_em = np.zeros((_chain_numpy.MAX_STEPS, 2))
    chain.viterbi(np.log([0.5, 0.5]), np.log(trans), log_em, short[1:])
    assert 0.0 < _chain_numpy._spent[0] < 1.0
    _chain_numpy._spent[0] = _chain_numpy.BUDGET
    assert not _chain_numpy.fits(short, 2)


_FIRST_FIT = """
import json
import numpy as np
import bayeskit
from bayeskit.graph import _chain_kernels as k

rng = np.random.default_rng(0)
X = rng.normal(size=(10_000, 2)) + 3 * (np.arange(10_000) // 10 % 3)[:, None]
symbols = rng.integers(4, size=(10_000, 1))
for model, data in [
    (bayeskit.GaussianHMM(3, "full", n_iter=2, random_state=0), X),
    (bayeskit.CategoricalHMM(3, n_iter=2, random_state=0), symbols),
]:
    model.fit(data, [100] * 100)
    model.predict(data, [100] * 100)
    model.predict_proba(data, [100] * 100)
    model.score(data, [100] * 100)
kernels = [k._forward_pass, k._forward_backward_pass, k._viterbi_pass,
           k._log_sum_product_pass, k._shift_rows]
print(json.dumps({kernel.func.__name__: [
    len(kernel.variant(p).signatures) for p in (False, True)] for kernel in kernels}))
"""


def test_a_first_fit_in_a_fresh_environment_compiles_no_chain_kernel(tmp_path):
    """GaussianHMM and CategoricalHMM on 100 sequences of 100 steps, in a
    fresh process with an empty numba cache: fit, predict, predict_proba and
    score compile none of the chain kernels (each compile takes seconds)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, "-c", _FIRST_FIT],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    compiled = json.loads(out.strip().splitlines()[-1])
    assert compiled == {name: [0, 0] for name in compiled}
