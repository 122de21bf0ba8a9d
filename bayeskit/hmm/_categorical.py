"""CategoricalHMM: a chain of states, each emitting one symbol."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from .._base.categorical import warn_nearly_unique
from .._base.classifier import Triple
from .._base.em import LatentPrior
from .._base.encoding import MAX_CATEGORIES, encode_column, fit_categories, is_missing
from .._logmath import safe_log
from .._validation import ElementwiseInterval, Interval
from ..emissions import Categorical, CategoricalParams
from ..priors import Dirichlet
from ._base import BaseHMM

__all__ = ["CategoricalHMM"]


class CategoricalHMM(BaseHMM):
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
    n_jobs : int, default=None
        Number of jobs running the ``n_init`` starts' Baum-Welch in parallel
        through joblib (the starts are drawn one after the other from
        ``random_state``, so the result does not depend on it). None means 1
        unless in a ``joblib.parallel_config`` context (under
        ``backend="dask"`` the starts run on a Dask cluster's workers); -1
        means all processors.

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
    stats_ : LatentStats
        The expected statistics the parameters were derived from (the last
        Baum-Welch iteration's, plus those of later :meth:`partial_fit`
        chunks): expected start, transition and symbol counts.

    See Also
    --------
    GaussianHMM, MultinomialHMM, HMMClassifier

    Notes
    -----
    The model is a :class:`~bayeskit.graph.LatentChain` with a categorical
    emission per state, :math:`p(x_t = a \\mid z_t = k) = B_{ka}`
    (``emissionprob_``); Baum-Welch's M-step is the Dirichlet posterior mode
    of every row, :math:`B_{ka} \\propto \\max(n_{ka} + \\alpha - 1, 0)` with
    :math:`n_{ka}` the expected count of symbol :math:`a` in state :math:`k`
    (Rabiner 1989, eq. 40c). The chain kernels read the emission table and
    the symbol codes, and sum the expected symbol counts in the same pass.

    hmmlearn's calls mean what they mean in hmmlearn. ``fit``, ``score``,
    ``score_samples``, ``predict``, ``predict_proba`` and ``decode`` take
    ``lengths`` as their second positional argument; anything there that is
    not positive integers summing to ``len(X)`` (a scikit-learn target, for
    instance) is a ``ValueError``, never ignored. ``y`` is accepted by
    keyword only and ignored; ``Pipeline``, ``cross_val_score`` and
    ``GridSearchCV`` pass no target (or ``None``) for a model without one.

    A missing symbol (NaN, or None) is a gap in the sequence: its emission
    message is 1, so the chain passes through it, its state's posterior comes
    from its neighbours, and it adds nothing to the symbol counts (bayeskit's
    addition: hmmlearn rejects NaN). Integer symbols with gaps come as floats
    whose other values are integers.

    How a list ``X`` is read: a list that ``np.asarray`` turns into one column
    of symbols, such as ``[[0], [1], [2]]``, is hmmlearn's rows form, one
    sequence (give one-step sequences with ``lengths``). Any other list of
    sequences (1-d lists of symbols, of equal or different lengths, or
    ``(n_steps, 1)`` arrays) is one sequence per element. A list of 1-d
    arrays of one symbol each is ambiguous between the two (an error that says
    how to write either).

    References
    ----------
    L. R. Rabiner, "A tutorial on hidden Markov models and selected
    applications in speech recognition", Proceedings of the IEEE 77(2),
    257-286, 1989.

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
        **BaseHMM._parameter_constraints,
        "emissionprob_prior": [ElementwiseInterval(Real, 0, None, closed="neither")],
        "n_features": [Interval(Integral, 1, MAX_CATEGORIES, closed="both"), None],
    }
    _keeps_generator = True
    _reads_symbols = True
    _param_names = {"s": "startprob_", "t": "transmat_", "e": "emissionprob_"}
    _stored_params = ("symbols_", "n_features_")

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
        n_jobs=None,
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
        self.n_jobs = n_jobs

    def _make_components(self):
        n_symbols = self.__dict__.get("n_features_") or self._alphabet_by_hand()
        prior = LatentPrior(self._chain_prior(), Dirichlet(self.emissionprob_prior))
        return Triple(self._chain(), Categorical([n_symbols]), prior)

    def _triple_size(self):
        try:
            return self.__dict__.get("n_features_") or self._alphabet_by_hand()
        except AttributeError:  # no alphabet yet
            return None

    # -- hmmlearn's names: emissionprob_ and n_features ----------------------------
    def _emission_params(self):
        if "symbols_" not in self.__dict__:
            # Set by hand, without fit: the symbols are 0 .. n - 1.
            self.n_features_ = self._alphabet_by_hand()
            self.symbols_ = np.arange(self.n_features_)
        shape = (self.n_components, self.n_features_)
        e = np.asarray(self.emissionprob_, dtype=float)
        if e.shape != shape:
            raise ValueError(f"emissionprob_ must have shape {shape}, got {e.shape}")
        if (e < 0).any() or not np.allclose(e.sum(axis=1), 1.0):
            raise ValueError(
                "emissionprob_ must be non-negative with rows summing to one"
            )
        self.emissionprob_ = e
        return CategoricalParams(safe_log(e.T))

    def _emission_attributes(self, params):
        return {"emissionprob_": np.exp(params.log_prob.T)}

    def _alphabet_by_hand(self):
        n = self.n_features
        return np.shape(self.emissionprob_)[-1] if n is None else n

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

    # -- symbols in, symbols out ---------------------------------------------------
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
        # A missing symbol (NaN or None) is a gap: code -1, whose message is 1.
        missing = is_missing(X)
        gaps = missing.any()
        seen = X[~missing] if gaps else X
        if seen.dtype.kind == "f" and np.isinf(seen).any():
            raise ValueError(
                "X has an infinite symbol; symbols are integers or labels, and "
                "a missing symbol is NaN"
            )
        if gaps and seen.dtype.kind == "O":
            try:  # numbers with None for the missing ones: as floats
                seen = seen.astype(np.float64)
            except (TypeError, ValueError):
                pass
        integer = seen.dtype.kind in "iu" or (
            seen.dtype.kind == "f" and np.all(seen == np.round(seen))
        )
        if integer and seen.size and seen.max() >= MAX_CATEGORIES:
            raise ValueError(
                f"symbol {seen.max():.6g} is too large: integer symbols are the "
                "alphabet 0 .. max, so it would need more than "
                f"{MAX_CATEGORIES:,} symbols; give symbols as labels (strings) "
                "to use only those observed"
            )
        if reset:
            given = self.__dict__.get("_n_features_given")
            if given is None and not seen.size:
                raise ValueError(
                    "X has no observed symbol (every step is missing): give "
                    "the alphabet with n_features, or observed steps"
                )
            if given is not None or integer:
                if not integer:
                    raise ValueError(
                        "with n_features given, symbols must be the integers "
                        "0 .. n_features - 1"
                    )
                seen = seen.astype(np.intp)
                if (seen < 0).any():
                    raise ValueError("symbols must be non-negative integers")
                top = int(seen.max()) + 1 if seen.size else 0
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
            seen = seen.astype(np.intp, copy=False)
        elif gaps:
            seen = X[~missing]
        codes = encode_column(seen, self.symbols_, np.zeros(len(seen), dtype=bool))
        if (codes < 0).any():
            bad = seen[np.argmax(codes < 0)].tolist()
            raise ValueError(
                f"symbol {bad!r} was not seen in fit (symbols are "
                f"{self.symbols_.tolist()[:10]}); declare the alphabet with "
                "n_features to give unseen integer symbols a probability"
            )
        if gaps:
            codes, observed = np.full(len(X), -1, dtype=np.intp), codes
            codes[~missing] = observed
        if reset:
            # Continuous values read as symbols: about one symbol per step.
            warn_nearly_unique(
                self, codes[:, None], [self.n_features_], continuous="GaussianHMM"
            )
        return codes[:, None]

    def _sampler(self, params):
        # hmmlearn: the first symbol whose cumulative probability exceeds a
        # uniform draw.
        cdf = np.cumsum(self.emissionprob_, axis=1)

        def draw(state, rng):
            if state is None:
                return np.zeros((0, 1), dtype=int)
            return [(cdf[state] > rng.rand()).argmax()]

        return draw

    def _samples(self, codes):
        return self.symbols_[codes]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False  # one column of symbols per step
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags
