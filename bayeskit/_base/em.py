"""The base of the models fitted by EM: posterior, statistics, parameters in a loop.

A model builds its components in one method, ``_make_components()``, which
returns the triple ``(structure, emission, prior)``: a latent structure of
:mod:`bayeskit.graph.structure`, an emission family of
:mod:`bayeskit.emissions` and a :class:`LatentPrior` of both. EM is then the
same few lines for every model (the mixtures and the hidden Markov models):
the expected statistics of the data under the current parameters (the
structure's posterior, fed by the emission's messages, weighting both parts'
statistics: :class:`LatentStats`), and the parameters from the statistics
and the prior (both parts' ``map_params``), monitored by a convergence
monitor object. The statistics add, so a model's public ``summarize``
(statistics of a chunk) and ``from_stats`` (parameters from their sum) fit
data chunk by chunk or where it lives, and ``fit`` is that reduce inside the
EM loop. Where the peers' habits differ (hmmlearn's ``n_iter`` and total
objective, scikit-learn's ``max_iter``, objective per sample and
``ConvergenceWarning``), a :class:`Convention` says which, and the monitor
prints the peer's messages.

References
----------
.. [1] A. P. Dempster, N. M. Laird and D. B. Rubin, "Maximum likelihood from
   incomplete data via the EM algorithm", Journal of the Royal Statistical
   Society B 39(1), 1-38, 1977.
.. [2] R. M. Neal and G. E. Hinton, "A view of the EM algorithm that justifies
   incremental, sparse, and other variants", in M. I. Jordan (ed.), Learning
   in Graphical Models, Kluwer, 1998, pp. 355-368.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace

import numpy as np
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.exceptions import ConvergenceWarning

from .._layout import Layout, add_described
from .._warnings import warn

__all__ = [
    "HMMLEARN",
    "SKLEARN",
    "BaseLatentModel",
    "Convention",
    "LatentParams",
    "LatentPrior",
    "LatentStats",
]


@dataclass(frozen=True)
class Convention:
    """The peer's habits for one EM loop: where they differ, and nothing else.

    Attributes
    ----------
    budget : str
        The hyperparameter holding the iteration budget (``n_iter`` in
        hmmlearn, ``max_iter`` in scikit-learn).
    per_sample : bool
        Whether ``lower_bound_`` and the monitored objective are divided by
        the total weight of the data (scikit-learn's mixtures) or are the
        total (hmmlearn).
    warn : bool
        Whether spending the budget without converging emits a
        ``ConvergenceWarning`` (scikit-learn) or is only recorded in
        ``converged_`` and ``monitor_`` (hmmlearn).
    """

    budget: str
    per_sample: bool
    warn: bool


#: hmmlearn's habits: ``n_iter``, the total objective, no warning.
HMMLEARN = Convention("n_iter", per_sample=False, warn=False)
#: scikit-learn's mixtures: ``max_iter``, the objective per sample, a warning.
SKLEARN = Convention("max_iter", per_sample=True, warn=True)


@dataclass(frozen=True)
class LatentParams:
    """The parameters of a model: its structure's and its emission's."""

    structure: object
    emission: object


@dataclass(frozen=True)
class LatentPrior:
    """The prior of a model: its structure's and its emission's (None: none)."""

    structure: object = None
    emission: object = None


@dataclass(frozen=True)
class LatentStats:
    """Expected statistics of some data under a model's parameters.

    The structure's and the emission's statistics, and the log evidence of
    the data (``sum_i w_i log p(x_i)`` under the parameters they were gathered
    with, the E-step's by-product that EM monitors). All three add with ``+``
    (statistics of disjoint data), which is how chunks merge.
    """

    structure: object
    emission: object
    log_evidence: float = 0.0
    #: The fitted model the statistics were computed under (set by the public
    #: ``summarize``), so that ``from_stats`` of a fresh estimator reads them
    #: (``bayeskit._layout.Layout``).
    layout: object = field(default=None, compare=False, repr=False)

    def __add__(self, other: LatentStats) -> LatentStats:
        if not isinstance(other, LatentStats):
            return NotImplemented
        return add_described(self, other, _add_latent_stats)

    def __radd__(self, other):
        # sum(chunks) starts from 0.
        if isinstance(other, int) and other == 0:
            return self
        return NotImplemented

    @property
    def total_weight(self) -> np.ndarray:
        """The weight of every latent state (the structure's)."""
        return self.structure.total_weight

    @property
    def row_weight(self) -> float:
        """The total weight of the rows (or sequences) the statistics came
        from: what the objective per sample is divided by."""
        return float(np.sum(self.total_weight))


def _add_latent_stats(a: LatentStats, b: LatentStats) -> LatentStats:
    return LatentStats(
        a.structure + b.structure,
        a.emission + b.emission,
        a.log_evidence + b.log_evidence,
    )


def described(est) -> Layout:
    """The layout of an EM model's expected statistics: the fitted model they
    were computed under (every attribute but the hyperparameters and the
    statistics themselves)."""
    params = set(est.get_params(deep=False))
    # (What an HMM keeps between calls, the triple's key and the parameters
    # validated under it, is its own: rebuilt from the rest.)
    skip = {"stats_", "_layout", "_triple_of", "_params_of"}
    state = {k: v for k, v in vars(est).items() if k not in params and k not in skip}
    return Layout(type(est), state)


class BaseLatentModel(DensityMixin, BaseEstimator):
    """Base of the models fitted by EM: the mixtures and the hidden Markov models.

    EM is "posterior, statistics, parameters" in a loop.

    A subclass provides ``_make_components()`` (the triple ``(structure,
    emission, prior)``), ``_expected_stats(data, params, components)`` (the
    E-step: a :class:`LatentStats`), ``_current_params()`` /
    ``_set_params(params)`` (its parameters as a :class:`LatentParams`, read
    from and written to its fitted attributes) and ``_new_monitor()``;
    :meth:`_fit_components` runs EM with ``n_init`` starts and
    :meth:`from_stats` is the M-step on summed statistics.

    The monitored objective is the log posterior, ``sum_i w_i log p(x_i) +
    log p(theta)``: the total (hmmlearn's habit) or divided by ``sum_i w_i``
    (scikit-learn's), as the model's :class:`Convention` says. EM never
    decreases it.
    """

    # Statistics are expected under the fitted parameters: those of several
    # parameters of one model add (incremental EM; bayeskit._layout).
    _em_statistics = True

    _convergence_advice = "increase max_iter or tol"
    #: The peer's habits of the loop (see :class:`Convention`).
    _convention = HMMLEARN

    # -- the components path -------------------------------------------------------
    def _make_components(self):
        """The :class:`~bayeskit._base.classifier.Triple` ``(structure, emission,
        prior)`` from the hyperparameters (and, for a model set by hand, the
        parameters' shapes); called in every fit."""
        raise NotImplementedError

    def _components(self):
        """The triple the methods read: here ``_make_components()``; a model
        that stores the triple of its fit returns the stored one."""
        return self._make_components()

    def _params_from_stats(self, stats, previous, components):
        """The M-step: both parts' MAP parameters from ``stats``."""
        structure, emission, prior = components
        return LatentParams(
            structure.map_params(stats.structure, prior.structure, previous.structure),
            emission.map_params(stats.emission, prior.emission, previous.emission),
        )

    def _log_prior_of(self, params, components) -> float:
        """Log density of the prior at ``params`` (up to its constant)."""
        structure, emission, prior = components
        return structure.log_prior(params.structure, prior.structure) + float(
            emission.log_prior(params.emission, prior.emission)
        )

    def _fit_components(
        self, data, initial_params, random_state, expected_stats=None, n_init=None
    ):
        """EM on the components, ``n_init`` starts, the best kept.

        ``initial_params(random_state)`` gives a start. Every iteration computes
        the statistics of ``data`` under the current parameters (E), monitors
        the log posterior of those parameters (log evidence plus log prior),
        and derives the next parameters from the statistics (M); the monitor
        (``_new_monitor()``) says when to stop. Sets the parameters (through
        ``_set_params``), ``stats_`` (the statistics they were derived from),
        ``monitor_``, ``converged_``, ``n_iter_``, ``lower_bound_`` and
        ``lower_bounds_``.

        As hmmlearn's models, and unlike scikit-learn's mixtures, spending the
        iteration budget emits no warning: the monitor records every
        iteration (printing it when ``verbose``) and logs a decrease of the
        objective, and ``converged_`` says whether the gain fell below ``tol``.

        ``expected_stats(data, params, components)``, if given, replaces
        ``_expected_stats`` as the E-step (the Dask integration's reduction
        over the partitions of data that lives elsewhere). ``n_init`` (default:
        the hyperparameter) is the number of starts.
        """
        e_step = expected_stats or self._expected_stats
        components = self._components()
        monitor = self._new_monitor()
        # The starts one after the other from random_state (the draws of a
        # sequential loop), then the iterations from every start through
        # joblib (n_jobs); an E-step of its own (Dask) runs them here.
        n_init = self.n_init if n_init is None else n_init
        starts = [initial_params(random_state) for _ in range(n_init)]
        jobs = [
            (self, e_step, data, p, components, monitor, i)
            for i, p in enumerate(starts)
        ]
        n_jobs = 1 if expected_stats is not None else getattr(self, "n_jobs", None)
        best = None
        for run in _restarts(_chain_em_from_start, jobs, n_jobs):
            bound = run[0]
            # As scikit-learn: the best bound, or the last start when no bound
            # was computed (n_iter=0).
            if best is None or bound > best[0] or best[0] == -np.inf:
                best = run
        bound, params, stats, bounds, n_iter = best
        monitor._reset()
        monitor.history.extend(bounds)
        monitor.iter = n_iter
        self.monitor_ = monitor
        self.converged_ = monitor.reached_tol
        self.n_iter_ = n_iter
        self.lower_bound_ = bound
        self.lower_bounds_ = bounds
        self._set_params(params)
        if stats is None:  # no iteration: the statistics of no data
            structure, emission, _ = components
            stats = LatentStats(structure.zeros(), emission.zeros(self.n_components))
        self.stats_ = stats
        # hmmlearn's convention: reaching ``n_iter`` is no warning
        # (``converged_`` and ``monitor_`` tell), and a decrease of the
        # objective is logged by the monitor. scikit-learn's warns.
        budget = getattr(self, self._convention.budget)
        if self._convention.warn and not self.converged_ and budget > 0:
            warn(
                f"EM did not converge in {budget} iterations (tol={self.tol}): "
                f"{self._convergence_advice}",
                ConvergenceWarning,
            )
        return components

    def from_stats(self, stats):
        """Set the parameters from summed statistics (the M-step); returns self.

        Parameters
        ----------
        stats : LatentStats
            Statistics of the data, such as a sum of :meth:`summarize`'s results
            over chunks computed under the current parameters. Parameters that
            no data reached keep their current values, and the current tables'
            exact zeros stay zero. Statistics from :meth:`summarize` carry the
            fitted model they were computed under, so a fresh estimator (a
            map-reduce's driver) takes that model and gives the same step.

        Returns
        -------
        self : object
        """
        if not isinstance(stats, LatentStats):
            raise TypeError(
                "stats must be the statistics summarize() returns (LatentStats), "
                f"got {type(stats).__name__}"
            )
        if stats.layout is not None:
            stats.layout.apply_if_fresh(self)
        components = self._components()
        previous = self._current_params()
        self._set_params(self._params_from_stats(stats, previous, components))
        # The model's own statistics: their layout is now the model's.
        self.stats_ = stats if stats.layout is None else replace(stats, layout=None)
        return self


# -- restarts through joblib ----------------------------------------------------------
def _restarts(run, jobs: list, n_jobs):
    """``[run(*job) for job in jobs]``, through joblib with ``n_jobs`` (in
    this process, in order, when there is one job or ``n_jobs=None`` outside a
    ``joblib.parallel_config``); under ``joblib.parallel_config(backend=
    "dask")`` the jobs run on a Dask cluster's workers."""
    if len(jobs) == 1 or n_jobs == 1:
        return [run(*job) for job in jobs]
    from joblib import Parallel, delayed

    return Parallel(n_jobs=n_jobs)(delayed(run)(*job) for job in jobs)


def _chain_em_from_start(model, e_step, data, params, components, monitor, init=0):
    """EM from ``params`` (start number ``init``), watched by a copy of
    ``monitor``: ``(bound, params, stats, bounds, n_iter)``."""
    monitor = copy.deepcopy(monitor)
    monitor._reset()
    monitor._begin(init)
    stats = None
    convention = model._convention
    for _ in range(getattr(model, convention.budget)):
        stats = e_step(data, params, components)
        bound = stats.log_evidence + model._log_prior_of(params, components)
        if convention.per_sample:
            bound /= stats.row_weight
        params = model._params_from_stats(stats, params, components)
        monitor.report(bound)
        if monitor.converged:
            break
    monitor._end()
    bounds = list(monitor.history)
    before = getattr(monitor, "before", None)
    bound = bounds[-1] if bounds else (-np.inf if before is None else before)
    return bound, params, stats, bounds, monitor.iter
