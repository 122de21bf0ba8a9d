"""What the models over any emission family share: the family from the
``emission=`` parameter, its fitted attributes, and how ``X`` is read.

:class:`~bayeskit.MixtureModel`, :class:`~bayeskit.NaiveBayes` and
:class:`~bayeskit.HiddenMarkovModel` take a family by name or as an object
(:func:`bayeskit.emissions.family_from_spec`); each reads ``X`` as that family
reads it (its ``support``, its missing cells) and exposes the fields of the
family's parameters as fitted attributes (``lambdas_`` for Poisson rates,
``means_`` for Gaussian means), besides ``emission_params_``.
"""

from __future__ import annotations

import numpy as np

from .._validation import validate_data
from ..emissions import family_from_spec
from .classifier import float_input

__all__ = ["FamilyAttributes", "check_family_data", "degenerate", "read_family"]


def check_family_data(family, X) -> None:
    """ValueError naming X unless its values are in the family's support; a
    family of real values is read by squares, so values whose squares
    overflow float64 are refused too (as in every Gaussian model)."""
    family.check_data(X)
    if family.support == "real":
        float_input(X)


def degenerate(est, what: str, n_samples=None) -> ValueError:
    """The error for parameters that the statistics do not determine (a
    LinAlgError of the family: a variance from too few distinct rows)."""
    rows = "" if n_samples is None else f" (fitted on n_samples = {n_samples})"
    return ValueError(
        f"{type(est).__name__}{rows}: a {what}'s parameters are degenerate for the "
        f"emission family {type(est._emission_family()).__name__} (it has no "
        "rows of positive weight, or too few distinct rows: a variance is "
        "zero or undefined); give it more rows, use fewer "
        f"{what}s, or set emission_prior"
    )


def read_family(est, X, reset, sample_weight=None, grows=False):
    """``X`` as the family of ``est.emission`` reads it: float64, NaN allowed
    where the family marginalises it, every value in its support (ValueError
    naming X otherwise). Returns ``(X, False)``: nothing grows."""
    family = est._emission_family()
    X = validate_data(
        est,
        X,
        reset=reset,
        dtype=np.float64,
        ensure_all_finite="allow-nan" if family.missing_coordinates else True,
    )
    check_family_data(family, X)
    return X, False


class FamilyAttributes:
    """The family's parameters as fitted attributes: ``emission_params_`` and
    every field of it with a trailing underscore, read from the parameters
    the estimator keeps (``_family_params()``)."""

    def _emission_family(self):
        """The family that ``emission`` names, not yet sized to data."""
        return family_from_spec(self.emission)

    def _sized_family(self, n_features: int):
        """The family sized to ``n_features`` columns."""
        return self._emission_family().for_data(np.empty((0, n_features)))

    def _family_params(self):
        """The family's fitted parameters (None before fit): where the EM
        models keep them; a classifier reads its own."""
        return self.__dict__.get("_emission_value")

    @property
    def emission_params_(self):
        params = self._family_params()
        if params is None:
            raise AttributeError("emission_params_ is set by fit")
        return params

    def __getattr__(self, name):
        # Only the fields of the fitted family's parameters (lambdas_,
        # means_, ...); everything else is a plain missing attribute.
        if name.startswith("_") or not name.endswith("_"):
            # A method hidden by its condition (available_if): its own message
            # says why, which Python's fallback to __getattr__ would lose.
            for klass in type(self).__mro__:
                attr = klass.__dict__.get(name)
                if attr is not None and hasattr(attr, "__get__"):
                    return attr.__get__(self, type(self))
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}"
            )
        triple = self.__dict__.get("_triple")
        params = self._family_params()
        if triple is not None and params is not None:
            attributes = triple.emission.fitted_attributes(params)
            if name in attributes:
                return attributes[name]
        raise AttributeError(
            f"{type(self).__name__!r} object has no attribute {name!r}"
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            family = self._emission_family()
        except (TypeError, ValueError):
            return tags
        tags.input_tags.allow_nan = bool(family.missing_coordinates)
        tags.input_tags.positive_only = family.support != "real"
        return tags
