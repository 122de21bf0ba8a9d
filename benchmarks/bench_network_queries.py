"""Reading a network file and querying it: bayeskit against pgmpy, as time ratios.

Both read the ALARM network (37 variables, 509 free parameters) from the BIF
file bundled with ``bayeskit.datasets`` and answer the same random queries:
each the posterior marginal of one variable given 1-4 other variables
observed at the states of a row sampled from the network (so the evidence
never has probability zero). Ours is :func:`bayeskit.io.read_bif` and
:meth:`~bayeskit.BayesianNetwork.query`; pgmpy's is ``BIFReader(path).
get_model()`` and ``VariableElimination(model).query``. Before timing, the
script checks (untimed) that the two give the same posteriors to 1e-6 (the
file's rows sum to one within 1e-7; bayeskit rescales them, pgmpy does not).

Operations: ``read BIF`` (the file to a network ready to query) and ``read +
queries`` (a fresh read and all the queries, so that nothing bayeskit keeps
from one query to the next outlives a run). Each is warmed up once, then
ours and theirs are timed interleaved; the medians and the ratio ours /
theirs (lower is better) are printed. Run from the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 \\
        python benchmarks/bench_network_queries.py

Default: 1,000 queries, 3 repeats; ``--quick``: 100 queries, 1 repeat.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import warnings
from importlib import resources

import numpy as np

# Run from a checkout: benchmark this repository's bayeskit, installed or not.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

from _timing import add_json_option, compare, print_table, write_json  # noqa: E402

import bayeskit  # noqa: E402
from bayeskit.io import read_bif  # noqa: E402

# pgmpy warns about its own deprecations on import and on some calls.
warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", category=DeprecationWarning)

import pgmpy  # noqa: E402
from pgmpy.inference import VariableElimination  # noqa: E402
from pgmpy.readwrite import BIFReader  # noqa: E402

GOALS = {"read BIF": None, "read + queries": 0.5}


def random_queries(bn, n: int, seed: int) -> list:
    """``n`` (target, evidence) pairs; the evidence is taken from sampled rows."""
    rng = np.random.default_rng(seed)
    rows = bn.sample(n, random_state=seed).to_dict("records")
    variables = list(bn.variables_)
    queries = []
    for row in rows:
        chosen = rng.choice(len(variables), size=1 + rng.integers(1, 5), replace=False)
        target, *observed = (variables[i] for i in chosen)
        queries.append((target, {v: row[v] for v in observed}))
    return queries


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="100 queries, 1 repeat (for CI)"
    )
    parser.add_argument("--n-queries", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats")
    parser.add_argument("--seed", type=int, default=0)
    add_json_option(parser)
    args = parser.parse_args(argv)
    n = args.n_queries or (100 if args.quick else 1_000)
    repeats = args.repeats or (1 if args.quick else 3)

    print(
        f"bayeskit {bayeskit.__version__}, pgmpy {pgmpy.__version__}, "
        f"numpy {np.__version__}, Python {platform.python_version()}"
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"CPUs: {os.cpu_count()}; load average: {load}")

    file = resources.files("bayeskit.datasets") / "data" / "alarm.bif"
    with resources.as_file(file) as path:
        path = str(path)
        queries = random_queries(read_bif(path=path), n, args.seed)

        def ours_read():
            return read_bif(path=path)

        def theirs_read():
            return BIFReader(path).get_model()

        def ours_all():
            bn = read_bif(path=path)
            return [bn.query(t, evidence=e) for t, e in queries]

        def theirs_all():
            ve = VariableElimination(BIFReader(path).get_model())
            return [ve.query([t], evidence=e, show_progress=False) for t, e in queries]

        bn, ve = ours_read(), VariableElimination(theirs_read())
        for t, e in queries[:50]:
            theirs = ve.query([t], evidence=e, show_progress=False)
            ours = bn.query(t, evidence=e).reindex(theirs.state_names[t])
            # ALARM's published rows sum to 1 +- 1e-7; bayeskit rescales them
            # to sum to one, pgmpy keeps them: posteriors agree to about 1e-7.
            np.testing.assert_allclose(ours.to_numpy(), theirs.values, rtol=1e-6)
        print(
            f"ALARM from BIF; {n:,} queries, each one variable given 1-4 "
            f"observed; repeats={repeats} (median)\n"
        )
        results = [
            compare("ALARM", "read BIF", ours_read, theirs_read, repeats * 3, None),
            compare(
                f"{n} queries",
                "read + queries",
                ours_all,
                theirs_all,
                repeats,
                GOALS["read + queries"],
            ),
        ]
    print_table(results, "pgmpy")
    if args.json:
        sizes = ["ALARM BIF file", f"ALARM BIF file, {n:,} random queries"]
        write_json(args.json, results, sizes, "pgmpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
