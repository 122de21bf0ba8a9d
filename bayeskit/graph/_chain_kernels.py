"""The compiled kernels of the chain: sum-product and max-product recursions.

Private to :mod:`bayeskit.graph.chain`, whose public functions validate the
arguments, plan the threads and tasks and call these kernels, which assume
valid input. The numerical argument behind the scaled recursion, its check for
lost states and the exact log-space fallback is in the user guide,
:ref:`chain-numerics` (``docs/hmm.rst``).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .._jit import njit, parallel_pair

# A forward message whose mass drops below _RESCALE_BELOW is multiplied by a
# power of two (exact) to bring its mass back into [0.5, 1). A step whose mass
# drops below _RESCUE_BELOW although the previous message had mass of at
# least _RESCALE_BELOW has its best-fitting states (nearly) unreachable; it is
# recomputed with the shift taken over the reachable states (see _rescue_step).
# So is a step below _RESCALE_BELOW with an entry that underflowed, which the
# rescaling would carry forward (see _underflowed).
_RESCALE_BELOW = 2.0**-256
_RESCUE_BELOW = 2.0**-900

# The smallest normal double: a product below it has lost precision or is 0.
_TINY = float(np.finfo(np.float64).tiny)

# In a model with a transition probability below _SAFE_TRANSITION (see
# chain._needs_detection), a reachable forward message entry or prediction
# below _LOST_BELOW sends its sequence to the log-space recursion.
_LOST_BELOW = 2.0**-960

# ---------------------------------------------------------------------------
# Sum-product kernels
#
# The element-wise exponentials and logarithms run in numpy, whose SIMD exp and
# log are several times faster than the scalar libm calls numba would make;
# the kernels below do the recursions, which are inherently sequential in time.
#
# Emissions come as a table of rows and an index: step ``t`` emits row
# ``_row(index, t)`` of the table, row ``t`` itself when the index is None
# (numba compiles the two cases separately and drops the dead branch). The
# first argument of every kernel, ``tok``, is ``chain._state_token``: a
# tuple as long as the number of states when that is small, so each small
# model gets loops of known length (unrolled and vectorised), or ``()`` to
# read the number of states from the arrays.
# ---------------------------------------------------------------------------

_JIT = {"error_model": "numpy"}


@parallel_pair(**_JIT)
def _shift_rows(log_emission, shifted, shift):  # pragma: no cover - compiled
    """``shift[t] = max_k log_emission[t, k]`` and ``shifted = row - shift``.

    A row of only ``-inf`` keeps ``-inf`` everywhere (shift ``-inf``).
    Returns the number of rows holding NaN or ``+inf``, which are invalid.
    """
    n_states = log_emission.shape[1]
    n_invalid = 0
    for t in numba.prange(log_emission.shape[0]):
        m = log_emission[t, 0]
        invalid = False
        for k in range(n_states):
            v = log_emission[t, k]
            invalid |= not (v < np.inf)
            m = v if v > m else m
        n_invalid += invalid
        shift[t] = m
        if m == -np.inf:
            m = 0.0
        for k in range(n_states):
            shifted[t, k] = log_emission[t, k] - m
    return n_invalid


@njit(**_JIT)
def _row(index, t):  # pragma: no cover - compiled
    """The table row that step ``t`` emits."""
    if index is None:
        return t
    return index[t]


@njit(**_JIT)
def _forward_sequence(
    tok, start, trans, log_start, log_trans, scaled, shift, log_em, index, alpha,
    mask, inv_pred, pred, s, e, keep, detect,
):  # fmt: skip  # pragma: no cover - compiled
    """Scaled forward pass over steps ``s:e``.

    Step ``t`` emits the scaled row ``scaled[r]`` (``exp(row - shift[r])``,
    ``r = _row(index, t)``) and leaves in row ``t & mask`` of ``alpha`` a
    message proportional to ``p(x_s, ..., x_t, z_t)``: ``mask`` is -1 to keep
    every message (``alpha`` then has a row per step and may be ``scaled``
    itself), 1 to keep the last two in a two-row ``alpha``. With ``keep``,
    ``inv_pred[t]`` receives the reciprocal of the one-step prediction
    ``alpha[t - 1] @ trans`` (0 where the prediction is 0), which the
    backward pass needs. ``pred`` is scratch of length ``n_states``. Returns
    the log-likelihood of the sequence, or ``-inf`` if it is impossible
    (later rows are then unset). With ``detect`` (a model with zero or tiny
    transitions), returns NaN as soon as a reachable state is lost (see
    :func:`_lost`): the sequence must be recomputed in log space, and the
    rows are then unset.
    """
    n_states = len(tok) if len(tok) else len(start)
    offset = 0.0
    for t in range(s, e):
        r = _row(index, t)
        a_t = t & mask
        a_prev = (t - 1) & mask
        if t == s:
            for j in range(n_states):
                pred[j] = start[j]
        else:
            a = alpha[a_prev, 0]
            for j in range(n_states):
                pred[j] = a * trans[0, j]
            for i in range(1, n_states):
                a = alpha[a_prev, i]
                for j in range(n_states):
                    pred[j] += a * trans[i, j]
        mass = 0.0
        for j in range(n_states):
            u = pred[j] * scaled[r, j]
            alpha[a_t, j] = u
            mass += u
        if keep:
            for j in range(n_states):
                inv_pred[t, j] = 1.0 / pred[j] if pred[j] > 0.0 else 0.0
        step_shift = shift[r]
        if mass < _RESCALE_BELOW:
            if mass >= _RESCUE_BELOW and not _underflowed(pred, log_em, r, alpha, a_t):
                step_shift += _rescale(alpha, a_t, mass)
            else:
                step_shift = _rescue_step(pred, log_em, r, alpha, a_t)
        if detect and _lost(
            log_start, log_trans, log_em, r, alpha, a_t, a_prev, pred, t == s
        ):
            return np.nan
        if step_shift == -np.inf:
            return -np.inf
        offset += step_shift
    return offset + math.log(_row_sum(alpha, (e - 1) & mask))


@njit(**_JIT)
def _underflowed(pred, log_em, r, alpha, a):  # pragma: no cover - compiled
    """Whether a positive entry of the message ``alpha[a]`` (emitting row
    ``r``) fell below the normal range.

    A power-of-two rescaling would carry its lost precision (or its loss)
    forward, so such a step is redone by :func:`_rescue_step` instead.
    """
    for j in range(alpha.shape[1]):
        if alpha[a, j] < _TINY and pred[j] > 0.0 and log_em[r, j] > -np.inf:
            return True
    return False


@njit(**_JIT)
def _lost(
    log_start, log_trans, log_em, r, alpha, a, a_prev, pred, first
):  # pragma: no cover - compiled
    """Whether a step lost a reachable state (models with zero transitions).

    The step emits row ``r``; its message is ``alpha[a]``, the previous one
    ``alpha[a_prev]`` (unless ``first``). A state is lost if it can emit the
    step's observation and the chain can reach it (its exact prediction is
    positive) but its prediction or its message entry is below
    ``_LOST_BELOW``: zero, subnormal or close to it. No state was lost
    before (the pass stops at the first), so the exact support of the
    previous message is its computed support, and a prediction that came out
    exactly 0 is exact unless a positive term underflowed.
    """
    n_states = alpha.shape[1]
    for j in range(n_states):
        if (pred[j] < _LOST_BELOW or alpha[a, j] < _LOST_BELOW) and log_em[
            r, j
        ] > -np.inf:
            if pred[j] > 0.0:
                return True
            if first:
                if log_start[j] > -np.inf:
                    return True
            else:
                for i in range(n_states):
                    if alpha[a_prev, i] > 0.0 and log_trans[i, j] > -np.inf:
                        return True
    return False


@njit(**_JIT)
def _rescale(alpha, a, mass):  # pragma: no cover - compiled
    """Multiply ``alpha[a]`` by the power of two that puts its mass in
    ``[0.5, 1)`` (exact); return the log of the factor taken out."""
    _, exponent = math.frexp(mass)
    factor = math.ldexp(1.0, -exponent)
    for j in range(alpha.shape[1]):
        alpha[a, j] *= factor
    return exponent * math.log(2.0)


@njit(**_JIT)
def _rescue_step(pred, log_em, r, alpha, a):  # pragma: no cover - compiled
    """Redo a step whose mass is tiny, from the prediction in log space.

    The shift becomes ``max_j log(pred[j]) + log_em[r, j]`` over the states
    the chain can reach, so the new message ``alpha[a]`` has maximum 1 again.
    Returns that shift, or ``-inf`` (and a row of zeros) if no reachable
    state can emit the step's observation.
    """
    n_states = len(pred)
    shift = -np.inf
    for j in range(n_states):
        if pred[j] > 0.0:
            shift = max(shift, math.log(pred[j]) + log_em[r, j])
    for j in range(n_states):
        if pred[j] > 0.0 and shift > -np.inf:
            alpha[a, j] = math.exp(math.log(pred[j]) + log_em[r, j] - shift)
        else:
            alpha[a, j] = 0.0
    return shift


@njit(**_JIT)
def _row_sum(x, t):  # pragma: no cover - compiled
    total = 0.0
    for j in range(x.shape[1]):
        total += x[t, j]
    return total


@njit(**_JIT)
def _backward_sequence(
    tok, trans, lattice, inv_pred, counts, index, symbol_counts, weight, w, s, e
):  # pragma: no cover - compiled
    """Turn the forward messages in ``lattice[s:e]`` into posteriors, in place.

    Smooths backwards from the normalised last message (see
    :func:`forward_backward`) with the reciprocal predictions ``inv_pred``,
    and adds the expected transitions to ``counts`` and, with an index, each
    step's posterior to the row of ``symbol_counts`` it emitted, both times
    ``weight``. ``w`` is scratch of length ``n_states``. Returns False if a
    posterior is not finite.
    """
    n_states = len(tok) if len(tok) else trans.shape[0]
    finite = True
    inv_mass = 1.0 / _row_sum(lattice, e - 1)
    for j in range(n_states):
        lattice[e - 1, j] *= inv_mass
    if index is not None:
        row = index[e - 1]
        for j in range(n_states):
            symbol_counts[row, j] += weight * lattice[e - 1, j]
    # Here lattice[t] holds the posterior, lattice[t - 1] the forward message.
    for t in range(e - 1, s, -1):
        for j in range(n_states):
            g = lattice[t, j]
            w[j] = g * inv_pred[t, j] if g > 0.0 else 0.0
        for i in range(n_states):
            a = lattice[t - 1, i]
            aw = a * weight
            r = 0.0
            for j in range(n_states):
                v = trans[i, j] * w[j]
                r += v
                counts[i, j] += aw * v
            g = a * r
            lattice[t - 1, i] = g
            finite &= g <= 2.0
        if index is not None:
            row = index[t - 1]
            for i in range(n_states):
                symbol_counts[row, i] += weight * lattice[t - 1, i]
    return finite


@parallel_pair(**_JIT)
def _forward_pass(
    tok, start, trans, log_start, log_trans, scaled, shift, log_em, index, bounds,
    n_tasks, detect, log_likelihood, final,
):  # fmt: skip  # pragma: no cover - compiled
    """Forward pass of every sequence, keeping only the last two messages;
    ``final[n]`` receives the last message of sequence ``n``."""
    n_sequences = len(bounds) - 1
    n_states = len(start)
    for task in numba.prange(n_tasks):
        pred = np.empty(n_states)
        alpha = np.empty((2, n_states))
        for n in range(
            task * n_sequences // n_tasks, (task + 1) * n_sequences // n_tasks
        ):
            e = bounds[n + 1]
            log_likelihood[n] = _forward_sequence(
                tok, start, trans, log_start, log_trans, scaled, shift, log_em,
                index, alpha, 1, alpha, pred, bounds[n], e, False, detect,
            )  # fmt: skip
            for j in range(n_states):
                final[n, j] = alpha[(e - 1) & 1, j]


@parallel_pair(**_JIT)
def _forward_backward_pass(
    tok, start, trans, log_start, log_trans, scaled, shift, log_em, index, lattice,
    inv_pred, bounds, weights, n_tasks, detect, log_likelihood, counts,
    symbol_counts, finite,
):  # fmt: skip  # pragma: no cover - compiled
    n_sequences = len(bounds) - 1
    for task in numba.prange(n_tasks):
        scratch = np.empty(len(start))
        for n in range(
            task * n_sequences // n_tasks, (task + 1) * n_sequences // n_tasks
        ):
            s, e = bounds[n], bounds[n + 1]
            log_likelihood[n] = _forward_sequence(
                tok, start, trans, log_start, log_trans, scaled, shift, log_em,
                index, lattice, -1, inv_pred, scratch, s, e, True, detect,
            )  # fmt: skip
            if log_likelihood[n] > -np.inf:  # neither impossible nor NaN
                finite[n] = _backward_sequence(
                    tok, trans, lattice, inv_pred, counts[task], index,
                    symbol_counts[task], weights[n], scratch, s, e,
                )  # fmt: skip


# ---------------------------------------------------------------------------
# Log-space sum-product: the exact recursion for the sequences that lost a
# reachable state in the scaled one (see docs/hmm.rst, chain-numerics)
# ---------------------------------------------------------------------------


@njit(**_JIT)
def _log_sum_product_sequence(
    log_start, log_trans, log_em, index, out, beta, w, counts, weight, s, e, smooth
):  # pragma: no cover - compiled
    """Log-space forward (and with ``smooth`` backward) pass over steps ``s:e``.

    Fills ``out[s:e]`` with the log forward messages
    ``log p(x_s, ..., x_t, z_t)``; with ``smooth``, turns them into the log
    posteriors ``log p(z_t | x)`` and adds the expected transitions, times
    ``weight``, to ``counts``. Every log-sum-exp is shifted by the maximum of
    its own terms, so nothing is dropped that double precision can represent
    relative to its sum. ``beta`` and ``w`` are scratch of length ``n_states``. Returns
    the log-likelihood (``-inf`` for an impossible sequence, which is then
    not smoothed).
    """
    n_states = len(log_start)
    r = _row(index, s)
    for j in range(n_states):
        out[s, j] = log_start[j] + log_em[r, j]
    for t in range(s + 1, e):
        r = _row(index, t)
        for j in range(n_states):
            m = -np.inf
            for i in range(n_states):
                m = max(m, out[t - 1, i] + log_trans[i, j])
            if m == -np.inf:
                out[t, j] = -np.inf
                continue
            acc = 0.0
            for i in range(n_states):
                acc += math.exp(out[t - 1, i] + log_trans[i, j] - m)
            out[t, j] = m + math.log(acc) + log_em[r, j]
    log_lik = _log_sum_row(out, e - 1)
    if not smooth or log_lik == -np.inf:
        return log_lik
    # beta holds log p(x_{t+1}, ..., x_T | z_t); out[t] becomes the posterior.
    # Each step is normalised by its own log-sum-exp (which equals log_lik in
    # exact arithmetic): the terms are sums of log-likelihoods that may be
    # ~1e12 or ~1e300 in size, and subtracting log_lik from them would leave
    # their absolute rounding (posterior rows summing to 1.001) or overflow.
    for j in range(n_states):
        beta[j] = 0.0
    for t in range(e - 1, s, -1):
        r = _row(index, t)
        for j in range(n_states):
            w[j] = log_em[r, j] + beta[j]
            out[t, j] += beta[j]
        _normalize_row(out, t)
        # The expected transitions t-1 -> t, normalised over all pairs.
        z = -np.inf
        for i in range(n_states):
            if out[t - 1, i] > -np.inf:
                for j in range(n_states):
                    z = max(z, out[t - 1, i] + log_trans[i, j] + w[j])
        total = 0.0
        if z > -np.inf:
            for i in range(n_states):
                if out[t - 1, i] > -np.inf:
                    for j in range(n_states):
                        total += math.exp(out[t - 1, i] + log_trans[i, j] + w[j] - z)
            for i in range(n_states):
                if out[t - 1, i] > -np.inf:
                    for j in range(n_states):
                        counts[i, j] += (
                            weight
                            * math.exp(out[t - 1, i] + log_trans[i, j] + w[j] - z)
                            / total
                        )
        for i in range(n_states):
            m = -np.inf
            for j in range(n_states):
                m = max(m, log_trans[i, j] + w[j])
            if m == -np.inf:
                beta[i] = -np.inf
                continue
            acc = 0.0
            for j in range(n_states):
                acc += math.exp(log_trans[i, j] + w[j] - m)
            beta[i] = m + math.log(acc)
    for j in range(n_states):
        out[s, j] += beta[j]
    _normalize_row(out, s)
    return log_lik


@njit(**_JIT)
def _normalize_row(x, t):  # pragma: no cover - compiled
    """Row ``t`` of log weights minus its log-sum-exp (a row of ``-inf`` stays)."""
    lse = _log_sum_row(x, t)
    if lse > -np.inf:
        for j in range(x.shape[1]):
            x[t, j] -= lse


@njit(**_JIT)
def _log_sum_row(x, t):  # pragma: no cover - compiled
    m = -np.inf
    for j in range(x.shape[1]):
        m = max(m, x[t, j])
    if m == -np.inf:
        return m
    acc = 0.0
    for j in range(x.shape[1]):
        acc += math.exp(x[t, j] - m)
    return m + math.log(acc)


@parallel_pair(**_JIT)
def _log_sum_product_pass(
    log_start, log_trans, log_em, index, out, bounds, which, weights, n_tasks,
    smooth, log_likelihood, counts,
):  # fmt: skip  # pragma: no cover - compiled
    """:func:`_log_sum_product_sequence` over the sequences listed in ``which``."""
    n_which = len(which)
    n_states = len(log_start)
    for task in numba.prange(n_tasks):
        beta = np.empty(n_states)
        w = np.empty(n_states)
        for k in range(task * n_which // n_tasks, (task + 1) * n_which // n_tasks):
            n = which[k]
            log_likelihood[n] = _log_sum_product_sequence(
                log_start, log_trans, log_em, index, out, beta, w, counts[task],
                weights[n], bounds[n], bounds[n + 1], smooth,
            )  # fmt: skip


# ---------------------------------------------------------------------------
# Max-product kernel
# ---------------------------------------------------------------------------


@njit(**_JIT)
def _viterbi_sequence(
    tok, log_start, log_trans, log_em, index, backpointers, delta, path, s, e
):  # pragma: no cover - compiled
    """Max-product over steps ``s:e``; fills ``path[s:e]``.

    ``delta`` (two rows, used in turn) holds the log joint probability of the
    best path ending in each state at the previous and the current step, and
    ``backpointers[t, j]`` the best predecessor of state ``j`` at step ``t``.
    The states are scanned upwards with a strict comparison, so ties go to
    the lowest index. The sweep handles the states four at a time in
    registers, the remainder one at a time. Returns the best log joint
    probability, or NaN if ``log_em`` holds NaN or ``+inf``.
    """
    n_states = len(tok) if len(tok) else len(log_start)
    n_blocked = n_states - n_states % 4
    invalid = False
    r = _row(index, s)
    for j in range(n_states):
        x = log_em[r, j]
        invalid |= not (x < np.inf)
        delta[0, j] = log_start[j] + x
    for t in range(s + 1, e):
        r = _row(index, t)
        prev = (t - s - 1) & 1
        cur = 1 - prev
        for o in range(0, n_blocked, 4):
            d = delta[prev, 0]
            b0 = d + log_trans[0, o]
            b1 = d + log_trans[0, o + 1]
            b2 = d + log_trans[0, o + 2]
            b3 = d + log_trans[0, o + 3]
            a0 = a1 = a2 = a3 = 0
            for i in range(1, n_states):
                d = delta[prev, i]
                v0 = d + log_trans[i, o]
                v1 = d + log_trans[i, o + 1]
                v2 = d + log_trans[i, o + 2]
                v3 = d + log_trans[i, o + 3]
                c0 = v0 > b0
                c1 = v1 > b1
                c2 = v2 > b2
                c3 = v3 > b3
                b0 = v0 if c0 else b0
                b1 = v1 if c1 else b1
                b2 = v2 if c2 else b2
                b3 = v3 if c3 else b3
                a0 = i if c0 else a0
                a1 = i if c1 else a1
                a2 = i if c2 else a2
                a3 = i if c3 else a3
            x0 = log_em[r, o]
            x1 = log_em[r, o + 1]
            x2 = log_em[r, o + 2]
            x3 = log_em[r, o + 3]
            invalid |= not (
                (x0 < np.inf) & (x1 < np.inf) & (x2 < np.inf) & (x3 < np.inf)
            )
            delta[cur, o] = b0 + x0
            delta[cur, o + 1] = b1 + x1
            delta[cur, o + 2] = b2 + x2
            delta[cur, o + 3] = b3 + x3
            backpointers[t, o] = a0
            backpointers[t, o + 1] = a1
            backpointers[t, o + 2] = a2
            backpointers[t, o + 3] = a3
        for j in range(n_blocked, n_states):
            b = delta[prev, 0] + log_trans[0, j]
            a = 0
            for i in range(1, n_states):
                v = delta[prev, i] + log_trans[i, j]
                c = v > b
                b = v if c else b
                a = i if c else a
            x = log_em[r, j]
            invalid |= not (x < np.inf)
            delta[cur, j] = b + x
            backpointers[t, j] = a
    last = (e - 1 - s) & 1
    state = 0
    for j in range(1, n_states):
        if delta[last, j] > delta[last, state]:
            state = j
    best = delta[last, state]
    path[e - 1] = state
    for t in range(e - 1, s, -1):
        state = backpointers[t, state]
        path[t - 1] = state
    return np.nan if invalid else best


@parallel_pair(**_JIT)
def _viterbi_pass(
    tok, log_start, log_trans, log_em, index, backpointers, path, bounds, n_tasks,
    log_prob,
):  # fmt: skip  # pragma: no cover - compiled
    n_sequences = len(bounds) - 1
    for task in numba.prange(n_tasks):
        delta = np.empty((2, len(log_start)))
        for n in range(
            task * n_sequences // n_tasks, (task + 1) * n_sequences // n_tasks
        ):
            log_prob[n] = _viterbi_sequence(
                tok, log_start, log_trans, log_em, index, backpointers, delta,
                path, bounds[n], bounds[n + 1],
            )  # fmt: skip
