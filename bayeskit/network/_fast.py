"""The short paths of a network's queries: a few rows read by dict lookups,
and identical rows of evidence answered once.

A query of one row (a dashboard, an API call) used to spend most of its time
in pandas: validating the frame, splitting it into columns, and encoding each
column through a pandas index (about three quarters of ``predict_proba`` of
one row on ALARM), before a millisecond of inference; a frame of many rows,
in pandas' index lookups of every cell. :class:`RowReader`
reads a frame of a few rows cell by cell instead, each cell's code by a dict
lookup, and hands any frame it is not sure about (other columns, an unknown
or oddly typed value) to the full path, which reads it and raises its
errors: the two paths give the same codes or the fast one steps aside.
:func:`factorized_codes` reads many rows alike, by the distinct values of
each column (``pandas.factorize``), each looked up once.

The reader and the labelled columns of the answer are compiled once per
set of tables and kept in the structure's ``memo``
(:attr:`bayeskit.graph.network.BayesNet.memo`), so a refit or a new table
(which builds a new structure) drops them with the compiled patterns.

:func:`distinct_rows` finds the distinct rows of evidence of one pattern of
observed variables, so that rows repeating the same evidence are propagated
once and the answers scattered back.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = [
    "RowReader",
    "distinct_rows",
    "factorized_codes",
    "few_row_codes",
    "frame_columns",
]

# Up to this many rows, cell-by-cell dict lookups (a few microseconds a
# cell) beat the vectorised path's fixed cost (a few milliseconds a frame).
FEW_ROWS = 64


def _is_missing(x) -> bool:
    """NaN, None, pd.NA and NaT: what the full path reads as missing."""
    if x is None or x is pd.NA or x is pd.NaT:
        return True
    return isinstance(x, float) and x != x


class RowReader:
    """The codes of a small DataFrame by dict lookups, or None.

    ``codes(X)`` is the codes the full path
    (:func:`~bayeskit.network._data.query_codes`) gives, -1 for a missing
    cell, whenever it returns an array; None when ``X`` is anything it does
    not read: columns other than the network's, a value that is no state
    (unknown, or of another type than the states, e.g. ``1.0`` for the state
    ``1``). A cell is taken only when its value has the very type of a state
    and equals it, which a pandas index lookup matches alike.
    """

    def __init__(self, est) -> None:
        variables = list(est.variables_)
        self.n_variables = len(variables)
        self.position = {v: j for j, v in enumerate(variables)}
        if hasattr(est, "n_features_in_"):
            # Fitted to data: X's columns are the first variables, by name
            # (a network fitted to an array has no names: never read here).
            names = getattr(est, "feature_names_in_", None)
            self.columns = None if names is None else list(names)
            self.by_name = False
        else:
            self.columns = None
            self.by_name = True
        self.tables = []
        self.types = []
        for v in variables:
            states = est.states_[v].tolist()
            self.tables.append({s: i for i, s in enumerate(states)})
            self.types.append(frozenset(type(s) for s in states))
        self._last = (None, None)

    def _targets(self, names: list):
        """The variable of every column named ``names``, or None."""
        if self.by_name:
            try:
                targets = [self.position[c] for c in names]
            except (KeyError, TypeError):
                return None
            return targets if len(set(targets)) == len(targets) else None
        if self.columns is None or names != self.columns:
            return None
        return range(len(names))

    def codes(self, X) -> np.ndarray | None:
        index = X.columns
        last, targets = self._last  # one tuple: threads never see a mixed pair
        # Frames of the same columns (one row after another) read them once:
        # comparing two indexes costs a tenth of listing one.
        if last is None or not (index is last or index.equals(last)):
            targets = self._targets(index.tolist())
            self._last = (index, targets)
        if targets is None:
            return None
        n = X.shape[0]
        if n == 0:
            return None
        out = np.full((n, self.n_variables), -1, dtype=np.intp)
        cell = X.iat
        for j, t in enumerate(targets):
            table, types = self.tables[t], self.types[t]
            for i in range(n):
                x = cell[i, j]
                if isinstance(x, np.generic):
                    x = x.item()
                code = table.get(x) if type(x) in types else None
                if code is not None:
                    out[i, t] = code
                elif not _is_missing(x):
                    return None
        return out


def _reader(est) -> RowReader:
    memo = est._engine_.memo
    reader = memo.get("reader")
    if reader is None:
        reader = memo["reader"] = RowReader(est)
    return reader


def few_row_codes(est, X) -> np.ndarray | None:
    """The codes of ``X`` when it is a DataFrame of a few rows that the
    fitted network's :class:`RowReader` reads; None otherwise."""
    if type(X) is not pd.DataFrame or X.shape[0] > FEW_ROWS:
        return None
    return _reader(est).codes(X)


def factorized_codes(est, cols: list) -> np.ndarray | None:
    """The codes of the columns of many rows (one per variable, in order):
    each column's distinct values found by ``pandas.factorize`` (a hash
    table, missing values apart) and looked up as :class:`RowReader` looks
    up a cell; None when a distinct value is no state of its exact type, for
    the full path to read (or raise)."""
    reader = _reader(est)
    if len(cols) != reader.n_variables:
        return None
    out = np.empty((len(cols[0]), len(cols)), dtype=np.intp)
    for j, col in enumerate(cols):
        table, types = reader.tables[j], reader.types[j]
        try:
            codes, uniques = pd.factorize(col)
        except TypeError:  # unhashable values
            return None
        lut = np.full(len(uniques) + 1, -1, dtype=np.intp)  # [-1]: missing
        for i, x in enumerate(np.asarray(uniques, dtype=object).tolist()):
            if isinstance(x, np.generic):
                x = x.item()
            code = table.get(x) if type(x) in types else None
            if code is None:
                return None
            lut[i] = code
        out[:, j] = lut[codes]
    return out


def frame_columns(est) -> pd.MultiIndex:
    """The columns of ``predict_proba`` of every variable, ``(variable,
    state)``, built once per set of tables (a copy each call: an index's name
    can be set in place)."""
    memo = est._engine_.memo
    columns = memo.get("columns")
    if columns is None:
        columns = memo["columns"] = pd.MultiIndex.from_tuples(
            [(v, s) for v in est.variables_ for s in est.states_[v].tolist()],
            names=["variable", "state"],
        )
    return columns.copy()


def distinct_rows(values: np.ndarray, cards) -> tuple[np.ndarray, np.ndarray | None]:
    """The distinct rows of ``values`` (codes, one column per observed
    variable of ``cards`` states) and the inverse that scatters them back:
    ``distinct[inverse] == values``; ``inverse`` is None when every row is
    already distinct (``distinct`` is then ``values``)."""
    n = values.shape[0]
    if n < 2:
        return values, None
    if values.shape[1] == 0:
        return values[:1], np.zeros(n, dtype=np.intp)
    if math.prod(cards) < 2**62:
        radix = np.cumprod([1, *cards[:0:-1]])[::-1].astype(np.int64)
        keys = values.astype(np.int64, copy=False) @ radix
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(
            values, axis=0, return_index=True, return_inverse=True
        )
    if len(first) == n:
        return values, None
    return values[first], inverse.reshape(-1)
