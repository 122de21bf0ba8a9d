"""What every generative classifier of bayeskit shares.

A generative classifier is one latent class node (observed during fit) and an
emission family. Fitting gathers additive statistics (class weights and the
emission's statistics under one-hot weights), so ``fit`` is ``partial_fit`` on
one chunk after a reset. Prediction is the graph core's posterior over the class
node, and the decision is the Bayes decision: the most probable class, or with
a cost matrix the class of least expected cost.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass, field, replace
from numbers import Real
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import column_or_1d

from .._collections import handler_for
from .._layout import Layout, add_described, fixed_by
from .._logmath import logsumexp
from .._validation import (
    Interval,
    _fit_context,
    _num_samples,
    check_classification_targets,
    check_is_fitted,
    check_probability_vector,
    check_sample_weight,
)
from .._warnings import warn
from ..graph import LatentNode
from ..priors import Fixed, MEstimate
from .gaussian_input import float_input, keep_input_dtype
from .observed import check_every_class_observed, check_observed_weight
from .relayout import union_of_classes
from .semi_supervised import (
    check_in_memory,
    check_label_types,
    check_marker_not_a_class,
    fit_semi_supervised,
    partial_fit_semi_supervised,
    summarize_semi_supervised,
    unlabeled_rows,
)

__all__ = [
    "BaseGenerativeClassifier",
    "ClassifierStats",
    "InsufficientData",
    "Triple",
    "float_input",
    "keep_input_dtype",
]


class InsufficientData(ValueError):
    """Statistics that do not determine the parameters yet (a variance from
    one row). ``fit`` reports it; ``partial_fit`` keeps the statistics and
    waits for more rows."""


class Triple(NamedTuple):
    """What every bayeskit model is: a latent structure x an emission family x
    a prior.

    Each estimator builds its triple from its parameters in one method,
    ``_make_components()``, called in ``fit`` (never in ``__init__``): a
    string option is resolved there, once, to an object.

    Attributes
    ----------
    structure : object
        The latent structure of :mod:`bayeskit.graph` (``LatentNode``,
        ``LatentChain``, ``BayesNet``).
    emission : object
        The emission family of :mod:`bayeskit.emissions`.
    prior : object
        The prior objects of :mod:`bayeskit.priors` that turn statistics into
        parameters (for models with several parameter tables, a small tuple of
        them).
    """

    structure: object
    emission: object
    prior: object


@dataclass(frozen=True)
class ClassifierStats:
    """Sufficient statistics of a supervised generative classifier.

    ``class_weight`` has shape ``(n_classes,)``; ``emission`` is the emission
    family's statistics. Both add, so statistics of chunks merge with ``+``.
    """

    class_weight: np.ndarray
    emission: object
    #: What the statistics are over (classes, encoding of X): set by the
    #: public ``summarize``, so that ``from_stats`` of a fresh estimator reads
    #: them (``bayeskit._layout.Layout``).
    layout: object = field(default=None, compare=False, repr=False)

    def __add__(self, other: ClassifierStats) -> ClassifierStats:
        if not isinstance(other, ClassifierStats):
            return NotImplemented
        return add_described(self, other, _add_classifier_stats)

    def __radd__(self, other):
        # ``sum(chunks)`` starts from 0.
        if isinstance(other, int) and other == 0:
            return self
        return NotImplemented


def _add_classifier_stats(a: ClassifierStats, b: ClassifierStats) -> ClassifierStats:
    return ClassifierStats(a.class_weight + b.class_weight, a.emission + b.emission)


class BaseGenerativeClassifier(ClassifierMixin, BaseEstimator):
    """Base of bayeskit's generative classifiers: classes, priors, costs, posterior.

    Subclasses provide the emission side through four hooks:
    ``_prepare_X(X, reset)`` (validate and encode), ``_emission_stats(Xt,
    weights, labels)``, ``_set_emission_params(stats)`` and
    ``_log_likelihood(Xt)`` (``log p(x | class)``, shape ``(n, n_classes)``),
    and may override ``_class_scores(Xt)`` and ``_missing_cells(Xt)``.
    """

    _parameter_constraints: dict = {
        "priors": ["array-like", None],
        "prior_m": [Interval(Real, 0, None, closed="left")],
        "costs": ["array-like", None],
        "unlabeled": "no_validation",
        "unlabeled_weight": [Interval(Real, 0, None, closed="left")],
    }

    # -- hooks ----------------------------------------------------------------
    @abstractmethod
    def _prepare_X(self, X, reset: bool, sample_weight=None):
        """Validate ``X`` and turn it into what the emission family reads.

        In fit (``reset``), rows of zero ``sample_weight`` must not shape the
        model (a weight of 0 is the row left out), e.g. by adding categories.
        """

    @abstractmethod
    def _emission_stats(self, Xt, weights: np.ndarray, labels: np.ndarray):
        """The emission family's statistics under one-hot ``weights``."""

    @abstractmethod
    def _set_emission_params(self, stats) -> None:
        """Set the fitted emission attributes from merged statistics."""

    @abstractmethod
    def _log_likelihood(self, Xt) -> np.ndarray:
        """``log p(x | class)`` for every row and class."""

    def _missing_cells(self, Xt) -> bool | None:
        """Whether ``Xt`` holds a missing cell, by the family's own test, which
        its ``_emission_stats`` then takes as ``missing=``; None: untested (the
        blank-class check scans ``X``)."""
        return None

    def _class_scores(self, Xt) -> np.ndarray:
        """``log p(x | class)`` up to a constant per row: all a posterior needs.

        Models whose log-likelihood has a costly term shared by every class
        (the quadratic form of a tied covariance) leave it out here.
        """
        return self._log_likelihood(Xt)

    # -- fitting ----------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit from ``X`` and labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Or a Dask array or DataFrame (with ``y`` and ``sample_weight`` as
            Dask or in-memory arrays): the statistics of each chunk are
            computed where it lives and summed.
        y : array-like of shape (n_samples,)
            Class labels of any type (ints, strings, -1/+1). Rows labelled
            with the estimator's ``unlabeled`` marker are unlabelled: the fit
            starts from the labelled rows and runs semi-supervised EM over
            the unlabelled rows' classes (see :ref:`semi_supervised`).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; a weight of 2 is the row counted twice.

        Returns
        -------
        self : object
        """
        if (handler := handler_for(X)) is not None:
            check_in_memory(self)
            return handler.fit_classifier(self, X, y, sample_weight)
        if (unlabeled := unlabeled_rows(self, y)) is not None:
            return fit_semi_supervised(self, X, y, sample_weight, unlabeled)
        return self._partial_fit(X, y, None, sample_weight, reset=True, refit=True)

    _additive_stats = True  # False for models fitted by EM per class

    # Whether the first fit runs EM in every class's model (a Gaussian mixture
    # per class), which on Dask input is an EM of its own.
    _fits_class_models_by_em = False

    # What a reset builds from the layout, rather than reads from the data
    # (rebuilt by from_stats): not part of the statistics' layout.
    _derived_attributes = ("_triple",)

    # Whether a class none of whose cells is observed (every row of it all
    # NaN) is an error: where no prior defines its parameters (Gaussian
    # means and covariances), it would fit as a blank and predict the prior.
    _unobserved_class_is_error = False
    # ... read from the statistics' ``feature_weight`` (no second scan of X).
    _observed_weight_in_stats = False

    # Fewest classes a fit accepts (scikit-learn's naive Bayes fits one class;
    # its discriminant analysis needs two).
    _min_classes = 2

    # scikit-learn's partial_fit rule for ``classes``: required in the first
    # call, and when given later, the same classes as before.
    _partial_fit_requires_classes = False

    def _has_additive_stats(self) -> bool:
        return self._additive_stats

    @available_if(_has_additive_stats)
    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Add a chunk of data to the fitted statistics and update the parameters.

        Statistics add, so any chunking gives the same model as one ``fit``.
        Rows of ``y`` labelled with the ``unlabeled`` marker make the call one
        incremental EM step: the chunk's labelled rows are added first, then
        its unlabelled rows' statistics under the class posterior of the model
        so far, weighted by ``unlabeled_weight``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), default=None
            Every class label; required in the first call unless ``y`` of that
            call shows them all (naive Bayes: always required in the first
            call, as in scikit-learn); in later calls, if given, it must name
            the same classes.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        first = not hasattr(self, "classes_")
        if first and classes is None and self._partial_fit_requires_classes:
            raise ValueError("classes must be passed on the first call to partial_fit.")
        if not first and classes is not None and self._partial_fit_requires_classes:
            if not np.array_equal(self.classes_, np.unique(np.asarray(classes))):
                raise ValueError(
                    f"`classes={classes!r}` is not the same as on last call to "
                    f"partial_fit, was: {self.classes_!r}"
                )
        check_marker_not_a_class(self, classes)
        if (handler := handler_for(X)) is not None:
            check_in_memory(self)
            return handler.fit_classifier(self, X, y, sample_weight, classes, True)
        if (unlabeled := unlabeled_rows(self, y)) is not None:
            return partial_fit_semi_supervised(
                self, X, y, classes, sample_weight, unlabeled
            )
        return self._partial_fit(X, y, classes, sample_weight, reset=first)

    def _partial_fit(self, X, y, classes, sample_weight, reset: bool, refit=False):
        stats = self._summarize(X, y, classes, sample_weight, reset, refit)
        # After a ``summarize`` that fixed the classes, the first chunk has no
        # statistics to add to.
        merged = stats if reset or not hasattr(self, "stats_") else self.stats_ + stats
        if refit:
            return self._set_stats(merged)
        try:
            return self._set_stats(merged)
        except InsufficientData as exc:
            # The statistics so far do not determine the parameters (one row
            # per class: no variance yet). They are kept, so later chunks can,
            # and prediction says why it cannot run until then.
            self.stats_ = merged
            self._insufficient = str(exc)
            return self

    @available_if(_has_additive_stats)
    def summarize(self, X, y, sample_weight=None):
        """Sufficient statistics of a chunk of labelled data, without fitting.

        The statistics of chunks add (``a + b``), and :meth:`from_stats` of
        their sum gives the model of one ``fit`` on all the rows: ``fit(X,
        y)`` is ``from_stats(summarize(X, y))``. This is how data that does
        not fit in memory, or that lives on several machines, is fitted.

        The chunk is read with what the estimator already knows: on an
        estimator not fitted yet, the first call fixes the classes (those of
        ``y``) and the encoding of ``X`` (such as the categories of each
        feature), and later calls on it must use the same. The statistics
        carry both, so chunks may also be summarized by separate fresh
        estimators (workers of a map-reduce): statistics of chunks that
        showed different classes or categories add over their union, in the
        order one ``fit`` on all the rows gives, and a fresh estimator's
        :meth:`from_stats` reads them. They pickle.

        Rows of ``y`` labelled with the ``unlabeled`` marker add their
        statistics under the fitted model's class posterior (weighted by
        ``unlabeled_weight``): ``from_stats`` of the sum over chunks is then
        one iteration of semi-supervised EM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        stats : ClassifierStats
            The class weights and the emission family's statistics.
        """
        reset = not hasattr(self, "classes_")
        if reset:
            self._validate_params()
        if (unlabeled := unlabeled_rows(self, y)) is not None:
            stats = summarize_semi_supervised(self, X, y, sample_weight, unlabeled)
        else:
            stats = self._summarize(X, y, None, sample_weight, reset, chunk=not reset)
        return replace(stats, layout=self._described())

    def _output_spec(self, method: str, float32: bool) -> tuple:
        """The width (None: one value per row) and dtype of ``self.<method>``
        on rows of the given precision (for prediction over Dask blocks)."""
        if method == "predict":
            return None, self.classes_.dtype
        if method in ("predict_proba", "predict_log_proba", "predict_joint_log_proba"):
            return len(self.classes_), np.dtype(np.float64)
        if method == "transform":
            return self._n_features_out, np.dtype(np.float64)
        if method == "decision_function":
            k = len(self.classes_)
            return (None if k == 2 else k), np.dtype(np.float64)
        return None, np.dtype(np.float64)

    def _encoded_columns(self, X) -> list:
        """The columns of ``X`` (an in-memory prototype of the data's columns)
        whose distinct values the encoding fixes: found over all the chunks
        of data that live elsewhere before any is summarized. None here."""
        return []

    def _described(self) -> Layout:
        """The layout of this estimator's statistics: the classes and the
        encoding of ``X`` its last reset fixed (``_layout_keys``)."""
        keys = getattr(self, "_layout_keys", ("classes_",))
        state = {
            k: getattr(self, k)
            for k in keys
            if hasattr(self, k) and k not in self._derived_attributes
        }
        return Layout(type(self), state)

    @classmethod
    def _union_stats(cls, a: ClassifierStats, b: ClassifierStats) -> ClassifierStats:
        """``a + b`` over chunks that showed different classes: both re-laid
        over the sorted union of the classes (the order ``fit`` gives)."""
        return union_of_classes(a, b)

    @available_if(_has_additive_stats)
    def from_stats(self, stats):
        """Set the parameters from statistics (summed over chunks).

        Parameters
        ----------
        stats : ClassifierStats
            The statistics of :meth:`summarize`, added over any number of
            chunks summarized by estimators of this class (they carry their
            classes and encoding, which this estimator takes).

        Returns
        -------
        self : object
            The fitted estimator; ``stats_`` holds the numbers of ``stats``.
        """
        layout = getattr(stats, "layout", None)
        if layout is None:
            return self._from_own_stats(stats)
        # Statistics that describe another layout re-lay the estimator; if
        # they cannot give parameters, it is left as it was.
        saved = dict(vars(self))
        try:
            self._validate_params()
            layout.apply(self)
            return self._from_own_stats(stats)
        except Exception:
            vars(self).clear()
            vars(self).update(saved)
            raise

    def _from_own_stats(self, stats):
        if not hasattr(self, "classes_"):
            raise ValueError(
                "from_stats needs the classes and the encoding that summarize "
                "fixed: pass statistics returned by summarize (they carry both), "
                "or call summarize on this estimator first"
            )
        if not isinstance(stats, ClassifierStats) or np.shape(stats.class_weight) != (
            len(self.classes_),
        ):
            raise TypeError(
                "stats must be the ClassifierStats of summarize for the "
                f"{len(self.classes_)} classes of this estimator, got "
                f"{type(stats).__name__}"
            )
        if np.count_nonzero(stats.class_weight) < self._min_classes:
            raise ValueError(
                f"{type(self).__name__} needs at least "
                f"{'two classes' if self._min_classes > 1 else 'one row'} with "
                "positive sample_weight in stats"
            )
        return self._set_stats(stats)

    def _set_stats(self, stats):
        # Parameters that cannot be derived leave the estimator as it was.
        before = dict(self.__dict__)
        # The model's own statistics: their layout is now the model's.
        self.stats_ = stats if stats.layout is None else replace(stats, layout=None)
        try:
            self._check_params_vs_data()
            self._update_params()
        except Exception:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise
        self._insufficient = None
        return self

    def _check_parameters_set(self) -> None:
        check_is_fitted(self)
        reason = getattr(self, "_insufficient", None)
        if reason:
            raise ValueError(
                f"the data given to partial_fit so far do not determine the "
                f"parameters ({reason}); partial_fit more rows first"
            )

    def _summarize(
        self, X, y, classes, sample_weight, reset: bool, refit=False, chunk=False
    ):
        """The statistics of a chunk; with ``reset``, the classes and the
        encoding of ``X`` are fixed from it first (``refit``: a failed
        preparation leaves the fitted model as it was; ``chunk``: weights
        that are all zero are a valid chunk)."""
        return self._read_labelled(X, y, classes, sample_weight, reset, refit, chunk)[0]

    def _read_labelled(
        self,
        X,
        y,
        classes,
        sample_weight,
        reset: bool,
        refit=False,
        chunk=False,
        keep_encoding=False,
    ):
        """:meth:`_summarize`, and the chunk as read: ``(stats, Xt, idx, sw)``
        (``keep_encoding``: the classes are fixed from ``y`` but ``X`` is read
        with the encoding already fixed)."""
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, "
                "but the target y is None"
            )
        check_label_types(y)
        y = column_or_1d(y, warn=True)
        if y.dtype.kind in "fc" and np.isnan(y).any():
            raise ValueError(
                "y contains NaN; every row needs a class label (drop the rows "
                "whose label is missing)"
            )
        fresh = reset and classes is None
        before = dict(vars(self)) if reset else None
        if not fresh or y.dtype.kind == "O":
            # Object labels are checked as they are: sorting mixed types would
            # fail before the check could say why.
            check_classification_targets(y)
        if fresh:
            # The classes and every row's class index in one sort; the target
            # type depends only on the distinct values, so they are checked.
            labels, idx = np.unique(y, return_inverse=True)
            check_classification_targets(labels)
        n = y.shape[0]
        if n == 0:
            raise ValueError("X has 0 samples; at least one is required")
        if n != _num_samples(X):
            raise ValueError(
                f"X has {_num_samples(X)} samples but y has {n}; they must match"
            )
        sw = check_sample_weight(sample_weight, np.empty((n, 0)), allow_all_zero=chunk)
        if refit:
            # A refit starts afresh, but an X that is rejected leaves the
            # fitted model as it was (as scikit-learn's validation does).
            saved = dict(vars(self))
            for attr in [a for a in saved if a.endswith("_") and a[0] != "_"]:
                delattr(self, attr)
            try:
                Xt = self._prepare_X(X, reset=reset, sample_weight=sw)
            except Exception:
                vars(self).clear()
                vars(self).update(saved)
                raise
        else:
            Xt = self._prepare_X(X, reset=reset and not keep_encoding, sample_weight=sw)
        if reset:
            if not fresh:
                labels = np.unique(np.asarray(classes))
            if labels.shape[0] < self._min_classes:
                raise ValueError(
                    f"{type(self).__name__} needs at least two classes; y has only "
                    f"one class, {labels.tolist()}"
                )
            self.classes_ = labels
            # What this reset fixed (the classes, the encoding of X): the
            # layout that statistics from summarize carry.
            self._layout_keys = fixed_by(self, before)
        if not fresh:
            idx = np.searchsorted(self.classes_, y)
            idx = np.clip(idx, 0, len(self.classes_) - 1)
            unseen = self.classes_[idx] != y
            if unseen.any():
                raise ValueError(
                    f"The target label(s) {np.unique(y[unseen]).tolist()[:5]} in y "
                    f"do not exist in the initial classes {self.classes_.tolist()}; "
                    "pass every class to the first partial_fit with `classes`"
                )
        check = refit and self._unobserved_class_is_error
        scan = check and not self._observed_weight_in_stats
        missing = self._missing_cells(Xt) if scan else None  # False: no NaN
        if scan and (missing is None or missing):
            check_every_class_observed(X, idx, sw, self.classes_)
        weights = np.zeros((n, len(self.classes_)))
        weights[np.arange(n), idx] = sw
        class_weight = np.bincount(idx, weights=sw, minlength=len(self.classes_))
        if (
            reset
            and classes is None
            and np.count_nonzero(class_weight) < self._min_classes
        ):
            raise ValueError(
                f"{type(self).__name__} needs at least "
                f"{'two classes' if self._min_classes > 1 else 'one row'} with "
                "positive sample_weight"
            )
        kw = {} if missing is None else {"missing": missing}
        stats = ClassifierStats(
            class_weight.astype(float), self._emission_stats(Xt, weights, idx, **kw)
        )
        if (
            check
            and self._observed_weight_in_stats
            and not isinstance(X, (list, tuple))
        ):
            seen = stats.emission.feature_weight().sum(axis=1)
            check_observed_weight(seen, class_weight, self.classes_)
        return stats, Xt, idx, sw

    def _check_params_vs_data(self) -> None:
        """Checks that need the number of classes: priors and costs."""
        k = len(self.classes_)
        self._priors = self._checked_priors(k)
        self._costs = None
        if self.costs is not None:
            costs = np.asarray(self.costs, dtype=float)
            if costs.shape == (k,):
                costs = np.diag(costs) @ (1.0 - np.eye(k))
            if costs.shape != (k, k):
                raise ValueError(
                    f"costs must have shape ({k},) (cost of misclassifying each "
                    f"true class) or ({k}, {k}) (C[true, predicted]); got "
                    f"{np.shape(self.costs)}"
                )
            if not np.all(np.isfinite(costs)) or (costs < 0).any():
                raise ValueError("costs must be finite and non-negative")
            self._costs = costs

    def _checked_priors(self, k: int):
        """The user's class priors, validated for ``k`` classes, or None to
        estimate them from the class counts."""
        if self.priors is None:
            return None
        return check_probability_vector(self.priors, "priors", k)

    def _update_params(self) -> None:
        stats = self.stats_
        k = len(self.classes_)
        self.class_count_ = stats.class_weight.copy()
        self.class_log_prior_ = LatentNode(k).log_estimate(
            stats.class_weight, self._class_prior(k)
        )
        self._set_emission_params(stats.emission)

    def _class_prior(self, k: int):
        """The prior of the class node: the ``priors`` given (``Fixed``), or
        the m-estimate of the class counts with ``prior_m`` virtual rows spread
        uniformly (``MEstimate``; 0 is the relative frequency)."""
        if self._priors is not None:
            return Fixed(self._priors)
        return MEstimate(np.float64(self.prior_m), np.full(k, 1.0 / k))

    def _log_prior_density(self) -> float:
        """Log density of the prior at the current parameters, up to its
        constant: the class node's (the m-estimate's Dirichlet; 0 for given
        ``priors``) plus the emission's (:meth:`_emission_log_prior`)."""
        prior = self._class_prior(len(self.classes_))
        with np.errstate(under="ignore"):
            class_part = prior.log_density(np.exp(self.class_log_prior_))
        return float(class_part) + float(self._emission_log_prior())

    def _emission_log_prior(self) -> float:
        """Log density of the emission's prior at its parameters, up to its
        constant; 0 where the regularisation is not a prior density (a
        variance floor, shrinkage)."""
        return 0.0

    # Whether the statistics of labelled rows stay the same while the
    # parameters change (False for models whose class models have latent
    # parts of their own: their statistics are an E-step).
    _labelled_stats_fixed = True

    def _freeze_structure(self) -> None:
        """Keep the structure learnt so far while EM fits the parameters (the
        tree of TAN); nothing for the others."""

    def __sklearn_is_fitted__(self) -> bool:
        # ``summarize`` fixes the classes without fitting: fitted means
        # parameters set from statistics.
        return hasattr(self, "stats_")

    # -- prediction ---------------------------------------------------------------
    def predict_joint_log_proba(self, X):
        """``log P(x, y = c)`` for every row and class, shape ``(n, n_classes)``."""
        if (handler := handler_for(X)) is not None:
            return handler.predict(self, "predict_joint_log_proba", X)
        self._check_parameters_set()
        Xt = self._prepare_X(X, reset=False)
        return self._log_likelihood(Xt) + self._decision_log_prior()

    def _decision_log_prior(self) -> np.ndarray:
        """The class log prior that joins the class scores (ComplementNB's
        decision leaves it out, as scikit-learn's)."""
        return self.class_log_prior_

    def _log_posterior(self, X) -> np.ndarray:
        self._check_parameters_set()
        Xt = self._prepare_X(X, reset=False)
        # exp of a row shifted by its maximum may underflow to 0: exact enough,
        # and no warning whatever numpy's error state.
        with np.errstate(under="ignore"):
            log_prior = self._decision_log_prior()
            post = LatentNode(len(self.classes_)).posterior(
                self._class_scores(Xt), log_prior
            )
        impossible = np.isneginf(post.log_evidence)
        if impossible.any():
            warn(
                f"{int(impossible.sum())} row(s) have probability zero under every "
                "class (a value with zero estimated probability, e.g. with m=0); "
                "their posterior falls back to the class prior",
                RuntimeWarning,
            )
            post.log_resp[impossible] = log_prior - logsumexp(log_prior)
        return post.log_resp

    def predict_log_proba(self, X):
        """``log P(y = c | x)``, computed in log space (no underflow)."""
        if (handler := handler_for(X)) is not None:
            return handler.predict(self, "predict_log_proba", X)
        return self._log_posterior(X)

    def predict_proba(self, X):
        """``P(y = c | x)``, shape ``(n, n_classes)``; unaffected by ``costs``."""
        if (handler := handler_for(X)) is not None:
            return handler.predict(self, "predict_proba", X)
        log_resp = self._log_posterior(X)
        with np.errstate(under="ignore"):  # a posterior below 1e-308 is 0
            return np.exp(log_resp)

    def predict(self, X):
        """The Bayes decision: the class of least expected cost.

        Without ``costs`` this is the most probable class. With a cost matrix
        ``C[true, predicted]`` it is ``argmin_j sum_i P(y = i | x) C[i, j]``.
        """
        if (handler := handler_for(X)) is not None:
            return handler.predict(self, "predict", X)
        log_resp = self._log_posterior(X)
        if self._costs is None:
            return self.classes_[np.argmax(log_resp, axis=1)]
        with np.errstate(under="ignore"):
            expected = np.exp(log_resp) @ self._costs
        return self.classes_[np.argmin(expected, axis=1)]
