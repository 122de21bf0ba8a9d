"""The chain recursions in numpy, one step of every sequence at a time.

Private to :mod:`bayeskit.graph.chain`, which runs them in place of the
compiled kernels of :mod:`bayeskit.graph._chain_kernels` while those are not
compiled yet (neither in this process nor in numba's disk cache) and the
sequences are short: a first fit in a fresh environment then compiles nothing.
Each step is a few numpy operations over every sequence that has that step
(the sequences sorted longest first, so those are a prefix), so the cost grows
with the length of the longest sequence, not with the number of sequences.

The recursions are the ones of the kernels (Rabiner 1989, section III.A;
Bishop 2006, section 13.2.4): the scaled forward pass, with each message
normalised to sum 1 (its normaliser is the step's likelihood factor), the
posterior smoothed backwards through the one-step predictions, and Viterbi's
max-product recursion in log space. They give the kernels' results up to
rounding (Viterbi's exactly: the same sums and comparisons), and return None
where the kernels' numerics would do more than scale (a step whose mass falls
below ``_RESCALE_BELOW``, zero or tiny transitions, a non-finite result): the
caller then runs the kernels, which treat those cases exactly.
"""

from __future__ import annotations

import functools
import time

import numpy as np

from .. import _jit
from ._chain_kernels import _RESCALE_BELOW

# What runs here: sequences of at most MAX_STEPS steps (a step costs some 25
# microseconds of numpy calls) and at most MAX_WORK steps x states**2 in all
# (some 15 to 50 nanoseconds each), so that a pass takes at most some 50
# milliseconds, where the kernels take a few; and only until these passes have
# taken BUDGET CPU seconds in this process: then compiling the kernels (about 4
# seconds, once per machine) costs less than what the numpy passes lose. Past
# the budget, they keep answering while the kernels are ``waiting``: being
# compiled in the background (``_jit.compile_in_background``, started once the
# passes have taken ``_jit._BACKGROUND_AFTER`` seconds).
MAX_STEPS = 2048
MAX_WORK = 1 << 20
BUDGET = 10.0
_spent = [0.0]


def fits(bounds: np.ndarray, n_states: int, waiting: bool = False) -> bool:
    """Whether sequences of these ``bounds`` are for these passes (never in a
    child compiling the kernels)."""
    return (
        (waiting or _spent[0] < BUDGET)
        and not _jit._IN_CHILD
        and int(bounds[-1]) * n_states * n_states <= MAX_WORK
        and np.diff(bounds).max() <= MAX_STEPS
    )


def timed_against(spent):
    """A decorator counting a function's CPU seconds into ``spent()[0]`` (the
    numpy passes' budget, a list found when the function returns; compiling
    is CPU time too, and wall-clock time on a loaded machine would spend the
    budget early)."""

    def decorate(func):
        @functools.wraps(func)
        def timed(*args, **kwargs):
            start = time.process_time()
            try:
                return func(*args, **kwargs)
            finally:
                spent()[0] += time.process_time() - start

        return timed

    return decorate


_timed = timed_against(lambda: _spent)


class _Steps:
    """Sequences sorted longest first: step ``t`` of the first ``active[t]``."""

    def __init__(self, bounds: np.ndarray):
        lengths = np.diff(bounds)
        self.order = np.argsort(-lengths, kind="stable")
        self.starts = bounds[:-1][self.order]
        self.lengths = lengths[self.order]
        self.n_steps = int(self.lengths[0])
        ascending = self.lengths[::-1]
        self.active = len(lengths) - np.searchsorted(
            ascending, np.arange(self.n_steps), side="right"
        )

    def rows(self, t: int) -> np.ndarray:
        return self.starts[: self.active[t]] + t


class _Padded(_Steps):
    """The sequences sorted longest first, and the rows of their steps padded:
    ``forward[t, s]`` is the row of step ``t`` of sequence ``s``,
    ``backward[t, s]`` of its step ``t`` before the last (a sequence's first
    row where it has no such step, ``valid`` False)."""

    def __init__(self, bounds: np.ndarray):
        super().__init__(bounds)
        t = np.arange(self.n_steps)[:, None]
        self.valid = t < self.lengths
        self.forward = np.where(self.valid, self.starts + t, self.starts)
        self.backward = np.where(
            self.valid, self.starts + self.lengths - 1 - t, self.starts
        )
        # Where each row sits in the padded arrays, flattened.
        n_rows = int(self.lengths.sum())
        where = np.flatnonzero(self.valid.ravel())
        self._positions = {}
        for name in ("forward", "backward"):
            positions = np.empty(n_rows, dtype=np.intp)
            positions[getattr(self, name).ravel()[where]] = where
            self._positions[name] = positions

    def unpad(self, padded, layout):
        """The padded array ``padded`` (laid out as ``layout``, "forward" or
        "backward") by rows."""
        flat = padded.reshape(-1, *padded.shape[2:])
        return np.take(flat, self._positions[layout], axis=0)

    def pad(self, rows, layout):
        """Rows ``rows`` padded as ``layout``."""
        return np.take(rows, getattr(self, layout), axis=0)


def _emission_rows(index, rows):
    return rows if index is None else index[rows]


def scaled_emissions(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``exp(row - max(row))`` of every row and the maxima, as the kernel
    ``_shift_rows`` computes them (a row of ``-inf`` has shift ``-inf``)."""
    if np.isnan(table).any() or np.isposinf(table).any():
        raise ValueError("log_emission contains NaN or +inf.")
    shift = table.max(axis=1) if table.shape[1] else np.zeros(len(table))
    scaled = table - np.where(shift == -np.inf, 0.0, shift)[:, None]
    np.exp(scaled, out=scaled)
    return scaled, shift


@_timed
def forward_pass(start_prob, trans_prob, table, index, bounds, keep, waiting=False):
    """The forward pass of every sequence from the log emissions ``table``
    (see :func:`_forward`), or None where the sequences do not :func:`fit`."""
    if not fits(bounds, len(trans_prob), waiting):
        return None
    scaled, shift = scaled_emissions(table)
    return _forward(start_prob, trans_prob, scaled, shift, index, bounds, keep)


def _forward(start_prob, trans_prob, scaled, shift, index, bounds, keep):
    """The forward pass of every sequence.

    Returns the log-likelihoods (in the order of ``bounds``), the normalised
    forward message of every step (with ``keep``, else None), the one-step
    prediction of every step (with ``keep``, else None) and the last message
    of every sequence; or None if a step's mass fell below
    ``_RESCALE_BELOW`` (an impossible sequence among them).
    """
    steps = _Steps(bounds)
    n_sequences, n_states = len(steps.starts), len(start_prob)
    n_total = int(bounds[-1])
    alpha_all = np.empty((n_total, n_states)) if keep else None
    pred_all = np.empty((n_total, n_states)) if keep else None
    log_likelihood = np.zeros(n_sequences)
    last = np.empty((n_sequences, n_states))
    alpha = None
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        for t in range(steps.n_steps):
            m = steps.active[t]
            rows = steps.rows(t)
            r = _emission_rows(index, rows)
            if t == 0:
                pred = np.broadcast_to(start_prob, (m, n_states))
            else:
                ending = slice(m, steps.active[t - 1])
                last[ending] = alpha[ending]
                pred = alpha[:m] @ trans_prob
            u = pred * scaled[r]
            mass = u.sum(axis=1)
            if not (mass >= _RESCALE_BELOW).all():
                return None
            alpha = u / mass[:, None]
            log_likelihood[:m] += np.log(mass) + shift[r]
            if keep:
                alpha_all[rows] = alpha
                pred_all[rows] = pred
        last[: steps.active[-1]] = alpha
    unsorted = np.empty_like(log_likelihood)
    unsorted[steps.order] = log_likelihood
    final = np.empty_like(last)
    final[steps.order] = last
    return unsorted, alpha_all, pred_all, final, steps


@_timed
def forward_backward(
    start_prob, trans_prob, table, index, bounds, weights, waiting=False
):
    """Log-likelihoods, posteriors and weighted expected transition counts of
    every sequence, or None (see :func:`forward_pass`)."""
    if not fits(bounds, len(trans_prob), waiting):
        return None
    scaled, shift = scaled_emissions(table)
    found = _forward(start_prob, trans_prob, scaled, shift, index, bounds, True)
    if found is None:
        return None
    log_likelihood, lattice, pred_all, _, steps = found
    sorted_weights = weights[steps.order]
    counts = np.zeros((len(start_prob), len(start_prob)))
    # lattice[t] holds the posterior from here on, lattice[t - 1] the forward
    # message: the last message of each sequence is its last posterior.
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        for t in range(steps.n_steps - 1, 0, -1):
            m = steps.active[t]
            rows = steps.rows(t)
            gamma = lattice[rows]
            w = np.where(gamma > 0.0, gamma / pred_all[rows], 0.0)
            a = lattice[rows - 1]
            counts += ((a * sorted_weights[:m, None]).T @ w) * trans_prob
            lattice[rows - 1] = a * (w @ trans_prob.T)
    if not (np.isfinite(lattice).all() and np.isfinite(counts).all()):
        return None
    return log_likelihood, lattice, counts


def symbol_counts(index, lattice, bounds, weights, n_symbols):
    """Each row of the emission table's posterior mass, times the weights."""
    step_weights = np.repeat(weights, np.diff(bounds))
    return np.stack(
        [
            np.bincount(index, lattice[:, k] * step_weights, minlength=n_symbols)
            for k in range(lattice.shape[1])
        ],
        axis=1,
    ).reshape(n_symbols, lattice.shape[1])


@_timed
def viterbi(log_start, log_trans, table, index, bounds, waiting=False):
    """Most probable path and its log joint probability of every sequence:
    the max-product recursion of the kernel ``_viterbi_sequence``, whose sums
    and comparisons it repeats (ties to the lowest state index)."""
    if not fits(bounds, len(log_trans), waiting):
        return None
    steps = _Steps(bounds)
    n_sequences, n_states = len(steps.starts), len(log_start)
    n_total = int(bounds[-1])
    backpointers = np.zeros((n_total, n_states), dtype=np.intp)
    final = np.empty((n_sequences, n_states))
    delta = None
    for t in range(steps.n_steps):
        m = steps.active[t]
        rows = steps.rows(t)
        x = table[_emission_rows(index, rows)]
        if t == 0:
            delta = log_start + x
            continue
        ending = slice(m, steps.active[t - 1])
        final[ending] = delta[ending]
        v = delta[:m, :, None] + log_trans
        best = v.argmax(axis=1)
        backpointers[rows] = best
        delta = np.take_along_axis(v, best[:, None, :], axis=1)[:, 0, :] + x
    final[: steps.active[-1]] = delta
    state = final.argmax(axis=1)
    log_prob = final[np.arange(n_sequences), state]
    path = np.empty(n_total, dtype=np.intp)
    for t in range(steps.n_steps - 1, -1, -1):
        m = steps.active[t]
        rows = steps.rows(t)
        path[rows] = state[:m]
        if t:
            state[:m] = backpointers[rows, state[:m]]
    unsorted = np.empty_like(log_prob)
    unsorted[steps.order] = log_prob
    return path, unsorted
