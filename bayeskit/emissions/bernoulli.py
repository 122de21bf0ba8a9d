"""Binary features: the categorical family with two categories per feature.

Feature ``j`` of a row is present (``x_j = 1``) with probability ``p_kj`` in
state ``k``, independently of the others (the multivariate Bernoulli event
model of McCallum and Nigam, 1998):

.. math::

    \\log p(x \\mid z = k) = \\sum_j x_j \\log p_{kj} + (1 - x_j) \\log(1 - p_{kj}).

This is :class:`~bayeskit.emissions.Categorical` with the two categories
absent / present, stored compactly: the statistics are each state's weight and
its weighted count of presences (the count of absences is their difference),
so a sparse matrix is read without densifying, and the log-likelihood is
``sum_j log(1 - p_kj)`` plus a sparse-dense product over the present
features. With ``threshold`` a value counts as present when it is above it (a
binarisation that copies nothing); without, the values are used as they are.

The probabilities come from the counts by the m-estimate (Mitchell 1997,
section 6.9.1.1) of each feature's two-category table,

.. math::

    p_{kj} = \\frac{n_{kj} + m_j q_j}{n_k + m_j},
    \\qquad 1 - p_{kj} = \\frac{n_k - n_{kj} + m_j (1 - q_j)}{n_k + m_j},

both computed from counts (not as ``1 - p``), so a probability near one keeps
its complement's precision; additive smoothing ``alpha`` is ``m_j = 2
alpha``, ``q_j = 1/2``.

References
----------
.. [1] A. McCallum and K. Nigam, "A comparison of event models for naive
   Bayes text classification", AAAI-98 Workshop on Learning for Text
   Categorization, 1998.
.. [2] T. M. Mitchell, *Machine Learning*, McGraw-Hill, 1997, section 6.9.1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..priors.dirichlet import MEstimate, log_m_estimate
from ._count_kernels import CountMatrix, class_sums, scores
from .base import Emission

__all__ = ["Bernoulli", "BernoulliParams", "BernoulliStats"]


@dataclass(frozen=True)
class BernoulliStats:
    """Weight ``(k,)`` of every state and weighted counts of presences ``(k, d)``."""

    weight: np.ndarray
    counts: np.ndarray

    def __add__(self, other: BernoulliStats) -> BernoulliStats:
        return BernoulliStats(self.weight + other.weight, self.counts + other.counts)

    @property
    def total_weight(self) -> np.ndarray:
        return self.weight


@dataclass(frozen=True, eq=False)
class BernoulliParams:
    """``log_prob[k, j] = log p_kj`` and ``log_neg[k, j] = log(1 - p_kj)``."""

    log_prob: np.ndarray
    log_neg: np.ndarray


def _as_counts(X) -> CountMatrix:
    return X if isinstance(X, CountMatrix) else CountMatrix.of(X)


class Bernoulli(Emission):
    """Independent binary features: two-category tables, stored compactly.

    Parameters
    ----------
    n_features : int
        Number of features ``d``.
    threshold : float or None, default=None
        A value above it is a presence (1), any other an absence (0); None
        reads the values as they are (0/1 data).
    """

    def __init__(self, n_features: int, threshold=None) -> None:
        self.n_features = n_features
        self.threshold = threshold

    def check_data(self, X: np.ndarray) -> None:
        """ValueError naming X unless, with no ``threshold``, its cells (NaN
        aside) are 0 or 1: other values would weigh a feature's log-odds by
        themselves rather than read as a presence or an absence."""
        super().check_data(X)
        if self.threshold is None:
            values = X[~np.isnan(X)]
            bad = values[(values != 0) & (values != 1)]
            if bad.size:
                raise ValueError(
                    "X must hold 0/1 values for the emission family Bernoulli "
                    f"with threshold=None ({bad.size} cells do not, the first "
                    f"{bad[0]!r}); give a threshold (Bernoulli(n_features, "
                    "threshold=t)) to read values above t as presences"
                )

    @property
    def _threshold(self) -> float:
        return np.nan if self.threshold is None else float(self.threshold)

    def stats(self, X, weights: np.ndarray, labels=None) -> BernoulliStats:
        """Each state's weight and weighted presences; one addition per stored
        value with ``labels`` (every row's weight on one state)."""
        C = _as_counts(X)
        if labels is None:  # soft weights: a pass per state
            counts = np.vstack(
                [
                    class_sums(
                        C,
                        np.zeros(C.shape[0], np.int64),
                        weights[:, k],
                        1,
                        self._threshold,
                    )
                    for k in range(weights.shape[1])
                ]
            )
        else:
            w = weights[np.arange(len(labels)), labels]
            counts = class_sums(C, labels, w, weights.shape[1], self._threshold)
        return BernoulliStats(weights.sum(axis=0), counts)

    def zeros(self, n_states: int) -> BernoulliStats:
        return BernoulliStats(np.zeros(n_states), np.zeros((n_states, self.n_features)))

    def map_params(
        self, stats: BernoulliStats, prior: MEstimate | None = None, previous=None
    ) -> BernoulliParams:
        """The m-estimate of every feature's presence (see the module);
        ``prior`` an :class:`~bayeskit.priors.MEstimate` with ``m`` and ``p``
        (the prior probability of presence) of shape ``(d,)``, None for
        maximum likelihood."""
        d = self.n_features
        m = np.zeros(d) if prior is None else np.broadcast_to(prior.m, (d,))
        q = np.full(d, 0.5) if prior is None else np.broadcast_to(prior.p, (d,))
        total = stats.weight[:, None]
        log_prob = log_m_estimate(stats.counts, total, m, q)
        log_neg = log_m_estimate(total - stats.counts, total, m, 1.0 - q)
        return BernoulliParams(log_prob, log_neg)

    def log_likelihood(self, X, params: BernoulliParams) -> np.ndarray:
        """``log p(x | z = k)``, ``(n, n_states)``; zero values are absences."""
        C = _as_counts(X)
        certain = np.isneginf(params.log_neg)  # p = 1: an absence is impossible
        log_neg = np.where(certain, 0.0, params.log_neg)
        with np.errstate(invalid="ignore"):
            W = np.where(certain, params.log_prob, params.log_prob - log_neg)
        out = scores(C, W.T, self._threshold)
        out += log_neg.sum(axis=1)
        if certain.any():  # rows that lack a feature that every row of a state has
            P, threshold = C, self._threshold
            if self.threshold is None:  # any non-zero value is a presence
                P = CountMatrix(
                    C.layout, C.shape, (C.data != 0).astype(float), C.indices, C.indptr
                )
            present = scores(P, certain.T.astype(float), threshold)
            out[present < certain.sum(axis=1)] = -np.inf
        return out

    def n_parameters(self, n_states: int) -> int:
        return n_states * self.n_features

    def sample(self, params: BernoulliParams, states, random_state) -> np.ndarray:
        """One 0/1 row drawn from each state in ``states``."""
        prob = np.exp(params.log_prob)[np.asarray(states)]
        return (random_state.random_sample(prob.shape) < prob).astype(np.int64)
