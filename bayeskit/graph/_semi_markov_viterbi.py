"""The compiled Viterbi kernel of the semi-Markov chain: max-product over segments.

Private to :mod:`bayeskit.graph.semi_markov`, whose functions validate the
arguments (the emissions have no NaN and no ``+inf``), plan the threads and
call this kernel, which assumes valid input. It runs in O(T K D) per sequence
of ``T`` steps, ``K`` states and longest duration ``D`` (Yu 2010, section
3.2), the last segment of a sequence right-censored (section 3.4), as the
other semi-Markov kernels (``_semi_markov_kernels``). The emissions' rows are
the steps of all sequences concatenated; sequence ``n`` is rows
``bounds[n]:bounds[n + 1]``; the messages are arrays of shape ``(n_steps,
K)``: ``A[t, j]`` the best log joint probability of the steps before ``t``
and a segment of ``j`` starting at ``t``, ``F[t, j]`` of the steps up to
``t`` and a segment of ``j`` ending there.

Every sum is the numpy recursions' (``_semi_markov_numpy.viterbi``), in their
order, and none is reassociated: the two give the same paths and the same
log-probabilities, bit for bit (ties go to the lowest state and the shortest
duration).

The open segments are held in a ring of ``W`` slots per state, ``W`` the
first whole number of vectors of ``_LANES`` slots above ``D`` (the segment
that starts at step ``t`` in slot ``t % W``, overwriting the one that started
``W`` steps before and has lasted longer than any duration): the slot of a
segment that started at ``u`` holds ``A[u, j]`` plus its emissions so far,
one addition per step, and a step reads the ring through the log duration
table rotated to it, ``-inf`` past ``D``. The slots not open hold ``-inf``
(which adding a log-probability keeps, and a maximum never takes), so that
the loop over a row runs over whole vectors. Its maximum, :func:`_max`,
tells LLVM that there is no NaN and no sign of zero to keep (a sum with a log
duration, which is never ``-0.0``, is never ``-0.0``), so that it is taken
in vector lanes, in any order, to the same value (without it, LLVM keeps the
order of the comparisons: one scalar chain). The shortest duration that
reaches a maximum is needed only for the segments of the best path: the
backtrace finds it there, by the same sums in the same order.

References
----------
.. [1] S.-Z. Yu, "Hidden semi-Markov models", Artificial Intelligence
   174(2), 215-243, 2010.
.. [2] N. J. Higham, "Accuracy and Stability of Numerical Algorithms",
   2nd ed., SIAM, 2002.
"""

from __future__ import annotations

import llvmlite.ir as llvm
import numba
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from .._jit import njit, parallel_pair
from ._semi_markov_rings import _duration_rings, padded_four

_JIT = {"error_model": "numpy"}
# The loop over a ring is inlined in the recursion (numba's own inlining).
_INLINE = {**_JIT, "inline": "always"}
_U = np.uint64
_LANES = 8
_EPS = 2.0**-53  # float64's unit roundoff
# Rows the backtrace asks for ahead of its reads (a few segments' worth).
_AHEAD = 64


def _max(a, b):
    """``a if a > b else b``; compiled, its comparison and choice flagged
    ``nnan nsz`` (numba's ``fastmath`` option flags the comparison but not
    the choice, and the maximum then stays one chain)."""
    return a if a > b else b


def _prefetch(array, row):
    """Compiled, asks for the cache line of ``array[row, 0]`` ahead of its
    use (interpreted, nothing)."""


@intrinsic
def _max_nnan_nsz(typingctx, a, b):  # pragma: no cover - compiled
    def codegen(context, builder, signature, args):
        greater = builder.fcmp_ordered(">", *args, flags=("nnan", "nsz"))
        return builder.select(greater, *args, flags=("nnan", "nsz"))

    return (types.float64(a, b), codegen) if a == b == types.float64 else None


@intrinsic
def _prefetch_row(typingctx, array, row):  # pragma: no cover - compiled
    def codegen(context, builder, signature, args):
        ty = signature.args[0]
        index = [context.cast(builder, args[1], signature.args[1], types.intp)]
        index += [context.get_constant(types.intp, 0)] * (ty.ndim - 1)
        found = context.make_array(ty)(context, builder, args[0])
        at = cgutils.get_item_pointer(
            context, builder, ty, found, index, wraparound=False
        )
        i32, ptr = llvm.IntType(32), llvm.IntType(8).as_pointer()
        fnty = llvm.FunctionType(llvm.VoidType(), [ptr, i32, i32, i32])
        # The name of LLVM's typed pointers (``i8*``), which LLVM's of opaque
        # pointers renames to its own when it reads the module.
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        # A read, to be kept in every cache level, of data.
        builder.call(fn, [builder.bitcast(at, ptr), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    if isinstance(array, types.Array) and isinstance(row, types.Integer):
        return types.none(array, row), codegen
    return None


@overload(_max)
def _max_compiled(a, b):  # pragma: no cover - compiled
    if a == b == types.float64:
        return lambda a, b: _max_nnan_nsz(a, b)
    return None


@overload(_prefetch)
def _prefetch_compiled(array, row):  # pragma: no cover - compiled
    return lambda array, row: _prefetch_row(array, row)


@njit(**_JIT)
def _ring_width(max_dur):  # pragma: no cover - compiled
    """The slots of a ring row: ``max_dur + 1`` rounded up to whole vectors
    (at least one more than the longest duration: see :func:`_pair`)."""
    return (max_dur + _LANES) // _LANES * _LANES


@njit(**_INLINE)
def _ring_add_max(ring, table, j, off, n, x):  # pragma: no cover - compiled
    """Adds ``x`` to ``ring[j, :n]`` and returns the largest ``ring[j, i] +
    table[j, off + i]`` of the result (``-inf`` if none)."""
    best = -np.inf
    for i in range(n):
        v = ring[j, i] + x
        ring[j, i] = v
        best = _max(v + table[j, off + i], best)
    return best


@njit(**_INLINE)
def _ring_add2_max(ring, table, j, off, off2, n, x, y):  # pragma: no cover
    """Two steps of :func:`_ring_add_max` in one pass over ``ring[j, :n]``:
    adds ``x``, takes the largest sum with ``table[j, off:]``, adds ``y``,
    takes the largest with ``table[j, off2:]``; returns both."""
    best, best2 = -np.inf, -np.inf
    for i in range(n):
        v = ring[j, i] + x
        best = _max(v + table[j, off + i], best)
        v += y
        ring[j, i] = v
        best2 = _max(v + table[j, off2 + i], best2)
    return best, best2


@njit(**_JIT)
def _ring_argmax(ring, table, j, off, slot, n_open, best):  # pragma: no cover
    """The shortest duration whose sum (as :func:`_viterbi_sequence` reads
    it, once the step is added) is ``best``: the slots from the newest
    segment's back round the ring (``n_open`` signed, as the durations
    are)."""
    width = ring.shape[1]
    i = slot
    for d in range(1, n_open + 1):
        if ring[j, i] + table[j, off + _U(i)] == best:
            return d
        i = i - 1 if i > 0 else width - 1
    return 1


@njit(**_JIT)
def _segment_duration(A, log_em, log_pmf, best, s, end, j):  # pragma: no cover
    """The shortest duration of a segment of ``j`` that ends at row ``end``
    whose sum is ``best``: ``A`` at its first row plus its emissions, added
    one step at a time as the ring adds them, plus the log duration.

    That sum is formed only where the same terms summed in another order
    (from the end back, one addition per duration) come within twice the
    error bound of a recursive sum of ``d + 2`` terms (Higham 2002, section
    4.2), with a margin, of ``best``: the others cannot reach it, and a
    segment costs O(d) additions, not O(d^2). A term of ``-inf`` makes the
    sum ``-inf``, never ``best``."""
    n_open = min(log_pmf.shape[1], end - s + 1)
    tail = 0.0  # the emissions of rows first..end, from the end back
    size = 0.0  # and their magnitudes
    minus_inf = False
    for d in range(1, n_open + 1):
        first = end - d + 1
        x = log_em[first, j]
        tail += x
        size += abs(x)
        minus_inf = minus_inf or x == -np.inf
        a, p = A[first, j], log_pmf[j, d - 1]
        if minus_inf or a == -np.inf or p == -np.inf:
            continue
        if a + tail + p + 8.0 * (d + 2) * _EPS * (abs(a) + size + abs(p)) < best:
            continue
        v = a
        for u in range(first, end + 1):
            v += log_em[u, j]
        if v + p == best:
            return d
    return 1


@njit(**_INLINE)
def _predecessor(F, log_trans, r, j):  # pragma: no cover - compiled
    """The state whose segment ends at row ``r - 1`` on the best way into a
    segment of ``j`` at row ``r`` (ties to the lowest), as
    :func:`_transitions` finds ``A[r, j]``."""
    best, arg = -np.inf, 0
    for i in range(F.shape[1]):
        v = F[r - 1, i] + log_trans[i, j]
        if v > best:
            best, arg = v, i
    return arg


@njit(**_INLINE)
def _transitions(F, log_trans, A, r):  # pragma: no cover - compiled
    """``A[r]``: the best segment that ends at row ``r - 1`` and goes to each
    state."""
    n_states = F.shape[1]
    for j in range(n_states):
        best = -np.inf
        for i in range(n_states):
            v = F[r - 1, i] + log_trans[i, j]
            if v > best:
                best = v
        A[r, j] = best


@njit(**_INLINE)
def _transitions_four(F, log_trans, A, r):  # pragma: no cover - compiled
    """:func:`_transitions` of four states, unrolled."""
    f0, f1, f2, f3 = F[r - 1, 0], F[r - 1, 1], F[r - 1, 2], F[r - 1, 3]
    for j in range(4):
        best = f0 + log_trans[0, j]
        v = f1 + log_trans[1, j]
        if v > best:
            best = v
        v = f2 + log_trans[2, j]
        if v > best:
            best = v
        v = f3 + log_trans[3, j]
        if v > best:
            best = v
        A[r, j] = best


@njit(**_INLINE)
def _pair_slots(ring, t):  # pragma: no cover - compiled
    """The ring's slots of steps ``t`` and ``t + 1``, set to ``-inf``, their
    tables' offsets, and the slots open before step ``t`` in whole vectors.

    The segments the two slots held have lasted at least ``width`` steps,
    more than the longest duration (their table entries are ``-inf``):
    neither step reads them."""
    n_states, width = ring.shape
    slot = t % width
    slot2 = slot + 1 if slot + 1 < width else 0
    for j in range(n_states):
        ring[j, slot] = ring[j, slot2] = -np.inf
    n_open = _U(min(width, (t + _LANES - 1) // _LANES * _LANES))
    return slot, slot2, _U(width - 1 - slot), _U(width - 1 - slot2), n_open


@njit(**_INLINE)
def _pair_four(ring, fwd_pmf, log_em, log_trans, A, F, r, t):  # pragma: no cover
    """:func:`_pair` of four states, unrolled: their rings' passes one after
    the other (a padding state reads the last column of ``log_em``)."""
    slot, slot2, off, off2, n = _pair_slots(ring, t)
    last = log_em.shape[1] - 1
    u0, u1, u2, u3 = _U(0), _U(1), _U(2), _U(3)
    c1, c2 = min(1, last), min(2, last)
    x0, x1, x2, x3 = log_em[r, 0], log_em[r, c1], log_em[r, c2], log_em[r, last]
    y0, y1 = log_em[r + 1, 0], log_em[r + 1, c1]
    y2, y3 = log_em[r + 1, c2], log_em[r + 1, last]
    g0, h0 = _ring_add2_max(ring, fwd_pmf, u0, off, off2, n, x0, y0)
    g1, h1 = _ring_add2_max(ring, fwd_pmf, u1, off, off2, n, x1, y1)
    g2, h2 = _ring_add2_max(ring, fwd_pmf, u2, off, off2, n, x2, y2)
    g3, h3 = _ring_add2_max(ring, fwd_pmf, u3, off, off2, n, x3, y3)
    v0, v1, v2, v3 = A[r, 0] + x0, A[r, 1] + x1, A[r, 2] + x2, A[r, 3] + x3
    at = off + _U(slot)
    F[r, 0] = _max(v0 + fwd_pmf[0, at], g0)
    F[r, 1] = _max(v1 + fwd_pmf[1, at], g1)
    F[r, 2] = _max(v2 + fwd_pmf[2, at], g2)
    F[r, 3] = _max(v3 + fwd_pmf[3, at], g3)
    _transitions_four(F, log_trans, A, r + 1)
    v0, v1, v2, v3 = v0 + y0, v1 + y1, v2 + y2, v3 + y3
    w0, w1 = A[r + 1, 0] + y0, A[r + 1, 1] + y1
    w2, w3 = A[r + 1, 2] + y2, A[r + 1, 3] + y3
    at, at2 = off2 + _U(slot), off2 + _U(slot2)
    F[r + 1, 0] = _max(_max(v0 + fwd_pmf[0, at], h0), w0 + fwd_pmf[0, at2])
    F[r + 1, 1] = _max(_max(v1 + fwd_pmf[1, at], h1), w1 + fwd_pmf[1, at2])
    F[r + 1, 2] = _max(_max(v2 + fwd_pmf[2, at], h2), w2 + fwd_pmf[2, at2])
    F[r + 1, 3] = _max(_max(v3 + fwd_pmf[3, at], h3), w3 + fwd_pmf[3, at2])
    ring[0, slot], ring[1, slot], ring[2, slot], ring[3, slot] = v0, v1, v2, v3
    ring[0, slot2], ring[1, slot2], ring[2, slot2], ring[3, slot2] = w0, w1, w2, w3


@njit(**_INLINE)
def _pair(ring, fwd_pmf, log_em, log_trans, A, F, r, t, work):  # pragma: no cover
    """Rows ``r`` and ``r + 1`` (steps ``t`` and ``t + 1``, neither the
    last): ``F`` of both and ``A[r + 1]``, one pass over each ring (``work``:
    work space of two rows of ``K``)."""
    slot, slot2, off, off2, n = _pair_slots(ring, t)
    for j in range(ring.shape[0]):
        x, y = log_em[r, j], log_em[r + 1, j]
        f, f2 = _ring_add2_max(ring, fwd_pmf, _U(j), off, off2, n, x, y)
        v = A[r, j] + x
        work[0, j], work[1, j] = v, f2
        F[r, j] = _max(v + fwd_pmf[j, off + _U(slot)], f)
    _transitions(F, log_trans, A, r + 1)
    for j in range(ring.shape[0]):
        y = log_em[r + 1, j]
        v, w = work[0, j] + y, A[r + 1, j] + y
        f = _max(v + fwd_pmf[j, off2 + _U(slot)], work[1, j])
        F[r + 1, j] = _max(f, w + fwd_pmf[j, off2 + _U(slot2)])
        ring[j, slot], ring[j, slot2] = v, w


@njit(**_JIT)
def _viterbi_sequence(
    log_start, log_trans, log_pmf, fwd_pmf, fwd_surv, log_em, s, e, A, F,
    path, ring, work,
):  # fmt: skip  # pragma: no cover - compiled
    """Max-product over the segmentations of rows ``s:e``: the best path into
    ``path[s:e]``; returns its log joint probability (``-inf``: impossible,
    path unset). Ties go to the lowest state and the shortest duration.
    ``fwd_pmf`` and ``fwd_surv`` are the log duration tables rotated to the
    ring (``_semi_markov_rings._duration_rings``, ``-inf`` past ``D``);
    ``ring``, of shape ``(K, _ring_width(D))``, and ``work``, of ``(2, K)``,
    are work space.

    The steps go by pairs (:func:`_pair`: one pass over the rings for two
    steps, a tenth less time than a pass a step at ``D = 50``), and the
    step before the last, if it is left over, and the last one by one. A
    step's new segment goes into its slot after the pass over the ring.
    Four states (at most four, padded to four by the caller with states that
    never start) take their passes one after the other in the same step,
    unrolled. The state before a segment is found again in the backtrace,
    not stored (storing it took a tenth of the time). The backtrace asks for
    its rows ahead: the forward pass has left them far from the cache (at
    200,000 steps, waiting for them took a third of the time)."""
    n_states, width = ring.shape
    max_dur = log_pmf.shape[1]
    n = e - s
    last = log_em.shape[1] - 1
    ring[:, :] = -np.inf  # no segment open yet (and the pads)
    for j in range(n_states):  # (a loop: a slice compiles for seconds)
        A[s, j] = log_start[j]
    t = 0
    if n_states == 4:
        while t + 2 < n:
            _pair_four(ring, fwd_pmf, log_em, log_trans, A, F, s + t, t)
            _transitions_four(F, log_trans, A, s + t + 2)
            t += 2
    else:
        while t + 2 < n:
            _pair(ring, fwd_pmf, log_em, log_trans, A, F, s + t, t, work)
            _transitions(F, log_trans, A, s + t + 2)
            t += 2
    top, state = -np.inf, 0  # the censored last segment's best sum
    table, slot, off = fwd_pmf, 0, _U(0)
    paired = t
    for t in range(paired, n):
        r = s + t
        slot = t % width
        off = _U(width - 1 - slot)
        n_open = _U(min(width, (t + _LANES - 1) // _LANES * _LANES))
        table = fwd_pmf if t < n - 1 else fwd_surv
        for j in range(n_states):
            ring[j, slot] = -np.inf  # lasted width steps (see _pair)
            x = log_em[r, min(j, last)]  # a padding state reads the last
            f = _ring_add_max(ring, table, _U(j), off, n_open, x)
            v = A[r, j] + x
            ring[j, slot] = v
            f = _max(v + table[j, off + _U(slot)], f)
            if t < n - 1:
                F[r, j] = f
            elif f > top:
                # The censored last segment: the first state (then the
                # shortest duration) of the largest sum.
                top, state = f, j
        if t < n - 1:
            _transitions(F, log_trans, A, r + 1)
    if top == -np.inf:
        return top
    dur = _ring_argmax(ring, table, state, off, slot, min(max_dur, n), top)
    end = e - 1
    while True:
        for u in range(end - dur + 1, end + 1):
            path[u] = state
            ahead = max(u - _AHEAD, s)
            _prefetch(A, ahead)
            _prefetch(F, ahead)
            _prefetch(log_em, ahead)
        first = end - dur + 1
        if first == s:
            break
        state = _predecessor(F, log_trans, first, state)
        end = first - 1
        dur = _segment_duration(A, log_em, log_pmf, F[end, state], s, end, state)
    return top


@parallel_pair(**_JIT)
def _viterbi_pass(
    log_start, log_trans, log_pmf, log_surv, log_em, bounds, n_tasks, A, F,
    path, log_prob,
):  # fmt: skip  # pragma: no cover - compiled
    n_sequences = len(bounds) - 1
    n_states, max_dur = log_pmf.shape
    if n_states < 4:  # the four states' steps (A and F have 4 columns)
        log_start, log_trans, log_pmf, log_surv = padded_four(
            log_start, log_trans, log_pmf, log_surv, -np.inf
        )
        n_states = 4
    width = _ring_width(max_dur)
    fwd_pmf, fwd_surv, _ = _duration_rings(log_pmf, log_surv, width, -np.inf)
    for task in numba.prange(n_tasks):
        ring = np.empty((n_states, width))
        work = np.empty((2, n_states))
        for n in range(
            task * n_sequences // n_tasks, (task + 1) * n_sequences // n_tasks
        ):
            log_prob[n] = _viterbi_sequence(
                log_start, log_trans, log_pmf, fwd_pmf, fwd_surv, log_em,
                bounds[n], bounds[n + 1], A, F, path, ring, work,
            )  # fmt: skip
