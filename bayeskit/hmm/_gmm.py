"""GMMHMM: a chain of states, each emitting from a mixture of Gaussians."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state

from .._base.classifier import Triple
from .._base.em import LatentPrior
from .._validation import ElementwiseInterval, Interval, StrOptions
from ..emissions import DIAG, FULL, Gaussian
from ..emissions.mixture import GaussianMixtureEmission, MixturePrior
from ._base import BaseHMM

__all__ = ["GMMHMM"]


class GMMHMM(BaseHMM):
    """Hidden Markov model with a Gaussian mixture per state.

    hmmlearn's ``GMMHMM`` (the same parameters, order, defaults, priors and
    attributes) with the additions of :class:`CategoricalHMM`.

    Parameters
    ----------
    n_components : int, default=1
        Number of hidden states.
    n_mix : int, default=1
        Gaussian components per state.
    min_covar : float, default=1e-3
        Added to the diagonal of the data's covariance that starts ``covars_``
        (and of a singular full covariance in the densities).
    startprob_prior, transmat_prior : float or array-like, default=1.0
        Dirichlet concentrations, as :class:`CategoricalHMM`.
    weights_prior : float or array-like, default=1.0
        Dirichlet concentration of every state's weights.
    means_prior, means_weight : float or array-like, default=0.0
        ``mu0`` and ``lambda`` of every mean's prior ``N(mu0, Sigma / lambda)``.
    covars_prior, covars_weight : float or array-like, default=None
        hmmlearn's inverse gamma ('diag', 'spherical') or inverse Wishart
        ('full', 'tied') prior; None: hmmlearn's defaults
        (``broadcast``).
    covariance_type : {'spherical', 'diag', 'full', 'tied'}, default='diag'
        The components' covariances; 'tied': one full matrix per state.
    algorithm, random_state, n_iter, tol, verbose, implementation, n_init, n_jobs
        As :class:`CategoricalHMM`.
    params, init_params : str, default='stmcw'
        s, t as :class:`CategoricalHMM`; m: means, c: covariances, w: weights.

    Attributes
    ----------
    weights_, means_, covars_ : ndarray
        hmmlearn's shapes: ``(n_components, n_mix)``, ``(n_components, n_mix,
        n_features)``, and ``MixtureParams``'.
    startprob_, transmat_, monitor_, converged_, n_iter_, lower_bound_, stats_
        As :class:`CategoricalHMM`.

    See Also
    --------
    GaussianHMM

    Notes
    -----
    State :math:`k` emits :math:`\\sum_m w_{km} \\mathcal{N}(\\mu_{km},
    \\Sigma_{km})` (Juang et al. 1986); the M-step is hmmlearn's under its
    priors (``bayeskit.emissions.mixture``). ``fit`` starts as hmmlearn:
    k-means for the states, then within each; equal weights; the data's
    covariance plus ``min_covar`` ('spherical': the mean of its entries), draw
    for draw with the same ``random_state``.

    References
    ----------
    B.-H. Juang, S. E. Levinson and M. M. Sondhi, IEEE Trans. Information
    Theory 32(2), 307-309, 1986.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import GMMHMM
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(m, 1, (60, 1)) for m in (0, 20, 0, 20)])
    >>> hmm = GMMHMM(2, n_mix=2, random_state=0).fit(X)
    >>> np.sort(hmm.means_.mean(axis=(1, 2))).round(-1)
    array([ 0., 20.])
    """

    _parameter_constraints: dict = {
        **BaseHMM._parameter_constraints,
        "n_mix": [Interval(Integral, 1, None, closed="left")],
        "min_covar": [Interval(Real, 0, None, closed="left")],
        "weights_prior": [ElementwiseInterval(Real, 0, None, closed="neither")],
        "means_prior": ["array-like", Real],
        "means_weight": [ElementwiseInterval(Real, 0, None, closed="left")],
        "covars_prior": ["array-like", Real, None],
        "covars_weight": ["array-like", Real, None],
        "covariance_type": [StrOptions({"spherical", "diag", "full", "tied"})],
    }
    _param_names = dict(
        s="startprob_", t="transmat_", m="means_", c="covars_", w="weights_"
    )
    _emission_fields = {"weights_": "weights", "means_": "means", "covars_": "covars"}
    _features_from = "means_"
    _gaussian = True

    def __init__(
        self, n_components=1, n_mix=1, min_covar=1e-3, startprob_prior=1.0,
        transmat_prior=1.0, weights_prior=1.0, means_prior=0.0, means_weight=0.0,
        covars_prior=None, covars_weight=None, algorithm="viterbi",
        covariance_type="diag", random_state=None, n_iter=10, tol=1e-2,
        verbose=False, params="stmcw", init_params="stmcw", implementation="log",
        *, n_init=1, n_jobs=None,
    ):  # fmt: skip
        self.n_components, self.n_mix, self.min_covar = n_components, n_mix, min_covar
        self.startprob_prior, self.transmat_prior = startprob_prior, transmat_prior
        self.weights_prior, self.n_init = weights_prior, n_init
        self.n_jobs = n_jobs
        self.means_prior, self.means_weight = means_prior, means_weight
        self.covars_prior, self.covars_weight = covars_prior, covars_weight
        self.algorithm, self.covariance_type = algorithm, covariance_type
        self.random_state, self.n_iter, self.tol = random_state, n_iter, tol
        self.verbose, self.params, self.init_params = verbose, params, init_params
        self.implementation = implementation

    def _make_components(self):
        k, m, d = self.n_components, self.n_mix, self.n_features
        prior = MixturePrior.broadcast(
            (k, m, d), self.covariance_type, self.weights_prior, self.means_prior,
            self.means_weight, self.covars_prior, self.covars_weight,
        )  # fmt: skip
        updates = {f"update_{n}": c in self.params for n, c in _LETTERS.items()}
        emission = _GMMHMMEmission(m, self.covariance_type, d, **updates)
        emission.min_covar = self.min_covar
        return Triple(self._chain(), emission, LatentPrior(self._chain_prior(), prior))

    def _emission_params(self):
        emission, (k, m) = self._components()[1], (self.n_components, self.n_mix)
        weights = self._checked("weights_", (k, m), rows_sum_to_one=True)
        means = self._checked("means_", (k, m, self.n_features), signed=True)
        covars = self._checked("covars_", emission.covars_shape(k), signed=True)
        # Symmetric matrices, or positive variances, as hmmlearn checks
        # covars_ set by hand. (A matrix singular up to rounding, which a fit
        # on degenerate data can give, is left to the factorisation's jitter.)
        if self.covariance_type in ("full", "tied"):
            d = self.n_features
            matrices = covars.reshape(-1, d, d)
            if not np.allclose(matrices, np.swapaxes(matrices, -1, -2)):
                raise ValueError("covars_ must be symmetric")
        else:
            DIAG.check_values(covars, "covars_")
        return emission.params(weights, means, covars)

    def _sampler(self, params):
        weights, means = np.asarray(self.weights_), np.asarray(self.means_)
        covars, d = np.asarray(self.covars_), self.n_features
        kind = self.covariance_type

        def draw(state, rng):
            if state is None:
                return np.zeros((0, d))
            # hmmlearn's draw: the component, then the component's Gaussian
            # ('tied': the state's one matrix).
            i = rng.choice(self.n_mix, p=weights[state])
            if kind == "tied":
                cov = covars[state]
            elif kind == "full":
                cov = covars[state, i]
            elif kind == "diag":
                cov = np.diag(covars[state, i])
            else:
                cov = np.eye(d) * covars[state, i]
            return rng.multivariate_normal(means[state, i], cov)

        return draw

    def _emission_start(self, X, row_weight, random_state, emission):
        # hmmlearn hands its random_state (an int seed too) to every k-means.
        return emission.init_params(
            X, row_weight[:, None], self.n_components, random_state
        )


_LETTERS = {"weights": "w", "means": "m", "covars": "c"}


class _GMMHMMEmission(GaussianMixtureEmission):
    """The mixture family, started as hmmlearn's GMMHMM (k-means)."""

    def init_params(self, X, weights, n_states, random_state):
        """hmmlearn's start: ``KMeans(n_components, random_state=random_state,
        n_init=10)`` over all the steps, then ``KMeans(n_mix, ...)`` with the
        same ``random_state`` within every cluster, in the clusters' order
        (``random_state`` as given to the model: an int seeds every k-means
        afresh, a ``RandomState`` goes on drawing); equal weights; the data's
        covariance plus ``min_covar`` on its diagonal for every component.

        A cluster with fewer steps than ``n_mix`` takes ``n_mix`` means drawn
        from the normal distribution around the mean of the clusters' centres
        with the data's covariance, from ``check_random_state(random_state)``
        (hmmlearn draws these from numpy's global generator instead).
        """
        w, (m, d) = weights[:, 0], (self.n_mix, self.n_features)
        weighted = not np.all(w == 1.0)
        # The data's covariance (hmmlearn's np.cov: divided by n - 1).
        if weighted or len(X) < 2:  # (np.cov of one step is NaN)
            scatter = Gaussian(FULL).stats(X, weights).scatter[0]
            cv = scatter / max(w.sum() - 1.0, 1.0)
        else:
            cv = np.atleast_2d(np.cov(X.T))
        cv = cv + self.min_covar * np.eye(d)
        if np.count_nonzero(w) < n_states:
            raise ValueError(
                f"n_components={n_states} states need at least {n_states} steps "
                f"of positive weight to start by k-means, got {np.count_nonzero(w)}"
            )
        sw = w if weighted else None
        km = KMeans(n_clusters=n_states, n_init=10, random_state=random_state)
        labels = km.fit(X, sample_weight=sw).labels_
        centre = km.cluster_centers_.mean(axis=0)
        means = []
        for state in range(n_states):
            rows = labels == state
            if rows.sum() >= m:
                inner = KMeans(n_clusters=m, n_init=10, random_state=random_state)
                inner.fit(X[rows], sample_weight=None if sw is None else sw[rows])
                means.append(inner.cluster_centers_)
            else:  # too few points for n_mix centres: around the data's centre
                rng = check_random_state(random_state)
                means.append(rng.multivariate_normal(centre, cv, size=m))
        covars = {
            "tied": np.broadcast_to(cv, (n_states, d, d)),
            "full": np.broadcast_to(cv, (n_states, m, d, d)),
            "diag": np.broadcast_to(np.diag(cv), (n_states, m, d)),
            "spherical": np.full((n_states, m), cv.mean()),
        }[self.covariance_type]
        weights0 = np.full((n_states, m), 1.0 / m)
        return self.params(weights0, np.stack(means), np.array(covars))
