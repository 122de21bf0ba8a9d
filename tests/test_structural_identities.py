"""The structural identities behind "latent structure x emission x prior".

Each test computes both sides of an identity independently, through the public
API only: an HMM whose transitions forget the past is a mixture, naive Bayes is
belief propagation on the naive-Bayes DAG, the chain kernels are the junction
tree of the unrolled chain, a one-component-per-class mixture classifier is
QDA, and sum-product / max-product on tiny models are brute-force enumeration
of the joint. References: Rabiner (1989) for the chain, Koller and Friedman
(2009, chapters 9-10, 13) for the junction tree, Bishop (2006, chapters 8, 9,
13) for mixtures, trees and HMMs.
"""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning

from bayeskit import (
    BayesianNetwork,
    CategoricalHMM,
    CategoricalNB,
    GaussianHMM,
    GaussianMixture,
    GaussianMixtureClassifier,
    QuadraticDiscriminantAnalysis,
)
from bayeskit.graph import (
    DAG,
    MAX_PRODUCT,
    BayesNet,
    JunctionTree,
    LatentNode,
    LogFactor,
    TreeBP,
    forward,
    forward_backward,
    viterbi,
)

RTOL = 1e-10  # every identity below holds to rounding; 1e-10 leaves room for it
# Log-probabilities near 0 (evidence of probability near 1) compare absolutely:
# 1e-12 in log space is a relative 1e-12 on the probability.
LOG_ATOL = 1e-12


# ---------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------


def log(p):
    """Natural log with log(0) = -inf and no divide warning."""
    with np.errstate(divide="ignore"):
        return np.log(p)


def random_table(rng, shape, zeros=False):
    """A conditional table over the last axis; with ``zeros`` some entries are
    exactly 0 (every row keeps at least one positive entry)."""
    table = rng.dirichlet(np.ones(shape[-1]), size=shape[:-1])
    if zeros and shape[-1] > 1:
        mask = rng.random(table.shape) < 0.3
        keep = rng.integers(shape[-1], size=shape[:-1])
        np.put_along_axis(mask, keep[..., None], False, axis=-1)
        table = np.where(mask, 0.0, table)
        table /= table.sum(axis=-1, keepdims=True)
    return table


def enumerate_joint(variables, cards, log_prob_of):
    """``log p`` of every joint assignment, as an array with one axis per
    variable (in the order of ``variables``), by plain enumeration."""
    out = np.empty([cards[v] for v in variables])
    for states in itertools.product(*(range(cards[v]) for v in variables)):
        out[states] = log_prob_of(dict(zip(variables, states)))
    return out


def network_log_prob(parents, cpts):
    """``log P(assignment)`` of a Bayesian network given by probability CPTs
    (axes: parents in order, then the variable)."""

    def log_prob_of(a):
        total = 0.0
        for v, table in cpts.items():
            p = table[(*(a[u] for u in parents[v]), a[v])]
            total += log(p)
        return total

    return log_prob_of


def condition(joint, variables, evidence):
    """The joint restricted to ``evidence`` (dict variable -> state): the
    entries that disagree with it set to -inf."""
    out = joint.copy()
    for v, state in evidence.items():
        axis = variables.index(v)
        index = [slice(None)] * joint.ndim
        keep = np.ones(joint.shape[axis], dtype=bool)
        keep[state] = False
        index[axis] = keep
        out[tuple(index)] = -np.inf
    return out


def brute_marginal(joint, variables, targets):
    """Normalised ``P(targets | evidence)`` from a conditioned log joint."""
    others = tuple(i for i, v in enumerate(variables) if v not in targets)
    logm = logsumexp(joint, axis=others) if others else joint
    order = [v for v in variables if v in targets]
    logm = np.moveaxis(logm, [order.index(t) for t in targets], range(len(targets)))
    return np.exp(logm - logsumexp(joint))


def chain_paths(log_start, log_trans, log_emission):
    """``log p(x, z)`` of every state path of one sequence, one axis per step."""
    n_steps, k = log_emission.shape

    def log_prob_of(a):
        z = [a[t] for t in range(n_steps)]
        total = log_start[z[0]] + log_emission[0, z[0]]
        for t in range(1, n_steps):
            total += log_trans[z[t - 1], z[t]] + log_emission[t, z[t]]
        return total

    return enumerate_joint(
        list(range(n_steps)), dict.fromkeys(range(n_steps), k), log_prob_of
    )


def brute_chain(log_start, log_trans, log_emission):
    """Log-likelihood, step posteriors, expected transition counts and the
    log joint of every path of one sequence, by enumerating every path."""
    joint = chain_paths(log_start, log_trans, log_emission)
    n_steps = log_emission.shape[0]
    steps = list(range(n_steps))
    log_lik = logsumexp(joint)
    posterior = np.stack([brute_marginal(joint, steps, [t]) for t in steps])
    counts = sum(
        (brute_marginal(joint, steps, [t, t + 1]) for t in steps[:-1]),
        np.zeros((joint.shape[0],) * 2),
    )
    return log_lik, posterior, counts, joint


def assert_best_assignment(found, log_joint, reference=None):
    """``found`` (a tuple of states) attains the maximum of ``log_joint``;
    when the maximum is unique by more than rounding it is the argmax (and
    equals ``reference``, another solver's answer, if given). Exact ties
    (equal products of the same factors in another order) may go either way."""
    found = tuple(int(s) for s in found)
    best = log_joint.max()
    assert_allclose(log_joint[found], best, rtol=RTOL, atol=LOG_ATOL)
    runner_up = np.sort(log_joint, axis=None)[-2] if log_joint.size > 1 else -np.inf
    if best - runner_up > 1e-9 * max(1.0, abs(best)):
        assert found == np.unravel_index(np.argmax(log_joint), log_joint.shape)
        if reference is not None:
            assert found == tuple(int(s) for s in reference)


# ---------------------------------------------------------------------------
# An HMM whose transition rows all equal the start distribution is a mixture
# ---------------------------------------------------------------------------


def gaussian_parameters(rng, X, k, covariance_type):
    """Weights, means and covariances (in the covariance type's own shape)
    spread like the data ``X``, so that every component keeps a fair share
    of every row and every expected count is far above rounding (the case of
    vanishing counts is pinned separately, see
    test_baum_welch_keeps_small_expected_counts)."""
    d = X.shape[1]
    weights = rng.dirichlet(np.full(k, 5.0))
    means = X[rng.choice(len(X), k, replace=False)] * 0.5
    spread = X.var(axis=0).mean()
    q, _ = np.linalg.qr(rng.normal(size=(k, d, d)))
    full = np.einsum("kij,kj,klj->kil", q, rng.uniform(0.5, 1.5, (k, d)) * spread, q)
    covs = {
        "full": full,
        "tied": full[0],
        "diag": rng.uniform(0.5, 1.5, (k, d)) * spread,
        "spherical": rng.uniform(0.5, 1.5, k) * spread,
    }[covariance_type]
    return weights, means, covs


def precisions_of(covs, covariance_type):
    if covariance_type in ("full", "tied"):
        return np.linalg.inv(covs)
    return 1.0 / covs


def mixture_from(weights, means, covs, covariance_type, X, max_iter):
    """A GaussianMixture holding exactly these parameters (``max_iter=0``:
    nothing is estimated, scikit-learn's meaning of fully given initial
    parameters) or one EM step from them (``max_iter=1``)."""
    gm = GaussianMixture(
        len(weights),
        covariance_type=covariance_type,
        weights_init=weights,
        means_init=means,
        precisions_init=precisions_of(covs, covariance_type),
        reg_covar=0.0,
        max_iter=max_iter,
        tol=0.0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return gm.fit(X)


def iid_gaussian_hmm(weights, means, covs, covariance_type, **params):
    """A GaussianHMM set by hand whose every transition row is ``weights``,
    with maximum-likelihood updates (no covariance prior)."""
    k = len(weights)
    hmm = GaussianHMM(
        k,
        covariance_type=covariance_type,
        covars_prior=0.0,
        covars_weight=1.0,
        init_params="",
        tol=0.0,
        **params,
    )
    hmm.startprob_ = weights
    hmm.transmat_ = np.tile(weights, (k, 1))
    hmm.means_ = means
    hmm.covars_ = covs
    return hmm


COVARIANCE_TYPES = ["full", "tied", "diag", "spherical"]


@pytest.mark.parametrize("covariance_type", COVARIANCE_TYPES)
def test_gaussian_hmm_with_memoryless_transitions_scores_as_a_mixture(
    rng, covariance_type
):
    """With transmat rows equal to startprob, the chain factorises into iid
    steps: HMM log-likelihood and step posteriors equal the mixture's
    (Rabiner 1989, eqs. 18-27; Bishop 2006, section 13.2)."""
    X = rng.normal(0, 3, (23, 2))
    weights, means, covs = gaussian_parameters(rng, X, 3, covariance_type)
    lengths = np.array([7, 1, 10, 5])
    gm = mixture_from(weights, means, covs, covariance_type, X, max_iter=0)
    hmm = iid_gaussian_hmm(weights, means, covs, covariance_type)

    per_row = gm.score_samples(X)
    assert_allclose(hmm.score(X), per_row.sum(), rtol=RTOL)
    one_step = np.ones(len(X), dtype=int)  # every row its own sequence
    assert_allclose(hmm.score_sequences(X, one_step), per_row, rtol=RTOL)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    assert_allclose(
        hmm.score_sequences(X, lengths), np.add.reduceat(per_row, starts), rtol=RTOL
    )
    assert_allclose(hmm.predict_proba(X, lengths), gm.predict_proba(X), rtol=RTOL)
    assert_allclose(hmm.predict_proba(X), gm.predict_proba(X), rtol=RTOL)


@pytest.mark.parametrize("covariance_type", COVARIANCE_TYPES)
def test_gaussian_hmm_baum_welch_step_on_memoryless_chain_is_an_em_step(
    rng, covariance_type
):
    """One Baum-Welch step on one-step sequences from memoryless transitions
    is one EM step of the mixture from the same parameters: startprob_ is
    the new weights_, and means and covariances agree (Rabiner 1989, eqs.
    40a-c and 53; Bishop 2006, eqs. 9.24-9.26)."""
    X = rng.normal(0, 3, (31, 2))
    weights, means, covs = gaussian_parameters(rng, X, 3, covariance_type)
    gm = mixture_from(weights, means, covs, covariance_type, X, max_iter=1)
    hmm = iid_gaussian_hmm(weights, means, covs, covariance_type, n_iter=1)
    hmm.set_params(params="smc")  # no transitions in one-step sequences
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        hmm.fit(X, np.ones(len(X), dtype=int))

    # atol: the mixture adds scikit-learn's 10 eps to every component's weight.
    assert_allclose(hmm.startprob_, gm.weights_, rtol=RTOL, atol=1e-15)
    assert_allclose(hmm.means_, gm.means_, rtol=RTOL)
    assert_allclose(hmm.covariances_, gm.covariances_, rtol=RTOL)
    # The monitored objective of that step is the log-likelihood at the start
    # (no prior): the mixture's per-sample bound times the number of rows.
    assert_allclose(hmm.monitor_.history[0], gm.lower_bounds_[0] * len(X), rtol=RTOL)


@pytest.mark.parametrize("covariance_type", ["full", "diag"])
def test_gaussian_hmm_baum_welch_step_on_one_sequence_from_mixture_posteriors(
    rng, covariance_type
):
    """On one long sequence from memoryless transitions, the step posteriors
    are the mixture responsibilities r_t and the pair posteriors their outer
    products, so one Baum-Welch step gives startprob = r_1, transmat rows
    proportional to sum_t r_t r_{t+1}^T, and the mixture's EM means and
    covariances (Rabiner 1989, eqs. 37-40)."""
    X = rng.normal(0, 3, (29, 2))
    weights, means, covs = gaussian_parameters(rng, X, 3, covariance_type)
    r = mixture_from(weights, means, covs, covariance_type, X, 0).predict_proba(X)
    gm = mixture_from(weights, means, covs, covariance_type, X, max_iter=1)
    hmm = iid_gaussian_hmm(weights, means, covs, covariance_type, n_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        hmm.fit(X)

    pairs = r[:-1].T @ r[1:]
    # atol: a single row's responsibilities may be tiny; the M-step's absolute
    # rounding on them is pinned by test_baum_welch_keeps_small_expected_counts.
    assert_allclose(hmm.startprob_, r[0], rtol=RTOL, atol=1e-15)
    assert_allclose(hmm.transmat_, pairs / pairs.sum(axis=1, keepdims=True), rtol=RTOL)
    assert_allclose(hmm.means_, gm.means_, rtol=RTOL)
    assert_allclose(hmm.covariances_, gm.covariances_, rtol=RTOL)


def brute_categorical_mixture(weights, emissionprob, symbols):
    """Per-step log-likelihood and responsibilities of a categorical mixture."""
    log_joint = log(weights) + log(emissionprob[:, symbols].T)
    log_lik = logsumexp(log_joint, axis=1)
    return log_lik, np.exp(log_joint - log_lik[:, None])


def iid_categorical_hmm(weights, emissionprob, **params):
    k, m = emissionprob.shape
    hmm = CategoricalHMM(k, n_features=m, init_params="", tol=0.0, **params)
    hmm.startprob_ = weights
    hmm.transmat_ = np.tile(weights, (k, 1))
    hmm.emissionprob_ = emissionprob
    return hmm


def test_categorical_hmm_with_memoryless_transitions_is_a_categorical_mixture(rng):
    """A CategoricalHMM whose transitions forget the past scores, decodes
    marginally and re-estimates as the categorical mixture computed here by
    hand (Rabiner 1989, eqs. 18-27 and 40; Bishop 2006, section 9.3.3)."""
    k, m = 3, 5
    # Spread-out tables: every expected count far above rounding.
    weights = rng.dirichlet(np.full(k, 5.0))
    emissionprob = rng.dirichlet(np.full(m, 5.0), size=k)
    x = rng.integers(0, m, 40)
    x[:m] = np.arange(m)  # every symbol seen
    lengths = np.array([12, 1, 20, 7])
    log_lik, resp = brute_categorical_mixture(weights, emissionprob, x)

    hmm = iid_categorical_hmm(weights, emissionprob)
    X = x[:, None]
    assert_allclose(hmm.score(X), log_lik.sum(), rtol=RTOL)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    assert_allclose(
        hmm.score_sequences(X, lengths), np.add.reduceat(log_lik, starts), rtol=RTOL
    )
    assert_allclose(hmm.predict_proba(X, lengths), resp, rtol=RTOL)
    assert_array_equal(
        hmm.decode(X, lengths, algorithm="map")[1], np.argmax(resp, axis=1)
    )

    # One EM step on one-step sequences: the mixture's M-step.
    step = iid_categorical_hmm(weights, emissionprob, n_iter=1, params="se")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        step.fit(X, np.ones(len(x), dtype=int))
    counts = resp.T @ np.eye(m)[x]
    assert_allclose(step.startprob_, resp.mean(axis=0), rtol=RTOL)
    assert_allclose(
        step.emissionprob_, counts / counts.sum(axis=1, keepdims=True), rtol=RTOL
    )
    assert_allclose(step.monitor_.history[0], log_lik.sum(), rtol=RTOL)

    # One EM step on the single long sequence: pair posteriors are outer
    # products of the responsibilities.
    long = iid_categorical_hmm(weights, emissionprob, n_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        long.fit(X)
    pairs = resp[:-1].T @ resp[1:]
    assert_allclose(long.startprob_, resp[0], rtol=RTOL, atol=1e-15)
    assert_allclose(long.transmat_, pairs / pairs.sum(axis=1, keepdims=True), rtol=RTOL)
    assert_allclose(
        long.emissionprob_, counts / counts.sum(axis=1, keepdims=True), rtol=RTOL
    )


def test_baum_welch_keeps_small_expected_counts():
    """With the flat Dirichlet prior (concentration 1) the M-step is maximum
    likelihood: transmat_ rows are the expected transition counts normalised,
    however small the counts (Rabiner 1989, eq. 40b). Memoryless transitions
    and a state that emits the observed symbol with probability 1e-9 give
    counts of order 1e-18 into that state from itself."""
    weights = np.array([0.5, 0.5])
    emissionprob = np.array([[1 - 1e-9, 1e-9], [1e-9, 1 - 1e-9]])
    x = np.zeros(5, dtype=int)
    _, resp = brute_categorical_mixture(weights, emissionprob, x)
    hmm = iid_categorical_hmm(weights, emissionprob, n_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        hmm.fit(x[:, None])
    pairs = resp[:-1].T @ resp[1:]
    assert_allclose(hmm.startprob_, resp[0], rtol=RTOL)
    assert_allclose(hmm.transmat_, pairs / pairs.sum(axis=1, keepdims=True), rtol=RTOL)


# ---------------------------------------------------------------------------
# Naive Bayes is belief propagation on the naive-Bayes DAG
# ---------------------------------------------------------------------------


def naive_bayes_data(rng, n=80, cards=(2, 3, 4), n_classes=3, missing=0.2):
    """Codes 0..t_j - 1 (every code and class present) with NaN cells, and a
    row with every feature missing."""
    X = np.column_stack([rng.integers(0, c, n) for c in cards]).astype(float)
    y = rng.integers(0, n_classes, n)
    y[:n_classes] = np.arange(n_classes)
    top = max(cards)
    for i in range(top):
        X[n_classes + i] = [min(i, c - 1) for c in cards]
    X[rng.random(X.shape) < missing] = np.nan
    X[-1] = np.nan
    return X, y


def naive_bayes_network(nb, features):
    """The DAG class -> every feature, with the fitted naive Bayes tables."""
    k = len(nb.classes_)
    dag = DAG([("class", f) for f in features], nodes=["class", *features])
    cards = {
        "class": k,
        **{f: t.shape[1] for f, t in zip(features, nb.feature_log_prob_)},
    }
    cpds = {"class": nb.class_log_prior_ - logsumexp(nb.class_log_prior_)}
    cpds.update(zip(features, nb.feature_log_prob_))
    return BayesNet(dag, cards, cpds)


SMOOTHINGS = [
    pytest.param({}, id="alpha=1"),
    pytest.param({"m": 2.0, "prior_m": 1.5}, id="m=2"),
    pytest.param({"m": 0.0}, id="m=0"),
    pytest.param({"m": [0.5, 3.0, 1.0], "prior_m": 4.0}, id="m-per-feature"),
]


@pytest.mark.parametrize("smoothing", SMOOTHINGS)
def test_categorical_nb_posterior_is_the_junction_tree_posterior(rng, smoothing):
    """CategoricalNB's predict_proba is the posterior of the class node on
    the naive-Bayes DAG with its fitted tables, computed by the junction tree;
    a missing feature left out of the product equals that feature summed out
    by the network (Koller and Friedman 2009, sections 3.1.3 and 19.1)."""
    X, y = naive_bayes_data(rng)
    features = ["f0", "f1", "f2"]
    nb = CategoricalNB(**smoothing).fit(X, y)
    net = naive_bayes_network(nb, features)

    expected = np.empty((len(X), len(nb.classes_)))
    missing = np.isnan(X)
    for rows, observed in BayesNet.group_rows(missing):
        codes = {features[j]: X[rows, j].astype(int) for j in np.flatnonzero(observed)}
        log_post = net.posterior(*net.evidence(codes), ("class",)).log_marginals[
            ("class",)
        ]
        expected[rows] = np.exp(log_post)
    assert missing.any(axis=1).any() and missing.all(axis=1).any()
    assert_allclose(nb.predict_proba(X), expected, rtol=RTOL, atol=1e-300)


@pytest.mark.parametrize("smoothing", SMOOTHINGS)
def test_categorical_nb_equals_bayesian_network_fitted_on_the_same_rows(rng, smoothing):
    """A BayesianNetwork with edges class -> feature, fitted with the same
    m-estimate (alpha = m / t_j with uniform p; prior_m as the class node's
    m), learns the naive Bayes tables and predicts its posterior with the
    class unobserved (Mitchell 1997, section 6.9.1.1; Koller and Friedman
    2009, section 17.3)."""
    X, y = naive_bayes_data(rng)
    cards = [2, 3, 4]
    features = ["f0", "f1", "f2"]
    nb = CategoricalNB(**smoothing).fit(X, y)
    m = np.broadcast_to(smoothing.get("m", np.array(cards, dtype=float)), (3,))
    bn = BayesianNetwork(
        [("class", f) for f in features],
        m={"class": smoothing.get("prior_m", 0.0), **dict(zip(features, m))},
        states={
            "class": list(nb.classes_),
            **{f: [float(c) for c in range(t)] for f, t in zip(features, cards)},
        },
        missing="available",  # as CategoricalNB, which leaves missing cells out
    )
    df = pd.DataFrame(X, columns=features)
    df.insert(0, "class", y)
    bn.fit(df)

    for j, f in enumerate(features):
        assert_allclose(log(bn.cpds_[f]), nb.feature_log_prob_[j], rtol=RTOL)
    assert_allclose(log(bn.cpds_["class"]), nb.class_log_prior_, rtol=RTOL)
    proba = bn.predict_proba(df.assign(**{"class": np.nan}), variable="class")
    assert_allclose(proba.to_numpy(), nb.predict_proba(X), rtol=RTOL, atol=1e-300)


# ---------------------------------------------------------------------------
# Chain kernels are the junction tree of the unrolled chain
# ---------------------------------------------------------------------------


def unrolled_chain(n_steps, k):
    """The DAG z0 -> z1 -> ... and its junction tree."""
    zs = [f"z{t}" for t in range(n_steps)]
    dag = DAG(list(itertools.pairwise(zs)), nodes=zs)
    return zs, JunctionTree.from_dag(dag, dict.fromkeys(zs, k))


def chain_factors(zs, k, log_start, log_trans, log_emission):
    """Start, transition and emission log-potentials of the unrolled chain."""
    factors = [LogFactor([zs[0]], [k], log_start)]
    factors += [LogFactor([a, b], [k, k], log_trans) for a, b in itertools.pairwise(zs)]
    factors += [LogFactor([z], [k], e) for z, e in zip(zs, log_emission)]
    return factors


def random_chain(rng, k, zeros):
    start = rng.dirichlet(np.ones(k))
    if zeros:
        start[rng.integers(k)] = 0.0
        start /= start.sum()
    return log(start), log(random_table(rng, (k, k), zeros=zeros))


CHAINS = [
    pytest.param(n_steps, k, zeros, id=f"T={n_steps}-k={k}{'-zeros' if zeros else ''}")
    for n_steps in range(2, 7)
    for k, zeros in ((2, False), (3, False), (3, True))
]


@pytest.mark.parametrize(("n_steps", "k", "zeros"), CHAINS)
def test_forward_backward_equals_junction_tree_of_unrolled_chain(
    rng, n_steps, k, zeros
):
    """forward_backward's log-likelihood, step posteriors and expected
    transition counts equal the calibrated junction tree of z_1 -> ... -> z_T
    with the emissions as unary potentials, and brute-force enumeration of all
    paths (Rabiner 1989, eqs. 18-27 and 37; Koller and Friedman 2009,
    section 13.3)."""
    log_start, log_trans = random_chain(rng, k, zeros)
    log_emission = rng.normal(0, 2, (n_steps, k))
    zs, tree = unrolled_chain(n_steps, k)
    cal = tree.calibrate(chain_factors(zs, k, log_start, log_trans, log_emission))
    jt_post = np.stack([np.exp(cal.marginal([z]).log_values) for z in zs])
    jt_counts = sum(
        np.exp(cal.marginal([a, b]).log_values) for a, b in itertools.pairwise(zs)
    )
    log_lik, post, counts, _ = brute_chain(log_start, log_trans, log_emission)

    fb = forward_backward(log_start, log_trans, log_emission)
    assert_allclose(fb.log_likelihood, [cal.log_partition], rtol=RTOL)
    assert_allclose(fb.log_likelihood, [log_lik], rtol=RTOL)
    assert_allclose(fb.posterior, jt_post, rtol=RTOL, atol=1e-14)
    assert_allclose(fb.posterior, post, rtol=RTOL, atol=1e-14)
    assert_allclose(fb.transition_counts, jt_counts, rtol=RTOL, atol=1e-14)
    assert_allclose(fb.transition_counts, counts, rtol=RTOL, atol=1e-14)
    assert_allclose(
        forward(log_start, log_trans, log_emission).log_likelihood, [log_lik], rtol=RTOL
    )


@pytest.mark.parametrize(("n_steps", "k", "zeros"), CHAINS)
def test_viterbi_equals_brute_force_argmax_and_junction_tree_max_product(
    rng, n_steps, k, zeros
):
    """viterbi's path and log probability are the argmax and max of log p(x, z)
    over every path, and the max-product assignment of the unrolled chain's
    junction tree (Rabiner 1989, eqs. 30-35; Koller and Friedman 2009,
    section 13.3)."""
    log_start, log_trans = random_chain(rng, k, zeros)
    log_emission = rng.normal(0, 2, (n_steps, k))
    zs, tree = unrolled_chain(n_steps, k)
    mp = tree.max_product(chain_factors(zs, k, log_start, log_trans, log_emission))
    joint = brute_chain(log_start, log_trans, log_emission)[3]

    path, log_prob = viterbi(log_start, log_trans, log_emission)
    column = {v: i for i, v in enumerate(mp.nodes)}
    jt_path = mp.assignment[0, [column[z] for z in zs]]
    assert_best_assignment(path, joint, reference=jt_path)
    assert_best_assignment(jt_path, joint)
    assert_allclose(log_prob, [joint.max()], rtol=RTOL, atol=LOG_ATOL)
    assert_allclose(mp.log_score, [joint.max()], rtol=RTOL, atol=LOG_ATOL)


def test_chain_kernels_on_many_sequences_equal_one_call_per_sequence(rng):
    """Concatenated sequences with lengths are independent chains: each one's
    results equal the brute-force enumeration of that sequence alone (the
    expected counts add over sequences; Rabiner 1989, eq. 109)."""
    k = 3
    log_start, log_trans = random_chain(rng, k, zeros=True)
    lengths = np.array([3, 1, 5, 2, 4])
    log_emission = rng.normal(0, 2, (lengths.sum(), k))
    fb = forward_backward(log_start, log_trans, log_emission, lengths)
    path, log_prob = viterbi(log_start, log_trans, log_emission, lengths)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    counts = np.zeros((k, k))
    for n, (s, e) in enumerate(itertools.pairwise(bounds)):
        ll, post, c, joint = brute_chain(log_start, log_trans, log_emission[s:e])
        assert_allclose(fb.log_likelihood[n], ll, rtol=RTOL)
        assert_allclose(fb.posterior[s:e], post, rtol=RTOL, atol=1e-14)
        assert_best_assignment(path[s:e], joint)
        assert_allclose(log_prob[n], joint.max(), rtol=RTOL, atol=LOG_ATOL)
        counts += c
    assert_allclose(fb.transition_counts, counts, rtol=RTOL, atol=1e-14)


@pytest.mark.parametrize("n_steps", [2, 4, 6])
def test_categorical_chain_equals_bayes_net_with_observed_emissions(rng, n_steps):
    """With categorical emissions the HMM is the Bayesian network z_t -> z_{t+1},
    z_t -> x_t; forward_backward with ``symbols`` equals that network's
    posteriors and log-likelihood for a batch of observed sequences (one row
    each), and viterbi equals its MAP assignment (Koller and Friedman 2009,
    section 6.2.3.1; Rabiner 1989, section III)."""
    k, m, n_seq = 3, 4, 5
    start = rng.dirichlet(np.ones(k))
    trans = random_table(rng, (k, k), zeros=True)
    emit = random_table(rng, (k, m))
    x = rng.integers(0, m, (n_seq, n_steps))
    zs = [f"z{t}" for t in range(n_steps)]
    xs = [f"x{t}" for t in range(n_steps)]
    dag = DAG(list(itertools.pairwise(zs)) + list(zip(zs, xs)), nodes=zs + xs)
    net = BayesNet(
        dag,
        {**dict.fromkeys(zs, k), **dict.fromkeys(xs, m)},
        {
            zs[0]: log(start),
            **dict.fromkeys(zs[1:], log(trans)),
            **dict.fromkeys(xs, log(emit)),
        },
    )
    ev = net.evidence({xs[t]: x[:, t] for t in range(n_steps)})
    result = net.marginals(*ev)
    marginals, log_z = result.log_marginals, result.log_evidence
    assignment, score = net.map(*ev)

    lengths = np.full(n_seq, n_steps)
    fb = forward_backward(
        log(start), log(trans), log(emit).T, lengths, symbols=x.ravel()
    )
    path, log_prob = viterbi(
        log(start), log(trans), log(emit).T, lengths, symbols=x.ravel()
    )
    assert_allclose(fb.log_likelihood, log_z, rtol=RTOL)
    assert_allclose(net.log_likelihood(*ev), log_z, rtol=RTOL)
    expected = np.stack([np.exp(marginals[z]) for z in zs], axis=1).reshape(-1, k)
    assert_allclose(fb.posterior, expected, rtol=RTOL, atol=1e-14)
    assert_allclose(log_prob, score, rtol=RTOL)
    for n, (p, seq) in enumerate(zip(path.reshape(n_seq, n_steps), x)):
        joint = chain_paths(log(start), log(trans), log(emit)[:, seq].T)
        assert_best_assignment(p, joint, reference=[assignment[z][n] for z in zs])
    # The expected symbol counts are the posteriors summed per observed symbol.
    assert_allclose(
        fb.symbol_counts, np.eye(m)[x.ravel()].T @ expected, rtol=RTOL, atol=1e-14
    )


def test_forward_backward_posterior_rows_sum_to_one_on_large_log_likelihoods():
    """With emission log-likelihoods around -1.5e12 (a Gaussian HMM scoring
    points about 1e6 standard deviations away) and a zero start probability,
    the posterior is a point mass on the single best path, by a margin of
    1e9 nats; every posterior row must be that one-hot row (Rabiner 1989,
    eq. 27: gamma_t sums to one by construction)."""
    log_start = log(np.array([0.0, 1.0]))
    log_trans = log(np.array([[0.0, 1.0], [0.75, 0.25]]))
    log_emission = np.array(
        [
            [-1505442590000.0, -1503163000000.0],
            [-1495883690000.0, -1489574870000.0],
            [-1501285350000.0, -1486335370000.0],
            [-1506651950000.0, -1496484900000.0],
        ]
    )
    path, _ = viterbi(log_start, log_trans, log_emission)
    assert_array_equal(path, [1, 1, 1, 1])
    fb = forward_backward(log_start, log_trans, log_emission)
    assert_allclose(fb.posterior, np.eye(2)[path], rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------
# GaussianMixtureClassifier with one component per class is QDA
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("prior_weight", [0.0, 2.5])
@pytest.mark.parametrize("weighted", [False, True])
def test_one_component_mixture_classifier_is_qda(rng, prior_weight, weighted):
    """A Gaussian class-conditional 'mixture' of one full-covariance component
    is QDA's class density: with the same covariance prior (reg_covar=0 and
    reg_param=0, covariance_prior(_weight) on both) the means, covariances,
    joint log-likelihoods and posteriors agree (Bishop 2006, section 4.2.2;
    Hastie et al. 2009, section 4.3)."""
    k, d = 3, 3
    mix = np.eye(d) + 0.4 * rng.normal(size=(k, d, d))  # well-conditioned classes
    X = np.vstack([rng.normal(2 * c, 1.0, (25, d)) @ mix[c] for c in range(k)])
    y = np.repeat(np.array(["a", "b", "c"]), 25)
    sw = rng.integers(1, 4, len(y)).astype(float) if weighted else None
    prior = np.diag(rng.uniform(0.5, 2.0, d))
    gmc = GaussianMixtureClassifier(
        1,
        reg_covar=0.0,
        covariance_prior=prior,
        covariance_prior_weight=prior_weight,
        random_state=0,
    ).fit(X, y, sample_weight=sw)
    qda = QuadraticDiscriminantAnalysis(
        store_covariance=True,
        covariance_prior=prior,
        covariance_prior_weight=prior_weight,
    ).fit(X, y, sample_weight=sw)

    assert_array_equal(gmc.classes_, qda.classes_)
    assert_allclose(gmc.class_log_prior_, np.log(qda.priors_), rtol=RTOL)
    for c, gm in enumerate(gmc.mixtures_):
        assert_allclose(gm.means_[0], qda.means_[c], rtol=RTOL)
        assert_allclose(gm.covariances_[0], qda.covariance_[c], rtol=RTOL, atol=1e-13)
    T = rng.normal(2, 4, (40, d))
    assert_allclose(
        gmc.predict_joint_log_proba(T), qda.predict_joint_log_proba(T), rtol=RTOL
    )
    assert_allclose(gmc.predict_proba(T), qda.predict_proba(T), rtol=1e-9, atol=1e-300)
    assert_array_equal(gmc.predict(T), qda.predict(T))


# ---------------------------------------------------------------------------
# Sum-product and max-product on tiny models equal brute-force enumeration
# ---------------------------------------------------------------------------


def test_latent_node_posterior_is_normalised_prior_times_likelihood(rng):
    """The one-node tree: posterior = prior x message / evidence, the evidence
    summed by enumeration of the node's states (Bishop 2006, eq. 8.63)."""
    k, n = 4, 7
    log_prior = log(rng.dirichlet(np.ones(k)))
    log_lik = rng.normal(0, 5, (n, k))
    log_lik[0, 1] = -np.inf
    post = LatentNode(k).posterior(log_lik, log_prior)
    joint = np.exp(log_lik + log_prior)
    assert_allclose(
        np.exp(post.log_resp), joint / joint.sum(1, keepdims=True), rtol=RTOL
    )
    assert_allclose(post.log_evidence, np.log(joint.sum(1)), rtol=RTOL)
    assert_array_equal(LatentNode(k).decode(log_lik, log_prior), np.argmax(joint, 1))


TREE_PARENTS = {"A": (), "B": ("A",), "C": ("A",), "D": ("B",), "E": ("B",)}
TREE_CARDS = {"A": 3, "B": 2, "C": 3, "D": 2, "E": 4}


def random_network(rng, parents, cards, zeros):
    return {
        v: random_table(rng, tuple(cards[u] for u in (*ps, v)), zeros=zeros)
        for v, ps in parents.items()
    }


@pytest.mark.parametrize("zeros", [False, True])
def test_tree_sum_product_and_max_product_equal_enumeration(rng, zeros):
    """TreeBP on a tree-shaped network, with evidence that differs per row
    (-1: unobserved) and soft evidence, gives every node's marginal, the log
    partition function and the most probable assignment of brute-force
    enumeration of the joint (Bishop 2006, sections 8.4.4-8.4.5)."""
    variables = list(TREE_PARENTS)
    cpts = random_network(rng, TREE_PARENTS, TREE_CARDS, zeros)
    bp = TreeBP.from_cpts(
        TREE_CARDS,
        {v: (ps[0] if ps else None, cpts[v]) for v, ps in TREE_PARENTS.items()},
    )
    joint = enumerate_joint(variables, TREE_CARDS, network_log_prob(TREE_PARENTS, cpts))
    # Evidence rows: states of assignments of positive probability, some hidden.
    flat = rng.choice(joint.size, size=6, p=np.exp(joint).ravel())
    states = np.array(np.unravel_index(flat, joint.shape)).T
    hide = rng.random(states.shape) < 0.5
    hide[0] = True  # no evidence at all
    evidence = np.where(hide, -1, states)
    soft = {"C": rng.normal(0, 1, (6, TREE_CARDS["C"]))}

    sp = bp.sum_product(
        evidence={"D": evidence[:, 3], "E": evidence[:, 4], "B": evidence[:, 1]},
        log_unary=soft,
    )
    mp = bp.max_product(
        evidence={"D": evidence[:, 3], "E": evidence[:, 4], "B": evidence[:, 1]},
        log_unary=soft,
    )
    for r in range(6):
        ev = {
            v: evidence[r, i]
            for i, v in enumerate(variables)
            if v in "BDE" and evidence[r, i] >= 0
        }
        cond = condition(joint, variables, ev)
        cond = cond + np.expand_dims(soft["C"][r], (0, 1, 3, 4))
        assert_allclose(sp.log_partition[r], logsumexp(cond), rtol=RTOL, atol=LOG_ATOL)
        for v in variables:
            assert_allclose(
                sp.marginal(v)[r],
                brute_marginal(cond, variables, [v]),
                rtol=RTOL,
                atol=1e-14,
            )
        column = {v: i for i, v in enumerate(mp.nodes)}
        assert_best_assignment(mp.assignment[r, [column[v] for v in variables]], cond)
        assert_allclose(mp.log_score[r], cond.max(), rtol=RTOL, atol=LOG_ATOL)


LOOPY_PARENTS = {
    "A": (),
    "B": ("A",),
    "C": ("A",),
    "D": ("B", "C"),
    "E": ("D",),
    "F": ("C", "E"),
}
LOOPY_CARDS = {"A": 2, "B": 3, "C": 2, "D": 3, "E": 2, "F": 3}


@pytest.mark.parametrize("zeros", [False, True])
def test_bayes_net_queries_equal_enumeration_on_a_loopy_dag(rng, zeros):
    """BayesNet on a DAG with two undirected cycles (triangulated into a
    junction tree) answers every query of brute-force enumeration: marginals
    of all hidden variables, a joint posterior of two variables in different
    cliques, log P(evidence), and the MAP assignment, for every pattern of
    observed variables tried (Koller and Friedman 2009, sections 9.2 and
    10.2-10.3, 13.3)."""
    variables = list(LOOPY_PARENTS)
    cpts = random_network(rng, LOOPY_PARENTS, LOOPY_CARDS, zeros)
    net = BayesNet(
        DAG([(u, v) for v, ps in LOOPY_PARENTS.items() for u in ps], nodes=variables),
        LOOPY_CARDS,
        {v: log(t) for v, t in cpts.items()},
    )
    joint = enumerate_joint(
        variables, LOOPY_CARDS, network_log_prob(LOOPY_PARENTS, cpts)
    )
    flat = rng.choice(joint.size, size=4, p=np.exp(joint).ravel())
    states = np.array(np.unravel_index(flat, joint.shape)).T
    for observed in [(), ("F",), ("A", "E"), ("B", "C", "F"), ("D", "E", "F")]:
        cols = [variables.index(v) for v in observed]
        ev = net.evidence({v: states[:, c] for v, c in zip(observed, cols)})
        result = net.marginals(*ev)
        marginals, log_z = result.log_marginals, result.log_evidence
        assignment, score = net.map(*ev)
        hidden = [v for v in variables if v not in observed]
        pair = ("A", "F") if "A" in hidden and "F" in hidden else None
        if pair:
            joint_post = net.posterior(*ev, pair).log_marginals[pair]
        for r in range(ev[1].shape[0]):
            cond = condition(
                joint, variables, {v: states[r, c] for v, c in zip(observed, cols)}
            )
            assert_allclose(log_z[r], logsumexp(cond), rtol=RTOL, atol=LOG_ATOL)
            assert_allclose(
                net.log_likelihood(*ev)[r], logsumexp(cond), rtol=RTOL, atol=LOG_ATOL
            )
            for v in hidden:
                assert_allclose(
                    np.exp(marginals[v][r]),
                    brute_marginal(cond, variables, [v]),
                    rtol=RTOL,
                    atol=1e-14,
                )
            if pair:
                assert_allclose(
                    np.exp(joint_post[r]),
                    brute_marginal(cond, variables, list(pair)),
                    rtol=RTOL,
                    atol=1e-14,
                )
            found = {v: assignment[v][r] for v in hidden}
            found.update({v: states[r, c] for v, c in zip(observed, cols)})
            assert_best_assignment([found[v] for v in variables], cond)
            assert_allclose(score[r], cond.max(), rtol=RTOL, atol=LOG_ATOL)


def test_junction_tree_calibration_on_factors_equals_enumeration(rng):
    """JunctionTree.calibrate on arbitrary positive and zero log-potentials
    (not CPTs) over a DAG's moral graph, batched over rows of evidence, gives
    each clique's normalised marginal and the log partition function of the
    product, and MAX_PRODUCT calibration gives the max-marginals
    (Koller and Friedman 2009, sections 10.2-10.3 and 13.3)."""
    variables = list(LOOPY_PARENTS)
    dag = DAG([(u, v) for v, ps in LOOPY_PARENTS.items() for u in ps], nodes=variables)
    tree = JunctionTree.from_dag(dag, LOOPY_CARDS)
    # Zero potentials everywhere but on one joint assignment, which keeps the
    # product's mass positive.
    kept = {v: rng.integers(LOOPY_CARDS[v]) for v in variables}
    factors, tables = [], {}
    for v, ps in LOOPY_PARENTS.items():
        scope = (*ps, v)
        values = rng.normal(0, 1, tuple(LOOPY_CARDS[u] for u in scope))
        values[rng.random(values.shape) < 0.15] = -np.inf
        values[tuple(kept[u] for u in scope)] = 0.0
        tables[scope] = values
        factors.append(LogFactor(scope, [LOOPY_CARDS[u] for u in scope], values))
    n = 3
    soft = rng.normal(0, 1, (n, LOOPY_CARDS["E"]))
    factors.append(LogFactor(["E"], [LOOPY_CARDS["E"]], soft))

    def log_potential(a):
        return sum(t[tuple(a[u] for u in scope)] for scope, t in tables.items())

    base = enumerate_joint(variables, LOOPY_CARDS, log_potential)
    cal = tree.calibrate(factors)
    maxcal = tree.calibrate(factors, MAX_PRODUCT)
    for r in range(n):
        full = base + np.expand_dims(
            soft[r], tuple(i for i, v in enumerate(variables) if v != "E")
        )
        assert_allclose(cal.log_partition[r], logsumexp(full), rtol=RTOL, atol=LOG_ATOL)
        assert_allclose(maxcal.log_partition[r], full.max(), rtol=RTOL, atol=LOG_ATOL)
        for clique in tree.layouts:
            got = np.exp(cal.marginal(clique).log_values[r])
            assert_allclose(
                got,
                brute_marginal(full, variables, list(clique)),
                rtol=RTOL,
                atol=1e-14,
            )
            others = tuple(i for i, v in enumerate(variables) if v not in clique)
            order = [v for v in variables if v in clique]
            expected = np.moveaxis(
                full.max(axis=others),
                [order.index(v) for v in clique],
                range(len(clique)),
            )
            assert_allclose(
                maxcal.marginal(clique).log_values[r],
                expected,
                rtol=RTOL,
                atol=LOG_ATOL,
            )
