"""Tree belief propagation against brute-force enumeration of the joint."""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from bayeskit._logmath import safe_log
from bayeskit.graph import LatentNode, TreeBP, node_belief


def random_tree(rng, n_nodes, zeros=False):
    names = [f"V{i}" for i in rng.permutation(n_nodes)]
    cards = {name: int(rng.integers(2, 5)) for name in names}
    edges, pots = [], []
    for i in range(1, n_nodes):
        j = int(rng.integers(0, i))
        u, v = (names[j], names[i]) if rng.random() < 0.5 else (names[i], names[j])
        pot = rng.gamma(1.0, size=(cards[u], cards[v]))
        if zeros:
            pot[rng.random(pot.shape) < 0.2] = 0.0
        edges.append((u, v))
        pots.append(pot)
    root = {names[0]: rng.dirichlet(np.ones(cards[names[0]]))}
    return cards, edges, pots, root


def brute_force(cards, edges, pots, node_pots, unary):
    """Log-weights of every joint assignment, shape (n, n_configs)."""
    nodes = list(cards)
    configs = np.array(list(itertools.product(*(range(cards[v]) for v in nodes))))
    col = {v: i for i, v in enumerate(nodes)}
    with np.errstate(divide="ignore"):
        logw = np.zeros(len(configs))
        for (u, v), pot in zip(edges, pots):
            logw = logw + np.log(pot)[configs[:, col[u]], configs[:, col[v]]]
        for v, pot in node_pots.items():
            logw = logw + np.log(pot)[configs[:, col[v]]]
    logw = logw[None, :] + sum(unary[v][:, configs[:, col[v]]] for v in nodes)
    return configs, logw


def evidence_to_unary(cards, evidence, log_unary, n):
    unary = {}
    for v, k in cards.items():
        u = np.zeros((n, k)) + log_unary.get(v, 0.0)
        if v in evidence:
            ev = np.broadcast_to(evidence[v], (n,))
            mask = np.full((n, k), -np.inf)
            mask[np.arange(n), np.where(ev >= 0, ev, 0)] = 0.0
            mask[ev < 0] = 0.0
            u = u + mask
        unary[v] = u
    return unary


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("with_evidence", [False, True])
def test_sum_and_max_product_match_enumeration(seed, with_evidence):
    rng = np.random.default_rng(seed)
    n_nodes = int(rng.integers(1, 9))
    cards, edges, pots, root = random_tree(rng, n_nodes)
    n = 6
    evidence, log_unary = {}, {}
    if with_evidence:
        for v, k in cards.items():
            r = rng.random()
            if r < 0.3:
                evidence[v] = rng.integers(-1, k, size=n)
            elif r < 0.6:
                log_unary[v] = rng.normal(scale=3.0, size=(n, k))
    bp = TreeBP(cards, edges, pots, root)
    res = bp.sum_product(evidence=evidence, log_unary=log_unary, n=n)
    unary = evidence_to_unary(cards, evidence, log_unary, n)
    configs, logw = brute_force(cards, edges, pots, root, unary)
    log_z = logsumexp(logw, axis=1)
    np.testing.assert_allclose(res.log_evidence, log_z, rtol=1e-10, atol=1e-10)
    for i, v in enumerate(cards):
        expected = np.stack(
            [logsumexp(logw[:, configs[:, i] == s], axis=1) for s in range(cards[v])],
            axis=1,
        )
        np.testing.assert_allclose(
            res.marginal(v), np.exp(expected - log_z[:, None]), rtol=1e-10, atol=1e-12
        )
    m = bp.max_product(evidence=evidence, log_unary=log_unary, n=n)
    best = np.argmax(logw, axis=1)
    np.testing.assert_array_equal(m.assignment, configs[best])
    np.testing.assert_allclose(m.log_score, logw.max(axis=1), rtol=1e-10)


@pytest.mark.parametrize("seed", range(10))
def test_structural_zeros_never_nan(seed):
    rng = np.random.default_rng(100 + seed)
    cards, edges, pots, root = random_tree(rng, 6, zeros=True)
    n = 5
    evidence = {v: rng.integers(-1, k, size=n) for v, k in list(cards.items())[:2]}
    bp = TreeBP(cards, edges, pots, root)
    res = bp.sum_product(evidence=evidence)
    unary = evidence_to_unary(cards, evidence, {}, n)
    configs, logw = brute_force(cards, edges, pots, root, unary)
    log_z = logsumexp(logw, axis=1)
    np.testing.assert_allclose(res.log_evidence, log_z, rtol=1e-10)
    for v in cards:
        assert not np.isnan(res.log_marginals[v]).any()
    possible = np.isfinite(log_z)
    m = bp.max_product(evidence=evidence)
    np.testing.assert_allclose(m.log_score, logw.max(axis=1), rtol=1e-10)
    best = configs[np.argmax(logw, axis=1)]
    np.testing.assert_array_equal(m.assignment[possible], best[possible])


def test_forest_partition_is_sum_of_components(rng):
    cards = {"A": 2, "B": 3, "C": 2, "D": 3}
    pots = [rng.random((2, 3)), rng.random((2, 3))]
    bp = TreeBP(cards, [("A", "B"), ("C", "D")], pots)
    res = bp.sum_product()
    expected = np.log(pots[0].sum()) + np.log(pots[1].sum())
    np.testing.assert_allclose(res.log_evidence, [expected], rtol=1e-12)


def lecture_network():
    """P(X1)P(X2|X1)P(X3|X2)P(X4|X2)P(X5|X4), reference notes 000, eq. (12.1)."""
    rng = np.random.default_rng(12)
    k = 3
    cards = {f"X{i}": k for i in range(1, 6)}

    def cpt():
        return rng.dirichlet(np.ones(k), size=k)

    cpts = {
        "X1": (None, rng.dirichlet(np.ones(k))),
        "X2": ("X1", cpt()),
        "X3": ("X2", cpt()),
        "X4": ("X2", cpt()),
        "X5": ("X4", cpt()),
    }
    return cards, cpts


def test_lecture_example_marginal_and_map():
    cards, cpts = lecture_network()
    p1, p21, p32, p42, p54 = (np.asarray(cpts[f"X{i}"][1]) for i in range(1, 6))
    joint = np.einsum("a,ab,bc,bd,de->abcde", p1, p21, p32, p42, p54)
    bp = TreeBP.from_cpts(cards, cpts)
    res = bp.sum_product()
    np.testing.assert_allclose(res.marginal("X5")[0], joint.sum(axis=(0, 1, 2, 3)))
    np.testing.assert_allclose(res.log_evidence, [0.0], atol=1e-12)
    # The message m_45 of eq. (12.2) alone is P(X5): the same number.
    m12 = p1 @ p21
    m24 = (m12 * p32.sum(axis=1)) @ p42
    np.testing.assert_allclose(res.marginal("X5")[0], m24 @ p54, rtol=1e-12)
    m = bp.max_product()
    flat = np.argmax(joint)
    np.testing.assert_array_equal(m.assignment[0], np.unravel_index(flat, joint.shape))
    np.testing.assert_allclose(m.log_score, [np.log(joint.max())], rtol=1e-12)


def test_node_belief_is_bayes_rule():
    prior = np.log([0.2, 0.3, 0.5])
    lik = safe_log(np.array([[0.5, 0.1, 0.1], [0.0, 0.0, 0.0]]))
    log_post, log_ev = node_belief(prior, lik)
    joint = np.array([0.1, 0.03, 0.05])
    np.testing.assert_allclose(np.exp(log_post[0]), joint / joint.sum())
    np.testing.assert_allclose(log_ev[0], np.log(joint.sum()))
    assert np.all(np.isneginf(log_post[1])) and np.isneginf(log_ev[1])


def test_latent_node_equals_one_node_tree(rng):
    log_prior = np.log(rng.dirichlet(np.ones(4)))
    log_lik = rng.normal(scale=50, size=(7, 4)) - 1e4
    post = LatentNode(4).posterior(log_lik, log_prior)
    tree = TreeBP({"z": 4}, node_potentials={"z": np.exp(log_prior)})
    res = tree.sum_product(log_unary={"z": log_lik})
    np.testing.assert_allclose(post.log_resp, res.log_marginals["z"], atol=1e-12)
    np.testing.assert_allclose(post.log_evidence, res.log_evidence, rtol=1e-14)
    np.testing.assert_array_equal(
        LatentNode(4).decode(log_lik, log_prior),
        tree.max_product(log_unary={"z": log_lik}).assignment[:, 0],
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"pots": [np.array([[0.5, -0.1], [0.5, 0.5]])]}, "non-negative"),
        ({"pots": [np.ones((3, 2))]}, "shape"),
        ({"edges": [("A", "Z")]}, "unknown variable 'Z'"),
        ({"edges": [("A", "A")]}, "self-loop"),
    ],
)
def test_bad_potentials(kwargs, match):
    args = {"edges": [("A", "B")], "pots": [np.ones((2, 2))]}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        TreeBP({"A": 2, "B": 2}, args["edges"], args["pots"])


def test_cycle_is_rejected():
    with pytest.raises(ValueError, match="cycle"):
        TreeBP(
            {"A": 2, "B": 2, "C": 2},
            [("A", "B"), ("B", "C"), ("C", "A")],
            [np.ones((2, 2))] * 3,
        )


def test_cpt_rows_must_sum_to_one():
    with pytest.raises(ValueError, match="CPT of 'B' must sum to one"):
        TreeBP.from_cpts(
            {"A": 2, "B": 2},
            {"A": (None, [0.5, 0.5]), "B": ("A", [[0.9, 0.2], [0.2, 0.8]])},
        )


def test_bad_evidence():
    cards, cpts = lecture_network()
    bp = TreeBP.from_cpts(cards, cpts)
    with pytest.raises(ValueError, match="out of range"):
        bp.sum_product(evidence={"X2": [0, 3]})
    with pytest.raises(ValueError, match="unknown variable 'X9'"):
        bp.sum_product(evidence={"X9": 0})
    with pytest.raises(ValueError, match="rows"):
        bp.sum_product(evidence={"X2": [0, 1], "X3": [0, 1, 2]})


def test_posterior_names_its_normaliser_log_evidence_and_reads_the_old_name(rng):
    # One posterior type for trees and networks; the former names still read it.
    from bayeskit.graph.tree import Posterior, TreeMarginals

    tree = TreeBP.from_cpts(
        {"A": 2, "B": 3},
        {"A": (None, [0.3, 0.7]), "B": ("A", [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])},
    )
    res = tree.sum_product(evidence={"B": [2, 0, -1]})
    assert isinstance(res, Posterior) and TreeMarginals is Posterior
    # By hand: P(B = 2) = 0.3 * 0.5 + 0.7 * 0.1, P(B = 0) = 0.3 * 0.2 + 0.7 * 0.6.
    np.testing.assert_allclose(np.exp(res.log_evidence), [0.22, 0.48, 1.0])
    assert res.log_partition is res.log_evidence
