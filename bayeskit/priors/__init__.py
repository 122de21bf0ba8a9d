"""Priors: small frozen objects, applied only where statistics become
parameters (``map_params``), or kept whole by variational Bayes (their
``posterior``, ``expected_log`` and ``kl``).

- :class:`Dirichlet`: a Dirichlet on the rows of a table, read by its mode
  (the hidden Markov models' start, transition and emission tables).
- :class:`MEstimate`: a Dirichlet read by its mean, the m-estimate (naive
  Bayes, the networks).
- :class:`Fixed`: a distribution given by the user, which no count moves
  (a classifier's ``priors=``).
- :class:`Gamma`: a Gamma prior on Poisson and exponential rates (and the
  gamma family's rates given its shapes).
- :class:`Beta`: a Beta prior on success probabilities (negative binomial
  counts).
- :class:`NormalInverseWishart`: a prior on Gaussian means and covariances
  (the mixtures, discriminant analysis and the Gaussian HMMs).
- :class:`StickBreaking`: the truncated stick-breaking prior of a Dirichlet
  process's weights (variational mixtures).
- :class:`NormalInverseGamma`: a prior on one mean and variance per state
  and feature (the log-normal family).
"""

from .beta import Beta
from .dirichlet import Dirichlet, Fixed, MEstimate, log_m_estimate
from .gamma import Gamma
from .niw import NormalInverseWishart
from .normal_inverse_gamma import NormalInverseGamma
from .stick_breaking import StickBreaking

__all__ = [
    "Beta",
    "Dirichlet",
    "Fixed",
    "Gamma",
    "MEstimate",
    "NormalInverseGamma",
    "NormalInverseWishart",
    "StickBreaking",
    "log_m_estimate",
]
