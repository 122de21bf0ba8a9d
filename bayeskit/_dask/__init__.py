"""The Dask edge: fitting and predicting on Dask collections.

Modules imported in one direction: :mod:`._edge` (the reduction of chunk
statistics by a tree of tasks, the classifiers' and networks' fits,
prediction over row blocks), then :mod:`._em` (the Gaussian mixtures' EM, one
reduction per iteration), :mod:`._hmm` (Baum-Welch over Dask bags and arrays
of sequences), :mod:`._iohmm` (the input-output HMMs' generalised EM over the
same partitions) and :mod:`._lds` (EM of the linear dynamical systems over the
same partitions of sequences) and :mod:`._chain` (the counts of the observable
Markov chains) and :mod:`._hybrid` (networks with continuous nodes) and
:mod:`._vhmm` and :mod:`._bgm` (variational EM of the variational HMMs and of
BayesianGaussianMixture), built on it.
``bayeskit`` registers this package with :mod:`bayeskit._collections`; an
estimator calls it only when :func:`accepts` says its input is a Dask
collection, and Dask is imported then.
"""

from ._bgm import fit_bayesian_mixture
from ._chain import fit_markov_chain, predict_markov_chain
from ._edge import (
    SPLIT_EVERY,
    fit_classifier,
    fit_network,
    is_dask,
    predict,
    predict_frame,
)
from ._em import fit_mixture, partial_fit_mixture
from ._hmm import fit_hmm, predict_hmm
from ._hybrid import fit_hybrid_network
from ._iohmm import fit_iohmm, partial_fit_iohmm, predict_iohmm, summarize_iohmm
from ._lds import fit_lds, predict_lds, states_lds
from ._vhmm import fit_variational_hmm

accepts = is_dask  # the handler's test (bayeskit._collections)

__all__ = [
    "SPLIT_EVERY",
    "accepts",
    "fit_bayesian_mixture",
    "fit_classifier",
    "fit_hmm",
    "fit_hybrid_network",
    "fit_iohmm",
    "fit_lds",
    "fit_markov_chain",
    "fit_mixture",
    "fit_network",
    "fit_variational_hmm",
    "is_dask",
    "partial_fit_iohmm",
    "partial_fit_mixture",
    "predict",
    "predict_frame",
    "predict_hmm",
    "predict_iohmm",
    "predict_lds",
    "predict_markov_chain",
    "states_lds",
    "summarize_iohmm",
]
