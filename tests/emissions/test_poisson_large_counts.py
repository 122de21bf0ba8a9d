"""Poisson log-likelihoods at large counts against 50-digit values (mpmath):
rows with a count of 1024 or more are scored by the saddle-point form, which
keeps the relative precision the usual form loses (-18.19 at x = lambda =
1e15, where x log lambda - lambda - log x! gives -16)."""

import mpmath
import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats as ss
from scipy.special import gammaln

from bayeskit.emissions import Poisson, PoissonParams
from bayeskit.emissions._poisson_exact import LARGE_COUNT


def _exact(x, lam):
    if np.isnan(x):
        return 0.0
    mpmath.mp.dps = 50
    if lam == 0:
        return 0.0 if x == 0 else -np.inf
    x, lam = mpmath.mpf(x), mpmath.mpf(lam)
    return float(x * mpmath.log(lam) - lam - mpmath.loggamma(x + 1))


def _exact_rows(X, lambdas):
    return np.array(
        [[sum(_exact(x, lam) for x, lam in zip(row, rates)) for rates in lambdas]
         for row in X]
    )  # fmt: skip


def test_the_example_of_the_brief():
    got = Poisson(1).log_likelihood(
        np.array([[1e15]]), PoissonParams(np.array([[1e15]]))
    )
    assert got[0, 0] == pytest.approx(_exact(1e15, 1e15), rel=1e-13)
    assert got[0, 0] == pytest.approx(-18.188326730660016, rel=1e-13)


@pytest.mark.parametrize("scale", [1024.0, 3e3, 1e5, 1e9, 1e12, 1e15])
def test_large_counts_against_mpmath(rng, scale):
    X = np.floor(scale * rng.uniform(1.0, 1.3, size=(6, 3)))
    X[0, 1] = 3.0  # a small count in a row with large ones
    X[1, 2] = np.nan  # a missing cell
    X[2, 0] = 0.0
    lambdas = scale * rng.uniform(0.9, 1.4, size=(3, 3))
    lambdas[1, 1] = X[3, 1]  # a rate at a count: bd0 = 0
    lambdas[2] *= 1e-3  # far from the counts
    got = Poisson(3).log_likelihood(X, PoissonParams(lambdas))
    assert_allclose(got, _exact_rows(X, lambdas), rtol=1e-13)


def test_zero_rates_with_large_counts():
    X = np.array([[2000.0, 0.0], [0.0, 5000.0], [np.nan, 3000.0]])
    lambdas = np.array([[0.0, 4000.0], [1500.0, 0.0]])
    got = Poisson(2).log_likelihood(X, PoissonParams(lambdas))
    assert np.isneginf(got[0, 0]) and np.isneginf(got[1, 1])
    assert np.isneginf(got[2, 1])
    for i, k in [(0, 1), (1, 0), (2, 0)]:
        assert got[i, k] == pytest.approx(
            _exact_rows(X[i : i + 1], lambdas[k : k + 1])[0, 0], rel=1e-13
        )


def test_rows_of_small_counts_keep_the_usual_form(rng):
    """Rows below LARGE_COUNT give the usual form bit for bit, and agree with
    scipy.stats.poisson, also when another row of X is large."""
    X = rng.poisson(50.0, size=(40, 3)).astype(float)
    lambdas = rng.uniform(1, 80, size=(2, 3))
    usual = X @ np.log(lambdas).T - lambdas.sum(axis=1)
    usual -= gammaln(X + 1.0).sum(axis=1)[:, None]
    family = Poisson(3)
    assert np.array_equal(family.log_likelihood(X, PoissonParams(lambdas)), usual)
    mixed = np.vstack([X, [[LARGE_COUNT, 1.0, 2.0]]])
    got = family.log_likelihood(mixed, PoissonParams(lambdas))
    assert np.array_equal(got[:-1], usual)
    ref = np.column_stack([ss.poisson.logpmf(X, lam).sum(axis=1) for lam in lambdas])
    assert_allclose(got[:-1], ref, rtol=1e-12)
