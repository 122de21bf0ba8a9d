"""Gaussian mixtures on Dask: EM with one reduction per iteration.

Each iteration sums the statistics of every chunk under the current
parameters (the E-step, :meth:`~bayeskit.GaussianMixture.summarize`) by the
tree of :mod:`bayeskit._dask._edge`, then sets the parameters from the sum (the
M-step, ``from_stats``). The start (k-means++ or random, as in memory) runs in
memory on a uniform sample of at most ``INIT_SAMPLE_SIZE`` rows (the first
rows, for validation only, when the initial parameters are all given). The mixture
classifier fits every class's mixture this way, one class after the other.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._edge import (
    _add,
    _as_row_array,
    _class_weights,
    _is_frame_like,
    _layout,
    _row_blocks,
    _row_chunked,
    _sum_stats,
    _summarize_unsupervised,
    _tree,
    restoring,
)

# Rows drawn (uniformly, without replacement) from a Dask collection to start
# a Gaussian mixture's EM in memory.
INIT_SAMPLE_SIZE = 10_000

# EM on a Dask array keeps its chunks in the memory of a dask.distributed
# cluster's workers for the fit (``persist``) when the array takes at most
# this fraction of the workers' summed ``memory_limit``: every iteration then
# reads them there instead of computing them again (reading files,
# generating rows). Larger data are computed again in every iteration.
PERSIST_FRACTION = 0.25


def _persisted_if_it_fits(X):
    """``X`` persisted on the workers of the active dask.distributed client
    for as long as the caller holds the result, if it fits (see
    :data:`PERSIST_FRACTION`); ``X`` itself otherwise (no client, another
    scheduler configured, no memory limit known, or too large). Chunks the
    caller persisted already are reused as they are."""
    from dask.base import get_scheduler

    try:
        from distributed import Client
    except ImportError:
        return X
    client = getattr(get_scheduler(collections=[X]), "__self__", None)
    if not isinstance(client, Client):
        return X
    workers = client.scheduler_info().get("workers", {}).values()
    limits = [w.get("memory_limit") or 0 for w in workers]
    if not limits or min(limits) <= 0 or X.nbytes > PERSIST_FRACTION * sum(limits):
        return X
    return client.persist(X)


def fit_mixture_classifier(est, X, y, sample_weight, classes, partial):
    """A :class:`~bayeskit.GaussianMixtureClassifier` on Dask: every class's
    mixture fitted by EM on Dask on the class's rows (:func:`fit_mixture`,
    one reduction per iteration), as in memory one class after the other
    with one random generator."""
    from dask import delayed

    from .._base.classifier import ClassifierStats, InsufficientData

    frame_names = None
    if _is_frame_like(X):
        if not hasattr(X, "columns"):
            raise TypeError("X must be a Dask DataFrame or a 2-D Dask array")
        frame_names = X.columns
        X = X.to_dask_array(lengths=True)
    X = _row_chunked(X)
    lengths = X.chunks[0]
    yd = _as_row_array(y, lengths, "y")
    swd = None
    if sample_weight is not None:
        swd = _as_row_array(sample_weight, lengths, "sample_weight")
    xs, blocks = _row_blocks(X, {"y": yd, "sample_weight": swd})
    ys, ws = blocks["y"], blocks["sample_weight"]
    if classes is None:
        labels, _, _, _ = _layout(est, X, xs, ys, ws, need_labels=True)
    else:
        labels = np.unique(np.asarray(classes))
    # Validation, the classes and the encoding, from a few rows.
    head = np.asarray(X[: min(len(labels), X.shape[0])].compute())
    if frame_names is not None:
        head = pd.DataFrame(head, columns=frame_names)
    for attr in [a for a in vars(est) if a.endswith("_") and a[0] != "_"]:
        delattr(est, attr)
    est._prepare_X(head, reset=True)
    if len(labels) < est._min_classes:
        raise ValueError(
            f"{type(est).__name__} needs at least two classes; y has only one "
            f"class, {labels.tolist()}"
        )
    est.classes_ = labels
    task = delayed(_class_weights, pure=True)
    class_weight = _tree(
        [task(yb, wb, labels) for yb, wb in zip(ys, ws)], _add
    ).compute()
    if classes is None and np.count_nonzero(class_weight) < est._min_classes:
        raise ValueError(
            f"{type(est).__name__} needs at least two classes with positive "
            "sample_weight"
        )
    mixtures = []
    for c, gm in enumerate(est._new_models()):  # one random state, in class order
        rows = yd == labels[c]
        mixtures.append(
            gm.fit(X[rows], sample_weight=None if swd is None else swd[rows])
        )
    est.mixtures_ = mixtures
    # The per-class statistics are of the estimator's own type (it says).
    stats = ClassifierStats(
        class_weight, est._stats_type(tuple(gm.stats_ for gm in mixtures))
    )
    if not partial:
        return est.from_stats(stats)
    try:
        est._set_stats(stats)
    except InsufficientData as exc:
        est.stats_, est._insufficient = stats, str(exc)
    return est


# -- Gaussian mixtures: EM with one reduction per iteration ------------------------
def _weighted_moments(X, sample_weight):
    """The weighted mean and covariance of a Dask array's rows (two passes)."""
    import dask
    import dask.array as da

    sw = (
        da.ones(X.shape[0], chunks=(X.chunks[0],))
        if sample_weight is None
        else (sample_weight)
    )
    total = sw.sum()
    mean = (sw @ X) / total
    mean, total = dask.compute(mean, total)
    r = X - mean
    scatter = ((r * sw[:, None]).T @ r).compute() / total
    return scatter


def _sample_rows(X, sample_weight, size, rng):
    """A uniform random sample of ``size`` rows of a Dask array (all rows if
    there are fewer), with their weights, in memory."""
    n = X.shape[0]
    if n <= size:
        rows = slice(None)
    else:
        # Distinct uniform draws (duplicates rejected), in O(size) memory:
        # choice(n, replace=False) of a RandomState permutes all n indices.
        rows = np.unique(rng.randint(0, n, size=size))
        while len(rows) < size:
            rows = np.union1d(rows, rng.randint(0, n, size=size - len(rows)))
    Xs = np.asarray(X[rows].compute())
    sw = None if sample_weight is None else np.asarray(sample_weight[rows].compute())
    return Xs, sw


def _mixture_input(X, sample_weight):
    """A mixture's Dask input as a 2-D array (for samples and moments), its
    row blocks in their own form (DataFrame partitions keep their column
    names) with the weights', the weights as a Dask array, and the column
    names (None for an array)."""
    original = X
    names = None
    if _is_frame_like(X):
        if not hasattr(X, "columns"):
            raise TypeError("X must be a Dask DataFrame or a 2-D Dask array")
        names = np.asarray(X.columns, dtype=object)
        X = X.to_dask_array(lengths=True)
    X = _row_chunked(X)
    if names is None:
        X = _persisted_if_it_fits(X)
    sw_da = None
    if sample_weight is not None:
        sw_da = _as_row_array(sample_weight, X.chunks[0], "sample_weight")
    xs, blocks = _row_blocks(
        original if names is not None else X,
        {"sample_weight": sample_weight if names is not None else sw_da},
    )
    return X, xs, blocks["sample_weight"], sw_da, names


def _start_mixture(est, X, sw_da, names, rng, reset):
    """Validation and the components from a sample of the rows (the
    data's covariance of ``covariance_prior='empirical'`` from all of them);
    the sample, validated."""
    given = ("weights_init", "means_init", "precisions_init")
    all_given = all(getattr(est, name, None) is not None for name in given)
    sws = None
    if all_given:
        # Nothing is drawn from the rows: the first ones validate the input
        # (and centre the numerics) without a pass over all the chunks.
        size = min(X.shape[0], INIT_SAMPLE_SIZE)
        Xs = np.asarray(X[:size].compute())
        sws = None if sw_da is None else np.asarray(sw_da[:size].compute())
    if not all_given or (sws is not None and not sws.any()):
        Xs, sws = _sample_rows(X, sw_da, INIT_SAMPLE_SIZE, rng)
    if names is not None:
        Xs = pd.DataFrame(Xs, columns=names)
    Xv, swv = est._prepare(Xs, sws, reset=reset)
    est._start(Xv, swv)
    if isinstance(est.covariance_prior, str):  # 'empirical': of all the rows
        scatter = _weighted_moments(X.astype(np.float64), sw_da)
        est._triple = _components_with_scatter(est, scatter)
    return Xv, swv


def partial_fit_mixture(est, X, sample_weight=None):
    """One stepwise EM update of a :class:`~bayeskit.GaussianMixture` on all
    the rows of a Dask collection (one reduction); the first call starts
    from a sample of the rows, as :func:`fit_mixture`."""
    from sklearn.utils import check_random_state

    saved = dict(vars(est))
    try:
        X, xs, ws, sw_da, names = _mixture_input(X, sample_weight)
        first = getattr(est, "stats_", None) is None
        if first:
            rng = check_random_state(est.random_state)
            Xv, swv = _start_mixture(est, X, sw_da, names, rng, reset=True)
            est._set_params(est._start_params(Xv, swv, rng))
            est.n_iter_, est.lower_bounds_ = 0, []
        elif X.shape[1] != est.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(est).__name__} is "
                f"expecting {est.n_features_in_} features as input"
            )
        est._step(_sum_stats(est, xs, [ws], _summarize_unsupervised), first)
        est.n_iter_ += 1
        est.converged_ = False
        est._finish()
        return est
    except BaseException:
        vars(est).clear()
        vars(est).update(saved)
        raise


def fit_mixture(est, X, sample_weight=None):
    """EM of a :class:`~bayeskit.GaussianMixture` on a Dask array or DataFrame.

    Every initialisation starts in memory on a uniform random sample of
    :data:`INIT_SAMPLE_SIZE` rows (drawn with ``random_state``) unless
    ``weights_init``, ``means_init`` and ``precisions_init`` are all given.
    Every iteration is then one reduction: the E-step and the statistics of
    each chunk under the current parameters (``summarize``), summed by the
    tree, and the M-step (``from_stats``). From the same initial parameters
    the iterations, ``lower_bound_`` and the parameters are those of the
    in-memory EM. ``covariance_prior='empirical'`` takes the covariance of
    all the rows (two more passes).
    """
    return restoring(_fit_mixture, est, X, sample_weight)


def _fit_mixture(est, X, sample_weight):
    from dataclasses import replace

    from sklearn.utils import check_random_state

    X, xs, ws, sw_da, names = _mixture_input(X, sample_weight)
    rng = check_random_state(est.random_state)
    warm = est._warm()
    # Validation and the components, from a sample (the first start's).
    Xv, swv = _start_mixture(est, X, sw_da, names, rng, reset=not warm)
    previous = est.stats_
    starts = 0

    def start(random_state):
        # Every start after the first draws its own sample of the rows.
        nonlocal starts, Xv, swv
        if warm:
            return est._current_params()
        if starts > 0:
            Xs, sws = _sample_rows(X, sw_da, INIT_SAMPLE_SIZE, random_state)
            if names is not None:
                Xs = pd.DataFrame(Xs, columns=names)
            Xv, swv = est._prepare(Xs, sws, reset=False)
        starts += 1
        return est._start_params(Xv, swv, random_state)

    def e_step(data, params, components):
        # One reduction: every block's statistics under ``params``, summed.
        est._set_params(params)
        stats = _sum_stats(est, xs, [ws], _summarize_unsupervised)
        return replace(stats, layout=None)

    est._fit_components(None, start, rng, e_step, n_init=1 if warm else None)
    if est.n_iter_ == 0:  # no E-step ran: the statistics of the start
        est.stats_ = previous if warm else e_step(None, est._current_params(), None)
    est._finish()
    return est


def _components_with_scatter(est, scatter):
    """The mixture's components with the prior scatter ``scatter``."""
    from sklearn.base import clone

    tmp = clone(est).set_params(covariance_prior=scatter)
    tmp.n_features_in_ = est.n_features_in_
    return tmp._make_components()
