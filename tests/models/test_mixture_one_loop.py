"""GaussianMixture on the one EM loop of the EM base: scikit-learn's habits
(``max_iter``, the objective per sample, ``warm_start``, ``verbose``) are a
convention and a monitor, not a second loop; the answers are scikit-learn's."""

import re
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture as SkGM

from bayeskit import GaussianMixture
from bayeskit._base import em

TYPES = ["full", "tied", "diag", "spherical"]


def _blobs(seed, n=90, d=3):
    rng = np.random.RandomState(seed)
    centres = rng.uniform(-6, 6, (3, d))
    X = np.concatenate(
        [rng.randn(n // 3, d) * rng.uniform(0.5, 2) + c for c in centres]
    )
    return X[rng.permutation(len(X))]


def test_fit_runs_the_one_loop_once_per_start(monkeypatch):
    calls = []
    real = em._chain_em_from_start
    monkeypatch.setattr(
        em, "_chain_em_from_start", lambda *a: calls.append(a[-1]) or real(*a)
    )
    GaussianMixture(3, n_init=3, random_state=0).fit(_blobs(0))
    assert calls == [0, 1, 2]
    assert not hasattr(em.BaseLatentModel, "_run_em")


@pytest.mark.parametrize("cov", TYPES)
def test_warm_start_refits_as_sklearn(cov):
    # Under warm_start the first change is measured from the fitted
    # lower_bound_: the iterations, convergence and bounds are scikit-learn's.
    for seed in range(6):
        X = _blobs(seed)
        kw = dict(covariance_type=cov, max_iter=4, warm_start=True, random_state=seed)
        ours, theirs = GaussianMixture(3, **kw), SkGM(3, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for _ in range(4):
                ours.fit(X)
                theirs.fit(X)
                assert ours.n_iter_ == theirs.n_iter_
                assert ours.converged_ == theirs.converged_
                np.testing.assert_allclose(
                    ours.lower_bound_, theirs.lower_bound_, rtol=1e-9
                )
                np.testing.assert_allclose(
                    ours.means_, theirs.means_, rtol=1e-7, atol=1e-9
                )


def _lines(capsys):
    # Timings and numbers differ in their last digits: compare the words.
    out = capsys.readouterr().out
    return [re.sub(r"-?\d+\.\d+|inf", "#", line) for line in out.splitlines()]


@pytest.mark.parametrize("verbose", [1, 2])
@pytest.mark.parametrize("cov", TYPES)
def test_verbose_messages_are_sklearns(capsys, verbose, cov):
    X = _blobs(3)
    kw = dict(
        covariance_type=cov,
        n_init=2,
        verbose=verbose,
        verbose_interval=2,
        random_state=0,
        max_iter=7,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        SkGM(3, **kw).fit(X)
        theirs = _lines(capsys)
        GaussianMixture(3, **kw).fit(X)
        ours = _lines(capsys)
    assert ours == theirs
    assert any(line.startswith("  Iteration") for line in ours)
