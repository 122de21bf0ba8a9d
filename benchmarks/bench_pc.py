"""The PC algorithm: bayeskit's PC against pgmpy's, as a time ratio.

Both learn the partially directed graph by the PC algorithm (stable variant,
Pearson's chi-square at 0.01, conditioning sets of up to 3 variables) from the
same rows sampled from the ALARM and CHILD networks (``bayeskit.datasets``):
``PC(max_cond_vars=3).fit`` (which also fits the CPTs of a DAG of the result)
against pgmpy's ``causal_discovery.PC(variant="stable", ci_test="chi_square",
max_cond_vars=3, return_type="pdag").fit`` (one process, as the stable variant
runs in pgmpy). The two answers are checked equal (skeleton and separating
sets), and the goal is at most 0.5 of pgmpy's time.

The two are timed interleaved (median of the repeats) after one warm-up run
each. Run from the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 \\
        python benchmarks/bench_pc.py

``--quick`` (2,000 rows, 1 repeat, no warm-up) runs in seconds; ``--check``
exits with status 1 when the goal is missed.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import warnings

import numpy as np

# Run from a checkout: benchmark this repository's bayeskit, installed or not.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

from _timing import add_json_option, compare, print_table, write_json  # noqa: E402

import bayeskit  # noqa: E402
from bayeskit import PC  # noqa: E402
from bayeskit.datasets import load_network  # noqa: E402

# pgmpy warns about its own deprecations on import and on some calls.
warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", category=DeprecationWarning)

import pgmpy  # noqa: E402
from pgmpy.causal_discovery import PC as PgmpyPC  # noqa: E402

GOAL = 0.5


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="2,000 rows, 1 repeat (for CI)"
    )
    parser.add_argument("--n-samples", type=int, default=None, help="rows")
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--check", action="store_true", help="exit with 1 when the goal is missed"
    )
    add_json_option(parser)
    args = parser.parse_args(argv)
    n = args.n_samples or (2_000 if args.quick else 10_000)
    repeats = args.repeats or (1 if args.quick else 3)

    print(
        f"bayeskit {bayeskit.__version__}, pgmpy {pgmpy.__version__}, "
        f"numpy {np.__version__}, Python {platform.python_version()}"
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"CPUs: {os.cpu_count()}; load average: {load}")
    print(f"{n:,} rows; chi-square at 0.01, max_cond_vars=3; repeats={repeats}\n")
    results = []
    for name in ("child", "alarm"):
        df = load_network(name).sample(n, random_state=args.seed)
        df = df.loc[:, df.nunique() > 1]
        found = {}

        def ours(df=df, found=found):
            found["ours"] = PC(max_cond_vars=3).fit(df)

        def theirs(df=df, found=found):
            found["theirs"] = PgmpyPC(
                variant="stable",
                ci_test="chi_square",
                max_cond_vars=3,
                return_type="pdag",
                show_progress=False,
            ).fit(df)

        results.append(
            compare(
                f"{name.upper()} {n}",
                "PC stable",
                ours,
                theirs,
                repeats,
                GOAL,
                warmup=0 if args.quick else 1,
            )
        )
        pc, est = found["ours"], found["theirs"]
        same = pc.separating_sets_ == {
            k: tuple(v) for k, v in est.separating_sets_.items()
        } and {frozenset(e) for e in pc.directed_edges_ + pc.undirected_edges_} == {
            frozenset(e) for e in est.skeleton_.edges()
        }
        print(f"{name}: skeleton and separating sets equal pgmpy's: {same}")
        if not same:
            return 1
    print()
    print_table(results, "pgmpy")
    if args.json:
        write_json(args.json, results, f"{n:,} rows, max_cond_vars=3", "pgmpy")
    if args.check and not all(r.met for r in results):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
