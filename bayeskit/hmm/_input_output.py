"""InputOutputHMM: an HMM whose start and transitions depend on covariates.

The triple is the chain with a transition matrix per step
(:mod:`bayeskit.graph.input_chain`), any emission family of
:class:`~bayeskit.hmm.HiddenMarkovModel` and its prior; the start and every
row of the transitions are multinomial-logistic in the covariates of the step
(Bengio and Frasconi 1996), whose M-step is
:mod:`bayeskit.hmm._logistic`. Covariates are metadata aligned with the
steps of X, passed as ``covariates=`` to every method that reads X.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from numbers import Real

import numpy as np
from sklearn.utils import check_random_state

from .._base.em import LatentParams, LatentStats, described
from .._base.sequences import _check_sequence_weight, _n_observed_steps, _observed_steps
from .._logmath import log_normalize, safe_log
from .._validation import (
    ElementwiseInterval,
    Interval,
    _fit_context,
    check_is_fitted,
    check_n_samples,
)
from ..graph import ChainParams
from ..graph.input_chain import forward_backward_inputs, forward_inputs, viterbi_inputs
from ._base import _handler
from ._checks import check_currstate
from ._logistic import SoftmaxRow, data_terms, update_softmax_rows
from ._model import HiddenMarkovModel

__all__ = ["InputOutputHMM"]


@dataclass(frozen=True)
class InputChainParams(ChainParams):
    """The chain's parameters: the tables at ``u = 0`` (``startprob``,
    ``transmat``) and the coefficients of the covariates."""

    start_coef: np.ndarray = None
    trans_coef: np.ndarray = None


@dataclass(frozen=True)
class InputChainStats:
    """Expected statistics of an input-output chain: the weighted posterior
    of every sequence's first state and of every transition, with their
    covariates (a logistic regression has no fixed-size statistics, so these
    are its data). They add by concatenation (statistics of disjoint sets of
    sequences)."""

    first: np.ndarray  # (n_sequences, k)
    first_inputs: np.ndarray  # (n_sequences, d)
    pairs: np.ndarray  # (n_transitions, k, k)
    pair_inputs: np.ndarray  # (n_transitions, d)
    occupancy: np.ndarray  # (k,)

    def __add__(self, other: InputChainStats) -> InputChainStats:
        if not isinstance(other, InputChainStats):
            return NotImplemented  # (statistics kept on Dask add from the right)
        return InputChainStats(
            np.concatenate([self.first, other.first]),
            np.concatenate([self.first_inputs, other.first_inputs]),
            np.concatenate([self.pairs, other.pairs]),
            np.concatenate([self.pair_inputs, other.pair_inputs]),
            self.occupancy + other.occupancy,
        )

    @property
    def start(self) -> np.ndarray:
        """Expected number of sequences starting in each state."""
        return self.first.sum(axis=0)

    @property
    def transitions(self) -> np.ndarray:
        """Expected number of transitions ``i -> j``."""
        return self.pairs.sum(axis=0)

    @property
    def total_weight(self) -> np.ndarray:
        return self.occupancy

    def row_terms(self, asks) -> list:
        """The data terms of the M-step's rows (``("s" or i, point)``: the
        start's or the transitions out of ``i``) at their points
        (:func:`~bayeskit.hmm._logistic.data_terms`)."""
        return [
            data_terms(self.first, self.first_inputs, *point)
            if key == "s"
            else data_terms(self.pairs[:, key], self.pair_inputs, *point)
            for key, point in asks
        ]


def _zeros(k, d) -> InputChainStats:
    return InputChainStats(
        np.zeros((0, k)),
        np.zeros((0, d)),
        np.zeros((0, k, k)),
        np.zeros((0, d)),
        np.zeros(k),
    )


class InputOutputHMM(HiddenMarkovModel):
    """Input-output hidden Markov model: transitions driven by covariates.

    A chain of ``n_components`` hidden states over any emission family (as
    :class:`HiddenMarkovModel`), whose start distribution and transition
    rows depend on covariates ``u_t`` observed at every step (Bengio and
    Frasconi 1996): every method that reads X takes ``covariates=``, an
    array of shape ``(n_samples, n_covariates)`` aligned with the rows of X
    (split by ``lengths`` as X is, or a list with one array per sequence
    when X is one). The API is hmmlearn's (``fit(X, lengths)``, ``score``,
    ``score_samples``, ``predict``, ``predict_proba``, ``decode``,
    ``sample``, ``params``/``init_params`` letters, ``monitor_``).

    Parameters
    ----------
    n_components : int, default=1
        Number of states.
    emission : str or emission family, default='gaussian'
        The family of every state, as :class:`HiddenMarkovModel`.
    emission_prior : object, default=None
        The family's prior, as :class:`HiddenMarkovModel`.
    startprob_prior, transmat_prior : float or array-like, default=1.0
        Dirichlet concentrations (at least 1) on the start distribution and
        transition matrix at ``u = 0`` (``startprob_``, ``transmat_``): as
        hmmlearn's, ``alpha - 1`` pseudo-counts, here placed at ``u = 0``.
    transition_alpha : float, default=1.0
        ``lambda``, the precision of the Gaussian prior on the coefficients
        (an L2 penalty ``lambda / 2 * ||W||^2`` on ``startprob_coef_`` and
        ``transmat_coef_``; 0 is maximum likelihood).
    algorithm, random_state, n_iter, tol, verbose, n_init, n_jobs, implementation
        As :class:`HiddenMarkovModel` (hmmlearn's meanings).
    params, init_params : str, default='ste'
        Letters of the parameters to update and to initialise: 's' the start
        (``startprob_`` and ``startprob_coef_``), 't' the transitions
        (``transmat_`` and ``transmat_coef_``), 'e' the family's parameters.
        ``fit`` starts the coefficients at zero and the tables as hmmlearn
        does, so the first E-step is that of :class:`HiddenMarkovModel`.

    Attributes
    ----------
    startprob_ : ndarray of shape (n_components,)
        The start distribution at ``u = 0``.
    transmat_ : ndarray of shape (n_components, n_components)
        The transition matrix at ``u = 0``.
    startprob_coef_ : ndarray of shape (n_components, n_covariates)
    transmat_coef_ : ndarray of shape (n_components, n_components, n_covariates)
        ``transmat_coef_[i, j]`` is ``W_ij``, the coefficients of the
        covariates in the logit of ``i -> j``.
    n_covariates_in_ : int
        Number of covariates.
    emission_params_, monitor_, converged_, n_iter_, lower_bound_, stats_
        As :class:`HiddenMarkovModel` (``stats_.structure`` holds the
        weighted posteriors of the first states and of the transitions, with
        their covariates).

    See Also
    --------
    HiddenMarkovModel : the case of constant covariates.

    Notes
    -----
    The start and the transitions are softmax functions of the covariates:

    .. math::

        P(z_1 = j \\mid u_1) \\propto \\pi_j \\exp(v_j^\\top u_1), \\qquad
        P(z_t = j \\mid z_{t-1} = i, u_t) \\propto
            A_{ij} \\exp(W_{ij}^\\top u_t),

    that is ``softmax_j(W_i u_t + c_i)`` with the intercept ``c_ij = log
    A_ij``: ``transmat_`` (``A``) is the transition matrix at ``u = 0``, and
    with constant covariates ``u_t = u`` the transition matrix of every step
    is ``A_ij exp(W_ij u) / sum_k A_ik exp(W_ik u)``, a hidden Markov model.
    With ``transmat_coef_`` zero it is :class:`HiddenMarkovModel` with
    ``transmat_`` and ``startprob_``. An exact zero of ``transmat_`` is a
    transition that no covariate allows, kept zero by EM.

    EM is generalised EM. The E-step is the forward-backward pass with a
    transition matrix per step (:func:`bayeskit.graph.forward_backward_inputs`),
    giving the pairwise posterior of every transition. The M-step of the
    family is :class:`HiddenMarkovModel`'s; that of every row of the
    transitions (and of the start) is a weighted multinomial logistic
    regression of the next state on the covariates, the pairwise posteriors
    as weights, with the Dirichlet prior of ``transmat_prior`` on the table
    at ``u = 0`` and the L2 penalty ``transition_alpha`` on the
    coefficients, climbed by Newton steps from the previous parameters that
    never lower it. The monitored objective (log-likelihood plus the log
    priors) therefore never decreases. With constant covariates EM takes the
    steps of :class:`HiddenMarkovModel` from the same start (the logistic
    regression's optimum is the normalised counts).

    Sequences come with their covariates: ``sample(n, covariates=...)``
    draws one sequence whose steps follow the given covariates. The
    statistics of the transitions are the pairwise posteriors of every step
    with its covariates (a logistic regression has no statistics of fixed
    size): ``summarize`` of chunks add by concatenation. On a Dask bag of
    sequences or a Dask array with ``lengths`` (covariates a bag partitioned
    as X, a Dask array chunked along the rows as X, or in memory),
    ``fit`` runs every partition's E-step where it lives and keeps those
    posteriors there; each Newton round of the M-step sums the partitions'
    terms of the rows' objective, gradient and Hessian
    (see the Dask page of the user guide), and the prediction methods are lazy.

    References
    ----------
    .. [1] Y. Bengio and P. Frasconi, "Input-output HMMs for sequence
       processing", IEEE Transactions on Neural Networks 7(5), 1231-1249,
       1996.
    .. [2] L. R. Rabiner, "A tutorial on hidden Markov models and selected
       applications in speech recognition", Proceedings of the IEEE 77(2),
       257-286, 1989.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.hmm import InputOutputHMM
    >>> rng = np.random.default_rng(0)
    >>> u = rng.normal(size=(600, 1))
    >>> z = (u[:, 0] > 0).astype(int)  # the regime follows the covariate
    >>> X = rng.normal(np.array([-2.0, 2.0])[z], 1.0)[:, None]
    >>> model = InputOutputHMM(2, random_state=0, n_iter=50).fit(X, covariates=u)
    >>> states = model.predict(X, covariates=u)
    >>> bool(max(np.mean(states == z), np.mean(states != z)) > 0.95)
    True
    """

    _parameter_constraints: dict = {
        **HiddenMarkovModel._parameter_constraints,
        "startprob_prior": [ElementwiseInterval(Real, 1, None, closed="left")],
        "transmat_prior": [ElementwiseInterval(Real, 1, None, closed="left")],
        "transition_alpha": [Interval(Real, 0, None, closed="left")],
    }
    _stored_params = ("startprob_coef_", "transmat_coef_")
    # Keyword arguments aligned with the steps of X that every method reads
    # (the test suites supply them: tests/public_estimators.py).
    _step_metadata = ("covariates",)

    def __init__(
        self,
        n_components=1,
        *,
        emission="gaussian",
        emission_prior=None,
        startprob_prior=1.0,
        transmat_prior=1.0,
        transition_alpha=1.0,
        algorithm="viterbi",
        random_state=None,
        n_iter=10,
        tol=1e-2,
        verbose=False,
        params="ste",
        init_params="ste",
        n_init=1,
        n_jobs=None,
        implementation="log",
    ):
        super().__init__(
            n_components,
            emission=emission,
            emission_prior=emission_prior,
            startprob_prior=startprob_prior,
            transmat_prior=transmat_prior,
            algorithm=algorithm,
            random_state=random_state,
            n_iter=n_iter,
            tol=tol,
            verbose=verbose,
            params=params,
            init_params=init_params,
            n_init=n_init,
            n_jobs=n_jobs,
            implementation=implementation,
        )
        self.transition_alpha = transition_alpha

    # -- covariates: metadata aligned with the steps -----------------------------
    def _covariates(self, covariates, lengths, as_list, reset):
        """The covariates of every step, ``(n_steps, n_covariates)``, checked
        against the steps of X; ValueError naming ``covariates``."""
        n_steps = int(np.sum(lengths))
        if covariates is None:
            raise ValueError(
                f"covariates are required: {type(self).__name__} reads an "
                "array of shape (n_samples, n_covariates) aligned with the "
                "steps of X, passed as covariates= (a column of zeros is "
                "HiddenMarkovModel)"
            )
        if hasattr(covariates, "__dask_graph__"):
            raise ValueError(
                "covariates must be in memory (a numpy array or a list) here, "
                "not a Dask collection: fit, score and the predictions take "
                "them on Dask with X on Dask"
            )
        if as_list and isinstance(covariates, (list, tuple)):
            parts = [np.asarray(c, dtype=float) for c in covariates]
            parts = [p[:, None] if p.ndim == 1 else p for p in parts]
            if len(parts) != len(lengths) or any(
                len(p) != n for p, n in zip(parts, lengths)
            ):
                raise ValueError(
                    "covariates must have one array per sequence of X, each "
                    "with a row per step; got lengths "
                    f"{[len(p) for p in parts]} for sequences of "
                    f"{np.asarray(lengths).tolist()}"
                )
            widths = {p.shape[1:] for p in parts}
            if len(widths) != 1:
                raise ValueError(
                    "covariates of every sequence must have the same columns"
                )
            U = np.concatenate(parts, axis=0)
        else:
            try:
                U = np.asarray(covariates, dtype=float)
            except (TypeError, ValueError):
                raise ValueError(
                    "covariates must be an array of numbers of shape "
                    "(n_samples, n_covariates)"
                ) from None
            if U.ndim == 1:
                U = U[:, None]
        if U.ndim != 2 or U.shape[0] != n_steps or U.shape[1] == 0:
            raise ValueError(
                f"covariates must have shape (n_samples, n_covariates) with "
                f"n_samples = {n_steps} (the steps of X) and at least one "
                f"covariate, got shape {U.shape}"
            )
        if not np.all(np.isfinite(U)):
            raise ValueError(
                "covariates must be finite: NaN or infinity found (a missing "
                "covariate is not integrated out; impute it)"
            )
        if reset:
            self.n_covariates_in_ = U.shape[1]
        elif U.shape[1] != self._n_covariates():
            raise ValueError(
                f"covariates have {U.shape[1]} columns, but {type(self).__name__} "
                f"was fitted with {self._n_covariates()}"
            )
        return U

    def _n_covariates(self) -> int:
        if hasattr(self, "n_covariates_in_"):
            return self.n_covariates_in_
        return np.shape(self.transmat_coef_)[-1]

    # -- parameters ----------------------------------------------------------------
    def _chain_params(self) -> InputChainParams:
        base = super()._chain_params()
        k, d = self.n_components, self._n_covariates()
        start_coef = self._checked("startprob_coef_", (k, d), signed=True)
        trans_coef = self._checked("transmat_coef_", (k, k, d), signed=True)
        self.startprob_coef_, self.transmat_coef_ = start_coef, trans_coef
        return InputChainParams(base.startprob, base.transmat, start_coef, trans_coef)

    def _set_params(self, params: LatentParams) -> None:
        self.startprob_coef_ = params.structure.start_coef
        self.transmat_coef_ = params.structure.trans_coef
        super()._set_params(params)

    def _initialize(self, X, row_weight, random_state, components):
        k, d = self.n_components, self.n_covariates_in_
        if "s" in self._to_init or not hasattr(self, "startprob_coef_"):
            self.startprob_coef_ = np.zeros((k, d))
        if "t" in self._to_init or not hasattr(self, "transmat_coef_"):
            self.transmat_coef_ = np.zeros((k, k, d))
        return super()._initialize(X, row_weight, random_state, components)

    def _n_parameters(self, components=None):
        k, d = self.n_components, self.n_covariates_in_
        n = super()._n_parameters(components)
        return n + (k - 1) * d * (("s" in self.params) + k * ("t" in self.params))

    @staticmethod
    def _tables(chain: InputChainParams, U, lengths):
        """``(log_start, log_trans)``: every sequence's log start distribution
        and every step's log transition matrix."""
        first = np.cumsum(lengths) - lengths
        log_start = safe_log(chain.startprob)[None, :] + U[first] @ chain.start_coef.T
        log_start, _ = log_normalize(log_start, axis=1)
        logits = np.einsum("ijd,td->tij", chain.trans_coef, U)
        logits += safe_log(chain.transmat)[None]
        log_trans, _ = log_normalize(logits, axis=2)
        return log_start, log_trans

    def _dense(self, emission, X, params):
        table, codes = self._as_pair(self._messages(emission, X, params))
        return table if codes is None else table[codes]

    @staticmethod
    def _as_pair(messages):
        return messages if isinstance(messages, tuple) else (messages, None)

    # -- learning ------------------------------------------------------------------
    def _data(self, X, lengths, sequence_weight, covariates, reset):
        Xt, lengths, as_list = self._sequences(X, lengths, reset=reset)
        U = self._covariates(covariates, lengths, as_list, reset)
        weights = _check_sequence_weight(sequence_weight, len(lengths))
        return Xt, lengths, None if np.all(weights == 1.0) else weights, U

    def _expected_stats(self, data, params, components) -> LatentStats:
        X, lengths, weights, U = data
        _, emission, _ = components
        log_start, log_trans = self._tables(params.structure, U, lengths)
        messages = self._dense(emission, X, params.emission)
        post = forward_backward_inputs(log_start, log_trans, messages, lengths)
        row_weight = np.ones(len(X)) if weights is None else np.repeat(weights, lengths)
        resp = post.posterior * row_weight[:, None]
        first = np.cumsum(lengths) - lengths
        inner = np.ones(len(X), dtype=bool)
        inner[first] = False
        chain = InputChainStats(
            resp[first],
            U[first],
            post.pairwise[inner] * row_weight[inner, None, None],
            U[inner],
            resp.sum(axis=0),
        )
        if not self._updates_emission():
            emission_stats = emission.zeros(self.n_components)
        else:
            observed = _observed_steps(X)
            Xo, ro = (X, resp) if observed is None else (X[observed], resp[observed])
            emission_stats = emission.expected_stats(Xo, ro, params.emission)
        evidence = post.log_evidence
        total = evidence.sum() if weights is None else weights @ evidence
        return LatentStats(chain, emission_stats, float(total))

    def _pseudo(self, which):
        k = self.n_components
        prior = self.startprob_prior if which == "s" else self.transmat_prior
        shape = (k,) if which == "s" else (k, k)
        return np.broadcast_to(np.asarray(prior, dtype=float), shape) - 1.0

    def _params_from_stats(self, stats, previous, components):
        chain, new = previous.structure, stats.structure
        alpha, k = float(self.transition_alpha), self.n_components
        keys = (["s"] if "s" in self.params else []) + (
            list(range(k)) if "t" in self.params else []
        )
        rows = [
            SoftmaxRow(
                safe_log(chain.startprob if key == "s" else chain.transmat[key]),
                chain.start_coef if key == "s" else chain.trans_coef[key],
                self._pseudo("s") if key == "s" else self._pseudo("t")[key],
                alpha,
                True,
            )
            for key in keys
        ]
        # Every row's weight (only whether it is positive matters) and its
        # Newton steps, the data terms summed by the statistics themselves.
        weights = [
            (new.start if key == "s" else new.transitions[key])[
                np.isfinite(r.log_row)
            ].sum()
            for key, r in zip(keys, rows)
        ]
        fitted = dict(
            zip(
                keys,
                update_softmax_rows(
                    rows,
                    weights,
                    lambda asks: new.row_terms([(keys[i], ask) for i, ask in asks]),
                ),
            )
        )
        start, start_coef = chain.startprob, chain.start_coef
        if "s" in fitted:
            start, start_coef = np.exp(fitted["s"][0]), fitted["s"][1]
        trans, trans_coef = chain.transmat, chain.trans_coef
        if "t" in self.params:
            trans = np.exp(np.array([fitted[i][0] for i in range(k)]))
            trans_coef = np.array([fitted[i][1] for i in range(k)])
        structure = InputChainParams(start, trans, start_coef, trans_coef)
        params = previous.emission
        if self._updates_emission():
            _, emission, prior = components
            try:
                params = emission.map_params(stats.emission, prior.emission, params)
            except np.linalg.LinAlgError:
                from .._base.composed import degenerate

                raise degenerate(self, "state") from None
        return LatentParams(structure, params)

    def _log_prior_of(self, params, components) -> float:
        """The Dirichlet priors of the tables at ``u = 0``, the Gaussian of the
        coefficients and the family's prior (up to their constants)."""
        chain = params.structure
        total = 0.0
        for table, which in ((chain.startprob, "s"), (chain.transmat, "t")):
            weight = self._pseudo(which)
            with np.errstate(invalid="ignore"):
                total += float(
                    np.where(weight == 0, 0.0, weight * safe_log(table)).sum()
                )
        coef = np.concatenate([chain.start_coef.ravel(), chain.trans_coef.ravel()])
        total -= 0.5 * float(self.transition_alpha) * float(coef @ coef)
        _, emission, prior = components
        return total + float(emission.log_prior(params.emission, prior.emission))

    # -- the public methods: hmmlearn's, with covariates= ---------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, lengths=None, *, y=None, sequence_weight=None, covariates=None):
        """Estimate the parameters by generalised EM (see the class docstring).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or list of array-like
            The steps of all sequences (with ``lengths``), or one array per
            sequence, as :meth:`HiddenMarkovModel.fit`.
        lengths : array-like of int of shape (n_sequences,), default=None
            Steps of each sequence (hmmlearn's second positional argument).
        y : None
            Ignored; keyword only.
        sequence_weight : array-like of shape (n_sequences,), default=None
            Weight of every sequence, as :meth:`HiddenMarkovModel.fit`.
        covariates : array-like of shape (n_samples, n_covariates) or list
            Keyword only, required: the covariates of every step, aligned with
            X (a list with one array per sequence when X is one).

        Returns
        -------
        self : object
        """
        if (handler := _handler(X)) is not None:  # a Dask bag or array
            return handler.fit_iohmm(self, X, lengths, sequence_weight, covariates)
        data = self._data(X, lengths, sequence_weight, covariates, reset=True)
        Xt, lengths, weights, _ = data
        self._plan_init(Xt.size if Xt.ndim > 1 else len(Xt))
        row_weight = (
            np.ones(len(Xt)) if weights is None else np.repeat(weights, lengths)
        )
        components = self._components()
        self._fit_components(data, self._starts(Xt, row_weight, components), None)
        if self.n_iter_:
            self._warn_unvisited(self.stats_)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(
        self, X, lengths=None, *, y=None, sequence_weight=None, covariates=None
    ):
        """One step of incremental EM on a chunk of sequences (as
        :meth:`HiddenMarkovModel.partial_fit`), with their ``covariates``."""
        if (handler := _handler(X)) is not None:  # a Dask bag or array
            args = (self, X, lengths, sequence_weight, covariates)
            return handler.partial_fit_iohmm(*args)
        first = not hasattr(self, "stats_")
        data = self._data(X, lengths, sequence_weight, covariates, reset=first)
        components = self._components()
        if first:
            Xt, lengths, weights, _ = data
            self._plan_init(Xt.size if Xt.ndim > 1 else len(Xt))
            row_weight = (
                np.ones(len(Xt)) if weights is None else np.repeat(weights, lengths)
            )
            params = self._initialize(Xt, row_weight, self.random_state, components)
            self._keep_generator()
            k = self.n_components
            total = LatentStats(
                _zeros(k, self.n_covariates_in_), components[1].zeros(k)
            )
        else:
            params = self._current_params()
            total = self.stats_
        total = total + self._expected_stats(data, params, components)
        self._set_params(self._params_from_stats(total, params, components))
        self.stats_ = total
        return self

    def summarize(self, X, lengths=None, *, sequence_weight=None, covariates=None):
        """Expected statistics of a chunk of sequences under the current
        parameters (the E-step), as :meth:`HiddenMarkovModel.summarize`; they
        add with ``+`` and :meth:`from_stats` takes their sum."""
        if (handler := _handler(X)) is not None:  # posteriors left on Dask
            args = (self, X, lengths, sequence_weight, covariates)
            return replace(handler.summarize_iohmm(*args), layout=described(self))
        check_is_fitted(self)
        params = self._current_params()
        data = self._data(X, lengths, sequence_weight, covariates, reset=False)
        stats = self._expected_stats(data, params, self._components())
        return replace(stats, layout=described(self))

    @staticmethod
    def _gathered(X):
        """X in memory (``bic``): a Dask collection is computed, its
        covariates then read in memory."""
        if hasattr(X, "__dask_graph__"):
            X = X.compute()
            if not isinstance(X, np.ndarray) and hasattr(X, "__len__"):
                X = list(X)  # a bag's sequences
        return X

    def _inputs(self, X, lengths, covariates):
        """``(params, log_start, log_trans, messages, lengths, as_list)``."""
        check_is_fitted(self)
        X = self._gathered(X)
        params = self._current_params()
        Xt, lengths, as_list = self._sequences(X, lengths, reset=False)
        U = self._covariates(covariates, lengths, as_list, reset=False)
        log_start, log_trans = self._tables(params.structure, U, lengths)
        messages = self._dense(self._components()[1], Xt, params.emission)
        return Xt, log_start, log_trans, messages, lengths, as_list

    def score_sequences(self, X, lengths=None, *, covariates=None):
        """Log-likelihood of every sequence given its covariates,
        ``(n_sequences,)``."""
        if (handler := _handler(X)) is not None:
            return handler.predict_iohmm(
                self, "score_sequences", X, lengths, covariates
            )
        _, start, trans, messages, lengths, _ = self._inputs(X, lengths, covariates)
        return forward_inputs(start, trans, messages, lengths).log_evidence

    def score(self, X, lengths=None, *, y=None, covariates=None):
        """Log-likelihood of all the sequences given their covariates."""
        if (handler := _handler(X)) is not None:
            return handler.predict_iohmm(self, "score", X, lengths, covariates)
        return float(self.score_sequences(X, lengths, covariates=covariates).sum())

    def score_samples(self, X, lengths=None, *, covariates=None):
        """``(log-likelihood, posteriors)``: the total and every step's posterior."""
        if (handler := _handler(X)) is not None:
            return handler.predict_iohmm(self, "score_samples", X, lengths, covariates)
        _, start, trans, messages, lengths, as_list = self._inputs(
            X, lengths, covariates
        )
        post = forward_backward_inputs(start, trans, messages, lengths)
        return float(post.log_evidence.sum()), self._back(
            post.posterior, lengths, as_list
        )

    def predict_proba(self, X, lengths=None, *, covariates=None):
        """Posterior of the state of every step, ``(n_samples, n_components)``."""
        return self.score_samples(X, lengths, covariates=covariates)[1]

    def decode(self, X, lengths=None, algorithm=None, *, covariates=None):
        """Most probable states: ``(log probability, state sequence)``, as
        :meth:`HiddenMarkovModel.decode` ('viterbi' or 'map')."""
        if (handler := _handler(X)) is not None:
            args = (self, "decode", X, lengths, covariates, algorithm)
            return handler.predict_iohmm(*args)
        algorithm = algorithm or self.algorithm
        if algorithm not in ("viterbi", "map"):
            raise ValueError(f"algorithm must be 'viterbi' or 'map', got {algorithm!r}")
        _, start, trans, messages, lengths, as_list = self._inputs(
            X, lengths, covariates
        )
        if algorithm == "viterbi":
            path, log_prob = viterbi_inputs(start, trans, messages, lengths)
        else:
            post = forward_backward_inputs(start, trans, messages, lengths)
            path, log_prob = np.argmax(post.posterior, axis=1), post.log_evidence
        return float(np.sum(log_prob)), self._back(path, lengths, as_list)

    def predict(self, X, lengths=None, *, covariates=None):
        """The decoded state of every step (see :meth:`decode`)."""
        return self.decode(X, lengths, covariates=covariates)[1]

    def bic(self, X, lengths=None, *, covariates=None):
        """Bayesian information criterion (lower is better), n the number of
        observed steps."""
        Xt, start, trans, messages, lengths, _ = self._inputs(X, lengths, covariates)
        log_lik = forward_inputs(start, trans, messages, lengths).log_evidence.sum()
        n = _n_observed_steps(Xt)
        return -2 * log_lik + self._n_parameters() * np.log(max(n, 1))

    def aic(self, X, lengths=None, *, covariates=None):
        """Akaike information criterion (lower is better)."""
        log_lik = self.score(X, lengths, covariates=covariates)
        return -2 * log_lik + 2 * self._n_parameters()

    def _init(self, X, lengths=None, *, covariates=None):
        """hmmlearn's hook: initialise the parameters as ``fit`` does."""
        Xt, lengths, _, _ = self._data(X, lengths, None, covariates, reset=True)
        self._plan_init(Xt.size if Xt.ndim > 1 else len(Xt))
        self._initialize(Xt, np.ones(len(Xt)), self.random_state, self._components())
        self._keep_generator()
        return self

    def sample(
        self, n_samples=1, random_state=None, currstate=None, *, covariates=None
    ):
        """Draw one sequence of ``n_samples`` steps given its covariates.

        The states are drawn as hmmlearn draws them (a cumulative table
        against one uniform per step), from the start distribution of the
        first step's covariates and the transition matrix of every later
        step's; every observation from its state's family.

        Parameters
        ----------
        n_samples : int, default=1
        random_state : int, RandomState instance or None, default=None
            None reads the model's ``random_state``.
        currstate : int, default=None
            The state of the first step; None draws it.
        covariates : array-like of shape (n_samples, n_covariates)
            Keyword only, required: the covariates of every step.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
        states : ndarray of int of shape (n_samples,)
        """
        check_n_samples(n_samples)
        check_is_fitted(self)
        params = self._current_params()
        currstate = check_currstate(self, currstate)
        U = self._covariates(covariates, np.array([n_samples]), False, reset=False)
        rng = check_random_state(
            self.random_state if random_state is None else random_state
        )
        draw = self._sampler(params)
        if n_samples == 0:
            return self._samples(draw(None, rng)), np.zeros(0, dtype=int)
        log_start, log_trans = self._tables(params.structure, U, np.array([n_samples]))
        state = currstate
        if state is None:
            state = (np.cumsum(np.exp(log_start[0])) > rng.rand()).argmax()
        states, X = [state], [draw(state, rng)]
        for t in range(1, n_samples):
            cdf = np.cumsum(np.exp(log_trans[t, state]))
            state = (cdf > rng.rand()).argmax()
            states.append(state)
            X.append(draw(state, rng))
        return self._samples(np.atleast_2d(X)), np.array(states, dtype=int)
