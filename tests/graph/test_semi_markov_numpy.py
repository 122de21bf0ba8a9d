"""The numpy semi-Markov recursions that run while the kernels are not compiled.

A fresh environment (an empty numba cache) runs the semi-Markov chain through
``bayeskit.graph._semi_markov_numpy`` instead of compiling its kernels: these
tests ask that it gives the compiled kernels' answers (to 1e-12; Viterbi's
exactly) on many random models, the brute-force enumeration's on small ones,
that it hands what the kernels treat specially to the kernels, and that a
first fit of a HiddenSemiMarkovModel in a fresh process compiles no kernel.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp
from test_semi_markov_kernels import _brute_counts, _brute_force, _random_model

from bayeskit._logmath import safe_log
from bayeskit.graph import _semi_markov_numpy, semi_markov

KW = {"rtol": 1e-12, "atol": 1e-12}


@pytest.fixture
def force(monkeypatch):
    """``force("numpy")`` or ``force("kernels")`` for the semi-Markov functions."""
    decide = semi_markov._numpy_first
    monkeypatch.setattr(_semi_markov_numpy, "_spent", [0.0])

    def set_path(path):
        if path == "numpy":
            monkeypatch.setattr(semi_markov._jit, "_compiled", lambda kernel: False)
            monkeypatch.setattr(semi_markov, "_COMPILED", set())
            monkeypatch.setattr(semi_markov, "_numpy_first", decide)
        else:
            monkeypatch.setattr(semi_markov, "_numpy_first", lambda *args: False)

    return set_path


def _draw(rng):
    k, D = int(rng.integers(1, 6)), int(rng.integers(1, 12))
    lengths = rng.integers(1, 60, size=int(rng.integers(1, 9)))
    start = rng.dirichlet(np.full(k, 0.5))
    trans = rng.dirichlet(np.full(k, 0.5), size=k)
    if k > 1 and rng.random() < 0.8:  # a semi-Markov chain proper
        np.fill_diagonal(trans, 0.0)
        trans /= trans.sum(axis=1, keepdims=True)
    pmf = rng.dirichlet(np.full(D, 0.5), size=k)
    scale = rng.choice([0.1, 3.0, 30.0])
    log_em = rng.normal(scale=scale, size=(lengths.sum(), k))
    log_em += rng.normal(scale=1e3)  # far from 0: the shift matters
    return safe_log(start), safe_log(trans), pmf, log_em, lengths


def _all(log_start, log_trans, pmf, log_em, lengths, weights):
    args = (log_start, log_trans, pmf, log_em, lengths)
    return (
        semi_markov.semi_markov_forward_backward(*args, weights),
        semi_markov.semi_markov_forward(*args),
        semi_markov.semi_markov_viterbi(*args),
    )


@pytest.mark.parametrize("seed", range(40))
def test_numpy_recursions_give_the_kernels_answers(force, seed, monkeypatch):
    rng = np.random.default_rng(seed)
    args = _draw(rng)
    weights = rng.random(len(args[-1])) * 3
    declined = []
    for name in ("forward_backward", "forward", "viterbi"):
        run = getattr(_semi_markov_numpy, name)

        def spy(*a, run=run):
            found = run(*a)
            declined.append(found is None)
            return found

        monkeypatch.setattr(_semi_markov_numpy, name, spy)
    results = {}
    for path in ("kernels", "numpy"):
        force(path)
        results[path] = _all(*args, weights)
    assert declined == [False] * 3  # the numpy passes answered
    (fb1, f1, (p1, lp1)), (fb2, f2, (p2, lp2)) = results.values()
    assert_allclose(fb2.log_evidence, fb1.log_evidence, **KW)
    assert_allclose(fb2.posterior, fb1.posterior, **KW)
    assert_allclose(fb2.start_counts, fb1.start_counts, **KW)
    assert_allclose(fb2.transition_counts, fb1.transition_counts, **KW)
    assert_allclose(fb2.duration_counts, fb1.duration_counts, **KW)
    assert_allclose(f2, f1, **KW)
    assert_array_equal(p2, p1)
    assert_array_equal(lp2, lp1)  # the same sums and comparisons


@pytest.mark.parametrize("seed", range(20))
def test_numpy_recursions_match_brute_force_enumeration(force, seed):
    """Against the definition: every state path of a short chain, its runs
    the segments, the last one censored; two sequences at once."""
    force("numpy")
    rng = np.random.default_rng(200 + seed)
    k, D = int(rng.integers(2, 4)), int(rng.integers(1, 5))
    n1, n2 = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    start, trans, pmf, log_em = _random_model(rng, k, D, n1 + n2)
    weights = np.array([1.0, 2.5])
    post = semi_markov.semi_markov_forward_backward(
        safe_log(start), safe_log(trans), pmf, log_em, [n1, n2], weights
    )
    path, log_prob = semi_markov.semi_markov_viterbi(
        safe_log(start), safe_log(trans), pmf, log_em, [n1, n2]
    )
    durations = np.zeros((k, D))
    transitions = np.zeros((k, k))
    for n, rows in enumerate([slice(0, n1), slice(n1, n1 + n2)]):
        paths, lp = _brute_force(start, trans, pmf, log_em[rows])
        evidence = logsumexp(lp)
        assert_allclose(post.log_evidence[n], evidence, rtol=1e-12)
        w = np.exp(lp - evidence)
        gamma = np.stack([w @ (paths == j) for j in range(k)], axis=1)
        assert_allclose(post.posterior[rows], gamma, atol=1e-12)
        complete, moves = _brute_counts(paths, lp, k, D)
        transitions += weights[n] * moves
        # the censored last segment spread over the durations it may have had
        for p, wi in zip(paths, w):
            d = len(p) - np.flatnonzero(np.append(-1, p) != p[-1]).max()
            tail = pmf[p[-1], d - 1 :]
            if wi > 0:
                complete[p[-1], d - 1 :] += wi * tail / tail.sum()
        durations += weights[n] * complete
        assert_allclose(log_prob[n], lp.max(), rtol=1e-12)
        assert_array_equal(path[rows], paths[np.argmax(lp)])
    assert_allclose(post.transition_counts, transitions, atol=1e-12)
    assert_allclose(post.duration_counts, durations, atol=1e-12)


def test_what_the_kernels_treat_specially_goes_to_them(force, monkeypatch):
    """A step the scaled recursion loses (its mass underflows: state 0 stays
    exactly 5 steps, and step 2, surely state 0, has emission e^-800 there),
    an impossible sequence and ``exact=True`` are the kernels' (log space),
    with their answers; too much work or a spent budget too."""
    start, trans = np.array([1.0, 0.0]), np.array([[0.0, 1.0], [1.0, 0.0]])
    pmf = np.array([[0, 0, 0, 0, 1.0], [1.0, 0, 0, 0, 0]])
    args = (safe_log(start), safe_log(trans), pmf)
    lost = np.zeros((24, 2))
    lost[2] = [-800.0, 0.0]
    impossible = np.zeros((24, 2))
    impossible[[3, 15], 1] = -np.inf  # no segment of state 1 fits: impossible
    impossible[[3, 15], 0] = -np.inf
    declined = []
    run = _semi_markov_numpy.forward_backward

    def spy(*a):
        found = run(*a)
        declined.append(found is None)
        return found

    monkeypatch.setattr(_semi_markov_numpy, "forward_backward", spy)
    force("numpy")
    with pytest.raises(ValueError, match="probability zero"):
        semi_markov.semi_markov_forward_backward(*args, impossible, [12, 12])
    assert semi_markov.semi_markov_forward(*args, impossible, [12, 12])[0] == -np.inf
    numpy_answer = semi_markov.semi_markov_forward_backward(*args, lost, [12, 12])
    force("kernels")
    kernel_answer = semi_markov.semi_markov_forward_backward(*args, lost, [12, 12])
    assert declined == [True, True]
    assert_allclose(numpy_answer.posterior, kernel_answer.posterior, **KW)
    assert_allclose(numpy_answer.log_evidence, [-800.0, 0.0], rtol=1e-14)
    force("numpy")
    semi_markov.semi_markov_forward_backward(*args, lost, [12, 12], exact=True)
    assert declined == [True, True]  # exact: not even asked
    bounds = np.array([0, 1, _semi_markov_numpy.MAX_STEPS + 2])
    assert not _semi_markov_numpy.fits(bounds, 3, 4)
    assert _semi_markov_numpy.fits(bounds[:2], 3, 4)
    _semi_markov_numpy._spent[0] = _semi_markov_numpy.BUDGET
    assert not _semi_markov_numpy.fits(bounds[:2], 3, 4)


_FIRST_FIT = """
import json
import numpy as np
import bayeskit
from bayeskit.graph import _semi_markov_kernels as k, _semi_markov_viterbi as v

rng = np.random.default_rng(0)
X = rng.normal(size=(10_000, 2)) + 3 * (np.arange(10_000) // 10 % 3)[:, None]
model = bayeskit.HiddenSemiMarkovModel(3, n_iter=2, random_state=0)
for lengths in ([100], [100] * 100):
    data = X[: sum(lengths)]
    model.fit(data, lengths)
    model.predict(data, lengths)
    model.predict_proba(data, lengths)
    model.score(data, lengths)
kernels = [k._forward_pass, k._forward_backward_pass, v._viterbi_pass]
print(json.dumps({kernel.func.__name__: [
    len(kernel.variant(p).signatures) for p in (False, True)] for kernel in kernels}))
"""


def test_a_first_fit_in_a_fresh_environment_compiles_no_kernel(tmp_path):
    """HiddenSemiMarkovModel on one, then 100 sequences of 100 steps, in a
    fresh process with an empty numba cache: fit, predict, predict_proba and
    score compile none of the semi-Markov kernels (some ten seconds)."""
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


@pytest.mark.parametrize("seed", range(20))
def test_posteriors_without_counts_are_the_same_on_both_paths(force, seed):
    """``counts=False`` (``predict_proba``'s pass) gives the full pass's
    log evidence and posteriors, and no counts, on the numpy path as on the
    kernels."""
    rng = np.random.default_rng(500 + seed)
    args = _draw(rng)
    results = {}
    for path in ("kernels", "numpy"):
        force(path)
        results[path] = (
            semi_markov.semi_markov_forward_backward(*args),
            semi_markov.semi_markov_forward_backward(*args, counts=False),
        )
    full, _ = results["kernels"]
    for path, (_, alone) in results.items():
        assert_allclose(alone.log_evidence, full.log_evidence, **KW)
        assert_allclose(alone.posterior, full.posterior, **KW)
        assert alone.start_counts is None and alone.duration_counts is None, path
