"""BayesianNetwork.sample, forward and given evidence, against exact marginals.

The classic networks' sampled frequencies of every variable are compared
with its exact (posterior) marginal from the junction tree by Pearson's
chi-square test, Bonferroni-corrected over the variables so that each
comparison of a whole network has a false-alarm rate of at most 1e-6 (the
seeds are fixed: a failure is a bug at that rate, not chance).
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayeskit import BayesianNetwork
from bayeskit.datasets import load_network
from bayeskit.graph.gibbs import gibbs_sample

LEVEL = 1e-6


def worst_p_value(bn, rows: pd.DataFrame, evidence=None) -> float:
    """The smallest chi-square p-value over the variables, times their number
    (Bonferroni), of the frequencies of ``rows`` against the exact marginals
    given ``evidence``; a draw of a state of probability zero gives 0."""
    exact = bn.predict_proba(pd.DataFrame([evidence or {}], dtype=object))
    worst = 1.0
    hidden = [v for v in bn.variables_ if v not in (evidence or {})]
    for v in hidden:
        p = exact[v].to_numpy()[0]
        counts = (
            rows[v]
            .astype(object)
            .value_counts()
            .reindex(bn.states_[v].tolist(), fill_value=0)
            .to_numpy()
        )
        if counts[p <= 1e-12].any():
            return 0.0
        keep = p > 1e-12
        if keep.sum() < 2:
            continue
        expected = p[keep] / p[keep].sum() * len(rows)
        statistic = ((counts[keep] - expected) ** 2 / expected).sum()
        worst = min(worst, stats.chi2.sf(statistic, keep.sum() - 1))
    return worst * len(hidden)


@pytest.mark.parametrize("name", ["asia", "child", "insurance", "alarm"])
def test_forward_draws_follow_the_exact_marginals(name):
    bn = load_network(name)
    rows = bn.sample(50_000, random_state=7)
    assert list(rows.columns) == bn.variables_
    assert worst_p_value(bn, rows) > LEVEL


@pytest.mark.parametrize("name", ["asia", "child", "alarm"])
@pytest.mark.parametrize("seed", [0, 1])
def test_draws_given_evidence_follow_the_exact_posterior(name, seed):
    """Evidence on three variables at the states of a sampled row."""
    bn = load_network(name)
    rng = np.random.default_rng(seed)
    row = bn.sample(1, random_state=seed).iloc[0]
    chosen = rng.choice(len(bn.variables_), 3, replace=False)
    evidence = {bn.variables_[j]: row[bn.variables_[j]] for j in chosen}
    rows = bn.sample(20_000, random_state=seed, evidence=evidence)
    for v, s in evidence.items():
        assert (rows[v] == s).all()
    assert worst_p_value(bn, rows, evidence) > LEVEL


def copy_network(**params):
    """``b`` a copy of a fair coin ``a`` (a deterministic table), ``c`` a
    noisy child of ``a``."""
    bn = BayesianNetwork(
        [("a", "b"), ("a", "c")], states={v: [0, 1] for v in "abc"}, **params
    )
    bn.set_cpd("a", [0.5, 0.5])
    bn.set_cpd("b", [[1.0, 0.0], [0.0, 1.0]])
    bn.set_cpd("c", [[0.6, 0.4], [0.3, 0.7]])
    return bn


def test_draws_given_evidence_are_independent():
    """Consecutive rows agree as often as independent draws do: Gibbs
    sampling never moves on this network (a and b fix each other), so each
    of its chains repeats one row."""
    rows = copy_network().sample(20_000, random_state=0, evidence={"c": 0})
    a = rows["a"].to_numpy()
    assert (rows["b"].to_numpy() == a).all()
    p = 0.6 / 0.9  # P(a = 0 | c = 0)
    agree = (a[1:] == a[:-1]).mean()
    expected = p**2 + (1 - p) ** 2
    se = np.sqrt(expected * (1 - expected) / (len(a) - 1))
    assert abs(agree - expected) < 6 * se


def test_a_tree_over_the_memory_budget_falls_back_to_gibbs():
    """With no room for the junction tree, the draws given evidence are
    Gibbs sampling's, from the same random numbers."""
    bn = copy_network(memory_budget=0)
    rows = bn.sample(300, random_state=np.random.default_rng(3), evidence={"c": 1})
    engine = bn._engine_
    observed, values = engine.evidence({"c": [1]})
    codes = gibbs_sample(
        engine, observed, values, 300, random_state=np.random.default_rng(3)
    )
    np.testing.assert_array_equal(rows.to_numpy().astype(int), codes)


def test_labels_keep_the_types_of_the_states():
    """Each column holds the states themselves (ints stay ints, strings
    strings), as pandas makes a column of them."""
    bn = BayesianNetwork([("a", "b")], states={"a": [0, 1, 2], "b": ["no", "yes"]})
    bn.set_cpd("a", [0.2, 0.3, 0.5])
    bn.set_cpd("b", [[0.9, 0.1], [0.5, 0.5], [0.1, 0.9]])
    rows = bn.sample(200, random_state=0)
    assert rows["a"].dtype == pd.Series([0, 1, 2]).dtype
    assert rows["b"].dtype == pd.Series(["no", "yes"]).dtype
    assert set(rows["a"]) <= {0, 1, 2} and set(rows["b"]) <= {"no", "yes"}
