"""EM with missing cells: time per iteration against the complete-data iteration.

``GaussianMixture(8, covariance_type='full')`` on 200,000 rows of 10 features,
a few EM iterations from the same initial parameters, once on the complete
data and once with 30% of the cells hidden at random (NaN, missing at random:
nearly every one of the 1,024 patterns of missing cells occurs). The E-step
with missing cells takes the marginal density of every row's observed cells
and the conditional moments of its missing ones, batched by pattern
(Ghahramani and Jordan 1994). Each fit is warmed up, then the two are timed
interleaved; the table shows medians and the ratio of times per iteration
(the "peer" column is the complete-data fit). The goal is 3 for the fit;
``score_samples`` (the marginal densities alone) is shown without one.
The compiled passes are timed: the numpy passes that run while they are not
compiled (first use in a fresh environment) are ``bench_first_use.py``'s.

Run from the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 \\
        python benchmarks/bench_missing.py

``--quick`` (5,000 rows, 3 repeats) runs in seconds, for CI.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

from _timing import add_json_option, compare, print_table, write_json  # noqa: E402

import bayeskit  # noqa: E402
from bayeskit import _jit  # noqa: E402

# The compiled passes, compiled by the warm-up (see the module).
_jit._NUMPY_BUDGET = 0.0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n-samples", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=None, help="default: 5")
    parser.add_argument("--missing", type=float, default=0.3)
    add_json_option(parser)
    args = parser.parse_args(argv)
    n = 5_000 if args.quick else args.n_samples
    repeats = args.repeats or (3 if args.quick else 5)
    k, d, iters = 8, 10, 5
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=4.0, size=(k, d))
    X = centres[rng.integers(0, k, n)] + rng.normal(size=(n, d))
    holes = X.copy()
    holes[rng.random(X.shape) < args.missing] = np.nan
    warnings.simplefilter("ignore", ConvergenceWarning)
    start = bayeskit.GaussianMixture(k, random_state=0, max_iter=1).fit(X)
    init = {
        "weights_init": start.weights_,
        "means_init": start.means_,
        "precisions_init": start.precisions_,
    }
    with_holes = bayeskit.GaussianMixture(k, max_iter=iters, tol=0, **init)
    complete = bayeskit.GaussianMixture(k, max_iter=iters, tol=0, **init)
    patterns = len(np.unique(np.isnan(holes), axis=0))
    print(
        f"{n} rows, {d} features, {k} components ('full'), {iters} EM iterations, "
        f"{args.missing:.0%} of cells missing ({patterns} patterns); medians of "
        f"{repeats} runs; the peer is the same fit on the complete data"
    )
    results = [
        compare(
            "GaussianMixture",
            "fit, NaN cells",
            lambda: with_holes.fit(holes),
            lambda: complete.fit(X),
            repeats,
            3.0,
        ),
        compare(
            "GaussianMixture",
            "score_samples",
            lambda: with_holes.score_samples(holes),
            lambda: complete.score_samples(X),
            repeats,
        ),
    ]
    print_table(results, peer="complete")
    if args.json:
        sizes = f"{n:,} x {d}, {k} components ('full'), {args.missing:.0%} NaN"
        write_json(args.json, results, sizes, "complete data")


if __name__ == "__main__":
    main()
