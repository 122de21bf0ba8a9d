"""Posteriors in a linear-Gaussian network: bayeskit against pgmpy and pyAgrum.

A random linear-Gaussian network over 8 continuous variables (each with up to
three earlier variables as parents, coefficients and variances drawn at
random) is fitted by bayeskit from 5,000 sampled rows and given to pgmpy as a
``LinearGaussianBayesianNetwork`` with the same CPDs. Both then answer the
posterior of three hidden variables given the five others, for every row of a
fresh sample: ours is :meth:`~bayeskit.BayesianNetwork.predict` (the
posterior means of the missing cells, with ``continuous=[...]``), pgmpy's
``predict_probability`` (the posterior means and covariance of the columns
left out), both batched over the rows; and the same for the first 500 rows
with pgmpy called once per row (as a per-row query service would). pyAgrum's
CLG model (``pyagrum.clg``, converted by :meth:`~bayeskit.BayesianNetwork.to_pyagrum`)
has no batched query: its ``CLGVariableElimination`` answers the first 200 rows
one at a time, against ours batched over the same rows. Before timing, the
script checks (untimed) that the means agree to 1e-6.

A second table times the two exact engines of hybrid networks against each
other: a chain of 12 binary discrete nodes (4,096 joint configurations), each
with a Gaussian child whose own child is observed, fitted from 5,000 rows;
``predict_proba`` of 2,000 rows (a third of the discrete cells and every
middle Gaussian missing) on the strong junction tree (the estimator's
choice, :mod:`bayeskit.graph.clg_tree`) against the same network answered by
enumeration (:class:`~bayeskit.graph.clg.CLGNetwork`), after checking
(untimed) that they agree to 1e-9. The ratio is tree / enumeration.

Each is warmed up once, then ours and theirs are timed interleaved; the
medians and the ratio ours / theirs (lower is better) are printed. Run from
the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 \\
        python benchmarks/bench_hybrid.py

Default: 10,000 rows, 5 repeats; ``--quick``: 1,000 rows, 1 repeat.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import warnings

import numpy as np
import pandas as pd

# Run from a checkout: benchmark this repository's bayeskit, installed or not.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

from _timing import add_json_option, compare, print_table, write_json  # noqa: E402

import bayeskit  # noqa: E402
from bayeskit import BayesianNetwork  # noqa: E402

warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", category=DeprecationWarning)

import pgmpy  # noqa: E402

GOAL = 1.0
# Batched posteriors against pgmpy called once per row.
PER_ROW_GOAL = 0.1
# Against pyAgrum's CLG inference, per row.
PYAGRUM_GOAL = 0.5


def simulate(rng, n: int, k: int = 8) -> tuple:
    """The edges and ``n`` rows of a random linear-Gaussian network."""
    names = [f"x{i}" for i in range(k)]
    edges = []
    for j in range(1, k):
        parents = rng.choice(j, size=min(j, int(rng.integers(1, 4))), replace=False)
        edges += [(names[int(i)], names[j]) for i in sorted(parents)]
    coef = {e: rng.normal(0, 0.7) for e in edges}
    data = {}
    for v in names:
        mean = rng.normal(0, 2) + sum(
            c * data[p] for (p, child), c in coef.items() if child == v
        )
        data[v] = mean + rng.uniform(0.3, 1.5) * rng.normal(size=n)
    return names, edges, pd.DataFrame(data)


def to_pgmpy(bn, edges):
    from pgmpy.factors.continuous import LinearGaussianCPD
    from pgmpy.models import LinearGaussianBayesianNetwork

    model = LinearGaussianBayesianNetwork(edges)
    model.add_nodes_from(bn.variables_)
    for v in bn.variables_:
        node = bn.cpds_[v]
        model.add_cpds(
            LinearGaussianCPD(
                v,
                [float(node.intercept), *node.coef.tolist()],
                float(np.sqrt(node.variance)),
                list(node.continuous_parents),
            )
        )
    return model


def tree_against_enumeration(rng, repeats: int):
    """The strong junction tree against enumeration on a discrete chain."""
    import copy

    from bayeskit.graph.clg import CLGNetwork

    k, n_fit, n = 12, 5_000, 2_000
    d = np.zeros((n_fit + n, k), dtype=int)
    d[:, 0] = rng.random(n_fit + n) < 0.5
    for i in range(1, k):
        flip = rng.random(n_fit + n) < 0.2
        d[:, i] = np.where(flip, 1 - d[:, i - 1], d[:, i - 1])
    h = 2.0 * d + rng.normal(size=d.shape)
    x = 0.5 * h + rng.normal(size=d.shape)
    data = {f"d{i}": np.array(["a", "b"])[d[:, i]] for i in range(k)}
    data.update({f"h{i}": h[:, i] for i in range(k)})
    data.update({f"x{i}": x[:, i] for i in range(k)})
    frame = pd.DataFrame(data)
    edges = [(f"d{i - 1}", f"d{i}") for i in range(1, k)]
    edges += [(f"d{i}", f"h{i}") for i in range(k)]
    edges += [(f"h{i}", f"x{i}") for i in range(k)]
    cont = [f"h{i}" for i in range(k)] + [f"x{i}" for i in range(k)]
    bn = BayesianNetwork(edges, continuous=cont).fit(frame.iloc[:n_fit])
    rows = frame.iloc[n_fit:].reset_index(drop=True)
    disc = [f"d{i}" for i in range(k)]
    rows[disc] = rows[disc].astype(object).mask(rng.random((n, k)) < 0.33)
    rows[[f"h{i}" for i in range(k)]] = np.nan  # one pattern of continuous cells
    tree = bn._clg_
    enum = copy.copy(bn)
    enum._clg_ = CLGNetwork(
        tree.discrete, tree.cards, tree.log_cpds, tree.continuous, tree.nodes, 10**6
    )

    def ours():
        return bn.predict_proba(rows)

    def theirs():
        return enum.predict_proba(rows)

    np.testing.assert_allclose(ours().to_numpy(), theirs().to_numpy(), atol=1e-9)
    result = compare(
        f"{k} discrete + {2 * k} Gaussian nodes, {n} rows",
        "predict_proba",
        ours,
        theirs,
        repeats,
    )
    return type(tree).__name__, 2**k, result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1,000 rows, 1 repeat")
    parser.add_argument("--n-rows", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats")
    parser.add_argument("--seed", type=int, default=0)
    add_json_option(parser)
    args = parser.parse_args(argv)
    n = args.n_rows or (1_000 if args.quick else 10_000)
    repeats = args.repeats or (1 if args.quick else 5)

    print(
        f"bayeskit {bayeskit.__version__}, pgmpy {pgmpy.__version__}, "
        f"numpy {np.__version__}, Python {platform.python_version()}"
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"CPUs: {os.cpu_count()}; load average: {load}")

    rng = np.random.default_rng(args.seed)
    names, edges, train = simulate(rng, 5_000)
    bn = BayesianNetwork(edges, continuous=names).fit(train)
    model = to_pgmpy(bn, edges)
    _, _, test = simulate(np.random.default_rng(args.seed), n)
    hidden = names[1::3]
    seen = [v for v in names if v not in hidden]
    rows = test.assign(**{v: np.nan for v in hidden})
    observed = test[seen]

    def ours():
        return bn.predict(rows)

    def theirs():
        return model.predict_probability(observed)

    variables, mu, _ = theirs()
    np.testing.assert_allclose(ours()[variables].to_numpy(), mu, rtol=1e-6, atol=1e-6)
    print(
        f"linear-Gaussian network of {len(names)} variables, {len(edges)} edges; "
        f"{n:,} rows, {len(hidden)} hidden; repeats={repeats} (median)\n"
    )
    m = min(n, 500)

    def ours_rows():
        return bn.predict(rows.head(m))

    def theirs_per_row():
        return [model.predict_probability(observed.iloc[[i]]) for i in range(m)]

    results = [
        compare(
            f"{len(names)} nodes, {n} rows",
            "posteriors",
            ours,
            theirs,
            repeats,
            GOAL,
        ),
        compare(
            f"{len(names)} nodes, {m} rows",
            "vs per-row calls",
            ours_rows,
            theirs_per_row,
            max(1, repeats // 2),
            PER_ROW_GOAL,
        ),
    ]
    print_table(results, "pgmpy")
    engine, configs, result = tree_against_enumeration(
        np.random.default_rng(args.seed), max(1, repeats // 2)
    )
    print(
        f"\nhybrid network, {configs:,} joint discrete configurations: "
        f"{engine} (ours) against enumeration (theirs)\n"
    )
    print_table([result], "enumeration")
    sizes = [
        f"{len(names)} Gaussian nodes, {n:,} rows, {len(hidden)} hidden",
        f"{len(names)} Gaussian nodes, {m:,} rows, pgmpy one call per row",
    ]
    peers = ["pgmpy", "pgmpy"]
    agrum = _pyagrum_row(bn, rows, observed, hidden, min(n, 200), repeats)
    if agrum is not None:
        print_table([agrum[0]], "pyAgrum")
        results.append(agrum[0])
        sizes.append(agrum[1])
        peers.append("pyAgrum")
    if args.json:
        write_json(args.json, results, sizes, peers)
    return 0


def _pyagrum_row(bn, rows, observed, hidden, m, repeats):
    """Ours batched over ``m`` rows against pyAgrum's CLG variable elimination
    called once per row; None without pyAgrum."""
    try:
        from pyagrum import clg
    except ImportError:
        return None
    model = bn.to_pyagrum()
    evidence = observed.head(m).to_dict("records")

    def theirs():
        out = []
        for ev in evidence:
            engine = clg.CLGVariableElimination(model)
            engine.updateEvidence(ev)
            out.append([engine.posterior(v).mu() for v in hidden])
        return np.array(out)

    def ours():
        return bn.predict(rows.head(m))

    np.testing.assert_allclose(
        ours()[hidden].to_numpy(), theirs(), rtol=1e-6, atol=1e-6
    )
    result = compare(
        f"{len(bn.variables_)} nodes, {m} rows",
        "vs per-row CLG queries",
        ours,
        theirs,
        max(1, repeats // 2),
        PYAGRUM_GOAL,
    )
    return (
        result,
        f"{len(bn.variables_)} Gaussian nodes, {m:,} rows, one pyAgrum query per row",
    )


if __name__ == "__main__":
    sys.exit(main())
