"""The E-step of the hidden Markov models: a mixin of their base class."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np

from .._base.em import LatentStats
from .._base.sequences import _observed_steps
from .._jit import BLAS_ALONE_SIZE, blas_alone
from . import _labelled

__all__ = ["HMMEStep"]


class HMMEStep:
    """The E-step of :class:`~bayeskit.hmm._base.BaseHMM` (its family's
    statistics with BLAS on one thread, as its messages: see
    :func:`~bayeskit._jit.blas_alone`)."""

    def _expected_stats(self, data, params, components) -> LatentStats:
        """The E-step: the chain's posterior under ``params``, fed by the
        family's messages, and both parts' statistics under it."""
        X, lengths, weights, *labels = data  # labels: the known states, if any
        structure, emission, _ = components
        messages = self._messages(emission, X, params.emission)
        if labels:
            post = _labelled.posterior(structure, messages, params, data)
        else:
            post = structure.posterior(messages, params.structure, lengths, weights)
        chain_stats = structure.stats(post, lengths, weights)
        if not self._updates_emission():
            emission_stats = emission.zeros(self.n_components)
        elif post.symbol_counts is not None:  # the table's rows, weighted
            emission_stats = emission.table_stats(post.symbol_counts)
        else:
            resp = post.posterior
            if weights is not None:
                resp = resp * np.repeat(weights, lengths)[:, None]
            observed = _observed_steps(X)
            if observed is not None:  # gaps add nothing to the family's stats
                X, resp = X[observed], resp[observed]
            alone = len(X) * self.n_components >= BLAS_ALONE_SIZE
            with blas_alone() if alone else nullcontext():  # as in _messages
                emission_stats = emission.expected_stats(X, resp, params.emission)
        evidence = post.log_evidence
        total = evidence.sum() if weights is None else weights @ evidence
        return LatentStats(chain_stats, emission_stats, float(total))
