"""Linear dynamical systems: LinearGaussianSSM against pykalman's KalmanFilter.

A 4-d latent state seen through 8-d observations, 100 sequences of 1,000
steps (the sizes of the goal), parameters drawn at random; both libraries run
in this one process from identical parameters, learning every parameter
(``em_vars='all'``). Two operations:

- ``EM / iter``: one EM iteration over all the sequences (filter, smoother,
  lag-one covariances, statistics, M-step). bayeskit fits the 100 sequences
  together; pykalman's ``em`` takes one sequence, so its time is that of one
  iteration on each of ``--peer-sequences`` sequences (5 by default: pykalman
  takes about a second per sequence) scaled to the 100 (its cost is linear in
  the steps). Goal: at most 0.33.
- ``filter``: the Kalman filter of every sequence (``score_sequences`` here,
  pykalman's ``filter``), scaled the same way. No goal.

A second table sets the filter beside the dense-matrix limit: the textbook
covariance-form filter written directly in numpy, every step one batched
matrix product, Cholesky factorisation and triangular solve over all the
sequences at once (no Python work per sequence, no square-root form, no
missing-value handling). It is what the same arithmetic costs with numpy's
batched kernels, so the ratio is the overhead of the square-root form and of
the general code; its log-likelihoods are checked equal to ours first. Goal:
at most 2.

The first iterate of both is checked to agree before timing. Each operation is
warmed up, then ours and theirs are timed interleaved; the table shows medians
and ours / theirs.

Run from the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 python benchmarks/bench_lds.py

``--quick`` (10 sequences of 100 steps, 2 for pykalman, 3 repeats) runs in
seconds, for CI.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace

import numpy as np
from numpy.testing import assert_allclose
from pykalman import KalmanFilter

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

from _timing import add_json_option, compare, print_table, write_json  # noqa: E402

import bayeskit  # noqa: E402

K, D, GOAL = 4, 8, 0.33
DENSE_GOAL = 2.0


def dense_filter(Y, p):
    """The covariance-form Kalman filter of equal-length sequences ``Y``
    (n, T, d), batched over the sequences; the log-likelihood of each."""
    A, C = p["transition_matrices"], p["observation_matrices"]
    Q, R = p["transition_covariance"], p["observation_covariance"]
    b, off = p["transition_offsets"], p["observation_offsets"]
    n, T, d = Y.shape
    m = np.broadcast_to(p["initial_state_mean"], (n, K)).copy()
    P = np.broadcast_to(p["initial_state_covariance"], (n, K, K)).copy()
    loglik = np.full(n, -0.5 * T * d * np.log(2 * np.pi))
    for t in range(T):
        if t:
            m = m @ A.T + b
            P = A @ P @ A.T + Q
        PCt = P @ C.T
        L = np.linalg.cholesky(C @ PCt + R)
        e = Y[:, t] - m @ C.T - off
        w = np.linalg.solve(L, e[..., None])[..., 0]
        G = np.linalg.solve(L, np.swapaxes(PCt, 1, 2))  # L^-1 C P
        loglik -= 0.5 * (w * w).sum(1) + np.log(np.diagonal(L, 0, 1, 2)).sum(1)
        m = m + np.einsum("nkd,nd->nk", np.swapaxes(G, 1, 2), w)
        P = P - np.swapaxes(G, 1, 2) @ G
    return loglik


def parameters(rng):
    A = rng.normal(size=(K, K))
    A *= 0.95 / np.abs(np.linalg.eigvals(A)).max()
    M = rng.normal(size=(D, D))
    return {
        "transition_matrices": A,
        "observation_matrices": rng.normal(size=(D, K)),
        "transition_covariance": 0.5 * np.eye(K),
        "observation_covariance": M @ M.T / D + np.eye(D),
        "transition_offsets": np.zeros(K),
        "observation_offsets": rng.normal(size=D),
        "initial_state_mean": np.zeros(K),
        "initial_state_covariance": np.eye(K),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=None, help="default: 5")
    parser.add_argument("--sequences", type=int, default=100)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--peer-sequences", type=int, default=5)
    add_json_option(parser)
    args = parser.parse_args(argv)
    n_seq, n_steps, n_peer = args.sequences, args.steps, args.peer_sequences
    if args.quick:
        n_seq, n_steps, n_peer = 10, 100, 2
    repeats = args.repeats or (3 if args.quick else 5)
    rng = np.random.default_rng(0)
    params = parameters(rng)
    truth = bayeskit.LinearGaussianSSM(K, **params, em_vars=[], n_iter=0)
    truth.fit(np.zeros((2, D)))
    seqs = [truth.sample(n_steps, random_state=i)[0] for i in range(n_seq)]
    ours = bayeskit.LinearGaussianSSM(K, **params, em_vars="all", n_iter=1, tol=0)
    peer = seqs[:n_peer]

    # The same first iterate (on the peer's sequences).
    ours.fit(peer[:1])
    theirs = KalmanFilter(**params).em(peer[0], n_iter=1, em_vars="all")
    for name in params:
        assert_allclose(getattr(ours, f"{name}_"), getattr(theirs, name), rtol=1e-8)

    def their_em():
        for s in peer:
            KalmanFilter(**params).em(s, n_iter=1, em_vars="all")

    def their_filter():
        kf = KalmanFilter(**params)
        for s in peer:
            kf.filter(s)

    scale = n_seq / n_peer
    print(
        f"{n_seq} sequences x {n_steps} steps, {K}-d latent, {D}-d observations; "
        f"pykalman timed on {n_peer} sequence(s), scaled by {scale:g}; medians "
        f"of {repeats} runs"
    )
    results = [
        compare(
            "LinearGaussianSSM",
            "EM / iter",
            lambda: ours.fit(seqs),
            their_em,
            repeats,
            GOAL,
        ),
        compare(
            "LinearGaussianSSM",
            "filter",
            lambda: ours.score_sequences(seqs),
            their_filter,
            repeats,
        ),
    ]
    results = [replace(r, theirs=r.theirs * scale) for r in results]
    print_table(results, peer="pykalman")

    # The dense-matrix limit of the filter (every sequence, no scaling).
    stacked = np.stack(seqs)
    fitted = bayeskit.LinearGaussianSSM(K, **params, em_vars=[], n_iter=0).fit(seqs)
    assert_allclose(
        fitted.score_sequences(seqs), dense_filter(stacked, params), rtol=1e-9
    )
    dense = [
        compare(
            "LinearGaussianSSM",
            "filter",
            lambda: fitted.score_sequences(seqs),
            lambda: dense_filter(stacked, params),
            repeats,
            DENSE_GOAL,
        )
    ]
    print_table(dense, peer="dense numpy")
    if args.json:
        sizes = (
            f"{n_seq} x {n_steps} steps, {K}-d latent, {D}-d obs "
            f"(pykalman on {n_peer}, scaled)"
        )
        write_json(args.json, results, sizes, "pykalman")


if __name__ == "__main__":
    main()
