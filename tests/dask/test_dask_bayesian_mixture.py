"""BayesianGaussianMixture on Dask: the variational E-step of every chunk
where it lives, the statistics summed, the M-step in memory.

The reference is the in-memory fit of the same rows: with at most
``INIT_SAMPLE_SIZE`` rows the start and the priors' defaults read all of
them, so every bound and posterior agrees to 1e-10."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from sklearn.exceptions import ConvergenceWarning

from bayeskit import BayesianGaussianMixture

da = pytest.importorskip("dask.array")
pytestmark = pytest.mark.usefixtures("sync")

NAMES = ["weight_concentration_", "mean_precision_", "means_", "degrees_of_freedom_"]
NAMES += ["covariances_", "weights_"]


def _fit(model, X, sw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, sample_weight=sw)


@settings(max_examples=10, deadline=None)
@given(
    seed=st.integers(0, 1000),
    ctype=st.sampled_from(["full", "tied", "diag", "spherical"]),
    prior=st.sampled_from(["dirichlet_process", "dirichlet_distribution"]),
    weighted=st.booleans(),
    data=st.data(),
)
def test_fit_on_a_dask_array_is_the_in_memory_fit(seed, ctype, prior, weighted, data):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(200, 2)) + 5.0 * rng.randint(3, size=(200, 1))
    sw = rng.uniform(0.5, 2.0, 200) if weighted else None
    params = dict(
        n_components=4, covariance_type=ctype, weight_concentration_prior_type=prior,
        max_iter=15, n_init=2, random_state=seed,
    )  # fmt: skip
    ref = _fit(BayesianGaussianMixture(**params), X, sw)
    chunk = data.draw(st.integers(10, 200), label="chunk")
    Xd = da.from_array(X, chunks=(chunk, -1))
    swd = None if sw is None else da.from_array(sw, chunks=(chunk,))
    got = _fit(BayesianGaussianMixture(**params), Xd, swd)
    assert got.n_iter_ == ref.n_iter_
    assert_allclose(got.lower_bounds_, ref.lower_bounds_, rtol=1e-10)
    for name in NAMES:
        assert_allclose(getattr(got, name), getattr(ref, name), rtol=1e-10, atol=1e-12)


def test_every_iteration_summarizes_every_chunk_where_it_lives(monkeypatch):
    from bayeskit._dask import _edge

    seen = []
    inner = _edge._summarize_unsupervised

    def counted(est, X, sample_weight):
        seen.append(len(X))
        return inner(est, X, sample_weight)

    monkeypatch.setattr(_edge, "_summarize_unsupervised", counted)
    from bayeskit._dask import _bgm

    monkeypatch.setattr(_bgm, "_summarize_unsupervised", counted)
    X = np.random.RandomState(0).normal(size=(120, 2))
    model = _fit(
        BayesianGaussianMixture(n_components=2, max_iter=5, random_state=0),
        da.from_array(X, chunks=(40, -1)),
        None,
    )
    assert len(seen) == 3 * model.n_iter_
    assert max(seen) == 40
