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
    """One pattern's observed blocks, factored for every state at once.

    ``U_k`` is the inverse of the lower Cholesky factor ``L_k`` of
    ``Sigma_oo`` (the precision factor of the observed block: ``U_k^T U_k =
    Sigma_oo^{-1}``), from a batched solve against the identity; the
    whitened deviations are ``z = U_k (x_o - mu_o)``, computed for all states
    with one matrix product in coordinates centred at ``center``.
    """

    def __init__(self, pattern, means, dense, center):
        self.obs = o = np.flatnonzero(~pattern)
        self.mis = np.flatnonzero(pattern)
        self.means = means
        self.center = center
        self.dense = dense
        chol = np.linalg.cholesky(dense[:, o][:, :, o])  # (K, p, p)
        eye = np.broadcast_to(np.eye(o.size), chol.shape)
        self.inv_chol = np.linalg.solve(chol, eye)  # (K, p, p), lower
        self.log_det = np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)

    def whitened(self, Xo):
        """``z[i, k] = U_k (x_o - mu_ko)``, ``(n, K, p)``."""
        k, p, _ = self.inv_chol.shape
        c = self.center[self.obs]
        stacked = self.inv_chol.transpose(2, 0, 1).reshape(p, k * p)
        z = ((Xo - c) @ stacked).reshape(len(Xo), k, p)
        z -= np.einsum("kqp,kp->kq", self.inv_chol, self.means[:, self.obs] - c)
        return z

    def log_norm(self):
        """``-|o| log(2 pi) / 2 - log det L_k`` of every state."""
        return -0.5 * self.obs.size * _LOG_2PI - self.log_det

    def conditional(self):
        """``(A, C)``: ``A_k = U_k Sigma_om`` ``(K, p, q)`` and the conditional
        covariances ``Sigma_mm - A_k^T A_k`` ``(K, q, q)``."""
        o, m = self.obs, self.mis
        A = self.inv_chol @ self.dense[:, o][:, :, m]
        C = self.dense[:, m][:, :, m] - np.swapaxes(A, 1, 2) @ A
        return A, C

    def completed(self, Xo, z, A):
        """The missing coordinates' conditional means, ``(n, K, q)``."""
        return self.means[:, self.mis] + np.einsum("nkp,kpq->nkq", z, A)


def dense_covariances(structure, params) -> np.ndarray:
    """Every state's full covariance matrix, ``(K, d, d)``."""
    k, d = params.means.shape
    return structure.dense_all(params.covariances, k, d)


def _center(params):
    center = getattr(params, "center", None)
    return params.means.mean(axis=0) if center is None else np.asarray(center)


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
    center = _center(params)
    for pattern, rows in patterns:
        block = _Pattern(pattern, params.means, dense, center)
        z = block.whitened(X[np.ix_(rows, block.obs)])
        out[rows] = block.log_norm() - 0.5 * np.einsum("nkp,nkp->nk", z, z)
    return out


def completed_rows(structure, X, params, missing) -> np.ndarray:
    """Every row completed by the conditional means of its missing
    coordinates under every state, ``(n, K, d)`` (a row with every
    coordinate missing: the state's mean)."""
    k = params.means.shape[0]
    out = np.repeat(X[:, None, :], k, axis=1)
    out[missing.all(axis=1)] = params.means
    patterns = missing_patterns(missing)
    if not patterns:
        return out
    dense = dense_covariances(structure, params)
    center = _center(params)
    for pattern, rows in patterns:
        block = _Pattern(pattern, params.means, dense, center)
        Xo = X[np.ix_(rows, block.obs)]
        A, _ = block.conditional()
        filled = out[rows]
        filled[:, :, block.mis] = block.completed(Xo, block.whitened(Xo), A)
        out[rows] = filled
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
    center = _center(params)
    for pattern, rows in patterns:
        block = _Pattern(pattern, params.means, dense, center)
        o, m = block.obs, block.mis
        Xo = X[np.ix_(rows, o)]
        W = weights[rows]  # (n, K)
        w = W.sum(axis=0)
        A, C = block.conditional()
        xf = np.empty((rows.size, k, d))
        xf[:, :, o] = Xo[:, None, :]
        xf[:, :, m] = block.completed(Xo, block.whitened(Xo), A)
        safe = np.where(w > 0, w, 1.0)
        mu = np.einsum("nk,nkd->kd", W, xf) / safe[:, None]
        r = xf - mu
        rt = r.transpose(1, 2, 0)  # (K, d, n)
        s = (rt * W.T[:, None, :]) @ r.transpose(1, 0, 2)
        s[:, m[:, None], m] += w[:, None, None] * C
        # Merge with the patterns before (pairwise, centred).
        total = weight + w
        frac = np.where(total > 0, w / np.where(total > 0, total, 1.0), 0.0)
        delta = mu - mean
        scatter += s + (weight * frac)[:, None, None] * (
            delta[:, :, None] * delta[:, None, :]
        )
        mean += frac[:, None] * delta
        weight = total
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
