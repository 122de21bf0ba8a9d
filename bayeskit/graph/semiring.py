"""The two semirings of belief propagation, as objects.

Both combine log-potentials by addition (a product of probabilities); they
differ in how a variable is eliminated: :data:`SUM_PRODUCT` sums it out
(``logsumexp``: marginals, partition functions), :data:`MAX_PRODUCT` maximises
it out (the most probable assignment). Code that runs a message schedule takes
a semiring and never branches on a string.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._logmath import logsumexp

__all__ = ["MAX_PRODUCT", "SUM_PRODUCT", "MaxProduct", "Semiring", "SumProduct"]


@dataclass(frozen=True)
class Semiring:
    """Base of the log-space semirings: ``combine`` is addition of logs."""

    name: str = ""

    @staticmethod
    def combine(*log_values: np.ndarray) -> np.ndarray:
        """Log of the product of the potentials: their sum."""
        out = log_values[0]
        for v in log_values[1:]:
            out = out + v
        return out

    def eliminate(self, log_values: np.ndarray, axis) -> np.ndarray:
        """Eliminate ``axis`` (an int or a tuple of ints) from ``log_values``."""
        raise NotImplementedError  # abstract: SumProduct and MaxProduct define it


@dataclass(frozen=True)
class SumProduct(Semiring):
    """Sum-product: eliminating a variable sums it out in log space."""

    name: str = "sum-product"

    def eliminate(self, log_values: np.ndarray, axis) -> np.ndarray:
        return logsumexp(log_values, axis=axis)


@dataclass(frozen=True)
class MaxProduct(Semiring):
    """Max-product: eliminating a variable keeps its best value."""

    name: str = "max-product"

    def eliminate(self, log_values: np.ndarray, axis) -> np.ndarray:
        return np.max(log_values, axis=axis)


SUM_PRODUCT = SumProduct()
MAX_PRODUCT = MaxProduct()
