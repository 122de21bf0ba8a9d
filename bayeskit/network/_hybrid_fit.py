"""Learning the conditional linear Gaussians of a hybrid network's continuous
nodes: one weighted least-squares regression per configuration of the discrete
parents, maximum likelihood or the mode under a normal-inverse-gamma prior,
from statistics of the rows that add over chunks (triangular factors)."""

from __future__ import annotations

import itertools

import numpy as np
from scipy.linalg import solve_triangular

from ..graph.clg import CLGNode
from ..priors import NormalInverseGamma

__all__ = [
    "add_regression_stats",
    "clg_from_stats",
    "prior_of",
    "regression_stats",
]


def prior_of(est, node) -> NormalInverseGamma:
    """The prior of ``node``'s regressions (``continuous_prior``), checked."""
    prior = est.continuous_prior
    if isinstance(prior, dict):
        prior = prior.get(node)
    if prior is None:
        return NormalInverseGamma()
    if not isinstance(prior, NormalInverseGamma):
        raise TypeError(
            "continuous_prior must be a NormalInverseGamma, or a dict from "
            f"continuous node to one; got {type(prior).__name__} for {node!r}"
        )
    fields = (prior.mean, prior.mean_weight, prior.scatter, prior.variance_weight)
    if any(np.ndim(f) for f in fields):
        raise ValueError(
            f"continuous_prior of {node!r}: give scalar hyperparameters (one "
            "prior for every regression of the node)"
        )
    return prior


def _describe(dp, u, states) -> str:
    if not dp:
        return ""
    at = ", ".join(f"{p}={states[p][k]!r}" for p, k in zip(dp, u))
    return f" at {at}"


def labels_of(states, names, codes) -> tuple:
    """The state labels of ``names`` at ``codes``: a regression's key."""
    return tuple(
        states[q][k].item() if hasattr(states[q][k], "item") else states[q][k]
        for q, k in zip(names, codes)
    )


def _triangle(M: np.ndarray) -> np.ndarray:
    """The triangular factor ``R`` of ``M = QR``, ``(min(m, n), n)``."""
    return np.linalg.qr(M, mode="r")


def regression_stats(dp, cp, states, dcodes, xc, y, w) -> dict:
    """The statistics of a continuous node's regressions in some rows.

    For every configuration ``u`` of the discrete parents seen with positive
    weight, ``(R_u, n_u)``: the triangular factor of the weighted design and
    response :math:`W^{1/2} [1, X, y]` of its rows (``QR``), and their total
    weight, keyed by the parents' labels. ``R_u^T R_u`` is the rows' scatter
    :math:`[1, X, y]^T W [1, X, y]`, so the factors of two chunks, stacked and
    factored again (:func:`add_regression_stats`), are the factor of all
    their rows; least squares from ``R_u`` is as accurate as from the rows
    (Golub and Van Loan 2013, section 5.3), which normal equations are not.
    """
    keep = w > 0
    dcodes, xc, y, w = dcodes[keep], xc[keep], y[keep], w[keep]
    if dp:
        shape = tuple(len(states[p]) for p in dp)
        flat = np.ravel_multi_index(tuple(dcodes.T), shape)
    else:
        flat = np.zeros(len(y), dtype=np.intp)
    sw = np.sqrt(w)
    design = np.column_stack([np.ones(len(y)), xc, y]) * sw[:, None]
    out = {}
    for k in np.unique(flat):
        rows = flat == k
        u = np.unravel_index(k, shape) if dp else ()
        key = labels_of(states, dp, u)
        out[key] = (_triangle(design[rows]), float(w[rows].sum()))
    return out


def add_regression_stats(a: dict, b: dict) -> dict:
    """The statistics of two chunks' rows together (see
    :func:`regression_stats`)."""
    out = dict(a)
    for key, (R, n) in b.items():
        if key in out:
            R0, n0 = out[key]
            out[key] = (_triangle(np.vstack([R0, R])), n0 + n)
        else:
            out[key] = (R, n)
    return out


def clg_from_stats(
    node, dp, cp, cards, states, stats: dict, prior: NormalInverseGamma
) -> CLGNode:
    """The CLG of ``node`` from the statistics of its complete rows.

    For every configuration ``u`` of the discrete parents, the coefficients
    ``theta = (a, b)`` minimise
    :math:`\\sum_i w_i (y_i - a - b^\\top x_i)^2 + \\kappa \\lVert \\theta -
    \\theta_0 \\rVert^2` with :math:`\\theta_0 = (m_0, 0, \\ldots, 0)` (the
    triangular factor of the weighted design, the prior's rows appended), and
    the variance is :math:`(\\psi + \\text{that minimum}) / (c + n_u)`: the
    mode of the conjugate normal-inverse-gamma prior
    :math:`\\theta \\mid \\sigma^2 \\sim \\mathcal{N}(\\theta_0,
    \\sigma^2 / \\kappa)` on the regression (Bishop 2006, section 3.3; Gelman
    et al. 2013, section 14.8), which is
    :class:`~bayeskit.priors.NormalInverseGamma`'s mode when the node has no
    continuous parents. All hyperparameters at zero is weighted least
    squares with the weighted mean squared residual as variance (maximum
    likelihood).

    Parameters
    ----------
    node : hashable
    dp, cp : tuple
        The discrete and continuous parents.
    cards, states : dict
        The discrete nodes' numbers of states and labels.
    stats : dict
        :func:`regression_stats` of the rows (added over chunks).
    prior : NormalInverseGamma

    Returns
    -------
    CLGNode
    """
    shape = tuple(cards[p] for p in dp)
    p = 1 + len(cp)
    kappa, m0 = float(prior.mean_weight), float(prior.mean)
    psi, c = float(prior.scatter), float(prior.variance_weight)
    intercept = np.zeros(shape)
    coef = np.zeros((*shape, len(cp)))
    variance = np.zeros(shape)
    for u in itertools.product(*[range(s) for s in shape]):
        key = labels_of(states, dp, u)
        R, n_u = stats.get(key, (np.zeros((0, p + 1)), 0.0))
        if kappa > 0:
            rows = np.zeros((p, p + 1))
            rows[:, :p] = np.sqrt(kappa) * np.eye(p)
            rows[0, p] = np.sqrt(kappa) * m0
            R = _triangle(np.vstack([R, rows]))
        where = _describe(dp, u, states)
        if R.shape[0] == 0:
            raise ValueError(
                f"continuous node {node!r}: no rows of positive weight{where}, so "
                "its regression is not identified; give continuous_prior a "
                "mean_weight > 0, or data for every configuration of its "
                "discrete parents"
            )
        if R.shape[0] < p or np.linalg.matrix_rank(R[:p, :p]) < p:
            raise ValueError(
                f"continuous node {node!r}: singular regression on its continuous "
                f"parents {list(cp)!r}{where} (fewer rows than coefficients, or "
                "collinear parents); give continuous_prior a mean_weight > 0"
            )
        theta = solve_triangular(R[:p, :p], R[:p, p], lower=False)
        residual = float(R[p, p]) ** 2 if R.shape[0] > p else 0.0
        spread = psi + residual
        den = c + n_u
        if not (den > 0 and spread > 0):
            raise ValueError(
                f"continuous node {node!r}: residual variance 0{where} (its "
                "regression fits the rows exactly); give continuous_prior a "
                "scatter > 0"
            )
        intercept[u] = theta[0]
        coef[u] = theta[1:]
        variance[u] = spread / den
    return CLGNode(tuple(dp), tuple(cp), intercept, coef, variance)
