"""VariationalCategoricalHMM: hmmlearn's variational HMM of symbols."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from .._base.classifier import Triple
from .._base.em import LatentPrior
from .._validation import ElementwiseInterval, Interval, StrOptions
from ..emissions import Categorical
from ..graph import ChainPrior
from ..priors import Dirichlet
from ._categorical import CategoricalHMM
from ._variational import VariationalHMMMixin
from ._vonline import SVI_CONSTRAINTS

__all__ = ["VariationalCategoricalHMM"]

_POSITIVE = [ElementwiseInterval(Real, 0, None, closed="neither"), None]


class VariationalCategoricalHMM(VariationalHMMMixin, CategoricalHMM):
    """Hidden Markov model of symbols, fitted by variational Bayes.

    hmmlearn-compatible (``hmmlearn.vhmm.VariationalCategoricalHMM``: the same
    parameters, defaults and attributes). Instead of point estimates, ``fit``
    keeps Dirichlet posteriors over the start distribution, every row of the
    transition matrix and every state's symbol distribution; states the data
    do not need keep (nearly) their prior. ``startprob_``, ``transmat_`` and
    ``emissionprob_`` are the posterior means, and :meth:`score`,
    :meth:`predict`, :meth:`decode`, :meth:`predict_proba` and
    :meth:`sample` read them, as hmmlearn's do.

    Parameters
    ----------
    n_components : int, default=1
        Number of states.
    startprob_prior : float or array-like of shape (n_components,), default=None
        Dirichlet concentration of the start distribution; None is
        ``1 / n_components``.
    transmat_prior : float or array-like of shape (n_components, n_components), \
default=None
        Dirichlet concentration of every row of the transition matrix; None
        is ``1 / n_components``.
    emissionprob_prior : float or array-like of shape (n_components, n_features), \
default=None
        Dirichlet concentration of every state's symbol distribution; None
        is ``1 / n_features``.
    n_features : int, default=None
        The number of symbols; None reads it from the data (the largest
        symbol plus one).
    algorithm : {'viterbi', 'map'}, default='viterbi'
        The decoder of :meth:`decode` and :meth:`predict`.
    random_state : int, RandomState instance or None, default=None
        The generator of hmmlearn's start (its draws, in its order).
    n_iter : int, default=100
        Maximum number of iterations.
    tol : float, default=1e-6
        The fit stops when the lower bound gains less than this.
    verbose : bool, default=False
        Print every iteration's bound (hmmlearn's monitor).
    params, init_params : str, default='ste'
        The letters of the posteriors updated by the M-step (``params``) and
        started by ``fit`` (``init_params``): 's' start, 't' transitions,
        'e' emissions.
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
        Dirichlet concentrations of the start distribution.
    transmat_prior_, transmat_posterior_ : ndarray of shape \
(n_components, n_components)
        Dirichlet concentrations of the rows of the transition matrix.
    emissionprob_prior_, emissionprob_posterior_ : ndarray of shape \
(n_components, n_features)
        Dirichlet concentrations of the states' symbol distributions.
    startprob_, transmat_, emissionprob_ : ndarray
        The posterior means.
    monitor_ : ConvergenceMonitor
        The lower bound of every iteration (``history``).
    lower_bound_ : float
        The evidence lower bound of the last iteration (see Notes).
    lower_bounds_ : list of float
        The bound of every iteration; it never decreases.
    converged_ : bool
    n_iter_ : int
    n_batch_iter_ : int
        The steps :meth:`partial_fit` took since the last :meth:`fit` (its
        ``t``).
    n_features_in_ : int

    See Also
    --------
    CategoricalHMM : the same model fitted by MAP-EM (Baum-Welch).
    VariationalGaussianHMM : Gaussian emissions.

    Notes
    -----
    With ``q(Z)`` the optimal path distribution under the expected log
    parameters, the bound is (MacKay 1997; Beal 2003, eq. 3.57)

    .. math::

        \\mathcal L = \\sum_{\\text{sequences}} \\log \\sum_{z}
            e^{E[\\log \\pi_{z_1}]} \\prod_t e^{E[\\log A_{z_{t-1} z_t}]}
            e^{E[\\log B_{z_t x_t}]}
            - \\mathrm{KL}(q(\\pi) \\| p(\\pi)) - \\sum_i \\mathrm{KL}(q(A_i)
            \\| p(A_i)) - \\sum_k \\mathrm{KL}(q(B_k) \\| p(B_k)),

    with ``E[log p_a] = psi(alpha_a) - psi(sum_b alpha_b)`` under a
    Dirichlet. As hmmlearn's, the bound reported at an iteration is that of
    the posterior the iteration started from; it equals hmmlearn's (the same
    start gives the same posteriors and bounds, to rounding). ``score`` is
    the log-likelihood under the posterior means, as hmmlearn's.

    A gap (a missing symbol) has message 1 and adds no counts.

    References
    ----------
    .. [1] D. J. C. MacKay, "Ensemble learning for hidden Markov models",
       technical report, Cavendish Laboratory, University of Cambridge, 1997.
    .. [2] M. J. Beal, *Variational Algorithms for Approximate Bayesian
       Inference*, PhD thesis, University College London, 2003, chapter 3.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.hmm import VariationalCategoricalHMM
    >>> X = np.array([[0, 1, 2] * 30]).T
    >>> model = VariationalCategoricalHMM(4, random_state=0).fit(X)
    >>> bool(model.lower_bounds_[-1] >= model.lower_bounds_[0])
    True
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "startprob_prior": _POSITIVE,
        "transmat_prior": _POSITIVE,
        "emissionprob_prior": _POSITIVE,
        "n_features": [Interval(Integral, 1, None, closed="left"), None],
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
        "e": ("emissionprob_prior_", "emissionprob_posterior_"),
    }
    n_init = 1
    n_jobs = None
    # hmmlearn's variational model keeps its random_state as given (its
    # CategoricalHMM replaces it by the start's generator).
    _keeps_generator = False

    def __init__(
        self,
        n_components=1,
        startprob_prior=None,
        transmat_prior=None,
        emissionprob_prior=None,
        n_features=None,
        algorithm="viterbi",
        random_state=None,
        n_iter=100,
        tol=1e-6,
        verbose=False,
        params="ste",
        init_params="ste",
        implementation="log",
        total_samples=1e6,
        learning_offset=10.0,
        learning_decay=0.7,
    ):
        self.n_components = n_components
        self.startprob_prior = startprob_prior
        self.transmat_prior = transmat_prior
        self.emissionprob_prior = emissionprob_prior
        self.n_features = n_features
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
        n_symbols = self.__dict__.get("n_features_") or self._alphabet_by_hand()
        return Triple(
            self._chain(),
            Categorical([n_symbols]),
            LatentPrior(ChainPrior(), Dirichlet(1.0)),
        )

    # -- the family's half of the variational loop ---------------------------------
    def _vb_emission_start(self, X, n_steps, row_weight=None):
        if not self._vb_needs_init("e"):
            return
        k, m = self.n_components, self.n_features_
        rng = check_random_state(self.random_state)  # hmmlearn draws anew
        prior = 1.0 / m if self.emissionprob_prior is None else self.emissionprob_prior
        self.emissionprob_prior_ = np.full((k, m), prior, dtype=float)
        alpha = np.broadcast_to(self.emissionprob_prior_, (k, m))
        if np.all(alpha == alpha[0, 0]):  # hmmlearn's draw: every row at once
            draws = rng.dirichlet(alpha[0], size=k)
        else:
            draws = np.array([rng.dirichlet(row) for row in alpha])
        self.emissionprob_posterior_ = draws * n_steps / k

    def _vb_emission_check(self):
        shape = (self.n_components, self.n_features_)
        for name in self._vb_groups["e"]:
            self._vb_array(name, shape)

    def _vb_observed(self, X):
        observed = X[:, 0] >= 0
        return None if observed.all() else observed

    def _vb_expected(self):
        expected = Dirichlet(self.emissionprob_posterior_).expected_log()
        return lambda rows: expected[:, rows[:, 0]].T

    def _vb_emission_stats(self, X, resp):
        codes = X[:, 0]
        counts = np.empty((self.n_components, self.n_features_))
        for k in range(self.n_components):
            counts[k] = np.bincount(codes, resp[:, k], minlength=self.n_features_)
        return counts

    def _vb_emission_matches(self, counts):
        return np.shape(counts) == (self.n_components, self.n_features_)

    def _vb_emission_blend(self, old, rho):
        if "e" in self.params:
            name = "emissionprob_posterior_"
            setattr(self, name, (1.0 - rho) * old[name] + rho * getattr(self, name))

    def _vb_emission_kl(self):
        q = Dirichlet(self.emissionprob_posterior_)
        return float(q.kl(Dirichlet(self.emissionprob_prior_)).sum())

    def _vb_emission_m_step(self, counts):
        if "e" in self.params:
            self.emissionprob_posterior_ = self.emissionprob_prior_ + counts

    def _vb_emission_publish(self):
        self.emissionprob_ = Dirichlet(self.emissionprob_posterior_).mean()
