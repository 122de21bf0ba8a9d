"""Gaussian mixtures fitted by EM with a MAP covariance prior, and model selection.

The latent structure is one component node; the E-step is the graph core's
posterior over it, fed by the Gaussian family's log-likelihoods; the M-step
turns the family's statistics under those responsibilities into parameters
with the prior (EM for MAP estimation: Dempster, Laird and Rubin 1977;
Fraley and Raftery 2007).
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy import linalg
from sklearn.base import clone
from sklearn.cluster import KMeans, kmeans_plusplus
from sklearn.utils import check_random_state

from .._logmath import logsumexp
from .._validation import (
    Interval,
    StrOptions,
    _fit_context,
    check_covariance_prior,
    check_is_fitted,
    check_probability_vector,
    check_sample_weight,
    validate_data,
)
from .._warnings import warn
from ..emissions import Gaussian, GaussianParams, GaussianStats, covariance_from_name
from ..emissions.covariance import precision_cholesky_from_precision
from ..graph import LatentNode
from ._em import BaseLatentModel
from .base import BaseGenerativeClassifier, float_input, keep_input_dtype

__all__ = ["GaussianMixture", "GaussianMixtureClassifier", "select_mixture"]


class GaussianMixture(BaseLatentModel):
    """Gaussian mixture fitted by EM, with a MAP prior on the covariances.

    A drop-in for scikit-learn's ``GaussianMixture`` (same parameters,
    attributes and methods), plus ``covariance_prior`` /
    ``covariance_prior_weight`` (a MAP prior on the covariances, after Fraley
    and Raftery 2007),
    ``sample_weight`` in :meth:`fit`, and ``lower_bounds_``.

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
    (\\Sigma_k^{-1} S))` (an inverse-Wishart density up to its constant). The
    other types use its exact analogue: 'tied' one covariance for all
    components, 'diag' the diagonal of ``S``, 'spherical' the mean of that
    diagonal. The prior keeps every covariance positive definite when a
    component collapses on one point or there are fewer points than
    dimensions.

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
        self._fit(X, sample_weight)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_predict(self, X, y=None, sample_weight=None):
        """Fit, then return the most probable component of every row."""
        return np.argmax(self._fit(X, sample_weight), axis=1)

    def _fit(self, X, sample_weight):
        X = validate_data(
            self,
            X,
            dtype=[np.float64, np.float32],
            ensure_min_samples=2,
            reset=not (self.warm_start and hasattr(self, "converged_")),
        )
        dtype, X = X.dtype, float_input(X)
        if X.shape[0] < self.n_components:
            raise ValueError(
                f"Expected n_samples >= n_components but got n_components = "
                f"{self.n_components}, n_samples = {X.shape[0]}"
            )
        sw = check_sample_weight(sample_weight, X)
        if not sw.any():
            raise ValueError("sample_weight must not be all zero")
        self._covariance = covariance_from_name(self.covariance_type)
        self._family = Gaussian(self._covariance)
        self._prior_scatter = self._resolve_prior(X, sw)
        self._init_given = self._check_initial_parameters(X.shape[1])
        resp = self._run_em(X, sw, check_random_state(self.random_state), self.max_iter)
        keep_input_dtype(
            self, dtype, "weights_", "means_", "covariances_", "precisions_cholesky_"
        )
        self._derive_precisions()
        return resp

    def _resolve_prior(self, X, sw):
        d = X.shape[1]
        if isinstance(self.covariance_prior, str):  # 'empirical'
            mean = sw @ X / sw.sum()
            r = X - mean
            return (r * sw[:, None]).T @ r / sw.sum()
        return check_covariance_prior(self.covariance_prior, d)

    def _check_initial_parameters(self, d):
        """Validated copies of the given initial parameters (None where not given).

        Shapes as scikit-learn's; ``weights_init`` a probability vector,
        ``means_init`` finite, ``precisions_init`` finite and positive
        (symmetric positive definite for 'full' and 'tied').
        """
        k, name = self.n_components, self.covariance_type
        weights = means = precisions = None
        if self.weights_init is not None:
            weights = check_probability_vector(self.weights_init, "weights_init", k)
        if self.means_init is not None:
            means = _finite_array(self.means_init, "means_init")
            if means.shape != (k, d):
                raise ValueError(
                    f"means_init must have shape ({k}, {d}), got {means.shape}"
                )
        if self.precisions_init is not None:
            precisions = _finite_array(self.precisions_init, "precisions_init")
            expected = covariance_from_name(name).shape(k, d)
            if precisions.shape != expected:
                raise ValueError(
                    f"precisions_init must have shape {expected} for "
                    f"covariance_type={name!r}, got {precisions.shape}"
                )
            if name in ("diag", "spherical"):
                if np.any(precisions <= 0):
                    raise ValueError(
                        f"precisions_init must be positive for covariance_type="
                        f"{name!r}, got a minimum of {precisions.min():.5g}"
                    )
            else:
                for i, p in enumerate(precisions if name == "full" else [precisions]):
                    which = f" (component {i})" if name == "full" else ""
                    if not np.allclose(p, p.T):
                        raise ValueError(f"precisions_init must be symmetric{which}")
                    try:
                        np.linalg.cholesky(p)
                    except np.linalg.LinAlgError:
                        raise ValueError(
                            f"precisions_init must be positive definite{which}"
                        ) from None
        return weights, means, precisions

    def _initial_resp(self, X, sample_weight, random_state):
        """First responsibilities; rows of zero weight never seed a component."""
        n, k = X.shape[0], self.n_components
        resp = np.zeros((n, k))
        if self.init_params == "kmeans":
            km = KMeans(n_clusters=k, n_init=1, random_state=random_state)
            resp[np.arange(n), km.fit(X, sample_weight=sample_weight).labels_] = 1.0
        elif self.init_params == "random":
            resp = random_state.uniform(size=(n, k))
            resp /= resp.sum(axis=1, keepdims=True)
        elif self.init_params == "random_from_data":
            # Equal weights draw as scikit-learn does (no p: another algorithm).
            p = None
            if np.ptp(sample_weight) > 0:
                p = sample_weight / sample_weight.sum()
            idx = random_state.choice(n, size=k, replace=False, p=p)
            resp[idx, np.arange(k)] = 1.0
        else:  # k-means++
            _, idx = kmeans_plusplus(
                X, k, random_state=random_state, sample_weight=sample_weight
            )
            resp[idx, np.arange(k)] = 1.0
        return resp

    def _initialize(self, X, sample_weight, random_state):
        weights, means, precisions = self._init_given
        if weights is None or means is None or precisions is None:
            # As scikit-learn: with all three given, nothing is drawn or estimated.
            resp = self._initial_resp(X, sample_weight, random_state)
            # scikit-learn's first weights are n_k / n_samples: with one seed
            # row per component (k-means++, random_from_data) they sum to
            # n_components / n_samples, which only the first E-step sees.
            self._update(X, resp * sample_weight[:, None], sample_weight.sum())
        if weights is not None:
            self.weights_ = weights.copy()
        if means is not None:
            self.means_ = means.copy()
        if precisions is not None:
            self._set_precisions(precisions)
        self._center = sample_weight @ X / sample_weight.sum()

    def _set_precisions(self, precisions):
        """Parameters from given precisions: ``P`` the upper factor, ``P P^T``
        the precision (the form the M-step gives), covariances by triangular
        solves."""
        if self._covariance.name in ("diag", "spherical"):
            self.precisions_cholesky_ = np.sqrt(precisions)
            self.covariances_ = 1.0 / precisions
            return
        stack = precisions if precisions.ndim == 3 else precisions[None]
        chol = np.stack([precision_cholesky_from_precision(p) for p in stack])
        eye = np.eye(stack.shape[-1])
        # Sigma = P^{-T} P^{-1}, with P^{-1} from a triangular solve.
        inv = np.stack([linalg.solve_triangular(c, eye, lower=False) for c in chol])
        covs = np.einsum("kji,kjl->kil", inv, inv)
        self.precisions_cholesky_ = chol if precisions.ndim == 3 else chol[0]
        self.covariances_ = covs if precisions.ndim == 3 else covs[0]

    def _e_step(self, X):
        post = LatentNode(self.n_components).posterior(
            self._log_likelihood(X), np.log(self.weights_)
        )
        return post.log_resp, post.log_evidence

    def _log_likelihood(self, X):
        return self._family.log_likelihood(X, self._params())

    def _params(self):
        log_det = self._covariance.log_det_precision_cholesky(
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
        self._update(X, np.exp(log_resp) * sample_weight[:, None])

    def _update(self, X, resp, total=None):
        """Parameters from responsibilities already weighted by sample_weight.

        As scikit-learn, every component's weight gets ``10 eps`` more, as if
        that much mass sat at the origin without scatter: an empty component
        has mean 0 and covariance ``reg_covar`` (not an error only if
        ``reg_covar > 0``), and a covariance is rejected only when it is not
        positive definite in floating point. The weights are divided by
        ``total`` (default: their sum).
        """
        raw = self._family.stats(X, resp)
        stats = _guard_empty(raw)
        try:
            params = self._family.map_params(
                stats,
                prior_weight=self.covariance_prior_weight,
                prior_scatter=self._prior_scatter,
                reg=self.reg_covar,
                rounding_floor=False,
            )
        except np.linalg.LinAlgError:
            raise ValueError(
                "a component's covariance is singular (it collapsed on too few "
                "distinct points, or the data have fewer points than dimensions): "
                "set covariance_prior_weight > 0 (the MAP prior), or increase "
                "reg_covar"
            ) from None
        if _at_rounding_level(
            self._family,
            raw,
            prior_weight=self.covariance_prior_weight,
            prior_scatter=self._prior_scatter,
            reg=self.reg_covar,
        ):
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
        """``log p(Sigma)`` of the MAP prior, up to its constant."""
        return self._covariance.log_prior(
            self.precisions_cholesky_,
            self._prior_scatter,
            self.covariance_prior_weight,
        )

    def _get_parameters(self):
        return (
            self.weights_,
            self.means_,
            self.covariances_,
            self.precisions_cholesky_,
            self._center,
        )

    def _set_parameters(self, params):
        (
            self.weights_,
            self.means_,
            self.covariances_,
            self.precisions_cholesky_,
            self._center,
        ) = params
        self._derive_precisions()

    def _derive_precisions(self):
        """``precisions_`` from ``precisions_cholesky_``."""
        P = self.precisions_cholesky_
        if self._covariance.name == "full":
            self.precisions_ = np.einsum("kij,klj->kil", P, P)
        elif self._covariance.name == "tied":
            self.precisions_ = P @ P.T
        else:
            self.precisions_ = P**2

    # -- prediction ------------------------------------------------------------------
    def _validate(self, X):
        check_is_fitted(self)
        return float_input(
            validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        )

    def _input_dtype(self, X):
        """float32 for float32 input (results keep it, as scikit-learn's)."""
        return np.float32 if getattr(X, "dtype", None) == np.float32 else np.float64

    def score_samples(self, X):
        """``log p(x)`` of every row, shape ``(n_samples,)``."""
        dtype, X = self._input_dtype(X), self._validate(X)
        log_prob = logsumexp(self._log_likelihood(X) + np.log(self.weights_), axis=1)
        return log_prob.astype(dtype, copy=False)

    def score(self, X, y=None, sample_weight=None):
        """Mean log-likelihood per sample (weighted by ``sample_weight``)."""
        return float(np.average(self.score_samples(X), weights=sample_weight))

    def predict_proba(self, X):
        """Posterior over the components, shape ``(n_samples, n_components)``."""
        dtype, X = self._input_dtype(X), self._validate(X)
        return np.exp(self._e_step(X)[0]).astype(dtype, copy=False)

    def predict(self, X):
        """The most probable component of every row."""
        X = self._validate(X)
        return np.argmax(self._log_likelihood(X) + np.log(self.weights_), axis=1)

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
        if n_samples < 1:
            raise ValueError(
                f"Invalid value for 'n_samples': {n_samples}; sample draws at "
                "least one row"
            )
        rng = check_random_state(
            self.random_state if random_state is None else random_state
        )
        counts = rng.multinomial(n_samples, self.weights_)
        d = self.means_.shape[1]
        name = self._covariance.name
        parts = []
        for k, c in enumerate(counts):
            if name in ("full", "tied"):
                cov = self._covariance.dense(self.covariances_, k, d)
                parts.append(rng.multivariate_normal(self.means_[k], cov, int(c)))
            else:  # independent coordinates: scaled standard normals
                scale = np.sqrt(self.covariances_[k])
                parts.append(self.means_[k] + rng.standard_normal((c, d)) * scale)
        X = np.vstack(parts)
        y = np.repeat(np.arange(self.n_components), counts)
        return X, y

    def _n_parameters(self):
        k, d = self.means_.shape
        cov = covariance_from_name(self.covariance_type).n_parameters(k, d)
        return cov + k * d + k - 1

    def bic(self, X):
        """Bayesian information criterion on ``X`` (lower is better)."""
        n = np.shape(X)[0]
        return -2 * self.score(X) * n + self._n_parameters() * np.log(n)

    def aic(self, X):
        """Akaike information criterion on ``X`` (lower is better)."""
        return -2 * self.score(X) * np.shape(X)[0] + 2 * self._n_parameters()


def _finite_array(value, name):
    """``value`` as a float64 array, or a ValueError naming ``name``."""
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of numbers") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (it contains NaN or infinity)")
    return arr


def _at_rounding_level(family, stats, **prior):
    """Whether a component's covariance from ``stats`` (without the guard) is
    singular up to rounding: the stricter test the other Gaussian models use."""
    try:
        family.map_params(stats, **prior)
    except np.linalg.LinAlgError:
        return True
    return False


def _guard_empty(stats):
    """``stats`` with ``10 eps`` more weight per component at the origin.

    scikit-learn's M-step divides by ``n_k + 10 eps``: the mean shrinks to
    ``n_k mu_k / (n_k + 10 eps)`` and the scatter is taken around it (the
    added mass contributes none).
    """
    tiny = 10 * np.finfo(np.float64).eps
    weight = stats.weight + tiny
    frac = stats.weight / weight
    mean = stats.mean * (frac if frac.ndim == 2 else frac[:, None])
    shift = stats.covariance.outer(stats.mean - mean, stats.weight)
    return GaussianStats(weight, mean, stats.scatter + shift, stats.covariance)


def select_mixture(
    X,
    n_components=range(1, 10),
    covariance_types=("full", "tied", "diag", "spherical"),
    criterion="bic",
    **params,
):
    """Fit a mixture for every candidate and keep the best by BIC or AIC.

    mclust's workflow: one :class:`GaussianMixture` per number of components
    and covariance type, compared by an information criterion.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_components : iterable of int, default=range(1, 10)
    covariance_types : iterable of str, default=('full', 'tied', 'diag', 'spherical')
    criterion : {'bic', 'aic'}, default='bic'
    **params
        Other parameters of every :class:`GaussianMixture` (``random_state``,
        ``covariance_prior_weight``, ...).

    Returns
    -------
    table : DataFrame
        One row per candidate: ``n_components``, ``covariance_type``, ``bic``,
        ``aic`` (lower is better), sorted by the criterion.
    best : GaussianMixture
        The best candidate, fitted.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import select_mixture
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.5, size=(100, 2)) for c in (0, 5, 10)])
    >>> table, best = select_mixture(X, range(1, 5), ["full"], random_state=0)
    >>> best.n_components
    3
    """
    if criterion not in ("bic", "aic"):
        raise ValueError(f"criterion must be 'bic' or 'aic', got {criterion!r}")
    rows, models = [], []
    template = GaussianMixture(**params)
    for cov in covariance_types:
        for k in n_components:
            model = clone(template).set_params(n_components=k, covariance_type=cov)
            model.fit(X)
            rows.append(
                {
                    "n_components": k,
                    "covariance_type": cov,
                    "bic": model.bic(X),
                    "aic": model.aic(X),
                }
            )
            models.append(model)
    table = pd.DataFrame(rows)
    best = int(np.argmin(table[criterion].to_numpy()))
    return table.sort_values(criterion, kind="stable").reset_index(drop=True), models[
        best
    ]


@dataclass(frozen=True)
class _FittedMixtures:
    """One fitted mixture per class: the statistics of an EM fit do not add."""

    mixtures: tuple

    def __add__(self, other):
        raise ValueError(
            "GaussianMixtureClassifier fits each class by EM, whose statistics do "
            "not add across chunks: call fit on all the data"
        )


class GaussianMixtureClassifier(BaseGenerativeClassifier):
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
        Components per class: one number, or one per class (in the order of
        ``classes_``).
    covariance_type, tol, reg_covar, max_iter, n_init, init_params, \
covariance_prior, covariance_prior_weight, random_state
        As :class:`GaussianMixture`, for every class's mixture.
    priors, prior_m, costs
        As every bayeskit classifier (see :class:`~bayeskit.CategoricalNB`).

    Attributes
    ----------
    classes_, class_count_, class_log_prior_
        As every bayeskit classifier.
    mixtures_ : list of GaussianMixture
        The fitted mixture of each class.
    n_iter_ : ndarray of shape (n_classes,)
        EM iterations of each class's mixture.
    n_features_in_, feature_names_in_

    See Also
    --------
    GaussianMixture, QuadraticDiscriminantAnalysis

    Notes
    -----
    With one component per class and 'full' covariances this is QDA (up to
    ``reg_covar``). Each mixture is fitted by EM, so there is no
    ``partial_fit``.

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

    _additive_stats = False
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

    def _prepare_X(self, X, reset, sample_weight=None):
        return validate_data(self, X, reset=reset, dtype=np.float64)

    def _emission_stats(self, X, weights, labels):
        k = len(self.classes_)
        counts = np.broadcast_to(np.asarray(self.n_components), (k,))
        if np.ndim(self.n_components) and np.shape(self.n_components) != (k,):
            raise ValueError(
                f"n_components must be one number or one per class ({k}), got "
                f"shape {np.shape(self.n_components)}"
            )
        rng = check_random_state(self.random_state)
        mixtures = []
        for c in range(k):
            rows = labels == c
            gm = GaussianMixture(
                int(counts[c]),
                covariance_type=self.covariance_type,
                tol=self.tol,
                reg_covar=self.reg_covar,
                max_iter=self.max_iter,
                n_init=self.n_init,
                init_params=self.init_params,
                covariance_prior=self.covariance_prior,
                covariance_prior_weight=self.covariance_prior_weight,
                random_state=rng,
            )
            if rows.sum() < counts[c]:
                raise ValueError(
                    f"class {self.classes_[c].tolist()!r} has {int(rows.sum())} "
                    f"samples for {int(counts[c])} components"
                )
            mixtures.append(gm.fit(X[rows], sample_weight=weights[rows, c]))
        return _FittedMixtures(tuple(mixtures))

    def _set_emission_params(self, stats):
        self.mixtures_ = list(stats.mixtures)
        self.n_iter_ = np.array([gm.n_iter_ for gm in self.mixtures_])

    def _log_likelihood(self, X):
        # The message from each class's component node: logsumexp over components.
        return np.column_stack([gm.score_samples(X) for gm in self.mixtures_])
