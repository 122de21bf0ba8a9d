"""Gaussian mixtures fitted by EM with a MAP covariance prior.

The latent structure is one component node; the E-step is the graph core's
posterior over it, fed by the Gaussian family's log-likelihoods; the M-step
turns the family's statistics under those responsibilities into parameters
with the prior (EM for MAP estimation: Dempster, Laird and Rubin 1977;
Fraley and Raftery 2007). The statistics are values that add
(:class:`MixtureStats`), so a fitted mixture also takes stepwise EM updates
on chunks of data (``partial_fit``) and statistics summed over chunks
(``summarize`` / ``from_stats``).

The classifier with one mixture per class and the selection of a mixture by
an information criterion live in their own modules of :mod:`bayeskit.mixture`.

References
----------
.. [1] A. P. Dempster, N. M. Laird and D. B. Rubin, "Maximum likelihood from
   incomplete data via the EM algorithm", *Journal of the Royal Statistical
   Society B* 39(1), 1977, pp. 1-38.
.. [2] C. Fraley and A. E. Raftery, "Bayesian regularization for normal
   mixture estimation and model-based clustering", *Journal of
   Classification* 24, 2007, pp. 155-181.
.. [3] K. P. Murphy, *Machine Learning: A Probabilistic Perspective*, MIT
   Press, 2012, section 4.6.3 (the Normal-inverse-Wishart prior).
.. [4] R. M. Neal and G. E. Hinton, "A view of the EM algorithm that justifies
   incremental, sparse, and other variants", in M. I. Jordan (ed.),
   *Learning in Graphical Models*, Kluwer, 1998, pp. 355-368.
.. [5] O. Cappe and E. Moulines, "On-line expectation-maximization algorithm
   for latent data models", *Journal of the Royal Statistical Society B*
   71(3), 2009, pp. 593-613.
"""

from __future__ import annotations

from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from .._base.classifier import Triple, float_input, keep_input_dtype
from .._base.em import BaseLatentModel, described
from .._base.rounding import singular_at_rounding
from .._collections import handler_for
from .._logmath import has_nan
from .._validation import (
    Interval,
    StrOptions,
    _fit_context,
    check_covariance_prior,
    check_is_fitted,
    check_n_samples,
    check_sample_weight,
    validate_data,
)
from .._warnings import warn
from ..emissions import Gaussian, GaussianParams, covariance_from_name
from ..graph import LatentNode
from ..priors.niw import NormalInverseWishart
from ._missing import (
    MixturePrediction,
    check_observed,
    mean_imputed,
    shifted_stats,
)
from ._start import check_initial_parameters, initial_responsibilities, tied_start
from ._stats import MixtureStats, _guard_empty

__all__ = ["GaussianMixture", "MixtureStats"]


class GaussianMixture(MixturePrediction, BaseLatentModel):
    """Gaussian mixture fitted by EM, with a MAP prior on the covariances.

    A drop-in for scikit-learn's ``GaussianMixture`` (same parameters,
    attributes and methods), plus ``covariance_prior`` /
    ``covariance_prior_weight`` (a MAP prior on the covariances, after Fraley
    and Raftery 2007), ``sample_weight`` in :meth:`fit`, ``lower_bounds_``,
    and EM on statistics: :meth:`summarize` / :meth:`from_stats` (chunks
    whose statistics add) and :meth:`partial_fit` (stepwise EM). Missing
    cells (NaN) are latent: fitted by EM, marginalised in prediction (see
    Notes); infinity is still an error.

    Parameters
    ----------
    n_components : int, default=1
        Number of mixture components.
    covariance_type : {'full', 'tied', 'diag', 'spherical'}, default='full'
        One full covariance per component, one shared, one diagonal per
        component, or one variance per component.
    tol : float, default=1e-3
        EM stops when the per-sample lower bound changes by less than this.
    reg_covar : float, default=1e-6
        Added to the diagonal of every covariance (as scikit-learn).
    max_iter : int, default=100
        Maximum number of EM iterations per initialisation.
    n_init : int, default=1
        Number of initialisations; the one with the best lower bound is kept.
    n_jobs : int, default=None
        Number of jobs running the ``n_init`` initialisations' EM in parallel
        through joblib (the starts are drawn one after the other from
        ``random_state``, so the result does not depend on it). None means 1
        unless in a ``joblib.parallel_config`` context (under
        ``backend="dask"`` the initialisations run on a Dask cluster's
        workers); -1 means all processors.
    init_params : {'kmeans', 'k-means++', 'random', 'random_from_data'}, \
default='kmeans'
        How the first responsibilities are drawn.
    weights_init : array-like of shape (n_components,), default=None
    means_init : array-like of shape (n_components, n_features), default=None
    precisions_init : array-like, default=None
        Initial parameters (shapes as ``precisions_``); they replace what
        ``init_params`` would give.
    covariance_prior : {'empirical'} or array-like of shape \
(n_features, n_features), default=None
        The prior scatter matrix ``S``: None is the identity, 'empirical' the
        data's maximum-likelihood covariance.
    covariance_prior_weight : float, default=0.0
        The prior's weight ``eta`` (virtual samples). 0 is maximum likelihood.
    random_state : int, RandomState instance or None, default=None
    warm_start : bool, default=False
        Start the next :meth:`fit` from the current parameters.
    verbose : int, default=0
        1 prints each initialisation, 2 also every ``verbose_interval``
        iterations.
    verbose_interval : int, default=10

    Attributes
    ----------
    weights_ : ndarray of shape (n_components,)
    means_ : ndarray of shape (n_components, n_features)
    covariances_ : ndarray
        ``(n_components, n_features, n_features)`` full, ``(n_features,
        n_features)`` tied, ``(n_components, n_features)`` diag,
        ``(n_components,)`` spherical.
    precisions_ : ndarray
        Inverses of the covariances (same shapes).
    precisions_cholesky_ : ndarray
        Factors ``P`` with ``P P^T`` the precision (same shapes).
    converged_ : bool
    n_iter_ : int
    lower_bound_ : float
        Per-sample log posterior of the best initialisation's last E-step:
        the log-likelihood plus the log prior density, divided by the total
        sample weight (up to the prior's constant).
    lower_bounds_ : list of float
        Its history, one value per iteration; it never decreases.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
    stats_ : MixtureStats
        The statistics the parameters were set from (the last M-step's):
        ``from_stats(stats_)`` gives the same parameters, and
        :meth:`partial_fit` adds to them.

    See Also
    --------
    select_mixture : choose ``n_components`` and ``covariance_type`` by BIC.
    GaussianMixtureClassifier : one mixture per class.

    Notes
    -----
    With responsibilities :math:`\\tau_{nk}` the M-step for 'full' is

    .. math::

        \\Sigma_k = \\frac{\\sum_n \\tau_{nk} (x_n - \\mu_k)(x_n - \\mu_k)^T
                         + \\eta S}{\\sum_n \\tau_{nk} + \\eta} + r I,

    with ``r = reg_covar``,

    which maximises the expected complete-data log-likelihood plus the log
    prior :math:`\\sum_k -\\tfrac{\\eta}{2} (\\log|\\Sigma_k| + \\operatorname{tr}
    (\\Sigma_k^{-1} S))` (an inverse-Wishart density up to its constant: the
    ``NormalInverseWishart`` of ``eta`` virtual samples
    of ``S``, without a prior on the means; Murphy 2012, section 4.6.3). The
    other types use its exact analogue: 'tied' one covariance for all
    components, 'diag' the diagonal of ``S``, 'spherical' the mean of that
    diagonal. The prior keeps every covariance positive definite when a
    component collapses on one point or there are fewer points than
    dimensions.

    Missing cells (NaN, missing at random) are latent variables of EM
    (Ghahramani and Jordan 1994; Little and Rubin 2002): the E-step's
    log-likelihood of a row is the marginal density of its observed cells,
    and its statistics are those of the row completed by the conditional
    means of its missing cells given the observed ones and the component,
    with the conditional covariance added to the scatter. ``lower_bounds_``
    is then the observed-data log posterior, which never decreases.
    :meth:`predict`, :meth:`predict_proba` and :meth:`score_samples`
    marginalise the missing cells; a row with every cell missing has
    ``log p(x) = 0`` and the mixture weights as its posterior. EM starts from
    the rows with every missing cell replaced by its column's mean (the
    initialiser of ``init_params`` runs on those rows, and so does
    ``covariance_prior='empirical'``).

    Without the prior (``covariance_prior_weight=0``) the answer is
    scikit-learn's: every component's weight gets ``10 eps`` more (an empty
    component has mean 0 and covariance ``reg_covar``), and a covariance is
    rejected (a ValueError) only when it is not positive definite in floating
    point. One that is singular up to rounding (a component on one point with
    ``reg_covar=0``) fits with a ``UserWarning``. This is a deliberate
    difference on such data: scikit-learn computes variances as
    ``E[x^2] - E[x]^2``, whose rounding can make that case an error there;
    bayeskit's variances come from centred deviations and stay non-negative.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import GaussianMixture
    >>> X = np.array([[1, 2], [1, 4], [1, 0], [10, 2], [10, 4], [10, 0]])
    >>> gm = GaussianMixture(n_components=2, random_state=0).fit(X)
    >>> gm.means_[np.argsort(gm.means_[:, 0])]
    array([[ 1.,  2.],
           [10.,  2.]])
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "covariance_type": [StrOptions({"full", "tied", "diag", "spherical"})],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "reg_covar": [Interval(Real, 0.0, None, closed="left")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "init_params": [
            StrOptions({"kmeans", "random", "random_from_data", "k-means++"})
        ],
        "weights_init": ["array-like", None],
        "means_init": ["array-like", None],
        "precisions_init": ["array-like", None],
        "covariance_prior": [StrOptions({"empirical"}), "array-like", None],
        "covariance_prior_weight": [Interval(Real, 0.0, None, closed="left")],
        "random_state": ["random_state"],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
        "verbose_interval": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
    }

    _convergence_advice = (
        "increase max_iter or tol, try another init_params or n_init, or set "
        "covariance_prior_weight > 0 if the data are degenerate"
    )

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
        weights_init=None,
        means_init=None,
        precisions_init=None,
        covariance_prior=None,
        covariance_prior_weight=0.0,
        random_state=None,
        warm_start=False,
        verbose=0,
        verbose_interval=10,
        n_jobs=None,
    ):
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.tol = tol
        self.reg_covar = reg_covar
        self.max_iter = max_iter
        self.n_init = n_init
        self.init_params = init_params
        self.weights_init = weights_init
        self.means_init = means_init
        self.precisions_init = precisions_init
        self.covariance_prior = covariance_prior
        self.covariance_prior_weight = covariance_prior_weight
        self.random_state = random_state
        self.warm_start = warm_start
        self.verbose = verbose
        self.verbose_interval = verbose_interval
        self.n_jobs = n_jobs

    # -- components -----------------------------------------------------------------
    def _make_components(self, X=None, sample_weight=None) -> Triple:
        """The component node, the Gaussian family of ``covariance_type`` and
        the covariance prior: ``covariance_prior_weight`` virtual samples of
        ``covariance_prior`` (for 'empirical', the data's covariance, hence
        ``X``), with ``reg_covar`` added to every covariance."""
        d = self.n_features_in_
        if isinstance(self.covariance_prior, str):  # 'empirical'
            sw = sample_weight
            X = mean_imputed(X, sw)
            mean = sw @ X / sw.sum()
            r = X - mean
            scatter = (r * sw[:, None]).T @ r / sw.sum()
        else:
            scatter = check_covariance_prior(self.covariance_prior, d)
        structure = covariance_from_name(self.covariance_type)
        prior = NormalInverseWishart.from_covariance(
            scatter, self.covariance_prior_weight, reg=self.reg_covar
        ).check(structure, self.n_components, d)
        return Triple(LatentNode(self.n_components), Gaussian(structure, d), prior)

    # -- fitting ------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Estimate the parameters by EM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : Ignored
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; an integer weight equals repeated rows.

        Returns
        -------
        self : object
        """
        if (handler := handler_for(X)) is not None:
            return handler.fit_mixture(self, X, sample_weight)
        self._fit(X, sample_weight)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_predict(self, X, y=None, sample_weight=None):
        """Fit, then return the most probable component of every row."""
        if (handler := handler_for(X)) is not None:
            return handler.fit_mixture(self, X, sample_weight).predict(X)
        return np.argmax(self._fit(X, sample_weight, posterior=True), axis=1)

    def _fit(self, X, sample_weight, posterior=False):
        """EM on ``X``; with ``posterior``, return the log-responsibilities of a
        last E-step under the fitted parameters (scikit-learn's
        ``fit_predict`` labels, consistent with ``predict``)."""
        X, sw = self._prepare(
            X,
            sample_weight,
            reset=not (self.warm_start and hasattr(self, "converged_")),
        )
        self._start(X, sw)
        self._run_em(X, sw, check_random_state(self.random_state), self.max_iter)
        log_resp = self._e_step(X)[0] if posterior else None
        if self.stats_ is None:  # no M-step ran: the statistics of the start
            self.stats_ = self._stats_of(X, sw)
        self._finish()
        return log_resp

    def _prepare(self, X, sample_weight, reset, start=True):
        """Validated float64 ``X`` (its dtype kept for the attributes) and
        sample weights; rows to ``start`` EM from need enough rows and weight,
        a later chunk of :meth:`partial_fit` only one row."""
        X = validate_data(
            self,
            X,
            dtype=[np.float64, np.float32],
            ensure_min_samples=2 if start else 1,
            reset=reset,
            ensure_all_finite="allow-nan",
        )
        if reset:
            self._dtype = X.dtype
        X = float_input(X)
        if not start:
            return X, check_sample_weight(sample_weight, X, allow_all_zero=True)
        if X.shape[0] < self.n_components:
            raise ValueError(
                f"Expected n_samples >= n_components but got n_components = "
                f"{self.n_components}, n_samples = {X.shape[0]}"
            )
        sw = check_sample_weight(sample_weight, X)
        if not sw.any():
            raise ValueError("sample_weight must not be all zero")
        check_observed(X, sw)
        return X, sw

    def _start(self, X, sw):
        """Resolve the components and check the initial parameters."""
        components = self._make_components(X, sw)
        self._family, self._prior = components.emission, components.prior
        self._node = components.structure
        self._init_given = self._check_initial_parameters(X.shape[1])
        if not (self.warm_start and hasattr(self, "converged_")):
            self.stats_ = None

    def _finish(self):
        """Attributes in the input's dtype, and the precisions."""
        keep_input_dtype(
            self,
            self._dtype,
            "weights_",
            "means_",
            "covariances_",
            "precisions_cholesky_",
        )
        self._derive_precisions()

    def _check_initial_parameters(self, d):
        """Validated copies of the given initial parameters (None where not given)."""
        return check_initial_parameters(
            self._family.covariance,
            self.n_components,
            d,
            self.weights_init,
            self.means_init,
            self.precisions_init,
        )

    def _initialize(self, X, sample_weight, random_state):
        # With missing cells, EM starts from the mean-imputed rows.
        X = mean_imputed(X, sample_weight)
        weights, means, precisions = self._init_given
        self.stats_ = None
        if weights is None or means is None or precisions is None:
            # As scikit-learn: with all three given, nothing is drawn or estimated.
            resp = initial_responsibilities(
                self.init_params, X, sample_weight, self.n_components, random_state
            )
            # scikit-learn's first weights are n_k / n_samples: with one seed
            # row per component (k-means++, random_from_data) they sum to
            # n_components / n_samples, which only the first E-step sees.
            gstats = self._gaussian_stats(X, resp * sample_weight[:, None])
            self._m_step_from(gstats, sample_weight.sum())
            self.stats_ = None  # a start, not statistics of an E-step
            tied_start(self, X, resp, sample_weight)  # scikit-learn's, if tied
        if weights is not None:
            self.weights_ = weights.copy()
        if means is not None:
            self.means_ = means.copy()
        if precisions is not None:
            structure = self._family.covariance
            P, covs = structure.from_precision(precisions)
            self.precisions_cholesky_, self.covariances_ = P, covs
        self._center = sample_weight @ X / sample_weight.sum()

    def _e_step(self, X):
        post = self._node.posterior(self._log_likelihood(X), np.log(self.weights_))
        return post.log_resp, post.log_evidence

    def _log_likelihood(self, X):
        return self._family.log_likelihood(X, self._params())

    def _params(self):
        log_det = self._family.covariance.log_det_precision_cholesky(
            self.precisions_cholesky_, self.means_.shape[1]
        )
        return GaussianParams(
            self.means_,
            self.covariances_,
            self.precisions_cholesky_,
            log_det,
            self._center,
        )

    def _m_step(self, X, log_resp, sample_weight):
        resp = np.exp(log_resp) * sample_weight[:, None]
        self._from_mixture_stats(
            MixtureStats(self._gaussian_stats(X, resp), float(sample_weight.sum()), 0.0)
        )

    def _from_mixture_stats(self, stats):
        """The M-step: parameters from statistics; ``stats_`` is ``stats``."""
        self._m_step_from(stats.gaussian)
        # The model's own statistics: their layout is now the model's.
        self.stats_ = stats if stats.layout is None else replace(stats, layout=None)

    def _m_step_from(self, raw, total=None):
        """Parameters from the Gaussian statistics ``raw`` (responsibilities
        already weighted by sample_weight).

        As scikit-learn, every component's weight gets ``10 eps`` more, as if
        that much mass sat at the origin without scatter: an empty component
        has mean 0 and covariance ``reg_covar`` (not an error only if
        ``reg_covar > 0``), and a covariance is rejected only when it is not
        positive definite in floating point. The weights are divided by
        ``total`` (default: their sum).
        """
        stats = _guard_empty(raw)
        try:
            params = self._family.map_params(stats, self._prior, rounding_floor=False)
        except np.linalg.LinAlgError:
            raise ValueError(
                "a component's covariance is singular (it collapsed on too few "
                "distinct points, or the data have fewer points than dimensions): "
                "set covariance_prior_weight > 0 (the MAP prior), or increase "
                "reg_covar"
            ) from None
        try:
            # The stricter test of the other Gaussian models, on the statistics
            # without the guard (an empty component keeps what the guard gave),
            # with the rounding level of every feature in its own units. When
            # the guard changed no statistic (every weight is so far above
            # 10 eps that adding it rounds away), those parameters are the
            # ones just computed: no second pass.
            strict = (
                params
                if stats is raw
                else self._family.map_params(
                    raw, self._prior, params, rounding_floor=False
                )
            )
            # A variance at its feature's rounding level is zero when nothing
            # regularises it; reg_covar or the prior add a variance that is real.
            collapsed = singular_at_rounding(
                self.covariance_type,
                strict.covariances,
                strict.means,
                floor=self.reg_covar == 0 and self.covariance_prior_weight == 0,
            )
        except np.linalg.LinAlgError:
            collapsed = True
        if collapsed:
            warn(
                "a component's covariance collapsed to the rounding level of the "
                "data (a component on one point, or on fewer points than "
                "dimensions): its likelihood is unbounded; set reg_covar or "
                "covariance_prior_weight > 0",
                UserWarning,
            )
        weight = stats.state_weight()
        self.weights_ = weight / (weight.sum() if total is None else total)
        self.means_ = params.means
        self.covariances_ = params.covariances
        self.precisions_cholesky_ = params.precisions_cholesky
        self._center = params.center

    def _log_prior(self):
        """``log p(mu, Sigma)`` of the MAP prior, up to its constant."""
        if self._prior.is_flat:  # maximum likelihood: no parameters to read
            return 0.0
        return self._family.log_prior(self._params(), self._prior)

    def _get_parameters(self):
        return (
            self.weights_,
            self.means_,
            self.covariances_,
            self.precisions_cholesky_,
            self._center,
            self.stats_,
        )

    def _set_parameters(self, params):
        (
            self.weights_,
            self.means_,
            self.covariances_,
            self.precisions_cholesky_,
            self._center,
            self.stats_,
        ) = params
        self._derive_precisions()

    def _derive_precisions(self):
        """``precisions_`` from ``precisions_cholesky_``."""
        self.precisions_ = self._family.covariance.precision(self.precisions_cholesky_)

    # -- statistics ----------------------------------------------------------------
    def _stats_of(self, X, sample_weight) -> MixtureStats:
        """The E-step's statistics of validated rows under the current parameters."""
        if X.shape[0] == 0:
            return self._zero_stats()
        log_resp, log_prob = self._e_step(X)
        with np.errstate(under="ignore"):
            resp = np.exp(log_resp) * sample_weight[:, None]
        return MixtureStats(
            self._gaussian_stats(X, resp),
            float(sample_weight.sum()),
            float(sample_weight @ log_prob),
        )

    def _gaussian_stats(self, X, weights):
        """The Gaussian family's statistics of ``X`` in shifted coordinates
        (:func:`~bayeskit.mixture._missing.shifted_stats`); with
        missing cells, the expected statistics under the current parameters."""
        params = self._params() if has_nan(X) else None
        return shifted_stats(self._family, X, weights, params)

    def _zero_stats(self) -> MixtureStats:
        return MixtureStats(self._family.zeros(self.n_components), 0.0, 0.0)

    def summarize(self, X, sample_weight=None):
        """Expected sufficient statistics of a chunk under the current parameters.

        The E-step on the rows of ``X``: the Gaussian family's statistics
        under the posterior over the components (times ``sample_weight``).
        Statistics of chunks add (``a + b``), and :meth:`from_stats` of their
        sum is one EM iteration over all the rows: EM on data that does not
        fit in memory, or that lives on several machines, is ``from_stats(sum
        of summarize(chunk))`` in a loop.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; a chunk whose weights are all zero is valid
            (its statistics are zero).

        Returns
        -------
        stats : MixtureStats
        """
        return replace(self._summary(X, sample_weight), layout=described(self))

    def _summary(self, X, sample_weight=None) -> MixtureStats:
        """:meth:`summarize` without the layout (for a model's own use)."""
        check_is_fitted(self)
        X = self._validate(X)
        sw = check_sample_weight(sample_weight, X, allow_all_zero=True)
        return self._stats_of(X, sw)

    def from_stats(self, stats):
        """Set the parameters from statistics (summed over chunks): the M-step.

        Parameters
        ----------
        stats : MixtureStats
            Statistics of :meth:`summarize` (or ``stats_``) of this mixture,
            added over any number of chunks.

        Returns
        -------
        self : object
            The mixture with parameters from ``stats``; ``stats_`` is ``stats``.
        """
        if isinstance(stats, MixtureStats) and stats.layout is not None:
            stats.layout.apply_if_fresh(self)
        if not hasattr(self, "_family"):
            raise ValueError(
                "from_stats needs a fitted mixture (its covariance structure and "
                "prior): call fit or partial_fit first, then summarize"
            )
        k, d = self.n_components, self.n_features_in_
        if not isinstance(stats, MixtureStats) or stats.gaussian.mean.shape != (k, d):
            raise TypeError(
                f"stats must be the MixtureStats of summarize for {k} components "
                f"of {d} features, got {type(stats).__name__}"
            )
        if not stats.total_weight > 0:
            raise ValueError("stats has no weight: summarize rows of positive weight")
        self._from_mixture_stats(stats)
        self._finish()
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, sample_weight=None):
        """One stepwise (incremental) EM update on a chunk of data.

        The E-step on the chunk under the current parameters gives its
        statistics, which are added to ``stats_`` (the statistics of every
        chunk seen so far, each under the parameters of its own step); the
        M-step sets the parameters from the sum. This is incremental EM
        (Neal and Hinton 1998) with every chunk visited once, and stepwise EM
        (Cappe and Moulines 2009) with the step size ``w_chunk / w_total``:
        the parameters move toward the chunk's by its share of the weight
        seen. The chunk's log-likelihood never decreases in a step (the
        parameters before it maximise the prior plus the statistics seen
        before, so the step can only gain on the chunk; a ``reg_covar``
        ridge, outside that maximisation, can cost a little).

        The first call (on an unfitted mixture) starts as :meth:`fit` does,
        from ``init_params`` or the given initial parameters on its chunk,
        then takes the step; the data's covariance of
        ``covariance_prior='empirical'`` is the first chunk's. After
        :meth:`fit`, steps continue from the fitted parameters and their
        statistics. ``n_iter_`` grows by one per step, and ``lower_bound_`` is the
        chunk's per-sample log posterior before its step (appended to
        ``lower_bounds_``); a later chunk may have any number of rows, and
        weights that are all zero (a step that changes nothing).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : Ignored
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        if (handler := handler_for(X)) is not None:
            return handler.partial_fit_mixture(self, X, sample_weight)
        first = getattr(self, "stats_", None) is None
        X, sw = self._prepare(X, sample_weight, reset=first, start=first)
        if first:
            self._start(X, sw)
            self._initialize(X, sw, check_random_state(self.random_state))
            self.n_iter_, self.lower_bounds_ = 0, []
        chunk = self._stats_of(X, sw)
        if chunk.total_weight > 0:
            bound = (chunk.log_likelihood + self._log_prior()) / chunk.total_weight
            self.lower_bound_ = bound
            self.lower_bounds_ = [*self.lower_bounds_, bound]
        self._from_mixture_stats(chunk if first else self.stats_ + chunk)
        self.n_iter_ += 1
        self.converged_ = False  # one step: no convergence test
        self._finish()
        return self

    # -- prediction: score_samples, score, predict_proba, predict (the mixin) --
    def sample(self, n_samples=1, random_state=None):
        """Draw samples: returns ``(X, y)`` with ``y`` the component of each row.

        With ``random_state=None`` the estimator's ``random_state`` is used, and
        the draws are scikit-learn's for the same generator state.

        Parameters
        ----------
        n_samples : int, default=1
        random_state : int, RandomState instance or None, default=None

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        check_n_samples(n_samples)
        if n_samples < 1:
            raise ValueError(
                f"Invalid value for 'n_samples': {n_samples}; sample draws at "
                "least one row"
            )
        rng = check_random_state(
            self.random_state if random_state is None else random_state
        )
        counts = rng.multinomial(n_samples, self.weights_)
        y = np.repeat(np.arange(self.n_components), counts)
        return self._family.sample(self._params(), y, rng), y

    def _n_parameters(self):
        return self._family.n_parameters(self.n_components) + self.n_components - 1

    def bic(self, X):
        """Bayesian information criterion on ``X`` (lower is better)."""
        n = np.shape(X)[0]
        return -2 * self.score(X) * n + self._n_parameters() * np.log(n)

    def aic(self, X):
        """Akaike information criterion on ``X`` (lower is better)."""
        return -2 * self.score(X) * np.shape(X)[0] + 2 * self._n_parameters()

    def _html_repr(self):
        # The notebook display (scikit-learn's _repr_html_ calls it): what
        # the fitted model holds, then scikit-learn's display.
        from .._html import estimator_html

        return estimator_html(self)
