"""A Gaussian linear regression per state: ``x | u, z = k ~ N(A_k u + b_k, Sigma_k)``.

The family reads rows ``[x, u]``: the ``n_outputs`` values it emits, then the
regressors it is conditioned on (for an autoregressive hidden Markov model,
the previous observations). Its statistics are the full Gaussian statistics of
the joint rows (weight, means and centred scatter of every state:
:class:`~bayeskit.emissions.GaussianStats`, merged pairwise), from which the
prior (:class:`~bayeskit.priors.MatrixNormalInverseWishart`) gives the
weighted least-squares coefficients and the residual covariance. The noise
covariance is full or diagonal (a :mod:`~bayeskit.emissions.covariance`
structure). With no regressors the family is the Gaussian family.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Emission
from .covariance import FULL, Covariance
from .gaussian import Gaussian, GaussianStats

__all__ = ["LinearGaussian", "LinearGaussianParams"]

_LOG_2PI = np.log(2.0 * np.pi)


@dataclass(frozen=True)
class LinearGaussianParams:
    """Coefficients ``(K, d, q)``, intercepts ``(K, d)``, covariances (the
    structure's shape), their precision factors and ``log det`` of those."""

    coef: np.ndarray
    intercept: np.ndarray
    covariances: np.ndarray
    precisions_cholesky: np.ndarray
    log_det: np.ndarray


class LinearGaussian(Emission):
    """Gaussian linear regression of the first ``n_outputs`` columns on the rest.

    Parameters
    ----------
    covariance : Covariance
        The structure of every state's noise covariance (full or diagonal).
    n_outputs : int
        ``d``: the number of emitted values (the first ``d`` columns of a row).
    n_regressors : int
        ``q``: the number of regressors (the other columns).
    update_coef, update_intercept, update_covariances : bool, default=True
        Which parameters :meth:`map_params` estimates (the others are kept).
    singular_jitter : float, default=0.0
        Added to the diagonal of a singular full covariance for its density.
    """

    def __init__(
        self,
        covariance: Covariance,
        n_outputs: int,
        n_regressors: int,
        *,
        update_coef: bool = True,
        update_intercept: bool = True,
        update_covariances: bool = True,
        singular_jitter: float = 0.0,
    ) -> None:
        self.covariance = covariance
        self.n_outputs = int(n_outputs)
        self.n_regressors = int(n_regressors)
        self.update_coef = update_coef
        self.update_intercept = update_intercept
        self.update_covariances = update_covariances
        self.singular_jitter = singular_jitter

    def __repr__(self) -> str:
        return (
            f"LinearGaussian({self.covariance!r}, n_outputs={self.n_outputs}, "
            f"n_regressors={self.n_regressors})"
        )

    # -- statistics ----------------------------------------------------------------
    def stats(self, X, weights, labels=None) -> GaussianStats:
        """Full Gaussian statistics of the joint rows under ``weights``."""
        return Gaussian(FULL).stats(X, weights, labels)

    def zeros(self, n_states: int) -> GaussianStats:
        """The statistics of no data."""
        return Gaussian(FULL).zeros(n_states, self.n_outputs + self.n_regressors)

    # -- parameters ----------------------------------------------------------------
    def params_from(self, coef, intercept, covariances) -> LinearGaussianParams:
        """Parameters from given coefficients, intercepts and covariances."""
        prec = self.covariance.precision_cholesky(
            covariances, rounding_floor=False, jitter=self.singular_jitter
        )
        d = self.n_outputs
        log_det = self.covariance.log_det_precision_cholesky(prec, d)
        return LinearGaussianParams(
            np.asarray(coef, dtype=float),
            np.asarray(intercept, dtype=float),
            covariances,
            prec,
            log_det,
        )

    def map_params(self, stats, prior, previous) -> LinearGaussianParams:
        """The prior's mode (a :class:`~bayeskit.priors.
        MatrixNormalInverseWishart`) given ``stats``; what is not updated, and
        what no data reached, is ``previous``'s."""
        coef, intercept, cov = prior.map(
            self.covariance,
            stats,
            self.n_outputs,
            previous,
            self.update_coef,
            self.update_intercept,
        )
        if not self.update_covariances:
            cov = previous.covariances
        return self.params_from(coef, intercept, cov)

    def log_prior(self, params: LinearGaussianParams, prior=None) -> float:
        """``log p(A, b, Sigma)`` of ``prior`` at ``params``, up to its constant."""
        if prior is None:
            return 0.0
        return prior.log_density(
            self.covariance, params.coef, params.intercept, params.precisions_cholesky
        )

    def n_parameters(self, n_states: int) -> int:
        """Free scalars of the parameters updated."""
        d, q = self.n_outputs, self.n_regressors
        n = n_states * d * q if self.update_coef else 0
        n += n_states * d if self.update_intercept else 0
        if self.update_covariances:
            n += self.covariance.n_parameters(n_states, d)
        return n

    # -- densities and draws -------------------------------------------------------
    def means(self, U: np.ndarray, params: LinearGaussianParams) -> np.ndarray:
        """``A_k u + b_k`` for every row of regressors and state, ``(n, K, d)``."""
        return np.einsum("nj,kij->nki", U, params.coef) + params.intercept

    def log_likelihood(self, X: np.ndarray, params: LinearGaussianParams):
        """``log N(x_i; A_k u_i + b_k, Sigma_k)`` for every row and state."""
        d = self.n_outputs
        x, U = X[:, :d], X[:, d:]
        P = params.precisions_cholesky
        k = params.intercept.shape[0]
        out = np.empty((len(X), k))
        full = np.ndim(P) == 3
        for j in range(k):
            resid = x - params.intercept[j]
            if U.shape[1]:
                resid = resid - U @ params.coef[j].T
            z = resid @ P[j] if full else resid * P[j]
            out[:, j] = -0.5 * np.einsum("ni,ni->n", z, z)
        out += params.log_det - 0.5 * d * _LOG_2PI
        return out

    def sample(self, params: LinearGaussianParams, states, random_state):
        raise NotImplementedError(
            "a linear Gaussian draws given its regressors: see the model's sample"
        )
