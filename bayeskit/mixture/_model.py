"""A mixture of any emission family: one latent node x a family x a prior.

:class:`MixtureModel` is the composition written as an estimator: the latent
structure is one component node (:class:`~bayeskit.graph.LatentNode`), the
emission family is any of ``bayeskit.emissions`` (by name, such as
``"poisson"``, or as an object), and the priors are the family's (its
conjugate prior object) and a Dirichlet on the mixing weights. EM is the one
loop of :class:`~bayeskit._base.em.BaseLatentModel` (posterior, statistics,
parameters) with scikit-learn's habits (``max_iter``, a ``ConvergenceWarning``,
``lower_bound_`` per sample). A named mixture, such as :class:`PoissonMixture`,
is this class with a family fixed: its docstring and its defaults.

References
----------
.. [1] A. P. Dempster, N. M. Laird and D. B. Rubin, "Maximum likelihood from
   incomplete data via the EM algorithm", *Journal of the Royal Statistical
   Society B* 39(1), 1977, pp. 1-38.
.. [2] G. McLachlan and D. Peel, *Finite Mixture Models*, Wiley, 2000.
.. [3] R. M. Neal and G. E. Hinton, "A view of the EM algorithm that justifies
   incremental, sparse, and other variants", in M. I. Jordan (ed.),
   *Learning in Graphical Models*, Kluwer, 1998, pp. 355-368.
"""

from __future__ import annotations

from dataclasses import replace
from numbers import Integral, Real
from types import SimpleNamespace

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if

from .._base.classifier import Triple
from .._base.composed import FamilyAttributes, degenerate, read_family
from .._base.em import (
    SKLEARN,
    BaseLatentModel,
    LatentParams,
    LatentPrior,
    LatentStats,
    described,
)
from .._base.monitor import ChangeMonitor
from .._base.variational import variational_family
from .._collections import handler_for
from .._validation import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    check_n_samples,
    check_sample_weight,
)
from ..graph import LatentNode, NodeParams
from ..priors import Dirichlet
from ._missing import mean_imputed
from ._start import initial_responsibilities
from ._variational import MixtureVariationalRun

__all__ = ["MixtureModel"]


class MixtureModel(FamilyAttributes, BaseLatentModel):
    """A finite mixture of any emission family, fitted by EM (MAP).

    Each row comes from one of ``n_components`` components, chosen with
    probabilities ``weights_``; given its component, the row follows the
    emission family with that component's parameters.

    Parameters
    ----------
    n_components : int, default=1
        Number of components.
    emission : str or emission family, default='gaussian'
        The family of every component: a name of
        ``bayeskit.emissions.family_names()`` (``'gaussian'``: full
        covariances; ``'poisson'``: independent counts; ...), or a family
        object of ``bayeskit.emissions`` (such as
        ``Gaussian(DIAG)``), sized to the data's columns by ``fit``.
    emission_prior : object, default=None
        The family's prior (its object of ``bayeskit.priors``, such as a
        ``Gamma`` for Poisson rates or a ``NormalInverseWishart`` for
        Gaussians). None is the family's default: maximum likelihood, with
        scikit-learn's ridge for Gaussians (``1e-6`` added to the diagonal of
        every covariance, ``GaussianMixture``'s ``reg_covar``).
    weights_prior : float or array-like, default=1.0
        Concentration of the Dirichlet prior on the mixing weights, read by
        its mode; 1 is maximum likelihood, above 1 keeps components from
        emptying.
    tol : float, default=1e-3
        EM stops when the objective per sample changes by less than ``tol``.
    max_iter : int, default=100
        EM iterations at most (0: the start only).
    n_init : int, default=1
        Starts; the best final objective is kept.
    init_params : str, default='kmeans'
        First responsibilities, as scikit-learn's ``GaussianMixture``:
        'kmeans', 'k-means++', 'random' or 'random_from_data'.
    random_state : int, RandomState instance or None, default=None
    warm_start : bool, default=False
        Start ``fit`` from the fitted parameters (one start).
    verbose : int, default=0
        Print every iteration's objective.
    n_jobs : int, default=None
        Starts run in parallel through joblib.
    inference : {'em', 'variational'}, default='em'
        'em' fits the MAP parameters; 'variational' keeps a posterior over
        the weights (a Dirichlet of concentration ``weights_prior``) and the
        family's parameters (its conjugate prior: a ``Gamma`` for 'poisson'
        and 'exponential', a ``NormalInverseWishart`` for 'gaussian' with
        full covariances, a ``NormalInverseGamma`` for ``Gaussian(DIAG)``, a
        ``Dirichlet`` for ``Categorical`` and ``Multinomial``; the other
        families are a ValueError naming ``inference``, see
        :class:`HiddenMarkovModel`), by
        variational EM (Bishop 2006, ch. 10). ``lower_bound_`` is then the
        evidence lower bound per unit of sample weight, the fitted parameters
        are the posterior means, and predictions use the expected
        log-parameters, as scikit-learn's ``BayesianGaussianMixture``.
        ``partial_fit``, ``summarize`` and ``from_stats`` are EM's.

    Attributes
    ----------
    weights_ : ndarray of shape (n_components,)
        Mixing weights.
    emission_params_ : object
        The family's parameters; each of their fields is also an attribute
        with a trailing underscore (``lambdas_`` for Poisson rates,
        ``means_`` and ``covariances_`` for Gaussians).
    stats_ : LatentStats
        The statistics the parameters were derived from.
    converged_ : bool
    n_iter_ : int
    lower_bound_ : float
        Log posterior per sample (log-likelihood plus log prior, over the
        total weight) of the best start.
    lower_bounds_ : list of float
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features,)

    See Also
    --------
    GaussianMixture : the Gaussian mixture with scikit-learn's parameters.
    PoissonMixture : this class over Poisson counts.

    Notes
    -----
    The density is :math:`p(x) = \\sum_k \\pi_k f(x \\mid \\theta_k)`. EM
    alternates the posterior of the component of every row (the E-step,
    sum-product on the one-node tree) and the parameters from the
    statistics it weights (the M-step: :math:`\\pi` as the Dirichlet
    posterior mode, :math:`\\theta_k` by the family's MAP update); the log
    posterior never decreases (Dempster, Laird and Rubin 1977; McLachlan
    and Peel 2000, ch. 2). Missing cells (NaN) are latent where the family
    marginalises them. ``partial_fit`` is one step of incremental EM (Neal
    and Hinton 1998), and ``summarize`` / ``from_stats`` split an EM
    iteration over chunks of data.

    References
    ----------
    .. [1] G. McLachlan and D. Peel, *Finite Mixture Models*, Wiley, 2000.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import MixtureModel
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.poisson(2, (200, 1)), rng.poisson(20, (200, 1))])
    >>> mix = MixtureModel(2, emission="poisson", random_state=0).fit(X)
    >>> np.sort(mix.lambdas_.ravel()).round(0)
    array([ 2., 20.])
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "emission": [str, object],
        "emission_prior": [None, object],
        "weights_prior": ["array-like", Interval(Real, 0, None, closed="neither")],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "init_params": [
            StrOptions({"kmeans", "random", "random_from_data", "k-means++"})
        ],
        "random_state": ["random_state"],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
        "n_jobs": [Integral, None],
        "inference": [StrOptions({"em", "variational"})],
    }
    _convention = SKLEARN
    _convergence_advice = (
        "increase max_iter or tol, try another init_params or n_init, or set "
        "a prior if the data are degenerate"
    )

    def __init__(
        self,
        n_components=1,
        *,
        emission="gaussian",
        emission_prior=None,
        weights_prior=1.0,
        tol=1e-3,
        max_iter=100,
        n_init=1,
        init_params="kmeans",
        random_state=None,
        warm_start=False,
        verbose=0,
        n_jobs=None,
        inference="em",
    ):
        self.n_components = n_components
        self.emission = emission
        self.emission_prior = emission_prior
        self.weights_prior = weights_prior
        self.tol = tol
        self.max_iter = max_iter
        self.n_init = n_init
        self.init_params = init_params
        self.random_state = random_state
        self.warm_start = warm_start
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.inference = inference

    # -- the components: built once per fit, read by every other method ----------
    def _make_components(self) -> Triple:
        """The triple of the current fit (sized to the data by ``fit``)."""
        return self._triple

    def _build(self, X) -> Triple:
        family = self._emission_family().for_data(X)
        emission_prior = self._emission_prior()
        if emission_prior is None:
            emission_prior = family.default_prior()
        prior = LatentPrior(Dirichlet(self.weights_prior), emission_prior)
        return Triple(LatentNode(self.n_components), family, prior)

    def _emission_prior(self):
        """The family's prior object (a named mixture builds it from its own
        parameters)."""
        return self.emission_prior

    # -- input -------------------------------------------------------------------
    def _read(self, X, sample_weight, reset, min_samples=1):
        X = read_family(self, X, reset)[0]
        if X.shape[0] < min_samples:
            raise ValueError(
                f"X has too few rows: found array with {X.shape[0]} sample(s) "
                f"(shape={X.shape}) while a minimum of {min_samples} is required "
                f"by {type(self).__name__} (n_components={self.n_components})"
            )
        if np.isnan(X).all(axis=1).any():
            raise ValueError("X has a row with every value missing (NaN)")
        sw = check_sample_weight(sample_weight, X, allow_all_zero=not reset)
        return X, sw

    # -- parameters ----------------------------------------------------------------
    def _current_params(self) -> LatentParams:
        return LatentParams(NodeParams(self.weights_), self._emission_value)

    def _set_params(self, params: LatentParams) -> None:
        self.weights_ = params.structure.weights
        self._emission_value = params.emission

    def _new_monitor(self):
        return ChangeMonitor(self.tol, self.max_iter, self.verbose)

    def _start(self, X, sw, random_state) -> LatentParams:
        """First parameters: the MAP parameters of the statistics of the
        first responsibilities (``init_params``), on mean-imputed rows."""
        structure, emission, _ = self._triple
        Xi = mean_imputed(X, sw)
        resp = initial_responsibilities(
            self.init_params, Xi, sw, self.n_components, random_state
        )
        w = resp * sw[:, None]
        stats = LatentStats(structure.stats(w), emission.stats(Xi, w))
        previous = LatentParams(structure.init_params(), None)
        return self._params_from_stats(stats, previous, self._triple)

    # -- learning ----------------------------------------------------------------
    def _params_from_stats(self, stats, previous, components) -> LatentParams:
        try:
            return super()._params_from_stats(stats, previous, components)
        except np.linalg.LinAlgError:
            raise degenerate(self, "component") from None

    def _expected_stats(self, data, params, components) -> LatentStats:
        """The E-step: the component posterior of every row under ``params``
        and both parts' statistics weighted by it."""
        X, sw = data
        structure, emission, _ = components
        post = structure.posterior(
            emission.log_likelihood(X, params.emission), params.structure
        )
        resp = np.exp(post.log_resp) * sw[:, None]
        return LatentStats(
            structure.stats(resp),
            emission.expected_stats(X, resp, params.emission),
            float(sw @ post.log_evidence),
        )

    def _fit(self, X, sample_weight):
        warm = self.warm_start and hasattr(self, "converged_")
        X, sw = self._read(
            X, sample_weight, reset=not warm, min_samples=max(self.n_components, 2)
        )
        if not sw.any():
            raise ValueError("sample_weight must not be all zero")
        if not warm:
            self._triple = self._build(X)
            self.__dict__.pop("_vb_state", None)
        rng = check_random_state(self.random_state)
        if self._variational():
            self._fit_variational(X, sw, rng)
        elif warm:
            current = self._current_params()

            def start(_):
                return current

            n_init, self.n_init = self.n_init, 1
            try:
                self._fit_components((X, sw), start, rng)
            finally:
                self.n_init = n_init
        else:
            self._fit_components((X, sw), lambda r: self._start(X, sw, r), rng)
        return X

    def _variational_run(self, X, sw):
        structure, family, prior = self._triple
        vb = variational_family(family)
        given = self._emission_prior()
        emission_prior = (
            vb.default_prior(family, X, sw)
            if given is None
            else vb.check_prior(family, given)
        )
        weight_prior = Dirichlet(
            np.broadcast_to(prior.structure.concentration, (self.n_components,))
        )
        return MixtureVariationalRun(
            self, X, sw, structure, family, weight_prior, emission_prior
        )

    def _variational(self) -> bool:
        # A named mixture (PoissonMixture) without the parameter is EM.
        return getattr(self, "inference", "em") == "variational"

    def _em_only(self, method="partial_fit"):
        """True for EM; with inference='variational' an AttributeError (the
        method is not there: ``available_if``)."""
        if self._variational():
            raise AttributeError(
                f"{method} is EM's (stepwise statistics of the MAP fit); with "
                "inference='variational' fit the whole data with fit"
            )
        return True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self._variational():
            tags.input_tags.allow_nan = False
        return tags

    def _fit_variational(self, X, sw, rng):
        """Variational EM (``bayeskit._base.variational``)."""
        _no_missing(X)
        run = self._variational_run(X, sw)
        weights, params = run.run(rng)
        self._vb_run = run
        self._set_params(LatentParams(NodeParams(weights), params))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Estimate the parameters by EM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : Ignored
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; an integer weight counts as repeated rows.

        Returns
        -------
        self : object
        """
        self._fit(X, sample_weight)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_predict(self, X, y=None, sample_weight=None):
        """Fit, then return the most probable component of every row."""
        X = self._fit(X, sample_weight)
        return self._posterior(X).log_resp.argmax(axis=1)

    @available_if(_em_only)
    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, sample_weight=None):
        """One step of incremental EM on a chunk of rows.

        The E-step runs on the chunk under the current parameters, its
        statistics are added to ``stats_``, and the parameters are derived
        from the sum (Neal and Hinton 1998). On a model not fitted yet, the
        first call starts the parameters as :meth:`fit` does and is one EM
        iteration on the chunk.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : Ignored
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        first = not hasattr(self, "stats_")
        X, sw = self._read(X, sample_weight, reset=first)
        if first:
            if X.shape[0] < self.n_components:
                raise ValueError(
                    f"Expected n_samples >= n_components but got n_components "
                    f"= {self.n_components}, n_samples = {X.shape[0]}"
                )
            self._triple = self._build(X)
            structure, emission, _ = self._triple
            params = self._start(X, sw, check_random_state(self.random_state))
            total = LatentStats(structure.zeros(), emission.zeros(self.n_components))
        else:
            params, total = self._current_params(), self.stats_
        total = total + self._expected_stats((X, sw), params, self._triple)
        self._set_params(self._params_from_stats(total, params, self._triple))
        self.stats_ = total
        return self

    @available_if(lambda self: self._em_only("summarize"))
    def summarize(self, X, sample_weight=None) -> LatentStats:
        """Expected statistics of a chunk of rows under the current parameters.

        Statistics of chunks add with ``+`` (or ``sum``), so one EM iteration
        over data in many chunks is
        ``model.from_stats(sum(model.summarize(c) for c in chunks))``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        stats : LatentStats
        """
        check_is_fitted(self)
        X, sw = self._read(X, sample_weight, reset=False)
        stats = self._expected_stats((X, sw), self._current_params(), self._triple)
        return replace(stats, layout=described(self))

    # -- inference ---------------------------------------------------------------
    def _posterior(self, X):
        if self._variational() and hasattr(self, "_vb_run"):
            _no_missing(X)
            log_resp, log_norm = self._vb_run.log_resp(X)
            return SimpleNamespace(log_resp=log_resp, log_evidence=log_norm)
        structure, emission, _ = self._triple
        params = self._current_params()
        return structure.posterior(
            emission.log_likelihood(X, params.emission), params.structure
        )

    def _checked(self, X):
        check_is_fitted(self)
        return self._read(X, None, reset=False)[0]

    def _output_spec(self, method: str, float32: bool) -> tuple:
        """The width (None: one value per row) and dtype of ``self.<method>``
        (for prediction over Dask blocks)."""
        if method == "predict":
            return None, np.dtype(np.intp)
        width = self.n_components if method == "predict_proba" else None
        return width, np.dtype(np.float64)

    def score_samples(self, X):
        """Log density of every row, ``(n_samples,)``."""
        if (handler := handler_for(X)) is not None:  # lazy over Dask blocks
            return handler.predict(self, "score_samples", X)
        return self._posterior(self._checked(X)).log_evidence

    def score(self, X, y=None, sample_weight=None):
        """Mean log density of the rows (weighted by ``sample_weight``)."""
        X, sw = (self._checked(X), None)
        log_evidence = self._posterior(X).log_evidence
        if sample_weight is None:
            return float(log_evidence.mean())
        sw = check_sample_weight(sample_weight, X)
        return float(sw @ log_evidence / sw.sum())

    def predict_proba(self, X):
        """Posterior probability of every component, ``(n_samples, n_components)``."""
        if (handler := handler_for(X)) is not None:  # lazy over Dask blocks
            return handler.predict(self, "predict_proba", X)
        return np.exp(self._posterior(self._checked(X)).log_resp)

    def predict(self, X):
        """The most probable component of every row."""
        if (handler := handler_for(X)) is not None:  # lazy over Dask blocks
            return handler.predict(self, "predict", X)
        return self._posterior(self._checked(X)).log_resp.argmax(axis=1)

    def sample(self, n_samples=1):
        """Draw ``n_samples`` rows: ``(X, components)``, grouped by component
        as scikit-learn's mixtures draw them (with ``random_state``)."""
        check_n_samples(n_samples)
        check_is_fitted(self)
        if n_samples < 1:
            raise ValueError(f"n_samples must be at least 1, got {n_samples}")
        structure, emission, _ = self._triple
        params = self._current_params()
        rng = check_random_state(self.random_state)
        states = structure.sample(params.structure, n_samples, rng)
        return emission.sample(params.emission, states, rng), states

    def _n_parameters(self) -> int:
        structure, emission, _ = self._triple
        return structure.n_parameters() + emission.n_parameters(self.n_components)

    def bic(self, X):
        """Bayesian information criterion (lower is better)."""
        X = self._checked(X)
        log_lik = self._posterior(X).log_evidence.sum()
        return -2 * log_lik + self._n_parameters() * np.log(X.shape[0])

    def aic(self, X):
        """Akaike information criterion (lower is better)."""
        X = self._checked(X)
        log_lik = self._posterior(X).log_evidence.sum()
        return -2 * log_lik + 2 * self._n_parameters()


def _no_missing(X):
    """ValueError naming X where it has NaN cells: variational inference
    does not marginalise them yet."""
    if np.isnan(X).any():
        raise ValueError(
            "X has missing values (NaN): inference='variational' does not take "
            "missing cells yet; use inference='em', which marginalises them"
        )
