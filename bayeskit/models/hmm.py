"""Hidden Markov models: CategoricalHMM and GaussianHMM.

The latent structure is a chain of state nodes; inference is the graph core's
chain kernels (forward-backward = sum-product, Viterbi = max-product), fed by
the emission family's log-likelihoods; learning (Baum-Welch) is the emission
family's statistics under the step posteriors plus the expected start and
transition counts, turned into MAP parameters by Dirichlet priors (Rabiner,
1989; Bishop, 2006, ch. 13).

Sequences come in two forms, both first class: hmmlearn's rows of all
sequences concatenated plus ``lengths``, and a list with one array per
sequence (so scikit-learn's splitters split whole sequences). Methods that
return per-step results return them in the form they were given (the rules:
:mod:`bayeskit.models._sequences`). Sequence classification, one HMM per
class, is :mod:`bayeskit.models.hmm_classifier`.
"""

from __future__ import annotations

import logging
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state

from .._logmath import safe_log
from .._validation import (
    Interval,
    StrOptions,
    _fit_context,
    check_covariance_prior,
    check_is_fitted,
    validate_data,
)
from ..emissions import Gaussian, GaussianParams, covariance_from_name
from ..graph.chain import forward, forward_backward, viterbi
from ..priors import Dirichlet
from ._em import BaseLatentModel
from ._encoding import encode_column, fit_categories, is_missing
from ._monitor import ConvergenceMonitor
from ._sequences import (
    _as_rows,
    _check_sequence_weight,
    _split,
)

__all__ = ["CategoricalHMM", "ConvergenceMonitor", "GaussianHMM"]

_log = logging.getLogger(__name__)


class _BaseHMM(BaseLatentModel):
    """What both hidden Markov models share: the chain, its priors, Baum-Welch."""

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "startprob_prior": [Interval(Real, 0, None, closed="neither"), "array-like"],
        "transmat_prior": [Interval(Real, 0, None, closed="neither"), "array-like"],
        "algorithm": [StrOptions({"viterbi", "map"})],
        "random_state": ["random_state"],
        "n_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "params": [str],
        "init_params": [str],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "implementation": [StrOptions({"log", "scaling"})],
    }
    _chain_params = "st"
    warm_start = False
    _convergence_advice = (
        "increase n_iter or tol, or try another random_state or n_init"
    )

    # -- input -------------------------------------------------------------------
    def _sequences(self, X, lengths, reset):
        """``(Xt, lengths, as_list)`` with the rows of all sequences concatenated."""
        X, lengths, as_list = _as_rows(X, lengths, self._is_rows)
        return self._encode(X, reset, as_list), lengths, as_list

    def _back(self, values, lengths, as_list):
        return _split(values, lengths) if as_list else values

    # -- parameters --------------------------------------------------------------
    def _check_chain_params(self):
        k = self.n_components
        for name, shape in (("startprob_", (k,)), ("transmat_", (k, k))):
            value = np.asarray(getattr(self, name), dtype=float)
            setattr(self, name, value)
            if value.shape != shape:
                raise ValueError(f"{name} must have shape {shape}, got {value.shape}")
            if (value < 0).any() or not np.allclose(value.sum(axis=-1), 1.0):
                raise ValueError(
                    f"{name} must be non-negative with rows summing to one"
                )
        self._check_emission_params()

    def _plan_init(self, n_values):
        """Which parameters ``fit`` initialises, as hmmlearn: those in
        ``init_params`` (a logged warning when one was set by hand) and those
        not set yet."""
        self._to_init = set()
        for code, name in self._param_names.items():
            if code in self.init_params:
                if hasattr(self, name):
                    _log.warning(
                        "Even though the %r attribute is set, it will be "
                        "overwritten during initialization because 'init_params' "
                        "contains %r",
                        name,
                        code,
                    )
                self._to_init.add(code)
            elif not hasattr(self, name):
                self._to_init.add(code)
        n_free = self._n_free_parameters()
        if n_values < n_free:
            _log.warning(
                "Fitting a model with %d free scalar parameters with only %d data "
                "points will result in a degenerate solution.",
                n_free,
                n_values,
            )

    def _initialize(self, X, sample_weight, random_state):
        Xt, lengths, _ = X
        k = self.n_components
        if "s" in self._to_init:
            self.startprob_ = random_state.dirichlet(np.full(k, 1.0))
        if "t" in self._to_init:
            self.transmat_ = random_state.dirichlet(np.full(k, 1.0), size=k)
        self._init_emission(Xt, np.repeat(sample_weight, lengths), random_state)
        self._check_chain_params()

    def _init(self, X, lengths=None):
        """hmmlearn's hook: initialise the parameters for ``X`` as ``fit`` does
        (those in ``init_params`` and those not set), without running EM."""
        Xt, lengths, _ = self._sequences(X, lengths, reset=True)
        self._plan_init(Xt.size if Xt.ndim > 1 else len(Xt))
        rng = check_random_state(self.random_state)
        self._initialize((Xt, lengths, None), np.ones(len(lengths)), rng)
        return self

    def _check(self):
        """hmmlearn's hook: validate the hyperparameters and the parameters
        (shapes, rows summing to one); raises ValueError."""
        self._validate_params()
        self._check_chain_params()

    def get_stationary_distribution(self):
        """The stationary distribution of the states: the left eigenvector of
        ``transmat_`` for eigenvalue 1, normalised."""
        check_is_fitted(self, "transmat_")
        values, vectors = np.linalg.eig(np.asarray(self.transmat_, dtype=float).T)
        vector = np.real_if_close(vectors[:, np.argmin(np.abs(values - 1.0))])
        return vector / vector.sum()

    def _e_step(self, X):
        Xt, lengths, sample_weight = X
        log_emission, symbols = self._emission_messages(Xt)
        post = forward_backward(
            safe_log(self.startprob_),
            safe_log(self.transmat_),
            log_emission,
            lengths,
            symbols=symbols,
            weights=sample_weight,
        )
        return (post, lengths), post.log_likelihood

    def _objective(self, log_prob, sample_weight):
        return float(sample_weight @ log_prob) + self._log_prior()

    def _log_prior(self):
        return (
            self._startprob_dirichlet.log_density(self.startprob_)
            + self._transmat_dirichlet.log_density(self.transmat_)
            + self._emission_log_prior()
        )

    def _m_step(self, X, posterior, sample_weight):
        Xt = X[0]
        post, lengths = posterior
        resp = post.posterior  # transition and symbol counts come weighted
        if not np.all(sample_weight == 1.0):
            resp = resp * np.repeat(sample_weight, lengths)[:, None]
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        empty = np.zeros(self.n_components, dtype=bool)
        if "s" in self.params:
            self.startprob_, _ = self._startprob_dirichlet.map(
                resp[starts].sum(axis=0), self.startprob_
            )
        if "t" in self.params:
            self.transmat_, empty_rows = self._transmat_dirichlet.map(
                post.transition_counts, self.transmat_
            )
            empty |= empty_rows
        empty |= self._update_emission(Xt, resp, post)
        self._unvisited |= set(np.flatnonzero(empty).tolist())

    def _make_priors(self):
        """The Dirichlet priors of the start and transition tables, validated
        once per fit (their MAP updates and log densities in EM)."""
        self._startprob_dirichlet = Dirichlet(self.startprob_prior)
        self._transmat_dirichlet = Dirichlet(self.transmat_prior)

    def _get_parameters(self):
        return (self.startprob_.copy(), self.transmat_.copy(), *self._get_emission())

    def _set_parameters(self, params):
        self.startprob_, self.transmat_ = params[0], params[1]
        self._set_emission(params[2:])

    # -- fitting -----------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, lengths=None, *, y=None, sequence_weight=None):
        """Estimate the parameters by Baum-Welch (EM for MAP).

        Parameters
        ----------
        X : array-like of shape (n_steps, n_features) or list of array-like
            The steps of all sequences concatenated (with ``lengths``), or one
            array per sequence (see the class docstring for how a list is read).
        lengths : array-like of int of shape (n_sequences,), default=None
            Steps of each sequence when X is concatenated; None is one sequence.
            As in hmmlearn it is the second positional argument: something
            there that is not positive integers summing to ``len(X)`` (such as
            a target ``y``) is an error, never silently ignored.
        y : None
            Ignored; accepted by keyword only, for scikit-learn's convention.
        sequence_weight : array-like of shape (n_sequences,), default=None
            Non-negative weight of each sequence (not of each step): its
            expected counts enter Baum-Welch times its weight (an integer
            weight counts the sequence as that many copies), and the monitored
            log posterior sums its log-likelihood times its weight. None
            weighs every sequence 1.

        Returns
        -------
        self : object
        """
        Xt, lengths, _ = self._sequences(X, lengths, reset=True)
        weights = _check_sequence_weight(sequence_weight, len(lengths))
        self._make_priors()
        self._unvisited = set()
        self._plan_init(Xt.size if Xt.ndim > 1 else len(Xt))
        rng = check_random_state(self.random_state)
        self._run_em((Xt, lengths, weights), weights, rng, self.n_iter)
        self.monitor_ = ConvergenceMonitor(self.tol, self.n_iter, self.verbose)
        self.monitor_.history.extend(self.lower_bounds_)
        self.monitor_.iter = self.n_iter_
        if self._unvisited:
            warnings.warn(
                f"state(s) {sorted(self._unvisited)} were never visited by any "
                "sequence in some iteration; they kept their previous parameters "
                "(consider fewer n_components or a prior)",
                RuntimeWarning,
                stacklevel=2,
            )
        return self

    # -- inference ---------------------------------------------------------------
    def _inputs(self, X, lengths):
        """The chain's arguments for X: ``(log start, log transitions, log
        emissions), symbols (None for dense emissions), lengths, as_list``."""
        check_is_fitted(self)
        self._check_chain_params()
        Xt, lengths, as_list = self._sequences(X, lengths, reset=False)
        log_emission, symbols = self._emission_messages(Xt)
        chain = (safe_log(self.startprob_), safe_log(self.transmat_), log_emission)
        return chain, symbols, lengths, as_list

    def score_sequences(self, X, lengths=None):
        """Log-likelihood of every sequence, shape ``(n_sequences,)``."""
        chain, symbols, lengths, _ = self._inputs(X, lengths)
        return forward(*chain, lengths, symbols=symbols).log_likelihood

    def score(self, X, lengths=None, *, y=None):
        """Log-likelihood of all the sequences (the sum over sequences).

        ``lengths`` is the second positional argument, as in hmmlearn (see
        :meth:`fit`); ``y`` is ignored and accepted by keyword only.
        """
        return float(self.score_sequences(X, lengths).sum())

    def score_samples(self, X, lengths=None):
        """``(log-likelihood, posteriors)``: the total and every step's posterior."""
        chain, symbols, lengths, as_list = self._inputs(X, lengths)
        post = forward_backward(*chain, lengths, symbols=symbols)
        proba = post.posterior
        return float(post.log_likelihood.sum()), self._back(proba, lengths, as_list)

    def predict_proba(self, X, lengths=None):
        """Posterior of the state of every step, ``(n_steps, n_components)``."""
        return self.score_samples(X, lengths)[1]

    def decode(self, X, lengths=None, algorithm=None):
        """Most probable states: ``(log probability, state sequence)``.

        'viterbi' gives the most probable joint path and its log probability;
        'map' the most probable state of each step and the log-likelihood.
        """
        algorithm = algorithm or self.algorithm
        if algorithm not in ("viterbi", "map"):
            raise ValueError(f"algorithm must be 'viterbi' or 'map', got {algorithm!r}")
        chain, symbols, lengths, as_list = self._inputs(X, lengths)
        if algorithm == "viterbi":
            path, log_prob = viterbi(*chain, lengths, symbols=symbols)
        else:
            post = forward_backward(*chain, lengths, symbols=symbols)
            path, log_prob = np.argmax(post.posterior, axis=1), post.log_likelihood
        return float(np.sum(log_prob)), self._back(path, lengths, as_list)

    def predict(self, X, lengths=None):
        """The decoded state of every step (see :meth:`decode`)."""
        return self.decode(X, lengths)[1]

    def sample(self, n_samples=1, random_state=None, currstate=None):
        """Draw one sequence of ``n_samples`` steps: ``(X, states)``."""
        check_is_fitted(self)
        self._check_chain_params()
        rng = check_random_state(
            self.random_state if random_state is None else random_state
        )
        states = np.empty(n_samples, dtype=int)
        state = (
            rng.choice(self.n_components, p=self.startprob_)
            if currstate is None
            else currstate
        )
        for t in range(n_samples):
            if t:
                state = rng.choice(self.n_components, p=self.transmat_[state])
            states[t] = state
        return self._sample_emissions(states, rng), states

    def _n_free_parameters(self):
        """Free scalars of the parameters in ``params`` (before any fit)."""
        return self._n_parameters()

    def _n_parameters(self):
        k = self.n_components
        n = 0
        if "s" in self.params:
            n += k - 1
        if "t" in self.params:
            n += k * (k - 1)
        return n + self._emission_n_parameters()

    def bic(self, X, lengths=None):
        """Bayesian information criterion (lower is better); n is the number of
        steps of all sequences."""
        chain, symbols, lengths, _ = self._inputs(X, lengths)
        log_lik = forward(*chain, lengths, symbols=symbols).log_likelihood.sum()
        return -2 * log_lik + self._n_parameters() * np.log(lengths.sum())

    def aic(self, X, lengths=None):
        """Akaike information criterion (lower is better)."""
        return -2 * self.score(X, lengths=lengths) + 2 * self._n_parameters()


class CategoricalHMM(_BaseHMM):
    """Hidden Markov model with categorical emissions (discrete symbols).

    hmmlearn-compatible (``CategoricalHMM``), with symbols of any type, a list
    of sequences as input, ``score_sequences`` and ``n_init`` restarts.

    Parameters
    ----------
    n_components : int, default=1
        Number of hidden states.
    startprob_prior, transmat_prior, emissionprob_prior : float or array-like, \
default=1.0
        Dirichlet concentrations of the start distribution, of each row of the
        transition matrix and of each state's emission distribution. The
        update is the MAP estimate ``max(counts + alpha - 1, 0)``, normalised;
        1.0 is maximum likelihood.
    n_features : int, default=None
        Size of the alphabet when symbols are the integers ``0 .. n_features -
        1``; symbols declared but not seen in fit keep a smoothed probability.
        None infers the alphabet: ``max + 1`` for integer symbols, the distinct
        labels seen in fit otherwise.
    algorithm : {'viterbi', 'map'}, default='viterbi'
        Decoder of :meth:`decode` and :meth:`predict`.
    random_state : int, RandomState instance or None, default=None
    n_iter : int, default=10
        Maximum number of Baum-Welch iterations per start.
    tol : float, default=1e-2
        Stop when the log posterior gains less than this.
    verbose : bool, default=False
    params, init_params : str, default='ste'
        Which parameters (s: start, t: transitions, e: emissions) the M-step
        updates and which ``fit`` initialises at random. As in hmmlearn,
        ``fit`` also initialises a parameter left out of ``init_params`` that
        is not set yet, and overwrites one in ``init_params`` that was set by
        hand (with a logged warning).
    implementation : {'log', 'scaling'}, default='log'
        Accepted for hmmlearn's calls: both run bayeskit's one exact path
        (scaled recursions with an exact log-space fallback where a scale
        underflows), so they give the same answers; 'scaling' does not fail
        where hmmlearn's scaled recursion underflows.
    n_init : int, default=1
        Random starts; the one with the best log posterior is kept.

    Attributes
    ----------
    startprob_ : ndarray of shape (n_components,)
    transmat_ : ndarray of shape (n_components, n_components)
    emissionprob_ : ndarray of shape (n_components, ``n_features_``)
    symbols_ : ndarray of shape (``n_features_``,)
        The symbol of every emission column.
    n_features_ : int
    n_features : int or None
        hmmlearn's reading of the parameter: after ``fit`` with
        ``n_features=None`` on integer symbols, the inferred alphabet size
        ``max + 1`` (and so in ``get_params`` and a clone of the fitted
        model, as in hmmlearn).
    monitor_ : ConvergenceMonitor
        hmmlearn's monitor: ``history`` (the objective of every iteration),
        ``iter`` and ``converged`` (hmmlearn's rule: budget spent or gain
        below ``tol``).
    converged_, n_iter_, lower_bound_, lower_bounds_
        As :class:`~bayeskit.GaussianMixture` (``lower_bound_`` is the total
        log posterior here, as in hmmlearn's monitor).

    See Also
    --------
    GaussianHMM, HMMClassifier

    Notes
    -----
    hmmlearn's calls mean what they mean in hmmlearn. ``fit``, ``score``,
    ``score_samples``, ``predict``, ``predict_proba`` and ``decode`` take
    ``lengths`` as their second positional argument; anything there that is
    not positive integers summing to ``len(X)`` (a scikit-learn target, for
    instance) is a ``ValueError``, never ignored. ``y`` is accepted by
    keyword only and ignored; ``Pipeline``, ``cross_val_score`` and
    ``GridSearchCV`` pass no target (or ``None``) for a model without one.

    How a list ``X`` is read: a list that ``np.asarray`` turns into one column
    of symbols, such as ``[[0], [1], [2]]``, is hmmlearn's rows form, one
    sequence (give one-step sequences with ``lengths``). Any other list of
    sequences (1-d lists of symbols, of equal or different lengths, or
    ``(n_steps, 1)`` arrays) is one sequence per element. A list of 1-d
    arrays of one symbol each is ambiguous between the two (an error that says
    how to write either).

    Examples
    --------
    >>> from bayeskit import CategoricalHMM
    >>> seqs = [["H", "H", "T", "H"], ["T", "T", "H"], ["H", "T"]]
    >>> hmm = CategoricalHMM(n_components=2, random_state=0).fit(seqs)
    >>> hmm.symbols_
    array(['H', 'T'], dtype='<U1')
    >>> len(hmm.predict(seqs)), hmm.score_sequences(seqs).shape
    (3, (3,))
    """

    _parameter_constraints: dict = {
        **_BaseHMM._parameter_constraints,
        "emissionprob_prior": [Interval(Real, 0, None, closed="neither"), "array-like"],
        "n_features": [Interval(Integral, 1, None, closed="left"), None],
    }

    _param_names = {"s": "startprob_", "t": "transmat_", "e": "emissionprob_"}

    def __init__(
        self,
        n_components=1,
        startprob_prior=1.0,
        transmat_prior=1.0,
        *,
        emissionprob_prior=1.0,
        n_features=None,
        algorithm="viterbi",
        random_state=None,
        n_iter=10,
        tol=1e-2,
        verbose=False,
        params="ste",
        init_params="ste",
        implementation="log",
        n_init=1,
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
        self.n_init = n_init

    @property
    def n_features(self):
        """The alphabet size: as given, or (as in hmmlearn) the one ``fit``
        inferred when None was given."""
        given = self.__dict__.get("_n_features_given")
        fitted = self.__dict__.get("symbols_")
        if given is None and fitted is not None and fitted.dtype.kind in "iu":
            return len(fitted)
        return given

    @n_features.setter
    def n_features(self, value):
        self._n_features_given = value

    def _check_and_set_n_features(self, X):
        """hmmlearn's hook: check X holds non-negative integer symbols and set
        ``n_features`` (the alphabet size) if it is not set."""
        X = np.asarray(X)
        if X.dtype.kind not in "iu" or (X.size and X.min() < 0):
            raise ValueError("symbols must be non-negative integers")
        top = int(X.max()) + 1 if X.size else 0
        given = self.__dict__.get("_n_features_given")
        if given is not None and top > given:
            raise ValueError(f"symbol {top - 1} is out of range for n_features={given}")
        if given is None:
            self.n_features = top

    def _is_rows(self, rows):
        # hmmlearn's rows form is one column of symbols; a rectangular list of
        # longer rows is a list of sequences of equal length.
        return rows.shape[1] == 1

    def _encode(self, X, reset, as_list=False):
        X = np.asarray(X)
        if X.ndim == 2 and X.shape[1] == 1:
            X = X[:, 0]
        if X.ndim != 1:
            raise ValueError(
                "CategoricalHMM takes one symbol per step: X must be a column "
                f"(n_steps, 1) or a list of 1-d sequences, got shape {X.shape}"
            )
        missing = is_missing(X)
        if missing.any():
            raise ValueError("X has missing symbols (NaN or None)")
        integer = X.dtype.kind in "iu" or (
            X.dtype.kind == "f" and np.all(X == np.round(X))
        )
        if reset:
            given = self.__dict__.get("_n_features_given")
            if given is not None or integer:
                if not integer:
                    raise ValueError(
                        "with n_features given, symbols must be the integers "
                        "0 .. n_features - 1"
                    )
                X = X.astype(np.intp)
                if (X < 0).any():
                    raise ValueError("symbols must be non-negative integers")
                top = int(X.max()) + 1
                if given is not None and top > given:
                    raise ValueError(
                        f"symbol {top - 1} is out of range for n_features={given}"
                    )
                self.symbols_ = np.arange(given or top)
            else:
                self.symbols_ = fit_categories(X, missing)
            self.n_features_ = len(self.symbols_)
        if self.symbols_.dtype.kind in "iu":
            if not integer:
                raise ValueError("this model's symbols are integers")
            X = X.astype(np.intp, copy=False)
        codes = encode_column(X, self.symbols_, missing)
        if (codes < 0).any():
            bad = X[np.argmax(codes < 0)].tolist()
            raise ValueError(
                f"symbol {bad!r} was not seen in fit (symbols are "
                f"{self.symbols_.tolist()[:10]}); declare the alphabet with "
                "n_features to give unseen integer symbols a probability"
            )
        return codes

    def _check_emission_params(self):
        by_hand = not hasattr(self, "symbols_")
        if by_hand:
            # Parameters set by hand, without fit: the symbols are the
            # integers 0 .. n - 1, n from n_features or from emissionprob_.
            n = self.n_features
            if n is None:
                n = np.shape(self.emissionprob_)[-1]
        else:
            n = self.n_features_
        shape = (self.n_components, n)
        e = np.asarray(self.emissionprob_, dtype=float)
        if e.shape != shape:
            raise ValueError(f"emissionprob_ must have shape {shape}, got {e.shape}")
        if (e < 0).any() or not np.allclose(e.sum(axis=1), 1.0):
            raise ValueError(
                "emissionprob_ must be non-negative with rows summing to one"
            )
        self.emissionprob_ = e
        if by_hand:
            self.symbols_ = np.arange(n)
            self.n_features_ = n

    def _make_priors(self):
        super()._make_priors()
        self._emissionprob_dirichlet = Dirichlet(self.emissionprob_prior)

    def _init_emission(self, codes, row_weight, random_state):
        if "e" in self._to_init:
            e = random_state.rand(self.n_components, self.n_features_)
            self.emissionprob_ = e / e.sum(axis=1, keepdims=True)

    def _emission_messages(self, codes):
        # A table of one row per symbol, looked up by the chain kernels.
        return safe_log(self.emissionprob_).T, codes

    def _update_emission(self, codes, resp, post):
        if "e" not in self.params:
            return np.zeros(self.n_components, dtype=bool)
        counts = post.symbol_counts.T  # expected count of every symbol per state
        self.emissionprob_, empty = self._emissionprob_dirichlet.map(
            counts, self.emissionprob_
        )
        return empty

    def _emission_log_prior(self):
        return self._emissionprob_dirichlet.log_density(self.emissionprob_)

    def _get_emission(self):
        return (self.emissionprob_.copy(),)

    def _set_emission(self, params):
        (self.emissionprob_,) = params

    def _emission_n_parameters(self):
        if "e" not in self.params:
            return 0
        return self.n_components * (self.n_features_ - 1)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False  # one column of symbols per step
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags

    def _sample_emissions(self, states, rng):
        cdf = np.cumsum(self.emissionprob_[states], axis=1)
        codes = (rng.random_sample(len(states))[:, None] > cdf).sum(axis=1)
        return self.symbols_[np.minimum(codes, self.n_features_ - 1)][:, None]


class GaussianHMM(_BaseHMM):
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
        initialises ``covars_`` (as hmmlearn).
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

    Attributes
    ----------
    startprob_, transmat_, monitor_, converged_, n_iter_, lower_bound_
        As :class:`CategoricalHMM`.
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
    CategoricalHMM, HMMClassifier

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

    The monitored objective adds to the log-likelihood the log density of
    the priors whose MAP update the M-step is, so it never decreases.

    Initialisation: with 'spherical', ``fit`` starts every state's variance
    at the mean of the data's variances plus ``min_covar`` (hmmlearn averages
    every entry of the covariance matrix, off-diagonal ones too, which can be
    negative). The means start from k-means with one run.

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
        **_BaseHMM._parameter_constraints,
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

    _param_names = {
        "s": "startprob_",
        "t": "transmat_",
        "m": "means_",
        "c": "covars_",
    }

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

    # -- hmmlearn's covariance form ----------------------------------------------
    @property
    def covars_(self):
        """Every state's full covariance matrix, ``(n_components, d, d)``."""
        c = np.asarray(self._covars_, dtype=float)
        k = self.n_components
        if self.covariance_type == "full":
            return c.copy()
        if self.covariance_type == "tied":
            return np.repeat(c[None], k, axis=0)
        if self.covariance_type == "diag":
            return c[:, :, None] * np.eye(c.shape[1])
        d = np.shape(self.means_)[1] if hasattr(self, "means_") else self.n_features
        return c[:, None, None] * np.eye(d)

    @covars_.setter
    def covars_(self, covars):
        self._covars_ = _compact_covars(covars, self.covariance_type, self.n_components)

    @property
    def covariances_(self):
        """The covariances in the covariance type's own shape."""
        return np.array(self._covars_, dtype=float, copy=True)

    @property
    def n_features(self):
        """Dimension of the observations (hmmlearn's name)."""
        if hasattr(self, "n_features_in_"):
            return self.n_features_in_
        if "_n_features" in self.__dict__:
            return self._n_features
        if hasattr(self, "means_"):
            return np.shape(self.means_)[1]
        raise AttributeError("n_features is set by fit")

    @n_features.setter
    def n_features(self, value):
        self._n_features = int(value)

    # -- emissions ---------------------------------------------------------------
    def _encode(self, X, reset, as_list=False):
        if as_list and np.ndim(X) == 1:
            X = np.asarray(X)[:, None]  # univariate sequences given as 1-d arrays
        X = validate_data(self, X, reset=reset, dtype=np.float64)
        if reset:
            self._family = Gaussian(covariance_from_name(self.covariance_type))
        return X

    def _is_rows(self, rows):
        return True  # any rectangular numeric table: steps by features

    def _check_emission_params(self):
        if self.covariance_type not in ("spherical", "diag", "full", "tied"):
            raise ValueError(
                "covariance_type must be 'spherical', 'diag', 'full' or 'tied', "
                f"got {self.covariance_type!r}"
            )
        if not hasattr(self, "n_features_in_"):
            # Parameters set by hand, without fit.
            means = np.asarray(self.means_, dtype=float)
            if means.ndim != 2:
                raise ValueError(
                    f"means_ must have shape (n_components, n_features), got "
                    f"{means.shape}"
                )
            self.n_features_in_ = means.shape[1]
            self._family = Gaussian(covariance_from_name(self.covariance_type))
            self._center = means.mean(axis=0)
        if not hasattr(self, "_family"):
            self._family = Gaussian(covariance_from_name(self.covariance_type))
        k, d = self.n_components, self.n_features_in_
        self.means_ = np.asarray(self.means_, dtype=float)
        if self.means_.shape != (k, d):
            raise ValueError(
                f"means_ must have shape ({k}, {d}), got {self.means_.shape}"
            )
        if not hasattr(self, "_center"):
            self._center = self.means_.mean(axis=0)
        shape = self._family.covariance.shape(k, d)
        if np.shape(self._covars_) != shape:
            raise ValueError(
                f"covars_ must have shape {shape} for covariance_type="
                f"{self.covariance_type!r}, got {np.shape(self._covars_)}"
            )
        seen = getattr(self, "_covars_seen", None)
        if seen is None or not np.array_equal(seen, self._covars_):
            self._set_precisions()  # covars_ was set by hand

    def _init_emission(self, X, row_weight, random_state):
        k = self.n_components
        self._center = np.average(X, axis=0, weights=row_weight)
        self._stats_family = Gaussian(
            covariance_from_name(
                "full" if self.covariance_type in ("full", "tied") else "diag"
            )
        )
        if "m" in self._to_init:
            km = KMeans(n_clusters=k, n_init=1, random_state=random_state)
            self.means_ = km.fit(X, sample_weight=row_weight).cluster_centers_
        if "c" in self._to_init:
            stats = Gaussian(covariance_from_name("full")).stats(X, row_weight[:, None])
            total = row_weight.sum()
            # The data's covariance (hmmlearn's np.cov: divided by n - 1).
            cov = stats.scatter[0] / max(total - 1.0, 1.0)
            cov += self.min_covar * np.eye(X.shape[1])
            self._covars_ = {
                "full": np.repeat(cov[None], k, axis=0),
                "tied": cov,
                "diag": np.repeat(np.diag(cov)[None], k, axis=0),
                "spherical": np.full(k, np.mean(np.diag(cov))),
            }[self.covariance_type]
        self._set_precisions()

    def _set_precisions(self):
        cov = self._family.covariance
        covars = np.array(self._covars_, dtype=float)
        try:
            self._prec_chol = cov.precision_cholesky(covars)
        except np.linalg.LinAlgError:
            if self.covariance_type not in ("full", "tied") or not self.min_covar:
                raise ValueError("covars_ must be positive definite") from None
            # hmmlearn's rescue of a singular full covariance (a state stuck
            # on too few observations): its densities use covars_ + min_covar I.
            _log.warning(
                "a covariance is singular; its densities use covars_ + min_covar "
                "* I, as hmmlearn's"
            )
            try:
                self._prec_chol = cov.precision_cholesky(
                    covars + self.min_covar * np.eye(covars.shape[-1])
                )
            except np.linalg.LinAlgError:
                raise ValueError("covars_ must be positive definite") from None
        if not np.all(np.isfinite(self._prec_chol)):
            raise ValueError("covars_ must be positive definite")
        self._covars_ = covars
        self._covars_seen = covars.copy()
        self._log_det = cov.log_det_precision_cholesky(
            self._prec_chol, self.n_features_in_
        )

    def _emission_messages(self, X):
        return self._log_emission(X), None

    def _log_emission(self, X):
        params = GaussianParams(
            self.means_, self._covars_, self._prec_chol, self._log_det, self._center
        )
        return self._family.log_likelihood(X, params)

    def _priors(self, d):
        """hmmlearn's priors broadcast to the parameters' shapes, and bayeskit's."""
        k = self.n_components
        m0 = np.broadcast_to(np.asarray(self.means_prior, dtype=float), (k, d))
        w = np.asarray(self.means_weight, dtype=float)
        w = np.broadcast_to(w[:, None] if w.ndim == 1 else w, (k, d))
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
        S = check_covariance_prior(self.covariance_prior, d)
        return m0, w, eta, S

    def _update_emission(self, X, resp, post):
        k, d = self.n_components, X.shape[1]
        stats = self._stats_family.stats(X, resp)
        n = resp.sum(axis=0)
        empty = n <= 0
        m0, w, eta, S = self._priors(d)
        w_col = w
        xbar = np.where(empty[:, None], self.means_, stats.mean)
        if "m" in self.params:
            denom = w_col + n[:, None]
            with np.errstate(invalid="ignore", divide="ignore"):
                mu = (w_col * m0 + n[:, None] * xbar) / denom
            self.means_ = np.where(denom > 0, mu, self.means_)
        if "c" in self.params:
            mu = self.means_
            a = np.asarray(self.covars_weight, dtype=float)
            P = np.asarray(self.covars_prior, dtype=float)
            delta_prior = mu - m0
            shift = xbar - mu
            if self.covariance_type in ("diag", "spherical"):
                scatter = np.asarray(stats.scatter)
                c_n = w_col * delta_prior**2 + scatter + n[:, None] * shift**2
                num = np.broadcast_to(P, (k, d)) + c_n + eta * np.diag(S)
                den = np.maximum(a - 1, 0) + n[:, None] + eta
                cov = num / np.maximum(den, 1e-5)
                if self.covariance_type == "spherical":
                    cov = cov.mean(axis=1)
            else:
                scatter = np.asarray(stats.scatter)
                c_n = w[:, :1, None] * delta_prior[:, :, None] * delta_prior[:, None, :]
                c_n = (
                    c_n
                    + scatter
                    + n[:, None, None] * (shift[:, :, None] * shift[:, None, :])
                )
                a_eff = np.maximum(a - d, 0)
                if self.covariance_type == "tied":
                    num = np.broadcast_to(P, (d, d)) + c_n.sum(axis=0) + eta * S
                    cov = num / (a_eff + n.sum() + eta)
                else:
                    num = np.broadcast_to(P, (k, d, d)) + c_n + eta * S
                    with np.errstate(divide="ignore", invalid="ignore"):
                        cov = num / (a_eff + n + eta)[..., None, None]
            if self.covariance_type != "tied" and empty.any():
                # A state no sequence visited keeps its covariance (hmmlearn's
                # update divides by its zero count).
                old = np.asarray(self._covars_, dtype=float)
                cov = np.where(empty.reshape((k,) + (1,) * (cov.ndim - 1)), old, cov)
            if self.reg_covar:
                if self.covariance_type in ("full", "tied"):
                    cov = cov + self.reg_covar * np.eye(d)
                else:
                    cov = cov + self.reg_covar
            self._covars_ = cov
            try:
                self._set_precisions()
            except ValueError:
                raise ValueError(
                    "a state's covariance is singular: increase covars_prior, or "
                    "set covariance_prior_weight > 0 or reg_covar > 0"
                ) from None
        return empty

    def _emission_log_prior(self):
        """Log density (up to its constant) of the priors the M-step maximises."""
        d = self.n_features_in_
        m0, w, eta, S = self._priors(d)
        w_col = w
        a = np.asarray(self.covars_weight, dtype=float)
        P = np.asarray(self.covars_prior, dtype=float)
        delta = self.means_ - m0
        cov = np.asarray(self._covars_, dtype=float)
        if self.covariance_type in ("diag", "spherical"):
            var = cov if cov.ndim == 2 else np.repeat(cov[:, None], d, axis=1)
            num = np.broadcast_to(P, var.shape) + w_col * delta**2 + eta * np.diag(S)
            coef = np.maximum(a - 1, 0) + eta
            with np.errstate(divide="ignore"):
                return float(np.sum(-0.5 * coef * np.log(var) - 0.5 * num / var))
        outer = w[:, :1, None] * delta[:, :, None] * delta[:, None, :]
        if self.covariance_type == "tied":
            num = np.broadcast_to(P, (d, d)) + outer.sum(axis=0) + eta * S
            prec = self._prec_chol[None]  # the factors the densities use
            num = num[None]
        else:
            num = np.broadcast_to(P, outer.shape) + outer + eta * S
            prec = self._prec_chol
        coef = np.maximum(a - d, 0) + eta
        # log|Sigma| = -2 log|U| and tr(M Sigma^-1) = tr(U^T M U), U U^T = Sigma^-1.
        log_det = -2.0 * np.log(np.diagonal(prec, axis1=1, axis2=2)).sum()
        trace = np.einsum("kji,kjl,kli->", prec, num, prec)
        return float(-0.5 * coef * log_det - 0.5 * trace)

    def _get_emission(self):
        return (self.means_.copy(), np.array(self._covars_, copy=True))

    def _set_emission(self, params):
        self.means_, self._covars_ = params
        self._set_precisions()

    def _emission_n_parameters(self):
        k, d = self.n_components, self.n_features_in_
        n = k * d if "m" in self.params else 0
        if "c" in self.params:
            n += self._family.covariance.n_parameters(k, d)
        return n

    def _sample_emissions(self, states, rng):
        d = self.n_features_in_
        out = np.empty((len(states), d))
        cov = self._family.covariance
        for k in range(self.n_components):
            rows = states == k
            dense = cov.dense(self._covars_, k, d)
            out[rows] = rng.multivariate_normal(self.means_[k], dense, rows.sum())
        return out


def _compact_covars(covars, covariance_type, n_components):
    """hmmlearn's covars_ setter: the covariance type's own shape."""
    c = np.array(covars, dtype=float, copy=True)
    k = n_components
    if covariance_type == "spherical":
        # Any shape with one value per state (hmmlearn flattens it).
        if c.ndim >= 1 and c.shape[0] == k and c.size % k == 0:
            rows = c.reshape(k, -1)
            if np.all(rows == rows[:, :1]):
                return rows[:, 0].copy()
        raise ValueError(
            f"covars_ must have shape ({k},) for covariance_type='spherical' "
            f"(one variance per state), got {c.shape}"
        )
    ndim = {"diag": 2, "tied": 2, "full": 3}.get(covariance_type)
    if ndim is None:
        raise ValueError(
            "covariance_type must be 'spherical', 'diag', 'full' or 'tied', got "
            f"{covariance_type!r}"
        )
    if c.ndim != ndim or (ndim == 3 and c.shape[1] != c.shape[2]):
        shape = {
            "diag": "(n_components, n_features)",
            "tied": "(n_features, n_features)",
            "full": "(n_components, n_features, n_features)",
        }[covariance_type]
        raise ValueError(
            f"covars_ must have shape {shape} for covariance_type="
            f"{covariance_type!r}, got {c.shape}"
        )
    return c
