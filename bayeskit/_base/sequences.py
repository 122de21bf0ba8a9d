"""Sequences in, the two forms of DESIGN.md: hmmlearn's rows plus ``lengths``,
and a list with one array per sequence; and the gaps in them (steps with
missing values, NaN).

The rules that tell the two apart live here, once, for every model of
sequences: :func:`_as_rows` turns either form into the rows of all sequences
and their lengths (the one representation the chain kernels see), and
:func:`_split` gives per-step results back in the form they came in.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._validation import _num_samples


def _is_sequence_list(X) -> bool:
    """Whether X is a non-empty list (or tuple) whose elements are all sequences."""
    return (
        isinstance(X, (list, tuple))
        and len(X) > 0
        and all(hasattr(s, "__len__") and not isinstance(s, (str, bytes)) for s in X)
    )


def _peer_rows(X):
    """X as hmmlearn reads it (``np.asarray``), or None when that is no array."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            arr = np.asarray(X)
    except ValueError:  # ragged: sequences of different lengths
        return None
    return None if arr.dtype.kind == "O" else arr


def _check_sequence_weight(sequence_weight, n_sequences: int) -> np.ndarray:
    """One non-negative, finite weight per sequence, not all zero."""
    if sequence_weight is None:
        return np.ones(n_sequences)
    weights = np.asarray(sequence_weight)
    if weights.shape != (n_sequences,) or weights.dtype.kind not in "iuf":
        raise ValueError(
            f"sequence_weight must be {n_sequences} numbers, one per sequence; "
            f"got shape {weights.shape} of dtype {weights.dtype}"
        )
    weights = weights.astype(np.float64)
    if not np.all((weights >= 0) & (weights < np.inf)) or not weights.sum() > 0:
        raise ValueError(
            "sequence_weight must be non-negative and finite, and not all zero"
        )
    return weights


def _check_lengths(lengths, n_rows: int) -> np.ndarray:
    """hmmlearn's ``lengths``: positive integers, one per sequence, summing to the
    number of rows. A scikit-learn target ``y`` passed in its place is an error."""
    if isinstance(lengths, (str, bytes)) or np.ndim(lengths) > 1:
        valid = None
    else:
        valid = np.asarray(lengths)
        if valid.ndim == 0:
            valid = valid.reshape(1)
    if (
        valid is None
        or valid.dtype.kind not in "iu"  # not floats: 10.0 is no length
        or valid.size == 0
        or (valid <= 0).any()
        or valid.max() > n_rows  # before the sum, which could wrap around
        or valid.sum() != n_rows
    ):
        got = np.asarray(lengths, dtype=object).ravel()
        shown = got[:6].tolist() + (["..."] if got.size > 6 else [])
        raise ValueError(
            "lengths (the second positional argument, as in hmmlearn) must be "
            f"positive integers summing to the {n_rows} rows of X, one per "
            f"sequence; got {shown}"
            + (
                f", of dtype {valid.dtype}"
                if valid is not None and valid.size and valid.dtype.kind not in "iu"
                else ""
            )
            + ". A hidden Markov model has no target: call "
            "fit(X) or score(X) without y (scikit-learn's y, always ignored, may "
            "be given by keyword, y=...), or give X as a list of sequences"
        )
    return valid.astype(np.intp)


def _split(values: np.ndarray, lengths: np.ndarray) -> list:
    return np.split(values, np.cumsum(lengths)[:-1])


def _concatenate(seqs):
    """The rows of all sequences and their lengths (a 1-d sequence of numbers
    is one value per step); ValueError naming X when their widths differ."""
    arrays = [np.asarray(s) for s in seqs]
    if all(a.ndim == 1 for a in arrays):
        arrays = [a[:, None] for a in arrays]
    widths = sorted({a.shape[1:] for a in arrays})
    if len(widths) > 1:
        raise ValueError(
            "X holds sequences with different numbers of features "
            f"({[w[0] if w else 1 for w in widths]}); every sequence must have "
            "the same columns"
        )
    return np.concatenate(arrays, axis=0), np.array([len(a) for a in arrays])


def _sequence_list(X, is_rows):
    """X's sequences if X is bayeskit's list-of-sequences form, else None.

    The peer's meaning wins: a list of lists that ``np.asarray`` turns
    into a rectangular array of rows the model reads (``is_rows(rows)``) is
    hmmlearn's rows form, one sequence. A list of arrays that would stack
    the same way is ambiguous (an error). Otherwise a list whose elements
    are all sequences is one sequence per element.
    """
    if not _is_sequence_list(X):
        return None
    rows = _peer_rows(X)
    if rows is not None and rows.ndim == 2 and is_rows(rows):
        if all(isinstance(s, (list, tuple)) for s in X):
            return None  # rows written as nested lists
        n, m = rows.shape
        raise ValueError(
            f"X is a list of {n} arrays of {m} value(s) each: hmmlearn reads it "
            f"as {n} rows of one sequence, bayeskit's list form as {n} "
            "sequences. Write np.asarray(X) (or nested lists) for the rows, or "
            "give every sequence as a column, [np.reshape(s, (-1, 1)) for s in "
            "X], or pass the rows with lengths="
        )
    seqs = [np.asarray(s) for s in X]
    if len({s.ndim for s in seqs}) > 1:
        raise ValueError(
            "X is a list mixing sequences of different dimensions "
            f"({sorted({s.ndim for s in seqs})}); give every sequence in the "
            "same form, or pass the rows of all sequences with lengths="
        )
    widths = {s.shape[1:] for s in seqs}
    if len(widths) > 1:
        shown = sorted(w[0] if w else 1 for w in widths)
        raise ValueError(
            "X is a list of sequences with different numbers of features "
            f"({shown}); every sequence must have the same columns"
        )
    return seqs


def _as_rows(X, lengths, is_rows):
    """``(rows, lengths, as_list)``: the rows of all sequences concatenated,
    the steps of each, and whether X was a list of sequences. ``is_rows``
    is the model's rule of :func:`_sequence_list`."""
    seqs = _sequence_list(X, is_rows) if lengths is None else None
    as_list = seqs is not None
    if as_list:
        lengths = np.array([len(s) for s in seqs])
        if (lengths == 0).any():
            raise ValueError(
                f"sequence {int(np.argmax(lengths == 0))} is empty; every "
                "sequence needs at least one step"
            )
        X = np.concatenate(seqs, axis=0)
    else:
        if _num_samples(X) == 0:
            raise ValueError("X has 0 steps; at least one is required")
        n_rows = _num_samples(X)
        lengths = (
            np.array([n_rows]) if lengths is None else _check_lengths(lengths, n_rows)
        )
    return X, lengths, as_list


def _may_hold_nan(X: np.ndarray) -> bool:
    """False where the float array ``X`` holds no NaN, by one sum and no mask
    (a NaN makes the sum NaN; so can infinities of both signs, then the mask
    decides)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isnan(X.sum()))


def _observed_steps(X: np.ndarray):
    """The steps an emission family sees, as a boolean mask, or None when it
    sees them all (no NaN: the path of data without gaps, unchanged).

    A step whose every value is NaN is a gap: its emission message is 1
    (log-likelihood 0 under every state), so the chain moves through it, its
    state's posterior comes from its neighbours, and it adds nothing to the
    family's statistics: the observed-data likelihood marginalises what is
    missing (Koller and Friedman 2009, section 19.1), and the recursions of
    Rabiner (1989, section III) run unchanged. Families that send a
    table of codes (the categorical family) mark missing values in their
    codes themselves.
    """
    if X.dtype.kind != "f" or not _may_hold_nan(X):
        return None
    return ~np.isnan(X).all(axis=tuple(range(1, X.ndim)))


def _complete_steps(X: np.ndarray):
    """The steps with no missing value (None: all of them), from which a
    family's parameters start."""
    if X.dtype.kind != "f" or not _may_hold_nan(X):
        return None
    return ~np.isnan(X).any(axis=tuple(range(1, X.ndim)))


def _n_observed_steps(X: np.ndarray) -> int:
    """The number of steps that are not gaps (codes of symbols: not ``-1``)."""
    if X.dtype.kind in "iu":
        return int(np.count_nonzero(X.reshape(len(X), -1)[:, 0] >= 0))
    observed = _observed_steps(X)
    return len(X) if observed is None else int(np.count_nonzero(observed))
