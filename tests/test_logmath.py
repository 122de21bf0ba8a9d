"""Log-space helpers: logsumexp and log_normalize on every axis and edge value."""

import numpy as np
import pytest
from scipy.special import logsumexp as scipy_logsumexp

from bayeskit._logmath import has_nan, log_matmul, log_normalize, logsumexp

INF = np.inf


@pytest.mark.parametrize(
    "axis", [None, 0, 1, 2, -1, -2, (0, 2), (2, 0), (-1, -3), (0, 1, 2), ()]
)
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_matches_scipy_on_every_axis(axis, keepdims, rng):
    a = rng.normal(size=(4, 3, 5)) * 50
    ours = logsumexp(a, axis=axis, keepdims=keepdims)
    ref = scipy_logsumexp(a, axis=axis, keepdims=keepdims)
    assert np.shape(ours) == np.shape(ref)
    np.testing.assert_allclose(ours, ref, rtol=1e-14)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_log_normalize_on_every_axis(axis, rng):
    a = rng.normal(size=(4, 3, 5)) * 50
    out, lse = log_normalize(a, axis=axis)
    ref = scipy_logsumexp(a, axis=axis, keepdims=True)
    np.testing.assert_allclose(lse, ref, rtol=1e-14)
    np.testing.assert_allclose(out, a - ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.exp(out).sum(axis=axis), 1.0, rtol=1e-13)


def test_layouts_and_dtypes_give_the_same_result(rng):
    a = rng.normal(size=(30, 4)) * 10
    out, lse = log_normalize(a)
    for b in (np.asfortranarray(a), a[::1, :], np.concatenate([a, a], 1)[:, :4]):
        o, s = log_normalize(b)
        np.testing.assert_array_equal(o, out)
        np.testing.assert_array_equal(s, lse)
    ints = np.arange(6).reshape(2, 3)
    np.testing.assert_allclose(logsumexp(ints, axis=1), scipy_logsumexp(ints, 1))
    assert logsumexp(np.float32([1.0, 2.0])).dtype == np.float64
    assert logsumexp(np.array(3.0)) == 3.0


def test_rows_of_only_minus_inf_stay_minus_inf():
    a = np.array([[-INF, -INF, -INF], [0.0, -INF, np.log(3.0)]])
    with np.errstate(all="raise"):  # and no warning on the way
        out, lse = log_normalize(a)
        s = logsumexp(a, axis=1)
    np.testing.assert_array_equal(out[0], [-INF, -INF, -INF])
    assert lse[0, 0] == -INF and s[0] == -INF
    np.testing.assert_allclose(out[1], [np.log(0.25), -INF, np.log(0.75)])
    assert out[1, 1] == -INF
    np.testing.assert_allclose(lse[1, 0], np.log(4.0))
    assert logsumexp(np.full(3, -INF)) == -INF


def test_plus_inf_and_nan_rows_are_left_as_they_are():
    a = np.array(
        [
            [INF, 0.0, -INF],  # lse = +inf
            [INF, INF, 1.0],
            [np.nan, 0.0, 1.0],  # lse = NaN
            [np.nan, INF, -INF],
            [1.0, 2.0, 3.0],  # an ordinary row next to them
        ]
    )
    with np.errstate(all="raise"):
        out, lse = log_normalize(a)
    np.testing.assert_array_equal(lse[:2, 0], [INF, INF])
    assert np.isnan(lse[2:4, 0]).all()
    np.testing.assert_array_equal(out[:4], a[:4])  # NaN where a has NaN only
    np.testing.assert_allclose(out[4], [1.0, 2.0, 3.0] - scipy_logsumexp([1, 2, 3]))
    np.testing.assert_array_equal(logsumexp(a, axis=1)[:2], [INF, INF])
    assert np.isnan(logsumexp(a, axis=1)[2:4]).all()


def test_empty_slices():
    assert np.array_equal(logsumexp(np.empty((3, 0)), axis=1), np.full(3, -INF))
    assert logsumexp(np.empty((0, 3)), axis=1).shape == (0,)
    assert logsumexp(np.empty((2, 0, 3)), axis=1).shape == (2, 3)
    assert logsumexp(np.empty(0)) == -INF
    out, lse = log_normalize(np.empty((0, 4)))
    assert out.shape == (0, 4) and lse.shape == (0, 1)


def test_large_magnitudes_keep_their_precision():
    # The normalised row is the shifted row minus log(sum), not a - lse with
    # lse rounded at the magnitude of the entries.
    a = np.array([[1e300, 1e300], [-1e300, -1e300], [700.0, 700.0 - np.log(3.0)]])
    out, lse = log_normalize(a)
    np.testing.assert_allclose(out[:2], np.log(0.5))
    np.testing.assert_allclose(np.exp(out[2]), [0.75, 0.25], rtol=1e-13)
    np.testing.assert_allclose(lse[2, 0], 700.0 + np.log(4.0 / 3.0), rtol=1e-15)


def test_bad_axis():
    with pytest.raises(ValueError, match="out of bounds"):  # numpy's AxisError
        logsumexp(np.ones((2, 3)), axis=2)
    with pytest.raises(ValueError, match="repeated axis"):
        logsumexp(np.ones((2, 3)), axis=(1, 1))


@pytest.mark.parametrize("shape", [(50, 4), (7, 1), (3, 0), (0, 5)])
def test_numpy_rows_match_the_compiled_passes(shape):
    """Small matrices are normalised by numpy alone; both paths agree."""
    from bayeskit import _logmath

    rng = np.random.default_rng(sum(shape))
    a = rng.normal(scale=50.0, size=shape)
    if a.size:
        a.flat[rng.integers(a.size, size=max(1, a.size // 5))] = -np.inf
        a[0] = -np.inf  # a row without mass
        if shape[0] > 2:
            a[1, 0] = np.inf
            a[2, 0] = np.nan
    ours = _logmath._normalize_rows_numpy(a)
    out = np.empty_like(a)
    shift = np.empty(shape[0])
    _logmath._shift_rows(a, out, shift)
    total = np.empty(shape[0])
    _logmath._row_sums(np.exp(out), total)
    log_total = _logmath.safe_log(total)
    lse = log_total + shift
    _logmath._subtract_rows(a, out, log_total, lse)
    for x, y in zip(ours, (out, lse)):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "values",
    [
        [1.0, 2.0, 3.0],
        [1.0, np.nan, 3.0],
        [1e308, 1e308, -1e308, -1e308],  # the sum is inf - inf = NaN, no NaN in X
        [1e308, 1e308, np.nan],
        [np.inf, 1.0],
        [np.inf, -np.inf],  # NaN sum from infinities alone
        [],
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_has_nan_equals_the_elementwise_test(values, dtype):
    with np.errstate(over="ignore"):
        X = np.array(values, dtype=dtype).reshape(-1, 1)
    assert has_nan(X) == bool(np.isnan(X).any())
    assert has_nan(X.T) == bool(np.isnan(X).any())


def test_has_nan_of_integers_is_false():
    assert not has_nan(np.arange(6).reshape(2, 3))


@pytest.mark.parametrize("seed", range(6))
def test_log_matmul_is_the_sum_of_every_term(seed):
    """``log_matmul`` against the log-sum-exp of every product term (scipy),
    batched, with ``-inf`` entries and magnitudes up to thousands: where a
    row's or column's largest terms meet zeros of the other factor, the
    terms left are far below the shift and underflowed (found by the fuzzer
    through TreeBP: a row ``[1257, -1321]`` against ``[-inf, 0]`` gave
    ``-inf``, a marginal of zero mass)."""
    rng = np.random.default_rng(seed)
    lost = 0
    for _ in range(500):
        n, k, m = rng.integers(1, 5, size=3)
        lead = tuple(rng.integers(1, 3, size=rng.integers(0, 3)))
        a = rng.normal(scale=rng.choice([1, 100, 2000]), size=(*lead, n, k))
        b = rng.normal(scale=rng.choice([1, 100, 2000]), size=(k, m))
        a[rng.random(a.shape) < 0.3] = -np.inf
        b[rng.random(b.shape) < 0.3] = -np.inf
        got = log_matmul(a, b)
        with np.errstate(invalid="ignore"):
            want = scipy_logsumexp(a[..., :, :, None] + b, axis=-2)
        finite = np.isfinite(want)
        np.testing.assert_array_equal(np.isfinite(got), finite)
        np.testing.assert_allclose(got[finite], want[finite], rtol=1e-12, atol=1e-9)
        with np.errstate(all="ignore"):
            shifted = np.exp(a - a.max(axis=-1, keepdims=True)) @ np.exp(
                b - b.max(axis=0, keepdims=True)
            )
        lost += int(np.sum(finite & (shifted == 0)))
    assert lost > 0  # the draws reach the entries a shifted product loses


def test_tree_bp_keeps_the_mass_a_shifted_product_loses():
    from bayeskit.graph import TreeBP

    cards = {"a": 2, "b": 1, "c": 2}
    edges = [("a", "b"), ("a", "c")]
    pots = [np.array([[0.0], [0.3]]), np.array([[0.0, 0.4], [0.2, 0.7]])]
    log_unary = {"a": np.array([[1257.3, -1321.0]])}
    post = TreeBP(cards, edges, pots).sum_product({}, log_unary)
    # Only a = 1 has mass: log Z = -1321 + log(0.3) + log(0.2 + 0.7).
    np.testing.assert_allclose(post.log_evidence, -1321.0 + np.log(0.3 * 0.9))
    np.testing.assert_allclose(np.exp(post.log_marginals["b"]), [[1.0]])
    np.testing.assert_allclose(np.exp(post.log_marginals["a"]), [[0.0, 1.0]])
    c = np.exp(post.log_marginals["c"])
    np.testing.assert_allclose(c, [[0.2 / 0.9, 0.7 / 0.9]])


def _rows_with_edges(rng, n, width):
    """Rows at several scales with ties of the maximum, -inf entries, rows of
    only -inf, rows holding +inf or NaN and a row near the float maximum."""
    a = rng.normal(scale=rng.choice([1.0, 30.0, 800.0]), size=(n, width))
    a.flat[rng.integers(a.size, size=a.size // 7)] = -np.inf
    a[: n // 4] = np.round(a[: n // 4])  # many ties
    if width > 2:
        a[0] = -np.inf
        a[1, 0] = np.inf
        a[2, 1] = np.nan
        a[3, :2] = 1e308
    return a


@pytest.mark.parametrize("width", [1, 2, 5, 7, 8, 9, 10, 16, 17, 33, 128, 129, 300])
@pytest.mark.parametrize("compiled", [False, True])
def test_logsumexp_rows_is_scipys_bit_for_bit(width, compiled, monkeypatch):
    """logsumexp_rows repeats scipy's arithmetic (the maxima set apart, log1p,
    numpy's order of addition): equal to scipy.special.logsumexp(axis=1) bit
    for bit, on its numpy path and on its compiled passes (large arrays;
    rows wider than 128 stay in numpy), whatever the block of rows."""
    from bayeskit import _jit, _logmath

    monkeypatch.setattr(_jit, "_IN_CHILD", compiled)  # True: no numpy stand-in
    rng = np.random.default_rng(width)
    n = 40_000 if compiled else 300
    monkeypatch.setattr(_logmath, "BLOCK_ROWS", 7_000 if compiled else 64)
    a = _rows_with_edges(rng, n, width)
    with np.errstate(invalid="ignore"):
        want = scipy_logsumexp(a, axis=1)
    np.testing.assert_array_equal(_logmath.logsumexp_rows(a), want)
    np.testing.assert_array_equal(_logmath.logsumexp_rows(np.asfortranarray(a)), want)


@pytest.mark.parametrize("width", [3, 10, 17, 129])
@pytest.mark.parametrize("compiled", [False, True])
def test_row_plogp_is_numpys_sum_bit_for_bit(width, compiled, monkeypatch):
    """row_plogp equals numpy's where(p > 0, p log p, 0).sum(axis=1) bit for
    bit, zeros (log 0 = -inf) adding nothing."""
    from bayeskit import _jit, _logmath

    monkeypatch.setattr(_jit, "_IN_CHILD", compiled)
    rng = np.random.default_rng(width)
    n = 40_000 if compiled else 300
    p = rng.dirichlet(np.full(width, 0.3), size=n)
    p[rng.random(p.shape) < 0.2] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = np.log(p)
        want = np.where(p > 0, p * log_p, 0.0).sum(axis=1)
    np.testing.assert_array_equal(_logmath.row_plogp(p, log_p), want)
