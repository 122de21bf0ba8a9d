"""Statistics on Dask are associative and commutative: any chunking and any
order of the rows give the parameters of one in-memory fit, and an integer
sample weight is the row repeated, also when the copies land in other chunks."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayeskit import CategoricalNB, GaussianNB, QuadraticDiscriminantAnalysis

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

MODELS = {
    "GaussianNB": (GaussianNB, ["theta_", "var_", "class_log_prior_"], False),
    "QDA": (
        lambda: QuadraticDiscriminantAnalysis(store_covariance=True),
        ["means_", "covariance_"],
        False,
    ),
    "CategoricalNB": (CategoricalNB, ["feature_log_prob_", "class_log_prior_"], True),
}


def data(seed: int, n: int, categorical: bool):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3  # every class has rows
    if categorical:
        X = rng.integers(0, 4, (n, 3))
    else:
        X = rng.normal(size=(n, 3)) * [1.0, 10.0, 0.1] + [0.0, 1e3, 0.0]
    return X, y


def cuts(n: int):
    """Row chunk sizes of a chunking of ``n`` rows."""
    return st.lists(st.integers(1, n - 1), max_size=8, unique=True).map(
        lambda points: tuple(np.diff([0, *sorted(points), n]).tolist())
    )


def assert_same(a, b, names):
    for name in names:
        left, right = getattr(a, name), getattr(b, name)
        for u, v in (
            zip(np.atleast_1d(left), np.atleast_1d(right))
            if isinstance(left, list)
            else [(left, right)]
        ):
            np.testing.assert_allclose(v, u, **TIGHT, err_msg=name)


@pytest.mark.parametrize("model", sorted(MODELS))
@PROPERTY
@given(seed=st.integers(0, 2**16), data_=st.data())
def test_any_chunking_and_row_order_give_the_in_memory_fit(model, seed, data_):
    make, names, categorical = MODELS[model]
    n = 90
    X, y = data(seed, n, categorical)
    ref = make().fit(X, y)
    order = np.random.default_rng(seed + 1).permutation(n)
    chunks = data_.draw(cuts(n))
    est = make().fit(
        da.from_array(X[order], chunks=(chunks, 3)),
        da.from_array(y[order], chunks=(chunks,)),
    )
    assert_same(ref, est, names)


@pytest.mark.parametrize("model", sorted(MODELS))
@PROPERTY
@given(seed=st.integers(0, 2**16), data_=st.data())
def test_integer_weights_are_repeated_rows_across_chunks(model, seed, data_):
    make, names, categorical = MODELS[model]
    n = 60
    X, y = data(seed, n, categorical)
    w = np.random.default_rng(seed + 2).integers(0, 4, n)
    w[:3] = 1  # every class keeps a row
    Xr, yr = np.repeat(X, w, axis=0), np.repeat(y, w)
    weighted = make().fit(
        da.from_array(X, chunks=(data_.draw(cuts(n)), 3)),
        da.from_array(y, chunks=17),
        sample_weight=da.from_array(w.astype(float), chunks=13),
    )
    m = len(yr)
    repeated = make().fit(
        da.from_array(Xr, chunks=(data_.draw(cuts(m)), 3)),
        da.from_array(yr, chunks=23),
    )
    assert_same(repeated, weighted, names)


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
