"""The estimators: thin scikit-learn classes over the graph core and the emissions."""

from .naive_bayes import CategoricalNB, GaussianNB, MixedNB

__all__ = ["CategoricalNB", "GaussianNB", "MixedNB"]
