"""PoissonHMM: a chain of states, each emitting independent Poisson counts."""

from __future__ import annotations

from numbers import Real

import numpy as np

from .._validation import Interval
from ..emissions.poisson import Poisson, PoissonParams
from ..priors.gamma import Gamma
from ._em import LatentPrior
from ._hmm_base import BaseHMM

__all__ = ["PoissonHMM"]


class PoissonHMM(BaseHMM):
    """Hidden Markov model with Poisson emissions (counts).

    hmmlearn-compatible (``PoissonHMM``: the same parameters, positional order,
    defaults and attributes), with bayeskit's additions of
    :class:`CategoricalHMM` (a list of sequences as input, ``sequence_weight``,
    ``n_init``, ``score_sequences``, ``summarize``/``from_stats``,
    ``partial_fit``).

    Parameters
    ----------
    n_components : int, default=1
        Number of hidden states.
    startprob_prior, transmat_prior : float or array-like, default=1.0
        Dirichlet concentrations, as :class:`CategoricalHMM`.
    lambdas_prior, lambdas_weight : float or array-like, default=0.0
        Shape ``alpha`` and rate ``beta`` of a Gamma prior on every rate
        (broadcast against ``lambdas_``); 0 and 0 is maximum likelihood.
    algorithm, random_state, n_iter, tol, verbose, implementation, n_init
        As :class:`CategoricalHMM`.
    params, init_params : str, default='stl'
        s: start, t: transitions, l: rates; as :class:`CategoricalHMM`.

    Attributes
    ----------
    lambdas_ : ndarray of shape (n_components, n_features)
        The rate of every feature in every state.
    startprob_, transmat_, monitor_, converged_, n_iter_, lower_bound_, stats_
        As :class:`CategoricalHMM`.
    n_features : int
        Number of count features (hmmlearn's name).

    See Also
    --------
    MultinomialHMM, CategoricalHMM

    Notes
    -----
    State :math:`k` emits :math:`x_{tj} \\sim \\mathrm{Poisson}(\\lambda_{kj})`,
    independently over the features. Baum-Welch's M-step is the Gamma
    posterior mean :math:`\\lambda_{kj} = (\\alpha + \\sum_t \\gamma_{tk}
    x_{tj}) / (\\beta + \\sum_t \\gamma_{tk})` (Gelman et al. 2013, section
    2.6), the mode under :math:`\\mathrm{Gamma}(\\alpha + 1, \\beta)`, whose log
    density the monitored objective adds. hmmlearn 0.3.3 writes the total
    weight of all states, :math:`\\sum_{t, k} \\gamma_{tk}`, where each state's
    own weight belongs: the two agree with the default (zero) prior, and with a
    prior bayeskit's is the update of the model. ``X`` must be counts
    (non-negative integers). ``fit`` starts the rates from a Gamma distribution
    with the counts' mean and variance, as hmmlearn.

    References
    ----------
    A. Gelman, J. B. Carlin, H. S. Stern, D. B. Dunson, A. Vehtari and D. B.
    Rubin, *Bayesian Data Analysis*, 3rd ed., CRC Press, 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import PoissonHMM
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.poisson(lam, (50, 1)) for lam in (1, 10, 1, 10)])
    >>> hmm = PoissonHMM(2, random_state=0, n_iter=50).fit(X)
    >>> np.sort(hmm.lambdas_.ravel()).round(0)
    array([ 1., 10.])
    """

    _parameter_constraints: dict = {
        **BaseHMM._parameter_constraints,
        "lambdas_prior": ["array-like", Interval(Real, 0, None, closed="left")],
        "lambdas_weight": ["array-like", Interval(Real, 0, None, closed="left")],
    }
    _param_names = {"s": "startprob_", "t": "transmat_", "l": "lambdas_"}
    _features_from = "lambdas_"

    def __init__(
        self, n_components=1, startprob_prior=1.0, transmat_prior=1.0,
        lambdas_prior=0.0, lambdas_weight=0.0, algorithm="viterbi",
        random_state=None, n_iter=10, tol=1e-2, verbose=False, params="stl",
        init_params="stl", implementation="log", *, n_init=1,
    ):  # fmt: skip
        self.n_components, self.n_init = n_components, n_init
        self.startprob_prior, self.transmat_prior = startprob_prior, transmat_prior
        self.lambdas_prior, self.lambdas_weight = lambdas_prior, lambdas_weight
        self.algorithm, self.random_state = algorithm, random_state
        self.n_iter, self.tol, self.verbose = n_iter, tol, verbose
        self.params, self.init_params = params, init_params
        self.implementation = implementation

    def _make_components(self):
        prior = Gamma(self.lambdas_prior, self.lambdas_weight)
        return (
            self._chain(),
            Poisson(self.n_features),
            LatentPrior(self._chain_prior(), prior),
        )

    def _emission_params(self):
        return PoissonParams(
            self._checked("lambdas_", (self.n_components, self.n_features))
        )

    def _emission_attributes(self, params):
        return {"lambdas_": params.lambdas}

    def _check_values(self, X):
        if not np.all((X >= 0) & (X == np.floor(X))):
            raise ValueError("X must hold counts: non-negative integers")
