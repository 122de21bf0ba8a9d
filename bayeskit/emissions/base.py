"""What the emission families share: statistics of a product of families."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ProductStats"]


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
