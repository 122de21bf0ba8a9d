"""Compiled kernels of the square-root Kalman filter and RTS smoother.

One sequence per iteration of a parallel loop, one step at a time, on small
dense matrices: the QR decompositions of the pre-arrays (see
:mod:`bayeskit.graph.gaussian_chain` for the algorithm) are Householder
reflections written out here, so a step costs its arithmetic and no call
overhead. A covariance is carried as an upper-triangular factor ``U``,
``P = U^T U``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._jit import njit, parallel_pair

_LOG_2PI = math.log(2.0 * math.pi)


@njit(nogil=True)
def householder_r(M):  # pragma: no cover (compiled)
    """Make ``M`` (r x c, r >= c) upper triangular in place by Householder
    reflections from the left: afterwards ``M[:c]^T M[:c]`` equals the
    original ``M^T M`` and ``M[c:]`` is zero."""
    r, c = M.shape
    for j in range(c):
        s = 0.0
        for i in range(j, r):
            s += M[i, j] * M[i, j]
        if s == 0.0:
            continue
        norm = math.sqrt(s)
        x0 = M[j, j]
        alpha = -norm if x0 > 0 else norm
        v0 = x0 - alpha
        vtv = s - x0 * x0 + v0 * v0
        if vtv > 0.0:
            for col in range(j + 1, c):
                dot = v0 * M[j, col]
                for i in range(j + 1, r):
                    dot += M[i, j] * M[i, col]
                f = 2.0 * dot / vtv
                M[j, col] -= f * v0
                for i in range(j + 1, r):
                    M[i, col] -= f * M[i, j]
        M[j, j] = alpha
        for i in range(j + 1, r):
            M[i, j] = 0.0


@njit(nogil=True)
def _upper_cholesky(S, out):  # pragma: no cover (compiled)
    """``out`` upper triangular with ``out^T out = S`` (S positive definite)."""
    n = S.shape[0]
    out[:, :] = 0.0
    for j in range(n):
        s = S[j, j]
        for i in range(j):
            s -= out[i, j] * out[i, j]
        d = math.sqrt(s)
        out[j, j] = d
        for col in range(j + 1, n):
            v = S[j, col]
            for i in range(j):
                v -= out[i, j] * out[i, col]
            out[j, col] = v / d


@njit(nogil=True)
def _filter_one(
    Y, start, length, A, b, UQ, C, off, R, UR, mu0, U0, pred_m, pred_U, filt_m, filt_U
):  # pragma: no cover
    """The square-root filter of one sequence (rows ``start:start+length``);
    returns its log-likelihood."""
    k = A.shape[0]
    d = C.shape[0]
    m = mu0.copy()
    U = U0.copy()
    pre = np.empty((d + k, d + k))
    pre2 = np.empty((2 * k, k))
    URo = np.empty((d, d))
    Ro = np.empty((d, d))
    idx = np.empty(d, dtype=np.intp)
    e = np.empty(d)
    w = np.empty(d)
    fm = np.empty(k)
    loglik = 0.0
    for t in range(length):
        row = start + t
        pred_m[row] = m
        pred_U[row] = U
        p = 0
        for j in range(d):
            if not math.isnan(Y[row, j]):
                idx[p] = j
                p += 1
        if p == 0:
            fm[:] = m
            filt_m[row] = m
            filt_U[row] = U
        else:
            size = p + k
            pre[:size, :size] = 0.0
            if p == d:
                pre[:d, :d] = UR
            else:
                for a in range(p):
                    for c in range(p):
                        Ro[a, c] = R[idx[a], idx[c]]
                _upper_cholesky(Ro[:p, :p], URo[:p, :p])
                pre[:p, :p] = URo[:p, :p]
            for a in range(k):
                for bb in range(p):
                    v = 0.0
                    for c in range(a, k):  # U is upper triangular
                        v += U[a, c] * C[idx[bb], c]
                    pre[p + a, bb] = v
                for c in range(k):
                    pre[p + a, p + c] = U[a, c]
            block = pre[:size, :size]
            householder_r(block)
            for a in range(p):
                v = Y[row, idx[a]] - off[idx[a]]
                for c in range(k):
                    v -= C[idx[a], c] * m[c]
                e[a] = v
            # X^T w = e, X = block[:p, :p] upper triangular.
            quad = 0.0
            logdet = 0.0
            for a in range(p):
                v = e[a]
                for bb in range(a):
                    v -= block[bb, a] * w[bb]
                w[a] = v / block[a, a]
                quad += w[a] * w[a]
                logdet += math.log(abs(block[a, a]))
            loglik += -0.5 * (p * _LOG_2PI + quad) - logdet
            for c in range(k):
                v = m[c]
                for a in range(p):
                    v += block[a, p + c] * w[a]
                fm[c] = v
            filt_m[row] = fm
            for a in range(k):
                for c in range(k):
                    filt_U[row, a, c] = block[p + a, p + c]
        if t + 1 < length:
            Uf = filt_U[row]
            for a in range(k):
                v = b[a]
                for c in range(k):
                    v += A[a, c] * fm[c]
                m[a] = v
            for a in range(k):
                for bb in range(k):
                    v = 0.0
                    for c in range(a, k):
                        v += Uf[a, c] * A[bb, c]
                    pre2[a, bb] = v
            pre2[k:] = UQ
            householder_r(pre2)
            U[:, :] = pre2[:k]
    return loglik


@parallel_pair(nogil=True)
def filter_kernel(
    Y,
    starts,
    lengths,
    A,
    b,
    UQ,
    C,
    off,
    R,
    UR,
    mu0,
    U0,
    pred_m,
    pred_U,
    filt_m,
    filt_U,
    loglik,
):  # pragma: no cover
    """The filter of every sequence (one per parallel iteration)."""
    for s in prange(len(starts)):
        loglik[s] = _filter_one(
            Y,
            starts[s],
            lengths[s],
            A,
            b,
            UQ,
            C,
            off,
            R,
            UR,
            mu0,
            U0,
            pred_m,
            pred_U,
            filt_m,
            filt_U,
        )


@njit(nogil=True)
def _smooth_one(
    start, length, A, UQ, pred_m, pred_U, filt_m, filt_U, sm, sU, cross
):  # pragma: no cover
    k = A.shape[0]
    last = start + length - 1
    sm[last] = filt_m[last]
    sU[last] = filt_U[last]
    Pf = np.empty((k, k))
    B = np.empty((k, k))
    Z = np.empty((k, k))
    Jt = np.empty((k, k))
    IJA = np.empty((k, k))
    pre = np.empty((3 * k, k))
    Ps = np.empty((k, k))
    diff = np.empty(k)
    for t in range(length - 2, -1, -1):
        row = start + t
        nxt = row + 1
        Uf = filt_U[row]
        Up = pred_U[nxt]
        for a in range(k):
            for c in range(k):
                v = 0.0
                for r in range(min(a, c) + 1):
                    v += Uf[r, a] * Uf[r, c]
                Pf[a, c] = v
        for a in range(k):
            for c in range(k):
                v = 0.0
                for r in range(k):
                    v += A[a, r] * Pf[r, c]
                B[a, c] = v
        # Up^T Z = B (forward), then Up Jt = Z (backward): Jt = P_pred^-1 A P_f.
        for c in range(k):
            for a in range(k):
                v = B[a, c]
                for r in range(a):
                    v -= Up[r, a] * Z[r, c]
                Z[a, c] = v / Up[a, a]
            for a in range(k - 1, -1, -1):
                v = Z[a, c]
                for r in range(a + 1, k):
                    v -= Up[a, r] * Jt[r, c]
                Jt[a, c] = v / Up[a, a]
        for a in range(k):
            diff[a] = sm[nxt, a] - pred_m[nxt, a]
        for a in range(k):
            v = filt_m[row, a]
            for r in range(k):
                v += Jt[r, a] * diff[r]
            sm[row, a] = v
        # (I - J A)^T = I - A^T J^T
        for a in range(k):
            for c in range(k):
                v = 1.0 if a == c else 0.0
                for r in range(k):
                    v -= A[r, a] * Jt[r, c]
                IJA[a, c] = v
        Us1 = sU[nxt]
        for a in range(k):
            for c in range(k):
                v0 = 0.0
                v1 = 0.0
                v2 = 0.0
                for r in range(k):
                    v0 += Uf[a, r] * IJA[r, c]
                    v1 += UQ[a, r] * Jt[r, c]
                    v2 += Us1[a, r] * Jt[r, c]
                pre[a, c] = v0
                pre[k + a, c] = v1
                pre[2 * k + a, c] = v2
        # cross[t+1] = P_s(t+1) Jt, before sU[row] is written.
        for a in range(k):
            for c in range(k):
                v = 0.0
                for r in range(min(a, c) + 1):
                    v += Us1[r, a] * Us1[r, c]
                Ps[a, c] = v
        for a in range(k):
            for c in range(k):
                v = 0.0
                for r in range(k):
                    v += Ps[a, r] * Jt[r, c]
                cross[nxt, a, c] = v
        householder_r(pre)
        sU[row] = pre[:k]


@parallel_pair(nogil=True)
def smoother_kernel(
    starts, lengths, A, UQ, pred_m, pred_U, filt_m, filt_U, sm, sU, cross
):  # pragma: no cover
    """The RTS smoother of every sequence (one per parallel iteration)."""
    for s in prange(len(starts)):
        _smooth_one(
            starts[s],
            lengths[s],
            A,
            UQ,
            pred_m,
            pred_U,
            filt_m,
            filt_U,
            sm,
            sU,
            cross,
        )
