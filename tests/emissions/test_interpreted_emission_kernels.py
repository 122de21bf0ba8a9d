"""The emission kernels run interpreted (small work) agree with the compiled ones."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from bayeskit import _jit
from bayeskit.emissions import _kernels as k


def _both(kernel, *args):
    """Run ``kernel`` compiled and interpreted on copies of ``args``."""
    compiled = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interp = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    r1 = kernel.compiled(*compiled)
    r2 = _jit.interpreted(kernel.compiled)(*interp)
    return (r1, compiled), (r2, interp)


@pytest.mark.parametrize("missing", [False, True])
def test_gaussian_kernels(missing):
    rng = np.random.default_rng(int(missing))
    n, d, s = 60, 4, 3
    X = rng.normal(size=(n, d)) * 10 + 1e3
    if missing:
        X[rng.random(size=X.shape) < 0.2] = np.nan
    means = rng.normal(size=(s, d)) + 1e3
    half_prec = rng.random(size=(s, d)) + 0.1
    log_norm = rng.normal(size=(s, d))
    out = np.empty((n, s))
    (_, a), (_, b) = _both(
        k.diag_log_likelihood, X, means, half_prec, log_norm, log_norm.sum(1), out
    )
    assert_allclose(a[-1], b[-1], rtol=1e-12, atol=1e-12)
    labels = rng.integers(s, size=n)
    weights = rng.random(size=(n, s))
    z = [np.zeros((s, d)) for _ in range(4)]
    (_, a), (_, b) = _both(k.diag_class_moments, X, weights, labels, np.empty(d), *z)
    for x, y in zip(a[4:7], b[4:7]):
        assert_allclose(x, y, rtol=1e-12, atol=1e-12)


def test_categorical_kernels():
    rng = np.random.default_rng(3)
    n, d, s = 80, 3, 4
    cards = np.array([2, 5, 3])
    offsets = np.concatenate([[0], np.cumsum(cards)[:-1]]).astype(np.intp)
    codes = (rng.integers(0, 100, size=(n, d)) % cards).astype(np.intp)
    codes[rng.random(size=codes.shape) < 0.1] = -1
    log_prob = np.log(rng.random(size=(cards.sum(), s)))
    (_, a), (_, b) = _both(
        k.categorical_log_likelihood, codes, offsets, log_prob, np.empty((n, s))
    )
    assert_allclose(a[-1], b[-1], rtol=1e-12, atol=1e-12)
    weights = rng.random(size=(n, s))
    labels = rng.integers(s, size=n).astype(np.intp)
    counts = np.zeros((cards.sum(), s))
    (_, a), (_, b) = _both(
        k.categorical_counts, codes, offsets, weights, labels, counts
    )
    assert_allclose(a[-1], b[-1], rtol=1e-12, atol=1e-12)
    (_, a), (_, b) = _both(k.categorical_soft_counts, codes, offsets, weights, counts)
    assert_allclose(a[-1], b[-1], rtol=1e-12, atol=1e-12)


def test_encoding_numpy_passes_match_the_compiled_ones(monkeypatch):
    """Small category matrices are scanned by numpy; both paths agree."""
    from bayeskit._base import encoding as _encoding

    rng = np.random.default_rng(7)
    X = rng.integers(-3, 9, size=(300, 4))
    n_categories = np.array([2, 5, 9, 1])
    results = []
    for size in (1 << 62, 0):  # numpy, then compiled
        monkeypatch.setattr(_encoding, "_NUMPY_SIZE", size)
        codes = np.ascontiguousarray(X, dtype=np.intp)
        results.append(
            (
                _encoding.count_out_of_range(codes, n_categories),
                [c.tolist() for c in _encoding.integer_categories(X)],
            )
        )
    assert results[0] == results[1]


@pytest.mark.parametrize("missing", [False, True])
def test_diag_log_likelihood_numpy_path_matches_the_kernel(missing):
    """Small work takes the numpy path; it agrees with the compiled kernel,
    missing values, data far from the origin and overflow included."""
    rng = np.random.default_rng(11 + missing)
    n, d, s = 70, 5, 3
    X = rng.normal(size=(n, d)) * 10 + 1e6
    X[0, 0] = 1e300  # the square overflows: -inf in both
    if missing:
        X[rng.random(size=X.shape) < 0.2] = np.nan
        X[1] = np.nan  # a row with nothing observed: 0 in both
    means = rng.normal(size=(s, d)) + 1e6
    half_prec = rng.random(size=(s, d)) + 0.1
    log_norm = rng.normal(size=(s, d))
    args = (X, means, half_prec, log_norm, log_norm.sum(1))
    assert X.size * s < k._INTERPRET_CELLS  # the numpy path
    small, compiled = np.empty((n, s)), np.empty((n, s))
    k.diag_log_likelihood(*args, small)
    k.diag_log_likelihood.compiled(*args, compiled)
    assert_allclose(small, compiled, rtol=1e-12, atol=1e-9)
    assert np.isneginf(small[0]).all() == np.isneginf(compiled[0]).all()


def test_categorical_log_likelihood_numpy_path_matches_the_kernel():
    rng = np.random.default_rng(5)
    n, d, s = 90, 4, 3
    cards = np.array([2, 5, 3, 4])
    offsets = np.concatenate([[0], np.cumsum(cards)[:-1]]).astype(np.intp)
    codes = (rng.integers(0, 100, size=(n, d)) % cards).astype(np.intp)
    codes[rng.random(size=codes.shape) < 0.15] = -1
    log_prob = np.log(rng.random(size=(cards.sum(), s)))
    log_prob[3, 1] = -np.inf  # a zero-probability category (m = 0)
    assert n * s * d < k._INTERPRET_CELLS
    small, compiled = np.empty((n, s)), np.empty((n, s))
    k.categorical_log_likelihood(codes, offsets, log_prob, small)
    k.categorical_log_likelihood.compiled(codes, offsets, log_prob, compiled)
    assert_allclose(small, compiled, rtol=1e-12, atol=1e-12)
