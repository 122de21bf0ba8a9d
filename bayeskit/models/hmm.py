"""Hidden Markov models: one chain of states, five emission families.

Every one is a chain of state nodes (:class:`~bayeskit.graph.LatentChain`) x
an emission family x a prior. Inference is the graph core's chain kernels
(forward-backward = sum-product, Viterbi = max-product), fed by the emission
family's log-likelihoods; learning (Baum-Welch) is the family's statistics
under the step posteriors plus the expected start and transition counts,
turned into MAP parameters by the priors (Rabiner, 1989; Bishop, 2006, ch.
13). What the models share is :class:`bayeskit.models._hmm_base.BaseHMM`;
each model's module holds its docstring, hyperparameters and components.

Sequences come in two forms, both first class: hmmlearn's rows of all
sequences concatenated plus ``lengths``, and a list with one array per
sequence (so scikit-learn's splitters split whole sequences). Methods that
return per-step results return them in the form they were given (the rules:
:mod:`bayeskit.models._sequences`). Sequence classification, one HMM per
class, is :mod:`bayeskit.models.hmm_classifier`.
"""

from ._categorical_hmm import CategoricalHMM
from ._gaussian_hmm import GaussianHMM
from ._gmm_hmm import GMMHMM
from ._monitor import ConvergenceMonitor
from ._multinomial_hmm import MultinomialHMM
from ._poisson_hmm import PoissonHMM

__all__ = [
    "GMMHMM",
    "CategoricalHMM",
    "ConvergenceMonitor",
    "GaussianHMM",
    "MultinomialHMM",
    "PoissonHMM",
]
