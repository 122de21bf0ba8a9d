"""The normal-inverse-gamma prior of one Gaussian mean and variance per state
and feature, read by its mode.

A feature of a state with mean ``mu`` and variance ``v``, after weighted
observations of total weight ``n``, mean ``ybar`` and centred sum of squares
``S``, has under the prior

.. math::

    \\log \\pi(\\mu, v) = -\\frac{c}{2} \\log v
        - \\frac{\\psi + \\kappa (\\mu - m_0)^2}{2 v} + \\text{const}

(``m_0`` the prior mean, ``kappa`` its weight, ``psi`` the prior scatter and
``c`` the variance's weight) the posterior mode

.. math::

    \\mu = \\frac{\\kappa m_0 + n \\bar y}{\\kappa + n}, \\qquad
    v = \\frac{\\psi + S + \\frac{\\kappa n}{\\kappa + n} (\\bar y - m_0)^2}
        {c + n}.

All four at zero is the flat prior, whose mode is the maximum-likelihood
estimate ``(ybar, S / n)`` exactly. For ``kappa > 0`` the prior is the
normal-inverse-gamma distribution ``N(mu | m_0, v / kappa)
Inv-Gamma(v | (c - 3) / 2, psi / 2)``, for ``kappa = 0`` the inverse gamma
``Inv-Gamma(v | (c - 2) / 2, psi / 2)`` alone (proper when the shape and
``psi`` are positive; Gelman et al. 2013, section 3.3; Bishop 2006, section
2.3.6, there on the precision). It is the one-dimensional block of
:class:`~bayeskit.priors.NormalInverseWishart` with the same names.

References
----------
.. [1] A. Gelman, J. B. Carlin, H. S. Stern, D. B. Dunson, A. Vehtari and
   D. B. Rubin, *Bayesian Data Analysis*, 3rd ed., CRC Press, 2013,
   section 3.3 (the normal model with a conjugate prior).
.. [2] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, section 2.3.6.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["NormalInverseGamma"]

_FIELDS = ("mean", "mean_weight", "scatter", "variance_weight")


@dataclass(frozen=True, eq=False)
class NormalInverseGamma:
    """A normal-inverse-gamma prior on every state's and feature's mean and
    variance, applied by its mode.

    Parameters
    ----------
    mean : float or array-like, default=0.0
        ``m_0``; broadcasts against the means ``(n_states, n_features)``.
    mean_weight : float or array-like, default=0.0
        ``kappa``, non-negative: the weight of ``m_0`` (pseudo-observations).
    scatter : float or array-like, default=0.0
        ``psi``, non-negative: the prior sum of squares.
    variance_weight : float or array-like, default=0.0
        ``c``, non-negative: added to a state's weight in the variance's
        denominator.

    Notes
    -----
    See the module for the density and the mode. All parameters at zero is
    maximum likelihood.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.priors import NormalInverseGamma
    >>> prior = NormalInverseGamma(mean=0.0, mean_weight=1.0, scatter=2.0,
    ...                            variance_weight=2.0)
    >>> means, variances = prior.map(
    ...     np.array([[3.0]]), np.array([[1.0]]), np.array([[4.0]]),
    ...     np.zeros((1, 1)), np.ones((1, 1)))
    >>> means, variances
    (array([[0.75]]), array([[1.35]]))
    """

    mean: np.ndarray = 0.0
    mean_weight: np.ndarray = 0.0
    scatter: np.ndarray = 0.0
    variance_weight: np.ndarray = 0.0

    def __post_init__(self):
        for name in _FIELDS:
            value = np.array(getattr(self, name), dtype=float)
            ok = (
                np.isfinite(value)
                if name == "mean"
                else np.isfinite(value) & (value >= 0)
            )
            if not np.all(ok):
                what = "finite" if name == "mean" else "non-negative and finite"
                raise ValueError(
                    f"a NormalInverseGamma {name} must be {what}, got "
                    f"{np.asarray(getattr(self, name)).tolist()!r}"
                )
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    def __repr__(self):
        args = ", ".join(f"{n}={getattr(self, n).tolist()!r}" for n in _FIELDS)
        return f"NormalInverseGamma({args})"

    def map(self, counts, mean, scatter, previous_mean, previous_variance):
        """The posterior mode ``(means, variances)`` (see the module).

        Parameters
        ----------
        counts : ndarray of shape (k, d)
            The weight ``n`` of every state's observations of every feature.
        mean : ndarray of shape (k, d)
            Their weighted mean ``ybar`` (any value where ``n`` is 0).
        scatter : ndarray of shape (k, d)
            Their weighted centred sum of squares ``S``.
        previous_mean, previous_variance : ndarray of shape (k, d)
            Kept where the denominators ``kappa + n`` or ``c + n`` are 0 (no
            data and no prior).

        Returns
        -------
        means, variances : ndarray of shape (k, d)
        """
        n = np.asarray(counts, dtype=float)
        kappa, m0 = self.mean_weight, self.mean
        den = kappa + n
        ok = den > 0
        safe = np.where(ok, den, 1.0)
        means = np.where(ok, (kappa * m0 + n * mean) / safe, previous_mean)
        delta = np.where(ok, mean - m0, 0.0)
        spread = self.scatter + scatter + kappa * n / safe * delta**2
        vden = self.variance_weight + n
        vok = vden > 0
        variances = np.where(vok, spread / np.where(vok, vden, 1.0), previous_variance)
        return means, variances

    def log_density(self, means, variances) -> float:
        """``sum -c/2 log v - (psi + kappa (mu - m_0)^2) / (2 v)``: the log
        density whose mode :meth:`map` is, up to its constant."""
        means = np.asarray(means, dtype=float)
        v = np.asarray(variances, dtype=float)
        quad = self.scatter + self.mean_weight * (means - self.mean) ** 2
        c = np.broadcast_to(self.variance_weight, v.shape)
        q = np.broadcast_to(quad, v.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_v = np.where(c == 0, 0.0, c * np.log(v))
            term = np.where(q == 0, 0.0, q / v)
        return float(np.sum(-0.5 * log_v - 0.5 * term))
