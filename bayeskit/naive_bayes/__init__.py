"""Naive Bayes classifiers, and tree-augmented naive Bayes.

As :mod:`sklearn.naive_bayes`: ``from bayeskit.naive_bayes import
MultinomialNB`` reads as scikit-learn's line does. Every classifier is one
class node x an emission family x a prior; :class:`NaiveBayes` is that triple
over any family.
"""

from ..network._tan import TreeAugmentedNB
from ._mixed import MixedNB
from ._model import NaiveBayes
from ._naive_bayes import CategoricalNB, GaussianNB
from ._text import BernoulliNB, ComplementNB, MultinomialNB

__all__ = [
    "BernoulliNB",
    "CategoricalNB",
    "ComplementNB",
    "GaussianNB",
    "MixedNB",
    "MultinomialNB",
    "NaiveBayes",
    "TreeAugmentedNB",
]
