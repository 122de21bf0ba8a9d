"""What the families with independent features given the state share.

A family whose features are independent given the state (exponential,
gamma, log-normal, negative binomial counts) scores a row as the sum of its
cells' log densities. A missing cell (NaN) is marginalised: its density
integrates (or sums) to one, so it adds 0 to the row's log-likelihood and
nothing to the statistics. The statistics therefore keep a weight per state
*and* feature, ``counts[k, j] = sum_t w_tk [x_tj observed]``, beside the
weight per state (``weight[k] = sum_t w_tk``, the rows' weight).

This module holds the pieces those families share: the split of ``X`` into
its observed cells, the two weights, the additive statistics' base class, the
log-likelihood of a family whose cell log density is linear in functions of
``x`` (an exponential family), and the data's moments that a random start
draws from.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from .._logmath import has_nan
from .base import Emission

__all__ = [
    "CellStats",
    "IndependentFamily",
    "cell_moments",
    "check_support",
    "linear_log_likelihood",
    "observed_cells",
]


def observed_cells(X, fill: float) -> tuple[np.ndarray, np.ndarray | None]:
    """``(X, observed)``: ``X`` as float64 with its NaN cells replaced by
    ``fill`` (a value in the family's support, so transforms of it stay
    finite), and the mask of observed cells, None when no cell is missing (the
    complete-data path, which reads ``X`` unchanged)."""
    X = np.asarray(X, dtype=float)
    if not has_nan(X):
        return X, None
    observed = ~np.isnan(X)
    return np.where(observed, X, fill), observed


def cell_weights(
    weights: np.ndarray, observed: np.ndarray | None, n_features: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(weight, counts)``: the weight ``(k,)`` of every state and the weight
    ``(k, d)`` of every state's observed cells of every feature."""
    weight = weights.sum(axis=0)
    if observed is None:
        counts = np.repeat(weight[:, None], n_features, axis=1)
    else:
        counts = weights.T @ observed.astype(float)
    return weight, counts


def masked(T: np.ndarray, observed: np.ndarray | None) -> np.ndarray:
    """``T`` with its missing cells set to 0 (``T`` itself when complete)."""
    return T if observed is None else np.where(observed, T, 0.0)


def linear_log_likelihood(
    terms, normaliser: np.ndarray, base: np.ndarray | None, observed
) -> np.ndarray:
    """``sum_j [sum_m T_m(x_j) eta_m[k, j] - A[k, j] + c(x_j)]`` over the
    observed cells ``j`` of every row, ``(n, k)``.

    Parameters
    ----------
    terms : sequence of (ndarray of shape (n, d), ndarray of shape (k, d))
        Pairs ``(T_m(X), eta_m)``: a statistic of the cells and its natural
        parameter in every state. ``T_m(X)`` must already be 0 at missing
        cells (:func:`masked`).
    normaliser : ndarray of shape (k, d)
        The log normaliser ``A`` of every state and feature.
    base : ndarray of shape (n, d) or None
        The log base measure ``c(x)`` (0 at missing cells), or None for 0.
    observed : ndarray of shape (n, d) or None
        The observed cells (None: all).
    """
    out = None
    for T, eta in terms:
        part = T @ eta.T
        out = part if out is None else out + part
    if observed is None:
        out -= normaliser.sum(axis=1)
    else:
        out -= observed.astype(float) @ normaliser.T
    if base is not None:
        out += base.sum(axis=1)[:, None]
    return out


def cell_moments(X, weights) -> tuple[np.ndarray, np.ndarray]:
    """The weighted mean and variance ``(d,)`` of every feature's observed
    cells, under the row weights ``weights[:, 0]`` (a random start's source)."""
    X = np.asarray(X, dtype=float)
    w = np.asarray(weights, dtype=float)[:, :1]
    observed = ~np.isnan(X)
    cw = np.where(observed, w, 0.0)
    total = cw.sum(axis=0)
    safe = np.where(total > 0, total, 1.0)
    Xz = np.where(observed, X, 0.0)
    mean = (cw * Xz).sum(axis=0) / safe
    var = (cw * np.where(observed, X - mean, 0.0) ** 2).sum(axis=0) / safe
    return mean, var


def check_support(X, family: str, support: str, valid) -> None:
    """Raise a ValueError naming ``X`` and ``family`` unless ``valid`` holds
    for every observed (not NaN) cell of ``X``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data (NaN cells are missing and always allowed).
    family : str
        The family's name, for the message.
    support : str
        The support in words, for the message ("x >= 0", ...).
    valid : callable
        Array of observed values to a boolean array.
    """
    X = np.asarray(X, dtype=float)
    values = X[~np.isnan(X)]
    ok = valid(values)
    if not np.all(ok):
        bad = values[~ok][0]
        # scikit-learn's words for negative input lead, where they apply.
        negative = "Negative values in data: " if np.any(values < 0) else ""
        raise ValueError(
            f"{negative}X holds values outside the support of the {family} family "
            f"({support}): {int(np.sum(~ok))} cells, the first {bad!r}"
        )


@dataclass(frozen=True)
class CellStats:
    """Statistics of a family with independent features: the weight ``(k,)``
    of every state, the weight ``(k, d)`` of its observed cells of every
    feature, and (in subclasses) weighted sums ``(k, d)`` of statistics of the
    observed cells. Every field adds."""

    weight: np.ndarray
    counts: np.ndarray

    def __add__(self, other):
        return type(self)(
            *(getattr(self, f.name) + getattr(other, f.name) for f in fields(self))
        )

    @property
    def total_weight(self) -> np.ndarray:
        """The weight of every state, ``(k,)``."""
        return self.weight


class IndependentFamily(Emission):
    """Base of the families whose features are independent given the state.

    Subclasses set ``_fill`` (a value of the support put in missing cells
    before they are masked), ``_cell_parameters`` (free scalars per state and
    feature) and implement the protocol's remaining methods.

    Parameters
    ----------
    n_features : int, default=None
        Number of features ``d`` (None: set by ``for_data``).
    """

    #: A missing cell (NaN) is marginalised: it adds 0 to the log-likelihood
    #: and nothing to the statistics.
    missing_coordinates = True

    _fill = 1.0
    _cell_parameters = 1

    def __init__(self, n_features: int | None = None) -> None:
        self.n_features = n_features

    def check_data(self, X) -> None:
        """The estimators' boundary check: :meth:`check_support`."""
        self.check_support(X)

    def n_parameters(self, n_states: int) -> int:
        return n_states * self.n_features * self._cell_parameters

    def _draws_start(self, weights, n_states) -> bool:
        """Whether ``init_params`` reads ``weights`` as row weights and draws
        a random start (``(n, 1)`` for more than one state), rather than as
        responsibilities."""
        return np.shape(weights)[1] == 1 and n_states > 1

    def init_params(self, X, weights, n_states, random_state):
        """First parameters: the weighted estimate under responsibilities
        ``weights`` ``(n, n_states)``, or, for row weights ``(n, 1)`` and more
        than one state, a random start drawn from the data's moments
        (:meth:`_random_start`)."""
        if self._draws_start(weights, n_states):
            mean, var = cell_moments(X, weights)
            return self._random_start(mean, var, n_states, random_state)
        return self.map_params(self.stats(X, np.asarray(weights, dtype=float)))

    def _random_start(self, mean, var, n_states, random_state):
        raise NotImplementedError  # pragma: no cover
