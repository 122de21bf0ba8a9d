"""Naive Bayes with m-estimate smoothing: CategoricalNB, GaussianNB and MixedNB.

The class is one latent node of the graph core; each feature sends it an
emission message, ``log P(x_j | y)``, and the features are independent given
the class. Missing values (NaN, None, pd.NA) are marginalised: a missing
feature is left out of its row's statistics and product.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

from .._validation import (
    Interval,
    StrOptions,
    check_probability_vector,
    validate_data,
)
from ..emissions import DIAG, Categorical, Gaussian
from ..emissions.base import ProductStats
from ..priors.dirichlet import MEstimate
from ._encoding import (
    categorical_input_tags,
    count_out_of_range,
    encode_column,
    fit_categories,
    integer_categories,
    is_integer_matrix,
    is_missing,
)
from .base import (
    BaseGenerativeClassifier,
    ClassifierStats,
    float_input,
    keep_input_dtype,
)

__all__ = ["CategoricalNB", "GaussianNB", "MixedNB"]


def _feature_name(est, j: int) -> str:
    names = getattr(est, "feature_names_in_", None)
    return repr(names[j]) if names is not None else str(j)


def _kept_rows(sample_weight):
    """Rows of positive weight, or None when every row counts."""
    if sample_weight is None or (sample_weight > 0).all():
        return None
    return sample_weight > 0


def _validated(est, X, reset: bool):
    """Validate ``X`` without casting: a DataFrame as it is, else an ndarray."""
    if hasattr(X, "iloc"):
        validate_data(est, X, reset=reset, skip_check_array=True)
    else:
        X = validate_data(est, X, reset=reset, dtype=None, ensure_all_finite=False)
    if X.shape[0] == 0:
        raise ValueError("X has 0 samples; at least one is required")
    return X


def _columns(X) -> list:
    """The columns of a validated ``X`` as contiguous 1-d arrays."""
    if hasattr(X, "iloc"):
        return [X.iloc[:, j].to_numpy() for j in range(X.shape[1])]
    # One transposed copy: distinct values and casts of strided columns take
    # several times longer.
    return list(np.ascontiguousarray(X.T))


def _seen_values(cols, keep) -> list:
    """Distinct observed values of every column in the rows of ``keep``."""
    seen = []
    for col in cols:
        col = col if keep is None else col[keep]
        seen.append(fit_categories(col, is_missing(col)))
    return seen


def _is_coded(col) -> bool:
    """A numeric column (not boolean): category codes ``0, 1, 2, ...``."""
    return col.dtype.kind in "iuf"


def _code_values(col: np.ndarray, name: str) -> np.ndarray:
    """A numeric column as codes, ``-1`` where missing (NaN).

    As scikit-learn's CategoricalNB: negative values are an error, and
    fractional values are truncated toward zero (with a warning here).
    """
    if col.dtype.kind in "iu":
        codes = col.astype(np.intp)
        if codes.size and codes.min() < 0:
            raise ValueError(_NEGATIVE.format(name))
        return codes
    missing = np.isnan(col)
    values = np.where(missing, 0.0, col)
    if (values < 0).any():
        raise ValueError(_NEGATIVE.format(name))
    if np.isinf(values).any():
        raise ValueError(f"feature {name} of X contains infinity")
    whole = np.trunc(values)
    if (whole != values).any():
        warnings.warn(
            f"feature {name} has fractional values; numeric features are "
            "category codes and are truncated to integers (as scikit-learn "
            "does); pass categories='observed' to make each value its own "
            "category",
            UserWarning,
            stacklevel=4,
        )
    codes = whole.astype(np.intp)
    codes[missing] = -1
    return codes


_NEGATIVE = (
    "Negative values in data passed to CategoricalNB (input X): feature {} is "
    "numeric, so its values are category codes 0, 1, 2, ...; to take any "
    "numbers as labels, pass categories='observed' (or list them in categories=)"
)


class _CategoricalPart:
    """Categories, codes and m-estimate settings of the categorical columns.

    Shared by CategoricalNB, MixedNB and TreeAugmentedNB: fixed at the first
    fit (later fits may add categories), it encodes every later X the same
    way. ``seen`` holds every feature's distinct observed values in fit
    (sorted where they sort), or for a coded feature (``coded[j]``) its
    largest code (-1 if none): its categories are then ``0 .. max`` as in
    scikit-learn.
    """

    def __init__(self, seen, categories, min_categories, names, coded=None):
        self.names = names
        d = len(seen)
        if isinstance(categories, str):
            categories = [None] * d
        elif len(categories) != d:
            raise ValueError(
                f"categories has {len(categories)} entries for {d} categorical features"
            )
        self.coded = np.zeros(d, dtype=bool) if coded is None else np.asarray(coded)
        mins = np.asarray(0 if min_categories is None else min_categories)
        if mins.dtype.kind not in "iu":
            raise ValueError(
                f"'min_categories' should have integral type. Got {mins.dtype} instead."
            )
        if mins.ndim > 1 or (mins.ndim == 1 and mins.shape != (d,)):
            raise ValueError(
                f"'min_categories' should have shape ({d},) when an array-like is "
                f"provided. Got {mins.shape} instead."
            )
        mins = np.broadcast_to(mins, (d,))
        self.categories = []
        for j, observed in enumerate(seen):
            if self.coded[j]:
                cats = np.arange(max(int(observed) + 1, int(mins[j])))
            else:
                if categories[j] is not None:
                    cats = np.asarray(categories[j])
                    if len(set(cats.tolist())) != len(cats):
                        raise ValueError(f"categories[{j}] has repeated values")
                else:
                    cats = observed
                if mins[j] > 0:
                    if cats.dtype.kind not in "iu" or (observed < 0).any():
                        raise ValueError(
                            f"min_categories applies to features coded 0, 1, 2, ...; "
                            f"feature {names[j]} has other values"
                        )
                    top = int(cats.max()) + 1 if len(cats) else 0
                    cats = np.arange(max(int(mins[j]), top))
            if len(cats) == 0:
                raise ValueError(f"feature {names[j]} has no observed value")
            self.categories.append(cats)
        self._set_family()

    def _set_family(self) -> None:
        self.family = Categorical([len(c) for c in self.categories])
        # Categories 0 .. t_j - 1 everywhere: an integer matrix is its own codes.
        self.identity = all(
            c.dtype.kind in "iu" and np.array_equal(c, np.arange(len(c)))
            for c in self.categories
        )

    def integer_codes(self, X: np.ndarray, in_range: bool = False):
        """An integer matrix as its own codes, or None if :meth:`encode` must
        map it (categories other than ``0 .. t_j - 1``, or values out of range).

        ``in_range`` says the categories were found in these very rows, so no
        value can be out of range. The codes may be ``X`` itself (no copy):
        they are only read.
        """
        if not self.identity:
            return None
        codes = np.ascontiguousarray(X, dtype=np.intp)
        if not in_range and count_out_of_range(codes, self.family.n_categories):
            return None
        return codes

    def new_categories(self, cols, fixed, keep=None) -> bool:
        """Add the values of ``cols`` (rows of ``keep``) that are not yet
        categories, to the features whose categories are not ``fixed``
        (given by the user). Returns whether any feature grew."""
        grew = False
        for j, col in enumerate(cols):
            col = col if keep is None else col[keep]
            cats = self.categories[j]
            if self.coded[j]:
                top = _code_values(col, self.names[j]).max(initial=-1)
                if top >= len(cats):
                    self.categories[j] = np.arange(top + 1)
                    grew = True
            elif not fixed[j]:
                missing = is_missing(col)
                unknown = encode_column(col, cats, missing) == -2
                if unknown.any():
                    added = fit_categories(col[unknown], missing[unknown])
                    self.categories[j] = np.concatenate([cats, added])
                    grew = True
        if grew:
            self._set_family()
        return grew

    def encode(self, cols, handle_unknown: str, fitting: bool, keep=None):
        """Codes ``(n, d)``, -1 where missing or ignored; ``keep`` as in fit."""
        # Written a feature at a time into contiguous rows, transposed once.
        codes = np.empty((len(cols), len(cols[0])), dtype=np.intp)
        for j, col in enumerate(cols):
            if self.coded[j]:
                code = _code_values(col, self.names[j])
                code[code >= len(self.categories[j])] = -2
            else:
                code = encode_column(col, self.categories[j], is_missing(col))
            if keep is not None:
                code[~keep & (code == -2)] = -1  # weight 0: not part of the data
            unknown = code == -2
            if unknown.any():
                if fitting or handle_unknown == "error":
                    value = col[np.argmax(unknown)]
                    if isinstance(value, np.generic):
                        value = value.item()
                    raise ValueError(
                        f"feature {self.names[j]} has value {value!r}, not among "
                        f"its categories {self.categories[j].tolist()}"
                        + (
                            "; list every category in categories= for the first fit"
                            if fitting
                            else "; use handle_unknown='ignore'"
                        )
                    )
                code[unknown] = -1
            codes[j] = code
        return np.ascontiguousarray(codes.T)

    def m_and_p(self, m, p) -> tuple[np.ndarray, np.ndarray]:
        d = len(self.categories)
        m = np.asarray(m, dtype=float)
        if m.ndim > 1 or (m.ndim == 1 and m.shape[0] != d):
            raise ValueError(f"m must be a number or have shape ({d},), got {m.shape}")
        if not np.all(np.isfinite(m)) or (m < 0).any():
            raise ValueError(f"m must be finite and >= 0, got {m}")
        if p is None:
            stacked = np.concatenate(
                [np.full(len(c), 1.0 / len(c)) for c in self.categories]
            )
        else:
            if len(p) != d:
                raise ValueError(f"p must have one distribution per feature ({d})")
            stacked = np.concatenate(
                [
                    check_probability_vector(pj, f"p[{j}]", len(self.categories[j]))
                    for j, pj in enumerate(p)
                ]
            )
        return np.broadcast_to(m, (d,)).astype(float), stacked

    def tables(self, log_prob: np.ndarray) -> list:
        """Per-feature tables ``(n_classes, t_j)`` from the stacked log-table."""
        off = self.family.offsets
        return [log_prob[off[j] : off[j + 1]].T.copy() for j in range(len(off) - 1)]


def _prepare_categorical(est, X, reset, sample_weight):
    """Validate and encode the categorical ``X`` of CategoricalNB-like models.

    ``sample_weight`` is given exactly when the rows are being fitted: in a
    later ``partial_fit`` their new values extend the categories (``stats_``
    grows to match through ``est._grow_stats``). With ``categories='auto'``
    and ``est._numeric_codes``, numeric features are codes ``0 .. max``
    (scikit-learn's CategoricalNB); otherwise the categories are the values
    seen.
    """
    X = _validated(est, X, reset)
    keep = _kept_rows(sample_weight)
    fitting = sample_weight is not None
    explicit = not isinstance(est.categories, str)
    integers = is_integer_matrix(X)
    cols, found = None, False
    if reset:
        d = X.shape[1]
        names = [_feature_name(est, j) for j in range(d)]
        by_codes = est.categories == "auto" and getattr(est, "_numeric_codes", False)
        Xk = X if keep is None or hasattr(X, "iloc") else X[keep]
        if by_codes and integers:
            coded = np.ones(d, dtype=bool)
            if Xk.size and Xk.min() < 0:
                raise ValueError(_NEGATIVE.format(names[int(np.argmin(Xk.min(0)))]))
            seen = list(Xk.max(axis=0)) if Xk.size else [-1] * d
            found = keep is None
        else:
            seen = None
            if integers and not explicit:
                seen = integer_categories(Xk)
                found = seen is not None and keep is None
            cols = _columns(X)
            coded = np.array([by_codes and _is_coded(c) for c in cols], dtype=bool)
            if seen is None:
                seen = []
                for j, col in enumerate(cols):
                    col = col if keep is None else col[keep]
                    if coded[j]:
                        seen.append(_code_values(col, names[j]).max(initial=-1))
                    else:
                        seen.append(fit_categories(col, is_missing(col)))
        est._part = _CategoricalPart(
            seen, est.categories, est.min_categories, names, coded
        )
    elif fitting and hasattr(est, "_grow_stats"):
        cols = _columns(X)
        old = est._part.family
        if est._part.new_categories(cols, [explicit] * len(cols), keep):
            est._grow_stats(old)
    est.categories_ = est._part.categories
    codes = est._part.integer_codes(X, in_range=found) if integers else None
    if codes is None:
        cols = _columns(X) if cols is None else cols
        codes = est._part.encode(cols, est.handle_unknown, fitting, keep)
    return codes


# Parameters shared by the categorical models (CategoricalNB, TreeAugmentedNB).
CATEGORICAL_CONSTRAINTS: dict = {
    **BaseGenerativeClassifier._parameter_constraints,
    "m": [Interval(Real, 0, None, closed="left"), "array-like"],
    "p": [list, tuple, None],
    "categories": [StrOptions({"auto", "observed"}), list],
    "min_categories": [
        Interval(Integral, 1, None, closed="left"),
        "array-like",
        None,
    ],
    "handle_unknown": [StrOptions({"ignore", "error"})],
}

_ALPHA_MIN = 1e-10


class CategoricalNB(BaseGenerativeClassifier):
    """Naive Bayes for categorical features: scikit-learn's, plus the m-estimate.

    A drop-in for scikit-learn's ``CategoricalNB``: its parameters
    (``alpha``, ``force_alpha``, ``fit_prior``, ``class_prior``,
    ``min_categories``) mean what they mean there, with the same defaults, and
    numeric features are category codes ``0, 1, 2, ...`` (a feature's
    categories are ``0 .. max``). Beside them, features may hold any labels
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
        The categories of each feature. 'auto': a numeric feature's are the
        codes ``0 .. max`` (as scikit-learn), any other feature's the values
        seen in fit. 'observed': every feature's are the values seen in fit,
        numbers included (negative or with gaps). A list: these labels.
    handle_unknown : {'ignore', 'error'}, default='ignore'
        A value never seen in fit at predict time: leave the feature out of
        that row's product, or raise a ValueError.

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
    missing values (NaN, None) are left out of the product, a code beyond
    the fitted categories at predict time is ignored (``handle_unknown``),
    and ``partial_fit`` adds the new values of a later call as categories
    (labels after the existing ones). A ``class_prior`` that does not sum to
    one is used as given, as scikit-learn does (the posterior is normalised
    anyway), with a warning. Fractional numeric values are truncated to
    codes, as scikit-learn does, with a warning.

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

    def _prepare_X(self, X, reset, sample_weight=None):
        return _prepare_categorical(self, X, reset, sample_weight)

    def _grow_stats(self, old_family) -> None:
        grown = old_family.grow(self.stats_.emission, self._part.family.n_categories)
        self.stats_ = ClassifierStats(self.stats_.class_weight, grown)
        self._update_params()

    def _checked_priors(self, k: int):
        return _discrete_class_prior(self, k)

    def _smoothing(self) -> tuple[np.ndarray, np.ndarray]:
        """``m`` and ``p`` of the m-estimate, from ``alpha`` or from ``m``."""
        part = self._part
        if self.m is not None:
            if not _is_default_alpha(self.alpha):
                raise ValueError(
                    "give either alpha (scikit-learn's additive smoothing, e.g. "
                    "alpha=1.0) or m (the m-estimate, e.g. m=2.0, p=...), not "
                    "both; alpha=a is m = a * n_categories_ with uniform p"
                )
            return part.m_and_p(self.m, self.p)
        if self.p is not None:
            raise ValueError(
                "p is the prior of the m-estimate and needs m (e.g. m=2.0, p=...); "
                "alpha smooths toward the uniform distribution"
            )
        d = len(part.categories)
        alpha = np.asarray(self.alpha, dtype=float)
        if alpha.ndim > 1 or (alpha.ndim == 1 and alpha.shape != (d,)):
            raise ValueError(
                f"alpha must be a number or have shape ({d},) (n_features), got "
                f"shape {alpha.shape}"
            )
        if not np.all(np.isfinite(alpha)) or (alpha < 0).any():
            raise ValueError("All values in alpha must be greater than 0.")
        if not self.force_alpha and (alpha < _ALPHA_MIN).any():
            warnings.warn(
                "alpha too small will result in numeric errors, setting alpha = "
                f"{_ALPHA_MIN:.1e}; use force_alpha=True to keep alpha as it is",
                UserWarning,
                stacklevel=5,
            )
            alpha = np.maximum(alpha, _ALPHA_MIN)
        return part.m_and_p(alpha * part.family.n_categories, None)

    def _emission_stats(self, codes, weights, labels):
        return self._part.family.stats(codes, weights, labels)

    def _set_emission_params(self, stats):
        m, p = self._smoothing()
        self._params = self._part.family.map_params(stats, MEstimate(m, p))
        self.n_categories_ = self._part.family.n_categories.astype(np.int64)
        self.category_count_ = self._part.tables(stats.counts)
        self.feature_log_prob_ = self._part.tables(self._params.log_prob)

    def _log_likelihood(self, codes):
        return self._part.family.log_likelihood(codes, self._params)

    def __sklearn_tags__(self):
        tags = categorical_input_tags(super().__sklearn_tags__())
        tags.input_tags.positive_only = True  # numeric codes are 0, 1, 2, ...
        return tags


def _is_default_alpha(alpha) -> bool:
    return isinstance(alpha, Real) and alpha == 1.0


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
            warnings.warn(
                f"class_prior sums to {prior.sum():g}, not 1: class_log_prior_ and "
                "predict_joint_log_proba use it as given (as scikit-learn does); "
                "the class posterior is normalised",
                UserWarning,
                stacklevel=5,
            )
        return prior
    if not est.fit_prior:
        return np.full(k, 1.0 / k)
    return None


class GaussianNB(BaseGenerativeClassifier):
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
    _partial_fit_requires_classes = True

    def _checked_priors(self, k: int):
        # scikit-learn's checks, in its order: length, sum, sign.
        if self.priors is None:
            return None
        priors = np.asarray(self.priors, dtype=float)
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

    def __init__(
        self, *, var_smoothing=1e-9, m=0.0, priors=None, prior_m=0.0, costs=None
    ):
        self.var_smoothing = var_smoothing
        self.m = m
        self.priors = priors
        self.prior_m = prior_m
        self.costs = costs

    def _prepare_X(self, X, reset, sample_weight=None):
        X = validate_data(
            self,
            X,
            reset=reset,
            dtype=[np.float64, np.float32],
            ensure_all_finite="allow-nan",
        )
        if reset:
            self._dtype = X.dtype
        return float_input(X)

    def _emission_stats(self, X, weights, labels):
        return _DIAG_GAUSSIAN.stats(X, weights, labels)

    def _set_emission_params(self, stats):
        self._params, self.epsilon_ = _gaussian_params(
            stats, self.m, self.var_smoothing
        )
        self.theta_ = self._params.means
        self.var_ = self._params.covariances
        self.class_prior_ = np.exp(self.class_log_prior_)
        keep_input_dtype(self, self._dtype, "theta_", "var_", "class_prior_")

    def _log_likelihood(self, X):
        return _DIAG_GAUSSIAN.log_likelihood(X, self._params)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


_DIAG_GAUSSIAN = Gaussian(DIAG)


def _gaussian_params(stats, m, var_smoothing):
    """Naive Bayes' variances: a MAP prior toward the pooled within-class variance.

    ``(S_cj + m s_j^2) / (n_cj + m)`` is the covariance prior of the Gaussian
    family with weight ``m`` and prior scatter ``s_j^2``; ``var_smoothing``
    times the largest total variance is added as scikit-learn does.
    Returns the parameters and that epsilon.
    """
    epsilon = float(var_smoothing * stats.total_variance().max())
    try:
        params = _DIAG_GAUSSIAN.map_params(
            stats, prior_weight=m, prior_scatter=stats.within_variance(), reg=epsilon
        )
    except np.linalg.LinAlgError:
        raise ValueError(
            "a feature has zero variance within a class (constant values, or "
            "one sample); set var_smoothing > 0 or m > 0"
        ) from None
    return params, epsilon


class MixedNB(BaseGenerativeClassifier):
    """Naive Bayes over categorical and numeric columns in one product.

    Categorical columns use :class:`CategoricalNB`'s m-estimated tables and
    numeric columns :class:`GaussianNB`'s densities; the class posterior is
    the normalised product of the class prior and every column's message.

    Parameters
    ----------
    categorical_features : 'auto' or array-like, default='auto'
        Which columns are categorical: 'auto' takes the columns of a DataFrame
        whose dtype is category, object, string or bool (for an array: all
        columns if its dtype is not numeric, none otherwise); or a boolean
        mask, column indices, or column names.
    m : float or array-like of shape (n_categorical,), default=1.0
        m-estimate of the categorical tables (see :class:`CategoricalNB`).
    p : list of array-like, default=None
        Prior distributions of the categorical columns' categories.
    gaussian_m : float, default=0.0
        m-estimate of the Gaussian variances (``m`` of :class:`GaussianNB`).
    var_smoothing : float, default=1e-9
        As :class:`GaussianNB`, over the numeric columns.
    priors : array-like of shape (n_classes,), default=None
        Class prior probabilities. None estimates them from the class counts.
    prior_m, costs
        As :class:`CategoricalNB`.
    handle_unknown : {'ignore', 'error'}, default='ignore'
        As :class:`CategoricalNB`.

    Attributes
    ----------
    classes_, class_count_, class_log_prior_
        As :class:`CategoricalNB`.
    categorical_features_ : ndarray of shape (``n_features_in_``,) of bool
        Which columns were taken as categorical.
    categories_ : list of ndarray
        Categories of each categorical column.
    feature_log_prob_ : list of ndarray of shape (n_classes, t_j)
        Tables of the categorical columns.
    theta_, var_ : ndarray of shape (n_classes, n_numeric)
        Means and variances of the numeric columns.
    n_features_in_, feature_names_in_, stats_

    Examples
    --------
    >>> import pandas as pd
    >>> from bayeskit import MixedNB
    >>> X = pd.DataFrame({"colour": ["red", "red", "blue", "blue"],
    ...                   "size": [1.0, 1.2, 3.1, 2.9]})
    >>> MixedNB().fit(X, [0, 0, 1, 1]).predict(X)
    array([0, 0, 1, 1])
    """

    _parameter_constraints: dict = {
        **BaseGenerativeClassifier._parameter_constraints,
        "categorical_features": [StrOptions({"auto"}), "array-like"],
        "m": [Interval(Real, 0, None, closed="left"), "array-like"],
        "p": [list, tuple, None],
        "gaussian_m": [Interval(Real, 0, None, closed="left")],
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
        "handle_unknown": [StrOptions({"ignore", "error"})],
    }

    _min_classes = 1  # as CategoricalNB and GaussianNB

    def __init__(
        self,
        *,
        categorical_features="auto",
        m=1.0,
        p=None,
        gaussian_m=0.0,
        var_smoothing=1e-9,
        priors=None,
        prior_m=0.0,
        costs=None,
        handle_unknown="ignore",
    ):
        self.categorical_features = categorical_features
        self.m = m
        self.p = p
        self.gaussian_m = gaussian_m
        self.var_smoothing = var_smoothing
        self.priors = priors
        self.prior_m = prior_m
        self.costs = costs
        self.handle_unknown = handle_unknown

    def _resolve_mask(self, X, cols) -> np.ndarray:
        d = len(cols)
        spec = self.categorical_features
        if isinstance(spec, str):
            if hasattr(X, "dtypes"):
                return np.array(
                    [
                        dt.kind in "OSUb" or str(dt) in ("category", "string", "str")
                        for dt in X.dtypes
                    ]
                )
            return np.full(d, not np.issubdtype(cols[0].dtype, np.number))
        spec = np.asarray(spec)
        if spec.dtype == bool:
            if spec.shape != (d,):
                raise ValueError(
                    f"categorical_features mask has shape {spec.shape}, expected ({d},)"
                )
            return spec
        mask = np.zeros(d, dtype=bool)
        names = getattr(self, "feature_names_in_", None)
        for item in spec.tolist():
            if isinstance(item, str):
                if names is None or item not in names:
                    raise ValueError(
                        f"categorical_features names column {item!r}, which X "
                        "does not have"
                    )
                mask[list(names).index(item)] = True
            elif isinstance(item, Integral) and -d <= item < d:
                mask[item] = True
            else:
                raise ValueError(
                    f"categorical_features has {item!r}: not a column index of "
                    f"X with {d} columns"
                )
        return mask

    def _prepare_X(self, X, reset, sample_weight=None):
        X = _validated(self, X, reset)
        cols = _columns(X)
        keep = _kept_rows(sample_weight)
        if reset:
            self.categorical_features_ = self._resolve_mask(X, cols)
            cat_idx = np.flatnonzero(self.categorical_features_)
            names = [_feature_name(self, j) for j in cat_idx]
            self._part = (
                _CategoricalPart(
                    _seen_values([cols[j] for j in cat_idx], keep), "auto", None, names
                )
                if len(cat_idx)
                else None
            )
        mask = self.categorical_features_
        cat_cols = [c for c, is_cat in zip(cols, mask) if is_cat]
        fitting = sample_weight is not None
        if not reset and fitting and self._part is not None:
            old = self._part.family
            if self._part.new_categories(cat_cols, [False] * len(cat_cols), keep):
                cat_stats, num_stats = self.stats_.emission.parts
                grown = old.grow(cat_stats, self._part.family.n_categories)
                self.stats_ = ClassifierStats(
                    self.stats_.class_weight, ProductStats((grown, num_stats))
                )
                self._update_params()
        self.categories_ = self._part.categories if self._part else []
        codes = (
            self._part.encode(cat_cols, self.handle_unknown, fitting, keep)
            if self._part
            else None
        )
        numeric = [c for c, is_cat in zip(cols, mask) if not is_cat]
        if numeric:
            try:
                Xnum = np.column_stack(
                    [np.asarray(c, dtype=np.float64) for c in numeric]
                )
            except (TypeError, ValueError) as exc:
                raise ValueError(
                    "a numeric column of X holds non-numeric values; mark it in "
                    f"categorical_features ({exc})"
                ) from None
            if np.isinf(Xnum).any():
                raise ValueError("numeric columns of X contain infinity")
        else:
            Xnum = None
        return codes, Xnum

    @staticmethod
    def _n_rows(Xt) -> int:
        codes, Xnum = Xt
        return (codes if codes is not None else Xnum).shape[0]

    def _emission_stats(self, Xt, weights, labels):
        codes, Xnum = Xt
        return ProductStats(
            (
                self._part.family.stats(codes, weights, labels)
                if codes is not None
                else None,
                _DIAG_GAUSSIAN.stats(Xnum, weights, labels)
                if Xnum is not None
                else None,
            )
        )

    def _set_emission_params(self, stats):
        cat_stats, num_stats = stats.parts
        self._cat_params = self._num_params = None
        self.feature_log_prob_ = []
        self.theta_ = self.var_ = np.empty((len(self.classes_), 0))
        if cat_stats is not None:
            m, p = self._part.m_and_p(self.m, self.p)
            self._cat_params = self._part.family.map_params(cat_stats, MEstimate(m, p))
            self.feature_log_prob_ = self._part.tables(self._cat_params.log_prob)
        if num_stats is not None:
            self._num_params = _gaussian_params(
                num_stats, self.gaussian_m, self.var_smoothing
            )[0]
            self.theta_ = self._num_params.means
            self.var_ = self._num_params.covariances

    def _log_likelihood(self, Xt):
        codes, Xnum = Xt
        out = np.zeros((self._n_rows(Xt), len(self.classes_)))
        if codes is not None:
            out += self._part.family.log_likelihood(codes, self._cat_params)
        if Xnum is not None:
            out += _DIAG_GAUSSIAN.log_likelihood(Xnum, self._num_params)
        return out

    def __sklearn_tags__(self):
        return categorical_input_tags(super().__sklearn_tags__())
