"""NaiveBayes: naive Bayes over any emission family."""

from __future__ import annotations

import numpy as np

from .._base.classifier import BaseGenerativeClassifier, Triple
from .._base.composed import FamilyAttributes, degenerate, read_family
from .._base.semi_supervised import unlabeled_rows
from .._base.triple import TripleClassifier
from .._base.variational import variational_family
from .._validation import StrOptions, _fit_context
from ..emissions import DIAG, Gaussian
from ..graph import LatentNode
from ._variational import fit_semi_supervised_variational

__all__ = ["NaiveBayes"]


class NaiveBayes(FamilyAttributes, TripleClassifier):
    """Naive Bayes over any emission family: one class node x a family x a prior.

    Given its class, every feature follows the family, independently of the
    others; the class posterior is the normalised product of the class prior
    and the family's likelihood (sum-product on the one-node tree).

    Parameters
    ----------
    emission : str or emission family, default='gaussian'
        The family of the features given the class: a name of
        ``bayeskit.emissions.family_names()`` or a family object of
        ``bayeskit.emissions``. ``'gaussian'`` is its naive form, one
        variance per feature (a Gaussian family object is used as given: a
        full covariance is quadratic discriminant analysis).
    emission_prior : object, default=None
        The family's prior object of ``bayeskit.priors``; None is the
        family's default (maximum likelihood; for Gaussians a ridge of
        ``1e-6`` on every variance).
    priors : array-like of shape (n_classes,), default=None
        Class prior probabilities; None estimates them from the class counts
        (with ``prior_m``).
    prior_m : float, default=0.0
        Virtual rows of the m-estimate of the class prior.
    costs : array-like, default=None
        Misclassification costs for ``predict`` (see :class:`GaussianNB`).
    unlabeled, unlabeled_weight
        Semi-supervised fitting, as in :class:`GaussianNB`; with
        ``inference='variational'`` by variational EM (``fit`` only, and
        ``prior_m > 0``: the class weights' Dirichlet prior must be proper).
    inference : {'em', 'variational'}, default='em'
        'em' sets the family's MAP parameters. 'variational' is the Bayesian
        naive Bayes: every class keeps the posterior of its parameters under
        the family's conjugate prior (``emission_prior``, or the default of
        :class:`HiddenMarkovModel`'s variational fit), and
        :meth:`predict_proba` is the posterior predictive: with labelled
        rows the posterior is exact, in closed form (no iteration). The
        families are those of :class:`HiddenMarkovModel`'s variational fit,
        plus diagonal Gaussians (a Normal-Gamma prior: ``'gaussian'``, the
        naive form); others are a ValueError naming ``inference``. The class
        prior is the posterior predictive too: the mean of a Dirichlet of
        concentration ``prior_m / n_classes`` (``prior_m = 0``: the relative
        frequencies).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_log_prior_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
    emission_params_ : object
        The family's parameters, one state per class; every field is also an
        attribute with a trailing underscore (``lambdas_``, ``means_``, ...).
        With ``inference='variational'`` the posterior means.
    emission_posterior_ : object
        With ``inference='variational'``: the posterior of every class's
        parameters (the family's conjugate prior object).
    stats_ : ClassifierStats
    n_features_in_ : int

    See Also
    --------
    GaussianNB, MixtureModel, HiddenMarkovModel

    Notes
    -----
    :math:`P(y = c \\mid x) \\propto P(y = c) \\prod_j f(x_j \\mid \\theta_{cj})`
    (Mitchell 1997, section 6.9), with the family's MAP parameters from the
    statistics of each class's rows. Missing cells (NaN) are marginalised
    where the family does so.

    With ``inference='variational'``, :math:`f(x_j \\mid \\theta_{cj})` is
    replaced by the posterior predictive :math:`\\int f(x_j \\mid \\theta)\\,
    p(\\theta \\mid \\text{rows of class } c)\\, d\\theta`: the
    Dirichlet-categorical (the posterior mean of every table) and the
    Dirichlet-multinomial for tables and counts, the negative binomial for
    Poisson counts, the Lomax for exponential values, and Student's t for
    Gaussian features (Bishop 2006, sections 2.2 and 2.3.7; Murphy 2012,
    sections 3.4 and 4.6.3). As the rows of a class grow, or its prior
    strengthens around fixed parameters, the predictive tends to the MAP
    density. ``partial_fit``, ``summarize`` and ``from_stats`` add the
    statistics and give the same exact posterior. With unlabelled rows the
    posterior is variational: the unlabelled rows' class posteriors under
    the expected log-parameters, then the posteriors of all the statistics,
    until the evidence lower bound (``em_lower_bounds_``, which never
    decreases) settles (Bishop 2006, section 10.2).

    References
    ----------
    .. [1] T. M. Mitchell, *Machine Learning*, McGraw-Hill, 1997, section 6.9.
    .. [2] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
       2006, sections 2.2-2.3.
    .. [3] K. P. Murphy, *Machine Learning: a Probabilistic Perspective*, MIT
       Press, 2012, sections 3.4 and 4.6.3.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import NaiveBayes
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.poisson(2, (50, 3)), rng.poisson(9, (50, 3))])
    >>> y = np.repeat(["few", "many"], 50)
    >>> NaiveBayes(emission="poisson").fit(X, y).predict([[1, 2, 3], [8, 9, 10]])
    array(['few', 'many'], dtype='<U4')
    """

    _parameter_constraints: dict = {
        **BaseGenerativeClassifier._parameter_constraints,
        "emission": [str, object],
        "emission_prior": [None, object],
        "inference": [StrOptions({"em", "variational"})],
    }
    _min_classes = 1
    _read = read_family

    def __init__(
        self,
        *,
        emission="gaussian",
        emission_prior=None,
        priors=None,
        prior_m=0.0,
        costs=None,
        unlabeled=None,
        unlabeled_weight=1.0,
        inference="em",
    ):
        self.emission = emission
        self.emission_prior = emission_prior
        self.priors = priors
        self.prior_m = prior_m
        self.costs = costs
        self.unlabeled = unlabeled
        self.unlabeled_weight = unlabeled_weight
        self.inference = inference

    def _emission_family(self):
        family = super()._emission_family()
        if isinstance(family, Gaussian) and self.emission == "gaussian":
            return Gaussian(DIAG)  # the naive form: features independent
        return family

    def _make_components(self) -> Triple:
        family = self._sized_family(self.n_features_in_)
        prior = self.emission_prior
        if prior is None:
            prior = family.default_prior()
        return Triple(LatentNode(len(self.classes_)), family, prior)

    def _family_params(self):
        return self.__dict__.get("_params")

    def _variational(self) -> bool:
        return self.inference == "variational"

    def _set_emission_params(self, stats) -> None:
        if self._variational():
            return self._set_posterior(stats)
        self.__dict__.pop("emission_posterior_", None)
        try:
            super()._set_emission_params(stats)
        except np.linalg.LinAlgError:
            raise degenerate(self, "class") from None

    def _set_posterior(self, stats) -> None:
        """The exact posterior of every class's parameters given its rows'
        statistics, and the posterior means as the fitted parameters."""
        triple = self._triple = self._make_components()
        family = triple.emission
        vb = variational_family(family)
        given = self.emission_prior
        n_classes = len(self.classes_)
        if given is None and "_vb_prior" in self.__dict__:
            prior = self._vb_prior  # a semi-supervised fit's, fixed
        elif given is None:
            # the default prior reads the data's mean and scale: the weighted
            # statistics of all the classes together
            prior = vb.default_prior_from_stats(family, stats)
        else:
            prior = vb.check_prior(family, given, n_classes)
        self.emission_prior_ = prior
        self.emission_posterior_ = vb.posterior(family, stats, prior)
        self._params = vb.point(family, self.emission_posterior_)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit from ``X`` and labels ``y`` (see :meth:`GaussianNB.fit`); with
        ``inference='variational'`` and unlabelled rows, semi-supervised
        variational EM (``bayeskit.naive_bayes._variational``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        if self._variational() and (mask := unlabeled_rows(self, y)) is not None:
            return fit_semi_supervised_variational(self, X, y, sample_weight, mask)
        return super().fit.__wrapped__(self, X, y, sample_weight)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Add a chunk's statistics (see :meth:`GaussianNB.partial_fit`);
        with ``inference='variational'``, labelled rows only.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), default=None
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        self._labelled_only(y, "partial_fit")
        return super().partial_fit(X, y, classes, sample_weight)

    def summarize(self, X, y, sample_weight=None):
        """A chunk's statistics (see :meth:`GaussianNB.summarize`); with
        ``inference='variational'``, labelled rows only.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        stats : ClassifierStats
        """
        self._labelled_only(y, "summarize")
        return super().summarize(X, y, sample_weight)

    def _labelled_only(self, y, method):
        if self._variational() and unlabeled_rows(self, y) is not None:
            raise ValueError(
                f"{method} with unlabelled rows (unlabeled={self.unlabeled!r}) "
                "is inference='em''s stepwise EM; with inference='variational' "
                "fit all the rows at once with fit"
            )

    def _log_likelihood(self, Xt):
        if self._variational() and "emission_posterior_" in self.__dict__:
            family = self._triple.emission
            return variational_family(family).log_predictive(
                family, Xt, self.emission_posterior_
            )
        return super()._log_likelihood(Xt)

    def _emission_log_prior(self) -> float:
        if self._variational():
            return 0.0
        triple = self._triple
        return float(triple.emission.log_prior(self._params, triple.prior))
