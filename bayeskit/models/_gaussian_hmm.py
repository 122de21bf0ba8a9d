"""GaussianHMM: a chain of states, each emitting a Gaussian vector.

The emission is bayeskit's Gaussian family (log-likelihoods through the
precision Cholesky factors, centred statistics) with hmmlearn's M-step under
hmmlearn's priors (:class:`_GaussianHMMEmission`, :class:`_GaussianHMMPrior`),
kept in one piece so that a Normal-inverse-Wishart prior object can take its
place.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from numbers import Real

import numpy as np
from sklearn.cluster import KMeans

from .._validation import Interval, StrOptions, check_covariance_prior
from ..emissions import (
    DIAG,
    FULL,
    Gaussian,
    GaussianParams,
    GaussianStats,
    covariance_from_name,
)
from ..emissions.base import Emission
from ._em import LatentPrior
from ._hmm_base import BaseHMM
from .base import Triple

__all__ = ["GaussianHMM"]

_log = logging.getLogger("bayeskit.models.hmm")


class GaussianHMM(BaseHMM):
    """Hidden Markov model with Gaussian emissions.

    hmmlearn-compatible (``GaussianHMM``: the same parameters in the same
    positional order, with the same defaults and meaning), with a list of
    sequences as input, ``score_sequences``, ``n_init`` restarts and
    bayeskit's covariance prior beside hmmlearn's.

    Parameters
    ----------
    n_components : int, default=1
        Number of hidden states.
    covariance_type : {'spherical', 'diag', 'full', 'tied'}, default='diag'
        One variance per state, a diagonal per state, a full matrix per state,
        or one full matrix shared by all states.
    min_covar : float, default=1e-3
        Added to the diagonal of the data's covariance from which ``fit``
        initialises ``covars_`` (as hmmlearn).
    startprob_prior, transmat_prior : float or array-like, default=1.0
        Dirichlet concentrations, as :class:`CategoricalHMM`.
    means_prior, means_weight : float or array-like, default=0
        hmmlearn's normal prior on the means: prior mean ``m0`` and its weight
        ``w`` in pseudo-observations; the M-step is ``mu_k = (w m0 + sum_t
        gamma_tk x_t) / (w + n_k)``.
    covars_prior : float or array-like, default=1e-2
        hmmlearn's prior scatter ``P`` of the covariances (a scalar is added to
        every entry, as in hmmlearn). With ``c_k`` the weighted scatter around
        ``mu_k`` plus ``w (mu_k - m0)(mu_k - m0)^T``, the M-step is
        ``Sigma_k = (P + c_k) / (max(a - 1, 0) + n_k)`` for 'diag' and
        'spherical' (the mean of the diagonal) and ``(P + c_k) / (max(a - d, 0)
        + n_k)`` for 'full' ('tied' sums numerator and denominator over the
        states), ``a`` being ``covars_weight`` (Huang, Acero and Hon, 2001).
        The default regularises every covariance, as in hmmlearn.
    covars_weight : float or array-like, default=1
        ``a`` above.
    algorithm, random_state, n_iter, tol, verbose
        As :class:`CategoricalHMM`.
    params, init_params : str, default='stmc'
        s: start, t: transitions, m: means, c: covariances. As in hmmlearn,
        ``fit`` initialises the parameters in ``init_params`` and also those
        not set yet; a parameter in ``init_params`` that was set is overwritten
        (with a logged warning).
    implementation : {'log', 'scaling'}, default='log'
        Accepted for hmmlearn's calls: both run bayeskit's one exact path
        (scaled recursions with an exact log-space fallback), so they give the
        same answers, and 'scaling' does not fail where hmmlearn's scaled
        recursion underflows.
    covariance_prior : array-like of shape (n_features, n_features), default=None
        bayeskit's prior scatter ``S`` (None: the identity), with weight
        ``covariance_prior_weight``: added to the numerator and denominator
        of the M-step above, ``(P + c_k + eta S) / (... + n_k + eta)``. It is
        beside hmmlearn's ``covars_prior``, not instead of it: with
        ``covariance_prior_weight`` > 0, leave ``covars_prior`` and
        ``covars_weight`` at their defaults or set them to 0 and 1 (an error
        otherwise, since both would describe one prior twice).
    covariance_prior_weight : float, default=0.0
        ``eta`` above; 0 leaves hmmlearn's update unchanged.
    reg_covar : float, default=0.0
        Added to the diagonal of every covariance after the M-step (a ridge;
        0 is hmmlearn's update).
    n_init : int, default=1
        Random starts; the one with the best log posterior is kept.

    Attributes
    ----------
    startprob_, transmat_, monitor_, converged_, n_iter_, lower_bound_, stats_
        As :class:`CategoricalHMM` (``stats_.emission`` holds the weight, mean
        and centred scatter of every state).
    means_ : ndarray of shape (n_components, n_features)
    covars_ : ndarray of shape (n_components, n_features, n_features)
        Every state's full covariance matrix, whatever ``covariance_type``
        (hmmlearn's form). It is set in the covariance type's own shape:
        ``(n_components,)`` spherical, ``(n_components, n_features)`` diag,
        ``(n_features, n_features)`` tied, ``(n_components, n_features,
        n_features)`` full.
    covariances_ : ndarray
        The covariances in the covariance type's own shape (as
        :class:`~bayeskit.GaussianMixture`'s ``covariances_``).
    n_features : int
        Dimension of the observations, set by ``fit`` (hmmlearn's name;
        ``n_features_in_`` is scikit-learn's).

    See Also
    --------
    CategoricalHMM, GMMHMM, HMMClassifier

    Notes
    -----
    ``lengths`` is the second positional argument of every method, as in
    hmmlearn (see :class:`CategoricalHMM`). How a list ``X`` is read: a list
    that ``np.asarray`` turns into a rectangular 2-D numeric array, such as
    ``[[0.1, 2.0], [0.3, 1.5]]``, is hmmlearn's rows form (steps by features),
    one sequence. A list of 2-D arrays (one ``(n_steps, n_features)`` array
    per sequence), or of 1-d univariate sequences of different lengths, is one
    sequence per element. A list of 1-d arrays of equal length could be either
    (hmmlearn stacks it into rows): it is an error that says how to write
    each; write univariate sequences as columns, shape ``(n_steps, 1)``. A
    list mixing both dimensions is an error.

    The monitored objective adds to the log-likelihood the log density of
    the priors whose MAP update the M-step is, so it never decreases.

    Initialisation: with 'spherical', ``fit`` starts every state's variance
    at the mean of the data's variances plus ``min_covar`` (hmmlearn averages
    every entry of the covariance matrix, off-diagonal ones too, which can be
    negative). The means start from k-means with one run.

    References
    ----------
    X. Huang, A. Acero and H.-W. Hon, *Spoken Language Processing*, Prentice
    Hall, 2001, pp. 443-445.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import GaussianHMM
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(m, 1, (30, 1)) for m in (0, 8, 0, 8)])
    >>> hmm = GaussianHMM(n_components=2, random_state=0).fit(X)
    >>> np.sort(hmm.means_.ravel()).round(0)
    array([0., 8.])
    """

    _parameter_constraints: dict = {
        **BaseHMM._parameter_constraints,
        "covariance_type": [StrOptions({"spherical", "diag", "full", "tied"})],
        "min_covar": [Interval(Real, 0, None, closed="left")],
        "means_prior": ["array-like", Real],
        "means_weight": ["array-like", Interval(Real, 0, None, closed="left")],
        "covars_prior": ["array-like", Real],
        "covars_weight": ["array-like", Real],
        "covariance_prior": ["array-like", None],
        "covariance_prior_weight": [Interval(Real, 0, None, closed="left")],
        "reg_covar": [Interval(Real, 0, None, closed="left")],
    }
    _param_names = {"s": "startprob_", "t": "transmat_", "m": "means_", "c": "covars_"}
    _features_from = "means_"

    def __init__(
        self,
        n_components=1,
        covariance_type="diag",
        min_covar=1e-3,
        startprob_prior=1.0,
        transmat_prior=1.0,
        means_prior=0,
        means_weight=0,
        covars_prior=1e-2,
        covars_weight=1,
        algorithm="viterbi",
        random_state=None,
        n_iter=10,
        tol=1e-2,
        verbose=False,
        params="stmc",
        init_params="stmc",
        implementation="log",
        *,
        covariance_prior=None,
        covariance_prior_weight=0.0,
        reg_covar=0.0,
        n_init=1,
    ):
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.min_covar = min_covar
        self.startprob_prior = startprob_prior
        self.transmat_prior = transmat_prior
        self.means_prior = means_prior
        self.means_weight = means_weight
        self.covars_prior = covars_prior
        self.covars_weight = covars_weight
        self.algorithm = algorithm
        self.random_state = random_state
        self.n_iter = n_iter
        self.tol = tol
        self.verbose = verbose
        self.params = params
        self.init_params = init_params
        self.implementation = implementation
        self.covariance_prior = covariance_prior
        self.covariance_prior_weight = covariance_prior_weight
        self.reg_covar = reg_covar
        self.n_init = n_init

    def _make_components(self):
        if self.covariance_type not in _TYPES:
            raise ValueError(
                "covariance_type must be 'spherical', 'diag', 'full' or 'tied', "
                f"got {self.covariance_type!r}"
            )
        k, d = self.n_components, self.n_features
        m0 = np.broadcast_to(np.asarray(self.means_prior, dtype=float), (k, d))
        w = np.asarray(self.means_weight, dtype=float)
        w = np.broadcast_to(w[:, None] if w.ndim == 1 else w, (k, d))
        eta = self.covariance_prior_weight
        if eta > 0 and not (
            np.all(np.asarray(self.covars_prior) == 1e-2)
            or np.all(np.asarray(self.covars_prior) == 0)
        ):
            raise ValueError(
                "covariance_prior_weight > 0 and covars_prior describe one "
                "covariance prior twice: give it as hmmlearn's covars_prior and "
                "covars_weight, or as covariance_prior and covariance_prior_weight "
                "with covars_prior left at its default"
            )
        prior = _GaussianHMMPrior(
            m0,
            w,
            np.asarray(self.covars_prior, dtype=float),
            np.asarray(self.covars_weight, dtype=float),
            eta,
            check_covariance_prior(self.covariance_prior, d),
        )
        emission = _GaussianHMMEmission(
            self.covariance_type,
            d,
            self.min_covar,
            self.reg_covar,
            update_means="m" in self.params,
            update_covars="c" in self.params,
        )
        return Triple(self._chain(), emission, LatentPrior(self._chain_prior(), prior))

    # -- hmmlearn's names: means_, covars_ (full matrices), n_features ------------
    def _emission_params(self):
        if not hasattr(self, "n_features_in_"):  # set by hand, without fit
            means = np.asarray(self.means_, dtype=float)
            if means.ndim != 2:
                raise ValueError(
                    "means_ must have shape (n_components, n_features), got "
                    f"{means.shape}"
                )
            self.n_features_in_ = means.shape[1]
        k, d = self.n_components, self.n_features_in_
        self.means_ = np.asarray(self.means_, dtype=float)
        if self.means_.shape != (k, d):
            raise ValueError(
                f"means_ must have shape ({k}, {d}), got {self.means_.shape}"
            )
        covars = np.asarray(self._covars_, dtype=float)
        shape = covariance_from_name(self.covariance_type).shape(k, d)
        if covars.shape != shape:
            raise ValueError(
                f"covars_ must have shape {shape} for covariance_type="
                f"{self.covariance_type!r}, got {covars.shape}"
            )
        factors = self.__dict__.get("_factors")
        if factors is None or not np.array_equal(factors[0], covars):
            factors = self._make_components()[1].factor(covars)  # set by hand
            self._factors = factors
        return GaussianParams(self.means_, *factors, self.means_.mean(axis=0))

    def _emission_attributes(self, params):
        factors = (params.covariances, params.precisions_cholesky, params.log_det)
        return {
            "means_": params.means,
            "covars_": params.covariances,
            "_factors": factors,
        }

    @property
    def covars_(self):
        """Every state's full covariance matrix, ``(n_components, d, d)``."""
        c = np.asarray(self._covars_, dtype=float)
        k = self.n_components
        if self.covariance_type == "full":
            return c.copy()
        if self.covariance_type == "tied":
            return np.repeat(c[None], k, axis=0)
        if self.covariance_type == "diag":
            return c[:, :, None] * np.eye(c.shape[1])
        d = np.shape(self.means_)[1] if hasattr(self, "means_") else self.n_features
        return c[:, None, None] * np.eye(d)

    @covars_.setter
    def covars_(self, covars):
        self._covars_ = _compact_covars(covars, self.covariance_type, self.n_components)

    @property
    def covariances_(self):
        """The covariances in the covariance type's own shape."""
        return np.array(self._covars_, dtype=float, copy=True)


_TYPES = ("spherical", "diag", "full", "tied")


@dataclass(frozen=True)
class _GaussianHMMPrior:
    """hmmlearn's priors of GaussianHMM, and bayeskit's covariance prior.

    ``means_prior`` ``m0`` and ``means_weight`` ``w`` (a normal prior on the
    means, both ``(k, d)``), ``covars_prior`` ``P`` and ``covars_weight`` ``a``
    (the covariance prior of Huang, Acero and Hon 2001), ``eta`` and ``S``
    (bayeskit's prior scatter and its weight).
    """

    means_prior: np.ndarray
    means_weight: np.ndarray
    covars_prior: np.ndarray
    covars_weight: np.ndarray
    eta: float
    S: np.ndarray


class _GaussianHMMEmission(Emission):
    """The Gaussian family with GaussianHMM's hmmlearn-prior M-step.

    Log-likelihoods and statistics are :class:`~bayeskit.emissions.Gaussian`'s
    (weight, mean and centred scatter of every state: full for 'full' and
    'tied', diagonal otherwise); :meth:`map_params` is hmmlearn's M-step under
    a :class:`_GaussianHMMPrior`, and :meth:`log_prior` the log density of the
    priors that M-step maximises.
    """

    def __init__(
        self, covariance_type, n_features, min_covar, reg_covar, *, update_means,
        update_covars,
    ):  # fmt: skip
        self.covariance_type = covariance_type
        self.covariance = covariance_from_name(covariance_type)
        self.n_features = n_features
        self.min_covar = min_covar
        self.reg_covar = reg_covar
        self.update_means = update_means
        self.update_covars = update_covars
        self._family = Gaussian(self.covariance)
        self._full = covariance_type in ("full", "tied")
        self._stats_family = Gaussian(FULL if self._full else DIAG)

    def log_likelihood(self, X, params):
        return self._family.log_likelihood(X, params)

    def stats(self, X, weights, labels=None):
        return self._stats_family.stats(X, weights)

    def zeros(self, n_states):
        k, d = n_states, self.n_features
        if self._full:
            return GaussianStats(
                np.zeros(k), np.zeros((k, d)), np.zeros((k, d, d)), FULL
            )
        return GaussianStats(np.zeros((k, d)), np.zeros((k, d)), np.zeros((k, d)), DIAG)

    def n_parameters(self, n_states):
        k, d = n_states, self.n_features
        n = k * d if self.update_means else 0
        return n + (self.covariance.n_parameters(k, d) if self.update_covars else 0)

    def factor(self, covars):
        """``(covars, precision Cholesky, log det)``. A singular full or tied
        covariance is factored with ``min_covar`` on its diagonal, as hmmlearn's
        densities do (logged); otherwise ValueError."""
        d = self.n_features
        try:
            prec = self.covariance.precision_cholesky(covars)
        except np.linalg.LinAlgError:
            if not self._full or not self.min_covar:
                raise ValueError("covars_ must be positive definite") from None
            _log.warning(
                "a covariance is singular; its densities use covars_ + min_covar "
                "* I, as hmmlearn's"
            )
            try:
                prec = self.covariance.precision_cholesky(
                    covars + self.min_covar * np.eye(d)
                )
            except np.linalg.LinAlgError:
                raise ValueError("covars_ must be positive definite") from None
        if not np.all(np.isfinite(prec)):
            raise ValueError("covars_ must be positive definite")
        return covars, prec, self.covariance.log_det_precision_cholesky(prec, d)

    def map_params(self, stats, prior, previous):
        """hmmlearn's M-step of the means and covariances (see GaussianHMM)."""
        n = stats.state_weight()
        empty = n <= 0
        m0, w = prior.means_prior, prior.means_weight
        xbar = np.where(empty[:, None], previous.means, stats.mean)
        means = previous.means
        if self.update_means:
            denom = w + n[:, None]
            with np.errstate(invalid="ignore", divide="ignore"):
                mu = (w * m0 + n[:, None] * xbar) / denom
            means = np.where(denom > 0, mu, previous.means)
        cov = np.asarray(previous.covariances, dtype=float)
        if self.update_covars:
            cov = self._covariances(stats.scatter, prior, n, xbar, means, cov)
        try:
            factors = self.factor(cov)
        except ValueError:
            raise ValueError(
                "a state's covariance is singular: increase covars_prior, or "
                "set covariance_prior_weight > 0 or reg_covar > 0"
            ) from None
        return GaussianParams(means, *factors, means.mean(axis=0))

    def _covariances(self, scatter, prior, n, xbar, mu, old):
        """hmmlearn's covariance update around the new means ``mu``."""
        k, d = mu.shape
        m0, w, eta, S = prior.means_prior, prior.means_weight, prior.eta, prior.S
        a, P = prior.covars_weight, prior.covars_prior
        delta_prior, shift = mu - m0, xbar - mu
        scatter = np.asarray(scatter)
        if not self._full:
            c_n = w * delta_prior**2 + scatter + n[:, None] * shift**2
            num = np.broadcast_to(P, (k, d)) + c_n + eta * np.diag(S)
            den = np.maximum(a - 1, 0) + n[:, None] + eta
            cov = num / np.maximum(den, 1e-5)
            if self.covariance_type == "spherical":
                cov = cov.mean(axis=1)
        else:
            c_n = w[:, :1, None] * delta_prior[:, :, None] * delta_prior[:, None, :]
            c_n = (
                c_n
                + scatter
                + n[:, None, None] * (shift[:, :, None] * shift[:, None, :])
            )
            a_eff = np.maximum(a - d, 0)
            if self.covariance_type == "tied":
                num = np.broadcast_to(P, (d, d)) + c_n.sum(axis=0) + eta * S
                cov = num / (a_eff + n.sum() + eta)
            else:
                num = np.broadcast_to(P, (k, d, d)) + c_n + eta * S
                with np.errstate(divide="ignore", invalid="ignore"):
                    cov = num / (a_eff + n + eta)[..., None, None]
        empty = n <= 0
        if self.covariance_type != "tied" and empty.any():
            # A state no sequence visited keeps its covariance (hmmlearn's
            # update divides by its zero count).
            cov = np.where(empty.reshape((k,) + (1,) * (cov.ndim - 1)), old, cov)
        if self.reg_covar:
            cov = cov + self.reg_covar * (np.eye(d) if self._full else 1.0)
        return cov

    def log_prior(self, params, prior):
        """Log density (up to its constant) of the priors the M-step maximises."""
        d = self.n_features
        m0, w, eta, S = prior.means_prior, prior.means_weight, prior.eta, prior.S
        a, P = prior.covars_weight, prior.covars_prior
        delta = params.means - m0
        cov = np.asarray(params.covariances, dtype=float)
        if not self._full:
            var = cov if cov.ndim == 2 else np.repeat(cov[:, None], d, axis=1)
            num = np.broadcast_to(P, var.shape) + w * delta**2 + eta * np.diag(S)
            coef = np.maximum(a - 1, 0) + eta
            with np.errstate(divide="ignore"):
                return float(np.sum(-0.5 * coef * np.log(var) - 0.5 * num / var))
        outer = w[:, :1, None] * delta[:, :, None] * delta[:, None, :]
        if self.covariance_type == "tied":
            num = (np.broadcast_to(P, (d, d)) + outer.sum(axis=0) + eta * S)[None]
            prec = params.precisions_cholesky[None]  # the factors the densities use
        else:
            num = np.broadcast_to(P, outer.shape) + outer + eta * S
            prec = params.precisions_cholesky
        coef = np.maximum(a - d, 0) + eta
        # log|Sigma| = -2 log|U| and tr(M Sigma^-1) = tr(U^T M U), U U^T = Sigma^-1.
        log_det = -2.0 * np.log(np.diagonal(prec, axis1=1, axis2=2)).sum()
        trace = np.einsum("kji,kjl,kli->", prec, num, prec)
        return float(-0.5 * coef * log_det - 0.5 * trace)

    def init_params(self, X, weights, n_states, random_state):
        """hmmlearn's start: k-means centres (one run) and, for every state, the
        data's covariance plus ``min_covar`` on its diagonal (spherical: the
        mean of the variances)."""
        row_weight = weights[:, 0]
        if np.count_nonzero(row_weight) < n_states:
            raise ValueError(
                f"n_components={n_states} states need at least {n_states} steps "
                f"of positive weight to start the means by k-means, got "
                f"{np.count_nonzero(row_weight)}; give more steps, fewer "
                "n_components, or set means_ and leave 'm' out of init_params"
            )
        km = KMeans(n_clusters=n_states, n_init=1, random_state=random_state)
        means = km.fit(X, sample_weight=row_weight).cluster_centers_
        stats = Gaussian(FULL).stats(X, weights)
        # The data's covariance (hmmlearn's np.cov: divided by n - 1).
        cov = stats.scatter[0] / max(row_weight.sum() - 1.0, 1.0)
        cov += self.min_covar * np.eye(X.shape[1])
        covars = {
            "full": np.repeat(cov[None], n_states, axis=0),
            "tied": cov,
            "diag": np.repeat(np.diag(cov)[None], n_states, axis=0),
            "spherical": np.full(n_states, np.mean(np.diag(cov))),
        }[self.covariance_type]
        return GaussianParams(means, *self.factor(covars), means.mean(axis=0))

    def sample(self, params, states, random_state):
        k, d = params.means.shape
        out = np.empty((len(states), d))
        for state in range(k):
            rows = states == state
            dense = self.covariance.dense(params.covariances, state, d)
            out[rows] = random_state.multivariate_normal(
                params.means[state], dense, rows.sum()
            )
        return out


def _compact_covars(covars, covariance_type, n_components):
    """hmmlearn's covars_ setter: the covariance type's own shape."""
    c = np.array(covars, dtype=float, copy=True)
    k = n_components
    if covariance_type == "spherical":
        # Any shape with one value per state (hmmlearn flattens it).
        if c.ndim >= 1 and c.shape[0] == k and c.size % k == 0:
            rows = c.reshape(k, -1)
            if np.all(rows == rows[:, :1]):
                return rows[:, 0].copy()
        raise ValueError(
            f"covars_ must have shape ({k},) for covariance_type='spherical' "
            f"(one variance per state), got {c.shape}"
        )
    ndim = {"diag": 2, "tied": 2, "full": 3}.get(covariance_type)
    if ndim is None:
        raise ValueError(
            "covariance_type must be 'spherical', 'diag', 'full' or 'tied', got "
            f"{covariance_type!r}"
        )
    if c.ndim != ndim or (ndim == 3 and c.shape[1] != c.shape[2]):
        shape = {
            "diag": "(n_components, n_features)",
            "tied": "(n_features, n_features)",
            "full": "(n_components, n_features, n_features)",
        }[covariance_type]
        raise ValueError(
            f"covars_ must have shape {shape} for covariance_type="
            f"{covariance_type!r}, got {c.shape}"
        )
    return c
