"""The square-root Kalman filter and RTS smoother in numpy, one step of every
sequence at a time.

Private to :mod:`bayeskit.graph.gaussian_chain`, which runs them in place of
the compiled kernels of :mod:`bayeskit.graph._gaussian_kernels` while those
are not compiled yet (neither in this process nor in numba's disk cache): a
first fit of a linear dynamical system in a fresh environment then compiles
nothing (the two kernels take some fifteen seconds to compile). Each step is a
few numpy operations over the sequences that have that step, held padded as
arrays of shape ``(n_steps, n_sequences, ...)``, sorted longest first (the
filter aligns them at their first step, the smoother at their last), so the
cost grows with the length of the longest sequence, not with the number of
sequences.

The algorithm is the kernels' (see :mod:`bayeskit.graph.gaussian_chain`;
Kailath, Sayed and Hassibi 2000, chapter 12): the same pre-arrays, made
triangular by the same Householder reflections, written here over a stack of
matrices. The results are the kernels' up to rounding. A step with some but
not all coordinates missing (its own observed block) is the kernels': these
passes return None on such data.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _jit
from ._chain_numpy import _Padded, timed_against

# What runs here: at most MAX_STEPS steps per sequence and MAX_WORK padded
# steps x (observed + state dimensions)**2 in all, so that a pass takes at
# most some tenths of a second; and only until these passes have taken
# BUDGET seconds in this process: then compiling the kernels (some fifteen
# seconds, once per machine) costs less than what the numpy passes lose. Past
# the budget, they keep answering while the kernels are ``waiting`` (see
# ``_chain_numpy``).
MAX_STEPS = 4096
MAX_WORK = 1 << 23
BUDGET = 20.0
_spent = [0.0]
_LOG_2PI = math.log(2.0 * math.pi)


def fits(lengths: np.ndarray, n_obs: int, n_state: int, waiting: bool = False) -> bool:
    """Whether sequences of these ``lengths`` are for these passes (not
    empty ones: the kernels take those; never in a child compiling the
    kernels)."""
    if not len(lengths) or lengths.min() < 1:
        return False
    longest = int(lengths.max())
    return (
        (waiting or _spent[0] < BUDGET)
        and not _jit._IN_CHILD
        and longest * len(lengths) * (n_obs + n_state) ** 2 <= MAX_WORK
        and longest <= MAX_STEPS
    )


_timed = timed_against(lambda: _spent)


def householder_r(M: np.ndarray) -> None:
    """The kernel ``householder_r`` on every matrix of the stack ``M`` (shape
    ``(m, r, c)``, ``r >= c``), in place: the same reflections, the same sums
    in the same order. The work is done on a copy with the stack last (every
    entry a contiguous row of ``m`` values) and the columns right of ``j``
    together (each column's dot product and update are the kernel's
    operations on it)."""
    r, c = M.shape[1:]
    T = np.ascontiguousarray(M.transpose(1, 2, 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in range(c):
            s = T[j, j] * T[j, j]
            for i in range(j + 1, r):
                s += T[i, j] * T[i, j]
            norm = np.sqrt(s)
            x0 = T[j, j]
            alpha = np.where(x0 > 0, -norm, norm)
            if j + 1 < c:
                v0 = x0 - alpha
                vtv = s - x0 * x0 + v0 * v0
                right = T[j, j + 1 :]
                dot = v0 * right
                for i in range(j + 1, r):
                    dot += T[i, j] * T[i, j + 1 :]
                f = np.where(vtv > 0.0, 2.0 * dot / vtv, 0.0)
                right -= f * v0
                T[j + 1 :, j + 1 :] -= f * T[j + 1 :, j, None]
            T[j, j] = np.where(s == 0.0, x0, alpha)
            T[j + 1 :, j] = 0.0
    M[...] = T.transpose(2, 0, 1)


# Products of stacks of small matrices. numpy multiplies a stack by one
# matrix, or a transposed view of a stack, one small matrix at a time: one
# matrix product of the stack's rows, or a contiguous copy, is several times
# faster.
def _gram(U: np.ndarray) -> np.ndarray:
    """``U^T U`` of every matrix of the stack ``U``."""
    return np.ascontiguousarray(U.swapaxes(-1, -2)) @ U


def _times(U: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``U @ B`` for a stack ``U`` of shape ``(m, r, c)`` and one matrix ``B``."""
    m, r, c = U.shape
    return (U.reshape(m * r, c) @ B).reshape(m, r, B.shape[1])


def _before(B: np.ndarray, U: np.ndarray) -> np.ndarray:
    """``B @ U`` for one matrix ``B`` and a stack ``U`` of shape ``(m, r, c)``."""
    m, r, c = U.shape
    flat = U.transpose(1, 0, 2).reshape(r, m * c)
    return (B @ flat).reshape(-1, m, c).transpose(1, 0, 2)


@_timed
def kalman_filter(Y, lengths, A, b, UQ, C, off, UR, mu0, U0, waiting=False):
    """The square-root filter of every sequence (the kernel ``filter_kernel``):
    the predicted and filtered means and factors of every row, and the
    log-likelihood of every sequence; or None (see the module)."""
    d = Y.shape[1]
    k = A.shape[0]
    missing = np.isnan(Y)
    full = missing.all(axis=1)
    if not fits(lengths, d, k, waiting) or (missing.any(axis=1) & ~full).any():
        return None
    steps = _Padded(np.concatenate([[0], np.cumsum(lengths)]))
    n_seq = len(lengths)
    y = steps.pad(np.where(missing, 0.0, Y), "forward")
    seen = ~steps.pad(full, "forward")
    pred_m = np.empty((steps.n_steps, n_seq, k))
    pred_U = np.empty((steps.n_steps, n_seq, k, k))
    filt_m, filt_U = np.empty_like(pred_m), np.empty_like(pred_U)
    loglik = np.zeros(n_seq)
    m = np.broadcast_to(mu0, (n_seq, k)).copy()
    U = np.broadcast_to(U0, (n_seq, k, k)).copy()
    for t in range(steps.n_steps):
        n = steps.active[t]
        m, U = m[:n], U[:n]
        pred_m[t, :n], pred_U[t, :n] = m, U
        pre = np.zeros((n, d + k, d + k))
        pre[:, :d, :d] = UR
        pre[:, d:, :d] = _times(U, C.T)
        pre[:, d:, d:] = U
        householder_r(pre)
        e = y[t, :n] - off
        for c in range(k):
            e = e - C[:, c] * m[:, c, None]
        w = np.empty((n, d))
        for a in range(d):  # X^T w = e, X = pre[:, :d, :d] upper triangular
            v = e[:, a]
            for c in range(a):
                v = v - pre[:, c, a] * w[:, c]
            w[:, a] = v / pre[:, a, a]
        logdet = np.log(np.abs(pre[:, np.arange(d), np.arange(d)])).sum(axis=1)
        step = -0.5 * (d * _LOG_2PI + (w * w).sum(axis=1)) - logdet
        fm = m
        for a in range(d):
            fm = fm + pre[:, a, d:] * w[:, a, None]
        observed = seen[t, :n]
        loglik[:n] += np.where(observed, step, 0.0)
        fm = np.where(observed[:, None], fm, m)
        fU = np.where(observed[:, None, None], pre[:, d:, d:], U)
        filt_m[t, :n], filt_U[t, :n] = fm, fU
        m = b
        for c in range(k):
            m = m + A[:, c] * fm[:, c, None]
        pre2 = np.concatenate([_times(fU, A.T), np.broadcast_to(UQ, (n, k, k))], axis=1)
        householder_r(pre2)
        U = pre2[:, :k]
    out = [steps.unpad(x, "forward") for x in (pred_m, pred_U, filt_m, filt_U)]
    unsorted = np.empty_like(loglik)
    unsorted[steps.order] = loglik
    return (*out, unsorted)


def _solve_gain(Up: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``Up^T Z = B`` forwards, then ``Up Jt = Z`` backwards, ``Up`` upper
    triangular (``Jt = P_pred^-1 A P_f``), by the kernel's substitutions."""
    k = B.shape[-1]
    Z, Jt = np.empty_like(B), np.empty_like(B)
    for a in range(k):
        v = B[:, a]
        for r in range(a):
            v = v - Up[:, r, a, None] * Z[:, r]
        Z[:, a] = v / Up[:, a, a, None]
    for a in range(k - 1, -1, -1):
        v = Z[:, a]
        for r in range(a + 1, k):
            v = v - Up[:, a, r, None] * Jt[:, r]
        Jt[:, a] = v / Up[:, a, a, None]
    return Jt


@_timed
def kalman_smoother(lengths, A, UQ, pred_m, pred_U, filt_m, filt_U):
    """The RTS smoother of every sequence (the kernel ``smoother_kernel``):
    the smoothed means and factors and the lag-one cross-covariances."""
    steps = _Padded(np.concatenate([[0], np.cumsum(lengths)]))
    k = A.shape[0]
    pm, pU, fm, fU = (
        steps.pad(x, "backward") for x in (pred_m, pred_U, filt_m, filt_U)
    )
    sm, sU = np.empty_like(fm), np.empty_like(fU)
    cross = np.zeros_like(fU)
    sm[0], sU[0] = fm[0], fU[0]
    eye = np.eye(k)
    for tau in range(1, steps.n_steps):
        n = steps.active[tau]
        Uf, Up, Us1 = fU[tau, :n], pU[tau - 1, :n], sU[tau - 1, :n]
        B = _before(A, _gram(Uf))
        Jt = _solve_gain(Up, B)
        diff = sm[tau - 1, :n] - pm[tau - 1, :n]
        sm[tau, :n] = fm[tau, :n] + np.einsum("nra,nr->na", Jt, diff)
        IJA = eye - _before(A.T, Jt)
        pre = np.concatenate([Uf @ IJA, _before(UQ, Jt), Us1 @ Jt], axis=1)
        cross[tau - 1, :n] = _gram(Us1) @ Jt
        householder_r(pre)
        sU[tau, :n] = pre[:, :k]
    # A sequence's first step (tau = its length - 1) keeps a zero cross-covariance.
    return [steps.unpad(x, "backward") for x in (sm, sU, cross)]
