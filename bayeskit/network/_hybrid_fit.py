"""Learning the conditional linear Gaussians of a hybrid network's continuous
nodes: one weighted least-squares regression per configuration of the discrete
parents, maximum likelihood or the mode under a normal-inverse-gamma prior."""

from __future__ import annotations

import itertools

import numpy as np
from scipy.linalg import solve_triangular

from ..graph.clg import CLGNode
from ..priors import NormalInverseGamma

__all__ = ["fit_clg_node", "prior_of"]


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


def fit_clg_node(
    node, dp, cp, cards, states, dcodes, xc, y, w, prior: NormalInverseGamma
) -> CLGNode:
    """The CLG of ``node`` from its complete rows.

    For every configuration ``u`` of the discrete parents, the coefficients
    ``theta = (a, b)`` minimise
    :math:`\\sum_i w_i (y_i - a - b^\\top x_i)^2 + \\kappa \\lVert \\theta -
    \\theta_0 \\rVert^2` with :math:`\\theta_0 = (m_0, 0, \\ldots, 0)` (a QR
    factorisation of the weighted design, the prior's rows appended), and
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
    dcodes : ndarray of shape (n, len(dp))
    xc : ndarray of shape (n, len(cp))
    y, w : ndarray of shape (n,)

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
    flat = (
        np.ravel_multi_index(tuple(dcodes.T), shape)
        if dp
        else np.zeros(len(y), dtype=int)
    )
    for k, u in enumerate(itertools.product(*[range(s) for s in shape])):
        rows = (flat == k) & (w > 0)
        n_u = float(w[rows].sum())
        sw = np.sqrt(w[rows])
        A = np.column_stack([np.ones(rows.sum()), xc[rows]]) * sw[:, None]
        b = y[rows] * sw
        if kappa > 0:
            theta0 = np.zeros(p)
            theta0[0] = m0
            A = np.vstack([A, np.sqrt(kappa) * np.eye(p)])
            b = np.concatenate([b, np.sqrt(kappa) * theta0])
        where = _describe(dp, u, states)
        if len(b) == 0:
            raise ValueError(
                f"continuous node {node!r}: no rows of positive weight{where}, so "
                "its regression is not identified; give continuous_prior a "
                "mean_weight > 0, or data for every configuration of its "
                "discrete parents"
            )
        if len(b) < p or np.linalg.matrix_rank(A) < p:
            raise ValueError(
                f"continuous node {node!r}: singular regression on its continuous "
                f"parents {list(cp)!r}{where} (fewer rows than coefficients, or "
                "collinear parents); give continuous_prior a mean_weight > 0"
            )
        Q, R = np.linalg.qr(A)
        theta = solve_triangular(R, Q.T @ b, lower=False)
        resid = A @ theta - b
        spread = psi + float(resid @ resid)
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
