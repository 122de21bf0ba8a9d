"""Exact network queries: bayeskit against pyAgrum, as time ratios.

pyAgrum (C++) is the fastest exact engine with a Python interface, so it is
the anchor of bayeskit's network queries. Both read the same BIF files
bundled with ``bayeskit.datasets`` (asia, child, insurance, alarm) and answer
the posterior marginal of every variable given each row of evidence:
bayeskit by :meth:`~bayeskit.BayesianNetwork.predict_proba` of a DataFrame
(missing cells unobserved), pyAgrum by one ``LazyPropagation`` per network
(built from bayeskit's tables: pyAgrum's BIF reader refuses child's state
``Asy/Patch``), reused from row to row (``eraseAllEvidence``, ``setEvidence``,
``makeInference`` and ``posterior(v).toarray()`` of every variable), its
fastest use from Python. Before timing, the script checks (untimed) that
the posteriors agree to 1e-6 (the published tables' rows sum to one within
1e-7; bayeskit rescales them, pyAgrum does not).

Three workloads per network, rows sampled from the network (so that no
evidence has probability zero), a third of the variables observed:

- ``one row``: 50 calls of one row each (a dashboard, an API call), each
  row its own evidence, timed together;
- ``repeats``: 10,000 rows holding 20 distinct rows of evidence; pyAgrum
  answers the distinct rows only (found by pandas) and scatters them back,
  as bayeskit does;
- ``varied``: 10,000 rows as sampled, on the same observed variables with
  10% of their cells missing at random (a few dozen patterns of observed
  variables; nearly every row its own evidence on child, insurance and
  alarm, while asia's few observed variables take few joint states);
  pyAgrum as for ``repeats``.

Each is warmed up once, then ours and theirs are timed interleaved, and the
medians and the ratio ours / theirs (lower is better) are printed. Run from
the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 \\
        python benchmarks/bench_network.py

Default: 10,000 rows, 3 repeats; ``--quick``: 500 rows, 1 repeat.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from importlib import resources

import numpy as np
import pandas as pd

# Run from a checkout: benchmark this repository's bayeskit, installed or not.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

import pyagrum as gum  # noqa: E402
from _timing import add_json_option, compare, print_table, write_json  # noqa: E402

import bayeskit  # noqa: E402
from bayeskit.io import read_bif  # noqa: E402

NETWORKS = ("asia", "child", "insurance", "alarm")
GOALS = {"one row": 0.5, "repeats": 0.5, "varied": 0.3}
N_ONE = 50  # one-row calls per timed run
N_DISTINCT = 20  # distinct rows of the repeats workload


def evidence_rows(bn, n: int, seed: int, distinct: int | None) -> pd.DataFrame:
    """``n`` rows sampled from ``bn``, a third of the variables observed
    (10% of their cells missing at random); ``distinct`` of them repeated."""
    rng = np.random.default_rng(seed)
    variables = list(bn.variables_)
    observed = rng.choice(len(variables), max(1, len(variables) // 3), replace=False)
    rows = bn.sample(distinct or n, random_state=seed).astype(object)
    hidden = np.ones(rows.shape, dtype=bool)
    hidden[:, observed] = rng.random((len(rows), len(observed))) < 0.1
    rows = rows.mask(hidden, None)
    if distinct:
        rows = rows.iloc[rng.integers(0, distinct, n)].reset_index(drop=True)
    return rows


class PyAgrum:
    """pyAgrum's posteriors of every variable, one row of evidence at a time,
    in bayeskit's order of variables and states."""

    def __init__(self, bn) -> None:
        self.model = to_pyagrum(bn)
        self.engine = gum.LazyPropagation(self.model)
        self.names = list(bn.variables_)

    def row(self, evidence: dict) -> np.ndarray:
        ie = self.engine
        ie.eraseAllEvidence()
        ie.setEvidence(evidence)
        ie.makeInference()
        return np.concatenate([ie.posterior(v).toarray() for v in self.names])

    def frame(self, rows: pd.DataFrame) -> np.ndarray:
        """Every row's posteriors, the distinct rows computed once."""
        keys = pd.MultiIndex.from_frame(rows.fillna("")).factorize()[0]
        first = np.unique(keys, return_index=True)[1]
        out = np.stack([self.row(_evidence(rows.iloc[int(i)])) for i in first])
        return out[keys]


def to_pyagrum(bn) -> gum.BayesNet:
    """``bn`` as a pyAgrum network: the same variables, states (in their
    order) and tables. (pyAgrum's BIF reader refuses some of the bundled
    files' labels, such as child's ``Asy/Patch``.)"""
    model = gum.BayesNet()
    for v in bn.variables_:
        labels = [str(s) for s in bn.states_[v].tolist()]
        model.add(gum.LabelizedVariable(v, v, labels))
    for u, v in bn.dag_.edges:
        model.addArc(u, v)
    for v in bn.variables_:
        parents = list(bn.dag_.parents(v))
        table = bn.cpds_[v]
        for index in np.ndindex(*table.shape[:-1]):
            where = {u: int(i) for u, i in zip(parents, index)}
            model.cpt(v)[where] = table[index].tolist()
    return model


def _evidence(row: pd.Series) -> dict:
    return {v: s for v, s in row.items() if s is not None and s == s}


def _workloads(name: str, bn, theirs: PyAgrum, n: int, seed: int) -> dict:
    """``{operation: (ours, theirs, sizes)}`` of one network, checked to agree."""
    one = evidence_rows(bn, N_ONE, seed, None)
    singles = [one.iloc[[i]] for i in range(N_ONE)]
    single_evidence = [_evidence(one.iloc[i]) for i in range(N_ONE)]
    repeated = evidence_rows(bn, n, seed + 1, N_DISTINCT)
    varied = evidence_rows(bn, n, seed + 2, None)
    for rows in (one, repeated.iloc[:200], varied.iloc[:200]):
        np.testing.assert_allclose(
            bn.predict_proba(rows).to_numpy(), theirs.frame(rows), atol=1e-6
        )
    return {
        "one row": (
            lambda: [bn.predict_proba(r) for r in singles],
            lambda: [theirs.row(e) for e in single_evidence],
            f"{name}, {N_ONE} calls of one row",
        ),
        "repeats": (
            lambda: bn.predict_proba(repeated),
            lambda: theirs.frame(repeated),
            f"{name}, {n:,} rows, {N_DISTINCT} distinct",
        ),
        "varied": (
            lambda: bn.predict_proba(varied),
            lambda: theirs.frame(varied),
            f"{name}, {n:,} sampled rows",
        ),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="500 rows, 1 repeat (for CI)"
    )
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats")
    parser.add_argument("--networks", nargs="+", default=list(NETWORKS))
    parser.add_argument("--seed", type=int, default=0)
    add_json_option(parser)
    args = parser.parse_args(argv)
    n = args.rows or (500 if args.quick else 10_000)
    repeats = args.repeats or (1 if args.quick else 3)

    print(
        f"bayeskit {bayeskit.__version__}, pyAgrum {gum.__version__}, "
        f"numpy {np.__version__}, Python {platform.python_version()}"
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"CPUs: {os.cpu_count()}; load average: {load}")
    print(f"{n:,} rows, {N_ONE} one-row calls; repeats={repeats} (median)\n")

    results, sizes = [], []
    for name in args.networks:
        file = resources.files("bayeskit.datasets") / "data" / f"{name}.bif"
        with resources.as_file(file) as path:
            bn = read_bif(path=str(path))
        theirs = PyAgrum(bn)
        workloads = _workloads(name, bn, theirs, n, args.seed)
        for operation, (ours, peer, size) in workloads.items():
            results.append(
                compare(name, operation, ours, peer, repeats, GOALS[operation])
            )
            sizes.append(size)
            print_table(results[-1:], "pyAgrum")
    print()
    print_table(results, "pyAgrum")
    if args.json:
        write_json(args.json, results, sizes, "pyAgrum")
    return 0


if __name__ == "__main__":
    sys.exit(main())
