"""What every hidden Markov model shares: the chain, Baum-Welch, scoring, sampling.

A hidden Markov model is a :class:`~bayeskit.graph.LatentChain` x an emission
family x a prior. A concrete model is a docstring, its
``_parameter_constraints``, its ``__init__``, ``_make_components()`` (the
triple built from its hyperparameters) and the glue between hmmlearn's
attribute names and its family's parameters (``_emission_params`` and
``_emission_attributes``); everything else is here, once:

- inference: :meth:`BaseHMM.score`, :meth:`~BaseHMM.score_sequences`,
  :meth:`~BaseHMM.score_samples`, :meth:`~BaseHMM.predict_proba`,
  :meth:`~BaseHMM.decode`, :meth:`~BaseHMM.predict` (the chain's sum-product
  and max-product, fed by the family's messages), :meth:`~BaseHMM.sample`,
  :meth:`~BaseHMM.bic`, :meth:`~BaseHMM.aic`;
- learning, Baum-Welch (EM, Rabiner 1989, section III.C): the expected
  statistics of the chain (start and transition counts) and of the family
  under the step posteriors (:meth:`~BaseHMM.summarize`), turned into MAP
  parameters by the priors (:meth:`~BaseHMM.from_stats`), in the loop of
  :class:`~bayeskit._base.em.BaseLatentModel`; :meth:`~BaseHMM.partial_fit`
  is one incremental EM step on a chunk;
- gaps: a step whose every value is NaN has emission message 1 (its
  observation marginalised) and adds nothing to the family's statistics; a
  step with some values NaN goes to a family whose ``missing_coordinates``
  is true, and is an error otherwise;
- hmmlearn's conventions: ``lengths`` second and positional, ``params`` and
  ``init_params`` as letters, the ``monitor_``, the hooks ``_init``,
  ``_check`` and ``_check_and_set_n_features``.

References
----------
.. [1] L. R. Rabiner, "A tutorial on hidden Markov models and selected
   applications in speech recognition", Proceedings of the IEEE 77(2),
   257-286, 1989.
.. [2] R. M. Neal and G. E. Hinton, "A view of the EM algorithm that justifies
   incremental, sparse, and other variants", in M. I. Jordan (ed.), Learning
   in Graphical Models, Kluwer, 1998, pp. 355-368.
.. [3] O. Cappé and E. Moulines, "On-line expectation-maximization algorithm
   for latent data models", Journal of the Royal Statistical Society B 71(3),
   593-613, 2009.
"""

from __future__ import annotations

import functools
import logging
from contextlib import nullcontext
from dataclasses import replace
from numbers import Integral, Number, Real

import numpy as np

from .._base.classifier import Triple, float_input
from .._base.em import BaseLatentModel, LatentParams, LatentStats, described
from .._base.sequences import (
    _as_rows,
    _check_sequence_weight,
    _n_observed_steps,
    _observed_steps,
    _split,
)
from .._collections import handler_for
from .._jit import BLAS_ALONE_SIZE, blas_alone
from .._logmath import has_nan
from .._validation import (
    ElementwiseInterval,
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)
from .._warnings import warn
from ..graph import ChainParams, ChainPrior, LatentChain
from ..priors import Dirichlet
from . import _labelled
from ._checks import check_chain_priors, check_letters
from ._estep import HMMEStep
from ._hooks import HMMHooks
from ._start import HMMStart

__all__ = ["BaseHMM"]

_log = logging.getLogger("bayeskit.hmm")

# What a model keeps between calls: the triple of its fit, what it was built
# from, and the parameters validated under it (see BaseHMM._components).
_STORED = ("_triple", "_triple_of", "_params_of")


def _handler(X):
    """The handler of ``X`` if it lives in another library's collection (a
    Dask bag or array); a numpy array never does."""
    return None if type(X) is np.ndarray else handler_for(X)


@functools.cache
def _hyperparameters(cls) -> tuple:
    """The names of the hyperparameters of ``cls`` (its ``__init__``'s)."""
    return tuple(cls._get_param_names())


def _frozen(values) -> tuple:
    """``(value, copy)`` for every value: a copy of an array-like value (to
    see it changed in place), None for any other."""
    kept = []
    for value in values:
        copy = None
        if isinstance(value, (np.ndarray, list)):
            try:
                copy = np.array(value, copy=True)
            except ValueError:  # ragged: compared by identity only
                pass
        kept.append((value, copy))
    return tuple(kept)


def _unchanged(stored, values) -> bool:
    """Whether ``values`` are those ``stored`` by :func:`_frozen`: the same
    objects, with the same contents, or equal numbers and strings."""
    if len(stored) != len(values):
        return False
    for (value, copy), now in zip(stored, values):
        if copy is not None:
            if now is not value or not np.array_equal(now, copy):
                return False
        elif now is not value and not (
            isinstance(now, (Number, str)) and type(now) is type(value) and now == value
        ):
            return False
    return True


class BaseHMM(HMMEStep, HMMHooks, HMMStart, BaseLatentModel):
    """Base of the hidden Markov models (see the module)."""

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "startprob_prior": [ElementwiseInterval(Real, 0, None, closed="neither")],
        "transmat_prior": [ElementwiseInterval(Real, 0, None, closed="neither")],
        "algorithm": [StrOptions({"viterbi", "map"})],
        "random_state": ["random_state"],
        "n_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "params": [str],
        "init_params": [str],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "implementation": [StrOptions({"log", "scaling"})],
    }
    # hmmlearn's letter of every parameter -> its attribute.
    _param_names: dict = {"s": "startprob_", "t": "transmat_"}
    # The attribute whose last axis is the number of features (numeric models).
    _features_from: str | None = None
    # hmmlearn's attribute -> field of the family's parameters (the default glue).
    _emission_fields: dict = {}
    # Whether X holds counts (non-negative integers).
    _counts = False
    # Whether X is read by Gaussian densities (values whose squares overflow
    # float64 are refused, as in every Gaussian model).
    _gaussian = False
    # Whether hmmlearn's ``_init`` of the model replaces its ``random_state``
    # by the generator its emission start drew from (CategoricalHMM,
    # MultinomialHMM and PoissonHMM do), so that a later ``sample()`` goes on
    # drawing from it.
    _keeps_generator = False
    # Whether the steps are symbols (labels encoded per model), not numbers.
    _reads_symbols = False
    # Attributes the parameters are read from besides those of _param_names.
    _stored_params: tuple = ()
    # Caches: a layout that holds the model compares it without them.
    _layout_ignores = _STORED
    warm_start = False

    # -- the components: built once per fit, read by every other method ----------
    def _components(self) -> Triple:
        """The triple of the current fit.

        Built by ``_make_components()`` once the data has fixed what it reads
        (the number of features, the alphabet), and stored: validation,
        prediction, scoring, sampling and :meth:`summarize` read the stored
        one. It is built again when a hyperparameter (``set_params`` or an
        assignment) or the size it was built for has changed since, so that
        the model answers as one built afresh.
        """
        key = self._triple_key()
        stored = self.__dict__.get("_triple_of")
        if stored is None or not _unchanged(stored, key):
            self.__dict__.pop("_params_of", None)
            self._triple = self._make_components()
            self._triple_of = _frozen(key)
        return self._triple

    def _triple_key(self) -> tuple:
        """What ``_make_components()`` reads: every hyperparameter and the
        size fit fixed (``_triple_size``)."""
        values = [getattr(self, name) for name in _hyperparameters(type(self))]
        values.append(self._triple_size())
        return tuple(values)

    def _triple_size(self):
        """The size of the data the triple is built for (``n_features``)."""
        try:
            return self.n_features
        except AttributeError:
            return None

    def _forget_triple(self) -> None:
        """Drop the stored triple and parameters (a fit starts afresh)."""
        for name in _STORED:
            self.__dict__.pop(name, None)

    def _chain(self) -> LatentChain:
        """The chain, updating the tables named in ``params`` (whose letters,
        and those of ``init_params``, must each name a parameter)."""
        check_letters(self)
        return LatentChain(self.n_components, "s" in self.params, "t" in self.params)

    def _chain_prior(self) -> ChainPrior:
        """The Dirichlet priors of the start and transition tables (each a
        scalar or an array that broadcasts to its table, as in hmmlearn)."""
        check_chain_priors(self)
        return ChainPrior(
            Dirichlet(self.startprob_prior), Dirichlet(self.transmat_prior)
        )

    @property
    def _emission_letters(self) -> set:
        return set(self._param_names) - {"s", "t"}

    def _updates_emission(self) -> bool:
        return bool(self._emission_letters & set(self.params))

    # -- input -------------------------------------------------------------------
    def _is_rows(self, rows) -> bool:
        """Whether a nested list that ``np.asarray`` reads as ``rows`` is
        hmmlearn's rows form (see :mod:`bayeskit._base.sequences`)."""
        return True  # any rectangular numeric table: steps by features

    def _encode(self, X, reset, as_list=False):
        """The rows of all sequences as the family reads them (validated).

        NaN marks a missing value (a step of NaN is a gap, see
        :func:`~bayeskit._base.sequences._observed_steps`); an infinite
        value is an error naming X.
        """
        if as_list and np.ndim(X) == 1:
            X = np.asarray(X)[:, None]  # univariate sequences given as 1-d arrays
        X = validate_data(
            self, X, reset=reset, dtype=np.float64, ensure_all_finite="allow-nan"
        )
        self._check_missing(X)
        self._check_values(X)
        return X

    def _check_values(self, X) -> None:
        """Raise ValueError if ``X`` holds values the family cannot emit
        (NaN, a missing value, is left to :meth:`_check_missing`)."""
        if self._counts:
            values = X[~np.isnan(X)] if has_nan(X) else X
            if not np.all((values >= 0) & (values == np.floor(values))):
                raise ValueError("X must hold counts: non-negative integers")
            if values.size and values.max() > 2**53:  # as the count families
                raise ValueError(
                    f"X holds counts above 2**53 (the largest {values.max():.3g}), "
                    "which float64 cannot hold exactly"
                )
        if self._gaussian:
            float_input(X)

    # -- gaps: steps with missing values (what is missing is latent) -------------
    def _takes_missing_coordinates(self) -> bool:
        """Whether the family marginalises missing coordinates of a step."""
        emission = self._components()[1]
        return bool(getattr(emission, "missing_coordinates", False))

    def _check_missing(self, X) -> None:
        """ValueError naming X for a step with some but not all coordinates
        missing, unless the family marginalises missing coordinates."""
        if X.ndim != 2 or X.shape[1] < 2:
            return
        with np.errstate(over="ignore", invalid="ignore"):
            if not np.isnan(X.sum()):  # no NaN: a NaN makes the sum NaN
                return
        missing = np.isnan(X)
        partial = missing.any(axis=1) & ~missing.all(axis=1)
        if partial.any() and not self._takes_missing_coordinates():
            t = int(np.argmax(partial))
            raise ValueError(
                f"X has steps with some but not all values missing (NaN), the "
                f"first at step {t}; the emission family of "
                f"{type(self).__name__} does not marginalise missing values, "
                "so it takes only whole missing steps (every value NaN: a gap "
                "in the sequence). Partially missing steps are taken by a "
                "model whose family does (the Gaussian family of GaussianHMM); "
                "mark the whole step missing, or impute the missing values"
            )

    def _messages(self, emission, X, params):
        """The family's messages for X, with message 1 for every gap (see
        :func:`~bayeskit._base.sequences._observed_steps`); BLAS on one thread
        for large work (:func:`~bayeskit._jit.blas_alone`: a kernel follows)."""
        observed = _observed_steps(X)
        alone = len(X) * self.n_components >= BLAS_ALONE_SIZE  # else: no call
        with blas_alone() if alone else nullcontext():
            if observed is None:
                return emission.messages(X, params)
            log_lik = np.zeros((len(X), self.n_components))
            if observed.any():
                log_lik[observed] = emission.log_likelihood(X[observed], params)
        return log_lik, None

    def _sequences(self, X, lengths, reset):
        """``(Xt, lengths, as_list)`` with the rows of all sequences concatenated."""
        X, lengths, as_list = _as_rows(X, lengths, self._is_rows)
        if reset:
            self._forget_triple()
        return self._encode(X, reset, as_list), lengths, as_list

    def _back(self, values, lengths, as_list):
        return _split(values, lengths) if as_list else values

    # -- parameters --------------------------------------------------------------
    def _chain_params(self) -> ChainParams:
        """``startprob_`` and ``transmat_``, validated."""
        k = self.n_components
        values = []
        for name, shape in (("startprob_", (k,)), ("transmat_", (k, k))):
            value = np.asarray(getattr(self, name), dtype=float)
            setattr(self, name, value)
            if value.shape != shape:
                raise ValueError(f"{name} must have shape {shape}, got {value.shape}")
            if (value < 0).any() or not np.allclose(value.sum(axis=-1), 1.0):
                raise ValueError(
                    f"{name} must be non-negative with rows summing to one"
                )
            values.append(value)
        return ChainParams(*values)

    def _emission_params(self):
        """The family's parameters from the fitted attributes, validated."""
        raise NotImplementedError

    def _emission_attributes(self, params) -> dict:
        """The fitted attributes (hmmlearn's names) of the family's parameters:
        by default the fields named in ``_emission_fields``."""
        return {name: getattr(params, f) for name, f in self._emission_fields.items()}

    def _current_params(self) -> LatentParams:
        """The parameters, validated, from the fitted attributes.

        The validated parameters are kept with the stored triple and given
        again while the attributes they were read from are the same objects
        with the same values: parameters set by hand (assigned, or changed
        in place) are validated anew, as is everything after a
        hyperparameter changed.
        """
        triple = self.__dict__.get("_triple")
        if triple is not None and self._components() is triple:
            stored = self.__dict__.get("_params_of")
            if stored is not None and _unchanged(stored[0], self._param_values()):
                return stored[1]
        if self._features_from is not None and not hasattr(self, "n_features_in_"):
            # Parameters set by hand, without fit: their shape says how many
            # features X has.
            value = np.asarray(getattr(self, self._features_from))
            if value.ndim >= 2:
                self.n_features_in_ = value.shape[-1]
        params = LatentParams(self._chain_params(), self._emission_params())
        if "_triple_of" in self.__dict__:
            self._params_of = (_frozen(self._param_values()), params)
        return params

    def _param_values(self) -> tuple:
        """The attributes the parameters are read from (``_param_names``,
        ``n_features_in_`` and ``_stored_params``), None where unset."""
        found = self.__dict__
        names = ("n_features_in_", *self._param_names.values(), *self._stored_params)
        return tuple(found.get(name) for name in names)

    def _set_params(self, params: LatentParams) -> None:
        self.startprob_ = params.structure.startprob
        self.transmat_ = params.structure.transmat
        for name, value in self._emission_attributes(params.emission).items():
            setattr(self, name, value)
        # The new parameters validated once, here: prediction reads them as
        # kept (and leaves the model as it found it).
        self.__dict__.pop("_params_of", None)
        if "_triple_of" in self.__dict__:
            try:
                self._current_params()
            except ValueError:  # left to the method that reads them
                pass

    def _checked(self, name, shape, *, rows_sum_to_one=False, signed=False):
        """The attribute ``name`` as a float array of ``shape``: finite and
        (unless ``signed``) non-negative, with rows summing to one if asked;
        ValueError otherwise."""
        value = np.asarray(getattr(self, name), dtype=float)
        if value.shape != tuple(shape):
            raise ValueError(
                f"{name} must have shape {tuple(shape)}, got {value.shape}"
            )
        if not np.all(np.isfinite(value) & (signed | (value >= 0))):
            sign = "finite" if signed else "non-negative and finite"
            raise ValueError(f"{name} must be {sign}")
        if rows_sum_to_one and not np.allclose(value.sum(axis=-1), 1.0):
            raise ValueError(f"{name} must have rows summing to one")
        return value

    # -- hmmlearn's attributes and hooks -----------------------------------------
    @property
    def n_features(self):
        """Dimension of the observations (hmmlearn's name; ``n_features_in_``
        is scikit-learn's), set by ``fit`` or read from the parameters."""
        if hasattr(self, "n_features_in_"):
            return self.n_features_in_
        if "_n_features" in self.__dict__:
            return self._n_features
        if self._features_from in self.__dict__:
            return np.shape(self.__dict__[self._features_from])[-1]
        raise AttributeError("n_features is set by fit")

    @n_features.setter
    def n_features(self, value):
        self._n_features = int(value)

    # -- learning ----------------------------------------------------------------
    def _params_from_stats(self, stats, previous, components) -> LatentParams:
        structure, emission, prior = components
        chain = structure.map_params(
            stats.structure, prior.structure, previous.structure
        )
        params = previous.emission
        if self._updates_emission():
            params = emission.map_params(stats.emission, prior.emission, params)
        return LatentParams(chain, params)

    def _data(self, X, lengths, sequence_weight, reset, states=None):
        """``(Xt, lengths, weights)``, the form the E-step reads (weights None
        when every sequence weighs 1), and the known states' codes after them
        when ``states`` knows any (:func:`~bayeskit.hmm._labelled.check_states`)."""
        Xt, lengths, _ = self._sequences(X, lengths, reset=reset)
        weights = _check_sequence_weight(sequence_weight, len(lengths))
        data = (Xt, lengths, None if np.all(weights == 1.0) else weights)
        labels = _labelled.model_states(self, states, lengths, reset)
        return data if labels is None else (*data, labels)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, lengths=None, *, y=None, sequence_weight=None, states=None):
        """Estimate the parameters by Baum-Welch (EM for MAP).

        Every iteration is :meth:`summarize` on all the data followed by
        :meth:`from_stats`; ``stats_`` keeps the statistics the final
        parameters were derived from. With ``states``, the known states are
        evidence (see :ref:`hmm_labelled`): EM with their posteriors clamped,
        or, every state known, the MAP parameters of the counts in one M-step.

        Parameters
        ----------
        X : array-like of shape (n_steps, n_features) or list of array-like
            The steps of all sequences concatenated (with ``lengths``), or one
            array per sequence (see the class docstring for how a list is read).
            A step whose every value is NaN is a gap: its observation is
            marginalised (emission message 1), here and in every method.
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
        states : array-like of shape (n_steps,) or list of array-like, default=None
            Keyword only: the known state (``0 .. n_components - 1``) of
            every step, or -1 (or NaN) where it is unknown; a list with one
            array per sequence when X is one. None (or -1 everywhere) is
            Baum-Welch as without it. Names (strings or other labels, every
            state named, None or NaN where unknown) name the states, sorted:
            ``state_names_``, what :meth:`predict` and :meth:`decode` return.

        Returns
        -------
        self : object
        """
        if (handler := _handler(X)) is not None:  # a Dask bag or array
            _labelled.refuse_collection(states)
            return handler.fit_hmm(self, X, lengths, sequence_weight)
        data = self._data(X, lengths, sequence_weight, reset=True, states=states)
        Xt, lengths, weights = data[:3]
        self._plan_init(Xt.size if Xt.ndim > 1 else len(Xt))
        row_weight = (
            np.ones(len(Xt)) if weights is None else np.repeat(weights, lengths)
        )
        components = self._components()
        start = self._starts(Xt, row_weight, components)
        if len(data) > 3:  # known states: evidence
            if (data[3] >= 0).all() and _labelled.closed_form(components, Xt):
                _labelled.fit_supervised(self, data, start, components)
                return self
            start = _labelled.labelled_start(self, start, data, components)
        self._fit_components(data, start, None)
        if self.n_iter_:
            self._warn_unvisited(self.stats_)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(
        self, X, lengths=None, *, y=None, sequence_weight=None, states=None
    ):
        """One step of incremental EM on a chunk of sequences.

        The E-step runs on the chunk under the current parameters; its
        expected statistics are added to ``stats_`` (those of the chunks seen
        before, each from its own E-step, or of the last ``fit``), and the
        M-step derives the parameters from the sum. This is the incremental EM
        of Neal and Hinton (1998), and the online EM of Cappé and Moulines
        (2009) with step size ``1/t`` written as a sum: the bound it
        maximises, the expected complete-data log posterior of all the chunks
        seen, never decreases. On a model with no statistics yet, the first
        call initialises the parameters as :meth:`fit` does, and is then one
        Baum-Welch iteration on the chunk, which never decreases the chunk's
        log posterior.

        Parameters
        ----------
        X : array-like of shape (n_steps, n_features) or list of array-like
            The chunk's sequences, as in :meth:`fit`.
        lengths : array-like of int of shape (n_sequences,), default=None
            As in :meth:`fit`.
        y : None
            Ignored; accepted by keyword only.
        sequence_weight : array-like of shape (n_sequences,), default=None
            As in :meth:`fit`.
        states : array-like of shape (n_steps,) or list of array-like, default=None
            As in :meth:`fit`: the E-step's posteriors of the known states
            are clamped.

        Returns
        -------
        self : object
        """
        first = not hasattr(self, "stats_")
        data = self._data(X, lengths, sequence_weight, reset=first, states=states)
        components = self._components()
        if first:
            Xt, lengths, weights = data[:3]
            self._plan_init(Xt.size if Xt.ndim > 1 else len(Xt))
            row_weight = (
                np.ones(len(Xt)) if weights is None else np.repeat(weights, lengths)
            )
            params = self._initialize(Xt, row_weight, self.random_state, components)
            self._keep_generator()
            structure, emission, _ = components
            total = LatentStats(structure.zeros(), emission.zeros(self.n_components))
        else:
            params = self._current_params()
            total = self.stats_
        chunk = self._expected_stats(data, params, components)
        total = total + chunk
        self._set_params(self._params_from_stats(total, params, components))
        self.stats_ = total
        return self

    def summarize(
        self, X, lengths=None, *, sequence_weight=None, states=None
    ) -> LatentStats:
        """Expected statistics of a chunk of sequences under the current parameters.

        The E-step of Baum-Welch on ``X`` alone: the chain's expected start,
        transition and occupancy counts and the family's statistics weighted by
        the step posteriors, plus the chunk's log-likelihood. Statistics of
        chunks add with ``+`` (or ``sum``), so one Baum-Welch iteration over
        data in many chunks (out of memory, or on many machines) is
        ``model.from_stats(sum(model.summarize(c) for c in chunks))``.

        Parameters
        ----------
        X : array-like of shape (n_steps, n_features) or list of array-like
            The chunk's sequences, as in :meth:`fit` (whole sequences: a
            sequence cut between two chunks is two sequences).
        lengths : array-like of int of shape (n_sequences,), default=None
            As in :meth:`fit`.
        sequence_weight : array-like of shape (n_sequences,), default=None
            As in :meth:`fit`.
        states : array-like of shape (n_steps,) or list of array-like, default=None
            As in :meth:`fit`: the posteriors of the known states are clamped,
            and ``log_evidence`` is the joint ``log p(x, z_known)``.

        Returns
        -------
        stats : LatentStats
            ``structure`` (:class:`~bayeskit.graph.ChainStats`), ``emission``
            (the family's statistics) and ``log_evidence``.
        """
        return replace(
            self._summary(X, lengths, sequence_weight, states), layout=described(self)
        )

    def _summary(self, X, lengths=None, sequence_weight=None, states=None):
        """:meth:`summarize` without the layout (for a model's own use)."""
        check_is_fitted(self)
        params = self._current_params()
        data = self._data(X, lengths, sequence_weight, reset=False, states=states)
        return self._expected_stats(data, params, self._components())

    def _warn_unvisited(self, stats):
        """Warn about states that no sequence visited in the last iteration."""
        updated = self._updates_emission() or "t" in self.params
        unvisited = np.flatnonzero(stats.structure.occupancy <= 0)
        if updated and unvisited.size:
            warn(
                f"state(s) {unvisited.tolist()} were never visited by any sequence "
                "in the last iteration; parameters no data reached kept their "
                "previous values (consider fewer n_components or a prior)",
                RuntimeWarning,
            )

    # -- inference ---------------------------------------------------------------
    def _inputs(self, X, lengths):
        """``(components, params, messages, lengths, as_list)`` for X."""
        check_is_fitted(self)
        params = self._current_params()
        Xt, lengths, as_list = self._sequences(X, lengths, reset=False)
        components = self._components()
        messages = self._messages(components[1], Xt, params.emission)
        return components, params, messages, lengths, as_list

    def score_sequences(self, X, lengths=None, *, states=None):
        """Log-likelihood of every sequence, shape ``(n_sequences,)``; with
        ``states`` (as in :meth:`fit`), the joint log-likelihood of every
        sequence and its known states, ``log p(x, z_known)``."""
        if (handler := _handler(X)) is not None:
            _labelled.refuse_collection(states)
            return handler.predict_hmm(self, "score_sequences", X, lengths)
        (structure, _, _), params, messages, lengths, _ = self._inputs(X, lengths)
        if states is not None:
            labels = _labelled.model_states(self, states, lengths, reset=False)
            if labels is not None:
                messages = _labelled.clamp(messages, labels, self.n_components)
        return structure.filter(messages, params.structure, lengths).log_evidence

    def score(self, X, lengths=None, *, y=None, states=None):
        """Log-likelihood of all the sequences (the sum over sequences).

        ``lengths`` is the second positional argument, as in hmmlearn (see
        :meth:`fit`); ``y`` is ignored and accepted by keyword only. With
        ``states`` (keyword only, as in :meth:`fit`), the joint
        log-likelihood of the sequences and their known states.
        """
        if (handler := _handler(X)) is not None:
            _labelled.refuse_collection(states)
            return handler.predict_hmm(self, "score", X, lengths)
        return float(self.score_sequences(X, lengths, states=states).sum())

    def score_samples(self, X, lengths=None):
        """``(log-likelihood, posteriors)``: the total and every step's posterior."""
        if (handler := _handler(X)) is not None:
            return handler.predict_hmm(self, "score_samples", X, lengths)
        (structure, _, _), params, messages, lengths, as_list = self._inputs(X, lengths)
        post = structure.posterior(messages, params.structure, lengths)
        proba = post.posterior
        return float(post.log_evidence.sum()), self._back(proba, lengths, as_list)

    def predict_proba(self, X, lengths=None):
        """Posterior of the state of every step, ``(n_steps, n_components)``."""
        return self.score_samples(X, lengths)[1]

    def decode(self, X, lengths=None, algorithm=None):
        """Most probable states: ``(log probability, state sequence)``.

        'viterbi' gives the most probable joint path and its log probability;
        'map' the most probable state of each step and the log-likelihood.
        """
        if (handler := _handler(X)) is not None:
            return handler.predict_hmm(self, "decode", X, lengths, algorithm)
        algorithm = algorithm or self.algorithm
        if algorithm not in ("viterbi", "map"):
            raise ValueError(f"algorithm must be 'viterbi' or 'map', got {algorithm!r}")
        (structure, _, _), params, messages, lengths, as_list = self._inputs(X, lengths)
        if algorithm == "viterbi":
            path, log_prob = structure.decode(messages, params.structure, lengths)
        else:
            post = structure.posterior(messages, params.structure, lengths)
            path, log_prob = np.argmax(post.posterior, axis=1), post.log_evidence
        path = _labelled.named(self, path)  # the names of a fit with named states
        return float(np.sum(log_prob)), self._back(path, lengths, as_list)

    def predict(self, X, lengths=None):
        """The decoded state of every step (see :meth:`decode`)."""
        return self.decode(X, lengths)[1]

    def _n_parameters(self, components=None):
        """Free scalars of the parameters in ``params``."""
        structure, emission, _ = components or self._components()
        n = structure.n_parameters()
        if self._updates_emission():
            n += emission.n_parameters(self.n_components)
        return n

    def bic(self, X, lengths=None):
        """Bayesian information criterion (lower is better); n is the number of
        observed steps of all sequences (gaps, steps with every value
        missing, are not observations)."""
        check_is_fitted(self)
        params = self._current_params()
        Xt, lengths, _ = self._sequences(X, lengths, reset=False)
        structure, emission, _ = self._components()
        messages = self._messages(emission, Xt, params.emission)
        log_lik = structure.filter(messages, params.structure, lengths).log_evidence
        n = _n_observed_steps(Xt)
        return -2 * log_lik.sum() + self._n_parameters() * np.log(max(n, 1))

    def aic(self, X, lengths=None):
        """Akaike information criterion (lower is better)."""
        return -2 * self.score(X, lengths=lengths) + 2 * self._n_parameters()

    def _html_repr(self):
        # The notebook display (scikit-learn's _repr_html_ calls it): what
        # the fitted model holds, then scikit-learn's display.
        from .._html import estimator_html

        return estimator_html(self)
