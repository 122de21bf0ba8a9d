"""BayesianNetwork's method= and memory_budget: which method answers, and how well.

References: the exact junction-tree posterior where it fits (child,
insurance, alarm), and on munin1, whose junction tree does not fit, the
exact posterior of the sub-network of the query's ancestors (the rest is
barren and cannot change it: Koller and Friedman 2009, section 9.7).
"""

import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning

from bayeskit import BayesianNetwork
from bayeskit.datasets import load_network
from bayeskit.graph import DAG
from bayeskit.graph.budget import junction_tree_size
from bayeskit.graph.loopy import LoopyBP
from bayeskit.graph.network import BayesNet
from bayeskit.graph.sampling import LikelihoodWeighting
from bayeskit.io import read_bif

DATA = Path(__file__).resolve().parents[1] / "data"


def evidence_rows(bn, n_rows, n_observed, seed):
    """Rows sampled from the network with all but ``n_observed`` cells hidden."""
    rng = np.random.default_rng(seed)
    X = bn.sample(n_rows, random_state=seed).astype(object)
    for i in range(n_rows):
        hide = rng.choice(X.shape[1], X.shape[1] - n_observed, replace=False)
        X.iloc[i, hide] = None
    return X


def total_variation(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Per row and variable, of two predict_proba frames of every variable."""
    return 0.5 * (a - b).abs().T.groupby(level=0).sum().T


@pytest.mark.parametrize("name", ["child", "insurance", "alarm"])
def test_auto_is_exact_within_the_budget_and_samples_beyond_it(name):
    bn = load_network(name)
    size = junction_tree_size(bn.dag_, bn._cards())
    X = evidence_rows(bn, 2, 3, seed=0)
    assert bn.predict_proba(X).attrs["method"] == "exact"  # the default budget
    bn.set_params(memory_budget=size.nbytes)
    assert bn.query(bn.variables_[0]).attrs["method"] == "exact"
    bn.set_params(memory_budget=size.nbytes - 1, random_state=0)
    assert bn.predict_proba(X).attrs["method"] == "sampling"


@pytest.mark.parametrize("name", ["child", "insurance", "alarm"])
def test_auto_beyond_the_budget_is_within_001_total_variation(name):
    bn = load_network(name).set_params(memory_budget=0, random_state=1)
    X = evidence_rows(bn, 4, 4, seed=1)
    approx = bn.predict_proba(X)
    exact = bn.predict_proba(X, method="exact")
    assert approx.attrs["method"] == "sampling"
    assert total_variation(approx, exact).to_numpy().max() < 0.01
    se = approx.attrs["stderr"]
    assert se.shape == approx.shape
    # Observed cells are certain; the others' errors are within 5 errors.
    assert (np.abs(approx - exact).to_numpy() <= 5 * se + 1e-3).all()
    assert (approx.attrs["ess"] > 100).all()


@pytest.mark.parametrize("name", ["child", "alarm"])
def test_query_beyond_the_budget_is_within_001_total_variation(name):
    bn = load_network(name).set_params(memory_budget=0, random_state=2)
    X = evidence_rows(bn, 1, 3, seed=2)
    evidence = {v: s for v, s in X.iloc[0].items() if s is not None}
    for v in bn.variables_:
        if v in evidence:
            continue
        approx = bn.query(v, evidence)
        exact = bn.query(v, evidence, method="exact")
        assert approx.attrs["method"] == "sampling"
        assert exact.attrs["method"] == "exact"
        assert 0.5 * np.abs(approx - exact).sum() < 0.01
        assert approx.attrs["stderr"].shape == (len(exact),)
        assert approx.attrs["n_samples"] >= 10_000


def test_joint_query_by_sampling_matches_the_exact_joint():
    bn = load_network("alarm").set_params(random_state=0)
    evidence = {"HRBP": "HIGH", "SAO2": "LOW"}
    exact = bn.query(["HYPOVOLEMIA", "LVFAILURE"], evidence, method="exact")
    approx = bn.query(["HYPOVOLEMIA", "LVFAILURE"], evidence, method="sampling")
    assert approx.index.equals(exact.index)
    assert (np.abs(approx - exact) <= 5 * approx.attrs["stderr"] + 1e-3).all()
    with pytest.raises(ValueError, match="method='loopy'"):
        bn.query(["HYPOVOLEMIA", "LVFAILURE"], evidence, method="loopy")


def test_loopy_is_exact_on_a_polytree_network():
    bn = load_network("asia")
    # asia has one loop (through either); its polytree part: smoke's subtree.
    tree = BayesianNetwork(
        [("smoke", "lung"), ("smoke", "bronc"), ("bronc", "dysp")],
    )
    df = bn.sample(3000, random_state=0)[["smoke", "lung", "bronc", "dysp"]]
    tree.fit(df)
    X = df.head(20).copy().astype(object)
    X.loc[X.index[::2], "smoke"] = None
    X["lung"] = None
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        approx = tree.predict_proba(X, method=LoopyBP(damping=0.0, tol=1e-13))
    exact = tree.predict_proba(X, method="exact")
    np.testing.assert_allclose(approx.to_numpy(), exact.to_numpy(), atol=1e-10)
    assert approx.attrs["method"] == "loopy"
    assert approx.attrs["converged"].all()


def test_loopy_on_alarm_shows_its_error_and_warns_when_it_does_not_converge():
    bn = load_network("alarm")
    loopy = bn.query("EXPCO2", method="loopy")
    exact = bn.query("EXPCO2")
    assert loopy.attrs["method"] == "loopy" and loopy.attrs["converged"]
    assert 0.5 * np.abs(loopy - exact).sum() > 0.2
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        out = bn.query("EXPCO2", method=LoopyBP(damping=0.0, max_iter=2))
    assert not out.attrs["converged"]


def test_soft_evidence_reaches_the_approximate_methods():
    bn = load_network("asia").set_params(random_state=0)
    soft = {"xray": [0.9, 0.2]}
    exact = bn.query("lung", {"smoke": "yes"}, soft_evidence=soft, method="exact")
    approx = bn.query(
        "lung",
        {"smoke": "yes"},
        soft_evidence=soft,
        method=LikelihoodWeighting(n_samples=200_000, random_state=0),
    )
    assert (np.abs(approx - exact) <= 5 * approx.attrs["stderr"]).all()
    X = pd.DataFrame({"smoke": ["yes", "no"], "dysp": ["yes", None]}).reindex(
        columns=bn.variables_
    )
    exact = bn.predict_proba(X, "lung", soft_evidence=soft, method="exact")
    approx = bn.predict_proba(
        X,
        "lung",
        soft_evidence=soft,
        method=LikelihoodWeighting(n_samples=200_000, random_state=0),
    )
    assert (np.abs(approx - exact).to_numpy() <= 5 * approx.attrs["stderr"]).all()


def test_sampling_is_seeded_by_random_state():
    bn = load_network("child").set_params(memory_budget=0, random_state=7)
    a = bn.query("Disease", {"LowerBodyO2": "<5"})
    b = bn.query("Disease", {"LowerBodyO2": "<5"})
    pd.testing.assert_series_equal(a, b)
    c = bn.set_params(random_state=8).query("Disease", {"LowerBodyO2": "<5"})
    assert not a.equals(c)


@pytest.mark.parametrize("method", ["bogus", 3, None])
def test_method_is_checked(method):
    bn = load_network("asia")
    with pytest.raises(ValueError, match="method must be one of"):
        bn.query("lung", method=method)
    with pytest.raises(ValueError, match="method must be one of"):
        bn.predict_proba(bn.sample(2, random_state=0), method=method)


def test_memory_budget_is_checked():
    bn = BayesianNetwork([("a", "b")], memory_budget=-1)
    with pytest.raises(ValueError, match="memory_budget"):
        bn.fit(pd.DataFrame({"a": [0, 1], "b": [1, 0]}))


def test_impossible_evidence_is_an_error_for_the_approximate_methods():
    # With m=0, state 2 of b was never seen: P(b = 2) = 0.
    bn = BayesianNetwork([("a", "b")], m=0, states={"b": [0, 1, 2]}).fit(
        pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 0, 1, 1]})
    )
    for method in ("exact", "loopy", "sampling"):
        assert bn.query("a", {"b": 1}, method=method).tolist() == [0.0, 1.0]
        with pytest.raises(ValueError, match="probability zero"):
            bn.query("a", {"b": 2}, method=method)


# -- a network whose junction tree does not fit -----------------------------------
def _ancestral_exact(bn, target, evidence):
    """P(target | evidence) on the sub-network of their ancestors, exactly."""
    dag = bn.dag_
    keep = dag.ancestors([target, *evidence]) | {target, *evidence}
    order = [v for v in bn.variables_ if v in keep]
    sub = DAG([(p, v) for v in order for p in dag.parents(v)], nodes=order)
    cards = {v: len(bn.states_[v]) for v in order}
    net = BayesNet(sub, cards, {v: bn._log_cpds_[v] for v in order})
    codes = {v: np.array([bn._state_index_[v][s]]) for v, s in evidence.items()}
    post = net.posterior(*net.evidence(codes), (target,))
    assert np.isfinite(post.log_evidence).all()
    return np.exp(post.log_marginals[(target,)][0]), junction_tree_size(sub, cards)


def test_auto_answers_exactly_on_the_ancestral_sub_network_when_it_fits():
    # alarm's tree needs 8,304 bytes; HYPOVOLEMIA's ancestors alone fewer.
    bn = load_network("alarm").set_params(memory_budget=1000, random_state=0)
    evidence = {"LVEDVOLUME": "HIGH"}
    out = bn.query("HYPOVOLEMIA", evidence)
    assert out.attrs == {"method": "exact", "n_variables": 3}
    exact = bn.set_params(memory_budget=2**30).query("HYPOVOLEMIA", evidence)
    np.testing.assert_allclose(out.to_numpy(), exact.to_numpy(), atol=1e-12)
    # With soft evidence on a descendant: its ancestors join the sub-network.
    soft = {"CVP": [0.2, 0.3, 0.5]}
    bn.set_params(memory_budget=1000)
    out = bn.query("HYPOVOLEMIA", evidence, soft_evidence=soft)
    exact = bn.query("HYPOVOLEMIA", evidence, soft_evidence=soft, method="exact")
    assert out.attrs["method"] == "exact"
    np.testing.assert_allclose(out.to_numpy(), exact.to_numpy(), atol=1e-12)


def test_munin1_too_big_for_the_tree_gets_answers_in_bounded_memory():
    bn = read_bif(path=DATA / "munin1.bif.gz").set_params(random_state=0)
    size = junction_tree_size(bn.dag_, bn._cards())
    assert size.nbytes > 3 * 2**30 > bn.memory_budget  # "too big"
    target = "R_APB_FORCE"
    evidence = {"DIFFN_TIME": "ACUTE", "R_MED_DCV_EW": "M_S44"}
    exact, sub_size = _ancestral_exact(bn, target, evidence)
    assert sub_size.nbytes < 2**26
    # "auto": the query's ancestral sub-network fits, so it is exact.
    auto = bn.query(target, evidence)
    assert auto.attrs["method"] == "exact"
    assert auto.attrs["n_variables"] < len(bn.variables_)
    np.testing.assert_allclose(auto.to_numpy(), exact, atol=1e-12)
    tracemalloc.start()
    try:
        approx = bn.query(target, evidence, method="sampling")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert approx.attrs["method"] == "sampling"
    assert peak < 256 * 2**20  # the tree's tables alone: 3.4 GB
    assert 0.5 * np.abs(approx.to_numpy() - exact).sum() < 0.01
    loopy = bn.query(target, evidence, method="loopy")
    assert loopy.attrs["converged"]
    assert 0.5 * np.abs(loopy.to_numpy() - exact).sum() < 0.05


def test_sample_given_evidence_draws_the_posterior():
    # child's tables have no zeros in the rows this evidence reaches; 200
    # chains of Gibbs sampling, against the exact posterior marginals.
    bn = load_network("child")
    evidence = {"LowerBodyO2": "<5", "Age": "0-3_days"}
    df = bn.sample(40_000, random_state=0, evidence=evidence)
    assert df.shape == (40_000, len(bn.variables_))
    for v in bn.variables_:
        if v in evidence:
            assert (df[v] == evidence[v]).all()
            continue
        exact = bn.query(v, evidence)
        freq = df[v].value_counts(normalize=True).reindex(exact.index, fill_value=0)
        assert 0.5 * np.abs(freq - exact).sum() < 0.04, v
    pd.testing.assert_frame_equal(
        bn.sample(100, random_state=0, evidence=evidence),
        bn.sample(100, random_state=0, evidence=evidence),
    )
