"""Compiled row kernels of the Gaussian family's missing coordinates.

Rows are visited grouped by their pattern of missing coordinates; every
pattern brings the factors of its observed block for every state (padded to
``d``): ``U`` the inverse of the lower Cholesky factor of ``Sigma_oo`` (so
``z = U (x_o - mu_o)`` is whitened), ``G = (U Sigma_om)^T`` (the conditional
mean of the missing coordinates is ``mu_m + G z``) and ``C`` the conditional
covariance. One pass over the rows computes the marginal log-densities, or
the moments of the completed rows, in coordinates centred at ``center``
(see :mod:`bayeskit.emissions._gaussian_missing`). It takes a pattern's rows
in blocks, a coordinate at a time over a block's rows, so that its inner
loops run in vector lanes (a row at a time, they ran over a row's few
coordinates, in scalars).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit

__all__ = ["missing_log_likelihood", "missing_moments", "pattern_factors"]

_JIT = {"nogil": True, "error_model": "numpy", "fastmath": {"reassoc", "contract"}}


# Rows a pass takes at once: its blocks of a pattern's rows, coordinate by
# coordinate, are a few tens of kilobytes (in the cache), and its loops over
# the rows of a block run in vector lanes.
_BLOCK = 256


@njit(**_JIT)
def _observed_block(X, order, r0, m, obs, no, center, dev):  # pragma: no cover
    """``dev[t, r] = X[order[r0 + r], obs[t]] - center[obs[t]]``, the block's
    observed coordinates, centred, one row of ``dev`` per coordinate."""
    for r in range(m):
        i = order[r0 + r]
        for t in range(no):
            j = obs[t]
            dev[t, r] = X[i, j] - center[j]


@njit(**_JIT)
def _whitened(dev, m, obs, no, mu, Upk, e, z):  # pragma: no cover - compiled
    """``z[a, :m] = sum_{b <= a} Upk[a, b] e[b]`` with ``e[b] = dev[b] -
    mu[obs[b]]``: the block's rows whitened under a state (the sums in the
    order of the row-by-row loop)."""
    for b in range(no):
        mb = mu[obs[b]]
        for r in range(m):
            e[b, r] = dev[b, r] - mb
    for a in range(no):
        for r in range(m):
            z[a, r] = 0.0
        for b in range(a + 1):
            u = Upk[a, b]
            for r in range(m):
                z[a, r] += u * e[b, r]


@njit(**_JIT)
def missing_log_likelihood(
    X, order, starts, n_obs, obs, U, mu_c, center, const, out
):  # pragma: no cover - compiled
    """``out[i, k] = const[p, k] - ||U[p, k] (x_o - mu_o)||^2 / 2`` for every
    row ``i`` of pattern ``p``, its observed coordinates ``obs[p, :n_obs[p]]``.

    The rows of a pattern are taken in blocks of ``_BLOCK``, a coordinate at
    a time over the block's rows."""
    d = X.shape[1]
    n_states = mu_c.shape[0]
    dev = np.empty((d, _BLOCK))
    e = np.empty((d, _BLOCK))
    z = np.empty((d, _BLOCK))
    for p in range(starts.shape[0] - 1):
        no = n_obs[p]
        obs_p = obs[p]
        for r0 in range(starts[p], starts[p + 1], _BLOCK):
            m = min(_BLOCK, starts[p + 1] - r0)
            _observed_block(X, order, r0, m, obs_p, no, center, dev)
            for k in range(n_states):
                _whitened(dev, m, obs_p, no, mu_c[k], U[p, k], e, z)
                ck = const[p, k]
                for r in range(m):
                    maha = 0.0
                    for a in range(no):
                        maha += z[a, r] * z[a, r]
                    out[order[r0 + r], k] = ck - 0.5 * maha


@njit(**_JIT)
def missing_moments(
    X, W, order, starts, n_obs, obs, n_mis, mis, U, G, C, mu_c, center, S0, S1, S2
):  # pragma: no cover - compiled
    """Add every row's completed moments under every state:
    ``S0[k] += w``, ``S1[k] += w y``, ``S2[k] += w (y y^T + C)`` (upper
    triangle), ``y`` the row completed by its conditional mean, centred.

    The rows of a pattern are taken in blocks of ``_BLOCK``, a coordinate at
    a time over the block's rows; the conditional covariance, the same for
    every row of a pattern, is added once per block, weighted by the block's
    total weight."""
    d = X.shape[1]
    n_states = mu_c.shape[0]
    dev = np.empty((d, _BLOCK))
    y = np.empty((d, _BLOCK))
    wy = np.empty((d, _BLOCK))
    e = np.empty((d, _BLOCK))
    z = np.empty((d, _BLOCK))
    w = np.empty(_BLOCK)
    for p in range(starts.shape[0] - 1):
        no = n_obs[p]
        nm = n_mis[p]
        obs_p = obs[p]
        for r0 in range(starts[p], starts[p + 1], _BLOCK):
            m = min(_BLOCK, starts[p + 1] - r0)
            # The observed coordinates, in their own rows of y (the
            # completed rows' missing ones are written under each state).
            _observed_block(X, order, r0, m, obs_p, no, center, dev)
            for t in range(no):
                j = obs_p[t]
                for r in range(m):
                    y[j, r] = dev[t, r]
            for k in range(n_states):
                total = 0.0
                for r in range(m):
                    w[r] = W[order[r0 + r], k]
                    total += w[r]
                if total == 0.0:
                    continue
                _whitened(dev, m, obs_p, no, mu_c[k], U[p, k], e, z)
                Gpk = G[p, k]
                for q in range(nm):
                    jm = mis[p, q]
                    for r in range(m):
                        y[jm, r] = mu_c[k, jm]
                    for a in range(no):
                        g = Gpk[q, a]
                        for r in range(m):
                            y[jm, r] += g * z[a, r]
                S0[k] += total
                for a in range(d):
                    s = 0.0
                    for r in range(m):
                        wy[a, r] = w[r] * y[a, r]
                        s += wy[a, r]
                    S1[k, a] += s
                for a in range(d):
                    for b in range(a, d):
                        s = 0.0
                        for r in range(m):
                            s += wy[a, r] * y[b, r]
                        S2[k, a, b] += s
                for q in range(nm):
                    a = mis[p, q]
                    for t in range(nm):
                        b = mis[p, t]
                        if b >= a:
                            S2[k, a, b] += total * C[p, k, q, t]


@njit(nogil=True, error_model="numpy")
def pattern_factors(
    dense, ranked, n_obs, conditional, U, const, G, C
):  # pragma: no cover - compiled
    """Every pattern's factors for every state, in place (padded to ``d``):
    ``U`` the inverse of the lower Cholesky factor ``L`` of ``Sigma_oo`` (by
    forward substitution), ``const`` ``-|o| log(2 pi) / 2 - log det L``, and
    if ``conditional``, ``G = (U Sigma_om)^T`` and the conditional covariance
    ``C = Sigma_mm - G G^T``. Pattern ``p`` observes ``ranked[p, :n_obs[p]]``
    and misses the rest of ``ranked[p]``. Returns -1, or the first pattern
    whose observed block is not positive definite under some state."""
    n_states, d, _ = dense.shape
    log_2pi = np.log(2.0 * np.pi)
    L = np.empty((d, d))
    for p in range(ranked.shape[0]):
        no = n_obs[p]
        nm = d - no
        for k in range(n_states):
            S = dense[k]
            # Cholesky-Banachiewicz, row by row.
            log_det = 0.0
            for a in range(no):
                ia = ranked[p, a]
                for b in range(a + 1):
                    s = S[ia, ranked[p, b]]
                    for c in range(b):
                        s -= L[a, c] * L[b, c]
                    if a == b:
                        if not s > 0.0:
                            return p
                        L[a, a] = np.sqrt(s)
                        log_det += np.log(L[a, a])
                    else:
                        L[a, b] = s / L[b, b]
            const[p, k] = -0.5 * no * log_2pi - log_det
            # U = L^{-1}, lower: column by column, forward substitution.
            Upk = U[p, k]
            for b in range(no):
                for a in range(b):
                    Upk[a, b] = 0.0
                Upk[b, b] = 1.0 / L[b, b]
                for a in range(b + 1, no):
                    s = 0.0
                    for c in range(b, a):
                        s -= L[a, c] * Upk[c, b]
                    Upk[a, b] = s / L[a, a]
            if not conditional:
                continue
            Gpk = G[p, k]
            for q in range(nm):
                jm = ranked[p, no + q]
                for a in range(no):
                    s = 0.0
                    for c in range(a + 1):
                        s += Upk[a, c] * S[ranked[p, c], jm]
                    Gpk[q, a] = s
            Cpk = C[p, k]
            for q in range(nm):
                for t in range(q, nm):
                    s = S[ranked[p, no + q], ranked[p, no + t]]
                    for a in range(no):
                        s -= Gpk[q, a] * Gpk[t, a]
                    Cpk[q, t] = s
                    Cpk[t, q] = s
    return -1
