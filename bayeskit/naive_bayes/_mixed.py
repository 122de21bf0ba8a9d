"""MixedNB: naive Bayes over categorical and Gaussian columns of one table.

The class is one latent node; its emission is the
:class:`~bayeskit.emissions.product.Product` of a product of categorical
tables (the categorical columns) and a diagonal Gaussian (the others), each
with its prior (Koller and Friedman 2009, section 17.3).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import clone

from .._base.categorical import (
    CategoricalTables,
)
from .._base.classifier import BaseGenerativeClassifier, Triple
from .._base.encoding import categorical_input_tags, split_columns
from .._base.triple import TripleClassifier
from .._validation import Interval, StrOptions
from ..emissions.product import Product
from ..graph import LatentNode
from ._naive_bayes import _sklearn_smoothing
from ._numeric import (
    NaiveGaussian,
    VarianceSmoothing,
    categorical_mask,
    read_mixed,
)

__all__ = ["MixedNB"]


class MixedNB(TripleClassifier):
    """Naive Bayes over categorical and numeric columns in one product.

    Categorical columns use :class:`CategoricalNB`'s m-estimated tables and
    numeric columns :class:`GaussianNB`'s densities; the class posterior is
    the normalised product of the class prior and every column's message.

    Parameters
    ----------
    categorical_features : 'auto' or array-like, default='auto'
        Which columns are categorical: a boolean mask, column indices, or
        column names; or 'auto', which reads each column (of a DataFrame, or
        of an array) by its dtype and values. A pandas categorical, a string
        column and a bool column are categorical; a numeric column is
        numeric; an object column is numeric when every value that is not
        missing is a real number (a Python or numpy integer or float, not a
        bool), as in the object arrays ``SimpleImputer(strategy=
        "most_frequent")`` returns, and categorical otherwise (strings,
        booleans, or numbers mixed with them). To take integer codes as
        categories, name their columns here.
    alpha : float or array-like of shape (n_categorical,), default=1.0
        Additive smoothing of the categorical tables, as :class:`CategoricalNB`'s
        (and scikit-learn's): ``alpha`` pseudo-counts for every category. Used
        when ``m`` is None.
    force_alpha : bool, default=True
        As :class:`CategoricalNB`: if False, an ``alpha`` below 1e-10 is set to
        1e-10 with a warning.
    m : float or array-like of shape (n_categorical,), default=None
        The m-estimate of the categorical tables instead of ``alpha`` (see
        :class:`CategoricalNB`); giving ``m`` and a non-default ``alpha`` is an
        error.
    p : list of array-like, default=None
        Prior distributions of the categorical columns' categories for the
        m-estimate; needs ``m``.
    categories : 'auto' or list of array-like, default='auto'
        The categories of each categorical column (in the order of the
        categorical columns). 'auto': a pandas categorical's own categories in
        their order (those absent from the data included), any other column's
        the values seen in fit, sorted. A list: these labels, in this order
        (those absent from the data kept).
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
    CategoricalNB, GaussianNB

    Notes
    -----
    The model is the naive Bayes product over all columns (Mitchell, 1997,
    section 6.9),

    .. math::

        P(y \\mid x) \\propto P(y) \\prod_{j \\in \\mathrm{cat}} P(x_j \\mid y)
        \\prod_{j \\in \\mathrm{num}} \\mathcal{N}(x_j \\mid \\mu_{yj}, \\sigma^2_{yj}),

    so with the same smoothing its joint log-likelihood is
    :class:`CategoricalNB`'s on the categorical columns plus
    :class:`GaussianNB`'s on the numeric ones, minus the log class prior they
    both count. The defaults are theirs (``alpha=1`` and ``var_smoothing=1e-9``),
    so ``MixedNB()`` is the product of ``CategoricalNB()`` and ``GaussianNB()``
    wherever the two read the categorical columns alike: labels (strings,
    booleans, pandas categoricals) everywhere, and integer codes when every
    code ``0 .. max`` is observed (CategoricalNB reads a numeric column as the
    codes ``0 .. max``, MixedNB's named columns as the values seen).

    References
    ----------
    T. Mitchell, *Machine Learning*, 1997, section 6.9.

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
        "alpha": [Interval(Real, 0, None, closed="left"), "array-like"],
        "force_alpha": ["boolean"],
        "m": [Interval(Real, 0, None, closed="left"), "array-like", None],
        "p": [list, tuple, None],
        "categories": [StrOptions({"auto"}), list],
        "gaussian_m": [Interval(Real, 0, None, closed="left")],
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
        "handle_unknown": [StrOptions({"ignore", "error"})],
    }

    _min_classes = 1  # as CategoricalNB and GaussianNB
    _unobserved_class_is_error = True  # no prior defines a blank class
    _read = read_mixed

    def _encoded_columns(self, X) -> list:
        """The categorical columns, as ``categorical_features`` picks them."""
        probe = clone(self)
        if hasattr(X, "columns"):
            probe.feature_names_in_ = np.asarray(X.columns, dtype=object)
        return list(np.flatnonzero(categorical_mask(probe, X, split_columns(X)[0])))

    def __init__(
        self,
        *,
        categorical_features="auto",
        alpha=1.0,
        force_alpha=True,
        m=None,
        p=None,
        categories="auto",
        gaussian_m=0.0,
        var_smoothing=1e-9,
        priors=None,
        prior_m=0.0,
        costs=None,
        handle_unknown="ignore",
        unlabeled=None,
        unlabeled_weight=1.0,
    ):
        self.categorical_features = categorical_features
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.m = m
        self.p = p
        self.categories = categories
        self.gaussian_m = gaussian_m
        self.var_smoothing = var_smoothing
        self.priors = priors
        self.prior_m = prior_m
        self.costs = costs
        self.unlabeled = unlabeled
        self.unlabeled_weight = unlabeled_weight
        self.handle_unknown = handle_unknown

    def _make_components(self) -> Triple:
        encoder = self._encoder
        n_numeric = int(np.count_nonzero(~self.categorical_features_))
        categorical = numeric = None
        cat_prior = num_prior = None
        if encoder is not None:
            categorical = CategoricalTables(encoder.n_categories)
            cat_prior = _sklearn_smoothing(self, encoder.categories, "n_categorical")
        if n_numeric:
            numeric = NaiveGaussian(n_numeric)
            num_prior = VarianceSmoothing(self.gaussian_m, self.var_smoothing)
        return Triple(
            LatentNode(len(self.classes_)),
            Product((categorical, numeric)),
            (cat_prior, num_prior),
        )

    def _emission_log_prior(self) -> float:
        # The categorical tables' Dirichlet; the variance floor is no prior.
        prior, params = self._triple.prior[0], self._params[0]
        return 0.0 if prior is None else prior.log_density(params)

    @property
    def categories_(self) -> list:
        return [] if self._encoder is None else self._encoder.categories

    @property
    def feature_log_prob_(self) -> list:
        categorical = self._triple.emission.families[0]
        params = self._params[0]
        return [] if categorical is None else categorical.tables(params.log_prob)

    @property
    def theta_(self) -> np.ndarray:
        params = self._params[1]
        return np.empty((len(self.classes_), 0)) if params is None else params.means

    @property
    def var_(self) -> np.ndarray:
        params = self._params[1]
        if params is None:
            return np.empty((len(self.classes_), 0))
        return params.covariances

    def __sklearn_tags__(self):
        return categorical_input_tags(super().__sklearn_tags__())
