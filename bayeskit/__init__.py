"""bayeskit: scikit-learn-compatible generative Bayesian models.

Every model is a discrete latent structure x an emission family x a prior;
inference is belief propagation (:mod:`bayeskit.graph`), learning is additive
sufficient statistics.
"""

from . import _dask
from ._collections import register as _register
from .discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)
from .hmm import (
    GMMHMM,
    ARGaussianHMM,
    CategoricalHMM,
    GaussianHMM,
    HiddenMarkovModel,
    HiddenSemiMarkovModel,
    HMMClassifier,
    InputOutputHMM,
    MarkovChain,
    MarkovChainClassifier,
    MultinomialHMM,
    PoissonHMM,
    VariationalCategoricalHMM,
    VariationalGaussianHMM,
)
from .lds import KalmanFilter, LinearGaussianSSM
from .mixture import (
    BayesianGaussianMixture,
    GaussianMixture,
    GaussianMixtureClassifier,
    MixtureModel,
    PoissonMixture,
    select_mixture,
)
from .naive_bayes import (
    BernoulliNB,
    CategoricalNB,
    ComplementNB,
    GaussianNB,
    MixedNB,
    MultinomialNB,
    NaiveBayes,
    TreeAugmentedNB,
)
from .network import (
    PC,
    BayesianNetwork,
    HillClimbSearch,
    arc_strength,
    chow_liu_tree,
    score_structure,
)

# The edge modules that take other libraries' collections (Dask) register with
# the estimators, which do not import them; none imports its library until such
# input arrives.
_register(_dask)

__version__ = "0.1.0.dev0"

# The subpackages, reachable as attributes after ``import bayeskit`` (as
# scikit-learn's are): those the estimators import are loaded already, the
# others (datasets, io, plot, the command-line tool) on first access (PEP 562), so
# that ``import bayeskit`` costs no more than the estimators.
_SUBPACKAGES = (
    "cli",
    "datasets",
    "discriminant_analysis",
    "emissions",
    "graph",
    "hmm",
    "io",
    "lds",
    "mixture",
    "naive_bayes",
    "network",
    "plot",
    "priors",
)


def __getattr__(name):
    if name in _SUBPACKAGES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_SUBPACKAGES})


__all__ = [
    "GMMHMM",
    "PC",
    "ARGaussianHMM",
    "BayesianGaussianMixture",
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
    "HiddenSemiMarkovModel",
    "HillClimbSearch",
    "InputOutputHMM",
    "KalmanFilter",
    "LinearDiscriminantAnalysis",
    "LinearGaussianSSM",
    "MarkovChain",
    "MarkovChainClassifier",
    "MixedNB",
    "MixtureModel",
    "MultinomialHMM",
    "MultinomialNB",
    "NaiveBayes",
    "PoissonHMM",
    "PoissonMixture",
    "QuadraticDiscriminantAnalysis",
    "TreeAugmentedNB",
    "VariationalCategoricalHMM",
    "VariationalGaussianHMM",
    "__version__",
    "arc_strength",
    "chow_liu_tree",
    "score_structure",
    "select_mixture",
]
