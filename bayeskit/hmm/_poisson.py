"""PoissonHMM: a chain of states, each emitting independent Poisson counts."""

from __future__ import annotations

from numbers import Real

import numpy as np

from .._base.classifier import Triple
from .._base.em import LatentPrior
from .._validation import ElementwiseInterval
from ..emissions.poisson import MAX_SAMPLED_RATE, Poisson, PoissonParams
from ..priors.gamma import Gamma
from ._base import BaseHMM

__all__ = ["PoissonHMM"]


class PoissonHMM(BaseHMM):
    """Hidden Markov model with Poisson emissions (counts).

    hmmlearn's ``PoissonHMM`` (the same parameters, order, defaults and
    attributes) with the additions of :class:`CategoricalHMM`.

    Parameters
    ----------
    n_components : int, default=1
        Number of hidden states.
    startprob_prior, transmat_prior : float or array-like, default=1.0
        Dirichlet concentrations, as :class:`CategoricalHMM`.
    lambdas_prior, lambdas_weight : float or array-like, default=0.0
        Shape ``alpha`` and rate ``beta`` of a Gamma prior on every rate
        (broadcast against ``lambdas_``); 0 and 0 is maximum likelihood.
        With more than one state, a prior needs ``per_state_prior=True``
        (see Notes).
    algorithm, random_state, n_iter, tol, verbose, implementation, n_init, n_jobs
        As :class:`CategoricalHMM`.
    per_state_prior : bool, default=False
        Apply the Gamma prior to each state's data (the MAP update of the
        Notes). hmmlearn 0.3.3 weighs it against all states' data instead, so
        a prior with more than one state would give other rates than
        hmmlearn's: that call is an error unless this is True.
    params, init_params : str, default='stl'
        s: start, t: transitions, l: rates; as :class:`CategoricalHMM`.

    Attributes
    ----------
    lambdas_ : ndarray of shape (n_components, n_features)
        The rate of every feature in every state.
    startprob_, transmat_, monitor_, converged_, n_iter_, lower_bound_, stats_
        As :class:`CategoricalHMM`.

    See Also
    --------
    MultinomialHMM

    Notes
    -----
    State :math:`k` emits counts :math:`x_{tj} \\sim \\mathrm{Poisson}(\\lambda_{kj})`,
    independent over the features. The M-step is the Gamma posterior mean
    :math:`\\lambda_{kj} = (\\alpha + \\sum_t \\gamma_{tk} x_{tj}) / (\\beta +
    \\sum_t \\gamma_{tk})` (Gelman et al. 2013, section 2.6), the mode under
    :math:`\\mathrm{Gamma}(\\alpha + 1, \\beta)`, whose log density the monitor
    adds. hmmlearn 0.3.3 divides by the weight of all states instead of the
    state's own: the two agree with the default prior (zero) or one state.
    ``fit`` starts the rates from a Gamma with the counts' mean and variance.

    References
    ----------
    A. Gelman et al., *Bayesian Data Analysis*, 3rd ed., CRC Press, 2013.

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
        "lambdas_prior": [ElementwiseInterval(Real, 0, None, closed="left")],
        "lambdas_weight": [ElementwiseInterval(Real, 0, None, closed="left")],
        "per_state_prior": ["boolean"],
    }
    _keeps_generator = True
    _param_names = {"s": "startprob_", "t": "transmat_", "l": "lambdas_"}
    _features_from, _emission_fields, _counts = (
        "lambdas_",
        {"lambdas_": "lambdas"},
        True,
    )

    def __init__(
        self, n_components=1, startprob_prior=1.0, transmat_prior=1.0,
        lambdas_prior=0.0, lambdas_weight=0.0, algorithm="viterbi",
        random_state=None, n_iter=10, tol=1e-2, verbose=False, params="stl",
        init_params="stl", implementation="log", *, n_init=1, per_state_prior=False,
        n_jobs=None,
    ):  # fmt: skip
        self.n_components, self.n_init = n_components, n_init
        self.n_jobs = n_jobs
        self.startprob_prior, self.transmat_prior = startprob_prior, transmat_prior
        self.lambdas_prior, self.lambdas_weight = lambdas_prior, lambdas_weight
        self.algorithm, self.random_state = algorithm, random_state
        self.n_iter, self.tol, self.verbose = n_iter, tol, verbose
        self.params, self.init_params = params, init_params
        self.implementation = implementation
        self.per_state_prior = per_state_prior

    def _make_components(self):
        prior = Gamma(self.lambdas_prior, self.lambdas_weight)
        flat = not (np.any(prior.shape) or np.any(prior.rate))
        if not flat and self.n_components > 1 and not self.per_state_prior:
            raise ValueError(
                "lambdas_prior and lambdas_weight with n_components > 1 differ "
                "from hmmlearn 0.3.3, which weighs the Gamma prior against the "
                "data of all states rather than each state's own: pass "
                "per_state_prior=True for bayeskit's MAP update per state"
            )
        return Triple(
            self._chain(),
            Poisson(self.n_features),
            LatentPrior(self._chain_prior(), prior),
        )

    def _sampler(self, params):
        lambdas = np.asarray(self.lambdas_)
        if lambdas.size and not lambdas.max() <= MAX_SAMPLED_RATE:
            raise ValueError(
                f"lambdas_ up to {lambdas.max():.3g} are too large to sample: "
                f"numpy draws Poisson counts for rates up to {MAX_SAMPLED_RATE:.3g}"
            )

        def draw(state, rng):
            if state is None:
                return np.zeros((0, lambdas.shape[1]), dtype=int)
            return rng.poisson(lambdas[state])

        return draw

    def _emission_params(self):
        return PoissonParams(
            self._checked("lambdas_", (self.n_components, self.n_features))
        )
