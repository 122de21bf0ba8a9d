"""Variational HMMs on Dask: the E-step of every partition where it lives,
the statistics summed, the M-step in memory.

The reference is the in-memory variational fit of the same sequences: from
the same start (the in-memory start, the sequences having at most
``INIT_SAMPLE_STEPS`` steps in all) every bound and posterior agrees to
1e-10, over random chunkings of the rows and partitions of a bag, with and
without sequence weights.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from bayeskit.hmm import VariationalCategoricalHMM, VariationalGaussianHMM

da = pytest.importorskip("dask.array")
db = pytest.importorskip("dask.bag")
pytestmark = pytest.mark.usefixtures("sync")

KINDS = ["full", "tied", "diag", "spherical", "categorical"]


def _case(kind, seed):
    rng = np.random.RandomState(seed)
    lengths = list(rng.randint(5, 30, size=6))
    n = sum(lengths)
    if kind == "categorical":
        X = rng.randint(4, size=(n, 1))
        X[:4, 0] = np.arange(4)
        model = VariationalCategoricalHMM(3, n_iter=6, tol=0.0, random_state=seed)
    else:
        X = rng.normal(size=(n, 2)) + 4.0 * rng.randint(3, size=(n, 1))
        model = VariationalGaussianHMM(
            3, covariance_type=kind, n_iter=6, tol=0.0, random_state=seed
        )
    return X, lengths, model, rng


def _assert_same_fit(got, ref):
    assert_allclose(got.lower_bounds_, ref.lower_bounds_, rtol=1e-10)
    assert got.n_iter_ == ref.n_iter_
    for name in ref._vb_names():
        assert_allclose(getattr(got, name), getattr(ref, name), rtol=1e-10, atol=1e-12)


@settings(max_examples=8, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    seed=st.integers(0, 1000),
    weighted=st.booleans(),
    data=st.data(),
)
def test_fit_on_a_dask_array_is_the_in_memory_fit(kind, seed, weighted, data):
    X, lengths, model, rng = _case(kind, seed)
    weights = rng.uniform(0.5, 2.0, size=len(lengths)) if weighted else None
    ref = model.__class__(**model.get_params()).fit(X, lengths, sequence_weight=weights)
    chunk = data.draw(st.integers(1, len(X)), label="chunk")
    got = model.fit(
        da.from_array(X, chunks=(chunk, -1)), lengths, sequence_weight=weights
    )
    _assert_same_fit(got, ref)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("npartitions", [1, 4])
def test_fit_on_a_bag_of_sequences_is_the_in_memory_fit(kind, npartitions):
    X, lengths, model, rng = _case(kind, 3)
    weights = rng.uniform(0.5, 2.0, size=len(lengths))
    seqs = np.split(X, np.cumsum(lengths)[:-1])
    ref = model.__class__(**model.get_params()).fit(seqs, sequence_weight=weights)
    bag = db.from_sequence(seqs, npartitions=npartitions)
    _assert_same_fit(model.fit(bag, sequence_weight=weights), ref)


def test_a_failed_fit_leaves_the_model_as_it_was():
    X, lengths, model, _ = _case("full", 0)
    model.fit(X, lengths)
    before = {name: np.copy(getattr(model, name)) for name in model._vb_names()}
    with pytest.raises(ValueError, match="sequence_weight"):
        model.fit(
            da.from_array(X, chunks=(40, -1)),
            lengths,
            sequence_weight=np.zeros(len(lengths)),
        )
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(model, name), value)


def test_every_iteration_summarizes_every_partition_where_it_lives(monkeypatch):
    """The E-step runs per partition (no partition is gathered into one
    array): one call of the partition's E-step per partition and iteration,
    each on that partition's sequences only."""
    from bayeskit._dask import _vhmm

    seen = []
    inner = _vhmm._partition_stats

    def counted(est, part, weights):
        seen.append(len(part))
        return inner(est, part, weights)

    monkeypatch.setattr(_vhmm, "_partition_stats", counted)
    X, lengths, model, _ = _case("diag", 1)
    seqs = np.split(X, np.cumsum(lengths)[:-1])
    model.fit(db.from_sequence(seqs, npartitions=3))
    assert len(seen) == 3 * model.n_iter_
    assert max(seen) < len(seqs)
