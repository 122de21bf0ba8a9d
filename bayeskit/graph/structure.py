"""Latent structures: the discrete skeletons that estimators put emissions on.

A structure knows only state indices and log-potentials. :class:`LatentNode`
is the single class (or component) node of naive Bayes, LDA, QDA and the
mixtures: the smallest tree of :mod:`bayeskit.graph.tree`, whose posterior is
the normalised product of its prior and the emission message.
:class:`LatentChain` is the chain of state nodes of the hidden Markov models:
its posterior is forward-backward, its decoding Viterbi
(``bayeskit.graph.chain``), and it learns its own start and transition
tables from their expected counts (:class:`ChainStats`) and a prior
(:class:`ChainPrior`). Priors are duck-typed: any object with ``map`` and
``log_density``, such as ``bayeskit.priors.Dirichlet``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .._logmath import safe_log
from ._checks import cardinality
from .chain import ChainFilter, ChainPosterior, forward, forward_backward, viterbi
from .tree import node_belief

__all__ = [
    "ChainParams",
    "ChainPrior",
    "ChainStats",
    "LatentChain",
    "LatentNode",
    "NodeParams",
    "NodePosterior",
    "NodeStats",
]


@dataclass(frozen=True)
class NodePosterior:
    """Posterior over one latent node for ``n`` rows.

    Attributes
    ----------
    log_resp : ndarray of shape (n, n_states)
        ``log P(z = k | x)``; a row whose every state has zero probability
        stays ``-inf``.
    log_joint : ndarray of shape (n, n_states)
        ``log P(z = k) + log p(x | z = k)``, before normalisation.
    log_evidence : ndarray of shape (n,)
        ``log p(x)``, the normaliser of each row.
    """

    log_resp: np.ndarray
    log_joint: np.ndarray
    log_evidence: np.ndarray


@dataclass(frozen=True)
class NodeParams:
    """The distribution of one latent node: ``weights[k] = P(z = k)``."""

    weights: np.ndarray

    @functools.cached_property
    def log_weights(self) -> np.ndarray:
        return safe_log(self.weights)


@dataclass(frozen=True)
class NodeStats:
    """The (expected) number of rows in every state of one latent node.

    They add with ``+`` (statistics of disjoint rows); :meth:`LatentNode.zeros`
    is their zero.
    """

    counts: np.ndarray

    def __add__(self, other: NodeStats) -> NodeStats:
        return NodeStats(self.counts + other.counts)

    @property
    def total_weight(self) -> np.ndarray:
        """The weight of every state, ``(k,)``."""
        return self.counts


@dataclass(frozen=True)
class LatentNode:
    """One discrete latent node with ``n_states`` states and no parents.

    The structure of the classifiers (the class node) and of the mixtures (the
    component node). It speaks the protocol of every latent structure: the
    posterior from the emission message, decoding, its statistics (a zero,
    ``+``, the weight of every state), MAP parameters from statistics, a prior
    and the previous parameters, the prior's log density, the count of free
    parameters, a start and sampling.
    """

    n_states: int

    def __post_init__(self) -> None:
        # Frozen: the checked int replaces 2.0 or np.int64(2) once, here.
        object.__setattr__(self, "n_states", cardinality(self.n_states, "n_states"))

    # -- inference ---------------------------------------------------------------
    def posterior(self, log_lik: np.ndarray, params) -> NodePosterior:
        """Sum-product on the one-node tree.

        Parameters
        ----------
        log_lik : ndarray of shape (n, n_states)
            The emission message: ``log p(x | z = k)`` for every row and state.
        params : NodeParams or ndarray of shape (n_states,)
            The node's distribution, or ``log P(z = k)`` itself.
        """
        log_joint = log_lik + _log_weights(params)
        log_resp, log_evidence = node_belief(log_joint)
        return NodePosterior(log_resp, log_joint, log_evidence)

    def decode(self, log_lik: np.ndarray, params) -> np.ndarray:
        """Max-product on the one-node tree: the most probable state per row."""
        return np.argmax(log_lik + _log_weights(params), axis=1)

    # -- learning ----------------------------------------------------------------
    def zeros(self) -> NodeStats:
        """The statistics of no row: the zero of ``+``."""
        return NodeStats(np.zeros(self.n_states))

    def stats(self, weights: np.ndarray) -> NodeStats:
        """The statistics of rows whose weight on every state is ``weights``,
        ``(n, n_states)`` (posteriors times sample weights, or one-hot labels)."""
        return NodeStats(np.asarray(weights, dtype=float).sum(axis=0))

    def map_params(
        self, stats: NodeStats, prior=None, previous: NodeParams | None = None
    ) -> NodeParams:
        """The MAP (no prior: maximum-likelihood) distribution of the node.

        ``prior`` is ``bayeskit.priors.Dirichlet`` (read by its mode, as the
        chain's tables) or None; the states' counts normalised otherwise. With
        no weight at all, the previous distribution (uniform with none) stays.
        """
        k = self.n_states
        old = np.full(k, 1.0 / k) if previous is None else previous.weights
        return NodeParams(_table_map(prior, stats.counts, old))

    def log_estimate(self, counts: np.ndarray, prior) -> np.ndarray:
        """``log P(z = k)`` from the (weighted) counts of each state and a prior
        with ``log_estimate(counts, total)``, such as
        ``bayeskit.priors.MEstimate`` (the m-estimate of the class prior) or
        ``bayeskit.priors.Fixed`` (a prior given by the user)."""
        counts = np.asarray(counts, dtype=float)
        return prior.log_estimate(counts, counts.sum())

    def log_prior(self, params: NodeParams, prior=None) -> float:
        """Log density of ``prior`` at ``params``, up to its constant."""
        return 0.0 if prior is None else float(prior.log_density(params.weights))

    def n_parameters(self) -> int:
        """Free parameters of the node's distribution: ``n_states - 1``."""
        return self.n_states - 1

    def init_params(self, random_state=None) -> NodeParams:
        """A first distribution for EM: uniform (a mixture's start comes from
        its first responsibilities, through :meth:`map_params`)."""
        return NodeParams(np.full(self.n_states, 1.0 / self.n_states))

    # -- sampling ----------------------------------------------------------------
    def sample(
        self, params: NodeParams, n_samples: int, random_state: np.random.RandomState
    ) -> np.ndarray:
        """The states of ``n_samples`` independent rows, in scikit-learn's
        order: the number of rows of every state from one multinomial draw,
        then the states sorted (as ``sklearn.mixture.GaussianMixture.sample``)."""
        counts = random_state.multinomial(n_samples, params.weights)
        return np.repeat(np.arange(self.n_states), counts)


def _log_weights(params) -> np.ndarray:
    """``log P(z = k)`` of a :class:`NodeParams` or of a log-probability array."""
    return params.log_weights if isinstance(params, NodeParams) else params


# ---------------------------------------------------------------------------
# The chain of a hidden Markov model
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ChainParams:
    """The parameters of a chain of ``k`` states, as probabilities.

    Attributes
    ----------
    startprob : ndarray of shape (k,)
        ``P(z_1 = i)``.
    transmat : ndarray of shape (k, k)
        ``P(z_{t+1} = j | z_t = i)`` in row ``i``, column ``j``.
    """

    startprob: np.ndarray
    transmat: np.ndarray

    @functools.cached_property
    def log_startprob(self) -> np.ndarray:
        return safe_log(self.startprob)

    @functools.cached_property
    def log_transmat(self) -> np.ndarray:
        return safe_log(self.transmat)


@dataclass(frozen=True)
class ChainStats:
    """Expected statistics of a chain's own parameters, summed over sequences.

    They add with ``+`` (statistics of disjoint sets of sequences), and
    :meth:`LatentChain.zeros` is their zero.

    Attributes
    ----------
    start : ndarray of shape (k,)
        Expected number of sequences starting in each state.
    transitions : ndarray of shape (k, k)
        Expected number of transitions ``i -> j``.
    occupancy : ndarray of shape (k,)
        Expected number of steps spent in each state.
    """

    start: np.ndarray
    transitions: np.ndarray
    occupancy: np.ndarray

    def __add__(self, other: ChainStats) -> ChainStats:
        return ChainStats(
            self.start + other.start,
            self.transitions + other.transitions,
            self.occupancy + other.occupancy,
        )

    @property
    def total_weight(self) -> np.ndarray:
        """The weight of every state: its expected number of steps, ``(k,)``."""
        return self.occupancy


@dataclass(frozen=True)
class ChainPrior:
    """The priors of a chain's two tables, applied by :meth:`LatentChain.map_params`.

    Each is an object with ``map(counts, previous) -> (table, empty_rows)`` and
    ``log_density(table)`` (such as ``bayeskit.priors.Dirichlet``), or
    None for maximum likelihood.
    """

    start: object = None
    transitions: object = None


@dataclass(frozen=True)
class LatentChain:
    """A chain of discrete latent states: the structure of a hidden Markov model.

    It knows only state indices and log-potentials. Its messages come from an
    emission family, in one of two forms: a dense array of emission
    log-likelihoods of shape ``(n_steps, k)``, or a pair ``(table, codes)``,
    step ``t`` emitting row ``codes[t]`` of a ``(n_rows, k)`` table (the
    categorical family's form; a pair ``(array, None)`` is the dense form).
    Inference is the chain kernels of ``bayeskit.graph.chain``: sum-product
    (forward-backward) for posteriors, max-product (Viterbi) for decoding.
    Learning is its own statistics (:class:`ChainStats`) turned into
    parameters by a prior (:class:`ChainPrior`): Baum-Welch's update of the
    start and transition tables (Rabiner 1989, eqs. 40a-b).

    Parameters
    ----------
    n_states : int
        Number of states ``k``.
    update_start, update_transitions : bool, default=True
        Whether :meth:`map_params` re-estimates the start distribution and the
        transition matrix; a table not updated keeps its previous value.

    References
    ----------
    .. [1] L. R. Rabiner, "A tutorial on hidden Markov models and selected
       applications in speech recognition", Proceedings of the IEEE 77(2),
       257-286, 1989.
    """

    n_states: int
    update_start: bool = True
    update_transitions: bool = True

    def __post_init__(self) -> None:
        # Frozen: the checked int replaces 2.0 or np.int64(2) once, here.
        object.__setattr__(self, "n_states", cardinality(self.n_states, "n_states"))

    # -- inference ---------------------------------------------------------------
    def posterior(
        self, messages, params: ChainParams, lengths=None, weights=None
    ) -> ChainPosterior:
        """Sum-product: every step's posterior and the expected transitions.

        ``weights`` (one per sequence) weigh the expected counts, as in
        ``forward_backward``; give :meth:`stats` the
        same ones. Raises ValueError for a sequence of probability zero.
        """
        table, codes = _as_message(messages)
        return forward_backward(
            params.log_startprob,
            params.log_transmat,
            table,
            lengths,
            symbols=codes,
            weights=weights,
        )

    def filter(self, messages, params: ChainParams, lengths=None) -> ChainFilter:
        """Sum-product forward only: ``log_evidence`` of every sequence (``-inf``
        for an impossible one) and its last filtered message."""
        table, codes = _as_message(messages)
        return forward(
            params.log_startprob, params.log_transmat, table, lengths, symbols=codes
        )

    def decode(
        self, messages, params: ChainParams, lengths=None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Max-product: the most probable path and its log joint probability."""
        table, codes = _as_message(messages)
        return viterbi(
            params.log_startprob, params.log_transmat, table, lengths, symbols=codes
        )

    # -- learning ----------------------------------------------------------------
    def zeros(self) -> ChainStats:
        """The statistics of no sequence: the zero of ``+``."""
        k = self.n_states
        return ChainStats(np.zeros(k), np.zeros((k, k)), np.zeros(k))

    def stats(self, posterior: ChainPosterior, lengths, weights=None) -> ChainStats:
        """The chain's expected statistics from a :meth:`posterior`.

        ``weights`` must be those the posterior was computed with (its
        transition counts are already weighted by them).
        """
        gamma = posterior.posterior
        lengths = np.asarray(lengths, dtype=np.intp)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        if weights is None:
            start = gamma[starts].sum(axis=0)
        else:
            start = np.asarray(weights, dtype=float) @ gamma[starts]
        if posterior.symbol_counts is not None:  # already weighted, per table row
            occupancy = posterior.symbol_counts.sum(axis=0)
        elif weights is None:
            occupancy = gamma.sum(axis=0)
        else:
            occupancy = weights @ np.add.reduceat(gamma, starts, axis=0)
        return ChainStats(start, posterior.transition_counts.copy(), occupancy)

    def map_params(
        self,
        stats: ChainStats,
        prior: ChainPrior | None = None,
        previous: ChainParams | None = None,
    ) -> ChainParams:
        """The MAP (or, with no prior, maximum-likelihood) tables.

        Exact zeros of ``previous`` stay zero (structural zeros survive EM), a
        row with nothing to normalise keeps its previous values, and a table
        not updated (``update_start``, ``update_transitions``) is
        ``previous``'s.
        """
        prior = prior or ChainPrior()
        k = self.n_states
        if previous is None:
            previous = ChainParams(np.full(k, 1.0 / k), np.full((k, k), 1.0 / k))
        start, trans = previous.startprob, previous.transmat
        if self.update_start:
            start = _table_map(prior.start, stats.start, previous.startprob)
        if self.update_transitions:
            trans = _table_map(prior.transitions, stats.transitions, previous.transmat)
        return ChainParams(start, trans)

    def log_prior(self, params: ChainParams, prior: ChainPrior | None = None) -> float:
        """Log density of the priors at ``params``, up to their constants."""
        if prior is None:
            return 0.0
        total = 0.0
        for table, p in (
            (params.startprob, prior.start),
            (params.transmat, prior.transitions),
        ):
            if p is not None:
                total += float(p.log_density(table))
        return total

    def n_parameters(self) -> int:
        """Free scalars of the tables that :meth:`map_params` updates."""
        k = self.n_states
        return self.update_start * (k - 1) + self.update_transitions * k * (k - 1)

    def init_params(
        self,
        random_state: np.random.RandomState,
        previous: ChainParams | None = None,
        start: bool = True,
        transitions: bool = True,
    ) -> ChainParams:
        """First tables for EM: rows drawn from a flat Dirichlet (those asked
        for; the others are ``previous``'s), in the order start, transitions."""
        k = self.n_states
        p0 = None if previous is None else previous.startprob
        a0 = None if previous is None else previous.transmat
        if start:
            p0 = random_state.dirichlet(np.ones(k))
        if transitions:
            a0 = random_state.dirichlet(np.ones(k), size=k)
        return ChainParams(p0, a0)

    # -- sampling ----------------------------------------------------------------
    def sample(
        self,
        params: ChainParams,
        n_steps: int,
        random_state: np.random.RandomState,
        currstate: int | None = None,
    ) -> np.ndarray:
        """One state path of ``n_steps`` steps, from ``currstate`` if given."""
        k = self.n_states
        states = np.empty(n_steps, dtype=int)
        state = (
            random_state.choice(k, p=params.startprob)
            if currstate is None
            else currstate
        )
        for t in range(n_steps):
            if t:
                state = random_state.choice(k, p=params.transmat[state])
            states[t] = state
        return states


def _as_message(messages) -> tuple[np.ndarray, np.ndarray | None]:
    """``(table, codes)`` from either form of a message (see LatentChain)."""
    if isinstance(messages, tuple):
        return messages
    return messages, None


def _table_map(prior, counts: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """Rows of a table from expected counts: the prior's MAP update, or (no
    prior) the counts normalised, with ``previous``'s zeros kept and its rows
    kept where nothing is left to normalise."""
    if prior is not None:
        return prior.map(counts, previous)[0]
    new = np.where(previous == 0, 0.0, np.maximum(counts, 0.0))
    total = new.sum(axis=-1, keepdims=True)
    return np.where(total > 0, new / np.where(total > 0, total, 1.0), previous)
