"""Gaussian mixtures: bayeskit against scikit-learn, in one process, as time ratios.

20 EM iterations of ``GaussianMixture(8, covariance_type='full')`` on 200,000
rows of 10 features, from the same initial parameters in both libraries (so
both do identical arithmetic, checked untimed on the final parameters), and
``score_samples`` of the fitted models. Each operation is warmed up, then ours
and theirs are timed interleaved; the table shows medians and ours / theirs
(for the fit, the ratio of times per EM iteration).

Then small data with one BLAS thread (``threadpool_limits(1)`` around both
libraries, as inside joblib workers and ``GridSearchCV(n_jobs=...)``): a whole
``fit`` of ``GaussianMixture(3, random_state=0)`` on iris (150 x 4) for each
covariance type, k-means start and EM to convergence, where the per-call
overhead of Python, not arithmetic, decides. Both libraries reach the same
parameters (checked untimed); each timed run is a batch of fits, timed in the
thread's CPU seconds (all the work runs on it, so a shared machine's load
does not stretch one side's runs), and the table shows the median per fit.

Run from the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 \\
        python benchmarks/bench_mixture.py

``--quick`` (5,000 rows, 3 repeats) runs in seconds, for CI. ``--phases``
prints instead where a small fit's time goes, phase by phase (validation, the
k-means start, the first M-step, one E-step and one M-step of EM, under the
same parameters in both libraries), with the Python and C calls each phase
makes (counted by ``sys.setprofile``; numpy's ufuncs are not among them): a
diagnosis through both libraries' private methods, not a benchmark.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np
from numpy.testing import assert_allclose
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture as SkGM
from threadpoolctl import threadpool_limits

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

from _timing import (  # noqa: E402
    Result,
    add_json_option,
    compare,
    print_table,
    write_json,
)

import bayeskit  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--phases", action="store_true")
    parser.add_argument("--n-samples", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=None, help="default: 5")
    add_json_option(parser)
    args = parser.parse_args(argv)
    if args.phases:
        _phases(args.repeats or 51)
        return
    n = 5_000 if args.quick else args.n_samples
    repeats = args.repeats or (3 if args.quick else 5)
    k, d, iters = 8, 10, 20
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=4.0, size=(k, d))
    X = centres[rng.integers(0, k, n)] + rng.normal(size=(n, d))
    warnings.simplefilter("ignore", ConvergenceWarning)
    start = SkGM(k, random_state=0, max_iter=1).fit(X)
    init = {
        "weights_init": start.weights_,
        "means_init": start.means_,
        "precisions_init": start.precisions_,
    }
    ours = bayeskit.GaussianMixture(k, max_iter=iters, tol=0, **init)
    theirs = SkGM(k, max_iter=iters, tol=0, **init)
    ours.fit(X)
    theirs.fit(X)
    assert_allclose(ours.means_, theirs.means_, rtol=1e-6, atol=1e-8)
    print(
        f"{n} rows, {d} features, {k} components ('full'), {iters} EM iterations;"
        f" medians of {repeats} runs"
    )
    results = [
        compare(
            "GaussianMixture",
            "fit (20 it.)",
            lambda: ours.fit(X),
            lambda: theirs.fit(X),
            repeats,
            0.5,
        ),
        compare(
            "GaussianMixture",
            "score_samples",
            lambda: ours.score_samples(X),
            lambda: theirs.score_samples(X),
            repeats,
            0.5,
        ),
    ]
    sizes = [f"{n:,} x {d}, {k} components ('full')"] * len(results)
    # Small data, one thread: fixed costs per call and per iteration.
    batch = 3 if args.quick else 10
    small = _small_fits(3 * repeats if args.quick else 4 * repeats, batch)
    results += small
    sizes += ["iris 150 x 4, 3 components, 1 thread"] * len(small)
    print_table(results, peer="sklearn")
    if args.json:
        write_json(args.json, results, sizes, "sklearn")


def _small_fits(repeats, batch):
    """A whole fit on iris with one BLAS thread, for each covariance type:
    the median CPU seconds per fit of ``repeats`` interleaved runs of
    ``batch`` fits each (goal: no slower than scikit-learn)."""
    X = load_iris().data
    results = []
    with threadpool_limits(1):
        for cov in ("full", "tied", "diag", "spherical"):
            ours = bayeskit.GaussianMixture(3, covariance_type=cov, random_state=0)
            theirs = SkGM(3, covariance_type=cov, random_state=0)
            ours.fit(X)
            theirs.fit(X)
            assert_allclose(ours.means_, theirs.means_, rtol=1e-6, atol=1e-8)

            t_ours, t_theirs = _cpu_medians(
                lambda m=ours: m.fit(X), lambda m=theirs: m.fit(X), repeats, batch
            )
            results.append(
                Result(
                    "GaussianMixture",
                    f"fit ({cov}, 1 thread)",
                    t_ours,
                    t_theirs,
                    1.0,
                    repeats,
                )
            )
    return results


def _cpu_medians(ours, theirs, repeats, batch):
    """Median seconds per call of ``ours`` and ``theirs``, warmed up, timed
    interleaved in ``repeats`` runs of ``batch`` calls each, as ``compare``
    does, but in the thread's CPU seconds: with one BLAS thread all the work
    runs on it, and a shared machine's load then stretches neither side's
    runs."""
    times = {ours: [], theirs: []}
    for r in range(repeats + 1):
        for func in (ours, theirs) if r % 2 else (theirs, ours):
            start = time.thread_time()
            for _ in range(batch):
                func()
            times[func].append((time.thread_time() - start) / batch)
    return tuple(statistics.median(times[f][1:]) for f in (ours, theirs))


def _calls(func):
    """The Python and C functions one call of ``func`` calls."""
    count = [0]

    def profile(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1

    sys.setprofile(profile)
    try:
        func()
    finally:
        sys.setprofile(None)
    return count[0]


def _phases(repeats, inner=10):
    """Per-phase medians (CPU microseconds per call, ``inner`` calls a run)
    and call counts of a fit on iris with one BLAS thread, ours and
    scikit-learn's, from the same start."""
    print(f"iris, 3 components, 1 thread; medians of {repeats} interleaved runs")
    print(
        f"{'type':<10}{'phase':<16}{'x':>3}{'ours us':>9}{'sk us':>9}{'ratio':>7}"
        f"{'calls':>7}{'sk':>6}"
    )
    with threadpool_limits(1):
        for cov in ("full", "tied", "diag", "spherical"):
            for name, times, f, g in _phase_calls(cov):
                n = 1 if name in ("whole fit", "k-means start") else inner
                a, b = _cpu_medians(f, g, repeats, n)
                print(
                    f"{cov:<10}{name:<16}{times:>3}{a * 1e6:>9.1f}{b * 1e6:>9.1f}"
                    f"{a / b:>7.2f}{_calls(f):>7}{_calls(g):>6}"
                )
    print("(scikit-learn's fit runs one E-step more than EM's, for its labels)")


def _phase_calls(cov):
    """``(phase, calls per fit, ours, scikit-learn's)`` of a fit on iris."""
    from sklearn.cluster import KMeans
    from sklearn.utils import check_random_state
    from sklearn.utils.validation import validate_data

    from bayeskit.mixture._start import initial_responsibilities

    X = load_iris().data
    sw = np.ones(len(X))
    ours = bayeskit.GaussianMixture(3, covariance_type=cov, random_state=0).fit(X)
    theirs = SkGM(3, covariance_type=cov, random_state=0).fit(X)
    ours._start(X, sw)
    comps = ours._triple
    family, prior = comps.emission, comps.prior
    params = ours._current_params()
    shift = X[0].copy()
    data = (X, sw, X - shift, shift, True)
    stats = ours._expected_stats(data, params, comps)
    log_resp = theirs._e_step(X)[1]
    resp = initial_responsibilities("kmeans", X, sw, 3, check_random_state(0))

    def validate(est, sk=False):
        est._validate_params()
        if sk:
            kw = {"dtype": [np.float64, np.float32], "ensure_min_samples": 2}
            est._check_parameters(validate_data(est, X, **kw))
        else:
            est._prepare(X, None, reset=True)

    def first():
        ours._map(family.complete_stats(X, resp), prior, family, sw.sum())

    def k_means():
        initial_responsibilities("kmeans", X, sw, 3, check_random_state(0))

    it = ours.n_iter_
    return [
        ("whole fit", 1, lambda: ours.fit(X), lambda: theirs.fit(X)),
        ("validation", 1, lambda: validate(ours), lambda: validate(theirs, 1)),
        (
            "k-means start",
            1,
            k_means,
            lambda: KMeans(3, n_init=1, random_state=check_random_state(0)).fit(X),
        ),
        ("first M-step", 1, first, lambda: theirs._initialize(X, resp)),
        (
            "E-step",
            it,
            lambda: ours._expected_stats(data, params, comps),
            lambda: theirs._e_step(X),
        ),
        (
            "M-step",
            it,
            lambda: ours._params_from_stats(stats, params, comps),
            lambda: theirs._m_step(X, log_resp),
        ),
    ]


if __name__ == "__main__":
    main()
