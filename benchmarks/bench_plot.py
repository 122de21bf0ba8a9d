"""Drawing time of bayeskit.plot against plain matplotlib and networkx.

Two figures the plot module has to draw fast, each built and rendered to an
Agg canvas (``figure.canvas.draw()``), in one process:

- a 100,000-step series decoded by a 3-state Gaussian HMM
  (:class:`bayeskit.plot.StateSequenceDisplay`: state bands, the series, the
  posteriors beneath), against the plain drawing of the same content, every
  step drawn: the series as a line, the steps as points coloured by state
  (as hmmlearn's examples colour a decoded series) and the posteriors
  stacked;
- the 37-node ALARM network (:class:`bayeskit.plot.NetworkDisplay`, with and
  without the posterior bars, pure-Python layered layout), against networkx's
  ``draw`` with its spring layout (what pgmpy's users fall back on without
  Graphviz).

Decoding and the network's queries are done before the timing of the
structure rows; the posterior row includes the 37 exact queries. Ours and
theirs are warmed up, then timed interleaved; the table shows medians and
ours / theirs. The issue's target is an absolute one: under a second each.

Run from the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 \\
        python benchmarks/bench_plot.py

``--quick`` (10,000 steps, the 8-node asia network, 3 repeats) runs in
seconds, for CI.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

os.environ.setdefault("MPLBACKEND", "agg")

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

from _timing import add_json_option, compare, print_table, write_json  # noqa: E402

import bayeskit  # noqa: E402
from bayeskit.datasets import load_network  # noqa: E402

GOALS = {
    ("HMM series", "draw"): 1.0,
    ("network", "draw"): 1.0,
}


def series(n, rng):
    """A 3-state switching series with runs of about 20 steps."""
    means = np.array([-3.0, 0.0, 4.0])
    change = rng.random(n) < 0.05
    z = np.cumsum(change) % 3
    return (means[z] + rng.normal(size=n))[:, None]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n-steps", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=None, help="default: 5")
    add_json_option(parser)
    args = parser.parse_args(argv)
    import matplotlib.pyplot as plt
    import networkx as nx

    from bayeskit.plot import NetworkDisplay, StateSequenceDisplay

    n = 10_000 if args.quick else args.n_steps
    name = "asia" if args.quick else "alarm"
    repeats = args.repeats or (3 if args.quick else 5)
    rng = np.random.default_rng(0)
    X = series(n, rng)
    # (a seed whose EM finds the three states; some starts stall at one)
    hmm = bayeskit.GaussianHMM(3, n_iter=200, random_state=2).fit(X[:5000])
    states = hmm.predict(X)
    posteriors = hmm.predict_proba(X)
    runs = int(np.count_nonzero(np.diff(states))) + 1
    print(f"{n:,} steps ({runs:,} runs of a state); network {name!r}")

    def ours_series():
        disp = StateSequenceDisplay(X[:, 0], states, posteriors).plot()
        disp.figure_.canvas.draw()
        plt.close(disp.figure_)

    def plain_series():
        fig, (top, bottom) = plt.subplots(
            2, 1, sharex=True, figsize=(9, 4.5), layout="constrained"
        )
        t = np.arange(n)
        top.plot(t, X[:, 0], color="0.15", linewidth=0.8)
        top.scatter(t, X[:, 0], c=states, s=4, cmap="tab10")
        bottom.stackplot(t, posteriors.T)
        fig.canvas.draw()
        plt.close(fig)

    bn = load_network(name)
    edges = list(bn.dag_.edges)
    for v in bn.dag_.nodes:  # compile the queries before any timing
        bn.query(v)

    def ours_network():
        disp = NetworkDisplay.from_edges(edges, nodes=bn.dag_.nodes)
        disp.figure_.canvas.draw()
        plt.close(disp.figure_)

    def ours_posteriors():
        disp = NetworkDisplay.from_estimator(bn)
        disp.figure_.canvas.draw()
        plt.close(disp.figure_)

    def networkx_network():
        graph = nx.DiGraph(edges)
        fig, ax = plt.subplots(figsize=(12, 8))
        nx.draw(graph, nx.spring_layout(graph, seed=0), ax=ax, with_labels=True)
        fig.canvas.draw()
        plt.close(fig)

    results = [
        compare(
            "HMM series",
            "draw",
            ours_series,
            plain_series,
            repeats,
            GOALS["HMM series", "draw"],
        ),
        compare(
            "network",
            "draw",
            ours_network,
            networkx_network,
            repeats,
            GOALS["network", "draw"],
        ),
        compare("network+bars", "draw", ours_posteriors, networkx_network, repeats),
    ]
    print_table(results, peer="plain")
    if args.json:
        sizes = [
            f"{n:,} steps, 3 states, {runs:,} runs",
            f"{name}: {len(bn.dag_.nodes)} nodes, {len(edges)} edges",
            f"{name}: {len(bn.dag_.nodes)} nodes, posterior bars",
        ]
        write_json(args.json, results, sizes, "matplotlib/networkx")


if __name__ == "__main__":
    main()
