"""The network as a structure: counts, tables, prior, parameters, sampling.

Against brute force: the counts of every family by a loop over the rows, the
tables by the m-estimate's formula, the log prior by the Dirichlet's density,
the parameter count by the formula, forward sampling by the joint of the
tables, and the posteriors of the queries (one result type, its normaliser
``log_evidence``) by enumeration of the joint.
"""

import itertools
import math

import numpy as np
import pytest

from bayeskit.graph import DAG
from bayeskit.graph.network import BayesNet, NetworkStats
from bayeskit.graph.tree import Posterior


def random_structure(rng, n_nodes=5, p_edge=0.5):
    names = [f"v{i}" for i in range(n_nodes)]
    edges = [
        (names[i], names[j])
        for i, j in itertools.combinations(range(n_nodes), 2)
        if rng.random() < p_edge
    ][: 2 * n_nodes]
    cards = {v: int(rng.integers(2, 4)) for v in names}
    return BayesNet(DAG(edges, nodes=names), cards)


def random_tables(rng, net):
    out = {}
    for v in net.variables:
        t = rng.uniform(0.05, 1.0, size=tuple(net.cards[u] for u in net.families[v]))
        out[v] = np.log(t / t.sum(axis=-1, keepdims=True))
    return out


def random_codes(rng, net, n, p_missing=0.2):
    codes = np.column_stack([rng.integers(0, net.cards[v], n) for v in net.variables])
    codes[rng.random(codes.shape) < p_missing] = -1
    return codes


class MEstimatePrior:
    """A duck-typed prior: the m-estimate with one m and uniform p."""

    def __init__(self, m):
        self.m = m

    def log_estimate(self, variable, counts):
        k = counts.shape[-1]
        total = counts.sum(axis=-1, keepdims=True)
        return np.log((counts + self.m / k) / (total + self.m))

    def log_density(self, variable, log_cpd):
        return float((self.m / log_cpd.shape[-1] * log_cpd).sum())


def test_counts_are_the_weighted_rows_observing_each_family(rng):
    net = random_structure(rng)
    codes = random_codes(rng, net, 300)
    w = rng.uniform(0, 2, 300)
    stats = net.stats(codes, w)
    position = {v: i for i, v in enumerate(net.variables)}
    for v, counts in zip(net.variables, stats.counts):
        expected = np.zeros(counts.shape)
        cols = [position[u] for u in net.families[v]]
        for row, weight in zip(codes, w):
            if (row[cols] >= 0).all():
                expected[tuple(row[cols])] += weight
        np.testing.assert_allclose(counts, expected, rtol=1e-12)
    np.testing.assert_allclose(
        stats.total_weight, [c.sum() for c in stats.counts], rtol=1e-12
    )
    # They add, with a zero, in any order.
    a, b = net.stats(codes[:100], w[:100]), net.stats(codes[100:], w[100:])
    for parts in ((a, b), (b, a), (net.zeros(), a, b)):
        total = sum(parts[1:], parts[0])
        assert isinstance(total, NetworkStats)
        for x, y in zip(total.counts, stats.counts):
            np.testing.assert_allclose(x, y, rtol=1e-12)


def test_tables_from_counts_and_a_prior(rng):
    net = random_structure(rng)
    stats = net.stats(random_codes(rng, net, 200))
    prior = MEstimatePrior(3.0)
    tables = net.map_params(stats, prior)
    for v, counts in zip(net.variables, stats.counts):
        k = counts.shape[-1]
        expected = (counts + 3.0 / k) / (counts.sum(-1, keepdims=True) + 3.0)
        np.testing.assert_allclose(np.exp(tables[v]), expected, rtol=1e-12)
    # No prior: maximum likelihood; a row without counts is uniform.
    ml = net.map_params(stats)
    for v, counts in zip(net.variables, stats.counts):
        total = counts.sum(-1, keepdims=True)
        expected = np.where(total > 0, counts / np.where(total > 0, total, 1), 0)
        expected = np.where(total > 0, expected, 1.0 / counts.shape[-1])
        np.testing.assert_allclose(np.exp(ml[v]), expected, rtol=1e-12)
    assert net.log_prior(ml) == 0.0
    np.testing.assert_allclose(
        net.log_prior(tables, prior),
        sum(3.0 / t.shape[-1] * t.sum() for t in tables.values()),
    )


def test_parameter_count(rng):
    net = random_structure(rng, 6)
    expected = sum(
        (net.cards[v] - 1) * math.prod(net.cards[u] for u in net.dag.parents(v))
        for v in net.variables
    )
    assert net.n_parameters() == expected


def test_forward_sampling_draws_from_the_joint(rng):
    net = random_structure(rng, 4)
    tables = random_tables(rng, net)
    bound = net.with_cpds(tables)
    with pytest.raises(ValueError, match="no tables"):
        net.sample(5, rng)
    draws = bound.sample(200_000, np.random.default_rng(1))
    assert draws.shape == (200_000, 4)
    shape = tuple(net.cards[v] for v in net.variables)
    joint = np.zeros(shape)
    for idx in itertools.product(*(range(k) for k in shape)):
        joint[idx] = np.exp(
            sum(
                tables[v][tuple(idx[net.variables.index(u)] for u in net.families[v])]
                for v in net.variables
            )
        )
    freq = np.bincount(
        np.ravel_multi_index(tuple(draws.T), shape), minlength=joint.size
    ) / len(draws)
    # Within 5 standard errors of every cell's probability.
    se = np.sqrt(joint.ravel() * (1 - joint.ravel()) / len(draws))
    assert np.all(np.abs(freq - joint.ravel()) <= 5 * se + 1e-12)
    # Learning the tables back from the draws recovers them.
    learnt = net.map_params(net.stats(draws))
    for v in net.variables:
        np.testing.assert_allclose(np.exp(learnt[v]), np.exp(tables[v]), atol=0.03)


def test_queries_return_one_posterior_type_named_like_the_others(rng):
    net = random_structure(rng, 5)
    bound = net.with_cpds(random_tables(rng, net))
    codes = random_codes(rng, net, 1, p_missing=0.0)[0]
    shape = tuple(net.cards[v] for v in net.variables)
    joint = np.zeros(shape)
    for idx in itertools.product(*(range(k) for k in shape)):
        joint[idx] = np.exp(
            sum(
                bound.log_cpds[v][
                    tuple(idx[net.variables.index(u)] for u in net.families[v])
                ]
                for v in net.variables
            )
        )
    v0, v4 = net.variables[0], net.variables[4]
    evidence = bound.evidence({v4: np.array([codes[4]])})
    given = joint[..., codes[4]]
    post = bound.posterior(*evidence, (v0,))
    assert isinstance(post, Posterior)
    np.testing.assert_allclose(np.exp(post.log_evidence), [given.sum()], rtol=1e-10)
    np.testing.assert_allclose(
        np.exp(post.log_marginals[(v0,)][0]),
        given.sum(axis=(1, 2, 3)) / given.sum(),
        rtol=1e-10,
    )
    marginals = bound.marginals(*evidence)
    assert isinstance(marginals, Posterior)
    np.testing.assert_allclose(marginals.log_evidence, post.log_evidence)
    np.testing.assert_allclose(
        marginals.log_marginals[v0], post.log_marginals[(v0,)], atol=1e-12
    )
