"""The base class of the covariance structures (:mod:`bayeskit.emissions.covariance`).

:class:`Covariance` lists what one structure contributes to the Gaussian
family; the four structures implement it in :mod:`bayeskit.emissions.covariance`.

References
----------
.. [1] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, section 2.3 (the Gaussian distribution).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..priors.niw import NormalInverseWishart
from ._covariance_factors import _LOG_2PI, row_blocks

__all__ = ["Covariance"]


class Covariance(ABC):
    """What one covariance structure contributes to the Gaussian family.

    The methods take and return arrays in the structure's own shapes
    (:meth:`shape` for covariances, precisions and their factors,
    :meth:`scatter_shape` for the scatter statistics, :meth:`weight_shape`
    for the statistics' weights). They assume valid input: the estimators
    validate at their boundary.
    """

    name: str = ""
    #: Whether one covariance is shared by all states.
    shared: bool = False
    #: Whether :meth:`log_likelihood` leaves missing (NaN) coordinates out
    #: itself (the diagonal structure); the Gaussian family marginalises
    #: them for the others.
    marginalises_missing: bool = False
    #: Whether a NaN coordinate always makes its row's
    #: ``relative_log_likelihood`` NaN (a matrix product propagates it), so
    #: that the scores themselves tell which rows are incomplete.
    scores_propagate_nan: bool = False

    # -- shapes and counts ---------------------------------------------------------
    @abstractmethod
    def shape(self, n_states: int, n_features: int) -> tuple:
        """Shape of the covariance parameters (or precisions) of ``n_states``."""

    def scatter_shape(self, n_states: int, n_features: int) -> tuple:
        """Shape of the scatter statistics (by default, that of the parameters)."""
        return self.shape(n_states, n_features)

    def weight_shape(self, n_states: int, n_features: int) -> tuple:
        """Shape of the statistics' weights: one per state."""
        return (n_states,)

    @abstractmethod
    def n_parameters(self, n_states: int, n_features: int) -> int:
        """Free parameters of the covariances (a symmetric matrix has d(d+1)/2)."""

    @abstractmethod
    def block_size(self, n_features: int) -> int:
        """Dimension of each independent covariance block: ``d`` for a matrix,
        1 for each variance (the ``p`` of an inverse-Wishart on that block)."""

    # -- statistics ----------------------------------------------------------------
    def stats(self, X, weights, labels=None):
        """``(weight, mean, scatter)`` of ``X`` under ``weights`` ``(n, K)``.

        ``labels`` may be given when every row's weight sits on one state (a
        supervised fit, ``weights[i, labels[i]]`` the row's weight).
        """
        weight = weights.sum(axis=0)
        safe = np.where(weight > 0, weight, 1.0)
        mean = (weights.T @ X) / safe[:, None]
        return weight, mean, self.scatter(X, weights, mean, labels)

    def complete_stats(self, X, weights):
        """:meth:`stats` of rows known to hold no missing value (NaN), without
        looking for one: what EM on complete rows gathers every iteration."""
        return Covariance.stats(self, X, weights)

    def from_dense(self, weight, mean, scatter):
        """Statistics gathered densely, weight ``(K,)``, mean ``(K, d)`` and
        scatter ``(K, d, d)`` (those of rows with missing coordinates), in
        this structure's shapes (by default, as they are)."""
        return weight, mean, scatter

    @abstractmethod
    def scatter(self, X, weights, means, labels=None) -> np.ndarray:
        """Centred weighted scatter of ``X`` (NaN-free) around every state mean."""

    @abstractmethod
    def outer(self, delta: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """Scatter of the mean shift ``delta`` (n_states, d), weighted by ``coef``
        (the statistics' weights, or a prior's per-state weights)."""

    # -- parameters from statistics and a prior ------------------------------------
    @abstractmethod
    def prior_scatter(self, prior: NormalInverseWishart, n_features: int):
        """The part of ``prior``'s scatter ``Psi`` this structure reads, in the
        shape of its scatter statistics (broadcasting over the states): the
        matrix, its diagonal, or its trace."""

    def as_covariance(self, scatter, n_features: int) -> np.ndarray:
        """A scatter of unit weight as a covariance (the spherical structure's
        scatter is a trace over the features)."""
        return scatter

    @abstractmethod
    def map_covariances(
        self,
        scatter,
        weight,
        psi,
        dof,
        n_features: int,
        fallback=None,
        min_denominator: float = 0.0,
    ) -> np.ndarray:
        """``(psi + scatter) / max(dof + weight, min_denominator)`` in this
        structure's shape.

        ``scatter`` is centred on the means of the estimate. Where the
        denominator is zero (no data, no prior weight, no ``min_denominator``)
        the covariance is ``fallback``'s; without one, a
        :class:`numpy.linalg.LinAlgError`.
        """

    @abstractmethod
    def add_to_diagonal(self, covariances, value: float) -> np.ndarray:
        """``covariances + value I`` (a new array)."""

    def covariances(
        self, scatter, weight, prior_weight, prior_scatter, reg, shrink=0.0
    ):
        """MAP covariances ``(1 - shrink) (scatter + eta S) / (weight + eta)``
        plus ``(shrink + reg) I``; where ``weight + eta == 0``, ``S`` itself.

        The keyword form of :class:`~bayeskit.priors.NormalInverseWishart`'s
        update (``Psi = eta S``, ``c = eta``), kept for its callers.
        """
        S = NormalInverseWishart(scatter=prior_scatter)
        # The number of features: the prior's, or the scatter's (a spherical
        # scatter, one trace per state, does not show it).
        if S.scatter.ndim:
            d = S.scatter.shape[-1]
        else:
            d = np.shape(scatter)[-1] if np.ndim(scatter) > 1 else 1
        psi = self.prior_scatter(S, d)
        fallback = self.as_covariance(psi, d)
        cov = self.map_covariances(
            scatter, weight, prior_weight * psi, prior_weight, d, fallback
        )
        cov *= 1.0 - shrink
        return self.add_to_diagonal(cov, shrink + reg)

    # -- precision factors ---------------------------------------------------------
    @abstractmethod
    def precision_cholesky(
        self, covariances, rounding_floor=True, *, floor=0.0, jitter=0.0
    ) -> np.ndarray:
        """Factors ``P`` with ``P P^T`` the precision; raises LinAlgError if not PD.

        With ``rounding_floor``, a covariance singular up to rounding also
        raises: for matrices a Cholesky pivot at the rounding level of the
        matrix, for variances a variance at or below ``floor`` (the rounding
        level of deviations from the data's means). Without it, only a failed
        factorisation does (scikit-learn's mixtures). With ``jitter`` > 0, a
        singular matrix is factored with ``jitter`` added to its diagonal
        instead (hmmlearn's densities of a full or tied covariance; logged);
        variances ignore it.
        """

    @abstractmethod
    def log_det_precision_cholesky(self, prec_chol, n_features: int) -> np.ndarray:
        """``log det P`` per state, shape ``(n_states,)`` (or a scalar if tied)."""

    @abstractmethod
    def precision(self, prec_chol) -> np.ndarray:
        """The precisions ``P P^T`` in the structure's shape."""

    @abstractmethod
    def from_precision(self, precisions) -> tuple[np.ndarray, np.ndarray]:
        """``(P, covariances)`` of given precisions; LinAlgError if not PD.

        ``P`` is the factor the M-step gives (upper triangular for matrices)
        and the covariances come from triangular solves.
        """

    @abstractmethod
    def trace_precision(self, prec_chol, M, n_features: int) -> np.ndarray:
        """``tr(Sigma_k^{-1} M_k)`` per state (summed if tied), ``M`` a scatter
        in the shape :meth:`prior_scatter` or :meth:`outer` give."""

    # -- densities -----------------------------------------------------------------
    @abstractmethod
    def mahalanobis(self, Xc, mu_c, prec_chol) -> np.ndarray:
        """Squared Mahalanobis distances ``(n, n_states)``; ``Xc``, ``mu_c`` centred."""

    def log_likelihood(self, X, params) -> np.ndarray:
        """``log N(x_i; mu_k, Sigma_k)`` for every row and state, ``(n, K)``.

        ``params`` has ``means``, ``precisions_cholesky``, ``log_det`` and
        ``center`` (the deviations are taken in coordinates centred there).
        """
        mu_c = params.means - params.center
        n, d = X.shape
        out = np.empty((n, mu_c.shape[0]))
        for rows in row_blocks(n, mu_c.size):
            maha = self.mahalanobis(
                X[rows] - params.center, mu_c, params.precisions_cholesky
            )
            out[rows] = -0.5 * (maha + d * _LOG_2PI) + params.log_det
        return out

    def relative_log_likelihood(self, X, params) -> np.ndarray:
        """The log-likelihood up to a constant per row (what a posterior over
        the states needs); by default the log-likelihood itself."""
        return self.log_likelihood(X, params)

    # -- the rest ------------------------------------------------------------------
    @abstractmethod
    def dense(self, covariances, state: int, n_features: int) -> np.ndarray:
        """The full ``(d, d)`` covariance matrix of one state."""

    def sample(self, rng, mean, covariances, state: int, n: int) -> np.ndarray:
        """``n`` rows from ``N(mean, Sigma_state)`` drawn with ``rng`` (a
        ``numpy.random.RandomState``), as scikit-learn's mixtures draw them."""
        cov = self.dense(covariances, state, np.shape(mean)[0])
        return rng.multivariate_normal(mean, cov, int(n))

    # -- layouts of given covariances (hmmlearn's ``covars_``) ---------------------
    @abstractmethod
    def from_matrix(self, matrix, n_states: int) -> np.ndarray:
        """Every state's covariance made from one ``(d, d)`` matrix, in this
        structure's shape: the matrix itself, its diagonal, or the mean of its
        diagonal (hmmlearn's start from the data's covariance)."""

    def dense_all(self, covariances, n_states: int, n_features: int) -> np.ndarray:
        """Every state's full covariance matrix, ``(n_states, d, d)``."""
        return np.stack(
            [self.dense(covariances, k, n_features) for k in range(n_states)]
        )

    @abstractmethod
    def layout(self, covariances, n_states: int, name: str) -> np.ndarray:
        """Given covariances (a float copy) in this structure's shape, or a
        ValueError naming ``name`` and the shape expected. The number of
        features is checked where the means are known."""

    def check_values(self, covariances, name: str) -> None:
        """ValueError naming ``name`` unless every covariance is finite,
        symmetric and positive definite (every eigenvalue above zero, the
        condition of hmmlearn's ``covars_``); here for variances: positive."""
        c = np.asarray(covariances, dtype=float)
        if not np.all(np.isfinite(c)):
            raise ValueError(f"{name} must be finite")
        if not np.all(c > 0):
            raise ValueError(f"{name} must be positive (they are variances)")

    def log_prior(self, prec_chol, prior_scatter, prior_weight: float) -> float:
        """Log density of the covariance prior ``eta`` samples of ``S`` at ``P``,
        up to its constant: ``sum_k -eta/2 (log|Sigma_k| + tr(Sigma_k^{-1} S))``
        (:meth:`NormalInverseWishart.log_density`)."""
        if prior_weight == 0:
            return 0.0
        prior = NormalInverseWishart.from_covariance(prior_scatter, prior_weight)
        d = prior.scatter.shape[-1] if prior.scatter.ndim else 1
        n_states = np.shape(prec_chol)[0] if not self.shared else 1
        return prior.log_density(self, np.zeros((n_states, d)), prec_chol)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __reduce__(self):
        from .covariance import covariance_from_name

        return (covariance_from_name, (self.name,))
