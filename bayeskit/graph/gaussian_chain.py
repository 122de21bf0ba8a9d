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

Many sequences run at once: they are ordered by length and stacked, so each
step of the recursions is one batched QR over every sequence still running.

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

from dataclasses import dataclass

import numpy as np

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


def _qr_r(stacked: np.ndarray) -> np.ndarray:
    """The ``R`` factor of every matrix of a stack (``U^T U = M^T M``)."""
    return np.linalg.qr(stacked, mode="r")


def _gram(U: np.ndarray) -> np.ndarray:
    """``U^T U`` of every factor of a stack, made exactly symmetric."""
    P = U.swapaxes(-1, -2) @ U
    return 0.5 * (P + P.swapaxes(-1, -2))


class _Layout:
    """Sequences ordered by decreasing length and stacked along a time axis.

    At step ``t`` the sequences still running are the first ``active[t]`` of
    the stack; ``rows[i, t]`` is the row (of the concatenated input) of step
    ``t`` of the ``i``-th sequence of the stack.
    """

    def __init__(self, lengths: np.ndarray):
        lengths = np.asarray(lengths, dtype=np.intp)
        self.order = np.argsort(-lengths, kind="stable")
        self.lengths = lengths[self.order]
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])[self.order]
        self.n_steps = int(self.lengths[0]) if lengths.size else 0
        steps = np.arange(self.n_steps)
        self.active = (self.lengths[:, None] > steps[None, :]).sum(axis=0)
        self.rows = starts[:, None] + steps[None, :]

    def rows_at(self, t: int) -> np.ndarray:
        return self.rows[: self.active[t], t]


def _patterns(Y: np.ndarray):
    """``(observed, complete, empty)``: masks of the observed cells, of the
    steps with every coordinate observed and of those with none."""
    observed = ~np.isnan(Y)
    return observed, observed.all(axis=1), ~observed.any(axis=1)


def _measurement(m, U, e, C, UR):
    """Batched square-root measurement update (see the module).

    ``m`` (b, k), ``U`` (b, k, k), ``e`` (b, p) the innovations, ``C`` (p, k),
    ``UR`` (p, p). Returns the filtered mean, its factor and the step's
    log-likelihood of every item.
    """
    b, k = m.shape
    p = C.shape[0]
    pre = np.zeros((b, p + k, p + k))
    pre[:, :p, :p] = UR
    pre[:, p:, :p] = U @ C.T
    pre[:, p:, p:] = U
    post = _qr_r(pre)
    X = post[:, :p, :p]
    Y = post[:, :p, p:]
    white = np.linalg.solve(X.swapaxes(-1, -2), e[:, :, None])  # X^{-T} e
    mean = m + (Y.swapaxes(-1, -2) @ white)[:, :, 0]
    logdet = np.log(np.abs(np.diagonal(X, axis1=-2, axis2=-1))).sum(axis=-1)
    loglik = -0.5 * (p * _LOG_2PI + (white[:, :, 0] ** 2).sum(axis=-1)) - logdet
    return mean, post[:, p:, p:], loglik


def _filter(Y, layout, params):
    """The square-root filter over the stacked layout (rows of Y in place)."""
    n = Y.shape[0]
    k = params.n_state
    A, b = params.transition_matrix, params.transition_offset
    C, off = params.observation_matrix, params.observation_offset
    UQ = covariance_factor(params.transition_covariance)
    UR = covariance_factor(params.observation_covariance)
    observed, complete, empty = _patterns(Y)
    pred_m = np.empty((n, k))
    pred_U = np.empty((n, k, k))
    filt_m = np.empty((n, k))
    filt_U = np.empty((n, k, k))
    loglik = np.zeros(len(layout.order))
    n0 = layout.active[0] if layout.n_steps else 0
    m = np.broadcast_to(params.initial_mean, (n0, k)).copy()
    U = np.broadcast_to(covariance_factor(params.initial_covariance), (n0, k, k))
    U = U.copy()
    factor_cache: dict = {}
    for t in range(layout.n_steps):
        rows = layout.rows_at(t)
        a = len(rows)
        m, U = m[:a], U[:a]
        pred_m[rows] = m
        pred_U[rows] = U
        fm, fU = m.copy(), U.copy()
        full = complete[rows]
        if full.any():
            sel = np.flatnonzero(full)
            e = Y[rows[sel]] - m[sel] @ C.T - off
            fm[sel], fU[sel], ll = _measurement(m[sel], U[sel], e, C, UR)
            loglik[sel] += ll
        partial = ~full & ~empty[rows]
        for i in np.flatnonzero(partial):
            o = observed[rows[i]]
            key = o.tobytes()
            if key not in factor_cache:
                factor_cache[key] = covariance_factor(
                    params.observation_covariance[np.ix_(o, o)]
                )
            e = Y[rows[i], o] - C[o] @ m[i] - off[o]
            mi, Ui, ll = _measurement(
                m[i : i + 1], U[i : i + 1], e[None], C[o], factor_cache[key]
            )
            fm[i], fU[i] = mi[0], Ui[0]
            loglik[i] += ll[0]
        filt_m[rows] = fm
        filt_U[rows] = fU
        if t + 1 < layout.n_steps:
            nxt = layout.active[t + 1]
            fm, fU = fm[:nxt], fU[:nxt]
            m = fm @ A.T + b
            pre = np.concatenate([fU @ A.T, np.broadcast_to(UQ, (nxt, k, k))], axis=1)
            U = _qr_r(pre)
    out = np.empty_like(loglik)
    out[layout.order] = loglik
    return pred_m, pred_U, filt_m, filt_U, out, UQ


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
    layout = _Layout(lengths)
    pred_m, pred_U, filt_m, filt_U, loglik, _ = _filter(Y, layout, params)
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
    layout = _Layout(lengths)
    pred_m, pred_U, filt_m, filt_U, loglik, UQ = _filter(Y, layout, params)
    n, k = filt_m.shape
    A = params.transition_matrix
    eye = np.eye(k)
    sm = filt_m.copy()
    sU = filt_U.copy()
    cross = np.zeros((n, k, k))
    for t in range(layout.n_steps - 2, -1, -1):
        nxt = layout.active[t + 1]
        rows = layout.rows[:nxt, t]
        rows1 = layout.rows[:nxt, t + 1]
        Uf, Up = filt_U[rows], pred_U[rows1]
        Pf = _gram(Uf)
        # J^T = P_pred^{-1} A P_f, by the two triangular factors of P_pred.
        UpT = Up.swapaxes(-1, -2)
        Jt = np.linalg.solve(Up, np.linalg.solve(UpT, A @ Pf))
        J = Jt.swapaxes(-1, -2)
        sm[rows] = filt_m[rows] + (J @ (sm[rows1] - pred_m[rows1])[:, :, None])[:, :, 0]
        Us1 = sU[rows1]
        pre = np.concatenate(
            [Uf @ (eye - J @ A).swapaxes(-1, -2), UQ @ Jt, Us1 @ Jt], axis=1
        )
        sU[rows] = _qr_r(pre)
        cross[rows1] = _gram(Us1) @ Jt
    return KalmanSmootherResult(sm, _gram(sU), cross, loglik)
