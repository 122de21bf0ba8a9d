"""Hidden Markov models on Dask: Baum-Welch with one reduction per iteration.

Sequences come in two forms, as in memory:

- a ``dask.bag.Bag`` whose every item is one sequence (a 1-d array of
  one value per step, or a 2-d array of steps by features), partitioned across
  the workers (whole sequences per partition);
- a 2-D :class:`dask.array.Array` of the rows of all sequences concatenated,
  with ``lengths`` in memory (hmmlearn's form): the array is rechunked so that
  every block ends where a sequence ends (no sequence is cut between two
  blocks).

Every Baum-Welch iteration sums the expected statistics of every partition
under the current parameters (the E-step of the partition's sequences, as
:meth:`~bayeskit.CategoricalHMM.summarize` computes it), by the tree of
:mod:`bayeskit._dask._edge`, and sets the parameters from the sum (the M-step, as
``from_stats``): only the statistics travel, and the parameters are sent once
per iteration. The loop, the restarts and the monitor are the in-memory
model's own (``_fit_components``), so from the same initial parameters the
iterations, ``lower_bound_`` and the parameters are those of the in-memory fit.

The start (``init_params``) runs in memory on a sample of whole sequences:
all of them if they have at most :data:`INIT_SAMPLE_STEPS` steps in all (then
the start is the in-memory start), else sequences drawn uniformly without
replacement (with ``random_state``, among those of positive
``sequence_weight``) until they have that many steps. Every
one of the ``n_init`` restarts starts from that sample (with its own draws),
one after the other (each iteration is already spread over the cluster). A
:class:`~bayeskit.CategoricalHMM` finds its alphabet among all the sequences in
the first pass (or takes ``n_features``). A Dask array is kept on the workers
for the fit when it fits (as in :mod:`bayeskit._dask._em`); persist a bag
yourself (``bag.persist()``) when it fits, or every iteration reads or
generates its sequences again.

Prediction is lazy: a bag in gives a bag out (one item per sequence), an
array in gives a Dask array out; ``score`` is the computed sum.
"""

from __future__ import annotations

import copy
from functools import partial

import numpy as np

from ._edge import _add, _shared, _tree, is_dask, restoring

__all__ = ["INIT_SAMPLE_STEPS", "fit_hmm", "predict_hmm"]

# Steps of the sequences drawn from a Dask collection to start Baum-Welch in
# memory.
INIT_SAMPLE_STEPS = 10_000


def _is_bag(X) -> bool:
    return type(X).__module__.startswith("dask.bag")


# -- partitions of whole sequences ----------------------------------------------------
def _with_lengths(rows, lengths):
    return rows, lengths


def _rows_of(part):
    """``(rows, lengths)`` of a partition: a list of sequences or an array
    block with its lengths."""
    from .._base.sequences import _concatenate

    if isinstance(part, tuple):
        return part
    seqs = list(part)
    if not seqs:
        return None, np.zeros(0, dtype=np.intp)
    for s in seqs:
        if np.ndim(s) not in (1, 2) or len(s) == 0:
            raise ValueError(
                f"every item of the bag X must be one sequence, a non-empty "
                f"1-d or 2-d array; got one of shape {np.shape(s)}"
            )
    return _concatenate(seqs)


def _cut_at_sequences(X, lengths):
    """A 2-D Dask array and its ``lengths`` as blocks that end where a
    sequence ends: ``(X rechunked, lengths of every block)``."""
    from .._base.sequences import _check_lengths

    if X.ndim not in (1, 2):
        raise ValueError(
            f"Expected a 1-D or 2-D Dask array for X, got {X.ndim} dimensions"
        )
    if any(np.isnan(X.chunks[0])):
        X = X.compute_chunk_sizes()
    n = X.shape[0]
    if lengths is None:
        lengths = [n]
    if is_dask(lengths):
        lengths = lengths.compute()
    lengths = _check_lengths(lengths, n)
    ends = np.cumsum(lengths)
    # Every chunk boundary moves to the end of the sequence it falls in.
    bounds = np.cumsum(X.chunks[0])
    cuts = np.unique(ends[np.minimum(np.searchsorted(ends, bounds), len(ends) - 1)])
    chunks = tuple(int(c) for c in np.diff(np.r_[0, cuts]))
    X = X.rechunk((chunks,) + ((-1,) if X.ndim == 2 else ()))
    per_block = np.split(lengths, np.searchsorted(ends, cuts[:-1], side="right"))
    return X, per_block


def _partitions(X, lengths, sequence_weight):
    """The partitions of ``X`` (``Delayed``), the ``Delayed`` weights of their
    sequences (None where all weigh 1), the sequences' weights in memory
    (None for all 1), validated, and the collection the partitions come from
    (persisted on the workers, held as long as the caller holds it)."""
    from dask import compute, delayed

    from .._base.sequences import _check_sequence_weight
    from ._em import _persisted_if_it_fits

    if _is_bag(X):
        if lengths is not None:
            raise ValueError(
                "lengths must be None when X is a bag: every item of the bag "
                "is one sequence"
            )
        parts = list(X.to_delayed())
        counts = None
        source = X
    else:
        if _is_frame_like(X):
            raise TypeError(
                "a hidden Markov model takes a dask bag of sequences or a Dask "
                "array of rows with lengths, not a Dask DataFrame; use "
                "X.to_dask_array(lengths=True)"
            )
        Xc, per_block = _cut_at_sequences(X, lengths)
        # Kept on the workers for the fit when it fits (as the mixtures' EM).
        source = _persisted_if_it_fits(Xc)
        blocks = list(source.to_delayed().ravel())
        task = delayed(_with_lengths, pure=True)
        parts = [task(b, lens) for b, lens in zip(blocks, per_block)]
        counts = [len(lens) for lens in per_block]
    if sequence_weight is None:
        return parts, [None] * len(parts), None, source
    if is_dask(sequence_weight):
        sequence_weight = sequence_weight.compute()
    if counts is None:
        counts = list(compute(*[delayed(len)(p) for p in parts]))
    weights = _check_sequence_weight(np.asarray(sequence_weight), int(sum(counts)))
    split = np.split(weights, np.cumsum(counts)[:-1])
    return parts, split, weights, source


def _is_frame_like(X) -> bool:
    return hasattr(X, "map_partitions") and hasattr(X, "columns")


# -- the first pass: the sequences' lengths and the alphabet ----------------------
def _describe_partition(part, symbols: bool):
    """Steps of every sequence of a partition, and its distinct symbols (if
    asked)."""
    import pandas as pd

    rows, lens = _rows_of(part)
    distinct = None
    if symbols and rows is not None:
        values = np.asarray(rows).ravel()
        distinct = pd.unique(values[~pd.isna(values)])
    return np.asarray(lens, dtype=np.intp), distinct


def _pick(part, index):
    """The sequences ``index`` of a partition, as a list of arrays."""
    from .._base.sequences import _split

    rows, lens = _rows_of(part)
    seqs = _split(rows, lens)
    return [seqs[i] for i in index]


def _sample(parts, described, weights, rng):
    """The start's sequences (and their weights, or None)."""
    from dask import compute, delayed

    lens = [d[0] for d in described]
    counts = [len(x) for x in lens]
    every = np.concatenate(lens) if lens else np.zeros(0, dtype=np.intp)
    if every.size == 0:
        raise ValueError("X has 0 sequences; at least one is required")
    if every.sum() <= INIT_SAMPLE_STEPS:
        chosen = np.arange(every.size)
    else:
        # Drawn among the sequences that weigh something.
        order = rng.permutation(every.size)
        if weights is not None:
            order = order[weights[order] > 0]
        take = np.searchsorted(np.cumsum(every[order]), INIT_SAMPLE_STEPS) + 1
        chosen = np.sort(order[:take])
    starts = np.r_[0, np.cumsum(counts)]
    task = delayed(_pick, pure=True)
    picks = []
    for i, part in enumerate(parts):
        local = chosen[(chosen >= starts[i]) & (chosen < starts[i + 1])] - starts[i]
        if local.size:
            picks.append(task(part, local.tolist()))
    seqs = [s for group in compute(*picks) for s in group]
    return seqs, None if weights is None else weights[chosen]


# -- Baum-Welch ------------------------------------------------------------------------
def _partition_stats(est, params, part, weights):
    """The E-step of one partition's sequences under ``params`` (None for an
    empty partition or one of zero weight)."""
    rows, lens = _rows_of(part)
    if rows is None or (weights is not None and not np.sum(weights) > 0):
        return None
    data = est._data(rows, lens, weights, reset=False)
    return est._expected_stats(data, params, est._components())


def fit_hmm(est, X, lengths=None, sequence_weight=None):
    """Baum-Welch of a hidden Markov model on a Dask bag of sequences or a
    Dask array with ``lengths`` (see the module); a failure leaves ``est`` as
    it was."""
    return restoring(_fit_hmm, est, X, lengths, sequence_weight)


def start_sample(est, X, lengths, sequence_weight, data=None):
    """What a fit on Dask starts from: the partitions and their weights,
    ``source`` (holding the persisted chunks until the fit returns), every
    partition's description, and the sample of whole sequences the start
    reads, as ``est._data`` gives it (``Xt, lens, w``), or ``data(rows,
    lens, w, reset=...)`` if given. For symbols, the alphabet is that of all
    the sequences: the sample's rows and every symbol seen, encoded once with
    reset."""
    from dask import compute, delayed
    from sklearn.utils import check_random_state

    from .._base.sequences import _concatenate

    parts, part_weights, weights, source = _partitions(X, lengths, sequence_weight)
    symbols = est._reads_symbols
    task = delayed(_describe_partition, pure=True)
    described = compute(*[task(p, symbols) for p in parts])
    # The sample of sequences the start reads comes from a generator of its
    # own, so that the start itself is drawn as in memory (hmmlearn's draws
    # from random_state; equal to the in-memory fit when the sample holds
    # every sequence).
    seqs, sample_weight = _sample(
        parts, described, weights, check_random_state(est.random_state)
    )
    rows, lens = _concatenate(seqs)
    read = est._data if data is None else data
    if symbols:
        distinct = [d[1] for d in described if d[1] is not None and len(d[1])]
        seen = np.concatenate(distinct).astype(rows.dtype, copy=False)
        read(
            np.concatenate([rows, seen.reshape(-1, 1)]),
            np.r_[lens, len(seen)],
            None,
            reset=True,
        )
    sample = read(rows, lens, sample_weight, reset=not symbols)
    return parts, part_weights, source, described, sample


def _fit_hmm(est, X, lengths, sequence_weight):
    from dask import delayed

    parts, part_weights, source, described, data = start_sample(
        est, X, lengths, sequence_weight
    )
    Xt, lens, w = data
    n_steps = int(sum(d[0].sum() for d in described))
    per_step = Xt.size / len(Xt) if Xt.ndim > 1 else 1
    est._plan_init(int(n_steps * per_step))
    row_weight = np.ones(len(Xt)) if w is None else np.repeat(w, lens)
    components = est._components()

    start = est._starts(Xt, row_weight, components)
    shared = _shared(copy.deepcopy(est))
    chunk = delayed(_partition_stats, pure=True)

    def e_step(_, params, components):
        current = _shared(params)
        tasks = [chunk(shared, current, p, pw) for p, pw in zip(parts, part_weights)]
        total = _tree(tasks, _add).compute()
        if total is None:
            raise ValueError("sequence_weight must not be all zero")
        return total

    est._fit_components(source, start, None, expected_stats=e_step)
    if est.n_iter_:
        est._warn_unvisited(est.stats_)
    return est


# -- prediction ---------------------------------------------------------------------
def _apply(part, est, method, algorithm):
    """``method`` on a partition's sequences: a list with one result per
    sequence, and the partition's total log probability."""
    from .._base.sequences import _split

    rows, lens = _rows_of(part)
    if rows is None:
        return [], 0.0
    if method == "score_sequences":
        values = est.score_sequences(rows, lens)
        return list(values), float(values.sum())
    if method == "posterior":
        total, proba = est.score_samples(rows, lens)
        return _split(proba, lens), total
    total, path = est.decode(rows, lens, algorithm=algorithm)
    return _split(path, lens), total


def _per_sequence(seqs, est, method, algorithm):
    return _apply(seqs, est, method, algorithm)[0]


def _total(seqs, est, method, algorithm):
    return _apply(seqs, est, method, algorithm)[1]


def _block(part, est, method, algorithm):
    values, _ = _apply(part, est, method, algorithm)
    return np.concatenate(values) if method != "score_sequences" else np.array(values)


def prediction_method(est, method, algorithm):
    """The per-sequence method a prediction ``method`` runs in each task, and
    the decoding algorithm, both checked (with the fitted parameters) before
    any task runs."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est)
    est._current_params()  # the parameters are valid before any task runs
    inner = {"score": "score_sequences", "score_samples": "posterior"}.get(
        method, method
    )
    if method == "decode":
        algorithm = algorithm or est.algorithm
        if algorithm not in ("viterbi", "map"):
            raise ValueError(f"algorithm must be 'viterbi' or 'map', got {algorithm!r}")
    return inner, algorithm


def predict_hmm(est, method, X, lengths=None, algorithm=None):
    """``est.<method>(X, lengths)`` on Dask input, lazily (see the module).

    ``method`` is 'score' (a computed float), 'score_sequences' (one value per
    sequence), 'score_samples' (the lazy total log-likelihood and the
    posteriors of every step) or 'decode' (the lazy total log probability and
    the states of every step). A bag gives bags of one item per sequence; an
    array gives Dask arrays of one row per step (per sequence for
    'score_sequences').
    """
    inner, algorithm = prediction_method(est, method, algorithm)
    if _is_bag(X):
        if lengths is not None:
            raise ValueError(
                "lengths must be None when X is a bag: every item of the bag "
                "is one sequence"
            )
        per_partition = partial(_total, est=est, method=inner, algorithm=algorithm)
        total = X.reduction(per_partition, sum, split_every=8)
        if method == "score":
            return float(total.compute())
        items = X.map_partitions(_per_sequence, est, inner, algorithm)
        if inner == "score_sequences":
            return items
        return total, items
    return _predict_array(est, method, inner, X, lengths, algorithm)


def _predict_array(est, method, inner, X, lengths, algorithm):
    import dask.array as da
    from dask import delayed

    Xc, per_block = _cut_at_sequences(X, lengths)
    blocks = Xc.to_delayed().ravel()
    parts = [delayed(_with_lengths)(b, lens) for b, lens in zip(blocks, per_block)]
    k = est.n_components
    out = []
    task = delayed(_block, pure=True)
    for part, lens in zip(parts, per_block):
        n_rows = int(lens.sum())
        if inner == "score_sequences":
            shape, dtype = (len(lens),), np.float64
        elif inner == "posterior":
            shape, dtype = (n_rows, k), np.float64
        else:
            shape, dtype = (n_rows,), np.intp
        out.append(
            da.from_delayed(task(part, est, inner, algorithm), shape, dtype=dtype)
        )
    values = da.concatenate(out, axis=0)
    if method == "score":
        return float(values.sum().compute())
    if inner == "score_sequences":
        return values
    totals = [delayed(_total, pure=True)(p, est, inner, algorithm) for p in parts]
    total = da.from_delayed(_tree(totals, _add), (), dtype=np.float64)
    return total, values
