"""The graphical-model core: factors, DAGs, tree and chain belief propagation.

This package knows nothing about estimators; it works on state indices and
log-potentials and can be used on its own.

- :class:`LogFactor`: log-space tables over named discrete variables.
- :data:`SUM_PRODUCT`, :data:`MAX_PRODUCT`: the semirings of elimination.
- :class:`DAG`: topological order, moral graph, Markov blanket, d-separation.
- :class:`TreeBP`: batched sum-product and max-product on trees and forests.
- :class:`JunctionTree`: exact inference on any DAG (Shafer-Shenoy, batched).
- :class:`BayesNet`: a DAG with its CPTs; every query, batched per pattern of
  evidence, on its junction tree.
- :func:`junction_tree_size`: that tree's size, estimated before compiling it;
  :class:`LoopyBP` and :class:`LikelihoodWeighting`: approximate inference
  where it does not fit (:func:`loopy_belief_propagation`,
  :func:`likelihood_weighting`); :func:`posterior_sample` (exact, from the
  calibrated tree) and :func:`gibbs_sample`: rows given evidence.
- :func:`forward_backward`, :func:`viterbi`, :func:`forward`: chain kernels (HMMs);
  :func:`forward_backward_inputs`, :func:`viterbi_inputs`,
  :func:`forward_inputs`: the same with a transition matrix per step.
- :class:`LatentNode`: the one-node tree, the posterior of every classifier.
- :class:`LatentChain`: the chain of the hidden Markov models (its posterior,
  decoding, statistics, MAP tables and sampling), with :class:`ChainParams`,
  :class:`ChainStats` and :class:`ChainPrior`.
"""

from .budget import TreeSize, junction_tree_size
from .chain import ChainFilter, ChainPosterior, forward, forward_backward, viterbi
from .dag import DAG, CycleError
from .factor import LogFactor
from .gibbs import gibbs_sample
from .input_chain import (
    InputChainPosterior,
    forward_backward_inputs,
    forward_inputs,
    viterbi_inputs,
)
from .junction_tree import JunctionTree
from .loopy import LoopyBP, LoopyResult, loopy_belief_propagation
from .network import BayesNet
from .network_sampling import posterior_sample
from .sampling import LikelihoodWeighting, SampledPosterior, likelihood_weighting
from .semiring import MAX_PRODUCT, SUM_PRODUCT, MaxProduct, Semiring, SumProduct
from .structure import (
    ChainParams,
    ChainPrior,
    ChainStats,
    LatentChain,
    LatentNode,
    NodeParams,
    NodePosterior,
    NodeStats,
)
from .tree import Posterior, TreeBP, TreeMAP, TreeMarginals, node_belief  # noqa: F401  (TreeMarginals: the former name of Posterior, still importable)

__all__ = [
    "DAG",
    "MAX_PRODUCT",
    "SUM_PRODUCT",
    "BayesNet",
    "ChainFilter",
    "ChainParams",
    "ChainPosterior",
    "ChainPrior",
    "ChainStats",
    "CycleError",
    "InputChainPosterior",
    "JunctionTree",
    "LatentChain",
    "LatentNode",
    "LikelihoodWeighting",
    "LogFactor",
    "LoopyBP",
    "LoopyResult",
    "MaxProduct",
    "NodeParams",
    "NodePosterior",
    "NodeStats",
    "Posterior",
    "SampledPosterior",
    "Semiring",
    "SumProduct",
    "TreeBP",
    "TreeMAP",
    "TreeSize",
    "forward",
    "forward_backward",
    "forward_backward_inputs",
    "forward_inputs",
    "gibbs_sample",
    "junction_tree_size",
    "likelihood_weighting",
    "loopy_belief_propagation",
    "node_belief",
    "posterior_sample",
    "viterbi",
    "viterbi_inputs",
]
