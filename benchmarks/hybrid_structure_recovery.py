"""Structure recovery on mixed data: HillClimbSearch with the conditional
linear Gaussian BIC on samples of a simulated hybrid network.

The network has three discrete nodes and four continuous ones::

    a -> b,  b -> x,  x -> y,  c -> y,  y -> z,  a -> u,  z -> u

(``a``, ``b`` binary, ``c`` ternary; ``x``, ``y``, ``z``, ``u`` Gaussian, their
means shifted by their discrete parents and linear in their continuous ones).
For each sample size, ``--seeds`` samples are drawn, ``HillClimbSearch(
continuous="float")`` learns a DAG, and the table gives the mean precision and
recall of its skeleton (edges without direction) against the true one, and
the share of true edges found in their true direction. Run from the
repository root::

    python benchmarks/hybrid_structure_recovery.py --seeds 20
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bayeskit import HillClimbSearch

TRUE_EDGES = [
    ("a", "b"),
    ("b", "x"),
    ("x", "y"),
    ("c", "y"),
    ("y", "z"),
    ("a", "u"),
    ("z", "u"),
]


def sample(seed: int, n: int) -> pd.DataFrame:
    """``n`` rows of the network above."""
    rng = np.random.default_rng(seed)
    a = rng.choice(["a0", "a1"], size=n, p=[0.4, 0.6])
    b = np.where(
        a == "a0",
        rng.choice(["b0", "b1"], size=n, p=[0.85, 0.15]),
        rng.choice(["b0", "b1"], size=n, p=[0.2, 0.8]),
    )
    c = rng.choice(["c0", "c1", "c2"], size=n)
    x = np.where(b == "b0", -1.0, 1.0) + rng.normal(size=n)
    shift = pd.Series(c).map({"c0": 0.0, "c1": 2.0, "c2": -2.0}).to_numpy()
    y = 1.5 * x + shift + rng.normal(size=n)
    z = -y + rng.normal(size=n)
    u = np.where(a == "a0", 0.5, -0.5) + 0.8 * z + rng.normal(size=n)
    return pd.DataFrame({"a": a, "b": b, "c": c, "x": x, "y": y, "z": z, "u": u})


def recovery(edges: list) -> tuple[float, float, float]:
    """Skeleton precision and recall, and the share of true edges found in
    their direction."""
    truth = {frozenset(e) for e in TRUE_EDGES}
    found = {frozenset(e) for e in edges}
    hit = len(truth & found)
    precision = hit / len(found) if found else 1.0
    directed = len(set(TRUE_EDGES) & set(edges)) / len(TRUE_EDGES)
    return precision, hit / len(truth), directed


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 500, 2000, 10000])
    args = parser.parse_args(argv)
    print(f"{'rows':>6} {'precision':>9} {'recall':>6} {'directed':>8} {'s/fit':>6}")
    for n in args.sizes:
        rows, times = [], []
        for seed in range(args.seeds):
            df = sample(seed, n)
            start = time.perf_counter()
            hc = HillClimbSearch(continuous="float").fit(df)
            times.append(time.perf_counter() - start)
            rows.append(recovery(hc.edges_))
        p, r, d = np.mean(rows, axis=0)
        print(f"{n:>6} {p:>9.3f} {r:>6.3f} {d:>8.3f} {np.median(times):>6.2f}")


if __name__ == "__main__":
    main()
