"""The Dirichlet prior of a categorical distribution, read two ways.

A categorical distribution ``p`` over ``k`` states with a Dirichlet prior of
concentration ``alpha``, after observing weighted counts ``n`` (total ``N``),
has the posterior ``Dirichlet(n + alpha)`` (conjugacy: Bishop 2006, section
2.2.1, eqs. 2.38-2.41). bayeskit turns that posterior into parameters in one
of two ways:

- **The posterior mean: the m-estimate** (:class:`MEstimate`,
  :func:`log_m_estimate`; naive Bayes, Bayesian networks, TAN). Written as
  ``m`` virtual samples drawn from a prior guess ``p0``, the concentration
  is ``alpha = m p0`` and the mean is

  ``P(a) = (n_a + m p0_a) / (N + m)``

  (Mitchell 1997, section 6.9.1.1, the m-estimate of probability).
  ``m = 0`` is the maximum-likelihood estimate; ``m =
  k``, ``p0 = 1/k`` is Laplace's add-one rule.

- **The posterior mode: the MAP update** (:class:`Dirichlet`; the hidden
  Markov models' start, transition and emission tables, as hmmlearn). The mode
  of ``Dirichlet(n + alpha)`` is

  ``P(a) = max(n_a + alpha_a - 1, 0) / sum_b max(n_b + alpha_b - 1, 0)``

  (the mode of the posterior of Bishop 2006, eq. 2.41; hmmlearn's update,
  which clips at zero where ``alpha < 1`` would make the mode negative).
  ``alpha = 1`` is the maximum-likelihood estimate. :meth:`Dirichlet.log_density`
  is the log prior density up to its normalising constant, the term that EM
  adds to the log-likelihood to monitor the log posterior.

The two agree up to a shift of the concentration by one: the mean under
``alpha`` is the mode under ``alpha + 1``, so the m-estimate is also the MAP
estimate under concentration ``m p0 + 1``.

Variational Bayes keeps the whole posterior instead (:meth:`Dirichlet.posterior`)
and reads it through the expected log-probabilities
``E[log p_a] = psi(alpha_a) - psi(sum_b alpha_b)`` (:meth:`Dirichlet.expected_log`,
Bishop 2006, eq. B.21) and its Kullback-Leibler divergence from the prior
(:meth:`Dirichlet.kl`), the two terms of the evidence lower bound.

References
----------
.. [1] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, section 2.2 (multinomial variables, the Dirichlet distribution).
.. [2] T. M. Mitchell, *Machine Learning*, McGraw-Hill, 1997, section 6.9.1
   (naive Bayes, estimating probabilities: the m-estimate).
.. [3] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, appendix B (the Dirichlet's moments) and section 10.2 (variational
   mixtures of Gaussians).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import digamma, gammaln

from .._logmath import safe_log

__all__ = ["Dirichlet", "Fixed", "MEstimate", "log_m_estimate"]


def log_m_estimate(counts, totals, m, p) -> np.ndarray:
    """``log((counts + m p) / (totals + m))``, broadcasting all four arguments.

    The posterior mean of a Dirichlet of concentration ``m p`` (see the module).
    Where ``totals + m == 0`` (no data and no prior weight) the estimate is its
    limit as ``m -> 0`` with data still absent: ``p`` itself. Zero counts with
    ``m = 0`` give ``-inf``, never NaN.
    """
    counts, totals, m, p = np.broadcast_arrays(
        *(np.asarray(a, dtype=float) for a in (counts, totals, m, p))
    )
    den = totals + m
    empty = den == 0
    prob = np.where(empty, p, (counts + m * p) / np.where(empty, 1.0, den))
    return safe_log(prob)


@dataclass(frozen=True, eq=False)
class Dirichlet:
    """A Dirichlet prior on the rows of a table of probabilities, applied by its mode.

    Parameters
    ----------
    concentration : float or array-like
        ``alpha``: one value for every entry, or an array that broadcasts
        against the table (per entry, per row). Every value positive and
        finite; 1 everywhere is the flat prior (maximum likelihood).

    Notes
    -----
    The update of :meth:`map` is the posterior mode (see the module): with
    ``alpha < 1`` it can set an entry to zero, and an entry that is exactly
    zero in the previous table stays zero (structural zeros, such as those
    of a left-to-right chain, survive EM).
    """

    concentration: np.ndarray

    def __post_init__(self):
        alpha = np.array(self.concentration, dtype=float)
        if alpha.size == 0 or not np.all(np.isfinite(alpha) & (alpha > 0)):
            raise ValueError(
                "a Dirichlet concentration must be positive and finite, got "
                f"{np.asarray(self.concentration).tolist()!r}"
            )
        alpha.setflags(write=False)
        object.__setattr__(self, "concentration", alpha)

    def __repr__(self):
        return f"Dirichlet(concentration={self.concentration.tolist()!r})"

    def map(self, counts, previous) -> tuple[np.ndarray, np.ndarray]:
        """The posterior mode ``max(counts + alpha - 1, 0)``, row-normalised.

        Parameters
        ----------
        counts : ndarray of shape (..., k)
            Expected counts, one row per distribution.
        previous : ndarray of shape (..., k)
            The current table. Its exact zeros stay zero, and a row with
            nothing to normalise keeps its previous values.

        Returns
        -------
        prob : ndarray of shape (..., k)
            The new table.
        empty : ndarray of bool of shape (...)
            The rows that kept their previous values.
        """
        new = np.maximum(counts + (self.concentration - 1.0), 0.0)
        new = np.where(previous == 0, 0.0, new)
        total = new.sum(axis=-1, keepdims=True)
        empty = total[..., 0] <= 0
        out = np.where(total > 0, new / np.where(total > 0, total, 1.0), previous)
        return out, empty

    def log_density(self, prob) -> float:
        """``sum (alpha - 1) log p``: the log density of ``prob`` up to the
        Dirichlet's normalising constant (a zero entry under ``alpha = 1``
        adds nothing; under ``alpha > 1`` it adds ``-inf``)."""
        weight = np.broadcast_to(self.concentration, np.shape(prob)) - 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(weight == 0, 0.0, weight * safe_log(prob))
        return float(terms.sum())

    # -- variational Bayes: the whole posterior ------------------------------------
    def posterior(self, counts) -> Dirichlet:
        """The posterior ``Dirichlet(alpha + counts)`` (Bishop 2006, eq. 2.41).

        Parameters
        ----------
        counts : array-like of shape (..., k)
            Expected counts, one row per distribution; ``alpha`` broadcasts
            against them.

        Returns
        -------
        posterior : Dirichlet
            Its concentration has the shape of ``counts`` (broadcast).
        """
        counts = np.asarray(counts, dtype=float)
        return Dirichlet(self.concentration + counts)

    def log_normalizer(self) -> np.ndarray:
        """``log C(alpha) = log Gamma(sum alpha) - sum log Gamma(alpha)`` of
        every row (Bishop 2006, eq. B.23), shape ``alpha.shape[:-1]``."""
        alpha = np.atleast_1d(self.concentration)
        return gammaln(alpha.sum(axis=-1)) - gammaln(alpha).sum(axis=-1)

    def expected_log(self) -> np.ndarray:
        """``E[log p_a] = psi(alpha_a) - psi(sum_b alpha_b)`` under this
        Dirichlet (Bishop 2006, eq. B.21; the variational message of a
        mixture's weights, eq. 10.66), the shape of ``alpha``."""
        alpha = np.atleast_1d(self.concentration)
        return digamma(alpha) - digamma(alpha.sum(axis=-1, keepdims=True))

    def mean(self) -> np.ndarray:
        """``E[p_a] = alpha_a / sum_b alpha_b`` (Bishop 2006, eq. B.17)."""
        alpha = np.atleast_1d(self.concentration)
        return alpha / alpha.sum(axis=-1, keepdims=True)

    def kl(self, prior: Dirichlet) -> np.ndarray:
        """``KL(self || prior)`` of every row, shape ``alpha.shape[:-1]``.

        ``log C(alpha) - log C(alpha_0) + sum_a (alpha_a - alpha_0a) E[log
        p_a]``, the expectation under ``self``: the closed form that follows
        from the density (Bishop 2006, eq. B.16) and :meth:`expected_log`.

        Parameters
        ----------
        prior : Dirichlet
            Its concentration broadcasts against this one's.
        """
        alpha = np.atleast_1d(self.concentration)
        alpha0 = np.broadcast_to(prior.concentration, alpha.shape)
        return (
            self.log_normalizer()
            - prior._broadcast(alpha.shape).log_normalizer()
            + ((alpha - alpha0) * self.expected_log()).sum(axis=-1)
        )

    def _broadcast(self, shape) -> Dirichlet:
        return Dirichlet(np.broadcast_to(self.concentration, shape))


@dataclass(frozen=True, eq=False)
class MEstimate:
    """A Dirichlet prior of concentration ``m p`` read by its posterior mean.

    The m-estimate of probability (Mitchell 1997, section 6.9.1.1):
    ``P(a) = (n_a + m p_a) / (N + m)``, ``m`` virtual samples drawn from the
    prior guess ``p`` (see the module). An emission family lays ``m`` and
    ``p`` out against its tables (:meth:`log_estimate` broadcasts them); the
    estimator validates them.

    Parameters
    ----------
    m : float or ndarray
        Equivalent sample size, non-negative; 0 is maximum likelihood.
    p : ndarray
        Prior guess of each probability.
    """

    m: np.ndarray
    p: np.ndarray

    def log_estimate(self, counts, totals, m=None, p=None) -> np.ndarray:
        """``log((counts + m p) / (totals + m))`` (:func:`log_m_estimate`),
        with ``m`` and ``p`` laid out by the caller (default: as stored)."""
        return log_m_estimate(
            counts, totals, self.m if m is None else m, self.p if p is None else p
        )

    def log_density(self, prob, m=None, p=None) -> float:
        """``sum m p log P``: the log density, up to its constant, of the
        Dirichlet of concentration ``m p + 1``, whose mode is the m-estimate
        (so that EM, which maximises it, never decreases its objective)."""
        weight = np.broadcast_to(
            (self.m if m is None else m) * (self.p if p is None else p),
            np.shape(prob),
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(weight == 0, 0.0, weight * safe_log(prob))
        return float(terms.sum())


@dataclass(frozen=True, eq=False)
class Fixed:
    """A distribution given, not learned: the limit of a Dirichlet whose
    concentration grows without bound around ``prob``, so that no count
    moves it (a classifier's ``priors=``).

    Parameters
    ----------
    prob : ndarray
        The probabilities; the caller validates them.
    """

    prob: np.ndarray

    def log_estimate(self, counts, totals) -> np.ndarray:
        """``log prob`` whatever the counts (zero probabilities give ``-inf``)."""
        return safe_log(np.broadcast_to(self.prob, np.shape(counts)))

    def log_density(self, prob) -> float:
        """0: the prior adds nothing to the objective of a fit."""
        return 0.0
