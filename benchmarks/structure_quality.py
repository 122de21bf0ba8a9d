"""Structure learning quality: bayeskit's HillClimbSearch against pgmpy's, by score.

On ``--samples`` samples of 1,000 rows of each bundled network (asia, child,
insurance, alarm; ``bayeskit.datasets.load_network(name).sample(1000,
random_state=seed)`` for seeds ``0 .. samples - 1``), both learn a DAG by hill
climbing on BIC with pgmpy's settings (empty start, tabu list of 100 moves, no
in-degree limit, epsilon 1e-4): ``HillClimbSearch("bic-d")`` (its defaults:
ties broken in both column orders, ``max_tabu=10``) and, for comparison,
``max_tabu=0`` (greedy search, ties in both orders), against pgmpy's
``HillClimbSearch(df).estimate(scoring_method="bic-d")``. Both graphs are
scored by ``bayeskit.score_structure`` (equal to pgmpy's ``BIC``); the table
counts, per network, the samples where ours is higher (win), equal within
1e-6 (tie) or lower (loss), and the smallest difference.

pgmpy breaks ties between equally good moves by the order of a Python set,
which depends on ``PYTHONHASHSEED``: set it for a reproducible table. pgmpy
takes seconds to minutes per search; the default of 20 samples per network
runs for a long while (``--samples 3`` for a quick look). Run from the
repository root::

    PYTHONHASHSEED=0 python benchmarks/structure_quality.py --samples 20

``--check`` exits with status 1 when ours loses on any sample.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

# Run from a checkout: benchmark this repository's bayeskit, installed or not.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

from bayeskit import HillClimbSearch, score_structure  # noqa: E402
from bayeskit.datasets import load_network  # noqa: E402

warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", category=DeprecationWarning)

from pgmpy.estimators import HillClimbSearch as PgmpyHillClimb  # noqa: E402

NETWORKS = ["asia", "child", "insurance", "alarm"]
VARIANTS = {"default": {}, "max_tabu=0": {"max_tabu": 0}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=20, help="samples per network")
    parser.add_argument("--networks", default=",".join(NETWORKS))
    parser.add_argument(
        "--check", action="store_true", help="exit with 1 when ours loses once"
    )
    args = parser.parse_args(argv)
    print(f"PYTHONHASHSEED={os.environ.get('PYTHONHASHSEED', 'random')}")
    table = {}
    for name in args.networks.split(","):
        network = load_network(name)
        for seed in range(args.samples):
            df = network.sample(1000, random_state=seed)
            start = time.perf_counter()
            dag = PgmpyHillClimb(df).estimate(
                scoring_method="bic-d", show_progress=False
            )
            their_time = time.perf_counter() - start
            theirs = score_structure(df, [tuple(e) for e in dag.edges()])
            line = [f"{name} {seed:2d}: pgmpy {theirs:.1f} ({their_time:.1f} s)"]
            for label, kw in VARIANTS.items():
                start = time.perf_counter()
                ours = HillClimbSearch("bic-d", **kw).fit(df).score_
                our_time = time.perf_counter() - start
                diff = ours - theirs
                cell = table.setdefault((name, label), [0, 0, 0, float("inf")])
                cell[0 if diff > 1e-6 else 1 if diff > -1e-6 else 2] += 1
                cell[3] = min(cell[3], diff)
                line.append(f"{label} {diff:+.1f} ({our_time:.2f} s)")
            print("; ".join(line), flush=True)
    print(
        f"\n{'network':<10} {'variant':<11} {'win':>4} {'tie':>4} {'loss':>5} "
        f"{'worst':>8}"
    )
    losses = 0
    for (name, label), (win, tie, loss, worst) in table.items():
        print(f"{name:<10} {label:<11} {win:>4} {tie:>4} {loss:>5} {worst:>+8.1f}")
        losses += loss if label == "default" else 0
    return 1 if args.check and losses else 0


if __name__ == "__main__":
    sys.exit(main())
