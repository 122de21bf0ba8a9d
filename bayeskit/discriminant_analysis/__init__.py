"""Gaussian discriminant analysis: linear (shared covariance) and quadratic.

As :mod:`sklearn.discriminant_analysis`: ``from
bayeskit.discriminant_analysis import LinearDiscriminantAnalysis``.
"""

from ._lda import LinearDiscriminantAnalysis
from ._qda import QuadraticDiscriminantAnalysis

__all__ = ["LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis"]
