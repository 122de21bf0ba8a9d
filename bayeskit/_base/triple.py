"""A generative classifier given by its triple: the base's hooks, written once.

:class:`~bayeskit._base.classifier.BaseGenerativeClassifier` asks a subclass for
four hooks (prepare ``X``, the emission's statistics, the parameters from
them, the log-likelihood). For a classifier built as ``structure x emission x
prior`` they are the same every time, given two things the subclass declares:

- ``_make_components()``: its :class:`~bayeskit._base.classifier.Triple`, built
  from its parameters (and from what fit has fixed: the classes, the
  categories of each feature);
- ``_read``: how it reads ``X`` (validation and encoding), a function
  ``(est, X, reset, sample_weight, grows) -> (Xt, grew)``; ``grows`` says
  that new values of a later chunk may extend the encoding, and ``grew``
  that they did.

The estimators of naive Bayes and tree-augmented naive Bayes are then a
docstring, their parameters and those two.
"""

from __future__ import annotations

from ..emissions.product import Product
from .classifier import BaseGenerativeClassifier, ClassifierStats, Triple
from .stored import forget_triple, stored_triple

__all__ = ["TripleClassifier"]


class TripleClassifier(BaseGenerativeClassifier):
    """The base's hooks from ``_make_components()`` and ``_read``."""

    _read = None  # (est, X, reset, sample_weight, grows) -> (Xt, grew)
    _derived_attributes = ("_triple", "_triple_of")

    def _make_components(self) -> Triple:  # pragma: no cover - every subclass
        raise NotImplementedError

    def _components(self) -> Triple:
        """The triple of the current fit: built when first needed (the
        classes and the encoding are fixed by then), then kept while the
        hyperparameters and what the data fixed are unchanged
        (:func:`~bayeskit._base.stored.stored_triple`)."""
        encoder = self.__dict__.get("_encoder")
        categories = getattr(encoder, "categories", None)
        categories = () if categories is None else categories
        fixed = (len(self.classes_), self.n_features_in_, *map(len, categories))
        return stored_triple(self, fixed)

    def _prepare_X(self, X, reset, sample_weight=None):
        if reset:
            forget_triple(self)
        # A later chunk being fitted may bring new categories, when the
        # emission's statistics can grow to take them.
        grows = (
            not reset
            and sample_weight is not None
            and hasattr(self, "stats_")
            and hasattr(self._components().emission, "grow")
        )
        Xt, grew = self._read(X, reset, sample_weight, grows)
        if grew:
            old = self._triple.emission
            new = self._components().emission
            grown = (
                old.grow(self.stats_.emission, new)
                if isinstance(old, Product)
                else old.grow(self.stats_.emission, new.n_categories)
            )
            self.stats_ = ClassifierStats(self.stats_.class_weight, grown)
            self._update_params()
        return Xt

    def _emission_stats(self, Xt, weights, labels):
        return self._components().emission.stats(Xt, weights, labels)

    def _set_emission_params(self, stats) -> None:
        # Built again if a hyperparameter changed since: the prior reads the
        # parameters as they are now.
        triple = self._components()
        self._params = triple.emission.map_params(stats, triple.prior)

    def _log_likelihood(self, Xt):
        return self._triple.emission.log_likelihood(Xt, self._params)
