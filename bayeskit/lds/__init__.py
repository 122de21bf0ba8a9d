"""Linear dynamical systems: the Kalman filter and smoother, fitted by EM.

- :class:`~bayeskit.LinearGaussianSSM`: a linear Gaussian state-space model as a
  scikit-learn estimator (EM on many sequences, missing values, priors).
- :class:`~bayeskit.KalmanFilter`: the same model with pykalman's names, defaults and
  methods (``em``, ``loglikelihood``, ``sample``).
- :class:`LDSStats`: their additive expected statistics (``summarize`` /
  ``from_stats``).
"""

from ._kalman import KalmanFilter
from ._ssm import LinearGaussianSSM
from ._stats import LDSStats

__all__ = ["KalmanFilter", "LDSStats", "LinearGaussianSSM"]
