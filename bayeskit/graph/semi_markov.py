"""The semi-Markov chain: hidden states with explicit durations.

A hidden semi-Markov model (explicit-duration HMM; Yu 2010, section 2.2)
replaces the geometric stay of an HMM's state by a duration distribution: the
chain enters state ``j`` (from the start distribution, or from the previous
segment's state ``i`` with probability ``a_ij``, ``a_ii = 0``), stays there
``d`` steps with probability ``p_j(d)``, ``1 <= d <= D``, emitting one
observation per step, then moves on. The functions here take the durations
as a table ``pmf`` of shape ``(k, D)``, ``pmf[j, d - 1] = p_j(d)``; the
parametric families that fill it live with the estimator.

Inference runs over segments in log space, in O(T K D) per sequence
(Yu 2010, section 3.1; the compiled kernels of ``_semi_markov_kernels`` and
``_semi_markov_viterbi``,
batched over sequences; while those are not compiled, in a fresh environment,
the same recursions in numpy, one step of every sequence at a time, in
``_semi_markov_numpy``). **The last segment of every sequence is
right-censored**: a sequence ends where observation stops, not where a
segment ends, so its last segment has lasted *at least* the steps seen, with
probability ``P(d_j >= d)`` (Yu 2010, section 3.4, the "right-censored"
case). With every duration geometric, this is exactly an HMM whose
self-transitions are the geometric's (an HMM's sequence may also stop
mid-stay), which the tests check.

:class:`SemiMarkovChain` speaks the protocol of the latent structures
(:class:`~bayeskit.graph.LatentChain`'s): posterior, filter, decode, its
statistics (:class:`SemiMarkovStats`), MAP parameters from them, a log prior,
the count of free parameters and sampling. Its duration family is any object
with ``pmf(params)``, ``map_params(counts, prior, previous)``,
``log_prior(params, prior)``, ``n_parameters(k)`` and ``max_duration``.

References
----------
.. [1] S.-Z. Yu, "Hidden semi-Markov models", Artificial Intelligence
   174(2), 215-243, 2010.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .. import _jit
from .._jit import run_parallel
from .._logmath import safe_log
from . import _semi_markov_numpy
from . import chain as _chain
from ._checks import cardinality
from ._semi_markov_kernels import _forward_backward_pass, _forward_pass
from ._semi_markov_viterbi import _viterbi_pass
from .structure import _as_message, _table_map

__all__ = [
    "SemiMarkovChain",
    "SemiMarkovParams",
    "SemiMarkovPosterior",
    "SemiMarkovPrior",
    "SemiMarkovStats",
    "semi_markov_forward",
    "semi_markov_forward_backward",
    "semi_markov_viterbi",
]

# Work (steps x states x durations) below which the kernels' source runs
# interpreted (nothing to compile), and below which one thread does it all.
_INTERPRET_WORK = 1 << 12
_MIN_PARALLEL_WORK = 1 << 22
_TASKS_PER_THREAD = 8


def log_survival(pmf: np.ndarray) -> np.ndarray:
    """``log P(d >= d')`` for ``d' = 1 .. D``: the reversed cumulative sum of
    each row of ``pmf`` (summed from the tail, so small tails keep their
    precision), shape ``(k, D)``."""
    surv = np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1]
    return safe_log(np.minimum(surv, 1.0))


def _plan(n_steps: int, k: int, D: int, n_sequences: int) -> tuple[int, int]:
    work = n_steps * k * max(k, D)
    if work < _INTERPRET_WORK:
        return 0, 1
    if work < _MIN_PARALLEL_WORK:
        return 1, 1
    import numba

    n_threads = numba.get_num_threads()
    return n_threads, min(n_sequences, _TASKS_PER_THREAD * n_threads)


def _bounds(lengths, n_steps: int) -> np.ndarray:
    if lengths is None:
        lengths = [n_steps]
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.ndim != 1 or (lengths <= 0).any() or lengths.sum() != n_steps:
        raise ValueError(
            f"lengths must be positive integers summing to {n_steps}, got "
            f"{lengths.tolist()!r}"
        )
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


def _param_arrays(log_startprob, log_transmat, pmf):
    """The parameters as the log-space recursions read them: start and
    transition log-tables, log durations and log survivals (contiguous
    float64), their shapes checked against each other."""
    start = np.ascontiguousarray(log_startprob, dtype=np.float64)
    trans = np.ascontiguousarray(log_transmat, dtype=np.float64)
    pmf = np.asarray(pmf, dtype=np.float64)
    k = len(start)
    if trans.shape != (k, k) or pmf.ndim != 2 or pmf.shape[0] != k:
        raise ValueError(
            f"log_transmat must be ({k}, {k}) and pmf ({k}, max_duration), got "
            f"{trans.shape} and {pmf.shape}"
        )
    # No NaN and no +inf: the kernels' maxima assume none (and a NaN would
    # give a NaN posterior rather than an error).
    for name, table in (("log_startprob", start), ("log_transmat", trans)):
        if table.size and not table.max() < np.inf:
            raise ValueError(f"{name} contains NaN or +inf.")
    if pmf.size and not (pmf.min() >= 0.0 and pmf.max() < np.inf):
        raise ValueError("pmf must hold finite probabilities, not NaN or negative.")
    log_pmf = np.ascontiguousarray(safe_log(pmf))
    log_surv = np.ascontiguousarray(log_survival(pmf))
    return start, trans, log_pmf, log_surv


def _emission_array(log_emission, k: int, check: bool = True) -> np.ndarray:
    """``log_emission`` as contiguous float64 of ``k`` columns, with no NaN
    and no ``+inf`` (one pass: the largest value is NaN if any is; without
    ``check``, the caller checks)."""
    em = np.ascontiguousarray(log_emission, dtype=np.float64)
    if em.ndim != 2 or em.shape[1] != k:
        raise ValueError(f"log_emission must have {k} columns, got {em.shape}")
    if check and em.size and not em.max() < np.inf:
        raise ValueError("log_emission contains NaN or +inf.")
    return em


def _arrays(log_startprob, log_transmat, pmf, log_emission):
    start, trans, log_pmf, log_surv = _param_arrays(log_startprob, log_transmat, pmf)
    return start, trans, log_pmf, log_surv, _emission_array(log_emission, len(start))


def _row_max(em: np.ndarray) -> np.ndarray:
    """``em.max(axis=1)``, column by column: numpy reduces a short last axis
    one row at a time (at 4 columns, some seven times slower)."""
    out = em[:, 0].copy()
    for j in range(1, em.shape[1]):
        np.maximum(out, em[:, j], out=out)
    return out


def _scaled_emissions(em: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every step's emissions over their maximum, and the maxima (a step of
    all ``-inf`` gets shift 0: its mass is 0)."""
    shift = _row_max(em)
    shift[shift == -np.inf] = 0.0
    bt = em - shift[:, None]
    return np.exp(bt, out=bt), shift


def _scaled(start, trans, log_pmf, log_surv, em):
    """The probabilities of the scaled recursions: start, transitions,
    durations and survivals, and every step's emissions over their maximum
    with the maxima (see :func:`_scaled_emissions`)."""
    return (
        np.exp(start), np.exp(trans), np.exp(log_pmf), np.exp(log_surv),
        *_scaled_emissions(em),
    )  # fmt: skip


@dataclass(frozen=True)
class _Tables:
    """The parameters as the kernels read them: the log-tables of
    :func:`_param_arrays` and their probabilities (the scaled recursions'),
    computed once per :class:`SemiMarkovParams` (its ``tables``)."""

    log_start: np.ndarray
    log_trans: np.ndarray
    log_pmf: np.ndarray
    log_surv: np.ndarray
    start: np.ndarray
    trans: np.ndarray
    pmf: np.ndarray
    surv: np.ndarray

    @property
    def logs(self) -> tuple:
        return self.log_start, self.log_trans, self.log_pmf, self.log_surv

    @property
    def probabilities(self) -> tuple:
        return self.start, self.trans, self.pmf, self.surv


def _tables(log_startprob, log_transmat, pmf) -> _Tables:
    logs = _param_arrays(log_startprob, log_transmat, pmf)
    return _Tables(*logs, *(np.exp(table) for table in logs))


def _kernel_emissions(tables: _Tables, em, n_threads: int) -> tuple:
    """The probabilities of the scaled kernels and every step's emissions
    over their maximum with the maxima, by the chain's compiled pass, which
    checks the values in the same pass (a step of all ``-inf`` gets shift
    ``-inf``: its mass is 0, and the kernels leave the scaled recursions
    before they read it)."""
    return (*tables.probabilities, *_chain._scaled_emissions(em, n_threads))


@dataclass(frozen=True)
class SemiMarkovPosterior:
    """Result of :func:`semi_markov_forward_backward`.

    Attributes
    ----------
    log_evidence : ndarray of shape (n_sequences,)
        ``log p(x)`` of every sequence.
    posterior : ndarray of shape (n_steps, k)
        ``p(z_t = j | x)`` of every step.
    start_counts : ndarray of shape (k,)
        Expected number of sequences starting in each state (weighted).
    transition_counts : ndarray of shape (k, k)
        Expected number of segment-to-segment transitions ``i -> j``.
    duration_counts : ndarray of shape (k, D)
        Expected number of segments of each state and duration; a censored
        last segment is spread over the durations it may have had.

    The counts are None when they were not asked for (``counts=False``).
    """

    log_evidence: np.ndarray
    posterior: np.ndarray
    start_counts: np.ndarray | None = None
    transition_counts: np.ndarray | None = None
    duration_counts: np.ndarray | None = None
    symbol_counts: None = None

    @functools.cached_property
    def log_posterior(self) -> np.ndarray:
        return safe_log(self.posterior)


def semi_markov_forward_backward(
    log_startprob, log_transmat, pmf, log_emission, lengths=None, weights=None,
    *, exact=False, counts=True,
) -> SemiMarkovPosterior:  # fmt: skip
    """Posteriors and expected counts of an explicit-duration chain.

    Parameters
    ----------
    log_startprob : array-like of shape (k,)
        Log-probabilities of the state of the first segment.
    log_transmat : array-like of shape (k, k)
        Log-probabilities of the next segment's state (zero diagonal for a
        semi-Markov chain proper; a non-zero one starts a new segment of the
        same state).
    pmf : array-like of shape (k, D)
        ``pmf[j, d - 1] = p_j(d)``, rows summing to 1.
    log_emission : array-like of shape (n_steps, k)
        Emission log-likelihoods of the steps of all sequences.
    lengths : array-like of int, default=None
        Steps of each sequence; None is one sequence.
    weights : array-like of shape (n_sequences,), default=None
        Weight of each sequence in the expected counts (None: 1).
    exact : bool, default=False
        Run the log-space recursions on every sequence. By default the
        scaled recursions run first (products of probabilities, one scale
        per step), and a sequence whose scaled messages underflow or
        overflow is recomputed in log space; both give the same numbers.
    counts : bool, default=True
        Whether to sum the expected start, transition and duration counts
        (what EM needs); False gives the log evidence and the posteriors
        alone (what :meth:`SemiMarkovChain.marginals` needs), the counts
        None, and skips their sums in the backward pass.

    Returns
    -------
    SemiMarkovPosterior

    Raises
    ------
    ValueError
        If a sequence has probability zero under the model.
    """
    return _forward_backward(
        _tables(log_startprob, log_transmat, pmf), log_emission, lengths, weights,
        exact, counts,
    )  # fmt: skip


def _forward_backward(
    tables: _Tables, log_emission, lengths, weights, exact: bool, counts: bool
) -> SemiMarkovPosterior:
    """:func:`semi_markov_forward_backward` on the parameters' ``tables``."""
    em = _emission_array(log_emission, len(tables.start), check=False)
    n_steps, k = em.shape
    D = tables.pmf.shape[1]
    bounds = _bounds(lengths, n_steps)
    n_seq = len(bounds) - 1
    w = np.ones(n_seq) if weights is None else np.asarray(weights, dtype=float)
    n_threads, n_tasks = _plan(n_steps, k, D, n_seq)
    if not exact and _numpy_first(_forward_backward_pass, n_threads, n_tasks):
        if _serial_meanwhile(_forward_backward_pass, n_threads, n_tasks):
            n_threads = 1
        else:
            checked = _emission_array(em, k)  # the numpy passes do not check
            scaled = (*tables.probabilities, *_scaled_emissions(checked))
            waiting = _in_background(n_threads, n_tasks, tables, em, lengths)
            found = _semi_markov_numpy.forward_backward(*scaled, bounds, w, waiting)
            if found is not None:
                return SemiMarkovPosterior(*found[:2], *(found[2:] if counts else ()))
    scaled = _kernel_emissions(tables, em, min(n_threads, n_tasks))
    # The messages are the kernel's work space, a sequence at a time; every
    # posterior it writes.
    log_lik = np.empty(n_seq)
    gamma = np.empty((n_steps, k))
    starts = np.zeros((n_tasks, k))
    transitions = np.zeros((n_tasks, k, k))
    durations = np.zeros((n_tasks, k, D))
    run_parallel(
        _forward_backward_pass, min(n_threads, n_tasks), 1,
        *tables.logs, em, *scaled, bounds, w, n_tasks, exact, counts,
        log_lik, gamma, starts, transitions, durations,
    )  # fmt: skip
    if not np.all(log_lik > -np.inf):
        bad = int(np.flatnonzero(~(log_lik > -np.inf))[0])
        raise ValueError(
            f"sequence {bad} has probability zero under the model: its "
            "posterior is undefined"
        )
    if not counts:
        return SemiMarkovPosterior(log_lik, gamma)
    return SemiMarkovPosterior(
        log_lik, gamma, starts.sum(0), transitions.sum(0), durations.sum(0)
    )


def semi_markov_forward(
    log_startprob, log_transmat, pmf, log_emission, lengths=None, *, exact=False
) -> np.ndarray:
    """Log-likelihood of every sequence (``-inf`` for an impossible one),
    the forward pass of :func:`semi_markov_forward_backward` (``exact`` as
    there)."""
    return _forward(
        _tables(log_startprob, log_transmat, pmf), log_emission, lengths, exact
    )


def _forward(tables: _Tables, log_emission, lengths, exact: bool) -> np.ndarray:
    """:func:`semi_markov_forward` on the parameters' ``tables``."""
    em = _emission_array(log_emission, len(tables.start), check=False)
    n_steps, k = em.shape
    bounds = _bounds(lengths, n_steps)
    n_seq = len(bounds) - 1
    n_threads, n_tasks = _plan(n_steps, k, tables.pmf.shape[1], n_seq)
    if not exact and _numpy_first(_forward_pass, n_threads, n_tasks):
        if _serial_meanwhile(_forward_pass, n_threads, n_tasks):
            n_threads = 1
        else:
            checked = _emission_array(em, k)  # the numpy passes do not check
            scaled = (*tables.probabilities, *_scaled_emissions(checked))
            waiting = _in_background(n_threads, n_tasks, tables, em, lengths)
            found = _semi_markov_numpy.forward(*scaled, bounds, waiting)
            if found is not None:
                return found
    scaled = _kernel_emissions(tables, em, min(n_threads, n_tasks))
    log_lik = np.empty(n_seq)
    run_parallel(
        _forward_pass, min(n_threads, n_tasks), 1,
        *tables.logs, em, *scaled, bounds, n_tasks, exact, log_lik,
    )  # fmt: skip
    return log_lik


def semi_markov_viterbi(
    log_startprob, log_transmat, pmf, log_emission, lengths=None
) -> tuple[np.ndarray, np.ndarray]:
    """The most probable state path of every sequence (max-product over the
    segmentations, Yu 2010 section 3.2) and its log joint probability.

    Returns
    -------
    path : ndarray of int of shape (n_steps,)
    log_prob : ndarray of shape (n_sequences,)

    Raises
    ------
    ValueError
        If a sequence has probability zero under the model.
    """
    return _viterbi(_tables(log_startprob, log_transmat, pmf), log_emission, lengths)


def _viterbi(tables: _Tables, log_emission, lengths) -> tuple[np.ndarray, np.ndarray]:
    """:func:`semi_markov_viterbi` on the parameters' ``tables``."""
    em = _emission_array(log_emission, len(tables.start))
    n_steps, k = em.shape
    bounds = _bounds(lengths, n_steps)
    n_seq = len(bounds) - 1
    log_start, log_trans, log_pmf, log_surv = tables.logs
    n_threads, n_tasks = _plan(n_steps, k, log_pmf.shape[1], n_seq)
    found = None
    if _numpy_first(_viterbi_pass, n_threads, n_tasks):
        if _serial_meanwhile(_viterbi_pass, n_threads, n_tasks):
            n_threads = 1
        else:
            waiting = _in_background(n_threads, n_tasks, tables, em, lengths)
            found = _semi_markov_numpy.viterbi(
                log_start, log_trans, log_pmf, log_surv, em, bounds, waiting
            )
    if found is not None:
        path, log_prob = found
        _check_possible(log_prob)
        return path, log_prob
    # Every entry the kernel reads it writes first; a path is written whole
    # unless the sequence is impossible (an error).
    cols = max(k, 4)  # at most four states are padded to four (the kernel's)
    A, F = np.empty((n_steps, cols)), np.empty((n_steps, cols))
    path = np.empty(n_steps, dtype=np.int64)
    log_prob = np.empty(n_seq)
    run_parallel(
        _viterbi_pass, min(n_threads, n_tasks), 1,
        *tables.logs, em, bounds, n_tasks, A, F, path, log_prob,
    )  # fmt: skip
    _check_possible(log_prob)
    return path, log_prob


def _check_possible(log_prob: np.ndarray) -> None:
    if not np.all(log_prob > -np.inf):
        bad = int(np.flatnonzero(~(log_prob > -np.inf))[0])
        raise ValueError(f"sequence {bad} has probability zero under the model")


def _in_background(n_threads, n_tasks, tables: _Tables, em, lengths) -> bool:
    """Whether the kernels are being compiled in the background, in a child
    process replaying the three passes on this call's arguments (started
    once the numpy recursions have taken ``_jit._BACKGROUND_AFTER`` CPU
    seconds): the numpy recursions then keep answering past their budget.
    For work planned for threads, the child compiles the serial variants
    first (on the first sequence), which then answer in their place
    (:func:`_serial_meanwhile`) while it compiles the parallel ones."""
    if _semi_markov_numpy._spent[0] < _jit._BACKGROUND_AFTER:
        return False  # well within the budget: no need to ask
    args = (tables.log_start, tables.log_trans, tables.pmf, em, lengths)
    parallel = min(n_threads, n_tasks) > 1
    key = "semi_markov" + ("_parallel" if parallel else "")
    kernel = _forward_backward_pass.variant(parallel)
    passes = (semi_markov_forward_backward, semi_markov_forward, semi_markov_viterbi)
    calls = []
    if parallel:  # the serial variants first, on the first sequence (one thread)
        *model, log_emission, lengths = args
        first = int(np.asarray(lengths)[0])
        one = (*model, np.asarray(log_emission)[:first], [first])
        calls += [functools.partial(run, *one) for run in passes]
    calls += [functools.partial(run, *args) for run in passes]
    return _jit.compile_in_background(
        key, kernel, functools.partial(_jit.replay_all, *calls)
    )


def _serial_meanwhile(kernel, n_threads: int, n_tasks: int) -> bool:
    """Whether to run the serial variant of ``kernel`` on work planned for
    threads, in place of the numpy recursions: while the parallel variants are
    being compiled in the background and the serial one is compiled (the child
    compiles the serial variants first). One thread takes about the CPU time
    that the threads take together, a fraction of the numpy recursions'."""
    if min(n_threads, n_tasks) <= 1:
        return False
    serial = kernel.variant(False)
    if serial not in _COMPILED:
        if not _jit._compiled(serial):
            return False
        _COMPILED.add(serial)  # compiled stays compiled: not asked again
    return _jit.compiling("semi_markov_parallel", _forward_backward_pass.variant(True))


def _numpy_first(kernel, n_threads: int, n_tasks: int) -> bool:
    """Whether to try the numpy recursions of ``_semi_markov_numpy`` first
    (they answer None on sequences they do not take): while the variant of
    ``kernel`` that this plan of threads would run is not compiled, in this
    process or in the disk cache. Compiling a kernel takes seconds (some ten
    for the three); these passes, tens of milliseconds."""
    variant = kernel.variant(min(n_threads, n_tasks) > 1)
    if variant in _COMPILED:
        return False
    if _jit._compiled(variant):
        _COMPILED.add(variant)  # compiled stays compiled: not asked again
        return False
    return True


# The kernels' variants found compiled (in this process or in the disk cache).
_COMPILED: set = set()


# ---------------------------------------------------------------------------
# The structure
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SemiMarkovParams:
    """The parameters of a semi-Markov chain: start and transition tables
    (``transmat`` with a zero diagonal) and the duration family's
    parameters, with their table ``pmf`` of shape ``(k, D)``."""

    startprob: np.ndarray
    transmat: np.ndarray
    duration: object
    pmf: np.ndarray

    @functools.cached_property
    def log_startprob(self) -> np.ndarray:
        return safe_log(self.startprob)

    @functools.cached_property
    def log_transmat(self) -> np.ndarray:
        return safe_log(self.transmat)

    @functools.cached_property
    def tables(self) -> _Tables:
        """The tables the recursions read (the log tables and the
        probabilities of the scaled recursions), computed once for these
        parameters rather than at every call."""
        return _tables(self.log_startprob, self.log_transmat, self.pmf)


@dataclass(frozen=True)
class SemiMarkovStats:
    """Expected statistics of a semi-Markov chain, summed over sequences.

    Attributes
    ----------
    start : ndarray of shape (k,)
    transitions : ndarray of shape (k, k)
        Segment-to-segment transitions.
    occupancy : ndarray of shape (k,)
        Expected steps in each state.
    durations : ndarray of shape (k, D)
        Expected segments of each state and duration.
    """

    start: np.ndarray
    transitions: np.ndarray
    occupancy: np.ndarray
    durations: np.ndarray

    def __add__(self, other: SemiMarkovStats) -> SemiMarkovStats:
        return SemiMarkovStats(
            self.start + other.start,
            self.transitions + other.transitions,
            self.occupancy + other.occupancy,
            self.durations + other.durations,
        )

    @property
    def total_weight(self) -> np.ndarray:
        return self.occupancy


@dataclass(frozen=True)
class SemiMarkovPrior:
    """Priors of the start and transition tables (``map`` and
    ``log_density``, as ``bayeskit.priors.Dirichlet``) and the duration
    family's prior (read by the family); None for none."""

    start: object = None
    transitions: object = None
    durations: object = None


@dataclass(frozen=True)
class SemiMarkovChain:
    """A chain of states with explicit durations (see the module).

    Parameters
    ----------
    n_states : int
    duration : object
        The duration family (see the module for its protocol).
    update_start, update_transitions, update_durations : bool, default=True
        Which parts :meth:`map_params` re-estimates.
    """

    n_states: int
    duration: object
    update_start: bool = True
    update_transitions: bool = True
    update_durations: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_states", cardinality(self.n_states, "n_states"))

    def params(self, startprob, transmat, duration) -> SemiMarkovParams:
        """The parameters, with the duration table the family gives."""
        return SemiMarkovParams(
            startprob, transmat, duration, self.duration.pmf(duration)
        )

    # -- inference ---------------------------------------------------------------
    @staticmethod
    def _dense(messages) -> np.ndarray:
        table, codes = _as_message(messages)
        return table if codes is None else table[codes]

    def posterior(
        self, messages, params: SemiMarkovParams, lengths=None, weights=None
    ) -> SemiMarkovPosterior:
        """Sum-product over the segmentations (see
        :func:`semi_markov_forward_backward`)."""
        return _forward_backward(
            params.tables, self._dense(messages), lengths, weights, False, True
        )

    def marginals(
        self, messages, params: SemiMarkovParams, lengths=None
    ) -> SemiMarkovPosterior:
        """:meth:`posterior` without the expected counts (None): every step's
        posterior and the log evidence, what ``predict_proba`` needs."""
        return _forward_backward(
            params.tables, self._dense(messages), lengths, None, False, False
        )

    def filter(self, messages, params: SemiMarkovParams, lengths=None):
        """The log-likelihood of every sequence (``log_evidence``)."""
        log_lik = _forward(params.tables, self._dense(messages), lengths, False)
        return _Filter(log_lik)

    def decode(self, messages, params: SemiMarkovParams, lengths=None):
        """Max-product: the most probable path and its log joint probability."""
        return _viterbi(params.tables, self._dense(messages), lengths)

    # -- learning ----------------------------------------------------------------
    def zeros(self) -> SemiMarkovStats:
        k, D = self.n_states, self.duration.max_duration
        return SemiMarkovStats(
            np.zeros(k), np.zeros((k, k)), np.zeros(k), np.zeros((k, D))
        )

    def stats(self, posterior: SemiMarkovPosterior, lengths, weights=None):
        """The chain's statistics from a :meth:`posterior` computed with the
        same ``weights``."""
        gamma = posterior.posterior
        if weights is None:
            occupancy = gamma.sum(axis=0)
        else:
            lengths = np.asarray(lengths, dtype=np.intp)
            starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
            occupancy = weights @ np.add.reduceat(gamma, starts, axis=0)
        return SemiMarkovStats(
            posterior.start_counts.copy(),
            posterior.transition_counts.copy(),
            occupancy,
            posterior.duration_counts.copy(),
        )

    def map_params(
        self,
        stats: SemiMarkovStats,
        prior: SemiMarkovPrior | None = None,
        previous: SemiMarkovParams | None = None,
    ) -> SemiMarkovParams:
        """MAP tables (the previous tables' zeros stay zero: the diagonal of
        the transitions) and the duration family's MAP parameters."""
        prior = prior or SemiMarkovPrior()
        start, trans = previous.startprob, previous.transmat
        duration = previous.duration
        if self.update_start:
            start = _table_map(prior.start, stats.start, start)
        if self.update_transitions:
            trans = _table_map(prior.transitions, stats.transitions, trans)
        if self.update_durations:
            duration = self.duration.map_params(
                stats.durations, prior.durations, duration
            )
        return self.params(start, trans, duration)

    def log_prior(self, params: SemiMarkovParams, prior=None) -> float:
        """Log density of the priors at ``params``, up to their constants."""
        if prior is None:
            return 0.0
        total = 0.0
        for table, p in (
            (params.startprob, prior.start),
            (params.transmat, prior.transitions),
        ):
            if p is not None:
                # The structural zeros (the diagonal) are not parameters.
                total += float(p.log_density(np.where(table == 0, 1.0, table)))
        return total + float(self.duration.log_prior(params.duration, prior.durations))

    def n_parameters(self) -> int:
        """Free scalars of what :meth:`map_params` updates."""
        k = self.n_states
        n = self.update_start * (k - 1)
        n += self.update_transitions * k * max(k - 2, 0)
        n += self.update_durations * self.duration.n_parameters(k)
        return n

    # -- sampling ----------------------------------------------------------------
    def sample(
        self, params: SemiMarkovParams, n_steps: int, random_state, currstate=None
    ) -> np.ndarray:
        """One state path of ``n_steps`` steps: a state, a duration from its
        table, the next state from the transitions, ... (the last segment
        cut at ``n_steps``)."""
        k, D = params.pmf.shape
        states = np.empty(n_steps, dtype=int)
        state = (
            random_state.choice(k, p=params.startprob)
            if currstate is None
            else currstate
        )
        t = 0
        while t < n_steps:
            if t:
                state = random_state.choice(k, p=params.transmat[state])
            d = 1 + random_state.choice(D, p=params.pmf[state])
            states[t : t + d] = state
            t += d
        return states


@dataclass(frozen=True)
class _Filter:
    log_evidence: np.ndarray
