"""Observable Markov chains of order k, and a sequence classifier over them.

A Markov chain of order ``k`` is the chain of :mod:`bayeskit.hmm` with
nothing hidden: every symbol is observed, so its learning is counts (of
every window of ``k + 1`` symbols, and of the first symbols of every
sequence) turned into probabilities by the m-estimate, with no EM.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, DensityMixin, clone
from sklearn.utils import check_random_state

from .._base.encoding import encode_column, fit_categories, is_missing
from .._base.sequences import _check_lengths, _check_sequence_weight
from .._collections import handler_for
from .._logmath import safe_log
from .._validation import HasMethods, Interval, _fit_context, check_is_fitted
from ._classifier import HMMClassifier

__all__ = ["MarkovChain", "MarkovChainClassifier", "MarkovChainStats"]

# The most cells a table of windows may have (alphabet ** (order + 1)).
_MAX_CELLS = 1 << 27
# Steps scored at once (see score_sequences).
_BLOCK = 1 << 20


@dataclass(frozen=True)
class MarkovChainStats:
    """Counts of a Markov chain of order ``k``: its sufficient statistics.

    Attributes
    ----------
    starts : tuple of ndarray
        ``starts[j]``, of shape ``(n_symbols,) * (j + 1)``: the weight of the
        sequences whose first ``j + 1`` symbols are the cell's, for
        ``j < k``.
    windows : ndarray of shape (n_symbols,) * (k + 1)
        The weight of every window of ``k + 1`` consecutive symbols.
    symbols : ndarray of shape (n_symbols,)
        The alphabet the axes are laid out in.
    """

    starts: tuple
    windows: np.ndarray
    symbols: np.ndarray = field(compare=False)

    def __add__(self, other):
        if not isinstance(other, MarkovChainStats):
            return NotImplemented
        if len(self.starts) != len(other.starts):
            raise ValueError("statistics of Markov chains of different orders")
        if not (
            len(self.symbols) == len(other.symbols)
            and np.array_equal(self.symbols, other.symbols)
        ):
            raise ValueError(
                "statistics over different alphabets; declare the alphabet "
                "with symbols= so that every chunk's counts share it"
            )
        return MarkovChainStats(
            tuple(a + b for a, b in zip(self.starts, other.starts)),
            self.windows + other.windows,
            self.symbols,
        )

    def __radd__(self, other):
        if isinstance(other, int) and other == 0:  # sum() starts from 0
            return self
        return NotImplemented

    @property
    def total_weight(self) -> float:
        """The weight of all the windows counted."""
        return float(self.windows.sum())


def _m_estimate(counts, m, p):
    """``log (n + m p) / (N + m)`` along the last axis; a context never seen
    with ``m = 0`` gets ``p`` itself (the m-estimate's limit)."""
    top = counts + m * p
    total = top.sum(axis=-1, keepdims=True)
    prob = np.where(total > 0, top / np.where(total > 0, total, 1.0), p)
    return safe_log(prob)


class MarkovChain(DensityMixin, BaseEstimator):
    """Observable Markov chain of order ``k`` over symbols of any kind.

    The probability of a sequence is that of its first symbols under the
    chains of lower order fitted on the starts of the sequences, times that
    of every later symbol given the ``k`` before it:

    .. math::

        p(x_1, \\ldots, x_T) = \\prod_{t=1}^{\\min(k, T)}
            p_{t}(x_t \\mid x_1, \\ldots, x_{t-1})
            \\prod_{t=k+1}^{T} p(x_t \\mid x_{t-k}, \\ldots, x_{t-1}).

    Parameters
    ----------
    order : int, default=1
        The number ``k`` of previous symbols a symbol depends on; 0 is an
        independent categorical distribution.
    alpha : float, default=1.0
        Additive smoothing of every table: the m-estimate with uniform ``p``
        and ``m = alpha * n_symbols`` (as :class:`~bayeskit.CategoricalNB`'s
        ``alpha``); 0 is maximum likelihood.
    m : float, default=None
        The m-estimate instead of ``alpha``: the equivalent sample size of
        every row, ``P(s | context) = (n(context, s) + m p_s) / (n(context) +
        m)`` (Mitchell 1997). Giving ``m`` and a non-default ``alpha`` is an
        error.
    p : array-like of shape (n_symbols,), default=None
        The prior distribution of the m-estimate, in the order of
        ``symbols_``; needs ``m``. None is uniform.
    symbols : array-like, default=None
        The alphabet, in the order of the tables' axes (symbols absent from
        the data kept, with the smoothing's probability). None: the symbols
        seen in the first fit, sorted.

    Attributes
    ----------
    symbols_ : ndarray of shape (n_symbols,)
        The alphabet.
    start_log_prob_ : list of ndarray
        ``start_log_prob_[j]``, of shape ``(n_symbols,) * (j + 1)``: the log
        probability of a sequence's symbol ``j`` given the ``j`` before it,
        for ``j < order``.
    log_prob_ : ndarray of shape (n_symbols,) * (order + 1)
        ``log p(x_t | x_{t-k}, ..., x_{t-1})`` indexed ``[x_{t-k}, ...,
        x_{t-1}, x_t]``.
    stats_ : MarkovChainStats
        The counts the tables come from.

    See Also
    --------
    CategoricalHMM : The same chain with hidden states.
    MarkovChainClassifier : One chain per class.

    Notes
    -----
    Sequences are given as one sequence (a 1-d array, a list of symbols or a
    string of characters), a list of sequences, a 2-d table with one sequence
    per row (pomegranate's layout), or hmmlearn's column of the symbols of
    all sequences, ``(n_steps, 1)``, with ``lengths``.

    On Dask input (a table with one sequence per row, a column with
    ``lengths``, or a bag with one sequence per item) :meth:`fit` and
    :meth:`partial_fit` sum the counts of every chunk where it lives (the
    counts add), and the predictions of a table of sequences are lazy, one
    row per sequence; a column or a bag is predicted in memory.

    The first ``k`` symbols of a sequence have no ``k`` predecessors. They
    are scored by the chains of lower order fitted on the starts of the
    sequences (symbol ``j`` of a sequence given symbols ``0 .. j - 1``, from
    the sequences at least ``j + 1`` long), as pomegranate's
    ``MarkovChain`` does; so a chain of order 1 is a start distribution and
    a transition matrix, exactly a hidden Markov model whose emissions are
    the identity. The alternative, the lower orders fitted on every window,
    would model the starts as typical positions, which they are not.

    References
    ----------
    .. [1] T. M. Mitchell, Machine Learning, McGraw-Hill, 1997, section 6.9.1.2
       (the m-estimate).
    .. [2] C. M. Bishop, Pattern Recognition and Machine Learning, Springer,
       2006, section 13.1.

    Examples
    --------
    >>> from bayeskit import MarkovChain
    >>> chain = MarkovChain(order=1, alpha=0).fit(["a", "b", "a", "b", "b"])
    >>> chain.predict_proba(["a"]).round(2)
    array([[0., 1.]])
    >>> chain.predict([["b", "a"], ["a", "b"]])
    array(['b', 'a'], dtype='<U1')
    """

    _parameter_constraints: dict = {
        "order": [Interval(Integral, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "m": [None, Interval(Real, 0, None, closed="left")],
        "p": [None, "array-like"],
        "symbols": [None, "array-like"],
    }

    def __init__(self, order=1, *, alpha=1.0, m=None, p=None, symbols=None):
        self.order = order
        self.alpha = alpha
        self.m = m
        self.p = p
        self.symbols = symbols

    # -- input -------------------------------------------------------------------
    def _flat(self, X, lengths) -> tuple[np.ndarray, np.ndarray]:
        """``(symbols, lengths)``: the symbols of all sequences in one array
        (typed as :func:`_tidy` types them) and every sequence's length."""
        if lengths is None or isinstance(X, str):
            seqs = self._sequences(X)
            if not seqs or any(len(s) == 0 for s in seqs):
                raise ValueError(
                    "X must hold at least one sequence, none of them empty"
                )
            return _concatenated(seqs), np.array([len(s) for s in seqs], np.intp)
        rows = np.asarray(X)
        if rows.ndim == 2 and rows.shape[1] == 1:
            rows = rows[:, 0]
        if rows.ndim != 1:
            raise ValueError(
                "with lengths, X must be the symbols of all sequences as "
                f"one column (n_steps, 1) or 1-d, got shape {rows.shape}"
            )
        lengths = _check_lengths(lengths, len(rows))
        # Read, never written: the caller's typed array is used as it is.
        flat = rows if rows.dtype.kind in "iufUSb" else _concatenated([rows])
        return flat, np.asarray(lengths, dtype=np.intp)

    def _sequences(self, X) -> list:
        """X, without ``lengths``, as a list of 1-d arrays of symbols (see the
        Notes)."""
        if isinstance(X, str):
            return [np.array(list(X))]
        if _has_sequences(X):
            seqs = [np.asarray(s).reshape(-1) for s in X]
            if all(len(s) == 1 for s in seqs):  # a column: one sequence
                return [np.concatenate(seqs)]
            return seqs
        rows = np.asarray(X)
        if rows.ndim == 1 or (rows.ndim == 2 and rows.shape[1] == 1):
            return [rows.reshape(-1)]
        if rows.ndim == 2:
            return list(rows)  # one sequence per row
        raise ValueError(f"X must be sequences of symbols, got shape {rows.shape}")

    def _codes(self, X, lengths, reset):
        """``(codes, lengths)``: the symbols of all sequences as codes of the
        alphabet, concatenated."""
        flat, lengths = self._flat(X, lengths)
        missing = is_missing(flat)
        if missing.any():
            raise ValueError(
                "X has a missing symbol (NaN or None) at step "
                f"{int(np.argmax(missing))}; a Markov chain observes every "
                "symbol: drop the step or split the sequence there"
            )
        if reset:
            if self.symbols is not None:
                symbols = np.asarray(self.symbols)
                if symbols.ndim != 1 or len(set(symbols.tolist())) != len(symbols):
                    raise ValueError("symbols must be a 1-d array of distinct symbols")
            else:
                symbols = fit_categories(flat, missing)
            n = len(symbols)
            if n ** (self.order + 1) > _MAX_CELLS:
                raise ValueError(
                    f"order={self.order} over {n} symbols needs a table of "
                    f"{n}**{self.order + 1} cells; lower the order"
                )
            self.symbols_ = symbols
        codes = encode_column(flat, _tidy(self.symbols_), missing)
        if (codes < 0).any():
            bad = flat[np.argmax(codes < 0)]
            raise ValueError(
                f"symbol {bad!r} is not in the alphabet (symbols_ starts "
                f"{self.symbols_.tolist()[:10]}); declare every symbol with "
                "symbols="
            )
        return codes, lengths

    # -- statistics ----------------------------------------------------------------
    def _smoothing(self):
        """``(m, p)`` of the m-estimate, from ``alpha`` or ``m`` and ``p``."""
        n = len(self.symbols_)
        if self.m is None:
            if self.p is not None:
                raise ValueError("p is the prior of the m-estimate and needs m")
            return self.alpha * n, np.full(n, 1.0 / n)
        if self.alpha != 1.0:
            raise ValueError(
                "give either alpha (additive smoothing) or m (the m-estimate), "
                f"not both; alpha=a is m = a * {n} with uniform p"
            )
        if self.p is None:
            return float(self.m), np.full(n, 1.0 / n)
        p = np.asarray(self.p, dtype=float)
        if p.shape != (n,) or (p < 0).any() or not np.isclose(p.sum(), 1.0):
            raise ValueError(
                f"p must be a probability vector of shape ({n},) (one entry "
                f"per symbol of symbols_), got shape {p.shape}"
            )
        return float(self.m), p

    def _windows(self, codes, lengths, size):
        """``(rows, index)``: the last step of every window of ``size``
        consecutive symbols within a sequence, and the window's flat index."""
        n = len(self.symbols_)
        ends = np.cumsum(lengths)
        position = np.arange(len(codes))
        position -= np.repeat(ends - lengths, lengths)
        rows = np.flatnonzero(position >= size - 1)
        index = np.zeros(len(rows), dtype=np.intp)
        for i in range(size):
            index = index * n + codes[rows - (size - 1) + i]
        return rows, index, position

    def _count(self, codes, lengths, weights) -> MarkovChainStats:
        n, k = len(self.symbols_), self.order
        row_weight = np.repeat(weights, lengths)
        rows, index, position = self._windows(codes, lengths, k + 1)
        windows = np.bincount(index, row_weight[rows], minlength=n ** (k + 1))
        starts = []
        for j in range(k):
            r, idx, _ = self._windows(codes, lengths, j + 1)
            first = position[r] == j
            size = n ** (j + 1)
            cells = np.bincount(idx[first], row_weight[r][first], minlength=size)
            starts.append(cells.reshape((n,) * (j + 1)))
        return MarkovChainStats(
            tuple(starts), windows.reshape((n,) * (k + 1)), self.symbols_
        )

    def _set_from(self, stats: MarkovChainStats) -> None:
        m, p = self._smoothing()
        self.start_log_prob_ = [_m_estimate(c, m, p) for c in stats.starts]
        self.log_prob_ = _m_estimate(stats.windows, m, p)
        self.stats_ = stats

    def _data(self, X, lengths, sequence_weight, reset):
        codes, lengths = self._codes(X, lengths, reset)
        weights = _check_sequence_weight(sequence_weight, len(lengths))
        return codes, lengths, weights

    # -- learning ----------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, lengths=None, *, y=None, sequence_weight=None):
        """Count the windows and starts of the sequences; set the tables.

        Parameters
        ----------
        X : sequence of symbols, list of sequences or array-like
            See the class Notes for the forms.
        lengths : array-like of int of shape (n_sequences,), default=None
            Steps of each sequence when X is the column of all of them.
        y : None
            Ignored.
        sequence_weight : array-like of shape (n_sequences,), default=None
            Non-negative weight of each sequence (an integer weight counts it
            that many times).

        Returns
        -------
        self : object
        """
        if (handler := handler_for(X)) is not None:
            return handler.fit_markov_chain(self, X, lengths, sequence_weight)
        self._set_from(self._count(*self._data(X, lengths, sequence_weight, True)))
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, lengths=None, *, y=None, sequence_weight=None):
        """Add the counts of a chunk of sequences and set the tables again
        (on an unfitted chain, :meth:`fit`). Parameters as in :meth:`fit`."""
        if (handler := handler_for(X)) is not None:
            return handler.fit_markov_chain(
                self, X, lengths, sequence_weight, partial=True
            )
        first = not hasattr(self, "stats_")
        stats = self._count(*self._data(X, lengths, sequence_weight, first))
        self._set_from(stats if first else self.stats_ + stats)
        return self

    def summarize(self, X, lengths=None, *, sequence_weight=None):
        """The counts of a chunk (``MarkovChainStats``), in the fitted
        alphabet; chunks' counts add with ``+`` and :meth:`from_stats` of
        their sum is :meth:`fit` on all of them. Parameters as in :meth:`fit`."""
        check_is_fitted(self)
        return self._count(*self._data(X, lengths, sequence_weight, False))

    def _summary(self, X, lengths=None, sequence_weight=None):
        return self.summarize(X, lengths, sequence_weight=sequence_weight)

    def from_stats(self, stats):
        """Set the tables from counts (a sum of :meth:`summarize`'s); the
        alphabet is theirs. Returns self."""
        if not isinstance(stats, MarkovChainStats):
            raise TypeError(
                "stats must be the MarkovChainStats of summarize, got "
                f"{type(stats).__name__}"
            )
        if len(stats.starts) != self.order:
            raise ValueError(
                f"stats are counts of a chain of order {len(stats.starts)}, "
                f"this chain has order={self.order}"
            )
        self._validate_params()
        self.symbols_ = stats.symbols
        self._set_from(stats)
        return self

    def _log_prior(self) -> float:
        """Log density, up to its constant, of the Dirichlet under which the
        m-estimated tables are the MAP (``sum m p_s log P(s | context)``)."""
        m, p = self._smoothing()
        tables = [*self.start_log_prob_, self.log_prob_]
        return float(sum(np.sum(m * p * np.where(p > 0, t, 0.0)) for t in tables))

    # -- inference ---------------------------------------------------------------
    def _step_log_prob(self, codes, lengths):
        """The log probability of every step given those before it."""
        out = np.empty(len(codes))
        k = self.order
        rows, index, position = self._windows(codes, lengths, k + 1)
        out[rows] = self.log_prob_.reshape(-1)[index]
        for j in range(k):
            r, idx, _ = self._windows(codes, lengths, j + 1)
            first = position[r] == j
            out[r[first]] = self.start_log_prob_[j].reshape(-1)[idx[first]]
        return out

    def score_sequences(self, X, lengths=None):
        """Log probability of every sequence, shape ``(n_sequences,)``."""
        if (handler := handler_for(X)) is not None:
            return handler.predict_markov_chain(self, "score_sequences", X, lengths)
        check_is_fitted(self)
        codes, lengths = self._codes(X, lengths, False)
        # In blocks of whole sequences: the windows of a block take several
        # arrays of its size (on long data, more memory than the fit's).
        out = np.empty(len(lengths))
        ends = np.cumsum(lengths)
        first = begin = 0
        while first < len(lengths):
            last = max(int(np.searchsorted(ends, begin + _BLOCK)), first + 1)
            block = lengths[first:last]
            steps = self._step_log_prob(codes[begin : ends[last - 1]], block)
            out[first:last] = np.add.reduceat(steps, np.cumsum(block) - block)
            first, begin = last, ends[last - 1]
        return out

    def score(self, X, lengths=None, *, y=None):
        """Log probability of all the sequences (the sum over sequences)."""
        return float(self.score_sequences(X, lengths).sum())

    def predict_proba(self, X, lengths=None):
        """The distribution of the symbol after each sequence, given its last
        ``order`` symbols (or, for a shorter sequence, all of them, under the
        start's chain of that order): shape ``(n_sequences, n_symbols)``, in
        the order of ``symbols_``."""
        if (handler := handler_for(X)) is not None:
            return handler.predict_markov_chain(self, "predict_proba", X, lengths)
        check_is_fitted(self)
        codes, lengths = self._codes(X, lengths, False)
        n, k = len(self.symbols_), self.order
        ends = np.cumsum(lengths)
        out = np.empty((len(lengths), n))
        for i, (end, length) in enumerate(zip(ends, lengths)):
            if length >= k:
                table, context = self.log_prob_, codes[end - k : end]
            else:
                table, context = self.start_log_prob_[length], codes[end - length : end]
            out[i] = np.exp(table[tuple(context)])
        return out

    def predict(self, X, lengths=None):
        """The most probable symbol after each sequence (see
        :meth:`predict_proba`)."""
        if (handler := handler_for(X)) is not None:
            return handler.predict_markov_chain(self, "predict", X, lengths)
        return self.symbols_[np.argmax(self.predict_proba(X, lengths), axis=1)]

    def sample(self, n_samples=1, random_state=None):
        """One sequence of ``n_samples`` symbols drawn from the chain.

        Returns
        -------
        X : ndarray of shape (n_samples,)
            The symbols.
        """
        check_is_fitted(self)
        rng = check_random_state(random_state)
        k = self.order
        codes = np.empty(n_samples, dtype=np.intp)
        for t in range(n_samples):
            if t < k:
                logp = self.start_log_prob_[t][tuple(codes[:t])]
            else:
                logp = self.log_prob_[tuple(codes[t - k : t])]
            prob = np.exp(logp)
            codes[t] = rng.choice(len(prob), p=prob / prob.sum())
        return self.symbols_[codes]

    def _output_spec(self, method: str, float32: bool) -> tuple:
        """The width (None: one value per sequence) and dtype of
        ``self.<method>`` (for prediction over Dask blocks of sequences)."""
        if method == "predict_proba":
            return len(self.symbols_), np.dtype(np.float64)
        if method == "predict":
            return None, self.symbols_.dtype
        return None, np.dtype(np.float64)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False  # sequences of symbols
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags


def _has_sequences(X) -> bool:
    """Whether X is a list whose elements are all sequences (not strings)."""
    return (
        isinstance(X, (list, tuple))
        and len(X) > 0
        and all(hasattr(s, "__len__") and not isinstance(s, (str, bytes)) for s in X)
    )


def _concatenated(seqs: list) -> np.ndarray:
    """The symbols of ``seqs`` in one array, as :func:`_tidy` types them:
    sequences of one kind of numbers, strings or booleans concatenated as
    they are (the object round trip gives the same values, at ten times the
    time and memory on long data), others through objects."""
    kinds = {s.dtype.kind for s in seqs}
    if len(kinds) == 1 and kinds <= set("iufUSb"):
        return np.concatenate(seqs)
    return _tidy(np.concatenate([np.asarray(s, dtype=object) for s in seqs]))


def _tidy(values: np.ndarray) -> np.ndarray:
    """An object array of one kind of value as that kind's array (integers
    as integers, strings as strings), for the alphabet's lookups."""
    values = np.asarray(values)
    if values.dtype.kind != "O" or not values.size:
        return values
    try:
        typed = np.asarray(values.tolist())
    except (TypeError, ValueError):
        return values
    return typed if typed.dtype.kind in "iufUSb" else values


class MarkovChainClassifier(HMMClassifier):
    """Sequence classification: one observable Markov chain per class.

    The latent structure is one class node over the sequence: the posterior
    of the class is the normalised product of the class prior and each
    class's chain's probability of the sequence. Every class's chain is a
    clone of ``chain`` over the alphabet of all the training sequences, so a
    symbol only one class saw is scored by the others with their smoothing.

    Parameters
    ----------
    chain : MarkovChain, default=None
        The template, cloned per class; None is ``MarkovChain()``.
        Grid-search its parameters as ``chain__order``.
    priors, prior_m, costs, unlabeled, unlabeled_weight
        As :class:`HMMClassifier`.

    Attributes
    ----------
    classes_, class_count_, class_log_prior_
    models_ : list of MarkovChain
        The fitted chain of each class.
    stats_
        The class weights and every class's counts.

    See Also
    --------
    HMMClassifier : The same with hidden Markov models.

    Examples
    --------
    >>> from bayeskit import MarkovChainClassifier
    >>> X = [list("abab"), list("baba"), list("aabb"), list("bbaa")]
    >>> clf = MarkovChainClassifier().fit(X, ["alt", "alt", "run", "run"])
    >>> clf.predict([list("abababa"), list("aaabbb")])
    array(['alt', 'run'], dtype='<U3')
    """

    _parameter_constraints: dict = {
        **{k: v for k, v in HMMClassifier._parameter_constraints.items() if k != "hmm"},
        "chain": [None, HasMethods(["fit", "score_sequences"])],
    }

    def __init__(
        self,
        chain=None,
        *,
        priors=None,
        prior_m=0.0,
        costs=None,
        unlabeled=None,
        unlabeled_weight=1.0,
    ):
        self.chain = chain
        self.priors = priors
        self.prior_m = prior_m
        self.unlabeled = unlabeled
        self.unlabeled_weight = unlabeled_weight
        self.costs = costs

    def _template(self):
        return self.chain if self.chain is not None else MarkovChain()

    def _prepare_X(self, X, reset, sample_weight=None):
        if not _has_sequences(X):
            raise ValueError(
                "MarkovChainClassifier takes a list of sequences (one per sample)"
            )
        seqs = [np.asarray(s).reshape(-1) for s in X]
        if reset:
            template = self._template()
            if hasattr(template, "_parameter_constraints"):
                template._validate_params()
            flat = _concatenated(seqs)
            self._alphabet = fit_categories(flat, is_missing(flat))
        return seqs

    def _new_models(self):
        template = self._template()
        if getattr(template, "symbols", None) is None:
            template = clone(template).set_params(symbols=self._alphabet)
        return [clone(template) for _ in self.classes_]

    def _rows(self, seqs, rows):
        chosen = [seqs[i] for i in rows]
        return np.concatenate(chosen), np.array([len(s) for s in chosen])

    def _scoring_data(self, seqs):
        return np.concatenate(seqs), np.array([len(s) for s in seqs])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        return tags
