"""Observable Markov chains on Dask: counts of chunks, summed by a tree.

A :class:`~bayeskit.MarkovChain` learns counts (of every window of
``order + 1`` symbols and of the first symbols of every sequence), and counts
add: ``fit`` on Dask input is ``from_stats`` of the sum of every chunk's
``summarize``, computed where the chunk lives, as the classifiers' fits of
:mod:`bayeskit._dask._edge` are. The sequences come in the forms of
:mod:`bayeskit._dask._hmm` (a bag with one sequence per item, or a column of
the symbols of all sequences with ``lengths`` in memory, cut where a sequence
ends) or, as in memory, a 2-D array or DataFrame with one sequence per row
(its row blocks or partitions). One pass finds the alphabet (the distinct
symbols of every chunk, merged), unless ``symbols=`` declares it or a
``partial_fit`` continues a fitted chain; a second sums the counts.
"""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd

from ._edge import _add, _is_frame_like, _row_blocks, _shared, _tree, is_dask, predict

__all__ = ["fit_markov_chain", "predict_markov_chain", "rows_are_sequences"]


def rows_are_sequences(X, lengths) -> bool:
    """Whether ``X`` holds one sequence per row (a table of more than one
    column, without ``lengths``), as in memory."""
    if lengths is not None:
        return False
    if _is_frame_like(X):
        return hasattr(X, "columns") and len(X.columns) > 1
    return getattr(X, "ndim", 0) == 2 and X.shape[1] > 1


def _distinct(part, lengths) -> np.ndarray:
    """The distinct symbols of a chunk (missing ones left to ``summarize``,
    which names the step)."""
    if isinstance(part, tuple):  # a block of a column with its lengths
        part = part[0]
    if part is None:
        return np.empty(0, dtype=object)
    if not isinstance(part, (np.ndarray, pd.DataFrame)):  # a bag's sequences
        seqs = list(part)
        if not seqs:
            return np.empty(0, dtype=object)
        part = np.concatenate([np.asarray(s, dtype=object).ravel() for s in seqs])
    values = np.asarray(part, dtype=object).ravel()
    return pd.unique(values[~pd.isna(values)])


def _merge(*parts):
    parts = [p for p in parts if p is not None and len(p)]
    return pd.unique(np.concatenate(parts)) if parts else None


def _count(est, part, weights):
    """The counts of one chunk (None for an empty one)."""
    from ._hmm import _rows_of

    if isinstance(part, (np.ndarray, pd.DataFrame)):  # one sequence per row
        if len(part) == 0:
            return None
        return copy.deepcopy(est).summarize(part, sequence_weight=weights)
    rows, lens = _rows_of(part)
    if rows is None or len(lens) == 0:
        return None
    return copy.deepcopy(est).summarize(rows, lens, sequence_weight=weights)


def _chunks(X, lengths, sequence_weight):
    """The chunks (``Delayed``) and the ``Delayed`` weights of their
    sequences (None where every sequence weighs 1)."""
    if rows_are_sequences(X, lengths):
        xs, blocks = _row_blocks(X, {"w": sequence_weight})
        return xs, blocks["w"]
    from ._hmm import _partitions

    if getattr(X, "ndim", 2) == 1:
        X = X.reshape(-1, 1)
    parts, weights, _, _ = _partitions(X, lengths, sequence_weight)
    return parts, weights


def fit_markov_chain(est, X, lengths=None, sequence_weight=None, partial=False):
    """``fit`` (or ``partial_fit``) of a :class:`~bayeskit.MarkovChain` on
    Dask input: the alphabet in one pass (unless declared or already
    fitted), every chunk's counts summed by a tree of tasks, the tables set
    from the sum. A failure leaves ``est`` as it was."""
    from dask import delayed

    saved = dict(vars(est))
    try:
        first = not (partial and hasattr(est, "stats_"))
        xs, ws = _chunks(X, lengths, sequence_weight)
        if first:
            if est.symbols is None:
                task = delayed(_distinct, pure=True)
                symbols = _tree([task(x, None) for x in xs], _merge).compute()
                if symbols is None:
                    raise ValueError(
                        "X must hold at least one sequence, none of them empty"
                    )
            else:
                symbols = np.asarray(est.symbols)
            # The alphabet as fit fixes it (sorted, or declared): a one-
            # sequence prototype of every symbol, its counts not used.
            est._codes(np.asarray(symbols, dtype=object), None, reset=True)
        shared = _shared(est)
        task = delayed(_count, pure=True)
        total = _tree([task(shared, x, w) for x, w in zip(xs, ws)], _add).compute()
        if total is None:
            raise ValueError("X must hold at least one sequence, none of them empty")
        est._set_from(total if first else est.stats_ + total)
        return est
    except BaseException:
        vars(est).clear()
        vars(est).update(saved)
        raise


def predict_markov_chain(est, method: str, X, lengths=None):
    """``est.<method>(X, lengths)`` on Dask input: lazy over the row blocks of
    a table with one sequence per row (one output row per sequence); a column
    with ``lengths`` or a bag of sequences computed, then predicted in
    memory."""
    if rows_are_sequences(X, lengths):
        return predict(est, method, X)
    if type(X).__module__.startswith("dask.bag"):
        if lengths is not None:
            raise ValueError(
                "lengths must be None when X is a bag: every item of the bag "
                "is one sequence"
            )
        X = [np.asarray(s) for s in X.compute()]
    else:
        X = X.compute()
    if is_dask(lengths):
        lengths = lengths.compute()
    return getattr(est, method)(X, lengths)
