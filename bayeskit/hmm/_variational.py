"""What the variational hidden Markov models share: the chain's half.

Mean-field variational Bayes for a hidden Markov model (MacKay 1997; Beal
2003, chapter 3) keeps a posterior ``q(pi) q(A) q(theta)`` over the start
distribution, the rows of the transition matrix (Dirichlet posteriors) and
the emission parameters, and a posterior ``q(Z)`` over the state paths. With
conjugate priors the loop is Baum-Welch with two changes
(``bayeskit._base.variational``):

- **E-step**: forward-backward on the chain, fed by the *expected* log
  parameters: ``exp E[log pi_i]``, ``exp E[log A_ij]`` (which do not sum to
  one) and the expected log emission densities ``E[log p(x_t | theta_k)]``.
  The chain kernels take normalised tables, so the tables are normalised and
  their normalisers moved where they belong: the start's into the sequence's
  evidence, row ``i``'s into the message of every step in state ``i`` that
  has a successor. The path distribution is unchanged, and the log of the
  sub-normalised evidence is exact;
- **M-step**: the expected counts added to the priors' concentrations (and
  the family's posterior hyperparameters).

The evidence lower bound of ``q(theta)`` at its optimal ``q(Z)`` is that log
evidence minus the Kullback-Leibler divergences of the posteriors from their
priors (Beal 2003, eq. 3.57). As hmmlearn's monitor, the bound reported at an
iteration is that of the posterior the iteration starts from (computed with
its E-step); the fitted posterior is one M-step further.

References
----------
.. [1] D. J. C. MacKay, "Ensemble learning for hidden Markov models",
   technical report, Cavendish Laboratory, University of Cambridge, 1997.
.. [2] M. J. Beal, *Variational Algorithms for Approximate Bayesian
   Inference*, PhD thesis, Gatsby Computational Neuroscience Unit,
   University College London, 2003, chapter 3.
.. [3] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, sections 10.1 and 13.2.
"""

from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np
from scipy.special import logsumexp
from sklearn.utils import check_random_state

from .._base.sequences import _observed_steps
from .._base.variational import fit_variational
from .._validation import _fit_context
from ..graph import ChainParams, LatentChain
from ..priors import Dirichlet
from ._base import _handler
from ._vonline import VariationalChainStats, VariationalHMMStatistics

#: Steps of the sequences one pass of the variational E-step takes at most
#: at once, and the bytes of the arrays that pass may hold (the steps of a
#: block are those bytes over the bytes a step takes, ``block_steps``).
_BLOCK_STEPS = 1 << 13
_BLOCK_BYTES = 1 << 18
_MIN_BLOCK_STEPS = 256

__all__ = [
    "ExpectedChain",
    "VariationalChainStats",
    "VariationalHMMMixin",
    "block_steps",
    "chain_e_step",
    "sum_over_blocks",
]

_log = logging.getLogger("bayeskit.hmm")


def chain_e_step(log_lik, q_start, q_trans, lengths, weights=None):
    """The chain's half of a variational E-step (see the module).

    Parameters
    ----------
    log_lik : ndarray of shape (n_steps, n_states)
        The expected log emission densities ``E[log p(x_t | theta_k)]`` of
        every step (0 for a gap).
    q_start, q_trans : Dirichlet
        The posteriors of the start distribution and of the rows of the
        transition matrix.
    lengths : ndarray of int of shape (n_sequences,)
    weights : ndarray of shape (n_sequences,), default=None
        Weight of every sequence in the counts and the evidence.

    Returns
    -------
    resp : ndarray of shape (n_steps, n_states)
        The step posteriors of ``q(Z)``, times their sequence's weight.
    stats : ChainStats
        The expected start and transition counts (weighted).
    log_evidence : float
        The (weighted) sum over sequences of ``log sum_z exp(E[log p(x, z |
        theta)])``: the bound's first term.
    """
    messages = np.array(log_lik, dtype=float)
    return ExpectedChain(q_start, q_trans).e_step(messages, lengths, weights)


class ExpectedChain:
    """The chain under the expected log parameters of ``q_start`` and
    ``q_trans``, normalised once for all the blocks of an E-step (see the
    module): :meth:`e_step` is :func:`chain_e_step` of one block."""

    def __init__(self, q_start, q_trans):
        e_start, e_trans = q_start.expected_log(), q_trans.expected_log()
        self.c_start = logsumexp(e_start)
        self.c_rows = logsumexp(e_trans, axis=1)
        self.chain = LatentChain(len(e_start))
        self.params = ChainParams(
            np.exp(e_start - self.c_start), np.exp(e_trans - self.c_rows[:, None])
        )

    def e_step(self, messages, lengths, weights=None):
        """:func:`chain_e_step` of the expected log densities ``messages``,
        which it overwrites."""
        has_next = np.ones(len(messages), dtype=bool)
        has_next[np.cumsum(lengths) - 1] = False
        np.add(messages, self.c_rows, out=messages, where=has_next[:, None])
        del has_next
        chain = self.chain
        post = chain.posterior(messages, self.params, lengths, weights)
        del messages
        evidence = post.log_evidence + self.c_start
        stats = chain.stats(post, lengths, weights)
        resp = post.posterior
        if weights is None:
            total = float(evidence.sum())
        else:
            total = float(weights @ evidence)
            resp *= np.repeat(weights, lengths)[:, None]
        return resp, stats, total


def block_steps(n_states: int, n_features: int, family_bytes: int = 0) -> int:
    """Steps of the sequences an E-step takes at once: ``_BLOCK_BYTES`` over
    the bytes its arrays take per step (some ``8 (6 K + 4 d)``: the expected
    log densities, the chain's lattices and posteriors, the deviations and
    their whitened squares, for ``K`` states and ``d`` features; plus
    ``family_bytes``, what an emission family's own statistics take), and at
    most ``_BLOCK_STEPS`` (at least ``_MIN_BLOCK_STEPS`` below that)."""
    per_step = 8 * (6 * n_states + 4 * n_features) + family_bytes
    return int(min(_BLOCK_STEPS, max(_MIN_BLOCK_STEPS, _BLOCK_BYTES // per_step)))


def sum_over_blocks(e_step, X, lengths, weights=None, steps=None):
    """``e_step(X, lengths, weights)`` of the sequences taken in blocks of
    about ``steps`` steps (default ``_BLOCK_STEPS``; a sequence longer than a
    block is one block), their statistics added, so that what an E-step
    holds at once does not grow with the data."""
    steps = _BLOCK_STEPS if steps is None else steps
    lengths = np.asarray(lengths)
    ends = np.cumsum(lengths)
    if ends[-1] <= steps or lengths.size == 1:
        return e_step(X, lengths, weights)
    starts = ends - lengths
    cuts = np.flatnonzero(np.diff(starts // steps)) + 1
    del ends
    total = None
    for a, b in zip(np.r_[0, cuts], np.r_[cuts, lengths.size]):
        part = e_step(
            X[starts[a] : starts[b - 1] + lengths[b - 1]],
            lengths[a:b],
            None if weights is None else weights[a:b],
        )
        total = part if total is None else total + part
    return total


class _Run:
    """The hooks of :func:`~bayeskit._base.variational.fit_variational` for a
    variational HMM (one start: hmmlearn's)."""

    n_init = 1
    warm_start = False
    verbose = 0
    verbose_interval = 1

    def __init__(self, model, X, lengths, weights=None, e_step=None):
        self.model, self.lengths, self.weights = model, lengths, weights
        self.max_iter, self.tol = model.n_iter, model.tol
        # The E-step's statistics (a distributed one's, on Dask input).
        self.e_step = e_step or (lambda: model._vb_e_step(X, lengths, weights))

    def _initialize(self, X, sw, random_state):
        self.model._vb_initialize(X, self.lengths, self.weights)

    def _e_step(self, X):
        """The statistics, with the bound of the posterior they ran under."""
        stats = self.e_step()
        return replace(stats, lower_bound=stats.lower_bound - self.model._vb_kl())

    def _stats(self, X, stats, sw):
        return stats

    def _from_stats(self, stats):
        self.model._vb_m_step(stats)

    def _lower_bound(self, stats):
        return stats.lower_bound

    def _get_parameters(self):
        return {name: getattr(self.model, name) for name in self.model._vb_names()}

    def _set_parameters(self, params):
        for name, value in params.items():
            setattr(self.model, name, value)


class VariationalHMMMixin(VariationalHMMStatistics):
    """The variational fit of an HMM: the chain's posteriors, hmmlearn's
    start and checks, and the loop (placed before the EM model whose
    inference it reuses: ``startprob_``, ``transmat_`` and the family's point
    parameters are the posterior means)."""

    # hmmlearn's letter -> the (prior, posterior) attributes it starts.
    _vb_groups: dict = {
        "s": ("startprob_prior_", "startprob_posterior_"),
        "t": ("transmat_prior_", "transmat_posterior_"),
    }

    def _vb_names(self):
        return [name for names in self._vb_groups.values() for name in names]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, lengths=None, *, y=None, sequence_weight=None):
        """Estimate the posterior over the parameters by variational EM.

        The parameters whose letters are in ``init_params``, and those whose
        prior or posterior hyperparameters are not set, start as hmmlearn's
        do (from ``random_state``); the others start from the attributes as
        they are (so that ``init_params=""`` continues a fit). Every
        iteration is a variational E-step (forward-backward under the
        expected log parameters) and an M-step (the posterior
        hyperparameters of the letters in ``params``), until the bound gains
        less than ``tol`` or ``n_iter`` iterations are spent.

        Parameters
        ----------
        X : array-like of shape (n_steps, n_features) or list of array-like
            The steps of all sequences concatenated (with ``lengths``), or one
            array per sequence.
        lengths : array-like of int of shape (n_sequences,), default=None
            Steps of each sequence when X is concatenated; None is one
            sequence.
        y : None
            Ignored.
        sequence_weight : array-like of shape (n_sequences,), default=None
            Non-negative weight of each sequence: its expected counts and its
            log evidence enter times its weight (an integer weight counts the
            sequence as that many copies); the start's counts and k-means are
            weighted alike. None weighs every sequence 1 (hmmlearn's fit).

        Returns
        -------
        self : object

        Notes
        -----
        On a Dask bag of sequences, or a Dask array of rows with ``lengths``,
        every iteration's E-step runs where the partitions live and their
        statistics are summed (:meth:`summarize` per partition, then
        :meth:`from_stats`); the start reads a sample of whole sequences in
        memory (all of them when they hold at most 10,000 steps, and then the
        fit is the in-memory fit).
        """
        if (handler := _handler(X)) is not None:  # a Dask bag or array
            return handler.fit_variational_hmm(self, X, lengths, sequence_weight)
        Xt, lengths, weights = self._data(X, lengths, sequence_weight, reset=True)
        self._components()  # the hyperparameters and letters, checked
        self._vb_fit(Xt, lengths, weights)
        return self

    def _vb_fit(self, Xt, lengths, weights, e_step=None):
        """Variational EM started on ``Xt`` (whose E-step is ``e_step()``
        when given: a distributed one's); the monitor's attributes and the
        posterior means on the model."""
        run = _Run(self, Xt, lengths, weights, e_step)
        self.__dict__.pop("n_batch_iter_", None)  # a new schedule for partial_fit
        monitor = self._new_monitor()
        fit_variational(run, Xt, None, self.random_state, monitor=monitor)
        for name in ("converged_", "n_iter_", "lower_bound_", "lower_bounds_"):
            setattr(self, name, getattr(run, name))
        self.monitor_ = monitor
        self._vb_publish()

    # -- start ---------------------------------------------------------------------
    def _vb_needs_init(self, letter):
        """hmmlearn's rule: a letter in ``init_params`` (a logged warning if
        its attributes are set), or one whose attributes are not all set."""
        names = self._vb_groups[letter]
        if letter in self.init_params:
            for name in names:
                if name in self.__dict__:
                    _log.warning(
                        "Even though the %r attribute is set, it will be "
                        "overwritten during initialization because "
                        "'init_params' contains %r",
                        name,
                        letter,
                    )
            return True
        return any(name not in self.__dict__ for name in names)

    def _vb_initialize(self, X, lengths, weights=None):
        """hmmlearn's start of the chain's posteriors (its draws, in its
        order), then the family's (``_vb_emission_start``), then the checks.
        hmmlearn's counts of sequences and steps are weighted by
        ``weights``."""
        k = self.n_components
        rng = check_random_state(self.random_state)
        uniform = np.full(k, 1.0 / k)
        n_seq = len(lengths) if weights is None else weights.sum()
        n_steps = np.sum(lengths) if weights is None else weights @ lengths
        if self._vb_needs_init("s"):
            prior = 1.0 / k if self.startprob_prior is None else self.startprob_prior
            self.startprob_prior_ = np.full(k, prior, dtype=float)
            self.startprob_posterior_ = rng.dirichlet(uniform) * n_seq
        if self._vb_needs_init("t"):
            prior = 1.0 / k if self.transmat_prior is None else self.transmat_prior
            self.transmat_prior_ = np.full((k, k), prior, dtype=float)
            self.transmat_posterior_ = rng.dirichlet(uniform, size=k) * n_steps / k
        row_weight = None if weights is None else np.repeat(weights, lengths)
        self._vb_emission_start(X, n_steps, row_weight)
        self._vb_check()

    def _vb_array(self, name, shape, *, positive=True, signed=False):
        """The attribute ``name`` as a float array of ``shape``, finite and
        positive (or, ``signed``, any finite value); ValueError naming it."""
        value = np.asarray(getattr(self, name), dtype=float)
        if value.shape != tuple(shape):
            raise ValueError(
                f"{name} must have shape {tuple(shape)}, got {value.shape}"
            )
        if not np.isfinite(value).all() or (
            positive and not signed and not (value > 0).all()
        ):
            kind = "finite" if signed else "positive and finite"
            raise ValueError(
                f"{name} must be {kind} (the hyperparameter {name.rstrip('_')} "
                "gives the prior)"
            )
        setattr(self, name, value)
        return value

    def _vb_check(self):
        """The shapes and values of the chain's hyperparameters (hmmlearn's
        ``_check``, plus positivity); the family's in ``_vb_emission_check``."""
        k = self.n_components
        for name in self._vb_groups["s"]:
            self._vb_array(name, (k,))
        for name in self._vb_groups["t"]:
            self._vb_array(name, (k, k))
        self._vb_emission_check()

    # -- E-step --------------------------------------------------------------------
    def _vb_e_step(self, X, lengths, weights=None):
        """Forward-backward under the expected log parameters: the chain's
        counts, the family's statistics and the log evidence under the
        current posterior (the bound's first term; see the module), every
        sequence's times its weight.

        The sequences are taken in blocks (:func:`sum_over_blocks`, of
        :func:`block_steps` steps) whose statistics are added, so that the
        expected log densities and posteriors held at once do not grow with
        the data; the expected log parameters are computed once."""
        chain = ExpectedChain(
            Dirichlet(self.startprob_posterior_), Dirichlet(self.transmat_posterior_)
        )
        expected = self._vb_expected()

        def block(X, lengths, weights):
            resp, chain_stats, log_evidence = chain.e_step(
                self._vb_messages(X, expected), lengths, weights
            )
            observed = self._vb_observed(X)
            if observed is not None:  # gaps add nothing to the family's statistics
                X, resp = X[observed], resp[observed]
            emission = self._vb_emission_stats(X, resp)
            return VariationalChainStats(chain_stats, emission, log_evidence)

        steps = block_steps(self.n_components, X.shape[1])
        return sum_over_blocks(block, X, lengths, weights, steps)

    def _vb_kl(self) -> float:
        """The KL divergences of the current posteriors from their priors."""
        q_start = Dirichlet(self.startprob_posterior_)
        q_trans = Dirichlet(self.transmat_posterior_)
        kl = float(q_start.kl(Dirichlet(self.startprob_prior_)).sum()) + float(
            q_trans.kl(Dirichlet(self.transmat_prior_)).sum()
        )
        return kl + self._vb_emission_kl()

    def _vb_observed(self, X):
        """The steps that are not gaps (None: every one)."""
        return _observed_steps(X)

    def _vb_log_likelihood(self, X):
        """The expected log densities of every step (0 for a gap)."""
        return self._vb_messages(X, self._vb_expected())

    def _vb_messages(self, X, expected):
        """Messages of every step from ``expected`` (the observed steps'
        expected log densities, a function of the observed rows); gaps are 0."""
        observed = self._vb_observed(X)
        if observed is None:
            return expected(X)
        out = np.zeros((len(X), self.n_components))
        if observed.any():
            out[observed] = expected(X[observed])
        return out

    # -- M-step --------------------------------------------------------------------
    def _vb_m_step(self, stats):
        if "s" in self.params:
            self.startprob_posterior_ = self.startprob_prior_ + stats.chain.start
        if "t" in self.params:
            self.transmat_posterior_ = self.transmat_prior_ + stats.chain.transitions
        self._vb_emission_m_step(stats.emission)
        self._vb_publish()

    def _vb_publish(self):
        """The point parameters the inference reads: the posterior means."""
        self.startprob_ = Dirichlet(self.startprob_posterior_).mean()
        self.transmat_ = Dirichlet(self.transmat_posterior_).mean()
        self._vb_emission_publish()
