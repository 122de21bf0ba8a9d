"""Chain kernels (forward, forward-backward, Viterbi) against hmmlearn.

Both libraries run in this one process on identical parameters: a categorical
HMM with 8 states and 20 symbols, and hmmlearn's compiled
``CategoricalHMM(implementation="scaling")``, its fastest setting. Two cases:

- (a) one sequence of 10**6 steps;
- (b) 10,000 sequences of 100 steps.

Operations, ours vs theirs: ``forward`` vs ``score``; ``forward_backward`` vs
``predict_proba``; ``viterbi`` vs ``decode``. hmmlearn computes its emission
probabilities from ``X`` inside each call. The first table gives our kernels
the emissions the way a categorical model does, as the table
``log(emissionprob_.T)`` (one row per symbol) and ``symbols=X``, which the
kernels look up step by step. The second builds the dense ``log_emission =
log(emissionprob_.T)[X]`` (one row per step, the form of any other emission)
inside the timed region; the third times the kernels alone on a prebuilt
dense ``log_emission``. Every
operation is warmed up once (which also compiles or loads our kernels), then
ours and theirs are timed interleaved and the median of the repeats is kept.
Before timing, the script asserts that the two libraries agree.

Run from the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 python benchmarks/bench_chain.py

``--quick`` runs small sizes with few repeats, for CI.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import sys
from pathlib import Path

import hmmlearn
import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _timing import Result, add_json_option, compare, print_table, write_json
from hmmlearn.hmm import CategoricalHMM

from bayeskit.graph.chain import forward, forward_backward, viterbi

N_STATES = 8
N_SYMBOLS = 20
GOAL = 0.5  # the goal is set for forward-backward and Viterbi


def make_model(rng: np.random.Generator) -> CategoricalHMM:
    """An hmmlearn model with random, strictly positive parameters."""
    model = CategoricalHMM(n_components=N_STATES, implementation="scaling")
    model.n_features = N_SYMBOLS
    model.startprob_ = rng.dirichlet(np.ones(N_STATES))
    model.transmat_ = rng.dirichlet(np.ones(N_STATES), size=N_STATES)
    model.emissionprob_ = rng.dirichlet(np.ones(N_SYMBOLS), size=N_STATES)
    return model


def check_agreement(model, X, lengths, log_start, log_trans, log_emission) -> int:
    """Assert that both libraries agree on this data; return the number of
    steps where the two Viterbi paths differ (at exact ties)."""
    log_b = np.log(model.emissionprob_.T)
    by_symbol = forward_backward(log_start, log_trans, log_b, lengths, symbols=X[:, 0])
    f = forward(log_start, log_trans, log_emission, lengths)
    np.testing.assert_allclose(
        f.log_likelihood.sum(), model.score(X, lengths), rtol=1e-10
    )
    post = forward_backward(log_start, log_trans, log_emission, lengths)
    np.testing.assert_allclose(post.log_likelihood, f.log_likelihood, rtol=1e-12)
    np.testing.assert_allclose(
        post.posterior, model.predict_proba(X, lengths), rtol=0, atol=1e-10
    )
    np.testing.assert_allclose(by_symbol.posterior, post.posterior, atol=1e-12)
    np.testing.assert_allclose(by_symbol.log_likelihood, post.log_likelihood)
    path, log_prob = viterbi(log_start, log_trans, log_emission, lengths)
    np.testing.assert_array_equal(
        viterbi(log_start, log_trans, log_b, lengths, symbols=X[:, 0])[0], path
    )
    their_log_prob, their_path = model.decode(X, lengths)
    np.testing.assert_allclose(log_prob.sum(), their_log_prob, rtol=1e-12)
    # Categorical data has exact ties (a detour a-b-a-a scores as a-a-b-a when
    # the two symbols repeat); hmmlearn backtracks to the highest index on a
    # tie, we to the lowest. Where the paths differ, both must be optimal.
    bounds = np.cumsum([0, *(lengths if lengths is not None else [len(X)])])
    np.testing.assert_allclose(
        path_log_prob(log_start, log_trans, log_emission, bounds, path),
        path_log_prob(log_start, log_trans, log_emission, bounds, their_path),
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        path_log_prob(log_start, log_trans, log_emission, bounds, path).sum(),
        their_log_prob,
        rtol=1e-12,
    )
    return int(np.count_nonzero(path != their_path))


def path_log_prob(log_start, log_trans, log_emission, bounds, path) -> np.ndarray:
    """Log joint probability of a given state path, per sequence."""
    steps = log_emission[np.arange(len(path)), path]
    moves = log_trans[path[:-1], path[1:]]
    moves[bounds[1:-1] - 1] = 0.0  # no transition between two sequences
    per_step = steps + np.concatenate([[0.0], moves])
    per_step[bounds[:-1]] += log_start[path[bounds[:-1]]]
    return np.add.reduceat(per_step, bounds[:-1])


def bench_case(name, model, X, lengths, repeats) -> list[list[Result]]:
    log_start = np.log(model.startprob_)
    log_trans = np.log(model.transmat_)
    log_b = np.ascontiguousarray(np.log(model.emissionprob_.T))  # (n_symbols, K)
    symbols = X[:, 0]
    log_emission = np.take(log_b, symbols, axis=0)
    n_ties = check_agreement(model, X, lengths, log_start, log_trans, log_emission)
    print(
        f"{name}: results agree; the Viterbi paths differ at {n_ties} steps, "
        "all exact ties (both paths optimal)"
    )

    def gathered(kernel):
        return lambda: kernel(
            log_start, log_trans, np.take(log_b, symbols, axis=0), lengths
        )

    def prebuilt(kernel):
        return lambda: kernel(log_start, log_trans, log_emission, lengths)

    def by_symbol(kernel):
        return lambda: kernel(log_start, log_trans, log_b, lengths, symbols=symbols)

    ops = [
        ("score", forward, lambda: model.score(X, lengths), None),
        ("fwd-bwd", forward_backward, lambda: model.predict_proba(X, lengths), GOAL),
        ("viterbi", viterbi, lambda: model.decode(X, lengths), GOAL),
    ]
    tables = [[], [], []]
    for op, kernel, theirs, goal in ops:
        for table, ours in zip(tables, (by_symbol, gathered, prebuilt)):
            table.append(compare(name, op, ours(kernel), theirs, repeats, goal))
    return tables


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="small sizes and few repeats (CI)"
    )
    parser.add_argument("--repeats", type=int, default=None)
    add_json_option(parser)
    args = parser.parse_args(argv)
    if args.quick:
        long_steps, n_short, repeats = 20_000, 200, 3
    else:
        long_steps, n_short, repeats = 1_000_000, 10_000, 7
    repeats = args.repeats or repeats
    short_steps = 100

    rng = np.random.default_rng(0)
    model = make_model(rng)
    cases = [
        (f"(a) 1x{long_steps}", long_steps, None),
        (f"(b) {n_short}x{short_steps}", n_short * short_steps,
         np.full(n_short, short_steps)),
    ]  # fmt: skip
    by_symbol, with_gather, kernels_only, sizes = [], [], [], {}
    for name, n_steps, lengths in cases:
        X = rng.integers(0, N_SYMBOLS, size=(n_steps, 1))
        a, b, c = bench_case(name, model, X, lengths, repeats)
        by_symbol += a
        with_gather += b
        kernels_only += c
        if lengths is None:
            shape = f"1 x {n_steps:,}"
        else:
            shape = f"{len(lengths):,} x {short_steps}"
        sizes[name] = f"{shape} steps, {N_STATES} states, {N_SYMBOLS} symbols"

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"\nbayeskit chain kernels vs hmmlearn {hmmlearn.__version__} "
        f"CategoricalHMM(implementation='scaling'), {N_STATES} states, "
        f"{N_SYMBOLS} symbols; median of {repeats} interleaved repeats after "
        f"one warm-up. numba {numba.__version__} ({numba.get_num_threads()} "
        f"threads, {numba.threading_layer()}), numpy {np.__version__}, Python "
        f"{platform.python_version()}; CPUs: {os.cpu_count()}; load average: "
        f"{load}.\n"
    )
    print("Ours on the emission table, looked up by symbol (symbols=X):")
    print_table(by_symbol, peer="hmmlearn")
    print("\nOurs including the dense gather log(emissionprob_.T)[X]:")
    print_table(with_gather, peer="hmmlearn")
    print("\nOurs on a prebuilt dense log_emission (kernels alone):")
    print_table(kernels_only, peer="hmmlearn")
    if args.json:
        results = (
            by_symbol
            + [
                dataclasses.replace(r, operation=f"{r.operation} (dense)")
                for r in with_gather
            ]
            + [
                dataclasses.replace(r, operation=f"{r.operation} (kernel)")
                for r in kernels_only
            ]
        )
        write_json(args.json, results, [sizes[r.model] for r in results], "hmmlearn")


if __name__ == "__main__":
    main()
