"""Covariance structures of the Gaussian emission family, as objects.

One Gaussian family serves naive Bayes (diagonal), LDA (tied), QDA and the
mixtures (full, tied, diagonal, spherical). What differs between the four is
held here, once: the shape of the scatter statistics, how scatters merge, how
a prior turns them into covariances, and how the quadratic form of the
log-density is evaluated. A string option such as ``covariance_type='full'``
is resolved to one of these objects once, where an estimator builds its
components (:func:`covariance_from_name`).

Scatter statistics are sums of weighted outer products of deviations from the
state means (centred), so they merge exactly and keep their precision for data
far from the origin.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
from scipy.linalg import lapack

__all__ = [
    "DIAG",
    "FULL",
    "SPHERICAL",
    "TIED",
    "Covariance",
    "Diag",
    "Full",
    "Spherical",
    "Tied",
    "covariance_from_name",
    "precision_cholesky",
    "precision_cholesky_from_precision",
    "row_blocks",
]

_LOG_2PI = np.log(2.0 * np.pi)


def row_blocks(n_rows: int, width: int, elements: int = 1 << 20):
    """Slices of about ``elements / width`` rows covering ``range(n_rows)``.

    Row-wise work on blocks this size (centring, a matrix product, a
    reduction) stays in cache instead of streaming full-size temporaries.
    """
    step = max(1, elements // max(width, 1))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


class Covariance(ABC):
    """What one covariance structure contributes to the Gaussian family."""

    name: str = ""

    @abstractmethod
    def scatter(self, X, weights, means, labels=None) -> np.ndarray:
        """Centred weighted scatter of ``X`` (NaN-free) around every state mean."""

    @abstractmethod
    def outer(self, delta: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """Scatter of the mean shift ``delta`` (n_states, d), weighted by ``coef``."""

    @abstractmethod
    def covariances(
        self, scatter, weight, prior_weight, prior_scatter, reg, shrink=0.0
    ):
        """MAP covariances ``(1 - shrink) (scatter + eta S) / (weight + eta)``
        plus ``(shrink + reg) I``."""

    @abstractmethod
    def precision_cholesky(self, covariances, rounding_floor=True) -> np.ndarray:
        """Factors ``P`` with ``P P^T`` the precision; raises LinAlgError if not PD.

        With ``rounding_floor`` (full, tied), a Cholesky pivot at the rounding
        level of the matrix also counts as singular; without it, only a failed
        factorisation does (scikit-learn's mixtures).
        """

    @abstractmethod
    def log_det_precision_cholesky(self, prec_chol, n_features: int) -> np.ndarray:
        """``log det P`` per state, shape ``(n_states,)`` (or a scalar if tied)."""

    @abstractmethod
    def mahalanobis(self, Xc, mu_c, prec_chol) -> np.ndarray:
        """Squared Mahalanobis distances ``(n, n_states)``; ``Xc``, ``mu_c`` centred."""

    def shape(self, n_states: int, n_features: int) -> tuple:
        """Shape of the covariance parameters (or precisions) of ``n_states``."""
        k, d = n_states, n_features
        return {"full": (k, d, d), "tied": (d, d), "diag": (k, d), "spherical": (k,)}[
            self.name
        ]

    def n_parameters(self, n_states: int, n_features: int) -> int:
        """Free parameters of the covariances (a symmetric matrix has d(d+1)/2)."""
        k, d = n_states, n_features
        return {
            "full": k * d * (d + 1) // 2,
            "tied": d * (d + 1) // 2,
            "diag": k * d,
            "spherical": k,
        }[self.name]

    def dense(self, covariances, state: int, n_features: int) -> np.ndarray:
        """The full ``(d, d)`` covariance matrix of one state."""
        c = np.asarray(covariances)
        if self.name == "full":
            return c[state]
        if self.name == "tied":
            return c
        if self.name == "diag":
            return np.diag(c[state])
        return np.eye(n_features) * c[state]

    def log_prior(self, prec_chol, prior_scatter, prior_weight: float) -> float:
        """Log density of the covariance prior at ``P``, up to its constant.

        ``sum_k -eta/2 (log|Sigma_k| + tr(Sigma_k^{-1} S))``: the density the
        MAP update ``(S_k + eta S) / (n_k + eta)`` maximises (for the diagonal
        and spherical structures, its exact analogue).
        """
        if prior_weight == 0:
            return 0.0
        P = prec_chol
        S = np.asarray(prior_scatter, dtype=float)
        diag = _diagonal(S)
        if self.name == "full":
            log_det = -2.0 * np.log(np.diagonal(P, axis1=1, axis2=2)).sum()
            trace = np.einsum("kji,jl,kli->", P, S, P)
        elif self.name == "tied":
            log_det = -2.0 * np.log(np.diag(P)).sum()
            trace = np.einsum("ji,jl,li->", P, S, P)
        elif self.name == "diag":
            log_det = -2.0 * np.log(P).sum()
            trace = np.sum(P**2 * diag)
        else:
            d = diag.size
            log_det = -2.0 * d * np.log(P).sum()
            trace = d * np.mean(diag) * np.sum(P**2)
        return float(-0.5 * prior_weight * (log_det + trace))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __reduce__(self):
        return (covariance_from_name, (self.name,))


def _residuals(X, means, labels):
    return X - means[labels]


def _class_residuals(X, weights, means, labels):
    """Per class, its rows' deviations from its mean times sqrt(weight).

    One sorted copy of ``X`` makes every class a contiguous block, so that
    ``r.T @ r`` is the class's weighted scatter with no further gathering.
    """
    order = np.argsort(labels, kind="stable")
    counts = np.bincount(labels, minlength=means.shape[0])
    xs = X[order]
    w = weights[order, labels[order]]
    root = None if np.all(w == 1.0) else np.sqrt(w)[:, None]
    start = 0
    for j, c in enumerate(counts):
        r = xs[start : start + c]
        r -= means[j]
        if root is not None:
            r *= root[start : start + c]
        start += c
        yield r


class Full(Covariance):
    """A full covariance matrix per state: scatter ``(n_states, d, d)``."""

    name = "full"

    def scatter(self, X, weights, means, labels=None):
        k, d = means.shape
        out = np.empty((k, d, d))
        if labels is not None:
            for j, r in enumerate(_class_residuals(X, weights, means, labels)):
                out[j] = r.T @ r
            return out
        out[:] = 0.0
        for rows in row_blocks(X.shape[0], k * d):
            xb, wb = X[rows], weights[rows]
            for j in range(k):
                r = xb - means[j]
                out[j] += (r * wb[:, j, None]).T @ r
        return out

    def outer(self, delta, coef):
        return np.einsum("k,ki,kj->kij", coef, delta, delta)

    def covariances(
        self, scatter, weight, prior_weight, prior_scatter, reg, shrink=0.0
    ):
        d = scatter.shape[-1]
        den = (weight + prior_weight)[:, None, None]
        cov = _ratio(scatter + prior_weight * prior_scatter, den, prior_scatter)
        cov *= 1.0 - shrink
        cov[:, np.arange(d), np.arange(d)] += shrink + reg
        return cov

    def precision_cholesky(self, covariances, rounding_floor=True):
        return np.stack([_prec_chol(c, rounding_floor) for c in covariances])

    def log_det_precision_cholesky(self, prec_chol, n_features):
        return np.log(np.diagonal(prec_chol, axis1=1, axis2=2)).sum(axis=1)

    def mahalanobis(self, Xc, mu_c, prec_chol):
        k, d, _ = prec_chol.shape
        # All states in one matrix product: Y = Xc [P_1 .. P_K].
        stacked = np.concatenate(list(prec_chol), axis=1)  # (d, K d)
        shift = np.einsum("kj,kji->ki", mu_c, prec_chol)  # (K, d)
        y = Xc @ stacked
        y -= shift.reshape(-1)
        y *= y
        # Sum each state's d squares with a matrix product: numpy's reduction
        # over a short last axis is several times slower.
        return y @ np.repeat(np.eye(k), d, axis=0)


class Tied(Covariance):
    """One covariance matrix shared by all states: scatter ``(d, d)``."""

    name = "tied"

    def scatter(self, X, weights, means, labels=None):
        return FULL.scatter(X, weights, means, labels).sum(axis=0)

    def outer(self, delta, coef):
        return np.einsum("k,ki,kj->ij", coef, delta, delta)

    def covariances(
        self, scatter, weight, prior_weight, prior_scatter, reg, shrink=0.0
    ):
        d = scatter.shape[-1]
        den = weight.sum() + prior_weight
        cov = _ratio(scatter + prior_weight * prior_scatter, den, prior_scatter)
        cov *= 1.0 - shrink
        cov[np.arange(d), np.arange(d)] += shrink + reg
        return cov

    def precision_cholesky(self, covariances, rounding_floor=True):
        return _prec_chol(covariances, rounding_floor)

    def log_det_precision_cholesky(self, prec_chol, n_features):
        return np.sum(np.log(np.diag(prec_chol)))

    def mahalanobis(self, Xc, mu_c, prec_chol):
        y = Xc @ prec_chol
        m = mu_c @ prec_chol
        out = y @ (-2.0 * m.T)
        out += np.einsum("ij,ij->i", y, y)[:, None]
        out += np.einsum("ij,ij->i", m, m)
        return out


class Diag(Covariance):
    """One variance per state and feature: scatter ``(n_states, d)``.

    The only structure that marginalises missing values (NaN): a missing
    feature is left out of its row's distance and normaliser.
    """

    name = "diag"

    def scatter(self, X, weights, means, labels=None):
        if labels is not None:
            resid = _residuals(X, means, labels)
            return weights.T @ (resid * resid)
        out = np.zeros(means.shape)
        for rows in row_blocks(X.shape[0], means.size):
            xb, wb = X[rows], weights[rows]
            for j in range(means.shape[0]):
                r = xb - means[j]
                out[j] += wb[:, j] @ (r * r)
        return out

    def outer(self, delta, coef):
        return coef * delta * delta if coef.ndim == 2 else coef[:, None] * delta**2

    def covariances(
        self, scatter, weight, prior_weight, prior_scatter, reg, shrink=0.0
    ):
        weight = weight if weight.ndim == 2 else weight[:, None]
        prior = _diagonal(prior_scatter)
        num = scatter + prior_weight * prior
        return (1.0 - shrink) * _ratio(num, weight + prior_weight, prior) + shrink + reg

    def precision_cholesky(self, covariances, rounding_floor=True):
        return _inverse_sqrt(covariances)

    def log_det_precision_cholesky(self, prec_chol, n_features):
        return np.log(prec_chol).sum(axis=1)

    def mahalanobis(self, Xc, mu_c, prec_chol):
        prec = prec_chol**2
        out = Xc @ (-2.0 * (mu_c * prec).T)
        out += (Xc * Xc) @ prec.T
        out += (mu_c * mu_c * prec).sum(axis=1)
        return out


class Spherical(Covariance):
    """One variance per state: scatter ``(n_states,)`` (the trace)."""

    name = "spherical"

    def scatter(self, X, weights, means, labels=None):
        return DIAG.scatter(X, weights, means, labels).sum(axis=1)

    def outer(self, delta, coef):
        return coef * (delta * delta).sum(axis=1)

    def covariances(
        self, scatter, weight, prior_weight, prior_scatter, reg, shrink=0.0
    ):
        prior = np.mean(_diagonal(prior_scatter))
        d = np.size(_diagonal(prior_scatter))
        num = scatter / d + prior_weight * prior
        return (1.0 - shrink) * _ratio(num, weight + prior_weight, prior) + shrink + reg

    def precision_cholesky(self, covariances, rounding_floor=True):
        return _inverse_sqrt(covariances)

    def log_det_precision_cholesky(self, prec_chol, n_features):
        return n_features * np.log(prec_chol)

    def mahalanobis(self, Xc, mu_c, prec_chol):
        prec = prec_chol**2
        out = Xc @ (-2.0 * mu_c.T)
        out += np.einsum("ij,ij->i", Xc, Xc)[:, None]
        out += (mu_c * mu_c).sum(axis=1)
        return out * prec


def _diagonal(prior_scatter) -> np.ndarray:
    """The diagonal of a prior scatter given as a matrix, or the vector itself."""
    p = np.asarray(prior_scatter, dtype=float)
    return np.diagonal(p) if p.ndim == 2 else p


def _ratio(num, den, prior):
    """``num / den``; where ``den == 0`` (no data, no prior weight) the prior.

    That is the limit of the MAP estimate as the prior weight goes to zero for
    a state that has no data.
    """
    den = np.asarray(den, dtype=float)
    empty = den == 0
    if not empty.any():
        return num / den
    out = num / np.where(empty, 1.0, den)
    return np.where(empty, np.broadcast_to(prior, out.shape), out)


def _inverse_sqrt(variances: np.ndarray) -> np.ndarray:
    """``1 / sigma``: the precision factor of variances, which must be positive."""
    if not np.all(variances > 0):
        raise np.linalg.LinAlgError("a variance is not positive")
    return 1.0 / np.sqrt(variances)


def _prec_chol(cov: np.ndarray, rounding_floor: bool = True) -> np.ndarray:
    """Upper factor ``P`` with ``P P^T = cov^{-1}``: the inverse of the Cholesky
    factor (LAPACK's triangular inversion), transposed."""
    chol = np.linalg.cholesky(cov)  # raises LinAlgError when not PD
    d = cov.shape[0]
    # A pivot at rounding level means a singular matrix that rounding let through.
    scale = np.max(np.abs(np.diag(cov)))
    if rounding_floor and np.min(np.diag(chol)) ** 2 <= d * np.finfo(float).eps * scale:
        raise np.linalg.LinAlgError("the covariance matrix is singular")
    inv, info = lapack.dtrtri(chol, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError("the covariance matrix is singular")
    return inv.T


def precision_cholesky(cov: np.ndarray) -> np.ndarray:
    """Public name of the factor ``P`` (``P P^T = cov^{-1}``) of one matrix."""
    return _prec_chol(cov)


def precision_cholesky_from_precision(precision: np.ndarray) -> np.ndarray:
    """The upper factor ``P`` with ``P P^T = precision`` of one matrix.

    It is the factor :func:`precision_cholesky` gives for ``precision^{-1}``
    (the upper triangular factor with a positive diagonal is unique), taken
    from the precision itself: the lower Cholesky factor of the matrix with
    rows and columns reversed, reversed back. Raises LinAlgError if not PD.
    """
    flipped = np.linalg.cholesky(precision[::-1, ::-1])
    return np.ascontiguousarray(flipped[::-1, ::-1])


FULL, TIED, DIAG, SPHERICAL = Full(), Tied(), Diag(), Spherical()
_BY_NAME = {c.name: c for c in (FULL, TIED, DIAG, SPHERICAL)}


def covariance_from_name(name: str) -> Covariance:
    """The covariance object named full, tied, diag or spherical."""
    return _BY_NAME[name]
