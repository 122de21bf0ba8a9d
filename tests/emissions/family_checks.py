"""Checks every family with independent features passes, against references
(scipy.stats densities, statistics of all rows, repeated rows), not against
the family's own output. Imported by the tests of each family."""

from dataclasses import fields
from itertools import pairwise

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose


def with_nan(X, rng, fraction=0.2):
    """``X`` as float with about ``fraction`` of its cells NaN (never a whole
    row: a row with nothing observed never reaches a family)."""
    X = np.array(X, dtype=float)
    holes = rng.random(X.shape) < fraction
    holes[:, 0] &= ~holes[:, 1:].all(axis=1)
    X[holes] = np.nan
    return X


def reference_log_likelihood(X, params_rows, logpdf):
    """``sum_j logpdf(x_j; state k)`` over the observed cells, by scipy."""
    n_states = len(params_rows)
    out = np.zeros((len(X), n_states))
    observed = ~np.isnan(X)
    for k in range(n_states):
        cells = logpdf(np.where(observed, X, 1.0), k)
        out[:, k] = np.where(observed, cells, 0.0).sum(axis=1)
    return out


def assert_stats_close(a, b, rtol=1e-12, atol=1e-10):
    assert type(a) is type(b)
    for f in fields(a):
        assert_allclose(getattr(a, f.name), getattr(b, f.name), rtol=rtol, atol=atol)


def chunking_test(family, X, weights):
    """A hypothesis test: statistics added over any chunking (with the zero)
    equal the statistics of all rows."""
    n = len(X)
    whole = family.stats(X, weights)

    @settings(max_examples=25, deadline=None)
    @given(st.lists(st.integers(1, n - 1), max_size=5, unique=True))
    def check(cuts):
        bounds = [0, *sorted(cuts), n]
        total = family.zeros(weights.shape[1])
        for lo, hi in pairwise(bounds):
            total = total + family.stats(X[lo:hi], weights[lo:hi])
        assert_stats_close(total, whole)

    check()


def repeated_rows_test(family, X, rng, n_states=2):
    """Integer weights equal repeated rows."""
    labels = rng.integers(0, n_states, size=len(X))
    times = rng.integers(0, 4, size=len(X))
    onehot = np.eye(n_states)[labels]
    weighted = family.stats(X, onehot * times[:, None])
    repeated = family.stats(np.repeat(X, times, axis=0), np.repeat(onehot, times, 0))
    assert_stats_close(weighted, repeated)


def init_test(family, X, n_states, in_support):
    """Both starts give finite parameters in the support."""
    rs = np.random.RandomState(0)
    drawn = family.init_params(X, np.ones((len(X), 1)), n_states, rs)
    resp = np.random.default_rng(0).dirichlet(np.ones(n_states), size=len(X))
    weighted = family.init_params(X, resp, n_states, rs)
    for params in (drawn, weighted):
        for f in fields(params):
            value = np.asarray(getattr(params, f.name))
            assert value.shape[-1] == family.n_features
            assert np.all(np.isfinite(value)), f.name
            assert in_support(f.name, value), f.name
    return drawn, weighted
