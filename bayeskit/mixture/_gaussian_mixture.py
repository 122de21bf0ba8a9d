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

from .._base.classifier import Triple
from .._base.em import SKLEARN, BaseLatentModel, LatentParams, described
from .._base.gaussian_input import float_input_complete, keep_input_dtype
from .._base.monitor import MixtureMonitor
from .._collections import handler_for
from .._validation import (
    Interval,
    StrOptions,
    _fit_context,
    check_covariance_prior,
    check_is_fitted,
    check_n_samples,
    check_sample_weight,
    random_state_of,
    validate_data,
)
from ..emissions import GaussianParams, GaussianStats
from ..emissions._guarded_gaussian import unshifted_mean
from ..graph import NodeParams, NodeStats
from ._missing import MixturePrediction, check_observed, mean_imputed
from ._start import (
    check_initial_parameters,
    first_params,
    mixture_components,
    mixture_triple,
)
from ._stats import MixtureStats, m_step

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

    _convention = SKLEARN
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
        """The component node, the Gaussian family of ``covariance_type`` with
        scikit-learn's guards (:class:`~bayeskit.emissions._guarded_gaussian.
        GuardedGaussian`) and the covariance prior: ``covariance_prior_weight``
        virtual samples of ``covariance_prior`` (for 'empirical', the data's
        covariance, hence ``X``), with ``reg_covar`` added to every
        covariance. The weights have no prior (scikit-learn's ``10 eps`` is
        the family's guard)."""
        d = self.n_features_in_
        if self.covariance_prior is None:  # the same values for every fit
            return mixture_components(
                self.covariance_type,
                self.n_components,
                d,
                float(self.reg_covar),
                float(self.covariance_prior_weight),
            )
        if isinstance(self.covariance_prior, str):  # 'empirical'
            sw = sample_weight
            X = mean_imputed(X, sw)
            mean = sw @ X / sw.sum()
            r = X - mean
            scatter = (r * sw[:, None]).T @ r / sw.sum()
        else:
            scatter = check_covariance_prior(self.covariance_prior, d)
        return mixture_triple(
            self.covariance_type,
            self.n_components,
            d,
            scatter,
            self.covariance_prior_weight,
            self.reg_covar,
        )

    def _components(self):
        """The triple of the current fit (built once, by ``fit``)."""
        return self._triple

    @property
    def _family(self):
        return self._triple.emission

    @property
    def _prior(self):
        return self._triple.prior.emission

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

    def _warm(self) -> bool:
        """Whether the next fit continues from the fitted parameters."""
        return self.warm_start and hasattr(self, "converged_")

    def _fit(self, X, sample_weight, posterior=False):
        """EM on ``X`` (the one loop of
        :meth:`~bayeskit._base.em.BaseLatentModel._fit_components`); with
        ``posterior``, return the log-responsibilities of a last E-step under
        the fitted parameters (scikit-learn's ``fit_predict`` labels,
        consistent with ``predict``)."""
        warm = self._warm()
        X, sw, complete = self._rows(X, sample_weight, reset=not warm)
        self._start(X, sw)
        previous = self.stats_
        data = (X, sw)
        if complete:  # the rows the statistics are gathered in, once
            shift = X[0].copy()
            data = (X, sw, X - shift, shift, bool((sw == 1.0).all()))
        current = self._current_params() if warm else None

        def start(random_state):
            if warm:
                return current
            return self._start_params(X, sw, random_state, complete, data[2:])

        with random_state_of(self.random_state) as rng:
            self._fit_components(data, start, rng, n_init=1 if warm else None)
        if self.n_iter_ == 0:
            # No E-step ran: the statistics of the start (a warm start keeps
            # those it had).
            self.stats_ = previous if warm else self._stats_of(X, sw)
        log_resp = self._posterior(X).log_resp if posterior else None
        self._finish()
        return log_resp

    def _new_monitor(self):
        """scikit-learn's stopping rule and messages; under ``warm_start`` the
        first change is measured from the fitted ``lower_bound_``."""
        return MixtureMonitor(
            self.tol,
            self.max_iter,
            self.verbose,
            self.verbose_interval,
            before=self.lower_bound_ if self._warm() else None,
        )

    def _prepare(self, X, sample_weight, reset, start=True):
        """Validated float64 ``X`` (dtype kept for the attributes) and weights:
        rows to ``start`` EM from need enough rows and weight, a chunk one."""
        return self._rows(X, sample_weight, reset, start)[:2]

    def _rows(self, X, sample_weight, reset, start=True):
        """:meth:`_prepare`, and whether no cell of ``X`` is missing (one test)."""
        kw = {"dtype": [np.float64, np.float32], "ensure_all_finite": "allow-nan"}
        need = 2 if start else 1
        X = validate_data(self, X, ensure_min_samples=need, reset=reset, **kw)
        if reset:
            self._dtype = X.dtype
        X, complete = float_input_complete(X)
        if not start:
            sw = check_sample_weight(sample_weight, X, allow_all_zero=True)
            return X, sw, complete
        if X.shape[0] < self.n_components:
            raise ValueError(
                f"Expected n_samples >= n_components but got n_components = "
                f"{self.n_components}, n_samples = {X.shape[0]}"
            )
        sw = check_sample_weight(sample_weight, X)
        if sample_weight is not None and not sw.any():  # (None: ones)
            raise ValueError("sample_weight must not be all zero")
        if not complete:
            check_observed(X, sw)
        return X, sw, complete

    def _start(self, X, sw):
        """Build the components (once per fit) and check the initial parameters."""
        self._triple = self._make_components(X, sw)
        self._init_given = self._check_initial_parameters(X.shape[1])
        if not self._warm():
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

    def _start_params(
        self, X, sample_weight, rng, complete=False, shifted=()
    ) -> LatentParams:
        """First parameters (:func:`~bayeskit.mixture._start.first_params`);
        ``complete``: no cell of ``X`` is missing; ``shifted``: EM's
        ``(X - shift, shift, unit)`` of those rows, if made."""
        return first_params(self, X, sample_weight, rng, complete, shifted)

    # -- one EM iteration: statistics, parameters ---------------------------------
    def _expected_stats(self, data, params, components) -> MixtureStats:
        """The E-step: the component posterior of every row under ``params``
        and the Gaussian family's statistics weighted by it. ``data`` is
        ``(X, sample_weight)``, or for rows without missing cells (a fit's)
        ``(X, sample_weight, X - shift, shift, unit)``: the shifted rows the
        statistics are gathered in, computed once, and whether every weight
        is 1."""
        X, sw = data[0], data[1]
        structure, family, _ = components
        if X.shape[0] == 0:
            return self._zero_stats()
        if len(data) > 2:  # no missing cell: the family's kernels directly
            log_lik = family.covariance.log_likelihood(X, params.emission)
        else:
            log_lik = family.log_likelihood(X, params.emission)
        post = structure.posterior(log_lik, params.structure)
        resp = np.exp(post.log_resp)
        if len(data) > 2:
            moved, shift, unit = data[2:]
            if not unit:  # (unit weights multiply nothing)
                resp *= sw[:, None]
            w, m, s = family.covariance.complete_stats(moved, resp)
            m = unshifted_mean(w, m, shift)
            gstats = GaussianStats(w, m, s, family.covariance)
            # Complete rows: every feature of a state has the state's weight.
            node = w if w.ndim == 1 else w[:, 0]
        else:
            resp *= sw[:, None]
            gstats = family.expected_stats(X, resp, params.emission)
            node = gstats.state_weight()
        return MixtureStats(
            NodeStats(node),
            gstats,
            float(sw @ post.log_evidence),
            sample_weight=float(sw.sum()),
        )

    def _params_from_stats(self, stats, previous, components) -> LatentParams:
        """The M-step (:meth:`_map`)."""
        _, family, prior = components
        return self._map(stats.emission, prior, family)

    def _map(self, raw, prior, family, total=None) -> LatentParams:
        """Parameters from the Gaussian statistics ``raw``
        (:func:`~bayeskit.mixture._stats.m_step`)."""
        return m_step(self, raw, prior, family, total)

    def _log_prior(self):
        """``log p(mu, Sigma)`` of the MAP prior, up to its constant."""
        return self._log_prior_of(self._current_params(), self._triple)

    def _current_params(self) -> LatentParams:
        P = self.precisions_cholesky_
        log_det = self._family.covariance.log_det_precision_cholesky(
            P, self.means_.shape[1]
        )
        return LatentParams(
            NodeParams(self.weights_),
            GaussianParams(self.means_, self.covariances_, P, log_det, self._center),
        )

    def _set_params(self, params: LatentParams) -> None:
        gp = params.emission
        self.weights_ = params.structure.weights
        self.means_ = gp.means
        self.covariances_ = gp.covariances
        self.precisions_cholesky_ = gp.precisions_cholesky
        self._center = gp.center

    def _derive_precisions(self):
        """``precisions_`` from ``precisions_cholesky_``."""
        self.precisions_ = self._family.covariance.precision(self.precisions_cholesky_)

    # -- prediction's posterior ----------------------------------------------------
    def _posterior(self, X):
        params = self._current_params()
        return self._triple.structure.posterior(
            self._family.log_likelihood(X, params.emission), params.structure
        )

    def _log_likelihood(self, X):
        return self._family.log_likelihood(X, self._current_params().emission)

    # -- statistics ----------------------------------------------------------------
    def _stats_of(self, X, sample_weight) -> MixtureStats:
        """The E-step's statistics of validated rows under the current parameters."""
        return self._expected_stats(
            (X, sample_weight), self._current_params(), self._triple
        )

    def _zero_stats(self) -> MixtureStats:
        return MixtureStats(
            self._triple.structure.zeros(), self._family.zeros(self.n_components)
        )

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
        self._set_params(
            self._params_from_stats(stats, self._current_params(), self._triple)
        )
        # The model's own statistics: their layout is now the model's.
        self.stats_ = stats if stats.layout is None else replace(stats, layout=None)
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
            with random_state_of(self.random_state) as rng:
                self._set_params(self._start_params(X, sw, rng))
            self.n_iter_, self.lower_bounds_ = 0, []
        self._step(self._stats_of(X, sw), first)
        self.n_iter_ += 1
        self.converged_ = False  # one step: no convergence test
        self._finish()
        return self

    def _step(self, chunk, first):
        """One stepwise EM update with the statistics ``chunk`` of new rows
        under the current parameters (in memory or summed over Dask blocks)."""
        params = self._current_params()
        if chunk.total_weight > 0:
            bound = chunk.log_evidence + self._log_prior_of(params, self._triple)
            bound /= chunk.total_weight
            self.lower_bound_ = bound
            self.lower_bounds_ = [*self.lower_bounds_, bound]
        total = chunk if first else self.stats_ + chunk
        self._set_params(self._params_from_stats(total, params, self._triple))
        # The model's own statistics: their layout is now the model's.
        self.stats_ = total if total.layout is None else replace(total, layout=None)

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
        return self._family.sample(self._current_params().emission, y, rng), y

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
