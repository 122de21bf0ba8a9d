"""The Gamma prior of a Poisson rate, read by its posterior mean.

A Poisson rate ``lambda`` with a ``Gamma(alpha, beta)`` prior (shape ``alpha``,
rate ``beta``), after weighted observations of total weight ``n`` and weighted
sum ``s``, has the posterior ``Gamma(alpha + s, beta + n)`` (conjugacy:
Bishop 2006, section 2.3.6, eq. 2.146, there for a precision; Gelman et al.
2013, section 2.6). Its mean is

``lambda = (alpha + s) / (beta + n)``,

the update hmmlearn's ``PoissonHMM`` names ``lambdas_prior`` (``alpha``) and
``lambdas_weight`` (``beta``); ``alpha = beta = 0`` is the maximum-likelihood
estimate ``s / n``. The mean under ``Gamma(alpha, beta)`` is the mode under
``Gamma(alpha + 1, beta)``, so the update is also a MAP estimate, and
:meth:`Gamma.log_density` is the log density of that second prior, the term EM
adds to the log-likelihood to monitor a log posterior that never decreases
(as the m-estimate and the Dirichlet of :mod:`bayeskit.priors.dirichlet`).

References
----------
.. [1] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, section 2.3.6.
.. [2] A. Gelman, J. B. Carlin, H. S. Stern, D. B. Dunson, A. Vehtari and
   D. B. Rubin, *Bayesian Data Analysis*, 3rd ed., CRC Press, 2013,
   section 2.6 (the Poisson model and its conjugate gamma prior).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import digamma, gammaln

from .._logmath import safe_log

__all__ = ["Gamma"]


@dataclass(frozen=True, eq=False)
class Gamma:
    """A Gamma prior on Poisson rates, applied by its posterior mean.

    Parameters
    ----------
    shape : float or array-like
        ``alpha``, non-negative and finite; broadcasts against the rates.
    rate : float or array-like
        ``beta``, non-negative and finite; broadcasts against the rates.
        ``shape = rate = 0`` is maximum likelihood.
    """

    shape: np.ndarray
    rate: np.ndarray

    def __post_init__(self):
        for name in ("shape", "rate"):
            value = np.array(getattr(self, name), dtype=float)
            if not np.all(np.isfinite(value) & (value >= 0)):
                raise ValueError(
                    f"a Gamma {name} must be non-negative and finite, got "
                    f"{np.asarray(getattr(self, name)).tolist()!r}"
                )
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    def __repr__(self):
        return f"Gamma(shape={self.shape.tolist()!r}, rate={self.rate.tolist()!r})"

    def map(self, sums, weight, previous) -> np.ndarray:
        """The posterior mean ``(alpha + sums) / (beta + weight)``.

        Parameters
        ----------
        sums : ndarray of shape (k, d)
            Weighted sums of the observations, one row per state.
        weight : ndarray of shape (k,)
            Total weight of every state.
        previous : ndarray of shape (k, d)
            The current rates, kept where ``beta + weight`` is zero (no data
            and no prior).
        """
        num = self.shape + sums
        den = np.broadcast_to(self.rate + np.asarray(weight)[:, None], num.shape)
        ok = den > 0
        return np.where(ok, num / np.where(ok, den, 1.0), previous)

    def posterior_mean(self, shape_add, rate_add, previous) -> np.ndarray:
        """The mean ``(alpha + shape_add) / (beta + rate_add)`` of the
        posterior ``Gamma(alpha + shape_add, beta + rate_add)``, element-wise.

        :meth:`map` is the Poisson case (``shape_add`` the weighted sums of the
        counts, ``rate_add`` the state's weight); other families add other
        statistics: an exponential rate adds the weight to the shape and the
        weighted sum of the observations to the rate.

        Parameters
        ----------
        shape_add, rate_add : ndarray of shape (k, d)
            What the data add to ``alpha`` and to ``beta``.
        previous : ndarray of shape (k, d)
            Kept where ``beta + rate_add`` is zero (no data and no prior).
        """
        num = self.shape + np.asarray(shape_add, dtype=float)
        den = np.broadcast_to(self.rate + np.asarray(rate_add, dtype=float), num.shape)
        ok = den > 0
        return np.where(ok, num / np.where(ok, den, 1.0), previous)

    def log_density(self, rates) -> float:
        """``sum alpha log lambda - beta lambda``: the log density of
        ``Gamma(alpha + 1, beta)`` up to its constant (see the module)."""
        rates = np.asarray(rates, dtype=float)
        alpha = np.broadcast_to(self.shape, rates.shape)
        with np.errstate(invalid="ignore"):
            log_term = np.where(alpha == 0, 0.0, alpha * safe_log(rates))
        return float(np.sum(log_term - self.rate * rates))

    # -- variational Bayes: the whole posterior ------------------------------------
    def posterior(self, shape_add, rate_add) -> Gamma:
        """The posterior ``Gamma(alpha + shape_add, beta + rate_add)`` (for a
        Poisson rate, ``shape_add`` the weighted sums and ``rate_add`` the
        weights; see :meth:`posterior_mean`)."""
        return Gamma(
            self.shape + np.asarray(shape_add, dtype=float),
            self.rate + np.asarray(rate_add, dtype=float),
        )

    def mean(self) -> np.ndarray:
        """``E[lambda] = alpha / beta`` (Bishop 2006, eq. B.27)."""
        return self.shape / self.rate

    def expected_log(self) -> np.ndarray:
        """``E[log lambda] = psi(alpha) - log beta`` (Bishop 2006, eq. B.30).
        Needs ``alpha, beta > 0``."""
        return digamma(self.shape) - np.log(self.rate)

    def kl(self, prior: Gamma) -> np.ndarray:
        """``KL(self || prior)``, element-wise (from the density, Bishop 2006,
        eq. B.26): ``(a - a0) psi(a) - log Gamma(a) + log Gamma(a0) + a0 (log b
        - log b0) + a (b0 - b) / b``."""
        a, b, a0, b0 = np.broadcast_arrays(
            self.shape, self.rate, prior.shape, prior.rate
        )
        return (
            (a - a0) * digamma(a)
            - gammaln(a)
            + gammaln(a0)
            + a0 * (np.log(b) - np.log(b0))
            + a * (b0 - b) / b
        )
