"""Sampling a network: forward draws by inversion, and exact draws given evidence.

Against brute force: the joint (or posterior) of every assignment of a small
random network by enumeration of its tables, compared with the frequencies
of many draws by Pearson's chi-square test. Each test's level is stated (a
false alarm rate of 1e-6 per comparison); the seeds are fixed, so a pass is
reproducible and a failure is a bug, not chance, at that rate.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from test_network import random_structure, random_tables

from bayeskit.graph import DAG
from bayeskit.graph.network import BayesNet
from bayeskit.graph.network_sampling import inverse_cdf_draw, posterior_sample
from bayeskit.graph.semiring import SUM_PRODUCT

LEVEL = 1e-6  # false-alarm rate of each chi-square comparison


def joint_table(net, tables) -> np.ndarray:
    """The joint probability of every assignment, by enumeration."""
    shape = tuple(net.cards[v] for v in net.variables)
    joint = np.zeros(shape)
    for idx in itertools.product(*(range(k) for k in shape)):
        joint[idx] = np.exp(
            sum(
                tables[v][tuple(idx[net.variables.index(u)] for u in net.families[v])]
                for v in net.variables
            )
        )
    return joint


def chi_square_p(draws: np.ndarray, probs: np.ndarray) -> float:
    """The p-value of Pearson's test that ``draws`` (codes of the axes of
    ``probs``) come from ``probs``; draws of a cell of probability zero give 0."""
    counts = np.bincount(
        np.ravel_multi_index(tuple(draws.T), probs.shape), minlength=probs.size
    )
    p = probs.ravel() / probs.sum()
    if counts[p == 0].any():
        return 0.0
    expected = p[p > 0] * len(draws)
    statistic = ((counts[p > 0] - expected) ** 2 / expected).sum()
    return float(stats.chi2.sf(statistic, (p > 0).sum() - 1))


@pytest.mark.parametrize("seed", range(8))
def test_forward_draws_follow_the_joint_with_structural_zeros(seed):
    """Zero probabilities (trailing, leading, whole rows but one state) are
    never drawn, and the rest follow the joint."""
    rng = np.random.default_rng(seed)
    net = random_structure(rng, 5)
    tables = {}
    for v in net.variables:
        t = rng.uniform(0.05, 1.0, size=tuple(net.cards[u] for u in net.families[v]))
        t[rng.random(t.shape) < 0.3] = 0.0
        flat = t.reshape(-1, t.shape[-1])
        empty = flat.sum(axis=1) == 0
        flat[empty, rng.integers(0, t.shape[-1], empty.sum())] = 1.0
        with np.errstate(divide="ignore"):
            tables[v] = np.log(t / t.sum(axis=-1, keepdims=True))
    bound = net.with_cpds(tables)
    draws = bound.sample(100_000, np.random.default_rng(seed + 100))
    assert chi_square_p(draws, joint_table(net, tables)) > LEVEL


@pytest.mark.parametrize("seed", range(8))
def test_posterior_draws_follow_the_posterior(seed):
    """Exact draws given evidence against the joint restricted to the
    evidence and normalised, by enumeration."""
    rng = np.random.default_rng(seed)
    net = random_structure(rng, 6)
    tables = random_tables(rng, net)
    bound = net.with_cpds(tables)
    n_observed = int(rng.integers(0, 3))
    chosen = rng.choice(6, n_observed, replace=False)
    codes = {
        net.variables[j]: int(rng.integers(0, net.cards[net.variables[j]]))
        for j in chosen
    }
    observed, values = bound.evidence({v: [x] for v, x in codes.items()})
    draws = posterior_sample(
        bound, observed, values, 60_000, np.random.default_rng(seed + 100)
    )
    joint = joint_table(net, tables)
    index = [slice(None)] * joint.ndim
    for v, x in codes.items():
        j = net.variables.index(v)
        index[j] = slice(x, x + 1)
        assert (draws[:, j] == x).all()
    posterior = np.zeros_like(joint)
    posterior[tuple(index)] = joint[tuple(index)]
    assert chi_square_p(draws, posterior) > LEVEL


def test_posterior_draws_are_independent():
    """A copy of a fair coin (a deterministic table) under evidence on a
    third variable: consecutive rows agree half the time, as independent
    draws do (Gibbs sampling never leaves its start there: every row of a
    chain is the same)."""
    net = BayesNet(DAG([("a", "b"), ("a", "c")]), {"a": 2, "b": 2, "c": 2})
    with np.errstate(divide="ignore"):
        tables = {
            "a": np.log([0.5, 0.5]),
            "b": np.log([[1.0, 0.0], [0.0, 1.0]]),
            "c": np.log([[0.6, 0.4], [0.3, 0.7]]),
        }
    bound = net.with_cpds(tables)
    observed, values = bound.evidence({"c": [0]})
    draws = posterior_sample(bound, observed, values, 20_000, np.random.default_rng(0))
    a = draws[:, net.variables.index("a")]
    assert (draws[:, net.variables.index("b")] == a).all()
    p = 0.6 / 0.9  # P(a = 0 | c = 0)
    agree = (a[1:] == a[:-1]).mean()
    expected = p**2 + (1 - p) ** 2
    se = np.sqrt(expected * (1 - expected) / (len(a) - 1))
    assert abs(agree - expected) < 6 * se


def test_evidence_of_probability_zero_is_an_error():
    net = BayesNet(DAG([("a", "b")]), {"a": 2, "b": 2})
    with np.errstate(divide="ignore"):
        tables = {"a": np.log([1.0, 0.0]), "b": np.log([[1.0, 0.0], [0.5, 0.5]])}
    bound = net.with_cpds(tables)
    observed, values = bound.evidence({"b": [1]})
    with pytest.raises(ValueError, match="probability zero"):
        posterior_sample(bound, observed, values, 5, np.random.default_rng(0))


def test_inversion_never_draws_past_the_last_positive_state():
    """``r + u`` rounds up to ``r + 1`` for ``u`` just below one and a large
    row ``r``: the draw stays on the row's last state of positive
    probability, never a trailing state of probability zero."""
    probs = np.tile([0.5, 0.5, 0.0], (2**20, 1))
    rows = np.full(4, 2**20 - 1)
    u = np.array([0.0, 0.25, 0.75, np.nextafter(1.0, 0.0)])
    np.testing.assert_array_equal(inverse_cdf_draw(probs, rows, u), [0, 0, 1, 1])
    np.testing.assert_array_equal(inverse_cdf_draw(probs, None, u), [0, 0, 1, 1])


# -- the marginals of every variable, one exponential per clique ---------------------
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.floats(0.0, 0.6))
def test_variable_marginals_equal_the_per_variable_path(seed, n, p_missing):
    """``BayesNet.marginals`` (each clique's belief exponentiated once for
    all its variables) against the joint by enumeration, restricted to each
    row's evidence; tables with structural zeros, so that some rows have
    probability zero (then every marginal stays -inf)."""
    rng = np.random.default_rng(seed)
    net = random_structure(rng, 5)
    tables = {}
    for v in net.variables:
        t = rng.uniform(0.05, 1.0, size=tuple(net.cards[u] for u in net.families[v]))
        t[rng.random(t.shape) < 0.2] = 0.0
        flat = t.reshape(-1, t.shape[-1])
        flat[flat.sum(axis=1) == 0, 0] = 1.0
        with np.errstate(divide="ignore"):
            tables[v] = np.log(t / t.sum(axis=-1, keepdims=True))
    bound = net.with_cpds(tables)
    joint = joint_table(net, tables)
    observed = [v for v in net.variables if rng.random() > 1 - p_missing]
    codes = {v: rng.integers(0, net.cards[v], n) for v in observed}
    observed_, values = bound.evidence(codes)
    post = bound.marginals(observed_, values)
    # The same as summing each clique's log belief down per variable.
    pat = bound._pattern(observed_, (), "all")
    beliefs, _ = pat.plan.calibrate(bound._arrays(pat, values), SUM_PRODUCT, n=n)
    for v in pat.hidden:
        c = pat.clique_of[v]
        old = pat.plan.normalized_marginal(beliefs[c], c, (v,))
        np.testing.assert_allclose(
            post.log_marginals[v], np.broadcast_to(old, post.log_marginals[v].shape)
        )
    for i in range(values.shape[0]):
        index = [slice(None)] * joint.ndim
        for v in observed:
            index[net.variables.index(v)] = slice(codes[v][i], codes[v][i] + 1)
        restricted = np.zeros_like(joint)
        restricted[tuple(index)] = joint[tuple(index)]
        total = restricted.sum()
        for j, v in enumerate(net.variables):
            if v in observed:
                continue
            got = post.log_marginals[v][i]
            if total == 0:  # the callers read log_evidence
                assert np.isneginf(post.log_evidence[i])
                continue
            axes = tuple(a for a in range(joint.ndim) if a != j)
            expected = restricted.sum(axis=axes) / total
            np.testing.assert_allclose(np.exp(got), expected, atol=1e-12)
