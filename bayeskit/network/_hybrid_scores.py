"""Decomposable scores of conditional linear Gaussian networks (discrete and
continuous nodes), for structure learning on mixed data.

A discrete node's local score is that of a discrete network
(:class:`~bayeskit.network._scores.FamilyScores`), over its discrete parents
only (the conditional linear Gaussian restriction). A continuous node
:math:`y` with discrete parents :math:`D` (:math:`q` joint states) and
continuous parents :math:`C` is a linear regression on :math:`C` per joint
state :math:`j` of :math:`D`, fitted by weighted least squares; its
log-likelihood at the maximum-likelihood estimate is

.. math::

    \\ell = -\\frac{1}{2} \\sum_j W_j \\Big(\\log \\frac{2 \\pi\\,
    \\mathrm{RSS}_j}{W_j} + 1\\Big)

with :math:`W_j` the weight of the rows in state :math:`j` and
:math:`\\mathrm{RSS}_j` their weighted residual sum of squares, and it has
:math:`k = q (|C| + 2)` free parameters (an intercept, a coefficient per
continuous parent and a variance per state): BIC is
:math:`\\ell - \\tfrac{1}{2} k \\log N`, AIC :math:`\\ell - k` (Schwarz 1978;
Bottcher 2001 for the conditional Gaussian networks' scores). With no
discrete node this is the Gaussian BIC of pgmpy's ``BICGauss``
(``'bic-g'``). The residual sum of squares is the last diagonal entry,
squared, of the triangular factor of the weighted design and response
:math:`W^{1/2} [1, X_C, y]` (a QR factorisation, no normal equations), the
statistics a fitted :class:`~bayeskit.BayesianNetwork` keeps.

A family whose regression the data do not determine (a state of the
discrete parents with no rows, fewer rows than coefficients, collinear
parents, a residual of zero) scores :math:`-\\infty`: the search never takes
it, so the network learnt can be fitted by maximum likelihood.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._scores import FamilyScores, encode_frame

__all__ = [
    "CG_NAMES",
    "GAUSS_NAMES",
    "HybridFamilyScores",
    "column_values",
    "continuous_columns",
    "hybrid_family_scores",
    "mixed_columns",
]

# pgmpy's names of its Gaussian scores, which treat every column as continuous.
GAUSS_NAMES = {"bic-g": "bic", "aic-g": "aic", "ll-g": "ll"}
# pgmpy's conditional Gaussian scores (Andrews, Ramsey and Cooper 2018) let a
# discrete node have continuous parents: not a conditional linear Gaussian
# network, so they are errors that say what to write instead.
CG_NAMES = ("bic-cg", "aic-cg", "ll-cg")
# The scores defined for a continuous node.
_HYBRID_METHODS = ("bic", "aic", "ll")


def continuous_columns(continuous, scoring_method, cols, dtypes, names) -> list:
    """The column indices that are continuous: ``continuous`` (a list of
    column names, or ``'float'`` for the float columns that are not pandas
    categoricals), every column for pgmpy's Gaussian scores; ValueErrors
    name the parameter."""
    d = len(names)
    if scoring_method in CG_NAMES:
        base = scoring_method.split("-")[0]
        raise ValueError(
            f"scoring_method={scoring_method!r} is pgmpy's conditional Gaussian "
            "score, which lets a discrete node have continuous parents; bayeskit "
            "learns conditional linear Gaussian networks (a discrete node's "
            "parents are discrete): pass scoring_method="
            f"{base!r} with continuous=[...] (or continuous='float') for their "
            "score"
        )
    if isinstance(continuous, str):
        if continuous != "float":
            raise ValueError(
                "continuous must be a list of column names or 'float' (the float "
                f"columns), got {continuous!r}"
            )
        found = [
            j
            for j in range(d)
            if dtypes[j] is None and np.asarray(cols[j]).dtype.kind == "f"
        ]
    elif continuous is None:
        found = []
    else:
        index = {}
        for j, v in enumerate(names):
            index.setdefault(v, j)
        given = list(continuous)
        unknown = [v for v in given if _lookup(index, v) is None]
        if unknown or len(set(map(repr, given))) != len(given):
            raise ValueError(
                f"continuous must name distinct columns of X; {unknown!r} are not "
                f"columns, the columns are {list(names)!r}"
            )
        found = sorted(_lookup(index, v) for v in given)
    if scoring_method in GAUSS_NAMES:
        if continuous is not None and len(found) < d:
            raise ValueError(
                f"scoring_method={scoring_method!r} (pgmpy's Gaussian score) takes "
                "every column as continuous, but continuous leaves out "
                f"{[names[j] for j in range(d) if j not in set(found)]!r}: pass "
                "scoring_method='bic' (or 'aic', 'll') for a network with discrete "
                "nodes"
            )
        found = list(range(d))
    return found


def _lookup(index: dict, v):
    try:
        return index.get(v)
    except TypeError:
        return None


def column_values(col, name) -> np.ndarray:
    """A continuous column as floats (NaN missing); a value that is not a
    number is a ValueError naming the column."""
    series = pd.Series(col)
    if series.dtype.kind in "biuf":
        out = series.to_numpy(dtype=float)
    else:
        bad = [x for x in series.tolist() if isinstance(x, (str, bytes))]
        if bad:
            raise ValueError(
                f"continuous column {name!r} has non-numeric values such as "
                f"{bad[0]!r}; a continuous column holds numbers (NaN for missing)"
            )
        try:
            out = pd.to_numeric(series.astype(object), errors="raise").to_numpy(
                dtype=float
            )
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"continuous column {name!r} has values that are not numbers: {exc}"
            ) from None
    if np.isinf(out).any():
        raise ValueError(f"continuous column {name!r} has infinite values")
    return out


def mixed_columns(cols, dtypes, names, cont: list) -> tuple:
    """The codes ``(n_variables, n_samples)`` and numbers of states of the
    discrete columns (0 and 1 for a continuous one) and the values of the
    continuous columns ``cont`` (NaN for a discrete one)."""
    d, n = len(names), len(cols[0])
    cset = set(cont)
    disc = [j for j in range(d) if j not in cset]
    codes = np.zeros((d, n), dtype=np.int64)
    cards = np.ones(d, dtype=np.int64)
    if disc:
        sub_codes, sub_cards = encode_frame(
            [cols[j] for j in disc], [dtypes[j] for j in disc], [names[j] for j in disc]
        )
        codes[disc], cards[disc] = sub_codes, sub_cards
    values = np.full((d, n), np.nan)
    for j in cont:
        values[j] = column_values(cols[j], names[j])
    return codes, cards, values


def hybrid_family_scores(
    cols, dtypes, names, cont: list, method: str, keep, weights
) -> HybridFamilyScores:
    """The :class:`HybridFamilyScores` of the columns (``cont`` their
    continuous indices) in the rows ``keep`` (None for all), with the weights
    of those rows; a continuous column that no Gaussian fits (fewer than two
    distinct values) is a ValueError naming it."""
    if method not in _HYBRID_METHODS:
        raise ValueError(
            f"scoring_method={method!r} is a score of discrete networks; with "
            f"continuous columns it must be one of {list(_HYBRID_METHODS)!r} "
            "(or pgmpy's 'bic-g', 'aic-g', 'll-g' for all-continuous data)"
        )
    if keep is not None:
        cols = [c[keep] for c in cols]
    codes, cards, values = mixed_columns(cols, dtypes, names, cont)
    scores = HybridFamilyScores(codes, cards, method, cont, values, weights)
    for j in cont:
        seen = values[j][~np.isnan(values[j])]
        flat = seen.size == 0 or seen.min() == seen.max()
        if flat or not np.isfinite(scores.local_score(j, [])):
            raise ValueError(
                f"continuous column {names[j]!r} has fewer than two distinct "
                "observed values: no Gaussian fits it"
            )
    return scores


class HybridFamilyScores(FamilyScores):
    """Local scores of families of discrete and continuous nodes.

    Parameters
    ----------
    codes : ndarray of shape (n_variables, n_samples)
        Integer codes of the discrete variables (``-1`` missing); a
        continuous variable's row is ignored.
    cards : ndarray of shape (n_variables,)
        Number of states of every discrete variable (1 for a continuous one).
    method : {'bic', 'aic', 'll'}
    continuous : list of int
        The continuous variables.
    values : ndarray of shape (n_variables, n_samples)
        The values of the continuous variables (NaN missing).
    sample_weight : ndarray of shape (n_samples,), default=None
    """

    def __init__(self, codes, cards, method, continuous, values, sample_weight=None):
        super().__init__(codes, cards, method, sample_weight=sample_weight)
        self.continuous = frozenset(int(j) for j in continuous)
        self.values = values

    def local_score(self, node: int, parents) -> float:
        """The local score of ``node`` with ``parents`` (cached); a discrete
        node with a continuous parent is :math:`-\\infty` (never a network)."""
        if node not in self.continuous:
            if any(p in self.continuous for p in parents):
                return -np.inf
            return super().local_score(node, parents)
        key = (node, frozenset(parents))
        score = self.cache.get(key)
        if score is None:
            score = self.cache[key] = self._gaussian(node, sorted(key[1]))
        return score

    def _gaussian(self, node: int, parents: list) -> float:
        dp = [p for p in parents if p not in self.continuous]
        cp = [p for p in parents if p in self.continuous]
        n_coef = 1 + len(cp)
        q = int(np.prod([int(self.cards[p]) for p in dp])) if dp else 1
        y = self.values[node]
        x = self.values[cp].T
        ok = ~np.isnan(y) & ~np.isnan(x).any(axis=1)
        group = np.zeros(y.size, dtype=np.int64)
        stride = 1
        for p in dp:
            ok &= self.codes[p] >= 0
            group = group + self.codes[p] * stride
            stride *= int(self.cards[p])
        w = np.ones(y.size) if self.weights is None else self.weights
        rows = np.flatnonzero(ok)
        group, w = group[rows], w[rows]
        order = np.argsort(group, kind="stable")
        rows, group, w = rows[order], group[order], w[order]
        seen, starts = np.unique(group, return_index=True)
        if seen.size < q:  # a state of the discrete parents without rows
            return -np.inf
        sw = np.sqrt(w)
        design = np.column_stack([np.ones(rows.size), x[rows], y[rows]]) * sw[:, None]
        ll = 0.0
        for block, weight in zip(
            np.split(design, starts[1:]), np.add.reduceat(w, starts)
        ):
            if block.shape[0] <= n_coef:
                return -np.inf
            R = np.linalg.qr(block, mode="r")
            if np.linalg.matrix_rank(R[:n_coef, :n_coef]) < n_coef:
                return -np.inf
            rss = float(R[n_coef, n_coef]) ** 2
            # a residual within rounding of the response's size is zero
            tiny = np.finfo(float).eps * block.shape[0] * np.linalg.norm(block[:, -1])
            if not rss > tiny**2:
                return -np.inf
            ll -= 0.5 * weight * (np.log(2 * np.pi * rss / weight) + 1.0)
        k = q * (len(cp) + 2)
        if self.method == "bic":
            return ll - 0.5 * np.log(self.n_total) * k
        if self.method == "aic":
            return ll - k
        return ll
