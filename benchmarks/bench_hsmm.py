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

``--quick`` runs small sizes with few repeats, for CI. ``--profile`` prints,
instead of the ratios, where the time of every call goes, per phase, for both
models: the input checks and conversions, the emission log-likelihoods, the
parameters' checks, the arrays the kernels read (logs, scaled emissions), the
compiled kernel itself, the emission statistics and the M-step (EM step), and
the rest (Python between them). These are CPU seconds of the calling thread
(``time.thread_time``, so that other processes on a shared machine do not
count), medians over interleaved repeats; and the semi-Markov kernel alone,
split into its forward pass, its backward pass with the posteriors, and the
expected counts.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _timing import add_json_option, compare, print_table, write_json

from bayeskit import HiddenMarkovModel, HiddenSemiMarkovModel
from bayeskit.graph import _chain_numpy, _semi_markov_numpy, chain, semi_markov
from bayeskit.hmm._base import BaseHMM

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


class _Phases:
    """CPU seconds of the calling thread spent in named phases, each phase's
    own (a phase called inside another is taken out of the outer one)."""

    def __init__(self):
        self.seconds = defaultdict(float)
        self._stack = []
        self._undo = []

    def wrap(self, owner, name, phase):
        func = getattr(owner, name)

        def timed(*args, **kwargs):
            self._stack.append(0.0)
            begin = time.thread_time()
            try:
                return func(*args, **kwargs)
            finally:
                spent = time.thread_time() - begin
                inner = self._stack.pop()
                self.seconds[phase] += spent - inner
                if self._stack:
                    self._stack[-1] += spent

        self._undo.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, timed)

    def restore(self):
        for owner, name, value in reversed(self._undo):
            setattr(owner, name, value)

    def measure(self, func):
        """``{phase: seconds}`` of one call of ``func``, with ``total``."""
        self.seconds.clear()
        begin = time.thread_time()
        func()
        found = dict(self.seconds)
        found["total"] = time.thread_time() - begin
        found["rest"] = found["total"] - sum(self.seconds.values())
        return found


_PHASES = ["input checks", "emission log-lik", "parameters", "kernel arrays"]
_PHASES += ["kernel", "emission stats", "M-step", "rest", "total"]


def _instrument(phases, hsmm, hmm):
    """Time the phases of both models' calls (see the module)."""
    phases.wrap(BaseHMM, "_sequences", "input checks")
    phases.wrap(BaseHMM, "_data", "input checks")
    phases.wrap(BaseHMM, "_messages", "emission log-lik")
    phases.wrap(BaseHMM, "_current_params", "parameters")
    phases.wrap(BaseHMM, "_params_from_stats", "M-step")
    for model in (hsmm, hmm):
        family = type(model._components()[1])
        if "expected_stats" in family.__dict__:
            phases.wrap(family, "expected_stats", "emission stats")
    for module in (semi_markov, chain):
        phases.wrap(module, "run_parallel", "kernel")
    for name in ("_arrays", "_scaled", "_bounds", "_tables", "_emission_array"):
        phases.wrap(semi_markov, name, "kernel arrays")
    phases.wrap(semi_markov, "_scaled_emissions", "kernel arrays")
    for name in ("check_chain", "_scaled_emissions", "_parallel_plan"):
        phases.wrap(chain, name, "kernel arrays")


def _kernel_parts(hsmm, X, lengths, repeats):
    """Median CPU seconds of the semi-Markov kernel's forward pass, the
    backward pass with the posteriors (the pass without counts, less the
    forward pass) and the expected counts (the full pass less that one)."""
    (structure, _, _), params, messages, lengths, _ = hsmm._inputs(X, lengths)
    p = params.structure
    args = (p.log_startprob, p.log_transmat, p.pmf, structure._dense(messages))
    runs = {
        "forward": lambda: semi_markov.semi_markov_forward(*args, lengths),
        "posteriors": lambda: semi_markov.semi_markov_forward_backward(
            *args, lengths, counts=False
        ),
        "counts": lambda: semi_markov.semi_markov_forward_backward(*args, lengths),
    }
    phases = _Phases()
    phases.wrap(semi_markov, "run_parallel", "kernel")
    seconds = defaultdict(list)
    try:
        for _ in range(repeats + 1):
            for name, run in runs.items():
                seconds[name].append(phases.measure(run)["kernel"])
    finally:
        phases.restore()
    med = {name: statistics.median(v[1:]) for name, v in seconds.items()}
    return {
        "forward": med["forward"],
        "backward + posteriors": med["posteriors"] - med["forward"],
        "expected counts": med["counts"] - med["posteriors"],
    }


_OPERATIONS = ("score", "predict_proba", "decode", "EM step")


def _operation(op, X, lengths):
    """``op`` of a model on ``X`` (the EM step: summarize, then from_stats)."""
    if op == "EM step":
        return lambda model: model.from_stats(model.summarize(X, lengths))
    return lambda model: getattr(model, op)(X, lengths)


def profile(cases, repeats):
    """Print the phases of every operation, both models (see the module)."""
    for name, X, lengths in cases:
        head = X[:2000]
        hmm = HiddenMarkovModel(N_STATES, n_iter=5, random_state=0).fit(head)
        hsmm = HiddenSemiMarkovModel(
            N_STATES, max_duration=MAX_DURATION, n_iter=5, random_state=0
        ).fit(head)
        ops = {op: _operation(op, X, lengths) for op in _OPERATIONS}
        phases = _Phases()
        _instrument(phases, hsmm, hmm)
        try:
            found = defaultdict(list)
            for r in range(repeats + 1):  # the first is a warm-up
                for op, run in ops.items():
                    pair = [("HSMM", hsmm), ("HMM", hmm)]
                    for label, model in pair if r % 2 else pair[::-1]:
                        call = functools.partial(run, model)
                        if r:
                            found[op, label].append(phases.measure(call))
                        else:
                            call()
        finally:
            phases.restore()
        n = len(X)
        print(
            f"\n{name}: CPU microseconds per call, median of {repeats} interleaved "
            "repeats (HSMM / HMM per operation)"
        )
        print(f"{'':<18}" + "".join(f"{op:>20}" for op in ops))

        def median(op, model, phase, found=found):
            return statistics.median(c.get(phase, 0.0) for c in found[op, model])

        for phase in _PHASES:
            cells = [
                f"{median(op, 'HSMM', phase) * 1e6:.0f}/"
                f"{median(op, 'HMM', phase) * 1e6:.0f}"
                for op in ops
            ]
            print(f"{phase:<18}" + "".join(f"{c:>20}" for c in cells))
        ratios = [
            median(op, "HSMM", "total") / median(op, "HMM", "total") for op in ops
        ]
        hsmm_total = [median(op, "HSMM", "total") for op in ops]
        print(f"{'ratio of totals':<18}" + "".join(f"{r:>20.2f}" for r in ratios))
        print(
            f"{'HSMM ns per step':<18}"
            + "".join(f"{t / n * 1e9:>20.0f}" for t in hsmm_total)
        )
        parts = _kernel_parts(hsmm, X, lengths, repeats)
        print(
            "the semi-Markov kernel alone: "
            + ", ".join(
                f"{part} {v * 1e6:.0f} us ({v / n * 1e9:.0f} ns/step)"
                for part, v in parts.items()
            )
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (CI)")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument(
        "--profile", action="store_true", help="CPU time per phase (see the module)"
    )
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
    if args.profile:
        profile(cases, max(repeats, 9))
        return
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
