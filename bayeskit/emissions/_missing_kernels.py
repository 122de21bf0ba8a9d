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

__all__ = ["missing_log_likelihood", "missing_moments"]

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
