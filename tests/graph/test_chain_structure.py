"""LatentChain, the HMMs' structure, against brute-force enumeration of every
state path and the closed forms of Baum-Welch's start and transition updates."""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from bayeskit.graph import ChainParams, ChainPrior, ChainStats, LatentChain
from bayeskit.graph.chain import forward, forward_backward
from bayeskit.priors import Dirichlet


def model(rng, k):
    return ChainParams(rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k), size=k))


def brute_force(params, log_emission, lengths):
    """Per sequence: log p(x), every step's posterior, the expected start and
    transition counts, and the best path, by enumerating every path."""
    k = len(params.startprob)
    out = []
    pos = 0
    for n in lengths:
        e = log_emission[pos : pos + n]
        pos += n
        paths = list(itertools.product(range(k), repeat=n))
        logs = []
        for z in paths:
            lp = np.log(params.startprob[z[0]]) + e[0, z[0]]
            for t in range(1, n):
                lp += np.log(params.transmat[z[t - 1], z[t]]) + e[t, z[t]]
            logs.append(lp)
        logs = np.array(logs)
        log_lik = logsumexp(logs)
        w = np.exp(logs - log_lik)
        gamma = np.zeros((n, k))
        trans = np.zeros((k, k))
        for z, p in zip(paths, w):
            gamma[np.arange(n), z] += p
            for t in range(1, n):
                trans[z[t - 1], z[t]] += p
        out.append((log_lik, gamma, trans, np.array(paths[int(np.argmax(logs))])))
    return out


@pytest.mark.parametrize("table", [False, True])
def test_posterior_stats_and_decode_by_enumeration(rng, table):
    k, lengths = 3, [4, 1, 5]
    params = model(rng, k)
    if table:  # the categorical form: a table and the codes that index it
        log_table = np.log(rng.dirichlet(np.ones(4), size=k).T)
        codes = rng.integers(0, 4, sum(lengths))
        messages, log_emission = (log_table, codes), log_table[codes]
    else:
        log_emission = rng.normal(size=(sum(lengths), k))
        messages = log_emission
    weights = np.array([2.0, 0.5, 1.0])
    chain = LatentChain(k)
    post = chain.posterior(messages, params, lengths, weights)
    stats = chain.stats(post, lengths, weights)
    refs = brute_force(params, log_emission, lengths)
    np.testing.assert_allclose(post.log_evidence, [r[0] for r in refs], rtol=1e-12)
    np.testing.assert_array_equal(post.log_likelihood, post.log_evidence)
    np.testing.assert_allclose(
        post.posterior, np.concatenate([r[1] for r in refs]), atol=1e-12
    )
    np.testing.assert_allclose(
        stats.start, sum(w * r[1][0] for w, r in zip(weights, refs)), atol=1e-12
    )
    np.testing.assert_allclose(
        stats.transitions, sum(w * r[2] for w, r in zip(weights, refs)), atol=1e-12
    )
    np.testing.assert_allclose(
        stats.occupancy,
        sum(w * r[1].sum(axis=0) for w, r in zip(weights, refs)),
        atol=1e-12,
    )
    np.testing.assert_array_equal(stats.total_weight, stats.occupancy)
    path, log_prob = chain.decode(messages, params, lengths)
    np.testing.assert_array_equal(path, np.concatenate([r[3] for r in refs]))
    filt = chain.filter(messages, params, lengths)
    np.testing.assert_allclose(filt.log_evidence, post.log_evidence, rtol=1e-12)
    np.testing.assert_array_equal(filt.log_likelihood, filt.log_evidence)
    assert np.all(log_prob <= post.log_evidence + 1e-12)


def test_stats_add_and_have_a_zero(rng):
    k = 2
    chain = LatentChain(k)
    params = model(rng, k)
    a, b = rng.normal(size=(7, k)), rng.normal(size=(5, k))
    sa = chain.stats(chain.posterior(a, params, [7]), [7])
    sb = chain.stats(chain.posterior(b, params, [5]), [5])
    both = chain.stats(chain.posterior(np.vstack([a, b]), params, [7, 5]), [7, 5])
    for total in (sa + sb, sb + sa, chain.zeros() + sa + sb):
        for field in ("start", "transitions", "occupancy"):
            np.testing.assert_allclose(getattr(total, field), getattr(both, field))
    assert isinstance(chain.zeros(), ChainStats)
    assert chain.zeros().start.shape == (k,) and chain.zeros().transitions.sum() == 0


def test_map_params_is_the_dirichlet_mode_and_keeps_structural_zeros():
    stats = ChainStats(
        np.array([3.0, 1.0, 0.0]),
        np.array([[4.0, 2.0, 0.5], [0.0, 0.0, 0.0], [1.0, 3.0, 6.0]]),
        np.zeros(3),
    )
    previous = ChainParams(
        np.full(3, 1 / 3), np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [1 / 3] * 3])
    )
    alpha = 1.5
    prior = ChainPrior(Dirichlet(alpha), Dirichlet(alpha))
    new = LatentChain(3).map_params(stats, prior, previous)
    start = stats.start + alpha - 1
    np.testing.assert_allclose(new.startprob, start / start.sum())
    row0 = np.array([4.5, 2.5, 0.0])  # the structural zero stays zero
    np.testing.assert_allclose(new.transmat[0], row0 / row0.sum())
    row1 = np.full(3, 0.5)
    np.testing.assert_allclose(new.transmat[1], row1 / row1.sum())
    row2 = stats.transitions[2] + 0.5
    np.testing.assert_allclose(new.transmat[2], row2 / row2.sum())
    # No prior: the counts normalised; an empty row keeps its previous values.
    ml = LatentChain(3).map_params(stats, None, previous)
    np.testing.assert_allclose(ml.transmat[1], previous.transmat[1])
    np.testing.assert_allclose(ml.startprob, stats.start / stats.start.sum())
    # A table not updated is previous's.
    fixed = LatentChain(3, update_start=False).map_params(stats, prior, previous)
    np.testing.assert_array_equal(fixed.startprob, previous.startprob)
    expected = Dirichlet(alpha).log_density(new.startprob) + Dirichlet(
        alpha
    ).log_density(new.transmat)
    assert LatentChain(3).log_prior(new, prior) == pytest.approx(expected)
    assert LatentChain(3).n_parameters() == 2 + 6
    assert LatentChain(3, update_transitions=False).n_parameters() == 2


def test_sample_follows_the_chain(rng):
    params = ChainParams(np.array([1.0, 0.0]), np.array([[0.9, 0.1], [0.3, 0.7]]))
    states = LatentChain(2).sample(params, 20000, np.random.RandomState(0))
    assert states[0] == 0
    pairs = np.zeros((2, 2))
    np.add.at(pairs, (states[:-1], states[1:]), 1)
    np.testing.assert_allclose(
        pairs / pairs.sum(axis=1, keepdims=True), params.transmat, atol=0.02
    )
    assert (
        LatentChain(2).sample(params, 3, np.random.RandomState(0), currstate=1)[0] == 1
    )


def test_chain_results_name_their_normaliser_log_evidence(rng):
    log_start, log_trans = np.log([0.5, 0.5]), np.log([[0.9, 0.1], [0.2, 0.8]])
    e = rng.normal(size=(6, 2))
    f, p = forward(log_start, log_trans, e), forward_backward(log_start, log_trans, e)
    assert f.log_evidence is f.log_likelihood
    assert p.log_evidence is p.log_likelihood
    np.testing.assert_allclose(f.log_evidence, p.log_evidence)
