"""Independent gamma features: a shape and a rate per feature and state."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import digamma, gammaln, polygamma

from ..priors.gamma import Gamma as GammaPrior
from ._independent import (
    CellStats,
    IndependentFamily,
    cell_weights,
    check_support,
    linear_log_likelihood,
    masked,
    observed_cells,
)

__all__ = ["Gamma", "GammaParams", "GammaStats", "gamma_shape"]


@dataclass(frozen=True)
class GammaParams:
    """``shapes[k, j]`` and ``rates[k, j]`` of feature ``j`` in state ``k``."""

    shapes: np.ndarray
    rates: np.ndarray


@dataclass(frozen=True)
class GammaStats(CellStats):
    """The weight ``(k,)`` of every state, the weight ``counts`` ``(k, d)`` of
    its observed cells, and their weighted sums ``(k, d)`` of ``x`` and of
    ``log x``."""

    sums: np.ndarray
    log_sums: np.ndarray


def gamma_shape(counts, sums, log_sums, shape_prior=0.0, rate_prior=0.0, *,
                max_shape=1e8, start=None, tol=1e-13, max_iter=100):  # fmt: skip
    """The shape ``a`` where the profile log posterior of a gamma sample is
    maximal: the root of

    ``g(a) = log_sums / n + log(n a + alpha) - log(sums + beta) - digamma(a)``,

    by Newton's method on ``1 / a`` (Minka 2002's generalised Newton update),
    element-wise. ``alpha = beta = 0`` is the maximum-likelihood shape, with
    ``g(a) = log a - digamma(a) - (log(sums / n) - log_sums / n)``. ``g`` falls
    strictly, so the root is unique; it exists unless every observation is the
    same value (and ``beta = 0``), where the likelihood grows without bound in
    ``a``: the shape is then ``max_shape``.

    Parameters
    ----------
    counts, sums, log_sums : ndarray of shape (k, d)
        ``n = sum w``, ``sum w x`` and ``sum w log x`` (``n > 0``).
    shape_prior, rate_prior : float or ndarray
        ``alpha`` and ``beta`` of the Gamma prior on the rate given the shape.
    max_shape : float, default=1e8
        The largest shape returned.
    start : ndarray of shape (k, d) or None
        The first iterate; None: Minka's closed-form approximation.
    tol : float, default=1e-13
        Stop when every relative step of ``1 / a`` is below it.
    max_iter : int, default=100

    Returns
    -------
    ndarray of shape (k, d)
    """
    n = np.asarray(counts, dtype=float)
    ybar = log_sums / n
    log_den = np.log(sums + rate_prior)
    gap = log_den - np.log(n) - ybar  # log((s + beta) / n) - mean log x >= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        approx = (3.0 - gap + np.sqrt((gap - 3.0) ** 2 + 24.0 * gap)) / (12.0 * gap)
    a = approx if start is None else np.asarray(start, dtype=float)
    a = np.where(np.isfinite(a) & (a > 0), a, 1.0)
    a = np.minimum(a, max_shape)
    bounded = gap > 0
    for _ in range(max_iter):
        g = ybar + np.log(n * a + shape_prior) - log_den - digamma(a)
        dg = n / (n * a + shape_prior) - polygamma(1, a)
        u = 1.0 / a
        step = g / (a * a * dg)
        u_new = u + step
        u_new = np.where(u_new > 0, u_new, 0.5 * u)  # never past a = infinity
        u_new = np.maximum(u_new, 1.0 / max_shape)
        done = np.abs(u_new - u) <= tol * u
        a = np.where(bounded, 1.0 / u_new, max_shape)
        if np.all(done | ~bounded):
            break
    return a


class Gamma(IndependentFamily):
    """Gamma features, independent given the state.

    Parameters
    ----------
    n_features : int
        Number of features ``d``. Every value is positive (support
        :math:`x > 0`); the family assumes valid input, and
        :meth:`check_support` is the check an estimator calls at its boundary.
        A missing cell (NaN) is marginalised.
    max_shape : float, default=1e8
        The largest shape the update returns: the maximum-likelihood shape of
        a state and feature whose observed values are all equal is infinite
        (the likelihood grows without bound), and this one is returned.

    Attributes
    ----------
    missing_coordinates : bool
        True: a NaN cell adds 0 to its row's log-likelihood and nothing to the
        statistics.

    See Also
    --------
    Exponential : the shape-1 case, with a conjugate prior.
    bayeskit.priors.Gamma : the prior on the rates given the shapes.
    gamma_shape : the shape update.

    Notes
    -----
    State :math:`k` emits :math:`x_j \\sim \\mathrm{Gamma}(a_{kj}, b_{kj})`
    (shape :math:`a`, rate :math:`b`),

    .. math::

        \\log p(x \\mid z = k) = \\sum_{j \\text{ observed}} \\left(
            (a_{kj} - 1) \\log x_j - b_{kj} x_j + a_{kj} \\log b_{kj}
            - \\log \\Gamma(a_{kj}) \\right).

    The statistics are :math:`n = \\sum_t w_{tk}` over the observed cells,
    :math:`s = \\sum_t w_{tk} x_{tj}` and :math:`l = \\sum_t w_{tk} \\log
    x_{tj}`. The maximum-likelihood rate given the shape is :math:`b = a n /
    s`; the shape then maximises the profile likelihood, the root of
    :math:`\\log a - \\psi(a) = \\log(s / n) - l / n`, found by Minka's
    generalised Newton iteration (Newton's method on :math:`1 / a`), which
    converges in a few steps from his closed-form start.

    The pair :math:`(a, b)` has no conjugate prior of a standard form, so the
    family takes a prior on the rates only: a
    :class:`~bayeskit.priors.Gamma` :math:`(\\alpha, \\beta)` given the shape,
    conjugate to the rate, read (as for the Poisson and exponential rates) by
    the posterior mean :math:`b = (\\alpha + a n) / (\\beta + s)`, which is the
    mode under :math:`\\mathrm{Gamma}(\\alpha + 1, \\beta)`. The update is the
    joint maximum of the log-likelihood plus that log prior (what
    :meth:`log_prior` returns): the shape is the root of :math:`l / n +
    \\log(a n + \\alpha) - \\log(s + \\beta) - \\psi(a)` (the same iteration),
    the rate the mean above. The shapes have a flat prior. With no prior (or
    :math:`\\alpha = \\beta = 0`) the update is the maximum-likelihood estimate.

    References
    ----------
    .. [1] T. P. Minka, "Estimating a Gamma distribution", Microsoft Research
       technical note, 2002.
    .. [2] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
       2006, section 2.3.6.
    .. [3] A. Gelman, J. B. Carlin, H. S. Stern, D. B. Dunson, A. Vehtari and
       D. B. Rubin, *Bayesian Data Analysis*, 3rd ed., CRC Press, 2013,
       section 2.6.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.emissions import Gamma
    >>> family = Gamma(1)
    >>> X = np.random.default_rng(0).gamma(3.0, 0.5, size=(5000, 1))
    >>> params = family.map_params(family.stats(X, np.ones((5000, 1))))
    >>> params.shapes.round(1), params.rates.round(1)
    (array([[3.]]), array([[2.]]))
    """

    name = "gamma"
    support = "positive"

    _cell_parameters = 2

    def __init__(self, n_features: int | None = None, max_shape: float = 1e8) -> None:
        self.n_features = n_features
        self.max_shape = max_shape

    def log_likelihood(self, X, params: GammaParams) -> np.ndarray:
        """``log p(x_i | z = k)``, ``(n, n_states)``, summed over the observed
        cells of every row.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Positive values; NaN is missing.
        params : GammaParams

        Returns
        -------
        ndarray of shape (n_samples, n_states)
        """
        a = np.asarray(params.shapes, dtype=float)
        b = np.asarray(params.rates, dtype=float)
        X, observed = observed_cells(X, self._fill)
        terms = [(masked(np.log(X), observed), a - 1.0), (masked(X, observed), -b)]
        return linear_log_likelihood(terms, gammaln(a) - a * np.log(b), None, observed)

    def stats(self, X, weights: np.ndarray, labels=None) -> GammaStats:
        """The statistics of ``X`` under ``weights`` ``(n, n_states)``.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
        weights : ndarray of shape (n_samples, n_states)
        labels : ignored

        Returns
        -------
        GammaStats
        """
        X, observed = observed_cells(X, self._fill)
        weight, counts = cell_weights(weights, observed, self.n_features)
        return GammaStats(
            weight,
            counts,
            weights.T @ masked(X, observed),
            weights.T @ masked(np.log(X), observed),
        )

    def zeros(self, n_states: int) -> GammaStats:
        shape = (n_states, self.n_features)
        return GammaStats(np.zeros(n_states), *(np.zeros(shape) for _ in range(3)))

    def map_params(
        self,
        stats: GammaStats,
        prior: GammaPrior | None = None,
        previous: GammaParams | None = None,
    ) -> GammaParams:
        """The shapes and rates: the joint maximum of the log-likelihood and
        ``prior``'s log density on the rates (see the Notes); None is maximum
        likelihood. A state and feature with no observed weight keep their
        previous shape (1 when None), and their rate is the prior's mean, or
        the previous one (1) with no prior.

        Parameters
        ----------
        stats : GammaStats
        prior : bayeskit.priors.Gamma or None
        previous : GammaParams or None

        Returns
        -------
        GammaParams
        """
        prior = prior or GammaPrior(0.0, 0.0)
        n = stats.counts
        seen = n > 0
        old_a = np.ones_like(n) if previous is None else previous.shapes
        old_b = np.ones_like(n) if previous is None else previous.rates
        safe = np.where(seen, n, 1.0)
        ones = np.ones_like(n)
        shapes = gamma_shape(
            safe,
            np.where(seen, stats.sums, ones),
            np.where(seen, stats.log_sums, 0.0),
            np.broadcast_to(prior.shape, n.shape),
            np.broadcast_to(prior.rate, n.shape),
            max_shape=self.max_shape,
        )
        shapes = np.where(seen, shapes, old_a)
        rates = prior.posterior_mean(shapes * n, stats.sums, old_b)
        return GammaParams(shapes, rates)

    def log_prior(self, params: GammaParams, prior: GammaPrior | None = None) -> float:
        """``sum alpha log b - beta b`` over the rates (see the Notes)."""
        return 0.0 if prior is None else prior.log_density(params.rates)

    def _random_start(self, mean, var, n_states, random_state):
        """The feature's method-of-moments shape ``mean^2 / var`` for every
        state, and every state's mean drawn from the Gamma distribution with
        the feature's mean and variance."""
        shape = (n_states, self.n_features)
        spread = (var > 0) & (mean > 0)
        m = np.where(mean > 0, mean, 1.0)
        v = np.where(spread, var, 1.0)
        shapes = np.where(spread, m * m / v, 1.0)
        draws = random_state.gamma(
            shape=np.broadcast_to(m * m / v, shape), scale=np.broadcast_to(v / m, shape)
        )
        means = np.where(spread, draws, m)
        shapes = np.broadcast_to(shapes, shape).copy()
        return GammaParams(shapes, shapes / means)

    def sample(self, params: GammaParams, states, random_state) -> np.ndarray:
        """One row from the emission of every state in ``states``."""
        states = np.asarray(states)
        a = np.asarray(params.shapes, dtype=float)[states]
        b = np.asarray(params.rates, dtype=float)[states]
        return random_state.gamma(shape=a) / b

    def check_support(self, X) -> None:
        """Raise ValueError naming ``X`` unless every observed value is a
        finite positive number."""
        check_support(X, "gamma", "finite x > 0", lambda v: np.isfinite(v) & (v > 0))
