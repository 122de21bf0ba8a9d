"""The categorical family as an emission of the protocol: the MAP tables from a
Dirichlet, an m-estimate or none (closed forms), the table messages and the
statistics the chain kernels sum for them, the log prior, sampling."""

import numpy as np
import pytest

from bayeskit._logmath import safe_log
from bayeskit.emissions import Categorical, CategoricalParams, CategoricalStats
from bayeskit.emissions.base import Emission
from bayeskit.graph import ChainParams, LatentChain
from bayeskit.priors import Dirichlet
from bayeskit.priors.dirichlet import MEstimate


def test_is_an_emission():
    assert isinstance(Categorical([3, 2]), Emission)


def test_map_params_by_each_prior_against_closed_forms(rng):
    family = Categorical([3, 2])
    codes = np.column_stack([rng.integers(0, 3, 40), rng.integers(0, 2, 40)])
    weights = rng.dirichlet(np.ones(2), size=40)
    stats = family.stats(codes, weights)
    counts = [
        np.array(
            [[weights[codes[:, j] == a, k].sum() for a in range(t)] for k in (0, 1)]
        )
        for j, t in enumerate((3, 2))
    ]  # (states, categories) per feature
    mode = family.map_params(stats, Dirichlet(2.5))
    mean = family.map_params(stats, MEstimate(np.array([2.0, 1.0]), np.full(5, 0.4)))
    ml = family.map_params(stats)
    for j, block in enumerate((slice(0, 3), slice(3, 5))):
        n = counts[j]
        expect = (n + 1.5) / (n + 1.5).sum(axis=1, keepdims=True)
        np.testing.assert_allclose(np.exp(mode.log_prob[block]).T, expect)
        m = [2.0, 1.0][j]
        expect = (n + m * 0.4) / (n.sum(axis=1, keepdims=True) + m)
        np.testing.assert_allclose(np.exp(mean.log_prob[block]).T, expect)
        np.testing.assert_allclose(
            np.exp(ml.log_prob[block]).T, n / n.sum(axis=1, keepdims=True)
        )
    # The two arrays of the m-estimate, as before prior objects.
    legacy = family.map_params(stats, np.array([2.0, 1.0]), np.full(5, 0.4))
    np.testing.assert_array_equal(legacy.log_prob, mean.log_prob)
    # Log prior of the Dirichlet: sum (alpha - 1) log p over every table.
    expected = 1.5 * mode.log_prob.sum()
    assert family.log_prior(mode, Dirichlet(2.5)) == pytest.approx(expected)
    assert family.log_prior(mode, None) == 0.0
    assert family.n_parameters(2) == 2 * (2 + 1)


def test_dirichlet_map_keeps_structural_zeros_and_empty_states():
    family = Categorical([3])
    counts = np.array([[4.0, 0.0], [1.0, 0.0], [2.0, 0.0]])  # state 1 saw nothing
    previous = CategoricalParams(
        safe_log(np.array([[0.5, 0.2], [0.0, 0.3], [0.5, 0.5]]))
    )
    new = family.map_params(CategoricalStats(counts), Dirichlet(1.0), previous)
    prob = np.exp(new.log_prob)
    np.testing.assert_allclose(prob[:, 0], [4 / 6, 0.0, 2 / 6])
    np.testing.assert_allclose(prob[:, 1], [0.2, 0.3, 0.5])


def test_table_messages_and_their_statistics_equal_the_dense_ones(rng):
    family = Categorical([4])
    params = CategoricalParams(np.log(rng.dirichlet(np.ones(4), size=3).T))
    codes = rng.integers(0, 4, (30, 1))
    table, index = family.messages(codes, params)
    np.testing.assert_array_equal(table[index], family.log_likelihood(codes, params))
    chain = LatentChain(3)
    cp = ChainParams(rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(3), size=3))
    lengths, weights = [10, 20], np.array([2.0, 0.5])
    post = chain.posterior((table, index), cp, lengths, weights)
    resp = post.posterior * np.repeat(weights, lengths)[:, None]
    np.testing.assert_allclose(
        family.table_stats(post.symbol_counts).counts,
        family.stats(codes, resp).counts,
        atol=1e-12,
    )
    dense, none = Categorical([4, 2]).messages(
        np.column_stack([codes[:, 0], codes[:, 0] % 2]),
        CategoricalParams(np.log(np.full((6, 3), 0.5))),
    )
    assert none is None and dense.shape == (30, 3)


def test_init_and_sample_as_hmmlearn(rng):
    family = Categorical([3])
    params = family.init_params(None, None, 2, np.random.RandomState(0))
    draws = np.random.RandomState(0).rand(2, 3)
    np.testing.assert_allclose(
        np.exp(params.log_prob).T, draws / draws.sum(axis=1, keepdims=True)
    )
    prob = np.array([[0.7, 0.0], [0.2, 0.1], [0.1, 0.9]])
    states = np.repeat([0, 1], 20000)
    codes = family.sample(
        CategoricalParams(safe_log(prob)), states, np.random.RandomState(1)
    )
    for k in (0, 1):
        freq = np.bincount(codes[states == k, 0], minlength=3) / 20000
        np.testing.assert_allclose(freq, prob[:, k], atol=0.015)
