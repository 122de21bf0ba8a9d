"""Log-space factors: tables over named discrete variables.

A :class:`LogFactor` holds ``log phi(x_1, ..., x_k)`` as an array with one axis
per variable, optionally preceded by a *batch* axis of ``n`` rows, so that the
evidence of ``n`` samples propagates in one pass. A probability of exactly zero
is ``-inf`` and stays so through products, marginalisation and normalisation
(never NaN).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence

import numpy as np

from .._logmath import log_normalize, safe_log
from ._checks import MAX_AXES, cardinality, node_labels, real_array, sequence
from .semiring import MAX_PRODUCT, SUM_PRODUCT, Semiring

__all__ = ["LogFactor"]


class LogFactor:
    """A log-potential table over named discrete variables.

    Parameters
    ----------
    variables : sequence of hashable
        Names of the variables, one per table axis, all different.
    cardinalities : sequence of int
        Number of states of each variable.
    log_values : array-like of shape ``(*cardinalities)`` or ``(n, *cardinalities)``
        Log-potentials. ``-inf`` encodes a potential of exactly zero. A leading
        extra axis is a batch axis (one table per row of evidence).

    Attributes
    ----------
    variables : tuple
    cardinalities : tuple of int
    log_values : ndarray
    batched : bool
        Whether ``log_values`` has a leading batch axis.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.graph import LogFactor
    >>> prior = LogFactor.from_probabilities(["A"], [2], [0.3, 0.7])
    >>> cpt = LogFactor.from_probabilities(["A", "B"], [2, 2], [[0.9, 0.1],
    ...                                                          [0.2, 0.8]])
    >>> joint = prior * cpt
    >>> np.round(np.exp(joint.marginalize(["A"]).log_values), 2)
    array([0.41, 0.59])
    """

    __slots__ = ("batched", "cardinalities", "log_values", "variables")

    def __init__(
        self,
        variables: Sequence[Hashable],
        cardinalities: Sequence[int],
        log_values,
    ) -> None:
        variables = node_labels(variables, "variables")
        cards = tuple(
            cardinality(c, f"cardinalities[{i}]")
            for i, c in enumerate(sequence(cardinalities, "cardinalities", "ints"))
        )
        if len(set(variables)) != len(variables):
            raise ValueError(f"variables must be distinct, got {variables!r}")
        if len(cards) != len(variables):
            raise ValueError(
                f"cardinalities has {len(cards)} entries for {len(variables)} variables"
            )
        if len(cards) > MAX_AXES:
            raise ValueError(
                f"variables has {len(cards)} entries; a factor has at most "
                f"{MAX_AXES} (numpy's axes)"
            )
        values = real_array(log_values, "log_values")
        if values.shape == cards:
            batched = False
        elif values.ndim == len(cards) + 1 and values.shape[1:] == cards:
            batched = True
        else:
            raise ValueError(
                f"log_values has shape {values.shape}; expected {cards} for "
                f"variables {variables}, or (n, *{cards}) with a batch axis"
            )
        if np.isnan(values).any():
            raise ValueError("log_values contains NaN")
        if (values == np.inf).any():
            raise ValueError("log_values contains +inf")
        self.variables = variables
        self.cardinalities = cards
        self.log_values = values
        self.batched = batched

    @classmethod
    def _trusted(cls, variables, cardinalities, log_values) -> LogFactor:
        """Build without validation (internal operations keep the invariants)."""
        f = cls.__new__(cls)
        f.variables = tuple(variables)
        f.cardinalities = tuple(cardinalities)
        f.log_values = log_values
        f.batched = log_values.ndim == len(f.variables) + 1
        return f

    @classmethod
    def from_probabilities(
        cls,
        variables: Sequence[Hashable],
        cardinalities: Sequence[int],
        values,
    ) -> LogFactor:
        """A factor from non-negative potentials (probabilities or weights)."""
        values = real_array(values, "values")
        if np.isnan(values).any() or (values < 0).any():
            raise ValueError(
                f"potential over {tuple(variables)} must have non-negative "
                "entries (no NaN)"
            )
        if np.isinf(values).any():
            raise ValueError(f"potential over {tuple(variables)} has infinite entries")
        return cls(variables, cardinalities, safe_log(values))

    # -- introspection ----------------------------------------------------
    @property
    def n_batch(self) -> int | None:
        """Number of rows of the batch axis, or None when unbatched."""
        return self.log_values.shape[0] if self.batched else None

    def cardinality(self, variable: Hashable) -> int:
        """Number of states of ``variable``."""
        return self.cardinalities[self._axis(variable)]

    def _axis(self, variable: Hashable) -> int:
        try:
            return self.variables.index(variable)
        except ValueError:
            raise ValueError(
                f"unknown variable {variable!r}; this factor is over {self.variables}"
            ) from None

    def _array_axis(self, variable: Hashable) -> int:
        return self._axis(variable) + self.batched

    def __repr__(self) -> str:
        batch = f", batch={self.n_batch}" if self.batched else ""
        scope = ", ".join(
            f"{v}:{c}" for v, c in zip(self.variables, self.cardinalities)
        )
        return f"LogFactor({scope}{batch})"

    # -- algebra ----------------------------------------------------------
    def _expanded(self, variables: tuple, batched: bool) -> np.ndarray:
        """Values transposed and reshaped to broadcast over ``variables``."""
        order = [variables.index(v) for v in self.variables]
        perm = np.argsort(order)
        vals = self.log_values
        if self.batched:
            vals = np.transpose(vals, (0, *(1 + perm)))
        else:
            vals = np.transpose(vals, tuple(perm))
        shape = [1] * len(variables)
        for v, c in zip(self.variables, self.cardinalities):
            shape[variables.index(v)] = c
        if self.batched:
            return vals.reshape((vals.shape[0], *shape))
        return vals.reshape(((1,) if batched else ()) + tuple(shape))

    def product(self, *others: LogFactor) -> LogFactor:
        """Product of factors: the sum of their log-values over the union scope.

        The scope is this factor's variables followed by the new variables of
        the others, in order. Batched and unbatched factors combine (the batch
        sizes of batched ones must agree).
        """
        factors = (self, *others)
        variables: list = []
        cards: list = []
        for f in factors:
            for v, c in zip(f.variables, f.cardinalities):
                if v in variables:
                    known = cards[variables.index(v)]
                    if known != c:
                        raise ValueError(
                            f"variable {v!r} has {known} states in one factor and "
                            f"{c} in another"
                        )
                else:
                    variables.append(v)
                    cards.append(c)
        sizes = {f.n_batch for f in factors if f.batched}
        if len(sizes) > 1:
            raise ValueError(f"batched factors have different batch sizes {sizes}")
        batched = bool(sizes)
        scope = tuple(variables)
        total = factors[0]._expanded(scope, batched)
        for f in factors[1:]:
            total = total + f._expanded(scope, batched)
        shape = ((sizes.pop(),) if batched else ()) + tuple(cards)
        return LogFactor._trusted(scope, cards, np.broadcast_to(total, shape).copy())

    __mul__ = product

    def marginalize(
        self, variables: Sequence[Hashable], semiring: Semiring = SUM_PRODUCT
    ) -> LogFactor:
        """Eliminate ``variables`` by the semiring (default: sum them out)."""
        axes = tuple(self._array_axis(v) for v in variables)
        keep = [i for i, v in enumerate(self.variables) if v not in variables]
        values = (
            semiring.eliminate(self.log_values, axis=axes)
            if axes
            else (self.log_values.copy())
        )
        return LogFactor._trusted(
            [self.variables[i] for i in keep],
            [self.cardinalities[i] for i in keep],
            np.asarray(values, dtype=float),
        )

    def max_marginalize(
        self, variables: Sequence[Hashable]
    ) -> tuple[LogFactor, dict[Hashable, np.ndarray]]:
        """Maximise ``variables`` out and remember where the maxima were.

        Returns
        -------
        factor : LogFactor
            The max-marginal over the remaining variables.
        argmax : dict
            For each eliminated variable, an integer array shaped like the
            result's ``log_values``: its state in the best joint assignment of
            the eliminated variables, for every assignment of the remaining
            ones. Ties go to the lowest joint index (deterministic).
        """
        variables = list(variables)
        axes = [self._array_axis(v) for v in variables]
        result = self.marginalize(variables, MAX_PRODUCT)
        if not axes:
            return result, {}
        moved = np.moveaxis(self.log_values, axes, range(-len(axes), 0))
        elim_cards = [self.cardinalities[self._axis(v)] for v in variables]
        flat = moved.reshape((*moved.shape[: -len(axes)], math.prod(elim_cards)))
        best = np.argmax(flat, axis=-1)
        states = np.unravel_index(best, elim_cards)
        return result, {v: s for v, s in zip(variables, states)}

    def reduce(self, evidence: Mapping[Hashable, object]) -> LogFactor:
        """Condition on observed states, removing those variables.

        Each value of ``evidence`` is a state index, or an integer array of
        shape ``(n,)`` (one observed state per row, which makes the result
        batched over those ``n`` rows).
        """
        values = self.log_values
        variables = list(self.variables)
        cards = list(self.cardinalities)
        batched = self.batched
        for var, state in evidence.items():
            ax = variables.index(var) if var in variables else None
            if ax is None:
                raise ValueError(
                    f"evidence names unknown variable {var!r}; this factor is over "
                    f"{self.variables}"
                )
            card = cards[ax]
            state = np.asarray(state)
            if state.dtype.kind not in "iu" and not (
                state.dtype.kind == "f" and np.all(state == np.round(state))
            ):
                raise ValueError(f"evidence for {var!r} must be integer state indices")
            state = state.astype(np.intp)
            if ((state < 0) | (state >= card)).any():
                raise ValueError(
                    f"evidence for {var!r} is out of range: states are 0..{card - 1}"
                )
            axis = ax + batched
            if state.ndim == 0:
                values = np.take(values, int(state), axis=axis)
            else:
                n = state.shape[0]
                if batched and values.shape[0] != n:
                    raise ValueError(
                        f"evidence for {var!r} has {n} rows, the factor has "
                        f"{values.shape[0]}"
                    )
                if not batched:
                    values = np.broadcast_to(values, (n, *values.shape))
                    axis += 1
                    batched = True
                moved = np.moveaxis(values, axis, -1)
                values = np.take_along_axis(
                    moved, state.reshape((n,) + (1,) * (moved.ndim - 1)), axis=-1
                )[..., 0]
            del variables[ax], cards[ax]
        return LogFactor._trusted(variables, cards, np.array(values, dtype=float))

    def normalize(self) -> tuple[LogFactor, np.ndarray]:
        """Normalise over all variables (per row when batched).

        Returns the normalised factor and the log normaliser (a scalar, or
        ``(n,)`` when batched). A table with no mass stays ``-inf`` everywhere
        and its log normaliser is ``-inf``.
        """
        vals = self.log_values
        lead = vals.shape[0] if self.batched else 1
        # The table size, not -1: a batch of no rows has no size to infer.
        flat = vals.reshape(lead, math.prod(self.cardinalities))
        normed, lse = log_normalize(flat, axis=1)
        lse = lse[:, 0] if self.batched else lse[0, 0]
        return LogFactor._trusted(
            self.variables, self.cardinalities, normed.reshape(vals.shape)
        ), lse

    def to_probabilities(self) -> np.ndarray:
        """``exp(log_values)``."""
        return np.exp(self.log_values)

    def transpose(self, variables: Sequence[Hashable]) -> LogFactor:
        """The same factor with its axes in the order of ``variables``."""
        variables = tuple(variables)
        if sorted(map(repr, variables)) != sorted(map(repr, self.variables)):
            raise ValueError(
                f"transpose needs a permutation of {self.variables}, got {variables}"
            )
        perm = [self._axis(v) for v in variables]
        if self.batched:
            perm = [0, *(p + 1 for p in perm)]
        return LogFactor._trusted(
            variables,
            [self.cardinalities[self._axis(v)] for v in variables],
            np.transpose(self.log_values, perm),
        )
