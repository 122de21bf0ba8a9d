"""Validation of the arguments of the chain kernels' public functions.

Private to :mod:`bayeskit.graph.chain`: its public functions (``forward``,
``forward_backward``, ``viterbi``) check their arguments once, here, and turn
them into the arrays the compiled kernels of
:mod:`bayeskit.graph._chain_kernels` read, which assume valid input.
"""

from __future__ import annotations

import math

import numpy as np

from .._logmath import logsumexp

__all__ = [
    "check_chain",
    "check_no_nan_or_posinf",
    "check_weights",
]

# Tolerance on the total mass of the start distribution and of each row of
# the transition matrix.
_SUM_TOL = 1e-8


def _mass_text(log_mass: float) -> str:
    """A total probability for a message; beyond float64's range, its log."""
    if log_mass < 709.0:
        return f"{math.exp(log_mass):.17g}"
    return f"exp({log_mass:.17g})"


def check_chain(log_startprob, log_transmat, log_emission, lengths, symbols):
    """Validate the arguments; return them as float64 arrays, the index of
    the emission row of every step (None: row ``t`` for step ``t``), and
    boundaries.

    The boundaries ``bounds`` (int64, length ``n_sequences + 1``) put the
    steps of sequence ``n`` in rows ``bounds[n]:bounds[n + 1]``. The values
    of ``log_emission`` (no NaN, no ``+inf``) are checked by the caller, in
    its first pass over them.
    """
    start = _as_float_array(log_startprob, "log_startprob", ndim=1)
    n_states = len(start)
    if n_states == 0:
        raise ValueError("log_startprob must have at least one state, got 0.")
    trans = _as_float_array(log_transmat, "log_transmat", ndim=2)
    if trans.shape != (n_states, n_states):
        raise ValueError(
            f"log_transmat must have shape ({n_states}, {n_states}) to match "
            f"log_startprob, got {trans.shape}."
        )
    emission = _as_float_array(log_emission, "log_emission", ndim=2)
    if emission.shape[1] != n_states:
        raise ValueError(
            f"log_emission must have {n_states} columns (one per state of "
            f"log_startprob), got shape {emission.shape}."
        )
    index = None if symbols is None else _check_symbols(symbols, len(emission))
    n_steps = emission.shape[0] if index is None else len(index)
    if n_steps == 0:
        raise ValueError("log_emission has no rows: a sequence cannot be empty.")
    check_no_nan_or_posinf(start, "log_startprob")
    check_no_nan_or_posinf(trans, "log_transmat")
    mass = logsumexp(start)
    if not abs(mass) <= _SUM_TOL:
        raise ValueError(
            "log_startprob must be log-probabilities summing to 1 within "
            f"{_SUM_TOL:g}; they sum to {_mass_text(mass)}."
        )
    row_mass = logsumexp(trans, axis=1)
    bad = np.flatnonzero(~(np.abs(row_mass) <= _SUM_TOL))
    if bad.size:
        raise ValueError(
            "log_transmat rows must be log-probabilities summing to 1 within "
            f"{_SUM_TOL:g}; row {bad[0]} sums to {_mass_text(row_mass[bad[0]])}."
        )
    steps = (
        "the number of rows of log_emission"
        if index is None
        else "the length of symbols"
    )
    return start, trans, emission, index, _sequence_bounds(lengths, n_steps, steps)


def check_weights(weights, n_sequences: int) -> np.ndarray:
    """``weights`` as a float64 array of one non-negative weight per sequence."""
    if weights is None:
        return np.ones(n_sequences)
    weights = _as_float_array(weights, "weights", ndim=1)
    if len(weights) != n_sequences:
        raise ValueError(
            f"weights must have one entry per sequence ({n_sequences}), got "
            f"{len(weights)}."
        )
    if not np.all((weights >= 0) & (weights < np.inf)):
        raise ValueError("weights must be non-negative and finite.")
    return weights


def _check_symbols(symbols, n_rows: int) -> np.ndarray:
    """``symbols`` as a contiguous intp array of valid rows of a table."""
    index = np.asarray(symbols)
    if index.ndim != 1:
        raise ValueError(f"symbols must be 1-dimensional, got shape {index.shape}.")
    if index.dtype.kind not in "iu":
        raise ValueError(f"symbols must be integers, got dtype {index.dtype}.")
    if index.size == 0:
        raise ValueError("symbols is empty: a sequence cannot be empty.")
    low, high = index.min(), index.max()
    if low < 0 or high >= n_rows:
        raise ValueError(
            f"symbols must be row numbers of log_emission, 0 to {n_rows - 1}; "
            f"got {low if low < 0 else high}."
        )
    return np.ascontiguousarray(index, dtype=np.intp)


def _as_float_array(x, name: str, ndim: int) -> np.ndarray:
    try:
        arr = np.ascontiguousarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of real numbers: {exc}") from exc
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}.")
    return arr


def check_no_nan_or_posinf(arr: np.ndarray, name: str) -> None:
    # One reduction, no temporary: the maximum is NaN if any entry is NaN.
    top = arr.max()
    if np.isnan(top):
        raise ValueError(f"{name} contains NaN.")
    if top == np.inf:
        raise ValueError(f"{name} contains +inf, which is not a log-probability.")


def _sequence_bounds(lengths, n_steps: int, steps: str) -> np.ndarray:
    if lengths is None:
        return np.array([0, n_steps], dtype=np.int64)
    lengths = np.asarray(lengths)
    if lengths.ndim != 1:
        raise ValueError(f"lengths must be 1-dimensional, got shape {lengths.shape}.")
    if lengths.size == 0:
        raise ValueError("lengths must hold at least one sequence length.")
    if lengths.dtype.kind not in "iu":
        raise ValueError(f"lengths must be integers, got dtype {lengths.dtype}.")
    if lengths.min() < 0:
        raise ValueError("lengths must be non-negative.")
    if lengths.min() == 0:
        empty = int(np.flatnonzero(lengths == 0)[0])
        raise ValueError(f"lengths must be positive: sequence {empty} is empty.")
    # No length may exceed the number of steps: then the int64 sum below cannot
    # wrap around to n_steps (lengths of 2**62 would), which would send the
    # compiled kernels out of bounds.
    if int(lengths.max()) > n_steps:
        longest = int(np.argmax(lengths))
        raise ValueError(
            f"lengths must sum to {steps} ({n_steps}): sequence {longest} alone "
            f"has {int(lengths[longest])}."
        )
    total = int(lengths.sum(dtype=np.int64))
    if total != n_steps:
        raise ValueError(f"lengths must sum to {steps} ({n_steps}), got {total}.")
    bounds = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    return bounds
