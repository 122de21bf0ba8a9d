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

__all__ = ["GAUSS_TESTS", "GaussianCI", "cg_test"]

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


def _cg_loglik(disc_codes: np.ndarray, cards, cont: np.ndarray):
    """The maximum log-likelihood and the number of free parameters of a
    heterogeneous conditional Gaussian model of some rows: a table over the
    joint states of the discrete columns ``disc_codes`` (n, k) and a
    Gaussian of the continuous ``cont`` (n, p) in each state seen; None when
    some state's covariance is singular (no more rows than dimensions)."""
    n, p = cont.shape
    key = np.zeros(n, dtype=np.int64)
    for j, r in enumerate(cards):
        key = key * int(r) + disc_codes[:, j]
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    ll = float(np.dot(counts, np.log(counts / n)))
    if p:
        for cell, n_j in enumerate(counts):
            if n_j <= p:
                return None
            block = cont[inverse == cell]
            R = np.linalg.qr(block - block.mean(axis=0), mode="r")
            diag = np.abs(np.diag(R))
            if not (diag > np.finfo(float).eps * n_j * np.abs(block).max()).all():
                return None
            logdet = 2.0 * np.log(diag).sum() - p * np.log(n_j)
            ll -= 0.5 * n_j * (p * np.log(2 * np.pi) + logdet + p)
    # every joint state of the states seen of each discrete column
    cells = int(np.prod([np.unique(col).size for col in disc_codes.T]))
    return ll, (cells - 1) + cells * (p + p * (p + 1) // 2)


def cg_test(codes, cards, values, is_cont, x: int, y: int, given):
    """The likelihood-ratio test of ``x`` independent of ``y`` given
    ``given`` between conditional Gaussian models (Lauritzen 1996, section
    6.1): :math:`G = 2 [\\ell(x, y, S) + \\ell(S) - \\ell(x, S) - \\ell(y, S)]`
    (twice the conditional mutual information times the number of rows),
    on the rows observing all of them, with as many degrees of freedom as
    the models' numbers of parameters differ by (a table over every joint
    state of the discrete variables' states seen in those rows, a mean and
    covariance in each); the statistic, degrees of freedom and
    chi-square p-value (1 where the test has no degree of freedom or some
    state's covariance is singular)."""
    members = [x, y, *given]
    disc = [v for v in members if not is_cont[v]]
    cont = [v for v in members if is_cont[v]]
    ok = np.ones(codes.shape[1], dtype=bool)
    for v in disc:
        ok &= codes[v] >= 0
    for v in cont:
        ok &= ~np.isnan(values[v])

    def model(vs):
        d = [v for v in vs if not is_cont[v]]
        c = [v for v in vs if is_cont[v]]
        return _cg_loglik(codes[d][:, ok].T, [cards[v] for v in d], values[c][:, ok].T)

    parts = [model(vs) for vs in (members, given, [x, *given], [y, *given])]
    if any(part is None for part in parts):
        return 0.0, 0, 1.0
    (l_all, k_all), (l_s, k_s), (l_x, k_x), (l_y, k_y) = parts
    stat = max(2.0 * (l_all + l_s - l_x - l_y), 0.0)
    dof = k_all + k_s - k_x - k_y
    if dof <= 0:
        return stat, dof, 1.0
    return stat, dof, float(stats.chi2.sf(stat, dof))
