"""The statistics of the variational hidden Markov models, and their steps.

A variational E-step (``bayeskit.hmm._variational``) gives expected counts
and the family's expected statistics under the current posterior ``q(theta)``;
they add over chunks of sequences, and the M-step of their sum is one
iteration of variational EM over all the chunks (:meth:`summarize` and
:meth:`from_stats`, a map-reduce's two halves).

:meth:`partial_fit` is stochastic variational inference (Hoffman, Blei, Wang
and Paisley 2013, algorithm 2): the E-step on a mini-batch of whole
sequences, its statistics scaled to ``total_samples`` steps, the M-step of
them (``lambda_hat``, the posterior the whole data would give if it were
made of copies of the batch), and a step of the natural parameters ``lambda
<- (1 - rho_t) lambda + rho_t lambda_hat`` with ``rho_t = (learning_offset +
t)^(-learning_decay)``. Sequences are the mini-batches, as Foti, Xu, Laird and
Fox (2014) take sub-chains: the local (path) posterior is exact within a
sequence. The natural parameters are the Dirichlet concentrations and, for
a Normal-Wishart ``(m, beta, W^{-1}, nu)``, ``(beta, beta m, W^{-1} + beta m
m^T, nu)``: the step on the third is taken in centred form (no difference of
large numbers).

The first call on a model without a posterior fits its mini-batch by batch
variational EM (:meth:`fit`: its start and ``n_iter`` iterations), then takes
a step of size 1 to the statistics of that fit scaled to ``total_samples``;
the schedule's steps follow. Variational HMMs start on long plateaus of the
bound (two true states shared by one, a state barely used) that batch
iterations cross in 10 to 25 iterations; the schedule's decaying steps add
up to about 14 such iterations in 20 epochs of 10 mini-batches, and ended
2-26% below the batch fit from the same start on simulated data. The
first mini-batch crosses the plateau by full steps, where they are cheap,
and the steps then refine its fit over all the data (within 1% of the batch
fit from the same start in those runs: the user guide's table).

References
----------
.. [1] M. D. Hoffman, D. M. Blei, C. Wang and J. Paisley, "Stochastic
   variational inference", *Journal of Machine Learning Research* 14, 2013,
   pp. 1303-1347.
.. [2] N. Foti, J. Xu, D. Laird and E. Fox, "Stochastic variational inference
   for hidden Markov models", *Advances in Neural Information Processing
   Systems* 27, 2014.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from numbers import Real

import numpy as np

from .._base.em import described
from .._base.svi import blend_normal, scaled_stats, step_size
from .._layout import add_described
from .._validation import Interval, _fit_context, check_is_fitted
from ..graph import ChainStats

__all__ = [
    "SVI_CONSTRAINTS",
    "NormalStats",
    "VariationalChainStats",
    "start_schedule",
    "svi_step",
]

#: The step schedule's parameters, as :class:`~bayeskit.BayesianGaussianMixture`'s.
SVI_CONSTRAINTS: dict = {
    "total_samples": [Interval(Real, 0.0, None, closed="neither")],
    "learning_offset": [Interval(Real, 1.0, None, closed="left")],
    "learning_decay": [Interval(Real, 0.5, 1.0, closed="right")],
}


@dataclass(frozen=True)
class VariationalChainStats:
    """What a variational E-step gives on some sequences.

    Attributes
    ----------
    chain : ChainStats
        Expected start, transition and occupancy counts (weighted).
    emission : object
        The family's expected statistics.
    lower_bound : float
        The log of the sub-normalised evidence of the sequences under the
        expected log-parameters (the bound's data term; from ``summarize``),
        or the whole bound of the posterior the E-step ran under (inside a
        fit, where the KL divergences were subtracted).

    Statistics of chunks of sequences add with ``+``.
    """

    chain: object
    emission: object
    lower_bound: float
    #: The fitted posterior the statistics were computed under (set by the
    #: public ``summarize``; ``bayeskit._layout.Layout``).
    layout: object = field(default=None, compare=False, repr=False)

    def __add__(self, other):
        """Statistics of two chunks of sequences: counts and log evidence add."""
        if not isinstance(other, VariationalChainStats):
            return NotImplemented
        return add_described(self, other, _add)

    def __radd__(self, other):
        if isinstance(other, int) and other == 0:
            return self
        return NotImplemented

    def scaled(self, factor: float) -> VariationalChainStats:
        """The statistics of ``factor`` times as much data alike: every count
        and the evidence multiplied by ``factor`` (the means kept)."""
        c = self.chain
        chain = ChainStats(
            c.start * factor, c.transitions * factor, c.occupancy * factor
        )
        emission = scaled_stats(self.emission, factor)
        return VariationalChainStats(chain, emission, self.lower_bound * factor)


def start_schedule(model) -> None:
    """The attributes of a stochastic fit that ``partial_fit`` starts, after
    the batch fit of its first mini-batch: no step taken yet
    (``n_batch_iter_`` 0, which makes the first step of size 1), no bound."""
    model.n_batch_iter_, model.n_iter_, model.converged_ = 0, 0, False
    model.lower_bound_, model.lower_bounds_ = -np.inf, []
    model.monitor_ = model._new_monitor()


def svi_step(model, stats, lengths, weights, take) -> None:
    """One step of stochastic variational inference of a variational HMM (see
    the module): ``stats`` of the mini-batch's sequences scaled to
    ``total_samples`` steps, and ``take(target, rho)`` moving the posterior
    towards their M-step by ``rho`` (1 after the batch fit of a first
    mini-batch, then the schedule's); the step counted."""
    steps = float(np.sum(lengths) if weights is None else weights @ lengths)
    # A schedule that partial_fit started (not one after fit) steps by 1 first.
    started = "n_batch_iter_" in model.__dict__
    t = getattr(model, "n_batch_iter_", 0)
    rho = 1.0 if started and t == 0 else step_size(model, t)
    take(stats.scaled(model.total_samples / steps), rho)
    model.n_batch_iter_ = t + 1
    model.n_iter_ = getattr(model, "n_iter_", 0) + 1


def _add(a: VariationalChainStats, b: VariationalChainStats):
    return VariationalChainStats(
        a.chain + b.chain, a.emission + b.emission, a.lower_bound + b.lower_bound
    )


@dataclass(frozen=True)
class NormalStats:
    """Weight ``(K,)``, mean ``(K, d)`` and centred scatter of every state:
    ``(K, d, d)`` (full, tied) or ``(K, d)`` (diag, spherical). They add by
    the pairwise merge of Chan, Golub and LeVeque (1979)."""

    weight: np.ndarray
    mean: np.ndarray
    scatter: np.ndarray

    def __add__(self, other: NormalStats) -> NormalStats:
        if not isinstance(other, NormalStats):
            return NotImplemented
        w = self.weight + other.weight
        safe = np.where(w > 0, w, 1.0)
        frac = np.where(w > 0, other.weight / safe, 0.0)
        delta = other.mean - self.mean
        mean = self.mean + delta * frac[:, None]
        coef = self.weight * frac  # = w_a w_b / (w_a + w_b)
        merge = (
            _outer(coef, delta) if self.scatter.ndim == 3 else coef[:, None] * delta**2
        )
        return NormalStats(w, mean, self.scatter + other.scatter + merge)

    def scaled(self, factor: float) -> NormalStats:
        return NormalStats(self.weight * factor, self.mean, self.scatter * factor)


def _outer(coef, delta):
    """``coef_k delta_k delta_k^T`` of every state, ``(K, d, d)``."""
    return coef[:, None, None] * delta[:, :, None] * delta[:, None, :]


def _blend_gaussian(model, old: dict, rho: float) -> None:
    """The step of the Normal-Wishart (Normal-Gamma) natural parameters from
    ``old`` to the posterior on ``model``, in place."""
    a, b = 1.0 - rho, rho
    ctype = model.covariance_type
    extra = 0.0
    if "m" in model.params:
        model.beta_posterior_, model.means_posterior_, w, dev = blend_normal(
            a,
            b,
            old["beta_posterior_"],
            old["means_posterior_"],
            model.beta_posterior_,
            model.means_posterior_,
        )
        extra = {
            "full": lambda: _outer(w, dev),
            "tied": lambda: np.einsum("k,ki,kj->ij", w, dev, dev),
            "diag": lambda: w[:, None] * dev**2,
            "spherical": lambda: w * (dev**2).sum(axis=1),
        }[ctype]()
    if "c" in model.params:
        model.dof_posterior_ = a * old["dof_posterior_"] + b * np.asarray(
            model.dof_posterior_
        )
        if ctype == "tied":
            model.dof_posterior_ = float(model.dof_posterior_)
        model.scale_posterior_ = (
            a * old["scale_posterior_"] + b * model.scale_posterior_ + extra
        )


class VariationalHMMStatistics:
    """``summarize``, ``from_stats`` and ``partial_fit`` of the variational
    hidden Markov models (a mixin of :class:`VariationalHMMMixin`)."""

    # Expected statistics under different posteriors of one model add (the
    # running sums of incremental and stochastic variational inference).
    _em_statistics = True

    def summarize(self, X, lengths=None, *, sequence_weight=None):
        """Expected statistics of a chunk of sequences under the current
        posterior (the variational E-step on ``X`` alone).

        The chain's expected counts, the family's expected statistics and
        the chunk's log evidence under the expected log-parameters; they add
        with ``+``, and ``model.from_stats(sum(model.summarize(c) for c in
        chunks))`` is one iteration of variational EM over all the chunks
        (whole sequences: a sequence cut between two chunks is two
        sequences). The statistics carry the posterior they were computed
        under, so that a fresh estimator (a map-reduce's driver) reads them.

        Parameters
        ----------
        X : array-like of shape (n_steps, n_features) or list of array-like
            The chunk's sequences, as in :meth:`fit`.
        lengths : array-like of int of shape (n_sequences,), default=None
            As in :meth:`fit`.
        sequence_weight : array-like of shape (n_sequences,), default=None
            As in :meth:`fit`.

        Returns
        -------
        stats : VariationalChainStats
        """
        check_is_fitted(self)
        Xt, lengths, weights = self._data(X, lengths, sequence_weight, reset=False)
        self._vb_check()
        stats = self._vb_e_step(Xt, lengths, weights)
        return replace(stats, layout=described(self))

    def from_stats(self, stats):
        """The variational M-step from summed statistics (see
        :meth:`summarize`): the posteriors of the letters of ``params``.

        ``lower_bound_`` becomes the evidence lower bound of the posterior
        the statistics were computed under (as the bound :meth:`fit` reports
        for an iteration).

        Parameters
        ----------
        stats : VariationalChainStats
            The statistics of :meth:`summarize`, added over chunks.

        Returns
        -------
        self : object
        """
        if isinstance(stats, VariationalChainStats) and stats.layout is not None:
            stats.layout.apply_if_fresh(self)
            stats = replace(stats, layout=None)
        check_is_fitted(self)
        k = self.n_components
        if not (
            isinstance(stats, VariationalChainStats)
            and np.shape(stats.chain.start) == (k,)
            and self._vb_emission_matches(stats.emission)
        ):
            raise TypeError(
                f"stats must be the VariationalChainStats of summarize for {k} "
                f"states of this model, got {type(stats).__name__}"
            )
        self._vb_check()
        self.lower_bound_ = stats.lower_bound - self._vb_kl()
        self._vb_m_step(stats)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, lengths=None, *, y=None, sequence_weight=None):
        """One step of stochastic variational inference on a mini-batch of
        sequences.

        The E-step runs on the batch's sequences under the current
        posterior; its statistics, scaled by ``total_samples`` over the
        batch's (weighted) steps, give the posterior ``lambda_hat`` that the
        whole data would give if it were made of copies of the batch, and
        the posterior's natural parameters move towards it by the step
        ``rho_t = (learning_offset + t)^(-learning_decay)``: ``lambda <- (1 -
        rho_t) lambda + rho_t lambda_hat`` (Hoffman, Blei, Wang and Paisley
        2013, algorithm 2; sequences as the mini-batches, as Foti et al.
        2014 take sub-chains). With step sizes that satisfy the
        Robbins-Monro conditions (``0.5 < learning_decay <= 1``) this
        reaches a local optimum of the evidence lower bound. The letters of
        ``params`` move, the others are kept.

        The first call on an unfitted model fits its batch as :meth:`fit`
        does (``init_params``, hmmlearn's start, ``n_iter`` iterations), then
        takes a step of size 1 to that fit's statistics scaled to
        ``total_samples``: the plateaus of the bound near the start are
        crossed by full steps on the first batch, which the schedule's small
        steps cross slowly (see the user guide's table); after :meth:`fit`
        the steps continue from the fitted posterior by the schedule.
        ``lower_bound_`` is not updated (it needs all the data: see
        :meth:`summarize` and :meth:`from_stats`).

        Parameters
        ----------
        X : array-like of shape (n_steps, n_features) or list of array-like
            The mini-batch's sequences, as in :meth:`fit`.
        lengths : array-like of int of shape (n_sequences,), default=None
            As in :meth:`fit`.
        y : None
            Ignored.
        sequence_weight : array-like of shape (n_sequences,), default=None
            As in :meth:`fit`.

        Returns
        -------
        self : object

        References
        ----------
        .. [1] M. D. Hoffman, D. M. Blei, C. Wang and J. Paisley, "Stochastic
           variational inference", *Journal of Machine Learning Research* 14,
           2013, pp. 1303-1347.
        .. [2] N. Foti, J. Xu, D. Laird and E. Fox, "Stochastic variational
           inference for hidden Markov models", *Advances in Neural
           Information Processing Systems* 27, 2014.
        """
        first = "lower_bounds_" not in self.__dict__  # not fitted, nor started
        Xt, lengths, weights = self._data(X, lengths, sequence_weight, reset=first)
        self._components()  # the hyperparameters and letters, checked
        if first:  # the batch fit on the first mini-batch (see the module)
            self._vb_fit(Xt, lengths, weights)
            start_schedule(self)
        else:
            self._vb_check()

        def take(target, rho):
            old = {name: np.copy(getattr(self, name)) for name in self._vb_names()}
            self._vb_m_step(target)
            self._vb_blend(old, rho)
            self._vb_publish()

        svi_step(self, self._vb_e_step(Xt, lengths, weights), lengths, weights, take)
        return self

    def _vb_blend(self, old: dict, rho: float) -> None:
        """``lambda <- (1 - rho) lambda_old + rho lambda`` for the posteriors
        of the letters of ``params`` (the chain's Dirichlet concentrations
        here, the family's in ``_vb_emission_blend``)."""
        chain = (("s", "startprob_posterior_"), ("t", "transmat_posterior_"))
        for letter, name in chain:
            if letter in self.params:
                new = (1.0 - rho) * old[name] + rho * getattr(self, name)
                setattr(self, name, new)
        self._vb_emission_blend(old, rho)
