"""Discrete Bayesian networks: fitting, queries and structure learning.

A network is a DAG of categorical variables x their conditional tables x a
Dirichlet (m-estimate) prior; queries run on the graph core's junction tree.
Tree-augmented naive Bayes, a network classifier over a Chow-Liu tree, is
here and in :mod:`bayeskit.naive_bayes`. Reading and writing network files is
:mod:`bayeskit.io`.
"""

from ._arc_strength import arc_strength
from ._data import UnknownStateError
from ._network import BayesianNetwork
from ._pc_search import PC
from ._queries import PosteriorSeries
from ._structure_learning import HillClimbSearch, score_structure
from ._tan import TreeAugmentedNB, chow_liu_tree

__all__ = [
    "PC",
    "BayesianNetwork",
    "HillClimbSearch",
    "PosteriorSeries",
    "TreeAugmentedNB",
    "UnknownStateError",
    "arc_strength",
    "chow_liu_tree",
    "score_structure",
]
