"""HiddenSemiMarkovModel: equal to the HMM it generalises, EM monotone, input."""

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar
from scipy.special import logsumexp
from sklearn.base import clone

from bayeskit import HiddenMarkovModel, HiddenSemiMarkovModel
from bayeskit.hmm._durations import (
    NegativeBinomialDuration,
    PoissonDuration,
    _nb_log_pmf,
    _poisson_log_pmf,
)
from bayeskit.priors import Dirichlet, Gamma


def _data(seed, n_seq=3, k=2):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(15, 40, size=n_seq)
    means = np.arange(k) * 3.0
    X, state = [], 0
    for n in lengths:
        rows = []
        while len(rows) < n:
            rows += [
                rng.normal(means[state], 1.0, 2) for _ in range(rng.integers(2, 8))
            ]
            state = (state + 1 + rng.integers(k - 1)) % k if k > 1 else 0
        X.append(np.array(rows[:n]))
    return np.concatenate(X), lengths


def _geometric_pair(seed, n_features=2):
    """An HMM and the HSMM with the same chain: geometric durations (a table
    truncated where the tail is below 1e-16), transitions a_ij / (1 - a_ii)."""
    rng = np.random.default_rng(seed)
    X, lengths = _data(seed)
    k = 3
    hmm = HiddenMarkovModel(k, emission="gaussian", n_iter=2, random_state=seed)
    hmm.fit(X, lengths)
    trans = rng.dirichlet(np.ones(k), size=k)
    np.fill_diagonal(trans, rng.uniform(0.3, 0.8, size=k))
    hmm.transmat_ = trans / trans.sum(axis=1, keepdims=True)
    stay = np.diag(hmm.transmat_).copy()
    D = int(np.ceil(np.log(1e-16) / np.log(stay.max()))) + 1
    pmf = (1 - stay)[:, None] * stay[:, None] ** np.arange(D)
    hsmm = HiddenSemiMarkovModel(
        k, emission="gaussian", duration="table", max_duration=D, random_state=seed
    )
    hsmm._init(X, lengths)
    hsmm.startprob_ = hmm.startprob_
    off = hmm.transmat_ / (1 - stay)[:, None]
    np.fill_diagonal(off, 0.0)
    hsmm.transmat_ = off
    hsmm.durations_ = pmf / pmf.sum(axis=1, keepdims=True)
    hsmm._emission_value = hmm.emission_params_
    return hmm, hsmm, X, lengths


@pytest.mark.parametrize("seed", range(5))
def test_geometric_durations_give_the_hmm(seed):
    hmm, hsmm, X, lengths = _geometric_pair(seed)
    X = X.copy()
    X[[3, 4, 20]] = np.nan  # gaps: marginalised by both
    X[7, 0] = np.nan  # a missing cell: the Gaussian family marginalises it
    np.testing.assert_allclose(
        hsmm.score_sequences(X, lengths), hmm.score_sequences(X, lengths), rtol=1e-10
    )
    np.testing.assert_allclose(
        hsmm.predict_proba(X, lengths), hmm.predict_proba(X, lengths), atol=1e-10
    )
    # Viterbi: the same best log probability, and a path the HMM gives it to.
    # (Through the gaps, where every state emits 1, paths that only reorder
    # the steps of two states tie exactly and rounding picks one.)
    log_prob, path = hsmm.decode(X, lengths)
    ref_prob, ref_path = hmm.decode(X, lengths)
    np.testing.assert_allclose(log_prob, ref_prob, rtol=1e-10)
    np.testing.assert_allclose(
        _hmm_path_log_prob(hmm, X, lengths, path), ref_prob, rtol=1e-10
    )
    different = np.flatnonzero(path != ref_path)
    assert np.isnan(X[different]).all(axis=1).all()


def _hmm_path_log_prob(hmm, X, lengths, path):
    """``log p(x, z)`` of the state path ``z`` under the HMM."""
    log_em = hmm._inputs(X, lengths)[2][0]
    start, trans = np.log(hmm.startprob_), np.log(hmm.transmat_)
    total = 0.0
    for s, e in zip(np.cumsum(lengths) - lengths, np.cumsum(lengths)):
        z = path[s:e]
        total += start[z[0]] + trans[z[:-1], z[1:]].sum()
        total += log_em[np.arange(s, e), z].sum()
    return total


def test_list_of_sequences_equals_lengths():
    X, lengths = _data(3)
    model = HiddenSemiMarkovModel(2, max_duration=10, random_state=0).fit(X, lengths)
    parts = np.split(X, np.cumsum(lengths)[:-1])
    proba = model.predict_proba(parts)
    np.testing.assert_allclose(np.concatenate(proba), model.predict_proba(X, lengths))
    np.testing.assert_allclose(model.score(parts), model.score(X, lengths))
    refit = HiddenSemiMarkovModel(2, max_duration=10, random_state=0).fit(parts)
    np.testing.assert_allclose(refit.means_, model.means_)


def _brute_force_score(model, X):
    """log p(x) by enumeration of every state path of a tiny model."""
    params = model._current_params().structure
    log_em = model._components().emission.log_likelihood(
        X, model._current_params().emission
    )
    k, D = params.pmf.shape
    total = []
    for path in itertools.product(range(k), repeat=len(X)):
        runs = [(s, len(list(g))) for s, g in itertools.groupby(path)]
        lp = np.log(params.startprob[runs[0][0]])
        ok = True
        for i, (s, d) in enumerate(runs):
            if d > D:
                ok = False
                break
            last = i == len(runs) - 1
            lp += np.log(params.pmf[s, d - 1 :].sum() if last else params.pmf[s, d - 1])
            if not last:
                lp += np.log(params.transmat[s, runs[i + 1][0]])
        if ok:
            total.append(lp + log_em[np.arange(len(X)), list(path)].sum())
    return logsumexp(total)


@pytest.mark.parametrize("duration", ["poisson", "negative_binomial", "table"])
def test_score_of_every_family_equals_enumeration(duration):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(7, 1))
    model = HiddenSemiMarkovModel(
        3, duration=duration, max_duration=4, n_iter=3, random_state=0
    ).fit(np.concatenate([X, X + 2, X - 1]))
    with np.errstate(divide="ignore"):
        ref = _brute_force_score(model, X)
    np.testing.assert_allclose(model.score(X), ref, rtol=1e-12)


_FAMILIES = [
    ("poisson", None),
    ("poisson", Gamma(2.0, 0.5)),
    ("table", None),
    ("table", Dirichlet(1.5)),
    ("negative_binomial", None),
]


@pytest.mark.parametrize(("duration", "prior"), _FAMILIES)
def test_em_never_decreases_the_log_posterior(duration, prior):
    for seed in range(50):
        X, lengths = _data(seed, n_seq=2, k=2)
        model = HiddenSemiMarkovModel(
            2, duration=duration, duration_prior=prior, max_duration=8,
            transmat_prior=1.0, n_iter=12, tol=0.0, random_state=seed,
        )  # fmt: skip
        model.fit(X, lengths)
        history = np.array(model.monitor_.history)
        gain = np.diff(history)
        assert np.all(gain >= -1e-8 * np.abs(history[1:])), (seed, gain.min())


def test_poisson_map_rate_maximises_the_truncated_objective():
    rng = np.random.default_rng(0)
    family = PoissonDuration(9)
    for _ in range(20):
        counts = rng.exponential(size=(1, 9)) * rng.integers(0, 2, size=(1, 9))
        counts[0, rng.integers(9)] += 1
        prior = Gamma(rng.uniform(0, 3), rng.uniform(0, 2))
        rate = family.map_params(counts, prior, np.array([1.0]))[0]

        def objective(theta, counts=counts, prior=prior):
            lam = np.exp(theta)
            return -(counts[0] @ _poisson_log_pmf([lam], 9)[0]) - (
                prior.shape * theta - prior.rate * lam
            )

        best = minimize_scalar(objective, bounds=(-30, 30), method="bounded")
        assert objective(np.log(rate)) <= best.fun + 1e-9


@pytest.mark.parametrize("seed", range(30))
def test_poisson_map_rates_of_many_states_solve_each_stationarity(seed):
    """All the states' rates at once (a state without segments nor prior
    keeps its rate, one whose ``d - 1`` sum to 0 gets 0), each a root of its
    log posterior's derivative ``s + alpha - N E[d - 1] - beta lambda``, the
    moment from scipy's Poisson pmf truncated to ``1 .. D``."""
    from scipy.stats import poisson

    rng = np.random.default_rng(seed)
    k, D = int(rng.integers(2, 7)), int(rng.integers(2, 60))
    counts = rng.exponential(size=(k, D)) * rng.integers(0, 2, size=(k, D))
    counts *= 10.0 ** rng.uniform(-2, 4, size=(k, 1))
    counts[0] = 0.0  # no segment
    counts[1, 1:] = 0.0  # only segments of duration 1
    counts[1, 0] += 1.0
    prior = [None, Gamma(rng.uniform(0.1, 3), rng.uniform(0.1, 2))][seed % 2]
    previous = rng.uniform(0.5, 5.0, size=k)
    rates = PoissonDuration(D).map_params(counts, prior, previous)
    alpha, beta = (0.0, 0.0) if prior is None else (prior.shape, prior.rate)
    steps = np.arange(D)
    for j in range(k):
        total, sums = counts[j].sum(), counts[j] @ steps
        if prior is None and total == 0:
            assert rates[j] == previous[j]
        elif sums + alpha <= 0:
            assert rates[j] == 0.0
        else:
            pmf = poisson.pmf(steps, rates[j])
            mean = pmf @ steps / pmf.sum()
            slope = sums + alpha - total * mean - beta * rates[j]
            assert abs(slope) <= 1e-9 * (sums + alpha + total * mean), (j, slope)


def test_negative_binomial_fit_is_no_worse_than_a_generic_optimiser():
    rng = np.random.default_rng(1)
    family = NegativeBinomialDuration(12)
    for _ in range(10):
        counts = rng.exponential(size=(1, 12))
        n, p = family.map_params(counts, None, (np.array([1.0]), np.array([0.3])))

        def loss(x, counts=counts):
            return -(
                counts[0]
                @ _nb_log_pmf([np.exp(x[0])], [1 / (1 + np.exp(-x[1]))], 12)[0]
            )

        ref = min(
            minimize(loss, x0, method="Nelder-Mead").fun
            for x0 in ([0.0, 0.0], [2.0, -1.0], [-1.0, 1.0])
        )
        # (Counts that decay fast put the supremum at p -> 0, where the
        # objective is flat to about 1e-8 relative.)
        assert loss([np.log(n[0]), np.log(p[0] / (1 - p[0]))]) <= ref + 1e-7 * abs(ref)


def test_sampled_durations_follow_the_table():
    model = HiddenSemiMarkovModel(2, duration="table", max_duration=4)
    X, lengths = _data(0)
    model._init(X, lengths)
    pmf = np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.0, 0.0, 0.3]])
    model.durations_ = pmf
    _, states = model.sample(20000, random_state=0)
    runs = [(s, len(list(g))) for s, g in itertools.groupby(states)][1:-1]
    for j in range(2):
        d = np.array([n for s, n in runs if s == j])
        freq = np.bincount(d, minlength=5)[1:] / len(d)
        np.testing.assert_allclose(freq, pmf[j], atol=0.02)
    # No self-transition: consecutive runs alternate between the two states.
    assert all(a[0] != b[0] for a, b in itertools.pairwise(runs))


def test_durations_are_learned():
    rng = np.random.default_rng(0)
    X, state = [], 0
    for _ in range(150):
        d = 3 if state == 0 else 7
        X.append(rng.normal(3.0 * state, 1.0, (d, 1)))
        state = 1 - state
    X = np.concatenate(X)
    model = HiddenSemiMarkovModel(
        2, duration="table", max_duration=10, n_iter=50, random_state=0
    ).fit(X)
    order = np.argsort(model.means_.ravel())
    np.testing.assert_array_equal(model.durations_[order].argmax(axis=1) + 1, [3, 7])
    poisson = HiddenSemiMarkovModel(2, max_duration=10, n_iter=50, random_state=0)
    poisson.fit(X)
    order = np.argsort(poisson.means_.ravel())
    # The truncated Poisson's maximum likelihood matches the mean duration.
    mean = poisson.duration_pmf_[order] @ np.arange(1, 11)
    np.testing.assert_allclose(mean, [3, 7], atol=0.1)


def test_max_duration_and_duration_prior_have_an_effect():
    X, lengths = _data(2)
    a = HiddenSemiMarkovModel(2, max_duration=5, random_state=0).fit(X, lengths)
    b = HiddenSemiMarkovModel(2, max_duration=12, random_state=0).fit(X, lengths)
    assert a.duration_pmf_.shape == (2, 5) and b.duration_pmf_.shape == (2, 12)
    strong = HiddenSemiMarkovModel(
        2, max_duration=12, duration_prior=Gamma(1000.0, 100.0), random_state=0
    ).fit(X, lengths)
    np.testing.assert_allclose(strong.duration_rates_, 10.0, rtol=0.1)
    assert not np.allclose(strong.duration_rates_, b.duration_rates_, rtol=0.1)


def test_writing_into_duration_pmf_leaves_the_model_as_it_was():
    # duration_pmf_ is derived from duration_rates_; a write into the array
    # read must not reach the model's cached tables (the scores would then
    # mix the new durations with the old ones).
    X, lengths = _data(0)
    model = HiddenSemiMarkovModel(2, max_duration=5, random_state=0).fit(X, lengths)
    before = model.score(X, lengths)
    pmf = model.duration_pmf_
    pmf[:] = np.eye(2, 5)[[1, 0]]
    assert model.score(X, lengths) == before
    assert not np.array_equal(model.duration_pmf_, pmf)


def test_bad_input_names_the_parameter():
    X, lengths = _data(0)
    model = HiddenSemiMarkovModel(2, max_duration=5, random_state=0).fit(X, lengths)
    model.transmat_ = np.array([[0.5, 0.5], [1.0, 0.0]])
    with pytest.raises(ValueError, match="transmat_ must have a zero diagonal"):
        model.score(X, lengths)
    with pytest.raises(ValueError, match="duration_prior"):
        HiddenSemiMarkovModel(duration_prior=Dirichlet(1.0)).fit(X, lengths)
    with pytest.raises(ValueError, match="duration_prior"):
        HiddenSemiMarkovModel(
            duration="negative_binomial", duration_prior=Gamma(1.0, 1.0)
        ).fit(X, lengths)
    with pytest.raises(ValueError, match="max_duration"):
        HiddenSemiMarkovModel(max_duration=0).fit(X, lengths)
    with pytest.raises(ValueError, match="duration"):
        HiddenSemiMarkovModel(duration="geometric").fit(X, lengths)
    fitted = HiddenSemiMarkovModel(2, max_duration=5, random_state=0).fit(X, lengths)
    fitted.duration_rates_ = np.array([1.0, -1.0])
    with pytest.raises(ValueError, match="duration_rates_"):
        fitted.predict(X, lengths)


def _built_afresh(model, X, lengths):
    """A model of ``model``'s hyperparameters given its parameters by hand
    (copies), nothing kept from calls before."""
    fresh = clone(model)
    fresh._init(X, lengths)
    fresh.startprob_ = model.startprob_.copy()
    fresh.transmat_ = model.transmat_.copy()
    for name in model._duration_family().fields:
        setattr(fresh, name, np.array(getattr(model, name), dtype=float))
    fresh._emission_value = model.emission_params_
    return fresh


@pytest.mark.parametrize("duration", ["table", "poisson", "negative_binomial"])
def test_parameters_set_by_hand_after_a_prediction_are_read_anew(duration):
    """The tables the recursions read are computed once per parameters and
    kept with them: parameters assigned or changed in place after a
    prediction give the answers of a model built afresh with them (and not
    those before the change)."""
    X, lengths = _data(6, k=3)
    model = HiddenSemiMarkovModel(
        3, duration=duration, max_duration=8, n_iter=2, random_state=0
    ).fit(X, lengths)
    rng = np.random.default_rng(0)
    field = model._duration_family().fields[0]

    def assign_durations():
        value = getattr(model, field)
        if duration == "table":
            setattr(model, field, rng.dirichlet(np.ones(8), size=3))
        else:
            setattr(model, field, value * rng.uniform(1.5, 3.0, size=3))

    def durations_in_place():
        if duration == "table":
            model.durations_[1] = rng.dirichlet(np.ones(8))
        else:
            getattr(model, field)[0] *= 2.0

    def transitions_in_place():
        model.transmat_[0] = [0.0, 0.1, 0.9]

    def start_in_place():
        model.startprob_[:] = [0.05, 0.05, 0.9]

    def answers(m):
        return (
            m.score(X, lengths),
            m.predict_proba(X, lengths),
            m.decode(X, lengths)[0],
            m.score_sequences(X, lengths),
        )

    for change in (
        assign_durations,
        durations_in_place,
        transitions_in_place,
        start_in_place,
    ):
        before = answers(model)
        change()
        after = answers(model)
        expected = answers(_built_afresh(model, X, lengths))
        for got, want in zip(after, expected):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        assert not np.isclose(after[0], before[0]), change.__name__


def test_the_caller_data_is_not_changed_and_n_init_keeps_the_best():
    X, lengths = _data(4)
    X[5] = np.nan
    copy = X.copy()
    one = HiddenSemiMarkovModel(2, max_duration=8, random_state=1).fit(X, lengths)
    many = HiddenSemiMarkovModel(2, max_duration=8, n_init=4, random_state=1)
    many.fit(X, lengths)
    np.testing.assert_array_equal(X, copy)
    assert many.lower_bound_ >= one.lower_bound_ - 1e-9


def test_summarize_then_from_stats_is_one_em_step():
    X, lengths = _data(5, n_seq=4)
    model = HiddenSemiMarkovModel(2, max_duration=8, n_iter=2, random_state=0)
    model.fit(X, lengths)
    bounds = np.cumsum(lengths)[:-1]
    parts = np.split(X, bounds)
    total = model.summarize(parts[:2]) + model.summarize(parts[2:])
    whole = model.summarize(parts)
    np.testing.assert_allclose(total.structure.durations, whole.structure.durations)
    stepped = HiddenSemiMarkovModel(2, max_duration=8, random_state=0).from_stats(total)
    again = HiddenSemiMarkovModel(2, max_duration=8, random_state=0).from_stats(whole)
    np.testing.assert_allclose(stepped.duration_rates_, again.duration_rates_)
    np.testing.assert_allclose(stepped.means_, again.means_)


# -- scikit-learn's checks that pass a target where hmmlearn reads lengths ----------
# (test_common.py expects them to fail on every HMM at the positional call: the
# target is refused as lengths; here they run with the target by keyword. NaN
# cells are data, allow_nan, so scikit-learn's NaN check is not among them.)
_LENGTHS_CHECKS = (
    "check_dict_unchanged",
    "check_dont_overwrite_parameters",
    "check_dtype_object",
    "check_estimators_dtypes",
    "check_estimators_empty_data_messages",
    "check_estimators_fit_returns_self",
    "check_estimators_overwrite_params",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1feature",
    "check_fit2d_predict1d",
    "check_fit_check_is_fitted",
    "check_fit_idempotent",
    "check_n_features_in",
    "check_n_features_in_after_fitting",
    "check_pipeline_consistency",
    "check_readonly_memmap_input",
)


class _KeywordY(HiddenSemiMarkovModel):
    """HiddenSemiMarkovModel taking scikit-learn's y positionally."""

    def fit(self, X, y=None, **kw):
        return super().fit(X, y=y, **kw)

    def score(self, X, y=None, **kw):
        return super().score(X, y=y, **kw)

    def partial_fit(self, X, y=None, **kw):
        return super().partial_fit(X, y=y, **kw)


@pytest.mark.parametrize("name", _LENGTHS_CHECKS)
@pytest.mark.parametrize("duration", ["poisson", "table"])
def test_sklearn_checks_with_y_by_keyword(name, duration):
    import warnings

    from sklearn.utils import estimator_checks as ec

    estimator = _KeywordY(duration=duration, max_duration=6, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        getattr(ec, name)("_KeywordY", estimator)


def test_stationary_distribution_is_the_expanded_hmm_one():
    """The fraction of steps in each state: the stationary distribution of the
    HMM on (state, steps left), summed over the steps left."""
    rng = np.random.default_rng(3)
    k, D = 3, 6
    X, lengths = _data(3, k=k)
    model = HiddenSemiMarkovModel(k, duration="table", max_duration=D, random_state=0)
    model._init(X, lengths)
    trans = rng.dirichlet(np.ones(k), size=k)
    np.fill_diagonal(trans, 0.0)
    model.transmat_ = trans / trans.sum(axis=1, keepdims=True)
    model.durations_ = rng.dirichlet(np.ones(D), size=k)
    big = np.zeros((k * D, k * D))
    for j in range(k):
        for r in range(1, D):
            big[j * D + r, j * D + r - 1] = 1.0
        big[j * D, :] = (model.transmat_[j][:, None] * model.durations_).ravel()
    values, vectors = np.linalg.eig(big.T)
    v = np.real(vectors[:, np.argmin(np.abs(values - 1))])
    expected = (v / v.sum()).reshape(k, D).sum(axis=1)
    np.testing.assert_allclose(
        model.get_stationary_distribution(), expected, atol=1e-10
    )
