"""The compiled kernels of the semi-Markov chain: explicit-duration recursions.

Private to :mod:`bayeskit.graph.semi_markov`, whose functions validate the
arguments, plan the threads and call these kernels, which assume valid input.
Every recursion runs over segments, in O(T K D) per sequence of ``T`` steps,
``K`` states and longest duration ``D`` (Yu 2010, section 3.1: the forward
variable of a segment that *ends* at ``t`` and the one of a segment that
*starts* at ``t``), in log space below and on scaled probabilities further
down. The emissions' rows are the steps of all sequences concatenated;
sequence ``n`` is rows ``bounds[n]:bounds[n + 1]``. The messages are arrays of
shape ``(K, n_steps)`` (a state's messages contiguous in time, which the sums
over durations read). Viterbi's kernel is ``_semi_markov_viterbi``'s.

Notation, for the sequence's steps ``0 .. T-1``:

- ``A[j, t] = log p(x_{<t}, a segment of j starts at t)``;
- ``F[j, t] = log p(x_{<=t}, a segment of j ends at t)``, ``t < T-1``;
- ``Bs[j, t] = log p(x_{>=t} | a segment of j starts at t)``;
- ``Be[j, t] = log p(x_{>t} | a segment of j ends at t)``.

The last segment of every sequence is right-censored: it has lasted at least
the steps seen, with probability ``surv[j, d - 1] = P(duration >= d)``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .._jit import njit, parallel_pair

_JIT = {"error_model": "numpy"}


@njit(**_JIT)
def _lse(buf, n, m):  # pragma: no cover - compiled
    """``log sum exp(buf[:n])`` given its maximum ``m`` (``-inf`` if empty)."""
    if m == -np.inf:
        return -np.inf
    total = 0.0
    for i in range(n):
        total += math.exp(buf[i] - m)
    return m + math.log(total)


@njit(**_JIT)
def _forward_sequence(
    log_start, log_trans, log_pmf, log_surv, log_em, s, e, A, F, buf
):  # pragma: no cover - compiled
    """Forward pass over rows ``s:e``; returns the log-likelihood."""
    n_states, max_dur = log_pmf.shape
    n = e - s
    for t in range(n):
        r = s + t
        for j in range(n_states):
            if t == 0:
                A[j, r] = log_start[j]
                continue
            m = -np.inf
            for i in range(n_states):
                v = F[i, r - 1] + log_trans[i, j]
                buf[i] = v
                m = v if v > m else m
            A[j, r] = _lse(buf, n_states, m)
        if t == n - 1:
            break
        for j in range(n_states):
            em = 0.0
            m = -np.inf
            n_dur = min(max_dur, t + 1)
            for d in range(1, n_dur + 1):
                em += log_em[r - d + 1, j]
                v = A[j, r - d + 1] + log_pmf[j, d - 1] + em
                buf[d - 1] = v
                m = v if v > m else m
            F[j, r] = _lse(buf, n_dur, m)
    # The censored last segment of every state: lse over j and d.
    total = -np.inf
    for j in range(n_states):
        em = 0.0
        m = -np.inf
        n_dur = min(max_dur, n)
        for d in range(1, n_dur + 1):
            em += log_em[e - d, j]
            v = A[j, e - d] + log_surv[j, d - 1] + em
            buf[d - 1] = v
            m = v if v > m else m
        v = _lse(buf, n_dur, m)
        if v > -np.inf:
            hi = v if v > total else total
            lo = v if v <= total else total
            total = hi + math.log1p(math.exp(lo - hi)) if lo > -np.inf else hi
    return total


@njit(**_JIT)
def _backward_sequence(
    log_trans, log_pmf, log_surv, log_em, s, e, Bs, Be, buf
):  # pragma: no cover - compiled
    """Backward pass over rows ``s:e`` (``Bs`` and ``Be`` of the module)."""
    n_states, max_dur = log_pmf.shape
    n = e - s
    for t in range(n - 1, -1, -1):
        r = s + t
        if t < n - 1:
            for i in range(n_states):
                m = -np.inf
                for j in range(n_states):
                    v = log_trans[i, j] + Bs[j, r + 1]
                    buf[j] = v
                    m = v if v > m else m
                Be[i, r] = _lse(buf, n_states, m)
        for j in range(n_states):
            em = 0.0
            m = -np.inf
            n_dur = min(max_dur, n - t)
            for d in range(1, n_dur + 1):
                u = r + d - 1
                em += log_em[u, j]
                if t + d - 1 < n - 1:
                    v = log_pmf[j, d - 1] + em + Be[j, u]
                else:
                    v = log_surv[j, d - 1] + em
                buf[d - 1] = v
                m = v if v > m else m
            Bs[j, r] = _lse(buf, n_dur, m)


@njit(**_JIT)
def _stats_sequence(
    log_trans, log_pmf, log_surv, log_em, s, e, A, F, Bs, Be, log_lik, weight,
    gamma, start, trans, durations, counts,
):  # fmt: skip  # pragma: no cover - compiled
    """Posteriors of rows ``s:e`` into ``gamma``; with ``counts``, expected
    start, transition and duration counts (times ``weight``) added to
    ``start``, ``trans`` and ``durations``. A censored last segment of
    length ``d`` counts as a
    complete one of length ``d' >= d`` with probability
    ``pmf[d'] / surv[d]`` (its unseen end is latent too)."""
    n_states, max_dur = log_pmf.shape
    n = e - s
    for j in range(n_states):
        p = math.exp(A[j, s] + Bs[j, s] - log_lik)
        start[j] += weight * p
        gamma[s, j] = p
    for t in range(1, n):
        r = s + t
        for j in range(n_states):
            begin = math.exp(A[j, r] + Bs[j, r] - log_lik)
            end = math.exp(F[j, r - 1] + Be[j, r - 1] - log_lik)
            g = gamma[r - 1, j] + begin - end
            gamma[r, j] = min(max(g, 0.0), 1.0)
        if not counts:
            continue
        for i in range(n_states):
            f = F[i, r - 1] - log_lik
            for j in range(n_states):
                trans[i, j] += weight * math.exp(f + log_trans[i, j] + Bs[j, r])
    if not counts:
        return
    for t in range(n):
        r = s + t
        for j in range(n_states):
            a = A[j, r] - log_lik
            if a == -np.inf:
                continue
            em = 0.0
            for d in range(1, min(max_dur, n - t) + 1):
                u = r + d - 1
                em += log_em[u, j]
                if t + d - 1 < n - 1:
                    durations[j, d - 1] += weight * math.exp(
                        a + log_pmf[j, d - 1] + em + Be[j, u]
                    )
                else:
                    c = a + em
                    if c == -np.inf or log_surv[j, d - 1] == -np.inf:
                        continue
                    for dd in range(d, max_dur + 1):
                        durations[j, dd - 1] += weight * math.exp(
                            c + log_pmf[j, dd - 1]
                        )


# ---------------------------------------------------------------------------
# The scaled recursions: the same sums on probabilities, each step's emissions
# divided by their maximum (``bt = exp(log_em - shift)``) and each step's
# messages by a scale ``c_t``, the filtered mass of the step before (of the
# last step, its own), so that the scales' product is the likelihood and the
# log-likelihood is ``sum_t log c_t + shift_t`` (Yu 2010, section 3.1,
# "scaling"; see the forward pass). No exponential in the inner loops. A step
# whose mass is not a positive finite number (an underflow, or a product of
# ``bt / c`` ratios that overflowed) returns NaN: the sequence is then
# recomputed by the log-space recursions above.
# ---------------------------------------------------------------------------


# The durations open at a step are held in a ring of ``D`` slots per state
# (the segment that starts at step ``t`` in slot ``t % D``, overwriting the one
# that started ``D`` steps before and can last no longer): every step
# multiplies the ring by one factor and reads it through the duration table
# rotated to the ring, so the sums over durations are contiguous products and
# dot products, which compile to vector instructions (reassociated: the same
# sums to rounding), where a running product over the durations of every
# segment would be one long chain of dependent multiplications. The ring's
# rows are padded with zeros to whole blocks of ``_LANES`` slots, and the
# loops over them run over whole blocks: with no scalar remainder (at ``D =
# 50``, a third of the slots went through one) and, at 16, fewer partial
# vectors (at ``D = 50`` and ``T = 5,000``, 8, 16 and 32 slots a block took
# 463, 441 and 423 us in the forward pass; 16 costs short sequences less).
_RING = {**_JIT, "fastmath": {"reassoc", "contract"}}
# The loops over a ring are inlined in the recursions (numba's own inlining):
# called, the rows of a step ran one after the other; inlined, the next row's
# loads overlap the last one's sums (a quarter of the forward pass's time).
_INLINE = {**_JIT, "inline": "always"}
_INLINE_RING = {**_RING, "inline": "always"}
_TINY = 1e-200
_U = np.uint64
_LANES = 16


@njit(**_JIT)
def _ring_width(max_dur):  # pragma: no cover - compiled
    """The slots of a ring row: ``max_dur`` rounded up to whole vectors."""
    return (max_dur + _LANES - 1) // _LANES * _LANES


@njit(**_JIT)
def _open_slots(t, width):  # pragma: no cover - compiled
    """The slots a forward ring reads at a sequence's step ``t``: those of
    the ``t + 1`` segments open, rounded up to whole vectors."""
    return _U(min(width, (t + _LANES) // _LANES * _LANES))


@njit(**_RING)
def _ring_tables(pmf, surv):  # pragma: no cover - compiled
    """The duration tables rotated and doubled for the rings: the forward
    ring's slot ``i`` at step ``t`` holds the segment of duration
    ``(t - i) % D + 1``, ``fwd_pmf[j, D - 1 - t % D + i]``'s (and
    ``fwd_surv``'s); the backward ring's slot ``i`` at step ``t`` the segment
    of duration ``(i - t) % D + 1``, ``bwd_pmf[j, D - t % D + i]``'s. Of
    ``D`` plus :func:`_ring_width` columns, so that the padded rows read
    them whole (a pad slot's entry is any one of the table's)."""
    n_states, max_dur = pmf.shape
    size = max_dur + _ring_width(max_dur)
    fwd_pmf = np.empty((n_states, size))
    fwd_surv = np.empty((n_states, size))
    bwd_pmf = np.empty((n_states, size))
    for j in range(n_states):
        for m in range(size):
            back = (max_dur - 1 - m) % max_dur
            fwd_pmf[j, m] = pmf[j, back]
            fwd_surv[j, m] = surv[j, back]
            bwd_pmf[j, m] = pmf[j, m % max_dur]
    return fwd_pmf, fwd_surv, bwd_pmf


@njit(**_INLINE_RING)
def _scale_dot(ring, j, b, table, off, n, slot, new):  # pragma: no cover
    """Puts ``new`` in ``ring[j, slot]``, multiplies ``ring[j, :n]`` by ``b``
    (a product below ``_TINY`` flushed to 0: subnormal numbers are slow, and
    no sum here needs them) and returns its dot product with ``table[j,
    off:off + n]``. ``new`` is blended in the vector that holds its slot, not
    stored first: a vector load of a slot just stored alone waits until the
    store has left the core (its value cannot be forwarded), and with it the
    whole step (half the pass's time)."""
    f = 0.0
    for i in range(n):
        v = (new if i == slot else ring[j, i]) * b
        v = v if v > _TINY else 0.0
        ring[j, i] = v
        f += v * table[j, off + i]
    return f


@njit(**_INLINE_RING)
def _scale_dot_count(
    ring, j, b, table, off, n, slot, new, counts, a
):  # pragma: no cover
    """:func:`_scale_dot`, adding ``a`` times every term of the dot product
    to ``counts[j, off:off + n]``."""
    f = 0.0
    for i in range(n):
        v = (new if i == slot else ring[j, i]) * b
        v = v if v > _TINY else 0.0
        ring[j, i] = v
        term = v * table[j, off + i]
        f += term
        counts[j, off + i] += a * term
    return f


@njit(**_INLINE_RING)
def _dot(ring, j, table, off, n):  # pragma: no cover - compiled
    """``ring[j, :n]``'s dot product with ``table[j, off:off + n]``."""
    f = 0.0
    for i in range(n):
        f += ring[j, i] * table[j, off + i]
    return f


@njit(**_RING)
def _scaled_forward_sequence(
    start, trans, fwd_pmf, fwd_surv, bt, shift, s, e, A, F, R, ring
):  # pragma: no cover - compiled
    """Scaled forward pass over rows ``s:e``: ``A`` and ``F`` are the start
    and end messages over the product of the scales so far, ``R[t] = bt[t] /
    c_t``; returns the log-likelihood, or NaN (see above). The ring's slot of
    a segment that started at ``u`` holds ``A[j, u]`` times its emissions
    over the scales since ``u`` but the last (each step divides the ring by
    the scale of the step before, with its emissions, in one product).
    ``fwd_pmf`` and ``fwd_surv`` are :func:`_ring_tables`'; ``ring``, of shape
    ``(K, _ring_width(D))``, is work space.

    The scale of a step is the mass of the step before, ``c_t = m_{t-1}``
    (``c_0 = 1``), and of the last step its own mass, so that the product of
    the scales is the likelihood (what makes products of forward and backward
    messages posteriors). Any positive scales would do; these are known
    before the step, so that a step's sums over the durations need not wait
    for the step before to be summed and divided (a third of the pass's time
    at ``D = 50``). The messages stay within a step's ratio of masses of 1.

    Nor is a step's mass, but the last one's, summed over the durations: the
    mass of state ``j``'s open segments at step ``t``, ``G_t = sum_u
    ring_u P(d >= t - u + 1)``, is that of the segments that went on past
    the step before, ``G_{t-1} - F_{t-1}`` (as ``P(d >= d' + 1) = P(d >= d')
    - P(d = d')``), and of the new one, times the step's factor: one sum over
    the durations per state and step, where there were two. Its rounding
    (the difference of two sums) is harmless in a scale; the last step's
    mass, whose log ends the likelihood, is the sum itself.
    """
    n_states, width = ring.shape
    max_dur = fwd_pmf.shape[1] - width
    n = e - s
    total = 0.0
    scale = 1.0  # c_{t-1}: the ring is not yet divided by it
    c = 1.0  # c_t
    slot = -1
    going = np.zeros(n_states)  # the mass of the segments that go on
    ring[:, :] = 0.0  # slots not yet opened (and the pads) hold nothing
    for t in range(n):
        r = s + t
        for j in range(n_states):
            if t == 0:
                A[j, r] = start[j]
            else:
                a = 0.0
                for i in range(n_states):
                    a += F[i, r - 1] * trans[i, j]
                A[j, r] = a
        slot = slot + 1 if slot + 1 < max_dur else 0
        off = _U(max_dur - 1 - slot)
        n_open = _open_slots(t, width)
        last = t == n - 1
        inv = 1.0 / scale
        inv_c = 1.0 if last else 1.0 / c
        mass = 0.0
        for j in range(n_states):
            b = bt[r, j] * inv
            # The new segment times the scale it is divided by with the rest.
            new = A[j, r] * scale
            f = _scale_dot(ring, j, b, fwd_pmf, off, n_open, _U(slot), new)
            # The mass by the recursion (see above), a scale.
            g = b * (going[j] + new * fwd_surv[j, max_dur - 1])
            going[j] = max(g - f, 0.0)
            F[j, r] = f * inv_c
            mass += g
        if last:  # the exact mass: the sum over the durations
            mass = 0.0
            for j in range(n_states):
                mass += _dot(ring, j, fwd_surv, off, n_open)
        if not (mass > 0.0 and mass < np.inf):
            return np.nan
        if last:  # the last scale: this step's mass
            c = mass
            inv_c = 1.0 / mass
            for j in range(n_states):
                F[j, r] *= inv_c
        for j in range(n_states):
            R[j, r] = bt[r, j] * inv_c
        total += math.log(c) + shift[r]
        scale = c
        c = mass
    return total


@njit(**_RING)
def _scaled_backward_sequence(
    trans, pmf, surv, bwd_pmf, s, e, A, R, Bs, Be, weight, durations, counts, ring
):  # pragma: no cover - compiled
    """Scaled backward pass over rows ``s:e``, adding the expected duration
    counts on the way when ``counts`` (a segment's posterior is its start
    message times the term of the backward sum it contributes); False if a
    message is not finite (the sequence then goes to the log-space
    recursions, and ``durations`` must be discarded). The ring's slot of a
    complete segment that ends at ``u`` holds ``Be[j, u]`` times the ``R`` of
    its steps; the censored segment that ends the sequence is the product
    ``last``. Without ``counts`` (the posteriors alone) the same sums run
    without the duration counts. ``bwd_pmf`` is :func:`_ring_tables`';
    ``ring``, of shape ``(K, _ring_width(D))``, is work space; ``durations``
    has ``bwd_pmf``'s shape, the counts of duration ``d`` added at ``d - 1``
    and ``D + d - 1`` (the caller sums the two)."""
    n_states, max_dur = pmf.shape
    width = _U(ring.shape[1])
    n = e - s
    last = np.ones(n_states)
    ring[:, :] = 0.0  # the slots of segments past the end hold 0
    for t in range(n - 1, -1, -1):
        r = s + t
        if t < n - 1:
            for i in range(n_states):
                b = 0.0
                for j in range(n_states):
                    b += trans[i, j] * Bs[j, r + 1]
                Be[i, r] = b
        slot = t % max_dur
        censored = n - t  # the duration of a segment from here to the end
        # Slot i holds the segment of duration (i - slot) % D + 1: doubled
        # tables read it at off + i (never negative: unsigned, see the
        # forward pass), so one loop runs over the whole ring.
        off = _U(max_dur - slot)
        for j in range(n_states):
            rj = R[j, r]
            # The last step ends no complete segment.
            end = Be[j, r] if t < n - 1 else 0.0
            a = weight * A[j, r] if counts else 0.0
            a = a if a > _TINY else 0.0
            # A segment whose start has no mass adds 0 to the counts: skipped.
            if a > 0.0:
                acc = _scale_dot_count(
                    ring, j, rj, bwd_pmf, off, width, _U(slot), end, durations, a
                )
            else:
                acc = _scale_dot(ring, j, rj, bwd_pmf, off, width, _U(slot), end)
            if censored <= max_dur:
                last[j] *= rj
                p = last[j]
                acc += surv[j, censored - 1] * p
                if a > 0.0:
                    for dd in range(censored, max_dur + 1):
                        durations[j, dd - 1] += a * p * pmf[j, dd - 1]
            if not acc < np.inf:
                return False
            Bs[j, r] = acc
    return True


@njit(**_JIT)
def _scaled_stats_sequence(
    trans, pmf, s, e, A, F, Bs, Be, weight, gamma, start, trans_counts, counts
):  # pragma: no cover - compiled
    """:func:`_stats_sequence` on the scaled messages (the products of the
    start or end message and the matching backward message are posteriors),
    but the durations, which the backward pass adds."""
    n_states = pmf.shape[0]
    n = e - s
    for j in range(n_states):
        p = A[j, s] * Bs[j, s]
        start[j] += weight * p
        gamma[s, j] = p
    for t in range(1, n):
        r = s + t
        for j in range(n_states):
            g = gamma[r - 1, j] + A[j, r] * Bs[j, r] - F[j, r - 1] * Be[j, r - 1]
            gamma[r, j] = min(max(g, 0.0), 1.0)
        if not counts:
            continue
        for i in range(n_states):
            f = weight * F[i, r - 1]
            for j in range(n_states):
                trans_counts[i, j] += f * trans[i, j] * Bs[j, r]


@parallel_pair(**_JIT)
def _forward_backward_pass(
    log_start, log_trans, log_pmf, log_surv, log_em, start, trans, pmf, surv,
    bt, shift, bounds, weights, n_tasks, exact, counts, A, F, Bs, Be, R,
    log_likelihood, gamma, starts, transitions, durations,
):  # fmt: skip  # pragma: no cover - compiled
    n_sequences = len(bounds) - 1
    n_states, max_dur = log_pmf.shape
    size = max(n_states, max_dur)
    fwd_pmf, fwd_surv, bwd_pmf = _ring_tables(pmf, surv)
    for task in numba.prange(n_tasks):
        buf = np.empty(size)
        found = np.zeros(bwd_pmf.shape)
        ring = np.empty((n_states, _ring_width(max_dur)))
        for n in range(
            task * n_sequences // n_tasks, (task + 1) * n_sequences // n_tasks
        ):
            s, e = bounds[n], bounds[n + 1]
            if not exact:
                ll = _scaled_forward_sequence(
                    start, trans, fwd_pmf, fwd_surv, bt, shift, s, e, A, F, R,
                    ring,
                )  # fmt: skip
                if ll == ll:
                    if counts:
                        found[:] = 0.0
                    if _scaled_backward_sequence(
                        trans, pmf, surv, bwd_pmf, s, e, A, R, Bs, Be,
                        weights[n], found, counts, ring,
                    ):  # fmt: skip
                        log_likelihood[n] = ll
                        if counts:
                            for j in range(n_states):
                                for d in range(max_dur):
                                    durations[task, j, d] += (
                                        found[j, d] + found[j, max_dur + d]
                                    )
                        _scaled_stats_sequence(
                            trans, pmf, s, e, A, F, Bs, Be, weights[n], gamma,
                            starts[task], transitions[task], counts,
                        )  # fmt: skip
                        continue
            ll = _forward_sequence(
                log_start, log_trans, log_pmf, log_surv, log_em, s, e, A, F, buf
            )
            log_likelihood[n] = ll
            if ll == -np.inf:
                continue
            _backward_sequence(log_trans, log_pmf, log_surv, log_em, s, e, Bs, Be, buf)
            _stats_sequence(
                log_trans, log_pmf, log_surv, log_em, s, e, A, F, Bs, Be, ll,
                weights[n], gamma, starts[task], transitions[task],
                durations[task], counts,
            )  # fmt: skip


@parallel_pair(**_JIT)
def _forward_pass(
    log_start, log_trans, log_pmf, log_surv, log_em, start, trans, pmf, surv,
    bt, shift, bounds, n_tasks, exact, A, F, R, log_likelihood,
):  # fmt: skip  # pragma: no cover - compiled
    n_sequences = len(bounds) - 1
    n_states, max_dur = log_pmf.shape
    size = max(n_states, max_dur)
    fwd_pmf, fwd_surv, _ = _ring_tables(pmf, surv)
    for task in numba.prange(n_tasks):
        buf = np.empty(size)
        ring = np.empty((n_states, _ring_width(max_dur)))
        for n in range(
            task * n_sequences // n_tasks, (task + 1) * n_sequences // n_tasks
        ):
            s, e = bounds[n], bounds[n + 1]
            ll = np.nan
            if not exact:
                ll = _scaled_forward_sequence(
                    start, trans, fwd_pmf, fwd_surv, bt, shift, s, e, A, F, R,
                    ring,
                )  # fmt: skip
            if ll != ll:
                ll = _forward_sequence(
                    log_start, log_trans, log_pmf, log_surv, log_em, s, e, A, F,
                    buf,
                )  # fmt: skip
            log_likelihood[n] = ll
