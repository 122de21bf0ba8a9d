"""HiddenSemiMarkovModel: states with explicit durations, over any emission family."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state

from .._validation import Interval, StrOptions, check_is_fitted, check_n_samples
from ..graph.semi_markov import SemiMarkovChain, SemiMarkovPrior
from ..priors import Dirichlet
from ._base import _handler
from ._checks import check_currstate
from ._durations import duration_family
from ._labelled import named
from ._model import HiddenMarkovModel

__all__ = ["HiddenSemiMarkovModel"]


class HiddenSemiMarkovModel(HiddenMarkovModel):
    """Hidden semi-Markov model (explicit durations), fitted by EM.

    The chain enters a state, stays there a number of steps drawn from that
    state's duration distribution (on ``1 .. max_duration``), emitting one
    row per step from the emission family, then moves to another state: the
    transition matrix has a zero diagonal, since staying is the duration's
    business. Any emission family of :class:`HiddenMarkovModel` works, with
    its priors; sequences, ``lengths``, gaps (steps of NaN), ``params`` and
    ``init_params`` are read as there.

    Parameters
    ----------
    n_components : int, default=2
        Number of states.
    emission : str or emission family, default='gaussian'
        As in :class:`HiddenMarkovModel`.
    emission_prior : object, default=None
        As in :class:`HiddenMarkovModel`.
    duration : {'poisson', 'negative_binomial', 'table'}, default='poisson'
        The duration family of every state: ``d - 1`` Poisson (attribute
        ``duration_rates_``), ``d - 1`` negative binomial in scipy's
        parametrisation (``duration_n_``, ``duration_p_``), each truncated to
        ``1 .. max_duration`` and renormalised, or a nonparametric table
        (``durations_``).
    max_duration : int, default=20
        ``D``, the longest duration. Inference costs O(T K D).
    duration_prior : object, default=None
        The durations' prior: a ``bayeskit.priors.Dirichlet`` on the rows of
        the table, or a ``bayeskit.priors.Gamma`` on the Poisson rates; None
        is maximum likelihood (the negative binomial takes none).
    startprob_prior, transmat_prior : float or array-like, default=1.0
        Dirichlet concentrations of the start and transition tables (1 is
        maximum likelihood).
    algorithm : {'viterbi', 'map'}, default='viterbi'
        The decoder of :meth:`predict`.
    random_state : int, RandomState instance or None, default=None
        The draws of the first parameters and of :meth:`sample`.
    n_iter : int, default=10
        Maximum number of EM iterations.
    tol : float, default=1e-2
        Convergence threshold on the gain of the log posterior.
    verbose : bool, default=False
        Print the monitored objective.
    params, init_params : str, default='stde'
        Letters of the parameters to update and to initialise: 's' start,
        't' transitions, 'd' durations, 'e' the family's parameters.
    n_init : int, default=1
        Number of starts; the one with the best log posterior is kept.
    n_jobs : int, default=None
        Jobs for the starts (joblib).

    Attributes
    ----------
    startprob_ : ndarray of shape (n_components,)
    transmat_ : ndarray of shape (n_components, n_components)
        Zero diagonal (with one state, ``[[1.]]``: a new segment of it).
    durations_ : ndarray of shape (n_components, max_duration)
        With ``duration='table'``: ``durations_[j, d - 1] = p_j(d)``.
    duration_rates_ : ndarray of shape (n_components,)
        With ``duration='poisson'``: the rate of ``d - 1``.
    duration_n_, duration_p_ : ndarray of shape (n_components,)
        With ``duration='negative_binomial'``.
    duration_pmf_ : ndarray of shape (n_components, max_duration)
        Every family's duration distribution as a table.
    emission_params_ : object
        The family's parameters (every field is also an attribute).
    monitor_, converged_, n_iter_, lower_bound_, stats_

    See Also
    --------
    HiddenMarkovModel : The chain whose stays are geometric.

    Notes
    -----
    Inference is the semi-Markov chain's of ``bayeskit.graph.semi_markov``:
    forward-backward and Viterbi over segments, in log space, in
    O(T K D) (Yu 2010, section 3.1). The last segment of every sequence is
    right-censored (it has lasted at least the steps seen; its probability
    is ``P(d_j >= d)``), so a sequence may stop mid-stay, as an HMM's does;
    with every duration geometric the model is the HMM whose
    self-transitions are the geometric's. EM's E-step counts a censored
    segment as a complete one of every length it may have had, in
    proportion to ``p_j(d')``, so the M-step maximises the expected
    complete-data log posterior and EM never decreases the log posterior.

    Known states (``fit(X, lengths, states=...)``, as for the HMMs, with -1
    or NaN where unknown) clamp the state of the segment that covers a
    labelled step: the forward-backward over segments sees a likelihood of
    zero for every other state there. With every state known the segments
    are the runs of the labels and their counts are closed form, except the
    censored last segment's duration, on which EM still runs.

    References
    ----------
    .. [1] S.-Z. Yu, "Hidden semi-Markov models", Artificial Intelligence
       174(2), 215-243, 2010.
    .. [2] L. R. Rabiner, "A tutorial on hidden Markov models and selected
       applications in speech recognition", Proceedings of the IEEE 77(2),
       257-286, 1989, section IV.D (models with state durations).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import HiddenSemiMarkovModel
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(m, 1, (8, 1)) for m in [0, 5] * 20])
    >>> hsmm = HiddenSemiMarkovModel(2, max_duration=15, random_state=0).fit(X)
    >>> (hsmm.duration_rates_ + 1).round(0)
    array([8., 8.])
    """

    _parameter_constraints: dict = {
        **HiddenMarkovModel._parameter_constraints,
        "duration": [StrOptions({"poisson", "negative_binomial", "table"})],
        "max_duration": [Interval(Integral, 1, None, closed="left")],
        "duration_prior": [None, object],
    }

    def __init__(
        self, n_components=2, *, emission="gaussian", emission_prior=None,
        duration="poisson", max_duration=20, duration_prior=None,
        startprob_prior=1.0, transmat_prior=1.0, algorithm="viterbi",
        random_state=None, n_iter=10, tol=1e-2, verbose=False, params="stde",
        init_params="stde", n_init=1, n_jobs=None,
    ):  # fmt: skip
        self.n_components = n_components
        self.emission, self.emission_prior = emission, emission_prior
        self.duration, self.max_duration = duration, max_duration
        self.duration_prior = duration_prior
        self.startprob_prior, self.transmat_prior = startprob_prior, transmat_prior
        self.algorithm, self.random_state = algorithm, random_state
        self.n_iter, self.tol, self.verbose = n_iter, tol, verbose
        self.params, self.init_params = params, init_params
        self.n_init, self.n_jobs = n_init, n_jobs

    # -- the parameters' names -------------------------------------------------------
    def _duration_family(self):
        return duration_family(self.duration, self.max_duration)

    @property
    def _param_names(self) -> dict:
        fields = self._duration_family().fields
        return {
            "s": "startprob_", "t": "transmat_", "e": "_emission_value",
            "d": fields[0],
        }  # fmt: skip

    @property
    def _stored_params(self) -> tuple:
        return self._duration_family().fields[1:]

    @property
    def _emission_letters(self) -> set:
        return {"e"}

    # -- the structure ---------------------------------------------------------------
    def _chain(self) -> SemiMarkovChain:
        return SemiMarkovChain(
            self.n_components,
            self._duration_family(),
            "s" in self.params,
            "t" in self.params,
            "d" in self.params,
        )

    def _chain_prior(self) -> SemiMarkovPrior:
        family = self._duration_family()
        prior = self.duration_prior
        if prior is None:
            prior = family.default_prior()
        elif not isinstance(prior, family.prior_type):
            raise ValueError(
                f"duration_prior must be None or a {family.prior_type.__name__} "
                f"for duration={self.duration!r}, got {type(prior).__name__}"
                if family.prior_type is not type(None)
                else f"duration_prior must be None for duration={self.duration!r} "
                f"(maximum likelihood), got {type(prior).__name__}"
            )
        return SemiMarkovPrior(
            Dirichlet(self.startprob_prior), Dirichlet(self.transmat_prior), prior
        )

    def _chain_params(self):
        base = super()._chain_params()
        k = self.n_components
        if k > 1 and np.any(np.diag(base.transmat) != 0):
            raise ValueError(
                "transmat_ must have a zero diagonal: a semi-Markov chain stays "
                "in a state for its duration, never by a self-transition"
            )
        structure = self._components()[0]
        duration = structure.duration.from_attributes(
            lambda name: getattr(self, name), k
        )
        return structure.params(base.startprob, base.transmat, duration)

    def _set_params(self, params) -> None:
        family = self._components()[0].duration
        for name, value in family.attributes(params.structure.duration).items():
            setattr(self, name, value)
        super()._set_params(params)

    @property
    def duration_pmf_(self) -> np.ndarray:
        """``p_j(d)`` of every state and duration, ``(n_components, max_duration)``.

        A new array at every read: it is derived from the duration family's
        attributes, which are the ones to set.
        """
        check_is_fitted(self)
        return self._current_params().structure.pmf.copy()

    def _initialize(self, X, row_weight, random_state, components):
        """hmmlearn's start (see :class:`HiddenMarkovModel`), with transitions
        drawn off the diagonal and the duration family's first parameters."""
        k = self.n_components
        rng = np.random.RandomState(
            check_random_state(random_state).randint(np.iinfo(np.int32).max)
        )
        to_init = self._to_init
        if "t" in to_init:
            trans = np.ones((1, 1))
            if k > 1:
                trans = np.zeros((k, k))
                off = ~np.eye(k, dtype=bool)
                trans[off] = rng.dirichlet(np.ones(k - 1), size=k).ravel()
            self.transmat_ = trans
        if "d" in to_init:
            family = components[0].duration
            first = family.init_params(k, rng)
            for name, value in family.attributes(first).items():
                setattr(self, name, value)
        self._to_init = to_init - {"t", "d"}
        try:
            return super()._initialize(X, row_weight, random_state, components)
        finally:
            self._to_init = to_init

    def get_stationary_distribution(self):
        """The long-run fraction of steps in every state.

        The chain of segments is Markov with ``transmat_``: its stationary
        distribution ``nu`` (the left eigenvector for eigenvalue 1) weights
        every state by how often a segment of it starts; a segment of ``j``
        lasts ``E[d_j]`` steps on average, so the fraction of steps is
        ``nu_j E[d_j] / sum_i nu_i E[d_i]`` (a renewal-reward argument;
        Yu 2010, section 2).
        """
        check_is_fitted(self, "transmat_")
        nu = super().get_stationary_distribution()
        mean = self.duration_pmf_ @ np.arange(1, self.max_duration + 1)
        weight = nu * mean
        return weight / weight.sum()

    # -- inference -------------------------------------------------------------------
    def score_samples(self, X, lengths=None):
        """``(log-likelihood, posteriors)``: the total and every step's
        posterior (the forward-backward pass without the expected counts
        that only EM reads)."""
        if (handler := _handler(X)) is not None:
            return handler.predict_hmm(self, "score_samples", X, lengths)
        (structure, _, _), params, messages, lengths, as_list = self._inputs(X, lengths)
        post = structure.marginals(messages, params.structure, lengths)
        return float(post.log_evidence.sum()), self._back(
            post.posterior, lengths, as_list
        )

    # -- sampling --------------------------------------------------------------------
    def sample(self, n_samples=1, random_state=None, currstate=None):
        """Draw one sequence of ``n_samples`` steps: ``(X, states)``.

        A state (``currstate`` if given, else from ``startprob_``), its
        duration, one row per step of it, then the next state from
        ``transmat_``, and so on; the last segment is cut at ``n_samples``.

        Parameters
        ----------
        n_samples : int, default=1
            Number of steps.
        random_state : int, RandomState instance or None, default=None
            The generator of the draws (None: the model's ``random_state``).
        currstate : int or state name, default=None
            The state of the first step (one of ``state_names_`` also, for a
            model fitted with named states).

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
        states : ndarray of shape (n_samples,)
            Indices, or the states' names when the model was fitted with
            named states (``state_names_``), as :meth:`predict` gives them.
        """
        check_n_samples(n_samples)
        check_is_fitted(self)
        params = self._current_params()
        currstate = check_currstate(self, currstate)
        rng = check_random_state(
            self.random_state if random_state is None else random_state
        )
        draw = self._sampler(params)
        if n_samples == 0:
            return self._samples(draw(None, rng)), named(self, np.zeros(0, dtype=int))
        states = self._components()[0].sample(
            params.structure, n_samples, rng, currstate
        )
        X = self._components().emission.sample(params.emission, states, rng)
        X = self._samples(np.asarray(X, dtype=float).reshape(n_samples, -1))
        return X, named(self, states)
