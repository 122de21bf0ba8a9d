"""Gaussian emissions with a diagonal covariance (one variance per feature and state).

Missing values (NaN) are marginalised: a missing feature is left out of the
statistics of its row and of its likelihood, which for a diagonal Gaussian is
exactly the marginal density of the observed features.

Statistics are centred (weights, means, sums of squared deviations per state
and feature) and merge pairwise (Chan, Golub and LeVeque), so data far from the
origin keeps its precision. The log-likelihood of all rows is two matrix
products, computed in coordinates centred on the weighted mean of the training
data so that the expansion of the quadratic form loses no precision.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DiagonalGaussian", "DiagonalParams", "DiagonalStats"]

_LOG_2PI = np.log(2.0 * np.pi)


@dataclass(frozen=True)
class DiagonalStats:
    """Per state and feature: total weight, weighted mean, sum of squared deviations.

    All three arrays have shape ``(n_states, n_features)`` (the weight depends
    on the feature when values are missing).
    """

    weight: np.ndarray
    mean: np.ndarray
    m2: np.ndarray

    def __add__(self, other: DiagonalStats) -> DiagonalStats:
        w = self.weight + other.weight
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.where(w > 0, other.weight / np.where(w > 0, w, 1.0), 0.0)
        delta = other.mean - self.mean
        mean = self.mean + delta * frac
        m2 = self.m2 + other.m2 + delta**2 * self.weight * frac
        return DiagonalStats(w, mean, m2)

    def pooled(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Over all states: total weight, mean and within-state sum of squares.

        Returns ``(weight, mean, m2_within)`` per feature; the total sum of
        squares is ``m2_within + between``, also returned by :meth:`total_m2`.
        """
        w = self.weight.sum(axis=0)
        safe = np.where(w > 0, w, 1.0)
        mean = (self.weight * self.mean).sum(axis=0) / safe
        return w, mean, self.m2.sum(axis=0)

    def total_m2(self) -> np.ndarray:
        """Sum of squared deviations from the pooled mean, per feature."""
        _, mean, within = self.pooled()
        between = (self.weight * (self.mean - mean) ** 2).sum(axis=0)
        return within + between


@dataclass(frozen=True)
class DiagonalParams:
    """Means and variances ``(n_states, n_features)``, the centring point, and
    ``epsilon``, what ``var_smoothing`` added to every variance."""

    means: np.ndarray
    var: np.ndarray
    center: np.ndarray
    epsilon: float = 0.0


class DiagonalGaussian:
    """The emission family of Gaussian naive Bayes (diagonal covariance)."""

    @staticmethod
    def stats(
        X: np.ndarray, weights: np.ndarray, labels: np.ndarray | None = None
    ) -> DiagonalStats:
        """Weighted statistics of ``X`` (NaN = missing) for every state.

        ``labels`` may be given when every row's weight sits on one state (a
        supervised fit): the squared deviations then take one pass over ``X``.
        """
        missing = np.isnan(X)
        has_missing = missing.any()
        if has_missing:
            observed = (~missing).astype(float)
            X = np.where(missing, 0.0, X)
            weight = weights.T @ observed
        else:
            weight = np.broadcast_to(
                weights.sum(axis=0)[:, None], (weights.shape[1], X.shape[1])
            ).copy()
        safe = np.where(weight > 0, weight, 1.0)
        mean = (weights.T @ X) / safe
        if labels is not None:
            resid = X - mean[labels]
            if has_missing:
                resid *= observed
            m2 = weights.T @ (resid * resid)
        else:
            m2 = np.empty_like(mean)
            for k in range(weights.shape[1]):
                resid = X - mean[k]
                if has_missing:
                    resid *= observed
                m2[k] = weights[:, k] @ (resid * resid)
        return DiagonalStats(weight, mean, m2)

    @staticmethod
    def zeros(n_states: int, n_features: int) -> DiagonalStats:
        z = np.zeros((n_states, n_features))
        return DiagonalStats(z, z.copy(), z.copy())

    @staticmethod
    def map_params(
        stats: DiagonalStats, m: float = 0.0, var_smoothing: float = 0.0
    ) -> DiagonalParams:
        """Variances shrunk toward the pooled within-state variance.

        ``var[k, j] = (S_kj + m s_j^2) / (n_kj + m) + epsilon`` where ``S_kj`` is
        state k's sum of squared deviations of feature j, ``s_j^2`` the pooled
        within-state variance ``sum_k S_kj / n_j`` and ``epsilon =
        var_smoothing * max_j total_var_j`` (scikit-learn's ``var_smoothing``).
        A state with no observed value of a feature takes the pooled mean and
        the total variance of that feature.
        """
        n, center, within = stats.pooled()
        safe_n = np.where(n > 0, n, 1.0)
        pooled_var = within / safe_n
        total_var = stats.total_m2() / safe_n
        epsilon = var_smoothing * (total_var.max() if total_var.size else 0.0)
        den = stats.weight + m
        empty = den == 0
        var = np.where(
            empty, total_var, (stats.m2 + m * pooled_var) / np.where(empty, 1.0, den)
        )
        means = np.where(stats.weight > 0, stats.mean, center)
        return DiagonalParams(means, var + epsilon, center, float(epsilon))

    @staticmethod
    def log_likelihood(X: np.ndarray, params: DiagonalParams) -> np.ndarray:
        """``sum_j log N(x_j; mu_kj, var_kj)`` over observed features, ``(n, K)``."""
        prec = 1.0 / params.var
        mu = params.means - params.center
        Xc = X - params.center
        missing = np.isnan(Xc)
        has_missing = missing.any()
        if has_missing:
            Xc[missing] = 0.0
        per_feature = mu * mu * prec + np.log(params.var) + _LOG_2PI  # (K, d)
        out = Xc @ (mu * prec).T
        out -= 0.5 * ((Xc * Xc) @ prec.T)
        if has_missing:
            out -= 0.5 * ((~missing).astype(float) @ per_feature.T)
        else:
            out -= 0.5 * per_feature.sum(axis=1)
        return out
