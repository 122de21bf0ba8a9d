"""The protocol every emission family follows, and the statistics they share.

An emission family is the message from the observed features into a latent
structure. It knows nothing about the structure: it scores data under every
state and turns weighted data into statistics and statistics into
parameters. The structure (a node, a chain, a network) supplies the weights:
one-hot labels in a supervised fit, posteriors in EM.

A family is a small object built once per fit from the estimator's
parameters (its configuration: the categories of each feature, the
covariance structure, ...). Its parameters and statistics are separate
values, so the family itself holds no fitted state:

- ``log_likelihood(X, params)``: ``log p(x_i | z = k)``, ``(n, n_states)``;
- ``stats(X, weights, labels=None)``: statistics under ``weights`` of shape
  ``(n, n_states)``; they add with ``+``, :meth:`Emission.zeros` is their
  zero, and ``total_weight`` their weight per state;
- ``map_params(stats, prior, previous=None)``: parameters from statistics
  and a prior object of :mod:`bayeskit.priors` (``previous`` for updates
  that keep what no data reached, such as the structural zeros of a table);
- ``log_prior(params, prior)``: the prior's log density at ``params``, up to
  its constant (EM monitors log-likelihood plus this);
- ``n_parameters(n_states)``: free scalars, for BIC and AIC;
- ``init_params(X, weights, n_states, random_state)``: first parameters for
  EM (``weights`` of shape ``(n, n_states)``, an initialiser's
  responsibilities, or ``(n, 1)``, row weights only, for a family that draws
  its own start, as the hidden Markov models' families do);
- ``sample(params, states, random_state)``: one row per state given.

A family may also offer ``messages(X, params)``: the message in the form the
chain kernels read fastest. The default is the dense log-likelihood; the
categorical family answers with a table of one row per symbol and the codes
that index it, and then takes its statistics from the posterior weight each
table row received (``table_stats(row_weights)``), which the chain kernels
sum in the same pass.

A family that a model's ``emission=`` parameter may name declares ``name``
(it is then registered by that name when its class is defined: a new family
is one module, exported from :mod:`bayeskit.emissions`, and nothing else),
``support`` (what its rows may hold, which the estimators check at their
boundary and declare in their tags), and builds itself for the data with
``for_data(X)``.

EM calls ``expected_stats(X, weights, params)``: the statistics under the
current parameters. For most families they do not depend on ``params`` (the
default is ``stats(X, weights)``); a family with latent variables of its own,
such as a mixture's components, takes their posterior under ``params`` there.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np

from .._logmath import has_nan

__all__ = ["SUPPORTS", "Emission", "ProductStats", "family_from_spec", "family_names"]

#: What a family's rows may hold, and how the estimators say it.
SUPPORTS = {
    "real": "finite real numbers",
    "nonnegative": "non-negative finite numbers",
    "positive": "positive finite numbers",
    "counts": "counts (non-negative integers)",
}

_BY_NAME: dict = {}


class Emission(ABC):
    """Base of the emission families (see the module for the protocol)."""

    #: Whether the family marginalises missing coordinates (NaN) of a row: its
    #: ``log_likelihood`` is then the density of the observed coordinates and
    #: its ``expected_stats`` take the missing ones' expectation. A model of
    #: sequences passes rows with some coordinates missing only to a family
    #: that does; a row with every coordinate missing never reaches the family.
    missing_coordinates = False
    #: The name that a model's ``emission=`` parameter knows the family by
    #: (None: not known by name). Defining it registers the family.
    name: ClassVar[str | None] = None
    #: What the family's rows may hold: a key of :data:`SUPPORTS`.
    support: ClassVar[str] = "real"
    #: The fields of the family's parameters that a model over any family
    #: sets as fitted attributes (``field + "_"``); None: every field.
    fitted_fields: ClassVar[tuple | None] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("name"):
            _BY_NAME[cls.name] = cls

    @classmethod
    def by_default(cls) -> Emission:
        """The family with its default options, not yet sized to any data."""
        return cls(None)

    def for_data(self, X) -> Emission:
        """The family sized to the columns of ``X`` (a copy; a family already
        sized must match them: ValueError naming X otherwise)."""
        d = np.shape(X)[1]
        n = getattr(self, "n_features", None)
        if n is not None and n != d:
            raise ValueError(
                f"X has {d} features, but the emission family {self!r} was "
                f"built for {n}"
            )
        family = copy.copy(self)
        family.n_features = d
        return family

    def default_prior(self):
        """The prior a model uses when given none: None, maximum likelihood
        (a family whose estimate needs a ridge says so here)."""
        return None

    def check_data(self, X: np.ndarray) -> None:
        """ValueError naming X unless its cells (NaN aside) are in the
        family's ``support``."""
        values = X[~np.isnan(X)] if has_nan(X) else X
        ok = {
            "real": lambda v: True,
            "nonnegative": lambda v: np.all(v >= 0),
            "positive": lambda v: np.all(v > 0),
            "counts": lambda v: np.all((v >= 0) & (v == np.floor(v))),
        }[self.support](values)
        if ok and self.support == "counts" and values.size and values.max() > 2**53:
            raise ValueError(
                f"X holds counts above 2**53 (the largest {values.max():.3g}), "
                "which float64 cannot hold exactly, for the emission family "
                f"{type(self).__name__}"
            )
        if not ok:
            # scikit-learn's words for negative input, then what X must hold.
            negative = "Negative values in data: " if np.any(values < 0) else ""
            raise ValueError(
                f"{negative}X must hold {SUPPORTS[self.support]} for the emission "
                f"family {type(self).__name__}"
            )

    def fitted_attributes(self, params) -> dict:
        """The fitted attributes (``field + "_"``) of ``params``."""
        names = self.fitted_fields or [f.name for f in fields(params)]
        return {f"{name}_": getattr(params, name) for name in names}

    @abstractmethod
    def log_likelihood(self, X, params) -> np.ndarray:
        """``log p(x_i | z = k)`` for every row and state, ``(n, n_states)``."""

    @abstractmethod
    def stats(self, X, weights: np.ndarray, labels: np.ndarray | None = None):
        """Statistics of ``X`` under ``weights`` of shape ``(n, n_states)``.

        ``labels`` may be given when each row's weight sits on one state (a
        supervised fit): a family may then take a faster path.
        """

    @abstractmethod
    def zeros(self, n_states: int):
        """The statistics of no data: the zero of ``+``."""

    @abstractmethod
    def map_params(self, stats, prior=None, previous=None):
        """Parameters from statistics and ``prior`` (None: maximum likelihood)."""

    def expected_stats(self, X, weights: np.ndarray, params):
        """Statistics for one EM step under the current ``params``: by default
        :meth:`stats` (a family with latent variables of its own overrides it)."""
        return self.stats(X, weights)

    def table_stats(self, row_weights: np.ndarray):
        """Statistics from the posterior weight of every row of the table that
        :meth:`messages` sends, ``(n_rows, n_states)`` (families whose message
        is a table only)."""
        raise NotImplementedError(f"{type(self).__name__} sends no table")

    def log_prior(self, params, prior=None) -> float:
        """Log density of ``prior`` at ``params``, up to its constant."""
        return 0.0 if prior is None else float(prior.log_density(params))

    @abstractmethod
    def n_parameters(self, n_states: int) -> int:
        """Free scalar parameters of ``n_states`` states."""

    def init_params(self, X, weights: np.ndarray, n_states: int, random_state):
        """First parameters for EM: by default the MAP parameters of the
        statistics under ``weights`` (responsibilities of an initialiser,
        ``(n, n_states)``); a family that draws its own start reads ``weights``
        of shape ``(n, 1)`` as row weights."""
        return self.map_params(self.stats(X, weights))

    def sample(self, params, states: np.ndarray, random_state) -> np.ndarray:
        """One row drawn from the emission of every state in ``states``."""
        raise NotImplementedError(f"{type(self).__name__} does not sample")

    def messages(self, X, params):
        """The message as the chain kernels read it: ``(log table, codes)``.

        The default is the dense log-likelihood with no codes.
        """
        return self.log_likelihood(X, params), None


@dataclass(frozen=True)
class ProductStats:
    """Statistics of independent emission families on disjoint feature sets.

    A product of emissions (categorical columns and Gaussian columns of one
    naive Bayes) has the tuple of its parts' statistics; they add part by part.
    """

    parts: tuple  # None stands for a family with no features

    def __add__(self, other: ProductStats) -> ProductStats:
        return ProductStats(
            tuple(None if a is None else a + b for a, b in zip(self.parts, other.parts))
        )


def family_names() -> list[str]:
    """The names of the registered emission families, sorted."""
    return sorted(_BY_NAME)


def family_from_spec(spec, name: str = "emission") -> Emission:
    """The family that an ``emission=`` parameter gives, not yet sized to data.

    ``spec`` is a registered name (see :func:`family_names`), an emission
    family (used as given), or an emission family's class (its default).
    TypeError or ValueError naming ``name`` otherwise.
    """
    if isinstance(spec, Emission):
        return spec
    if isinstance(spec, type) and issubclass(spec, Emission):
        return spec.by_default()
    if isinstance(spec, str):
        if spec not in _BY_NAME:
            raise ValueError(
                f"{name} must be one of {family_names()} or an emission "
                f"family of bayeskit.emissions, got {spec!r}"
            )
        return _BY_NAME[spec].by_default()
    raise TypeError(
        f"{name} must be the name of an emission family ({family_names()}) or "
        f"an emission family of bayeskit.emissions, got {type(spec).__name__}"
    )
