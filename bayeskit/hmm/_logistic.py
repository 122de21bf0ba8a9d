"""The M-step of an input-output HMM: weighted multinomial logistic regression.

Every row of an input-output HMM's transitions (and its start) is a softmax
of a linear function of the step's covariates ``u``:

.. math::

    P(z_t = j \\mid z_{t-1} = i, u_t)
        = \\mathrm{softmax}_j(c_i + W_i u_t),
    \\qquad c_{ij} = \\log A_{ij},

where ``A`` (``transmat_``) is the transition matrix at ``u = 0`` and
``W_i`` (``transmat_coef_[i]``) the coefficients. Given the expected
counts ``n_t(j)`` of the E-step (the pairwise posteriors of the transitions
out of ``i``, one row per step), the M-step maximises, over ``c_i`` and
``W_i``,

.. math::

    \\sum_t \\sum_j n_t(j) \\log \\mathrm{softmax}_j(c_i + W_i u_t)
    + \\sum_j (\\alpha_{ij} - 1) \\log \\mathrm{softmax}_j(c_i)
    - \\frac{\\lambda}{2} \\lVert W_i \\rVert^2,

a weighted multinomial logistic regression (Bengio and Frasconi 1996) whose
prior is the Dirichlet of hmmlearn's ``transmat_prior`` on the table at
``u = 0`` and a Gaussian of precision ``lambda`` (``transition_alpha``) on
the coefficients. The objective is concave; Newton's method with a
backtracking line search from the previous parameters climbs it, never
accepting a step that lowers it, so EM is generalised EM and its objective
never decreases (Dempster, Laird and Rubin 1977, section 3). The softmax is
unchanged by adding a constant to every ``c_ij``: the Newton system is solved
with a damping of ``1e-10`` of its scale on the diagonal, which leaves the
steps in the other directions unchanged (the gradient has no component along
that direction). Entries of ``A`` that are exactly zero stay zero (their
logits stay ``-inf`` and take no part), as Baum-Welch keeps structural zeros.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from .._logmath import log_normalize

__all__ = ["softmax_objective", "update_softmax_row"]

_MAX_NEWTON = 50
_MAX_HALVINGS = 40
# The relative rounding of the objective (a sum of many terms).
_ROUNDING = 1e-13


def softmax_objective(counts, inputs, log_row, coef, pseudo, penalty) -> float:
    """The objective of the M-step at ``(log_row, coef)`` (see the module).

    Parameters
    ----------
    counts : ndarray of shape (n, k)
        Expected counts of every step (weighted).
    inputs : ndarray of shape (n, d)
        The covariates of every step.
    log_row : ndarray of shape (k,)
        The logits at ``u = 0``; ``-inf`` for a structural zero.
    coef : ndarray of shape (k, d)
    pseudo : ndarray of shape (k,)
        ``alpha - 1``, the prior's pseudo-counts at ``u = 0``.
    penalty : float
        ``lambda``.
    """
    active = np.isfinite(log_row)
    return _objective(
        counts[:, active],
        inputs,
        log_row[active],
        coef[active],
        pseudo[active],
        penalty,
    )


def _objective(counts, inputs, c, w, pseudo, penalty):
    logp, _ = log_normalize(c[None, :] + inputs @ w.T, axis=1)
    total = float(np.sum(counts * logp)) if counts.size else 0.0
    if np.any(pseudo):
        log0, _ = log_normalize(c, axis=0)
        total += float(pseudo @ log0)
    return total - 0.5 * penalty * float(np.sum(w * w))


def update_softmax_row(counts, inputs, log_row, coef, pseudo, penalty, update_coef):
    """Newton's method on one row's objective from ``(log_row, coef)``.

    Parameters are those of :func:`softmax_objective`; ``update_coef`` false
    keeps ``coef`` (only the logits at ``u = 0`` move).

    Returns
    -------
    log_row : ndarray of shape (k,)
        The new logits, normalised (``log_row`` is a log-probability row).
    coef : ndarray of shape (k, d)
        The new coefficients (zero rows for structural zeros).
    """
    active = np.isfinite(log_row)
    out_row = np.full_like(log_row, -np.inf)
    out_coef = np.array(coef, dtype=float, copy=True)
    ka = int(active.sum())
    n, d = inputs.shape
    weight = counts[:, active].sum() + max(float(pseudo[active].sum()), 0.0)
    if ka <= 1 or weight <= 0:  # nothing to fit: the row as it was
        out_row[active], _ = log_normalize(log_row[active], axis=0)
        return out_row, out_coef
    counts = counts[:, active]
    pseudo = pseudo[active]
    c = np.array(log_row[active], dtype=float)
    w = np.array(coef[active], dtype=float)
    d_fit = d if update_coef else 0  # the coefficients that move
    f = _objective(counts, inputs, c, w, pseudo, penalty)
    totals = counts.sum(axis=1)
    design = np.concatenate([np.ones((n, 1)), inputs[:, :d_fit]], axis=1)
    size = ka * (d_fit + 1)
    for _ in range(_MAX_NEWTON):
        logp, _ = log_normalize(c[None, :] + inputs @ w.T, axis=1)
        p = np.exp(logp)
        resid = counts - totals[:, None] * p  # (n, ka)
        grad = resid.T @ design  # (ka, d_fit + 1)
        log0, _ = log_normalize(c, axis=0)
        p0 = np.exp(log0)
        grad[:, 0] += pseudo - pseudo.sum() * p0
        grad[:, 1:] -= penalty * w[:, :d_fit]
        # The negative Hessian, blocks (j, a) x (k, b).
        weighted = (totals[:, None] * p)[:, :, None] * design[:, None, :]
        hess = -np.einsum("tja,tkb->jakb", weighted, p[:, :, None] * design[:, None, :])
        diag = np.einsum("tja,tb->jab", weighted, design)
        idx = np.arange(ka)
        hess[idx, :, idx, :] += diag
        s0 = pseudo.sum()
        hess[:, 0, :, 0] += s0 * (np.diag(p0) - np.outer(p0, p0))
        hess = hess.reshape(size, size)
        if d_fit:
            ridge = np.zeros((ka, d_fit + 1))
            ridge[:, 1:] = penalty
            hess[np.diag_indices(size)] += ridge.ravel()
        g = grad.ravel()
        scale = max(float(np.trace(hess)) / size, 1e-300)
        hess[np.diag_indices(size)] += 1e-10 * scale
        try:
            step = cho_solve(cho_factor(hess), g).reshape(ka, d_fit + 1)
        except np.linalg.LinAlgError:  # pragma: no cover - damped, definite
            break
        decrement = float(g @ step.ravel())
        if not decrement > 0:
            break
        # Near the optimum (the decrement at rounding level) one last full
        # step, which Newton's quadratic convergence puts at the optimum to
        # rounding: its gain (about half the decrement) is below what
        # float64 resolves in the objective, so it is taken unless the
        # objective computed falls by more than its rounding.
        last = decrement < 1e-15 * max(1.0, abs(f))
        slack = _ROUNDING * max(1.0, abs(f)) if last else 0.0
        t = 1.0
        for _ in range(1 if last else _MAX_HALVINGS):
            c_new = c + t * step[:, 0]
            w_new = w.copy()
            w_new[:, :d_fit] += t * step[:, 1:]
            f_new = _objective(counts, inputs, c_new, w_new, pseudo, penalty)
            if f_new >= f - slack:
                c, w, f = c_new, w_new, f_new
                break
            t *= 0.5
        else:
            break
        if last:
            break
    out_row[active], _ = log_normalize(c, axis=0)
    out_coef[active] = w
    out_coef[~active] = 0.0
    return out_row, out_coef
