"""The estimators: thin scikit-learn classes over the graph core and the emissions."""

from ._hmm_model import HiddenMarkovModel
from ._mixture_model import MixtureModel
from ._naive_bayes_model import NaiveBayes
from ._poisson_mixture import PoissonMixture
from ._text_nb import BernoulliNB, ComplementNB, MultinomialNB
from .bayesnet import BayesianNetwork
from .discriminant import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from .hmm import GMMHMM, CategoricalHMM, GaussianHMM, MultinomialHMM, PoissonHMM
from .hmm_classifier import HMMClassifier
from .mixture import GaussianMixture, GaussianMixtureClassifier, select_mixture
from .naive_bayes import CategoricalNB, GaussianNB, MixedNB
from .structure_learning import PC, HillClimbSearch, score_structure
from .tan import TreeAugmentedNB, chow_liu_tree

__all__ = [
    "GMMHMM",
    "PC",
    "BayesianNetwork",
    "BernoulliNB",
    "CategoricalHMM",
    "CategoricalNB",
    "ComplementNB",
    "GaussianHMM",
    "GaussianMixture",
    "GaussianMixtureClassifier",
    "GaussianNB",
    "HMMClassifier",
    "HiddenMarkovModel",
    "HillClimbSearch",
    "LinearDiscriminantAnalysis",
    "MixedNB",
    "MixtureModel",
    "MultinomialHMM",
    "MultinomialNB",
    "NaiveBayes",
    "PoissonHMM",
    "PoissonMixture",
    "QuadraticDiscriminantAnalysis",
    "TreeAugmentedNB",
    "chow_liu_tree",
    "score_structure",
    "select_mixture",
]
