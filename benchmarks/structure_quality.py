"""Structure learning quality: bayeskit's HillClimbSearch against pgmpy's, by score.

On ``--samples`` samples of 1,000 rows of each bundled network (asia, child,
insurance, alarm; ``bayeskit.datasets.load_network(name).sample(1000,
random_state=seed)`` for seeds ``0 .. samples - 1``), both learn a DAG by hill
climbing on BIC with pgmpy's settings (empty start, tabu list of 100 moves, no
in-degree limit, epsilon 1e-4): ``HillClimbSearch("bic-d")`` (its defaults:
ties broken in both column orders, ``max_tabu=10``) and ``n_restarts=20,
random_state=0`` (20 perturbed restarts after it), against pgmpy's
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

``--pgmpy-cache PATH`` keeps pgmpy's graphs and scores in a JSON file: the
first run writes them, later runs read them and run only ours (the cache is
valid for the ``PYTHONHASHSEED`` it was made with, which it records; the
cache keeps pgmpy's edges, and its times as measured when it was written).
``--docstring`` adds pgmpy's docstring case (alarm read by pgmpy's
``BIFReader`` from the bundled file, ``simulate(1000, seed=42)``).
``--check`` exits with status 1 when ours loses on any sample.
"""

from __future__ import annotations

import argparse
import json
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
VARIANTS = {"default": {}, "n_restarts=20": {"n_restarts": 20, "random_state": 0}}


def docstring_frame():
    """pgmpy's docstring case: alarm, 1,000 rows simulated with seed 42."""
    from pgmpy.readwrite import BIFReader

    path = os.path.join(os.path.dirname(_HERE), "bayeskit", "datasets", "data")
    model = BIFReader(os.path.join(path, "alarm.bif")).get_model()
    return model.simulate(1000, seed=42, show_progress=False)


def pgmpy_result(df, cache: dict, key: str) -> tuple[float, float]:
    """pgmpy's score (by ``score_structure``) and time on ``df``, from the
    cache when it holds ``key``."""
    if key not in cache:
        start = time.perf_counter()
        dag = PgmpyHillClimb(df).estimate(scoring_method="bic-d", show_progress=False)
        seconds = time.perf_counter() - start
        edges = [[str(a), str(b)] for a, b in dag.edges()]
        cache[key] = {"edges": edges, "seconds": seconds}
    entry = cache[key]
    return score_structure(df, [tuple(e) for e in entry["edges"]]), entry["seconds"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=20, help="samples per network")
    parser.add_argument("--networks", default=",".join(NETWORKS))
    parser.add_argument(
        "--check", action="store_true", help="exit with 1 when ours loses once"
    )
    parser.add_argument(
        "--pgmpy-cache", default=None, help="JSON file of pgmpy's graphs (read/write)"
    )
    parser.add_argument(
        "--docstring", action="store_true", help="add pgmpy's docstring case"
    )
    args = parser.parse_args(argv)
    hashseed = os.environ.get("PYTHONHASHSEED", "random")
    print(f"PYTHONHASHSEED={hashseed}")
    cache = {}
    if args.pgmpy_cache and os.path.exists(args.pgmpy_cache):
        with open(args.pgmpy_cache) as f:
            cache = json.load(f)
        if cache.get("PYTHONHASHSEED") != hashseed:
            print(f"cache made with PYTHONHASHSEED={cache.get('PYTHONHASHSEED')}")
    cache["PYTHONHASHSEED"] = cache.get("PYTHONHASHSEED", hashseed)
    cases = []
    if args.docstring:
        cases.append(("docstring", 42, docstring_frame))
    for name in args.networks.split(","):
        network = load_network(name)
        for seed in range(args.samples):
            cases.append(
                (name, seed, lambda n=network, s=seed: n.sample(1000, random_state=s))
            )
    table = {}
    for name, seed, make in cases:
        df = make()
        theirs, their_time = pgmpy_result(df, cache, f"{name}:{seed}")
        if args.pgmpy_cache:
            with open(args.pgmpy_cache, "w") as f:
                json.dump(cache, f)
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
