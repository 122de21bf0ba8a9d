"""Quadratic discriminant analysis: Gaussian classes, one covariance each.

The class is one latent node; its emission is the Gaussian family of
:mod:`bayeskit.emissions` with one full covariance per class
(``Gaussian(FULL)``). Statistics add, so ``partial_fit`` over chunks equals
one ``fit``.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy import linalg

from .._base.classifier import BaseGenerativeClassifier, Triple, keep_input_dtype
from .._base.rounding import singular_at_rounding
from .._validation import (
    HasMethods,
    Interval,
    StrOptions,
    check_covariance_prior,
)
from .._warnings import warn
from ..emissions import FULL, Gaussian, GaussianParams
from ..graph import LatentNode
from ..priors.niw import NormalInverseWishart
from ._gaussian_classifier import (
    _GaussianClassifier,
    _raise_not_full_rank,
)

__all__ = ["QuadraticDiscriminantAnalysis"]

_LOG_2PI = np.log(2.0 * np.pi)


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
    unlabeled, unlabeled_weight
        The marker of unlabelled rows in ``y`` and their weight in EM (see
        :class:`LinearDiscriminantAnalysis`).
    max_iter : int, default=100
        Only when ``X`` has missing values (NaN): the most E-steps of EM over
        them (see Notes). Not used on complete data.
    em_tol : float, default=1e-6
        Only when ``X`` has missing values: EM stops when an iteration changes
        the objective per sample (``lower_bounds_``) by at most ``em_tol``
        times its magnitude (at least 1). ``tol`` is scikit-learn's rank
        threshold, hence the name.

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
    n_iter_ : int
        With missing values (NaN) in the fit's ``X``: the E-steps of EM over
        them; 1 on complete data (the closed-form estimate, one step).
    lower_bounds_ : list of float
        With missing values: the objective at the start and after every
        accelerated iteration (the observed-data log-likelihood plus the log
        prior, per sample); it never decreases.
    n_features_in_, feature_names_in_, stats_
    em_n_iter_, em_lower_bound_, em_lower_bounds_, em_converged_
        After a fit with unlabelled rows (see :class:`LinearDiscriminantAnalysis`).

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
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "em_tol": [Interval(Real, 0, None, closed="left")],
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
        unlabeled=None,
        unlabeled_weight=1.0,
        max_iter=100,
        em_tol=1e-6,
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
        self.unlabeled = unlabeled
        self.unlabeled_weight = unlabeled_weight
        self.max_iter = max_iter
        self.em_tol = em_tol

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

    def _make_components(self) -> Triple:
        """The class node, the Gaussian family with a full covariance per
        class, and the covariance prior: ``covariance_prior_weight`` virtual
        samples of ``covariance_prior``, shrunk toward the identity by
        ``reg_param`` with 'svd'."""
        d = self.n_features_in_
        prior = NormalInverseWishart.from_covariance(
            check_covariance_prior(self.covariance_prior, d),
            self.covariance_prior_weight,
            shrink=self.reg_param if self.solver == "svd" else 0.0,
        )
        return Triple(LatentNode(len(self.classes_)), Gaussian(FULL, d), prior)

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
        components = self._components()
        self._family = components.emission
        full = self._family.covariance
        means, base = components.prior.map(full, gstats)
        cov = self._shrunk_covariances(stats, base) if self.solver == "eigen" else base
        self.priors_ = np.exp(self.class_log_prior_)
        self.means_ = means
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
            # The rounding test in every feature's own units: a feature of
            # order 1e-8 beside one of 1e8 is not a collinearity.
            self.precisions_cholesky_ = full.precision_cholesky(
                cov, rounding_floor=False
            )
            regularised = (
                eta > 0
                or self.reg_param > 0
                or self.shrinkage is not None
                or self.covariance_estimator is not None
            )
            for label, c, m in zip(self.classes_, cov, means):
                if singular_at_rounding(
                    "full", c[None], m[None], floor=not regularised
                ):
                    self._check_rank(label, d + 1, d, 0.0, full=False)
        except np.linalg.LinAlgError:
            self._check_rank(self.classes_[0], d + 1, d, 0.0, full=False)
        self._params = GaussianParams(
            self.means_,
            cov,
            self.precisions_cholesky_,
            full.log_det_precision_cholesky(self.precisions_cholesky_, d),
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
        return self._family.log_likelihood(X, self._params)

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
