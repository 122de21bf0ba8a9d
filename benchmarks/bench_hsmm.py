"""HiddenSemiMarkovModel against bayeskit's own HiddenMarkovModel: time per symbol.

No peer library has an explicit-duration HMM, so the reference is the plain
HMM it generalises, on the same data with the same emission family (Gaussian,
2 features, 4 states): the ratio is what explicit durations cost. The
semi-Markov model uses Poisson durations with ``max_duration = 50``; its
recursions are O(T K D) where the HMM's are O(T K^2). Two cases:

- (a) one sequence of 200,000 steps;
- (b) 2,000 sequences of 100 steps.

Operations: ``score``, ``predict_proba``, ``decode`` (Viterbi) and one EM
step (``summarize`` then ``from_stats``). Both models are fitted once on the
data's head, every operation is warmed up once (compiling or loading the
kernels), then timed interleaved; the median of the repeats is kept. The
numpy stand-ins that run while a kernel is not compiled (first use in a fresh
environment, ``bench_first_use.py``'s subject) are switched off for both
models: on the small sizes of ``--quick`` with an empty numba cache they
would otherwise answer every call, and the ratio would time them, not the
kernels. Before
timing, the script asserts that the semi-Markov model with geometric
durations (a table truncated where the tail is below 1e-16) scores as the HMM.

Run from the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 python benchmarks/bench_hsmm.py

``--quick`` runs small sizes with few repeats, for CI.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _timing import add_json_option, compare, print_table, write_json

from bayeskit import HiddenMarkovModel, HiddenSemiMarkovModel
from bayeskit.graph import _chain_numpy, _semi_markov_numpy

# The kernels on both sides, compiled by the warm-up (see the module).
_chain_numpy.BUDGET = _semi_markov_numpy.BUDGET = 0.0

N_STATES = 4
MAX_DURATION = 50
GOAL = 2.0
PEER = "bayeskit HiddenMarkovModel"


def make_data(rng, n_steps):
    """Segments of Poisson lengths, state means 0, 3, 6, 9, unit noise."""
    states, t = [], 0
    state = 0
    while t < n_steps:
        d = 1 + rng.poisson(10)
        states += [state] * d
        t += d
        state = (state + 1 + rng.integers(N_STATES - 1)) % N_STATES
    states = np.array(states[:n_steps])
    return rng.normal(3.0 * states[:, None], 1.0, (n_steps, 2))


def check_agreement(hmm, X):
    """The semi-Markov model with the HMM's chain as geometric durations
    scores as the HMM (the identity the tests check to 1e-10)."""
    stay = np.full(N_STATES, 0.9)
    trans = np.full((N_STATES, N_STATES), 0.1 / (N_STATES - 1))
    np.fill_diagonal(trans, stay)
    hmm.transmat_ = trans
    D = int(np.ceil(np.log(1e-16) / np.log(stay.max()))) + 1
    pmf = (1 - stay)[:, None] * stay[:, None] ** np.arange(D)
    hsmm = HiddenSemiMarkovModel(
        N_STATES, duration="table", max_duration=D, random_state=0
    )
    hsmm._init(X)
    hsmm.startprob_ = hmm.startprob_
    off = trans / (1 - stay)[:, None]
    np.fill_diagonal(off, 0.0)
    hsmm.transmat_ = off
    hsmm.durations_ = pmf / pmf.sum(axis=1, keepdims=True)
    hsmm._emission_value = hmm.emission_params_
    np.testing.assert_allclose(hsmm.score(X), hmm.score(X), rtol=1e-10)


def _recorded(func, times):
    """``func`` appending the seconds of every call to ``times``."""

    def timed():
        begin = time.perf_counter()
        func()
        times.append(time.perf_counter() - begin)

    return timed


def _compare(name, op, ours, theirs, repeats, spreads):
    """``compare``, and the range of the repeats' ratios into ``spreads``
    (each repeat times both models back to back; the warm-up is left out)."""
    t_ours, t_theirs = [], []
    result = compare(
        name, op, _recorded(ours, t_ours), _recorded(theirs, t_theirs), repeats, GOAL
    )
    ratios = np.array(t_ours[1:]) / np.array(t_theirs[1:])
    spreads[(name, op)] = (ratios.min(), ratios.max())
    return result


def bench_case(name, X, lengths, repeats, spreads):
    head = X[:2000]
    hmm = HiddenMarkovModel(N_STATES, n_iter=5, random_state=0).fit(head)
    hsmm = HiddenSemiMarkovModel(
        N_STATES, max_duration=MAX_DURATION, n_iter=5, random_state=0
    ).fit(head)
    results = []
    for op in ("score", "predict_proba", "decode"):
        ours = lambda op=op: getattr(hsmm, op)(X, lengths)  # noqa: E731
        theirs = lambda op=op: getattr(hmm, op)(X, lengths)  # noqa: E731
        results.append(_compare(name, op, ours, theirs, repeats, spreads))

    def em_step(model):
        return lambda: model.from_stats(model.summarize(X, lengths))

    results.append(
        _compare(name, "EM step", em_step(hsmm), em_step(hmm), repeats, spreads)
    )
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (CI)")
    parser.add_argument("--repeats", type=int, default=None)
    add_json_option(parser)
    args = parser.parse_args(argv)
    if args.quick:
        long_steps, n_short, repeats = 5_000, 50, 3
    else:
        long_steps, n_short, repeats = 200_000, 2_000, 7
    repeats = args.repeats or repeats
    rng = np.random.default_rng(0)
    X_long = make_data(rng, long_steps)
    check_agreement(
        HiddenMarkovModel(N_STATES, n_iter=2, random_state=0).fit(X_long[:2000]),
        X_long[:2000],
    )
    print("agreement: geometric durations score as the HMM (rtol 1e-10)")
    cases = [
        (f"(a) 1x{long_steps}", X_long, None),
        (f"(b) {n_short}x100", make_data(rng, n_short * 100), np.full(n_short, 100)),
    ]
    results, sizes, spreads = [], [], {}
    for name, X, lengths in cases:
        found = bench_case(name, X, lengths, repeats, spreads)
        results += found
        sizes += [
            f"{len(X):,} steps, {N_STATES} states, 2 features, D = {MAX_DURATION}"
        ] * len(found)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"\nHiddenSemiMarkovModel (Poisson durations, D = {MAX_DURATION}) vs "
        f"HiddenMarkovModel, Gaussian emissions, {N_STATES} states; median of "
        f"{repeats} interleaved repeats after one warm-up; numba "
        f"{numba.__version__} ({numba.get_num_threads()} threads); load average: "
        f"{load}.\n"
    )
    print_table(results, peer="HMM")
    for r in results:
        n = len(cases[0][1]) if r.model.startswith("(a)") else len(cases[1][1])
        low, high = spreads[(r.model, r.operation)]
        print(
            f"{r.model:<16} {r.operation:<14} {r.ours / n * 1e9:8.0f} ns/symbol "
            f"vs {r.theirs / n * 1e9:8.0f} ns/symbol; the repeats' ratios "
            f"{low:.2f} to {high:.2f}"
        )
    if args.json:
        write_json(args.json, results, sizes, PEER)


if __name__ == "__main__":
    main()
