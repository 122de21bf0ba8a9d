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
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin

from .._validation import (
    Interval,
    StrOptions,
    check_covariance_prior,
    check_is_fitted,
    validate_data,
)
from ..emissions import FULL, Gaussian, GaussianStats
from ..emissions import GaussianParams as _GaussianParams
from ..emissions.covariance import precision_cholesky, row_blocks
from .base import BaseGenerativeClassifier

__all__ = ["LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis"]

_LOG_2PI = np.log(2.0 * np.pi)
_GAUSSIAN = Gaussian(FULL)


def _validate_float(est, X, reset):
    return validate_data(est, X, reset=reset, dtype=np.float64)


# -- Ledoit-Wolf shrinkage from statistics -------------------------------------
@dataclass(frozen=True)
class _LedoitWolfStats:
    """Gaussian statistics plus the fourth moments Ledoit-Wolf shrinkage needs.

    ``q_class[k] = sum_i w_i ||(x_i - mu_k) / sigma_k||^4`` over class k's rows
    and ``q_total`` the same around the overall mean and standard deviation.
    They depend on the means of all the data, so they do not merge.
    """

    gaussian: GaussianStats
    q_class: np.ndarray
    q_total: float

    def __add__(self, other):
        raise ValueError(
            "shrinkage='auto' (Ledoit-Wolf) needs all the data at once: use fit, or "
            "a float shrinkage with partial_fit"
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


class _GaussianClassifier(BaseGenerativeClassifier):
    """Validation and full-covariance statistics shared by LDA and QDA."""

    def _prepare_X(self, X, reset, sample_weight=None):
        return _validate_float(self, X, reset)

    def _emission_stats(self, X, weights, labels):
        return _GAUSSIAN.stats(X, weights, labels)

    def _class_covariances(self, stats: GaussianStats) -> np.ndarray:
        """Maximum-likelihood covariance of every class, ``(K, d, d)``."""
        return FULL.covariances(
            stats.scatter, stats.weight, 0.0, np.eye(stats.mean.shape[1]), 0.0
        )


class LinearDiscriminantAnalysis(
    ClassNamePrefixFeaturesOutMixin, TransformerMixin, _GaussianClassifier
):
    """Gaussian classes with one shared covariance: the linear discriminant.

    A drop-in for scikit-learn's ``LinearDiscriminantAnalysis`` (same solvers,
    shrinkage, attributes and transform), plus ``costs``, ``prior_m``,
    ``sample_weight`` and ``partial_fit``.

    Parameters
    ----------
    solver : {'svd', 'lsqr', 'eigen'}, default='svd'
        'svd' needs no covariance inverse (it handles collinear features) and
        does no shrinkage; 'lsqr' solves for the class scores; 'eigen' also
        gives the Fisher directions of :meth:`transform`.
    shrinkage : 'auto', float or None, default=None
        With 'lsqr' and 'eigen': the covariance of each class shrinks toward a
        multiple of the identity, by Ledoit-Wolf's intensity ('auto', on the
        standardized data) or by this fraction in [0, 1].
    priors : array-like of shape (n_classes,), default=None
        Class prior probabilities; None estimates them from the class counts.
    n_components : int, default=None
        Number of Fisher directions kept by :meth:`transform`, at most
        ``min(n_classes - 1, n_features)`` (the default).
    store_covariance : bool, default=False
        With 'svd', also store ``covariance_`` (the other solvers always do).
    tol : float, default=1e-4
        With 'svd', singular values of the within-class scaled data below
        ``tol`` are treated as zero (collinear directions are dropped).
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
        The within-class covariance (with shrinkage).
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
    Reference notes 000 (12.3) and 002 (Fisher's linear discriminant): with
    a shared covariance the log posterior odds are linear in ``x``,

    .. math::

        \\log P(y \\mid x) = x^T \\Sigma^{-1} \\mu_y
            - \\tfrac12 \\mu_y^T \\Sigma^{-1} \\mu_y + \\log P(y) + c(x),

    and for two classes with equal priors the boundary is the hyperplane
    :math:`w^T (x - (\\mu_1 + \\mu_2)/2) = 0`, :math:`w = \\Sigma^{-1}(\\mu_1 -
    \\mu_2)`. The covariance is the pooled within-class maximum-likelihood
    estimate, weighted by the class counts. scikit-learn's 'lsqr' and 'eigen'
    weight the class covariances by ``priors`` instead; the two agree when the
    priors are the class frequencies (the default).

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
    }

    def __init__(
        self,
        solver="svd",
        shrinkage=None,
        priors=None,
        n_components=None,
        store_covariance=False,
        tol=1e-4,
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
        self.prior_m = prior_m
        self.costs = costs

    def _emission_stats(self, X, weights, labels):
        stats = super()._emission_stats(X, weights, labels)
        if self.shrinkage != "auto":
            return stats
        w = weights[np.arange(len(labels)), labels]
        cov = self._class_covariances(stats)
        std_k = np.stack([_std(np.diag(c)) for c in cov])
        z = ((X - stats.mean[labels]) / std_k[labels]) ** 2
        q_class = np.bincount(labels, w * z.sum(axis=1) ** 2, minlength=len(cov))
        mean = stats.grand_mean()
        total_var = np.average((X - mean) ** 2, axis=0, weights=w)
        z = ((X - mean) / _std(total_var)) ** 2
        return _LedoitWolfStats(stats, q_class, float(w @ z.sum(axis=1) ** 2))

    def _check_solver(self):
        if self.solver == "svd" and self.shrinkage is not None:
            raise ValueError(
                "shrinkage is not supported with solver='svd'; use solver='lsqr' "
                "or solver='eigen'"
            )

    def _set_emission_params(self, stats):
        self._check_solver()
        lw = stats if isinstance(stats, _LedoitWolfStats) else None
        gstats = lw.gaussian if lw else stats
        k, d = gstats.mean.shape
        max_components = min(k - 1, d)
        if self.n_components is not None and self.n_components > max_components:
            raise ValueError(
                f"n_components={self.n_components} cannot be larger than "
                f"min(n_features, n_classes - 1) = {max_components}"
            )
        self._max_components = self.n_components or max_components
        self.priors_ = np.exp(self.class_log_prior_)
        self.means_ = gstats.mean
        freq = gstats.weight / gstats.weight.sum()
        class_cov = self._class_covariances(gstats)
        if lw is not None:
            class_cov = np.stack(
                [
                    _ledoit_wolf(c, q, w)
                    for c, q, w in zip(class_cov, lw.q_class, gstats.weight)
                ]
            )
        elif self.shrinkage is not None:
            class_cov = np.stack([_shrunk(c, self.shrinkage) for c in class_cov])
        within = np.einsum("k,kij->ij", freq, class_cov)
        if self.solver == "svd":
            self._solve_svd(gstats, within)
        else:
            self.covariance_ = within
            try:
                self._whitening = precision_cholesky(within)
            except np.linalg.LinAlgError:
                raise ValueError(
                    "the within-class covariance is singular (collinear or constant "
                    "features): set shrinkage, or use solver='svd'"
                ) from None
            coef = (self.means_ @ self._whitening) @ self._whitening.T
            self._set_linear(coef, -0.5 * np.sum(self.means_ * coef, axis=1))
            if self.solver == "eigen":
                self._solve_eigen(gstats, lw, within)
        # Class scores in coordinates centred on the data: precise far from 0.
        self._center = gstats.grand_mean()
        white_means = (self.means_ - self._center) @ self._whitening
        self._score_coef = white_means @ self._whitening.T
        self._score_intercept = -0.5 * np.sum(white_means**2, axis=1)
        self._log_det = np.sum(np.log(linalg.svdvals(self._whitening)))
        # Centring costs a pass over X; it only buys precision when the data sit
        # far from the origin compared with their spread (rounding of x^T A then
        # grows with |x| / sigma): below 1e3 the two forms agree to ~1e-13.
        spread = np.sqrt(np.maximum(np.diag(within), np.finfo(float).tiny))
        self._centred_scores = np.max(np.abs(self._center) / spread) > 1e3

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
        if self.store_covariance:
            self.covariance_ = within
        std = _std(np.diag(within))
        gram = within / np.outer(std, std)
        evals, evecs = linalg.eigh(gram)
        order = np.argsort(evals)[::-1]
        s = np.sqrt(np.clip(evals[order], 0, None))
        rank = int(np.sum(s > self.tol))
        if rank == 0:
            raise ValueError("every feature is constant within the classes")
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

    def _solve_eigen(self, stats, lw, within):
        """Fisher's directions: the generalised eigenvectors of (S_b, S_w)."""
        between = FULL.outer(stats.mean - stats.grand_mean(), stats.weight)
        total = (stats.scatter + between).sum(axis=0) / stats.weight.sum()
        if lw is not None:
            total = _ledoit_wolf(total, lw.q_total, stats.weight.sum())
        elif self.shrinkage is not None:
            total = _shrunk(total, self.shrinkage)
        evals, evecs = linalg.eigh(total - within, within)
        self.explained_variance_ratio_ = np.sort(evals / np.sum(evals))[::-1][
            : self._max_components
        ]
        self.scalings_ = evecs[:, np.argsort(evals)[::-1]]

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

        Returns shape ``(n_samples,)`` for two classes (log odds of the second).
        """
        check_is_fitted(self)
        X = _validate_float(self, X, reset=False)
        scores = X @ self.coef_.T + self.intercept_
        return scores[:, 0] if len(self.classes_) == 2 else scores

    def transform(self, X):
        """Project onto the Fisher discriminant directions, ``(n, n_components)``."""
        check_is_fitted(self)
        if self.solver == "lsqr":
            raise ValueError(
                "transform needs the discriminant directions: use solver='svd' or "
                "solver='eigen'"
            )
        X = _validate_float(self, X, reset=False)
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

    A drop-in for scikit-learn's ``QuadraticDiscriminantAnalysis`` (``priors``,
    ``reg_param``, ``store_covariance``, ``tol``), plus the MAP covariance prior
    of the mixtures, ``costs``, ``prior_m``, ``sample_weight`` and
    ``partial_fit``.

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default=None
        Class prior probabilities; None estimates them from the class counts.
    reg_param : float in [0, 1], default=0.0
        Shrinks every covariance toward the identity:
        ``(1 - reg_param) Sigma_c + reg_param I`` (as scikit-learn).
    store_covariance : bool, default=False
        Store the class covariances in ``covariance_``.
    tol : float, default=1e-4
        A class covariance with an eigenvalue at or below ``tol`` is not full
        rank: a clear error names the remedies.
    covariance_prior : array-like of shape (n_features, n_features), default=None
        The prior scatter ``S`` of the MAP covariance estimate; None is the
        identity.
    covariance_prior_weight : float, default=0.0
        Its weight ``eta`` (virtual samples): ``Sigma_c = (S_c + eta S) / (n_c +
        eta)`` with ``S_c`` the class scatter matrix. With ``eta > 0`` a class
        with fewer samples than features, or collinear features, is still a
        well-defined model.
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
    Reference notes 003: the class-conditional densities are Gaussian with
    their own covariance, so the log posterior is quadratic in ``x``;
    Gaussian naive Bayes (diagonal covariances) and LDA (one shared
    covariance) are its special cases. The covariance estimate is

    .. math::

        \\Sigma_c = (1 - r) \\frac{S_c + \\eta S}{n_c + \\eta} + r I,

    the maximum-likelihood estimate for ``eta = r = 0`` (scikit-learn's).

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
        "reg_param": [Interval(Real, 0, 1, closed="both")],
        "store_covariance": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "covariance_prior": ["array-like", None],
        "covariance_prior_weight": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        priors=None,
        reg_param=0.0,
        store_covariance=False,
        tol=1e-4,
        covariance_prior=None,
        covariance_prior_weight=0.0,
        prior_m=0.0,
        costs=None,
    ):
        self.priors = priors
        self.reg_param = reg_param
        self.store_covariance = store_covariance
        self.tol = tol
        self.covariance_prior = covariance_prior
        self.covariance_prior_weight = covariance_prior_weight
        self.prior_m = prior_m
        self.costs = costs

    def _set_emission_params(self, stats):
        d = stats.mean.shape[1]
        cov = FULL.covariances(
            stats.scatter,
            stats.weight,
            self.covariance_prior_weight,
            check_covariance_prior(self.covariance_prior, d),
            0.0,
            self.reg_param,
        )
        self.priors_ = np.exp(self.class_log_prior_)
        self.means_ = np.where(
            stats.weight[:, None] > 0, stats.mean, stats.grand_mean()
        )
        self.rotations_, self.scalings_ = [], []
        for label, c in zip(self.classes_, cov):
            evals, evecs = linalg.eigh(c)
            order = np.argsort(evals)[::-1]
            if np.sum(evals > self.tol) < d:
                raise ValueError(
                    f"the covariance matrix of class {label.tolist()!r} is not full "
                    "rank (fewer samples than features, or collinear features): set "
                    "covariance_prior_weight > 0 or reg_param > 0"
                )
            self.rotations_.append(evecs[:, order])
            self.scalings_.append(evals[order])
        if self.store_covariance:
            self.covariance_ = list(cov)
        self.precisions_cholesky_ = FULL.precision_cholesky(cov)
        self._params = _GaussianParams(
            self.means_,
            cov,
            self.precisions_cholesky_,
            FULL.log_det_precision_cholesky(self.precisions_cholesky_, d),
            stats.grand_mean(),
        )

    def _log_likelihood(self, X):
        return _GAUSSIAN.log_likelihood(X, self._params)

    def decision_function(self, X):
        """Log posterior up to a constant per row (for two classes, the log odds)."""
        scores = self.predict_joint_log_proba(X)
        return scores[:, 1] - scores[:, 0] if len(self.classes_) == 2 else scores
