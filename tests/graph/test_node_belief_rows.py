"""Rows of log-weights (a one-node posterior, every E-step of a mixture)
normalised without masks or an error state when every row's maximum is
finite: the same operations as the general path, bit for bit, and no
warning on the way."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy.special import logsumexp

from bayeskit._logmath import _normalize_rows_numpy, log_normalize
from bayeskit.graph.tree import node_belief


def masked_reference(a):
    """The general path of the row normalisation, written out: shift by the
    finite maxima, normalise the rows with mass, leave the others as given."""
    top = a.max(axis=1, initial=-np.inf)
    shift = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(all="ignore"):
        out = a - shift[:, None]
        log_total = np.log(np.exp(out).sum(axis=1))
        lse = log_total + shift
        finite = np.abs(lse) < np.inf
        out = np.where(finite[:, None], out - log_total[:, None], a)
    return out, lse


@pytest.mark.parametrize("seed", range(20))
def test_rows_with_finite_maxima_normalise_as_the_masked_path(seed):
    rng = np.random.default_rng(seed)
    n, k = rng.integers(1, 300), rng.integers(1, 9)
    a = rng.normal(scale=10.0 ** rng.integers(0, 4), size=(n, k))
    a += rng.normal(scale=1e3, size=(n, 1))  # rows at any level
    a[rng.random((n, k)) < 0.2] = -np.inf  # impossible states ...
    a[np.arange(n), rng.integers(0, k, n)] = rng.normal(size=n)  # ... not all
    with np.errstate(all="raise", under="ignore"):  # and no warning
        out, lse = _normalize_rows_numpy(a)
    ref_out, ref_lse = masked_reference(a)
    assert_array_equal(out, ref_out)
    assert_array_equal(lse, ref_lse)
    np.testing.assert_allclose(lse, logsumexp(a, axis=1), rtol=1e-13)
    # The one-node posterior takes the rows directly: the same arrays.
    marginal, evidence = node_belief(a)
    assert_array_equal(marginal, ref_out)
    assert_array_equal(evidence, ref_lse)
    marginal, evidence = log_normalize(np.asfortranarray(a))
    assert_array_equal(marginal, ref_out)
    assert_array_equal(evidence[:, 0], ref_lse)


def test_rows_without_a_finite_maximum_take_the_masked_path():
    inf = np.inf
    a = np.array([[-inf, -inf], [inf, 0.0], [np.nan, 1.0], [0.5, -inf]])
    out, lse = _normalize_rows_numpy(a)
    ref_out, ref_lse = masked_reference(a)
    assert_array_equal(out, ref_out)
    assert_array_equal(lse, ref_lse)
    assert_array_equal(node_belief(a)[0], ref_out)
