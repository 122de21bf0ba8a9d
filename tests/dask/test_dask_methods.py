"""Every prediction method of every tabular estimator on Dask input.

The loop finds the methods an estimator has and checks each one on a Dask
array: the result is a lazy Dask array (nothing computed when the method
returns) equal to the method on the same rows in memory (the reference).
"""

import warnings

import numpy as np
import pandas as pd
import public_estimators
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pytestmark = pytest.mark.usefixtures("sync")

METHODS = [
    "predict",
    "predict_proba",
    "predict_log_proba",
    "predict_joint_log_proba",
    "decision_function",
    "transform",
    "score_samples",
]


def _tabular():
    """Every public estimator that reads a table of numbers, from the
    package's names (``public_estimators.tabular``): a new one is covered
    from its line in ``bayeskit/__init__.py``."""
    return public_estimators.tabular()


@pytest.mark.parametrize("cls", _tabular(), ids=lambda c: c.__name__)
def test_every_method_on_a_dask_array_is_lazy_and_equals_in_memory(cls, rng):
    from dask.callbacks import Callback

    est = public_estimators.make(cls)
    X, y = public_estimators.data(est, n=300)
    X = np.asarray(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X) if y is None else est.fit(X, y)
    Xd = da.from_array(X, chunks=(70, 2))
    name = cls.__name__
    checked = []
    for method in METHODS:
        if not hasattr(est, method):
            continue
        expected = getattr(est, method)(X)
        ran = []
        with Callback(pretask=lambda *a, ran=ran: ran.append(a)):
            out = getattr(est, method)(Xd)
        assert isinstance(out, da.Array), (name, method, type(out))
        assert not ran, f"{name}.{method} computed {len(ran)} tasks"
        assert out.shape == expected.shape, (name, method)
        assert out.dtype == expected.dtype, (name, method)
        got = out.compute()
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
        else:
            np.testing.assert_array_equal(got, expected)
        checked.append(method)
    assert "predict" in checked or "score_samples" in checked


def test_the_tabular_estimators_are_found_from_the_public_names():
    names = {c.__name__ for c in _tabular()}
    assert {"GaussianNB", "MixedNB", "GaussianMixture", "MarkovChain"} <= names
    assert {"NaiveBayes", "MixtureModel", "PoissonMixture"} <= names


def test_bayesian_network_prediction_on_a_dask_dataframe(rng):
    from bayeskit import BayesianNetwork

    frame = pd.DataFrame(rng.integers(0, 3, (200, 3)), columns=list("abc"))
    bn = BayesianNetwork([("a", "b"), ("b", "c")]).fit(frame)
    holes = frame.astype(float)
    holes.iloc[::3, 1] = np.nan
    holes.iloc[1::5, 0] = np.nan
    lazy = dd.from_pandas(holes, npartitions=4)
    scores = bn.score_samples(lazy)
    assert isinstance(scores, da.Array)
    np.testing.assert_allclose(scores.compute(), bn.score_samples(holes), rtol=1e-12)
    for method, kwargs in [
        ("predict", {}),
        ("predict_proba", {}),
        ("predict_proba", {"variable": "b"}),
        ("predict_proba", {"soft_evidence": {"b": [0.2, 0.3, 0.5]}}),
    ]:
        out = getattr(bn, method)(lazy, **kwargs)
        assert isinstance(out, dd.DataFrame)
        expected = getattr(bn, method)(holes, **kwargs)
        assert list(out.columns) == list(expected.columns)
        pd.testing.assert_frame_equal(out.compute(), expected, check_dtype=False)
    per_row = {"b": np.full((len(holes), 3), 1 / 3)}
    with pytest.raises(ValueError, match="soft_evidence"):
        bn.predict_proba(lazy, soft_evidence=per_row)
