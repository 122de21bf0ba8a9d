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

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from .._logmath import log_normalize

__all__ = [
    "SoftmaxRow",
    "data_terms",
    "softmax_objective",
    "update_softmax_row",
    "update_softmax_rows",
]

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
    row = SoftmaxRow(log_row, coef, pseudo, penalty, update_coef)
    rows = update_softmax_rows(
        [row],
        counts[:, active].sum(),
        lambda requests: [
            data_terms(counts, inputs, *request) for _, request in requests
        ],
    )
    return rows[0]


@dataclass(frozen=True)
class SoftmaxRow:
    """One row's M-step: its start ``(log_row, coef)`` and its prior (see
    :func:`softmax_objective`)."""

    log_row: np.ndarray
    coef: np.ndarray
    pseudo: np.ndarray
    penalty: float
    update_coef: bool


def data_terms(counts, inputs, active, c, w, d_fit, derivatives):
    """The data's part of one row's objective at the logits ``c`` and the
    coefficients ``w`` of the ``active`` columns, and (``derivatives``) of
    its gradient and negative Hessian in the first ``d_fit`` covariates and
    the intercept: ``(f, grad, hess)``, the last two None without
    ``derivatives``. They are sums over the steps, so those of disjoint
    steps add (the Dask fit sums them over partitions)."""
    counts = counts[:, active]
    logp, _ = log_normalize(c[None, :] + inputs @ w.T, axis=1)
    f = float(np.sum(counts * logp)) if counts.size else 0.0
    if not derivatives:
        return f, None, None
    n = len(inputs)
    p = np.exp(logp)
    totals = counts.sum(axis=1)
    design = np.concatenate([np.ones((n, 1)), inputs[:, :d_fit]], axis=1)
    resid = counts - totals[:, None] * p  # (n, ka)
    grad = resid.T @ design  # (ka, d_fit + 1)
    # The negative Hessian, blocks (j, a) x (k, b).
    weighted = (totals[:, None] * p)[:, :, None] * design[:, None, :]
    hess = -np.einsum("tja,tkb->jakb", weighted, p[:, :, None] * design[:, None, :])
    diag = np.einsum("tja,tb->jab", weighted, design)
    idx = np.arange(len(c))
    hess[idx, :, idx, :] += diag
    return f, grad, hess


def update_softmax_rows(rows, weights, evaluate):
    """Newton's method on every row of ``rows`` (:class:`SoftmaxRow`), in
    lockstep: every round asks ``evaluate`` for the data terms
    (:func:`data_terms`) of every row still moving, at once.

    ``weights`` is the total expected count of every row's active columns
    (a scalar for one row); ``evaluate(requests)`` takes a list of
    ``(index, (active, c, w, d_fit, derivatives))`` and returns the terms of
    each, in order. In memory it reads the rows' counts; on Dask it sums the
    terms of every partition where the partition lives, one reduction per
    round. An answer with derivatives at the point a row asks them for is
    used again (an evaluator may give them unasked). Returns the rows'
    ``(log_row, coef)``.
    """
    weights = np.broadcast_to(np.asarray(weights, dtype=float), (len(rows),))
    runs = [_newton(row, w) for row, w in zip(rows, weights)]
    out = [None] * len(rows)
    asks = {}
    for i, run in enumerate(runs):
        _step(run, None, i, asks, out)
    known = {}
    while asks:
        todo = []
        answers = {}
        for i, ask in asks.items():
            hit = known.get(i)
            if ask[-1] and hit is not None and hit[0] is ask[1] and hit[1] is ask[2]:
                answers[i] = hit[2]
            else:
                todo.append((i, ask))
        for (i, ask), terms in zip(todo, evaluate(todo) if todo else []):
            answers[i] = terms
            if terms[1] is not None:
                known[i] = (ask[1], ask[2], terms)
        pending, asks = asks, {}
        for i in pending:
            _step(runs[i], answers[i], i, asks, out)
    return out


def _step(run, answer, i, asks, out):
    try:
        asks[i] = run.send(answer)
    except StopIteration as done:
        out[i] = done.value


def _newton(row: SoftmaxRow, weight: float):
    """One row's Newton iterations, as a generator: it yields the points
    whose data terms it needs (see :func:`update_softmax_rows`) and returns
    ``(log_row, coef)``."""
    log_row, coef, pseudo, penalty = row.log_row, row.coef, row.pseudo, row.penalty
    active = np.isfinite(log_row)
    out_row = np.full_like(log_row, -np.inf)
    out_coef = np.array(coef, dtype=float, copy=True)
    ka = int(active.sum())
    d = out_coef.shape[-1]
    weight = weight + max(float(pseudo[active].sum()), 0.0)
    if ka <= 1 or weight <= 0:  # nothing to fit: the row as it was
        out_row[active], _ = log_normalize(log_row[active], axis=0)
        return out_row, out_coef
    pseudo = pseudo[active]
    c = np.array(log_row[active], dtype=float)
    w = np.array(coef[active], dtype=float)
    d_fit = d if row.update_coef else 0  # the coefficients that move
    f_data, _, _ = yield active, c, w, d_fit, False
    f = _prior_terms(f_data, c, w, pseudo, penalty)
    size = ka * (d_fit + 1)
    for _ in range(_MAX_NEWTON):
        _, grad, hess = yield active, c, w, d_fit, True
        grad = grad.copy()
        hess = hess.copy()
        log0, _ = log_normalize(c, axis=0)
        p0 = np.exp(log0)
        grad[:, 0] += pseudo - pseudo.sum() * p0
        grad[:, 1:] -= penalty * w[:, :d_fit]
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
            f_data, _, _ = yield active, c_new, w_new, d_fit, False
            f_new = _prior_terms(f_data, c_new, w_new, pseudo, penalty)
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


def _prior_terms(total, c, w, pseudo, penalty):
    """The data's part of the objective ``total`` plus the prior's."""
    if np.any(pseudo):
        log0, _ = log_normalize(c, axis=0)
        total += float(pseudo @ log0)
    return total - 0.5 * penalty * float(np.sum(w * w))
