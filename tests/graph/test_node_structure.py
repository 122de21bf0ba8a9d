"""LatentNode speaks the structure protocol that LatentChain speaks:
statistics with a zero and ``+``, MAP parameters from a prior and the
previous ones, the prior's log density, the parameter count, sampling."""

import numpy as np
import pytest
from scipy.stats import dirichlet

from bayeskit.graph import LatentChain, LatentNode, NodeParams, NodeStats
from bayeskit.priors import Dirichlet

PROTOCOL = (
    "posterior",
    "decode",
    "zeros",
    "stats",
    "map_params",
    "log_prior",
    "n_parameters",
    "init_params",
    "sample",
)


@pytest.mark.parametrize("name", PROTOCOL)
def test_node_and_chain_answer_the_same_calls(name):
    assert callable(getattr(LatentNode(3), name))
    assert callable(getattr(LatentChain(3), name))


def test_statistics_add_and_zero_is_neutral(rng):
    node = LatentNode(4)
    w = rng.dirichlet(np.ones(4), size=30)
    a, b = node.stats(w[:10]), node.stats(w[10:])
    np.testing.assert_allclose((a + b).counts, w.sum(axis=0))
    np.testing.assert_array_equal((node.zeros() + a).counts, a.counts)
    np.testing.assert_allclose(a.total_weight, w[:10].sum(axis=0))


def test_map_params_is_the_dirichlet_mode(rng):
    counts = np.array([3.0, 0.0, 7.5, 1.25])
    alpha = np.array([2.0, 1.5, 1.0, 3.0])
    got = LatentNode(4).map_params(NodeStats(counts), Dirichlet(alpha)).weights
    mode = (counts + alpha - 1) / (counts + alpha - 1).sum()
    np.testing.assert_allclose(got, mode, rtol=1e-12)
    # No prior: the counts normalised; no weight at all: the previous kept.
    ml = LatentNode(4).map_params(NodeStats(counts)).weights
    np.testing.assert_allclose(ml, counts / counts.sum())
    prev = NodeParams(np.array([0.1, 0.2, 0.3, 0.4]))
    kept = LatentNode(4).map_params(NodeStats(np.zeros(4)), None, prev).weights
    np.testing.assert_array_equal(kept, prev.weights)


def test_log_prior_is_the_dirichlet_density_up_to_a_constant():
    alpha = np.array([2.0, 3.0, 1.5])
    prior = Dirichlet(alpha)
    p, q = np.array([0.2, 0.5, 0.3]), np.array([0.6, 0.1, 0.3])
    node = LatentNode(3)
    ours = node.log_prior(NodeParams(p), prior) - node.log_prior(NodeParams(q), prior)
    np.testing.assert_allclose(
        ours, dirichlet.logpdf(p, alpha) - dirichlet.logpdf(q, alpha)
    )
    assert node.log_prior(NodeParams(p)) == 0.0
    assert node.n_parameters() == 2


def test_posterior_takes_parameters_or_log_weights(rng):
    node = LatentNode(3)
    log_lik = rng.normal(size=(5, 3))
    params = NodeParams(np.array([0.2, 0.3, 0.5]))
    a = node.posterior(log_lik, params)
    b = node.posterior(log_lik, np.log(params.weights))
    np.testing.assert_array_equal(a.log_resp, b.log_resp)
    joint = log_lik + np.log(params.weights)
    np.testing.assert_allclose(np.exp(a.log_resp).sum(axis=1), 1.0)
    np.testing.assert_array_equal(node.decode(log_lik, params), joint.argmax(axis=1))


def test_sample_draws_scikit_learns_grouped_counts():
    params = NodeParams(np.array([0.2, 0.5, 0.3]))
    states = LatentNode(3).sample(params, 1000, np.random.RandomState(0))
    counts = np.random.RandomState(0).multinomial(1000, params.weights)
    np.testing.assert_array_equal(np.bincount(states, minlength=3), counts)
    assert np.all(np.diff(states) >= 0)
