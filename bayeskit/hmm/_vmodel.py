"""Variational Bayes for :class:`~bayeskit.HiddenMarkovModel` over any family.

The hooks that the variational loop of ``bayeskit._base.variational`` runs for
``HiddenMarkovModel(inference="variational")``: the chain's half is the one
of the variational HMMs (:func:`~bayeskit.hmm._variational.chain_e_step`, in blocks:
Dirichlet posteriors on the start distribution and the rows of the transition
matrix), the family's half the one of the variational mixtures
(:func:`~bayeskit._base.variational.variational_family`: the family's
conjugate posterior, its expected log densities and its KL divergence).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from sklearn.utils import check_random_state

from .._base.em import LatentParams
from .._base.sequences import _observed_steps
from .._base.svi import blend_posterior
from .._base.variational import fit_variational, variational_family
from ..graph import ChainParams
from ..priors import Dirichlet
from ._variational import (
    ExpectedChain,
    VariationalChainStats,
    block_steps,
    sum_over_blocks,
)
from ._vonline import start_schedule, svi_step

__all__ = ["ChainVariationalRun", "VariationalChainStats", "stochastic_step"]

#: The fitted posterior of every letter of ``params`` / ``init_params``.
_POSTERIORS = {
    "s": "startprob_posterior_",
    "t": "transmat_posterior_",
    "e": "emission_posterior_",
}


class ChainVariationalRun:
    """Variational EM of a hidden Markov model over any family with a
    conjugate prior (one start, hmmlearn's monitor).

    The bound of an iteration is that of the posterior it starts from, at its
    optimal ``q(Z)`` (Beal 2003, eq. 3.57): the log of the sub-normalised
    evidence under the expected log-parameters minus the KL divergences of
    ``q(pi)``, ``q(A)`` and ``q(theta)`` from their priors.
    """

    n_init = 1
    warm_start = False
    verbose = 0
    verbose_interval = 1

    def __init__(self, model, X, lengths, weights, e_step=None):
        # The E-step's statistics under the current posterior when given (a
        # distributed one's, reading the posterior published on the model).
        self.distributed = e_step
        self._family(model)
        self._data(X, lengths, weights)
        k = model.n_components
        self.start_prior = _dirichlet(model.startprob_prior, (k,), "startprob_prior")
        self.trans_prior = _dirichlet(model.transmat_prior, (k, k), "transmat_prior")
        given = model.emission_prior
        self.emission_prior = (
            self.vb.default_prior(self.family, self.rows, self.row_weight)
            if given is None
            else self.vb.check_prior(self.family, given, k)
        )

    @classmethod
    def fitted(cls, model):
        """The run of a fitted model: its priors and posteriors, no data."""
        run = cls.__new__(cls)
        run.distributed = None
        run._family(model)
        run.start_prior = Dirichlet(model.startprob_prior_)
        run.trans_prior = Dirichlet(model.transmat_prior_)
        run.emission_prior = model.emission_prior_
        run.q_start = Dirichlet(model.startprob_posterior_)
        run.q_trans = Dirichlet(model.transmat_posterior_)
        run.q_emission = model.emission_posterior_
        return run

    def _family(self, model):
        self.model = model
        self.max_iter, self.tol = model.n_iter, model.tol
        _, family, _ = model._components()
        self.family = family
        self.vb = variational_family(family)

    def _data(self, X, lengths, weights):
        self.X, self.lengths, self.weights = X, lengths, weights

    @property
    def observed(self):
        """The observed steps of the run's data (None: every one)."""
        return _observed_steps(self.X)

    @property
    def rows(self):
        """The run's observed steps (the start's and the default prior's data)."""
        observed = self.observed
        return self.X if observed is None else self.X[observed]

    @property
    def row_weight(self):
        """The weight of every observed step: its sequence's (made when the
        start asks for it, not kept through the E-steps)."""
        X, weights, observed = self.X, self.weights, self.observed
        row_weight = (
            np.ones(len(X)) if weights is None else np.repeat(weights, self.lengths)
        )
        return row_weight if observed is None else row_weight[observed]

    # -- the hooks of fit_variational ---------------------------------------------
    def _needs_init(self, letter):
        """A letter in ``init_params``, or one whose posterior is not set."""
        return (
            letter in self.model.init_params
            or _POSTERIORS[letter] not in self.model.__dict__
        )

    def _initialize(self, X, sw, random_state):
        """The posteriors of the letters to start: the priors plus hmmlearn's
        random counts for the chain (as its variational models start), plus
        the statistics of first responsibilities for the family (k-means as
        the mixtures start; random ones for the table families, whose codes
        k-means cannot read). The other letters keep the fitted posterior."""
        model, k = self.model, self.model.n_components
        rng = check_random_state(model.random_state)
        uniform = np.full(k, 1.0 / k)
        if self._needs_init("s"):
            self.q_start = self.start_prior.posterior(
                rng.dirichlet(uniform) * len(self.lengths)
            )
        else:
            self.q_start = _given(model, "startprob_posterior_", (k,))
        if self._needs_init("t"):
            self.q_trans = self.trans_prior.posterior(
                rng.dirichlet(uniform, size=k) * np.sum(self.lengths) / k
            )
        else:
            self.q_trans = _given(model, "transmat_posterior_", (k, k))
        if self._needs_init("e"):
            rows, row_weight = self.rows, self.row_weight
            resp = self._first_responsibilities(rng, rows, row_weight)
            stats = self.family.stats(rows, resp * row_weight[:, None])
            self.q_emission = self.vb.posterior(self.family, stats, self.emission_prior)
        else:
            self.q_emission = model.emission_posterior_

    def _first_responsibilities(self, rng, rows, row_weight):
        from ..emissions import Categorical, Multinomial
        from ..mixture._start import initial_responsibilities

        k = self.model.n_components
        if len(rows) < k:
            raise ValueError(
                f"X has too few steps to start {k} states from: n_samples = "
                f"{len(rows)} (observed steps)"
            )
        if isinstance(self.family, (Categorical, Multinomial)):
            return rng.dirichlet(np.ones(k), size=len(rows))
        return initial_responsibilities("kmeans", rows, row_weight, k, rng)

    def _e_step(self, X):
        """The statistics, with the bound of the posterior they ran under."""
        if self.distributed is None:
            stats = self.evidence_stats(X)
        else:
            self.publish()
            stats = self.distributed()
        return replace(stats, lower_bound=stats.lower_bound - self._kl())

    def evidence_stats(self, X):
        """The variational E-step on the run's data: the chain's counts, the
        family's statistics and the log of the sub-normalised evidence (the
        bound's data term), the sequences taken in blocks whose statistics
        are added (:func:`~bayeskit.hmm._variational.sum_over_blocks`), as
        the variational HMMs take them."""
        k = self.model.n_components
        chain = ExpectedChain(self.q_start, self.q_trans)

        expected_of = self.vb.expected_log_likelihood_function(
            self.family, self.q_emission, X.shape[1]
        )

        def messages(X, rows, observed):
            """The expected log densities of the block's steps (0 for a
            gap): an array of the chain's to overwrite, held by no one else."""
            expected = expected_of(rows)
            if observed is None:
                return _owned(expected)
            log_lik = np.zeros((len(X), k))
            log_lik[observed] = expected
            return log_lik

        def block(X, lengths, weights):
            observed = _observed_steps(X)
            rows = X if observed is None else X[observed]
            resp, chain_stats, evidence = chain.e_step(
                messages(X, rows, observed), lengths, weights
            )
            if observed is not None:
                resp = resp[observed]
            emission = self.family.stats(rows, resp)
            return VariationalChainStats(chain_stats, emission, evidence)

        d = X.shape[1]
        # The family's expected log densities and statistics may each hold
        # every state's deviations and a second array of that size (the
        # Gaussian's whitened deviations; its weighted deviations on small
        # blocks): some 4 K d more per step.
        steps = block_steps(k, d, family_bytes=32 * k * d)
        return sum_over_blocks(block, X, self.lengths, self.weights, steps)

    def _kl(self) -> float:
        return (
            float(self.q_start.kl(self.start_prior).sum())
            + float(self.q_trans.kl(self.trans_prior).sum())
            + self.vb.kl(self.q_emission, self.emission_prior)
        )

    def _stats(self, X, stats, sw):
        return stats

    def _from_stats(self, stats):
        """The M-step: the posterior of every letter of ``params``."""
        letters = self.model.params
        if "s" in letters:
            self.q_start = self.start_prior.posterior(stats.chain.start)
        if "t" in letters:
            self.q_trans = self.trans_prior.posterior(stats.chain.transitions)
        if "e" in letters:
            self.q_emission = self.vb.posterior(
                self.family, stats.emission, self.emission_prior
            )

    def _lower_bound(self, stats):
        return stats.lower_bound

    def _get_parameters(self):
        return self.q_start, self.q_trans, self.q_emission

    def _set_parameters(self, params):
        self.q_start, self.q_trans, self.q_emission = params

    # -- results --------------------------------------------------------------------
    def run(self, monitor):
        """Fit; then set the posteriors, their priors, the posterior means (the
        parameters the inference reads) and the monitor's attributes on the
        model."""
        model = self.model
        fit_variational(self, self.X, None, model.random_state, monitor=monitor)
        for name in ("converged_", "n_iter_", "lower_bound_", "lower_bounds_"):
            setattr(model, name, getattr(self, name))
        model.monitor_ = monitor
        self.publish()

    def publish(self):
        """The priors, posteriors and posterior means on the model."""
        model = self.model
        model.startprob_prior_ = self.start_prior.concentration
        model.transmat_prior_ = self.trans_prior.concentration
        model.emission_prior_ = self.emission_prior
        model.startprob_posterior_ = self.q_start.concentration
        model.transmat_posterior_ = self.q_trans.concentration
        model.emission_posterior_ = self.q_emission
        chain = ChainParams(self.q_start.mean(), self.q_trans.mean())
        model._set_params(
            LatentParams(chain, self.vb.point(self.family, self.q_emission))
        )


def stochastic_step(model, X, lengths, weights, first: bool) -> None:
    """One step of stochastic variational inference of ``model`` on the
    mini-batch ``X`` (the named variational HMMs' step,
    :func:`~bayeskit.hmm._vonline.svi_step`): the first is the batch fit of
    the mini-batch, then a step of size 1."""
    if first:  # the batch fit on the first mini-batch
        model._vb_fit(X, lengths, weights)
        start_schedule(model)
    run = ChainVariationalRun.fitted(model)
    run._data(X, lengths, weights)
    letters = [letter in model.params for letter in "ste"]

    def take(target, rho):
        old = run._get_parameters()
        run._from_stats(target)
        run._set_parameters(
            tuple(
                blend_posterior(o, n, rho) if moves else o
                for o, n, moves in zip(old, run._get_parameters(), letters)
            )
        )
        run.publish()

    svi_step(model, run.evidence_stats(X), lengths, weights, take)


def _owned(values) -> np.ndarray:
    """``values`` when it is a C-ordered float64 array owning its data (a new
    array, as a family's expected log-likelihood is), else a float copy."""
    flags = getattr(values, "flags", None)
    if (
        flags is not None
        and values.dtype == np.float64
        and flags.c_contiguous
        and flags.owndata
        and flags.writeable
    ):
        return values
    return np.array(values, dtype=float)


def _dirichlet(value, shape, name) -> Dirichlet:
    try:
        return Dirichlet(np.broadcast_to(np.asarray(value, dtype=float), shape))
    except ValueError:
        raise ValueError(
            f"{name} must be positive and broadcast to shape {shape}, got "
            f"{np.asarray(value).tolist()!r}"
        ) from None


def _given(model, name, shape) -> Dirichlet:
    """The posterior set on the model (a continued fit): its shape checked."""
    value = np.asarray(getattr(model, name), dtype=float)
    if value.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {value.shape}")
    try:
        return Dirichlet(value)
    except ValueError:
        raise ValueError(f"{name} must be positive and finite") from None
