"""The matrix-normal-inverse-Wishart prior of a Gaussian linear regression.

A state that emits ``x = A u + b + e``, ``e ~ N(0, Sigma)`` (``u`` the
regressors, for an autoregressive model the previous observations) has the
conjugate prior (Murphy 2012, section 7.6; Fox et al. 2011, section 3)

.. math::

    \\log p(A, b, \\Sigma) = -\\frac{c}{2} \\log|\\Sigma|
        - \\frac12 \\operatorname{tr}\\big(\\Sigma^{-1} [\\Psi
        + \\lambda (A - A_0)(A - A_0)^T + \\kappa (b - m_0)(b - m_0)^T]\\big)
        + \\text{const},

a matrix normal on the coefficients given the covariance (row covariance
``Sigma``, column precision ``lambda I``), a normal on the intercept (weight
``kappa``) and an inverse Wishart on the covariance (scatter ``Psi``, weight
``c``). The covariance part is a :class:`~bayeskit.priors.NormalInverseWishart`
(``Psi``, ``c``, ``m_0``, ``kappa``), so that with no regressors the prior,
its mode and its density are that object's exactly.

Given a state's weighted statistics of the joint rows ``v = [x; u]`` (weight
``n``, means ``xbar``, ``ubar`` and centred scatters ``C``), the mode is the
weighted least-squares solution with a ridge from the prior:

.. math::

    A (C_{uu} + \\lambda I + h\\, \\bar u \\bar u^T)
        = C_{xu} + \\lambda A_0 + h (\\bar x - m_0) \\bar u^T, \\qquad
    b = \\frac{n (\\bar x - A \\bar u) + \\kappa m_0}{n + \\kappa},

``h = n kappa / (n + kappa)`` (the intercept eliminated), solved by a
Cholesky factorisation, and

.. math::

    \\hat\\Sigma = \\frac{\\Psi + Q}{c + n}, \\qquad
    Q = \\sum_t \\gamma_t (x_t - A u_t - b)(x_t - A u_t - b)^T
        + \\lambda (A - A_0)(A - A_0)^T + \\kappa (b - m_0)(b - m_0)^T

(for a diagonal covariance, the diagonal of each). The coefficients' mode does
not depend on the covariance, so this is the joint maximiser of the expected
complete-data log posterior: EM with it never decreases the objective.

References
----------
.. [1] K. P. Murphy, *Machine Learning: A Probabilistic Perspective*, MIT
   Press, 2012, sections 7.6 (Bayesian linear regression) and 17.6
   (autoregressive HMMs).
.. [2] E. B. Fox, E. B. Sudderth, M. I. Jordan and A. S. Willsky, "Bayesian
   nonparametric inference of switching dynamic linear models", *IEEE
   Transactions on Signal Processing* 59(4), 2011, pp. 1569-1585.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from .niw import NormalInverseWishart

__all__ = ["MatrixNormalInverseWishart"]


def _solve_rows(G: np.ndarray, R: np.ndarray) -> np.ndarray:
    """``A`` with ``A G = R`` (``G`` symmetric positive semi-definite): a
    Cholesky solve, or the least-squares solution where ``G`` is singular
    (a state on fewer distinct regressors than their number, no ridge)."""
    if G.shape[0] == 0:
        return np.zeros((R.shape[0], 0))
    try:
        return cho_solve(cho_factor(G, lower=True), R.T).T
    except LinAlgError:
        return np.linalg.lstsq(G, R.T, rcond=None)[0].T


@dataclass(frozen=True)
class MatrixNormalInverseWishart:
    """A matrix-normal-inverse-Wishart prior, applied by its mode (see the module).

    Parameters
    ----------
    covariance : NormalInverseWishart
        The covariance's part (``Psi``, ``c``, ``min_denominator``,
        ``keep_unvisited``, ``reg``) and the intercept's (``mean`` ``m_0``,
        ``mean_weight`` ``kappa``, a number or one per state).
    coef : float or array-like, default=0.0
        ``A_0``: a number, or shape ``(n_outputs, n_regressors)`` or
        ``(n_states, n_outputs, n_regressors)``.
    coef_weight : float, default=0.0
        ``lambda`` (non-negative): the ridge on the coefficients.
    """

    covariance: NormalInverseWishart
    coef: np.ndarray = 0.0
    coef_weight: float = 0.0

    def _kappa(self, k: int) -> np.ndarray:
        w = np.asarray(self.covariance.mean_weight, dtype=float)
        return np.broadcast_to(w, (k,))

    def map(self, structure, stats, d, previous, update_coef=True, update_int=True):
        """The mode ``(coef, intercept, covariances)`` given ``stats``.

        Parameters
        ----------
        structure : Covariance
            The covariance structure of the noise.
        stats : GaussianStats
            Full statistics of the joint rows ``[x; u]`` of every state.
        d : int
            The number of outputs (the first ``d`` columns).
        previous : object with ``coef``, ``intercept``, ``covariances``
            What a state no data and no prior reached keeps, and the
            coefficients or intercept that are not updated.
        update_coef, update_int : bool
            Whether the coefficients and the intercepts are estimated (else
            ``previous``'s are kept, and the others estimated given them).

        Returns
        -------
        coef : ndarray of shape (n_states, d, q)
        intercept : ndarray of shape (n_states, d)
        covariances : ndarray in ``structure``'s shape
        """
        n = stats.weight
        k = n.shape[0]
        xbar, ubar = stats.mean[:, :d], stats.mean[:, d:]
        C = stats.scatter
        Cxx, Cxu, Cuu = C[:, :d, :d], C[:, :d, d:], C[:, d:, d:]
        q = ubar.shape[1]
        kappa = self._kappa(k)
        m0 = np.broadcast_to(np.asarray(self.covariance.mean, dtype=float), (k, d))
        A0 = np.broadcast_to(np.asarray(self.coef, dtype=float), (k, d, q))
        lam = float(self.coef_weight)
        coef = np.array(previous.coef, dtype=float, copy=True)
        intercept = np.array(previous.intercept, dtype=float, copy=True)
        for j in range(k):
            if update_coef and q and (n[j] > 0 or lam > 0):
                if update_int:
                    total = n[j] + kappa[j]
                    h = n[j] * kappa[j] / total if total > 0 else 0.0
                    target = m0[j]
                else:  # the intercept given: regress x - b on u
                    h, target = n[j], intercept[j]
                G = Cuu[j] + lam * np.eye(q) + h * np.outer(ubar[j], ubar[j])
                R = Cxu[j] + lam * A0[j] + h * np.outer(xbar[j] - target, ubar[j])
                coef[j] = _solve_rows(G, R)
            if update_int and n[j] + kappa[j] > 0:
                intercept[j] = (
                    n[j] * (xbar[j] - coef[j] @ ubar[j]) + kappa[j] * m0[j]
                ) / (n[j] + kappa[j])
        # The residual scatter of every state about its regression, plus the
        # prior's terms (all centred: no raw second moments).
        CuuA = np.einsum("kij,klj->kil", Cuu, coef)  # Cuu A^T
        Q = Cxx - np.einsum("kij,kjl->kil", Cxu, coef.transpose(0, 2, 1))
        Q = Q - np.einsum("kij,kjl->kil", coef, Cxu.transpose(0, 2, 1))
        Q = Q + np.einsum("kij,kjl->kil", coef, CuuA)
        r = xbar - np.einsum("kij,kj->ki", coef, ubar) - intercept
        Q = Q + np.einsum("k,ki,kj->kij", n, r, r)
        Q = Q + np.einsum("k,ki,kj->kij", kappa, intercept - m0, intercept - m0)
        if lam:
            dA = coef - A0
            Q = Q + lam * np.einsum("kij,klj->kil", dA, dA)
        Q = 0.5 * (Q + Q.transpose(0, 2, 1))
        if structure.block_size(d) == 1:
            Q = np.diagonal(Q, axis1=1, axis2=2).copy()
        niw = self.covariance
        cov = structure.map_covariances(
            Q,
            n,
            structure.prior_scatter(niw, d),
            niw._covariance_weight(k),
            d,
            previous.covariances,
            niw.min_denominator,
        )
        if niw.keep_unvisited:
            empty = n <= 0
            if empty.any():
                empty = empty.reshape((k,) + (1,) * (np.ndim(cov) - 1))
                cov = np.where(empty, previous.covariances, cov)
        if niw.reg:
            cov = structure.add_to_diagonal(cov, niw.reg)
        return coef, intercept, cov

    def log_density(self, structure, coef, intercept, precisions_cholesky) -> float:
        """``log p(A, b, Sigma)`` up to its constant (see the module); ``reg``
        is not part of it."""
        d = intercept.shape[1]
        P = precisions_cholesky
        niw = self.covariance
        total = 0.0
        if not niw.is_flat:
            # The covariance's and the intercept's part, as NormalInverseWishart.
            total += niw.log_density(structure, intercept, P)
        lam = float(self.coef_weight)
        if lam and coef.shape[2]:
            A0 = np.broadcast_to(np.asarray(self.coef, dtype=float), coef.shape)
            outer = lam * np.einsum("kij,klj->kil", coef - A0, coef - A0)
            if structure.block_size(d) == 1:
                outer = np.diagonal(outer, axis1=1, axis2=2)
            total -= 0.5 * float(np.sum(structure.trace_precision(P, outer, d)))
        return total
