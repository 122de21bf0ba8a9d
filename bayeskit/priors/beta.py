"""The Beta prior of a success probability, read by its posterior mean.

A probability ``p`` with a ``Beta(alpha, beta)`` prior, after weighted
observations contributing ``u`` successes and ``v`` failures (for a negative
binomial with ``r`` successes per observation: ``u = r n``, ``v`` the
weighted sum of the failure counts), has the posterior ``Beta(alpha + u,
beta + v)`` (conjugacy: Bishop 2006, section 2.1.1; Gelman et al. 2013,
section 2.4). Its mean is

``p = (alpha + u) / (alpha + beta + u + v)``,

so ``alpha = beta = 0`` is the maximum-likelihood estimate ``u / (u + v)``.
As :class:`~bayeskit.priors.Gamma` for the rates, that mean is the mode
under ``Beta(alpha + 1, beta + 1)``, and :meth:`Beta.log_density` is the log
density of that second prior, the term EM adds to the log-likelihood.

References
----------
.. [1] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, section 2.1.1.
.. [2] A. Gelman, J. B. Carlin, H. S. Stern, D. B. Dunson, A. Vehtari and
   D. B. Rubin, *Bayesian Data Analysis*, 3rd ed., CRC Press, 2013,
   section 2.4.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import betaln, digamma, xlog1py, xlogy

__all__ = ["Beta"]


@dataclass(frozen=True, eq=False)
class Beta:
    """A Beta prior on success probabilities, applied by its posterior mean.

    Parameters
    ----------
    alpha : float or array-like
        Prior successes, non-negative and finite; broadcasts against the
        probabilities ``(n_states, n_features)``.
    beta : float or array-like
        Prior failures, non-negative and finite. ``alpha = beta = 0`` is
        maximum likelihood.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.priors import Beta
    >>> Beta(1.0, 1.0).posterior_mean(np.array([[3.0]]), np.array([[5.0]]),
    ...                               np.array([[0.5]]))
    array([[0.4]])
    """

    alpha: np.ndarray
    beta: np.ndarray

    def __post_init__(self):
        for name in ("alpha", "beta"):
            value = np.array(getattr(self, name), dtype=float)
            if not np.all(np.isfinite(value) & (value >= 0)):
                raise ValueError(
                    f"a Beta {name} must be non-negative and finite, got "
                    f"{np.asarray(getattr(self, name)).tolist()!r}"
                )
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    def __repr__(self):
        return f"Beta(alpha={self.alpha.tolist()!r}, beta={self.beta.tolist()!r})"

    def posterior_mean(self, successes, failures, previous) -> np.ndarray:
        """``(alpha + successes) / (alpha + beta + successes + failures)``.

        Parameters
        ----------
        successes, failures : ndarray of shape (k, d)
            What the data add to ``alpha`` and to ``beta``.
        previous : ndarray of shape (k, d)
            Kept where the denominator is 0 (no data and no prior).
        """
        num = self.alpha + np.asarray(successes, dtype=float)
        den = np.broadcast_to(num + self.beta + np.asarray(failures), num.shape)
        ok = den > 0
        return np.where(ok, num / np.where(ok, den, 1.0), previous)

    def log_density(self, p) -> float:
        """``sum alpha log p + beta log(1 - p)``: the log density of
        ``Beta(alpha + 1, beta + 1)`` up to its constant (see the module)."""
        p = np.asarray(p, dtype=float)
        alpha = np.broadcast_to(self.alpha, p.shape)
        beta = np.broadcast_to(self.beta, p.shape)
        return float(np.sum(xlogy(alpha, p) + xlog1py(beta, -p)))

    # -- variational Bayes: the whole posterior ------------------------------------
    def posterior(self, successes, failures) -> Beta:
        """The posterior ``Beta(alpha + successes, beta + failures)``."""
        return Beta(
            self.alpha + np.asarray(successes, dtype=float),
            self.beta + np.asarray(failures, dtype=float),
        )

    def expected_log(self) -> tuple[np.ndarray, np.ndarray]:
        """``(E[log p], E[log(1 - p)])``: ``psi(alpha) - psi(alpha + beta)``
        and ``psi(beta) - psi(alpha + beta)`` (the Dirichlet's of Bishop 2006,
        eq. B.21, for two categories). Needs ``alpha, beta > 0``."""
        a, b = np.broadcast_arrays(self.alpha, self.beta)
        total = digamma(a + b)
        return digamma(a) - total, digamma(b) - total

    def kl(self, prior: Beta) -> np.ndarray:
        """``KL(self || prior)``, element-wise: ``log B(a0, b0) - log B(a, b)
        + (a - a0) E[log p] + (b - b0) E[log(1 - p)]``, the expectations
        under ``self`` (from the density, Bishop 2006, eq. 2.13)."""
        a, b, a0, b0 = np.broadcast_arrays(
            self.alpha, self.beta, prior.alpha, prior.beta
        )
        log_p, log_q = self.expected_log()
        return betaln(a0, b0) - betaln(a, b) + (a - a0) * log_p + (b - b0) * log_q
