"""Sequence classification: one hidden Markov model per class.

The latent structure is class -> chain: the class node's posterior is the
normalised product of the class prior and each class's sequence likelihood,
computed by that class's HMM (:mod:`bayeskit.models.hmm`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.base import clone

from .._validation import HasMethods
from ._encoding import encode_column, fit_categories, is_missing
from ._sequences import _concatenate, _is_sequence_list
from .base import BaseGenerativeClassifier
from .hmm import CategoricalHMM

__all__ = ["HMMClassifier"]


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
        other than 1. The template receives each class's sequences as rows
        plus lengths, ``fit(X, lengths=...)`` and ``score_sequences(X,
        lengths=...)``, so that no list of sequences is misread as rows.

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
            if hasattr(template, "_validate_params"):
                template._validate_params()
            self._symbols = self._n_symbols = None
            if isinstance(template, CategoricalHMM) and template.n_features is None:
                # One alphabet for every class, from all the sequences, so
                # that a symbol only one class saw is scored by the others
                # too (smoothed by their emission priors): integer symbols
                # are 0 .. max as in hmmlearn, other symbols are encoded.
                steps = np.concatenate([s.reshape(-1) for s in seqs])
                if steps.dtype.kind in "iu" and steps.size and steps.min() >= 0:
                    self._n_symbols = int(steps.max()) + 1
                else:
                    self._symbols = fit_categories(steps, is_missing(steps))
                    self._n_symbols = len(self._symbols)
        if getattr(self, "_symbols", None) is not None:
            seqs = [self._codes(s) for s in seqs]
        return seqs

    def _codes(self, seq):
        """A sequence of symbols as codes of the common alphabet."""
        flat = seq.reshape(-1)
        codes = encode_column(flat, self._symbols, is_missing(flat))
        if (codes < 0).any():
            bad = flat[np.argmax(codes < 0)].item()
            raise ValueError(
                f"symbol {bad!r} was not seen in fit (symbols are "
                f"{self._symbols.tolist()[:10]})"
            )
        return codes.reshape(seq.shape)

    def _emission_stats(self, seqs, weights, labels):
        template = self._template()
        if self._n_symbols is not None:
            template = clone(template).set_params(n_features=self._n_symbols)
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


@dataclass(frozen=True)
class _FittedModels:
    models: tuple

    def __add__(self, other):
        raise ValueError(
            "HMMClassifier fits each class by Baum-Welch, whose statistics do not "
            "add across chunks: call fit on all the data"
        )
