"""Variational hidden Markov models on Dask (the named ones, and
:class:`~bayeskit.HiddenMarkovModel` with ``inference="variational"``):
variational EM with one reduction per iteration.

The sequences come as for Baum-Welch (:mod:`bayeskit._dask._hmm`): a Dask
bag of sequences, or a Dask array of rows with ``lengths`` cut at sequence
ends. Every iteration runs the variational E-step of every partition where
it lives, under the current posterior (:meth:`summarize
<bayeskit.hmm.VariationalGaussianHMM.summarize>`: forward-backward under the
expected log-parameters), sums the statistics by the tree of
:mod:`bayeskit._dask._edge`, and takes the M-step of the sum in memory
(``from_stats``): only the statistics travel. The loop and the monitor are
the in-memory fit's own (``fit_variational``), and the start (hmmlearn's)
reads a sample of whole sequences in memory, drawn as for Baum-Welch: all of
them when they hold at most ``INIT_SAMPLE_STEPS`` steps, and then the fit is
the in-memory fit.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np

from ._edge import _add, _shared, _tree, restoring
from ._hmm import _rows_of, start_sample

__all__ = ["fit_variational_hmm"]


def _partition_stats(est, part, weights):
    """The variational E-step of one partition's sequences under ``est``'s
    posterior (None for an empty partition or one of zero weight)."""
    rows, lens = _rows_of(part)
    if rows is None or (weights is not None and not np.sum(weights) > 0):
        return None
    model = copy.deepcopy(est)
    Xt, lens, w = model._data(rows, lens, weights, reset=False)
    return model._vb_e_step(Xt, lens, w)


def fit_variational_hmm(est, X, lengths=None, sequence_weight=None):
    """Variational EM of a variational HMM on a Dask bag of sequences or a
    Dask array with ``lengths`` (see the module); a failure leaves ``est`` as
    it was."""
    return restoring(_fit, est, X, lengths, sequence_weight)


def _fit(est, X, lengths, sequence_weight):
    from dask import delayed

    parts, part_weights, source, _, data = start_sample(
        est, X, lengths, sequence_weight
    )
    Xt, lens, w = data
    est._components()  # the hyperparameters and letters, checked
    chunk = delayed(_partition_stats, pure=True)

    def e_step():
        # One reduction: every partition's statistics under the current
        # posterior, summed (the model sent once per iteration).
        shared = _shared(copy.deepcopy(est))
        tasks = [chunk(shared, p, pw) for p, pw in zip(parts, part_weights)]
        total = _tree(tasks, _add).compute()
        if total is None:
            raise ValueError("sequence_weight must not be all zero")
        return replace(total, layout=None)

    est._vb_fit(Xt, lens, w, e_step=e_step)
    del source  # the persisted chunks are released with the fit
    return est
