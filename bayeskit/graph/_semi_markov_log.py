"""The semi-Markov recursions in log space, one sequence at a time.

Private to :mod:`bayeskit.graph._semi_markov_kernels`: the recursions that
every sequence takes when asked for (``exact=True``) and those whose scaled
recursions underflow or overflow fall back to. Every recursion runs over
segments, in O(T K D) per sequence of ``T`` steps, ``K`` states and longest
duration ``D`` (Yu 2010, section 3.1: the forward variable of a segment that
*ends* at ``t`` and the one of a segment that *starts* at ``t``). The
emissions' rows are the steps of all sequences concatenated, the sequence
being rows ``s:e``; the messages are work space of the sequence alone, of
shape ``(K, >= e - s)`` (a state's messages contiguous in time, which the
sums over durations read), indexed by the sequence's own step.

Notation, for the sequence's steps ``0 .. T-1``:

- ``A[j, t] = log p(x_{<t}, a segment of j starts at t)``;
- ``F[j, t] = log p(x_{<=t}, a segment of j ends at t)``, ``t < T-1``;
- ``Bs[j, t] = log p(x_{>=t} | a segment of j starts at t)``;
- ``Be[j, t] = log p(x_{>t} | a segment of j ends at t)``.

The last segment of every sequence is right-censored: it has lasted at least
the steps seen, with probability ``surv[j, d - 1] = P(duration >= d)``.

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
        for j in range(n_states):
            if t == 0:
                A[j, t] = log_start[j]
                continue
            m = -np.inf
            for i in range(n_states):
                v = F[i, t - 1] + log_trans[i, j]
                buf[i] = v
                m = v if v > m else m
            A[j, t] = _lse(buf, n_states, m)
        if t == n - 1:
            break
        for j in range(n_states):
            em = 0.0
            m = -np.inf
            n_dur = min(max_dur, t + 1)
            for d in range(1, n_dur + 1):
                em += log_em[s + t - d + 1, j]
                v = A[j, t - d + 1] + log_pmf[j, d - 1] + em
                buf[d - 1] = v
                m = v if v > m else m
            F[j, t] = _lse(buf, n_dur, m)
    # The censored last segment of every state: lse over j and d.
    total = -np.inf
    for j in range(n_states):
        em = 0.0
        m = -np.inf
        n_dur = min(max_dur, n)
        for d in range(1, n_dur + 1):
            em += log_em[e - d, j]
            v = A[j, n - d] + log_surv[j, d - 1] + em
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
        if t < n - 1:
            for i in range(n_states):
                m = -np.inf
                for j in range(n_states):
                    v = log_trans[i, j] + Bs[j, t + 1]
                    buf[j] = v
                    m = v if v > m else m
                Be[i, t] = _lse(buf, n_states, m)
        for j in range(n_states):
            em = 0.0
            m = -np.inf
            n_dur = min(max_dur, n - t)
            for d in range(1, n_dur + 1):
                u = t + d - 1
                em += log_em[s + u, j]
                if u < n - 1:
                    v = log_pmf[j, d - 1] + em + Be[j, u]
                else:
                    v = log_surv[j, d - 1] + em
                buf[d - 1] = v
                m = v if v > m else m
            Bs[j, t] = _lse(buf, n_dur, m)


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
        p = math.exp(A[j, 0] + Bs[j, 0] - log_lik)
        start[j] += weight * p
        gamma[s, j] = p
    for t in range(1, n):
        for j in range(n_states):
            begin = math.exp(A[j, t] + Bs[j, t] - log_lik)
            end = math.exp(F[j, t - 1] + Be[j, t - 1] - log_lik)
            g = gamma[s + t - 1, j] + begin - end
            gamma[s + t, j] = min(max(g, 0.0), 1.0)
        if not counts:
            continue
        for i in range(n_states):
            f = F[i, t - 1] - log_lik
            for j in range(n_states):
                trans[i, j] += weight * math.exp(f + log_trans[i, j] + Bs[j, t])
    if not counts:
        return
    for t in range(n):
        for j in range(n_states):
            a = A[j, t] - log_lik
            if a == -np.inf:
                continue
            em = 0.0
            for d in range(1, min(max_dur, n - t) + 1):
                u = t + d - 1
                em += log_em[s + u, j]
                if u < n - 1:
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
