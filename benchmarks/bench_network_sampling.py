"""Drawing rows from a network: bayeskit against pyAgrum and pgmpy, as time ratios.

The networks are the BIF files bundled with ``bayeskit.datasets`` (asia,
child, insurance, alarm), read by bayeskit and handed to the peers with the
same variables, states and tables. Three operations per network:

- ``fwd/pyAgrum``: forward (ancestral) sampling of ``n`` rows, ours by
  :meth:`~bayeskit.BayesianNetwork.sample` (a DataFrame of state labels),
  pyAgrum's by ``BNDatabaseGenerator.drawSamples(n)``, its fastest
  sampler, whose rows stay inside pyAgrum (asking for them as a DataFrame,
  ``to_pandas()``, takes several times longer again: not timed);
- ``fwd/pgmpy``: the same against pgmpy's
  ``BayesianModelSampling.forward_sample`` (a DataFrame of labels), on
  ``n / 10`` rows (pgmpy is slow);
- ``evid/pgmpy``: rows given evidence (two variables observed at the
  states of a sampled row), ours by ``sample(n, evidence=...)`` (Gibbs
  sampling: 200 chains, 100 sweeps of burn-in), pgmpy's by
  ``rejection_sample`` (exact draws; its expected cost grows as one over the
  evidence's probability), on ``n / 10`` rows.

pyAgrum has no sampler of rows given evidence (its ``GibbsSampling`` is an
inference engine). Before timing, the script checks (untimed) that each
sampler's marginal frequencies of every variable are within 0.02 in total
variation of the exact marginals (posterior marginals for ``evid``, from
bayeskit's junction tree).

Each operation is warmed up once, then ours and theirs are timed
interleaved, and the medians and the ratio ours / theirs (lower is better)
are printed. Run from the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 \\
        python benchmarks/bench_network_sampling.py

Default: 100,000 rows, 5 repeats; ``--quick``: 5,000 rows, 1 repeat.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import warnings
from importlib import resources

import numpy as np
import pandas as pd

# Run from a checkout: benchmark this repository's bayeskit, installed or not.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

import pyagrum as gum  # noqa: E402
from _timing import add_json_option, compare, print_table, write_json  # noqa: E402
from bench_network import NETWORKS, to_pyagrum  # noqa: E402

import bayeskit  # noqa: E402
from bayeskit.io import read_bif  # noqa: E402

warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", category=DeprecationWarning)

import pgmpy  # noqa: E402
from pgmpy.factors.discrete import State  # noqa: E402
from pgmpy.sampling import BayesianModelSampling  # noqa: E402

# Forward sampling: at least as fast as pyAgrum's per row.
GOALS = {"fwd/pyAgrum": 1.0, "fwd/pgmpy": None, "evid/pgmpy": None}


def total_variation(bn, rows: pd.DataFrame, evidence=None) -> float:
    """The largest total variation distance, over the variables, between the
    frequencies of ``rows`` and the exact (posterior) marginals."""
    exact = bn.predict_proba(pd.DataFrame([evidence or {}], dtype=object))
    worst = 0.0
    for v in bn.variables_:
        p = exact[v].to_numpy()[0]
        freq = (
            rows[v]
            .astype(object)
            .value_counts(normalize=True)
            .reindex(bn.states_[v].tolist(), fill_value=0.0)
            .to_numpy()
        )
        worst = max(worst, 0.5 * np.abs(freq - p).sum())
    return worst


def _evidence(bn, seed: int) -> dict:
    """Two variables observed at the states of a sampled row."""
    rng = np.random.default_rng(seed)
    row = bn.sample(1, random_state=seed).iloc[0]
    chosen = rng.choice(len(bn.variables_), 2, replace=False)
    return {bn.variables_[i]: row[bn.variables_[i]] for i in chosen}


def _workloads(name: str, bn, n: int, seed: int) -> dict:
    """``{operation: (ours, theirs, sizes)}`` of one network, checked."""
    # The generator holds the model without owning it: keep both alive.
    model = to_pyagrum(bn)
    generator = gum.BNDatabaseGenerator(model)
    generator.model = model
    sampler = BayesianModelSampling(bn.to_pgmpy())
    few = max(n // 10, 500)
    evidence = _evidence(bn, seed)
    states = [State(v, s) for v, s in evidence.items()]

    def pyagrum_rows():
        generator.drawSamples(n)
        return generator

    def pgmpy_rows():
        return sampler.forward_sample(size=few, seed=seed, show_progress=False)

    def pgmpy_given():
        return sampler.rejection_sample(
            evidence=states, size=few, seed=seed, show_progress=False
        )

    checks = {
        "bayeskit": (bn.sample(n, random_state=seed), None),
        "bayeskit given evidence": (
            bn.sample(few, random_state=seed, evidence=evidence),
            evidence,
        ),
        "pyAgrum": (pyagrum_rows().to_pandas(), None),
        "pgmpy": (pgmpy_rows(), None),
        "pgmpy given evidence": (pgmpy_given(), evidence),
    }
    for who, (rows, given) in checks.items():
        tv = total_variation(bn, rows, given)
        # 0.02 is over 6 standard errors of the largest variable's total
        # variation at 500 rows and more (the draws given evidence are
        # dependent within Gibbs chains, hence the margin).
        if tv > 0.02 + 3 / np.sqrt(len(rows)):
            raise AssertionError(f"{name}: {who}'s marginals are {tv:.3f} off")
    return {
        "fwd/pyAgrum": (
            lambda: bn.sample(n, random_state=seed),
            pyagrum_rows,
            f"{name}, {n:,} rows",
        ),
        "fwd/pgmpy": (
            lambda: bn.sample(few, random_state=seed),
            pgmpy_rows,
            f"{name}, {few:,} rows",
        ),
        "evid/pgmpy": (
            lambda: bn.sample(few, random_state=seed, evidence=evidence),
            pgmpy_given,
            f"{name}, {few:,} rows given {len(evidence)} observed",
        ),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="5,000 rows, 1 repeat (for CI)"
    )
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats")
    parser.add_argument("--networks", nargs="+", default=list(NETWORKS))
    parser.add_argument("--seed", type=int, default=0)
    add_json_option(parser)
    args = parser.parse_args(argv)
    n = args.rows or (5_000 if args.quick else 100_000)
    repeats = args.repeats or (1 if args.quick else 5)

    print(
        f"bayeskit {bayeskit.__version__}, pyAgrum {gum.__version__}, "
        f"pgmpy {pgmpy.__version__}, numpy {np.__version__}, "
        f"Python {platform.python_version()}"
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"CPUs: {os.cpu_count()}; load average: {load}")
    print(f"{n:,} rows; repeats={repeats} (median)\n")

    results, sizes = [], []
    for name in args.networks:
        file = resources.files("bayeskit.datasets") / "data" / f"{name}.bif"
        with resources.as_file(file) as path:
            bn = read_bif(path=str(path))
        for operation, (ours, peer, size) in _workloads(name, bn, n, args.seed).items():
            results.append(
                compare(name, operation, ours, peer, repeats, GOALS[operation])
            )
            sizes.append(size)
            print_table(results[-1:], "peer")
    print()
    print_table(results, "peer")
    if args.json:
        write_json(args.json, results, sizes, "pyAgrum, pgmpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
