"""Input-output HMMs on Dask: generalised EM where the sequences live.

The sequences come as for Baum-Welch (:mod:`bayeskit._dask._hmm`): a Dask
bag with one sequence per item, or a Dask array of the rows of all sequences
with ``lengths``, cut where a sequence ends. Their covariates travel with
them, one row per step:

- with a Dask array X: a Dask array of shape ``(n_samples, n_covariates)``
  (or 1-D for one covariate) whose row chunks are X's (then the two are cut
  alike at the sequences' ends and every block meets its covariates where it
  lives; other chunks are a ValueError naming ``covariates``), or an array
  in memory (cut into X's blocks);
- with a bag: a bag with one array per sequence, partitioned as X (the same
  number of partitions, and of sequences in each), or in memory a list with
  one array per sequence, or an array of the rows of all sequences in the
  bag's order.

**The E-step** of every partition runs where it lives, once per iteration:
forward-backward with a transition matrix per step
(:meth:`~bayeskit.hmm.InputOutputHMM.summarize`). Its result stays there
(persisted): the family's statistics, the log evidence and the totals of the
chain's posteriors are summed by the tree of :mod:`bayeskit._dask._edge`,
and the per-step pairwise posteriors with their covariates, which the
M-step's logistic regressions read and which have no statistics of fixed
size, do not travel.

**The M-step** of the start and of every row of the transitions is the
in-memory one (:func:`~bayeskit.hmm._logistic.update_softmax_rows`: Newton's
method with a backtracking line search), whose every evaluation of the
objective, its gradient and its Hessian at the rows' current points is a sum
over the steps: each partition computes its terms for every row at once
(:func:`~bayeskit.hmm._logistic.data_terms`), the tree sums them, and the
driver takes the Newton step. One reduction per Newton round (all the rows in
lockstep, the gradient and Hessian computed with the objective so that an
accepted step needs no second round); what travels is ``(k (d + 1))^2``
numbers per row and partition. The steps are the in-memory steps up to the
order of the sums, so the fit equals the in-memory fit to rounding.

The start reads a sample of whole sequences in memory, as for Baum-Welch (the
coefficients start at zero, so it reads no covariate). ``summarize`` of a
Dask chunk is one such E-step (the posteriors left where they were
computed: :class:`PartitionedInputStats`, which add to each other and to
statistics in memory), and ``partial_fit`` adds it to ``stats_`` and takes the
M-step. Prediction is lazy, as
for the other HMMs: a bag in gives a bag out (one item per sequence), an
array in gives a Dask array; ``score`` is the computed sum.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from ._edge import _add, _shared, _tree, is_dask, restoring
from ._hmm import (
    _cut_at_sequences,
    _is_bag,
    _rows_of,
    _with_lengths,
    prediction_method,
    start_sample,
)

__all__ = [
    "PartitionedInputStats",
    "fit_iohmm",
    "partial_fit_iohmm",
    "predict_iohmm",
    "summarize_iohmm",
]


# -- covariates: aligned with the partitions ------------------------------------------
def _check_dask_covariates(X, covariates):
    """A Dask array of covariates chunked along the rows as the Dask array
    ``X``, both with known chunk sizes: ``(X, covariates as 2-D)``."""
    if _is_bag(covariates) or not hasattr(covariates, "chunks"):
        raise ValueError(
            "covariates must be a Dask array (or an array in memory) when X is "
            f"a Dask array, got {type(covariates).__name__}"
        )
    if covariates.ndim not in (1, 2):
        raise ValueError(
            "covariates must have shape (n_samples, n_covariates), got "
            f"{covariates.ndim} dimensions"
        )
    if covariates.ndim == 1:
        covariates = covariates.reshape(-1, 1)
    if any(np.isnan(X.chunks[0])):
        X = X.compute_chunk_sizes()
    if any(np.isnan(covariates.chunks[0])):
        covariates = covariates.compute_chunk_sizes()
    if covariates.chunks[0] != X.chunks[0]:
        raise ValueError(
            "covariates must be chunked along the rows as X is (the same "
            f"chunks[0]), so that every block of X meets its covariates: X has "
            f"{X.chunks[0]}, covariates {covariates.chunks[0]} (rechunk them "
            "with covariates.rechunk({0: X.chunks[0]}))"
        )
    return X, covariates


def _array_covariates(X, lengths, covariates):
    """X cut at the sequences' ends with its covariates cut alike: ``(X cut,
    lengths of every block, covariate blocks as a list of Delayed or
    arrays)``."""
    if covariates is None:
        return (*_cut_at_sequences(X, lengths), None)
    if is_dask(covariates):
        X, covariates = _check_dask_covariates(X, covariates)
    Xc, per_block = _cut_at_sequences(X, lengths)
    cuts = Xc.chunks[0]
    if is_dask(covariates):
        U = covariates.rechunk((cuts, -1))
        return Xc, per_block, list(U.to_delayed().ravel())
    U = _in_memory(covariates)
    if U.shape[0] != Xc.shape[0]:
        raise ValueError(
            f"covariates must have one row per step of X ({Xc.shape[0]}), got "
            f"{U.shape[0]}"
        )
    return Xc, per_block, np.split(U, np.cumsum(cuts)[:-1])


def _in_memory(covariates) -> np.ndarray:
    try:
        U = np.asarray(covariates, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            "covariates must be an array of numbers of shape (n_samples, n_covariates)"
        ) from None
    if U.ndim == 1:
        U = U[:, None]
    if U.ndim != 2:
        raise ValueError(
            f"covariates must have shape (n_samples, n_covariates), got {U.shape}"
        )
    return U


def _bag_covariates(X, covariates, counts, steps):
    """The covariates of every partition of the bag ``X``: Delayed lists (a
    bag of them) or, in memory, a list with one array per sequence cut by
    the partitions' numbers of sequences ``counts``, or an array of every
    step cut by their numbers of steps ``steps`` (ints or Delayed ints)."""
    from dask import delayed

    if _is_bag(covariates):
        if covariates.npartitions != X.npartitions:
            raise ValueError(
                f"covariates has {covariates.npartitions} partitions but X has "
                f"{X.npartitions}; a bag of covariates must be partitioned as X "
                "(one array per sequence, in the same partitions)"
            )
        return list(covariates.to_delayed())
    if is_dask(covariates):
        raise ValueError(
            "covariates must be a bag (one array per sequence, partitioned as "
            "X) or in memory when X is a bag, not a Dask array"
        )
    if not isinstance(covariates, (list, tuple)):
        covariates, counts = _in_memory(covariates), steps
    shared = _shared(covariates)
    task = delayed(_slice, pure=True)
    out, offset = [], 0
    for n in counts:
        out.append(task(shared, offset, n))
        offset = offset + n
    return out


def _slice(covariates, offset, n):
    return covariates[offset : offset + n]


def _steps(part) -> int:
    """The number of steps of a bag partition's sequences."""
    return int(sum(len(s) for s in part))


def _aligned(covs, lens) -> np.ndarray:
    """The covariates of a partition's steps, ``(n_steps, n_covariates)``
    (ValueError naming ``covariates`` if they do not match its sequences)."""
    if isinstance(covs, np.ndarray):
        if len(covs) != int(np.sum(lens)):
            raise ValueError(
                "covariates must have one row per step of X: a partition of X "
                f"holds {int(np.sum(lens))} steps but its covariates {len(covs)}"
            )
        return covs.reshape(len(covs), -1)
    parts = [np.asarray(c, dtype=float) for c in covs]
    parts = [p.reshape(len(p), -1) for p in parts]
    if len({p.shape[1] for p in parts}) > 1:
        raise ValueError("covariates of every sequence must have the same columns")
    got = [len(p) for p in parts]
    if got != [int(n) for n in lens]:
        raise ValueError(
            "covariates must have one array per sequence of X, each with a row "
            f"per step; a partition of X holds sequences of {list(map(int, lens))} "
            f"steps but its covariates have {got} rows"
        )
    return np.concatenate(parts)


# -- the E-step, where each partition lives --------------------------------------
def _partition_stats(est, params, part, covs, weights):
    """The E-step of one partition's sequences under ``params`` (None for an
    empty partition or one of zero weight)."""
    rows, lens = _rows_of(part)
    if rows is None or (weights is not None and not np.sum(weights) > 0):
        return None
    U = _aligned(covs, lens)
    data = est._data(rows, lens, weights, U, reset=False)
    return est._expected_stats(data, params, est._components())


@dataclass(frozen=True)
class _Totals:
    start: np.ndarray
    transitions: np.ndarray
    occupancy: np.ndarray

    def __add__(self, other):
        return _Totals(
            self.start + other.start,
            self.transitions + other.transitions,
            self.occupancy + other.occupancy,
        )


def _light(stats):
    """A partition's statistics without the per-step posteriors."""
    from .._base.em import LatentStats

    if stats is None:
        return None
    chain = stats.structure
    totals = _Totals(chain.start, chain.transitions, chain.occupancy)
    return LatentStats(totals, stats.emission, stats.log_evidence)


@dataclass(frozen=True, eq=False)
class PartitionedInputStats:
    """The chain's statistics of a fit on Dask: every partition's per-step
    posteriors kept where they were computed (``pieces``, persisted
    ``Delayed`` statistics, None for an empty partition), and their totals.

    The M-step reads them through :meth:`row_terms`, one reduction per call;
    statistics in memory added to them join as one more piece. Pickled, they
    are gathered into the in-memory statistics, which the in-memory fit
    keeps.
    """

    pieces: tuple
    start: np.ndarray
    transitions: np.ndarray
    occupancy: np.ndarray

    @property
    def total_weight(self) -> np.ndarray:
        return self.occupancy

    def row_terms(self, asks) -> list:
        """The data terms of the M-step's rows at their points, summed over
        the partitions where they live (with the derivatives, asked or not:
        an accepted step then needs no second round)."""
        from dask import delayed

        asks = [(key, (*point[:-1], True)) for key, point in asks]
        task = delayed(_piece_terms, pure=True)
        shared = _shared(asks)
        tasks = [task(p, shared) for p in self.pieces]
        total = _tree(tasks, _add_terms).compute(**_where(self.pieces))
        return [tuple(t) for t in total]

    def __add__(self, other):
        """The statistics of both (``partial_fit`` after a fit on Dask adds a
        chunk's statistics in memory: they join as one more piece)."""
        from .._base.em import LatentStats

        if isinstance(other, PartitionedInputStats):
            pieces = other.pieces
        elif hasattr(other, "pair_inputs"):  # in memory
            pieces = (_shared(LatentStats(other, None)),)
        else:
            return NotImplemented
        return PartitionedInputStats(
            self.pieces + tuple(pieces),
            self.start + other.start,
            self.transitions + other.transitions,
            self.occupancy + other.occupancy,
        )

    def __radd__(self, other):
        """Statistics in memory first, then these."""
        from .._base.em import LatentStats

        if not hasattr(other, "pair_inputs"):
            return NotImplemented
        return PartitionedInputStats(
            (_shared(LatentStats(other, None)), *self.pieces),
            other.start + self.start,
            other.transitions + self.transitions,
            other.occupancy + self.occupancy,
        )

    def gathered(self):
        """The in-memory statistics (every partition's, concatenated)."""
        from dask import compute

        values = compute(*self.pieces, **_where(self.pieces))
        pieces = [p.structure for p in values if p is not None]
        total = pieces[0]
        for piece in pieces[1:]:
            total = total + piece
        return total

    def __reduce__(self):
        return _identity, (self.gathered(),)

    def __deepcopy__(self, memo):
        return self  # immutable: the pieces are persisted values


def _where(pieces) -> dict:
    """The scheduler of the cluster that holds persisted ``pieces`` (empty:
    the configured one), so that a later M-step or pickling under another
    default scheduler reads them where they are."""
    try:
        from distributed import futures_of
    except ImportError:
        return {}
    for piece in pieces:
        futures = futures_of(piece)
        if futures:
            return {"scheduler": futures[0].client.get}
    return {}


def _identity(value):
    return value


def _piece_terms(piece, asks):
    if piece is None:
        return None
    return piece.structure.row_terms(asks)


def _add_terms(*parts):
    """The data terms of several partitions, added row by row."""
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    out = []
    for terms in zip(*parts):
        f, grad, hess = terms[0]
        for more in terms[1:]:
            f, grad, hess = f + more[0], grad + more[1], hess + more[2]
        out.append((f, grad, hess))
    return out


# -- the fit ----------------------------------------------------------------------
def fit_iohmm(est, X, lengths=None, sequence_weight=None, covariates=None):
    """Generalised EM of an :class:`~bayeskit.hmm.InputOutputHMM` on a Dask
    bag of sequences or a Dask array with ``lengths``, with their
    ``covariates`` (see the module); a failure leaves ``est`` as it was."""
    return restoring(_fit, est, X, lengths, sequence_weight, covariates)


def _width(covariates) -> int:
    """The number of covariates, read from their shape (or first array)."""
    if covariates is None:
        raise ValueError(
            "covariates are required: InputOutputHMM reads an array of shape "
            "(n_samples, n_covariates) aligned with the steps of X, passed as "
            "covariates= (a column of zeros is HiddenMarkovModel)"
        )
    if _is_bag(covariates):
        first = covariates.take(1, npartitions=-1)
        if not len(first):
            raise ValueError("covariates must hold one array per sequence of X")
        return int(np.prod(np.shape(first[0])[1:], dtype=int))
    if is_dask(covariates):
        return 1 if covariates.ndim == 1 else int(covariates.shape[1])
    if isinstance(covariates, (list, tuple)):
        if not covariates:
            raise ValueError("covariates must hold one array per sequence of X")
        shape = np.shape(covariates[0])
        return 1 if len(shape) == 1 else int(np.prod(shape[1:], dtype=int))
    return _in_memory(covariates).shape[1]


def _fit(est, X, lengths, sequence_weight, covariates):
    d = _width(covariates)

    def read(rows, lens, w, reset):
        # The start reads no covariate (the coefficients start at zero): a
        # column of zeros of their width fixes n_covariates_in_.
        return est._data(rows, lens, w, np.zeros((len(rows), d)), reset=reset)

    if _is_bag(X):
        parts, part_weights, source, described, data = start_sample(
            est, X, lengths, sequence_weight, data=read
        )
        counts = [len(desc[0]) for desc in described]
        steps = [int(desc[0].sum()) for desc in described]
        covs = _bag_covariates(X, covariates, counts, steps)
    else:
        Xc, per_block, covs = _array_covariates(X, lengths, covariates)
        parts, part_weights, source, described, data = start_sample(
            est, Xc, per_block_lengths(per_block), sequence_weight, data=read
        )
        if len(parts) != len(covs):  # pragma: no cover - cut alike
            raise ValueError("covariates must be cut as X is")
    # Covariates in memory enter the graph once, not once per iteration.
    covs = [c if is_dask(c) else _shared(c) for c in covs]
    Xt, lens, w, _ = data
    n_steps = int(sum(desc[0].sum() for desc in described))
    per_step = Xt.size / len(Xt) if Xt.ndim > 1 else 1
    est._plan_init(int(n_steps * per_step))
    row_weight = np.ones(len(Xt)) if w is None else np.repeat(w, lens)
    components = est._components()
    start = est._starts(Xt, row_weight, components)
    shared = _sent(est)

    def e_step(_, params, components):
        return _expected(shared, params, parts, covs, part_weights)

    est._fit_components(source, start, None, expected_stats=e_step)
    if est.n_iter_:
        est._warn_unvisited(est.stats_)
    return est


def _sent(est):
    """A copy of ``est`` as one task of the graph, without its statistics."""
    model = copy.copy(est)
    vars(model).pop("stats_", None)
    return _shared(copy.deepcopy(model))


def _expected(shared, params, parts, covs, part_weights):
    """The E-step of every partition under ``params``, persisted where it
    ran, and the totals summed: the statistics (LatentStats)."""
    from dask import delayed, persist

    from .._base.em import LatentStats

    chunk = delayed(_partition_stats, pure=True)
    current = _shared(params)
    pieces = persist(
        *[
            chunk(shared, current, p, c, pw)
            for p, c, pw in zip(parts, covs, part_weights)
        ]
    )
    total = _tree([delayed(_light, pure=True)(p) for p in pieces], _add).compute()
    if total is None:
        raise ValueError("sequence_weight must not be all zero")
    chain = total.structure
    return LatentStats(
        PartitionedInputStats(
            tuple(pieces), chain.start, chain.transitions, chain.occupancy
        ),
        total.emission,
        total.log_evidence,
    )


def _chunks(X, lengths, sequence_weight, covariates):
    """The partitions, their covariates and their sequences' weights, lazily
    (no start sample): ``(parts, covs, part_weights)``."""
    from dask import delayed

    from ._hmm import _partitions

    _width(covariates)
    if _is_bag(X):
        parts, part_weights, _, _ = _partitions(X, lengths, sequence_weight)
        counts = [delayed(len, pure=True)(p) for p in parts]
        steps = [delayed(_steps, pure=True)(p) for p in parts]
        covs = _bag_covariates(X, covariates, counts, steps)
    else:
        Xc, per_block, covs = _array_covariates(X, lengths, covariates)
        parts, part_weights, _, _ = _partitions(
            Xc, per_block_lengths(per_block), sequence_weight
        )
    return parts, [c if is_dask(c) else _shared(c) for c in covs], part_weights


def summarize_iohmm(est, X, lengths=None, sequence_weight=None, covariates=None):
    """The E-step of a Dask bag or array of sequences under ``est``'s
    parameters: its statistics, the per-step posteriors persisted where they
    were computed (see the module)."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est)
    params = est._current_params()
    parts, covs, part_weights = _chunks(X, lengths, sequence_weight, covariates)
    return _expected(_sent(est), params, parts, covs, part_weights)


def partial_fit_iohmm(est, X, lengths=None, sequence_weight=None, covariates=None):
    """One step of incremental EM on a Dask chunk of sequences, as in memory:
    the E-step where the partitions live, added to ``stats_``, then the
    M-step (a first call starts the parameters from a sample of the chunk,
    as ``fit`` does); a failure leaves ``est`` as it was."""
    return restoring(_partial_fit, est, X, lengths, sequence_weight, covariates)


def _partial_fit(est, X, lengths, sequence_weight, covariates):
    total = None  # a first call: the chunk's statistics (zeros added, in memory)
    if hasattr(est, "stats_"):
        params, total = est._current_params(), est.stats_
        components = est._components()
    else:
        d = _width(covariates)

        def read(rows, lens, w, reset):
            return est._data(rows, lens, w, np.zeros((len(rows), d)), reset=reset)

        sample = X
        if not _is_bag(X):
            sample, per_block, _ = _array_covariates(X, lengths, None)
            lengths = per_block_lengths(per_block)
        _, _, _, described, data = start_sample(
            est, sample, lengths, sequence_weight, data=read
        )
        Xt, lens, w, _ = data
        n_steps = int(sum(desc[0].sum() for desc in described))
        est._plan_init(int(n_steps * (Xt.size / len(Xt) if Xt.ndim > 1 else 1)))
        row_weight = np.ones(len(Xt)) if w is None else np.repeat(w, lens)
        components = est._components()
        params = est._initialize(Xt, row_weight, est.random_state, components)
        est._keep_generator()
        if _is_bag(X):
            lengths = None
    parts, covs, part_weights = _chunks(X, lengths, sequence_weight, covariates)
    chunk = _expected(_sent(est), params, parts, covs, part_weights)
    total = chunk if total is None else total + chunk
    est._set_params(est._params_from_stats(total, params, components))
    est.stats_ = total
    return est


def per_block_lengths(per_block):
    """The lengths of all the sequences of blocks already cut at their ends."""
    return np.concatenate(per_block) if per_block else np.zeros(0, dtype=np.intp)


# -- prediction ---------------------------------------------------------------------
def _apply(part, covs, est, method, algorithm):
    """``method`` on a partition's sequences with their covariates: a list
    with one result per sequence, and the partition's total."""
    from .._base.sequences import _split

    rows, lens = _rows_of(part)
    if rows is None:
        return [], 0.0
    U = _aligned(covs, lens)
    if method == "score_sequences":
        values = est.score_sequences(rows, lens, covariates=U)
        return list(values), float(values.sum())
    if method == "posterior":
        total, proba = est.score_samples(rows, lens, covariates=U)
        return _split(proba, lens), total
    total, path = est.decode(rows, lens, algorithm=algorithm, covariates=U)
    return _split(path, lens), total


def _per_sequence(part, covs, est, method, algorithm):
    return _apply(part, covs, est, method, algorithm)[0]


def _total(part, covs, est, method, algorithm):
    return _apply(part, covs, est, method, algorithm)[1]


def _block(part, covs, est, method, algorithm):
    values, _ = _apply(part, covs, est, method, algorithm)
    return np.concatenate(values) if method != "score_sequences" else np.array(values)


def predict_iohmm(est, method, X, lengths=None, covariates=None, algorithm=None):
    """``est.<method>(X, lengths, covariates=...)`` on Dask input, lazily, as
    :func:`bayeskit._dask._hmm.predict_hmm` (the same methods and forms)."""
    import dask.array as da
    from dask import delayed

    inner, algorithm = prediction_method(est, method, algorithm)
    if covariates is None:
        _width(covariates)  # the error that says covariates are required
    shared = _shared(est)
    if _is_bag(X):
        if lengths is not None:
            raise ValueError(
                "lengths must be None when X is a bag: every item of the bag "
                "is one sequence"
            )
        import dask.bag as db

        parts = list(X.to_delayed())
        counts = [delayed(len, pure=True)(p) for p in parts]
        steps = [delayed(_steps, pure=True)(p) for p in parts]
        covs = _bag_covariates(X, covariates, counts, steps)
        totals = [
            delayed(_total, pure=True)(p, c, shared, inner, algorithm)
            for p, c in zip(parts, covs)
        ]
        total = _tree(totals, _add)
        if method == "score":
            return float(total.compute())
        items = db.from_delayed(
            [
                delayed(_per_sequence, pure=True)(p, c, shared, inner, algorithm)
                for p, c in zip(parts, covs)
            ]
        )
        if inner == "score_sequences":
            return items
        return total, items
    Xc, per_block, covs = _array_covariates(X, lengths, covariates)
    blocks = Xc.to_delayed().ravel()
    parts = [delayed(_with_lengths)(b, lens) for b, lens in zip(blocks, per_block)]
    k = est.n_components
    task = delayed(_block, pure=True)
    out = []
    for part, c, lens in zip(parts, covs, per_block):
        n_rows = int(lens.sum())
        if inner == "score_sequences":
            shape, dtype = (len(lens),), np.float64
        elif inner == "posterior":
            shape, dtype = (n_rows, k), np.float64
        else:
            shape, dtype = (n_rows,), np.intp
        out.append(
            da.from_delayed(task(part, c, shared, inner, algorithm), shape, dtype=dtype)
        )
    values = da.concatenate(out, axis=0)
    if method == "score":
        return float(values.sum().compute())
    if inner == "score_sequences":
        return values
    totals = [
        delayed(_total, pure=True)(p, c, shared, inner, algorithm)
        for p, c in zip(parts, covs)
    ]
    total = da.from_delayed(_tree(totals, _add), (), dtype=np.float64)
    return total, values
