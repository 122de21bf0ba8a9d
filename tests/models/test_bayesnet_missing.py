"""Bayesian networks learnt from incomplete data: EM over missing cells and
declared latent variables, against enumeration of the joint, against pgmpy's
``ExpectationMaximization`` from the same start, and on data sampled from
known networks."""

import copy
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning

from bayeskit import BayesianNetwork
from bayeskit.datasets import load_network
from bayeskit.graph import _network_em as network_em


# -- helpers ---------------------------------------------------------------------------
def random_truth(rng, n_nodes, max_parents=2):
    """A network over v0..v{n-1} with states 0..k-1 and random CPTs."""
    names = [f"v{i}" for i in range(n_nodes)]
    edges = []
    for j in range(1, n_nodes):
        parents = [i for i in range(j) if rng.random() < 0.5][:max_parents]
        edges += [(names[i], names[j]) for i in parents]
    states = {v: list(range(int(rng.integers(2, 4)))) for v in names}
    bn = BayesianNetwork(edges, states=states)
    for v in names:
        pcards = [len(states[u]) for u, w in edges if w == v]
        table = rng.uniform(0.1, 1.0, size=(*pcards, len(states[v])))
        bn.set_cpd(v, table / table.sum(axis=-1, keepdims=True))
    return bn


def hide(rng, df, fraction):
    """``df`` (as objects) with a random ``fraction`` of its cells None."""
    out = df.astype(object)
    return out.mask(rng.random(out.shape) < fraction, None)


def enumerate_joint(bn):
    """Every joint assignment (codes) and its log-probability."""
    variables = bn.variables_
    cards = [len(bn.states_[v]) for v in variables]
    grid = np.array(list(itertools.product(*map(range, cards))))
    log_p = np.zeros(len(grid))
    col = {v: j for j, v in enumerate(variables)}
    for v in variables:
        family = [*bn.dag_.parents(v), v]
        with np.errstate(divide="ignore"):
            table = np.log(bn.cpds_[v])
        log_p += table[tuple(grid[:, col[u]] for u in family)]
    return grid, log_p


def brute_force_e_step(bn, codes, weights):
    """Expected family counts and the observed-data log-likelihood, by
    summing the joint over every completion of every row."""
    grid, log_p = enumerate_joint(bn)
    col = {v: j for j, v in enumerate(bn.variables_)}
    counts = {
        v: np.zeros(tuple(len(bn.states_[u]) for u in [*bn.dag_.parents(v), v]))
        for v in bn.variables_
    }
    total = 0.0
    for row, w in zip(codes, weights):
        ok = np.all((row < 0) | (grid == row), axis=1)
        ll = logsumexp(log_p[ok])
        total += w * ll
        post = np.exp(log_p[ok] - ll)
        for v in bn.variables_:
            family = [*bn.dag_.parents(v), v]
            np.add.at(counts[v], tuple(grid[ok][:, col[u]] for u in family), w * post)
    return counts, total


def codes_of(df, bn):
    """State codes of the columns of ``df`` (states 0..k-1), -1 for None, and
    -1 columns for variables that ``df`` lacks."""
    out = np.full((len(df), len(bn.variables_)), -1)
    for j, v in enumerate(bn.variables_):
        if v in df.columns:
            values = df[v].to_numpy()
            seen = pd.notna(values)
            out[seen, j] = values[seen].astype(int)
    return out


def log_prior(bn, m):
    """``sum_v sum m p_a log theta`` for a uniform ``p``."""
    total = 0.0
    for v in bn.variables_:
        k = bn.cpds_[v].shape[-1]
        total += float((m / k * np.log(bn.cpds_[v])).sum())
    return total


def quiet_fit(est, X, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, **kw)


def latent_truth():
    """H (2 states) -> a, b, c, d (3 states each), and x -> H."""
    edges = [("x", "H")] + [("H", v) for v in "abcd"]
    states = {v: [0, 1, 2] for v in "abcd"} | {"H": [0, 1], "x": [0, 1]}
    bn = BayesianNetwork(edges, states=states)
    bn.set_cpd("x", [0.6, 0.4])
    bn.set_cpd("H", [[0.8, 0.2], [0.3, 0.7]])
    tables = {
        "a": [[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]],
        "b": [[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]],
        "c": [[0.1, 0.8, 0.1], [0.5, 0.1, 0.4]],
        "d": [[0.3, 0.3, 0.4], [0.8, 0.1, 0.1]],
    }
    for v, t in tables.items():
        bn.set_cpd(v, t)
    return bn


# -- the objective ---------------------------------------------------------------------
def test_objective_never_decreases_over_50_seeds():
    for seed in range(50):
        rng = np.random.default_rng(seed)
        truth = random_truth(rng, int(rng.integers(3, 6)))
        df = hide(rng, truth.sample(150, random_state=seed), 0.3)
        m = [0.0, 0.5, 1.0, 3.0][seed % 4]  # m = 0: maximum likelihood
        states = {v: s.tolist() for v, s in truth.states_.items()}
        est = BayesianNetwork(
            truth.dag_.edges, m=m, states=states, max_iter=30, tol=0, missing="em"
        )
        bounds = np.array(quiet_fit(est, df).lower_bounds_)
        assert np.isfinite(bounds).all()
        assert (np.diff(bounds) >= -1e-10 * np.abs(bounds[1:])).all(), seed
        assert est.n_iter_ == 30 and not est.converged_
        assert bounds[-1] == est.lower_bound_


def test_objective_never_decreases_with_a_latent_variable():
    truth = latent_truth()
    X = truth.sample(300, random_state=1).drop(columns="H")
    for seed in range(10):
        est = BayesianNetwork(
            truth.dag_.edges,
            latent=["H"],
            states={"H": 2},
            max_iter=40,
            tol=0,
            random_state=seed,
        )
        bounds = np.array(quiet_fit(est, X).lower_bounds_)
        assert (np.diff(bounds) >= -1e-10 * np.abs(bounds[1:])).all(), seed


# -- against enumeration ---------------------------------------------------------------
@pytest.mark.parametrize("path", ["patterns", "indicators"])
@pytest.mark.parametrize("seed", range(6))
def test_e_step_and_objective_equal_enumeration(seed, path, monkeypatch):
    # Both E-step paths: every pattern compiled, or none (evidence as factors).
    threshold = 1 if path == "patterns" else 10**9
    monkeypatch.setattr(network_em, "_MIN_PATTERN_ROWS", threshold)
    rng = np.random.default_rng(100 + seed)
    truth = random_truth(rng, 3 + seed % 2)
    df = hide(rng, truth.sample(60, random_state=seed), 0.35)
    w = rng.integers(0, 3, size=len(df)).astype(float)
    w[0] = 1.0
    m = 2.0
    states = {v: s.tolist() for v, s in truth.states_.items()}
    kw = {"m": m, "states": states}
    start = BayesianNetwork(truth.dag_.edges, missing="available", **kw)
    start.fit(df, sample_weight=w)
    est = BayesianNetwork(truth.dag_.edges, max_iter=1, missing="em", **kw)
    quiet_fit(est, df, sample_weight=w)
    # One iteration: the E-step at the available-case start.
    counts, log_lik = brute_force_e_step(start, codes_of(df, start), w)
    for i, v in enumerate(est.variables_):
        np.testing.assert_allclose(est.stats_.counts[i], counts[v], atol=1e-10)
        k = len(states[v])
        expected = (counts[v] + m / k) / (counts[v].sum(-1, keepdims=True) + m)
        np.testing.assert_allclose(est.cpds_[v], expected, atol=1e-12)
    objective = (log_lik + log_prior(start, m)) / w.sum()
    np.testing.assert_allclose(est.lower_bound_, objective, rtol=1e-12)
    # The log-likelihood the network reports for a row is the enumeration.
    grid, log_p = enumerate_joint(est)
    codes = codes_of(df, est)
    reference = [
        logsumexp(log_p[np.all((row < 0) | (grid == row), axis=1)]) for row in codes
    ]
    np.testing.assert_allclose(est.score_samples(df), reference, atol=1e-10)


def test_latent_variable_e_step_and_posterior_equal_enumeration(rng):
    truth = latent_truth()
    X = truth.sample(80, random_state=2).drop(columns="H")
    X = hide(rng, X, 0.2)
    start = {
        v: rng.dirichlet(np.ones(t.shape[-1]), size=t.shape[:-1])
        for v, t in truth.cpds_.items()
    }
    est = BayesianNetwork(
        truth.dag_.edges, m=0.0, latent=["H"], states={"H": 2}, cpds_init=start
    )
    quiet_fit(est.set_params(max_iter=1), X)
    begin = BayesianNetwork(
        truth.dag_.edges,
        states={"H": [0, 1]}
        | {v: s.tolist() for v, s in truth.states_.items() if v != "H"},
    )
    for v in truth.variables_:
        begin.set_cpd(v, start[v])
    counts, log_lik = brute_force_e_step(begin, codes_of(X, begin), np.ones(len(X)))
    for i, v in enumerate(est.variables_):
        np.testing.assert_allclose(est.stats_.counts[i], counts[v], atol=1e-10)
    np.testing.assert_allclose(est.lower_bound_, log_lik / len(X), rtol=1e-12)
    # predict_proba and query of the latent variable, after fitting.
    grid, log_p = enumerate_joint(est)
    h = est.variables_.index("H")
    codes = codes_of(X, est)
    proba = est.predict_proba(X, "H").to_numpy()
    for row, got in zip(codes, proba):
        ok = np.all((row < 0) | (grid == row), axis=1)
        post = [logsumexp(log_p[ok & (grid[:, h] == s)]) for s in (0, 1)]
        np.testing.assert_allclose(got, np.exp(post - logsumexp(post)), atol=1e-10)
    q = est.query("H", evidence={"a": 2, "x": 0}).to_numpy()
    col = {v: j for j, v in enumerate(est.variables_)}
    ok = (grid[:, col["a"]] == 2) & (grid[:, col["x"]] == 0)
    post = [logsumexp(log_p[ok & (grid[:, h] == s)]) for s in (0, 1)]
    np.testing.assert_allclose(q, np.exp(post - logsumexp(post)), atol=1e-10)
    # predict fills the observed columns only (no latent column appears).
    filled = est.predict(X)
    assert list(filled.columns) == list(X.columns)
    assert filled.notna().all().all()


def test_converged_fit_is_a_fixed_point_of_em(rng):
    truth = random_truth(rng, 5)
    df = hide(rng, truth.sample(400, random_state=3), 0.3)
    states = {v: s.tolist() for v, s in truth.states_.items()}
    kw = {"m": 1.0, "states": states}
    est = BayesianNetwork(
        truth.dag_.edges, tol=1e-13, max_iter=2000, missing="em", **kw
    ).fit(df)
    assert est.converged_ and est.n_iter_ > 2
    step = BayesianNetwork(
        truth.dag_.edges, max_iter=1, cpds_init=est.cpds_, missing="em", **kw
    )
    quiet_fit(step, df)
    for v in est.variables_:
        np.testing.assert_allclose(step.cpds_[v], est.cpds_[v], atol=1e-6)
    np.testing.assert_allclose(step.lower_bound_, est.lower_bound_, atol=1e-12)


def test_converged_fit_zeroes_the_gradient_on_the_simplex(rng):
    # The objective by the network's own likelihood (no E-step), its
    # derivative along moves of mass between two states of one CPT row:
    # zero at the maximum, not at the available-case start.
    truth = random_truth(rng, 5)
    df = hide(rng, truth.sample(400, random_state=3), 0.3)
    states = {v: s.tolist() for v, s in truth.states_.items()}
    kw = {"m": 1.0, "states": states}
    est = BayesianNetwork(
        truth.dag_.edges, tol=1e-13, max_iter=3000, missing="em", **kw
    ).fit(df)
    start = BayesianNetwork(truth.dag_.edges, missing="available", **kw).fit(df)

    def objective(cpds):
        net = BayesianNetwork(truth.dag_.edges, states=states)
        for v in est.dag_.topological_order():
            net.set_cpd(v, cpds[v])
        prior = sum(
            float((1.0 / len(states[v]) * np.log(cpds[v])).sum()) for v in states
        )
        return net.log_likelihood(df).sum() + prior

    def derivative(cpds, v, row, eps=1e-6):
        values = []
        for step in (eps, -eps):
            moved = {u: t.copy() for u, t in cpds.items()}
            rows = moved[v].reshape(-1, moved[v].shape[-1])
            rows[row, 0] += step
            rows[row, 1] -= step
            values.append(objective(moved))
        return (values[0] - values[1]) / (2 * eps)

    at_start = []
    for v in est.variables_:
        for row in range(est.cpds_[v].size // est.cpds_[v].shape[-1]):
            assert abs(derivative(est.cpds_, v, row)) < 1e-3, (v, row)
            at_start.append(abs(derivative(start.cpds_, v, row)))
    assert max(at_start) > 1.0


def test_complete_data_is_todays_fit_with_no_iteration(rng):
    truth = random_truth(rng, 5)
    df = truth.sample(300, random_state=4)
    before = df.copy()
    em = BayesianNetwork(truth.dag_.edges, m=2.0, missing="em").fit(df)
    available = BayesianNetwork(truth.dag_.edges, m=2.0, missing="available").fit(df)
    pd.testing.assert_frame_equal(df, before)
    assert em.n_iter_ == 0 and em.converged_
    for v in em.variables_:
        np.testing.assert_array_equal(em.cpds_[v], available.cpds_[v])
    # The objective of complete data: log-likelihood plus log prior, per row.
    expected = (em.score_samples(df).sum() + log_prior(em, 2.0)) / len(df)
    np.testing.assert_allclose(em.lower_bound_, expected, rtol=1e-12)
    assert not hasattr(available, "n_iter_")


# -- on known networks ----------------------------------------------------------------
def cpd_error(est, truth):
    """Mean absolute difference of the CPT entries, over all variables."""
    diffs = [np.abs(est.cpds_[v] - truth.cpds_[v]).ravel() for v in truth.variables_]
    return float(np.concatenate(diffs).mean())


def test_em_on_asia_beats_dropping_incomplete_rows(rng):
    truth = load_network("asia")
    states = {v: s.tolist() for v, s in truth.states_.items()}
    df = truth.sample(5000, random_state=5)
    hidden = hide(rng, df, 0.3)
    kw = {"states": states, "m": 1.0}
    em = BayesianNetwork(truth.dag_.edges, tol=1e-6, missing="em", **kw).fit(hidden)
    dropped = BayesianNetwork(truth.dag_.edges, **kw).fit(hidden.dropna())
    em_error, drop_error = cpd_error(em, truth), cpd_error(dropped, truth)
    print(f"asia, 30% hidden: EM {em_error:.4f}, dropping rows {drop_error:.4f}")
    assert em.converged_
    assert em_error < 0.5 * drop_error


def test_latent_model_recovers_the_observed_distribution():
    truth = latent_truth()
    train = truth.sample(6000, random_state=6).drop(columns="H")
    test = truth.sample(4000, random_state=7).drop(columns="H")
    est = BayesianNetwork(
        truth.dag_.edges, latent=["H"], states={"H": 2}, tol=1e-7, random_state=0
    ).fit(train)
    assert est.converged_
    gap_train = est.score(train) - truth.score(train)
    gap_test = est.score(test) - truth.score(test)
    assert -1e-3 < gap_train < 0.01  # at least the truth's likelihood (up to EM)
    assert abs(gap_test) < 0.01
    # The latent states are found up to their order.
    table = est.cpds_["a"]
    order = [0, 1] if table[0, 0] > table[1, 0] else [1, 0]
    np.testing.assert_allclose(table[order], truth.cpds_["a"], atol=0.06)


def test_latent_states_as_labels_or_a_number(rng):
    X = pd.DataFrame(rng.integers(0, 2, (100, 3)), columns=list("abc"))
    edges = [("H", "a"), ("H", "b"), ("H", "c")]
    kw = {"latent": ["H"], "random_state": 0}
    labelled = BayesianNetwork(edges, states={"H": ["lo", "hi"]}, **kw).fit(X)
    numbered = BayesianNetwork(edges, states={"H": 2}, **kw).fit(X)
    assert labelled.states_["H"].tolist() == ["lo", "hi"]
    assert numbered.states_["H"].tolist() == [0, 1]
    for v in labelled.variables_:  # the same EM, the labels aside
        np.testing.assert_array_equal(labelled.cpds_[v], numbered.cpds_[v])
    assert list(labelled.sample(3, random_state=0).columns) == [*"abc", "H"]
    # A network built by hand takes the number of states too.
    by_hand = BayesianNetwork([("H", "a")], latent=["H"], states={"H": 3})
    by_hand.set_cpd("H", [0.2, 0.3, 0.5])
    assert by_hand.states_["H"].tolist() == [0, 1, 2]


def test_uniform_start_is_a_fixed_point_and_random_state_breaks_it():
    truth = latent_truth()
    X = truth.sample(500, random_state=8).drop(columns="H")
    edges = truth.dag_.edges
    uniform = {"H": np.full((2, 2), 0.5)} | {v: np.full((2, 3), 1 / 3) for v in "abcd"}
    flat = BayesianNetwork(edges, latent=["H"], states={"H": 2}, cpds_init=uniform)
    flat.fit(X)
    for v in "abcd":  # the two states of H never become different
        np.testing.assert_allclose(flat.cpds_[v][0], flat.cpds_[v][1], atol=1e-12)
    kw = {"latent": ["H"], "states": {"H": 2}, "max_iter": 5, "tol": 0}
    a = quiet_fit(BayesianNetwork(edges, random_state=0, **kw), X)
    b = quiet_fit(BayesianNetwork(edges, random_state=0, **kw), X)
    c = quiet_fit(BayesianNetwork(edges, random_state=1, **kw), X)
    assert a.lower_bounds_ == b.lower_bounds_
    assert a.lower_bounds_[0] != c.lower_bounds_[0]
    assert np.abs(a.cpds_["a"][0] - a.cpds_["a"][1]).max() > 0.05


# -- against pgmpy --------------------------------------------------------------------
@pytest.mark.parity
def test_latent_variable_em_equals_pgmpy_from_the_same_start(rng):
    pytest.importorskip("pgmpy")
    from pgmpy.estimators import ExpectationMaximization
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    truth = latent_truth()
    X = truth.sample(300, random_state=9).drop(columns="H").astype(int)
    edges = truth.dag_.edges
    cards = {v: len(s) for v, s in truth.states_.items()}
    init = {}
    for v in truth.variables_:
        parents = list(truth.dag_.parents(v))
        shape = (*[cards[u] for u in parents], cards[v])
        table = rng.dirichlet(np.ones(cards[v]), size=shape[:-1]).reshape(shape)
        init[v] = TabularCPD(
            v,
            cards[v],
            np.moveaxis(table, -1, 0).reshape(cards[v], -1),
            evidence=parents or None,
            evidence_card=[cards[u] for u in parents] or None,
            state_names={u: list(range(cards[u])) for u in [v, *parents]},
        )
    model = DiscreteBayesianNetwork(edges, latents={"H"})
    n_iter = 6
    theirs = ExpectationMaximization(model, X).get_parameters(
        latent_card={"H": 2},
        max_iter=n_iter,
        atol=1e-300,
        init_cpds=init,
        show_progress=False,
    )
    ours = BayesianNetwork(
        edges,
        m=0.0,
        latent=["H"],
        states={"H": 2},
        cpds_init=init,
        max_iter=n_iter,
        tol=0,
    )
    quiet_fit(ours, X)
    assert ours.n_iter_ == n_iter
    for cpd in theirs:
        v = cpd.variable
        parents = list(cpd.variables[1:])
        values = cpd.get_values().reshape(cards[v], *[cards[u] for u in parents])
        values = np.moveaxis(values, 0, -1)
        order = [parents.index(u) for u in ours.dag_.parents(v)] + [len(parents)]
        np.testing.assert_allclose(
            ours.cpds_[v], np.transpose(values, order), atol=1e-10
        )


# -- bad input, statistics and Dask ----------------------------------------------------
def test_bad_input_names_the_parameter():
    X = pd.DataFrame({"a": [0, 1, 1], "b": [1, 0, 1]})
    edges = [("H", "a"), ("H", "b")]
    with pytest.raises(ValueError, match=r"latent names 'a'.*column"):
        BayesianNetwork(edges, latent=["a"], states={"a": 2}).fit(X)
    with pytest.raises(ValueError, match="latent variable 'H' has no states"):
        BayesianNetwork(edges, latent=["H"]).fit(X)
    with pytest.raises(ValueError, match="'missing' parameter"):
        BayesianNetwork(edges, missing="bogus").fit(X)
    with pytest.raises(ValueError, match=r"latent.*missing='em'"):
        BayesianNetwork(edges, latent=["H"], states={"H": 2}, missing="available").fit(
            X
        )
    with pytest.raises(ValueError, match=r"latent names 'Z'.*no edge"):
        BayesianNetwork(edges, latent=["H", "Z"], states={"H": 2, "Z": 2}).fit(X)
    with pytest.raises(ValueError, match="states of the latent variable 'H'"):
        BayesianNetwork(edges, latent=["H"], states={"H": 1}).fit(X)
    with pytest.raises(ValueError, match="cpds_init names 'q'"):
        BayesianNetwork(
            edges, latent=["H"], states={"H": 2}, cpds_init={"q": [0.5, 0.5]}
        ).fit(X)
    with pytest.raises(ValueError, match="'max_iter' parameter"):
        BayesianNetwork(max_iter=0).fit(X)
    with pytest.raises(ValueError, match="'tol' parameter"):
        BayesianNetwork(tol=-1.0).fit(X)
    # A column with missing cells needs no declaration: EM learns it.
    X_missing = X.astype(object)
    X_missing.iloc[0, 0] = None
    BayesianNetwork([("a", "b")], missing="em").fit(X_missing)


# -- the default: pgmpy's available-case counts ----------------------------------------
def pgmpy_tables(edges, df, estimator):
    """pgmpy's CPTs of ``edges`` fitted to ``df``, as arrays of shape
    ``(*parent cardinalities, k)`` with the parents in the order of ``edges``."""
    from pgmpy.models import DiscreteBayesianNetwork

    model = DiscreteBayesianNetwork(edges)
    model.add_nodes_from(df.columns)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(df, estimator=estimator)
    out = {}
    for v in df.columns:
        cpd = model.get_cpds(v)
        parents = [u for u, w in edges if w == v]
        shape = [len(cpd.state_names[u]) for u in cpd.variables[1:]]
        table = cpd.get_values().reshape(len(cpd.state_names[v]), *shape)
        order = [cpd.variables[1:].index(u) for u in parents]
        table = np.transpose(table, [0, *(1 + i for i in order)])
        out[v] = (np.moveaxis(table, 0, -1), cpd.state_names)
    return out


def test_default_missing_counts_each_familys_complete_rows_as_pgmpy():
    # The example of the migration guide, by hand: C | A, B counts only the
    # rows that observe A, B and C (rows 0 and 3); the other parent states
    # are unseen, hence uniform (m=0, as pgmpy's MaximumLikelihoodEstimator).
    df = pd.DataFrame(
        {"A": [0, np.nan, 1, 1], "B": [0, 1, 0, 1], "C": [1, 1, np.nan, 0]}
    )
    bn = BayesianNetwork([("A", "C"), ("B", "C")], m=0).fit(df)
    expected = [[[0.0, 1.0], [0.5, 0.5]], [[0.5, 0.5], [1.0, 0.0]]]
    np.testing.assert_array_equal(bn.cpds_["C"], expected)
    assert not hasattr(bn, "n_iter_")  # no EM
    em = BayesianNetwork([("A", "C"), ("B", "C")], m=0, missing="em").fit(df)
    assert em.n_iter_ > 0
    assert not np.allclose(em.cpds_["C"], expected)


@pytest.mark.parity
@pytest.mark.parametrize("seed", range(6))
def test_default_missing_equals_pgmpy_estimators_on_incomplete_data(seed):
    pytest.importorskip("pgmpy")
    from pgmpy.parameter_estimator import DiscreteBayesianEstimator, DiscreteMLE

    rng = np.random.default_rng(300 + seed)
    truth = random_truth(rng, 4 + seed % 3)
    df = truth.sample(200, random_state=seed).astype(float)
    df = df.mask(rng.random(df.shape) < [0.05, 0.2, 0.4][seed % 3])
    before = df.copy()
    edges = list(truth.dag_.edges)
    for m, estimator in ((0.0, DiscreteMLE()), (None, None)):
        if estimator is None:  # K2: one pseudo-count per state, m = k
            estimator = DiscreteBayesianEstimator(prior_type="K2")
            m = {v: float(df[v].nunique()) for v in df}
        theirs = pgmpy_tables(edges, df, estimator)
        ours = BayesianNetwork(edges, m=m).fit(df)
        pd.testing.assert_frame_equal(df, before)
        for v in df.columns:
            table, state_names = theirs[v]
            assert ours.states_[v].tolist() == state_names[v]
            np.testing.assert_allclose(ours.cpds_[v], table, atol=1e-12)


def test_latent_variables_still_learnt_by_em_by_default(rng):
    truth = latent_truth()
    df = truth.sample(300, random_state=2).drop(columns="H")
    df = df.astype(object).mask(rng.random(df.shape) < 0.1, None)
    kw = dict(latent=["H"], states={"H": 2}, random_state=0, max_iter=20)
    auto = quiet_fit(BayesianNetwork(truth.dag_.edges, **kw), df)
    em = quiet_fit(BayesianNetwork(truth.dag_.edges, missing="em", **kw), df)
    assert auto.n_iter_ > 1
    for v in em.variables_:
        np.testing.assert_array_equal(auto.cpds_[v], em.cpds_[v])


def test_from_stats_of_incomplete_rows_asks_for_available_case_counts(rng):
    truth = random_truth(rng, 4)
    df = hide(rng, truth.sample(100, random_state=10), 0.3)
    est = BayesianNetwork(truth.dag_.edges, missing="em")
    stats = est.summarize(df)
    assert stats.incomplete_weight > 0
    with pytest.raises(ValueError, match="missing='available'"):
        est.from_stats(stats)
    est.set_params(missing="available").from_stats(stats)  # available-case counts


def test_partial_fit_of_an_incomplete_chunk_is_one_incremental_em_step(rng):
    # After an EM fit, a chunk's counts are its expected counts under the
    # current tables (enumeration), added to the kept counts; complete rows
    # add their counts.
    truth = random_truth(rng, 4)
    states = {v: s.tolist() for v, s in truth.states_.items()}
    df = hide(rng, truth.sample(100, random_state=10), 0.3)
    fitted = quiet_fit(
        BayesianNetwork(truth.dag_.edges, states=states, missing="em"), df
    )
    complete = truth.sample(50, random_state=11)
    before = fitted.stats_.counts
    fitted.partial_fit(complete)
    counts, _ = brute_force_e_step(
        fitted, codes_of(complete, fitted), np.ones(len(complete))
    )
    for i, v in enumerate(fitted.variables_):
        np.testing.assert_allclose(
            fitted.stats_.counts[i], before[i] + counts[v], atol=1e-10
        )
    chunk = hide(rng, truth.sample(40, random_state=12), 0.3)
    before = fitted.stats_.counts
    reference = copy.deepcopy(fitted)
    fitted.partial_fit(chunk)
    counts, _ = brute_force_e_step(reference, codes_of(chunk, fitted), np.ones(40))
    for i, v in enumerate(fitted.variables_):
        np.testing.assert_allclose(
            fitted.stats_.counts[i], before[i] + counts[v], atol=1e-10
        )
        k = len(states[v])
        total = before[i] + counts[v]
        expected = (total + 1.0 / k) / (total.sum(-1, keepdims=True) + 1.0)
        np.testing.assert_allclose(fitted.cpds_[v], expected, atol=1e-12)


def test_dask_input_with_missing_cells_asks_for_available_case_counts(rng):
    dd = pytest.importorskip("dask.dataframe")
    truth = random_truth(rng, 4)
    df = hide(rng, truth.sample(100, random_state=12), 0.3)
    ddf = dd.from_pandas(df, npartitions=3)
    with pytest.raises(ValueError, match="missing='available'"):
        BayesianNetwork(truth.dag_.edges, missing="em").fit(ddf)
    latent = BayesianNetwork([("H", "v0")], latent=["H"], states={"H": 2})
    with pytest.raises(ValueError, match=r"latent variables.*in memory"):
        latent.fit(dd.from_pandas(df[["v0"]].dropna(), npartitions=2))
    est = BayesianNetwork(truth.dag_.edges, missing="available").fit(ddf)
    ref = BayesianNetwork(truth.dag_.edges, missing="available").fit(df)
    for v in ref.variables_:
        np.testing.assert_allclose(est.cpds_[v], ref.cpds_[v], rtol=1e-12)
