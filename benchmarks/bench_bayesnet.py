"""Bayesian networks: bayeskit against pgmpy on the ALARM network, as time ratios.

Both libraries hold the same network: pgmpy loads ALARM (37 nodes, 509 free
parameters) offline with ``get_example_model('alarm')``, and the script copies
its CPTs into a ``bayeskit.BayesianNetwork`` with ``set_cpd``. Before timing it
checks (untimed) that the two give the same posteriors and predictions.

Operations, ours vs theirs:

- ``query``: one posterior marginal with evidence on 2-3 variables,
  ``BayesianNetwork.query`` vs ``VariableElimination.query`` (pgmpy's fastest
  exact inference). bayeskit keeps two things: once per fitted network, the
  junction tree of the whole network (moralised, triangulated) and the
  messages of its parts that hold no evidence, made when a query first needs
  them; and per pattern of observed variables (and queried variables), the
  compiled schedule of the part of the tree that the evidence touches.
  ``query`` times a repeated query (both kept); ``query (cold)`` drops the
  schedules of every pattern before each call, so it times the first query of
  a new pattern of evidence on a network already queried: finding the
  evidence that matters (d-separation), the part of the tree that reaches it,
  and compiling its schedule. The messages it takes from the rest of the tree
  are kept from earlier calls: each is made once per network, and a new
  pattern that needs messages no earlier query needed also pays for those, up
  to what ``query (first)`` shows. ``query (first)`` drops the network's tree
  and messages as well, so it times the first query after ``fit`` or
  ``set_cpd``, which builds them (reported without a goal).
- ``predict``: fill one missing variable in each of 10,000 rows (the other
  36 observed), ``BayesianNetwork.predict`` vs a loop of pgmpy queries, one
  per row, each followed by the argmax. The loop is timed on a subset of the
  rows and extrapolated to all of them (the table says how many).
- ``predict_proba`` on mixed rows: the posterior of that variable in each of
  2,000 rows where every other cell is missing with probability 0.3, so that
  nearly every row has its own pattern of observed variables,
  ``BayesianNetwork.predict_proba(X, variable)`` vs a loop of pgmpy queries,
  one per row (timed on a subset and extrapolated, as for ``predict``).
  bayeskit's compiled patterns are dropped before each call (the network's
  tree and messages are kept): it times compiling a schedule for every
  pattern, which is what such data costs the first time.

Each operation is warmed up once, then ours and theirs are timed interleaved;
the table shows the medians and the ratio ours / theirs (lower is better)
against bayeskit's goal (query: 0.5, predict: 0.01).

Run from the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 \\
        python benchmarks/bench_bayesnet.py

Add ``--quick`` (1,000 rows, 200 mixed rows, 20 pgmpy queries in the loops, 3
repeats) for a run of a few seconds in CI; ``--check`` exits with status 1 when
a ratio misses its goal.
"""

from __future__ import annotations

import argparse
import dataclasses
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
from bayeskit import BayesianNetwork  # noqa: E402
from bayeskit.graph import DAG  # noqa: E402

# pgmpy warns about its own deprecations on import and on some calls.
warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", category=DeprecationWarning)

import pgmpy  # noqa: E402
from pgmpy.inference import VariableElimination  # noqa: E402
from pgmpy.utils import get_example_model  # noqa: E402

GOALS = {"query": 0.5, "query (cold)": 0.5, "predict": 0.01}

# Posterior queries with evidence on 2-3 variables.
QUERIES = [
    ("HISTORY", {"CVP": "LOW", "HR": "HIGH", "BP": "LOW"}),
    ("LVFAILURE", {"HRBP": "HIGH", "EXPCO2": "LOW"}),
    ("PULMEMBOLUS", {"SAO2": "LOW", "PAP": "HIGH", "MINVOL": "ZERO"}),
]
PREDICT_TARGET = "LVFAILURE"


def alarm():
    """pgmpy's ALARM model and a bayeskit network with the same CPTs."""
    model = get_example_model("alarm")
    edges, states = [], {}
    for v in model.nodes():
        cpd = model.get_cpds(v)
        edges += [(parent, v) for parent in cpd.variables[1:]]
        states[v] = list(cpd.state_names[v])
    bn = BayesianNetwork(edges, states=states)
    for v in DAG(edges, nodes=list(model.nodes())).topological_order():
        cpd = model.get_cpds(v)
        # pgmpy: values[state, parents...] with parents in cpd.variables[1:].
        bn.set_cpd(v, np.moveaxis(cpd.values, 0, -1))
    return model, bn


def check_agreement(bn, ve, X, rows: int) -> None:
    """Untimed: the same posteriors and the same filled values."""
    for target, evidence in QUERIES:
        ours = bn.query(target, evidence=evidence)
        theirs = ve.query([target], evidence=evidence, show_progress=False)
        assert theirs.state_names[target] == ours.index.tolist()
        np.testing.assert_allclose(ours.to_numpy(), theirs.values, rtol=1e-9)
    filled = bn.predict(X.iloc[:rows])[PREDICT_TARGET].tolist()
    assert filled == pgmpy_predict(ve, X, rows), "predictions differ"


def pgmpy_predict(ve, X, rows: int) -> list:
    """One pgmpy query per row, each followed by the argmax of the posterior."""
    out = []
    for record in X.iloc[:rows].drop(columns=PREDICT_TARGET).to_dict("records"):
        post = ve.query([PREDICT_TARGET], evidence=record, show_progress=False)
        out.append(post.state_names[PREDICT_TARGET][int(np.argmax(post.values))])
    return out


def mixed_rows(bn, n: int, seed: int):
    """Rows with the target and, independently, 30% of the other cells missing."""
    X = bn.sample(n, random_state=seed + 1).astype(object)
    rng = np.random.default_rng(seed)
    X = X.mask(rng.random(X.shape) < 0.3, None)
    X[PREDICT_TARGET] = None
    return X


def pgmpy_proba(ve, X, rows: int) -> list:
    """One pgmpy query per row, given the row's observed cells."""
    out = []
    for record in X.iloc[:rows].drop(columns=PREDICT_TARGET).to_dict("records"):
        evidence = {v: s for v, s in record.items() if s is not None}
        post = ve.query([PREDICT_TARGET], evidence=evidence, show_progress=False)
        out.append(post.values)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="1,000 rows, 20 pgmpy queries in the loop, 3 repeats (for CI)",
    )
    parser.add_argument("--n-samples", type=int, default=None, help="rows to fill")
    parser.add_argument(
        "--loop", type=int, default=None, help="pgmpy queries timed in the loop"
    )
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--check", action="store_true", help="exit with 1 when a goal is missed"
    )
    add_json_option(parser)
    args = parser.parse_args(argv)
    n = args.n_samples or (1_000 if args.quick else 10_000)
    loop = min(n, args.loop or (20 if args.quick else 200))
    n_mixed = 200 if args.quick else 2_000
    loop_mixed = min(n_mixed, loop)
    repeats = args.repeats or (3 if args.quick else 7)

    print(
        f"bayeskit {bayeskit.__version__}, pgmpy {pgmpy.__version__}, "
        f"numpy {np.__version__}, Python {platform.python_version()}"
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"CPUs: {os.cpu_count()}; load average: {load}")

    model, bn = alarm()
    ve = VariableElimination(model)
    tree = bn.junction_tree()
    print(
        f"ALARM: {len(bn.variables_)} variables, {bn.n_parameters()} free "
        f"parameters; junction tree of {len(tree.cliques)} cliques, width "
        f"{tree.width}"
    )
    X = bn.sample(n, random_state=args.seed).assign(**{PREDICT_TARGET: None})
    check_agreement(bn, ve, X, min(loop, 50))
    mixed = mixed_rows(bn, n_mixed, args.seed)
    ours = bn.predict_proba(mixed.iloc[:50], PREDICT_TARGET).to_numpy()
    np.testing.assert_allclose(ours, pgmpy_proba(ve, mixed, 50), rtol=1e-9)
    bn._engine_._patterns.clear()
    bn.predict_proba(mixed, PREDICT_TARGET)  # untimed: count the patterns
    n_patterns = len(bn._engine_._patterns)
    print(
        f"repeats={repeats} (median); predict: {n} rows, the pgmpy loop timed on "
        f"{loop} rows and extrapolated x{n / loop:g}\n"
    )

    for target, evidence in QUERIES:
        given = ", ".join(f"{v}={s}" for v, s in evidence.items())
        print(f"query: P({target} | {given})")
    print()
    results, sizes = [], []
    network = f"ALARM ({len(bn.variables_)} variables)"
    for target, evidence in QUERIES:
        label = target
        sizes += [f"{network}, {len(evidence)} observed"] * 3
        results.append(
            compare(
                label,
                "query",
                lambda t=target, e=evidence: bn.query(t, evidence=e),
                lambda t=target, e=evidence: ve.query(
                    [t], evidence=e, show_progress=False
                ),
                repeats * 5,
                GOALS["query"],
            )
        )

        def cold(t=target, e=evidence):
            bn._engine_._patterns.clear()  # drop the schedules of every pattern
            return bn.query(t, evidence=e)

        def first(t=target, e=evidence):
            bn._engine_._patterns.clear()
            bn._engine_._networks.clear()  # and the network's tree and messages
            return bn.query(t, evidence=e)

        for operation, ours in (("query (cold)", cold), ("query (first)", first)):
            results.append(
                compare(
                    label,
                    operation,
                    ours,
                    lambda t=target, e=evidence: ve.query(
                        [t], evidence=e, show_progress=False
                    ),
                    repeats * 5,
                    GOALS.get(operation),
                )
            )

    timed = compare(
        f"{n} rows",
        "predict",
        lambda: bn.predict(X),
        lambda: pgmpy_predict(ve, X, loop),
        repeats,
        GOALS["predict"],
    )
    results.append(dataclasses.replace(timed, theirs=timed.theirs * n / loop))
    predict_theirs = timed.theirs
    sizes.append(f"{network}, {n:,} rows; pgmpy: {loop} timed x{n / loop:g}")

    def proba_mixed():
        bn._engine_._patterns.clear()  # every pattern compiled in the call
        return bn.predict_proba(mixed, PREDICT_TARGET)

    timed = compare(
        f"{n_mixed} mixed rows",
        "predict_proba",
        proba_mixed,
        lambda: pgmpy_proba(ve, mixed, loop_mixed),
        repeats,
    )
    results.append(
        dataclasses.replace(timed, theirs=timed.theirs * n_mixed / loop_mixed)
    )
    sizes.append(
        f"{network}, {n_mixed:,} rows, 30% of cells missing ({n_patterns:,} "
        f"patterns); pgmpy: {loop_mixed} timed x{n_mixed / loop_mixed:g}"
    )

    print_table(results, peer="pgmpy")
    print(
        f"\npredict: pgmpy's time is its loop over {loop} rows times {n / loop:g} "
        f"({predict_theirs / loop * 1e3:.2f} ms per query)"
    )
    print(
        f"predict_proba on mixed rows: {n_patterns:,} patterns of observed cells "
        f"in {n_mixed:,} rows; pgmpy's loop over {loop_mixed} rows times "
        f"{n_mixed / loop_mixed:g}"
    )
    if args.json:
        write_json(args.json, results, sizes, "pgmpy")
    missed = [r for r in results if r.met is False]
    if missed:
        print(
            "goal missed: "
            + ", ".join(f"{r.model} {r.operation} ({r.ratio:.3f})" for r in missed)
        )
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
