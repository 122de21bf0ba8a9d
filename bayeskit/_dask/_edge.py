"""Fitting and predicting on Dask collections: statistics of chunks, summed by a tree.

Every supervised bayeskit model learns from statistics that add, and
``fit(X, y)`` is ``from_stats(sum of summarize(chunk))``. On a Dask array or
DataFrame that reduce runs where the chunks live:

1. **One pass for the layout.** The classes (the distinct labels of ``y``,
   unless ``classes=`` names them) and, for the categorical models, the
   distinct values of every categorical column among the rows of positive
   weight, found chunk by chunk and merged by the same tree. A small
   in-memory *prototype* chunk that shows every class and every value is then
   summarized by a fresh copy of the estimator, which fixes the classes and
   the encoding exactly as an in-memory ``fit`` on all the rows would (the
   prototype's statistics are thrown away).
2. **One pass for the statistics.** Every chunk is summarized by a copy of
   that estimator, as a task next to the chunk, and the statistics are added
   by a tree of tasks (``split_every`` of them per node, depth
   ``log_split_every(n_chunks)``): only the statistics travel, never the
   rows. ``from_stats`` of the sum sets the parameters.

Statistics are small Python values (dataclasses of arrays), not arrays with
an axis to concatenate along, so the tree is built from ``dask.delayed``
tasks rather than ``dask.array.reduction`` (which reduces array blocks and
would need the statistics packed into object arrays) or ``Bag.fold`` (which
would first turn the blocks into a bag): the same few lines serve array
blocks and DataFrame partitions, and the graph keeps Dask's own tree shape.

Prediction maps the in-memory method over the row blocks (``map_blocks`` /
``map_partitions``) and returns a lazy Dask array.

A Gaussian mixture is fitted by EM with one such reduction per iteration: the
E-step and the statistics of each chunk under the current parameters
(``summarize``), summed, then the M-step (``from_stats``). Its initialisation
runs in memory on a random sample of rows.

Nothing here imports Dask at import time. The module is the estimators'
handler of Dask input: ``bayeskit`` registers it with
:mod:`bayeskit._collections` (the estimators sit below this edge module and do
not import it), and an estimator calls it only when its ``accepts``
(:func:`is_dask`) says the input is a Dask collection; Dask is imported then.
"""

from __future__ import annotations

import copy
import uuid

import numpy as np
import pandas as pd

__all__ = [
    "SPLIT_EVERY",
    "fit_classifier",
    "fit_network",
    "is_dask",
    "predict",
    "predict_frame",
    "restoring",
]

# Children per node of the summing tree (Dask's own default fan-in for
# reductions).
SPLIT_EVERY = 8


def restoring(fit, est, *args):
    """``fit(est, *args)``; a failure leaves ``est`` as it was."""
    saved = dict(vars(est))
    try:
        return fit(est, *args)
    except BaseException:
        vars(est).clear()
        vars(est).update(saved)
        raise


def is_dask(X) -> bool:
    """Whether ``X`` is a Dask collection (array, DataFrame, Series), judged by
    the module of its type, so that plain input never imports Dask."""
    module = type(X).__module__
    return (module == "dask" or module.startswith("dask.")) and hasattr(
        X, "__dask_graph__"
    )


def _is_frame_like(X) -> bool:
    return hasattr(X, "map_partitions")


# -- blocks of rows -------------------------------------------------------------------
def _as_row_array(values, lengths, name: str):
    """``values`` (a Dask array or series, or an in-memory 1-D array) as a
    Dask array whose blocks have the row ``lengths``."""
    import dask.array as da

    if is_dask(values):
        if _is_frame_like(values):
            values = values.to_dask_array(lengths=True)
        if values.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got {values.ndim} dimensions")
        if any(np.isnan(values.chunks[0])):
            values = values.compute_chunk_sizes()
        if values.shape[0] != sum(lengths):
            raise ValueError(
                f"X has {sum(lengths)} samples but {name} has {values.shape[0]}; "
                "they must match"
            )
        return values.rechunk((tuple(lengths),))
    values = np.asarray(values)
    if values.ndim != 1 or values.shape[0] != sum(lengths):
        raise ValueError(
            f"X has {sum(lengths)} samples but {name} has shape {values.shape}; "
            f"{name} must be 1-D with one value per row"
        )
    return da.from_array(values, chunks=(tuple(lengths),))


def _row_chunked(X):
    """A 2-D Dask array with known chunk sizes, chunked along the rows only."""
    if X.ndim != 2:
        raise ValueError(
            f"Expected a 2-D Dask array for X, got {X.ndim} dimension(s); "
            "reshape it (X.reshape(-1, 1) for one feature)"
        )
    if any(np.isnan(X.chunks[0])):
        X = X.compute_chunk_sizes()
    return X.rechunk({1: -1})


def _row_blocks(X, columns: dict):
    """The row blocks of ``X`` and of every per-row array in ``columns`` (a
    dict name -> values or None), as lists of ``Delayed`` of equal length.

    A Dask array is rechunked to one block across its columns; a DataFrame
    keeps its partitions, and a Dask series given with it must have as many
    partitions (it is then read partition by partition, as
    ``df[column]`` is).
    """
    if _is_frame_like(X):
        if not hasattr(X, "columns"):
            raise TypeError("X must be a Dask DataFrame or a 2-D Dask array")
        xs = list(X.to_delayed())
        lengths = None
        out = {}
        for name, values in columns.items():
            if values is None:
                out[name] = [None] * len(xs)
            elif is_dask(values) and _is_frame_like(values):
                if values.npartitions != X.npartitions:
                    raise ValueError(
                        f"{name} has {values.npartitions} partitions but X has "
                        f"{X.npartitions}; they must be partitioned alike (e.g. "
                        f"columns of one DataFrame)"
                    )
                out[name] = list(values.to_delayed())
            else:
                if lengths is None:
                    lengths = tuple(int(n) for n in X.map_partitions(len).compute())
                arr = _as_row_array(values, lengths, name)
                out[name] = list(arr.to_delayed().ravel())
        return xs, out
    X = _row_chunked(X)
    lengths = X.chunks[0]
    keep = [i for i, n in enumerate(lengths) if n > 0]
    xs = list(X.to_delayed().ravel())
    out = {}
    for name, values in columns.items():
        if values is None:
            out[name] = [None] * len(keep)
        else:
            arr = _as_row_array(values, lengths, name)
            blocks = list(arr.to_delayed().ravel())
            out[name] = [blocks[i] for i in keep]
    return [xs[i] for i in keep], out


# -- the summing tree -----------------------------------------------------------------
def _add(*parts):
    """The sum of statistics (``None``, an empty chunk, adds nothing)."""
    total = None
    for part in parts:
        if part is not None:
            total = part if total is None else total + part
    return total


def _tree(parts: list, combine, split_every: int = SPLIT_EVERY):
    """``combine`` over ``parts`` as a tree of ``Delayed`` tasks."""
    from dask import delayed

    node = delayed(combine, pure=True)
    parts = list(parts)
    if not parts:
        return delayed(combine, pure=True)()
    while len(parts) > 1:
        parts = [
            node(*parts[i : i + split_every])
            if len(parts[i : i + split_every]) > 1
            # A lone leftover goes up the tree as it is.
            else parts[i]
            for i in range(0, len(parts), split_every)
        ]
    return parts[0]


def _shared(obj):
    """``obj`` as one task of the graph: sent to the workers once, shared by
    every chunk's task (each takes its own copy)."""
    from dask import delayed

    return delayed(obj, traverse=False, name=f"bayeskit-{uuid.uuid4().hex}")


def _summarize_classifier(est, X, y, sample_weight):
    if len(X) == 0:
        return None
    return copy.deepcopy(est).summarize(X, y, sample_weight=sample_weight)


def _summarize_unsupervised(est, X, sample_weight):
    if len(X) == 0:
        return None
    return copy.deepcopy(est).summarize(X, sample_weight=sample_weight)


def _sum_stats(est, xs, blocks, chunk_fn):
    """The statistics of every block, summarized by ``est`` where the block
    lives and summed by the tree; computed."""
    from dask import delayed

    shared = _shared(est)
    task = delayed(chunk_fn, pure=True)
    parts = [task(shared, x, *[b[i] for b in blocks]) for i, x in enumerate(xs)]
    total = _tree(parts, _add).compute()
    if total is None:
        raise ValueError("X has 0 samples; at least one is required")
    return total


# -- the layout pass: classes and categories ---------------------------------------
def _column_values(X, j):
    col = X.iloc[:, j] if hasattr(X, "iloc") else X[:, j]
    values = col.to_numpy() if hasattr(col, "to_numpy") else np.asarray(col)
    if values.dtype.kind not in "iub":
        missing = np.asarray(pd.isna(values), dtype=bool)
        values = values[~missing]
    return values


def _distinct_of_block(X, y, sample_weight, columns):
    """The distinct labels of ``y`` (all rows) and the distinct values of the
    ``columns`` of ``X`` (rows of positive weight) in one block."""
    labels = None if y is None else pd.unique(np.asarray(y).ravel())
    if sample_weight is not None and len(columns):
        keep = np.asarray(sample_weight, dtype=float) > 0
        X = X[keep] if not hasattr(X, "iloc") else X.iloc[keep]
    return labels, [pd.unique(_column_values(X, j)) for j in columns]


def _merge_distinct(*parts):
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    labels = [p[0] for p in parts if p[0] is not None]
    merged = pd.unique(np.concatenate(labels)) if labels else None
    columns = [
        pd.unique(np.concatenate([p[1][j] for p in parts]))
        for j in range(len(parts[0][1]))
    ]
    return merged, columns


def _sorted(values: np.ndarray) -> np.ndarray:
    try:
        return np.sort(values, kind="stable")
    except TypeError:  # values that do not sort together
        return values


def _encoded_columns(est, X) -> list[int]:
    """The columns whose distinct values the estimator's encoding needs: the
    estimator says, from an in-memory prototype of ``X``'s columns."""
    ask = getattr(est, "_encoded_columns", None)
    if ask is None:
        return []
    if hasattr(X, "columns"):
        meta = X._meta
    else:
        meta = np.zeros((1, X.shape[1]), dtype=X.dtype)
    return list(ask(meta))


def _cycle(values: np.ndarray, n: int) -> np.ndarray:
    return values[np.arange(n) % len(values)]


def _prototype(X, columns, distinct, n):
    """``n`` rows in the form of ``X`` (its columns and dtypes) that show every
    value of ``distinct`` in the ``columns`` (zeros elsewhere)."""
    if hasattr(X, "columns"):
        meta = X._meta
        data = {}
        for j, name in enumerate(meta.columns):
            dtype = meta.dtypes.iloc[j]
            if j in columns:
                values = distinct[list(columns).index(j)]
                values = _cycle(values, n) if len(values) else [None] * n
                data[name] = pd.Series(values, dtype=dtype)
            else:
                data[name] = pd.Series(np.zeros(n)).astype(dtype)
        return pd.DataFrame(data, columns=meta.columns)
    proto = np.zeros((n, X.shape[1]), dtype=X.dtype)
    for j, values in zip(columns, distinct):
        if len(values):
            proto[:, j] = _cycle(values, n)
    return proto


def _layout(est, X, xs, ys, ws, need_labels: bool):
    """One pass over the blocks: the sorted distinct labels (None if not
    needed) and the prototype rows that fix the encoding."""
    from dask import delayed

    columns = _encoded_columns(est, X)
    task = delayed(_distinct_of_block, pure=True)
    # Blocks of X (and weights) only where categories are needed: otherwise
    # the pass reads the labels alone.
    parts = [
        task(
            x if len(columns) else None,
            ys[i] if need_labels else None,
            ws[i] if len(columns) else None,
            columns,
        )
        for i, x in enumerate(xs)
    ]
    merged = _tree(parts, _merge_distinct).compute()
    if merged is None:
        raise ValueError("X has 0 samples; at least one is required")
    labels, distinct = merged
    labels = None if labels is None else _sorted(labels)
    distinct = [_sorted(v) for v in distinct]
    n = max([1, *(len(v) for v in distinct)])
    return labels, columns, distinct, n


# -- supervised classifiers -----------------------------------------------------------
def fit_classifier(est, X, y, sample_weight=None, classes=None, partial=False):
    """``fit`` (or ``partial_fit``) of a generative classifier on Dask data.

    The first fit finds the classes and the categories in one pass (or takes
    ``classes``), fixes them on a fresh copy of ``est`` through a prototype
    chunk, sums the statistics of every chunk and sets the parameters; a
    failure leaves ``est`` as it was. A later ``partial_fit`` adds the
    statistics of the chunks to ``stats_``.
    """
    name = type(est).__name__
    if y is None:
        raise ValueError(f"{name} requires y to be passed, but the target y is None")
    return restoring(_fit_classifier, est, X, y, sample_weight, classes, partial)


def _fit_classifier(est, X, y, sample_weight, classes, partial):
    from .._base.classifier import InsufficientData

    xs, blocks = _row_blocks(X, {"y": y, "sample_weight": sample_weight})
    ys, ws = blocks["y"], blocks["sample_weight"]
    first = not (partial and hasattr(est, "classes_"))
    if first and est._fits_class_models_by_em:
        from ._em import fit_mixture_classifier

        return fit_mixture_classifier(est, X, y, sample_weight, classes, partial)
    if first:
        labels, columns, distinct, n = _layout(
            est, X, xs, ys, ws, need_labels=classes is None
        )
        if classes is not None:
            labels = np.unique(np.asarray(classes))
        n = max(n, len(labels))
        proto_X = _prototype(X, columns, distinct, n)
        proto_y = _cycle(np.asarray(labels), n)
        # Fixes the classes and the encoding afresh (as a refit in memory
        # does); the prototype's statistics are not used.
        est._summarize(proto_X, proto_y, labels, None, reset=True, refit=True)
    stats = _sum_stats(est, xs, [ys, ws], _summarize_classifier)
    if not first:
        stats = est.stats_ + stats
    if not partial:
        return est.from_stats(stats)
    try:
        est._set_stats(stats)
    except InsufficientData as exc:
        # As in memory: the statistics wait for more rows.
        est.stats_, est._insufficient = stats, str(exc)
    return est


def _class_weights(y, sample_weight, labels):
    """The weight of every class in one block (``labels`` sorted)."""
    y = np.asarray(y).ravel()
    idx = np.searchsorted(labels, y)
    sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    return np.bincount(idx, weights=sw, minlength=len(labels)).astype(float)


# -- Bayesian networks --------------------------------------------------------------
def fit_network(est, X, sample_weight=None, partial=False):
    """``fit`` (or ``partial_fit``) of a :class:`~bayeskit.BayesianNetwork`'s
    CPT counts on Dask data: the variables' states in one pass (or from
    ``states``), the counts of every chunk summed by the tree."""
    saved = dict(vars(est))
    try:
        xs, blocks = _row_blocks(X, {"sample_weight": sample_weight})
        ws = blocks["sample_weight"]
        first = not (partial and hasattr(est, "stats_"))
        if first:
            _, columns, distinct, n = _layout(est, X, xs, ws, ws, need_labels=False)
            est._reset()
            est._summarize(_prototype(X, columns, distinct, n), None, reset=True)
        stats = _sum_stats(est, xs, [ws], _summarize_unsupervised)
        return est.from_stats(stats if first else est.stats_ + stats)
    except BaseException:
        vars(est).clear()
        vars(est).update(saved)
        raise


# -- prediction -----------------------------------------------------------------------
def _call(part, est, method, width=None, dtype=None):
    if part.shape[0] == 0:  # an empty chunk or partition (after a filter, say)
        return np.empty((0,) if width is None else (0, width), dtype=dtype)
    return getattr(est, method)(part)


def _output_spec(est, method: str, X):
    """The width (None: one value per row) and dtype of ``est.<method>``, as
    the estimator declares them."""
    return est._output_spec(method, getattr(X, "dtype", None) == np.float32)


def predict(est, method: str, X):
    """``est.<method>(X)`` on a Dask array or DataFrame, lazily: the in-memory
    method mapped over the row blocks (``map_blocks`` / ``map_partitions``),
    returned as a Dask array with one row per row of ``X``. Nothing is
    computed until the result is."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est)
    width, dtype = _output_spec(est, method, X)
    meta = np.empty((0,) if width is None else (0, width), dtype=dtype)
    if _is_frame_like(X):
        if not hasattr(X, "columns"):
            raise TypeError("X must be a Dask DataFrame or a 2-D Dask array")
        return X.map_partitions(_call, est, method, width, dtype, meta=meta)
    if X.ndim != 2:
        raise ValueError(
            f"Expected a 2-D Dask array for X, got {X.ndim} dimension(s); "
            "reshape it (X.reshape(-1, 1) for one feature)"
        )
    X = X.rechunk({1: -1})
    if width is None:
        return X.map_blocks(
            _call, est, method, None, dtype, drop_axis=1, dtype=dtype, meta=meta
        )
    return X.map_blocks(
        _call,
        est,
        method,
        width,
        dtype,
        chunks=(X.chunks[0], (width,)),
        dtype=dtype,
        meta=meta,
    )


def _call_with(part, est, method, kwargs, meta):
    if len(part) == 0:  # an empty partition: an empty frame of the result's columns
        return meta.set_axis(part.index[:0], axis=0) if method != "predict" else part
    return getattr(est, method)(part, **kwargs)


def predict_frame(est, method: str, X, /, **kwargs):
    """``est.<method>(X, **kwargs)`` of a method that returns a pandas
    DataFrame (a :class:`~bayeskit.BayesianNetwork`'s ``predict`` and
    ``predict_proba``) on a Dask DataFrame, lazily: the in-memory method
    mapped over the partitions (``map_partitions``), a Dask DataFrame with the
    index of ``X``. Its columns come from one row with every cell missing, so
    nothing is computed until the result is."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est)
    if not (_is_frame_like(X) and hasattr(X, "columns")):
        raise TypeError(f"X must be a Dask DataFrame for {method}, got {type(X)}")
    blank = pd.DataFrame({c: [None] for c in X.columns}, columns=X.columns)
    if method == "predict":
        meta = X._meta
    else:
        meta = getattr(est, method)(blank, **kwargs).iloc[:0]
    return X.map_partitions(_call_with, est, method, kwargs, meta, meta=meta)
