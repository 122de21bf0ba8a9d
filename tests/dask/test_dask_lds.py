"""Linear dynamical systems on Dask: a bag of sequences, or a Dask array of rows
with ``lengths``. The reference is the in-memory fit of the same sequences: EM
on Dask sums the same statistics per iteration, so the parameters agree."""

import numpy as np
import public_estimators
import pytest

from bayeskit import LinearGaussianSSM

da = pytest.importorskip("dask.array")
db = pytest.importorskip("dask.bag")
pytestmark = pytest.mark.usefixtures("sync")

# Every public linear dynamical system, from the package's names: a new one
# is fitted on Dask from its line in bayeskit/__init__.py alone.
MODELS = public_estimators.linear_dynamical_systems()


def _model(cls, **params):
    """Two state dimensions (by the model's own name of them), a few EM
    iterations."""
    est = public_estimators.make(cls)
    size = next(k for k in ("n_components", "n_dim_state") if k in est.get_params())
    return est.set_params(**{size: 2}, **params)


def test_the_linear_dynamical_systems_are_found_from_the_public_names():
    assert {"LinearGaussianSSM", "KalmanFilter"} <= {c.__name__ for c in MODELS}


def _sequences(rng, n=20, d=3):
    seqs = []
    for _ in range(n):
        x = np.cumsum(rng.normal(size=(int(rng.integers(3, 25)), 1)), axis=0)
        seqs.append(x @ rng.normal(size=(1, d)) + rng.normal(size=(len(x), d)))
    seqs[0][1, 0] = np.nan  # a missing cell travels too
    return seqs


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_bag_and_array_fits_equal_the_in_memory_fit(cls):
    rng = np.random.default_rng(0)
    seqs = _sequences(rng)
    weights = rng.uniform(0.5, 2.0, size=len(seqs))
    memory = _model(cls, n_iter=4, tol=0).fit(seqs, sequence_weight=weights)
    bag = _model(cls, n_iter=4, tol=0).fit(
        db.from_sequence(seqs, npartitions=4), sequence_weight=weights
    )
    rows, lengths = np.concatenate(seqs), [len(s) for s in seqs]
    array = _model(cls, n_iter=4, tol=0).fit(
        da.from_array(rows, chunks=(37, 3)), lengths, sequence_weight=weights
    )
    expected = public_estimators.fitted_arrays(memory)
    assert "transition_covariance_" in expected
    for fitted in (bag, array):
        assert set(public_estimators.fitted_arrays(fitted)) == set(expected)
        for name, value in expected.items():
            np.testing.assert_allclose(
                getattr(fitted, name), value, rtol=1e-9, atol=1e-12, err_msg=name
            )
        np.testing.assert_allclose(fitted.lower_bound_, memory.lower_bound_, rtol=1e-12)
    scores = memory.score_sequences(seqs)
    np.testing.assert_allclose(
        bag.score_sequences(db.from_sequence(seqs, npartitions=3)).compute(),
        scores,
        rtol=1e-10,
    )
    np.testing.assert_allclose(
        bag.score(da.from_array(rows, chunks=(50, 3)), lengths),
        scores.sum(),
        rtol=1e-10,
    )


def test_a_bag_with_lengths_is_an_error():
    seqs = _sequences(np.random.default_rng(1))
    with pytest.raises(ValueError, match="lengths"):
        LinearGaussianSSM(2).fit(db.from_sequence(seqs), [3])


@pytest.mark.parametrize("method", ["filter", "smooth", "predict", "transform"])
@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_states_on_dask_are_lazy_and_equal_the_in_memory_ones(cls, method):
    rng = np.random.default_rng(1)
    seqs = _sequences(rng)
    model = _model(cls, n_iter=3, tol=0).fit(seqs)
    rows, lengths = np.concatenate(seqs), [len(s) for s in seqs]
    expected = getattr(model, method)(rows, lengths)
    got = getattr(model, method)(da.from_array(rows, chunks=(41, 3)), lengths)
    per_sequence = getattr(model, method)(db.from_sequence(seqs, npartitions=3))
    if method in ("filter", "smooth"):
        assert all(isinstance(part, da.Array) for part in got)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g.compute(), e, rtol=1e-12, atol=1e-14)
        items = per_sequence.compute()
        means = np.concatenate([m for m, _ in items])
        covariances = np.concatenate([c for _, c in items])
        np.testing.assert_allclose(means, expected[0], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(covariances, expected[1], rtol=1e-12, atol=1e-14)
    else:
        assert isinstance(got, da.Array) and got.shape == expected.shape
        np.testing.assert_allclose(got.compute(), expected, rtol=1e-12, atol=1e-14)
        items = per_sequence.compute()
        assert [len(m) for m in items] == lengths
        np.testing.assert_allclose(np.concatenate(items), expected, rtol=1e-12)
