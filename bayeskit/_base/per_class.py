"""One generative model per class: the base of the classifiers whose classes are
models fitted by EM (a mixture, a hidden Markov model).

The latent structure is the tree class -> latent part of the class's model: the
class node is observed in fit, so each class's model is fitted on its own rows;
its message to the class node is the model's log-likelihood of a row (or
sequence), and the posterior over the class is the normalised product of that
message and the class prior (Bishop 2006, section 4.2).

Learning is statistics, as everywhere in bayeskit: the statistics of the
classifier are the class weights and, for every class, the expected
statistics of its model (:class:`PerClassStats`). A fit gives each class's
model its EM fit and keeps the statistics its parameters came from; a chunk
of a fitted classifier gives each class's model the E-step of its rows under
the current parameters. These add, so ``from_stats`` of a sum over chunks is
one EM iteration of every class's model over all of them, and ``partial_fit``
is incremental EM (Neal and Hinton 1998) of every class's model.

References
----------
.. [1] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006.
.. [2] R. M. Neal and G. E. Hinton, "A view of the EM algorithm that justifies
   incremental, sparse, and other variants", in M. I. Jordan (ed.), Learning
   in Graphical Models, Kluwer, 1998, pp. 355-368.
"""

from __future__ import annotations

import copy
from abc import abstractmethod
from dataclasses import dataclass

import numpy as np

from .classifier import BaseGenerativeClassifier

__all__ = ["PerClassClassifier", "PerClassStats"]


@dataclass(frozen=True)
class PerClassStats:
    """The statistics of every class's model, in the order of ``classes_``.

    Each entry is the statistics of one class's model (its ``summarize`` /
    ``stats_`` type), or None for a class with no rows in the data they came
    from: None is zero. Statistics of chunks add with ``+`` (class by class),
    and ``sum`` of them starts from 0.
    """

    models: tuple

    @classmethod
    def zeros(cls, n_classes: int) -> PerClassStats:
        """The statistics of no data."""
        return cls((None,) * n_classes)

    def __add__(self, other: PerClassStats) -> PerClassStats:
        if type(other) is not type(self) or len(other.models) != len(self.models):
            return NotImplemented
        return type(self)(
            tuple(
                b if a is None else a if b is None else a + b
                for a, b in zip(self.models, other.models)
            )
        )

    def __radd__(self, other):
        if isinstance(other, int) and other == 0:
            return self
        return NotImplemented


class PerClassClassifier(BaseGenerativeClassifier):
    """Base of the classifiers that fit one generative model per class.

    The class prior (from the class weights, or ``priors``), the costs and
    the posterior are :class:`~bayeskit._base.classifier.BaseGenerativeClassifier`'s;
    this base fits every class's model on the class's rows (of positive weight,
    unless ``_fit_zero_weight_rows``),
    keeps their statistics as :class:`PerClassStats`, sets their parameters
    from summed statistics and scores every row under every class's model.

    A subclass provides ``_prepare_X(X, reset)`` and the per-model hooks:
    ``_new_models()`` (one unfitted model per class), ``_rows(Xt, rows)``
    (the data of some rows), ``_fit_model(c, model, data, weight)``,
    ``_model_stats(model, data, weight)`` (the E-step of the data under the
    fitted model) and ``_model_log_likelihood(model, data)``, and names its
    fitted list of models in ``_models_attr``.
    """

    _models_attr = "models_"
    _stats_type = PerClassStats

    # Whether a class's fit also receives its rows of zero weight (which add
    # nothing to its statistics); the E-step of a chunk never does.
    _fit_zero_weight_rows = False

    # -- hooks -------------------------------------------------------------------
    @abstractmethod
    def _new_models(self) -> list:
        """One unfitted model per class, in the order of ``classes_``."""

    @abstractmethod
    def _rows(self, Xt, rows: np.ndarray):
        """The prepared data of the rows (or sequences) ``rows``."""

    @abstractmethod
    def _fit_model(self, c: int, model, data, weight: np.ndarray):
        """``model`` fitted on class ``c``'s data and weights."""

    @abstractmethod
    def _model_stats(self, model, data, weight: np.ndarray):
        """The E-step statistics of ``data`` under the fitted ``model``."""

    @abstractmethod
    def _model_log_likelihood(self, model, data) -> np.ndarray:
        """The log-likelihood of every row (or sequence) of ``data``."""

    def _scoring_data(self, Xt):
        """``Xt`` as every model's ``_model_log_likelihood`` reads it."""
        return Xt

    # -- statistics ----------------------------------------------------------------
    def _models(self):
        return getattr(self, self._models_attr, None)

    def _described(self):
        """The layout of this estimator's statistics: the classes and the
        encoding, and every class's model, under whose parameters the rows'
        statistics are an E-step."""
        layout = super()._described()
        layout.state[self._models_attr] = copy.deepcopy(self._models())
        return layout

    # The statistics of labelled rows are an E-step of each class's model.
    _labelled_stats_fixed = False

    def _emission_stats(self, Xt, weights, labels):
        """Every class's model fitted on its rows, or, once fitted, the E-step
        of its rows; their statistics. Soft ``weights`` (``labels`` None: the
        class posterior of unlabelled rows) give every class's model the
        E-step of the rows of positive weight for it."""
        models = self._models()
        fitting = models is None
        if fitting:
            if labels is None:
                raise ValueError(
                    "unlabelled rows are weighted by the posterior of a fitted "
                    "model: fit labelled rows first"
                )
            models = self._new_models()
        stats = []
        for c, model in enumerate(models):
            in_class = True if labels is None else labels == c
            rows = np.flatnonzero(in_class & (weights[:, c] > 0))
            if not fitting:
                stats.append(
                    self._model_stats(model, self._rows(Xt, rows), weights[rows, c])
                    if rows.size
                    else None
                )
                continue
            if not rows.size:
                raise ValueError(
                    f"class {self.classes_[c : c + 1].tolist()[0]!r} has no rows "
                    "of positive sample_weight to fit its model on"
                )
            if self._fit_zero_weight_rows:
                rows = np.flatnonzero(in_class)
            models[c] = self._fit_model(
                c, model, self._rows(Xt, rows), weights[rows, c]
            )
            # A model without statistics (a template of the user's with only
            # fit and a score) gives None: its classifier has no summarize.
            stats.append(getattr(models[c], "stats_", None))
        if fitting:
            setattr(self, self._models_attr, list(models))
        return self._stats_type(tuple(stats))

    def _set_stats(self, stats):
        # Checked before anything is set: statistics of another estimator
        # leave this one as it was.
        k = len(self.classes_)
        emission = stats.emission
        if type(emission) is not self._stats_type or len(emission.models) != k:
            raise TypeError(
                f"stats.emission must be the {self._stats_type.__name__} of "
                f"summarize for the {k} classes of this estimator, got "
                f"{type(emission).__name__}"
            )
        return super()._set_stats(stats)

    def _set_emission_params(self, stats) -> None:
        for model, class_stats in zip(self._models(), stats.models):
            # A class no data reached keeps its model; a fit's statistics are
            # those its model's parameters came from.
            if class_stats is not None and class_stats is not model.stats_:
                model.from_stats(class_stats)

    def _emission_log_prior(self) -> float:
        """The log prior density of every class's model at its parameters
        (that of a model without one: 0)."""
        total = 0.0
        for model in self._models():
            if hasattr(model, "_log_prior"):  # the mixtures
                total += float(model._log_prior())
            elif hasattr(model, "_log_prior_of"):  # the hidden Markov models
                components = model._components()  # kept by the model since its fit
                total += float(model._log_prior_of(model._current_params(), components))
        return total

    # -- prediction ---------------------------------------------------------------
    def _log_likelihood(self, Xt) -> np.ndarray:
        # The message from every class's model to the class node.
        data = self._scoring_data(Xt)
        return np.column_stack(
            [self._model_log_likelihood(m, data) for m in self._models()]
        )
