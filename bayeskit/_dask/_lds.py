"""Linear dynamical systems on Dask: EM with one reduction per iteration.

Sequences come as the hidden Markov models take them on Dask
(``bayeskit._dask._hmm``, whose partitioning this module reuses): a
``dask.bag.Bag`` with one sequence per item, or a 2-D Dask array of rows with
``lengths`` in memory, cut into blocks of whole sequences. Every EM iteration
sums the expected statistics of every partition under the current parameters
(``summarize`` of the partition's sequences, where the partition lives) by the
tree of ``bayeskit._dask._edge``, and sets the parameters from the sum (the
M-step, as ``from_stats``): only the statistics travel. The loop, the restarts
and the monitor are the in-memory model's own, so from the same start the
iterates are those of the in-memory fit. The start reads a sample of whole
sequences in memory (all of them when they have at most
``INIT_SAMPLE_STEPS`` steps, as for the hidden Markov models).

``score`` is the computed sum; ``score_sequences`` is lazy: a bag of one value
per sequence for a bag, a Dask array for an array. ``filter``, ``smooth``,
``predict`` and ``transform`` are lazy too, computed where each partition
lives: for a bag, a bag of one result per sequence (a ``(means,
covariances)`` pair, or the means); for an array, Dask arrays of one row per
step, block by block of whole sequences.
"""

from __future__ import annotations

import copy
from functools import partial

import numpy as np

from ._edge import _add, _shared, _tree, restoring
from ._hmm import (
    _cut_at_sequences,
    _describe_partition,
    _is_bag,
    _partitions,
    _rows_of,
    _sample,
    _with_lengths,
)

__all__ = ["fit_lds", "predict_lds", "states_lds"]


def _partition_stats(est, params, part, weights):
    """The E-step of one partition's sequences (None: empty or of zero weight)."""
    rows, lens = _rows_of(part)
    if rows is None or (weights is not None and not np.sum(weights) > 0):
        return None
    Y, lens, w, _ = est._data(rows, lens, weights, reset=False)
    return est._summarize(Y, lens, w, params)


def fit_lds(est, X, lengths=None, sequence_weight=None):
    """EM of a linear dynamical system on a Dask bag of sequences or a Dask
    array with ``lengths``; a failure leaves ``est`` as it was."""
    return restoring(_fit_lds, est, X, lengths, sequence_weight)


def _fit_lds(est, X, lengths, sequence_weight):
    from dask import compute, delayed
    from sklearn.utils import check_random_state

    from .._base.sequences import _concatenate

    # ``source`` holds the persisted chunks until the fit returns.
    parts, part_weights, weights, source = _partitions(X, lengths, sequence_weight)
    task = delayed(_describe_partition, pure=True)
    described = compute(*[task(p, False) for p in parts])
    seqs, sample_weight = _sample(
        parts, described, weights, check_random_state(est.random_state)
    )
    rows, lens = _concatenate(seqs)
    Y, _, _, _ = est._data(rows, lens, sample_weight, reset=True)
    shared = _shared(copy.deepcopy(est))
    chunk = delayed(_partition_stats, pure=True)

    def e_step(params):
        current = _shared(params)
        tasks = [chunk(shared, current, p, pw) for p, pw in zip(parts, part_weights)]
        total = _tree(tasks, _add).compute()
        if total is None:
            raise ValueError("sequence_weight must not be all zero")
        return total

    est._em(Y, e_step, est.n_iter, est.tol, est.n_init)
    del source
    return est


def _scores(part, est):
    rows, lens = _rows_of(part)
    if rows is None:
        return np.zeros(0)
    return est.score_sequences(rows, lens)


def _listed(part, est):
    return list(_scores(part, est))


def _total(part, est):
    return float(_scores(part, est).sum())


def predict_lds(est, method, X, lengths=None):
    """``est.<method>(X, lengths)`` on Dask input: 'score' (a computed float)
    or 'score_sequences' (lazy, one value per sequence)."""
    import dask.array as da
    from dask import delayed

    est._current()  # fitted and valid before any task runs
    if _is_bag(X):
        if lengths is not None:
            raise ValueError(
                "lengths must be None when X is a bag: every item of the bag "
                "is one sequence"
            )
        if method == "score":
            return float(X.reduction(partial(_total, est=est), sum).compute())
        return X.map_partitions(_listed, est)
    Xc, per_block = _cut_at_sequences(X, lengths)
    blocks = Xc.to_delayed().ravel()
    task = delayed(_scores, pure=True)
    values = da.concatenate(
        [
            da.from_delayed(
                task(delayed(_with_lengths)(b, lens), est),
                (len(lens),),
                dtype=np.float64,
            )
            for b, lens in zip(blocks, per_block)
        ]
    )
    if method == "score":
        return float(values.sum().compute())
    return values


def _states_of_block(part, est, method):
    rows, lens = _rows_of(part)
    return getattr(est, method)(rows, lens)


def _states_per_sequence(part, est, method):
    rows, lens = _rows_of(part)
    if rows is None:
        return []
    result = getattr(est, method)(rows, lens)
    if method in ("filter", "smooth"):
        means, covariances = result
        bounds = np.cumsum(lens)[:-1]
        return list(zip(np.split(means, bounds), np.split(covariances, bounds)))
    return np.split(result, np.cumsum(lens)[:-1])


def states_lds(est, method, X, lengths=None):
    """``est.<method>(X, lengths)`` on Dask input, lazily: ``method`` is
    'filter' or 'smooth' (a pair of means and covariances) or 'predict' /
    'transform' (the smoothed means). A bag gives a bag with one result per
    sequence; an array gives Dask arrays of one row per step."""
    import dask.array as da
    from dask import delayed

    # Fitted and valid before any task runs; the state's dimension is the
    # parameters' (KalmanFilter names it n_dim_state, and filters unfitted).
    k = est._current().n_state
    if _is_bag(X):
        if lengths is not None:
            raise ValueError(
                "lengths must be None when X is a bag: every item of the bag "
                "is one sequence"
            )
        return X.map_partitions(_states_per_sequence, est, method)
    Xc, per_block = _cut_at_sequences(X, lengths)
    blocks = Xc.to_delayed().ravel()
    task = delayed(_states_of_block, pure=True)
    pair = method in ("filter", "smooth")
    means, covariances = [], []
    for block, lens in zip(blocks, per_block):
        n = int(np.sum(lens))
        value = task(delayed(_with_lengths)(block, lens), est, method)
        if pair:
            means.append(da.from_delayed(value[0], (n, k), dtype=np.float64))
            covariances.append(da.from_delayed(value[1], (n, k, k), dtype=np.float64))
        else:
            means.append(da.from_delayed(value, (n, k), dtype=np.float64))
    if pair:
        return da.concatenate(means), da.concatenate(covariances)
    return da.concatenate(means)
