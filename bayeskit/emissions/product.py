"""A product of emission families on disjoint sets of columns.

Features that are independent given the latent state may come from different
families (categorical columns and Gaussian columns of one naive Bayes): the
log-likelihood of a row is the sum of every family's over its own columns,
the statistics are the tuple of every family's (:class:`ProductStats`, which
add part by part), and so are the parameters and the priors.

A part may be ``None``: a family with no columns (a mixed naive Bayes whose
data hold no numeric column). It scores 0, and its statistics, parameters and
prior are ``None``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .base import Emission, ProductStats

__all__ = ["Product", "ProductStats"]


class Product(Emission):
    """Independent emission families on disjoint columns.

    Parameters
    ----------
    families : sequence of emission families or None
        The families, each following the protocol of
        :class:`~bayeskit.emissions.base.Emission`; ``None`` for a part with no
        columns.
    columns : sequence of array-like of int, default=None
        The columns of a 2-d ``X`` that each family reads. ``None``: ``X`` is
        always given already split, as a tuple with one block per family
        (what a family reads may then differ in type, such as integer codes
        for a categorical family and floats for a Gaussian one).

    Notes
    -----
    With families :math:`f_1, \\ldots, f_m` on the columns :math:`C_1, \\ldots,
    C_m` (disjoint),

    .. math::

        \\log p(x \\mid z = k) = \\sum_{i=1}^m \\log f_i(x_{C_i} \\mid z = k),

    so the statistics of the parts are gathered and turned into parameters
    part by part, each under its own prior.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.emissions import DIAG, Categorical, Gaussian
    >>> from bayeskit.emissions.product import Product
    >>> family = Product([Categorical([2]), Gaussian(DIAG)])
    >>> codes = np.array([[0], [1], [1]])
    >>> x = np.array([[0.5], [1.5], [2.5]])
    >>> weights = np.eye(2)[[0, 1, 1]]
    >>> stats = family.stats((codes, x), weights)
    >>> [type(s).__name__ for s in stats.parts]
    ['CategoricalStats', 'GaussianStats']
    """

    def __init__(self, families: Sequence, columns: Sequence | None = None) -> None:
        self.families = tuple(families)
        if columns is not None:
            columns = tuple(np.asarray(c, dtype=np.intp) for c in columns)
            if len(columns) != len(self.families):
                raise ValueError(
                    f"{len(columns)} column sets for {len(self.families)} families"
                )
            flat = np.concatenate(columns) if columns else np.empty(0, np.intp)
            if len(np.unique(flat)) != len(flat):
                raise ValueError("the families' column sets must be disjoint")
        self.columns = columns

    def split(self, X) -> tuple:
        """``X`` as one block per family (as given when already a tuple)."""
        if isinstance(X, tuple):
            if len(X) != len(self.families):
                raise ValueError(
                    f"X has {len(X)} blocks for {len(self.families)} families"
                )
            return X
        if self.columns is None:
            raise TypeError(
                "this product has no column sets: give X as a tuple of one block "
                "per family"
            )
        return tuple(
            None if f is None else X[:, c] for f, c in zip(self.families, self.columns)
        )

    def _parts(self, *values):
        """(family, *value) of every part with a family."""
        return [
            (f, *v)
            for f, *v in zip(self.families, *values, strict=True)
            if f is not None
        ]

    def log_likelihood(self, X, params) -> np.ndarray:
        """The sum of every family's log-likelihood, ``(n, n_states)``."""
        out = None
        for family, block, p in self._parts(self.split(X), params):
            ll = family.log_likelihood(block, p)
            out = ll if out is None else out + ll
        if out is None:
            raise ValueError("the product has no family with columns")
        return out

    def stats(self, X, weights: np.ndarray, labels: np.ndarray | None = None):
        blocks = self.split(X)
        return ProductStats(
            tuple(
                None if f is None else f.stats(block, weights, labels)
                for f, block in zip(self.families, blocks)
            )
        )

    def zeros(self, n_states: int) -> ProductStats:
        return ProductStats(
            tuple(None if f is None else f.zeros(n_states) for f in self.families)
        )

    def map_params(self, stats: ProductStats, prior=None, previous=None) -> tuple:
        """Every family's parameters from its statistics and its own prior.

        ``prior`` and ``previous`` are tuples with one entry per family (or
        None for none).
        """
        m = len(self.families)
        priors = (None,) * m if prior is None else tuple(prior)
        previous = (None,) * m if previous is None else tuple(previous)
        out = []
        for f, s, pr, pv in zip(self.families, stats.parts, priors, previous):
            if f is None:
                out.append(None)
            elif pv is not None:
                out.append(f.map_params(s, pr, pv))
            elif pr is not None:
                out.append(f.map_params(s, pr))
            else:
                out.append(f.map_params(s))  # the family's own default
        return tuple(out)

    def log_prior(self, params, prior=None) -> float:
        if prior is None:
            return 0.0
        return float(sum(f.log_prior(p, pr) for f, p, pr in self._parts(params, prior)))

    def n_parameters(self, n_states: int) -> int:
        return int(sum(f.n_parameters(n_states) for f in self.families if f))

    def sample(self, params, states: np.ndarray, random_state) -> tuple:
        """One block per family, each with a row per state of ``states``."""
        return tuple(
            None if f is None else f.sample(p, states, random_state)
            for f, p in zip(self.families, params)
        )

    def grow(self, stats: ProductStats, like: Product) -> ProductStats:
        """``stats`` laid out for the families of ``like``: every family that
        can grow (a categorical family, to more categories) lays its
        statistics out for its counterpart in ``like``, counted zero where
        new; the others keep theirs."""
        return ProductStats(
            tuple(
                old.grow(s, new.n_categories) if hasattr(old, "grow") else s
                for old, new, s in zip(self.families, like.families, stats.parts)
            )
        )
