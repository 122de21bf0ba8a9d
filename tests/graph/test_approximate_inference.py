"""Approximate inference in the graph core, against exact answers.

The size estimate against the tables the junction tree really builds; loopy
belief propagation against the junction tree on polytrees (where it is
exact) and its known miss on ALARM; likelihood weighting against the exact
posterior: its estimates, its effective sample size, its evidence estimate,
and the coverage of its standard errors over 100 seeds.
"""

import math
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from bayeskit._logmath import safe_log
from bayeskit.datasets import load_network
from bayeskit.graph import DAG, JunctionTree
from bayeskit.graph.budget import fits, junction_tree_size
from bayeskit.graph.gibbs import gibbs_sample
from bayeskit.graph.loopy import LoopyBP, loopy_belief_propagation
from bayeskit.graph.network import BayesNet
from bayeskit.graph.sampling import LikelihoodWeighting, likelihood_weighting

DATA = Path(__file__).resolve().parents[1] / "data"


def _tables(rng, dag, cards):
    out = {}
    for v in dag.nodes:
        shape = tuple(cards[u] for u in (*dag.parents(v), v))
        t = rng.uniform(0.05, 1.0, size=shape)
        out[v] = np.log(t / t.sum(axis=-1, keepdims=True))
    return out


def random_polytree(rng, n_nodes):
    """A DAG whose skeleton is a random tree, edges oriented at random."""
    names = [f"x{i}" for i in range(n_nodes)]
    edges = []
    for i in range(1, n_nodes):
        j = int(rng.integers(0, i))
        edges.append(
            (names[j], names[i]) if rng.random() < 0.5 else (names[i], names[j])
        )
    dag = DAG(edges, nodes=names)
    cards = {v: int(rng.integers(2, 5)) for v in names}
    return BayesNet(dag, cards, _tables(rng, dag, cards))


def random_evidence(rng, net, n_rows, n_observed):
    """Rows drawn from the network, ``n_observed`` variables of them kept."""
    rows = net.sample(n_rows, rng)
    picked = sorted(rng.choice(len(net.variables), n_observed, replace=False))
    return net.evidence({net.variables[j]: rows[:, j] for j in picked})


def network(name):
    return load_network(name)._engine_


# -- the size estimate ---------------------------------------------------------------
@pytest.mark.parametrize("name", ["asia", "child", "insurance", "alarm"])
def test_size_estimate_is_the_size_of_the_tree_that_gets_built(name):
    net = network(name)
    size = junction_tree_size(net.dag, net.cards)
    tree = JunctionTree.from_dag(net.dag, net.cards)
    sizes = [math.prod(net.cards[v] for v in layout) for layout in tree.layouts]
    assert size.entries == sum(sizes)
    assert size.largest == max(sizes)
    assert size.n_cliques == len(sizes)
    assert size.width == tree.width
    assert size.nbytes == 8 * sum(sizes)
    assert fits(size, size.nbytes) and not fits(size, size.nbytes - 1)


def test_size_estimate_of_random_networks_matches_the_built_tree(rng):
    for _ in range(20):
        n = int(rng.integers(2, 12))
        names = [f"v{i}" for i in range(n)]
        edges = [
            (names[i], names[j])
            for i in range(n)
            for j in range(i + 1, n)
            if rng.random() < 0.3
        ]
        dag = DAG(edges, nodes=names)
        cards = {v: int(rng.integers(2, 5)) for v in names}
        tree = JunctionTree.from_dag(dag, cards)
        expected = sum(math.prod(cards[v] for v in c) for c in tree.layouts)
        assert junction_tree_size(dag, cards).entries == expected


def test_size_estimate_of_munin1_is_too_big_and_allocates_no_table():
    net = BayesNet(*_structure_of(DATA / "munin1.bif.gz"))
    tracemalloc.start()
    try:
        size = junction_tree_size(net.dag, net.cards)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # 4.3e8 entries: 3.4 GB of float64 tables, in a few megabytes.
    assert size.entries > 4 * 10**8
    assert not fits(size, 2**30)
    assert peak < 20 * 2**20


def _structure_of(path):
    from bayeskit.io import read_bif

    bn = read_bif(path=path)
    return bn.dag_, bn._cards()


# -- loopy belief propagation --------------------------------------------------------
@pytest.mark.parametrize("damping", [0.0, 0.5])
def test_loopy_bp_is_exact_on_polytrees(rng, damping):
    for _ in range(10):
        net = random_polytree(rng, int(rng.integers(2, 12)))
        n_obs = int(rng.integers(0, len(net.variables)))
        observed, values = random_evidence(rng, net, 6, n_obs)
        result = loopy_belief_propagation(
            net, observed, values, damping=damping, tol=1e-14, max_iter=2000
        )
        exact = net.marginals(observed, values)
        assert result.converged.all()
        assert set(result.log_marginals) == set(exact.log_marginals)
        for v, log_p in exact.log_marginals.items():
            np.testing.assert_allclose(
                np.exp(result.log_marginals[v]), np.exp(log_p), atol=1e-10
            )


def test_loopy_bp_soft_evidence_is_exact_on_polytrees(rng):
    net = random_polytree(rng, 8)
    v = net.variables[3]
    lik = rng.uniform(0.1, 1.0, size=(4, net.cards[v]))
    soft = {v: np.log(lik)}
    result = loopy_belief_propagation(
        net, (), np.zeros((4, 0), dtype=int), soft=soft, damping=0.0, tol=1e-14
    )
    # Exact: the joint of v and each other variable, times the likelihood.
    for u in net.variables:
        if u == v:
            log_joint = net.posterior((), np.zeros((1, 0), int), (v,)).log_marginals
            p = np.exp(log_joint[(v,)]) * lik
        else:
            joint = net.posterior((), np.zeros((1, 0), int), (u, v)).log_marginals
            p = (np.exp(joint[(u, v)]) * lik[:, None, :]).sum(axis=2)
        p = p / p.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(np.exp(result.log_marginals[u]), p, atol=1e-10)


def test_loopy_bp_misses_expco2_on_alarm_as_published():
    # The known failure of the Bethe approximation on ALARM (Murphy, Weiss
    # and Jordan 1999 report ALARM's loopy beliefs; pyAgrum's loopy engine
    # misses EXPCO2 by the same amount): why "auto" never picks loopy BP.
    net = network("alarm")
    observed, values = net.evidence({})
    result = loopy_belief_propagation(net, observed, values, damping=0.0, tol=1e-10)
    exact = net.marginals(observed, values).log_marginals
    tv = 0.5 * np.abs(np.exp(result.log_marginals["EXPCO2"]) - np.exp(exact["EXPCO2"]))
    assert result.converged.all()
    assert 0.2 < tv.sum() < 0.3


def test_loopy_bp_reports_rows_that_did_not_converge():
    net = network("alarm")
    observed, values = net.evidence({})
    result = LoopyBP(damping=0.0, max_iter=2).run(net, observed, values)
    assert result.n_iter == 2
    assert not result.converged.any()
    assert (result.residual > 1e-6).all()


def test_loopy_bp_flags_impossible_evidence():
    dag = DAG([("a", "b")])
    net = BayesNet(
        dag,
        {"a": 2, "b": 2},
        {"a": safe_log([1.0, 0.0]), "b": safe_log([[1.0, 0.0], [0.5, 0.5]])},
    )
    observed, values = net.evidence({"b": np.array([0, 1])})
    result = loopy_belief_propagation(net, observed, values)
    assert result.log_evidence[0] == 0.0
    assert np.isneginf(result.log_evidence[1])


@pytest.mark.parametrize(
    "kwargs", [{"damping": 1.0}, {"damping": -0.1}, {"tol": 0}, {"max_iter": 0}]
)
def test_loopy_bp_settings_are_checked(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        LoopyBP(**kwargs)


# -- likelihood weighting ----------------------------------------------------------
@pytest.mark.parametrize("name", ["child", "insurance", "alarm"])
def test_likelihood_weighting_converges_to_the_exact_posterior(rng, name):
    net = network(name)
    observed, values = random_evidence(rng, net, 4, 4)
    result = likelihood_weighting(
        net, observed, values, n_samples=20_000, random_state=rng
    )
    exact = net.marginals(observed, values).log_marginals
    for v, log_p in exact.items():
        p = np.exp(log_p)
        est, se = result.probs[(v,)], result.stderr[(v,)]
        # Within 5 standard errors (plus rounding for states never drawn).
        assert (np.abs(est - p) <= 5 * se + 2e-3).all(), v


def test_likelihood_weighting_without_evidence_has_full_effective_size(rng):
    net = network("asia")
    observed, values = net.evidence({})
    result = likelihood_weighting(
        net, observed, values, n_samples=500, random_state=rng
    )
    # Every weight is one: the effective sample size is the number of draws,
    # P(no evidence) = 1, and the standard error is the binomial one.
    assert result.ess.tolist() == [500.0]
    assert result.log_evidence.tolist() == [0.0]
    p = result.probs[("lung",)]
    np.testing.assert_allclose(result.stderr[("lung",)], np.sqrt(p * (1 - p) / 500))


def test_likelihood_weighting_estimates_the_evidence_and_joint_posteriors(rng):
    net = network("alarm")
    observed, values = random_evidence(rng, net, 3, 3)
    hidden = [v for v in net.variables if v not in observed]
    targets = [tuple(hidden[:2]), (hidden[5],)]
    result = likelihood_weighting(
        net, observed, values, targets, n_samples=50_000, random_state=rng
    )
    for t in targets:
        exact = np.exp(net.posterior(observed, values, t).log_marginals[t])
        assert result.probs[t].shape == exact.shape
        assert (np.abs(result.probs[t] - exact) <= 5 * result.stderr[t] + 2e-3).all()
    # The mean weight estimates P(evidence), unbiased: within a few per cent.
    exact_ll = net.log_likelihood(observed, values)
    np.testing.assert_allclose(result.log_evidence, exact_ll, atol=0.05)


@pytest.mark.parametrize("proposal", ["prior", "loopy"])
def test_likelihood_weighting_standard_errors_cover_at_their_level(proposal):
    # 95% intervals over 100 seeds: every posterior probability of ALARM's
    # unobserved variables between 0.05 and 0.95, given 4 observed variables.
    net = network("alarm")
    observed, values = net.evidence(
        {
            "HRBP": np.array([2]),
            "SAO2": np.array([0]),
            "PRESS": np.array([3]),
            "CVP": np.array([1]),
        }
    )
    exact = net.marginals(observed, values).log_marginals
    covered, total = 0, 0
    per_variable = {}
    for seed in range(100):
        result = LikelihoodWeighting(
            n_samples=2000, random_state=seed, proposal=proposal
        ).run(net, observed, values)
        for v, log_p in exact.items():
            p = np.exp(log_p[0])
            keep = (p > 0.05) & (p < 0.95)
            hit = np.abs(result.probs[(v,)][0] - p) <= 1.96 * result.stderr[(v,)][0]
            covered += int(hit[keep].sum())
            total += int(keep.sum())
            c = per_variable.setdefault(v, [0, 0])
            c[0] += int(hit[keep].sum())
            c[1] += int(keep.sum())
    assert total > 1000
    assert 0.92 <= covered / total <= 0.98
    assert min(c / t for c, t in per_variable.values() if t) >= 0.85


@pytest.mark.parametrize("name", ["child", "insurance", "alarm"])
def test_loopy_proposal_is_consistent(rng, name):
    # Evidence on leaves (variables without children): below the rest, where
    # the prior proposal is blind to it. Within 5 standard errors, plus 0.005
    # for the probabilities near 0 that few draws reach (whose standard
    # errors are unreliable: the module's Notes).
    net = network(name)
    leaves = [v for v in net.variables if not net.dag.children(v)]
    rows = net.sample(8, rng)
    picked = [leaves[j] for j in rng.choice(len(leaves), 3, replace=False)]
    observed, values = net.evidence(
        {v: rows[:, net.variables.index(v)] for v in picked}
    )
    exact = net.marginals(observed, values).log_marginals
    result = likelihood_weighting(
        net, observed, values, n_samples=5000, proposal="loopy", random_state=rng
    )
    for v, log_p in exact.items():
        err = np.abs(result.probs[(v,)] - np.exp(log_p))
        assert (err <= 5 * result.stderr[(v,)] + 5e-3).all(), v


@pytest.mark.parametrize("name", ["child", "insurance"])
def test_loopy_proposal_evens_the_weights(name):
    # Where loopy belief propagation is close (not alarm's EXPCO2), its
    # proposal gives every row more effective draws than the prior's.
    net = network(name)
    rng = np.random.default_rng(0)
    leaves = [v for v in net.variables if not net.dag.children(v)]
    rows = net.sample(20, rng)
    picked = [leaves[j] for j in rng.choice(len(leaves), 3, replace=False)]
    observed, values = net.evidence(
        {v: rows[:, net.variables.index(v)] for v in picked}
    )
    ess = {
        proposal: likelihood_weighting(
            net, observed, values, n_samples=3000, proposal=proposal, random_state=rng
        ).ess
        for proposal in ("prior", "loopy")
    }
    assert np.median(ess["loopy"] / ess["prior"]) > 1.2
    assert ess["loopy"].min() > ess["prior"].min()


def test_likelihood_weighting_draws_until_tol(rng):
    net = network("child")
    observed, values = random_evidence(rng, net, 3, 3)
    result = likelihood_weighting(
        net, observed, values, n_samples=1000, tol=0.005, random_state=rng
    )
    for se in result.stderr.values():
        assert (se.reshape(3, -1).sum(axis=1) / 2 <= 0.005).all()
    assert (result.n_samples > 1000).all()
    assert (result.n_samples % 1000 == 0).all()


def test_likelihood_weighting_is_reproducible_by_seed():
    net = network("asia")
    observed, values = net.evidence({"dysp": np.array([0])})
    a = LikelihoodWeighting(n_samples=300, random_state=3).run(net, observed, values)
    b = LikelihoodWeighting(n_samples=300, random_state=3).run(net, observed, values)
    c = LikelihoodWeighting(n_samples=300, random_state=4).run(net, observed, values)
    assert all(np.array_equal(a.probs[t], b.probs[t]) for t in a.probs)
    assert any(not np.array_equal(a.probs[t], c.probs[t]) for t in a.probs)


@pytest.mark.parametrize(
    "kwargs",
    [{"n_samples": 0}, {"max_samples": 1.5}, {"tol": 0.0}, {"n_samples": True}],
)
def test_likelihood_weighting_settings_are_checked(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        LikelihoodWeighting(**kwargs)


# -- Gibbs sampling ------------------------------------------------------------------
def _random_network(rng, n_nodes=7):
    names = [f"v{i}" for i in range(n_nodes)]
    edges = [
        (names[i], names[j])
        for i in range(n_nodes)
        for j in range(i + 1, n_nodes)
        if rng.random() < 0.4
    ]
    dag = DAG(edges, nodes=names)
    cards = {v: int(rng.integers(2, 4)) for v in names}
    return BayesNet(dag, cards, _tables(rng, dag, cards))


def test_gibbs_samples_the_exact_posterior_of_random_networks(rng):
    # Tables without zeros: the chain is irreducible, and its draws' marginals
    # approach the exact posterior (the brute force of the junction tree).
    for _ in range(3):
        net = _random_network(rng)
        observed, values = random_evidence(rng, net, 1, 2)
        draws = gibbs_sample(net, observed, values, 40_000, random_state=rng)
        column = {v: j for j, v in enumerate(net.variables)}
        for j, v in enumerate(observed):
            assert (draws[:, column[v]] == values[0, j]).all()
        exact = net.marginals(observed, values).log_marginals
        for v, log_p in exact.items():
            freq = np.bincount(draws[:, column[v]], minlength=net.cards[v]) / 40_000
            assert 0.5 * np.abs(freq - np.exp(log_p[0])).sum() < 0.02, v


def test_gibbs_is_reproducible_and_refuses_impossible_evidence():
    net = network("asia")
    observed, values = net.evidence({"dysp": np.array([0])})
    a = gibbs_sample(net, observed, values, 50, random_state=np.random.default_rng(0))
    b = gibbs_sample(net, observed, values, 50, random_state=np.random.default_rng(0))
    np.testing.assert_array_equal(a, b)
    impossible = BayesNet(
        DAG([("a", "b")]),
        {"a": 2, "b": 2},
        {"a": safe_log([1.0, 0.0]), "b": safe_log([[1.0, 0.0], [0.5, 0.5]])},
    )
    observed, values = impossible.evidence({"b": np.array([1])})
    with pytest.raises(ValueError, match="probability zero"):
        gibbs_sample(
            impossible, observed, values, 10, random_state=np.random.default_rng(0)
        )
