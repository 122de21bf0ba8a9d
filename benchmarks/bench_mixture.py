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
parameters (checked untimed); each timed run is a batch of fits, and the table
shows the median seconds per fit.

Run from the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 \\
        python benchmarks/bench_mixture.py

``--quick`` (5,000 rows, 3 repeats) runs in seconds, for CI.
"""

from __future__ import annotations

import argparse
import os
import sys
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
    parser.add_argument("--n-samples", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=None, help="default: 5")
    add_json_option(parser)
    args = parser.parse_args(argv)
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
    small = _small_fits(repeats if args.quick else 4 * repeats, batch)
    results += small
    sizes += ["iris 150 x 4, 3 components, 1 thread"] * len(small)
    print_table(results, peer="sklearn")
    if args.json:
        write_json(args.json, results, sizes, "sklearn")


def _small_fits(repeats, batch):
    """A whole fit on iris with one BLAS thread, for each covariance type:
    the median seconds per fit of ``repeats`` interleaved runs of ``batch``
    fits each (goal: no slower than scikit-learn)."""
    X = load_iris().data
    results = []
    with threadpool_limits(1):
        for cov in ("full", "tied", "diag", "spherical"):
            ours = bayeskit.GaussianMixture(3, covariance_type=cov, random_state=0)
            theirs = SkGM(3, covariance_type=cov, random_state=0)
            ours.fit(X)
            theirs.fit(X)
            assert_allclose(ours.means_, theirs.means_, rtol=1e-6, atol=1e-8)

            def fits(model):
                return lambda: [model.fit(X) for _ in range(batch)]

            r = compare(
                "GaussianMixture",
                f"fit ({cov}, 1 thread)",
                fits(ours),
                fits(theirs),
                repeats,
                1.0,
            )
            results.append(
                Result(
                    r.model,
                    r.operation,
                    r.ours / batch,
                    r.theirs / batch,
                    r.goal,
                    r.repeats,
                )
            )
    return results


if __name__ == "__main__":
    main()
