"""``n_init`` restarts through joblib (``n_jobs``).

The starts are drawn one after the other from ``random_state`` and only the
iterations run in parallel, so the reference is the sequential fit
(``n_jobs=None``): a parallel fit equals it bit for bit. (On a Dask cluster:
``test_dask_cluster.py``.)
"""

import warnings

import joblib
import numpy as np
import public_estimators
import pytest
from sklearn.exceptions import ConvergenceWarning

from bayeskit import GaussianHMM, GaussianMixture


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


def _restarted(cls, **params):
    """``cls`` from the public names with three starts of a few iterations,
    two components, seeded."""
    est = public_estimators.make(cls)
    quick = {k: 8 for k in ("n_iter", "max_iter") if k in est.get_params()}
    return est.set_params(n_init=3, n_components=2, random_state=0, **quick, **params)


# Every public estimator with n_init and n_jobs, from the package's names: a
# new one is checked from its line in bayeskit/__init__.py alone.
RESTARTABLE = public_estimators.restartable()


def test_the_restartable_estimators_are_found_from_the_public_names():
    names = {cls.__name__ for cls in RESTARTABLE}
    assert {"GaussianMixture", "GaussianHMM", "CategoricalHMM"} <= names
    assert {"MixtureModel", "PoissonMixture", "HiddenMarkovModel"} <= names


@pytest.mark.parametrize("cls", RESTARTABLE, ids=lambda c: c.__name__)
def test_parallel_restarts_equal_the_sequential_loop(cls):
    est = public_estimators.make(cls)
    if public_estimators.reads_steps(est):
        seqs = public_estimators.sequences(est, n_sequences=8, seed=1)
        args = (np.concatenate(seqs), [len(s) for s in seqs])
    else:
        args = (np.asarray(public_estimators.data(est, n=200, seed=1)[0]),)
    ref = _fit_quietly(_restarted(cls), *args)
    with joblib.parallel_config(backend="threading"):
        got = _fit_quietly(_restarted(cls, n_jobs=2), *args)
    expected = public_estimators.fitted_arrays(ref)
    assert expected
    assert set(public_estimators.fitted_arrays(got)) == set(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(getattr(got, name), value, err_msg=name)
    assert got.n_iter_ == ref.n_iter_
    assert list(got.lower_bounds_) == list(ref.lower_bounds_)


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
