"""VariationalGaussianHMM: hmmlearn's variational HMM of Gaussian vectors.

The family's half of the variational loop of ``bayeskit.hmm._variational``:
a Normal-Wishart posterior per state (one Wishart shared by the states for
'tied'; a Normal-Gamma per coordinate for 'diag', one Gamma per state for
'spherical'), its expected log densities, its update and its KL divergence.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.special import digamma, gammaln
from sklearn.cluster import KMeans

from .._base.classifier import Triple
from .._base.em import LatentPrior
from .._validation import ElementwiseInterval, Interval, StrOptions
from ..emissions import Gaussian
from ..graph import ChainPrior
from ..priors import Gamma
from ._gaussian import GaussianHMM
from ._variational import VariationalHMMMixin
from ._vonline import SVI_CONSTRAINTS, NormalStats, _blend_gaussian

__all__ = ["VariationalGaussianHMM"]

_POSITIVE = [ElementwiseInterval(Real, 0, None, closed="neither"), None]
_LOG2 = np.log(2.0)


def _cholesky(matrices, name):
    try:
        return np.linalg.cholesky(matrices)
    except np.linalg.LinAlgError:
        raise ValueError(f"{name} must be symmetric positive definite") from None


def _log_det(chol):
    return 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1)


def _wishart_e_log_det(nu, chol):
    """``E[log|Lambda|]`` under ``Wishart(nu, B^{-1})``, ``B = L L^T`` the
    inverse scale (Bishop 2006, eq. B.81)."""
    d = chol.shape[-1]
    half = 0.5 * (np.asarray(nu, dtype=float)[..., None] - np.arange(d))
    return digamma(half).sum(axis=-1) + d * _LOG2 - _log_det(chol)


def _wishart_kl(nu, chol, nu0, chol0):
    """``KL(Wishart(nu, B^{-1}) || Wishart(nu0, B0^{-1}))`` from the density
    and the normaliser (Bishop 2006, eqs. B.78-B.82), batched over the
    leading axis; ``chol`` and ``chol0`` are Cholesky factors of the inverse
    scales ``B`` and ``B0``."""
    d = chol.shape[-1]
    nu, nu0 = np.asarray(nu, dtype=float), np.asarray(nu0, dtype=float)

    def log_b(n, ld):  # log of the normaliser B(W, nu), with log|W| = -ld
        lmg = d * (d - 1) / 4.0 * np.log(np.pi) + gammaln(
            0.5 * (n[..., None] - np.arange(d))
        ).sum(axis=-1)
        return 0.5 * n * ld - 0.5 * n * d * _LOG2 - lmg

    a = np.linalg.solve(chol, chol0)  # tr(B0 B^{-1}) = |L^{-1} L0|_F^2
    trace = np.einsum("...ij,...ij->...", a, a)
    return (
        log_b(nu, _log_det(chol))
        - log_b(nu0, _log_det(chol0))
        + 0.5 * (nu - nu0) * _wishart_e_log_det(nu, chol)
        - 0.5 * nu * d
        + 0.5 * nu * trace
    )


def _gamma(nu, scale):
    """The precision's ``Gamma(nu / 2, rate = scale / 2)`` (a one-dimensional
    Wishart)."""
    return Gamma(
        np.asarray(nu, dtype=float) / 2.0, np.asarray(scale, dtype=float) / 2.0
    )


class VariationalGaussianHMM(VariationalHMMMixin, GaussianHMM):
    """Hidden Markov model with Gaussian emissions, fitted by variational Bayes.

    hmmlearn-compatible (``hmmlearn.vhmm.VariationalGaussianHMM``: the same
    parameters, defaults and attributes). ``fit`` keeps Dirichlet posteriors
    over the start distribution and the rows of the transition matrix, and a
    Normal-Wishart posterior over every state's mean and precision; states
    the data do not need keep (nearly) their prior. ``startprob_``,
    ``transmat_``, ``means_`` and ``covars_`` are the posterior means (the
    covariance the inverse of the expected precision, ``scale / dof``), and
    :meth:`score`, :meth:`predict`, :meth:`decode`, :meth:`predict_proba` and
    :meth:`sample` read them, as hmmlearn's do.

    Parameters
    ----------
    n_components : int, default=1
        Number of states.
    covariance_type : {'full', 'tied', 'diag', 'spherical'}, default='full'
        A full precision per state (Wishart), one shared by all states, a
        diagonal one (a Gamma per coordinate) or one variance per state (a
        Gamma).
    startprob_prior, transmat_prior : float or array-like, default=None
        Dirichlet concentrations of the start distribution and of every row
        of the transition matrix; None is ``1 / n_components``.
    means_prior : array-like of shape (n_components, n_features), default=None
        ``m_0``, the prior mean of every state's mean; None is the data's mean.
    beta_prior : float or array-like of shape (n_components,), default=None
        ``beta_0 > 0``: the prior precision of the means relative to the
        state's precision; None is 1.
    dof_prior : float or array-like, default=None
        ``nu_0``, the degrees of freedom of the precision's prior (per state,
        one number for 'tied'); None is ``n_features``. It must exceed
        ``n_features - 1`` for 'full' and 'tied', and 0 otherwise.
    scale_prior : array-like, default=None
        ``B_0``, the prior's inverse scale, in the covariance type's shape:
        ``(n_components, n_features, n_features)`` for 'full',
        ``(n_features, n_features)`` for 'tied', ``(n_components,
        n_features)`` for 'diag', ``(n_components,)`` for 'spherical'; None
        is ``1e-3`` times the identity.
    algorithm : {'viterbi', 'map'}, default='viterbi'
    random_state : int, RandomState instance or None, default=None
        The generator of hmmlearn's start (its draws, then its k-means).
    n_iter : int, default=100
    tol : float, default=1e-6
    verbose : bool, default=False
    params, init_params : str, default='stmc'
        The letters of the posteriors updated (``params``) and started
        (``init_params``): 's', 't', 'm' (``means_*`` and ``beta_*``) and
        'c' (``dof_*`` and ``scale_*``).
    implementation : {'log', 'scaling'}, default='log'
        Accepted for hmmlearn's calls; both are bayeskit's one chain kernel.
    total_samples : float, default=1e6
        For :meth:`partial_fit` only: the (weighted) number of steps of all
        the sequences, by which each mini-batch's statistics are scaled (as
        :class:`~bayeskit.BayesianGaussianMixture`'s rows).
    learning_offset : float, default=10.0
        For :meth:`partial_fit`: ``tau_0`` of the step size ``(tau_0 +
        t)^(-kappa)``, at least 1.
    learning_decay : float, default=0.7
        For :meth:`partial_fit`: ``kappa`` in (0.5, 1] (the step sizes then
        satisfy the Robbins-Monro conditions).

    Attributes
    ----------
    startprob_prior_, startprob_posterior_ : ndarray of shape (n_components,)
    transmat_prior_, transmat_posterior_ : ndarray of shape \
(n_components, n_components)
    means_prior_, means_posterior_ : ndarray of shape (n_components, n_features)
    beta_prior_, beta_posterior_ : ndarray of shape (n_components,)
    dof_prior_, dof_posterior_ : ndarray of shape (n_components,) or float
    scale_prior_, scale_posterior_ : ndarray
        In the covariance type's shape (see ``scale_prior``).
    startprob_, transmat_, means_, covars_ : ndarray
        The posterior means; ``covars_`` as full matrices, as hmmlearn's.
    monitor_ : ConvergenceMonitor
    lower_bound_ : float
    lower_bounds_ : list of float
        The evidence lower bound of every iteration; it never decreases.
    converged_ : bool
    n_iter_ : int
    n_batch_iter_ : int
        The steps :meth:`partial_fit` took since the last :meth:`fit` (its
        ``t``).
    n_features_in_ : int

    See Also
    --------
    GaussianHMM : the same model fitted by MAP-EM (Baum-Welch).
    VariationalCategoricalHMM : symbols.

    Notes
    -----
    The model (Beal 2003, chapter 3; McGrory and Titterington 2009) is

    .. math::

        \\Lambda_k \\sim \\mathcal W(B_0^{-1}, \\nu_0), \\quad
        \\mu_k \\mid \\Lambda_k \\sim \\mathcal N(m_0, (\\beta_0
        \\Lambda_k)^{-1}), \\quad x_t \\mid z_t = k \\sim
        \\mathcal N(\\mu_k, \\Lambda_k^{-1}),

    with the chain's Dirichlet priors as in :class:`VariationalCategoricalHMM`.
    The E-step's messages are (Bishop 2006, eq. 10.64)

    .. math::

        E[\\log \\mathcal N(x_t \\mid \\mu_k, \\Lambda_k)] = \\tfrac12
        E[\\log|\\Lambda_k|] - \\tfrac d2 \\log 2\\pi - \\tfrac{d}{2\\beta_k}
        - \\tfrac{\\nu_k}{2} (x_t - m_k)^T B_k^{-1} (x_t - m_k),

    and the bound subtracts the KL divergences of the Normal-Wisharts from
    their priors. For 'diag' the precision of every coordinate has its own
    ``Gamma(nu_k / 2, s_kj / 2)`` posterior (a one-dimensional Wishart), for
    'spherical' the one precision of the state has ``Gamma(nu_k / 2, s_k /
    2)``; with one feature both are the Wishart.

    **Where bayeskit differs from hmmlearn 0.3.3** (whose variational models
    are marked provisional):

    - the bound includes ``-n_steps d / 2 log(2 pi)``, which hmmlearn drops:
      bayeskit's ``lower_bound_`` and ``monitor_.history`` are the evidence
      lower bound, hmmlearn's are that much higher;
    - 'diag' and 'spherical' with more than one feature: hmmlearn updates the
      hyperparameters of Gammas (the diagonal, one number) but reads them, in
      the E-step and in the bound, as Wisharts with a diagonal scale
      (``sum_i psi((nu - i) / 2)`` in ``E[log|Lambda|]`` and the Wishart's
      KL divergence), which is no distribution's update: its bound is not the
      ELBO of any posterior. bayeskit reads them as the Gammas they are
      (``d psi(nu / 2)``, the Gammas' KL divergences). For 'spherical' every
      coordinate of every step is an observation of the one precision, so
      ``dof_posterior_ = dof_prior_ + d n_k`` and ``scale_posterior_`` adds
      the squared deviations of all coordinates (hmmlearn adds ``n_k`` and
      their mean over the coordinates, as if each step were one observation).

    With one feature, and for 'full' and 'tied', the posteriors equal
    hmmlearn's from the same start, and the bounds equal hmmlearn's minus the
    constant above.

    References
    ----------
    .. [1] M. J. Beal, *Variational Algorithms for Approximate Bayesian
       Inference*, PhD thesis, University College London, 2003, chapter 3.
    .. [2] C. A. McGrory and D. M. Titterington, "Variational Bayesian
       analysis for hidden Markov models", *Australian & New Zealand Journal
       of Statistics* 51(2), 2009, pp. 227-244.
    .. [3] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
       2006, section 10.2 and appendix B.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.hmm import VariationalGaussianHMM
    >>> rng = np.random.RandomState(0)
    >>> X = np.concatenate([rng.normal(0, 1, (50, 1)), rng.normal(8, 1, (50, 1))])
    >>> model = VariationalGaussianHMM(2, random_state=0).fit(X)
    >>> np.sort(model.means_.ravel()).round()
    array([0., 8.])
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "covariance_type": [StrOptions({"spherical", "diag", "full", "tied"})],
        "startprob_prior": _POSITIVE,
        "transmat_prior": _POSITIVE,
        "means_prior": ["array-like", None],
        "beta_prior": _POSITIVE,
        "dof_prior": ["array-like", Real, None],
        "scale_prior": ["array-like", Real, None],
        "algorithm": [StrOptions({"viterbi", "map"})],
        "random_state": ["random_state"],
        "n_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "params": [str],
        "init_params": [str],
        "implementation": [StrOptions({"log", "scaling"})],
        **SVI_CONSTRAINTS,
    }
    _vb_groups = {
        **VariationalHMMMixin._vb_groups,
        "m": ("means_prior_", "means_posterior_", "beta_prior_", "beta_posterior_"),
        "c": ("dof_prior_", "dof_posterior_", "scale_prior_", "scale_posterior_"),
    }
    min_covar = 1e-3  # hmmlearn's start: added to the data's covariance
    n_init = 1
    n_jobs = None

    def __init__(
        self,
        n_components=1,
        covariance_type="full",
        startprob_prior=None,
        transmat_prior=None,
        means_prior=None,
        beta_prior=None,
        dof_prior=None,
        scale_prior=None,
        algorithm="viterbi",
        random_state=None,
        n_iter=100,
        tol=1e-6,
        verbose=False,
        params="stmc",
        init_params="stmc",
        implementation="log",
        total_samples=1e6,
        learning_offset=10.0,
        learning_decay=0.7,
    ):
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.startprob_prior = startprob_prior
        self.transmat_prior = transmat_prior
        self.means_prior = means_prior
        self.beta_prior = beta_prior
        self.dof_prior = dof_prior
        self.scale_prior = scale_prior
        self.algorithm = algorithm
        self.random_state = random_state
        self.n_iter = n_iter
        self.tol = tol
        self.verbose = verbose
        self.params = params
        self.init_params = init_params
        self.implementation = implementation
        self.total_samples = total_samples
        self.learning_offset = learning_offset
        self.learning_decay = learning_decay

    def _make_components(self):
        structure = self._structure()
        emission = Gaussian(structure, self.n_features, singular_jitter=self.min_covar)
        return Triple(self._chain(), emission, LatentPrior(ChainPrior(), None))

    def _current_params(self):
        self._structure()  # a bad covariance_type is named first, as hmmlearn
        return super()._current_params()

    def _messages(self, emission, X, params):
        # Means set by hand far beyond float64's range: a distance that
        # overflows is infinite, and one that is not a number is refused
        # naming the parameters.
        with np.errstate(over="ignore", invalid="ignore"):
            log_lik, codes = super()._messages(emission, X, params)
        if np.isnan(log_lik).any():
            raise ValueError(
                "means_ and covars_ give steps of X log-densities that are not "
                "numbers (values beyond float64's range): set finite means_ of "
                "the data's scale"
            )
        return log_lik, codes

    def _takes_missing_coordinates(self):
        return False  # whole missing steps (gaps) only

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags

    # -- the family's half of the variational loop ---------------------------------
    def _scale_shape(self, d):
        k = self.n_components
        return {
            "full": (k, d, d),
            "tied": (d, d),
            "diag": (k, d),
            "spherical": (k,),
        }[self.covariance_type]

    def _vb_emission_start(self, X, n_steps, row_weight=None):
        """hmmlearn's start: k-means (``random_state`` as given, ``n_init=10``)
        for the means, its cluster sizes for ``beta_posterior_`` and
        ``dof_posterior_``, and the data's covariance plus ``1e-3`` on its
        diagonal, times those sizes, for ``scale_posterior_``."""
        init_m, init_c = self._vb_needs_init("m"), self._vb_needs_init("c")
        if not (init_m or init_c):
            return
        k, ctype = self.n_components, self.covariance_type
        observed = self._vb_observed(X)
        if observed is not None:
            X = X[observed]
            row_weight = None if row_weight is None else row_weight[observed]
        if len(X) < max(k, 2):
            raise ValueError(
                f"hmmlearn's start reads the data's covariance and k-means with "
                f"n_components={k}: it needs n_samples >= {max(k, 2)} observed "
                f"steps, got n_samples = {len(X)}"
            )
        d = X.shape[1]
        km = KMeans(n_clusters=k, random_state=self.random_state, n_init=10)
        km.fit(X, sample_weight=row_weight)
        counts = np.bincount(km.predict(X), row_weight, minlength=k).astype(float)
        least = d - 1 if ctype in ("full", "tied") else 0
        if init_c and (counts.sum() if ctype == "tied" else counts).min() <= least:
            raise ValueError(
                f"hmmlearn's start gives dof_posterior_ the k-means cluster sizes "
                f"{counts.astype(int).tolist()}, which must exceed {least} "
                f"(n_features - 1) for a proper Wishart: give more steps or fewer "
                "n_components, or set dof_posterior_ and scale_posterior_ and "
                "leave 'c' out of init_params"
            )
        if init_m:
            mean = X.mean(axis=0)
            if self.means_prior is None:
                self.means_prior_ = np.tile(mean, (k, 1))
            else:
                self.means_prior_ = self._prior_array("means_prior", (k, d))
            self.means_posterior_ = km.cluster_centers_.copy()
            self.beta_prior_ = (
                np.ones(k)
                if self.beta_prior is None
                else self._prior_array("beta_prior", (k,))
            )
            self.beta_posterior_ = counts.copy()
        if init_c:
            tied = ctype == "tied"
            if self.dof_prior is None:
                self.dof_prior_ = float(d) if tied else np.full(k, float(d))
            else:
                self.dof_prior_ = self._prior_array("dof_prior", () if tied else (k,))
            self.dof_posterior_ = counts.sum() if tied else counts.copy()
            cov = np.atleast_2d(np.cov(X.T, aweights=row_weight)) + 1e-3 * np.eye(d)
            shape = self._scale_shape(d)
            if self.scale_prior is None:
                unit = {
                    "full": np.eye(d),
                    "tied": np.eye(d),
                    "diag": np.ones(d),
                    "spherical": 1.0,
                }[ctype]
                self.scale_prior_ = np.broadcast_to(1e-3 * unit, shape).copy()
            else:
                self.scale_prior_ = self._prior_array("scale_prior", shape)
            dof = np.asarray(self.dof_posterior_)
            self.scale_posterior_ = {
                "full": lambda: cov[None] * dof[:, None, None],
                "tied": lambda: cov * dof,
                "diag": lambda: np.diag(cov)[None] * dof[:, None],
                "spherical": lambda: cov.mean() * dof,
            }[ctype]()

    def _prior_array(self, name, shape):
        """The hyperparameter ``name`` broadcast to ``shape`` (a copy);
        ValueError naming it when it does not broadcast."""
        value = np.asarray(getattr(self, name), dtype=float)
        try:
            return np.broadcast_to(value, shape).copy()
        except ValueError:
            raise ValueError(
                f"{name} must broadcast to shape {shape}, got shape {value.shape}"
            ) from None

    def _vb_emission_check(self):
        """hmmlearn's shapes, and proper priors and posteriors: ``beta > 0``,
        ``dof > n_features - 1`` ('full', 'tied') or ``> 0``, and positive
        (definite) scales; ValueError naming the attribute."""
        k, ctype = self.n_components, self.covariance_type
        means = np.asarray(self.__dict__.get("means_posterior_"), dtype=float)
        d = self.n_features_in_
        if means.ndim == 2 and means.shape[1] != d:
            raise ValueError(
                f"means_posterior_ must have shape ({k}, {d}), got {means.shape}"
            )
        for name in ("means_prior_", "means_posterior_"):
            self._vb_array(name, (k, d), signed=True)
        for name in ("beta_prior_", "beta_posterior_"):
            self._vb_array(name, (k,))
        dof_shape = () if ctype == "tied" else (k,)
        least = d - 1.0 if ctype in ("full", "tied") else 0.0
        for name in ("dof_prior_", "dof_posterior_"):
            dof = self._vb_array(name, dof_shape, positive=False)
            if not (dof > least).all():
                raise ValueError(
                    f"{name} must exceed {least:g} (n_features - 1 for a Wishart, "
                    f"0 for a Gamma) for covariance_type={ctype!r}, got "
                    f"{dof.tolist()}"
                )
        for name in ("scale_prior_", "scale_posterior_"):
            scale = self._vb_array(name, self._scale_shape(d), positive=False)
            if ctype in ("full", "tied"):
                _cholesky(scale, name)
            elif not (scale > 0).all():
                raise ValueError(f"{name} must be positive")

    # the precision's posterior: E[log|Lambda_k|], the whitened deviations
    def _precision(self):
        """``(E[log|Lambda_k|] (K,), whiten)``: ``whiten(Y, m)`` maps rows ``Y``
        of shape ``(n, d)`` (or ``(K, n, d)``, rows of each state) and centres
        ``m`` of shape ``(K, d)`` to ``((y - m_k)^T B_k^{-1} (y - m_k))`` of
        shape ``(n, K)``, one state's deviations at a time for 'full' and
        'tied'."""
        ctype, d = self.covariance_type, self.n_features_in_
        nu, scale = self.dof_posterior_, self.scale_posterior_
        if ctype in ("full", "tied"):
            chol = _cholesky(scale, "scale_posterior_")
            e_log_det = _wishart_e_log_det(nu, chol)
            if ctype == "tied":
                e_log_det = np.full(self.n_components, e_log_det)
                chol = np.broadcast_to(chol, (self.n_components, d, d))

            # Factors P_k = L_k^{-T} with P_k P_k^T = B_k^{-1} (the precision
            # Cholesky of scikit-learn's mixtures), in one batched solve.
            factors = np.linalg.solve(chol, np.eye(d)).transpose(0, 2, 1)

            def whiten(rows, m):
                out = np.empty((rows.shape[-2], len(m)))
                for k in range(len(m)):
                    z = ((rows[k] if rows.ndim == 3 else rows) - m[k]) @ factors[k]
                    out[:, k] = np.einsum("ij,ij->i", z, z)
                return out

            return e_log_det, whiten

        def deviations(rows, m):
            return (rows if rows.ndim == 3 else rows[None, :, :]) - m[:, None, :]

        q = _gamma(nu[:, None] if ctype == "diag" else nu, scale)
        e_log = q.expected_log()  # psi(nu / 2) - log(s / 2)
        if ctype == "diag":
            return e_log.sum(axis=1), lambda rows, m: np.einsum(
                "knd,kd->nk", deviations(rows, m) ** 2, 1.0 / scale
            )
        return (
            d * e_log,
            lambda rows, m: (deviations(rows, m) ** 2).sum(axis=2).T / scale,
        )

    def _vb_expected(self):
        """The expected log densities of observed rows under every state (Bishop
        2006, eq. 10.64), as a function of the rows."""
        d = self.n_features_in_
        e_log_det, whiten = self._precision()
        nu = np.broadcast_to(self.dof_posterior_, (self.n_components,))
        m, beta = self.means_posterior_, self.beta_posterior_

        def expected(rows):
            maha = whiten(rows, m)
            return 0.5 * (e_log_det - d * np.log(2.0 * np.pi) - d / beta - nu * maha)

        return expected

    def _vb_emission_stats(self, X, resp):
        """``(n_k, mean_k, centred scatter_k)``; the scatter is
        accumulated about the data's mean (no cancellation far from the
        origin)."""
        n = resp.sum(axis=0)
        center = X.mean(axis=0) if len(X) else np.zeros(X.shape[1])
        Y = X - center
        sums = resp.T @ Y
        with np.errstate(invalid="ignore", divide="ignore"):
            ybar = np.where(n[:, None] > 0, sums / n[:, None], 0.0)
        if self.covariance_type in ("full", "tied"):
            scatter = (
                np.stack([(Y * resp[:, [k]]).T @ Y for k in range(self.n_components)])
                - n[:, None, None] * ybar[:, :, None] * ybar[:, None, :]
            )
        else:
            scatter = resp.T @ Y**2 - n[:, None] * ybar**2
        return NormalStats(n, ybar + center, scatter)

    def _vb_emission_matches(self, stats):
        return isinstance(stats, NormalStats) and stats.mean.shape == (
            self.n_components,
            self.n_features_in_,
        )

    def _vb_emission_blend(self, old, rho):
        _blend_gaussian(self, old, rho)

    def _vb_emission_m_step(self, stats):
        """The Normal-Wishart (Normal-Gamma) posterior of every state (Bishop
        2006, eqs. 10.60-10.63; Murphy 2012, eq. 4.214), hmmlearn's letters."""
        n, xbar, scatter = stats.weight, stats.mean, stats.scatter
        ctype, d = self.covariance_type, self.n_features_in_
        beta0, m0 = self.beta_prior_, self.means_prior_
        full = ctype in ("full", "tied")
        if "m" in self.params:
            self.beta_posterior_ = beta0 + n
            self.means_posterior_ = (
                beta0[:, None] * m0 + n[:, None] * xbar
            ) / self.beta_posterior_[:, None]
            dev = xbar - m0
            w = beta0 * n / self.beta_posterior_
            if full:
                extra = w[:, None, None] * dev[:, :, None] * dev[:, None, :]
            else:
                extra = w[:, None] * dev**2
        else:  # the means' posterior kept: hmmlearn's update with it
            beta, m = self.beta_posterior_, self.means_posterior_

            def outer(c, v):
                if full:
                    return c[:, None, None] * v[:, :, None] * v[:, None, :]
                return c[:, None] * v**2

            extra = outer(n, xbar) + outer(beta0, m0) - outer(beta, m)
        if "c" not in self.params:
            return
        scatter = scatter + extra
        if ctype == "full":
            self.dof_posterior_ = self.dof_prior_ + n
        elif ctype == "tied":
            self.dof_posterior_ = float(self.dof_prior_ + n.sum())
            scatter = scatter.sum(axis=0)
        elif ctype == "diag":
            self.dof_posterior_ = self.dof_prior_ + n
        else:
            self.dof_posterior_ = self.dof_prior_ + d * n
            scatter = scatter.sum(axis=1)
        self.scale_posterior_ = self.scale_prior_ + scatter

    def _vb_emission_kl(self):
        """``sum_k KL(q(mu_k, Lambda_k) || p(mu_k, Lambda_k))``: the means'
        expected Gaussian divergence given the precision, plus the
        precisions' (Wishart or Gamma) divergences."""
        ctype, d = self.covariance_type, self.n_features_in_
        beta, beta0 = self.beta_posterior_, self.beta_prior_
        nu = np.broadcast_to(self.dof_posterior_, (self.n_components,))
        _, whiten = self._precision()
        # (m_k - m0_k) B_k^{-1} (m_k - m0_k)
        maha = whiten(self.means_posterior_[:, None, :], self.means_prior_)[0]
        normal = 0.5 * (
            d * np.log(beta / beta0) + d * beta0 / beta - d + beta0 * nu * maha
        )
        nu0, s0, s = self.dof_prior_, self.scale_prior_, self.scale_posterior_
        if ctype in ("full", "tied"):
            chol, chol0 = (
                _cholesky(s, "scale_posterior_"),
                _cholesky(s0, "scale_prior_"),
            )
            precision = _wishart_kl(self.dof_posterior_, chol, nu0, chol0)
        elif ctype == "diag":
            precision = _gamma(nu[:, None], s).kl(_gamma(np.asarray(nu0)[:, None], s0))
        else:
            precision = _gamma(nu, s).kl(_gamma(nu0, s0))
        return float(normal.sum() + np.sum(precision))

    def _vb_emission_publish(self):
        ctype = self.covariance_type
        self.means_ = np.array(self.means_posterior_, dtype=float)
        nu = np.asarray(self.dof_posterior_, dtype=float)
        s = self.scale_posterior_
        self.covars_ = {
            "full": lambda: s / nu[:, None, None],
            "tied": lambda: s / nu,
            "diag": lambda: s / nu[:, None],
            "spherical": lambda: s / nu,
        }[ctype]()
