"""Independent negative binomial counts: a success probability per feature
and state, the number of successes fixed per feature."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import betaln

from .._logmath import safe_log
from ..priors.beta import Beta
from ._independent import (
    CellStats,
    IndependentFamily,
    cell_weights,
    check_support,
    linear_log_likelihood,
    observed_cells,
)

__all__ = [
    "NegativeBinomial",
    "NegativeBinomialParams",
    "NegativeBinomialStats",
    "log_binomial_coefficient",
]


def log_binomial_coefficient(x: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``log C(x + r - 1, x) = log Gamma(x + r) - log Gamma(r) - log x!``,
    element-wise, accurate for counts up to 1e15 and beyond.

    The three log-gammas are each of order ``x log x`` and cancel to a number
    of order ``r log x``, losing about ``x log x`` times the rounding error
    (several units at ``x = 1e15``). Written as ``-log(x + r) - log B(r, x +
    1)`` with the Beta function, whose logarithm :func:`scipy.special.betaln`
    evaluates without that cancellation for a large argument, the coefficient
    keeps its relative precision (1e-12 against 60-digit values for counts up
    to 1e15; about 1e-10 when ``r`` exceeds the count a thousandfold); it is
    exactly 0 at ``x = 0``.
    """
    with np.errstate(divide="ignore"):
        out = -np.log(x + r) - betaln(r, x + 1.0)
    return np.where(x == 0, 0.0, out)


@dataclass(frozen=True)
class NegativeBinomialParams:
    """``probs[k, j]``: the success probability of feature ``j`` in state
    ``k``; ``n_successes[j]``: its number of successes ``r`` (shared by the
    states)."""

    probs: np.ndarray
    n_successes: np.ndarray


@dataclass(frozen=True)
class NegativeBinomialStats(CellStats):
    """The weight ``(k,)`` of every state, the weight ``counts`` ``(k, d)`` of
    its observed cells, and their weighted sums ``(k, d)``."""

    sums: np.ndarray


class NegativeBinomial(IndependentFamily):
    """Negative binomial counts, independent given the state.

    Parameters
    ----------
    n_features : int
        Number of count features ``d``. Every value is a non-negative integer
        (support :math:`x \\in \\{0, 1, 2, \\dots\\}`); the family assumes
        valid input, and :meth:`check_support` is the check an estimator calls
        at its boundary. A missing cell (NaN) is marginalised.
    n_successes : float or array-like of shape (n_features,), default=1.0
        The number of successes :math:`r > 0` (the dispersion) of every
        feature, fixed and shared by the states; 1 is the geometric
        distribution.

    Attributes
    ----------
    missing_coordinates : bool
        True: a NaN cell adds 0 to its row's log-likelihood and nothing to the
        statistics.

    See Also
    --------
    Poisson : the limit of large ``r`` at a fixed mean.
    bayeskit.priors.Beta : the conjugate prior of the probabilities.

    Notes
    -----
    State :math:`k` emits the number :math:`x_j` of failures before the
    :math:`r_j`-th success of trials with success probability :math:`p_{kj}`
    (Johnson, Kemp and Kotz 2005, chapter 5; scipy's ``nbinom``),

    .. math::

        \\log p(x \\mid z = k) = \\sum_{j \\text{ observed}} \\left(
            \\log \\binom{x_j + r_j - 1}{x_j} + r_j \\log p_{kj}
            + x_j \\log (1 - p_{kj}) \\right),

    of mean :math:`r_j (1 - p_{kj}) / p_{kj}`. The coefficient is computed as
    :func:`log_binomial_coefficient` (a log Beta function), which stays
    accurate at counts of 1e15, where the difference of log-gammas loses
    units.

    **Why r is fixed.** With :math:`r` known, the weight :math:`n_{kj}` of the
    observed cells and their weighted sum :math:`s_{kj}` are sufficient and
    the update is exact and closed: the maximum-likelihood probability is
    :math:`r n / (r n + s)`, and a :class:`~bayeskit.priors.Beta`
    :math:`(\\alpha, \\beta)` prior is conjugate (Gelman et al. 2013, section
    2.4), read by its posterior mean

    .. math::

        p_{kj} = \\frac{\\alpha + r_j n_{kj}}
            {\\alpha + \\beta + r_j n_{kj} + s_{kj}},

    (the mode under :math:`\\mathrm{Beta}(\\alpha + 1, \\beta + 1)`, whose log
    density :meth:`log_prior` returns). The maximum-likelihood :math:`r` has
    no finite-dimensional sufficient statistics: its equation sums
    :math:`\\psi(x + r)` over the observations, so exact additive statistics
    would be each state's weighted histogram of the counts, unbounded for
    counts as large as this family allows, and a method-of-moments :math:`r`
    would not be the estimate the rest of the update maximises. Choose
    :math:`r` from the data beforehand (or compare a few by the models'
    likelihood).

    A state and feature whose observed counts are all 0 has :math:`p = 1`
    with no prior (a point mass at 0).

    References
    ----------
    .. [1] N. L. Johnson, A. W. Kemp and S. Kotz, *Univariate Discrete
       Distributions*, 3rd ed., Wiley, 2005, chapter 5.
    .. [2] A. Gelman, J. B. Carlin, H. S. Stern, D. B. Dunson, A. Vehtari and
       D. B. Rubin, *Bayesian Data Analysis*, 3rd ed., CRC Press, 2013,
       section 2.4.
    .. [3] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
       2006, section 2.1.1.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.emissions import NegativeBinomial
    >>> family = NegativeBinomial(1, n_successes=2.0)
    >>> X = np.array([[1.0], [3.0], [np.nan]])
    >>> family.map_params(family.stats(X, np.ones((3, 1)))).probs
    array([[0.5]])
    """

    name = "negative_binomial"
    support = "counts"

    _fill = 0.0

    def __init__(self, n_features: int | None = None, n_successes=1.0) -> None:
        self.n_features = n_features
        self.n_successes = n_successes

    def _r(self) -> np.ndarray:
        return np.broadcast_to(
            np.asarray(self.n_successes, dtype=float), (self.n_features,)
        )

    def log_likelihood(self, X, params: NegativeBinomialParams) -> np.ndarray:
        """``log p(x_i | z = k)``, ``(n, n_states)``, summed over the observed
        cells of every row.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Non-negative integer counts; NaN is missing.
        params : NegativeBinomialParams

        Returns
        -------
        ndarray of shape (n_samples, n_states)
        """
        p = np.asarray(params.probs, dtype=float)
        r = np.asarray(params.n_successes, dtype=float)
        X, observed = observed_cells(X, self._fill)  # a missing cell reads 0
        one = p == 1.0  # a point mass at 0: a positive count is impossible
        log_fail = np.where(one, 0.0, np.log1p(-np.where(one, 0.0, p)))
        out = linear_log_likelihood(
            [(X, log_fail)],
            -r * safe_log(p),
            log_binomial_coefficient(X, r),
            observed,
        )
        if one.any():
            out[(X > 0) @ one.T] = -np.inf
        return out

    def stats(self, X, weights: np.ndarray, labels=None) -> NegativeBinomialStats:
        """The statistics of ``X`` under ``weights`` ``(n, n_states)``.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
        weights : ndarray of shape (n_samples, n_states)
        labels : ignored

        Returns
        -------
        NegativeBinomialStats
        """
        X, observed = observed_cells(X, self._fill)
        weight, counts = cell_weights(weights, observed, self.n_features)
        return NegativeBinomialStats(weight, counts, weights.T @ X)

    def zeros(self, n_states: int) -> NegativeBinomialStats:
        shape = (n_states, self.n_features)
        return NegativeBinomialStats(
            np.zeros(n_states), np.zeros(shape), np.zeros(shape)
        )

    def map_params(
        self,
        stats: NegativeBinomialStats,
        prior: Beta | None = None,
        previous: NegativeBinomialParams | None = None,
    ) -> NegativeBinomialParams:
        """The probabilities: the Beta posterior mean (None: maximum
        likelihood, ``r n / (r n + s)``); a state and feature reached by
        neither data nor prior keep the previous probability (1/2 when None).

        Parameters
        ----------
        stats : NegativeBinomialStats
        prior : bayeskit.priors.Beta or None
        previous : NegativeBinomialParams or None

        Returns
        -------
        NegativeBinomialParams
        """
        prior = prior or Beta(0.0, 0.0)
        r = self._r()
        old = np.full(stats.sums.shape, 0.5) if previous is None else previous.probs
        probs = prior.posterior_mean(r * stats.counts, stats.sums, old)
        return NegativeBinomialParams(probs, r.copy())

    def log_prior(
        self, params: NegativeBinomialParams, prior: Beta | None = None
    ) -> float:
        """``sum alpha log p + beta log(1 - p)`` (see the Notes)."""
        return 0.0 if prior is None else prior.log_density(params.probs)

    def _random_start(self, mean, var, n_states, random_state):
        """Every state's mean drawn from the Gamma distribution with the
        feature's mean and variance, and the probability of that mean."""
        r = self._r()
        shape = (n_states, self.n_features)
        spread = (var > 0) & (mean > 0)
        m = np.where(mean > 0, mean, 1.0)
        v = np.where(spread, var, 1.0)
        draws = random_state.gamma(
            shape=np.broadcast_to(m * m / v, shape), scale=np.broadcast_to(v / m, shape)
        )
        means = np.where(spread, draws, np.maximum(mean, 0.0))
        return NegativeBinomialParams(r / (r + means), r.copy())

    def sample(self, params: NegativeBinomialParams, states, random_state):
        """One row from the emission of every state in ``states``."""
        p = np.asarray(params.probs, dtype=float)[np.asarray(states)]
        r = np.broadcast_to(np.asarray(params.n_successes, dtype=float), p.shape)
        return random_state.negative_binomial(r, p)

    def check_support(self, X) -> None:
        """Raise ValueError naming ``X`` unless every observed value is a
        finite non-negative integer."""
        check_support(
            X,
            "negative binomial",
            "counts: non-negative integers",
            lambda v: np.isfinite(v) & (v >= 0) & (v == np.floor(v)),
        )
