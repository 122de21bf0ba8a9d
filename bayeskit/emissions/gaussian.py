"""The Gaussian emission family: one family, its covariance structure an object.

``Gaussian(FULL)`` is QDA's and the full mixtures' emission, ``Gaussian(TIED)``
LDA's and the tied mixtures', ``Gaussian(DIAG)`` Gaussian naive Bayes' and the
diagonal mixtures', ``Gaussian(SPHERICAL)`` the spherical mixtures'.
Statistics are the weight, the mean and the centred scatter of every state;
they merge pairwise (Chan, Golub and LeVeque 1983), never as ``E[x^2] -
E[x]^2``. Parameters come from statistics and a prior object, the mode of a
Normal-inverse-Wishart posterior (:class:`~bayeskit.priors.NormalInverseWishart`;
Murphy 2012, section 4.6.3; Fraley and Raftery 2007):

.. math::

    \\Sigma_k = \\frac{\\Psi + S_k}{c + n_k} + \\text{reg}\\, I,

with the flat prior (``Psi = 0``, ``c = 0``) the maximum-likelihood estimate.
The log-density is evaluated through the precision Cholesky factor ``P``
(``P P^T = Sigma^{-1}``, from a triangular inversion, never an explicit
inverse) in whitened coordinates, so data far from the origin keeps its
precision.

What differs between the structures (the diagonal structure's compiled
passes and its missing values, the tied structure's pooling, the full
structure's triangular whitening) is a method of the structure object
(:mod:`bayeskit.emissions.covariance`); this module never asks which
structure it has.

References
----------
.. [1] T. F. Chan, G. H. Golub and R. J. LeVeque, "Algorithms for computing
   the sample variance: analysis and recommendations", *The American
   Statistician* 37(3), 1983, pp. 242-247.
.. [2] K. P. Murphy, *Machine Learning: A Probabilistic Perspective*, MIT
   Press, 2012, section 4.6.3.
.. [3] C. Fraley and A. E. Raftery, "Bayesian regularization for normal
   mixture estimation and model-based clustering", *Journal of
   Classification* 24, 2007, pp. 155-181.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._logmath import has_nan
from ..priors.niw import NormalInverseWishart
from ._gaussian_missing import expected_dense_stats, marginal_log_likelihood
from .base import Emission
from .covariance import FULL, Covariance

__all__ = ["Gaussian", "GaussianParams", "GaussianStats"]

_EPS = np.finfo(float).eps


def _repeated_columns(w: np.ndarray, shape: tuple) -> np.ndarray:
    """``np.broadcast_to(w[:, None], shape)`` (a read-only view, the same
    strides), made without that function's overhead where ``w`` is
    contiguous: statistics call it in every EM iteration."""
    if not w.flags.c_contiguous:
        return np.broadcast_to(w[:, None], shape)
    view = np.ndarray(shape, w.dtype, w, 0, (w.strides[0], 0))
    view.flags.writeable = False
    return view


def _moments(prior: NormalInverseWishart, stats) -> bool:
    """Whether the mode of ``prior`` given ``stats`` is the statistics' own
    moments (plus ``prior.reg``): a flat prior without shrinkage or a floor on
    the denominator, and weight on every state (and feature)."""
    return (
        prior.is_flat
        and not (prior.shrink or prior.min_denominator)
        and bool((stats.weight > 0).all())
    )


@dataclass(frozen=True)
class GaussianStats:
    """Weight, mean ``(K, d)`` and centred scatter of every state.

    The weight has the structure's :meth:`~Covariance.weight_shape` (``(K,)``,
    or ``(K, d)`` for the diagonal structure, whose missing values leave
    features out of rows) and the scatter its
    :meth:`~Covariance.scatter_shape`: ``(K, d, d)`` full and tied, ``(K, d)``
    diagonal, ``(K,)`` spherical (the trace).
    """

    weight: np.ndarray
    mean: np.ndarray
    scatter: np.ndarray
    covariance: Covariance

    def __add__(self, other: GaussianStats) -> GaussianStats:
        w = self.weight + other.weight
        safe = np.where(w > 0, w, 1.0)
        frac = np.where(w > 0, other.weight / safe, 0.0)
        delta = other.mean - self.mean
        mean = self.mean + delta * (frac if frac.ndim == 2 else frac[:, None])
        coef = self.weight * frac  # = w_a w_b / (w_a + w_b)
        scatter = self.scatter + other.scatter + self.covariance.outer(delta, coef)
        return GaussianStats(w, mean, scatter, self.covariance)

    @property
    def total_weight(self) -> np.ndarray:
        """Total weight of every state, ``(K,)`` (as :meth:`state_weight`)."""
        return self.state_weight()

    def state_weight(self) -> np.ndarray:
        """Total weight of every state, ``(K,)`` (with missing values: the
        largest over the features)."""
        w = self.weight
        return w if w.ndim == 1 else w.max(axis=1)

    def feature_weight(self) -> np.ndarray:
        """The weight of every state and feature, ``(K, d)``."""
        w = self.weight
        return w if w.ndim == 2 else _repeated_columns(w, self.mean.shape)

    _feature_weights = feature_weight

    def grand_mean(self) -> np.ndarray:
        """Weighted mean of every feature over all states."""
        w = self.feature_weight()
        tot = w.sum(axis=0)
        return (w * self.mean).sum(axis=0) / np.where(tot > 0, tot, 1.0)

    def within_variance(self) -> np.ndarray:
        """Pooled within-state variance of every feature (DIAG statistics)."""
        tot = self.feature_weight().sum(axis=0)
        return self.scatter.sum(axis=0) / np.where(tot > 0, tot, 1.0)

    def total_variance(self) -> np.ndarray:
        """Variance of every feature over all states (DIAG statistics)."""
        w = self.feature_weight()
        tot = w.sum(axis=0)
        between = (w * (self.mean - self.grand_mean()) ** 2).sum(axis=0)
        return (self.scatter.sum(axis=0) + between) / np.where(tot > 0, tot, 1.0)


@dataclass(frozen=True)
class GaussianParams:
    """Means ``(K, d)``, covariances, precision Cholesky factors, ``log det P``,
    and the centre of the coordinates the densities are computed in."""

    means: np.ndarray
    covariances: np.ndarray
    precisions_cholesky: np.ndarray
    log_det: np.ndarray
    center: np.ndarray


@dataclass(frozen=True)
class _Kept:
    """What a state that neither data nor the prior reached keeps."""

    means: np.ndarray
    covariances: np.ndarray


class Gaussian(Emission):
    """Gaussian emissions with the given covariance structure.

    Parameters
    ----------
    covariance : Covariance
        ``FULL``, ``TIED``, ``DIAG`` or ``SPHERICAL`` from
        :mod:`bayeskit.emissions.covariance`.
    n_features : int, default=None
        The dimension, for :meth:`zeros`, :meth:`n_parameters` and
        :meth:`sample` (the other methods read it from their arguments).
    update_means, update_covariances : bool, default=True
        Whether :meth:`map_params` updates the means and the covariances;
        a part not updated is ``previous``'s (the covariances are then the
        mode given those means), and is not counted by :meth:`n_parameters`
        (the letters 'm' and 'c' of hmmlearn's ``params``).
    singular_jitter : float, default=0.0
        A full or tied covariance that is singular is factored with this
        added to its diagonal, for its densities (hmmlearn's densities do
        so); 0 makes it an error.

    Notes
    -----
    Missing coordinates (NaN) are latent (Ghahramani and Jordan 1994): the
    log-likelihood of a row is the marginal density of its observed
    coordinates, and :meth:`expected_stats` gives the statistics of the
    rows completed by the conditional means of their missing coordinates,
    with the conditional covariances added to the scatter (Little and Rubin
    2002, section 11.2). Rows are grouped by their pattern of missing
    coordinates; a row with every coordinate missing has log-likelihood 0
    and adds no statistics. Complete rows take the same path as without
    missing values.
    """

    #: Rows with some missing (NaN) coordinates are marginalised.
    missing_coordinates = True
    name = "gaussian"
    fitted_fields = ("means", "covariances", "precisions_cholesky")

    @classmethod
    def by_default(cls) -> Gaussian:
        """Full covariances (scikit-learn's mixtures' default)."""
        return cls(FULL)

    def default_prior(self) -> NormalInverseWishart:
        """No prior but scikit-learn's ridge: ``1e-6`` added to the diagonal
        of every covariance (``reg_covar``'s default), so that a component on
        fewer distinct rows than dimensions still has a density."""
        return NormalInverseWishart.from_covariance(1.0, 0.0, reg=1e-6)

    def __init__(
        self,
        covariance: Covariance,
        n_features: int | None = None,
        *,
        update_means: bool = True,
        update_covariances: bool = True,
        singular_jitter: float = 0.0,
    ) -> None:
        self.covariance = covariance
        self.n_features = n_features
        self.update_means = update_means
        self.update_covariances = update_covariances
        self.singular_jitter = singular_jitter

    def __repr__(self) -> str:
        return f"Gaussian({self.covariance!r}, n_features={self.n_features!r})"

    def _dimension(self, n_features):
        d = self.n_features if n_features is None else n_features
        if d is None:
            raise ValueError("n_features is needed: give it to Gaussian(...)")
        return int(d)

    # -- statistics ----------------------------------------------------------------
    def stats(
        self, X: np.ndarray, weights: np.ndarray, labels: np.ndarray | None = None
    ) -> GaussianStats:
        """Statistics of ``X`` under ``weights`` of shape ``(n, K)``.

        ``labels`` may be given when every row's weight sits on one state (a
        supervised fit, ``weights[i, labels[i]]`` the row's weight): the
        deviations then take one pass over ``X`` (with the diagonal structure,
        two compiled passes in all). NaN in ``X`` (missing values) is only
        allowed with the diagonal structure, which leaves it out of the
        feature's statistics; the expected statistics of rows with missing
        coordinates under given parameters are :meth:`expected_stats`'s.
        """
        if not self.covariance.marginalises_missing and has_nan(X):
            raise ValueError(
                f"X has missing values (NaN): the statistics of a "
                f"{self.covariance.name!r} Gaussian need the parameters to take "
                "their expectation; use expected_stats(X, weights, params)"
            )
        weight, mean, scatter = self.covariance.stats(X, weights, labels)
        return GaussianStats(weight, mean, scatter, self.covariance)

    def zeros(self, n_states: int, n_features: int | None = None) -> GaussianStats:
        """The statistics of no data (the zero of ``+``)."""
        k, d = n_states, self._dimension(n_features)
        cov = self.covariance
        return GaussianStats(
            np.zeros(cov.weight_shape(k, d)),
            np.zeros((k, d)),
            np.zeros(cov.scatter_shape(k, d)),
            cov,
        )

    # -- parameters ----------------------------------------------------------------
    def map_params(
        self,
        stats: GaussianStats,
        prior: NormalInverseWishart | None = None,
        previous=None,
        *,
        prior_weight: float | None = None,
        prior_scatter=None,
        reg: float | None = None,
        shrink: float | None = None,
        rounding_floor: bool = True,
    ) -> GaussianParams:
        """MAP parameters: the mode of ``prior``'s posterior given ``stats``.

        Parameters
        ----------
        stats : GaussianStats
        prior : NormalInverseWishart, default=None
            None: the prior of the keywords below (by default the flat
            prior, maximum likelihood).
        previous : GaussianParams, default=None
            What a state (or a feature of it) that neither data nor the
            prior reached keeps; without it, such a state's mean is the
            mean over all states and its covariance an error. Also the part
            of the parameters not updated (``update_means``,
            ``update_covariances``).
        prior_weight, prior_scatter, reg, shrink : float, array-like
            The same prior as keywords (the form older callers use):
            ``from_covariance(prior_scatter, prior_weight, reg=reg,
            shrink=shrink)`` with ``prior_scatter`` the identity by default; a
            state without data and weight then keeps ``prior_scatter`` (the
            limit of the estimate as ``prior_weight`` goes to zero).
        rounding_floor : bool, default=True
            A variance or Cholesky pivot at the rounding level of the data
            counts as zero; without it, only a covariance that is not
            positive definite in floating point is rejected (scikit-learn's
            mixtures).

        Returns
        -------
        params : GaussianParams

        Raises
        ------
        numpy.linalg.LinAlgError
            When a covariance is not positive definite; the estimator turns
            it into an error that names its own remedies.
        """
        structure = self.covariance
        d = stats.mean.shape[1]
        if prior is not None and not isinstance(prior, NormalInverseWishart):
            raise TypeError(
                "prior must be a NormalInverseWishart (the keyword form is "
                f"prior_weight=..., prior_scatter=...), got {type(prior).__name__}"
            )
        center = stats.grand_mean()
        if prior is None:
            # The keyword form (all defaults: the flat prior); the estimators
            # validated its values.
            eta = float(prior_weight or 0.0)
            unit = NormalInverseWishart._unchecked(
                np.eye(d) if prior_scatter is None else prior_scatter
            )
            prior = NormalInverseWishart._unchecked(
                eta * unit.scatter, eta, reg or 0.0, shrink or 0.0
            )
            if previous is None:
                psi = structure.prior_scatter(unit, d)
                previous = _Kept(center, structure.as_covariance(psi, d))
        elif (
            prior_weight is not None
            or prior_scatter is not None
            or reg is not None
            or shrink is not None
        ):
            raise TypeError("give the prior as an object or as keywords, not both")
        if self.update_means and self.update_covariances and _moments(prior, stats):
            # The flat prior's mode, every state with weight: the statistics'
            # mean and scatter over weight (what the prior's general update
            # gives, without its zero terms), plus the ridge.
            means = stats.mean.copy()
            cov = structure.map_covariances(stats.scatter, stats.weight, 0.0, 0.0, d)
            if prior.reg:
                cov = structure.add_to_diagonal(cov, prior.reg)
        else:
            if self.update_means:
                means = prior.map_means(stats, previous)
            else:
                means = previous.means
            if not self.update_covariances:
                return GaussianParams(
                    means,
                    previous.covariances,
                    previous.precisions_cholesky,
                    previous.log_det,
                    center,
                )
            cov = prior.map_covariances(structure, stats, means, previous)
        floor = 0.0  # read only with the rounding floor
        if rounding_floor:
            # Deviations of identical points are at most rounding of the mean,
            # feature by feature (a feature at 1e8 says nothing of one at 1e-8).
            with np.errstate(over="ignore"):  # means beyond 1e154: floor inf
                floor = d * (_EPS * np.abs(stats.mean)) ** 2
        prec = structure.precision_cholesky(
            cov, rounding_floor, floor=floor, jitter=self.singular_jitter
        )
        log_det = structure.log_det_precision_cholesky(prec, d)
        return GaussianParams(means, cov, prec, log_det, center)

    def params_from(self, means, covariances, center=None) -> GaussianParams:
        """Parameters from given means and covariances (no rounding floor)."""
        means = np.asarray(means, dtype=float)
        prec = self.covariance.precision_cholesky(
            covariances, rounding_floor=False, jitter=self.singular_jitter
        )
        log_det = self.covariance.log_det_precision_cholesky(prec, means.shape[1])
        center = means.mean(axis=0) if center is None else center
        return GaussianParams(means, covariances, prec, log_det, center)

    def log_prior(self, params: GaussianParams, prior=None) -> float:
        """``log p(mu, Sigma)`` of ``prior`` at ``params``, up to its constant."""
        if prior is None:
            return 0.0
        return prior.log_density(
            self.covariance, params.means, params.precisions_cholesky
        )

    def n_parameters(self, n_states: int, n_features: int | None = None) -> int:
        """Free scalars of ``n_states`` states: the means and the covariances
        (those updated)."""
        d = self._dimension(n_features)
        n = n_states * d if self.update_means else 0
        if self.update_covariances:
            n += self.covariance.n_parameters(n_states, d)
        return n

    # -- densities and draws -------------------------------------------------------
    def log_likelihood(self, X: np.ndarray, params: GaussianParams) -> np.ndarray:
        """``log N(x_i; mu_k, Sigma_k)`` for every row and state, ``(n, K)``.

        A row with missing coordinates (NaN) has the marginal density of its
        observed ones (0 when every coordinate is missing).
        """
        missing = self._missing(X)
        if missing is None:
            return self.covariance.log_likelihood(X, params)
        return marginal_log_likelihood(self.covariance, X, params, missing)

    def relative_log_likelihood(self, X: np.ndarray, params: GaussianParams):
        """:meth:`log_likelihood` up to a constant per row: what a posterior
        over the states needs (for a tied covariance, a linear function)."""
        if self.covariance.scores_propagate_nan:
            # A NaN coordinate makes its row's scores NaN (X holds no
            # infinity), so the scores name the incomplete rows without a
            # pass over X; each of those gets its own marginal density (the
            # constant may differ from row to row).
            out = self.covariance.relative_log_likelihood(X, params)
            if not has_nan(out):
                return out
            incomplete = np.isnan(out).any(axis=1)
            out[incomplete] = self.log_likelihood(X[incomplete], params)
            return out
        if self._missing(X) is None:
            return self.covariance.relative_log_likelihood(X, params)
        return self.log_likelihood(X, params)

    def _missing(self, X):
        """The mask of missing coordinates when the structure's own density
        does not marginalise them (None: nothing to do)."""
        if self.covariance.marginalises_missing:
            return None
        return np.isnan(X) if has_nan(X) else None

    def expected_stats(
        self, X: np.ndarray, weights: np.ndarray, params: GaussianParams
    ) -> GaussianStats:
        """Statistics for one EM step under ``params``: those of :meth:`stats`
        when no coordinate is missing; otherwise the complete rows'
        statistics plus the expected statistics of the incomplete rows (the
        conditional means filled in, the conditional covariances added to
        the scatter; Ghahramani and Jordan 1994). The weights of a state are
        then per state, whatever the structure.
        """
        if not has_nan(X):
            return self.stats(X, weights)
        missing = np.isnan(X)
        cov = self.covariance
        complete = ~missing.any(axis=1)
        k, d = weights.shape[1], X.shape[1]
        if complete.any():
            part = self.stats(X[complete], weights[complete])
            if part.weight.ndim == 2:  # the diagonal structure: one per state
                part = GaussianStats(
                    np.repeat(part.weight.max(axis=1)[:, None], d, axis=1),
                    part.mean,
                    part.scatter,
                    cov,
                )
        else:
            part = self.zeros(k, d)
        dense = expected_dense_stats(X, weights, params, cov, missing)
        return part + GaussianStats(*cov.from_dense(*dense), cov)

    def sample(self, params: GaussianParams, states, random_state) -> np.ndarray:
        """One row from the emission of every state in ``states``.

        The draws of each state, in order of the states, are one call of
        ``random_state`` (a ``numpy.random.RandomState``) for all its rows:
        scikit-learn's mixtures draw the same rows from the same generator.
        """
        states = np.asarray(states)
        d = params.means.shape[1]
        out = np.empty((len(states), d))
        for k in range(params.means.shape[0]):
            rows = states == k
            out[rows] = self.covariance.sample(
                random_state, params.means[k], params.covariances, k, rows.sum()
            )
        return out
