"""Naive Bayes on word counts: bayeskit against scikit-learn, in one process.

Compares ``fit`` and ``predict_proba`` of ``MultinomialNB``, ``BernoulliNB``
and ``ComplementNB`` (default parameters on both sides) on synthetic word
counts in CSR: a Zipf-distributed vocabulary (word ``r`` drawn with
probability proportional to ``1 / r``) in which every class makes a random
2% of the words five times likelier, 130 words drawn per document (about 100
distinct words, the non-zero counts of its row). The default size is
200,000 documents x 50,000 words, 20 classes.

Before timing, the script checks (untimed) that the two libraries'
``predict_proba`` agree. Each operation is warmed up once, then ours and
theirs are timed interleaved; the table shows the medians and the ratio ours /
theirs (lower is better) against the goal. Peak memory is measured by
``tracemalloc`` (numpy's and scipy's arrays are traced) for one call of each
side, reported as rows ``fit [peak MB]`` / ``predict_proba [peak MB]`` whose
two columns are megabytes, not seconds, with the goal ratio 1 (never more than
scikit-learn).

Run from the repository root (see ``benchmarks/run.py`` for the environment)::

    python benchmarks/bench_text_nb.py

Add ``--quick`` (5,000 documents x 5,000 words, 3 repeats) for a run of a few
seconds, or set ``--n-samples``, ``--n-features`` and ``--repeats``; ``--check``
exits with status 1 when a ratio misses its goal.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys

import numba
import numpy as np
import scipy.sparse as sp
import sklearn
import sklearn.naive_bayes as sknb
from numpy.testing import assert_allclose

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

from _timing import (  # noqa: E402
    Result,
    add_json_option,
    compare,
    peak_mb,
    print_table,
    write_json,
)

import bayeskit  # noqa: E402

N_CLASSES = 20
WORDS_PER_DOC = 130
MODELS = ("MultinomialNB", "BernoulliNB", "ComplementNB")

# Goals: ratio ours / scikit-learn (time: median; memory: peak).
TIME_GOAL = 0.7
MEMORY_GOAL = 1.0


def zipf_counts(n: int, d: int, rng: np.random.Generator):
    """CSR word counts ``(n, d)`` and labels (see the module)."""
    y = rng.integers(N_CLASSES, size=n)
    base = 1.0 / np.arange(1, d + 1)
    rows, cols = [], []
    for c in range(N_CLASSES):
        docs = np.flatnonzero(y == c)
        p = base.copy()
        p[rng.choice(d, size=max(1, d // 50), replace=False)] *= 5.0
        cdf = np.cumsum(p / p.sum())
        words = np.searchsorted(cdf, rng.random(docs.size * WORDS_PER_DOC))
        rows.append(np.repeat(docs, WORDS_PER_DOC))
        cols.append(np.minimum(words, d - 1))
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    X = sp.csr_matrix(
        (np.ones(rows.size), (rows, cols)), shape=(n, d), dtype=np.float64
    )
    X.sum_duplicates()
    return X, y


def bench_model(name, X, y, repeats):
    ours, theirs = getattr(bayeskit, name)(), getattr(sknb, name)()
    ours.fit(X, y)
    theirs.fit(X, y)
    sample = X[: min(X.shape[0], 2000)]
    assert_allclose(
        ours.predict_proba(sample),
        theirs.predict_proba(sample),
        rtol=1e-8,
        atol=1e-12,
        err_msg=f"{name}: bayeskit and scikit-learn disagree",
    )
    results = [
        compare(
            name,
            "fit",
            lambda: ours.fit(X, y),
            lambda: theirs.fit(X, y),
            repeats,
            TIME_GOAL,
        ),
        compare(
            name,
            "predict_proba",
            lambda: ours.predict_proba(X),
            lambda: theirs.predict_proba(X),
            repeats,
            TIME_GOAL,
        ),
    ]
    calls = {
        "fit": (lambda: ours.fit(X, y), lambda: theirs.fit(X, y)),
        "predict_proba": (
            lambda: ours.predict_proba(X),
            lambda: theirs.predict_proba(X),
        ),
    }
    for operation, (a, b) in calls.items():
        mb = peak_mb(a), peak_mb(b)
        results.append(Result(name, f"{operation} [peak MB]", *mb, MEMORY_GOAL, 1))
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="5,000 x 5,000 and 3 repeats (for CI)"
    )
    parser.add_argument("--n-samples", type=int, default=None, help="documents")
    parser.add_argument("--n-features", type=int, default=None, help="vocabulary")
    parser.add_argument(
        "--repeats", type=int, default=None, help="timed repeats per operation"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--check", action="store_true", help="exit with 1 when a goal is missed"
    )
    add_json_option(parser)
    args = parser.parse_args(argv)
    n = args.n_samples or (5_000 if args.quick else 200_000)
    d = args.n_features or (5_000 if args.quick else 50_000)
    repeats = args.repeats or (3 if args.quick else 5)

    rng = np.random.default_rng(args.seed)
    X, y = zipf_counts(n, d, rng)
    print(
        f"bayeskit {bayeskit.__version__}, scikit-learn {sklearn.__version__}, "
        f"numpy {np.__version__}, numba {numba.__version__}, "
        f"Python {platform.python_version()}"
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"CPUs: {os.cpu_count()}; load average: {load}")
    print(
        f"CSR {n:,} x {d:,}, {X.nnz / n:.1f} non-zero counts per document, "
        f"{N_CLASSES} classes, repeats={repeats} (median)\n"
    )
    results = []
    for name in MODELS:
        results += bench_model(name, X, y, repeats)
    print_table(results, peer="sklearn")
    if args.json:
        sizes = f"CSR {n:,} x {d:,}, ~{X.nnz / n:.0f} nnz/row, {N_CLASSES} classes"
        write_json(args.json, results, sizes, "sklearn")
    missed = [r for r in results if r.met is False]
    if missed:
        print(
            "\ngoal missed: "
            + ", ".join(f"{r.model}.{r.operation} ({r.ratio:.3f})" for r in missed)
        )
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
