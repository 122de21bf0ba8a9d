"""The rings of the scaled semi-Markov recursions: tables and vector loops.

Private to the semi-Markov kernels (:mod:`._semi_markov_kernels` and
:mod:`._semi_markov_four`), which read every duration open at a step from a
ring of slots per state (Yu 2010, section 3.1, on scaled probabilities).

References
----------
.. [1] S.-Z. Yu, "Hidden semi-Markov models", Artificial Intelligence
   174(2), 215-243, 2010.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import njit

_JIT = {"error_model": "numpy"}

# ---------------------------------------------------------------------------
# The scaled recursions: the same sums on probabilities, each step's emissions
# divided by their maximum (``bt = exp(log_em - shift)``) and each step's
# messages by a scale ``c_t``, the filtered mass of the step before (of the
# last step, its own), so that the scales' product is the likelihood and the
# log-likelihood is ``sum_t log c_t + shift_t`` (Yu 2010, section 3.1,
# "scaling"; see the forward pass). No exponential in the inner loops. A step
# whose mass is not a positive finite number (an underflow, or a product of
# ``bt / c`` ratios that overflowed) returns NaN: the sequence is then
# recomputed by the log-space recursions.
# ---------------------------------------------------------------------------


# The durations open at a step are held in a ring of ``W`` slots per state,
# ``W`` at least ``D + 1`` and a whole number of blocks of ``_LANES`` slots:
# the segment that starts (forward) or ends (backward) at step ``t`` is in
# slot ``t % W``. Every step multiplies the ring by one factor and reads it
# through the duration table rotated to the ring, whose entries past ``D``
# are 0, so that the sums over durations are contiguous products and dot
# products over whole blocks, which compile to vector instructions
# (reassociated: the same sums to rounding), where a running product over
# the durations of every segment would be one long chain of dependent
# multiplications. The new segment of a step is added to the sum on its own
# and stored in its slot after it (a vector load of a slot just stored alone
# waits until the store has left the core); the slot the next step stores
# into holds a segment ``W >= D + 1`` steps long, which the table reads as
# 0, and is cleared. At ``D = 50`` (``W = 64``), two blocks of 32 slots, with no
# remainder loop.
_RING = {**_JIT, "fastmath": {"reassoc", "contract"}}
# The loops over a ring are inlined in the recursions (numba's own inlining):
# called, the rows of a step ran one after the other; inlined, the next row's
# loads overlap the last one's sums.
_INLINE_RING = {**_RING, "inline": "always"}
_TINY = 1e-200
_U = np.uint64
_LANES = 16


@njit(**_JIT)
def _scaled_width(max_dur):  # pragma: no cover - compiled
    """The slots of a scaled ring row: ``max_dur + 1`` rounded up to whole
    blocks of ``_LANES``."""
    return (max_dur + _LANES) // _LANES * _LANES


@njit(**_JIT)
def _open_slots(t, width):  # pragma: no cover - compiled
    """The slots a forward ring reads at a sequence's step ``t``: those of
    the ``t + 1`` segments open, rounded up to whole blocks."""
    return _U(min(width, (t + _LANES) // _LANES * _LANES))


@njit(**_JIT)
def _duration_rings(pmf, surv, width, fill=0.0):  # pragma: no cover - compiled
    """The duration tables rotated and doubled for rings of ``W = width``
    slots, of shape ``(K, 2 W)``: at step ``t`` the forward ring's slot ``i``
    holds the segment of duration ``(t - i) % W + 1``, ``fwd_pmf[j, W - 1 - t
    % W + i]``'s (and ``fwd_surv``'s); the backward ring's slot ``i`` the
    segment of duration ``(i - t) % W + 1``, ``bwd_pmf[j, W - t % W + i]``'s.
    The entries of durations past ``D`` are ``fill``: 0 for probabilities (the
    scaled rings), ``-inf`` for their logs (Viterbi's)."""
    n_states, max_dur = pmf.shape
    fwd_pmf = np.full((n_states, 2 * width), fill)
    fwd_surv = np.full((n_states, 2 * width), fill)
    bwd_pmf = np.full((n_states, 2 * width), fill)
    for j in range(n_states):
        for m in range(2 * width):
            back = (width - 1 - m) % width
            if back < max_dur:
                fwd_pmf[j, m] = pmf[j, back]
                fwd_surv[j, m] = surv[j, back]
            if m % width < max_dur:
                bwd_pmf[j, m] = pmf[j, m % width]
    return fwd_pmf, fwd_surv, bwd_pmf


@njit(**_INLINE_RING)
def _scale_dot(ring, j, b, table, off, n):  # pragma: no cover - compiled
    """Multiplies ``ring[j, :n]`` by ``b`` (a product below ``_TINY``
    flushed to 0: subnormal numbers are slow, and no sum here needs them) and
    returns its dot product with ``table[j, off:off + n]``."""
    f = 0.0
    for i in range(n):
        v = ring[j, i] * b
        v = v if v > _TINY else 0.0
        ring[j, i] = v
        f += v * table[j, off + i]
    return f


@njit(**_INLINE_RING)
def _scale_dot_count(ring, j, b, table, off, n, counts, a):  # pragma: no cover
    """:func:`_scale_dot`, adding ``a`` times every term of the dot product
    to ``counts[j, off:off + n]``."""
    f = 0.0
    for i in range(n):
        v = ring[j, i] * b
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


@njit(**_INLINE_RING)
def _log_scales(total, prod, c):  # pragma: no cover - compiled
    """``(total, prod)`` once the scale ``c`` is taken: the scales are
    multiplied into ``prod``, whose log goes into ``total`` (with ``c``'s)
    only when the product would leave ``[1e-100, 1e100]``: one log per
    hundred orders of magnitude, not one per step."""
    p = prod * c
    if p > 1e-100 and p < 1e100:
        return total, p
    return total + math.log(prod) + math.log(c), 1.0


@njit(**_JIT)
def padded_four(start, trans, pmf, surv, fill):  # pragma: no cover - compiled
    """The start, transition, duration and survival tables of at most four
    states padded to four with states that never start (``fill``: 0 for
    probabilities, ``-inf`` for their logs)."""
    n_states, max_dur = pmf.shape
    start4 = np.full(4, fill)
    trans4 = np.full((4, 4), fill)
    pmf4 = np.full((4, max_dur), fill)
    surv4 = np.full((4, max_dur), fill)
    for j in range(n_states):  # loops: slices compile to far more code
        start4[j] = start[j]
        for i in range(n_states):
            trans4[j, i] = trans[j, i]
        for d in range(max_dur):
            pmf4[j, d] = pmf[j, d]
            surv4[j, d] = surv[j, d]
    return start4, trans4, pmf4, surv4
