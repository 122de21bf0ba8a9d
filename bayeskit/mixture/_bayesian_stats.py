"""The statistics of a variational Gaussian mixture: what they hold, how
chunks add, the update from their sum, and stochastic variational inference
(Hoffman, Blei, Wang and Paisley 2013) over mini-batches."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from sklearn.utils import check_random_state

from .._base.classifier import float_input
from .._base.em import described
from .._base.variational import fit_variational
from .._layout import add_described
from .._validation import (
    _fit_context,
    check_is_fitted,
    check_sample_weight,
    validate_data,
)
from ..emissions import GaussianStats

__all__ = ["BayesianMixtureStatistics", "VariationalMixtureStats"]


@dataclass(frozen=True)
class VariationalMixtureStats:
    """Expected statistics of a variational Gaussian mixture on some rows.

    Attributes
    ----------
    gaussian : GaussianStats
        The Gaussian family's statistics under the responsibilities (times
        the sample weights).
    total_weight : float
        The rows' total sample weight.
    entropy : float
        ``-sum_i w_i sum_k r_ik log r_ik``: the entropy of ``q(Z)``, the
        E-step's part of the lower bound.

    Statistics of chunks add with ``+``.
    """

    gaussian: GaussianStats
    total_weight: float
    entropy: float
    #: The fitted posterior the statistics were computed under (set by the
    #: public ``summarize``; ``bayeskit._layout.Layout``).
    layout: object = field(default=None, compare=False, repr=False)

    def __add__(self, other: VariationalMixtureStats) -> VariationalMixtureStats:
        if not isinstance(other, VariationalMixtureStats):
            return NotImplemented
        return add_described(self, other, _add)

    def __radd__(self, other):
        if isinstance(other, int) and other == 0:
            return self
        return NotImplemented


def _add(a: VariationalMixtureStats, b: VariationalMixtureStats):
    return VariationalMixtureStats(
        a.gaussian + b.gaussian, a.total_weight + b.total_weight, a.entropy + b.entropy
    )


class BayesianMixtureStatistics:
    """``summarize``, ``from_stats`` and ``partial_fit`` of
    :class:`~bayeskit.BayesianGaussianMixture` (a mixin)."""

    # Statistics are expected under the fitted parameters: those of several
    # parameters of one model add (incremental EM; bayeskit._layout).
    _em_statistics = True

    def summarize(self, X, sample_weight=None):
        """Expected statistics of a chunk under the current posterior (the
        E-step). Chunks' statistics add, and :meth:`from_stats` of their sum
        is one iteration of variational EM over all the rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        stats : VariationalMixtureStats
        """
        X = self._validate(X)
        sw = check_sample_weight(sample_weight, X, allow_all_zero=True)
        return replace(self._stats(X, self._e_step(X), sw), layout=described(self))

    def from_stats(self, stats):
        """Set the posterior from statistics (summed over chunks): the M-step.

        ``lower_bound_`` becomes the bound of the new posterior with the
        entropy the statistics carry.

        Parameters
        ----------
        stats : VariationalMixtureStats
            Statistics of :meth:`summarize`, added over chunks; they carry the
            posterior they were computed under, which a fresh estimator (a
            map-reduce's driver) takes.

        Returns
        -------
        self : object
        """
        if isinstance(stats, VariationalMixtureStats) and stats.layout is not None:
            stats.layout.apply_if_fresh(self)
            stats = replace(stats, layout=None)
        check_is_fitted(self)
        k, d = self.n_components, self.n_features_in_
        if not isinstance(
            stats, VariationalMixtureStats
        ) or stats.gaussian.mean.shape != (
            k,
            d,
        ):
            raise TypeError(
                f"stats must be the VariationalMixtureStats of summarize for {k} "
                f"components of {d} features, got {type(stats).__name__}"
            )
        if not stats.total_weight > 0:
            raise ValueError("stats has no weight: summarize rows of positive weight")
        self._from_stats(stats)
        self.lower_bound_ = self._lower_bound(stats)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, sample_weight=None):
        """One step of stochastic variational inference on a mini-batch.

        The E-step runs on the batch under the current posterior; its
        statistics, scaled to ``total_samples``, are an unbiased estimate of
        the whole data's, and the running statistics move towards them by
        the step ``rho_t = (learning_offset + t)^(-learning_decay)``:
        ``S <- (1 - rho_t) S + rho_t (total_samples / w_batch) S_batch``; the
        posterior is the M-step of ``S``. With conjugate priors this is the
        natural-gradient step on the global variational parameters (Hoffman,
        Blei, Wang and Paisley 2013, algorithm 2), and with step sizes that
        satisfy the Robbins-Monro conditions it reaches a local optimum of
        the evidence lower bound.

        The first call (on an unfitted mixture) fits its batch as :meth:`fit`
        does (the priors' defaults read from it, ``init_params``,
        ``n_init`` starts of at most ``max_iter`` iterations), then takes a
        step of size 1 to that fit's statistics scaled to ``total_samples``:
        the surplus components die on the first batch by full steps, which
        the schedule's decaying steps move only slowly (they kept two
        components on one cluster, 0.6-1.2% below the batch bound: see the
        user guide). After :meth:`fit` the steps continue from the fitted
        posterior. ``lower_bound_`` is not updated (it needs all the data).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : Ignored
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object

        References
        ----------
        .. [1] M. D. Hoffman, D. M. Blei, C. Wang and J. Paisley, "Stochastic
           variational inference", *Journal of Machine Learning Research* 14,
           2013, pp. 1303-1347.
        """
        first = not hasattr(self, "stats_")
        X = float_input(
            validate_data(self, X, dtype=[np.float64, np.float32], reset=first)
        )
        sw = check_sample_weight(sample_weight, X, allow_all_zero=not first)
        if first:
            if X.shape[0] < max(self.n_components, 2):
                raise ValueError(
                    "Expected n_samples >= n_components (and 2) in the first "
                    f"batch but got n_components = {self.n_components}, "
                    f"n_samples = {X.shape[0]}"
                )
            if not sw.any():
                raise ValueError("sample_weight must not be all zero")
            # The batch fit of the first mini-batch, then a step of size 1.
            self._check_parameters(X, sw)
            fit_variational(self, X, sw, check_random_state(self.random_state))
            self.n_batch_iter_ = 0
            self.n_iter_, self.converged_ = 0, False
            self.lower_bound_, self.lower_bounds_ = -np.inf, []
        if not sw.any():
            return self
        batch = self._stats(X, self._e_step(X), sw)
        t = getattr(self, "n_batch_iter_", 0)
        rho = 1.0 if first else (self.learning_offset + t) ** (-self.learning_decay)
        target = _scaled(batch, self.total_samples / sw.sum())
        self._from_stats(_scaled(self.stats_, 1.0 - rho) + _scaled(target, rho))
        self.n_batch_iter_ = t + 1
        self.n_iter_ = getattr(self, "n_iter_", 0) + 1
        return self

    # -- prediction ----------------------------------------------------------------


def _scaled(stats: VariationalMixtureStats, factor: float) -> VariationalMixtureStats:
    """``stats`` of ``factor`` times as much data with the same means: the
    weights, scatters and entropy multiplied by ``factor``."""
    g = stats.gaussian
    return VariationalMixtureStats(
        GaussianStats(g.weight * factor, g.mean, g.scatter * factor, g.covariance),
        stats.total_weight * factor,
        stats.entropy * factor,
    )
