"""Expected sufficient statistics of a linear dynamical system, and its M-step.

EM for the linear dynamical system (Shumway and Stoffer 1982; Ghahramani and
Hinton 1996; Bishop 2006, section 13.3.2) needs, from the smoothed posterior
of the states, the expected first and second moments of the states, of pairs
of consecutive states and of the observations with the states. They are sums
over steps and sequences (weighted per sequence), so they add: the
statistics of chunks of sequences summed are those of all of them.

A step with some coordinates missing contributes the moments of its missing
coordinates given its state and its observed coordinates (under the current
observation noise): the missing values are latent (Shumway and Stoffer 2006,
section 6.4). A step with every coordinate missing contributes nothing to the
observation part, as in pykalman's masked steps.

The M-step is pykalman's sequence of conditional maximisations, in its order
(``C``, then ``R`` given the new ``C``, ``A``, then ``Q`` given the new ``A``,
the initial mean and covariance, the offsets given the new matrices), summed
over sequences, with conjugate priors on the blocks: an inverse-Wishart prior
on each covariance (``Psi`` and weight ``c``), a matrix-normal prior on ``A``
given ``Q`` and on ``C`` given ``R`` (mean ``M``, weight ``lambda``: a ridge
``(S_xy + lambda M)(S_xx + lambda I)^{-1}``), and a normal prior on the
initial mean given ``P_0`` (mean ``m_0``, weight ``kappa``), the
normal-inverse-Wishart family (Murphy 2012, section 4.6.3), column by column
for the matrices. Each step maximises
the expected complete-data log posterior over its block given the others, so
the log posterior never decreases (an ECM algorithm; Meng and Rubin 1993).

References
----------
.. [1] R. H. Shumway and D. S. Stoffer, "An approach to time series smoothing
   and forecasting using the EM algorithm", Journal of Time Series Analysis
   3(4), 253-264, 1982.
.. [2] Z. Ghahramani and G. E. Hinton, "Parameter estimation for linear
   dynamical systems", Technical Report CRG-TR-96-2, University of Toronto,
   1996.
.. [3] R. H. Shumway and D. S. Stoffer, *Time Series Analysis and Its
   Applications*, 2nd ed., Springer, 2006, section 6.4.
.. [4] X.-L. Meng and D. B. Rubin, "Maximum likelihood estimation via the ECM
   algorithm: a general framework", Biometrika 80(2), 267-278, 1993.
.. [5] K. P. Murphy, *Machine Learning: A Probabilistic Perspective*, MIT
   Press, 2012, section 4.6.3.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import numpy as np

from .._layout import add_described
from ..graph.gaussian_chain import GaussianChainParams, KalmanSmootherResult

__all__ = ["LDSStats", "expected_stats", "log_prior", "map_params"]


def _add(a: LDSStats, b: LDSStats) -> LDSStats:
    return LDSStats(
        **{
            f.name: getattr(a, f.name) + getattr(b, f.name)
            for f in fields(a)
            if f.name != "layout"
        }
    )


@dataclass(frozen=True)
class LDSStats:
    """Expected sufficient statistics of a linear dynamical system.

    Every field is a weighted sum (float64) over the sequences summarised,
    each sequence weighted by its ``sequence_weight``; two values add with
    ``+`` (statistics of disjoint sets of sequences).

    Attributes
    ----------
    n_obs, y, yy, yx, x_obs, xx_obs :
        Over steps with at least one coordinate observed: their number,
        ``sum E[y]``, ``sum E[y y^T]``, ``sum E[y x^T]``, ``sum E[x]``,
        ``sum E[x x^T]``.
    n_pairs, x_prev, xx_prev, x_next, xx_next, x_cross :
        Over pairs of consecutive steps ``(t, t + 1)``: their number,
        ``sum E[x_t]``, ``sum E[x_t x_t^T]``, ``sum E[x_{t+1}]``,
        ``sum E[x_{t+1} x_{t+1}^T]``, ``sum E[x_{t+1} x_t^T]``.
    n_seq, x0, xx0 :
        Over sequences: their weight, ``sum E[x_0]``, ``sum E[x_0 x_0^T]``.
    log_evidence : float
        ``sum w_s log p(y_s)`` under the parameters of the E-step.
    """

    n_obs: float
    y: np.ndarray
    yy: np.ndarray
    yx: np.ndarray
    x_obs: np.ndarray
    xx_obs: np.ndarray
    n_pairs: float
    x_prev: np.ndarray
    xx_prev: np.ndarray
    x_next: np.ndarray
    xx_next: np.ndarray
    x_cross: np.ndarray
    n_seq: float
    x0: np.ndarray
    xx0: np.ndarray
    log_evidence: float = 0.0
    #: The fitted model the statistics were computed under (set by the
    #: public ``summarize``; ``bayeskit._layout.Layout``).
    layout: object = field(default=None, compare=False, repr=False)

    @classmethod
    def zeros(cls, n_state: int, n_obs: int) -> LDSStats:
        """The statistics of no data."""
        k, d = n_state, n_obs
        return cls(
            0.0,
            np.zeros(d),
            np.zeros((d, d)),
            np.zeros((d, k)),
            np.zeros(k),
            np.zeros((k, k)),
            0.0,
            np.zeros(k),
            np.zeros((k, k)),
            np.zeros(k),
            np.zeros((k, k)),
            np.zeros((k, k)),
            0.0,
            np.zeros(k),
            np.zeros((k, k)),
        )

    def __add__(self, other: LDSStats) -> LDSStats:
        if not isinstance(other, LDSStats):
            return NotImplemented
        return add_described(self, other, _add)

    def __radd__(self, other):
        if isinstance(other, int) and other == 0:  # sum() starts from 0
            return self
        return NotImplemented

    @property
    def total_weight(self) -> float:
        """The weight of the sequences summarised."""
        return self.n_seq


def _outer_sum(a, b, w):
    """``sum_i w_i a_i b_i^T``."""
    return (a * w[:, None]).T @ b


def _conditional_gain(R_oo: np.ndarray, R_om: np.ndarray) -> np.ndarray:
    """``R_oo^{-1} R_om`` by a solve; where ``R_oo`` is singular (a fit that
    drove an observed coordinate's noise to zero, as on a single row), the
    minimum-norm solution ``R_oo^+ R_om``: the conditional of a degenerate
    Gaussian, and the limit of ``(R_oo + eps I)^{-1} R_om`` as ``eps -> 0``
    (Rao 1973, section 8a.2)."""
    try:
        return np.linalg.solve(R_oo, R_om)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(R_oo, R_om, rcond=None)[0]


def expected_stats(
    Y: np.ndarray,
    lengths: np.ndarray,
    weights: np.ndarray,
    params: GaussianChainParams,
    smoothed: KalmanSmootherResult,
) -> LDSStats:
    """The expected statistics of ``Y`` under the smoothed posterior.

    Parameters
    ----------
    Y : ndarray of shape (n_steps, d)
        The steps of all sequences (NaN: missing).
    lengths : ndarray of shape (n_sequences,)
    weights : ndarray of shape (n_sequences,)
        The weight of every sequence.
    params : GaussianChainParams
        The parameters of the E-step (their observation noise gives the
        moments of missing coordinates).
    smoothed : KalmanSmootherResult
        The smoother's output on ``Y`` under ``params``.
    """
    m, P, cross = smoothed.means, smoothed.covariances, smoothed.cross_covariances
    n, k = m.shape
    w = np.repeat(weights, lengths)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    first = np.zeros(n, dtype=bool)
    first[starts] = True
    last = np.zeros(n, dtype=bool)
    last[ends - 1] = True

    def xx(mask):
        return np.einsum("i,ijk->jk", w[mask], P[mask]) + _outer_sum(
            m[mask], m[mask], w[mask]
        )

    # Initial steps.
    w0 = weights
    x0 = w0 @ m[starts]
    xx0 = xx(first)
    # Pairs.
    prev, nxt = ~last, ~first
    x_cross = np.einsum("i,ijk->jk", w[nxt], cross[nxt]) + _outer_sum(
        m[nxt], m[prev], w[nxt]
    )
    # Observations.
    observed = ~np.isnan(Y)
    complete = observed.all(axis=1)
    empty = ~observed.any(axis=1)
    seen = ~empty
    Ey = np.where(observed, Y, 0.0)
    yy_extra = np.zeros((Y.shape[1], Y.shape[1]))
    yx_extra = np.zeros((Y.shape[1], k))
    C, off, R = (
        params.observation_matrix,
        params.observation_offset,
        params.observation_covariance,
    )
    for i in np.flatnonzero(seen & ~complete):
        o = observed[i]
        mi = ~o
        # y_m | x, y_o = G x + h + noise(R_mm - B R_om), B = R_mo R_oo^{-1}.
        Bt = _conditional_gain(R[np.ix_(o, o)], R[np.ix_(o, mi)])
        B = Bt.T
        G = C[mi] - B @ C[o]
        h = off[mi] + B @ (Y[i, o] - off[o])
        Ey[i, mi] = G @ m[i] + h
        cov = G @ P[i] @ G.T + R[np.ix_(mi, mi)] - B @ R[np.ix_(o, mi)]
        yy_extra[np.ix_(mi, mi)] += w[i] * cov
        yx_extra[mi] += w[i] * (G @ P[i])
    ys, ws, ms = Ey[seen], w[seen], m[seen]
    return LDSStats(
        n_obs=float(ws.sum()),
        y=ws @ ys,
        yy=_outer_sum(ys, ys, ws) + yy_extra,
        yx=_outer_sum(ys, ms, ws) + yx_extra,
        x_obs=ws @ ms,
        xx_obs=xx(seen),
        n_pairs=float(w[nxt].sum()),
        x_prev=w[prev] @ m[prev],
        xx_prev=xx(prev),
        x_next=w[nxt] @ m[nxt],
        xx_next=xx(nxt),
        x_cross=x_cross,
        n_seq=float(w0.sum()),
        x0=x0,
        xx0=xx0,
        log_evidence=float(weights @ smoothed.log_likelihood),
    )


@dataclass(frozen=True)
class CovariancePrior:
    """The inverse-Wishart part of a covariance's prior: ``Psi`` and ``c``."""

    scatter: np.ndarray
    weight: float

    def mode(self, scatter: np.ndarray, n: float) -> np.ndarray:
        S = (scatter + self.scatter) / (n + self.weight)
        return 0.5 * (S + S.T)

    def log_density(self, covariance: np.ndarray) -> float:
        """``-c/2 log|Sigma| - tr(Sigma^{-1} Psi)/2`` (up to a constant)."""
        if self.weight == 0 and not self.scatter.any():
            return 0.0
        L = np.linalg.cholesky(covariance)
        logdet = 2.0 * np.log(np.diagonal(L)).sum()
        W = np.linalg.solve(L, np.linalg.solve(L, self.scatter).T)  # L^-1 Psi L^-T
        return float(-0.5 * self.weight * logdet - 0.5 * np.trace(W))


@dataclass(frozen=True)
class MeanPrior:
    """A Gaussian prior on a mean or a matrix given its noise covariance
    ``Sigma``: mean ``M``, weight ``lambda`` (each column of ``M - value``
    has covariance ``Sigma / lambda``). Weight 0: no prior."""

    mean: np.ndarray
    weight: float

    def log_density(self, value: np.ndarray, covariance: np.ndarray) -> float:
        """``-cols/2 log|Sigma| - lambda/2 tr(Sigma^{-1} D D^T)``, ``D = value
        - M`` (up to a constant)."""
        if self.weight == 0:
            return 0.0
        D = np.reshape(value - self.mean, (len(covariance), -1))
        L = np.linalg.cholesky(covariance)
        logdet = 2.0 * np.log(np.diagonal(L)).sum()
        W = np.linalg.solve(L, D)
        return float(-0.5 * D.shape[1] * logdet - 0.5 * self.weight * (W**2).sum())

    def scatter(self, value: np.ndarray) -> tuple[np.ndarray, int]:
        """What the prior adds to its covariance's scatter and count."""
        if self.weight == 0:
            return 0.0, 0
        D = np.reshape(value - self.mean, (len(value), -1))
        return self.weight * D @ D.T, D.shape[1]


def _solve_right(rhs: np.ndarray, gram: np.ndarray) -> np.ndarray:
    """``rhs gram^{-1}`` for a symmetric ``gram`` (least squares if singular)."""
    try:
        return np.linalg.solve(gram, rhs.T).T
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(gram, rhs.T, rcond=None)[0].T


def _sym(S):
    return 0.5 * (S + S.T)


def map_params(
    stats: LDSStats,
    previous: GaussianChainParams,
    learn: frozenset,
    priors: dict,
) -> GaussianChainParams:
    """The parameters from the statistics, in pykalman's order (see the module).

    Parameters
    ----------
    stats : LDSStats
    previous : GaussianChainParams
        The parameters kept where nothing is learned (or no data reached).
    learn : frozenset of str
        The fields of :class:`GaussianChainParams` to estimate.
    priors : dict
        ``CovariancePrior`` of ``"transition_covariance"``,
        ``"observation_covariance"`` and ``"initial_covariance"``;
        ``MeanPrior`` of ``"transition_matrix"``, ``"observation_matrix"``
        and ``"initial_mean"``.
    """
    p = previous
    C, R, A, Q = (
        p.observation_matrix,
        p.observation_covariance,
        p.transition_matrix,
        p.transition_covariance,
    )
    mu0, P0 = p.initial_mean, p.initial_covariance
    b, d = p.transition_offset, p.observation_offset
    s = stats
    pC, pA, pmu = (
        priors["observation_matrix"],
        priors["transition_matrix"],
        priors["initial_mean"],
    )
    eye = np.eye(len(mu0))
    if s.n_obs > 0:
        if "observation_matrix" in learn:
            C = _solve_right(
                s.yx - np.outer(d, s.x_obs) + pC.weight * pC.mean,
                s.xx_obs + pC.weight * eye,
            )
        if "observation_covariance" in learn:
            Cx = C @ s.x_obs
            S = (
                s.yy
                - C @ s.yx.T
                - s.yx @ C.T
                + C @ s.xx_obs @ C.T
                - np.outer(d, s.y)
                - np.outer(s.y, d)
                + np.outer(d, Cx)
                + np.outer(Cx, d)
                + s.n_obs * np.outer(d, d)
            )
            extra, count = pC.scatter(C)
            R = priors["observation_covariance"].mode(_sym(S) + extra, s.n_obs + count)
    if s.n_pairs > 0:
        if "transition_matrix" in learn:
            A = _solve_right(
                s.x_cross - np.outer(b, s.x_prev) + pA.weight * pA.mean,
                s.xx_prev + pA.weight * eye,
            )
        if "transition_covariance" in learn:
            Ax = A @ s.x_prev
            S = (
                s.xx_next
                - s.x_cross @ A.T
                - A @ s.x_cross.T
                + A @ s.xx_prev @ A.T
                - np.outer(s.x_next, b)
                - np.outer(b, s.x_next)
                + np.outer(Ax, b)
                + np.outer(b, Ax)
                + s.n_pairs * np.outer(b, b)
            )
            extra, count = pA.scatter(A)
            Q = priors["transition_covariance"].mode(_sym(S) + extra, s.n_pairs + count)
    if s.n_seq > 0:
        if "initial_mean" in learn:
            mu0 = (s.x0 + pmu.weight * pmu.mean) / (s.n_seq + pmu.weight)
        if "initial_covariance" in learn:
            S = s.xx0 - np.outer(mu0, s.x0) - np.outer(s.x0, mu0)
            S = S + s.n_seq * np.outer(mu0, mu0)
            extra, count = pmu.scatter(mu0)
            P0 = priors["initial_covariance"].mode(_sym(S) + extra, s.n_seq + count)
    if "transition_offset" in learn and s.n_pairs > 0:
        b = (s.x_next - A @ s.x_prev) / s.n_pairs
    if "observation_offset" in learn and s.n_obs > 0:
        d = (s.y - C @ s.x_obs) / s.n_obs
    return replace(
        p,
        transition_matrix=A,
        transition_offset=b,
        transition_covariance=Q,
        observation_matrix=C,
        observation_offset=d,
        observation_covariance=R,
        initial_mean=mu0,
        initial_covariance=P0,
    )


def log_prior(params: GaussianChainParams, priors: dict) -> float:
    """The log density of the priors at ``params`` (up to a constant)."""
    return (
        priors["transition_covariance"].log_density(params.transition_covariance)
        + priors["observation_covariance"].log_density(params.observation_covariance)
        + priors["initial_covariance"].log_density(params.initial_covariance)
        + priors["transition_matrix"].log_density(
            params.transition_matrix, params.transition_covariance
        )
        + priors["observation_matrix"].log_density(
            params.observation_matrix, params.observation_covariance
        )
        + priors["initial_mean"].log_density(
            params.initial_mean, params.initial_covariance
        )
    )
