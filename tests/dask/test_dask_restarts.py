"""``n_init`` restarts through joblib (``n_jobs``).

The starts are drawn one after the other from ``random_state`` and only the
iterations run in parallel, so the reference is the sequential fit
(``n_jobs=None``): a parallel fit equals it bit for bit. (On a Dask cluster:
``test_dask_cluster.py``.)
"""

import warnings

import joblib
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from bayeskit import CategoricalHMM, GaussianHMM, GaussianMixture


def _blobs(rng):
    return np.vstack([rng.normal(c, 1.0, size=(120, 2)) for c in (0, 3, 6)])


def _fit_quietly(est, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(*args)


@pytest.mark.parametrize("init_params", ["kmeans", "random"])
def test_parallel_mixture_restarts_equal_the_sequential_loop(init_params, rng):
    X = _blobs(rng)
    params = dict(n_init=4, init_params=init_params, random_state=0, max_iter=15)
    ref = _fit_quietly(GaussianMixture(3, **params), X)
    with joblib.parallel_config(backend="threading"):
        got = _fit_quietly(GaussianMixture(3, n_jobs=2, **params), X)
    for name in ["weights_", "means_", "covariances_", "precisions_cholesky_"]:
        np.testing.assert_array_equal(getattr(got, name), getattr(ref, name))
    assert got.lower_bound_ == ref.lower_bound_
    assert got.lower_bounds_ == ref.lower_bounds_
    assert got.n_iter_ == ref.n_iter_ and got.converged_ == ref.converged_
    np.testing.assert_array_equal(got.predict_proba(X), ref.predict_proba(X))


def test_restarts_are_not_one_start_repeated(rng):
    # The restarts differ (else running them anywhere would prove nothing):
    # the best of four is at least as good as the first alone.
    X = _blobs(rng)
    one = _fit_quietly(GaussianMixture(3, init_params="random", random_state=0), X)
    four = _fit_quietly(
        GaussianMixture(3, init_params="random", n_init=4, random_state=0, n_jobs=2),
        X,
    )
    assert four.lower_bound_ >= one.lower_bound_


@pytest.mark.parametrize(
    "make, data",
    [
        (lambda **kw: GaussianHMM(3, **kw), lambda X: X),
        (
            lambda **kw: CategoricalHMM(3, **kw),
            lambda X: (np.abs(X[:, :1]) * 2).astype(int) % 5,
        ),
    ],
)
def test_parallel_hmm_restarts_equal_the_sequential_loop(make, data, rng):
    X = data(_blobs(rng))
    lengths = [60] * 6
    ref = make(n_init=3, n_iter=8, random_state=0).fit(X, lengths)
    with joblib.parallel_config(backend="threading"):
        got = make(n_init=3, n_iter=8, random_state=0, n_jobs=2).fit(X, lengths)
    for name in ["startprob_", "transmat_"]:
        np.testing.assert_array_equal(getattr(got, name), getattr(ref, name))
    assert list(got.monitor_.history) == list(ref.monitor_.history)
    assert got.n_iter_ == ref.n_iter_
    np.testing.assert_array_equal(
        got.stats_.structure.occupancy, ref.stats_.structure.occupancy
    )


def test_restarts_in_other_processes_equal_the_sequential_loop(rng):
    X = _blobs(rng)
    params = dict(n_init=3, init_params="random", random_state=0, max_iter=10)
    ref = _fit_quietly(GaussianMixture(3, **params), X)
    got = _fit_quietly(GaussianMixture(3, n_jobs=2, **params), X)  # loky
    np.testing.assert_allclose(got.means_, ref.means_, rtol=1e-12)
    assert got.lower_bound_ == pytest.approx(ref.lower_bound_, rel=1e-12)


@pytest.mark.parametrize("make", [GaussianMixture, GaussianHMM])
def test_n_jobs_is_validated(make):
    with pytest.raises(ValueError, match="n_jobs"):
        make(n_jobs="two").fit(np.zeros((10, 2)) + np.arange(10)[:, None])
