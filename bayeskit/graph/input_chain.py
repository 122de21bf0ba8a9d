"""Chain kernels with a transition matrix per step (input-driven chains).

The chain of :mod:`bayeskit.graph.chain` has one start distribution and one
transition matrix for every sequence and step. Here every sequence has its
own start distribution and every step its own transition matrix, as in an
input-output hidden Markov model (Bengio and Frasconi 1996), whose start and
transitions are functions of covariates observed at every step. The three
functions mirror those of :mod:`bayeskit.graph.chain`:

- :func:`forward_inputs`: the log-likelihood of every sequence and the
  filtered distribution of its last state;
- :func:`forward_backward_inputs`: the posterior marginal of every step and
  the pairwise marginal of every transition (the E-step);
- :func:`viterbi_inputs`: the most probable state path (max-product).

Arguments. ``log_startprob`` has one row per sequence, ``log_transmat`` one
``(n_states, n_states)`` matrix per step: ``log_transmat[t, i, j] = log
p(z_t = j | z_{t-1} = i)`` for a step ``t`` that is not the first of its
sequence (the matrices of first steps are not read). The steps of all
sequences are concatenated, as in hmmlearn, and ``lengths`` says how many
steps each has.

Batching and numerics. The recursions run over the steps of all sequences at
once: step ``r`` of every sequence long enough is one batched operation over
those sequences (a product of ``(n_states,)`` messages by their
``(n_states, n_states)`` matrices). The sum-product runs on scaled
probabilities as the chain's kernels do: every step's emission
log-likelihoods are shifted by their maximum (kept, in log space), the
forward message is normalised at every step (its log normaliser kept), and
the log-likelihood is the sum of the log normalisers and the shifts. A
sequence with a transition probability below ``2**-600`` (where the scaling
may lose a state that is needed later) or whose scaled pass underflows is
recomputed by the exact log-space recursion instead. The max-product runs in
log space.

References
----------
.. [1] Y. Bengio and P. Frasconi, "Input-output HMMs for sequence
   processing", IEEE Transactions on Neural Networks 7(5), 1231-1249, 1996.
.. [2] L. R. Rabiner, "A tutorial on hidden Markov models and selected
   applications in speech recognition", Proceedings of the IEEE 77(2),
   257-286, 1989.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._logmath import log_normalize, logsumexp, safe_log
from .chain import ChainFilter

__all__ = [
    "InputChainPosterior",
    "forward_backward_inputs",
    "forward_inputs",
    "viterbi_inputs",
]

# With every transition probability of a sequence at least this, the scaled
# recursion loses no state that is needed later (as in bayeskit.graph.chain).
_SAFE_TRANSITION = 2.0**-600
_SUM_TOL = 1e-8


@dataclass(frozen=True)
class InputChainPosterior:
    """Result of :func:`forward_backward_inputs`.

    Attributes
    ----------
    log_evidence : ndarray of shape (n_sequences,)
        ``log p(x_1, ..., x_T)`` of every sequence.
    posterior : ndarray of shape (n_steps_total, n_states)
        ``p(z_t = k | x)`` of every step.
    pairwise : ndarray of shape (n_steps_total, n_states, n_states)
        ``p(z_{t-1} = i, z_t = j | x)`` in ``pairwise[t, i, j]`` for every
        step that is not the first of its sequence; zeros for first steps.
    """

    log_evidence: np.ndarray
    posterior: np.ndarray
    pairwise: np.ndarray

    @property
    def transition_counts(self) -> np.ndarray:
        """Expected transition counts summed over all steps, ``(k, k)``."""
        return self.pairwise.sum(axis=0)


# ---------------------------------------------------------------------------
# Validation and layout
# ---------------------------------------------------------------------------


def _check(log_startprob, log_transmat, log_emission, lengths):
    emission = np.asarray(log_emission, dtype=float)
    if emission.ndim != 2:
        raise ValueError(f"log_emission must be 2-d, got shape {emission.shape}.")
    n_steps, k = emission.shape
    if np.isnan(emission).any() or np.isposinf(emission).any():
        raise ValueError("log_emission contains NaN or +inf.")
    if lengths is None:
        lengths = np.array([n_steps])
    lengths = np.asarray(lengths)
    if (
        lengths.ndim != 1
        or lengths.dtype.kind not in "iu"
        or (lengths <= 0).any()
        or lengths.sum() != n_steps
    ):
        raise ValueError(
            f"lengths must be positive integers summing to {n_steps} (the rows "
            "of log_emission)."
        )
    lengths = lengths.astype(np.intp)
    start = np.asarray(log_startprob, dtype=float)
    if start.ndim == 1:
        start = np.broadcast_to(start, (len(lengths), len(start)))
    if start.shape != (len(lengths), k):
        raise ValueError(
            f"log_startprob must have shape (n_sequences, n_states) = "
            f"({len(lengths)}, {k}), got {start.shape}."
        )
    trans = np.asarray(log_transmat, dtype=float)
    if trans.shape != (n_steps, k, k):
        raise ValueError(
            f"log_transmat must have shape (n_steps, n_states, n_states) = "
            f"({n_steps}, {k}, {k}), got {trans.shape}."
        )
    starts = np.cumsum(lengths) - lengths
    if np.isnan(start).any() or np.abs(logsumexp(start, axis=1)).max() > _SUM_TOL:
        raise ValueError("every row of log_startprob must sum to 1 as probabilities.")
    inner = np.ones(n_steps, dtype=bool)
    inner[starts] = False
    if inner.any():
        rows = trans[inner]
        if np.isnan(rows).any() or np.abs(logsumexp(rows, axis=2)).max() > _SUM_TOL:
            raise ValueError(
                "every row of log_transmat (at steps that are not the first of "
                "their sequence) must sum to 1 as probabilities."
            )
    return start, trans, emission, lengths, starts


def _steps(lengths, starts, which):
    """The plan of a batched pass over the sequences ``which``: ``(perm,
    plan)``, where ``which[perm]`` sorts them longest first and ``plan`` is
    ``[(r, rows, m)]``: the rows of step ``r`` of the first ``m`` sorted
    sequences (those at least ``r + 1`` steps long)."""
    perm = np.argsort(-lengths[which], kind="stable")
    size = lengths[which[perm]]
    plan = []
    for r in range(int(size[0]) if len(size) else 0):
        m = int(np.count_nonzero(size > r))
        plan.append((r, starts[which[perm[:m]]] + r, m))
    return perm, plan


def _unsort(perm):
    """The positions, in the sorted order, of ``which``'s sequences."""
    inverse = np.empty(len(perm), dtype=np.intp)
    inverse[perm] = np.arange(len(perm))
    return inverse


# ---------------------------------------------------------------------------
# Sum-product: scaled, and exact in log space
# ---------------------------------------------------------------------------


def _scaled_pass(start, trans, emission, lengths, starts, which, smooth):
    """The scaled recursion on the sequences ``which``: ``(log_lik, last,
    posterior, pairwise, failed)`` (log-likelihood and filtered last state per
    sequence of ``which``; posterior and pairwise rows written for their
    steps when ``smooth``; ``failed`` marks sequences that underflowed)."""
    perm, plan = _steps(lengths, starts, which)
    order = which[perm]
    n_steps, k = emission.shape
    shift = emission.max(axis=1)
    finite_shift = np.where(np.isfinite(shift), shift, 0.0)
    scaled = np.exp(emission - finite_shift[:, None])
    prob = np.exp(trans)
    alpha = np.zeros((n_steps, k)) if smooth else None
    pred = np.zeros((n_steps, k)) if smooth else None
    log_lik = np.zeros(len(order))
    current = np.exp(start[order])
    failed = np.zeros(len(order), dtype=bool)
    for r, rows, m in plan:
        if r == 0:
            a = current * scaled[rows]
        else:
            p = np.einsum("si,sij->sj", current[:m], prob[rows])
            if smooth:
                pred[rows] = p
            a = p * scaled[rows]
        c = a.sum(axis=1)
        bad = ~(c > 0) | ~np.isfinite(shift[rows])
        failed[:m] |= bad
        c = np.where(bad, 1.0, c)
        a = a / c[:, None]
        log_lik[:m] += np.log(c) + finite_shift[rows]
        current = np.concatenate([a, current[m:]]) if m < len(current) else a
        if smooth:
            alpha[rows] = a
    last = current
    posterior = pairwise = None
    if smooth:
        posterior = np.zeros((n_steps, k))
        pairwise = np.zeros((n_steps, k, k))
        for r, rows, m in reversed(plan):
            # The last step of a sequence: its filtered message.
            ends = lengths[order[:m]] == r + 1
            posterior[rows[ends]] = alpha[rows[ends]]
            inner = ~ends
            if inner.any():
                here, nxt = rows[inner], rows[inner] + 1
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio = np.where(pred[nxt] > 0, posterior[nxt] / pred[nxt], 0.0)
                xi = alpha[here][:, :, None] * prob[nxt] * ratio[:, None, :]
                pairwise[nxt] = xi
                posterior[here] = xi.sum(axis=2)
    idx = _unsort(perm)
    return log_lik[idx], last[idx], posterior, pairwise, failed[idx]


def _log_pass(start, trans, emission, lengths, starts, which, smooth):
    """The exact log-space recursion on the sequences ``which``: ``(log_lik,
    last, posterior, pairwise)`` as :func:`_scaled_pass` (no failure)."""
    perm, plan = _steps(lengths, starts, which)
    order = which[perm]
    n_steps, k = emission.shape
    log_alpha = np.full((n_steps, k), -np.inf)
    current = start[order].copy()
    for r, rows, m in plan:
        if r == 0:
            a = current + emission[rows]
        else:
            a = logsumexp(current[:m, :, None] + trans[rows], axis=1) + emission[rows]
        log_alpha[rows] = a
        current = np.concatenate([a, current[m:]]) if m < len(current) else a
    ends = starts[order] + lengths[order] - 1
    log_lik = logsumexp(log_alpha[ends], axis=1)
    last, _ = log_normalize(log_alpha[ends], axis=1)
    posterior = pairwise = None
    if smooth:
        seq_ll = np.repeat(log_lik, lengths[order])
        row_of = np.concatenate(
            [np.arange(s, s + n) for s, n in zip(starts[order], lengths[order])]
        )
        ll_row = np.empty(n_steps)
        ll_row[row_of] = seq_ll
        log_beta = np.zeros((n_steps, k))
        posterior = np.zeros((n_steps, k))
        pairwise = np.zeros((n_steps, k, k))
        for r, rows, m in reversed(plan):
            ends_here = lengths[order[:m]] == r + 1
            inner = ~ends_here
            if inner.any():
                here, nxt = rows[inner], rows[inner] + 1
                after = emission[nxt] + log_beta[nxt]
                joint = trans[nxt] + after[:, None, :]
                log_beta[here] = logsumexp(joint, axis=2)
                with np.errstate(invalid="ignore"):
                    xi = log_alpha[here][:, :, None] + joint - ll_row[here, None, None]
                pairwise[nxt] = np.exp(np.where(np.isnan(xi), -np.inf, xi))
            with np.errstate(invalid="ignore"):
                g = log_alpha[rows] + log_beta[rows] - ll_row[rows, None]
            posterior[rows] = np.exp(np.where(np.isnan(g), -np.inf, g))
    idx = _unsort(perm)
    return log_lik[idx], np.exp(last[idx]), posterior, pairwise


def _sum_product(log_startprob, log_transmat, log_emission, lengths, smooth, exact):
    start, trans, emission, lengths, starts = _check(
        log_startprob, log_transmat, log_emission, lengths
    )
    n_seq, (n_steps, k) = len(lengths), emission.shape
    log_lik = np.empty(n_seq)
    last = np.empty((n_seq, k))
    posterior = np.zeros((n_steps, k)) if smooth else None
    pairwise = np.zeros((n_steps, k, k)) if smooth else None
    # Sequences with a transition below the safe bound go to the exact pass.
    low = np.zeros(n_seq, dtype=bool)
    if not exact and n_steps:
        log_min = trans.reshape(n_steps, -1).min(axis=1)
        log_min[starts] = 0.0  # the matrices of first steps are not read
        seq = np.repeat(np.arange(n_seq), lengths)
        below = log_min < np.log(_SAFE_TRANSITION)
        low = np.bincount(seq, below, minlength=n_seq) > 0
    else:
        low[:] = True
    scaled = np.flatnonzero(~low)
    if scaled.size:
        ll, la, post, pair, failed = _scaled_pass(
            start, trans, emission, lengths, starts, scaled, smooth
        )
        log_lik[scaled], last[scaled] = ll, la
        if smooth:
            rows = _rows(starts, lengths, scaled[~failed])
            posterior[rows], pairwise[rows] = post[rows], pair[rows]
        low[scaled[failed]] = True
    exact_seq = np.flatnonzero(low)
    if exact_seq.size:
        ll, la, post, pair = _log_pass(
            start, trans, emission, lengths, starts, exact_seq, smooth
        )
        log_lik[exact_seq], last[exact_seq] = ll, la
        if smooth:
            rows = _rows(starts, lengths, exact_seq)
            posterior[rows], pairwise[rows] = post[rows], pair[rows]
    return log_lik, last, posterior, pairwise, lengths, starts


def _rows(starts, lengths, which):
    if not len(which):
        return np.zeros(0, dtype=np.intp)
    return np.concatenate([np.arange(starts[s], starts[s] + lengths[s]) for s in which])


def forward_inputs(
    log_startprob, log_transmat, log_emission, lengths=None, *, exact=False
) -> ChainFilter:
    """Filter every sequence of a chain with a transition matrix per step.

    Parameters
    ----------
    log_startprob : array-like of shape (n_sequences, n_states) or (n_states,)
        Log-probabilities of the first state of every sequence (one row for
        all of them, or one per sequence); every row sums to 1.
    log_transmat : array-like of shape (n_steps_total, n_states, n_states)
        ``log p(z_t = j | z_{t-1} = i)`` of every step ``t`` in
        ``[t, i, j]``; the matrices of the first step of every sequence are
        not read, every other row sums to 1.
    log_emission : array-like of shape (n_steps_total, n_states)
        Emission log-likelihoods of every step under every state (no NaN or
        ``+inf``).
    lengths : array-like of int of shape (n_sequences,), default=None
        Steps of every sequence; None is one sequence.
    exact : bool, default=False
        Run the exact log-space recursion on every sequence (by default only
        on those the scaled recursion cannot take; see the module).

    Returns
    -------
    filtered : ChainFilter
        ``log_evidence`` of every sequence (``-inf`` for an impossible one)
        and ``log_final_filtered``, the filtered distribution of its last
        state.
    """
    log_lik, last, *_ = _sum_product(
        log_startprob, log_transmat, log_emission, lengths, False, exact
    )
    log_last, _ = log_normalize(safe_log(last), axis=1)
    log_last[~np.isfinite(log_lik)] = -np.inf
    return ChainFilter(log_lik, log_last)


def forward_backward_inputs(
    log_startprob, log_transmat, log_emission, lengths=None, *, exact=False
) -> InputChainPosterior:
    """Posterior marginals and pairwise marginals, a transition matrix per step.

    Parameters are those of :func:`forward_inputs`.

    Returns
    -------
    posterior : InputChainPosterior
        ``log_evidence`` of every sequence, ``posterior`` of every step and
        ``pairwise``, the joint posterior of every step's state and the
        state before it.

    Raises
    ------
    ValueError
        If an argument is invalid (the message names it), or a sequence has
        probability zero (its posterior is undefined).

    Notes
    -----
    The forward filtering, backward smoothing recursion of
    :func:`bayeskit.graph.forward_backward` with :math:`A` replaced by the
    step's :math:`A_{t+1}`:

    .. math::

        p_{t+1} = \\hat\\alpha_t A_{t+1}, \\qquad
        \\xi_{t+1}(i, j) = \\hat\\alpha_t(i) A_{t+1}(i, j)
            \\frac{\\gamma_{t+1}(j)}{p_{t+1}(j)}, \\qquad
        \\gamma_t(i) = \\sum_j \\xi_{t+1}(i, j),

    from :math:`\\gamma_T = \\hat\\alpha_T`, the normalised forward message
    of the last step (Rabiner 1989; Bengio and Frasconi 1996).
    """
    log_lik, _, posterior, pairwise, lengths, starts = _sum_product(
        log_startprob, log_transmat, log_emission, lengths, True, exact
    )
    impossible = np.flatnonzero(~np.isfinite(log_lik))
    if impossible.size:
        n = int(impossible[0])
        raise ValueError(
            f"sequence {n} (steps {starts[n]} to {starts[n] + lengths[n] - 1}) "
            "has probability zero under log_startprob, log_transmat and "
            "log_emission (every state path is -inf), so its posterior is "
            "undefined; forward_inputs() scores it as -inf."
        )
    return InputChainPosterior(log_lik, posterior, pairwise)


def viterbi_inputs(
    log_startprob, log_transmat, log_emission, lengths=None
) -> tuple[np.ndarray, np.ndarray]:
    """Most probable state path of every sequence, a transition matrix per step.

    Parameters are those of :func:`forward_inputs`.

    Returns
    -------
    path : ndarray of int of shape (n_steps_total,)
    log_prob : ndarray of shape (n_sequences,)
        ``max_z log p(x, z)`` of every sequence. Ties go to the lowest state
        index, as in :func:`bayeskit.graph.viterbi`.
    """
    start, trans, emission, lengths, starts = _check(
        log_startprob, log_transmat, log_emission, lengths
    )
    n_steps, k = emission.shape
    which = np.arange(len(lengths))
    perm, plan = _steps(lengths, starts, which)
    order = which[perm]
    back = np.zeros((n_steps, k), dtype=np.intp)
    delta = np.empty((n_steps, k))
    current = start[order].copy()
    for r, rows, m in plan:
        if r == 0:
            d = current + emission[rows]
        else:
            scores = current[:m, :, None] + trans[rows]
            back[rows] = np.argmax(scores, axis=1)
            d = np.max(scores, axis=1) + emission[rows]
        delta[rows] = d
        current = np.concatenate([d, current[m:]]) if m < len(current) else d
    path = np.empty(n_steps, dtype=np.intp)
    log_prob = np.empty(len(order))
    state = np.zeros(len(order), dtype=np.intp)
    for r, rows, m in reversed(plan):
        ends = lengths[order[:m]] == r + 1
        here = state[:m]
        if ends.any():
            best = np.argmax(delta[rows[ends]], axis=1)
            here[ends] = best
            log_prob[:m][ends] = delta[rows[ends], best]
        inner = ~ends
        if inner.any():
            here[inner] = back[rows[inner] + 1, here[inner]]
        path[rows] = here
    return path, log_prob[_unsort(perm)]
