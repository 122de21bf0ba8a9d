"""Spending the iteration budget: each model follows its peer's convention.

hmmlearn's ``ConvergenceMonitor`` records every iteration and does not warn when
``n_iter`` is reached (``monitor_.converged`` and ``converged_`` tell); it logs a
decrease of the log-likelihood. scikit-learn's mixtures emit a
``ConvergenceWarning`` when ``max_iter`` is reached without convergence.
"""

import logging
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, KFold

from bayeskit import (
    GMMHMM,
    CategoricalHMM,
    GaussianHMM,
    GaussianMixture,
    GaussianMixtureClassifier,
    HMMClassifier,
    PoissonHMM,
)


def regime_series(rng, n=600):
    """A two-regime Gaussian series whose fits need more than ten iterations."""
    z = np.zeros(n, dtype=int)
    for t in range(1, n):
        z[t] = z[t - 1] if rng.random() < 0.95 else 1 - z[t - 1]
    return rng.normal(np.where(z, 1.0, -1.0)[:, None], 1.0, size=(n, 2))


def caught(func):
    """Every warning ``func`` emits (none filtered out)."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        func()
    return [w for w in record]


def grid(model, params):
    return GridSearchCV(model, params, cv=KFold(3))


@pytest.mark.parity
def test_hmm_grid_search_with_hmmlearn_defaults_is_silent_as_hmmlearn(rng):
    hh = pytest.importorskip("hmmlearn.hmm")
    X = regime_series(rng)
    params = {"n_components": [2, 3, 4], "covariance_type": ["diag", "full"]}
    ours = grid(GaussianHMM(n_iter=10, random_state=0), params)
    theirs = grid(hh.GaussianHMM(n_iter=10, random_state=0), params)
    assert caught(lambda: theirs.fit(X)) == []
    assert caught(lambda: ours.fit(X)) == []
    # The budget was spent in some fits: what is silent is the convention, not
    # the data.
    spent = GaussianHMM(4, n_iter=10, tol=1e-6, random_state=0).fit(X)
    reference = hh.GaussianHMM(4, n_iter=10, tol=1e-6, random_state=0).fit(X)
    assert spent.monitor_.iter == 10 and spent.monitor_.converged
    assert not spent.converged_
    assert reference.monitor_.iter == 10 and reference.monitor_.converged


@pytest.mark.parametrize(
    "make",
    [
        lambda: CategoricalHMM(3, n_iter=2, tol=0.0, random_state=0),
        lambda: GaussianHMM(3, n_iter=2, tol=0.0, random_state=0),
        lambda: GMMHMM(2, n_mix=2, n_iter=2, tol=0.0, random_state=0),
        lambda: PoissonHMM(3, n_iter=2, tol=0.0, random_state=0),
    ],
)
def test_every_hmm_spends_its_budget_without_a_warning(make, rng):
    model = make()
    if isinstance(model, CategoricalHMM):
        X = rng.integers(0, 4, size=(200, 1))
    elif isinstance(model, PoissonHMM):
        X = rng.poisson(3.0, size=(200, 2))
    else:
        X = rng.normal(size=(200, 2))
    assert caught(lambda: model.fit(X)) == []
    assert model.n_iter_ == 2 and not model.converged_
    assert model.monitor_.converged  # hmmlearn's rule: the budget is spent


def test_hmm_classifier_is_silent_as_its_hmms(rng):
    X = [rng.normal(size=(40, 2)) + (i % 2) for i in range(8)]
    y = np.arange(8) % 2
    clf = HMMClassifier(GaussianHMM(2, n_iter=2, tol=0.0, random_state=0))
    assert caught(lambda: clf.fit(X, y)) == []
    assert all(not m.converged_ for m in clf.models_)


def test_hmm_logs_a_decrease_as_hmmlearn(caplog):
    """A monitored decrease is logged (module logger), not warned."""
    from bayeskit.hmm import ConvergenceMonitor

    monitor = ConvergenceMonitor(1e-2, 10)
    with caplog.at_level(logging.WARNING, logger="bayeskit.hmm"):
        record = caught(lambda: [monitor.report(v) for v in (-3.0, -4.0)])
    assert record == []
    assert [r.name for r in caplog.records] == ["bayeskit.hmm"]
    assert "not converging" in caplog.records[0].getMessage()


@pytest.mark.parity
def test_mixture_at_max_iter_warns_as_scikit_learn(rng):
    from sklearn.mixture import GaussianMixture as SkGaussianMixture

    X = np.vstack([rng.normal(size=(100, 2)), rng.normal(4.0, size=(100, 2))])
    kw = dict(n_components=3, max_iter=2, tol=0.0, random_state=0)
    theirs = caught(lambda: SkGaussianMixture(**kw).fit(X))
    ours = caught(lambda: GaussianMixture(**kw).fit(X))
    assert [w.category for w in theirs] == [ConvergenceWarning]
    assert [w.category for w in ours] == [ConvergenceWarning]
    # The warning points at the caller's line (this file), as scikit-learn's
    # points outside its package.
    assert ours[0].filename == __file__
    # Converged: silent, as scikit-learn.
    kw = dict(n_components=2, max_iter=200, random_state=0)
    assert caught(lambda: SkGaussianMixture(**kw).fit(X)) == []
    assert caught(lambda: GaussianMixture(**kw).fit(X)) == []


def test_mixture_classifier_at_max_iter_warns_as_its_mixtures(rng):
    X = rng.normal(size=(120, 2))
    y = np.arange(120) % 2
    clf = GaussianMixtureClassifier(n_components=2, max_iter=1, random_state=0)
    record = caught(lambda: clf.fit(X, y))
    assert record and all(w.category is ConvergenceWarning for w in record)
