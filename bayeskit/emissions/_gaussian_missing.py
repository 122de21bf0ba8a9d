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

import itertools
import threading

import numba
import numpy as np

from .._jit import numpy_first, run_numpy
from ._covariance_factors import _LOG_2PI
from ._missing_kernels import missing_log_likelihood, missing_moments, pattern_factors

__all__: list[str] = []


def _grouped(missing: np.ndarray):
    """The incomplete rows (some coordinates missing, not all) in order of
    their pattern of missing coordinates, and where each pattern's rows
    start (a last entry closing the last): ``(rows, starts)``; None when
    there are no such rows."""
    d = missing.shape[1]
    count = missing.sum(axis=1)
    keep = np.flatnonzero((count > 0) & (count < d))
    if keep.size == 0:
        return None
    sub = missing[keep]
    if d <= 16:
        # A pattern as a 16-bit code: numpy's stable sort of such codes is a
        # radix sort, one pass.
        codes = sub @ (np.uint16(1) << np.arange(d, dtype=np.uint16))
        order = np.argsort(codes.astype(np.uint16), kind="stable")
    else:
        _, codes = np.unique(sub, axis=0, return_inverse=True)
        codes = codes.ravel()
        order = np.argsort(codes, kind="stable")
    ranked = codes[order]
    cut = np.flatnonzero(ranked[1:] != ranked[:-1]) + 1
    starts = np.concatenate([[0], cut, [keep.size]]).astype(np.intp)
    return keep[order], starts


def missing_patterns(missing: np.ndarray):
    """Groups of rows that share a pattern of missing coordinates.

    Returns a list of ``(pattern, rows)``: ``pattern`` a boolean vector of
    the missing coordinates (at least one, not all), ``rows`` the indices of
    the rows with that pattern, in order. Complete rows and rows with every
    coordinate missing are left out.
    """
    grouped = _grouped(missing)
    if grouped is None:
        return []
    rows, starts = grouped
    groups = np.split(rows, starts[1:-1])
    return [(missing[group[0]], group) for group in groups]


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
        try:
            chol = np.linalg.cholesky(dense[:, o][:, :, o])  # (K, p, p)
        except np.linalg.LinAlgError:
            raise _singular_block(o) from None
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


def _singular_block(observed) -> np.linalg.LinAlgError:
    """The error for a pattern whose observed block is not positive definite
    under some state (a LinAlgError, as numpy's, which is a ValueError)."""
    return np.linalg.LinAlgError(
        f"X has a row with missing values whose observed features "
        f"{[int(j) for j in observed]} have a covariance that is not positive "
        "definite under the fitted parameters (collinear or constant features): "
        "the density of that row's observed values is undefined; fit on more "
        "rows, regularise the covariance, or drop the constant features"
    )


def dense_covariances(structure, params) -> np.ndarray:
    """Every state's full covariance matrix, ``(K, d, d)``."""
    k, d = params.means.shape
    return structure.dense_all(params.covariances, k, d)


def _center(params):
    center = getattr(params, "center", None)
    return params.means.mean(axis=0) if center is None else np.asarray(center)


class _Tables:
    """Every pattern's factors, padded to ``d`` and computed in one compiled
    pass (:func:`~bayeskit.emissions._missing_kernels.pattern_factors`), and
    the rows in order of their pattern (what the compiled kernels read)."""

    def __init__(self, grouped, missing, means, dense, center, conditional=False):
        k, d = means.shape
        self.order, self.starts = grouped
        n_pat = self.starts.size - 1
        masks = missing[self.order[self.starts[:-1]]]
        self.n_obs = (~masks).sum(axis=1).astype(np.intp)
        self.n_mis = d - self.n_obs
        # Observed coordinates first, then the missing ones, each in order.
        ranked = np.argsort(masks, axis=1, kind="stable").astype(np.intp)
        self.obs = ranked
        self.mis = np.zeros_like(ranked)
        # Only each block's leading corner is written and read.
        self.U = np.empty((n_pat, k, d, d))
        self.const = np.empty((n_pat, k))
        if conditional:
            self.G = np.empty((n_pat, k, d, d))
            self.C = np.empty((n_pat, k, d, d))
        for p in np.unique(self.n_obs):
            group = np.flatnonzero(self.n_obs == p)
            self.mis[group, : d - p] = ranked[group, p:]
        # One compiled pass factors every pattern's blocks (the batched
        # numpy of :class:`_Pattern` costs some tens of microseconds per
        # pattern, most of a fit where patterns are many and rows few).
        failed = pattern_factors(
            np.ascontiguousarray(dense, dtype=float),
            ranked,
            self.n_obs,
            conditional,
            self.U,
            self.const,
            self.G if conditional else self.U[:0],
            self.C if conditional else self.U[:0],
        )
        if failed >= 0:
            raise _singular_block(ranked[failed, : self.n_obs[failed]])
        self.mu_c = np.ascontiguousarray(means - center)
        self.center = np.ascontiguousarray(center, dtype=float)


# Below this many rows x states x features^2 the compiled passes run on the
# calling thread only; above, on blocks of patterns in parallel threads (the
# kernels release the GIL), as the full structure's density does.
_THREAD_WORK = 1 << 22
# Below this much work (incomplete rows x states x features^2) the numpy pass
# pattern by pattern runs instead: a first small fit compiles no kernel. Above
# it too while the kernels are not compiled (in this process or the disk
# cache) and the numpy passes have run less than their budget
# (:func:`bayeskit._jit.numpy_first`).
_COMPILED_WORK = 1 << 18


def _in_threads(kernel, t, work, per_pattern, make_out):
    """Run ``kernel(starts, *per_pattern, out)`` over blocks of patterns
    (balanced by rows) in parallel threads; returns the outputs of the
    blocks (``make_out()`` gives each block its own)."""
    n_pat = t.starts.size - 1
    n_threads = min(numba.config.NUMBA_NUM_THREADS, n_pat)
    if work < _THREAD_WORK or n_threads < 2:
        out = make_out()
        kernel(t.starts, *per_pattern, *out)
        return [out]
    cuts = np.searchsorted(
        t.starts, np.linspace(0, t.starts[-1], n_threads + 1), side="left"
    )
    cuts[0], cuts[-1] = 0, n_pat
    bounds = [(a, b) for a, b in itertools.pairwise(np.unique(cuts)) if b > a]
    outs = [make_out() for _ in bounds]
    errors = []

    def run(j):
        a, b = bounds[j]
        try:
            kernel(t.starts[a : b + 1], *(x[a:b] for x in per_pattern), *outs[j])
        except BaseException as error:  # pragma: no cover - re-raised below
            errors.append(error)

    # Compiled (or loaded) once, on this thread, before the threads start.
    kernel(t.starts[:1], *(x[:0] for x in per_pattern), *make_out())
    threads = [threading.Thread(target=run, args=(j,)) for j in range(1, len(bounds))]
    for thread in threads:
        thread.start()
    run(0)
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return outs


def marginal_log_likelihood(structure, X, params, missing) -> np.ndarray:
    """``log N(x_o; mu_o, Sigma_oo)`` for every row and state, ``(n, K)``.

    Complete rows take the structure's own density; a row with every
    coordinate missing has 0. The incomplete rows take one compiled pass
    (:func:`~bayeskit.emissions._missing_kernels.missing_log_likelihood`).
    """
    n = X.shape[0]
    k = params.means.shape[0]
    out = np.zeros((n, k))
    complete = ~missing.any(axis=1)
    if complete.any():
        out[complete] = structure.log_likelihood(X[complete], params)
    grouped = _grouped(missing)
    if grouped is None:
        return out
    if grouped[0].size * k * X.shape[1] ** 2 < _COMPILED_WORK:
        return _marginal_log_likelihood_numpy(structure, X, params, missing)
    if numpy_first(missing_log_likelihood, pattern_factors):
        return run_numpy(
            missing_log_likelihood,
            _marginal_log_likelihood_numpy,
            structure,
            X,
            params,
            missing,
        )
    t = _Tables(
        grouped,
        missing,
        params.means,
        dense_covariances(structure, params),
        _center(params),
    )
    Xc = np.ascontiguousarray(X, dtype=float)

    def kernel(starts, n_obs, obs, U, const, out):
        missing_log_likelihood(
            Xc, t.order, starts, n_obs, obs, U, t.mu_c, t.center, const, out
        )

    work = n * k * X.shape[1] ** 2
    _in_threads(kernel, t, work, (t.n_obs, t.obs, t.U, t.const), lambda: (out,))
    return out


def expected_dense_stats(X, weights, params, structure, missing):
    """Weight ``(K,)``, mean ``(K, d)`` and scatter ``(K, d, d)`` of the
    incomplete rows (some coordinates missing, not all) under ``weights``:
    the statistics of the completed rows plus the conditional covariances.

    One compiled pass gathers the moments of the completed rows in
    coordinates centred at the parameters' centre (a point among the data,
    so that the moments of data far from the origin keep their precision),
    and the scatter is taken around each state's mean from them.
    """
    d = X.shape[1]
    k = params.means.shape[0]
    grouped = _grouped(missing)
    if grouped is None:
        return np.zeros(k), np.zeros((k, d)), np.zeros((k, d, d))
    if grouped[0].size * k * d * d < _COMPILED_WORK:
        return _expected_dense_stats_numpy(X, weights, params, structure, missing)
    if numpy_first(missing_moments, pattern_factors):
        return run_numpy(
            missing_moments,
            _expected_dense_stats_numpy,
            X,
            weights,
            params,
            structure,
            missing,
        )
    center = _center(params)
    t = _Tables(
        grouped,
        missing,
        params.means,
        dense_covariances(structure, params),
        center,
        conditional=True,
    )
    Xc = np.ascontiguousarray(X, dtype=float)
    Wc = np.ascontiguousarray(weights, dtype=float)

    def kernel(starts, n_obs, obs, n_mis, mis, U, G, C, S0, S1, S2):
        missing_moments(
            Xc, Wc, t.order, starts, n_obs, obs, n_mis, mis, U, G, C, t.mu_c,
            t.center, S0, S1, S2,
        )  # fmt: skip

    outs = _in_threads(
        kernel,
        t,
        X.shape[0] * k * d * d,
        (t.n_obs, t.obs, t.n_mis, t.mis, t.U, t.G, t.C),
        lambda: (np.zeros(k), np.zeros((k, d)), np.zeros((k, d, d))),
    )
    S0, S1, S2 = (sum(parts) for parts in zip(*outs))
    upper = np.triu(S2)
    S2 = upper + np.swapaxes(np.triu(S2, 1), 1, 2)
    safe = np.where(S0 > 0, S0, 1.0)
    mean_c = S1 / safe[:, None]
    scatter = S2 - S0[:, None, None] * (mean_c[:, :, None] * mean_c[:, None, :])
    return S0, np.where(S0[:, None] > 0, mean_c + center, 0.0), scatter


def _marginal_log_likelihood_numpy(structure, X, params, missing) -> np.ndarray:
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


def _expected_dense_stats_numpy(X, weights, params, structure, missing):
    """:func:`expected_dense_stats` by numpy, pattern by pattern (a
    reference for the compiled pass).

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
