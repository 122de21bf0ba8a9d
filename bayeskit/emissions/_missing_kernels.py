"""Compiled row kernels of the Gaussian family's missing coordinates.

Rows are visited grouped by their pattern of missing coordinates; every
pattern brings the factors of its observed block for every state (padded to
``d``): ``U`` the inverse of the lower Cholesky factor of ``Sigma_oo`` (so
``z = U (x_o - mu_o)`` is whitened), ``G = (U Sigma_om)^T`` (the conditional
mean of the missing coordinates is ``mu_m + G z``) and ``C`` the conditional
covariance. One pass over the rows computes the marginal log-densities, or
the moments of the completed rows, in coordinates centred at ``center``
(see :mod:`bayeskit.emissions._gaussian_missing`).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit

__all__ = ["missing_log_likelihood", "missing_moments", "pattern_factors"]

_JIT = {"nogil": True, "error_model": "numpy", "fastmath": {"reassoc", "contract"}}


@njit(**_JIT)
def missing_log_likelihood(
    X, order, starts, n_obs, obs, U, mu_c, center, const, out
):  # pragma: no cover - compiled
    """``out[i, k] = const[p, k] - ||U[p, k] (x_o - mu_o)||^2 / 2`` for every
    row ``i`` of pattern ``p``, its observed coordinates ``obs[p, :n_obs[p]]``."""
    d = X.shape[1]
    n_states = mu_c.shape[0]
    dev = np.empty(d)
    e = np.empty(d)
    for p in range(starts.shape[0] - 1):
        no = n_obs[p]
        for r in range(starts[p], starts[p + 1]):
            i = order[r]
            for t in range(no):
                j = obs[p, t]
                dev[t] = X[i, j] - center[j]
            for k in range(n_states):
                for b in range(no):
                    e[b] = dev[b] - mu_c[k, obs[p, b]]
                Upk = U[p, k]
                maha = 0.0
                for a in range(no):
                    s = 0.0
                    for b in range(a + 1):
                        s += Upk[a, b] * e[b]
                    maha += s * s
                out[i, k] = const[p, k] - 0.5 * maha


@njit(**_JIT)
def missing_moments(
    X, W, order, starts, n_obs, obs, n_mis, mis, U, G, C, mu_c, center, S0, S1, S2
):  # pragma: no cover - compiled
    """Add every row's completed moments under every state of positive weight:
    ``S0[k] += w``, ``S1[k] += w y``, ``S2[k] += w (y y^T + C)`` (upper
    triangle), ``y`` the row completed by its conditional mean, centred."""
    d = X.shape[1]
    n_states = mu_c.shape[0]
    dev = np.empty(d)
    e = np.empty(d)
    z = np.empty(d)
    y = np.empty(d)
    for p in range(starts.shape[0] - 1):
        no = n_obs[p]
        nm = n_mis[p]
        for r in range(starts[p], starts[p + 1]):
            i = order[r]
            for t in range(no):
                j = obs[p, t]
                dev[t] = X[i, j] - center[j]
                y[j] = dev[t]
            for k in range(n_states):
                w = W[i, k]
                if w == 0.0:
                    continue
                for b in range(no):
                    e[b] = dev[b] - mu_c[k, obs[p, b]]
                Upk = U[p, k]
                Gpk = G[p, k]
                for a in range(no):
                    s = 0.0
                    for b in range(a + 1):
                        s += Upk[a, b] * e[b]
                    z[a] = s
                for q in range(nm):
                    s = mu_c[k, mis[p, q]]
                    for a in range(no):
                        s += Gpk[q, a] * z[a]
                    y[mis[p, q]] = s
                S0[k] += w
                S1k = S1[k]
                S2k = S2[k]
                for a in range(d):
                    wy = w * y[a]
                    S1k[a] += wy
                    for b in range(a, d):
                        S2k[a, b] += wy * y[b]
                for q in range(nm):
                    a = mis[p, q]
                    for t in range(nm):
                        b = mis[p, t]
                        if b >= a:
                            S2[k, a, b] += w * C[p, k, q, t]


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
