"""Linear discriminant analysis: Gaussian classes with one shared covariance.

The class is one latent node; its emission is the Gaussian family of
:mod:`bayeskit.emissions` with a covariance tied across classes
(``Gaussian(TIED)``). Statistics (class weights, means, every class's centred
scatter matrix) add, so ``partial_fit`` over chunks equals one ``fit``. The
solvers ('svd', 'lsqr', 'eigen', shrinkage) give the whitening of the tied
covariance; its densities and class scores are the tied structure's.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy import linalg
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin

from .._base.classifier import BaseGenerativeClassifier, Triple, keep_input_dtype
from .._collections import handler_for
from .._logmath import has_nan
from .._validation import (
    HasMethods,
    Interval,
    StrOptions,
    check_is_fitted,
)
from ..emissions import FULL, TIED, Gaussian, GaussianParams
from ..emissions._gaussian_missing import completed_rows
from ..graph import LatentNode
from ..priors.niw import NormalInverseWishart
from ._gaussian_classifier import (
    _correlation_factor,
    _EstimatedCovariances,
    _GaussianClassifier,
    _ledoit_wolf,
    _LedoitWolfStats,
    _pinv_factor,
    _shrunk,
    _std,
)

__all__ = ["LinearDiscriminantAnalysis"]

_LOG_2PI = np.log(2.0 * np.pi)


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
    unlabeled : object, default=None
        The label that marks a row of ``y`` as unlabelled: -1 as in
        scikit-learn's ``sklearn.semi_supervised``, a string such as ``"?"``
        for string labels, or ``np.nan`` for NaN and None. None (the default):
        every label is a class. Unlabelled rows are fitted by semi-supervised
        EM (see :ref:`semi_supervised`); ``classes_`` never holds the marker.
    unlabeled_weight : float, default=1.0
        The weight lambda of the unlabelled rows' statistics in that EM
        (Nigam et al., 2000): 1 counts an unlabelled row as a labelled one, 0
        leaves the unlabelled rows out.
    max_iter : int, default=100
        Only when ``X`` has missing values (NaN): the most E-steps of EM over
        them (see Notes). Not used on complete data.
    em_tol : float, default=1e-6
        Only when ``X`` has missing values: EM stops when an iteration changes
        the objective per sample (``lower_bounds_``) by at most ``em_tol``
        times its magnitude (at least 1). ``tol`` is scikit-learn's threshold
        of the 'svd' solver, hence the name.

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
    n_iter_ : int
        With missing values (NaN) in the fit's ``X``: the E-steps of EM over
        them; 1 on complete data (the closed-form estimate, one step).
    lower_bounds_ : list of float
        With missing values: the objective at the start and after every
        accelerated iteration (the observed-data log-likelihood per sample);
        it never decreases.
    n_features_in_, feature_names_in_, stats_
    em_n_iter_ : int
        Iterations of semi-supervised EM, after a fit with unlabelled rows (see
        :ref:`semi_supervised`).
    em_lower_bound_ : float
        Its objective at the fitted parameters.
    em_lower_bounds_ : list of float
        The objective of the labelled start and after every iteration.
    em_converged_ : bool
        Whether EM stopped at its tolerance rather than its iteration limit.

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

    Missing values (NaN) in ``X`` are latent: the fit is EM over them with
    the class known (Ghahramani and Jordan 1994), and prediction
    marginalises them; ``shrinkage='auto'`` and a ``covariance_estimator``
    need complete rows (a ValueError). scikit-learn rejects NaN. EM starts
    from the available-case means and covariances (Little and Rubin 2002)
    and is accelerated by squared extrapolation (SQUAREM; Varadhan and
    Roland 2008), kept monotone. Each E-step factors the covariance's
    observed block for every pattern of missing cells, so a fit costs up to
    ``max_iter`` passes of ``O(n_features^3)`` per incomplete row where
    complete data take one pass; when a maximum-likelihood covariance
    does not exist (too few rows observe some pairs of features together)
    the objective keeps rising toward a singular covariance until
    ``max_iter``, with a ``ConvergenceWarning``: a ``shrinkage`` (or
    QDA's ``covariance_prior_weight``) gives EM an interior optimum.

    Differences from scikit-learn, all on inputs scikit-learn does not take:
    the statistics are gathered in float64 whatever the input dtype (float32
    input still gives float32 attributes); "the number of samples" in its
    checks counts the rows of positive ``sample_weight``; with a singular
    within-class covariance, 'lsqr' predicts as scikit-learn's (the
    minimum-norm solution) and :meth:`predict_joint_log_proba` is the density
    on the subspace the covariance spans. Its rank is the pseudo-inverse's
    (eigenvalues at or below ``n_features * eps`` times the largest are
    zero): scikit-learn's least squares cuts at ``eps`` times the largest,
    inside the rounding of a covariance that is singular in exact arithmetic
    (fewer rows than features, duplicated or constant columns), and then
    sometimes keeps a rounding-level direction, with coefficients of up to
    ``1 / eps`` along it; bayeskit's coefficients are the minimum-norm ones
    there. 'eigen' raises on a covariance singular to that test, where
    scikit-learn's may return directions from rounding noise.

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
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "em_tol": [Interval(Real, 0, None, closed="left")],
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
        unlabeled=None,
        unlabeled_weight=1.0,
        max_iter=100,
        em_tol=1e-6,
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
        self.unlabeled = unlabeled
        self.unlabeled_weight = unlabeled_weight
        self.max_iter = max_iter
        self.em_tol = em_tol

    def _needs_total_covariance(self) -> bool:
        return self.solver == "eigen"

    _ties_covariance = True
    _missing_advice = "set a shrinkage with solver='lsqr' or 'eigen'"

    def _make_components(self) -> Triple:
        """The class node, the Gaussian family with a covariance tied across
        the classes, and the flat prior (the solvers' shrinkage acts on the
        estimate itself)."""
        return Triple(
            LatentNode(len(self.classes_)),
            Gaussian(TIED, self.n_features_in_),
            NormalInverseWishart(),
        )

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
        components = self._components()
        self._family = components.emission
        tied = self._family.covariance
        # As scikit-learn, 'lsqr' and 'eigen' pool the classes' (shrunk)
        # covariances by the priors; 'svd' whitens the maximum-likelihood tied
        # covariance, the classes' scatter pooled by their weights.
        class_cov = self._shrunk_covariances(stats, self._ml_covariances(gstats))
        within = tied.pool(class_cov, self.priors_)
        if self.solver == "svd":
            if self.store_covariance:
                self.covariance_ = within
            cov = components.prior.map(tied, gstats)[1]
            whitening = self._solve_svd(gstats, cov)
        else:
            self.covariance_ = cov = within
            if self.solver == "eigen":
                whitening = self._solve_eigen(stats, within)
            else:
                whitening = _pinv_factor(within)
            coef = (self.means_ @ whitening) @ whitening.T
            self._set_linear(coef, -0.5 * np.sum(self.means_ * coef, axis=1))
        # The densities and class scores are the tied structure's, with this
        # whitening W (W W^T the covariance's pseudo-inverse) in coordinates
        # centred on the data.
        self._params = GaussianParams(
            self.means_,
            cov,
            whitening,
            _log_pseudo_determinant(whitening),
            gstats.grand_mean(),
        )
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
        self.xbar_ = self.priors_ @ self.means_
        k = len(self.classes_)
        fac = 1.0 if k == 1 else 1.0 / (k - 1)
        n = stats.weight.sum()
        between = (
            np.sqrt(n * self.priors_ * fac)[:, None] * (self.means_ - self.xbar_)
        ) @ scalings
        _, sb, vt = linalg.svd(between, full_matrices=False)
        total = np.sum(sb**2)  # 0 when every class has the same mean
        ratio = sb**2 / total if total > 0 else np.zeros_like(sb)
        self.explained_variance_ratio_ = ratio[: self._max_components]
        rank_b = int(np.sum(sb > self.tol * sb[0]))
        self.scalings_ = scalings @ vt.T[:, :rank_b]
        coef = (self.means_ - self.xbar_) @ self.scalings_
        intercept = -0.5 * np.sum(coef**2, axis=1)
        coef = coef @ self.scalings_.T
        self._set_linear(coef, intercept - self.xbar_ @ coef.T)
        return scalings

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
            # A covariance singular to rounding (its correlation matrix has an
            # eigenvalue at or below d * eps * max) is an error here, not
            # directions from rounding noise.
            if _correlation_factor(within) is None:
                raise np.linalg.LinAlgError
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
        """``log p(x | y)`` without the part every class shares: linear in ``x``."""
        return self._family.relative_log_likelihood(X, self._params)

    def _log_likelihood(self, X):
        return self._family.log_likelihood(X, self._params)

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
        if (handler := handler_for(X)) is not None:
            return handler.predict(self, "decision_function", X)
        check_is_fitted(self)
        X = self._prepare_X(X, reset=False)
        scores = X @ self.coef_.T.astype(np.float64) + self.intercept_
        incomplete = np.isnan(X).any(axis=1) if has_nan(X) else None
        if incomplete is not None and incomplete.any():
            # Rows with missing values: the marginal joint log-likelihood.
            joint = self._family.log_likelihood(X[incomplete], self._params)
            joint += self.class_log_prior_
            if len(self.classes_) == 2:
                joint = joint[:, 1:] - joint[:, :1]
            scores[incomplete] = joint
        return scores[:, 0] if len(self.classes_) == 2 else scores

    def transform(self, X):
        """Project onto the Fisher discriminant directions.

        A row with missing values (NaN) is projected at its expected value
        given its observed values: every class's conditional mean of the
        missing values, weighted by the class posterior.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
        """
        if (handler := handler_for(X)) is not None:
            return handler.predict(self, "transform", X)
        check_is_fitted(self)
        if self.solver == "lsqr":
            raise NotImplementedError(
                "transform not implemented for 'lsqr' solver: it computes no "
                "discriminant directions; use solver='svd' or solver='eigen'"
            )
        X = self._prepare_X(X, reset=False)
        missing = np.isnan(X)
        if missing.any():
            # A row with missing values is projected at its expected value
            # given its observed ones: the classes' conditional means,
            # weighted by the class posterior.
            post = np.exp(self._log_posterior(X))
            filled = completed_rows(self._family.covariance, X, self._params, missing)
            X = np.einsum("nk,nkd->nd", post, filled)
        if self.solver == "svd":
            out = (X - self.xbar_) @ self.scalings_
        else:
            out = X @ self.scalings_
        return out[:, : self._max_components]

    @property
    def _n_features_out(self):
        return self._max_components


def _log_pseudo_determinant(whitening) -> float:
    """``sum log s`` over the non-zero singular values ``s`` of the whitening:
    a direction it drops (a column that underflowed to zero, on data near
    the float limits) is left out of the log-determinant as it is out of the
    quadratic form, the pseudo-inverse's convention."""
    s = linalg.svdvals(whitening)
    return float(np.sum(np.log(s[s > 0])))
