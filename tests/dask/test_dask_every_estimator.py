"""Every public estimator on Dask input gives its in-memory answer.

The list is the package's public estimators (``tests/public_estimators.py``),
so a new estimator is covered from its line in ``bayeskit/__init__.py``
alone. Rows come as a Dask array in irregular chunks (a Dask DataFrame for the
networks), labels as a Dask array, sequences as a Dask array of rows with
``lengths`` in memory. The reference is the same estimator fitted on the same
data in memory; predictions are compared in memory.
"""

import numpy as np
import public_estimators
import pytest
from sklearn.base import clone, is_classifier

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

pytestmark = pytest.mark.usefixtures("sync")

CHUNKS = (53, 90, 17, 80)


def _dask_rows(X):
    if hasattr(X, "iloc"):
        return dd.from_pandas(X, npartitions=3)
    return da.from_array(np.asarray(X), chunks=(CHUNKS, -1))


def _sequences(X):
    """A list of sequences as rows plus lengths."""
    lengths = [len(s) for s in X]
    return np.concatenate(X), lengths


@pytest.mark.parametrize("cls", public_estimators.classes(), ids=lambda c: c.__name__)
def test_fit_on_dask_gives_the_in_memory_answer(cls):
    est = public_estimators.make(cls)
    X, y = public_estimators.data(est)
    if isinstance(X, list):
        pytest.skip(
            f"{cls.__name__} classifies whole sequences given as a list; Dask input "
            "is a bag of sequences per class, not covered by this table"
        )
    if public_estimators.reads_sequences(est):
        lengths = [60, 60, 40, 80]
        ref = clone(est).fit(X, lengths)
        got = clone(est).fit(da.from_array(np.asarray(X), chunks=(60, -1)), lengths)
        np.testing.assert_allclose(
            got.score(X, lengths), ref.score(X, lengths), rtol=1e-7
        )
        return
    if getattr(est, "_learns_structure", False):
        # Learnt from data in memory: a TypeError that says how to write it.
        with pytest.raises(TypeError, match=r"X\.compute\(\)"):
            clone(est).fit(_dask_rows(X))
        return
    if y is not None:
        ref = clone(est).fit(X, y)
        got = clone(est).fit(_dask_rows(X), da.from_array(y, chunks=(CHUNKS,)))
    else:
        ref = clone(est).fit(X)
        got = clone(est).fit(_dask_rows(X))
    if is_classifier(ref):
        np.testing.assert_array_equal(got.classes_, ref.classes_)
        np.testing.assert_allclose(
            got.predict_proba(X), ref.predict_proba(X), rtol=1e-8, atol=1e-10
        )
    else:
        np.testing.assert_allclose(got.score(X), ref.score(X), rtol=1e-7)


def _filtered(X, keep):
    """``X`` on Dask, filtered by a boolean mask: chunks of unknown size, some
    of them empty (as after ``X[X[:, 0] > t]``)."""
    if hasattr(X, "iloc"):
        frame = dd.from_pandas(X.assign(_keep=keep), npartitions=4)
        return frame[frame._keep].drop(columns="_keep"), X[keep]
    A = da.from_array(np.asarray(X), chunks=(CHUNKS, -1))
    return A[da.from_array(keep, chunks=(CHUNKS,))], np.asarray(X)[keep]


@pytest.mark.parametrize("cls", public_estimators.classes(), ids=lambda c: c.__name__)
def test_prediction_on_empty_chunks_is_an_empty_part_of_the_answer(cls):
    est = public_estimators.make(cls)
    X, y = public_estimators.data(est)
    if isinstance(X, list) or public_estimators.reads_sequences(est):
        pytest.skip(f"{cls.__name__} reads sequences: Dask input is per sequence")
    fitted = clone(est).fit(X) if y is None else clone(est).fit(X, y)
    keep = np.zeros(len(X), dtype=bool)
    keep[60:75] = True  # only the second chunk keeps rows: the others are empty
    for method in ("predict_proba", "score_samples", "predict"):
        if not hasattr(fitted, method) or (
            method == "predict" and hasattr(X, "iloc")  # a frame's predict fills it
        ):
            continue
        dask_X, kept = _filtered(X, keep)
        got = np.asarray(getattr(fitted, method)(dask_X).compute())
        expected = np.asarray(getattr(fitted, method)(kept))
        if expected.dtype.kind == "f":
            np.testing.assert_allclose(got, expected, rtol=1e-10)
        else:
            np.testing.assert_array_equal(got, expected)
        # every row filtered out: an empty answer, not an error
        dask_X, _ = _filtered(X, np.zeros(len(X), dtype=bool))
        assert len(getattr(fitted, method)(dask_X).compute()) == 0
