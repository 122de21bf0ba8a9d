"""Chain kernels: belief propagation on the state chain of a hidden Markov model.

Three public functions, all taking the model as log-probabilities and the
observations as emission log-likelihoods (the message each observation sends
into the chain), for one or many sequences at once:

- :func:`forward`: sum-product filtering; the log-likelihood of every sequence
  and the filtered distribution of its last state (the score path, and the
  message to continue a sequence from).
- :func:`forward_backward`: sum-product smoothing; the log-likelihood, the
  posterior marginal of every step and the expected transition counts (the
  E-step of Baum-Welch).
- :func:`viterbi`: max-product; the most probable state path of every sequence.

Sequences follow hmmlearn's convention: the steps of all sequences are rows of
one array, concatenated, and ``lengths`` gives the number of steps of each
(``None`` means one sequence).

Numerics. The sum-product recursion runs on scaled probabilities, with the
start and transition probabilities in probability space (so exact zeros are
ordinary values); a sequence in which the scaling loses a state that the
model's zero transitions may make necessary later is recomputed exactly by a
log-space recursion. The max-product recursion runs in log space. Why this is
exact for every input is argued step by step in the user guide,
:ref:`chain-numerics` (``docs/hmm.rst``).

The compiled kernels live in :mod:`bayeskit.graph._chain_kernels` and assume
valid input: the public functions validate their arguments once, on entry,
with the checks of ``bayeskit.graph._chain_checks``. The planning (threads,
tasks, kernels specialised to the number of states) is here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numba
import numpy as np

from .. import _jit
from .._jit import run_parallel
from .._logmath import log_normalize, safe_log
from . import _chain_numpy
from ._chain_checks import check_chain, check_no_nan_or_posinf, check_weights
from ._chain_kernels import (
    _forward_backward_pass,
    _forward_pass,
    _log_sum_product_pass,
    _shift_rows,
    _viterbi_pass,
)

__all__ = ["ChainFilter", "ChainPosterior", "forward", "forward_backward", "viterbi"]

# Parallel tasks per thread, and the least work (steps x states**2) for which
# the kernels use more than one thread.
_TASKS_PER_THREAD = 8
_MIN_PARALLEL_WORK = 1 << 22

# Below this work (steps x states**2) the kernels run their source in the
# interpreter (``run_parallel`` with no threads, see bayeskit._jit.run_small):
# a pass takes a few milliseconds there, where compiling the kernels takes
# seconds in an environment whose disk cache is empty (a first fit).
_INTERPRET_WORK = 1 << 14

# With every transition probability at least _SAFE_TRANSITION, a state dropped
# by the scaling is harmless (see docs/hmm.rst, chain-numerics);
# otherwise the scaled kernels watch for lost states (see _chain_kernels).
_SAFE_TRANSITION = 2.0**-600

# Models with at most _SPECIALIZED_STATES states get kernels compiled for
# their exact number of states (loops of known length, unrolled and
# vectorised: about 1.5 times faster) when the work (steps x states**2) is at
# least _SPECIALIZE_WORK, so that compiling them (a few seconds, once per
# machine: they are cached) is paid only where it is won back; the others share
# kernels that read the number of states from the arrays.
_SPECIALIZED_STATES = 16
_SPECIALIZE_WORK = 1 << 22

# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ChainFilter:
    """Result of :func:`forward`: the filtering pass over every sequence.

    Attributes
    ----------
    log_evidence : ndarray of shape (n_sequences,)
        ``log p(x_1, ..., x_T)`` of each sequence, the normaliser of its
        posterior; ``-inf`` for a sequence of probability zero.
    log_final_filtered : ndarray of shape (n_sequences, n_states)
        ``log p(z_T = k | x_1, ..., x_T)``: the filtered distribution of the
        last state of each sequence. All ``-inf`` for a sequence of probability
        zero, which has no filtered distribution.
    """

    log_evidence: np.ndarray
    log_final_filtered: np.ndarray

    @property
    def log_likelihood(self) -> np.ndarray:
        """Another name of ``log_evidence``: the log-likelihood of each sequence."""
        return self.log_evidence


@dataclass(frozen=True)
class ChainPosterior:
    """Result of :func:`forward_backward`: the smoothing pass over every sequence.

    Attributes
    ----------
    log_evidence : ndarray of shape (n_sequences,)
        ``log p(x_1, ..., x_T)`` of each sequence, the normaliser of its
        posterior (``log_likelihood`` is another name of it).
    posterior : ndarray of shape (n_steps_total, n_states)
        ``p(z_t = k | x_1, ..., x_T)``: the posterior marginal of every step
        (each row sums to 1), the rows of all sequences concatenated in the
        order given.
    transition_counts : ndarray of shape (n_states, n_states)
        Expected transition counts summed over all sequences,
        ``sum_t p(z_t = i, z_{t+1} = j | x)``; row ``i`` is the from-state.
    symbol_counts : ndarray of shape (n_symbols, n_states) or None
        With emissions given by ``symbols``: the posterior mass that each
        row of the emission table received, ``sum_{t: symbols[t] = r}
        p(z_t = k | x)`` in row ``r``, which are the expected counts of every
        symbol in every state (the statistics of a categorical emission).
        None otherwise.
    """

    log_evidence: np.ndarray
    posterior: np.ndarray
    transition_counts: np.ndarray
    symbol_counts: np.ndarray | None = None

    @property
    def log_likelihood(self) -> np.ndarray:
        """Another name of ``log_evidence``: the log-likelihood of each sequence."""
        return self.log_evidence

    @functools.cached_property
    def log_posterior(self) -> np.ndarray:
        """``log p(z_t = k | x)``, from ``posterior`` (``-inf`` where 0)."""
        return safe_log(self.posterior)


# ---------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------


def forward(
    log_startprob: np.ndarray,
    log_transmat: np.ndarray,
    log_emission: np.ndarray,
    lengths: np.ndarray | None = None,
    *,
    symbols: np.ndarray | None = None,
) -> ChainFilter:
    """Filter every sequence: its log-likelihood and its last filtered message.

    Parameters
    ----------
    log_startprob : array-like of shape (n_states,)
        Log-probabilities of the first state of every sequence. Must sum
        (as probabilities) to 1 within 1e-8; ``-inf`` entries are allowed.
    log_transmat : array-like of shape (n_states, n_states)
        Log transition probabilities, ``log p(z_{t+1} = j | z_t = i)`` in row
        ``i``, column ``j``. Every row must sum to 1 within 1e-8.
    log_emission : array-like of shape (n_steps_total, n_states)
        Emission log-likelihood ``log p(x_t | z_t = k)`` of every step under
        every state, the steps of all sequences concatenated. Any finite value
        or ``-inf``; not NaN or ``+inf``. With ``symbols``, a table of shape
        (n_symbols, n_states) instead, one row per symbol.
    lengths : array-like of int of shape (n_sequences,), default=None
        Number of steps of each sequence, positive and summing to
        ``n_steps_total``. None means one sequence.
    symbols : array-like of int of shape (n_steps_total,), default=None
        Emissions as a table: step ``t`` emits row ``symbols[t]`` of
        ``log_emission``. Categorical observations send their messages this
        way, without an (n_steps_total, n_states) array of them.

    Returns
    -------
    filtered : ChainFilter
        ``log_evidence`` of shape (n_sequences,) and ``log_final_filtered``
        of shape (n_sequences, n_states).

    Raises
    ------
    ValueError
        If an argument has the wrong shape or invalid values; the message
        names the argument.

    See Also
    --------
    forward_backward : The posterior marginal of every step.

    Notes
    -----
    The forward message is :math:`\\alpha_t(k) = p(x_1, \\dots, x_t, z_t = k)`,
    with :math:`\\alpha_1 = \\pi \\circ e_1` and
    :math:`\\alpha_{t+1} = (\\alpha_t A) \\circ e_{t+1}`. It is carried as
    :math:`\\alpha_t = \\hat\\alpha_t \\exp(o_t)`, where the offset
    :math:`o_t` collects the emission shifts :math:`\\max_k \\log e_t(k)` and
    exact power-of-two rescalings, and :math:`\\hat\\alpha_t` stays in the
    normal floating point range. The log-likelihood is
    :math:`o_T + \\log \\sum_k \\hat\\alpha_T(k)`. A sequence in which the
    scaling loses a state that zero transitions may make necessary later is
    recomputed exactly in log space (see :ref:`chain-numerics`).

    The filtered message of the last step is all a continuation needs: a
    sequence split into two parts ``x[:m]`` and ``x[m:]`` has the
    log-likelihood ``forward(s, A, e[:m]).log_evidence[0]`` plus
    ``forward(s2, A, e[m:]).log_evidence[0]``, where the start of the second
    part is the one-step prediction
    ``s2 = log_matmul(f.log_final_filtered, A)[0]`` (see
    ``bayeskit._logmath.log_matmul``).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.graph.chain import forward
    >>> log_start = np.log([0.5, 0.5])
    >>> log_trans = np.log([[0.9, 0.1], [0.2, 0.8]])
    >>> log_emission = np.log([[0.7, 0.1], [0.7, 0.1], [0.1, 0.6]])
    >>> f = forward(log_start, log_trans, log_emission)
    >>> f.log_evidence.round(4)
    array([-3.2735])
    >>> np.exp(f.log_final_filtered).round(4)
    array([[0.5446, 0.4554]])
    """
    start, trans, table, index, bounds = check_chain(
        log_startprob, log_transmat, log_emission, lengths, symbols
    )
    n_sequences, n_states = len(bounds) - 1, len(start)
    n_steps = int(bounds[-1])
    n_threads, n_tasks = _parallel_plan((n_steps, n_states), n_sequences)
    trans_prob = np.exp(trans)
    if _numpy_first(_forward_pass, trans_prob):
        waiting = _in_background(
            log_startprob, log_transmat, log_emission, lengths, symbols
        )
        found = _chain_numpy.forward_pass(
            np.exp(start), trans_prob, table, index, bounds, False, waiting
        )
        if found is not None:
            log_final_filtered, _ = log_normalize(safe_log(found[3]), axis=1)
            return ChainFilter(found[0], log_final_filtered)
    scaled, shift = _scaled_emissions(table, n_threads)
    log_likelihood = np.empty(n_sequences)
    last = np.empty((n_sequences, n_states))
    run_parallel(
        _forward_pass, min(n_threads, n_tasks), 1,
        _state_token(n_states, n_steps), np.exp(start), trans_prob, start, trans,
        scaled, shift, table, index, bounds, n_tasks, _needs_detection(trans_prob),
        log_likelihood, last,
    )  # fmt: skip
    # Sequences that lost a reachable state (NaN): exactly, in log space.
    lost = np.flatnonzero(np.isnan(log_likelihood))
    log_last = last[lost]
    if lost.size:
        out = np.empty((n_steps, n_states))
        _log_sum_product(
            start, trans, table, index, out, bounds, lost, False, log_likelihood,
            np.ones(n_sequences),
        )  # fmt: skip
        log_last = out[bounds[lost + 1] - 1]
    last[lost] = 1.0
    last[log_likelihood == -np.inf] = 0.0
    last = safe_log(last)
    last[lost] = log_last
    log_final_filtered, _ = log_normalize(last, axis=1)
    return ChainFilter(log_likelihood, log_final_filtered)


def forward_backward(
    log_startprob: np.ndarray,
    log_transmat: np.ndarray,
    log_emission: np.ndarray,
    lengths: np.ndarray | None = None,
    *,
    symbols: np.ndarray | None = None,
    weights: np.ndarray | None = None,
) -> ChainPosterior:
    """Posterior marginals and expected transition counts of every sequence.

    Parameters
    ----------
    log_startprob : array-like of shape (n_states,)
        Log-probabilities of the first state of every sequence. Must sum
        (as probabilities) to 1 within 1e-8; ``-inf`` entries are allowed.
    log_transmat : array-like of shape (n_states, n_states)
        Log transition probabilities, ``log p(z_{t+1} = j | z_t = i)`` in row
        ``i``, column ``j``. Every row must sum to 1 within 1e-8.
    log_emission : array-like of shape (n_steps_total, n_states)
        Emission log-likelihood ``log p(x_t | z_t = k)`` of every step under
        every state, the steps of all sequences concatenated. Any finite value
        or ``-inf``; not NaN or ``+inf``. With ``symbols``, a table of shape
        (n_symbols, n_states) instead, one row per symbol.
    lengths : array-like of int of shape (n_sequences,), default=None
        Number of steps of each sequence, positive and summing to
        ``n_steps_total``. None means one sequence.
    symbols : array-like of int of shape (n_steps_total,), default=None
        Emissions as a table: step ``t`` emits row ``symbols[t]`` of
        ``log_emission``. Categorical observations send their messages this
        way, without an (n_steps_total, n_states) array of them.
    weights : array-like of shape (n_sequences,), default=None
        Non-negative weight of each sequence in the expected counts:
        ``transition_counts`` and ``symbol_counts`` sum each sequence's
        counts times its weight (a weighted E-step; an integer weight counts
        a sequence as that many copies). None weighs every sequence 1. The
        posteriors and log-likelihoods do not depend on it.

    Returns
    -------
    posterior : ChainPosterior
        ``log_evidence`` of shape (n_sequences,), ``log_posterior`` of shape
        (n_steps_total, n_states) and ``transition_counts`` of shape
        (n_states, n_states).

    Raises
    ------
    ValueError
        If an argument has the wrong shape or invalid values (the message
        names the argument), or if a sequence has probability zero under the
        model: its posterior is undefined. Use :func:`forward` to score
        sequences that may be impossible (their log-likelihood is ``-inf``).

    See Also
    --------
    forward : Log-likelihoods only, and the message to continue a sequence.
    viterbi : The most probable state path.

    Notes
    -----
    The forward pass is the one of :func:`forward`, keeping every scaled
    message :math:`\\hat\\alpha_t`. The backward pass computes the posterior
    :math:`\\gamma_t = p(z_t | x_{1:T})` directly (forward filtering,
    backward smoothing):

    .. math::

        p_{t+1} = \\hat\\alpha_t A, \\qquad
        \\gamma_t(i) = \\hat\\alpha_t(i) \\sum_j A_{ij}
            \\frac{\\gamma_{t+1}(j)}{p_{t+1}(j)},

    starting from :math:`\\gamma_T = \\hat\\alpha_T / \\sum_k \\hat\\alpha_T(k)`,
    the one normalisation. The expected transition counts sum
    :math:`\\xi_t(i, j) = \\hat\\alpha_t(i) A_{ij} \\gamma_{t+1}(j) /
    p_{t+1}(j)`. Both are invariant to the scale of each
    :math:`\\hat\\alpha_t`, and every :math:`\\gamma_t` sums to 1 by
    construction. The forward pass stores :math:`1 / p_{t+1}`, so the backward
    pass has no division.

    A sequence that loses a state in the scaled forward pass is smoothed by
    the log-space recursion instead, like in :func:`forward` (see
    :ref:`chain-numerics`): the log-likelihood, the posteriors (exact as probabilities,
    which are kept; a posterior below about 1e-308 may be 0, and its log
    ``-inf``) and the expected transition counts are exact for every input.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.graph.chain import forward_backward
    >>> log_start = np.log([0.5, 0.5])
    >>> log_trans = np.log([[0.9, 0.1], [0.2, 0.8]])
    >>> log_emission = np.log([[0.7, 0.1], [0.7, 0.1], [0.1, 0.6]])
    >>> post = forward_backward(log_start, log_trans, log_emission)
    >>> post.posterior.round(3)
    array([[0.919, 0.081],
           [0.901, 0.099],
           [0.545, 0.455]])
    >>> post.transition_counts.sum().round(6)
    np.float64(2.0)
    """
    start, trans, table, index, bounds = check_chain(
        log_startprob, log_transmat, log_emission, lengths, symbols
    )
    n_sequences, n_states = len(bounds) - 1, len(start)
    n_steps = int(bounds[-1])
    weights = check_weights(weights, n_sequences)
    n_threads, n_tasks = _parallel_plan((n_steps, n_states), n_sequences)
    trans_prob = np.exp(trans)
    if _numpy_first(_forward_backward_pass, trans_prob):
        waiting = _in_background(
            log_startprob, log_transmat, log_emission, lengths, symbols
        )
        found = _chain_numpy.forward_backward(
            np.exp(start), trans_prob, table, index, bounds, weights, waiting
        )
        if found is not None:
            log_likelihood, posterior, counts = found
            if index is not None:
                symbol_counts = _chain_numpy.symbol_counts(
                    index, posterior, bounds, weights, len(table)
                )
            return ChainPosterior(
                log_likelihood, posterior, counts,
                None if index is None else symbol_counts,
            )  # fmt: skip
    scaled, shift = _scaled_emissions(table, n_threads)
    # Forward messages, then posteriors, in place: over the scaled emissions
    # themselves when they have a row per step.
    lattice = scaled if index is None else np.empty((n_steps, n_states))
    inv_pred = np.empty((n_steps, n_states))
    log_likelihood = np.empty(n_sequences)
    counts = np.zeros((n_tasks, n_states, n_states))
    symbol_counts = np.zeros((n_tasks, 0 if index is None else len(table), n_states))
    finite = np.ones(n_sequences, dtype=np.bool_)
    run_parallel(
        _forward_backward_pass, min(n_threads, n_tasks), 1,
        _state_token(n_states, n_steps), np.exp(start), trans_prob, start, trans,
        scaled, shift, table, index, lattice, inv_pred, bounds, weights, n_tasks,
        _needs_detection(trans_prob), log_likelihood, counts, symbol_counts, finite,
    )  # fmt: skip
    del inv_pred
    counts = counts.sum(axis=0)
    symbol_counts = symbol_counts.sum(axis=0)
    if not (finite.all() and np.isfinite(counts).all()):  # pragma: no cover
        # Unreachable by the argument of docs/hmm.rst (chain-numerics); should it
        # happen, every sequence is redone exactly rather than return NaN.
        log_likelihood[:] = np.nan
        counts[:] = 0.0
        symbol_counts[:] = 0.0
    # Sequences that lost a reachable state (NaN): exactly, in log space.
    lost = np.flatnonzero(np.isnan(log_likelihood))
    if lost.size:
        out = np.empty((n_steps, n_states))
        counts += _log_sum_product(
            start, trans, table, index, out, bounds, lost, True, log_likelihood,
            weights,
        )  # fmt: skip
        sequence = np.repeat(np.arange(n_sequences), np.diff(bounds))
        rows = np.flatnonzero(np.isin(sequence, lost))
        lattice[rows] = np.exp(out[rows])
        if index is not None:
            np.add.at(
                symbol_counts,
                index[rows],
                lattice[rows] * weights[sequence[rows], None],
            )
    impossible = np.flatnonzero(log_likelihood == -np.inf)
    if impossible.size:
        n = impossible[0]
        raise ValueError(
            f"sequence {n} (steps {bounds[n]} to {bounds[n + 1] - 1}) has "
            "probability zero under log_startprob, log_transmat and "
            "log_emission (every state path is -inf), so its posterior is "
            "undefined; forward() scores it as -inf."
        )
    return ChainPosterior(
        log_likelihood, lattice, counts, None if index is None else symbol_counts
    )


def viterbi(
    log_startprob: np.ndarray,
    log_transmat: np.ndarray,
    log_emission: np.ndarray,
    lengths: np.ndarray | None = None,
    *,
    symbols: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Most probable state path of every sequence (max-product).

    Parameters
    ----------
    log_startprob : array-like of shape (n_states,)
        Log-probabilities of the first state of every sequence. Must sum
        (as probabilities) to 1 within 1e-8; ``-inf`` entries are allowed.
    log_transmat : array-like of shape (n_states, n_states)
        Log transition probabilities, ``log p(z_{t+1} = j | z_t = i)`` in row
        ``i``, column ``j``. Every row must sum to 1 within 1e-8.
    log_emission : array-like of shape (n_steps_total, n_states)
        Emission log-likelihood ``log p(x_t | z_t = k)`` of every step under
        every state, the steps of all sequences concatenated. Any finite value
        or ``-inf``; not NaN or ``+inf``. With ``symbols``, a table of shape
        (n_symbols, n_states) instead, one row per symbol.
    lengths : array-like of int of shape (n_sequences,), default=None
        Number of steps of each sequence, positive and summing to
        ``n_steps_total``. None means one sequence.
    symbols : array-like of int of shape (n_steps_total,), default=None
        Emissions as a table: step ``t`` emits row ``symbols[t]`` of
        ``log_emission``. Categorical observations send their messages this
        way, without an (n_steps_total, n_states) array of them.

    Returns
    -------
    path : ndarray of int of shape (n_steps_total,)
        The most probable state of every step, the paths of all sequences
        concatenated.
    log_prob : ndarray of shape (n_sequences,)
        ``max_z log p(x, z)``, the log joint probability of each best path;
        ``-inf`` for a sequence of probability zero, whose path is then
        meaningless (every path ties at ``-inf``).

    Raises
    ------
    ValueError
        If an argument has the wrong shape or invalid values; the message
        names the argument.

    See Also
    --------
    forward_backward : The posterior marginal of every step.

    Notes
    -----
    The recursion runs in log space,
    :math:`\\delta_1 = \\log\\pi + \\log e_1` and
    :math:`\\delta_{t+1}(j) = \\max_i (\\delta_t(i) + \\log A_{ij}) +
    \\log e_{t+1}(j)`, keeping the maximising :math:`i` of every step and
    state, then backtracks from :math:`\\arg\\max_k \\delta_T(k)`. Ties are
    broken towards the lowest state index, both in the recursion and at the
    end, so the result is deterministic.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.graph.chain import viterbi
    >>> log_start = np.log([0.5, 0.5])
    >>> log_trans = np.log([[0.9, 0.1], [0.2, 0.8]])
    >>> log_emission = np.log([[0.7, 0.1], [0.7, 0.1], [0.1, 0.6]])
    >>> path, log_prob = viterbi(log_start, log_trans, log_emission)
    >>> path
    array([0, 0, 0])
    >>> log_prob.round(4)
    array([-3.9198])
    """
    start, trans, table, index, bounds = check_chain(
        log_startprob, log_transmat, log_emission, lengths, symbols
    )
    n_sequences, n_states = len(bounds) - 1, len(start)
    n_steps = int(bounds[-1])
    n_threads, n_tasks = _parallel_plan((n_steps, n_states), n_sequences)
    if index is not None:
        check_no_nan_or_posinf(table, "log_emission")
    if _numpy_first(_viterbi_pass, trans):
        if np.isnan(table).any() or np.isposinf(table).any():
            raise ValueError("log_emission contains NaN or +inf.")
        waiting = _in_background(
            log_startprob, log_transmat, log_emission, lengths, symbols
        )
        found = _chain_numpy.viterbi(start, trans, table, index, bounds, waiting)
        if found is not None:
            return found
    path = np.empty(n_steps, dtype=np.intp)
    log_prob = np.empty(n_sequences)
    backpointers = np.empty((n_steps, n_states), dtype=_index_dtype(n_states))
    run_parallel(
        _viterbi_pass, min(n_threads, n_tasks), 1,
        _state_token(n_states, n_steps), start, trans, table, index, backpointers, path,
        bounds, n_tasks, log_prob,
    )  # fmt: skip
    if np.isnan(log_prob).any():
        raise ValueError("log_emission contains NaN or +inf.")
    return path, log_prob


# ---------------------------------------------------------------------------
# Planning: threads, tasks, specialised kernels, the exact fallback
# ---------------------------------------------------------------------------


def _parallel_plan(shape: tuple[int, int], n_sequences: int) -> tuple[int, int]:
    """Threads to use and tasks to split the sequences into.

    No thread (the kernels' source, interpreted) when the work is too small
    to pay for compiling them; one when it is too small to pay for waking the
    others;
    several tasks per thread, handed out one at a time, even out sequences
    of unequal length.
    """
    n_steps, n_states = shape
    if n_steps * n_states * n_states < _INTERPRET_WORK:
        return 0, 1  # interpreted: see run_small
    if n_steps * n_states * n_states < _MIN_PARALLEL_WORK:
        return 1, 1
    n_threads = numba.get_num_threads()
    return n_threads, min(n_sequences, _TASKS_PER_THREAD * n_threads)


def _index_dtype(n_states: int) -> type:
    """The smallest signed integer type that holds every state index."""
    for dtype in (np.int8, np.int16, np.int32):
        if n_states <= np.iinfo(dtype).max + 1:
            return dtype
    return np.int64


def _state_token(n_states: int, n_steps: int) -> tuple:
    """The kernels' first argument: see the note above them, in _chain_kernels."""
    if n_states <= _SPECIALIZED_STATES and n_steps * n_states**2 >= _SPECIALIZE_WORK:
        return (0,) * n_states
    return ()


def _numpy_first(kernel, trans_prob: np.ndarray) -> bool:
    """Whether to try the numpy recursions of ``_chain_numpy`` first (they
    answer None on sequences they do not take): while ``kernel`` is not
    compiled (in this process or in the disk cache), and for the sum-product,
    in a model with no transition that needs the kernels' watch for lost
    states. Compiling the kernels takes seconds; these passes take
    milliseconds, so a first fit in a fresh environment compiles nothing.
    """
    if kernel in _COMPILED:
        return False
    if kernel is not _viterbi_pass and _needs_detection(trans_prob):
        return False
    if _jit._compiled(kernel):
        _COMPILED.add(kernel)  # compiled stays compiled: not asked again
        return False
    return True


# The kernels found compiled (in this process or in the disk cache).
_COMPILED: set = set()


def _in_background(log_startprob, log_transmat, log_emission, lengths, symbols):
    """Whether the kernels are being compiled in the background, in a child
    process replaying :func:`forward`, :func:`forward_backward` and
    :func:`viterbi` on this call's arguments (started once the numpy
    recursions have taken ``_jit._BACKGROUND_AFTER`` CPU seconds): the numpy
    recursions then keep answering past their budget."""
    if _chain_numpy._spent[0] < _jit._BACKGROUND_AFTER:
        return False  # well within the budget: no need to ask
    args = (log_startprob, log_transmat, log_emission, lengths)
    replay = functools.partial(
        _jit.replay_all,
        functools.partial(forward, *args, symbols=symbols),
        functools.partial(forward_backward, *args, symbols=symbols),
        functools.partial(viterbi, *args, symbols=symbols),
    )
    return _jit.compile_in_background("chain", _forward_pass, replay)


def _needs_detection(trans_prob: np.ndarray) -> bool:
    """Whether the scaled kernels must watch for lost states: the model has a
    transition probability below ``_SAFE_TRANSITION`` (zero, typically)."""
    return not trans_prob.min() >= _SAFE_TRANSITION


def _log_sum_product(
    log_start, log_trans, log_em, index, out, bounds, which, smooth, log_likelihood,
    weights,
) -> np.ndarray:  # fmt: skip
    """Run the exact log-space recursion on the sequences listed in ``which``.

    Writes their log forward messages (with ``smooth``, their log posteriors)
    over their rows of ``out`` and their log-likelihoods into
    ``log_likelihood``; returns their expected transition counts, each
    sequence's times its weight (zeros unless ``smooth``).
    """
    n_states = len(log_start)
    n_rows = int((bounds[which + 1] - bounds[which]).sum())
    n_threads, n_tasks = _parallel_plan((n_rows, n_states), len(which))
    counts = np.zeros((n_tasks, n_states, n_states))
    run_parallel(
        _log_sum_product_pass, min(n_threads, n_tasks), 1,
        log_start, log_trans, log_em, index, out, bounds, which, weights, n_tasks,
        smooth, log_likelihood, counts,
    )  # fmt: skip
    return counts.sum(axis=0)


def _scaled_emissions(
    log_emission: np.ndarray, n_threads: int
) -> tuple[np.ndarray, np.ndarray]:
    """``exp(row - max(row))`` of every row of emissions, and the maxima.

    Also the check of the values of ``log_emission``, in the same pass.
    """
    scaled = np.empty_like(log_emission)
    shift = np.empty(len(log_emission))
    if log_emission.size < _MIN_PARALLEL_WORK >> 4:
        n_threads = min(n_threads, 1)  # not worth waking the other threads
    if run_parallel(_shift_rows, n_threads, 0, log_emission, scaled, shift):
        raise ValueError("log_emission contains NaN or +inf.")
    np.exp(scaled, out=scaled)
    return scaled, shift
