"""Conditional independence tests of continuous variables from partial
correlations, as pgmpy 1.1.2's ``ci_tests.Pearsonr`` and ``ci_tests.FisherZ``
define them.

The partial correlation :math:`r` of :math:`x` and :math:`y` given :math:`S`
is the correlation of their residuals after least squares on :math:`S` and an
intercept. With :math:`C` the covariance matrix of :math:`(S, x, y)` (in this
order) and :math:`L` its Cholesky factor, the residuals' covariance is
:math:`L_{22} L_{22}^\\top`, :math:`L_{22}` the trailing 2-by-2 block of
:math:`L` (Golub and Van Loan 2013, section 4.2), so no regression is run per
test and no matrix is inverted. Then (Fisher 1924; Kalisch and Buhlmann 2007):

- ``'pearsonr'``: :math:`t = r \\sqrt{\\nu / (1 - r^2)}` with
  :math:`\\nu = n - |S| - 2` degrees of freedom, two-sided; the statistic
  returned is :math:`r`;
- ``'fisher_z'``: :math:`z = \\sqrt{n - |S| - 3}\\, \\operatorname{atanh}(r)`
  (:math:`r` clipped to :math:`\\pm 0.999999`, as pgmpy), two-sided under
  the standard normal.

A row missing a value of :math:`x`, :math:`y` or :math:`S` is left out of
that test.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["GAUSS_TESTS", "GaussianCI"]

GAUSS_TESTS = ("pearsonr", "fisher_z")


class GaussianCI:
    """Partial-correlation tests on the columns ``values`` (n_variables,
    n_samples); the covariance of complete data is computed once."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values
        self.complete = not np.isnan(values).any()
        if self.complete:
            self.n = values.shape[1]
            self.cov = np.cov(values)

    def partial_correlation(self, x: int, y: int, given) -> tuple[float, int]:
        """:math:`r` and the number of rows used."""
        idx = [*given, x, y]
        if self.complete:
            cov, n = self.cov[np.ix_(idx, idx)], self.n
        else:
            rows = self.values[idx]
            rows = rows[:, ~np.isnan(rows).any(axis=0)]
            n = rows.shape[1]
            if n < len(idx) + 1:
                return 0.0, n
            cov = np.atleast_2d(np.cov(rows))
        try:
            L = np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:  # collinear: eigen-decompose the block
            return _pseudo(cov), n
        block = L[-2:, -2:]
        resid = block @ block.T
        den = np.sqrt(resid[0, 0] * resid[1, 1])
        if not den > 0:
            return 0.0, n
        return float(np.clip(resid[0, 1] / den, -1.0, 1.0)), n

    def test(self, x: int, y: int, given, method: str) -> tuple[float, float]:
        """The statistic and the two-sided p-value."""
        r, n = self.partial_correlation(x, y, given)
        k = len(given)
        if method == "fisher_z":
            rho = np.clip(r, -0.999999, 0.999999)
            z = float(np.sqrt(max(n - k - 3, 0)) * np.arctanh(rho))
            return z, float(2 * stats.norm.sf(abs(z)))
        dof = n - k - 2
        if dof <= 0:
            return r, 1.0
        if abs(r) >= 1.0:
            return r, 0.0
        t = r * np.sqrt(dof / (1.0 - r * r))
        return r, float(2 * stats.t.sf(abs(t), df=dof))


def _pseudo(cov: np.ndarray) -> float:
    """The partial correlation of the last two variables of a singular
    covariance: the residuals' covariance by least squares on the others."""
    k = cov.shape[0] - 2
    if k:
        coef = np.linalg.lstsq(cov[:k, :k], cov[:k, k:], rcond=None)[0]
        resid = cov[k:, k:] - cov[k:, :k] @ coef
    else:
        resid = cov
    den = np.sqrt(resid[0, 0] * resid[1, 1])
    if not den > 0:
        return 0.0
    return float(np.clip(resid[0, 1] / den, -1.0, 1.0))
