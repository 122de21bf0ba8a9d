"""Independent log-normal features: ``log x`` Gaussian per state and feature."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..priors.normal_inverse_gamma import NormalInverseGamma
from ._independent import (
    CellStats,
    IndependentFamily,
    cell_moments,
    cell_weights,
    check_support,
    masked,
    observed_cells,
)

__all__ = ["LogNormal", "LogNormalParams", "LogNormalStats"]

_LOG_2PI = float(np.log(2.0 * np.pi))


@dataclass(frozen=True)
class LogNormalParams:
    """``means[k, j]`` and ``variances[k, j]``: the mean and variance of
    ``log x_j`` in state ``k``."""

    means: np.ndarray
    variances: np.ndarray


@dataclass(frozen=True)
class LogNormalStats(CellStats):
    """The weight ``(k,)`` of every state, the weight ``counts`` ``(k, d)`` of
    its observed cells, their weighted mean ``(k, d)`` of ``log x`` and the
    weighted sum of squares ``scatter`` ``(k, d)`` around that mean.

    Two values add by the pairwise update of Chan, Golub and LeVeque (1983):
    the means are weighted together and the scatters add with the term of the
    difference of the means, so no variance is ever a difference of moments.
    """

    mean: np.ndarray
    scatter: np.ndarray

    def __add__(self, other: LogNormalStats) -> LogNormalStats:
        na, nb = self.counts, other.counts
        n = na + nb
        ok = n > 0
        safe = np.where(ok, n, 1.0)
        delta = other.mean - self.mean
        mean = np.where(ok, self.mean + delta * (nb / safe), 0.0)
        scatter = (
            self.scatter
            + other.scatter
            + np.where(ok, delta**2 * (na * nb / safe), 0.0)
        )
        return LogNormalStats(self.weight + other.weight, n, mean, scatter)


class LogNormal(IndependentFamily):
    """Log-normal features, independent given the state.

    Parameters
    ----------
    n_features : int
        Number of features ``d``. Every value is positive (support
        :math:`x > 0`); the family assumes valid input, and
        :meth:`check_support` is the check an estimator calls at its boundary.
        A missing cell (NaN) is marginalised.
    reg_var : float, default=0.0
        Added to every variance of ``log x`` after the update (a ridge, as
        scikit-learn's ``reg_covar``; not part of the prior's density). With
        no prior, a state and feature whose observed ``log x`` are all equal
        (one observation, say) has variance 0 and a density that is infinite
        there, which :meth:`map_params` refuses (a LinAlgError):
        ``reg_var > 0`` or a prior ``scatter > 0`` avoids it. The family an
        estimator builds from the name ``"lognormal"`` has ``reg_var=1e-6``,
        scikit-learn's ``reg_covar`` default, as the Gaussian family's.

    Attributes
    ----------
    missing_coordinates : bool
        True: a NaN cell adds 0 to its row's log-likelihood and nothing to the
        statistics.

    See Also
    --------
    bayeskit.priors.NormalInverseGamma : the conjugate prior.
    Gaussian : the family of ``log x`` itself (``DIAG``), without the Jacobian.

    Notes
    -----
    State :math:`k` emits :math:`\\log x_j \\sim \\mathcal{N}(\\mu_{kj},
    \\sigma^2_{kj})`, so with the Jacobian :math:`1 / x_j`

    .. math::

        \\log p(x \\mid z = k) = \\sum_{j \\text{ observed}} \\left(
            -\\tfrac12 \\log (2 \\pi \\sigma^2_{kj})
            - \\frac{(\\log x_j - \\mu_{kj})^2}{2 \\sigma^2_{kj}}
            - \\log x_j \\right).

    The statistics are the weight :math:`n_{kj}` of the observed cells, the
    weighted mean :math:`\\bar y_{kj}` of :math:`y = \\log x` and the centred
    sum of squares :math:`S_{kj}` (merged pairwise, never as
    :math:`E[y^2] - E[y]^2`). With no prior the update is the weighted
    maximum-likelihood estimate :math:`\\mu = \\bar y`, :math:`\\sigma^2 = S /
    n`; with a :class:`~bayeskit.priors.NormalInverseGamma` prior it is the
    posterior mode (Gelman et al. 2013, section 3.3). The scores are computed
    from :math:`(\\log x - \\mu) / \\sigma` per state, so a mean far from 0
    loses no precision.

    References
    ----------
    .. [1] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
       2006, sections 1.2.4 and 2.3.6.
    .. [2] A. Gelman, J. B. Carlin, H. S. Stern, D. B. Dunson, A. Vehtari and
       D. B. Rubin, *Bayesian Data Analysis*, 3rd ed., CRC Press, 2013,
       section 3.3.
    .. [3] T. F. Chan, G. H. Golub and R. J. LeVeque, "Algorithms for
       computing the sample variance: analysis and recommendations", *The
       American Statistician* 37(3), 1983, pp. 242-247.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.emissions import LogNormal
    >>> family = LogNormal(1)
    >>> X = np.exp(np.array([[1.0], [3.0], [np.nan]]))
    >>> params = family.map_params(family.stats(X, np.ones((3, 1))))
    >>> params.means, params.variances
    (array([[2.]]), array([[1.]]))
    """

    name = "lognormal"
    support = "positive"

    def __init__(self, n_features: int | None = None, reg_var: float = 0.0) -> None:
        self.n_features = n_features
        self.reg_var = reg_var

    _cell_parameters = 2

    @classmethod
    def by_default(cls) -> LogNormal:
        """The family an estimator's ``emission="lognormal"`` names:
        ``reg_var=1e-6`` (scikit-learn's ``reg_covar`` default), so that a
        state on one distinct value still has a density."""
        return cls(None, reg_var=1e-6)

    def log_likelihood(self, X, params: LogNormalParams) -> np.ndarray:
        """``log p(x_i | z = k)``, ``(n, n_states)``, summed over the observed
        cells of every row.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Positive values; NaN is missing.
        params : LogNormalParams

        Returns
        -------
        ndarray of shape (n_samples, n_states)
        """
        means = np.asarray(params.means, dtype=float)
        variances = np.asarray(params.variances, dtype=float)
        X, observed = observed_cells(X, self._fill)
        Y = np.log(X)
        scale = 1.0 / np.sqrt(variances)
        log_norm = 0.5 * (_LOG_2PI + np.log(variances))
        out = np.empty((len(X), len(means)))
        for k in range(len(means)):
            z = (Y - means[k]) * scale[k]
            out[:, k] = masked(0.5 * z * z + log_norm[k], observed).sum(axis=1)
        out += masked(Y, observed).sum(axis=1)[:, None]
        return -out

    def stats(self, X, weights: np.ndarray, labels=None) -> LogNormalStats:
        """The statistics of ``X`` under ``weights`` ``(n, n_states)``: the mean
        of ``log x`` first, then the sum of squares around it.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
        weights : ndarray of shape (n_samples, n_states)
        labels : ignored

        Returns
        -------
        LogNormalStats
        """
        X, observed = observed_cells(X, self._fill)
        Y = np.log(X)
        weight, counts = cell_weights(weights, observed, self.n_features)
        ok = counts > 0
        mean = np.where(
            ok, (weights.T @ masked(Y, observed)) / np.where(ok, counts, 1), 0
        )
        scatter = np.empty_like(mean)
        for k in range(len(mean)):
            scatter[k] = weights[:, k] @ masked((Y - mean[k]) ** 2, observed)
        return LogNormalStats(weight, counts, mean, scatter)

    def zeros(self, n_states: int) -> LogNormalStats:
        shape = (n_states, self.n_features)
        return LogNormalStats(
            np.zeros(n_states), np.zeros(shape), np.zeros(shape), np.zeros(shape)
        )

    def map_params(
        self,
        stats: LogNormalStats,
        prior: NormalInverseGamma | None = None,
        previous: LogNormalParams | None = None,
    ) -> LogNormalParams:
        """The means and variances of ``log x``: the posterior mode under
        ``prior`` (None: the weighted maximum-likelihood estimate), plus
        ``reg_var``; a state and feature reached by neither data nor prior
        keep their previous values (mean 0 and variance 1 when None).

        Parameters
        ----------
        stats : LogNormalStats
        prior : bayeskit.priors.NormalInverseGamma or None
        previous : LogNormalParams or None

        Returns
        -------
        LogNormalParams
        """
        prior = prior or NormalInverseGamma()
        shape = stats.mean.shape
        old_mean = np.zeros(shape) if previous is None else previous.means
        old_var = np.ones(shape) if previous is None else previous.variances
        means, variances = prior.map(
            stats.counts, stats.mean, stats.scatter, old_mean, old_var
        )
        if self.reg_var:
            variances = variances + self.reg_var
        if not np.all(variances > 0):
            raise np.linalg.LinAlgError(
                "a variance of log x is zero (a state's observed values of a "
                "feature are all equal): set reg_var > 0 or a prior scatter > 0"
            )
        return LogNormalParams(means, variances)

    def log_prior(
        self, params: LogNormalParams, prior: NormalInverseGamma | None = None
    ) -> float:
        """The prior's log density at the parameters, up to its constant."""
        if prior is None:
            return 0.0
        return prior.log_density(params.means, params.variances)

    def init_params(self, X, weights, n_states, random_state) -> LogNormalParams:
        """First parameters: the weighted estimate under responsibilities
        ``weights`` ``(n, n_states)``; for row weights ``(n, 1)`` and more than
        one state, every state's means drawn from the Gaussian with the mean
        and variance of ``log x``, and that variance (plus ``reg_var``) as
        every state's variance."""
        if not self._draws_start(weights, n_states):
            return self.map_params(self.stats(X, np.asarray(weights, dtype=float)))
        with np.errstate(invalid="ignore"):
            mean, var = cell_moments(np.log(np.asarray(X, dtype=float)), weights)
        var = np.where(var > 0, var, 1.0) + self.reg_var
        shape = (n_states, self.n_features)
        means = mean + np.sqrt(var) * random_state.normal(size=shape)
        return LogNormalParams(means, np.broadcast_to(var, shape).copy())

    def sample(self, params: LogNormalParams, states, random_state) -> np.ndarray:
        """One row from the emission of every state in ``states``."""
        states = np.asarray(states)
        means = np.asarray(params.means, dtype=float)[states]
        sd = np.sqrt(np.asarray(params.variances, dtype=float))[states]
        return np.exp(means + sd * random_state.normal(size=means.shape))

    def check_support(self, X) -> None:
        """Raise ValueError naming ``X`` unless every observed value is a
        finite positive number."""
        check_support(
            X, "log-normal", "finite x > 0", lambda v: np.isfinite(v) & (v > 0)
        )
