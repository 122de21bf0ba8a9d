"""The demonstration that ``python -m bayeskit demo`` prints.

- Naive Bayes on Mitchell's (1997) PlayTennis data: the joint scores and the
  posterior of his new day.
- Exact inference on a tree-shaped network,
  P(X1) P(X2|X1) P(X3|X2) P(X4|X2) P(X5|X4), with binary variables and
  illustrative tables: every marginal by sum-product, with and without
  evidence, and the most probable joint assignment by max-product.
- A small flu network: "headache and high temperature: flu?"
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..graph import TreeBP

CARDINALITIES = {"X1": 2, "X2": 2, "X3": 2, "X4": 2, "X5": 2}
CPTS = {
    "X1": (None, [0.6, 0.4]),
    "X2": ("X1", [[0.7, 0.3], [0.2, 0.8]]),
    "X3": ("X2", [[0.9, 0.1], [0.4, 0.6]]),
    "X4": ("X2", [[0.8, 0.2], [0.3, 0.7]]),
    "X5": ("X4", [[0.95, 0.05], [0.25, 0.75]]),
}


def demo_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Marginals P(Xi = 1 | evidence) and MAP assignments for three queries."""
    bp = TreeBP.from_cpts(CARDINALITIES, CPTS)
    queries = {
        "no evidence": {},
        "X5 = 1": {"X5": 1},
        "X3 = 0, X5 = 1": {"X3": 0, "X5": 1},
    }
    marginals, maps = {}, {}
    for label, evidence in queries.items():
        res = bp.sum_product(evidence=evidence)
        marginals[label] = {v: res.marginal(v)[0, 1] for v in bp.nodes}
        marginals[label]["P(evidence)"] = float(np.exp(res.log_partition[0]))
        best = bp.max_product(evidence=evidence)
        maps[label] = dict(zip(bp.nodes, best.assignment[0].tolist()))
        maps[label]["P(MAP, evidence)"] = f"{np.exp(best.log_score[0]):.4f}"
    return pd.DataFrame(marginals), pd.DataFrame(maps, dtype=object)


def playtennis_table() -> pd.DataFrame:
    """CategoricalNB(m=0) on PlayTennis: Mitchell's day (Sunny, Cool, High, Strong)."""
    from .. import CategoricalNB
    from ..datasets import load_playtennis

    df = load_playtennis()
    X, y = df.drop(columns="PlayTennis"), df["PlayTennis"]
    clf = CategoricalNB(m=0).fit(X, y)
    day = pd.DataFrame([["Sunny", "Cool", "High", "Strong"]], columns=X.columns)
    return pd.DataFrame(
        {
            "P(x, class)": np.exp(clf.predict_joint_log_proba(day)[0]),
            "P(class | x)": clf.predict_proba(day)[0],
        },
        index=pd.Index(clf.classes_, name="PlayTennis"),
    )


def run_demo() -> None:
    print(
        "Naive Bayes (m-estimate, m=0) on PlayTennis, day = Sunny, Cool, High, Strong"
    )
    print(playtennis_table().round(4).to_string())
    print()
    marginals, maps = demo_tables()
    print("Network P(X1) P(X2|X1) P(X3|X2) P(X4|X2) P(X5|X4), binary variables")
    print("\nPosterior P(Xi = 1 | evidence) by sum-product belief propagation:")
    print(marginals.round(4).to_string())
    print("\nMost probable joint assignment by max-product:")
    print(maps.to_string())
    from ..datasets import flu_network

    flu = flu_network().query(
        "flu", evidence={"headache": "yes", "temperature": "high"}
    )
    print("\nFlu network (illustrative CPTs): P(flu | headache, high temperature)")
    print(flu.round(4).to_string())
