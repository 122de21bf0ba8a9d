"""The whole posterior of a Normal-inverse-Wishart prior, for variational
Bayes: Murphy's ``NIW(m, kappa, nu, Psi)`` form, the conjugate update, the
expected log-determinant and log-likelihood under it, and the KL divergence
between two of them (Murphy 2012, section 4.6.3; Bishop 2006, section 10.2).
A mixin of :class:`~bayeskit.priors.niw.NormalInverseWishart`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import digamma, gammaln

__all__ = ["NormalWishartPosterior"]


class NormalWishartPosterior:
    """The variational side of the Normal-inverse-Wishart prior (a mixin)."""

    def normal_wishart(self, n_states: int, n_features: int):
        """``(m, kappa, nu, Psi)`` of every state, shapes ``(K, d)``, ``(K,)``,
        ``(K,)`` and ``(K, d, d)``, with ``nu = c - d - 2`` (Murphy's
        ``nu_0``; the precision is Wishart with scale ``Psi^{-1}`` and ``nu``
        degrees of freedom).

        A ValueError says what is missing for a proper density: ``kappa >
        0``, ``nu > d - 1`` and ``Psi`` positive definite.
        """
        k, d = int(n_states), int(n_features)
        m = np.broadcast_to(self.mean, (k, d))
        kappa = np.broadcast_to(self.mean_weight, (k,))
        nu = np.broadcast_to(self.covariance_weight, (k,)) - d - 2.0
        psi = self.scatter_matrix(d)
        psi = np.broadcast_to(psi, (k, d, d))
        if not (kappa > 0).all():
            raise ValueError("mean_weight (kappa) must be positive for a proper prior")
        if not (nu > d - 1).all():
            raise ValueError(
                f"covariance_weight must exceed 2 * n_features + 1 = {2 * d + 1} "
                "(nu = c - d - 2 degrees of freedom > d - 1) for a proper prior"
            )
        return m, kappa, nu, psi

    @classmethod
    def from_normal_wishart(cls, mean, kappa, nu, psi):
        """The prior of Murphy's ``NIW(m, kappa, nu, Psi)`` for full blocks
        (``c = nu + d + 2``), per state when the arrays have a state axis."""
        d = np.shape(mean)[-1]
        return cls(
            scatter=psi,
            covariance_weight=np.asarray(nu, dtype=float) + d + 2.0,
            mean=mean,
            mean_weight=kappa,
        )

    def posterior(self, stats):
        """The posterior given a state's weighted statistics (Murphy 2012,
        eqs. 4.209-4.214): one Normal-inverse-Wishart per state.

        Parameters
        ----------
        stats : object with ``weight`` (K,), ``mean`` (K, d) and ``scatter``
            (K, d, d)
            Weighted statistics of every state, the scatter centred on its
            mean (:class:`bayeskit.emissions.GaussianStats` of the full
            structure).

        Returns
        -------
        posterior : NormalInverseWishart
            With per-state ``mean`` (K, d), ``mean_weight`` (K,),
            ``covariance_weight`` (K,) and ``scatter`` (K, d, d).
        """
        n = np.asarray(stats.weight, dtype=float)
        xbar = np.asarray(stats.mean, dtype=float)
        k, d = xbar.shape
        m0, kappa0, nu0, psi0 = self.normal_wishart(k, d)
        kappa = kappa0 + n
        mean = (kappa0[:, None] * m0 + n[:, None] * xbar) / kappa[:, None]
        diff = xbar - m0
        coef = kappa0 * n / kappa
        psi = (
            psi0
            + stats.scatter
            + coef[:, None, None] * (diff[:, :, None] * diff[:, None, :])
        )
        return type(self).from_normal_wishart(mean, kappa, nu0 + n, psi)

    def expected_log_det_precision(self, n_states: int, n_features: int):
        """``E[log|Lambda|]`` of every state, ``(K,)`` (Bishop 2006, eq.
        10.65; see the module)."""
        _, _, nu, psi = self.normal_wishart(n_states, n_features)
        d = int(n_features)
        chol = np.linalg.cholesky(psi)
        log_det_psi = 2.0 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
        half = 0.5 * (nu[:, None] - np.arange(d))
        return digamma(half).sum(axis=1) + d * np.log(2.0) - log_det_psi

    def expected_log_likelihood(self, X) -> np.ndarray:
        """``E[log N(x_i | mu_k, Sigma_k)]`` under this posterior, ``(n, K)``
        (Bishop 2006, eqs. 10.64-10.67; see the module): the message a
        variational E-step sends into the latent node."""
        X = np.asarray(X, dtype=float)
        return self.expected_log_likelihood_function(X.shape[1])(X)

    def expected_log_likelihood_function(self, n_features: int):
        """:meth:`expected_log_likelihood` as a function of the rows, with the
        posterior's own terms (the factors of ``Psi``, the expected
        log-determinants) computed once: what an E-step that takes its rows
        in blocks calls for each block."""
        k = np.shape(self.mean)[0] if np.ndim(self.mean) == 2 else 1
        d = int(n_features)
        m, kappa, nu, psi = self.normal_wishart(k, d)
        chol = np.linalg.cholesky(psi)
        e_log_det = self.expected_log_det_precision(k, d)
        per_state = e_log_det - d * np.log(2.0 * np.pi) - d / kappa

        def expected(X):
            X = np.asarray(X, dtype=float)
            # Whitened deviations L^{-1} (x - m), all states in one batched solve.
            z = np.linalg.solve(
                chol, (X[None, :, :] - m[:, None, :]).transpose(0, 2, 1)
            )
            maha = np.einsum("kdn,kdn->nk", z, z)
            return 0.5 * (per_state - nu * maha)

        return expected

    def kl(self, prior) -> np.ndarray:
        """``KL(self || prior)`` of every state, ``(K,)``.

        The Wishart part (from its density, Bishop 2006, eq. B.78, and
        ``E[Lambda] = nu Psi^{-1}``) plus the expected divergence of the
        means given the precision:

        .. math::

            \\log B_q - \\log B_0 + \\tfrac{\\nu - \\nu_0}{2} E[\\log|\\Lambda|]
            - \\tfrac{\\nu d}{2} + \\tfrac{\\nu}{2} \\operatorname{tr}(\\Psi_0
            \\Psi^{-1}) + \\tfrac12 \\big(d \\kappa_0 / \\kappa - d + d \\log
            (\\kappa / \\kappa_0) + \\kappa_0 \\nu (m - m_0)^T \\Psi^{-1}
            (m - m_0)\\big),

        with ``log B = nu / 2 log|Psi| - nu d / 2 log 2 - log Gamma_d(nu / 2)``.
        """
        k = np.shape(self.mean)[0] if np.ndim(self.mean) == 2 else 1
        d = np.shape(self.mean)[-1]
        m, kappa, nu, psi = self.normal_wishart(k, d)
        m0, kappa0, nu0, psi0 = prior.normal_wishart(k, d)
        chol = np.linalg.cholesky(psi)
        log_det = 2.0 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
        chol0 = np.linalg.cholesky(psi0)
        log_det0 = 2.0 * np.log(np.diagonal(chol0, axis1=1, axis2=2)).sum(axis=1)
        a = np.linalg.solve(chol, chol0)  # L^{-1} L_0: tr(Psi_0 Psi^{-1}) = |a|^2
        trace = np.einsum("kij,kij->k", a, a)
        z = np.linalg.solve(chol, (m - m0)[:, :, None])[:, :, 0]
        quad = np.einsum("ki,ki->k", z, z)

        def log_b(nu_, log_det_):
            lmg = d * (d - 1) / 4.0 * np.log(np.pi) + gammaln(
                0.5 * (nu_[:, None] - np.arange(d))
            ).sum(axis=1)
            return 0.5 * nu_ * log_det_ - 0.5 * nu_ * d * np.log(2.0) - lmg

        e_log_det = self.expected_log_det_precision(k, d)
        wishart = (
            log_b(nu, log_det)
            - log_b(nu0, log_det0)
            + 0.5 * (nu - nu0) * e_log_det
            - 0.5 * nu * d
            + 0.5 * nu * trace
        )
        gauss = 0.5 * (
            d * kappa0 / kappa - d + d * np.log(kappa / kappa0) + kappa0 * nu * quad
        )
        return wishart + gauss
