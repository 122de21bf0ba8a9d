"""The estimators: thin scikit-learn classes over the graph core and the emissions."""

from .discriminant import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from .mixture import GaussianMixture, GaussianMixtureClassifier, select_mixture
from .naive_bayes import CategoricalNB, GaussianNB, MixedNB

__all__ = [
    "CategoricalNB",
    "GaussianMixture",
    "GaussianMixtureClassifier",
    "GaussianNB",
    "LinearDiscriminantAnalysis",
    "MixedNB",
    "QuadraticDiscriminantAnalysis",
    "select_mixture",
]
