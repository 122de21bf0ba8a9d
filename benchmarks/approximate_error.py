"""Approximate inference's error: each method against the exact posterior, per network.

For every bundled network (asia, child, insurance, alarm) and, when pgmpy is
installed, hailfinder from its example models, the posterior marginal of every
unobserved variable by ``method="loopy"`` (damped loopy belief propagation at
its defaults) and ``method="sampling"`` (likelihood weighting until half the
sum of a variable's standard errors is 0.003, with the proposal of loopy belief
propagation: what ``method="auto"`` runs when
the junction tree does not fit) is compared with the exact one, in total
variation (half the L1 distance), on two workloads: no evidence, and
``--rows`` rows sampled from the network with ``--observed`` cells of each
kept (seed 0). The table gives the largest and the mean total variation over
the variables (and rows), and the seconds per row. Run from the repository
root::

    python benchmarks/approximate_error.py --rows 20 --observed 4
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

# Run from a checkout: measure this repository's bayeskit, installed or not.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from bayeskit.datasets import load_network  # noqa: E402


def _networks():
    for name in ("asia", "child", "insurance", "alarm"):
        yield name, load_network(name)
    try:
        from pgmpy.utils import get_example_model  # noqa: F401
    except ImportError:
        return
    import pgmpy

    from bayeskit.io import read_bif

    path = os.path.join(
        os.path.dirname(pgmpy.__file__), "utils", "example_models", "hailfinder.bif.gz"
    )
    if os.path.exists(path):
        yield "hailfinder", read_bif(path=path)


def _rows(bn, n_rows, n_observed, seed=0):
    rng = np.random.default_rng(seed)
    X = bn.sample(n_rows, random_state=seed).astype(object)
    for i in range(n_rows):
        hide = rng.choice(X.shape[1], X.shape[1] - n_observed, replace=False)
        X.iloc[i, hide] = None
    return X


def _tv(a: pd.DataFrame, b: pd.DataFrame, X: pd.DataFrame) -> np.ndarray:
    """Total variation per row and unobserved variable."""
    tv = 0.5 * (a - b).abs().T.groupby(level=0, sort=False).sum().T
    hidden = X[tv.columns].isna().to_numpy()
    return tv.to_numpy()[hidden]


def measure(n_rows: int, n_observed: int) -> list[dict]:
    out = []
    for name, bn in _networks():
        bn.set_params(random_state=0)
        for workload, X in (
            (
                "no evidence",
                pd.DataFrame([[None] * len(bn.variables_)], columns=bn.variables_),
            ),
            (f"{n_observed} observed", _rows(bn, n_rows, n_observed)),
        ):
            exact = bn.predict_proba(X, method="exact")
            for method in ("loopy", "sampling"):
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    approx = bn.predict_proba(X, method=method)
                seconds = (time.perf_counter() - start) / len(X)
                tv = _tv(approx, exact, X)
                out.append(
                    {
                        "network": name,
                        "evidence": workload,
                        "method": method,
                        "max TV": tv.max(),
                        "mean TV": tv.mean(),
                        "s per row": seconds,
                    }
                )
    return out


def rst(rows: list[dict]) -> str:
    header = ["network", "evidence", "method", "max TV", "mean TV", "s per row"]
    cells = [
        [
            r["network"],
            r["evidence"],
            r["method"],
            f"{r['max TV']:.4f}",
            f"{r['mean TV']:.5f}",
            f"{r['s per row']:.3f}",
        ]
        for r in rows
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(header)]
    rule = " ".join("=" * w for w in widths)
    line = lambda cs: " ".join(c.ljust(w) for c, w in zip(cs, widths))  # noqa: E731
    return "\n".join([rule, line(header), rule, *map(line, cells), rule])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20)
    parser.add_argument("--observed", type=int, default=4)
    args = parser.parse_args(argv)
    print(rst(measure(args.rows, args.observed)))


if __name__ == "__main__":
    main()
