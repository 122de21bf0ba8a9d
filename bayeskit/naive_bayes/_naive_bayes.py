"""Naive Bayes with m-estimate smoothing: CategoricalNB and GaussianNB.

The class is one latent node of the graph core; each feature sends it an
emission message, ``log P(x_j | y)``, and the features are independent given
the class. Missing values (NaN, None, pd.NA) are marginalised: a missing
feature is left out of its row's statistics and product.

Each estimator is its triple (:meth:`_make_components`): the class node, an
emission family (a product of categorical tables, a diagonal Gaussian, or the
:class:`~bayeskit.emissions.product.Product` of the two) and its prior; how it
reads ``X`` is in :mod:`bayeskit._base.categorical` (the categorical
columns, through the one encoder of :mod:`bayeskit._base.encoding`) and
:mod:`bayeskit.naive_bayes._numeric`.
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from .._base.categorical import (
    CATEGORICAL_CONSTRAINTS,
    CategoricalTables,
    MEstimate,
    read_categorical,
)
from .._base.classifier import BaseGenerativeClassifier, Triple
from .._base.encoding import categorical_input_tags
from .._base.triple import TripleClassifier
from .._validation import Interval
from .._warnings import warn
from ..graph import LatentNode
from ._numeric import (
    NaiveGaussian,
    VarianceSmoothing,
    read_float,
)

__all__ = ["CategoricalNB", "GaussianNB"]

_ALPHA_MIN = 1e-10


def _is_default_alpha(alpha) -> bool:
    return isinstance(alpha, Real) and alpha == 1.0


def _sklearn_smoothing(
    est, categories: list, features: str = "n_features"
) -> MEstimate:
    """The m-estimate of CategoricalNB's tables (and MixedNB's categorical
    columns, ``features="n_categorical"``), from ``alpha`` or from ``m``."""
    if est.m is not None:
        if not _is_default_alpha(est.alpha):
            raise ValueError(
                "give either alpha (scikit-learn's additive smoothing, e.g. "
                "alpha=1.0) or m (the m-estimate, e.g. m=2.0, p=...), not "
                "both; alpha=a is m = a * n_categories_ with uniform p"
            )
        return MEstimate.of(est.m, est.p, categories)
    if est.p is not None:
        raise ValueError(
            "p is the prior of the m-estimate and needs m (e.g. m=2.0, p=...); "
            "alpha smooths toward the uniform distribution"
        )
    d = len(categories)
    alpha = np.asarray(est.alpha, dtype=float)
    if alpha.ndim > 1 or (alpha.ndim == 1 and alpha.shape != (d,)):
        raise ValueError(
            f"alpha must be a number or have shape ({d},) ({features}), got "
            f"shape {alpha.shape}"
        )
    if not np.all(np.isfinite(alpha)) or (alpha < 0).any():
        raise ValueError("All values in alpha must be greater than 0.")
    if not est.force_alpha and (alpha < _ALPHA_MIN).any():
        warn(
            "alpha too small will result in numeric errors, setting alpha = "
            f"{_ALPHA_MIN:.1e}; use force_alpha=True to keep alpha as it is",
            UserWarning,
        )
        alpha = np.maximum(alpha, _ALPHA_MIN)
    n_categories = np.array([len(c) for c in categories])
    return MEstimate.of(alpha * n_categories, None, categories)


def _discrete_class_prior(est, k: int):
    """scikit-learn's ``class_prior`` / ``fit_prior`` of the discrete naive Bayes."""
    if est.class_prior is not None:
        prior = np.asarray(est.class_prior, dtype=float)
        if prior.ndim != 1 or prior.shape[0] != k:
            raise ValueError(
                "Number of priors must match number of classes: class_prior has "
                f"shape {prior.shape}, there are {k} classes"
            )
        if not np.all(np.isfinite(prior)) or (prior < 0).any():
            raise ValueError(
                f"class_prior must be finite and non-negative, got {prior}"
            )
        if not np.isclose(prior.sum(), 1.0):
            warn(
                f"class_prior sums to {prior.sum():g}, not 1: class_log_prior_ and "
                "predict_joint_log_proba use it as given (as scikit-learn does); "
                "the class posterior is normalised",
                UserWarning,
            )
        return prior
    if not est.fit_prior:
        return np.full(k, 1.0 / k)
    return None


def _gaussian_class_prior(est, k: int):
    """GaussianNB's ``priors``, checked as scikit-learn checks them, in its
    order: length, sum, sign."""
    if est.priors is None:
        return None
    priors = np.asarray(est.priors, dtype=float)
    if priors.ndim != 1 or priors.shape[0] != k:
        raise ValueError(
            "Number of priors must match number of classes: priors has shape "
            f"{priors.shape}, there are {k} classes"
        )
    if not np.isclose(priors.sum(), 1.0):
        raise ValueError(
            f"The sum of the priors should be 1: priors sums to {priors.sum():g}"
        )
    if (priors < 0).any():
        raise ValueError(f"Priors must be non-negative: priors={priors}")
    return priors


def _in_input_dtype(est, value):
    """A fitted attribute in the dtype of the training data (float32 data give
    float32 attributes, as scikit-learn's; everything is computed in float64)."""
    return np.asarray(value, np.float32) if est._dtype == np.float32 else value


class CategoricalNB(TripleClassifier):
    """Naive Bayes for categorical features: scikit-learn's, plus the m-estimate.

    A drop-in for scikit-learn's ``CategoricalNB``: its parameters
    (``alpha``, ``force_alpha``, ``fit_prior``, ``class_prior``,
    ``min_categories``) mean what they mean there, with the same defaults, and
    numeric features are category codes ``0, 1, 2, ...`` (a feature's
    categories are ``0 .. max``; an object column of numbers too, as
    scikit-learn casts it to integers). Beside them, features may hold any labels
    (strings, objects, booleans, pandas categoricals) with no encoder, values
    may be missing, and the tables may be smoothed by the m-estimate.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive (Laplace/Lidstone) smoothing: ``alpha`` pseudo-counts for
        every category of a feature (an array: one value per feature). Used
        when ``m`` is None.
    force_alpha : bool, default=True
        If False, an ``alpha`` below 1e-10 is set to 1e-10 with a warning; if
        True it is used as it is (``alpha=0`` is the maximum-likelihood
        estimate).
    fit_prior : bool, default=True
        Whether to estimate the class prior from the class counts; if False
        the prior is uniform. Ignored when ``class_prior`` is given.
    class_prior : array-like of shape (n_classes,), default=None
        Class prior probabilities, used as given (not estimated from data).
    min_categories : int or array-like of shape (n_features,), default=None
        For features coded ``0, 1, 2, ...``: at least this many categories,
        so that codes unseen in fit are known categories.
    m : float or array-like of shape (n_features,), default=None
        The m-estimate instead of ``alpha``: equivalent sample size of every
        table. ``m=0`` is the maximum-likelihood estimate. None uses ``alpha``
        (``alpha`` is the m-estimate with uniform ``p`` and ``m = alpha t_j``).
        Giving ``m`` and a non-default ``alpha`` is an error.
    p : list of array-like, default=None
        Prior distribution of each feature's categories for the m-estimate
        (one array of length ``t_j`` per feature, in the order of
        ``categories_``); needs ``m``. None is uniform, ``1 / t_j``.
    prior_m : float, default=0.0
        m-estimate of the class prior: ``P(y=c) = (n_c + prior_m / n_classes) /
        (n + prior_m)``; 0 gives the relative frequencies. Used when
        ``fit_prior`` is True and ``class_prior`` is None.
    costs : array-like of shape (n_classes,) or (n_classes, n_classes), default=None
        Misclassification costs for :meth:`predict`: a vector (the cost of
        misclassifying each true class) or a matrix ``C[true, predicted]``.
    categories : {'auto', 'observed'} or list of array-like, default='auto'
        The categories of each feature, in the order of the columns of its
        table. 'auto': a numeric feature's are the codes ``0 .. max`` (as
        scikit-learn, which reads a pandas categorical of numbers as its
        values, too), a pandas categorical's its own categories in their
        order (those absent from the data included), any other feature's the
        values seen in fit, sorted. 'observed': the same, but a numeric
        feature's are its values seen in fit too (negative or with gaps). A
        list: these labels, in this order (those absent from the data kept;
        ``None`` for a feature leaves it to 'observed').
    handle_unknown : {'ignore', 'error'}, default='ignore'
        A value never seen in fit at predict time: leave the feature out of
        that row's product, or raise a ValueError.
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

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
        Weighted number of training rows per class.
    class_log_prior_ : ndarray of shape (n_classes,)
    categories_ : list of ndarray
        Categories of each feature.
    n_categories_ : ndarray of shape (n_features,)
        Number of categories of each feature, as the tables have them (after
        a ``partial_fit``, scikit-learn's counts only the codes of the last
        chunk).
    category_count_ : list of ndarray of shape (n_classes, t_j)
        Weighted counts of each category per class.
    feature_log_prob_ : list of ndarray of shape (n_classes, t_j)
        ``log P(x_j = a | y = c)``.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Defined when X is a DataFrame with string column names.
    stats_ : ClassifierStats
        The merged sufficient statistics.
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
    GaussianNB, MixedNB

    Notes
    -----
    The tables are the m-estimate (Mitchell, 1997)

    .. math::

        P(x_j = a \\mid y = c) = \\frac{n_{c,j,a} + m_j p_{j,a}}{n_{c,j} + m_j}

    and the posterior is :math:`P(y \\mid x) \\propto P(y) \\prod_j P(x_j \\mid y)`
    over the observed features. ``alpha`` is its case :math:`m_j = \\alpha t_j`,
    :math:`p_{j,a} = 1 / t_j`. A row whose every class has probability zero
    (possible with ``m=0`` or ``alpha=0``) falls back to the prior with a
    warning.

    Where scikit-learn's CategoricalNB rejects the input, bayeskit answers:
    missing values (NaN, None, pd.NA, pd.NaT) are left out of the product, a code beyond
    the fitted categories at predict time is ignored (``handle_unknown``),
    and ``partial_fit`` adds the new values of a later call as categories
    (labels after the existing ones). A ``class_prior`` that does not sum to
    one is used as given, as scikit-learn does (the posterior is normalised
    anyway), with a warning. Fractional numeric values are truncated to
    codes, as scikit-learn does, with a warning.

    A feature that looks continuous warns (``UserWarning``) in ``fit`` and in
    the first ``partial_fit``: one observed (not missing, positive weight)
    in more than 20 rows with more than half as many distinct values as those
    rows. Each of its values is then a category seen about once, and its
    table learns next to nothing; such a feature belongs in
    :class:`GaussianNB` or :class:`MixedNB`, or binned first. MixedNB's
    categorical columns and :class:`TreeAugmentedNB` follow the same rule.

    References
    ----------
    T. Mitchell, *Machine Learning*, 1997, section 6.9.1.

    Examples
    --------
    >>> from bayeskit import CategoricalNB
    >>> from bayeskit.datasets import load_playtennis
    >>> df = load_playtennis()
    >>> X, y = df.drop(columns="PlayTennis"), df["PlayTennis"]
    >>> clf = CategoricalNB(m=0).fit(X, y)
    >>> day = X.iloc[:1].assign(Outlook="Sunny", Temperature="Cool",
    ...                         Humidity="High", Wind="Strong")
    >>> clf.predict(day)
    array(['No'], dtype=object)
    >>> clf.predict_proba(day).round(4)
    array([[0.7954, 0.2046]])
    """

    _parameter_constraints: dict = {
        **CATEGORICAL_CONSTRAINTS,
        "m": [Interval(Real, 0, None, closed="left"), "array-like", None],
        "alpha": [Interval(Real, 0, None, closed="left"), "array-like"],
        "force_alpha": ["boolean"],
        "fit_prior": ["boolean"],
        "class_prior": ["array-like", None],
    }
    del _parameter_constraints["priors"]

    _min_classes = 1
    _partial_fit_requires_classes = True
    _numeric_codes = True  # categories='auto': numeric features are codes
    _read = read_categorical
    _checked_priors = _discrete_class_prior

    def _encoded_columns(self, X) -> list:
        """Every column is categorical."""
        return list(range(X.shape[1]))

    def __init__(
        self,
        *,
        alpha=1.0,
        force_alpha=True,
        fit_prior=True,
        class_prior=None,
        min_categories=None,
        m=None,
        p=None,
        prior_m=0.0,
        costs=None,
        categories="auto",
        handle_unknown="ignore",
        unlabeled=None,
        unlabeled_weight=1.0,
    ):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.min_categories = min_categories
        self.m = m
        self.p = p
        self.prior_m = prior_m
        self.costs = costs
        self.categories = categories
        self.handle_unknown = handle_unknown
        self.unlabeled = unlabeled
        self.unlabeled_weight = unlabeled_weight

    def _make_components(self) -> Triple:
        categories = self._encoder.categories
        return Triple(
            LatentNode(len(self.classes_)),
            CategoricalTables([len(c) for c in categories]),
            _sklearn_smoothing(self, categories),
        )

    def _emission_log_prior(self) -> float:
        # The Dirichlet under which the m-estimated tables are the MAP.
        return self._triple.prior.log_density(self._params)

    @property
    def categories_(self) -> list:
        return self._encoder.categories

    @property
    def n_categories_(self) -> np.ndarray:
        return self._triple.emission.n_categories.astype(np.int64)

    @property
    def category_count_(self) -> list:
        return self._triple.emission.tables(self.stats_.emission.counts)

    @property
    def feature_log_prob_(self) -> list:
        return self._triple.emission.tables(self._params.log_prob)

    def __sklearn_tags__(self):
        tags = categorical_input_tags(super().__sklearn_tags__())
        tags.input_tags.positive_only = True  # numeric codes are 0, 1, 2, ...
        return tags


class GaussianNB(TripleClassifier):
    """Gaussian naive Bayes with an m-estimate of the class variances.

    Parameters
    ----------
    var_smoothing : float, default=1e-9
        As scikit-learn: ``var_smoothing`` times the largest feature variance
        is added to every variance.
    m : float, default=0.0
        The m-estimate's Gaussian analogue: each class variance shrinks toward
        the pooled within-class variance of its feature with ``m`` virtual
        samples. 0 is the maximum-likelihood variance; as ``m`` grows the
        classes share one variance per feature and the decision boundary
        becomes linear.
    priors : array-like of shape (n_classes,), default=None
        Class prior probabilities. None estimates them from the class counts.
    prior_m : float, default=0.0
        m-estimate of the class prior (see :class:`CategoricalNB`).
    costs : array-like of shape (n_classes,) or (n_classes, n_classes), default=None
        Misclassification costs for :meth:`predict` (see :class:`CategoricalNB`).
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

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
    class_log_prior_ : ndarray of shape (n_classes,)
    class_prior_ : ndarray of shape (n_classes,)
    theta_ : ndarray of shape (n_classes, n_features)
        Mean of each feature per class.
    var_ : ndarray of shape (n_classes, n_features)
        Variance of each feature per class (after smoothing).
    epsilon_ : float
        What ``var_smoothing`` added to every variance.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
    stats_ : ClassifierStats
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
    CategoricalNB, MixedNB

    Notes
    -----
    With :math:`S_{cj}` class c's sum of squared deviations of feature j and
    :math:`s_j^2 = \\sum_c S_{cj} / n` the pooled within-class variance,

    .. math::

        \\sigma^2_{cj} = \\frac{S_{cj} + m\\, s_j^2}{n_c + m} + \\epsilon .

    The statistics (two passes: the means, then the squared deviations from
    them) and the joint log-likelihood of all rows (one pass) take deviations
    from the class means, so data far from the origin (a feature of 1e6 +- 1)
    keeps its precision. Missing values (NaN) are left out of the statistics
    and the product.

    The statistics are gathered in float64 whatever the dtype of X; float32
    input gives float32 fitted attributes, as in scikit-learn. ``priors`` are
    checked as scikit-learn checks them (one per class, sum
    one, non-negative); a single class in ``y`` is fitted, as there.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import GaussianNB
    >>> X = np.array([[-1.0, -1], [-2, -1], [-3, -2], [1, 1], [2, 1], [3, 2]])
    >>> y = np.array([1, 1, 1, 2, 2, 2])
    >>> GaussianNB().fit(X, y).predict([[-0.8, -1]])
    array([1])
    """

    _parameter_constraints: dict = {
        **BaseGenerativeClassifier._parameter_constraints,
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
        "m": [Interval(Real, 0, None, closed="left")],
    }

    _min_classes = 1
    _unobserved_class_is_error = True  # no prior defines a blank class
    _observed_weight_in_stats = True  # the diagonal weight, (n_classes, d)
    _partial_fit_requires_classes = True
    _read = read_float
    _checked_priors = _gaussian_class_prior

    def __init__(
        self,
        *,
        var_smoothing=1e-9,
        m=0.0,
        priors=None,
        prior_m=0.0,
        costs=None,
        unlabeled=None,
        unlabeled_weight=1.0,
    ):
        self.var_smoothing = var_smoothing
        self.m = m
        self.priors = priors
        self.prior_m = prior_m
        self.costs = costs
        self.unlabeled = unlabeled
        self.unlabeled_weight = unlabeled_weight

    def _make_components(self) -> Triple:
        return Triple(
            LatentNode(len(self.classes_)),
            NaiveGaussian(self.n_features_in_),
            VarianceSmoothing(self.m, self.var_smoothing),
        )

    @property
    def theta_(self) -> np.ndarray:
        return _in_input_dtype(self, self._params.means)

    @property
    def var_(self) -> np.ndarray:
        return _in_input_dtype(self, self._params.covariances)

    @property
    def class_prior_(self) -> np.ndarray:
        return _in_input_dtype(self, np.exp(self.class_log_prior_))

    @property
    def epsilon_(self) -> float:
        return self._triple.prior.epsilon(self.stats_.emission)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags
