"""The semi-Markov recursions in numpy, one step of every sequence at a time.

Private to :mod:`bayeskit.graph.semi_markov`, which runs them in place of the
compiled kernels (``_semi_markov_kernels``, ``_semi_markov_viterbi``) while those
are not compiled yet (neither in this process nor in numba's disk cache): a
first fit of a semi-Markov model in a fresh environment then compiles nothing
(the kernels take some ten seconds to compile). Each step is a few numpy
operations over every sequence that has that step and over the ``D``
durations of the segments that end (forward) or start (backward) there, so
the cost grows with the length of the longest sequence times ``D``, not with
the number of sequences. The messages are held padded, as arrays of shape
``(n_steps, n_sequences, k)`` with the sequences sorted longest first (those
that have step ``t`` are a prefix), so that the durations open at a step are a
slice along time; the forward pass aligns the sequences at their first step,
the backward pass at their last, so that the same durations are open to all
of them.

The recursions are the kernels' scaled ones (Yu 2010, section 3.1, with the
right-censored last segment of section 3.4) and max-product for Viterbi (Yu
2010, section 3.2). They give the kernels' results up to rounding (Viterbi's
exactly: the same sums, in the same order, and the same comparisons), and
return None where the kernels would leave the scaled recursions for the
log-space ones (a step whose mass is not a positive finite number, a backward
message that overflows): the caller then runs the kernels.

References
----------
.. [1] S.-Z. Yu, "Hidden semi-Markov models", Artificial Intelligence
   174(2), 215-243, 2010.
"""

from __future__ import annotations

import numpy as np

from .. import _jit
from ._chain_numpy import _Padded, timed_against

# What runs here: sequences of at most MAX_STEPS steps and at most MAX_WORK
# steps x states x durations in all, so that a pass takes at most some tenths
# of a second; and only until these passes have taken BUDGET seconds in this
# process (CPU seconds): then compiling the kernels (about ten seconds, once
# per machine) costs less than what the numpy passes lose. Past the budget,
# they keep answering while the kernels are ``waiting`` (see ``_chain_numpy``).
MAX_STEPS = 2048
MAX_WORK = 1 << 24
BUDGET = 20.0
_spent = [0.0]


def fits(
    bounds: np.ndarray, n_states: int, max_duration: int, waiting: bool = False
) -> bool:
    """Whether sequences of these ``bounds`` are for these passes (their
    padded work, longest sequence x sequences x states x durations, counts;
    never in a child compiling the kernels)."""
    longest = int(np.diff(bounds).max())
    return (
        (waiting or _spent[0] < BUDGET)
        and not _jit._IN_CHILD
        and longest * (len(bounds) - 1) * n_states * max_duration <= MAX_WORK
        and longest <= MAX_STEPS
    )


_timed = timed_against(lambda: _spent)


def _forward(start, trans, pmf, surv, bt, shift, steps):
    """The scaled forward pass (the kernel ``_scaled_forward_sequence``).

    Returns the log-likelihoods (sorted as ``steps``) and the messages ``A``,
    ``F``, ``R``, padded at the start; or None if a step's mass is not a
    positive finite number.

    The open segments are held as the kernel holds them, in a ring: the slot
    of the segment of state ``j`` that began ``d - 1`` steps ago holds its
    start message times its emissions, so that a step multiplies every open
    segment by one factor (the step's emissions over the scale of the step
    before) instead of forming the products over the durations anew; and the
    sums over the durations, of the ending segments (times ``p_j(d)``) and of
    the mass (times ``P(d_j >= d)``), are one stacked matrix product.
    """
    k = bt.shape[1]
    D = pmf.shape[1]
    n_seq = len(steps.starts)
    weights = np.stack([pmf, surv], axis=2)  # (k, D, 2): both sums at once
    bt, shift = steps.pad(bt, "forward"), steps.pad(shift, "forward")
    A, F, R = (np.zeros((steps.n_steps, n_seq, k)) for _ in range(3))
    log_likelihood = np.zeros(n_seq)
    # ring[j, s, d - 1]: state j's segment of sequence s begun d - 1 steps
    # ago; written into the spare ring, shifted by one duration, every step.
    ring, spare = np.zeros((k, n_seq, D)), np.zeros((k, n_seq, D))
    inv = np.ones(n_seq)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for t in range(steps.n_steps):
            m = steps.active[t]
            A[t, :m] = start if t == 0 else F[t - 1, :m] @ trans
            nd = min(D, t + 1)
            b = bt[t, :m]
            if nd > 1:
                factor = (b * inv[:m, None]).T[:, :, None]
                np.multiply(ring[:, :m, : nd - 1], factor, out=spare[:, :m, 1:nd])
            spare[:, :m, 0] = (A[t, :m] * b).T
            ring, spare = spare, ring
            sums = np.matmul(ring[:, :m, :nd], weights[:, :nd])  # (k, m, 2)
            mass = sums[:, :, 1].sum(axis=0)
            if not ((mass > 0.0) & (mass < np.inf)).all():
                return None
            inv = 1.0 / mass
            F[t, :m] = sums[:, :, 0].T * inv[:, None]
            R[t, :m] = b * inv[:, None]
            log_likelihood[:m] += np.log(mass) + shift[t, :m]
    return log_likelihood, A, F, R


def _unsort(values, steps):
    out = np.empty_like(values)
    out[steps.order] = values
    return out


@_timed
def forward(start, trans, pmf, surv, bt, shift, bounds, waiting=False):
    """The log-likelihood of every sequence, or None (see the module)."""
    if not fits(bounds, *pmf.shape, waiting):
        return None
    steps = _Padded(bounds)
    found = _forward(start, trans, pmf, surv, bt, shift, steps)
    return None if found is None else _unsort(found[0], steps)


@_timed
def forward_backward(
    start, trans, pmf, surv, bt, shift, bounds, weights, waiting=False
):
    """Log-likelihoods, posteriors of every step and the weighted expected
    start, transition and duration counts (the kernel
    ``_forward_backward_pass`` on its scaled path), or None."""
    if not fits(bounds, *pmf.shape, waiting):
        return None
    steps = _Padded(bounds)
    found = _forward(start, trans, pmf, surv, bt, shift, steps)
    if found is None:
        return None
    log_likelihood, A, F, R = found
    k = bt.shape[1]
    D = pmf.shape[1]
    n_steps, n_seq = steps.n_steps, len(steps.starts)
    w = weights[steps.order]
    # The backward pass aligns the sequences at their last step.
    A_end = steps.pad(steps.unpad(A, "forward"), "backward")
    R_end = steps.pad(steps.unpad(R, "forward"), "backward")
    Bs = np.zeros_like(A)
    # Be state-major and reversed in time (``Be_rev[j, s, n_steps - 1 - tau]``
    # is ``Be[tau, s, j]``), so that the messages ending the segments that
    # start tau steps before the end, ``Be[tau - d + 1]``, are a slice.
    Be_rev = np.zeros((k, n_seq, n_steps))
    durations = np.zeros((D, k))
    ones = np.ones(D)
    # ring[j, s, d - 1]: the scaled emissions of state j's segment of d steps
    # starting here, a product grown by one factor per step (as the forward
    # pass's).
    ring, spare = np.zeros((k, n_seq, D)), np.zeros((k, n_seq, D))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        # tau steps before each sequence's end: the segments that start here
        # last d = 1 .. nd steps, the last censored if it reaches the end
        # (d = tau + 1 <= D).
        for tau in range(n_steps):
            m = steps.active[tau]
            here = n_steps - 1 - tau
            if tau:
                Be_rev[:, :m, here] = (Bs[tau - 1, :m] @ trans.T).T
            nd = min(D, tau + 1)
            r = R_end[tau, :m].T
            if nd > 1:
                np.multiply(
                    ring[:, :m, : nd - 1], r[:, :, None], out=spare[:, :m, 1:nd]
                )
            spare[:, :m, 0] = r
            ring, spare = spare, ring
            a = (w[:m, None] * A_end[tau, :m]).T
            full = min(tau, D)
            acc = np.zeros((k, m))
            if full:
                term = ring[:, :m, :full] * Be_rev[:, :m, here : here + full]
                term *= pmf[:, None, :full]
                acc = np.matmul(term, ones[:full])
                durations[:full] += np.matmul(a[:, None, :], term)[:, 0].T
            if full < nd:  # the censored last segment
                last = ring[:, :m, full]
                acc = acc + surv[:, full, None] * last
                spread = np.where(a > 0.0, a * last, 0.0).sum(axis=1)
                durations[full:] += spread * pmf.T[full:]
            if not (acc < np.inf).all():
                return None
            Bs[tau, :m] = acc.T
        Be = np.ascontiguousarray(Be_rev[:, :, ::-1].transpose(2, 1, 0))
        # Posteriors and start and transition counts (``_scaled_stats_sequence``),
        # aligned at the first step again.
        Bs = steps.pad(steps.unpad(Bs, "backward"), "forward")
        Be = steps.pad(steps.unpad(Be, "backward"), "forward")
        gamma = np.empty_like(A)
        gamma[0] = A[0] * Bs[0]
        start_counts = (w[:, None] * gamma[0]).sum(axis=0)
        for t in range(1, steps.n_steps):
            m = steps.active[t]
            g = gamma[t - 1, :m] + A[t, :m] * Bs[t, :m] - F[t - 1, :m] * Be[t - 1, :m]
            gamma[t, :m] = np.minimum(np.maximum(g, 0.0), 1.0)
    later = steps.valid[1:, :, None]
    before = np.where(later, w[:, None] * F[:-1], 0.0).reshape(-1, k)
    after = np.where(later, Bs[1:], 0.0).reshape(-1, k)
    transitions = (before.T @ after) * trans
    gamma = steps.unpad(gamma, "forward")
    if not (
        np.isfinite(gamma).all()
        and np.isfinite(durations).all()
        and np.isfinite(transitions).all()
    ):
        return None
    return (
        _unsort(log_likelihood, steps), gamma, start_counts, transitions,
        np.ascontiguousarray(durations.T),
    )  # fmt: skip


@_timed
def viterbi(log_start, log_trans, log_pmf, log_surv, log_em, bounds, waiting=False):
    """The most probable path and its log joint probability of every sequence
    (the kernel ``_viterbi_sequence``: its sums, in its order, and its
    comparisons, ties to the lowest state and shortest duration), or None."""
    if not fits(bounds, *log_pmf.shape, waiting):
        return None
    steps = _Padded(bounds)
    k = log_em.shape[1]
    n_seq = len(steps.starts)
    D = log_pmf.shape[1]
    pmf_t, surv_t = log_pmf.T[:, None], log_surv.T[:, None]
    em = steps.pad(log_em, "forward")
    A = np.full((steps.n_steps, n_seq, k), -np.inf)
    F = np.full((steps.n_steps, n_seq, k), -np.inf)
    # The open segments: the one that started at u holds A[u] plus its
    # emissions so far, one addition per step (the kernel's ring).
    H = np.full((steps.n_steps, n_seq, k), -np.inf)
    from_state = np.zeros((steps.n_steps, n_seq, k), dtype=np.intp)
    duration = np.ones((steps.n_steps, n_seq, k), dtype=np.intp)
    for t in range(steps.n_steps):
        m = steps.active[t]
        if t == 0:
            A[0] = log_start
        else:
            v = F[t - 1, :m, :, None] + log_trans
            best = v.argmax(axis=1)
            from_state[t, :m] = best
            A[t, :m] = np.take_along_axis(v, best[:, None, :], axis=1)[:, 0]
        nd = min(D, t + 1)
        H[t, :m] = A[t, :m]
        H[t - nd + 1 : t + 1, :m] += em[t, :m]
        v = H[t - nd + 1 : t + 1, :m][::-1] + pmf_t[:nd]
        best = v.argmax(axis=0)
        duration[t, :m] = best + 1
        F[t, :m] = np.take_along_axis(v, best[None], axis=0)[0]
    # The censored last segment: the best state and duration, state-major.
    H_end = np.take(steps.unpad(H, "forward"), steps.backward[:D], axis=0)
    log_prob = np.empty(n_seq)
    state = np.empty(n_seq, dtype=np.intp)
    dur = np.empty(n_seq, dtype=np.intp)
    spans = np.minimum(steps.lengths, D)
    for nd in np.unique(spans):
        which = np.flatnonzero(spans == nd)
        v = H_end[:nd, which] + surv_t[:nd]
        flat = v.transpose(1, 2, 0).reshape(len(which), -1)
        best = flat.argmax(axis=1)
        log_prob[which] = flat[np.arange(len(which)), best]
        state[which], dur[which] = np.divmod(best, nd)
    dur += 1
    # Back through the segments of every possible sequence at once.
    path = np.zeros((steps.n_steps, n_seq), dtype=np.int64)
    live = np.flatnonzero(log_prob > -np.inf)
    end, state, dur = steps.lengths[live] - 1, state[live], dur[live]
    while len(live):
        begin = end - dur + 1
        offsets = np.arange(dur.sum()) - np.repeat(np.cumsum(dur) - dur, dur)
        path[np.repeat(begin, dur) + offsets, np.repeat(live, dur)] = np.repeat(
            state, dur
        )
        more = begin > 0
        live, begin, state = live[more], begin[more], state[more]
        state = from_state[begin, live, state]
        end = begin - 1
        dur = duration[end, live, state]
    return steps.unpad(path, "forward"), _unsort(log_prob, steps)
