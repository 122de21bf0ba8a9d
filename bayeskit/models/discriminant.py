"""Gaussian discriminant analysis: linear (shared covariance) and quadratic.

The class is one latent node; its emission is a Gaussian with a covariance
tied across classes (LDA) or one per class (QDA), the shared Gaussian family
of :mod:`bayeskit.emissions`. Statistics (class weights, means, centred
scatter matrices) add, so ``partial_fit`` over chunks equals one ``fit``.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy import linalg
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin, clone

from .._validation import (
    HasMethods,
    Interval,
    StrOptions,
    check_covariance_prior,
    check_is_fitted,
    validate_data,
)
from .._warnings import warn
from ..emissions import FULL, Gaussian, GaussianStats
from ..emissions import GaussianParams as _GaussianParams
from ..emissions.covariance import row_blocks
from .base import BaseGenerativeClassifier, float_input, keep_input_dtype

__all__ = ["LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis"]

_LOG_2PI = np.log(2.0 * np.pi)
_GAUSSIAN = Gaussian(FULL)
_EPS = np.finfo(np.float64).eps


# -- statistics -----------------------------------------------------------------
@dataclass(frozen=True)
class _DAStats:
    """Gaussian statistics, the rows of positive weight of every class, and the
    parts of a covariance estimate that need all the data at once (``whole``).

    ``gaussian`` and ``rows`` add; statistics with a ``whole`` part do not.
    """

    gaussian: GaussianStats
    rows: np.ndarray
    whole: object = None

    def __add__(self, other):
        whole = self.whole if self.whole is not None else other.whole
        if whole is not None:
            raise ValueError(whole.merge_error)
        return _DAStats(self.gaussian + other.gaussian, self.rows + other.rows)


@dataclass(frozen=True)
class _LedoitWolfStats:
    """The fourth moments Ledoit-Wolf shrinkage needs.

    ``q_class[k] = sum_i w_i ||(x_i - mu_k) / sigma_k||^4`` over class k's rows
    and ``q_total`` the same around the overall mean and standard deviation.
    They depend on the means of all the data, so they do not merge.
    """

    q_class: np.ndarray
    q_total: float | None
    merge_error = (
        "shrinkage='auto' (Ledoit-Wolf) needs all the data at once: use fit, or "
        "a float shrinkage with partial_fit"
    )


@dataclass(frozen=True)
class _EstimatedCovariances:
    """Covariances fitted by a ``covariance_estimator`` on each class's rows
    (``class_cov``) and on all the rows (``total_cov``, when needed)."""

    class_cov: np.ndarray
    total_cov: np.ndarray | None
    merge_error = (
        "a covariance_estimator needs all the data at once: use fit, not partial_fit"
    )


def _std(variances):
    std = np.sqrt(variances)
    return np.where(std == 0, 1.0, std)


def _ledoit_wolf(cov: np.ndarray, q: float, weight: float) -> np.ndarray:
    """Ledoit-Wolf shrunk covariance of standardized data, scaled back.

    ``cov`` is the maximum-likelihood covariance, ``q`` the weighted sum of
    the fourth powers of the norms of the standardized rows. The shrinkage
    intensity is Ledoit and Wolf's (2004), on the correlation matrix as
    scikit-learn's discriminant analysis does.
    """
    d = cov.shape[0]
    std = _std(np.diag(cov))
    corr = cov / np.outer(std, std)
    mu = np.trace(corr) / d
    delta_ = np.sum(corr**2)
    beta = (q / weight - delta_) / (d * weight)
    delta = (delta_ - 2.0 * mu * np.trace(corr) + d * mu**2) / d
    beta = min(beta, delta)
    alpha = 0.0 if beta == 0 else beta / delta
    shrunk = (1.0 - alpha) * corr + alpha * mu * np.eye(d)
    return shrunk * np.outer(std, std)


def _shrunk(cov: np.ndarray, alpha: float) -> np.ndarray:
    """``(1 - alpha) cov + alpha mu I`` with ``mu`` the mean variance."""
    d = cov.shape[0]
    return (1.0 - alpha) * cov + alpha * np.trace(cov) / d * np.eye(d)


def _fourth_moment(Xc: np.ndarray, std: np.ndarray, w: np.ndarray, labels, k):
    """``sum_i w_i ||Xc_i / std_i||^4`` per label (``std`` per row's label)."""
    z = np.einsum("ij,ij->i", Xc / std, Xc / std)
    return np.bincount(labels, w * z**2, minlength=k)


def _pinv_factor(cov: np.ndarray) -> np.ndarray:
    """``W`` of shape ``(d, rank)`` with ``W W^T`` the pseudo-inverse of ``cov``.

    Eigenvalues at or below ``eps * max`` count as zero: the cut-off of the
    minimum-norm least-squares solution (LAPACK ``gelsd`` with scipy's default
    ``cond``), so that ``W W^T mu`` is scikit-learn's ``lstsq(cov, mu)``.
    """
    evals, evecs = linalg.eigh(cov)
    keep = evals > _EPS * max(evals.max(), 0.0)
    if not keep.any():
        raise np.linalg.LinAlgError("the within-class covariance is zero")
    return evecs[:, keep] / np.sqrt(evals[keep])


def _check_priors(priors, k: int) -> np.ndarray:
    """Priors as a probability vector; renormalised with a warning (as
    scikit-learn's LDA) when they do not sum to one."""
    p = np.asarray(priors, dtype=float)
    if p.shape != (k,):
        raise ValueError(f"priors must have shape ({k},), got shape {p.shape}")
    if not np.all(np.isfinite(p)):
        raise ValueError(f"priors must be finite, got {p}")
    if (p < 0).any():
        raise ValueError(f"priors must be non-negative, got {p}")
    total = p.sum()
    if total <= 0:
        raise ValueError("priors must not all be zero")
    if abs(total - 1.0) > 1e-5:
        warn(
            f"The priors do not sum to 1 (they sum to {total:.6g}): renormalizing them",
            UserWarning,
        )
    return p / total


def _raise_not_full_rank(label, advice):
    raise np.linalg.LinAlgError(
        f"The covariance matrix of class {label} is not full rank. {advice}"
    )


class _GaussianClassifier(BaseGenerativeClassifier):
    """Validation, statistics and covariance estimates shared by LDA and QDA."""

    _solvers_with_shrinkage = ("lsqr", "eigen")

    def _prepare_X(self, X, reset, sample_weight=None):
        X = validate_data(self, X, reset=reset, dtype=[np.float64, np.float32])
        if reset:
            self._dtype = X.dtype
        return float_input(X)

    def _check_solver(self) -> None:
        """Combinations of solver, shrinkage and covariance estimator."""
        name = type(self).__name__
        if self.solver == "svd" and self.shrinkage is not None:
            others = " or ".join(repr(s) for s in self._solvers_with_shrinkage)
            raise NotImplementedError(
                f"shrinkage not supported with solver='svd' in {name}: use solver="
                f"{others}"
            )
        if self.covariance_estimator is not None:
            if self.solver == "svd":
                others = " or ".join(repr(s) for s in self._solvers_with_shrinkage)
                raise ValueError(f"{self._svd_estimator_error}; use solver={others}")
            if self.shrinkage is not None and self.shrinkage != 0:
                raise ValueError(
                    "covariance_estimator and shrinkage parameters are not None. "
                    "Only one of the two can be set: pass shrinkage=None to use "
                    "the covariance_estimator"
                )

    def _needs_total_covariance(self) -> bool:
        return False

    def _emission_stats(self, X, weights, labels):
        self._check_solver()
        k = weights.shape[1]
        w = weights[np.arange(len(labels)), labels]
        gstats = _GAUSSIAN.stats(X, weights, labels)
        rows = np.bincount(labels[w > 0], minlength=k).astype(float)
        whole = None
        if self.covariance_estimator is not None:
            whole = self._estimated_covariances(X, w, labels, k)
        elif self.shrinkage == "auto":
            cov = self._ml_covariances(gstats)
            std_k = np.stack([_std(np.diag(c)) for c in cov])
            Xc = X - gstats.mean[labels]
            q_class = _fourth_moment(Xc, std_k[labels], w, labels, k)
            q_total = None
            if self._needs_total_covariance():
                mean = gstats.grand_mean()
                var = np.average((X - mean) ** 2, axis=0, weights=w)
                q_total = _fourth_moment(X - mean, _std(var), w, 0 * labels, 1)[0]
            whole = _LedoitWolfStats(q_class, q_total)
        return _DAStats(gstats, rows, whole)

    def _estimated_covariances(self, X, w, labels, k):
        """Fit a clone of ``covariance_estimator`` on each class's rows."""
        if not np.all((w == 0) | (w == 1)):
            raise ValueError(
                "sample_weight must be 0 or 1 with a covariance_estimator (it is "
                "fitted on the rows of positive weight); use shrinkage for "
                "weighted rows"
            )

        def fit(rows):
            est = clone(self.covariance_estimator, safe=False)
            est.fit(rows)
            if not hasattr(est, "covariance_"):
                raise ValueError(
                    f"covariance_estimator {type(est).__name__} does not have a "
                    "covariance_ attribute after fit"
                )
            return np.atleast_2d(np.asarray(est.covariance_, dtype=float))

        keep = w > 0
        class_cov = np.stack([fit(X[keep & (labels == c)]) for c in range(k)])
        total = fit(X[keep]) if self._needs_total_covariance() else None
        return _EstimatedCovariances(class_cov, total)

    @staticmethod
    def _ml_covariances(stats: GaussianStats) -> np.ndarray:
        """Maximum-likelihood covariance of every class, ``(K, d, d)``."""
        return FULL.covariances(
            stats.scatter, stats.weight, 0.0, np.eye(stats.mean.shape[1]), 0.0
        )

    def _shrunk_covariances(self, stats: _DAStats, base: np.ndarray) -> np.ndarray:
        """Every class's covariance as ``shrinkage`` or the estimator says."""
        whole = stats.whole
        if isinstance(whole, _EstimatedCovariances):
            return whole.class_cov
        if isinstance(whole, _LedoitWolfStats):
            weight = stats.gaussian.weight
            return np.stack(
                [_ledoit_wolf(c, q, n) for c, q, n in zip(base, whole.q_class, weight)]
            )
        if self.shrinkage is not None:
            return np.stack([_shrunk(c, self.shrinkage) for c in base])
        return base

    def _checked_priors(self, k: int):
        """Priors that do not sum to one are renormalised with a warning."""
        return None if self.priors is None else _check_priors(self.priors, k)

    def _update_params(self) -> None:
        try:
            super()._update_params()
        except Exception:
            # A fit that fails leaves the estimator unfitted.
            for attr in [
                a for a in vars(self) if a.endswith("_") and not a.startswith("_")
            ]:
                delattr(self, attr)
            raise


class LinearDiscriminantAnalysis(
    ClassNamePrefixFeaturesOutMixin, TransformerMixin, _GaussianClassifier
):
    """Gaussian classes with one shared covariance: the linear discriminant.

    A drop-in for scikit-learn's ``LinearDiscriminantAnalysis`` (same solvers,
    shrinkage, covariance estimators, attributes and transform), plus ``costs``,
    ``prior_m``, ``sample_weight`` and ``partial_fit``.

    Parameters
    ----------
    solver : {'svd', 'lsqr', 'eigen'}, default='svd'
        'svd' needs no covariance inverse (it handles collinear features) and
        does no shrinkage; 'lsqr' solves for the class scores by least squares
        (a singular covariance gives the minimum-norm solution); 'eigen' also
        gives the Fisher directions of :meth:`transform` and needs a
        non-singular within-class covariance.
    shrinkage : 'auto', float or None, default=None
        With 'lsqr' and 'eigen': the covariance of each class shrinks toward a
        multiple of the identity, by Ledoit-Wolf's intensity ('auto', on the
        standardized data) or by this fraction in [0, 1].
    priors : array-like of shape (n_classes,), default=None
        Class prior probabilities; None estimates them from the class counts.
        Priors that do not sum to one are renormalised, with a warning.
    n_components : int, default=None
        Number of Fisher directions kept by :meth:`transform`, at most
        ``min(n_classes - 1, n_features)`` (the default).
    store_covariance : bool, default=False
        With 'svd', also store ``covariance_`` (the other solvers always do).
    tol : float, default=1e-4
        With 'svd', singular values of the within-class scaled data below
        ``tol`` are treated as zero (collinear directions are dropped).
    covariance_estimator : estimator with ``fit`` and ``covariance_``, default=None
        With 'lsqr' and 'eigen': a covariance estimator (such as those of
        ``sklearn.covariance``) fitted, as a clone, on each class's rows in
        place of the empirical covariance; exclusive with ``shrinkage``. It
        needs all the data in one ``fit`` and 0/1 sample weights.
    prior_m : float, default=0.0
        m-estimate of the class prior (see :class:`~bayeskit.CategoricalNB`).
    costs : array-like of shape (n_classes,) or (n_classes, n_classes), default=None
        Misclassification costs for :meth:`predict`.

    Attributes
    ----------
    classes_, class_count_, class_log_prior_
        As every bayeskit classifier.
    priors_ : ndarray of shape (n_classes,)
    means_ : ndarray of shape (n_classes, n_features)
    covariance_ : ndarray of shape (n_features, n_features)
        The within-class covariance ``sum_k priors_[k] Sigma_k`` (with shrinkage).
    coef_ : ndarray of shape (n_features,) or (n_classes, n_features)
    intercept_ : ndarray of shape (n_classes,)
        ``X @ coef_.T + intercept_`` are the class scores
        ``x^T Sigma^{-1} mu_y - mu_y^T Sigma^{-1} mu_y / 2 + log P(y)`` (for two
        classes, the difference of the second and the first).
    scalings_ : ndarray of shape (rank, n_classes - 1) or (n_features, n_features)
        The Fisher directions ('svd' and 'eigen').
    xbar_ : ndarray of shape (n_features,)
        Overall mean, weighted by the priors ('svd').
    explained_variance_ratio_ : ndarray of shape (n_components,)
        Share of the between-class variance along each direction.
    n_features_in_, feature_names_in_, stats_

    See Also
    --------
    QuadraticDiscriminantAnalysis, GaussianNB

    Notes
    -----
    With a shared covariance the log posterior odds are linear in ``x``
    (Hastie, Tibshirani and Friedman, *The Elements of Statistical Learning*,
    2009, section 4.3),

    .. math::

        \\log P(y \\mid x) = x^T \\Sigma^{-1} \\mu_y
            - \\tfrac12 \\mu_y^T \\Sigma^{-1} \\mu_y + \\log P(y) + c(x),

    and for two classes with equal priors the boundary is the hyperplane
    :math:`w^T (x - (\\mu_1 + \\mu_2)/2) = 0`, :math:`w = \\Sigma^{-1}(\\mu_1 -
    \\mu_2)` (Fisher's linear discriminant). As in scikit-learn, 'lsqr' and
    'eigen' weight the class covariances by ``priors_``, and 'svd' pools the
    within-class scatter by the class counts.

    Differences from scikit-learn, all on inputs scikit-learn does not take:
    the statistics are gathered in float64 whatever the input dtype (float32
    input still gives float32 attributes); "the number of samples" in its
    checks counts the rows of positive ``sample_weight``; with a singular
    within-class covariance, 'lsqr' predicts as scikit-learn's (the
    minimum-norm solution) and :meth:`predict_joint_log_proba` is the density
    on the subspace the covariance spans.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import LinearDiscriminantAnalysis
    >>> X = np.array([[-1, -1], [-2, -1], [-3, -2], [1, 1], [2, 1], [3, 2]])
    >>> y = np.array([1, 1, 1, 2, 2, 2])
    >>> LinearDiscriminantAnalysis().fit(X, y).predict([[-0.8, -1]])
    array([1])
    """

    _parameter_constraints: dict = {
        **BaseGenerativeClassifier._parameter_constraints,
        "solver": [StrOptions({"svd", "lsqr", "eigen"})],
        "shrinkage": [StrOptions({"auto"}), Interval(Real, 0, 1, closed="both"), None],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "store_covariance": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "covariance_estimator": [HasMethods("fit"), None],
    }
    _svd_estimator_error = "covariance estimator is not supported with svd solver"

    def __init__(
        self,
        solver="svd",
        shrinkage=None,
        priors=None,
        n_components=None,
        store_covariance=False,
        tol=1e-4,
        covariance_estimator=None,
        *,
        prior_m=0.0,
        costs=None,
    ):
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.n_components = n_components
        self.store_covariance = store_covariance
        self.tol = tol
        self.covariance_estimator = covariance_estimator
        self.prior_m = prior_m
        self.costs = costs

    def _needs_total_covariance(self) -> bool:
        return self.solver == "eigen"

    def _set_emission_params(self, stats):
        gstats = stats.gaussian
        k, d = gstats.mean.shape
        if stats.rows.sum() <= k:
            raise ValueError(
                "The number of samples must be more than the number of classes "
                f"({k}): every class needs two samples for a within-class covariance"
            )
        max_components = min(k - 1, d)
        if self.n_components is not None and self.n_components > max_components:
            raise ValueError(
                "n_components cannot be larger than min(n_features, n_classes - 1) "
                f"= {max_components}; got n_components={self.n_components}"
            )
        self._max_components = self.n_components or max_components
        self.priors_ = np.exp(self.class_log_prior_)
        self.means_ = gstats.mean
        ml_cov = self._ml_covariances(gstats)
        class_cov = self._shrunk_covariances(stats, ml_cov)
        within = np.einsum("k,kij->ij", self.priors_, class_cov)
        if self.solver == "svd":
            if self.store_covariance:
                self.covariance_ = within
            freq = gstats.weight / gstats.weight.sum()
            self._solve_svd(gstats, np.einsum("k,kij->ij", freq, ml_cov))
            pooled = within
        else:
            self.covariance_ = pooled = within
            if self.solver == "eigen":
                self._whitening = self._solve_eigen(stats, within)
            else:
                self._whitening = _pinv_factor(within)
            coef = (self.means_ @ self._whitening) @ self._whitening.T
            self._set_linear(coef, -0.5 * np.sum(self.means_ * coef, axis=1))
        # Class scores in coordinates centred on the data: precise far from 0.
        self._center = gstats.grand_mean()
        white_means = (self.means_ - self._center) @ self._whitening
        self._score_coef = white_means @ self._whitening.T
        self._score_intercept = -0.5 * np.sum(white_means**2, axis=1)
        self._log_det = np.sum(np.log(linalg.svdvals(self._whitening)))
        # Centring costs a pass over X; it only buys precision when the data sit
        # far from the origin compared with their spread (rounding of x^T A then
        # grows with |x| / sigma): below 1e3 the two forms agree to ~1e-13.
        spread = np.sqrt(np.maximum(np.diag(pooled), np.finfo(float).tiny))
        self._centred_scores = np.max(np.abs(self._center) / spread) > 1e3
        keep_input_dtype(
            self,
            self._dtype,
            "priors_",
            "means_",
            "covariance_",
            "coef_",
            "intercept_",
            "scalings_",
            "xbar_",
            "explained_variance_ratio_",
        )

    def _set_linear(self, coef, intercept_no_prior):
        """``coef_`` and ``intercept_`` as scikit-learn defines them."""
        intercept = intercept_no_prior + self.class_log_prior_
        if len(self.classes_) == 2:
            self.coef_ = (coef[1] - coef[0])[None, :]
            self.intercept_ = np.array([intercept[1] - intercept[0]])
        else:
            self.coef_, self.intercept_ = coef, intercept

    def _solve_svd(self, stats, within):
        """scikit-learn's SVD solver, computed from the statistics.

        The within-class scaled data's singular values and directions are the
        eigen-decomposition of its Gram matrix, which the scatter gives.
        """
        std = _std(np.diag(within))
        gram = within / np.outer(std, std)
        evals, evecs = linalg.eigh(gram)
        order = np.argsort(evals)[::-1]
        s = np.sqrt(np.clip(evals[order], 0, None))
        rank = int(np.sum(s > self.tol))
        if rank == 0:
            raise np.linalg.LinAlgError("every feature is constant within the classes")
        scalings = (evecs[:, order[:rank]] / std[:, None]) / s[:rank]
        self._whitening = scalings
        self.xbar_ = self.priors_ @ self.means_
        k = len(self.classes_)
        fac = 1.0 if k == 1 else 1.0 / (k - 1)
        n = stats.weight.sum()
        between = (
            np.sqrt(n * self.priors_ * fac)[:, None] * (self.means_ - self.xbar_)
        ) @ scalings
        _, sb, vt = linalg.svd(between, full_matrices=False)
        self.explained_variance_ratio_ = (sb**2 / np.sum(sb**2))[: self._max_components]
        rank_b = int(np.sum(sb > self.tol * sb[0]))
        self.scalings_ = scalings @ vt.T[:, :rank_b]
        coef = (self.means_ - self.xbar_) @ self.scalings_
        intercept = -0.5 * np.sum(coef**2, axis=1)
        coef = coef @ self.scalings_.T
        self._set_linear(coef, intercept - self.xbar_ @ coef.T)

    def _solve_eigen(self, stats, within):
        """Fisher's directions: the generalised eigenvectors of (S_b, S_w).

        They are ``S_w``-orthonormal, so they also whiten: ``V V^T = S_w^{-1}``.
        """
        g = stats.gaussian
        whole = stats.whole
        if isinstance(whole, _EstimatedCovariances):
            total = whole.total_cov
        else:
            between = FULL.outer(g.mean - g.grand_mean(), g.weight)
            total = (g.scatter + between).sum(axis=0) / g.weight.sum()
            if isinstance(whole, _LedoitWolfStats):
                total = _ledoit_wolf(total, whole.q_total, g.weight.sum())
            elif self.shrinkage is not None:
                total = _shrunk(total, self.shrinkage)
        try:
            evals, evecs = linalg.eigh(total - within, within)
        except np.linalg.LinAlgError:
            raise np.linalg.LinAlgError(
                "the within-class covariance is singular (collinear or constant "
                "features), which solver='eigen' cannot use: set shrinkage, or "
                "use solver='svd' or solver='lsqr'"
            ) from None
        self.explained_variance_ratio_ = np.sort(evals / np.sum(evals))[::-1][
            : self._max_components
        ]
        self.scalings_ = evecs[:, np.argsort(evals)[::-1]]
        return self.scalings_

    # -- prediction ----------------------------------------------------------------
    def _class_scores(self, X):
        """``log p(x | y)`` without ``-x^T Sigma^{-1} x / 2`` and the normaliser."""
        if not self._centred_scores:
            out = X @ self._score_coef.T
            out += self._score_intercept - self._center @ self._score_coef.T
            return out
        out = np.empty((X.shape[0], len(self.classes_)))
        for rows in row_blocks(X.shape[0], X.shape[1]):
            out[rows] = (X[rows] - self._center) @ self._score_coef.T
        out += self._score_intercept
        return out

    def _log_likelihood(self, X):
        rank = self._whitening.shape[1]
        row = np.empty(X.shape[0])
        for rows in row_blocks(X.shape[0], X.shape[1] + rank):
            white = (X[rows] - self._center) @ self._whitening
            row[rows] = np.einsum("ij,ij->i", white, white)
        row = -0.5 * (row + rank * _LOG_2PI) + self._log_det
        return self._class_scores(X) + row[:, None]

    def decision_function(self, X):
        """``X @ coef_.T + intercept_``: the log posterior up to a constant per row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For two classes, the log odds of the second class.
        """
        check_is_fitted(self)
        X = self._prepare_X(X, reset=False)
        scores = X @ self.coef_.T.astype(np.float64) + self.intercept_
        return scores[:, 0] if len(self.classes_) == 2 else scores

    def transform(self, X):
        """Project onto the Fisher discriminant directions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
        """
        check_is_fitted(self)
        if self.solver == "lsqr":
            raise NotImplementedError(
                "transform not implemented for 'lsqr' solver: it computes no "
                "discriminant directions; use solver='svd' or solver='eigen'"
            )
        X = self._prepare_X(X, reset=False)
        if self.solver == "svd":
            out = (X - self.xbar_) @ self.scalings_
        else:
            out = X @ self.scalings_
        return out[:, : self._max_components]

    @property
    def _n_features_out(self):
        return self._max_components


class QuadraticDiscriminantAnalysis(_GaussianClassifier):
    """Gaussian classes, each with its own covariance: the quadratic discriminant.

    A drop-in for scikit-learn's ``QuadraticDiscriminantAnalysis`` (``solver``,
    ``shrinkage``, ``priors``, ``reg_param``, ``store_covariance``, ``tol``,
    ``covariance_estimator``), plus the MAP covariance prior of the mixtures,
    ``costs``, ``prior_m``, ``sample_weight`` and ``partial_fit``.

    Parameters
    ----------
    solver : {'svd', 'eigen'}, default='svd'
        'svd': the class covariances are the (``reg_param``-regularised)
        maximum-likelihood estimates, and a class needs more samples than
        features (as scikit-learn's, whose SVD of the class's centred rows has
        no more directions than rows). 'eigen': the class covariances come
        from ``shrinkage`` or ``covariance_estimator``; ``reg_param`` is not
        used (a warning says so).
    shrinkage : 'auto', float or None, default=None
        With 'eigen': each class covariance shrinks toward a multiple of the
        identity, by Ledoit-Wolf's intensity ('auto', on the standardized data)
        or by this fraction in [0, 1].
    priors : array-like of shape (n_classes,), default=None
        Class prior probabilities; None estimates them from the class counts.
        Priors that do not sum to one are renormalised, with a warning.
    reg_param : float in [0, 1], default=0.0
        With 'svd': shrinks every covariance toward the identity,
        ``(1 - reg_param) Sigma_c + reg_param I`` (as scikit-learn).
    store_covariance : bool, default=False
        Store the class covariances in ``covariance_``.
    tol : float, default=1e-4
        A class covariance with an eigenvalue at or below ``tol`` is not full
        rank: a ``numpy.linalg.LinAlgError`` names the remedies.
    covariance_estimator : estimator with ``fit`` and ``covariance_``, default=None
        With 'eigen': a covariance estimator (such as those of
        ``sklearn.covariance``) fitted, as a clone, on each class's rows;
        exclusive with ``shrinkage``. It needs all the data in one ``fit`` and
        0/1 sample weights.
    covariance_prior : array-like of shape (n_features, n_features), default=None
        The prior scatter ``S`` of the MAP covariance estimate; None is the
        identity.
    covariance_prior_weight : float, default=0.0
        Its weight ``eta`` (virtual samples): ``Sigma_c = (S_c + eta S) / (n_c +
        eta)`` with ``S_c`` the class scatter matrix. With ``eta > 0`` a class
        with a single sample, fewer samples than features, or collinear
        features is still a well-defined model (with either solver). Not
        combined with ``shrinkage`` or ``covariance_estimator``.
    prior_m : float, default=0.0
        m-estimate of the class prior.
    costs : array-like of shape (n_classes,) or (n_classes, n_classes), default=None
        Misclassification costs for :meth:`predict`.

    Attributes
    ----------
    classes_, class_count_, class_log_prior_
        As every bayeskit classifier.
    priors_ : ndarray of shape (n_classes,)
    means_ : ndarray of shape (n_classes, n_features)
    covariance_ : list of ndarray of shape (n_features, n_features)
        With ``store_covariance``: the class covariances.
    rotations_ : list of ndarray of shape (n_features, n_features)
        Eigenvectors of each class covariance.
    scalings_ : list of ndarray of shape (n_features,)
        Its eigenvalues, in decreasing order.
    precisions_cholesky_ : ndarray of shape (n_classes, n_features, n_features)
        Factors ``P_c`` with ``P_c P_c^T = Sigma_c^{-1}``.
    n_features_in_, feature_names_in_, stats_

    See Also
    --------
    LinearDiscriminantAnalysis, GaussianNB

    Notes
    -----
    The class-conditional densities are Gaussian with their own covariance, so
    the log posterior is quadratic in ``x`` (Hastie, Tibshirani and Friedman,
    *The Elements of Statistical Learning*, 2009, section 4.3); Gaussian naive
    Bayes (diagonal covariances) and LDA (one shared covariance) are its
    special cases. With 'svd' the covariance estimate is

    .. math::

        \\Sigma_c = (1 - r) \\frac{S_c + \\eta S}{n_c + \\eta} + r I,

    the maximum-likelihood estimate for ``eta = r = 0`` (scikit-learn's).

    Differences from scikit-learn: priors that do not sum to one are
    renormalised with a warning (scikit-learn's QDA takes their logarithm as
    given, which shifts ``decision_function`` by a constant and leaves
    ``predict`` and ``predict_proba`` unchanged); negative priors are an
    error. "Samples" of a class in its checks count the rows of positive
    ``sample_weight``. The statistics are gathered in float64 whatever the
    input dtype (float32 input still gives float32 attributes).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import QuadraticDiscriminantAnalysis
    >>> X = np.array([[-1, -1], [-2, -1], [-3, -2], [1, 1], [2, 1], [3, 2]])
    >>> y = np.array([1, 1, 1, 2, 2, 2])
    >>> QuadraticDiscriminantAnalysis().fit(X, y).predict([[-0.8, -1]])
    array([1])
    """

    _parameter_constraints: dict = {
        **BaseGenerativeClassifier._parameter_constraints,
        "solver": [StrOptions({"svd", "eigen"})],
        "shrinkage": [StrOptions({"auto"}), Interval(Real, 0, 1, closed="both"), None],
        "reg_param": [Interval(Real, 0, 1, closed="both")],
        "store_covariance": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "covariance_estimator": [HasMethods("fit"), None],
        "covariance_prior": ["array-like", None],
        "covariance_prior_weight": [Interval(Real, 0, None, closed="left")],
    }
    _solvers_with_shrinkage = ("eigen",)
    _svd_estimator_error = "covariance_estimator is not supported with solver='svd'"

    def __init__(
        self,
        *,
        solver="svd",
        shrinkage=None,
        priors=None,
        reg_param=0.0,
        store_covariance=False,
        tol=1e-4,
        covariance_estimator=None,
        covariance_prior=None,
        covariance_prior_weight=0.0,
        prior_m=0.0,
        costs=None,
    ):
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.reg_param = reg_param
        self.store_covariance = store_covariance
        self.tol = tol
        self.covariance_estimator = covariance_estimator
        self.covariance_prior = covariance_prior
        self.covariance_prior_weight = covariance_prior_weight
        self.prior_m = prior_m
        self.costs = costs

    def _check_solver(self):
        super()._check_solver()
        if self.covariance_prior_weight > 0 and (
            self.covariance_estimator is not None or self.shrinkage is not None
        ):
            raise ValueError(
                "covariance_prior_weight > 0 is a covariance estimate of its own: "
                "set shrinkage=None and covariance_estimator=None to use it, or "
                "covariance_prior_weight=0"
            )
        if self.solver == "eigen" and self.reg_param != 0:
            warn(
                "reg_param is not used by solver='eigen' (as in scikit-learn); "
                "use shrinkage to regularise the covariances",
                UserWarning,
            )

    def _set_emission_params(self, stats):
        gstats = stats.gaussian
        d = gstats.mean.shape[1]
        eta = self.covariance_prior_weight
        if eta == 0:
            for label, rows in zip(self.classes_, stats.rows):
                if rows <= 1:
                    raise ValueError(
                        f"y has only {int(rows)} sample in class {label}, covariance "
                        "is ill defined: set covariance_prior_weight > 0 for a MAP "
                        "estimate"
                    )
        base = FULL.covariances(
            gstats.scatter,
            gstats.weight,
            eta,
            check_covariance_prior(self.covariance_prior, d),
            0.0,
            self.reg_param if self.solver == "svd" else 0.0,
        )
        cov = self._shrunk_covariances(stats, base) if self.solver == "eigen" else base
        self.priors_ = np.exp(self.class_log_prior_)
        self.means_ = np.where(
            gstats.weight[:, None] > 0, gstats.mean, gstats.grand_mean()
        )
        self.rotations_, self.scalings_ = [], []
        for label, rows, c in zip(self.classes_, stats.rows, cov):
            self._check_rank(label, rows, d, eta)
            evals, evecs = linalg.eigh(c)
            order = np.argsort(evals)[::-1]
            if np.sum(evals > self.tol) < d:
                self._check_rank(label, rows, d, eta, full=False)
            self.rotations_.append(evecs[:, order])
            self.scalings_.append(evals[order])
        if self.store_covariance:
            self.covariance_ = list(cov)
        try:
            self.precisions_cholesky_ = FULL.precision_cholesky(cov)
        except np.linalg.LinAlgError:
            self._check_rank(self.classes_[0], d + 1, d, 0.0, full=False)
        self._params = _GaussianParams(
            self.means_,
            cov,
            self.precisions_cholesky_,
            FULL.log_det_precision_cholesky(self.precisions_cholesky_, d),
            gstats.grand_mean(),
        )
        keep_input_dtype(
            self,
            self._dtype,
            "means_",
            "covariance_",
            "rotations_",
            "scalings_",
            "precisions_cholesky_",
        )

    def _check_rank(self, label, rows, d, eta, full=True):
        """Raise scikit-learn's rank errors (``full=False``: the covariance is
        known not to be full rank); with ``full=True``, only the 'svd' case of a
        class with fewer rows than features, which is never full rank there."""
        svd_rows = self.solver == "svd" and eta == 0
        if full and not (svd_rows and rows < d):
            return
        if svd_rows and rows <= d:
            _raise_not_full_rank(
                label,
                f"When using `solver='svd'` a class needs more samples than "
                f"features, but class {label} has {int(rows)} samples and {d} "
                "features: use solver='eigen' with shrinkage, or "
                "covariance_prior_weight > 0.",
            )
        param = "shrinkage" if self.solver == "eigen" else "reg_param"
        _raise_not_full_rank(
            label,
            f"Increase `{param}` to reduce the collinearity, or set "
            "covariance_prior_weight > 0.",
        )

    def _log_likelihood(self, X):
        return _GAUSSIAN.log_likelihood(X, self._params)

    def decision_function(self, X):
        """Log posterior up to a constant per row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For two classes, the log odds of the second class; otherwise
            ``log p(x | y) + log P(y)`` without the ``(2 pi)^(-d/2)`` factor, as
            scikit-learn's.
        """
        scores = self.predict_joint_log_proba(X)
        if len(self.classes_) == 2:
            return scores[:, 1] - scores[:, 0]
        # scikit-learn's scores leave out the normaliser (2 pi)^(-d/2).
        return scores + 0.5 * self.n_features_in_ * _LOG_2PI
