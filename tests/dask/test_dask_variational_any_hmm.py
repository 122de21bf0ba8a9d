"""HiddenMarkovModel(inference="variational") on Dask: the E-step of every
partition where it lives, the statistics summed, the M-step in memory.

The reference is the in-memory variational fit of the same sequences: from
the same start (the sequences having at most ``INIT_SAMPLE_STEPS`` steps in
all) every bound and posterior agrees to 1e-10, for every conjugate family,
over chunkings of the rows and partitions of a bag, with and without
sequence weights.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from bayeskit import HiddenMarkovModel
from bayeskit.emissions import DIAG, Categorical, Gaussian, Multinomial

da = pytest.importorskip("dask.array")
db = pytest.importorskip("dask.bag")
pytestmark = pytest.mark.usefixtures("sync")

FAMILIES = ["poisson", "exponential", "gaussian", "diag", "categorical", "multinomial"]


def _case(family, seed):
    rng = np.random.RandomState(seed)
    lengths = list(rng.randint(5, 30, size=6))
    n = sum(lengths)
    z = rng.randint(3, size=n)
    emission = family
    if family == "poisson":
        X = rng.poisson(np.array([1.0, 6.0, 15.0])[z][:, None], (n, 2))
    elif family == "exponential":
        X = rng.exponential(np.array([0.5, 3.0, 9.0])[z][:, None], (n, 2))
    elif family in ("gaussian", "diag"):
        X = rng.normal(size=(n, 2)) + 4.0 * z[:, None]
        emission = Gaussian(DIAG) if family == "diag" else family
    elif family == "categorical":
        X = rng.randint(4, size=(n, 2))
        X[:4] = np.arange(4)[:, None]
        emission = Categorical([4, 4])
    else:
        X = rng.multinomial(6, [0.1, 0.3, 0.6], size=n)
        emission = Multinomial(3)
    model = HiddenMarkovModel(
        3, emission=emission, inference="variational", n_iter=6, tol=0.0,
        random_state=seed,
    )  # fmt: skip
    return X, lengths, model, rng


def _posteriors(model):
    out = [model.startprob_posterior_, model.transmat_posterior_]
    q = model.emission_posterior_
    for part in q if isinstance(q, tuple) else (q,):
        out += [np.asarray(v, dtype=float) for v in vars(part).values()]
    return out


def _assert_same_fit(got, ref):
    assert_allclose(got.lower_bounds_, ref.lower_bounds_, rtol=1e-10)
    assert got.n_iter_ == ref.n_iter_
    for a, b in zip(_posteriors(got), _posteriors(ref), strict=True):
        assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert_allclose(got.transmat_, ref.transmat_, rtol=1e-10)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("weighted", [False, True])
def test_fit_on_a_dask_array_is_the_in_memory_fit(family, weighted):
    X, lengths, model, rng = _case(family, FAMILIES.index(family) + 7 * weighted)
    weights = rng.uniform(0.5, 2.0, size=len(lengths)) if weighted else None
    ref = HiddenMarkovModel(**model.get_params()).fit(
        X, lengths, sequence_weight=weights
    )
    for chunk in (1 + rng.randint(len(X)), len(X)):
        got = HiddenMarkovModel(**model.get_params()).fit(
            da.from_array(X, chunks=(chunk, -1)), lengths, sequence_weight=weights
        )
        _assert_same_fit(got, ref)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("npartitions", [1, 4])
def test_fit_on_a_bag_of_sequences_is_the_in_memory_fit(family, npartitions):
    X, lengths, model, rng = _case(family, 3)
    weights = rng.uniform(0.5, 2.0, size=len(lengths))
    seqs = np.split(X, np.cumsum(lengths)[:-1])
    ref = HiddenMarkovModel(**model.get_params()).fit(seqs, sequence_weight=weights)
    bag = db.from_sequence(seqs, npartitions=npartitions)
    _assert_same_fit(model.fit(bag, sequence_weight=weights), ref)


def test_every_iteration_summarizes_every_partition_where_it_lives(monkeypatch):
    """One E-step task per partition and iteration, each on that partition's
    sequences only (no partition is gathered into one array)."""
    from bayeskit._dask import _vhmm

    seen = []
    inner = _vhmm._partition_stats

    def counted(est, part, weights):
        seen.append(len(part))
        return inner(est, part, weights)

    monkeypatch.setattr(_vhmm, "_partition_stats", counted)
    X, lengths, model, _ = _case("poisson", 1)
    seqs = np.split(X, np.cumsum(lengths)[:-1])
    model.fit(db.from_sequence(seqs, npartitions=3))
    assert model.n_iter_ == 6
    assert len(seen) == 3 * model.n_iter_
    assert max(seen) < len(seqs)


def test_a_failed_fit_leaves_the_model_as_it_was():
    X, lengths, model, _ = _case("gaussian", 0)
    model.fit(X, lengths)
    before = [np.copy(a) for a in _posteriors(model)]
    with pytest.raises(ValueError, match="sequence_weight"):
        model.fit(
            da.from_array(X, chunks=(40, -1)),
            lengths,
            sequence_weight=np.zeros(len(lengths)),
        )
    for a, b in zip(_posteriors(model), before, strict=True):
        np.testing.assert_array_equal(a, b)
