"""Decomposable structure scores of discrete Bayesian networks, from counts.

A score of a DAG is a sum over its families (a variable and its parents) of a
local score that depends only on the family's contingency table: the
(weighted) number of rows with each joint state of the parents and the
variable. :class:`FamilyScores` holds the encoded data once, counts a family
with one ``bincount`` of the mixed-radix code of its columns, and keeps every
local score it computes in a dict keyed by ``(node, frozenset(parents))``, so
that a search that changes one or two families rescores only those.

The local scores (natural logarithms throughout; :math:`N_{jk}` the count of
the variable's state :math:`k` under the parents' joint state :math:`j`,
:math:`N_j = \\sum_k N_{jk}`, :math:`r` the variable's number of states,
:math:`q` the product of its parents', :math:`N` the number of rows):

- the log-likelihood :math:`\\ell = \\sum_{jk} N_{jk} \\log (N_{jk} / N_j)`
  (pgmpy's ``'ll-d'``), which never prefers a sparser graph;
- BIC (Schwarz 1978): :math:`\\ell - \\tfrac{1}{2} \\log N \\, q (r - 1)`;
- AIC (Akaike 1974): :math:`\\ell - q (r - 1)`;
- BDeu (Buntine 1991; Heckerman, Geiger and Chickering 1995), with the
  equivalent sample size :math:`\\alpha`:
  :math:`\\sum_j [\\log\\Gamma(\\alpha/q) - \\log\\Gamma(N_j + \\alpha/q)] +
  \\sum_{jk} [\\log\\Gamma(N_{jk} + \\alpha/(qr)) - \\log\\Gamma(\\alpha/(qr))]`;
- K2 (Cooper and Herskovits 1992): the same with every Dirichlet
  pseudo-count 1, :math:`\\sum_j [\\log\\Gamma(r) - \\log\\Gamma(N_j + r)] +
  \\sum_{jk} \\log\\Gamma(N_{jk} + 1)`;
- BDs (Scutari 2016), BDeu's sparse-data variant that spreads the equivalent
  sample size over the :math:`\\tilde q` parent states seen in the data, as
  pgmpy 1.1.2 computes it: with :math:`\\alpha' = \\alpha / \\tilde q`,
  :math:`\\sum_{j\\,\\mathrm{seen}} [\\log\\Gamma(\\alpha') -
  \\log\\Gamma(N_j + \\alpha')] + (\\tilde q - q) \\log\\Gamma(\\alpha') +
  \\sum_{jk} [\\log\\Gamma(N_{jk} + \\alpha/(qr)) - \\log\\Gamma(\\alpha/(qr))]`,
  plus Scutari's marginal uniform prior over graphs, :math:`-\\log 2` per
  edge and :math:`-\\tfrac{1}{2} n (n - 1) \\log 2` for the graph of
  :math:`n` variables (decomposable, so a search sees it move by move).

Parent states never seen contribute zero to every score but BDs, so only the
cells of positive count are visited.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from .._base.encoding import CategoryEncoder, split_columns

__all__ = ["SCORES", "FamilyScores", "encode_frame", "split_frame"]

# Our names and pgmpy's for the same score.
SCORES = {
    "bic": "bic",
    "bic-d": "bic",
    "aic": "aic",
    "aic-d": "aic",
    "ll": "ll",
    "ll-d": "ll",
    "bdeu": "bdeu",
    "bds": "bds",
    "k2": "k2",
}

# Above this many cells (and more cells than 4 rows each), a family is counted
# by sorting its codes rather than by a dense bincount.
_DENSE_CELLS = 1 << 22


def encode_frame(
    cols: list, dtypes: list, names: list, keep: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The codes ``(n_variables, n_kept)`` of the rows ``keep`` of the columns
    (``-1`` missing) and every variable's number of states.

    The states are a pandas categorical's categories, or the values seen in
    those rows (as :class:`~bayeskit.BayesianNetwork` takes them).
    """
    if keep is not None:
        cols = [c[keep] for c in cols]
    encoder = CategoryEncoder.fit(
        cols, [repr(v) for v in names], dtypes=dtypes, allow_empty=True
    )
    codes = np.asarray(encoder.encode(cols), dtype=np.int64)
    cards = np.maximum(encoder.n_categories, 1).astype(np.int64)
    return np.ascontiguousarray(codes.T), cards


def split_frame(X, name: str = "X") -> tuple[list, list, list]:
    """The columns of ``X`` (a DataFrame or a 2-d array-like), their pandas
    categorical dtypes (or None) and their names (``0 .. d - 1`` for an
    array)."""
    if hasattr(X, "columns"):
        names = list(X.columns)
        cols, dtypes = split_columns(X)
    else:
        arr = np.asarray(X, dtype=object)
        if arr.ndim != 2:
            raise ValueError(f"{name} must be 2-dimensional, got shape {arr.shape}")
        names = list(range(arr.shape[1]))
        cols, dtypes = split_columns(arr)
    if not cols or len(cols[0]) == 0:
        raise ValueError(f"{name} needs at least one row and one column")
    if len(set(names)) != len(names):
        raise ValueError(f"{name} has repeated column names: {names!r}")
    return cols, dtypes, names


class FamilyScores:
    """Local scores of families over encoded data, computed once each.

    Parameters
    ----------
    codes : ndarray of shape (n_variables, n_samples)
        Integer codes, ``-1`` for a missing value (such a row is left out of
        the counts of every family holding it).
    cards : ndarray of shape (n_variables,)
        Number of states of every variable.
    method : {'bic', 'aic', 'll', 'bdeu', 'bds', 'k2'}
        The score.
    equivalent_sample_size : float, default=10.0
        BDeu's and BDs' :math:`\\alpha`.
    sample_weight : ndarray of shape (n_samples,), default=None
        Row weights; the BIC's :math:`N` is their sum.
    """

    def __init__(
        self,
        codes: np.ndarray,
        cards: np.ndarray,
        method: str,
        equivalent_sample_size: float = 10.0,
        sample_weight: np.ndarray | None = None,
    ) -> None:
        self.codes = codes
        self.cards = cards
        self.method = method
        self.ess = float(equivalent_sample_size)
        self.weights = sample_weight
        n = codes.shape[1]
        self.n_total = float(n if sample_weight is None else sample_weight.sum())
        self._missing = codes < 0 if (codes < 0).any() else None
        self.cache: dict = {}
        self._local = {
            "bic": self._bic,
            "aic": self._aic,
            "ll": self._ll,
            "bdeu": self._bdeu,
            "bds": self._bds,
            "k2": self._k2,
        }[method]

    # -- counts ----------------------------------------------------------------
    def counts(self, node: int, parents) -> tuple[np.ndarray, np.ndarray, int]:
        """The positive cells of a family's table: their counts, the index of
        their parent state (``0 .. q - 1``) and ``q``."""
        codes, cards = self.codes, self.cards
        r = int(cards[node])
        key = codes[node]
        stride = r
        for p in parents:
            key = key + codes[p] * stride
            stride *= int(cards[p])
        weights = self.weights
        if self._missing is not None:
            bad = self._missing[node].copy()
            for p in parents:
                bad |= self._missing[p]
            if bad.any():
                keep = ~bad
                key = key[keep]
                weights = None if weights is None else weights[keep]
        q = stride // r
        if stride <= _DENSE_CELLS or stride <= 4 * key.size:
            table = np.bincount(key, weights, minlength=stride)
            cells = np.flatnonzero(table)
            return table[cells].astype(np.float64), cells // r, q
        cells, inverse = np.unique(key, return_inverse=True)
        n = np.bincount(inverse, weights)
        keep = n > 0
        return n[keep].astype(np.float64), cells[keep] // r, q

    # -- scores ----------------------------------------------------------------
    def local_score(self, node: int, parents) -> float:
        """The local score of ``node`` with ``parents`` (cached)."""
        key = (node, frozenset(parents))
        score = self.cache.get(key)
        if score is None:
            n_jk, j, q = self.counts(node, sorted(key[1]))
            score = float(self._local(node, n_jk, j, q))
            if self.method == "bds":  # the graph prior: -log 2 per edge
                score -= len(key[1]) * np.log(2.0)
            self.cache[key] = score
        return score

    def score(self, parents: dict) -> float:
        """The score of a DAG given as ``{node: parents}``."""
        total = sum(self.local_score(v, pa) for v, pa in parents.items())
        if self.method == "bds":  # the graph prior's part no move changes
            n = len(self.cards)
            total -= 0.5 * n * (n - 1) * np.log(2.0)
        return total

    @staticmethod
    def _parent_totals(n_jk: np.ndarray, j: np.ndarray, q: int) -> np.ndarray:
        """:math:`N_j` of the parent states with positive count."""
        if q <= 4 * j.size + 64:  # few parent states: one bincount
            totals = np.bincount(j, n_jk)
            return totals[totals > 0]
        if j.size and (j[1:] >= j[:-1]).all():  # cells come sorted by parent state
            starts = np.empty(j.size, dtype=bool)
            starts[0] = True
            np.not_equal(j[1:], j[:-1], out=starts[1:])
            return np.add.reduceat(n_jk, np.flatnonzero(starts))
        totals = np.bincount(j, n_jk)
        return totals[totals > 0]

    def _ll(self, node: int, n_jk: np.ndarray, j: np.ndarray, q: int) -> float:
        n_j = self._parent_totals(n_jk, j, q)
        return float(np.dot(n_jk, np.log(n_jk)) - np.dot(n_j, np.log(n_j)))

    def _bic(self, node: int, n_jk: np.ndarray, j: np.ndarray, q: int) -> float:
        r = int(self.cards[node])
        return self._ll(node, n_jk, j, q) - 0.5 * np.log(self.n_total) * q * (r - 1)

    def _aic(self, node: int, n_jk: np.ndarray, j: np.ndarray, q: int) -> float:
        r = int(self.cards[node])
        return self._ll(node, n_jk, j, q) - q * (r - 1)

    def _bdeu(self, node: int, n_jk: np.ndarray, j: np.ndarray, q: int) -> float:
        r = int(self.cards[node])
        alpha, beta = self.ess / q, self.ess / (q * r)
        n_j = self._parent_totals(n_jk, j, q)
        return float(
            n_j.size * gammaln(alpha)
            - gammaln(n_j + alpha).sum()
            + gammaln(n_jk + beta).sum()
            - n_jk.size * gammaln(beta)
        )

    def _k2(self, node: int, n_jk: np.ndarray, j: np.ndarray, q: int) -> float:
        r = int(self.cards[node])
        n_j = self._parent_totals(n_jk, j, q)
        return float(
            n_j.size * gammaln(r) - gammaln(n_j + r).sum() + gammaln(n_jk + 1).sum()
        )

    def _bds(self, node: int, n_jk: np.ndarray, j: np.ndarray, q: int) -> float:
        n_j = self._parent_totals(n_jk, j, q)
        if not n_j.size:  # no row holds the family: nothing is seen
            return 0.0
        r = int(self.cards[node])
        alpha, beta = self.ess / n_j.size, self.ess / (q * r)
        return float(
            (2 * n_j.size - q) * gammaln(alpha)
            - gammaln(n_j + alpha).sum()
            + gammaln(n_jk + beta).sum()
            - n_jk.size * gammaln(beta)
        )
