"""The estimators: thin scikit-learn classes over the graph core and the emissions."""

from .bayesnet import BayesianNetwork
from .discriminant import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from .hmm import GMMHMM, CategoricalHMM, GaussianHMM, MultinomialHMM, PoissonHMM
from .hmm_classifier import HMMClassifier
from .mixture import GaussianMixture, GaussianMixtureClassifier, select_mixture
from .naive_bayes import CategoricalNB, GaussianNB, MixedNB
from .tan import TreeAugmentedNB, chow_liu_tree

__all__ = [
    "GMMHMM",
    "BayesianNetwork",
    "CategoricalHMM",
    "CategoricalNB",
    "GaussianHMM",
    "GaussianMixture",
    "GaussianMixtureClassifier",
    "GaussianNB",
    "HMMClassifier",
    "LinearDiscriminantAnalysis",
    "MixedNB",
    "MultinomialHMM",
    "PoissonHMM",
    "QuadraticDiscriminantAnalysis",
    "TreeAugmentedNB",
    "chow_liu_tree",
    "select_mixture",
]
