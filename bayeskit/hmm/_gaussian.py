"""GaussianHMM: a chain of states, each emitting a Gaussian vector.

The model is the triple of bayeskit's other Gaussian models: the chain, the
Gaussian family (:class:`~bayeskit.emissions.Gaussian`, its covariance
structure an object of :mod:`bayeskit.emissions.covariance`) and the
Normal-inverse-Wishart prior (:class:`~bayeskit.priors.NormalInverseWishart`,
made from hmmlearn's hyperparameters by its ``from_hmmlearn``). This module
holds the hmmlearn-facing parts only: the hyperparameters, hmmlearn's names
and layouts of the parameters, and hmmlearn's start.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.cluster import KMeans

from .._base.classifier import Triple
from .._base.em import LatentPrior
from .._logmath import has_nan
from .._validation import Interval, StrOptions, check_covariance_prior
from ..emissions import FULL, Gaussian, GaussianParams, covariance_from_name
from ..mixture._missing import mean_imputed
from ..priors import NormalInverseWishart
from ._base import BaseHMM

__all__ = ["GaussianHMM"]

# The prior's names of hmmlearn's hyperparameters, for its error messages.
_PRIOR_NAMES = {
    "scatter": "covars_prior",
    "covariance_weight": "covars_weight",
    "mean_weight": "means_weight",
    "mean": "means_prior",
}


def hmmlearn_gaussian_start(model, X, row_weight, random_state, structure):
    """hmmlearn's start of a Gaussian HMM's ``(means, covariances)``.

    The means are the centres of ``KMeans(n_components,
    random_state=random_state, n_init=10)`` when ``'m'`` is to be initialised
    (``random_state`` as given to the model: an int seeds k-means' own
    generator, a ``RandomState`` goes on drawing after the chain's tables),
    zeros otherwise (only their shape is read); every state's covariance is
    the data's covariance plus ``model.min_covar`` on its diagonal, in
    ``structure``'s shape (spherical: the mean of its entries). Shared by
    :class:`GaussianHMM` and :class:`~bayeskit.hmm.ARGaussianHMM`.
    """
    k = model.n_components
    if np.count_nonzero(row_weight) < k:
        raise ValueError(
            f"n_components={k} states need at least {k} steps of positive "
            f"weight to start the means by k-means, got "
            f"{np.count_nonzero(row_weight)}; give more steps, fewer "
            f"n_components, or set {model._features_from} and leave 'm' out of "
            "init_params"
        )
    if has_nan(X):
        # Missing coordinates: the start is that of the steps with every
        # missing coordinate replaced by its mean (steps with nothing
        # observed left out); EM then treats them as latent.
        row_weight = row_weight * ~np.isnan(X).all(axis=1)
        X = mean_imputed(X, row_weight)
    weighted = not np.all(row_weight == 1.0)
    means = None
    if "m" in model._to_init:
        km = KMeans(n_clusters=k, n_init=10, random_state=random_state)
        km.fit(X, sample_weight=row_weight if weighted else None)
        means = km.cluster_centers_
    # The data's covariance (hmmlearn's np.cov: divided by n - 1).
    if weighted or len(X) < 2:  # (np.cov of one step is NaN)
        stats = Gaussian(FULL).stats(X, row_weight[:, None])
        cov = stats.scatter[0] / max(row_weight.sum() - 1.0, 1.0)
    else:
        cov = np.atleast_2d(np.cov(X.T))
    cov = cov + model.min_covar * np.eye(X.shape[1])
    if structure.name == "spherical":
        # hmmlearn's variance: the mean of every entry of the matrix, the
        # variance of the mean of the features plus min_covar / d.
        covars = np.full(k, cov.mean())
    else:
        covars = structure.from_matrix(cov, k)
    if means is None:  # the means are set: only their shape is read
        means = np.zeros((k, X.shape[1]))
    return means, covars


class CovarsAttribute:
    """hmmlearn's ``covars_`` of a Gaussian HMM: every state's full matrix
    when read, any covariance type's own shape when set (kept as
    ``_covars_``); ``covariances_`` is the kept shape. ``_covars_from`` names
    the fitted attribute whose second axis is the number of features."""

    _covars_from = "means_"

    @property
    def covars_(self):
        """Every state's full covariance matrix, ``(n_components, d, d)``."""
        c = np.asarray(self._covars_, dtype=float)
        shape = np.shape(self.__dict__.get(self._covars_from, ()))
        d = shape[1] if len(shape) == 2 else self.n_features
        return self._structure().dense_all(c, self.n_components, d)

    @covars_.setter
    def covars_(self, covars):
        self._covars_ = self._structure().layout(covars, self.n_components, "covars_")

    @property
    def covariances_(self):
        """The covariances in the covariance type's own shape."""
        return np.array(self._covars_, dtype=float, copy=True)


class GaussianHMM(CovarsAttribute, BaseHMM):
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
        initialises ``covars_`` (as hmmlearn), and to the diagonal of a full
        or tied covariance that is singular, for its densities (logged).
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
    n_jobs : int, default=None
        Number of jobs running the ``n_init`` starts' Baum-Welch in parallel
        through joblib (the starts are drawn one after the other from
        ``random_state``, so the result does not depend on it). None means 1
        unless in a ``joblib.parallel_config`` context (under
        ``backend="dask"`` the starts run on a Dask cluster's workers); -1
        means all processors.

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

    The means and covariances have the Normal-inverse-Wishart prior
    ``bayeskit.priors.NormalInverseWishart`` made from hmmlearn's
    hyperparameters (``from_hmmlearn``), with hmmlearn's bounded denominator
    of the variances; a state no sequence visited keeps its covariance. The
    monitored objective adds to the log-likelihood the log density of the
    priors whose MAP update the M-step is, so it never decreases.

    Parameters set by hand are checked where they are used: a value that is
    not finite, a covariance that is not symmetric positive definite or a
    wrong shape is a ValueError naming the attribute.

    Initialisation is hmmlearn's, draw for draw with the same
    ``random_state``: the start and transition rows from Dirichlet
    distributions with every concentration ``1 / n_components``, the means
    from k-means (ten runs, seeded with ``random_state``), every covariance
    from the data's covariance plus ``min_covar`` on its diagonal. With
    'spherical' the variance is the mean of every entry of that matrix (the
    variance of the mean of the features, plus ``min_covar / n_features``),
    as in hmmlearn.

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
    _gaussian = True
    _stored_params = ("_covars_",)  # covars_ is read from it

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
        n_jobs=None,
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
        self.n_jobs = n_jobs

    def _structure(self):
        """The covariance structure named by ``covariance_type``."""
        if self.covariance_type not in ("spherical", "diag", "full", "tied"):
            raise ValueError(
                "covariance_type must be 'spherical', 'diag', 'full' or 'tied', "
                f"got {self.covariance_type!r}"
            )
        return covariance_from_name(self.covariance_type)

    def _make_components(self):
        structure = self._structure()
        k, d = self.n_components, self.n_features
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
        prior = NormalInverseWishart.from_hmmlearn(
            structure,
            d,
            means_prior=self.means_prior,
            means_weight=self.means_weight,
            covars_prior=self.covars_prior,
            covars_weight=self.covars_weight,
            covariance_prior=check_covariance_prior(self.covariance_prior, d),
            covariance_prior_weight=eta,
            reg_covar=self.reg_covar,
        )
        try:
            prior.check(structure, k, d)
        except ValueError as exc:
            message = str(exc)
            for ours, theirs in _PRIOR_NAMES.items():
                if message.startswith(ours + " "):
                    message = theirs + message[len(ours) :]
                    break
            raise ValueError(message) from None
        emission = Gaussian(
            structure,
            d,
            update_means="m" in self.params,
            update_covariances="c" in self.params,
            singular_jitter=self.min_covar,
        )
        return Triple(self._chain(), emission, LatentPrior(self._chain_prior(), prior))

    def _params_from_stats(self, stats, previous, components):
        try:
            return super()._params_from_stats(stats, previous, components)
        except np.linalg.LinAlgError:
            raise ValueError(
                "a state's covariance is singular: increase covars_prior, or "
                "set covariance_prior_weight > 0 or reg_covar > 0"
            ) from None

    def _emission_start(self, X, row_weight, random_state, emission):
        """hmmlearn's start (:func:`hmmlearn_gaussian_start`)."""
        means, covars = hmmlearn_gaussian_start(
            self, X, row_weight, random_state, emission.covariance
        )
        try:
            return emission.params_from(means, covars)
        except np.linalg.LinAlgError:
            raise ValueError(
                "the data's covariance is singular: set min_covar > 0, or set "
                "covars_ and leave 'c' out of init_params"
            ) from None

    def _sampler(self, params):
        means, covs = np.asarray(self.means_), self.covars_

        def draw(state, rng):
            if state is None:
                return np.zeros((0, means.shape[1]))
            return rng.multivariate_normal(means[state], covs[state])

        return draw

    # -- hmmlearn's names: means_, covars_ (full matrices), n_features ------------
    def _emission_params(self):
        k = self.n_components
        means = np.asarray(self.means_, dtype=float)
        if means.ndim != 2:
            raise ValueError(
                f"means_ must have shape (n_components, n_features), got {means.shape}"
            )
        if not hasattr(self, "n_features_in_"):  # set by hand, without fit
            self.n_features_in_ = means.shape[1]
        d = self.n_features_in_
        self.means_ = self._checked("means_", (k, d), signed=True)
        structure = self._structure()
        covars = np.asarray(self._covars_, dtype=float)
        shape = structure.shape(k, d)
        if covars.shape != shape:
            raise ValueError(
                f"covars_ must have shape {shape} for covariance_type="
                f"{self.covariance_type!r}, got {covars.shape}"
            )
        factors = self.__dict__.get("_factors")
        if factors is None or not np.array_equal(factors[0], covars):
            # Set by hand: hmmlearn's conditions on covars_, then the factors.
            structure.check_values(covars, "covars_")
            emission = Gaussian(structure, d, singular_jitter=self.min_covar)
            try:
                given = emission.params_from(self.means_, covars)
            except np.linalg.LinAlgError:
                raise ValueError("covars_ must be positive definite") from None
            factors = (covars, given.precisions_cholesky, given.log_det)
            self._factors = factors
        return GaussianParams(self.means_, *factors, self.means_.mean(axis=0))

    def _emission_attributes(self, params):
        factors = (params.covariances, params.precisions_cholesky, params.log_det)
        return {
            "means_": params.means,
            "covars_": params.covariances,
            "_factors": factors,
        }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # a missing coordinate is latent
        return tags
