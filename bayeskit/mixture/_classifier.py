"""One Gaussian mixture per class: a generative classifier with mixture classes.

References
----------
.. [1] T. Hastie and R. Tibshirani, "Discriminant analysis by Gaussian
   mixtures", *Journal of the Royal Statistical Society B* 58(1), 1996,
   pp. 155-176.
.. [2] C. Fraley and A. E. Raftery, "Model-based clustering, discriminant
   analysis, and density estimation", *Journal of the American Statistical
   Association* 97(458), 2002, pp. 611-631.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_random_state

from .._base.classifier import BaseGenerativeClassifier, Triple
from .._base.per_class import PerClassClassifier, PerClassStats
from .._validation import Interval, validate_data
from ..graph import LatentNode
from ._gaussian_mixture import GaussianMixture

__all__ = ["GaussianMixtureClassifier"]


class _ClassMixtureStats(PerClassStats):
    """The statistics of every class's mixture (one ``MixtureStats`` each, None
    for a class with no rows); they add class by class."""

    @property
    def mixtures(self) -> tuple:
        """Another name of ``models``: every class's ``MixtureStats``."""
        return self.models


class GaussianMixtureClassifier(PerClassClassifier):
    """One Gaussian mixture per class: a generative classifier with mixture classes.

    The latent structure is the two-level tree class -> component: each class
    has its own :class:`GaussianMixture`, ``p(x | y) = sum_k w_yk N(x; mu_yk,
    Sigma_yk)`` (the message from the component node to the class node), and
    the posterior over the class is the normalised product of that message and
    the class prior. Classes that are unions of separated blobs, where LDA and
    QDA fail, are what it is for.

    Parameters
    ----------
    n_components : int or array-like of shape (n_classes,), default=1
        Components per class: one positive integer, or one per class (in the
        order of ``classes_``; its length is checked against the classes in
        :meth:`fit`).
    covariance_type, tol, reg_covar, max_iter, n_init, init_params, \
covariance_prior, covariance_prior_weight, random_state
        As :class:`GaussianMixture`, for every class's mixture.
    priors, prior_m, costs
        As every bayeskit classifier (see :class:`~bayeskit.CategoricalNB`).
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
        As every bayeskit classifier.
    mixtures_ : list of GaussianMixture
        The fitted mixture of each class.
    n_iter_ : ndarray of shape (n_classes,)
        EM iterations of each class's mixture in its fit (the steps of
        :meth:`partial_fit` and :meth:`from_stats` are not counted).
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
    GaussianMixture, QuadraticDiscriminantAnalysis

    Notes
    -----
    With one component per class and 'full' covariances this is QDA (up to
    ``reg_covar``). Missing values (NaN) in ``X`` are latent variables of
    every class's EM and are marginalised in prediction (see
    :class:`GaussianMixture`); with one 'diag' component per class the fit
    reaches GaussianNB's.

    :meth:`fit` fits each class's mixture by EM on the class's rows. The
    statistics (``stats_``, :meth:`summarize`) are then each class's mixture
    statistics (``MixtureStats``): for a fit,
    those its parameters came from; for a chunk of a fitted classifier, the
    E-step of each class's rows under the current parameters. They add, so
    :meth:`from_stats` of statistics summed over chunks is one EM iteration
    over all of them, and :meth:`partial_fit` is a stepwise EM update of
    every class's mixture (see :meth:`GaussianMixture.partial_fit`); a class
    with no rows in a chunk keeps its mixture. On a classifier not fitted
    yet, :meth:`summarize` and the first :meth:`partial_fit` fit the mixtures
    by EM on their chunk.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import GaussianMixtureClassifier
    >>> rng = np.random.default_rng(0)
    >>> centres = np.array([[0, 0], [6, 6], [0, 6], [6, 0]])
    >>> X = np.vstack([rng.normal(c, 0.5, size=(50, 2)) for c in centres])
    >>> y = np.repeat([0, 0, 1, 1], 50)  # each class is two blobs
    >>> clf = GaussianMixtureClassifier(n_components=2, random_state=0).fit(X, y)
    >>> float(clf.score(X, y))
    1.0
    """

    _fits_class_models_by_em = True

    _unobserved_class_is_error = True  # no prior defines a blank class

    _parameter_constraints: dict = {
        **BaseGenerativeClassifier._parameter_constraints,
        "n_components": [Interval(Integral, 1, None, closed="left"), "array-like"],
        **{
            key: GaussianMixture._parameter_constraints[key]
            for key in (
                "covariance_type",
                "tol",
                "reg_covar",
                "max_iter",
                "n_init",
                "init_params",
                "covariance_prior",
                "covariance_prior_weight",
                "random_state",
            )
        },
    }

    def __init__(
        self,
        n_components=1,
        *,
        covariance_type="full",
        tol=1e-3,
        reg_covar=1e-6,
        max_iter=100,
        n_init=1,
        init_params="kmeans",
        covariance_prior=None,
        covariance_prior_weight=0.0,
        random_state=None,
        priors=None,
        prior_m=0.0,
        costs=None,
        unlabeled=None,
        unlabeled_weight=1.0,
    ):
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.tol = tol
        self.reg_covar = reg_covar
        self.max_iter = max_iter
        self.n_init = n_init
        self.init_params = init_params
        self.covariance_prior = covariance_prior
        self.covariance_prior_weight = covariance_prior_weight
        self.random_state = random_state
        self.priors = priors
        self.prior_m = prior_m
        self.costs = costs
        self.unlabeled = unlabeled
        self.unlabeled_weight = unlabeled_weight

    _models_attr = "mixtures_"
    _stats_type = _ClassMixtureStats
    # GaussianMixture starts EM from two rows or more: a class of one row of
    # weight 3 is fitted as scikit-learn's checks ask, with the zero-weight rows
    # of the class beside it (they add nothing to the statistics).
    _fit_zero_weight_rows = True

    def _prepare_X(self, X, reset, sample_weight=None):
        # Missing cells (NaN) are left to every class's mixture.
        return validate_data(
            self, X, reset=reset, dtype=np.float64, ensure_all_finite="allow-nan"
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # missing values are latent
        return tags

    def _make_components(self) -> Triple:
        """The class node, the (unfitted) mixture of every class, and no
        prior of its own: each mixture builds its Gaussian family and
        covariance prior (``covariance_type`` resolved there, once), and the
        class prior is the base's m-estimate."""
        k = len(self.classes_)
        template = GaussianMixture(
            covariance_type=self.covariance_type,
            tol=self.tol,
            reg_covar=self.reg_covar,
            max_iter=self.max_iter,
            n_init=self.n_init,
            init_params=self.init_params,
            covariance_prior=self.covariance_prior,
            covariance_prior_weight=self.covariance_prior_weight,
        )
        mixtures = tuple(
            clone(template).set_params(n_components=c)
            for c in _components_per_class(self.n_components, k)
        )
        return Triple(LatentNode(k), mixtures, None)

    def _new_models(self):
        # One random state for every class's EM, drawn from in class order.
        rng = check_random_state(self.random_state)
        return [
            gm.set_params(random_state=rng) for gm in self._make_components().emission
        ]

    def _rows(self, X, rows):
        return X[rows]

    def _fit_model(self, c, gm, X, weight):
        if len(X) < max(2, gm.n_components):
            # A mixture needs two rows (scikit-learn's rule) and one per component.
            raise ValueError(
                f"class {self.classes_[c : c + 1].tolist()[0]!r} of y has {len(X)} "
                f"sample(s) for {gm.n_components} component(s): each class's "
                "mixture needs at least 2 and one per component"
            )
        return gm.fit(X, sample_weight=weight)

    def _model_stats(self, gm, X, weight):
        return gm._summary(X, sample_weight=weight)

    def _model_log_likelihood(self, gm, X):
        # The message from the class's component node: logsumexp over components.
        return gm.score_samples(X)

    def _set_emission_params(self, stats):
        super()._set_emission_params(stats)
        self.n_iter_ = np.array([gm.n_iter_ for gm in self.mixtures_])


def _components_per_class(n_components, n_classes: int) -> list:
    """``n_components`` as one positive integer per class: one number for every
    class, or one per class; anything else is a ValueError naming it."""
    counts = np.asarray(n_components, dtype=object)
    if counts.ndim == 0:
        counts = np.array([counts.item()] * n_classes, dtype=object)
    if counts.shape != (n_classes,):
        raise ValueError(
            f"n_components must be one number or one per class ({n_classes}), got "
            f"shape {counts.shape}"
        )
    bad = [
        c
        for c in counts
        if isinstance(c, (bool, np.bool_))
        or not isinstance(c, (Integral, np.integer))
        or c < 1
    ]
    if bad:
        raise ValueError(
            "n_components must hold positive integers, one per class; got "
            f"{bad[0]!r} in {list(counts)!r}"
        )
    return [int(c) for c in counts]
