"""Independent exponential features: one rate per feature and state."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._logmath import safe_log
from ..priors.gamma import Gamma
from ._independent import (
    CellStats,
    IndependentFamily,
    cell_weights,
    check_support,
    linear_log_likelihood,
    masked,
    observed_cells,
)

__all__ = ["Exponential", "ExponentialParams", "ExponentialStats"]


@dataclass(frozen=True)
class ExponentialParams:
    """``rates[k, j]``: the rate of feature ``j`` in state ``k``."""

    rates: np.ndarray


@dataclass(frozen=True)
class ExponentialStats(CellStats):
    """The weight ``(k,)`` of every state, the weight ``counts`` ``(k, d)`` of
    its observed cells, and the weighted sums ``(k, d)`` of those cells."""

    sums: np.ndarray


class Exponential(IndependentFamily):
    """Exponential features, independent given the state.

    Parameters
    ----------
    n_features : int
        Number of features ``d``. Every value is non-negative (support
        :math:`x \\ge 0`); the family assumes valid input, and
        :meth:`check_support` is the check an estimator calls at its boundary.
        A missing cell (NaN) is marginalised.

    Attributes
    ----------
    missing_coordinates : bool
        True: a NaN cell adds 0 to its row's log-likelihood and nothing to the
        statistics.

    See Also
    --------
    Gamma : the family with a shape as well (shape 1 is this one).
    bayeskit.priors.Gamma : the conjugate prior of the rates.

    Notes
    -----
    State :math:`k` emits :math:`x_j \\sim \\mathrm{Exponential}(\\lambda_{kj})`,

    .. math::

        \\log p(x \\mid z = k) = \\sum_{j \\text{ observed}}
            \\left(\\log \\lambda_{kj} - \\lambda_{kj} x_j\\right).

    The statistics are the weight :math:`n_{kj} = \\sum_t w_{tk}` of the
    observed cells and their weighted sum :math:`s_{kj} = \\sum_t w_{tk}
    x_{tj}`. A :class:`~bayeskit.priors.Gamma` prior
    :math:`\\mathrm{Gamma}(\\alpha, \\beta)` on a rate is conjugate: the
    posterior is :math:`\\mathrm{Gamma}(\\alpha + n_{kj}, \\beta + s_{kj})`
    (Bishop 2006, section 2.3.6; Gelman et al. 2013, section 2.6), read by its
    mean

    .. math::

        \\lambda_{kj} = \\frac{\\alpha + n_{kj}}{\\beta + s_{kj}},

    so :math:`\\alpha = \\beta = 0` (or no prior) is the maximum-likelihood
    estimate :math:`n_{kj} / s_{kj}`. As for the Poisson rates, that mean is
    the mode under :math:`\\mathrm{Gamma}(\\alpha + 1, \\beta)`, whose log
    density :meth:`log_prior` returns. A state and feature whose observed
    cells are all 0 (:math:`s_{kj} = 0`) has no finite maximum-likelihood
    rate: with no prior rate :math:`\\beta` it keeps its previous rate (1 when
    there is none).

    References
    ----------
    .. [1] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
       2006, sections 2.3.6 and 2.4.
    .. [2] A. Gelman, J. B. Carlin, H. S. Stern, D. B. Dunson, A. Vehtari and
       D. B. Rubin, *Bayesian Data Analysis*, 3rd ed., CRC Press, 2013,
       section 2.6.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.emissions import Exponential
    >>> family = Exponential(1)
    >>> X = np.array([[1.0], [3.0], [np.nan]])
    >>> stats = family.stats(X, np.ones((3, 1)))
    >>> family.map_params(stats).rates
    array([[0.5]])
    """

    name = "exponential"
    support = "nonnegative"

    def log_likelihood(self, X, params: ExponentialParams) -> np.ndarray:
        """``log p(x_i | z = k)``, ``(n, n_states)``, summed over the observed
        cells of every row.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Non-negative values; NaN is missing.
        params : ExponentialParams
            The rates.

        Returns
        -------
        ndarray of shape (n_samples, n_states)
        """
        rates = np.asarray(params.rates, dtype=float)
        X, observed = observed_cells(X, self._fill)
        return linear_log_likelihood(
            [(masked(X, observed), -rates)], -safe_log(rates), None, observed
        )

    def stats(self, X, weights: np.ndarray, labels=None) -> ExponentialStats:
        """The statistics of ``X`` under ``weights`` ``(n, n_states)``.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
        weights : ndarray of shape (n_samples, n_states)
        labels : ignored

        Returns
        -------
        ExponentialStats
        """
        X, observed = observed_cells(X, self._fill)
        weight, counts = cell_weights(weights, observed, self.n_features)
        return ExponentialStats(weight, counts, weights.T @ masked(X, observed))

    def zeros(self, n_states: int) -> ExponentialStats:
        shape = (n_states, self.n_features)
        return ExponentialStats(np.zeros(n_states), np.zeros(shape), np.zeros(shape))

    def map_params(
        self,
        stats: ExponentialStats,
        prior: Gamma | None = None,
        previous: ExponentialParams | None = None,
    ) -> ExponentialParams:
        """The rates: the posterior mean ``(alpha + n) / (beta + s)``.

        Parameters
        ----------
        stats : ExponentialStats
        prior : bayeskit.priors.Gamma or None
            None is maximum likelihood (``alpha = beta = 0``).
        previous : ExponentialParams or None
            Rates kept where ``beta + s`` is 0 (1 when None).

        Returns
        -------
        ExponentialParams
        """
        prior = prior or Gamma(0.0, 0.0)
        old = np.ones_like(stats.sums) if previous is None else previous.rates
        return ExponentialParams(prior.posterior_mean(stats.counts, stats.sums, old))

    def log_prior(self, params: ExponentialParams, prior: Gamma | None = None) -> float:
        """``sum alpha log lambda - beta lambda`` (see the Notes)."""
        return 0.0 if prior is None else prior.log_density(params.rates)

    def _random_start(self, mean, var, n_states, random_state):
        """Every state's mean ``1 / rate`` drawn from the Gamma distribution
        with the feature's mean and variance (the method of moments)."""
        shape = (n_states, self.n_features)
        spread = (var > 0) & (mean > 0)
        safe_mean = np.where(spread, mean, 1.0)
        safe_var = np.where(spread, var, 1.0)
        draws = random_state.gamma(
            shape=np.broadcast_to(safe_mean**2 / safe_var, shape),
            scale=np.broadcast_to(safe_var / safe_mean, shape),
        )
        fixed = np.where(mean > 0, mean, 1.0)
        return ExponentialParams(1.0 / np.where(spread, draws, fixed))

    def sample(self, params: ExponentialParams, states, random_state) -> np.ndarray:
        """One row from the emission of every state in ``states``."""
        rates = np.asarray(params.rates, dtype=float)[np.asarray(states)]
        return random_state.exponential(size=rates.shape) / rates

    def check_support(self, X) -> None:
        """Raise ValueError naming ``X`` unless every observed value is a
        finite non-negative number."""
        check_support(
            X, "exponential", "finite x >= 0", lambda v: np.isfinite(v) & (v >= 0)
        )
