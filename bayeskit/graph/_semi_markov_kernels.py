"""The compiled kernels of the semi-Markov chain: explicit-duration recursions.

Private to :mod:`bayeskit.graph.semi_markov`, whose functions validate the
arguments, plan the threads and call these kernels, which assume valid input.
Every recursion runs over segments, in O(T K D) per sequence of ``T`` steps,
``K`` states and longest duration ``D`` (Yu 2010, section 3.1), on scaled
probabilities here and in log space in :mod:`._semi_markov_log` (where a
sequence whose scaled messages underflow or overflow goes, and every
sequence with ``exact``). The emissions' rows are the steps of all sequences
concatenated; sequence ``n`` is rows ``bounds[n]:bounds[n + 1]``. The
messages of the forward-backward passes are work space of the sequence
alone, of shape ``(K, >= T)`` (a state's messages contiguous in time), one
set per task of a pass, indexed by the sequence's own step: a task of short
sequences keeps them in the cache, and only the posteriors are written for
every step. Viterbi's kernel is :mod:`._semi_markov_viterbi`'s.

Notation, for the sequence's steps ``0 .. T-1`` (probabilities here, the
logs of :mod:`._semi_markov_log`):

- ``A[j, t] = p(x_{<t}, a segment of j starts at t)``;
- ``F[j, t] = p(x_{<=t}, a segment of j ends at t)``, ``t < T-1``;
- ``Bs[j, t] = p(x_{>=t} | a segment of j starts at t)``;
- ``Be[j, t] = p(x_{>t} | a segment of j ends at t)``.

The last segment of every sequence is right-censored: it has lasted at least
the steps seen, with probability ``surv[j, d - 1] = P(duration >= d)``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .._jit import njit, parallel_pair
from ._semi_markov_four import backward_four, forward_four
from ._semi_markov_log import _backward_sequence, _forward_sequence, _stats_sequence
from ._semi_markov_rings import (
    _RING,
    _TINY,
    _U,
    _dot,
    _duration_rings,
    _log_scales,
    _open_slots,
    _scale_dot,
    _scale_dot_count,
    _scaled_width,
    padded_four,
)

_JIT = {"error_model": "numpy"}


@njit(**_RING)
def _scaled_forward_sequence(
    start, trans, fwd_pmf, fwd_surv, bt, shift, s, e, A, F, inv_c, gamma,
    ring, keep,
):  # fmt: skip  # pragma: no cover - compiled
    """Scaled forward pass over rows ``s:e``; returns the log-likelihood, or
    NaN (a step whose mass is not a positive finite number: see
    :mod:`._semi_markov_rings`). With ``keep``, ``A`` and ``F`` (the start and end
    messages over the product of the scales so far), ``inv_c`` (``1 / c_t``)
    and the posteriors of the last step, ``gamma[e - 1]``, are written; the
    backward pass reads them. Without, nothing is. The ring's slot of a
    segment that started at ``u`` holds ``A[j, u]`` times its emissions over
    the scales since ``u`` but the last (each step divides the ring by the
    scale of the step before, with its emissions, in one product).
    ``fwd_pmf`` and ``fwd_surv`` are :func:`_duration_rings`'; ``ring``, of
    shape ``(K, _scaled_width(D))``, is work space.

    The scale of a step is the mass of the step before, ``c_t = m_{t-1}``
    (``c_0 = 1``), and of the last step its own mass, so that the product of
    the scales is the likelihood (what makes products of forward and backward
    messages posteriors). Any positive scales would do; these are known
    before the step, so that a step's sums over the durations need not wait
    for the step before to be summed and divided. The messages stay within a
    step's ratio of masses of 1. The logs of the scales are summed a product
    at a time (one log per hundred orders of magnitude, not one per step).

    Nor is a step's mass, but the last one's, summed over the durations: the
    mass of state ``j``'s open segments at step ``t``, ``G_t = sum_u
    ring_u P(d >= t - u + 1)``, is that of the segments that went on past
    the step before, ``G_{t-1} - F_{t-1}`` (as ``P(d >= d' + 1) = P(d >= d')
    - P(d = d')``), and of the new one, times the step's factor: one sum over
    the durations per state and step, where there were two. Its rounding
    (the difference of two sums) is harmless in a scale; the last step's
    mass, whose log ends the likelihood, is the sum itself, state by state
    the posteriors of the last step (its open segments are the censored
    ones).
    """
    n_states, width = ring.shape
    last_col = _U(width - 1)  # duration 1 in the forward tables
    n = e - s
    total = 0.0
    prod = 1.0  # the scales whose log is not yet in total
    scale = 1.0  # c_{t-1}: the ring is not yet divided by it
    c = 1.0  # c_t
    going = np.zeros(n_states)  # the mass of the segments that go on
    f_prev = np.zeros(n_states)  # F of the step before
    f_now = np.empty(n_states)
    ring[:, :] = 0.0  # slots not yet opened (and the pads) hold nothing
    for t in range(n):
        r = _U(s + t)
        slot = t % width
        after = slot + 1 if slot + 1 < width else 0
        off = _U(width - 1 - slot)
        n_open = _open_slots(t, width)
        last = t == n - 1
        inv = 1.0 / scale
        inv_now = 1.0 if last else 1.0 / c
        mass = 0.0
        for j in range(_U(n_states)):
            if t == 0:
                a = start[j]
            else:
                a = 0.0
                for i in range(_U(n_states)):
                    a += f_prev[i] * trans[i, j]
            b = bt[r, j] * inv
            # The new segment, times the scale it is divided by with the rest.
            new = a * scale
            first = new * b  # after its first step
            first = first if first > _TINY else 0.0
            f = _scale_dot(ring, j, b, fwd_pmf, off, n_open)
            f += first * fwd_pmf[j, last_col]
            ring[j, _U(slot)] = first
            ring[j, _U(after)] = 0.0
            # The mass by the recursion (see above), a scale.
            g = b * (going[j] + new * fwd_surv[j, last_col])
            going[j] = max(g - f, 0.0)
            f_now[j] = f
            mass += g
            if keep:
                A[j, _U(t)] = a
        if last:  # the exact mass: the sum over the durations
            mass = 0.0
            for j in range(_U(n_states)):
                f_now[j] = _dot(ring, j, fwd_surv, off, _U(width))
                mass += f_now[j]
        if not (mass > 0.0 and mass < np.inf):
            return np.nan
        if last:  # the last scale: this step's mass
            c = mass
            inv_now = 1.0 / mass
            if keep:
                for j in range(_U(n_states)):
                    gamma[r, j] = f_now[j] * inv_now
        else:
            for j in range(_U(n_states)):
                f_prev[j] = f_now[j] * inv_now
                if keep:
                    F[j, _U(t)] = f_prev[j]
        if keep:
            inv_c[t] = inv_now
        total, prod = _log_scales(total + shift[r], prod, c)
        scale = c
        c = mass
    return total + math.log(prod)


@njit(**_RING)
def _scaled_backward_sequence(
    trans, pmf, surv, bwd_pmf, bt, s, e, A, F, inv_c, weight, gamma,
    durations, pairs, begin, counts, ring,
):  # fmt: skip  # pragma: no cover - compiled
    """Scaled backward pass over rows ``s:e``, after the forward pass with
    ``keep`` (its ``A``, ``F``, ``inv_c`` and ``gamma[e - 1]``), with the
    posteriors on the way: False if a message is not finite (the sequence
    then goes to the log-space recursions; ``durations`` and ``pairs`` must
    be discarded and ``gamma[s:e]`` rewritten).

    The product of a start or end message and the matching backward message
    is a posterior (the scales' product is the likelihood): step by step,
    the posterior of ``t`` is that of ``t + 1`` less the segments that start
    at ``t + 1`` and plus those that end at ``t`` (clipped to ``[0, 1]``),
    from the last step's, which the forward pass sums. On return,
    ``begin[j]`` is the posterior that the first segment is ``j``'s. With
    ``counts``, the expected transitions times ``weight`` are added to
    ``pairs``, and the expected durations to ``durations``, of
    ``bwd_pmf``'s shape (those of duration ``d`` at every column ``m``
    with ``m % W == d - 1``; the caller sums them): a segment's posterior is
    its start message times the term of the backward sum it contributes.
    The ring's slot of a complete segment that ends at ``u`` holds ``Be[j,
    u]`` times the emissions over the scales of its steps; the censored
    segment that ends the sequence is the product in ``last``.
    """
    n_states, max_dur = pmf.shape
    width = _U(ring.shape[1])
    n = e - s
    last = np.ones(n_states)
    b_next = np.zeros(n_states)  # Bs of the step after
    b_now = np.empty(n_states)
    ring[:, :] = 0.0  # the slots of segments past the end hold 0
    for t in range(n - 1, -1, -1):
        r = _U(s + t)
        q = _U(t)
        slot = t % ring.shape[1]
        after = slot - 1 if slot > 0 else ring.shape[1] - 1
        off = _U(ring.shape[1] - slot)
        censored = n - t  # the duration of a segment from here to the end
        inv = inv_c[q]
        for j in range(_U(n_states)):
            end = 0.0  # Be[j, t]: 0 at the last step, which ends no segment
            if t < n - 1:
                for i in range(_U(n_states)):
                    end += trans[j, i] * b_next[i]
            rj = bt[r, j] * inv
            first = end * rj
            first = first if first > _TINY else 0.0
            a = weight * A[j, q] if counts else 0.0
            a = a if a > _TINY else 0.0
            # Every segment, one whose start has no mass adding 0 (a test of
            # it here cost a fifth of the pass's time).
            if counts:
                acc = _scale_dot_count(ring, j, rj, bwd_pmf, off, width, durations, a)
                durations[j, width] += a * first * pmf[j, 0]
            else:
                acc = _scale_dot(ring, j, rj, bwd_pmf, off, width)
            acc += first * pmf[j, 0]
            ring[j, _U(slot)] = first
            ring[j, _U(after)] = 0.0
            if censored <= max_dur:
                last[j] *= rj
                p = last[j]
                acc += surv[j, censored - 1] * p
                if a > 0.0:
                    for dd in range(censored, max_dur + 1):
                        durations[j, dd - 1] += a * p * pmf[j, dd - 1]
            if not acc < np.inf:
                return False
            b_now[j] = acc
            if t < n - 1:
                g = gamma[r + _U(1), j] - begin[j] + F[j, q] * end
                gamma[r, j] = min(max(g, 0.0), 1.0)
        if counts and t < n - 1:
            for i in range(_U(n_states)):
                f = weight * F[i, q]
                for j in range(_U(n_states)):
                    pairs[i, j] += f * trans[i, j] * b_next[j]
        for j in range(_U(n_states)):
            b_next[j] = b_now[j]
            begin[j] = A[j, q] * b_now[j]
    return True


@njit(**_JIT)
def _log_space_sequence(
    log_start, log_trans, log_pmf, log_surv, log_em, s, e, A, F, buf, weight,
    gamma, starts, transitions, durations, counts,
):  # fmt: skip  # pragma: no cover - compiled
    """The log-space recursions of rows ``s:e``: posteriors and counts as
    the scaled passes give them; returns the log-likelihood."""
    ll = _forward_sequence(
        log_start, log_trans, log_pmf, log_surv, log_em, s, e, A, F, buf
    )
    if ll == -np.inf:
        return ll
    Bs = np.empty((len(log_start), e - s))
    Be = np.empty((len(log_start), e - s))
    _backward_sequence(log_trans, log_pmf, log_surv, log_em, s, e, Bs, Be, buf)
    _stats_sequence(
        log_trans, log_pmf, log_surv, log_em, s, e, A, F, Bs, Be, ll, weight,
        gamma, starts, transitions, durations, counts,
    )  # fmt: skip
    return ll


@njit(**_JIT)
def _longest(bounds, first, stop):  # pragma: no cover - compiled
    """The most steps of sequences ``first:stop`` (at least 1)."""
    longest = 1
    for n in range(first, stop):
        longest = max(longest, bounds[n + 1] - bounds[n])
    return longest


@njit(**_JIT)
def _rows_and_tables(start, trans, pmf, surv, width):  # pragma: no cover
    """The rows of the scaled passes' work space (four for at most four
    states: :mod:`._semi_markov_four`'s padding) and the tables they read:
    start, transitions, durations, survivals and :func:`_duration_rings`."""
    if len(start) <= 4:
        start, trans, pmf, surv = padded_four(start, trans, pmf, surv, 0.0)
    return (len(start), start, trans, pmf, surv, *_duration_rings(pmf, surv, width))


@parallel_pair(**_JIT)
def _forward_backward_pass(
    log_start, log_trans, log_pmf, log_surv, log_em, start, trans, pmf, surv,
    bt, shift, bounds, weights, n_tasks, exact, counts, log_likelihood, gamma,
    starts, transitions, durations,
):  # fmt: skip  # pragma: no cover - compiled
    n_sequences = len(bounds) - 1
    n_states, max_dur = log_pmf.shape
    four = n_states <= 4
    width = _scaled_width(max_dur)
    rows, start, trans, pmf, surv, fwd_pmf, fwd_surv, bwd_pmf = _rows_and_tables(
        start, trans, pmf, surv, width
    )
    for task in numba.prange(n_tasks):
        first = task * n_sequences // n_tasks
        stop = (task + 1) * n_sequences // n_tasks
        longest = _longest(bounds, first, stop)
        A = np.empty((rows, longest))
        F = np.empty((rows, longest))
        inv_c = np.empty(longest)
        buf = np.empty(max(n_states, max_dur))
        found = np.zeros(bwd_pmf.shape)
        pairs = np.zeros((rows, rows))
        begin = np.empty(rows)
        ring = np.empty((rows, width))
        for n in range(first, stop):
            s, e = bounds[n], bounds[n + 1]
            w = weights[n]
            if not exact:
                if four:
                    ll = forward_four(
                        start, trans, fwd_pmf, fwd_surv, bt, shift, s, e, A, F,
                        inv_c, gamma, ring, True, n_states,
                    )  # fmt: skip
                else:
                    ll = _scaled_forward_sequence(
                        start, trans, fwd_pmf, fwd_surv, bt, shift, s, e, A, F,
                        inv_c, gamma, ring, True,
                    )  # fmt: skip
                if ll == ll:
                    if counts:
                        found[:] = 0.0
                        pairs[:] = 0.0
                    if four:
                        done = backward_four(
                            trans, pmf, surv, bwd_pmf, bt, s, e, A, F, inv_c, w,
                            gamma, found, pairs, begin, counts, ring, n_states,
                        )  # fmt: skip
                    else:
                        done = _scaled_backward_sequence(
                            trans, pmf, surv, bwd_pmf, bt, s, e, A, F, inv_c, w,
                            gamma, found, pairs, begin, counts, ring,
                        )  # fmt: skip
                    if done:
                        log_likelihood[n] = ll
                        for j in range(n_states):
                            starts[task, j] += w * begin[j]
                        if counts:
                            for j in range(n_states):
                                for i in range(n_states):
                                    transitions[task, j, i] += pairs[j, i]
                                for d in range(max_dur):
                                    durations[task, j, d] += (
                                        found[j, d] + found[j, width + d]
                                    )
                        continue
            log_likelihood[n] = _log_space_sequence(
                log_start, log_trans, log_pmf, log_surv, log_em, s, e, A, F,
                buf, w, gamma, starts[task], transitions[task],
                durations[task], counts,
            )  # fmt: skip


@parallel_pair(**_JIT)
def _forward_pass(
    log_start, log_trans, log_pmf, log_surv, log_em, start, trans, pmf, surv,
    bt, shift, bounds, n_tasks, exact, log_likelihood,
):  # fmt: skip  # pragma: no cover - compiled
    n_sequences = len(bounds) - 1
    n_states, max_dur = log_pmf.shape
    four = n_states <= 4
    width = _scaled_width(max_dur)
    rows, start, trans, _, _, fwd_pmf, fwd_surv, _ = _rows_and_tables(
        start, trans, pmf, surv, width
    )
    unused = np.empty((rows, 1))  # nothing is kept (``keep`` False)
    for task in numba.prange(n_tasks):
        buf = np.empty(max(n_states, max_dur))
        ring = np.empty((rows, width))
        for n in range(
            task * n_sequences // n_tasks, (task + 1) * n_sequences // n_tasks
        ):
            s, e = bounds[n], bounds[n + 1]
            ll = np.nan
            if not exact and four:
                ll = forward_four(
                    start, trans, fwd_pmf, fwd_surv, bt, shift, s, e, unused,
                    unused, unused[0], unused, ring, False, n_states,
                )  # fmt: skip
            elif not exact:
                ll = _scaled_forward_sequence(
                    start, trans, fwd_pmf, fwd_surv, bt, shift, s, e, unused,
                    unused, unused[0], unused, ring, False,
                )  # fmt: skip
            if ll != ll:
                A = np.empty((n_states, e - s))
                F = np.empty((n_states, e - s))
                ll = _forward_sequence(
                    log_start, log_trans, log_pmf, log_surv, log_em, s, e, A, F,
                    buf,
                )  # fmt: skip
            log_likelihood[n] = ll
