"""Baum-Welch as statistics: summarize, from_stats, stats_, partial_fit and the
monitor object, for every hidden Markov model of the components path."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from bayeskit import GMMHMM, CategoricalHMM, GaussianHMM, MultinomialHMM, PoissonHMM
from bayeskit._base.em import LatentStats
from bayeskit.hmm import ConvergenceMonitor


def categorical(rng, **kw):
    hmm = CategoricalHMM(3, n_features=4, init_params="", tol=0, **kw)
    hmm.startprob_ = rng.dirichlet(np.ones(3))
    hmm.transmat_ = rng.dirichlet(np.ones(3), size=3)
    hmm.emissionprob_ = rng.dirichlet(np.ones(4), size=3)
    return hmm


def gaussian(rng, **kw):
    hmm = GaussianHMM(3, "full", init_params="", tol=0, **kw)
    hmm.startprob_ = rng.dirichlet(np.ones(3))
    hmm.transmat_ = rng.dirichlet(np.ones(3), size=3)
    hmm.means_ = rng.normal(size=(3, 2)) * 3
    hmm.covars_ = np.stack([np.eye(2)] * 3)
    return hmm


def with_chain(hmm, rng):
    hmm.startprob_ = rng.dirichlet(np.ones(3))
    hmm.transmat_ = rng.dirichlet(np.ones(3), size=3)
    return hmm


def poisson(rng, **kw):
    hmm = with_chain(PoissonHMM(3, init_params="", tol=0, **kw), rng)
    hmm.lambdas_ = rng.uniform(0.5, 6, size=(3, 2))
    return hmm


def multinomial(rng, **kw):
    hmm = with_chain(MultinomialHMM(3, n_trials=5, init_params="", tol=0, **kw), rng)
    hmm.emissionprob_ = rng.dirichlet(np.ones(4), size=3)
    return hmm


def gmm(rng, **kw):
    hmm = with_chain(GMMHMM(3, n_mix=2, init_params="", tol=0, **kw), rng)
    hmm.weights_ = rng.dirichlet(np.ones(2), size=3)
    hmm.means_ = rng.normal(size=(3, 2, 2)) * 3
    hmm.covars_ = rng.uniform(0.5, 2, size=(3, 2, 2))
    return hmm


def data(rng, kind):
    lengths = [30, 12, 25, 40]
    n = sum(lengths)
    if kind == "categorical":
        return rng.integers(0, 4, (n, 1)), lengths
    if kind == "poisson":
        return rng.poisson(3.0, (n, 2)), lengths
    if kind == "multinomial":
        return rng.multinomial(5, [0.1, 0.2, 0.3, 0.4], n), lengths
    return rng.normal(size=(n, 2)) * 3, lengths


MODELS = {
    "categorical": categorical,
    "gaussian": gaussian,
    "poisson": poisson,
    "multinomial": multinomial,
    "gmm": gmm,
}
CLASSES = {
    "categorical": CategoricalHMM,
    "gaussian": GaussianHMM,
    "poisson": PoissonHMM,
    "multinomial": MultinomialHMM,
    "gmm": lambda *a, **kw: GMMHMM(*a, n_mix=2, **kw),
}
NAMES = (
    "startprob_",
    "transmat_",
    "emissionprob_",
    "means_",
    "covars_",
    "lambdas_",
    "weights_",
)


def assert_same_params(a, b, **tol):
    for name in NAMES:
        if hasattr(a, name):
            np.testing.assert_allclose(getattr(a, name), getattr(b, name), **tol)


@pytest.mark.parametrize("kind", list(MODELS))
def test_fit_is_the_reduce_of_summarize_and_from_stats(kind):
    rng = np.random.default_rng(3)
    make = MODELS[kind]
    X, lengths = data(rng, kind)
    seed = rng.integers(1 << 30)
    fitted = make(np.random.default_rng(seed), n_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted.fit(X, lengths)
    # The same iteration, the data in two chunks of whole sequences.
    chunked = make(np.random.default_rng(seed))
    cut = lengths[0] + lengths[1]
    stats = chunked.summarize(X[:cut], lengths[:2]) + chunked.summarize(
        X[cut:], lengths[2:]
    )
    assert isinstance(stats, LatentStats)
    whole = make(np.random.default_rng(seed)).summarize(X, lengths)
    assert stats.log_evidence == pytest.approx(whole.log_evidence, rel=1e-12)
    assert stats.log_evidence == pytest.approx(
        make(np.random.default_rng(seed)).score(X, lengths), rel=1e-12
    )
    assert chunked.from_stats(stats) is chunked
    assert_same_params(chunked, fitted, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        fitted.stats_.structure.transitions, stats.structure.transitions, rtol=1e-10
    )
    assert sum([stats]) is stats  # sum() over chunks starts from 0
    # The parameters are derived from stats_: deriving them again changes nothing.
    again = make(np.random.default_rng(seed), n_iter=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again.fit(X, lengths)
    before = {n: np.copy(getattr(again, n)) for n in NAMES if hasattr(again, n)}
    if kind == "gmm":
        # hmmlearn's GMMHMM update takes the covariances around the means the
        # statistics were gathered under; after the means moved, deriving them
        # again is the scatter around the new means (the other parameters do
        # not depend on it).
        del before["covars_"]
    again.from_stats(again.stats_)
    for name, value in before.items():
        np.testing.assert_allclose(getattr(again, name), value, rtol=1e-10)


@pytest.mark.parametrize("kind", list(MODELS))
def test_first_partial_fit_is_one_iteration_of_fit(kind):
    rng = np.random.default_rng(5)
    X, lengths = data(rng, kind)
    cls = CLASSES[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = cls(3, random_state=0, n_iter=1).fit(X, lengths)
    step = cls(3, random_state=0).partial_fit(X, lengths)
    assert_same_params(step, one, rtol=1e-12)
    for name in ("start", "transitions", "occupancy"):
        np.testing.assert_allclose(
            getattr(step.stats_.structure, name), getattr(one.stats_.structure, name)
        )


def test_partial_fit_never_decreases_the_log_posterior_of_its_chunk():
    """A model with no statistics: partial_fit is one Baum-Welch step on the
    chunk, so the chunk's log-likelihood plus log prior cannot decrease."""
    for seed in range(20):
        rng = np.random.default_rng(seed)
        X, lengths = data(rng, "categorical")
        hmm = categorical(rng)  # flat priors: the log prior is 0
        before = hmm.score(X, lengths)
        after = hmm.partial_fit(X, lengths).score(X, lengths)
        assert after >= before - 1e-10 * abs(before)
        prior = categorical(rng, startprob_prior=2.0, emissionprob_prior=1.5)
        lp = prior._log_prior_of(prior._current_params(), prior._make_components())
        before = prior.score(X, lengths) + lp
        prior.partial_fit(X, lengths)
        lp = prior._log_prior_of(prior._current_params(), prior._make_components())
        assert prior.score(X, lengths) + lp >= before - 1e-10 * abs(before)


def _expected_log_joint(hmm, stats):
    """Closed form of the bound partial_fit maximises for a categorical HMM:
    the expected complete-data log-likelihood under the summed statistics,
    plus the log prior (Dirichlet: sum (alpha - 1) log p)."""
    s = stats.structure
    with np.errstate(divide="ignore"):
        logs = [
            np.log(hmm.startprob_),
            np.log(hmm.transmat_),
            np.log(hmm.emissionprob_),
        ]
    terms = [
        (s.start * logs[0]).sum(),
        np.where(s.transitions > 0, s.transitions * logs[1], 0).sum(),
        np.where(
            stats.emission.counts.T > 0, stats.emission.counts.T * logs[2], 0
        ).sum(),
    ]
    alphas = (hmm.startprob_prior, hmm.transmat_prior, hmm.emissionprob_prior)
    prior = sum((a - 1) * lg.sum() for a, lg in zip(alphas, logs) if a != 1)
    return sum(terms) + prior


def test_later_partial_fits_never_decrease_the_bound_of_all_chunks_seen():
    rng = np.random.default_rng(11)
    hmm = categorical(rng, transmat_prior=1.5, emissionprob_prior=2.0)
    for i in range(6):
        shift = i % 4  # chunks unlike each other
        X = (rng.integers(0, 2, (50, 1)) + shift) % 4
        old = {n: getattr(hmm, n).copy() for n in NAMES[:3]}
        hmm.partial_fit(X, [20, 30])
        new_bound = _expected_log_joint(hmm, hmm.stats_)
        for name, value in old.items():
            setattr(hmm, name, value)
        old_bound = _expected_log_joint(hmm, hmm.stats_)
        hmm.from_stats(hmm.stats_)
        assert _expected_log_joint(hmm, hmm.stats_) == pytest.approx(new_bound)
        assert new_bound >= old_bound - 1e-10 * abs(old_bound)


def test_a_monitor_assigned_before_fit_is_the_one_fit_reports_to():
    class StopAtTwo(ConvergenceMonitor):
        @property
        def converged(self):
            return self.iter >= 2

    rng = np.random.default_rng(0)
    X, lengths = data(rng, "categorical")
    hmm = CategoricalHMM(2, random_state=0, n_iter=50, tol=0)
    assert hmm.monitor_.tol == 0 and hmm.monitor_.n_iter == 50  # before any fit
    assert "monitor_" not in vars(hmm)
    hmm.monitor_ = StopAtTwo(hmm.monitor_.tol, hmm.monitor_.n_iter, False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hmm.fit(X, lengths)
    assert isinstance(hmm.monitor_, StopAtTwo) and hmm.n_iter_ == 2
    assert len(hmm.monitor_.history) == 2
    # Without one, every fit makes its own from the current tol and n_iter.
    plain = CategoricalHMM(2, random_state=0, n_iter=3, tol=0).fit(X, lengths)
    plain.set_params(n_iter=5).fit(X, lengths)
    assert plain.monitor_.n_iter == 5 and plain.monitor_.iter == 5


def test_summarize_and_from_stats_check_their_input():
    X = np.zeros((5, 1), dtype=int)
    with pytest.raises(NotFittedError):
        CategoricalHMM(2).summarize(X)
    hmm = CategoricalHMM(2, random_state=0, n_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hmm.fit(np.array([[0], [1], [1], [0]]))
    with pytest.raises(TypeError, match="stats must be the statistics"):
        hmm.from_stats({"start": np.ones(2)})
    with pytest.raises(ValueError, match="lengths"):
        hmm.summarize(X, [2, 2])
