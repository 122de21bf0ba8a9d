"""Hidden Markov models: one chain of states x an emission family x a prior.

As hmmlearn's module: ``from bayeskit import hmm; hmm.GaussianHMM(...)``.
Inference is the graph core's chain kernels (forward-backward = sum-product,
Viterbi = max-product), fed by the emission family's log-likelihoods;
learning (Baum-Welch) is the family's statistics under the step posteriors
plus the expected start and transition counts, turned into MAP parameters by
the priors (Rabiner, 1989; Bishop, 2006, ch. 13). The named models carry
hmmlearn's names and defaults; :class:`HiddenMarkovModel` is the chain over
any emission family, products included, and :class:`InputOutputHMM` the
same with a start and transitions driven by covariates; :class:`HMMClassifier`
classifies sequences with one model per class.

Sequences come in two forms, both first class: hmmlearn's rows of all
sequences concatenated plus ``lengths``, and a list with one array per
sequence (so scikit-learn's splitters split whole sequences). Methods that
return per-step results return them in the form they were given.
"""

from .._base.monitor import ConvergenceMonitor
from ._autoregressive import ARGaussianHMM
from ._categorical import CategoricalHMM
from ._classifier import HMMClassifier
from ._gaussian import GaussianHMM
from ._gmm import GMMHMM
from ._input_output import InputOutputHMM
from ._markov_chain import MarkovChain, MarkovChainClassifier
from ._model import HiddenMarkovModel
from ._multinomial import MultinomialHMM
from ._poisson import PoissonHMM
from ._semi_markov import HiddenSemiMarkovModel
from ._vcategorical import VariationalCategoricalHMM
from ._vgaussian import VariationalGaussianHMM

__all__ = [
    "GMMHMM",
    "ARGaussianHMM",
    "CategoricalHMM",
    "ConvergenceMonitor",
    "GaussianHMM",
    "HMMClassifier",
    "HiddenMarkovModel",
    "HiddenSemiMarkovModel",
    "InputOutputHMM",
    "MarkovChain",
    "MarkovChainClassifier",
    "MultinomialHMM",
    "PoissonHMM",
    "VariationalCategoricalHMM",
    "VariationalGaussianHMM",
]
