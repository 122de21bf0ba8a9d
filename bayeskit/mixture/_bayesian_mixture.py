"""The variational Gaussian mixture: scikit-learn's ``BayesianGaussianMixture``.

The latent structure is one component node, as in
:class:`~bayeskit.GaussianMixture`; the weights have a Dirichlet or a
truncated stick-breaking (Dirichlet process) prior and every component a
Normal-Wishart prior on its mean and precision. Variational EM
(``bayeskit._base.variational``) keeps a posterior over all of them:
the E-step's messages are the expected log-weights and expected
log-densities, the M-step's result the posterior hyperparameters. Components
that explain no data keep their prior's tiny weight: the number of components
is chosen by the fit.

References
----------
.. [1] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, section 10.2 (the variational mixture of Gaussians).
.. [2] D. M. Blei and M. I. Jordan, "Variational inference for Dirichlet
   process mixtures", *Bayesian Analysis* 1(1), 2006, pp. 121-143.
.. [3] H. Attias, "A variational Bayesian framework for graphical models",
   *Advances in Neural Information Processing Systems* 12, 2000.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.special import digamma, gammaln
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.utils import check_random_state

from .._base.classifier import float_input
from .._base.variational import fit_variational
from .._collections import handler_for
from .._logmath import logsumexp_rows, row_plogp
from .._validation import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    check_n_samples,
    check_sample_weight,
    validate_data,
)
from ..emissions import Gaussian, GaussianParams, covariance_from_name
from ..emissions._guarded_gaussian import guard_empty, shifted_stats
from ..priors import Dirichlet, StickBreaking
from ._bayesian_stats import BayesianMixtureStatistics, VariationalMixtureStats
from ._start import initial_responsibilities

__all__ = ["BayesianGaussianMixture", "VariationalMixtureStats"]


class BayesianGaussianMixture(BayesianMixtureStatistics, DensityMixin, BaseEstimator):
    """Variational Bayesian estimation of a Gaussian mixture.

    A drop-in for scikit-learn's ``BayesianGaussianMixture``: the same
    parameters, defaults, attributes, warnings and answers (to rounding, from
    the same start), plus ``sample_weight`` in :meth:`fit`, variational EM on
    statistics (:meth:`summarize` / :meth:`from_stats`) and stochastic
    variational inference on mini-batches (:meth:`partial_fit`).

    Instead of point estimates, the fit keeps a posterior over the mixture's
    weights (a Dirichlet, or the sticks of a Dirichlet process), means and
    precisions (Normal-Wishart). With more components than the data need, the
    surplus ones get almost no weight: the number of components is inferred
    (up to ``n_components``).

    Parameters
    ----------
    n_components : int, default=1
        The number of mixture components (an upper bound on those used).
    covariance_type : {'full', 'tied', 'diag', 'spherical'}, default='full'
        One full covariance per component, one shared, one diagonal per
        component, or one variance per component.
    tol : float, default=1e-3
        Variational EM stops when the lower bound changes by less than this.
    reg_covar : float, default=1e-6
        Added to the diagonal of every component's covariance statistics
        (as scikit-learn).
    max_iter : int, default=100
        Maximum number of iterations per initialisation.
    n_init : int, default=1
        Number of initialisations; the one with the best lower bound is kept.
    init_params : {'kmeans', 'k-means++', 'random', 'random_from_data'}, \
default='kmeans'
        How the first responsibilities are drawn (scikit-learn's draws).
    weight_concentration_prior_type : {'dirichlet_process', \
'dirichlet_distribution'}, default='dirichlet_process'
        The prior of the weights: a Dirichlet process (truncated stick
        breaking) or a Dirichlet distribution.
    weight_concentration_prior : float, default=None
        ``gamma_0 > 0``: the Dirichlet's concentration, or the process's.
        None is ``1 / n_components``.
    mean_precision_prior : float, default=None
        ``beta_0 > 0``: the prior's precision on the means, relative to the
        component's precision. None is 1.
    mean_prior : array-like of shape (n_features,), default=None
        ``m_0``: the prior mean of the means. None is the data's mean.
    degrees_of_freedom_prior : float, default=None
        ``nu_0 > n_features - 1``: the Wishart's degrees of freedom. None is
        ``n_features``.
    covariance_prior : float or array-like, default=None
        The Wishart's prior covariance ``W_0^{-1}``, in the shape of the
        covariance type ('full' and 'tied' ``(n_features, n_features)``,
        'diag' ``(n_features,)``, 'spherical' a number). None is the data's
        covariance (its diagonal, its mean variance).
    random_state : int, RandomState instance or None, default=None
    warm_start : bool, default=False
        Start the next :meth:`fit` from the current posterior.
    verbose : int, default=0
        1 prints each initialisation, 2 also every ``verbose_interval``
        iterations.
    verbose_interval : int, default=10
    total_samples : float, default=1e6
        For :meth:`partial_fit` only: the (weighted) size of the whole data
        set, by which each mini-batch's statistics are scaled (as
        scikit-learn's ``LatentDirichletAllocation``).
    learning_offset : float, default=10.0
        For :meth:`partial_fit`: ``tau_0`` of the step size ``(tau_0 +
        t)^(-kappa)``, at least 1.
    learning_decay : float, default=0.7
        For :meth:`partial_fit`: ``kappa`` in (0.5, 1] (the step sizes then
        satisfy the Robbins-Monro conditions).

    Attributes
    ----------
    weights_ : ndarray of shape (n_components,)
        The expected weights under the posterior (for the Dirichlet process,
        the sticks' expected weights, normalised).
    means_ : ndarray of shape (n_components, n_features)
        The posterior means ``m_k`` of the means.
    covariances_ : ndarray
        ``W_k^{-1} / nu_k``, the inverse of the expected precision, in the
        covariance type's shape.
    precisions_ : ndarray
        Their inverses, the expected precisions ``nu_k W_k``.
    precisions_cholesky_ : ndarray
        Factors ``P`` with ``P P^T`` the precision.
    weight_concentration_prior_ : float
    weight_concentration_ : ndarray of shape (n_components,) or tuple of two
        The posterior concentration of the Dirichlet, or the sticks' Beta
        parameters ``(a_k, b_k)`` of the Dirichlet process.
    mean_precision_prior_ : float
    mean_precision_ : ndarray of shape (n_components,)
        ``beta_k = beta_0 + N_k``.
    mean_prior_ : ndarray of shape (n_features,)
    degrees_of_freedom_prior_ : float
    degrees_of_freedom_ : ndarray of shape (n_components,) or float ('tied')
        ``nu_k = nu_0 + N_k``.
    covariance_prior_ : float or ndarray
    converged_ : bool
    n_iter_ : int
    lower_bound_ : float
        scikit-learn's lower bound of the best initialisation (the evidence
        lower bound without its terms that do not change during the fit;
        not divided by the number of samples).
    lower_bounds_ : list of float
        Its history, one value per iteration; it never decreases.
    stats_ : VariationalMixtureStats
        The statistics of the last M-step: :meth:`from_stats` of them gives
        the same posterior (after :meth:`partial_fit`, the running estimate
        of the whole data's statistics).
    n_batch_iter_ : int
        Mini-batches seen by :meth:`partial_fit`.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (``n_features_in_``,)

    See Also
    --------
    GaussianMixture : maximum-likelihood (or MAP) mixtures fitted by EM.
    select_mixture : choose the number of components by BIC.

    Notes
    -----
    The model (Bishop 2006, section 10.2; Blei and Jordan 2006) is

    .. math::

        \\pi \\sim \\operatorname{Dir}(\\gamma_0) \\text{ or }
        \\operatorname{GEM}(\\gamma_0), \\quad
        \\Lambda_k \\sim \\mathcal W(W_0, \\nu_0), \\quad
        \\mu_k \\mid \\Lambda_k \\sim \\mathcal N(m_0, (\\beta_0
        \\Lambda_k)^{-1}), \\quad
        x_i \\mid z_i = k \\sim \\mathcal N(\\mu_k, \\Lambda_k^{-1}),

    and the E-step's responsibilities are

    .. math::

        \\log r_{ik} = E[\\log \\pi_k] + \\tfrac12 E[\\log|\\Lambda_k|]
            - \\tfrac{d}{2 \\beta_k} - \\tfrac{\\nu_k}{2} (x_i - m_k)^T W_k
            (x_i - m_k) + \\text{const}

    (Bishop 2006, eqs. 10.46 and 10.64-10.66). For the 'tied', 'diag' and
    'spherical' types the updates and the bound are scikit-learn's (one
    Wishart shared by all components; a Wishart-like posterior on the
    diagonal or on one variance with ``n_features`` in its digamma sums).

    One deliberate difference from scikit-learn: with ``init_params`` of
    'k-means++' or 'random_from_data' (one seed row per component) and the
    'tied' type, scikit-learn's first covariance adds the uncentred second
    moment of every row that seeds no component (it depends on the origin of
    the coordinates); bayeskit's first covariance is the pooled scatter of
    the seeds, as :class:`~bayeskit.GaussianMixture`'s. Every other start,
    and every later step, is scikit-learn's.

    A ``sample_weight`` multiplies every row's responsibilities in the
    statistics (an integer weight equals repeated rows); the default
    ``mean_prior`` and ``covariance_prior`` are then the weighted mean and
    covariance.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import BayesianGaussianMixture
    >>> X = np.array([[1, 2], [1, 4], [1, 0], [4, 2], [12, 4], [10, 7]])
    >>> bgm = BayesianGaussianMixture(n_components=2, random_state=42).fit(X)
    >>> bgm.means_.round(1)
    array([[2.5, 2.3],
           [8.5, 4.5]])
    >>> bgm.predict([[0, 0], [9, 3]])
    array([0, 1])
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
        "weight_concentration_prior_type": [
            StrOptions({"dirichlet_process", "dirichlet_distribution"})
        ],
        "weight_concentration_prior": [
            None,
            Interval(Real, 0.0, None, closed="neither"),
        ],
        "mean_precision_prior": [None, Interval(Real, 0.0, None, closed="neither")],
        "mean_prior": [None, "array-like"],
        "degrees_of_freedom_prior": [None, Interval(Real, 0.0, None, closed="neither")],
        "covariance_prior": [
            None,
            "array-like",
            Interval(Real, 0.0, None, closed="neither"),
        ],
        "random_state": ["random_state"],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
        "verbose_interval": [Interval(Integral, 1, None, closed="left")],
        "total_samples": [Interval(Real, 0.0, None, closed="neither")],
        "learning_offset": [Interval(Real, 1.0, None, closed="left")],
        "learning_decay": [Interval(Real, 0.5, 1.0, closed="right")],
    }

    def __init__(
        self,
        *,
        n_components=1,
        covariance_type="full",
        tol=1e-3,
        reg_covar=1e-6,
        max_iter=100,
        n_init=1,
        init_params="kmeans",
        weight_concentration_prior_type="dirichlet_process",
        weight_concentration_prior=None,
        mean_precision_prior=None,
        mean_prior=None,
        degrees_of_freedom_prior=None,
        covariance_prior=None,
        random_state=None,
        warm_start=False,
        verbose=0,
        verbose_interval=10,
        total_samples=1e6,
        learning_offset=10.0,
        learning_decay=0.7,
    ):
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.tol = tol
        self.reg_covar = reg_covar
        self.max_iter = max_iter
        self.n_init = n_init
        self.init_params = init_params
        self.weight_concentration_prior_type = weight_concentration_prior_type
        self.weight_concentration_prior = weight_concentration_prior
        self.mean_precision_prior = mean_precision_prior
        self.mean_prior = mean_prior
        self.degrees_of_freedom_prior = degrees_of_freedom_prior
        self.covariance_prior = covariance_prior
        self.random_state = random_state
        self.warm_start = warm_start
        self.verbose = verbose
        self.verbose_interval = verbose_interval
        self.total_samples = total_samples
        self.learning_offset = learning_offset
        self.learning_decay = learning_decay

    # -- the priors ----------------------------------------------------------------
    def _check_parameters(self, X, sample_weight=None):
        """The priors' values from the hyperparameters and the data (the
        weighted mean and covariance where a default reads them)."""
        n, d = X.shape
        sw = np.ones(n) if sample_weight is None else sample_weight
        k = self.n_components
        self._family = Gaussian(covariance_from_name(self.covariance_type), d)
        gamma = self.weight_concentration_prior
        self.weight_concentration_prior_ = 1.0 / k if gamma is None else gamma
        if self.weight_concentration_prior_type == "dirichlet_process":
            self._weight_prior = StickBreaking.dirichlet_process(
                self.weight_concentration_prior_, k
            )
        else:
            self._weight_prior = Dirichlet(np.full(k, self.weight_concentration_prior_))
        beta = self.mean_precision_prior
        self.mean_precision_prior_ = 1.0 if beta is None else beta
        total = sw.sum()
        mean = sw @ X / total
        if self.mean_prior is None:
            self.mean_prior_ = mean
        else:
            m0 = np.asarray(self.mean_prior, dtype=float)
            if m0.shape != (d,):
                raise ValueError(
                    f"mean_prior must have shape ({d},), got shape {m0.shape}"
                )
            if not np.isfinite(m0).all():
                raise ValueError("mean_prior must be finite")
            self.mean_prior_ = m0
        nu = self.degrees_of_freedom_prior
        if nu is None:
            self.degrees_of_freedom_prior_ = d
        elif nu > d - 1.0:
            self.degrees_of_freedom_prior_ = nu
        else:
            raise ValueError(
                "The parameter 'degrees_of_freedom_prior' should be greater than "
                f"{d - 1}, but got {nu:.3f}."
            )
        self.covariance_prior_ = self._covariance_prior(X, sw, mean, d)

    def _covariance_prior(self, X, sw, mean, d):
        """``W_0^{-1}`` in the covariance type's shape, validated; the
        default is the (weighted, unbiased) covariance of the data."""
        ctype = self.covariance_type
        given = self.covariance_prior
        if given is None:
            r = X - mean
            total = sw.sum()
            # The unbiased covariance of frequency weights (np.cov's ddof=1).
            cov = np.atleast_2d((r * sw[:, None]).T @ r / (total - 1.0))
            var = np.diagonal(cov).copy()
            return {
                "full": cov,
                "tied": cov,
                "diag": var,
                "spherical": var.mean(),
            }[ctype]
        value = np.asarray(given, dtype=float)
        if not np.isfinite(value).all():
            raise ValueError("covariance_prior must be finite")
        if ctype in ("full", "tied"):
            if value.shape != (d, d):
                raise ValueError(
                    f"{ctype} covariance_prior must have shape ({d}, {d}), got "
                    f"shape {value.shape}"
                )
            if not np.allclose(value, value.T) or np.linalg.eigvalsh(value).min() <= 0:
                raise ValueError(
                    f"{ctype} covariance_prior must be symmetric, positive-definite"
                )
            return value
        if ctype == "diag":
            if value.shape != (d,):
                raise ValueError(
                    f"diag covariance_prior must have shape ({d},), got shape "
                    f"{value.shape}"
                )
            if (value <= 0).any():
                raise ValueError("diag covariance_prior must be positive")
            return value
        if value.ndim != 0 or value <= 0:
            raise ValueError("spherical covariance_prior must be a positive number")
        return float(value)

    # -- fitting ------------------------------------------------------------------
    def fit(self, X, y=None, sample_weight=None):
        """Estimate the posterior by variational EM.

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
        if (handler := handler_for(X)) is not None:  # a Dask array or DataFrame
            return handler.fit_bayesian_mixture(self, X, sample_weight)
        self.fit_predict(X, y, sample_weight)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_predict(self, X, y=None, sample_weight=None):
        """Fit, then return the most probable component of every row (a last
        E-step under the fitted posterior, so that it equals
        ``fit(X).predict(X)``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : Ignored
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        X, sw = self._validated_start(X, sample_weight)
        fit_variational(self, X, sw, check_random_state(self.random_state))
        return np.argmax(self._e_step(X), axis=1)

    def _validated_start(self, X, sample_weight):
        """``(X, sample_weight)`` validated, and the priors' defaults read
        from them (a Dask fit passes a sample of its rows)."""
        warm = self.warm_start and hasattr(self, "converged_")
        X = float_input(
            validate_data(
                self,
                X,
                dtype=[np.float64, np.float32],
                ensure_min_samples=2,
                reset=not warm,
            )
        )
        if X.shape[0] < self.n_components:
            raise ValueError(
                "Expected n_samples >= n_components but got n_components = "
                f"{self.n_components}, n_samples = {X.shape[0]}"
            )
        sw = check_sample_weight(sample_weight, X)
        if not sw.any():
            raise ValueError("sample_weight must not be all zero")
        self._check_parameters(X, sw)
        return X, sw

    def _initialize_parameters(self, X, random_state, sample_weight=None):
        """scikit-learn's start: responsibilities drawn by ``init_params``,
        then one M-step."""
        sw = np.ones(X.shape[0]) if sample_weight is None else sample_weight
        self._center = sw @ X / sw.sum()
        resp = initial_responsibilities(
            self.init_params, X, sw, self.n_components, random_state
        )
        self._from_stats(self._stats_of_resp(X, resp, sw, entropy=0.0))

    def _initialize(self, X, sample_weight, random_state):
        self._initialize_parameters(X, random_state, sample_weight)

    # -- E-step --------------------------------------------------------------------
    def _expected_log_weights(self):
        return self._weight_posterior().expected_log()

    def _weight_posterior(self):
        if self.weight_concentration_prior_type == "dirichlet_process":
            from ..priors import Beta

            a, b = self.weight_concentration_
            return StickBreaking(Beta(a, b))
        return Dirichlet(self.weight_concentration_)

    def _expected_log_prob(self, X):
        """``E[log N(x_i | mu_k, Lambda_k)]`` up to ``-d/2 log 2 pi``: the
        Gaussian log-density under the expected precision, corrected by
        ``E[log|Lambda|] - log|E[Lambda]|`` and the means' spread ``d /
        beta_k`` (Bishop 2006, eqs. 10.64-10.65)."""
        d = X.shape[1]
        structure = self._family.covariance
        log_det = structure.log_det_precision_cholesky(self.precisions_cholesky_, d)
        params = GaussianParams(
            self.means_,
            self.covariances_,
            self.precisions_cholesky_,
            log_det,
            self._center,
        )
        nu = self.degrees_of_freedom_
        # In place: no second (n_samples, n_components) array.
        log_gauss = np.asarray(self._family.log_likelihood(X, params), dtype=float)
        log_gauss -= 0.5 * d * np.log(nu)
        log_lambda = d * np.log(2.0) + np.sum(
            digamma(0.5 * (nu - np.arange(d)[:, None])), axis=0
        )
        log_gauss += 0.5 * (log_lambda - d / self.mean_precision_)
        return log_gauss

    def _weighted_log_prob(self, X):
        weighted = self._expected_log_prob(X)
        weighted += self._expected_log_weights()
        return weighted

    def _e_step(self, X):
        """The log-responsibilities under the current posterior."""
        weighted = self._weighted_log_prob(X)
        weighted -= logsumexp_rows(weighted)[:, None]
        return weighted

    # -- statistics and M-step -----------------------------------------------------
    def _stats(self, X, log_resp, sample_weight):
        resp = np.exp(log_resp)
        entropy = -float(sample_weight @ row_plogp(resp, log_resp))
        return self._stats_of_resp(X, resp, sample_weight, entropy, own=True)

    def _stats_of_resp(self, X, resp, sample_weight, entropy, own=False):
        """The statistics of responsibilities ``resp`` (multiplied by the
        weights in place when ``own``: the caller's no more)."""
        if own:
            resp *= sample_weight[:, None]
        else:
            resp = resp * sample_weight[:, None]
        gaussian = shifted_stats(self._family, X, resp)
        return VariationalMixtureStats(
            gaussian, float(sample_weight.sum()), float(entropy)
        )

    def _from_stats(self, stats):
        """The M-step: posterior hyperparameters from ``stats`` (Bishop 2006,
        eqs. 10.58 and 10.60-10.63; the sticks of Blei and Jordan 2006)."""
        g = guard_empty(stats.gaussian)  # scikit-learn's 10 eps per component
        nk = g.state_weight()
        xk = g.mean
        d = xk.shape[1]
        ctype = self.covariance_type
        reg = self.reg_covar
        with np.errstate(invalid="ignore", divide="ignore"):
            if ctype == "full":
                sk = g.scatter / nk[:, None, None] + reg * np.eye(d)
            elif ctype == "tied":  # the scatter pooled over the components
                sk = g.scatter.sum(axis=0) / nk.sum() + reg * np.eye(d)
            elif ctype == "diag":
                sk = g.scatter / nk[:, None] + reg
            else:
                sk = g.scatter / (d * nk) + reg
        post = self._weight_prior.posterior(nk)
        if isinstance(post, StickBreaking):
            self.weight_concentration_ = (post.sticks.alpha, post.sticks.beta)
        else:
            self.weight_concentration_ = post.concentration
        beta0, m0 = self.mean_precision_prior_, self.mean_prior_
        self.mean_precision_ = beta0 + nk
        self.means_ = (beta0 * m0 + nk[:, None] * xk) / self.mean_precision_[:, None]
        nu0, w0 = self.degrees_of_freedom_prior_, self.covariance_prior_
        diff = xk - m0
        shrink = beta0 / self.mean_precision_  # beta_0 / beta_k
        if ctype == "full":
            nu = nu0 + nk
            cov = (
                w0
                + nk[:, None, None] * sk
                + (nk * shrink)[:, None, None] * (diff[:, :, None] * diff[:, None, :])
            )
            cov /= nu[:, None, None]
        elif ctype == "tied":
            k = self.n_components
            n = nk.sum()
            nu = nu0 + n / k
            cov = (
                w0
                + sk * n / k
                + beta0 / k * ((nk / self.mean_precision_) * diff.T) @ diff
            )
            cov /= nu
        elif ctype == "diag":
            nu = nu0 + nk
            cov = w0 + nk[:, None] * (sk + shrink[:, None] * diff**2)
            cov /= nu[:, None]
        else:
            nu = nu0 + nk
            cov = w0 + nk * (sk + shrink * np.mean(diff**2, axis=1))
            cov /= nu
        self.degrees_of_freedom_ = nu
        self.covariances_ = cov
        try:
            self.precisions_cholesky_ = self._family.covariance.precision_cholesky(
                cov, rounding_floor=False
            )
        except np.linalg.LinAlgError:
            raise ValueError(
                "Fitting the mixture model failed because some components have "
                "ill-defined empirical covariance (for instance caused by "
                "singleton or collapsed samples). Try to decrease the number of "
                "components, increase reg_covar, or scale the input data."
            ) from None
        self.weights_ = self._weight_posterior().mean()
        self.precisions_ = self._family.covariance.precision(self.precisions_cholesky_)
        self.stats_ = stats

    # -- the bound -----------------------------------------------------------------
    def _lower_bound(self, stats):
        """scikit-learn's lower bound: the evidence lower bound at the
        posterior of the M-step, without the terms that are constant during a
        fit (Bishop 2006, eqs. 10.70-10.77, simplified at the optimum of
        ``q(theta)`` for ``q(Z)``): the entropy of ``q(Z)``, minus the log
        normalisers of the Wisharts, of the weights' posterior and ``d/2
        log beta_k``."""
        d = self.means_.shape[1]
        nu = self.degrees_of_freedom_
        structure = self._family.covariance
        log_det_chol = structure.log_det_precision_cholesky(
            self.precisions_cholesky_, d
        ) - 0.5 * d * np.log(nu)
        log_wishart = -(
            nu * log_det_chol
            + nu * d * 0.5 * np.log(2.0)
            + np.sum(gammaln(0.5 * (nu - np.arange(d)[:, None])), axis=0)
        )
        if self.covariance_type == "tied":
            log_wishart = self.n_components * float(np.sum(log_wishart))
        else:
            log_wishart = float(np.sum(log_wishart))
        log_norm_weight = float(np.sum(self._weight_posterior().log_normalizer()))
        return (
            stats.entropy
            - log_wishart
            - log_norm_weight
            - 0.5 * d * float(np.sum(np.log(self.mean_precision_)))
        )

    def _get_parameters(self):
        return (
            self.weight_concentration_,
            self.mean_precision_,
            self.means_,
            self.degrees_of_freedom_,
            self.covariances_,
            self.precisions_cholesky_,
            self.stats_,
        )

    def _set_parameters(self, params):
        (
            self.weight_concentration_,
            self.mean_precision_,
            self.means_,
            self.degrees_of_freedom_,
            self.covariances_,
            self.precisions_cholesky_,
            self.stats_,
        ) = params
        self.weights_ = self._weight_posterior().mean()
        self.precisions_ = self._family.covariance.precision(self.precisions_cholesky_)

    # -- statistics: summarize / from_stats ----------------------------------------
    def _validate(self, X):
        check_is_fitted(self)
        return float_input(
            validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        )

    def _output_spec(self, method: str, float32: bool) -> tuple:
        """The width (None: one value per row) and dtype of ``self.<method>``
        (for prediction over Dask blocks)."""
        if method == "predict":
            return None, np.dtype(np.intp)
        width = self.n_components if method == "predict_proba" else None
        return width, np.dtype(np.float64)

    def score_samples(self, X):
        """The log of the variational predictive weights' mixture at every
        row: ``logsumexp_k (E[log pi_k] + E[log N(x | mu_k, Lambda_k)])``, as
        scikit-learn's, shape ``(n_samples,)``."""
        if (handler := handler_for(X)) is not None:  # lazy over Dask blocks
            return handler.predict(self, "score_samples", X)
        X = self._validate(X)
        return logsumexp_rows(self._weighted_log_prob(X))

    def score(self, X, y=None, sample_weight=None):
        """The mean of :meth:`score_samples` (weighted by ``sample_weight``)."""
        log_prob = self.score_samples(X)
        if sample_weight is None:
            return float(log_prob.mean())
        sw = check_sample_weight(sample_weight, log_prob)
        return float(sw @ log_prob / sw.sum())

    def predict_proba(self, X):
        """The responsibilities under the posterior, ``(n_samples, n_components)``."""
        if (handler := handler_for(X)) is not None:  # lazy over Dask blocks
            return handler.predict(self, "predict_proba", X)
        X = self._validate(X)
        return np.exp(self._e_step(X))

    def predict(self, X):
        """The most probable component of every row."""
        if (handler := handler_for(X)) is not None:  # lazy over Dask blocks
            return handler.predict(self, "predict", X)
        X = self._validate(X)
        return np.argmax(self._weighted_log_prob(X), axis=1)

    def sample(self, n_samples=1):
        """Draw rows from the mixture of the expected parameters (``weights_``,
        ``means_``, ``covariances_``), as scikit-learn: returns ``(X, y)``.

        Parameters
        ----------
        n_samples : int, default=1

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
        rng = check_random_state(self.random_state)
        counts = rng.multinomial(n_samples, self.weights_)
        y = np.repeat(np.arange(self.n_components), counts)
        d = self.means_.shape[1]
        params = GaussianParams(
            self.means_,
            self.covariances_,
            self.precisions_cholesky_,
            self._family.covariance.log_det_precision_cholesky(
                self.precisions_cholesky_, d
            ),
            self._center,
        )
        return self._family.sample(params, y, rng), y
