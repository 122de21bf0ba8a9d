"""PoissonMixture: a mixture of independent Poisson counts."""

from numbers import Real

from .._validation import ElementwiseInterval
from ..emissions import Poisson
from ..priors import Gamma
from ._model import MixtureModel

__all__ = ["PoissonMixture"]


class PoissonMixture(MixtureModel):
    """Mixture of independent Poisson counts: :class:`MixtureModel` with the
    Poisson family, fitted by EM.

    Parameters
    ----------
    n_components : int, default=1
    lambdas_prior, lambdas_weight : float or array-like, default=0.0
        Shape and rate of the Gamma prior on every rate (hmmlearn's names);
        the rate is the posterior mean ``(lambdas_prior + sum_i r_ik x_ij) /
        (lambdas_weight + sum_i r_ik)``; 0 and 0 is maximum likelihood.
    weights_prior, tol, max_iter, n_init, init_params : see MixtureModel
    random_state, warm_start, verbose, n_jobs : see MixtureModel

    Attributes
    ----------
    weights_ : ndarray of shape (n_components,)
    lambdas_ : ndarray of shape (n_components, n_features)
        The rate of every feature in every component.
    emission_params_, stats_, converged_, n_iter_, lower_bound_, lower_bounds_
        As in :class:`MixtureModel`.

    See Also
    --------
    MixtureModel, PoissonHMM

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import PoissonMixture
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.poisson(2, (200, 2)), rng.poisson(20, (200, 2))])
    >>> PoissonMixture(2, random_state=0).fit(X).lambdas_.round(0)[:, 0].tolist()
    [20.0, 2.0]
    """

    _parameter_constraints: dict = {
        **{
            k: v
            for k, v in MixtureModel._parameter_constraints.items()
            if k not in ("emission", "emission_prior")
        },
        "lambdas_prior": [ElementwiseInterval(Real, 0, None, closed="left")],
        "lambdas_weight": [ElementwiseInterval(Real, 0, None, closed="left")],
    }

    def __init__(
        self, n_components=1, *, lambdas_prior=0.0, lambdas_weight=0.0,
        weights_prior=1.0, tol=1e-3, max_iter=100, n_init=1, init_params="kmeans",
        random_state=None, warm_start=False, verbose=0, n_jobs=None,
    ):  # fmt: skip
        self.n_components, self.weights_prior = n_components, weights_prior
        self.lambdas_prior, self.lambdas_weight = lambdas_prior, lambdas_weight
        self.tol, self.max_iter, self.n_init = tol, max_iter, n_init
        self.init_params, self.random_state = init_params, random_state
        self.warm_start, self.verbose, self.n_jobs = warm_start, verbose, n_jobs

    def _emission_family(self):
        return Poisson()

    def _emission_prior(self):
        return Gamma(self.lambdas_prior, self.lambdas_weight)
