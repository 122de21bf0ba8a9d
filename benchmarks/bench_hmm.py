"""Hidden Markov models: bayeskit's CategoricalHMM against hmmlearn's, as ratios.

Both libraries run in this one process on identical parameters (8 states, 20
symbols), hmmlearn in its fastest setting, ``implementation='scaling'``. Two
cases: (a) one sequence of 10**6 steps, (b) 10,000 sequences of 100 steps.
Operations: ``score``, ``decode`` (Viterbi), ``predict_proba`` and ``fit`` (10
Baum-Welch iterations from the same start). A third case, (c), is many small
calls: GaussianHMM's ``predict_proba`` on 50-step sequences, one call after
another, where what a call costs beside the arithmetic shows. The
estimator's timing includes everything a user pays: validation, symbol
encoding, emissions, the chain kernels (``benchmarks/bench_chain.py`` times
the kernels alone). Each operation is warmed up, then ours and theirs are
timed interleaved; the table shows medians and ours / theirs.

Run from the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 python benchmarks/bench_hmm.py

``--quick`` runs small sizes with few repeats, for CI.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np
from hmmlearn import hmm as hh
from numpy.testing import assert_allclose

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

from _timing import add_json_option, compare, print_table, write_json  # noqa: E402

import bayeskit  # noqa: E402

K, M, GOAL = 8, 20, 0.5


def models(rng, n_iter):
    start = rng.dirichlet(np.ones(K))
    trans = rng.dirichlet(np.ones(K), size=K)
    emis = rng.dirichlet(np.ones(M), size=K)
    theirs = hh.CategoricalHMM(
        K, implementation="scaling", n_iter=n_iter, init_params="", tol=-np.inf
    )
    theirs.n_features = M
    ours = bayeskit.CategoricalHMM(
        K, n_features=M, n_iter=n_iter, init_params="", tol=0
    )
    for m in (theirs, ours):
        m.startprob_, m.transmat_, m.emissionprob_ = start, trans, emis
    return ours, theirs, (start, trans, emis)


def run_case(case, lengths, rng, repeats):
    """Check agreement, then time the four operations on one case."""
    X = rng.integers(0, M, size=(sum(lengths), 1))
    ours, theirs, start = models(rng, n_iter=10)
    ours.fit(X, lengths=lengths)  # also sets the symbol mapping
    theirs.fit(X, lengths)
    assert_allclose(ours.emissionprob_, theirs.emissionprob_, atol=1e-8)
    assert_allclose(ours.score(X, lengths=lengths), theirs.score(X, lengths), rtol=1e-8)

    def refit(model, *fit_args):
        model.startprob_, model.transmat_, model.emissionprob_ = start
        return model.fit(*fit_args)

    ops = [
        (
            "score",
            lambda: ours.score(X, lengths=lengths),
            lambda: theirs.score(X, lengths),
        ),
        (
            "decode",
            lambda: ours.decode(X, lengths=lengths),
            lambda: theirs.decode(X, lengths),
        ),
        (
            "predict_proba",
            lambda: ours.predict_proba(X, lengths=lengths),
            lambda: theirs.predict_proba(X, lengths),
        ),
        (
            "fit 10 it.",
            lambda: refit(ours, X, lengths),
            lambda: refit(theirs, X, lengths),
        ),
    ]
    return [compare(f"HMM {case}", op, a, b, repeats, GOAL) for op, a, b in ops]


def run_small_calls(rng, repeats, n_calls):
    """GaussianHMM's ``predict_proba`` called ``n_calls`` times on 50-step
    sequences (3 states, 2 features, the default 'diag' covariances): what a
    call costs beside its arithmetic (validation, the model's triple and
    parameters, the dispatch to the kernels)."""
    X = np.concatenate([rng.normal(m, 1.0, size=(200, 2)) for m in (-3, 0, 3)])
    ours = bayeskit.GaussianHMM(3, random_state=0, n_iter=5).fit(X)
    theirs = hh.GaussianHMM(3, implementation="scaling", init_params="", params="")
    theirs.n_features = 2
    theirs.startprob_, theirs.transmat_ = ours.startprob_, ours.transmat_
    theirs.means_, theirs.covars_ = ours.means_, ours.covariances_
    seqs = [X[i : i + 50] for i in range(0, len(X), 50)][:8]
    for x in seqs:
        assert_allclose(ours.predict_proba(x), theirs.predict_proba(x), atol=1e-10)

    def calls(model):
        def run():
            for i in range(n_calls):
                model.predict_proba(seqs[i % len(seqs)])

        return run

    return compare(
        "GaussianHMM (c)",
        f"predict_proba x {n_calls}",
        calls(ours),
        calls(theirs),
        repeats,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=None, help="default: 5")
    add_json_option(parser)
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 5)
    power = 4 if args.quick else 6  # 10**power steps in each case
    cases = {
        f"(a) 1 x 10^{power}": [10**power],
        f"(b) 10^{power - 2} x 100": [100] * 10 ** (power - 2),
    }
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    results, sizes = [], []
    for case, lengths in cases.items():
        case_results = run_case(case, lengths, rng, repeats)
        results += case_results
        shape = f"{len(lengths):,} x {lengths[0]:,} steps"
        sizes += [f"{shape}, {K} states, {M} symbols"] * len(case_results)
    n_calls = 200 if args.quick else 2000
    results.append(run_small_calls(rng, repeats, n_calls))
    sizes.append(f"{n_calls} calls on 50 steps, 3 states, 2 features")
    print(f"{K} states, {M} symbols; medians of {repeats} runs")
    print_table(results, peer="hmmlearn")
    if args.json:
        write_json(args.json, results, sizes, "hmmlearn")


if __name__ == "__main__":
    main()
