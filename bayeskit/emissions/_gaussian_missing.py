"""Missing coordinates (NaN) in the Gaussian family: the marginal density of
the observed coordinates and the expected statistics of EM.

A missing coordinate is a latent variable (Ghahramani and Jordan 1994;
Little and Rubin 2002, chapters 8 and 11). Given the state ``k`` and the
observed coordinates ``o`` of a row, the missing ones ``m`` are Gaussian,

.. math::

    x_m \\mid x_o, k \\sim \\mathcal N\\big(\\mu_m + \\Sigma_{mo}
        \\Sigma_{oo}^{-1} (x_o - \\mu_o),\\;
        \\Sigma_{mm} - \\Sigma_{mo} \\Sigma_{oo}^{-1} \\Sigma_{om}\\big),

and the row's likelihood is the marginal density of ``x_o``: the sub-vector
of the mean and the sub-block of the covariance (Bishop 2006, section
2.3.2). Both come from the Cholesky factor ``L`` of ``Sigma_oo`` by
triangular solves (``z = L^{-1} (x_o - mu_o)``, ``A = L^{-1} Sigma_om``: the
conditional mean is ``mu_m + A^T z``, the conditional covariance
``Sigma_mm - A^T A``), never an explicit inverse.

The E-step's statistics of a row under a state are those of its completed
row (the conditional mean in the missing coordinates) plus the conditional
covariance added to its scatter; the conditional covariance depends on the
pattern of missing coordinates and the state only, so it is added once per
pattern and state, weighted by the rows' total weight. Rows are grouped by
their pattern of missing coordinates, and each group is one batched
computation over its rows. A row with every coordinate missing has
log-likelihood 0 and adds nothing to the statistics.

References
----------
.. [1] Z. Ghahramani and M. I. Jordan, "Supervised learning from incomplete
   data via an EM approach", *Advances in Neural Information Processing
   Systems* 6, 1994, pp. 120-127.
.. [2] R. J. A. Little and D. B. Rubin, *Statistical Analysis with Missing
   Data*, 2nd ed., Wiley, 2002.
.. [3] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, section 2.3.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular

from ._covariance_factors import _LOG_2PI

__all__: list[str] = []


def missing_patterns(missing: np.ndarray):
    """Groups of rows that share a pattern of missing coordinates.

    Returns a list of ``(pattern, rows)``: ``pattern`` a boolean vector of
    the missing coordinates (at least one, not all), ``rows`` the indices of
    the rows with that pattern. Complete rows and rows with every coordinate
    missing are left out.
    """
    d = missing.shape[1]
    count = missing.sum(axis=1)
    keep = np.flatnonzero((count > 0) & (count < d))
    if keep.size == 0:
        return []
    packed = np.packbits(missing[keep], axis=1)
    if packed.shape[1] <= 8:
        wide = np.zeros((keep.size, 8), dtype=np.uint8)
        wide[:, : packed.shape[1]] = packed
        codes = wide.view(np.uint64).ravel()
        _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(
            packed, axis=0, return_index=True, return_inverse=True
        )
    inverse = inverse.ravel()
    order = np.argsort(inverse, kind="stable")
    bounds = np.cumsum(np.bincount(inverse))
    groups = np.split(keep[order], bounds[:-1])
    return [(missing[keep[f]], rows) for f, rows in zip(first, groups)]


class _Pattern:
    """The observed block's factor of every state for one pattern."""

    def __init__(self, pattern, means, dense):
        self.obs = np.flatnonzero(~pattern)
        self.mis = np.flatnonzero(pattern)
        o = self.obs
        self.means = means
        self.chol = np.linalg.cholesky(dense[:, o][:, :, o])  # (K, p, p)
        self.dense = dense

    def whitened(self, Xo, k):
        """``L_k^{-1} (x_o - mu_o)`` of the rows, ``(p, n)``."""
        return solve_triangular(
            self.chol[k], (Xo - self.means[k, self.obs]).T, lower=True
        )

    def log_norm(self):
        """``-|o| log(2 pi) / 2 - log det L_k`` of every state."""
        p = self.obs.size
        log_det = np.log(np.diagonal(self.chol, axis1=1, axis2=2)).sum(axis=1)
        return -0.5 * p * _LOG_2PI - log_det

    def conditional(self, k):
        """``(A_k, C_k)``: ``A = L^{-1} Sigma_om`` and the conditional
        covariance ``Sigma_mm - A^T A`` of the missing coordinates."""
        o, m = self.obs, self.mis
        S = self.dense[k]
        A = solve_triangular(self.chol[k], S[np.ix_(o, m)], lower=True)
        return A, S[np.ix_(m, m)] - A.T @ A


def dense_covariances(structure, params) -> np.ndarray:
    """Every state's full covariance matrix, ``(K, d, d)``."""
    k, d = params.means.shape
    return structure.dense_all(params.covariances, k, d)


def marginal_log_likelihood(structure, X, params, missing) -> np.ndarray:
    """``log N(x_o; mu_o, Sigma_oo)`` for every row and state, ``(n, K)``.

    Complete rows take the structure's own density; a row with every
    coordinate missing has 0.
    """
    n = X.shape[0]
    k = params.means.shape[0]
    out = np.zeros((n, k))
    complete = ~missing.any(axis=1)
    if complete.any():
        out[complete] = structure.log_likelihood(X[complete], params)
    patterns = missing_patterns(missing)
    if not patterns:
        return out
    dense = dense_covariances(structure, params)
    for pattern, rows in patterns:
        block = _Pattern(pattern, params.means, dense)
        Xo = X[np.ix_(rows, block.obs)]
        norm = block.log_norm()
        for j in range(k):
            z = block.whitened(Xo, j)
            out[rows, j] = norm[j] - 0.5 * np.einsum("ij,ij->j", z, z)
    return out


def completed_rows(structure, X, params, missing) -> np.ndarray:
    """Every row completed by the conditional means of its missing
    coordinates under every state, ``(n, K, d)`` (a row with every
    coordinate missing: the state's mean)."""
    k = params.means.shape[0]
    out = np.repeat(X[:, None, :], k, axis=1)
    empty = missing.all(axis=1)
    out[empty] = params.means
    patterns = missing_patterns(missing)
    if not patterns:
        return out
    dense = dense_covariances(structure, params)
    for pattern, rows in patterns:
        block = _Pattern(pattern, params.means, dense)
        Xo = X[np.ix_(rows, block.obs)]
        for j in range(k):
            A, _ = block.conditional(j)
            z = block.whitened(Xo, j)
            out[np.ix_(rows, [j], block.mis)] = (params.means[j, block.mis] + z.T @ A)[
                :, None, :
            ]
    return out


def expected_dense_stats(X, weights, params, structure, missing):
    """Weight ``(K,)``, mean ``(K, d)`` and scatter ``(K, d, d)`` of the
    incomplete rows (some coordinates missing, not all) under ``weights``:
    the statistics of the completed rows plus the conditional covariances.

    Each pattern's statistics are centred on their own means and merged
    pairwise (Chan, Golub and LeVeque 1983).
    """
    d = X.shape[1]
    k = params.means.shape[0]
    weight = np.zeros(k)
    mean = np.zeros((k, d))
    scatter = np.zeros((k, d, d))
    patterns = missing_patterns(missing)
    if not patterns:
        return weight, mean, scatter
    dense = dense_covariances(structure, params)
    filled = np.empty((0, d))
    for pattern, rows in patterns:
        block = _Pattern(pattern, params.means, dense)
        o, m = block.obs, block.mis
        Xo = X[np.ix_(rows, o)]
        W = weights[rows]
        w = W.sum(axis=0)
        if filled.shape[0] < rows.size:
            filled = np.empty((rows.size, d))
        xf = filled[: rows.size]
        xf[:, o] = Xo
        for j in range(k):
            if w[j] <= 0:
                continue
            A, C = block.conditional(j)
            z = block.whitened(Xo, j)
            xf[:, m] = params.means[j, m] + z.T @ A
            mu = (W[:, j] @ xf) / w[j]
            r = xf - mu
            s = (r * W[:, j, None]).T @ r
            s[np.ix_(m, m)] += w[j] * C
            # Merge with what came before (pairwise, centred).
            total = weight[j] + w[j]
            frac = w[j] / total
            delta = mu - mean[j]
            scatter[j] += s + (weight[j] * frac) * np.outer(delta, delta)
            mean[j] += frac * delta
            weight[j] = total
    return weight, mean, scatter


def to_structure(structure, weight, mean, scatter):
    """Dense statistics in ``structure``'s shapes: the weight ``(K, d)`` for
    the diagonal structure, the scatter's diagonal (diag) or trace
    (spherical)."""
    d = mean.shape[1]
    if structure.name == "diag":
        return (
            np.repeat(weight[:, None], d, axis=1),
            mean,
            np.diagonal(scatter, axis1=1, axis2=2).copy(),
        )
    if structure.name == "spherical":
        return weight, mean, np.trace(scatter, axis1=1, axis2=2)
    return weight, mean, scatter
