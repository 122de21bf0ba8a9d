"""The estimators: thin scikit-learn classes over the graph core and the emissions."""

from .discriminant import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from .naive_bayes import CategoricalNB, GaussianNB, MixedNB

__all__ = [
    "CategoricalNB",
    "GaussianNB",
    "LinearDiscriminantAnalysis",
    "MixedNB",
    "QuadraticDiscriminantAnalysis",
]
