"""Naive Bayes: bayeskit against scikit-learn, in one process, as time ratios.

Compares ``fit`` and ``predict_proba`` of

- ``bayeskit.GaussianNB()`` and ``sklearn.naive_bayes.GaussianNB()`` on float64
  data with class-dependent means, and
- ``bayeskit.CategoricalNB(m=10)`` and ``sklearn.naive_bayes.CategoricalNB(alpha=1)``
  on integer codes ``0 .. 9`` with class-dependent category frequencies (with
  uniform ``p``, ``m = t_j = 10`` is the same smoothing as ``alpha=1``),

both with 20 features and 5 classes (1,000,000 rows by default). Before timing,
the script checks (untimed) that the two libraries' ``predict_proba`` agree, so
that the comparison is between equal computations. Each operation is warmed up
once, then ours and theirs are timed interleaved; the table shows the medians
and the ratio ours / theirs (lower is better) against bayeskit's goal.

Run from the repository root (the malloc settings keep freed memory in the
process, so that page faults of fresh allocations do not dominate the timings
of a shared machine; compare ratios, not seconds)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 \\
        python benchmarks/bench_naive_bayes.py

Add ``--quick`` (20,000 rows, 3 repeats) for a run of a few seconds in CI, or
set ``--n-samples`` and ``--repeats``; ``--check`` exits with status 1 when a
ratio misses its goal.

bayeskit's naive Bayes kernels (numba, compiled on first use and cached) run on
the calling thread, so no thread-pool setting (``OMP_WAIT_POLICY``,
``NUMBA_NUM_THREADS``) changes its side of the comparison; the warm-up call
keeps compilation out of the timings.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys

import numba
import numpy as np
import sklearn
import sklearn.naive_bayes as sknb
from numpy.testing import assert_allclose

# Run from a checkout: benchmark this repository's bayeskit, installed or not.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

from _timing import add_json_option, compare, print_table, write_json  # noqa: E402

import bayeskit  # noqa: E402

N_FEATURES = 20
N_CLASSES = 5
N_CATEGORIES = 10

# Goals: ratio ours / scikit-learn, median time.
GOALS = {
    ("GaussianNB", "fit"): 0.5,
    ("GaussianNB", "predict_proba"): 0.25,
    ("CategoricalNB", "fit"): 0.5,
    ("CategoricalNB", "predict_proba"): 0.5,
}


def gaussian_data(n: int, rng: np.random.Generator):
    """Float64 features whose means depend on the class."""
    y = rng.integers(N_CLASSES, size=n)
    means = rng.normal(0.0, 1.0, size=(N_CLASSES, N_FEATURES))
    scales = rng.uniform(0.5, 2.0, size=(N_CLASSES, N_FEATURES))
    X = rng.standard_normal((n, N_FEATURES)) * scales[y] + means[y]
    return X, y


def categorical_data(n: int, rng: np.random.Generator):
    """Integer codes ``0 .. N_CATEGORIES - 1`` with class-dependent frequencies."""
    y = rng.integers(N_CLASSES, size=n)
    X = np.empty((n, N_FEATURES), dtype=np.int64)
    probs = rng.dirichlet(np.full(N_CATEGORIES, 2.0), size=(N_CLASSES, N_FEATURES))
    for c in range(N_CLASSES):
        rows = np.flatnonzero(y == c)
        for j in range(N_FEATURES):
            X[rows, j] = rng.choice(N_CATEGORIES, size=rows.size, p=probs[c, j])
    for j in range(N_FEATURES):
        # Both libraries infer the categories from fit; they must see them all.
        assert np.unique(X[:, j]).size == N_CATEGORIES, "a category is never drawn"
    return X, y


def check_agreement(ours, theirs, X, y, name: str) -> None:
    """Untimed: the two fitted models give the same posterior."""
    ours.fit(X, y)
    theirs.fit(X, y)
    assert_allclose(ours.classes_, theirs.classes_)
    assert_allclose(
        ours.predict_proba(X),
        theirs.predict_proba(X),
        rtol=1e-8,
        atol=1e-14,
        err_msg=f"{name}: bayeskit and scikit-learn disagree",
    )


def bench_model(name, ours, theirs, X, y, repeats):
    check_agreement(ours, theirs, X, y, name)
    results = [
        compare(
            name,
            "fit",
            lambda: ours.fit(X, y),
            lambda: theirs.fit(X, y),
            repeats,
            GOALS[name, "fit"],
        )
    ]
    ours.fit(X, y)
    theirs.fit(X, y)
    results.append(
        compare(
            name,
            "predict_proba",
            lambda: ours.predict_proba(X),
            lambda: theirs.predict_proba(X),
            repeats,
            GOALS[name, "predict_proba"],
        )
    )
    return results


def blas_info() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown"
    pools = [
        f"{p['internal_api']} ({p['num_threads']} threads)"
        for p in threadpool_info()
        if p.get("user_api") == "blas"
    ]
    return ", ".join(pools) or "none"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="20,000 rows and 3 repeats (for CI)"
    )
    parser.add_argument("--n-samples", type=int, default=None, help="rows of X")
    parser.add_argument(
        "--repeats", type=int, default=None, help="timed repeats per operation"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--check", action="store_true", help="exit with 1 when a goal is missed"
    )
    add_json_option(parser)
    args = parser.parse_args(argv)
    n = args.n_samples or (20_000 if args.quick else 1_000_000)
    repeats = args.repeats or (3 if args.quick else 5)

    print(
        f"bayeskit {bayeskit.__version__}, scikit-learn {sklearn.__version__}, "
        f"numpy {np.__version__}, numba {numba.__version__} (bayeskit's naive "
        f"Bayes kernels: one thread), Python {platform.python_version()}"
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"BLAS: {blas_info()}; CPUs: {os.cpu_count()}; load average: {load}")
    print(
        f"n_samples={n}, n_features={N_FEATURES}, n_classes={N_CLASSES}, "
        f"repeats={repeats} (median)\n"
    )

    rng = np.random.default_rng(args.seed)
    results = []
    X, y = gaussian_data(n, rng)
    results += bench_model(
        "GaussianNB", bayeskit.GaussianNB(), sknb.GaussianNB(), X, y, repeats
    )
    X, y = categorical_data(n, rng)
    results += bench_model(
        "CategoricalNB",
        bayeskit.CategoricalNB(m=float(N_CATEGORIES)),
        sknb.CategoricalNB(alpha=1.0),
        X,
        y,
        repeats,
    )
    del X, y

    print_table(results, peer="sklearn")
    if args.json:
        shape = f"{n:,} x {N_FEATURES}"
        sizes = {
            "GaussianNB": f"{shape}, {N_CLASSES} classes",
            "CategoricalNB": f"{shape} ({N_CATEGORIES} categories), "
            f"{N_CLASSES} classes",
        }
        write_json(args.json, results, [sizes[r.model] for r in results], "sklearn")
    missed = [r for r in results if r.met is False]
    if missed:
        print(
            "\ngoal missed: "
            + ", ".join(f"{r.model}.{r.operation} ({r.ratio:.3f})" for r in missed)
        )
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
