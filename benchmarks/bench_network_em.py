"""Bayesian networks learnt by EM: bayeskit against pgmpy on the ALARM network.

Data are sampled from ALARM (37 variables, 509 free parameters). Two cases:

- **missing cells**: 10,000 rows with 20% of the cells hidden at random,
  ``BayesianNetwork(edges, missing="em").fit`` (EM from the available-case
  estimate, to convergence; the default ``missing="auto"`` counts available
  cases without EM when nothing is latent). pgmpy's
  ``ExpectationMaximization`` cannot run this case: it drops every row with
  a missing cell of a partly observed column (all but a few rows here), so
  bayeskit's time is reported alone, with its number of iterations.
- **latent variable**: the same structure with ``LVFAILURE`` never observed
  (2 states), rows of the other 36 variables; both libraries run the same
  number of EM iterations from the same initial CPTs (``cpds_init`` /
  ``init_cpds``, ``m=0``: pgmpy's maximum-likelihood M-step). Before timing,
  the script checks that the two give the same CPTs. pgmpy's E-step expands
  every distinct row over the latent states and scores each expanded row in
  Python, so the case is smaller (2,000 rows; ``--n-latent``).

Each operation is warmed up once (pgmpy's not, it is slow), then timed
interleaved; the table shows medians and ours / theirs (lower is better).

Run from the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 \\
        python benchmarks/bench_network_em.py

Add ``--quick`` (1,000 rows with missing cells, 200 rows and 1 iteration for
the latent case, 1 repeat) for a run of a few seconds in CI.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

from _timing import add_json_option, compare, print_table, write_json  # noqa: E402

import bayeskit  # noqa: E402
from bayeskit import BayesianNetwork  # noqa: E402
from bayeskit.datasets import load_network  # noqa: E402

warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", category=DeprecationWarning)

import pgmpy  # noqa: E402
from pgmpy.estimators import ExpectationMaximization  # noqa: E402
from pgmpy.factors.discrete import TabularCPD  # noqa: E402
from pgmpy.models import DiscreteBayesianNetwork  # noqa: E402

LATENT = "LVFAILURE"


def start_tables(truth, rng) -> dict:
    """Random CPTs for every variable, as pgmpy TabularCPDs (both take them);
    the latent variable's states are 0, 1 (as pgmpy names them)."""
    names = {v: truth.states_[v].tolist() for v in truth.variables_}
    names[LATENT] = list(range(len(names[LATENT])))
    out = {}
    for v in truth.variables_:
        parents = list(truth.dag_.parents(v))
        k = len(truth.states_[v])
        cards = [len(truth.states_[u]) for u in parents]
        table = rng.dirichlet(np.ones(k), size=int(np.prod(cards)))
        out[v] = TabularCPD(
            v,
            k,
            table.T,
            evidence=parents or None,
            evidence_card=cards or None,
            state_names={u: names[u] for u in [v, *parents]},
        )
    return out


def ours_latent(truth, X, init, n_iter):
    est = BayesianNetwork(
        truth.dag_.edges,
        m=0.0,
        latent=[LATENT],
        states={LATENT: len(truth.states_[LATENT])},
        cpds_init=init,
        max_iter=n_iter,
        tol=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # EM stops at max_iter by design here
        return est.fit(X)


def theirs_latent(truth, X, init, n_iter):
    model = DiscreteBayesianNetwork(truth.dag_.edges, latents={LATENT})
    estimator = ExpectationMaximization(model, X)
    return estimator.get_parameters(
        latent_card={LATENT: len(truth.states_[LATENT])},
        max_iter=n_iter,
        atol=1e-300,
        init_cpds=dict(init),
        show_progress=False,
    )


def check_agreement(ours, theirs) -> float:
    """The largest difference of the two libraries' CPTs."""
    worst = 0.0
    for cpd in theirs:
        v, parents = cpd.variable, list(cpd.variables[1:])
        cards = [len(cpd.state_names[u]) for u in parents]
        values = np.moveaxis(cpd.get_values().reshape(-1, *cards), 0, -1)
        if cpd.state_names[v] != ours.states_[v].tolist():
            raise AssertionError(f"states of {v} differ")
        order = [parents.index(u) for u in ours.dag_.parents(v)] + [len(parents)]
        worst = max(worst, float(np.abs(ours.cpds_[v] - values.transpose(order)).max()))
    if worst > 1e-8:
        raise AssertionError(f"CPTs differ from pgmpy's by {worst:.2e}")
    return worst


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for CI")
    parser.add_argument("--n-samples", type=int, default=None, help="rows, missing")
    parser.add_argument("--n-latent", type=int, default=None, help="rows, latent")
    parser.add_argument("--n-iter", type=int, default=None, help="latent EM steps")
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats")
    parser.add_argument("--seed", type=int, default=0)
    add_json_option(parser)
    args = parser.parse_args(argv)
    n = args.n_samples or (1_000 if args.quick else 10_000)
    n_latent = args.n_latent or (200 if args.quick else 2_000)
    n_iter = args.n_iter or (1 if args.quick else 2)
    repeats = args.repeats or (1 if args.quick else 3)

    print(
        f"bayeskit {bayeskit.__version__}, pgmpy {pgmpy.__version__}, "
        f"numpy {np.__version__}, Python {platform.python_version()}"
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"CPUs: {os.cpu_count()}; load average: {load}")
    truth = load_network("alarm")
    rng = np.random.default_rng(args.seed)
    network = f"ALARM ({len(truth.variables_)} variables)"

    # Missing cells: bayeskit alone (pgmpy drops the incomplete rows).
    data = truth.sample(n, random_state=args.seed).astype(object)
    hidden = data.mask(rng.random(data.shape) < 0.2, None)
    states = {v: s.tolist() for v, s in truth.states_.items()}
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        em = BayesianNetwork(truth.dag_.edges, states=states, missing="em").fit(hidden)
        times.append(time.perf_counter() - start)
    complete = int(hidden.notna().all(axis=1).sum())
    print(
        f"\nmissing cells: {n:,} rows, 20% of cells hidden ({complete} complete "
        f"rows; pgmpy's EM would keep only those): bayeskit EM "
        f"{np.median(times):.3f} s, {em.n_iter_} iterations "
        f"({np.median(times) / max(em.n_iter_, 1):.3f} s each), converged "
        f"{em.converged_}\n"
    )

    # A latent variable: the same iterations from the same start.
    X = truth.sample(n_latent, random_state=args.seed + 1).drop(columns=LATENT)
    init = start_tables(truth, rng)
    ours = ours_latent(truth, X, init, n_iter)
    gap = check_agreement(ours, theirs_latent(truth, X, init, n_iter))
    print(f"latent {LATENT}: CPTs equal to pgmpy's within {gap:.1e}\n")
    results = [
        compare(
            f"{n_latent} rows",
            f"EM x{n_iter}",
            lambda: ours_latent(truth, X, init, n_iter),
            lambda: theirs_latent(truth, X, init, n_iter),
            repeats,
            warmup=0,
        )
    ]
    sizes = [f"{network}, {LATENT} latent, {n_latent:,} rows, {n_iter} EM iterations"]
    print_table(results, peer="pgmpy")
    if args.json:
        write_json(args.json, results, sizes, "pgmpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
