"""Structure learning: bayeskit's HillClimbSearch against pgmpy's, as a time ratio.

Both learn a DAG by hill climbing on the BIC score from the same rows sampled
from the ALARM network (37 variables, 46 edges; ``bayeskit.datasets``), with
pgmpy's default settings on both sides (start from the empty graph, tabu list
of 100 moves, no in-degree limit, epsilon 1e-4): ``HillClimbSearch("bic").fit``
(which also fits the CPTs of the learnt network) against pgmpy's
``HillClimbSearch(data).estimate(scoring_method="bic-d")`` (the structure
only). The two searches take the same moves but break exact ties (an edge
against its reversal, which BIC scores alike) differently, so they may stop at
different local optima: both scores are printed (each evaluated by pgmpy's
``BIC`` and by ``bayeskit.score_structure``, which agree), and the goal is at
most 0.1 of pgmpy's time with a score at least as good.

The two are timed interleaved (median of the repeats) after one warm-up run
each. Run from the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 \\
        python benchmarks/bench_structure.py

pgmpy takes several seconds per search at 10,000 rows: the default is 3
repeats. ``--quick`` (2,000 rows, 1 repeat, no warm-up) runs in seconds;
``--check`` exits with status 1 when the goal is missed or our score is lower.
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
from bayeskit import HillClimbSearch, score_structure  # noqa: E402
from bayeskit.datasets import load_network  # noqa: E402

# pgmpy warns about its own deprecations on import and on some calls.
warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", category=DeprecationWarning)

import pgmpy  # noqa: E402
from pgmpy.estimators import BIC  # noqa: E402
from pgmpy.estimators import HillClimbSearch as PgmpyHillClimb  # noqa: E402
from pgmpy.models import DiscreteBayesianNetwork  # noqa: E402

GOAL = 0.1


def pgmpy_score(df, edges) -> float:
    model = DiscreteBayesianNetwork(edges)
    model.add_nodes_from(df.columns)
    return BIC(df).score(model)


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
    alarm = load_network("alarm")
    df = alarm.sample(n, random_state=args.seed)
    print(f"ALARM: {df.shape[1]} variables, {n:,} rows; BIC; repeats={repeats}\n")

    found = {}

    def ours():
        found["ours"] = HillClimbSearch("bic").fit(df)

    def theirs():
        dag = PgmpyHillClimb(df).estimate(scoring_method="bic-d", show_progress=False)
        found["theirs"] = [tuple(e) for e in dag.edges()]

    result = compare(
        f"ALARM {n} rows",
        "hill climb",
        ours,
        theirs,
        repeats,
        GOAL,
        warmup=0 if args.quick else 1,
    )
    hc, their_edges = found["ours"], found["theirs"]
    ours_score = pgmpy_score(df, hc.edges_)
    theirs_score = pgmpy_score(df, their_edges)
    np.testing.assert_allclose(hc.score_, ours_score, rtol=1e-8)
    np.testing.assert_allclose(
        score_structure(df, their_edges), theirs_score, rtol=1e-8
    )
    true = {frozenset(e) for e in alarm.dag_.edges}
    for who, edges, score in (
        ("bayeskit", hc.edges_, ours_score),
        ("pgmpy", their_edges, theirs_score),
    ):
        skeleton = {frozenset(e) for e in edges}
        hit = len(skeleton & true)
        print(
            f"{who:<9} BIC {score:.3f}; {len(edges)} edges, skeleton precision "
            f"{hit / max(len(skeleton), 1):.2f}, recall {hit / len(true):.2f}"
        )
    better = ours_score >= theirs_score - 1e-8 * abs(theirs_score)
    print(f"score ours - theirs: {ours_score - theirs_score:+.3f}\n")
    print_table([result], "pgmpy")
    if args.json:
        sizes = (
            f"ALARM, {n:,} rows, BIC (ours {ours_score:.1f}, pgmpy {theirs_score:.1f})"
        )
        write_json(args.json, [result], sizes, "pgmpy")
    if args.check and (not result.met or not better):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
