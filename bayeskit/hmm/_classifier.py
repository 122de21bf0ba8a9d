"""Sequence classification: one hidden Markov model per class.

The latent structure is class -> chain: the class node's posterior is the
normalised product of the class prior and each class's sequence likelihood,
computed by that class's HMM (:mod:`bayeskit.hmm`).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from .._base.classifier import BaseGenerativeClassifier
from .._base.encoding import encode_column, fit_categories, is_missing
from .._base.per_class import PerClassClassifier
from .._base.semi_supervised import unlabeled_rows
from .._base.sequences import _concatenate, _is_sequence_list
from .._validation import HasMethods
from . import CategoricalHMM

__all__ = ["HMMClassifier"]


class HMMClassifier(PerClassClassifier):
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
        other than 1. The template receives each class's sequences as rows
        plus lengths, ``fit(X, lengths=...)`` and ``score_sequences(X,
        lengths=...)``, so that no list of sequences is misread as rows.
    unlabeled : object, default=None
        The label that marks a row of ``y`` as unlabelled: -1 as in
        scikit-learn's ``sklearn.semi_supervised``, a string such as ``"?"``
        for string labels, or ``np.nan`` for NaN and None. None (the default):
        every label is a class. Unlabelled rows are fitted by semi-supervised
        EM (see :ref:`semi_supervised`); ``classes_`` never holds the marker.
    unlabeled_weight : float, default=1.0
        The weight lambda of the unlabelled rows' statistics in that EM
        (Nigam et al., 2000): 1 counts an unlabelled row as a labelled one, 0
        leaves the unlabelled rows out.

    Attributes
    ----------
    classes_, class_count_, class_log_prior_
    models_ : list
        The fitted model of each class.
    stats_
        The class weights and every class's HMM statistics.
    em_n_iter_ : int
        Iterations of semi-supervised EM, after a fit with unlabelled rows (see
        :ref:`semi_supervised`).
    em_lower_bound_ : float
        Its objective at the fitted parameters.
    em_lower_bounds_ : list of float
        The objective of the labelled start and after every iteration.
    em_converged_ : bool
        Whether EM stopped at its tolerance rather than its iteration limit.

    Notes
    -----
    :meth:`fit` fits each class's HMM by Baum-Welch on the class's sequences
    of positive weight. The statistics (``stats_``, :meth:`summarize`) are
    each class's HMM statistics: for a fit, those its parameters came from;
    for a chunk of a fitted classifier, the E-step of each class's sequences
    under the current parameters. They add, so :meth:`from_stats` of
    statistics summed over chunks is one Baum-Welch iteration over all of
    them, and :meth:`partial_fit` is an incremental EM step of every class's
    HMM (see the template's ``partial_fit``); a class with no sequence in a
    chunk keeps its HMM. On a classifier not fitted yet, :meth:`summarize`
    and the first :meth:`partial_fit` fit the HMMs on their chunk, which also
    fixes the alphabet of a categorical template. These three need a template
    with ``summarize`` and ``from_stats`` (every bayeskit HMM).

    Examples
    --------
    >>> from bayeskit import CategoricalHMM, HMMClassifier
    >>> X = [[0, 0, 0, 1], [0, 0, 1, 0], [1, 1, 1, 0], [1, 0, 1, 1]]
    >>> clf = HMMClassifier(CategoricalHMM(1, random_state=0))
    >>> clf = clf.fit(X, ["a", "a", "b", "b"])
    >>> clf.predict([[0, 0, 0, 0], [1, 1, 1, 1]])
    array(['a', 'b'], dtype='<U1')
    """

    _parameter_constraints: dict = {
        **BaseGenerativeClassifier._parameter_constraints,
        "hmm": [None, HasMethods(["fit", "score_sequences"])],
    }

    def __init__(
        self,
        hmm=None,
        *,
        priors=None,
        prior_m=0.0,
        costs=None,
        unlabeled=None,
        unlabeled_weight=1.0,
    ):
        self.hmm = hmm
        self.priors = priors
        self.prior_m = prior_m
        self.unlabeled = unlabeled
        self.unlabeled_weight = unlabeled_weight
        self.costs = costs

    def fit(self, X, y, sample_weight=None, *, states=None):
        """Fit every class's HMM on the class's sequences.

        Parameters
        ----------
        X : list of array-like
            One array per sequence.
        y : array-like of shape (n_sequences,)
            The class of every sequence (see the class docstring for
            ``unlabeled``).
        sample_weight : array-like of shape (n_sequences,), default=None
            The weight of every sequence in its class's Baum-Welch.
        states : list of array-like, default=None
            Keyword only: the known hidden states of the steps of every
            sequence, one array per sequence, in its class's HMM (see
            :ref:`hmm_labelled`): a state index, or names, with -1, NaN or
            None where unknown. Every class's HMM is fitted with its
            sequences' states, ``fit(X_c, lengths=..., states=...)``; the
            states of two classes are different variables (state 0 of one
            class's HMM has nothing to do with state 0 of another's). Not
            taken with unlabelled sequences (their class, and so the HMM
            their states would belong to, is latent).

        Returns
        -------
        self : object
        """
        if states is None:
            return super().fit(X, y, sample_weight)
        if not isinstance(states, (list, tuple)) or len(states) != len(X):
            raise ValueError(
                "states must be a list with one array of states per sequence "
                f"of X ({len(X)} sequences), got {type(states).__name__}"
                + (f" of {len(states)}" if hasattr(states, "__len__") else "")
            )
        if self.unlabeled is not None and unlabeled_rows(self, y) is not None:
            raise ValueError(
                "states is not taken with unlabelled sequences (their class, "
                "and so the HMM whose states they would be, is latent): fit "
                "the labelled sequences with states, or drop states"
            )
        self._fit_states = [np.asarray(s, dtype=object).ravel() for s in states]
        try:
            return super().fit(X, y, sample_weight)
        finally:
            del self._fit_states

    def _template(self):
        return self.hmm if self.hmm is not None else CategoricalHMM()

    def _prepare_X(self, X, reset, sample_weight=None):
        if not _is_sequence_list(X):
            raise ValueError(
                "HMMClassifier takes a list of sequences (one array per sequence)"
            )
        seqs = [np.asarray(s) for s in X]
        template = self._template()
        if reset:
            # A nested estimator is validated when the outer one fits.
            if hasattr(template, "_parameter_constraints"):
                template._validate_params()
            self._symbols = self._n_symbols = None
            if isinstance(template, CategoricalHMM) and template.n_features is None:
                # One alphabet for every class, from all the sequences, so
                # that a symbol only one class saw is scored by the others
                # too (smoothed by their emission priors): integer symbols
                # are 0 .. max as in hmmlearn, other symbols are encoded.
                steps = np.concatenate([s.reshape(-1) for s in seqs])
                seen, missing = steps, is_missing(steps)
                if missing.any():  # a missing symbol is a gap
                    seen = steps[~missing]
                    if seen.dtype.kind == "O":  # numbers with None gaps
                        try:
                            seen = seen.astype(np.float64)
                        except (TypeError, ValueError):
                            pass
                    if seen.dtype.kind == "f" and np.all(seen == np.round(seen)):
                        seen = seen.astype(np.intp)  # integers, with NaN gaps
                if seen.dtype.kind in "iu" and seen.size and seen.min() >= 0:
                    self._n_symbols = int(seen.max()) + 1
                else:
                    self._symbols = fit_categories(steps, is_missing(steps))
                    self._n_symbols = len(self._symbols)
        if getattr(self, "_symbols", None) is not None:
            seqs = [self._codes(s) for s in seqs]
        return seqs

    def _codes(self, seq):
        """A sequence of symbols as codes of the common alphabet (a missing
        symbol, a gap, as NaN)."""
        flat = seq.reshape(-1)
        missing = is_missing(flat)
        codes = encode_column(flat, self._symbols, missing)
        if (codes == -2).any():
            bad = flat[np.argmax(codes == -2)].item()
            raise ValueError(
                f"symbol {bad!r} was not seen in fit (symbols are "
                f"{self._symbols.tolist()[:10]})"
            )
        if missing.any():
            codes = np.where(missing, np.nan, codes)
        return codes.reshape(seq.shape)

    @property
    def _additive_stats(self) -> bool:
        # summarize, from_stats and partial_fit need the template's statistics.
        template = self._template()
        return hasattr(template, "summarize") and hasattr(template, "from_stats")

    def _new_models(self):
        template = self._template()
        if self._n_symbols is not None:
            template = clone(template).set_params(n_features=self._n_symbols)
        return [clone(template) for _ in self.classes_]

    def _rows(self, seqs, rows):
        # The rows of the sequences plus lengths: unambiguous even when every
        # sequence has one step; and their known states, in a fit with states.
        Xc, lengths = _concatenate([seqs[i] for i in rows])
        known = getattr(self, "_fit_states", None)
        if known is not None:
            return Xc, lengths, np.concatenate([known[i] for i in rows])
        return Xc, lengths

    def _fit_model(self, c, model, data, weight):
        Xc, lengths, *states = data
        extra = {"states": states[0]} if states else {}
        if np.all(weight == 1.0):  # any template, even one without weights
            return model.fit(Xc, lengths=lengths, **extra)
        return model.fit(Xc, lengths=lengths, sequence_weight=weight, **extra)

    def _model_stats(self, model, data, weight):
        Xc, lengths, *states = data
        weight = None if np.all(weight == 1.0) else weight
        extra = {"states": states[0]} if states else {}
        return model._summary(Xc, lengths=lengths, sequence_weight=weight, **extra)

    def _scoring_data(self, seqs):
        return _concatenate(seqs)

    def _model_log_likelihood(self, model, data):
        Xc, lengths = data
        return model.score_sequences(Xc, lengths=lengths)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        return tags
