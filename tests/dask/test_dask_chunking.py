"""Statistics on Dask are associative and commutative: any chunking and any
order of the rows give the parameters of one in-memory fit, and an integer
sample weight is the row repeated, also when the copies land in other chunks."""

import numpy as np
import public_estimators
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone

da = pytest.importorskip("dask.array")

pytestmark = pytest.mark.usefixtures("sync")

PROPERTY = settings(
    max_examples=12,
    database=None,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
TIGHT = dict(rtol=1e-10, atol=1e-12)


def _summed():
    """Every public classifier of tables whose fit is one sum of statistics
    (``public_estimators.summed_classifiers``): a new one is covered from its
    line in ``bayeskit/__init__.py``."""
    return public_estimators.summed_classifiers()


MODELS = {cls.__name__: cls for cls in _summed()}


def test_the_summed_classifiers_are_found_from_the_public_names():
    assert {"GaussianNB", "QuadraticDiscriminantAnalysis", "CategoricalNB"} <= set(
        MODELS
    )
    assert {"NaiveBayes", "MixedNB", "TreeAugmentedNB"} <= set(MODELS)


def data(model, seed: int, n: int):
    est = public_estimators.make(MODELS[model])
    X, y = public_estimators.data(est, n=n, seed=seed)
    return est, np.asarray(X), np.asarray(y)


def cuts(n: int):
    """Row chunk sizes of a chunking of ``n`` rows (empty chunks included)."""
    return st.lists(st.integers(0, n), max_size=8).map(
        lambda points: tuple(np.diff([0, *sorted(points), n]).tolist())
    )


def assert_same(a, b, X):
    np.testing.assert_array_equal(a.classes_, b.classes_)
    np.testing.assert_allclose(
        b.predict_joint_log_proba(X), a.predict_joint_log_proba(X), **TIGHT
    )


@pytest.mark.parametrize("model", sorted(MODELS))
@PROPERTY
@given(seed=st.integers(0, 2**16), data_=st.data())
def test_any_chunking_and_row_order_give_the_in_memory_fit(model, seed, data_):
    n = 90
    make, X, y = data(model, seed, n)
    ref = clone(make).fit(X, y)
    order = np.random.default_rng(seed + 1).permutation(n)
    chunks = data_.draw(cuts(n))
    est = clone(make).fit(
        da.from_array(X[order], chunks=(chunks, -1)),
        da.from_array(y[order], chunks=(chunks,)),
    )
    assert_same(ref, est, X)


@pytest.mark.parametrize("model", sorted(MODELS))
@PROPERTY
@given(seed=st.integers(0, 2**16), data_=st.data())
def test_integer_weights_are_repeated_rows_across_chunks(model, seed, data_):
    n = 60
    make, X, y = data(model, seed, n)
    w = np.random.default_rng(seed + 2).integers(0, 4, n)
    for c in np.unique(y):  # every class keeps a row
        w[np.argmax(y == c)] = max(1, w[np.argmax(y == c)])
    Xr, yr = np.repeat(X, w, axis=0), np.repeat(y, w)
    weighted = clone(make).fit(
        da.from_array(X, chunks=(data_.draw(cuts(n)), -1)),
        da.from_array(y, chunks=17),
        sample_weight=da.from_array(w.astype(float), chunks=13),
    )
    m = len(yr)
    repeated = clone(make).fit(
        da.from_array(Xr, chunks=(data_.draw(cuts(m)), -1)),
        da.from_array(yr, chunks=23),
    )
    assert_same(repeated, weighted, X)


@PROPERTY
@given(
    seed=st.integers(0, 2**16),
    n_partitions=st.integers(1, 8),
    data_=st.data(),
)
def test_baum_welch_on_any_partitioning_and_order_of_sequences(
    seed, n_partitions, data_
):
    """A bag of the sequences in any order and any number of partitions
    gives the in-memory Baum-Welch from the same parameters (the expected
    counts of the partitions add in any order)."""
    db = pytest.importorskip("dask.bag")
    from bayeskit import GaussianHMM

    rng = np.random.default_rng(seed)
    seqs = [
        rng.normal(size=(int(rng.integers(1, 12)), 2)) + 2.0 * (i % 2)
        for i in range(10)
    ]
    order = data_.draw(st.permutations(range(len(seqs))))
    start = GaussianHMM(2, "full", n_iter=1, random_state=0).fit(seqs)

    def make():
        est = GaussianHMM(2, "full", n_iter=4, tol=0.0, init_params="")
        est.startprob_, est.transmat_ = start.startprob_, start.transmat_
        est.means_, est.covars_ = start.means_, start.covars_
        return est

    ref = make().fit(seqs)
    bag = db.from_sequence([seqs[i] for i in order], npartitions=n_partitions)
    got = make().fit(bag)
    for name in ["startprob_", "transmat_", "means_", "covars_"]:
        np.testing.assert_allclose(
            getattr(got, name), getattr(ref, name), rtol=1e-8, atol=1e-12
        )
    np.testing.assert_allclose(got.lower_bounds_, ref.lower_bounds_, rtol=1e-10)
