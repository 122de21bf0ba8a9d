"""Naive Bayes on counts (text): MultinomialNB, BernoulliNB and ComplementNB.

Each is the class node of the graph core times a count emission family times
the m-estimate (:meth:`_TextNB._make_components`): the multinomial family
(:class:`~bayeskit.emissions.Multinomial`) for word counts, the Bernoulli
family (:class:`~bayeskit.emissions.Bernoulli`, two-category tables) for word
presence. ComplementNB gathers the multinomial family's statistics and takes
its weights from the complement of every class (Rennie et al., 2003).

``X`` may be dense or a scipy.sparse matrix or array (CSR, CSC, or any other
format, read as CSR): the statistics are class sums, one addition per stored
count, and the scores a sparse-dense product; nothing is densified, and dense
and sparse input give the same results bit for bit.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import scipy.sparse as sp

from .._base.classifier import BaseGenerativeClassifier, Triple
from .._base.triple import TripleClassifier
from .._validation import Interval, validate_data
from .._warnings import warn
from ..emissions import Bernoulli, Multinomial
from ..emissions._count_kernels import CountMatrix, scores
from ..emissions.multinomial import MultinomialParams, MultinomialStats
from ..graph import LatentNode
from ..priors import MEstimate

__all__ = ["BernoulliNB", "ComplementNB", "MultinomialNB"]

_ALPHA_MIN = 1e-10


def _discrete_class_prior(est, k: int):
    """``class_prior`` / ``fit_prior`` as scikit-learn's discrete naive Bayes
    reads them: the given prior, a uniform one, or None (estimated)."""
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
        return prior
    if not est.fit_prior:
        return np.full(k, 1.0 / k)
    return None


def _read_counts(est, X, reset, sample_weight=None, grows=False):
    """Validated ``X`` as a :class:`CountMatrix` (dense, CSR or CSC)."""
    X = validate_data(
        est,
        X,
        reset=reset,
        accept_sparse=("csr", "csc"),
        dtype="numeric",  # integer counts stay integers: the kernels read them
    )
    if X.shape[0] == 0:
        raise ValueError("X has 0 samples; at least one is required")
    if sp.issparse(X) and not X.has_canonical_format:
        # Duplicate entries of a (non-canonical) CSR/CSC matrix mean their sum,
        # as in scipy's arithmetic; summed on a copy, never the caller's matrix
        # (validation may hand back the very object it was given).
        X = X.copy()
        X.sum_duplicates()
    counts = CountMatrix.of(X)
    if sample_weight is not None and est._non_negative and counts.min() < 0:
        raise ValueError(
            f"Negative values in data passed to {type(est).__name__} (input X): "
            "X holds counts (or frequencies), which are non-negative"
        )
    if (
        sample_weight is not None
        and getattr(est, "binarize", 0.0) is None
        and counts.data.size
        and (counts.min() < 0 or counts.data.max() > 1)
    ):
        raise ValueError(
            "binarize=None reads X as presences, values in [0, 1], but X holds "
            "values outside it; give binarize a threshold (e.g. binarize=0.0) to "
            "turn X into presences"
        )
    return counts, False


def _check_count_total(stats) -> None:
    """ValueError naming X when the counts sum past the float64 maximum: the
    class (and complement) totals would be infinite and the log-probabilities
    NaN. The counts are non-negative, so a finite total bounds every sum."""
    with np.errstate(over="ignore"):
        total = float(np.sum(stats.counts))
    if not np.isfinite(total):
        raise ValueError(
            "the counts of X (times sample_weight) sum past the float64 "
            "maximum (about 1.8e308), so the class totals overflow; rescale X "
            "(divide it by a power of ten)"
        )


class _TextNB(TripleClassifier):
    """What the three count naive Bayes classifiers share: scikit-learn's
    ``alpha`` / ``force_alpha`` / ``fit_prior`` / ``class_prior``, bayeskit's
    m-estimate, and prediction from the emission's scores."""

    _parameter_constraints: dict = {
        **BaseGenerativeClassifier._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="left"), "array-like"],
        "force_alpha": ["boolean"],
        "fit_prior": ["boolean"],
        "class_prior": ["array-like", None],
        "m": [Interval(Real, 0, None, closed="left"), None],
        "p": ["array-like", None],
    }
    del _parameter_constraints["priors"]

    _min_classes = 1
    _partial_fit_requires_classes = True
    _non_negative = True
    _read = _read_counts
    _checked_priors = _discrete_class_prior

    # -- the triple ------------------------------------------------------------------
    def _emission(self):  # pragma: no cover - every subclass
        raise NotImplementedError

    def _make_components(self) -> Triple:
        return Triple(LatentNode(len(self.classes_)), self._emission(), self._prior())

    def _emission_stats(self, Xt, weights, labels):
        return self._emission().stats(Xt, weights, labels)

    def _check_alpha(self):
        """The ``alpha`` the fit uses: checked against ``n_features_in_``, and
        raised to 1e-10 (with a warning) unless ``force_alpha``."""
        alpha = np.asarray(self.alpha, dtype=float)
        d = getattr(self, "n_features_in_", None) if alpha.ndim else None
        if alpha.ndim > 1 or (alpha.ndim == 1 and alpha.shape[0] != d):
            raise ValueError(
                "When alpha is an array, it should contains `n_features` values "
                f"(one per feature): got shape {alpha.shape} for {d} features"
            )
        if not np.all(np.isfinite(alpha)) or (alpha < 0).any():
            raise ValueError("All values in alpha must be greater than 0.")
        if not self.force_alpha and (alpha < _ALPHA_MIN).any():
            warn(
                "alpha too small will result in numeric errors, setting alpha = "
                f"{_ALPHA_MIN:.1e}; use force_alpha=True to keep alpha as it is",
                UserWarning,
            )
            alpha = np.maximum(alpha, _ALPHA_MIN)
        return alpha if alpha.ndim else float(alpha)

    def _m_and_p(self, d: int):
        """``m`` and ``p`` of the multinomial m-estimate: the user's, or
        ``alpha``'s (``m = sum_j alpha_j``, ``p = alpha / m``)."""
        if self.m is not None:
            if not (isinstance(self.alpha, Real) and self.alpha == 1.0):
                raise ValueError(
                    "give either alpha (additive smoothing, e.g. alpha=1.0) or m "
                    "(the m-estimate, e.g. m=100.0, p=...), not both; alpha=a is "
                    "m = a * n_features with uniform p"
                )
            return float(self.m), self._checked_p(d)
        if self.p is not None:
            raise ValueError(
                "p is the prior distribution of the m-estimate and needs m (e.g. "
                "m=100.0, p=...); alpha smooths toward the uniform distribution"
            )
        alpha = np.broadcast_to(self._check_alpha(), (d,))
        m = float(alpha.sum())
        return m, (alpha / m if m > 0 else np.full(d, 1.0 / d))

    def _checked_p(self, d: int) -> np.ndarray:
        if self.p is None:
            return np.full(d, 1.0 / d)
        p = np.asarray(self.p, dtype=float)
        if p.shape != (d,):
            raise ValueError(
                f"p must have shape ({d},) (n_features): a prior distribution over "
                f"the features, got shape {p.shape}"
            )
        if not np.all(np.isfinite(p)) or (p < 0).any() or not np.isclose(p.sum(), 1):
            raise ValueError(
                "p must be a probability distribution over the features "
                "(non-negative, summing to 1)"
            )
        return p

    def _prior(self):
        m, p = self._m_and_p(self.n_features_in_)
        return MEstimate(m, p)

    # -- fitted attributes -------------------------------------------------------------
    def _set_emission_params(self, stats) -> None:
        _check_count_total(stats)
        triple = self._components()
        self._params = self._map_params(triple, stats)
        self.feature_count_ = stats.counts  # the statistics themselves, not a copy
        self._set_scoring(stats, triple)

    def _map_params(self, triple, stats):
        return triple.emission.map_params(stats, triple.prior)

    def _set_scoring(self, stats, triple) -> None:  # pragma: no cover - subclasses
        raise NotImplementedError

    # -- prediction -------------------------------------------------------------------
    def _log_likelihood(self, Xt):
        return self._triple.emission.log_kernel(Xt, self._params)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = self._non_negative
        tags.classifier_tags.poor_score = True
        return tags


class MultinomialNB(_TextNB):
    """Multinomial naive Bayes for counts (word counts, TF-IDF), dense or sparse.

    A drop-in for scikit-learn's ``MultinomialNB`` (same parameters,
    attributes and results), plus the m-estimate with a prior distribution
    over the vocabulary, misclassification costs and the statistics API
    (:meth:`summarize` / :meth:`from_stats`).

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive (Laplace/Lidstone) smoothing: ``alpha`` pseudo-counts for
        every feature (an array: one per feature). Used when ``m`` is None.
    force_alpha : bool, default=True
        If False, an ``alpha`` below 1e-10 is raised to 1e-10 with a warning;
        if True it is used as it is (``alpha=0`` is maximum likelihood).
    fit_prior : bool, default=True
        Whether to estimate the class prior from the class counts; if False it
        is uniform. Ignored when ``class_prior`` is given.
    class_prior : array-like of shape (n_classes,), default=None
        Class prior probabilities, used as given.
    m : float, default=None
        The m-estimate instead of ``alpha``: ``m`` virtual words drawn from
        ``p`` join every class's counts. None uses ``alpha`` (``alpha`` is the
        m-estimate with ``m = alpha * n_features`` and uniform ``p``); giving
        ``m`` and a non-default ``alpha`` is an error.
    p : array-like of shape (n_features,), default=None
        The prior distribution over the features (the vocabulary) of the
        m-estimate, for example word frequencies of a background corpus;
        needs ``m``. None is uniform.
    prior_m : float, default=0.0
        m-estimate of the class prior, ``P(y=c) = (n_c + prior_m / n_classes)
        / (n + prior_m)``. Used when ``fit_prior`` is True and
        ``class_prior`` is None.
    costs : array-like of shape (n_classes,) or (n_classes, n_classes), default=None
        Misclassification costs for :meth:`predict`: a vector (the cost of
        misclassifying each true class) or a matrix ``C[true, predicted]``.
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
    feature_count_ : ndarray of shape (n_classes, n_features)
        Weighted count of every feature per class.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        ``log P(feature j | y = c)``.
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
    BernoulliNB, ComplementNB, CategoricalNB

    Notes
    -----
    A document ``x`` (a row of counts) of class ``c`` is a sequence of words
    drawn independently from ``P(j | c)`` (McCallum and Nigam, 1998), so

    .. math::

        \\log P(x, y = c) = \\log P(y = c) + \\sum_j x_j \\log P(j \\mid c)
            + \\text{const}(x),

    the constant (the multinomial coefficient) being the same for every class
    and left out of :meth:`predict_joint_log_proba`, as in scikit-learn. The
    word probabilities are the m-estimate (Mitchell, 1997)

    .. math::

        P(j \\mid c) = \\frac{n_{cj} + m\\, p_j}{n_c + m},

    :math:`n_{cj}` the weighted count of word j in class c and :math:`n_c =
    \\sum_j n_{cj}`; Lidstone's ``alpha`` is :math:`m = \\alpha d`, :math:`p_j
    = 1/d` (an array :math:`\\alpha_j`: :math:`m = \\sum_j \\alpha_j`, :math:`p
    = \\alpha / m`). With ``alpha=0`` a word of probability zero in a class
    gives that class probability zero for a document that uses it (never
    NaN); a document impossible under every class falls back to the class
    prior with a warning.

    References
    ----------
    A. McCallum and K. Nigam, "A comparison of event models for naive Bayes
    text classification", AAAI-98 Workshop on Learning for Text
    Categorization, 1998.

    T. Mitchell, *Machine Learning*, McGraw-Hill, 1997, section 6.9.1.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.sparse import csr_matrix
    >>> from bayeskit import MultinomialNB
    >>> X = csr_matrix(np.array([[2, 1, 0, 0], [3, 0, 1, 0], [0, 0, 2, 3],
    ...                          [0, 1, 1, 4]]))
    >>> y = np.array(["sport", "sport", "politics", "politics"])
    >>> clf = MultinomialNB(alpha=0.5).fit(X, y)
    >>> clf.predict(csr_matrix(np.array([[1, 1, 0, 0]])))
    array(['sport'], dtype='<U8')
    """

    _parameter_constraints: dict = dict(_TextNB._parameter_constraints)

    def __init__(
        self,
        *,
        alpha=1.0,
        force_alpha=True,
        fit_prior=True,
        class_prior=None,
        m=None,
        p=None,
        prior_m=0.0,
        costs=None,
        unlabeled=None,
        unlabeled_weight=1.0,
    ):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.m = m
        self.p = p
        self.prior_m = prior_m
        self.unlabeled = unlabeled
        self.unlabeled_weight = unlabeled_weight
        self.costs = costs

    def _emission(self):
        return Multinomial(self.n_features_in_)

    def _map_params(self, triple, stats):
        # the log-probabilities only: no array of probabilities beside them
        return MultinomialParams(
            None, triple.emission.map_log_prob(stats, triple.prior)
        )

    def _set_scoring(self, stats, triple) -> None:
        self.feature_log_prob_ = self._params.log_emissionprob()

    def _emission_log_prior(self) -> float:
        # The Dirichlet whose mode is the m-estimate: sum_cj m p_j log theta_cj.
        return self._triple.prior.log_density(np.exp(self.feature_log_prob_))


class ComplementNB(_TextNB):
    """Complement naive Bayes (Rennie et al., 2003) for counts, dense or sparse.

    A drop-in for scikit-learn's ``ComplementNB`` (same parameters,
    attributes and results), plus the m-estimate of the complement
    distributions, misclassification costs and the statistics API
    (:meth:`summarize` / :meth:`from_stats`).

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive smoothing of the complement counts (an array: one per
        feature). Used when ``m`` is None.
    force_alpha : bool, default=True
        If False, an ``alpha`` below 1e-10 is raised to 1e-10 with a warning;
        if True it is used as it is.
    fit_prior : bool, default=True
        As scikit-learn's: the class prior is used only when the training data
        have a single class.
    class_prior : array-like of shape (n_classes,), default=None
        As scikit-learn's: used only with a single class.
    norm : bool, default=False
        Whether to normalise every class's weights to sum to one (step 7 of
        the paper's algorithm; off by default, as in scikit-learn).
    m : float, default=None
        The m-estimate of the complement distributions instead of ``alpha``
        (``alpha`` is ``m = alpha * n_features`` with uniform ``p``).
    p : array-like of shape (n_features,), default=None
        The prior distribution over the features of the m-estimate; needs
        ``m``. None is uniform.
    prior_m : float, default=0.0
        m-estimate of the class prior (see :class:`MultinomialNB`).
    costs : array-like of shape (n_classes,) or (n_classes, n_classes), default=None
        Misclassification costs for :meth:`predict` (see :class:`MultinomialNB`).
    unlabeled, unlabeled_weight
        The marker of unlabelled rows in ``y`` and their weight in EM (see
        :class:`MultinomialNB`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
    class_log_prior_ : ndarray of shape (n_classes,)
    feature_all_ : ndarray of shape (n_features,)
        Weighted count of every feature over all classes.
    feature_count_ : ndarray of shape (n_classes, n_features)
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        The weights of every class (from its complement; see Notes).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
    stats_ : ClassifierStats
    em_n_iter_, em_lower_bound_, em_lower_bounds_, em_converged_
        After a fit with unlabelled rows (see :class:`MultinomialNB`).

    See Also
    --------
    MultinomialNB, BernoulliNB

    Notes
    -----
    Each class is scored by how badly its complement (the other classes'
    documents together) explains the document: with
    :math:`\\tilde n_{cj} = \\sum_{c' \\ne c} n_{c'j}` and the m-estimate
    :math:`\\tilde\\theta_{cj} = (\\tilde n_{cj} + m p_j) / (\\tilde n_c + m)`,
    the weights are :math:`w_{cj} = -\\log \\tilde\\theta_{cj}` (``norm``:
    :math:`\\log \\tilde\\theta_{cj} / \\sum_k \\log \\tilde\\theta_{ck}`) and the
    class of a document is :math:`\\arg\\max_c \\sum_j x_j w_{cj}`. The class
    prior is not used unless there is one class (as in scikit-learn), and
    :meth:`predict_proba` normalises the scores; they are not probabilities of a
    generative model.

    With unlabelled rows (``unlabeled``), the EM of :class:`MultinomialNB`
    runs on these scores: the E-step takes the normalised scores as the class
    posterior, the M-step refits the complements from the soft counts. It is
    a heuristic, not EM on a likelihood: the complement estimate
    :math:`\\tilde\\theta_c` is not the maximiser of the expected complete-data
    objective :math:`\\sum_i r_{ic} \\sum_j x_{ij} \\log(\\cdot)`, so the
    guarantee of Dempster, Laird and Rubin (1977) does not hold and
    ``em_lower_bounds_`` (that objective, with the scores in place of
    :math:`\\log P(x \\mid c)`) can decrease from one iteration to the next;
    it is reported for monitoring. The loop stops at ``tol`` or after its
    iterations as for the other classifiers.

    References
    ----------
    J. D. M. Rennie, L. Shih, J. Teevan and D. R. Karger, "Tackling the poor
    assumptions of naive Bayes text classifiers", ICML 2003.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import ComplementNB
    >>> X = np.array([[2, 1, 0, 0], [3, 0, 1, 0], [0, 0, 2, 3], [0, 1, 1, 4]])
    >>> y = np.array([0, 0, 1, 1])
    >>> ComplementNB().fit(X, y).predict([[0, 0, 1, 2]])
    array([1])
    """

    _parameter_constraints: dict = {
        **_TextNB._parameter_constraints,
        "norm": ["boolean"],
    }

    def __init__(
        self,
        *,
        alpha=1.0,
        force_alpha=True,
        fit_prior=True,
        class_prior=None,
        norm=False,
        m=None,
        p=None,
        prior_m=0.0,
        costs=None,
        unlabeled=None,
        unlabeled_weight=1.0,
    ):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.norm = norm
        self.m = m
        self.p = p
        self.prior_m = prior_m
        self.costs = costs
        self.unlabeled = unlabeled
        self.unlabeled_weight = unlabeled_weight

    def _emission(self):
        return Multinomial(self.n_features_in_)

    def _set_emission_params(self, stats) -> None:
        _check_count_total(stats)
        triple = self._components()
        self.feature_count_ = stats.counts  # the statistics themselves, not a copy
        self.feature_all_ = stats.counts.sum(axis=0)
        complement = MultinomialStats(
            stats.weight.sum() - stats.weight, self.feature_all_ - stats.counts
        )
        logged = triple.emission.map_log_prob(complement, triple.prior)
        del complement
        if self.norm:
            with np.errstate(invalid="ignore"):
                weights = logged / logged.sum(axis=1, keepdims=True)
            # A word absent from a complement (alpha=0) has log -inf: its
            # class's weights are the limit as alpha -> 0, shared equally by
            # those words (never -inf / -inf = NaN).
            zero = np.isneginf(logged)
            rows = zero.any(axis=1)
            if rows.any():
                share = zero[rows] / zero[rows].sum(axis=1, keepdims=True)
                weights[rows] = share
        else:
            weights = np.negative(logged, out=logged)
        self.feature_log_prob_ = weights
        self._params = weights

    def _log_likelihood(self, Xt):
        return scores(Xt, self._params.T)

    def _decision_log_prior(self) -> np.ndarray:
        if len(self.classes_) == 1:
            return self.class_log_prior_
        return np.zeros(len(self.classes_))


class BernoulliNB(_TextNB):
    """Bernoulli naive Bayes for binary features (word presence), dense or sparse.

    A drop-in for scikit-learn's ``BernoulliNB`` (same parameters,
    attributes and results), plus the m-estimate of every feature's
    probability of presence, misclassification costs and the statistics API
    (:meth:`summarize` / :meth:`from_stats`). It is :class:`CategoricalNB`
    with two categories (absent, present) per feature, stored compactly so
    that sparse input stays sparse.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive smoothing: ``alpha`` pseudo-counts for presence and for
        absence of every feature (an array: one per feature). Used when ``m``
        is None.
    force_alpha : bool, default=True
        If False, an ``alpha`` below 1e-10 is raised to 1e-10 with a warning;
        if True it is used as it is.
    binarize : float or None, default=0.0
        A value above this threshold is a presence, any other an absence. None
        reads ``X`` as presences already (0/1, or fractions in [0, 1]; other
        values are an error in fit).
    fit_prior : bool, default=True
        Whether to estimate the class prior from the class counts; if False it
        is uniform. Ignored when ``class_prior`` is given.
    class_prior : array-like of shape (n_classes,), default=None
        Class prior probabilities, used as given.
    m : float or array-like of shape (n_features,), default=None
        The m-estimate instead of ``alpha``: ``m_j`` virtual rows per feature
        (``alpha`` is ``m = 2 alpha``, ``p = 1/2``).
    p : array-like of shape (n_features,), default=None
        The prior probability of presence of every feature for the
        m-estimate; needs ``m``. None is 1/2.
    prior_m : float, default=0.0
        m-estimate of the class prior (see :class:`MultinomialNB`).
    costs : array-like of shape (n_classes,) or (n_classes, n_classes), default=None
        Misclassification costs for :meth:`predict` (see :class:`MultinomialNB`).
    unlabeled, unlabeled_weight
        The marker of unlabelled rows in ``y`` and their weight in EM (see
        :class:`MultinomialNB`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
    class_log_prior_ : ndarray of shape (n_classes,)
    feature_count_ : ndarray of shape (n_classes, n_features)
        Weighted number of rows of every class in which each feature is present.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        ``log P(x_j = 1 | y = c)``.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
    stats_ : ClassifierStats
    em_n_iter_, em_lower_bound_, em_lower_bounds_, em_converged_
        After a fit with unlabelled rows (see :class:`MultinomialNB`).

    See Also
    --------
    MultinomialNB, CategoricalNB

    Notes
    -----
    Every feature is present or absent independently given the class
    (McCallum and Nigam, 1998):

    .. math::

        \\log P(x, y = c) = \\log P(y = c) + \\sum_j x_j \\log \\theta_{cj}
            + (1 - x_j) \\log(1 - \\theta_{cj}),
        \\qquad \\theta_{cj} = \\frac{n_{cj} + m_j p_j}{n_c + m_j},

    the m-estimate of each feature's two-category table, with ``n_c`` the
    class's weighted number of rows. Absent features count too, so the
    score of a row is :math:`\\sum_j \\log(1 - \\theta_{cj})` plus a sum over its
    present features only: a sparse-dense product. ``1 - theta`` is computed
    from the counts of absences, not by subtraction, and a feature present in
    every row of a class (``alpha=0``) makes its absence impossible there,
    never NaN.

    References
    ----------
    A. McCallum and K. Nigam, "A comparison of event models for naive Bayes
    text classification", AAAI-98 Workshop on Learning for Text
    Categorization, 1998.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import BernoulliNB
    >>> X = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [0, 0, 1, 1], [0, 1, 1, 1]])
    >>> y = np.array([0, 0, 1, 1])
    >>> BernoulliNB().fit(X, y).predict([[1, 0, 0, 0]])
    array([0])
    """

    _parameter_constraints: dict = {
        **_TextNB._parameter_constraints,
        "m": [Interval(Real, 0, None, closed="left"), "array-like", None],
        "binarize": [None, Interval(Real, 0, None, closed="left")],
    }

    _non_negative = False

    def __init__(
        self,
        *,
        alpha=1.0,
        force_alpha=True,
        binarize=0.0,
        fit_prior=True,
        class_prior=None,
        m=None,
        p=None,
        prior_m=0.0,
        costs=None,
        unlabeled=None,
        unlabeled_weight=1.0,
    ):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.binarize = binarize
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.m = m
        self.p = p
        self.prior_m = prior_m
        self.costs = costs
        self.unlabeled = unlabeled
        self.unlabeled_weight = unlabeled_weight

    def _emission(self):
        return Bernoulli(self.n_features_in_, self.binarize)

    def _prior(self):
        d = self.n_features_in_
        if self.m is None:
            if self.p is not None:
                raise ValueError(
                    "p is the prior probability of presence of the m-estimate and "
                    "needs m (e.g. m=2.0, p=...); alpha smooths toward 1/2"
                )
            return MEstimate(2.0 * np.broadcast_to(self._check_alpha(), (d,)), 0.5)
        if not (isinstance(self.alpha, Real) and self.alpha == 1.0):
            raise ValueError(
                "give either alpha (additive smoothing, e.g. alpha=1.0) or m (the "
                "m-estimate, e.g. m=2.0, p=...), not both; alpha=a is m = 2 a "
                "with p = 1/2"
            )
        m = np.asarray(self.m, dtype=float)
        if m.ndim > 1 or (m.ndim == 1 and m.shape != (d,)):
            raise ValueError(f"m must be a number or have shape ({d},), got {m.shape}")
        if not np.all(np.isfinite(m)) or (m < 0).any():
            raise ValueError(f"m must be finite and >= 0, got {m}")
        if self.p is None:
            p = np.full(d, 0.5)
        else:
            p = np.asarray(self.p, dtype=float)
            if p.shape != (d,) or not np.all((p >= 0) & (p <= 1)):
                raise ValueError(
                    f"p must have shape ({d},) with every value in [0, 1] (the "
                    f"prior probability that each feature is present), got {p}"
                )
        return MEstimate(np.broadcast_to(m, (d,)), p)

    def _set_scoring(self, stats, triple) -> None:
        self.feature_log_prob_ = self._params.log_prob

    def _emission_log_prior(self) -> float:
        # The Beta of m p and m (1 - p) pseudo-counts, whose mode is the
        # m-estimate.
        prior, params = self._triple.prior, self._params
        absent = MEstimate(prior.m, 1.0 - np.asarray(prior.p))
        return prior.log_density(np.exp(params.log_prob)) + absent.log_density(
            np.exp(params.log_neg)
        )

    def _log_likelihood(self, Xt):
        return self._triple.emission.log_likelihood(Xt, self._params)
