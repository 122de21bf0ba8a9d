"""Variational mixtures and HMMs against scikit-learn and hmmlearn: time ratios.

Iterations of ``BayesianGaussianMixture(10, covariance_type='full')`` on
200,000 rows of 10 features, from the same posterior in both libraries: one
untimed fit of one iteration (the same k-means start, checked equal), then
every timed ``fit`` is ``warm_start`` with 20 iterations (``tol=0``), so both
libraries do the same arithmetic and the ratio of times is the ratio of times
per iteration (our kernels compiled first, on a copy of the model). Then
``score_samples`` of the fitted models.

``VariationalGaussianHMM(4, 'full')`` on 1,000 sequences of 100 steps of 3
features, against hmmlearn's, from the same posterior (hmmlearn's start,
copied into bayeskit's model, checked to give the same posterior after one
iteration): bayeskit's timed ``fit`` is ``init_params=""`` with 10 iterations
(``tol=0``), hmmlearn's is 10 passes of its fit's loop body (E-step, bound,
M-step; its ``fit`` would add a k-means start to every call); our chain
kernels are compiled first (``compiled_warmup``: in a fresh environment their
numpy stand-ins would answer every call at the quick sizes). Each operation is
warmed up, then ours and theirs are timed interleaved; the table shows medians
and ours / theirs. The rows marked ``[peak MB]`` give the peak memory of one
fit of each side, traced by ``tracemalloc`` (numpy's allocations; work arrays a
compiled kernel allocates are not traced, on either side), with the goal of no
more than the peer's; the last row is ``HiddenMarkovModel(emission="gaussian",
inference="variational")`` (full covariances) continuing its own fit on the same
sequences, against hmmlearn's ``VariationalGaussianHMM`` iterations.

Run from the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 \\
        python benchmarks/bench_variational.py

``--quick`` (2,000 rows, 5 iterations per fit, 3 repeats) runs in seconds, for CI.
``--part mixture`` or ``--part hmm`` runs the mixture's rows or the HMMs' only.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import warnings

import numpy as np
from numpy.testing import assert_allclose
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import BayesianGaussianMixture as SkBGM

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

from _timing import (  # noqa: E402
    Result,
    add_json_option,
    compare,
    compiled_warmup,
    peak_mb,
    print_table,
    write_json,
)

import bayeskit  # noqa: E402

#: Peak memory of a fit, ours over the peer's: no more than theirs.
MEMORY_GOAL = 1.0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n-samples", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=None, help="default: 5")
    parser.add_argument("--part", choices=["mixture", "hmm"], default=None)
    add_json_option(parser)
    args = parser.parse_args(argv)
    n = 2_000 if args.quick else args.n_samples
    repeats = args.repeats or (3 if args.quick else 5)
    results, sizes = [], []
    if args.part != "hmm":
        results, sizes = _mixture(args.quick, n, repeats)
    hmm_results, hmm_sizes = [], []
    if args.part != "mixture":
        hmm_results, hmm_sizes = _variational_hmm(args.quick, repeats)
    if hmm_results:
        print_table(hmm_results, peer="hmmlearn")
    if args.json:
        peers = ["sklearn"] * len(results) + ["hmmlearn"] * len(hmm_results)
        write_json(args.json, results + hmm_results, sizes + hmm_sizes, peers)


def _mixture(quick, n, repeats):
    """Iterations and scores of BayesianGaussianMixture against scikit-learn's."""
    k, d, iters = 10, 10, 5 if quick else 20
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=4.0, size=(6, d))
    X = centres[rng.integers(0, 6, n)] + rng.normal(size=(n, d))
    warnings.simplefilter("ignore", ConvergenceWarning)
    kw = dict(n_components=k, random_state=0, tol=0.0, warm_start=True, max_iter=1)
    ours = bayeskit.BayesianGaussianMixture(**kw).fit(X)
    theirs = SkBGM(**kw).fit(X)
    assert_allclose(ours.means_, theirs.means_, rtol=1e-8, atol=1e-8)
    ours.set_params(max_iter=iters)
    theirs.set_params(max_iter=iters)
    ours.fit(X)
    theirs.fit(X)
    assert_allclose(ours.means_, theirs.means_, rtol=1e-6, atol=1e-8)
    # Our kernels compiled (or loaded) before timing, on a copy of the model.
    compiled_warmup(lambda: copy.deepcopy(ours).fit(X))
    print(
        f"{n} rows, {d} features, {k} components ('full'), {iters} iterations "
        f"per fit; medians of {repeats} runs"
    )
    results = [
        compare(
            "BayesianGaussianMixture",
            f"fit ({iters} it.)",
            lambda: ours.fit(X),
            lambda: theirs.fit(X),
            repeats,
            0.5,
        ),
        compare(
            "BayesianGaussianMixture",
            "score_samples",
            lambda: ours.score_samples(X),
            lambda: theirs.score_samples(X),
            repeats,
            0.5,
        ),
    ]
    mb = peak_mb(lambda: ours.fit(X)), peak_mb(lambda: theirs.fit(X))
    results.append(
        Result("BayesianGaussianMixture", "fit [peak MB]", *mb, MEMORY_GOAL, 1)
    )
    sizes = [f"{n:,} x {d}, {k} components ('full')"] * len(results)
    print_table(results, peer="sklearn")
    return results, sizes


def _variational_hmm(quick, repeats):
    """Time per iteration of VariationalGaussianHMM against hmmlearn's."""
    try:
        from hmmlearn.vhmm import VariationalGaussianHMM as HlVHMM
    except ImportError:
        return [], []
    n_seq, t_len, k, d = (50, 100, 4, 3) if quick else (1_000, 100, 4, 3)
    iters = 3 if quick else 10
    rng = np.random.default_rng(1)
    centres = rng.normal(scale=3.0, size=(k, d))
    z = np.repeat(rng.integers(0, k, n_seq * t_len // 10), 10)
    X = centres[z] + rng.normal(size=(len(z), d))
    lengths = [t_len] * n_seq
    theirs = HlVHMM(k, "full", n_iter=1, tol=0.0, random_state=0).fit(X, lengths)
    names = [
        f"{p}_{s}"
        for p in ("startprob", "transmat", "means", "beta", "dof", "scale")
        for s in ("prior_", "posterior_")
    ]
    ours = bayeskit.VariationalGaussianHMM(k, "full", n_iter=1, tol=0.0)
    ours.set_params(init_params="")
    for name in names:
        setattr(ours, name, np.array(getattr(theirs, name), dtype=float))
    ours.fit(X, lengths)
    theirs.set_params(init_params="").fit(X, lengths)
    for name in names:
        assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-8)
    ours.set_params(n_iter=iters)

    def their_iterations():
        for _ in range(iters):
            stats, log_prob = theirs._do_estep(X, lengths)
            theirs._compute_lower_bound(log_prob)
            theirs._do_mstep(stats)

    # Our chain kernels compiled before timing: at quick sizes their numpy
    # stand-ins would answer every call of a fresh environment.
    compiled_warmup(lambda: ours.fit(X, lengths))
    print(
        f"{n_seq} sequences of {t_len} steps, {d} features, {k} states ('full'), "
        f"{iters} iterations per fit; medians of {repeats} runs"
    )
    result = compare(
        "VariationalGaussianHMM",
        f"fit ({iters} it.)",
        lambda: ours.fit(X, lengths),
        their_iterations,
        repeats,
        0.5,
    )
    mb = peak_mb(lambda: ours.fit(X, lengths)), peak_mb(their_iterations)
    memory = Result("VariationalGaussianHMM", "fit [peak MB]", *mb, MEMORY_GOAL, 1)
    # The generic variational HMM (any family) on the same data: its own start
    # (one iteration), then a fit continued from it with its prior kept.
    generic = bayeskit.HiddenMarkovModel(
        k, emission="gaussian", inference="variational", n_iter=1, tol=0.0
    ).fit(X, lengths)
    generic.set_params(
        init_params="", emission_prior=generic.emission_prior_, n_iter=iters
    )
    generic_mb = peak_mb(lambda: generic.fit(X, lengths)), mb[1]
    any_family = Result(
        "HiddenMarkovModel",
        "variational fit [peak MB]",
        *generic_mb,
        MEMORY_GOAL,
        1,
    )
    size = f"{n_seq:,} sequences x {t_len} steps x {d}, {k} states ('full')"
    return [result, memory, any_family], [size] * 3


if __name__ == "__main__":
    main()
