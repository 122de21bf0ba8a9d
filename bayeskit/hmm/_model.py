"""HiddenMarkovModel: a chain of states over any emission family."""

from __future__ import annotations

from numbers import Real

import numpy as np

from .._base.classifier import Triple
from .._base.composed import FamilyAttributes, check_family_data, degenerate
from .._base.em import LatentPrior
from .._validation import ElementwiseInterval
from ..emissions import Emission
from ..mixture._start import initial_responsibilities
from ._base import BaseHMM

__all__ = ["HiddenMarkovModel"]


class HiddenMarkovModel(FamilyAttributes, BaseHMM):
    """Hidden Markov model over any emission family, fitted by Baum-Welch.

    A chain of ``n_components`` hidden states (hmmlearn's start and
    transition tables, their Dirichlet priors, ``lengths``, ``params`` and
    ``init_params`` letters, the ``monitor_``), each emitting rows from the
    family with that state's parameters.

    Parameters
    ----------
    n_components : int, default=1
        Number of states.
    emission : str or emission family, default='gaussian'
        The family of every state: a name of
        ``bayeskit.emissions.family_names()`` or a family object of
        ``bayeskit.emissions``.
    emission_prior : object, default=None
        The family's prior object of ``bayeskit.priors``; None is the
        family's default (maximum likelihood; for Gaussians a ridge of
        ``1e-6`` on every covariance).
    startprob_prior, transmat_prior : float or array-like, default=1.0
        Dirichlet concentrations of the start and transition tables (1 is
        maximum likelihood), as hmmlearn.
    algorithm, random_state, n_iter, tol, verbose, n_init, n_jobs
        As in :class:`GaussianHMM`.
    params, init_params : str, default='ste'
        Letters of the parameters to update and to initialise: 's' start,
        't' transitions, 'e' the family's parameters.

    Attributes
    ----------
    startprob_, transmat_ : ndarray
    emission_params_ : object
        The family's parameters, one state per hidden state; every field is
        also an attribute with a trailing underscore.
    monitor_, converged_, n_iter_, lower_bound_, stats_

    See Also
    --------
    GaussianHMM, PoissonHMM, MixtureModel, NaiveBayes

    Notes
    -----
    Baum-Welch (Rabiner 1989): the chain's posterior (forward-backward) fed
    by the family's log-likelihoods, the family's statistics weighted by the
    step posteriors, then the MAP parameters. The family's start is its own
    (``init_params`` of the family with the row weights, drawn from
    ``random_state`` after the chain's tables).

    References
    ----------
    .. [1] L. R. Rabiner, "A tutorial on hidden Markov models and selected
       applications in speech recognition", Proceedings of the IEEE 77(2),
       257-286, 1989.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import HiddenMarkovModel
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.poisson(lam, (100, 1)) for lam in (2, 20, 2, 20)])
    >>> hmm = HiddenMarkovModel(2, emission="poisson", random_state=0).fit(X)
    >>> np.sort(hmm.lambdas_.ravel()).round(0)
    array([ 2., 20.])
    """

    _parameter_constraints: dict = {
        **BaseHMM._parameter_constraints,
        "emission": [str, object],
        "emission_prior": [None, object],
        "transmat_prior": [ElementwiseInterval(Real, 0, None, closed="neither")],
    }
    _param_names = {"s": "startprob_", "t": "transmat_", "e": "_emission_value"}

    def __init__(
        self, n_components=1, *, emission="gaussian", emission_prior=None,
        startprob_prior=1.0, transmat_prior=1.0, algorithm="viterbi",
        random_state=None, n_iter=10, tol=1e-2, verbose=False, params="ste",
        init_params="ste", n_init=1, n_jobs=None, implementation="log",
    ):  # fmt: skip
        self.n_components = n_components
        self.emission, self.emission_prior = emission, emission_prior
        self.startprob_prior, self.transmat_prior = startprob_prior, transmat_prior
        self.algorithm, self.random_state = algorithm, random_state
        self.n_iter, self.tol, self.verbose = n_iter, tol, verbose
        self.params, self.init_params = params, init_params
        self.n_init, self.n_jobs = n_init, n_jobs
        self.implementation = implementation

    def _make_components(self) -> Triple:
        family = self._sized_family(self.n_features)
        prior = self.emission_prior
        if prior is None:
            prior = family.default_prior()
        self._triple = Triple(
            self._chain(), family, LatentPrior(self._chain_prior(), prior)
        )
        return self._triple

    def _check_values(self, X) -> None:
        values = X[~np.isnan(X).all(axis=1)] if np.isnan(X).any() else X
        check_family_data(self._emission_family(), values)

    def _emission_params(self):
        return self._emission_value

    def _emission_attributes(self, params) -> dict:
        return {"_emission_value": params}

    def _params_from_stats(self, stats, previous, components):
        try:
            return super()._params_from_stats(stats, previous, components)
        except np.linalg.LinAlgError:
            raise degenerate(self, "state") from None

    def _emission_start(self, X, row_weight, random_state, emission):
        """The family's own start where it draws one (Poisson, the independent
        families); otherwise its estimate from the rows split among the
        states by k-means, as scikit-learn's mixtures start."""
        if len(X) < self.n_components:
            raise ValueError(
                f"X has too few steps to start {self.n_components} states from: "
                f"n_samples = {len(X)} (complete steps)"
            )
        try:
            if type(emission).init_params is not Emission.init_params:
                return super()._emission_start(X, row_weight, random_state, emission)
            resp = initial_responsibilities(
                "kmeans", X, row_weight, self.n_components, random_state
            )
            return emission.init_params(
                X, resp * row_weight[:, None], self.n_components, random_state
            )
        except np.linalg.LinAlgError:
            raise degenerate(self, "state", len(X)) from None

    def _sampler(self, params):
        """One row of a state from the family's own sampler."""
        emission = self._components().emission

        def draw(state, rng):
            if state is None:
                return np.empty((0, self.n_features))
            return emission.sample(params.emission, np.array([state]), rng)[0]

        return draw
