"""Hidden Markov models: CategoricalHMM, GaussianHMM and sequence classification.

The latent structure is a chain of state nodes; inference is the graph core's
chain kernels (forward-backward = sum-product, Viterbi = max-product), fed by
the emission family's log-likelihoods; learning (Baum-Welch) is the emission
family's statistics under the step posteriors plus the expected start and
transition counts, turned into MAP parameters by Dirichlet priors (reference
notes 003, 3.3-3.4).

Sequences come in two forms, both first class: hmmlearn's rows of all
sequences concatenated plus ``lengths``, and a list with one array per
sequence (so scikit-learn's splitters split whole sequences). Methods that
return per-step results return them in the form they were given.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state

from .._logmath import safe_log
from .._validation import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    _num_samples,
    check_covariance_prior,
    check_is_fitted,
    validate_data,
)
from ..emissions import Gaussian, GaussianParams, covariance_from_name
from ..graph.chain import forward, forward_backward, viterbi
from ._encoding import encode_column, fit_categories, is_missing
from .base import BaseGenerativeClassifier, BaseLatentModel

__all__ = ["CategoricalHMM", "ConvergenceMonitor", "GaussianHMM", "HMMClassifier"]


@dataclass
class ConvergenceMonitor:
    """What Baum-Welch did, as hmmlearn's monitor reports it.

    Attributes
    ----------
    tol : float
    n_iter : int
        The iteration budget.
    history : list of float
        The log posterior (log-likelihood of all sequences plus the log of the
        Dirichlet and covariance priors) of every iteration, best start only.
    iter : int
        Iterations run.
    converged : bool
    """

    tol: float
    n_iter: int
    history: list = field(default_factory=list)
    iter: int = 0
    converged: bool = False


def _dirichlet_map(counts, concentration, previous):
    """hmmlearn's MAP update ``max(counts + alpha - 1, 0)``, row-normalised.

    Entries that are exactly zero in ``previous`` stay zero (structural zeros
    survive EM). A row with nothing to normalise keeps ``previous``; the
    second value says which rows did.
    """
    new = np.maximum(counts + concentration - 1.0, 0.0)
    new = np.where(previous == 0, 0.0, new)
    total = new.sum(axis=-1, keepdims=True)
    empty = total[..., 0] <= 0
    out = np.where(total > 0, new / np.where(total > 0, total, 1.0), previous)
    return out, empty


def _dirichlet_log_prior(prob, concentration):
    """``sum (alpha - 1) log p`` (the Dirichlet density up to its constant)."""
    alpha = np.broadcast_to(np.asarray(concentration, dtype=float), prob.shape)
    weight = alpha - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(weight == 0, 0.0, weight * safe_log(prob))
    return float(terms.sum())


def _is_sequence_list(X) -> bool:
    """Whether X is a non-empty list (or tuple) whose elements are all sequences."""
    return (
        isinstance(X, (list, tuple))
        and len(X) > 0
        and all(hasattr(s, "__len__") and not isinstance(s, (str, bytes)) for s in X)
    )


def _peer_rows(X):
    """X as hmmlearn reads it (``np.asarray``), or None when that is no array."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            arr = np.asarray(X)
    except ValueError:  # ragged: sequences of different lengths
        return None
    return None if arr.dtype.kind == "O" else arr


def _check_sequence_weight(sequence_weight, n_sequences: int) -> np.ndarray:
    """One non-negative, finite weight per sequence, not all zero."""
    if sequence_weight is None:
        return np.ones(n_sequences)
    weights = np.asarray(sequence_weight)
    if weights.shape != (n_sequences,) or weights.dtype.kind not in "iuf":
        raise ValueError(
            f"sequence_weight must be {n_sequences} numbers, one per sequence; "
            f"got shape {weights.shape} of dtype {weights.dtype}"
        )
    weights = weights.astype(np.float64)
    if not np.all((weights >= 0) & (weights < np.inf)) or not weights.sum() > 0:
        raise ValueError(
            "sequence_weight must be non-negative and finite, and not all zero"
        )
    return weights


def _check_lengths(lengths, n_rows: int) -> np.ndarray:
    """hmmlearn's ``lengths``: positive integers, one per sequence, summing to the
    number of rows. A scikit-learn target ``y`` passed in its place is an error."""
    if isinstance(lengths, (str, bytes)) or np.ndim(lengths) > 1:
        valid = None
    else:
        valid = np.asarray(lengths)
        if valid.ndim == 0:
            valid = valid.reshape(1)
    if (
        valid is None
        or valid.dtype.kind not in "iuf"
        or valid.size == 0
        or not np.all(valid == np.round(valid))
        or (valid <= 0).any()
        or valid.sum() != n_rows
    ):
        got = np.asarray(lengths, dtype=object).ravel()
        shown = got[:6].tolist() + (["..."] if got.size > 6 else [])
        raise ValueError(
            "lengths (the second positional argument, as in hmmlearn) must be "
            f"positive integers summing to the {n_rows} rows of X, one per "
            f"sequence; got {shown}. A hidden Markov model has no target: call "
            "fit(X) or score(X) without y (scikit-learn's y, always ignored, may "
            "be given by keyword, y=...), or give X as a list of sequences"
        )
    return valid.astype(np.intp)


def _split(values: np.ndarray, lengths: np.ndarray) -> list:
    return np.split(values, np.cumsum(lengths)[:-1])


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
    }
    _chain_params = "st"
    warm_start = False
    _convergence_advice = (
        "increase n_iter or tol, or try another random_state or n_init"
    )

    # -- input -------------------------------------------------------------------
    def _sequences(self, X, lengths, reset):
        """``(Xt, lengths, as_list)`` with the rows of all sequences concatenated."""
        seqs = self._sequence_list(X) if lengths is None else None
        as_list = seqs is not None
        if as_list:
            lengths = np.array([len(s) for s in seqs])
            if (lengths == 0).any():
                raise ValueError(
                    f"sequence {int(np.argmax(lengths == 0))} is empty; every "
                    "sequence needs at least one step"
                )
            X = np.concatenate(seqs, axis=0)
        else:
            if _num_samples(X) == 0:
                raise ValueError("X has 0 steps; at least one is required")
            n_rows = _num_samples(X)
            lengths = (
                np.array([n_rows])
                if lengths is None
                else _check_lengths(lengths, n_rows)
            )
        return self._encode(X, reset, as_list), lengths, as_list

    def _sequence_list(self, X):
        """X's sequences if X is bayeskit's list-of-sequences form, else None.

        The peer's meaning wins: a list that ``np.asarray`` turns into a
        rectangular array of rows the model reads (:meth:`_is_rows`) is
        hmmlearn's rows form, one sequence. Otherwise a list whose elements are
        all sequences is one sequence per element.
        """
        if not _is_sequence_list(X):
            return None
        rows = _peer_rows(X)
        if rows is not None and rows.ndim == 2 and self._is_rows(rows):
            return None
        seqs = [np.asarray(s) for s in X]
        if len({s.ndim for s in seqs}) > 1:
            raise ValueError(
                "X is a list mixing sequences of different dimensions "
                f"({sorted({s.ndim for s in seqs})}); give every sequence in the "
                "same form, or pass the rows of all sequences with lengths="
            )
        return seqs

    def _back(self, values, lengths, as_list):
        return _split(values, lengths) if as_list else values

    # -- parameters --------------------------------------------------------------
    def _check_chain_params(self):
        k = self.n_components
        for name, shape in (("startprob_", (k,)), ("transmat_", (k, k))):
            value = np.asarray(getattr(self, name), dtype=float)
            if value.shape != shape:
                raise ValueError(f"{name} must have shape {shape}, got {value.shape}")
            if (value < 0).any() or not np.allclose(value.sum(axis=-1), 1.0):
                raise ValueError(
                    f"{name} must be non-negative with rows summing to one"
                )
        self._check_emission_params()

    def _initialize(self, X, sample_weight, random_state):
        Xt, lengths, _ = X
        k = self.n_components
        if "s" in self.init_params:
            self.startprob_ = random_state.dirichlet(np.full(k, 1.0))
        if "t" in self.init_params:
            self.transmat_ = random_state.dirichlet(np.full(k, 1.0), size=k)
        self._init_emission(Xt, np.repeat(sample_weight, lengths), random_state)
        for name in ("startprob_", "transmat_"):
            if not hasattr(self, name):
                raise ValueError(
                    f"{name} is not in init_params and was not set before fit"
                )
        self._check_chain_params()

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
            _dirichlet_log_prior(self.startprob_, self.startprob_prior)
            + _dirichlet_log_prior(self.transmat_, self.transmat_prior)
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
            self.startprob_, _ = _dirichlet_map(
                resp[starts].sum(axis=0), self.startprob_prior, self.startprob_
            )
        if "t" in self.params:
            self.transmat_, empty_rows = _dirichlet_map(
                post.transition_counts, self.transmat_prior, self.transmat_
            )
            empty |= empty_rows
        empty |= self._update_emission(Xt, resp, post)
        self._unvisited |= set(np.flatnonzero(empty).tolist())

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
        self._unvisited = set()
        rng = check_random_state(self.random_state)
        self._run_em((Xt, lengths, weights), weights, rng, self.n_iter)
        self.monitor_ = ConvergenceMonitor(
            self.tol,
            self.n_iter,
            list(self.lower_bounds_),
            self.n_iter_,
            self.converged_,
        )
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
        updates and which ``fit`` initialises at random; a parameter left out
        of ``init_params`` must be set before ``fit``.
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
    monitor_ : ConvergenceMonitor
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
    ``(n_steps, 1)`` arrays) is one sequence per element.

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

    def __init__(
        self,
        n_components=1,
        *,
        startprob_prior=1.0,
        transmat_prior=1.0,
        emissionprob_prior=1.0,
        n_features=None,
        algorithm="viterbi",
        random_state=None,
        n_iter=10,
        tol=1e-2,
        verbose=False,
        params="ste",
        init_params="ste",
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
        self.n_init = n_init

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
            if self.n_features is not None or integer:
                if not integer:
                    raise ValueError(
                        "with n_features given, symbols must be the integers "
                        "0 .. n_features - 1"
                    )
                X = X.astype(np.intp)
                if (X < 0).any():
                    raise ValueError("symbols must be non-negative integers")
                top = int(X.max()) + 1
                if self.n_features is not None and top > self.n_features:
                    raise ValueError(
                        f"symbol {top - 1} is out of range for n_features="
                        f"{self.n_features}"
                    )
                self.symbols_ = np.arange(self.n_features or top)
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
        if not hasattr(self, "symbols_"):
            # Parameters set by hand, without fit: the symbols are the
            # integers 0 .. n - 1, n from n_features or from emissionprob_.
            n = self.n_features
            if n is None:
                n = np.shape(self.emissionprob_)[-1]
            self.symbols_ = np.arange(n)
            self.n_features_ = n
        shape = (self.n_components, self.n_features_)
        e = np.asarray(self.emissionprob_, dtype=float)
        if e.shape != shape:
            raise ValueError(f"emissionprob_ must have shape {shape}, got {e.shape}")
        if (e < 0).any() or not np.allclose(e.sum(axis=1), 1.0):
            raise ValueError(
                "emissionprob_ must be non-negative with rows summing to one"
            )

    def _init_emission(self, codes, row_weight, random_state):
        if "e" in self.init_params:
            e = random_state.rand(self.n_components, self.n_features_)
            self.emissionprob_ = e / e.sum(axis=1, keepdims=True)
        elif not hasattr(self, "emissionprob_"):
            raise ValueError("emissionprob_ is not in init_params and was not set")

    def _emission_messages(self, codes):
        # A table of one row per symbol, looked up by the chain kernels.
        return safe_log(self.emissionprob_).T, codes

    def _update_emission(self, codes, resp, post):
        if "e" not in self.params:
            return np.zeros(self.n_components, dtype=bool)
        counts = post.symbol_counts.T  # expected count of every symbol per state
        self.emissionprob_, empty = _dirichlet_map(
            counts, self.emissionprob_prior, self.emissionprob_
        )
        return empty

    def _emission_log_prior(self):
        return _dirichlet_log_prior(self.emissionprob_, self.emissionprob_prior)

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

    The emission is the Gaussian family bayeskit's mixtures and discriminant
    analysis share, with its MAP covariance prior.

    Parameters
    ----------
    n_components : int, default=1
    covariance_type : {'spherical', 'diag', 'full', 'tied'}, default='diag'
    covariance_prior : array-like of shape (n_features, n_features), default=None
        The prior scatter ``S`` (None: the identity).
    covariance_prior_weight : float, default=0.0
        Its weight ``eta``: ``Sigma_k = (S_k + eta S) / (n_k + eta) + reg_covar``.
    reg_covar : float, default=1e-6
        Added to the diagonal of every covariance.
    startprob_prior, transmat_prior, algorithm, random_state, n_iter, tol, \
verbose, n_init
        As :class:`CategoricalHMM`.
    params, init_params : str, default='stmc'
        s: start, t: transitions, m: means, c: covariances.

    Attributes
    ----------
    startprob_, transmat_, monitor_, converged_, n_iter_, lower_bound_
        As :class:`CategoricalHMM`.
    means_ : ndarray of shape (n_components, n_features)
    covars_ : ndarray
        Covariances in the covariance type's shape (as
        :class:`~bayeskit.GaussianMixture`'s ``covariances_``).

    Notes
    -----
    ``lengths`` is the second positional argument of every method, as in
    hmmlearn (see :class:`CategoricalHMM`). How a list ``X`` is read: a list
    that ``np.asarray`` turns into a rectangular 2-D numeric array, such as
    ``[[0.1, 2.0], [0.3, 1.5]]``, is hmmlearn's rows form (steps by features),
    one sequence; this includes a list of 1-d arrays of equal length. A list of
    2-D arrays (one ``(n_steps, n_features)`` array per sequence), or of 1-d
    univariate sequences of different lengths, is one sequence per element.
    Write univariate sequences of equal length as columns, shape
    ``(n_steps, 1)``. A list mixing both dimensions is an error.

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
        "covariance_prior": ["array-like", None],
        "covariance_prior_weight": [Interval(Real, 0, None, closed="left")],
        "reg_covar": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        n_components=1,
        *,
        covariance_type="diag",
        covariance_prior=None,
        covariance_prior_weight=0.0,
        reg_covar=1e-6,
        startprob_prior=1.0,
        transmat_prior=1.0,
        algorithm="viterbi",
        random_state=None,
        n_iter=10,
        tol=1e-2,
        verbose=False,
        params="stmc",
        init_params="stmc",
        n_init=1,
    ):
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.covariance_prior = covariance_prior
        self.covariance_prior_weight = covariance_prior_weight
        self.reg_covar = reg_covar
        self.startprob_prior = startprob_prior
        self.transmat_prior = transmat_prior
        self.algorithm = algorithm
        self.random_state = random_state
        self.n_iter = n_iter
        self.tol = tol
        self.verbose = verbose
        self.params = params
        self.init_params = init_params
        self.n_init = n_init

    def _is_rows(self, rows):
        return True  # any rectangular numeric table: steps by features

    def _encode(self, X, reset, as_list=False):
        if as_list and np.ndim(X) == 1:
            X = np.asarray(X)[:, None]  # univariate sequences given as 1-d arrays
        X = validate_data(self, X, reset=reset, dtype=np.float64)
        if reset:
            self._family = Gaussian(covariance_from_name(self.covariance_type))
        return X

    def _check_emission_params(self):
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
        k, d = self.n_components, self.n_features_in_
        if np.shape(self.means_) != (k, d):
            raise ValueError(f"means_ must have shape ({k}, {d})")
        shape = self._family.covariance.shape(k, d)
        if np.shape(self.covars_) != shape:
            raise ValueError(
                f"covars_ must have shape {shape} for covariance_type="
                f"{self.covariance_type!r}, got {np.shape(self.covars_)}"
            )
        seen = getattr(self, "_covars_seen", None)
        if seen is None or not np.array_equal(seen, self.covars_):
            self._set_precisions()  # covars_ was set by hand

    def _init_emission(self, X, row_weight, random_state):
        k = self.n_components
        self._center = np.average(X, axis=0, weights=row_weight)
        if "m" in self.init_params:
            km = KMeans(n_clusters=k, n_init=1, random_state=random_state)
            self.means_ = km.fit(X, sample_weight=row_weight).cluster_centers_
        if "c" in self.init_params:
            stats = Gaussian(covariance_from_name("full")).stats(X, row_weight[:, None])
            cov = stats.scatter[0] / row_weight.sum()
            cov += self.reg_covar * np.eye(X.shape[1])
            self.covars_ = {
                "full": np.repeat(cov[None], k, axis=0),
                "tied": cov,
                "diag": np.repeat(np.diag(cov)[None], k, axis=0),
                "spherical": np.full(k, np.mean(np.diag(cov))),
            }[self.covariance_type]
        for name in ("means_", "covars_"):
            if not hasattr(self, name):
                raise ValueError(f"{name} is not in init_params and was not set")
        self._set_precisions()

    def _set_precisions(self):
        cov = self._family.covariance
        covars = np.array(self.covars_, dtype=float)
        try:
            self._prec_chol = cov.precision_cholesky(covars)
        except np.linalg.LinAlgError:
            raise ValueError("covars_ must be positive definite") from None
        self._covars_seen = covars
        self._log_det = cov.log_det_precision_cholesky(
            self._prec_chol, self.n_features_in_
        )

    def _emission_messages(self, X):
        return self._log_emission(X), None

    def _log_emission(self, X):
        params = GaussianParams(
            self.means_, self.covars_, self._prec_chol, self._log_det, self._center
        )
        return self._family.log_likelihood(X, params)

    def _update_emission(self, X, resp, post):
        stats = self._family.stats(X, resp)
        empty = stats.state_weight() <= 0
        try:
            params = self._family.map_params(
                stats,
                prior_weight=self.covariance_prior_weight,
                prior_scatter=check_covariance_prior(self.covariance_prior, X.shape[1]),
                reg=self.reg_covar,
            )
        except np.linalg.LinAlgError:
            raise ValueError(
                "a state's covariance is singular: set covariance_prior_weight > 0 "
                "or increase reg_covar"
            ) from None
        if "m" in self.params:
            self.means_ = np.where(empty[:, None], self.means_, params.means)
        if "c" in self.params:
            self.covars_ = params.covariances
            self._set_precisions()
        return empty

    def _emission_log_prior(self):
        return self._family.covariance.log_prior(
            self._prec_chol,
            check_covariance_prior(self.covariance_prior, self.n_features_in_),
            self.covariance_prior_weight,
        )

    def _get_emission(self):
        return (self.means_.copy(), np.array(self.covars_, copy=True))

    def _set_emission(self, params):
        self.means_, self.covars_ = params
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
            dense = cov.dense(self.covars_, k, d)
            out[rows] = rng.multivariate_normal(self.means_[k], dense, rows.sum())
        return out


class HMMClassifier(BaseGenerativeClassifier):
    """Sequence classification: one hidden Markov model per class.

    The latent structure is class -> chain: every class has its own HMM (a
    clone of ``hmm``), and the posterior over the class is the normalised
    product of the class prior and each class's sequence likelihood.

    Parameters
    ----------
    hmm : estimator, default=None
        The template model, cloned per class; None is ``CategoricalHMM()``.
        Grid-search its parameters as ``hmm__n_components``.
    priors, prior_m, costs
        As every bayeskit classifier. ``sample_weight`` in :meth:`fit` (one
        weight per sequence) weighs each sequence in its class's Baum-Welch:
        the template's ``fit(..., sequence_weight=)``, needed only for weights
        other than 1.

    Attributes
    ----------
    classes_, class_count_, class_log_prior_
    models_ : list
        The fitted model of each class.

    Examples
    --------
    >>> from bayeskit import CategoricalHMM, HMMClassifier
    >>> X = [[0, 0, 0, 1], [0, 0, 1, 0], [1, 1, 1, 0], [1, 0, 1, 1]]
    >>> clf = HMMClassifier(CategoricalHMM(1, random_state=0))
    >>> clf = clf.fit(X, ["a", "a", "b", "b"])
    >>> clf.predict([[0, 0, 0, 0], [1, 1, 1, 1]])
    array(['a', 'b'], dtype='<U1')
    """

    _additive_stats = False
    _parameter_constraints: dict = {
        **BaseGenerativeClassifier._parameter_constraints,
        "hmm": [None, HasMethods(["fit", "score_sequences"])],
    }

    def __init__(self, hmm=None, *, priors=None, prior_m=0.0, costs=None):
        self.hmm = hmm
        self.priors = priors
        self.prior_m = prior_m
        self.costs = costs

    def _prepare_X(self, X, reset, sample_weight=None):
        if not _is_sequence_list(X):
            raise ValueError(
                "HMMClassifier takes a list of sequences (one array per sequence)"
            )
        return [np.asarray(s) for s in X]

    def _emission_stats(self, seqs, weights, labels):
        template = self.hmm if self.hmm is not None else CategoricalHMM()
        models = []
        for c in range(len(self.classes_)):
            rows = np.flatnonzero((labels == c) & (weights[:, c] > 0))
            model = clone(template)
            w = weights[rows, c]
            # The rows of the class's sequences plus lengths: unambiguous even
            # when every sequence has one step.
            Xc, lengths = _concatenate([seqs[i] for i in rows])
            if np.all(w == 1.0):  # any template, even one without sample_weight
                model.fit(Xc, lengths=lengths)
            else:
                model.fit(Xc, lengths=lengths, sequence_weight=w)
            models.append(model)
        return _FittedModels(tuple(models))

    def _set_emission_params(self, stats):
        self.models_ = list(stats.models)

    def _log_likelihood(self, seqs):
        Xc, lengths = _concatenate(seqs)
        return np.column_stack(
            [m.score_sequences(Xc, lengths=lengths) for m in self.models_]
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        return tags


def _concatenate(seqs):
    """The rows of all sequences and their lengths (a 1-d sequence of numbers
    is one value per step)."""
    arrays = [np.asarray(s) for s in seqs]
    if all(a.ndim == 1 for a in arrays):
        arrays = [a[:, None] for a in arrays]
    return np.concatenate(arrays, axis=0), np.array([len(a) for a in arrays])


@dataclass(frozen=True)
class _FittedModels:
    models: tuple

    def __add__(self, other):
        raise ValueError(
            "HMMClassifier fits each class by Baum-Welch, whose statistics do not "
            "add across chunks: call fit on all the data"
        )
