"""bayeskit: scikit-learn-compatible generative Bayesian models.

Every model is a discrete latent structure x an emission family x a prior;
inference is belief propagation (:mod:`bayeskit.graph`), learning is additive
sufficient statistics.
"""

from .models import (
    GMMHMM,
    BayesianNetwork,
    BernoulliNB,
    CategoricalHMM,
    CategoricalNB,
    ComplementNB,
    GaussianHMM,
    GaussianMixture,
    GaussianMixtureClassifier,
    GaussianNB,
    HMMClassifier,
    LinearDiscriminantAnalysis,
    MixedNB,
    MultinomialHMM,
    MultinomialNB,
    PoissonHMM,
    QuadraticDiscriminantAnalysis,
    TreeAugmentedNB,
    chow_liu_tree,
    select_mixture,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "GMMHMM",
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
    "LinearDiscriminantAnalysis",
    "MixedNB",
    "MultinomialHMM",
    "MultinomialNB",
    "PoissonHMM",
    "QuadraticDiscriminantAnalysis",
    "TreeAugmentedNB",
    "__version__",
    "chow_liu_tree",
    "select_mixture",
]
