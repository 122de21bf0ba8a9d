"""A mixture of Gaussians per state: the emission of a GMM-HMM.

State ``k`` emits from ``n_mix`` Gaussian components of weights ``w_km``,

.. math::

    p(x \\mid z = k) = \\sum_m w_{km}\\, \\mathcal{N}(x; \\mu_{km}, \\Sigma_{km}),

the components' covariances 'spherical' (one variance each), 'diag', 'full',
or 'tied' (one full matrix shared by the components of a state, as hmmlearn's
``GMMHMM``). The log-densities of all ``n_states * n_mix`` components are one
call of :class:`~bayeskit.emissions.Gaussian` (precision Cholesky factors,
centred coordinates), the 'tied' matrices repeated over their components.

The component is a latent variable of its own: the statistics under weights
``w_tk`` (posteriors of the chain's states) are those of the components under
``w_tk r_tkm``, with ``r_tkm`` the component's posterior within state ``k``
under the current parameters (:meth:`GaussianMixtureEmission.expected_stats`,
the inner E-step). They are :class:`~bayeskit.emissions.GaussianStats` of the
``n_states * n_mix`` components (component ``(k, m)`` in row ``k * n_mix +
m``): weight, mean and centred scatter, which merge exactly.

:meth:`GaussianMixtureEmission.map_params` is hmmlearn's ``GMMHMM`` M-step
under the priors of :class:`MixturePrior` (a Dirichlet on the weights, a
normal prior on the means, an inverse gamma or inverse Wishart prior on the
covariances, hmmlearn's parameterisation), including its one departure from
an exact M-step: the covariances are the scatter around the means of the
parameters the statistics were gathered under (``previous``), not around the
new means. With ``means_weight = 0`` that is an ECM step (Meng and Rubin
1993): the covariances maximise the expected log posterior at the previous
means, the means then maximise it at the new covariances, so the log
posterior still never decreases. :meth:`GaussianMixtureEmission.log_prior` is
the log density that update maximises.

References
----------
.. [1] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, sections 9.2 (mixtures of Gaussians) and 13.2.
.. [2] X.-L. Meng and D. B. Rubin, "Maximum likelihood estimation via the ECM
   algorithm: a general framework", Biometrika 80(2), 267-278, 1993.
.. [3] hmmlearn developers, hmmlearn 0.3 documentation, ``GMMHMM``
   (https://hmmlearn.readthedocs.io).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._logmath import logsumexp, safe_log
from ..priors.dirichlet import Dirichlet
from .base import Emission
from .covariance import DIAG, FULL, SPHERICAL
from .gaussian import Gaussian, GaussianParams, GaussianStats

__all__ = ["GaussianMixtureEmission", "MixtureParams", "MixturePrior"]

_COVARIANCE_TYPES = ("spherical", "diag", "full", "tied")


@dataclass(frozen=True)
class MixtureParams:
    """The mixtures of every state, and their components' precision factors.

    Attributes
    ----------
    weights : ndarray of shape (n_states, n_mix)
    means : ndarray of shape (n_states, n_mix, n_features)
    covars : ndarray
        hmmlearn's ``GMMHMM`` shapes: ``(n_states, n_mix)`` spherical,
        ``(n_states, n_mix, n_features)`` diag, ``(n_states, n_mix,
        n_features, n_features)`` full, ``(n_states, n_features, n_features)``
        tied.
    precisions_cholesky, log_det : ndarray
        The factors of the ``n_states * n_mix`` components' covariances (see
        :meth:`GaussianMixtureEmission.params`).
    """

    weights: np.ndarray
    means: np.ndarray
    covars: np.ndarray
    precisions_cholesky: np.ndarray
    log_det: np.ndarray


@dataclass(frozen=True)
class MixturePrior:
    """hmmlearn's priors of a Gaussian mixture per state, broadcast to shape.

    Attributes
    ----------
    weights : Dirichlet or None
        On every state's weights (None: flat).
    means_prior, means_weight : ndarray of shape (k, m, d) and (k, m)
        ``mu0`` and ``lambda``: the normal prior ``N(mu0, Sigma / lambda)`` of
        every component's mean.
    covars_prior, covars_weight : ndarray
        'diag' and 'spherical': ``alpha`` and ``beta`` of an inverse gamma
        prior on every variance, ``(k, m, d)`` or ``(k, m)``; 'full' and
        'tied': the scale ``Psi`` and degrees of freedom ``nu`` of an inverse
        Wishart prior, ``(k, m, d, d)`` and ``(k, m)``, or ``(k, d, d)`` and
        ``(k,)``.
    """

    weights: Dirichlet | None
    means_prior: np.ndarray
    means_weight: np.ndarray
    covars_prior: np.ndarray
    covars_weight: np.ndarray

    @classmethod
    def broadcast(
        cls, shape, covariance_type, weights_prior=1.0, means_prior=0.0,
        means_weight=0.0, covars_prior=None, covars_weight=None,
    ):  # fmt: skip
        """hmmlearn's ``GMMHMM`` priors, broadcast to ``shape = (k, m, d)``.

        ``covars_prior`` and ``covars_weight`` left None take hmmlearn's
        defaults, which make the covariance update maximum likelihood except
        for 'spherical': ``(0, -(d + 2))`` full, ``(0, -(m + d + 1))`` tied,
        ``(-1.5, 0)`` diag, ``(-(m + 2) / 2, 0)`` spherical.
        """
        k, m, d = shape
        default, cov_shape, weight_shape = {
            "full": ((0.0, -(d + 2.0)), (k, m, d, d), (k, m)),
            "tied": ((0.0, -(m + d + 1.0)), (k, d, d), (k,)),
            "diag": ((-1.5, 0.0), (k, m, d), (k, m, d)),
            "spherical": ((-(m + 2.0) / 2, 0.0), (k, m), (k, m)),
        }[covariance_type]
        P = default[0] if covars_prior is None else covars_prior
        W = default[1] if covars_weight is None else covars_weight
        return cls(
            Dirichlet(np.broadcast_to(weights_prior, (k, m))),
            np.broadcast_to(np.asarray(means_prior, dtype=float), (k, m, d)),
            np.broadcast_to(np.asarray(means_weight, dtype=float), (k, m)),
            np.broadcast_to(np.asarray(P, dtype=float), cov_shape),
            np.broadcast_to(np.asarray(W, dtype=float), weight_shape),
        )


class GaussianMixtureEmission(Emission):
    """A mixture of ``n_mix`` Gaussians per state (see the module).

    Parameters
    ----------
    n_mix : int
        Components per state.
    covariance_type : {'spherical', 'diag', 'full', 'tied'}
        The components' covariances ('tied': one full matrix per state).
    n_features : int
        Dimension ``d`` of the observations.
    update_weights, update_means, update_covars : bool, default=True
        Which parameters :meth:`map_params` re-estimates; the others keep
        their previous values.
    min_covar : float, default=0.0
        Added to the diagonal of a full or tied covariance that is singular
        when its factors are computed (as hmmlearn's densities do); 0 makes
        that an error.
    """

    def __init__(
        self,
        n_mix: int,
        covariance_type: str,
        n_features: int,
        *,
        update_weights: bool = True,
        update_means: bool = True,
        update_covars: bool = True,
        min_covar: float = 0.0,
    ) -> None:
        if covariance_type not in _COVARIANCE_TYPES:
            raise ValueError(
                f"covariance_type must be one of {_COVARIANCE_TYPES}, got "
                f"{covariance_type!r}"
            )
        self.n_mix = n_mix
        self.covariance_type = covariance_type
        self.n_features = n_features
        self.update_weights = update_weights
        self.update_means = update_means
        self.update_covars = update_covars
        self.min_covar = min_covar
        self._full = covariance_type in ("full", "tied")
        self._component = {"spherical": SPHERICAL, "diag": DIAG}.get(
            covariance_type, FULL
        )
        self._family = Gaussian(self._component)
        self._stats_family = Gaussian(FULL if self._full else DIAG)

    # -- parameters ----------------------------------------------------------------
    def covars_shape(self, n_states: int) -> tuple:
        """The shape of ``covars`` for ``n_states`` (see :class:`MixtureParams`)."""
        k, m, d = n_states, self.n_mix, self.n_features
        return {
            "spherical": (k, m),
            "diag": (k, m, d),
            "full": (k, m, d, d),
            "tied": (k, d, d),
        }[self.covariance_type]

    def _component_covariances(self, covars: np.ndarray) -> np.ndarray:
        """The ``n_states * n_mix`` components' covariances, in the component
        structure's shape."""
        covars = np.asarray(covars, dtype=float)
        if self.covariance_type == "tied":
            return np.repeat(covars, self.n_mix, axis=0)
        k, m = covars.shape[:2]
        return covars.reshape((k * m, *covars.shape[2:]))

    def params(self, weights, means, covars) -> MixtureParams:
        """Parameters with their components' precision Cholesky factors.

        Raises ValueError if a covariance is not positive definite (a full or
        tied one is first retried with ``min_covar`` on its diagonal).
        """
        comp = self._component_covariances(covars)
        d = self.n_features
        try:
            prec = self._component.precision_cholesky(comp)
        except np.linalg.LinAlgError:
            if not (self._full and self.min_covar):
                raise ValueError(
                    "covars_ must be positive definite (a variance is zero or negative)"
                ) from None
            try:
                prec = self._component.precision_cholesky(
                    comp + self.min_covar * np.eye(d)
                )
            except np.linalg.LinAlgError:
                raise ValueError("covars_ must be positive definite") from None
        if not np.all(np.isfinite(prec)):
            raise ValueError("covars_ must be positive definite")
        log_det = self._component.log_det_precision_cholesky(prec, d)
        return MixtureParams(
            np.asarray(weights, dtype=float),
            np.asarray(means, dtype=float),
            np.asarray(covars, dtype=float),
            prec,
            log_det,
        )

    # -- inference -----------------------------------------------------------------
    def _log_components(self, X: np.ndarray, params: MixtureParams) -> np.ndarray:
        """``log w_km + log N(x_t; mu_km, Sigma_km)``, shape ``(n, k, m)``."""
        k, m, d = params.means.shape
        means = params.means.reshape(k * m, d)
        comp = GaussianParams(
            means,
            self._component_covariances(params.covars),
            params.precisions_cholesky,
            params.log_det,
            means.mean(axis=0),
        )
        log_dens = self._family.log_likelihood(X, comp).reshape(len(X), k, m)
        return log_dens + safe_log(params.weights)

    def log_likelihood(self, X: np.ndarray, params: MixtureParams) -> np.ndarray:
        return logsumexp(self._log_components(X, params), axis=2)

    # -- learning ------------------------------------------------------------------
    def stats(self, X, weights, labels=None):
        raise TypeError(
            "a mixture's statistics need the current parameters: call "
            "expected_stats(X, weights, params)"
        )

    def expected_stats(self, X, weights: np.ndarray, params: MixtureParams):
        """Statistics of the components under ``weights`` (``(n, n_states)``)
        times each component's posterior within its state under ``params``."""
        log_comp = self._log_components(X, params)
        log_norm = logsumexp(log_comp, axis=2)[:, :, None]
        ok = np.isfinite(log_norm)
        with np.errstate(under="ignore"):
            resp = np.where(ok, np.exp(log_comp - np.where(ok, log_norm, 0.0)), 0.0)
        resp *= weights[:, :, None]
        return self._stats_family.stats(X, resp.reshape(len(X), -1))

    def zeros(self, n_states: int) -> GaussianStats:
        c, d = n_states * self.n_mix, self.n_features
        if self._full:
            return GaussianStats(
                np.zeros(c), np.zeros((c, d)), np.zeros((c, d, d)), FULL
            )
        return GaussianStats(np.zeros((c, d)), np.zeros((c, d)), np.zeros((c, d)), DIAG)

    def map_params(
        self,
        stats: GaussianStats,
        prior: MixturePrior,
        previous: MixtureParams,
    ) -> MixtureParams:
        """hmmlearn's ``GMMHMM`` M-step under ``prior`` (see the module).

        A component (for 'tied', a state) that no data reached keeps its
        previous mean and covariance; a state whose weights have nothing to
        normalise keeps its previous weights.
        """
        k, m, d = previous.means.shape
        n = stats.state_weight().reshape(k, m)
        xbar = stats.mean.reshape(k, m, d)
        weights, means, covars = previous.weights, previous.means, previous.covars
        if self.update_weights:
            weights = (prior.weights or Dirichlet(1.0)).map(n, previous.weights)[0]
        if self.update_means:
            lam, mu0 = prior.means_weight, prior.means_prior
            den = n + lam
            with np.errstate(invalid="ignore", divide="ignore"):
                new = (lam[..., None] * mu0 + n[..., None] * xbar) / den[..., None]
            means = np.where((den > 0)[..., None], new, previous.means)
        if self.update_covars:
            covars = self._covariances(stats, prior, n, xbar, means, previous)
        try:
            return self.params(weights, means, covars)
        except ValueError:
            raise ValueError(
                "a component's covariance is singular after the M-step (it "
                "collapsed onto too few distinct points): give covars_prior and "
                "covars_weight a proper prior, or use fewer components or more data"
            ) from None

    def _covariances(self, stats, prior, n, xbar, means, previous):
        """hmmlearn's covariance update: the scatter around the previous means
        plus the prior's terms, over hmmlearn's denominators."""
        k, m, d = means.shape
        lam, alpha, beta = prior.means_weight, prior.covars_prior, prior.covars_weight
        shift = xbar - previous.means  # the scatter moves to the previous means
        centred = means - prior.means_prior
        scatter = np.asarray(stats.scatter)
        if self._full:
            scatter = scatter.reshape(k, m, d, d)
            scatter = scatter + n[..., None, None] * (
                shift[..., :, None] * shift[..., None, :]
            )
            prior_terms = lam[..., None, None] * (
                centred[..., :, None] * centred[..., None, :]
            )
            psi_t = np.swapaxes(alpha, -1, -2)
            if self.covariance_type == "full":
                num = psi_t + prior_terms + scatter
                den = (n + 1 + beta + d + 1)[..., None, None]
                keep = (n <= 0)[..., None, None]
            else:
                num = psi_t + prior_terms.sum(axis=1) + scatter.sum(axis=1)
                den = (n.sum(axis=1) + m + beta + d + 1)[:, None, None]
                keep = (n.sum(axis=1) <= 0)[:, None, None]
        else:
            scatter = scatter.reshape(k, m, d) + n[..., None] * shift**2
            if self.covariance_type == "diag":
                num = lam[..., None] * centred**2 + 2 * beta + scatter
                den = n[..., None] + 1 + 2 * (alpha + 1)
                keep = (n <= 0)[..., None]
            else:
                num = lam * (centred**2).sum(axis=-1) + 2 * beta + scatter.sum(axis=-1)
                den = d * (n + 1) + 2 * (alpha + 1)
                keep = n <= 0
        keep = keep | (den <= 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(keep, previous.covars, num / np.where(keep, 1.0, den))

    def log_prior(self, params: MixtureParams, prior: MixturePrior) -> float:
        """Log density (up to its constant) of the prior the M-step maximises:
        the weights' Dirichlet, and per component ``-c log|Sigma| - tr(M
        Sigma^-1) / 2`` (for variances ``-c log s - b / s``) with hmmlearn's
        hyperparameters (see :class:`MixturePrior`)."""
        k, m, d = params.means.shape
        total = (
            0.0 if prior.weights is None else prior.weights.log_density(params.weights)
        )
        lam, alpha, beta = prior.means_weight, prior.covars_prior, prior.covars_weight
        centred = params.means - prior.means_prior
        if not self._full:
            var = np.asarray(params.covars)
            if self.covariance_type == "diag":
                coef = alpha + 1.5
                b = beta + 0.5 * lam[..., None] * centred**2
            else:
                coef = d / 2 + alpha + 1
                b = beta + 0.5 * lam * (centred**2).sum(axis=-1)
            with np.errstate(divide="ignore"):
                terms = -coef * np.log(var) - b / var
            return total + float(np.sum(terms))
        prior_terms = lam[..., None, None] * (
            centred[..., :, None] * centred[..., None, :]
        )
        psi_t = np.swapaxes(alpha, -1, -2)
        prec = params.precisions_cholesky.reshape(k, m, d, d)
        if self.covariance_type == "full":
            num, coef = psi_t + prior_terms, (beta + d + 2) / 2
        else:
            num = psi_t + prior_terms.sum(axis=1)
            coef, prec = (beta + d + 1 + m) / 2, prec[:, 0]
        # log|Sigma| = -2 log|U| and tr(M Sigma^-1) = tr(U^T M U), U U^T = Sigma^-1.
        log_det = -2.0 * np.log(np.diagonal(prec, axis1=-2, axis2=-1)).sum(axis=-1)
        trace = np.einsum("...ji,...jl,...li->...", prec, num, prec)
        return total + float(np.sum(-coef * log_det - 0.5 * trace))

    def n_parameters(self, n_states: int) -> int:
        k, m, d = n_states, self.n_mix, self.n_features
        n = k * (m - 1) if self.update_weights else 0
        n += k * m * d if self.update_means else 0
        if self.update_covars:
            n += {
                "spherical": k * m,
                "diag": k * m * d,
                "full": k * m * d * (d + 1) // 2,
                "tied": k * d * (d + 1) // 2,
            }[self.covariance_type]
        return n

    def sample(self, params: MixtureParams, states, random_state) -> np.ndarray:
        """One row per state in ``states``: a component drawn from the state's
        weights, then a Gaussian draw from it."""
        _k, m, d = params.means.shape
        comp = self._component_covariances(params.covars)
        out = np.empty((len(states), d))
        for t, state in enumerate(np.asarray(states)):
            j = random_state.choice(m, p=params.weights[state])
            cov = self._component.dense(comp, state * m + j, d)
            out[t] = random_state.multivariate_normal(params.means[state, j], cov)
        return out
