"""An observable Markov chain on Dask: its counts are summed chunk by chunk.

The reference is the chain fitted on the same sequences in memory; counts
are exact sums, so the tables agree to rounding (bit for bit without
weights). Every chunking (empty chunks included) and every form (a table
with one sequence per row, a column with ``lengths``, a bag) is summarized
where it lives: a task counts each chunk, and no task holds all the rows.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayeskit import MarkovChain

da = pytest.importorskip("dask.array")
db = pytest.importorskip("dask.bag")
dd = pytest.importorskip("dask.dataframe")
pytestmark = pytest.mark.usefixtures("sync")


def cuts(n):
    """Row chunk sizes of ``n`` rows, zero-size chunks included."""
    return st.lists(st.integers(0, n), max_size=6).map(
        lambda points: tuple(np.diff([0, *sorted(points), n]).tolist())
    )


class Counting:
    """Records the size of the input of every counting task."""

    def __init__(self, monkeypatch):
        import bayeskit._dask._chain as chain

        self.sizes = []
        count = chain._count

        def spy(est, part, weights):
            rows = part[0] if isinstance(part, tuple) else part
            self.sizes.append(len(rows) if rows is not None else 0)
            return count(est, part, weights)

        monkeypatch.setattr(chain, "_count", spy)


def assert_same_tables(got, ref, **tol):
    np.testing.assert_array_equal(got.symbols_, ref.symbols_)
    np.testing.assert_allclose(got.log_prob_, ref.log_prob_, **tol)
    for a, b in zip(got.start_log_prob_, ref.start_log_prob_):
        np.testing.assert_allclose(a, b, **tol)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(order=st.integers(0, 2), data=st.data())
def test_a_table_of_sequences_in_any_chunks_gives_the_in_memory_fit(order, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    X = rng.choice(np.array(["a", "b", "c", "d"]), size=(60, 4))
    chunks = data.draw(cuts(60))
    ref = MarkovChain(order=order).fit(X)
    with pytest.MonkeyPatch.context() as mp:
        spy = Counting(mp)
        got = MarkovChain(order=order).fit(da.from_array(X, chunks=(chunks, -1)))
    assert_same_tables(got, ref, rtol=0, atol=0)
    # one counting task per non-empty chunk, each of its rows only
    assert sorted(spy.sizes) == sorted(c for c in chunks if c)


def test_a_column_with_lengths_is_cut_where_sequences_end(monkeypatch, rng):
    X = rng.choice(np.array(list("xyz")), size=(400, 1))
    lengths = [37, 1, 90, 2, 120, 150]
    ref = MarkovChain(order=2).fit(X, lengths)
    spy = Counting(monkeypatch)
    got = MarkovChain(order=2).fit(da.from_array(X, chunks=(64, 1)), lengths)
    assert_same_tables(got, ref, rtol=0, atol=0)
    assert len(spy.sizes) > 1 and max(spy.sizes) < 400 and sum(spy.sizes) == 400


def test_a_bag_of_sequences_with_weights(monkeypatch, rng):
    seqs = [rng.choice(list("pqrs"), int(rng.integers(1, 12))) for _ in range(50)]
    w = rng.uniform(0.0, 3.0, len(seqs))
    ref = MarkovChain(order=1, m=2.0).fit(seqs, sequence_weight=w)
    spy = Counting(monkeypatch)
    bag = db.from_sequence(seqs, npartitions=6)
    got = MarkovChain(order=1, m=2.0).fit(bag, sequence_weight=w)
    assert_same_tables(got, ref, rtol=1e-13, atol=1e-15)
    assert len(spy.sizes) == bag.npartitions


def test_a_dataframe_with_empty_partitions_and_declared_symbols(rng):
    frame = pd.DataFrame(rng.choice(["lo", "hi"], size=(80, 3)))
    symbols = ["lo", "mid", "hi"]  # declared: 'mid' never seen, order kept
    ref = MarkovChain(symbols=symbols).fit(frame)
    ddf = dd.from_pandas(frame.assign(k=np.arange(80) % 5), npartitions=4)
    ddf = ddf[ddf.k != 0].drop(columns="k")  # partitions of unknown size
    got = MarkovChain(symbols=symbols).fit(ddf)
    np.testing.assert_allclose(
        got.log_prob_, MarkovChain(symbols=symbols).fit(ddf.compute()).log_prob_
    )
    assert list(got.symbols_) == symbols
    empty = dd.from_pandas(frame, npartitions=4)
    empty = empty[empty[0] == "none"]
    with pytest.raises(ValueError, match="at least one sequence"):
        MarkovChain().fit(empty)
    assert ref.symbols_.tolist() == symbols


def test_partial_fit_adds_the_counts_of_dask_chunks(rng):
    X = rng.integers(0, 3, size=(90, 5))
    w = rng.integers(0, 3, 90).astype(float)
    ref = MarkovChain(order=1).fit(X, sequence_weight=w)
    est = MarkovChain(order=1).partial_fit(X[:30], sequence_weight=w[:30])
    est.partial_fit(
        da.from_array(X[30:], chunks=((20, 0, 40), -1)),
        sequence_weight=da.from_array(w[30:], chunks=25),
    )
    assert_same_tables(est, ref, rtol=1e-13, atol=1e-15)


def test_prediction_of_a_table_of_sequences_is_lazy(rng):
    X = rng.integers(0, 4, size=(70, 6))
    est = MarkovChain(order=2).fit(X)
    Xd = da.from_array(X, chunks=((30, 0, 40), -1))
    for method in ("predict_proba", "predict", "score_sequences"):
        out = getattr(est, method)(Xd)
        assert isinstance(out, da.Array), method
        expected = getattr(est, method)(X)
        got = out.compute()
        if expected.dtype.kind == "f":
            np.testing.assert_allclose(got, expected, rtol=1e-15)
        else:
            np.testing.assert_array_equal(got, expected)
    assert est.score(Xd) == pytest.approx(est.score(X), rel=1e-14)
