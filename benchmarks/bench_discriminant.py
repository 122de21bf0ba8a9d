"""LDA and QDA: bayeskit against scikit-learn, in one process, as time ratios.

Compares ``fit`` and ``predict_proba`` of bayeskit's and scikit-learn's
``LinearDiscriminantAnalysis`` (solvers 'svd' and 'lsqr') and
``QuadraticDiscriminantAnalysis`` on float64 data with 50 features and 5
classes (1,000,000 rows by default), after an untimed check that the two
libraries' ``predict_proba`` agree. Each operation is warmed up, then ours and
theirs are timed interleaved; the table shows medians and ours / theirs.

Run from the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 \\
        python benchmarks/bench_discriminant.py

``--quick`` (20,000 rows, 3 repeats) runs in seconds, for CI.
``--separation`` scales the distances between the class means (1 by
default; 0.3 gives classes that overlap, whose posteriors are not all
saturated at 0 and 1).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from numpy.testing import assert_allclose
from sklearn import discriminant_analysis as skda

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

from _timing import add_json_option, compare, print_table, write_json  # noqa: E402

import bayeskit  # noqa: E402

GOALS = {
    ("LDA svd", "fit"): 1.0,
    ("LDA svd", "predict_proba"): 1.0,
    ("LDA lsqr", "fit"): 1.0,
    ("LDA lsqr", "predict_proba"): 1.0,
    ("QDA", "fit"): 1.0,
    ("QDA", "predict_proba"): 0.5,
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n-samples", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=None, help="default: 5")
    parser.add_argument(
        "--separation",
        type=float,
        default=1.0,
        help="scale of the distances between the class means (default: 1)",
    )
    add_json_option(parser)
    args = parser.parse_args(argv)
    n = 20_000 if args.quick else args.n_samples
    repeats = args.repeats or (3 if args.quick else 5)
    rng = np.random.default_rng(0)
    d, k = 50, 5
    y = rng.integers(0, k, n)
    mixing = np.eye(d) + 0.3 * rng.normal(size=(d, d)) / np.sqrt(d)
    X = rng.normal(size=(n, d)) @ mixing
    X += args.separation * rng.normal(size=(k, d))[y]
    print(
        f"{n} rows, {d} features, {k} classes (separation {args.separation:g}); "
        f"medians of {repeats} runs"
    )
    pairs = [
        (
            "LDA svd",
            bayeskit.LinearDiscriminantAnalysis(),
            skda.LinearDiscriminantAnalysis(),
        ),
        (
            "LDA lsqr",
            bayeskit.LinearDiscriminantAnalysis(solver="lsqr"),
            skda.LinearDiscriminantAnalysis(solver="lsqr"),
        ),
        (
            "QDA",
            bayeskit.QuadraticDiscriminantAnalysis(),
            skda.QuadraticDiscriminantAnalysis(),
        ),
    ]
    results = []
    for name, ours, theirs in pairs:
        ours.fit(X, y)
        theirs.fit(X, y)
        assert_allclose(
            ours.predict_proba(X[:2000]), theirs.predict_proba(X[:2000]), atol=1e-8
        )
        results.append(
            compare(
                name,
                "fit",
                lambda o=ours: o.fit(X, y),
                lambda t=theirs: t.fit(X, y),
                repeats,
                GOALS[name, "fit"],
            )
        )
        results.append(
            compare(
                name,
                "predict_proba",
                lambda o=ours: o.predict_proba(X),
                lambda t=theirs: t.predict_proba(X),
                repeats,
                GOALS[name, "predict_proba"],
            )
        )
    print_table(results, peer="sklearn")
    if args.json:
        sizes = f"{n:,} x {d}, {k} classes, separation {args.separation:g}"
        write_json(args.json, results, sizes, "sklearn")


if __name__ == "__main__":
    main()
