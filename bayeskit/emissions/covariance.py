"""Covariance structures of the Gaussian emission family, as objects.

One Gaussian family serves naive Bayes (diagonal), LDA (tied), QDA and the
mixtures (full, tied, diagonal, spherical). Everything that differs between
the four structures is a method of its object, after scipy's
``scipy.stats.Covariance`` (a covariance as a polymorphic object, not a string
dispatched in many places): the statistics (the shape of the scatter, how
scatters merge, the compiled diagonal pass), how a prior turns statistics into
covariances, the precision factor and its log-determinant, the log-density,
sampling and parameter counts. A string option such as
``covariance_type='full'`` is resolved to one of these objects once, where an
estimator builds its components (:func:`covariance_from_name`).

The base class :class:`Covariance` is defined in
``bayeskit.emissions._covariance_base`` and the numerical helpers (precision
factors, scatters) in ``bayeskit.emissions._covariance_factors``; this module
holds the four structures and re-exports the public names of both.

Scatter statistics are sums of weighted outer products of deviations from the
state means (centred), so they merge exactly and keep their precision for data
far from the origin. The tied structure keeps every state's scatter and pools
them where a covariance is made, so that the same statistics serve LDA's
prior-weighted pooling and shrinkage of each class.

The precision factor ``P`` of a covariance ``Sigma`` satisfies ``P P^T =
Sigma^{-1}``: the transposed inverse of the lower Cholesky factor of ``Sigma``
(an upper triangular matrix) for full and tied structures, ``1 / sigma`` for
variances. The log-density is evaluated in whitened coordinates ``(x - mu)
P`` (Bishop 2006, section 2.3), never through an explicit inverse.

References
----------
.. [1] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, section 2.3 (the Gaussian distribution).
.. [2] C. Fraley and A. E. Raftery, "Bayesian regularization for normal
   mixture estimation and model-based clustering", *Journal of
   Classification* 24, 2007, pp. 155-181.
"""

from __future__ import annotations

import numpy as np

from .._jit import numpy_first, run_numpy
from .._logmath import has_nan
from ._covariance_base import Covariance
from ._covariance_factors import (
    _DIRECT_CELLS,
    _LOG_2PI,
    _add_to_matrix_diagonal,
    _from_precision,
    _inverse_sqrt,
    _is_upper,
    _jittered,
    _matrix_layout,
    _matrix_scatter,
    _matrix_values,
    _ratio,
    _stacked_prec_chol,
    precision_cholesky,
    precision_cholesky_from_precision,
    row_blocks,
)
from ._kernels import (
    _INTERPRET_CELLS,
    _diag_log_likelihood_numpy,
    diag_class_moments,
    diag_log_likelihood,
    full_log_likelihood,
    split_rows,
)

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


class Full(Covariance):
    """A full covariance matrix per state: scatter ``(n_states, d, d)``."""

    name = "full"

    def shape(self, n_states, n_features):
        return (n_states, n_features, n_features)

    def n_parameters(self, n_states, n_features):
        return n_states * n_features * (n_features + 1) // 2

    def block_size(self, n_features):
        return n_features

    def scatter(self, X, weights, means, labels=None):
        return _matrix_scatter(X, weights, means, labels)

    def outer(self, delta, coef):
        return np.einsum("k,ki,kj->kij", coef, delta, delta)

    def prior_scatter(self, prior, n_features):
        return prior.scatter_matrix(n_features)

    def map_covariances(
        self, scatter, weight, psi, dof, n_features, fallback=None, min_denominator=0.0
    ):
        den = np.asarray(weight + dof, dtype=float)
        return _ratio(scatter + psi, den[:, None, None], fallback, min_denominator)

    def add_to_diagonal(self, covariances, value):
        return _add_to_matrix_diagonal(covariances, value)

    def precision_cholesky(
        self, covariances, rounding_floor=True, *, floor=0.0, jitter=0.0
    ):
        covariances = np.asarray(covariances)
        if covariances.dtype == np.float64 and covariances.ndim == 3:
            prec = _stacked_prec_chol(covariances, rounding_floor)
            if prec is not None:
                return prec
        # One of them is singular: each on its own (the error, or the jitter).
        return np.stack([_jittered(c, rounding_floor, jitter) for c in covariances])

    def log_det_precision_cholesky(self, prec_chol, n_features):
        return np.log(np.diagonal(prec_chol, axis1=1, axis2=2)).sum(axis=1)

    def precision(self, prec_chol):
        return np.einsum("kij,klj->kil", prec_chol, prec_chol)

    def from_precision(self, precisions):
        pairs = [_from_precision(p) for p in precisions]
        return np.stack([p for p, _ in pairs]), np.stack([c for _, c in pairs])

    def trace_precision(self, prec_chol, M, n_features):
        M = np.broadcast_to(M, prec_chol.shape)
        return np.einsum("kji,kjl,kli->k", prec_chol, M, prec_chol)

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

    def log_likelihood(self, X, params):
        """As the base class; on large inputs, one compiled pass: a triangular
        whitening per state and row, computed for a few rows at once
        (:func:`~bayeskit.emissions._kernels.full_log_likelihood`, on blocks
        of rows in parallel threads), half the arithmetic of a dense product
        and no temporary as large as ``X``."""
        P = params.precisions_cholesky
        n, d = X.shape
        k = P.shape[0]
        if n * k * d * d < _COMPILED_WORK or not _is_upper(P):
            return super().log_likelihood(X, params)
        if numpy_first(full_log_likelihood):  # not compiled: a fresh environment
            return run_numpy(full_log_likelihood, super().log_likelihood, X, params)
        center = np.asarray(params.center, dtype=float)
        shift = np.einsum("kj,kji->ki", params.means - center, P)
        out = np.empty((n, k))
        args = (
            center,
            shift,
            np.ascontiguousarray(np.swapaxes(P, 1, 2)),
            params.log_det - 0.5 * d * _LOG_2PI,
        )
        X = np.ascontiguousarray(X, dtype=float)
        split_rows(full_log_likelihood, X, args, out, n * k * d * (d + 1) // 2)
        return out

    def dense(self, covariances, state, n_features):
        return np.asarray(covariances)[state]

    def from_matrix(self, matrix, n_states):
        return np.repeat(np.asarray(matrix, dtype=float)[None], n_states, axis=0)

    def layout(self, covariances, n_states, name):
        shape = "(n_states, n_features, n_features)"
        return _matrix_layout(covariances, 3, name, shape)

    def check_values(self, covariances, name):
        for k, c in enumerate(np.asarray(covariances, dtype=float)):
            _matrix_values(c, f"{name}[{k}]")


# Below this much work (rows x states x features^2) the full structure's
# densities take numpy's path (a stacked matrix product), which needs no
# compiled kernel: a first small fit never compiles one.
_COMPILED_WORK = 1 << 22


class Tied(Covariance):
    """One covariance matrix shared by all states.

    The statistics keep every state's scatter ``(n_states, d, d)`` (they merge
    as the full structure's); the covariance pools them, ``(d, d)``.
    """

    name = "tied"
    shared = True

    def shape(self, n_states, n_features):
        return (n_features, n_features)

    def scatter_shape(self, n_states, n_features):
        return (n_states, n_features, n_features)

    def n_parameters(self, n_states, n_features):
        return n_features * (n_features + 1) // 2

    def block_size(self, n_features):
        return n_features

    def scatter(self, X, weights, means, labels=None):
        return _matrix_scatter(X, weights, means, labels)

    def outer(self, delta, coef):
        return np.einsum("k,ki,kj->kij", coef, delta, delta)

    def prior_scatter(self, prior, n_features):
        return prior.scatter_matrix(n_features)

    def map_covariances(
        self, scatter, weight, psi, dof, n_features, fallback=None, min_denominator=0.0
    ):
        pooled = scatter.sum(axis=0) if np.ndim(scatter) == 3 else scatter
        den = np.sum(weight) + np.sum(dof)
        den = np.asarray(den, dtype=float)
        return _ratio(pooled + psi, den, fallback, min_denominator)

    def pool(self, covariances, weights) -> np.ndarray:
        """``sum_k w_k Sigma_k``: the shared covariance of per-state
        covariances ``(K, d, d)`` and weights that sum to one (LDA pools its
        classes' covariances by the class priors)."""
        return np.einsum("k,kij->ij", weights, covariances)

    def add_to_diagonal(self, covariances, value):
        return _add_to_matrix_diagonal(covariances, value)

    def precision_cholesky(
        self, covariances, rounding_floor=True, *, floor=0.0, jitter=0.0
    ):
        return _jittered(covariances, rounding_floor, jitter)

    def log_det_precision_cholesky(self, prec_chol, n_features):
        return np.log(np.diagonal(prec_chol)).sum()

    def precision(self, prec_chol):
        return prec_chol @ prec_chol.T

    def from_precision(self, precisions):
        return _from_precision(precisions)

    def trace_precision(self, prec_chol, M, n_features):
        M = M.sum(axis=0) if np.ndim(M) == 3 else M
        return np.einsum("ji,jl,li->", prec_chol, M, prec_chol)

    def mahalanobis(self, Xc, mu_c, prec_chol):
        y = Xc @ prec_chol
        m = mu_c @ prec_chol
        out = y @ (-2.0 * m.T)
        out += np.einsum("ij,ij->i", y, y)[:, None]
        out += np.einsum("ij,ij->i", m, m)
        return out

    def log_likelihood(self, X, params):
        """As the base class, for any whitening ``W`` of shape ``(d, r)`` with
        ``W W^T`` the (pseudo-)inverse covariance and ``log_det`` the sum of
        the logs of its singular values: the density on the ``r``-dimensional
        subspace the covariance spans (LDA with a singular covariance)."""
        W = params.precisions_cholesky
        rank = W.shape[1]
        mu_c = params.means - params.center
        m = mu_c @ W
        n = X.shape[0]
        row = np.empty(n)
        for rows in row_blocks(n, X.shape[1] + rank):
            white = (X[rows] - params.center) @ W
            row[rows] = np.einsum("ij,ij->i", white, white)
        row = -0.5 * (row + rank * _LOG_2PI) + params.log_det
        out = self._linear_scores(X, params, m)
        out += row[:, None]
        return out

    scores_propagate_nan = True  # relative_log_likelihood: one matrix product

    def relative_log_likelihood(self, X, params):
        """The log-likelihood without ``-||(x - c) W||^2 / 2`` and the
        normaliser, shared by every state: a linear function of ``x``."""
        W = params.precisions_cholesky
        return self._linear_scores(X, params, (params.means - params.center) @ W)

    def _linear_scores(self, X, params, m):
        """``(x - c) W m_k^T - ||m_k||^2 / 2`` with ``m_k = (mu_k - c) W``."""
        W = params.precisions_cholesky
        coef = m @ W.T
        intercept = -0.5 * np.einsum("ij,ij->i", m, m)
        # Centring costs a pass over X; it only buys precision when the data
        # sit far from the origin compared with their spread (rounding of x^T A
        # then grows with |x| / sigma): below 1e3 the two forms agree to ~1e-13.
        spread = np.sqrt(np.maximum(np.diag(params.covariances), np.finfo(float).tiny))
        if np.max(np.abs(params.center) / spread) <= 1e3:
            out = X @ coef.T
            out += intercept - params.center @ coef.T
            return out
        out = np.empty((X.shape[0], m.shape[0]))
        for rows in row_blocks(X.shape[0], X.shape[1]):
            out[rows] = (X[rows] - params.center) @ coef.T
        out += intercept
        return out

    def dense(self, covariances, state, n_features):
        return np.asarray(covariances)

    def from_matrix(self, matrix, n_states):
        return np.array(matrix, dtype=float, copy=True)

    def layout(self, covariances, n_states, name):
        return _matrix_layout(covariances, 2, name, "(n_features, n_features)")

    def check_values(self, covariances, name):
        _matrix_values(covariances, name)


class Diag(Covariance):
    """One variance per state and feature: scatter ``(n_states, d)``.

    The only structure whose own density and statistics marginalise missing
    values (NaN): a missing feature is left out of its row's statistics,
    distance and normaliser, so its weights are per state and feature,
    ``(n_states, d)`` (the others' missing coordinates are marginalised by
    the Gaussian family, :mod:`bayeskit.emissions._gaussian_missing`). Its density
    (one compiled pass over the rows) and its statistics in a supervised fit
    (two) take deviations from the means themselves
    (:mod:`bayeskit.emissions._kernels`), which keeps data far from the origin
    just as precise.
    """

    name = "diag"
    marginalises_missing = True

    def shape(self, n_states, n_features):
        return (n_states, n_features)

    def weight_shape(self, n_states, n_features):
        return (n_states, n_features)

    def n_parameters(self, n_states, n_features):
        return n_states * n_features

    def block_size(self, n_features):
        return 1

    def stats(self, X, weights, labels=None):
        shape = (weights.shape[1], X.shape[1])
        if labels is not None:
            weight, mean, scatter = np.zeros(shape), np.zeros(shape), np.zeros(shape)
            diag_class_moments(
                np.ascontiguousarray(X, dtype=float),
                np.ascontiguousarray(weights, dtype=float),
                np.ascontiguousarray(labels, dtype=np.intp),
                np.empty(X.shape[1]),
                weight,
                mean,
                scatter,
                np.zeros(shape),
            )
            return weight, mean, scatter
        if has_nan(X):
            missing = np.isnan(X)
            # Weights spread over the states: NaN cells drop out of each sum.
            observed = (~missing).astype(float)
            X = np.where(missing, 0.0, X)
            weight = weights.T @ observed
            safe = np.where(weight > 0, weight, 1.0)
            mean = (weights.T @ X) / safe
            # Deviations of missing cells are zeroed through the observed mask.
            scatter = np.stack(
                [
                    weights[:, k] @ (((X - mean[k]) * observed) ** 2)
                    for k in range(weights.shape[1])
                ]
            )
            return weight, mean, scatter
        return self.complete_stats(X, weights)

    def complete_stats(self, X, weights):
        weight, mean, scatter = Covariance.stats(self, X, weights)
        return weight[:, None].repeat(X.shape[1], axis=1), mean, scatter

    def from_dense(self, weight, mean, scatter):
        d = mean.shape[1]
        diagonal = np.diagonal(scatter, axis1=1, axis2=2).copy()
        return np.repeat(weight[:, None], d, axis=1), mean, diagonal

    def scatter(self, X, weights, means, labels=None):
        if labels is not None:
            resid = X - means[labels]
            return weights.T @ (resid * resid)
        if X.shape[0] * means.size <= _DIRECT_CELLS:
            # Every state's squared deviations at once, (K, n, d), summed
            # over the rows by one batched product with the weights.
            r = (X[:, None, :] - means).transpose(1, 0, 2)
            r *= r
            return np.matmul(weights.T[:, None, :], r)[:, 0, :]
        out = np.zeros(means.shape)
        for rows in row_blocks(X.shape[0], means.size):
            xb, wb = X[rows], weights[rows]
            for j in range(means.shape[0]):
                r = xb - means[j]
                out[j] += wb[:, j] @ (r * r)
        return out

    def outer(self, delta, coef):
        coef = np.asarray(coef, dtype=float)
        return coef * delta * delta if coef.ndim == 2 else coef[:, None] * delta**2

    def prior_scatter(self, prior, n_features):
        return prior.scatter_diagonal(n_features)

    def map_covariances(
        self, scatter, weight, psi, dof, n_features, fallback=None, min_denominator=0.0
    ):
        weight = weight if np.ndim(weight) == 2 else np.asarray(weight)[:, None]
        dof = np.asarray(dof, dtype=float)
        den = weight + (dof[:, None] if dof.ndim == 1 else dof)
        return _ratio(scatter + psi, den, fallback, min_denominator)

    def add_to_diagonal(self, covariances, value):
        return covariances + value

    def precision_cholesky(
        self, covariances, rounding_floor=True, *, floor=0.0, jitter=0.0
    ):
        if rounding_floor and (covariances <= floor).any():
            # Deviations of identical points are at most rounding of the mean:
            # a variance at that level is zero that rounding let through.
            raise np.linalg.LinAlgError("a variance is zero")
        return _inverse_sqrt(covariances)

    def log_det_precision_cholesky(self, prec_chol, n_features):
        return np.log(prec_chol).sum(axis=1)

    def precision(self, prec_chol):
        return prec_chol**2

    def from_precision(self, precisions):
        if not np.all(precisions > 0):
            raise np.linalg.LinAlgError("a precision is not positive")
        return np.sqrt(precisions), 1.0 / precisions

    def trace_precision(self, prec_chol, M, n_features):
        return np.sum(prec_chol**2 * M, axis=-1)

    def mahalanobis(self, Xc, mu_c, prec_chol):
        prec = prec_chol**2
        out = Xc @ (-2.0 * (mu_c * prec).T)
        out += (Xc * Xc) @ prec.T
        out += (mu_c * mu_c * prec).sum(axis=1)
        return out

    def log_likelihood(self, X, params):
        """One compiled pass over the rows (deviations from the means
        themselves); a missing value leaves its feature out of the row."""
        prec_chol = params.precisions_cholesky  # 1 / sigma, (K, d)
        log_norm = np.log(prec_chol) - 0.5 * _LOG_2PI
        out = np.empty((X.shape[0], prec_chol.shape[0]))
        args = [X, params.means, 0.5 * prec_chol * prec_chol, log_norm]
        args += [log_norm.sum(axis=1), out]
        if X.size * prec_chol.shape[0] < _INTERPRET_CELLS:
            # What the kernel's wrapper runs at this size, called directly.
            _diag_log_likelihood_numpy(*args)
            return out
        args[:2] = [np.ascontiguousarray(a, dtype=float) for a in args[:2]]
        diag_log_likelihood(*args)
        return out

    def dense(self, covariances, state, n_features):
        return np.diag(np.asarray(covariances)[state])

    def from_matrix(self, matrix, n_states):
        diagonal = np.diag(np.asarray(matrix, dtype=float))
        return np.repeat(diagonal[None], n_states, axis=0)

    def layout(self, covariances, n_states, name):
        c = np.array(covariances, dtype=float, copy=True)
        if c.ndim != 2:
            raise ValueError(
                f"{name} must have shape (n_states, n_features) with the diag "
                f"structure (one variance per state and feature), got {c.shape}"
            )
        return c

    def sample(self, rng, mean, covariances, state, n):
        d = np.shape(mean)[0]
        scale = np.sqrt(np.asarray(covariances)[state])
        return mean + rng.standard_normal((int(n), d)) * scale


class Spherical(Covariance):
    """One variance per state: scatter ``(n_states,)`` (the trace)."""

    name = "spherical"

    def shape(self, n_states, n_features):
        return (n_states,)

    def n_parameters(self, n_states, n_features):
        return n_states

    def block_size(self, n_features):
        return 1

    def scatter(self, X, weights, means, labels=None):
        return DIAG.scatter(X, weights, means, labels).sum(axis=1)

    def from_dense(self, weight, mean, scatter):
        return weight, mean, np.trace(scatter, axis1=1, axis2=2)

    def outer(self, delta, coef):
        coef = np.asarray(coef, dtype=float)
        if coef.ndim == 2:
            return (coef * delta * delta).sum(axis=1)
        return coef * (delta * delta).sum(axis=1)

    def prior_scatter(self, prior, n_features):
        return np.sum(prior.scatter_diagonal(n_features), axis=-1)

    def map_covariances(
        self, scatter, weight, psi, dof, n_features, fallback=None, min_denominator=0.0
    ):
        den = np.asarray(weight + dof, dtype=float)
        return _ratio((scatter + psi) / n_features, den, fallback, min_denominator)

    def as_covariance(self, scatter, n_features):
        return scatter / n_features

    def add_to_diagonal(self, covariances, value):
        return covariances + value

    def precision_cholesky(
        self, covariances, rounding_floor=True, *, floor=0.0, jitter=0.0
    ):
        # One variance for all features: the floor of the largest mean.
        floor = np.max(floor, axis=-1) if np.ndim(floor) == 2 else floor
        return DIAG.precision_cholesky(covariances, rounding_floor, floor=floor)

    def log_det_precision_cholesky(self, prec_chol, n_features):
        return n_features * np.log(prec_chol)

    def precision(self, prec_chol):
        return prec_chol**2

    def from_precision(self, precisions):
        return DIAG.from_precision(precisions)

    def trace_precision(self, prec_chol, M, n_features):
        # M is a trace: tr(sigma^-2 M) = tr(M) / sigma^2.
        return M * prec_chol**2

    def mahalanobis(self, Xc, mu_c, prec_chol):
        prec = prec_chol**2
        out = Xc @ (-2.0 * mu_c.T)
        out += np.einsum("ij,ij->i", Xc, Xc)[:, None]
        out += (mu_c * mu_c).sum(axis=1)
        return out * prec

    def dense(self, covariances, state, n_features):
        # The variance on the diagonal, zeros elsewhere (no 0 * inf).
        return np.diag(np.full(n_features, np.asarray(covariances)[state]))

    def from_matrix(self, matrix, n_states):
        return np.full(n_states, np.mean(np.diag(np.asarray(matrix, dtype=float))))

    def layout(self, covariances, n_states, name):
        """One variance per state, ``(n_states,)``; also any shape with
        ``n_states`` rows of one repeated value (hmmlearn keeps the variance
        repeated for every feature, ``(n_states, n_features)``)."""
        c = np.asarray(covariances, dtype=float)
        if c.shape == (n_states,):
            return c.copy()
        if c.ndim > 1 and c.shape[0] == n_states and c.size:
            rows = c.reshape(n_states, -1)
            if np.all(rows == rows[:, :1]):
                return rows[:, 0].copy()
        raise ValueError(
            f"{name} must have shape ({n_states},) with the spherical structure "
            f"(one variance per state), got {c.shape}"
        )

    def sample(self, rng, mean, covariances, state, n):
        d = np.shape(mean)[0]
        scale = np.sqrt(np.asarray(covariances)[state])
        return mean + rng.standard_normal((int(n), d)) * scale


FULL, TIED, DIAG, SPHERICAL = Full(), Tied(), Diag(), Spherical()
_BY_NAME = {c.name: c for c in (FULL, TIED, DIAG, SPHERICAL)}


def covariance_from_name(name: str) -> Covariance:
    """The covariance object named full, tied, diag or spherical."""
    return _BY_NAME[name]
