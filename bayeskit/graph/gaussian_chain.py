"""Gaussian belief propagation on a chain: the Kalman filter and the RTS smoother.

The linear dynamical system is the hidden Markov model's chain with a
Gaussian state vector in place of a discrete state (Bishop 2006, chapter 13.3;
Roweis and Ghahramani 1999):

.. math::

    x_0 \\sim \\mathcal N(\\mu_0, P_0), \\qquad
    x_{t+1} = A x_t + b + w_t, \\; w_t \\sim \\mathcal N(0, Q), \\qquad
    y_t = C x_t + d + v_t, \\; v_t \\sim \\mathcal N(0, R).

Its forward messages are the Kalman filter and its backward pass the
Rauch-Tung-Striebel smoother. Both run here in square-root form: every
covariance is carried as a factor ``U`` with ``P = U^T U`` (upper triangular,
from a QR decomposition), and every update is the QR decomposition of a
stacked "pre-array" of factors (Kailath, Sayed and Hassibi 2000, chapter 12;
Grewal and Andrews 2015, chapter 7). A covariance formed this way is positive
semi-definite by construction, where the textbook update ``P - K C P``
subtracts two nearly equal matrices and can lose it on stiff systems.

- Measurement update: the QR decomposition of
  ``[[U_R, 0], [U_P C^T, U_P]]`` is ``[[X, Y], [0, Z]]`` with ``X^T X`` the
  innovation covariance ``C P C^T + R``, ``Y = X^{-T} C P`` and ``Z^T Z`` the
  filtered covariance; the filtered mean is ``m + Y^T X^{-T} e`` for the
  innovation ``e``, and the step's log-likelihood reads the whitened
  innovation ``X^{-T} e`` and the diagonal of ``X``.
- Time update: the ``R`` factor of ``[[U_F A^T], [U_Q]]``.
- Smoothing: the gain ``J = P_F A^T P_{pred}^{-1}`` (two triangular solves),
  and the ``R`` factor of ``[[U_F (I - J A)^T], [U_Q J^T], [U_S' J^T]]``
  (the Joseph form of ``P_F + J (P_S' - P_{pred}) J^T``); the lag-one
  cross-covariance ``Cov(x_{t+1}, x_t | y) = P_S' J^T`` (Shumway and Stoffer
  1982) is what EM needs beyond the marginals.

Missing values (NaN) are latent: a step whose every coordinate is missing
makes no measurement update; a step with some coordinates missing updates
with the observed rows of ``C``, ``d`` and the observed block of ``R``
(marginalising the missing coordinates of that step).

Many sequences run at once, one per iteration of a compiled parallel loop
(``bayeskit.graph._gaussian_kernels``), each step on small dense matrices
with the Householder reflections written out. While those kernels are not
compiled (a fresh environment: compiling them takes seconds), the same steps
run in numpy, one step of every sequence at a time
(``bayeskit.graph._gaussian_numpy``), with the same results up to rounding.

References
----------
.. [1] R. E. Kalman, "A new approach to linear filtering and prediction
   problems", Journal of Basic Engineering 82(1), 35-45, 1960.
.. [2] H. E. Rauch, F. Tung and C. T. Striebel, "Maximum likelihood estimates
   of linear dynamic systems", AIAA Journal 3(8), 1445-1450, 1965.
.. [3] T. Kailath, A. H. Sayed and B. Hassibi, *Linear Estimation*,
   Prentice Hall, 2000, chapters 9 and 12 (array square-root algorithms).
.. [4] R. H. Shumway and D. S. Stoffer, "An approach to time series smoothing
   and forecasting using the EM algorithm", Journal of Time Series Analysis
   3(4), 253-264, 1982.
.. [5] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, section 13.3.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numba
import numpy as np

from .. import _jit
from .._jit import run_parallel
from . import _gaussian_kernels as _kernels
from . import _gaussian_numpy

__all__ = [
    "GaussianChainParams",
    "KalmanFilterResult",
    "KalmanSmootherResult",
    "covariance_factor",
    "kalman_filter",
    "kalman_smoother",
]

_LOG_2PI = np.log(2.0 * np.pi)


@dataclass(frozen=True)
class GaussianChainParams:
    """The parameters of a linear Gaussian chain (see the module).

    Attributes
    ----------
    transition_matrix : ndarray of shape (k, k)
        ``A``.
    transition_offset : ndarray of shape (k,)
        ``b``.
    transition_covariance : ndarray of shape (k, k)
        ``Q``, positive definite.
    observation_matrix : ndarray of shape (d, k)
        ``C``.
    observation_offset : ndarray of shape (d,)
        ``d``.
    observation_covariance : ndarray of shape (d, d)
        ``R``, positive definite.
    initial_mean : ndarray of shape (k,)
        ``mu_0``.
    initial_covariance : ndarray of shape (k, k)
        ``P_0``, positive definite.
    """

    transition_matrix: np.ndarray
    transition_offset: np.ndarray
    transition_covariance: np.ndarray
    observation_matrix: np.ndarray
    observation_offset: np.ndarray
    observation_covariance: np.ndarray
    initial_mean: np.ndarray
    initial_covariance: np.ndarray

    @property
    def n_state(self) -> int:
        return self.transition_matrix.shape[0]

    @property
    def n_obs(self) -> int:
        return self.observation_matrix.shape[0]


@dataclass(frozen=True)
class KalmanFilterResult:
    """The forward messages of every step (rows of all sequences).

    Attributes
    ----------
    predicted_means, predicted_covariances : ndarray
        ``E[x_t | y_<t]`` and its covariance, shapes ``(n, k)``, ``(n, k, k)``.
    filtered_means, filtered_covariances : ndarray
        ``E[x_t | y_<=t]`` and its covariance.
    log_likelihood : ndarray of shape (n_sequences,)
        ``log p(y)`` of every sequence (observed coordinates only).
    """

    predicted_means: np.ndarray
    predicted_covariances: np.ndarray
    filtered_means: np.ndarray
    filtered_covariances: np.ndarray
    log_likelihood: np.ndarray


@dataclass(frozen=True)
class KalmanSmootherResult:
    """The posterior of every step given its whole sequence.

    Attributes
    ----------
    means, covariances : ndarray
        ``E[x_t | y]`` and ``Cov(x_t | y)``, shapes ``(n, k)``, ``(n, k, k)``.
    cross_covariances : ndarray of shape (n, k, k)
        ``Cov(x_t, x_{t-1} | y)`` (zero at the first step of every sequence).
    log_likelihood : ndarray of shape (n_sequences,)
        ``log p(y)`` of every sequence.
    """

    means: np.ndarray
    covariances: np.ndarray
    cross_covariances: np.ndarray
    log_likelihood: np.ndarray


def covariance_factor(covariance: np.ndarray) -> np.ndarray:
    """The upper-triangular ``U`` with ``U^T U = covariance`` (positive definite)."""
    return np.linalg.cholesky(covariance).swapaxes(-1, -2)


def _gram(U: np.ndarray) -> np.ndarray:
    """``U^T U`` of every factor of a stack, made exactly symmetric."""
    P = U.swapaxes(-1, -2) @ U
    return 0.5 * (P + P.swapaxes(-1, -2))


def _n_threads(n_rows: int, n_sequences: int) -> int:
    """Threads for the kernels: 0 (their source, nothing compiled) for a few
    steps, 1 for one sequence or a modest number of steps, else all."""
    if n_rows < 500:
        return 0
    if n_sequences == 1 or n_rows < 50_000:
        return 1
    return numba.get_num_threads()


def _numpy_first(kernels, n_threads: int) -> bool:
    """Whether to try the numpy passes of ``_gaussian_numpy`` first (they
    answer None on data they do not take): while one of ``kernels``, in the
    variant that ``n_threads`` would run, is not compiled, in this process or
    in the disk cache. Compiling the two kernels takes some fifteen seconds;
    these passes, tens of milliseconds."""
    variants = [kernel.variant(n_threads > 1) for kernel in kernels]
    for variant in variants:
        if variant not in _COMPILED and _jit._compiled(variant):
            _COMPILED.add(variant)  # compiled stays compiled: not asked again
    return not _COMPILED.issuperset(variants)


# The kernels' variants found compiled (in this process or in the disk cache).
_COMPILED: set = set()


def _in_background(Y, lengths, params) -> bool:
    """Whether the kernels are being compiled in the background, in a child
    process replaying :func:`kalman_smoother` on this call's data (started
    once the numpy passes have taken ``_jit._BACKGROUND_AFTER`` CPU seconds):
    the numpy passes then keep answering past their budget. For work planned
    for threads, the child compiles the serial variants first (on the first
    sequence), which then answer in their place (:func:`_serial_meanwhile`)
    while it compiles the parallel ones."""
    if _gaussian_numpy._spent[0] < _jit._BACKGROUND_AFTER:
        return False  # well within the budget: no need to ask
    threads = _n_threads(len(Y), len(lengths))
    key = "gaussian_chain" + ("_parallel" if threads > 1 else "")
    kernel = _kernels.filter_kernel.variant(threads > 1)
    calls = []
    if threads > 1:  # the serial variants first, on the first sequence
        first = int(lengths[0])
        calls.append(functools.partial(kalman_smoother, Y[:first], lengths[:1], params))
    calls.append(functools.partial(kalman_smoother, Y, lengths, params))
    replay = functools.partial(_jit.replay_all, *calls)
    return _jit.compile_in_background(key, kernel, replay)


def _serial_meanwhile(kernels, n_threads: int) -> bool:
    """Whether to run the serial variants of ``kernels`` on work planned for
    threads, in place of the numpy passes: while the parallel variants are
    being compiled in the background and the serial ones are compiled (the
    child compiles them first). One thread takes about the CPU time that the
    threads take together, a fraction of the numpy passes'."""
    if n_threads <= 1:
        return False
    serial = [kernel.variant(False) for kernel in kernels]
    for variant in serial:
        if variant not in _COMPILED and _jit._compiled(variant):
            _COMPILED.add(variant)  # compiled stays compiled: not asked again
    if not _COMPILED.issuperset(serial):
        return False
    return _jit.compiling(
        "gaussian_chain_parallel", _kernels.filter_kernel.variant(True)
    )


def _filter(Y, lengths, params, kernels=(_kernels.filter_kernel,)):
    """The square-root filter of every sequence: the numpy passes while
    ``kernels`` are not compiled, else the compiled kernel."""
    n = Y.shape[0]
    k = params.n_state
    lengths = np.ascontiguousarray(lengths, dtype=np.intp)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.intp)
    UQ = covariance_factor(params.transition_covariance)
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    A, b, C, off, R, mu0 = (
        np.ascontiguousarray(value, dtype=np.float64)
        for value in (
            params.transition_matrix, params.transition_offset,
            params.observation_matrix, params.observation_offset,
            params.observation_covariance, params.initial_mean,
        )
    )  # fmt: skip
    UR = covariance_factor(params.observation_covariance)
    U0 = covariance_factor(params.initial_covariance)
    threads = _n_threads(n, len(lengths))
    if _numpy_first(kernels, threads):
        if _serial_meanwhile(kernels, threads):
            threads = 1
        else:
            waiting = _in_background(Y, lengths, params)
            found = _gaussian_numpy.kalman_filter(
                Y, lengths, A, b, UQ, C, off, UR, mu0, U0, waiting
            )
            if found is not None:
                return (*found, UQ, starts, lengths, True, threads)
    pred_m = np.empty((n, k))
    pred_U = np.empty((n, k, k))
    filt_m = np.empty((n, k))
    filt_U = np.empty((n, k, k))
    loglik = np.empty(len(lengths))
    run_parallel(
        _kernels.filter_kernel, threads, 1,
        Y, starts, lengths, A, b, UQ, C, off, R, UR, mu0, U0,
        pred_m, pred_U, filt_m, filt_U, loglik,
    )  # fmt: skip
    return pred_m, pred_U, filt_m, filt_U, loglik, UQ, starts, lengths, False, threads


def kalman_filter(
    Y: np.ndarray, lengths: np.ndarray, params: GaussianChainParams
) -> KalmanFilterResult:
    """The Kalman filter of every sequence (square-root form, NaN = missing).

    Parameters
    ----------
    Y : ndarray of shape (n_steps, d)
        The steps of all sequences concatenated; NaN marks a missing value.
    lengths : ndarray of int of shape (n_sequences,)
        The steps of each sequence (summing to ``n_steps``).
    params : GaussianChainParams

    Returns
    -------
    result : KalmanFilterResult
    """
    pred_m, pred_U, filt_m, filt_U, loglik, *_ = _filter(Y, lengths, params)
    return KalmanFilterResult(pred_m, _gram(pred_U), filt_m, _gram(filt_U), loglik)


def kalman_smoother(
    Y: np.ndarray, lengths: np.ndarray, params: GaussianChainParams
) -> KalmanSmootherResult:
    """The Rauch-Tung-Striebel smoother of every sequence (square-root form).

    Parameters
    ----------
    Y : ndarray of shape (n_steps, d)
        The steps of all sequences concatenated; NaN marks a missing value.
    lengths : ndarray of int of shape (n_sequences,)
        The steps of each sequence.
    params : GaussianChainParams

    Returns
    -------
    result : KalmanSmootherResult
        Smoothed means and covariances, the lag-one cross-covariances and the
        log-likelihood of every sequence.
    """
    kernels = (_kernels.filter_kernel, _kernels.smoother_kernel)
    pred_m, pred_U, filt_m, filt_U, loglik, UQ, starts, lengths, numpy, threads = (
        _filter(Y, lengths, params, kernels)
    )
    if numpy:  # the numpy filter ran: the numpy smoother too
        sm, sU, cross = _gaussian_numpy.kalman_smoother(
            lengths, np.asarray(params.transition_matrix, dtype=np.float64), UQ,
            pred_m, pred_U, filt_m, filt_U,
        )  # fmt: skip
        return KalmanSmootherResult(sm, _gram(sU), cross, loglik)
    n, k = filt_m.shape
    sm = np.empty((n, k))
    sU = np.empty((n, k, k))
    cross = np.zeros((n, k, k))
    run_parallel(
        _kernels.smoother_kernel,
        threads,
        1,
        starts,
        lengths,
        np.ascontiguousarray(params.transition_matrix, dtype=np.float64),
        UQ,
        pred_m,
        pred_U,
        filt_m,
        filt_U,
        sm,
        sU,
        cross,
    )
    return KalmanSmootherResult(sm, _gram(sU), cross, loglik)
