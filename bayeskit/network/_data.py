"""Labelled data in and out of a Bayesian network, and its m-estimate prior.

:class:`~bayeskit.BayesianNetwork` names variables and states with labels;
its structure (:class:`~bayeskit.graph.network.BayesNet`) knows codes. This
module is the boundary between the two: columns of ``X`` to codes through the
one encoder (:class:`~bayeskit._base.encoding.CategoryEncoder`), evidence
and queried variables to codes, codes back to labelled frames, tables set by
hand, and the m-estimate prior the structure turns counts into tables with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Real

import numpy as np
import pandas as pd

from .._base.categorical import warn_nearly_unique
from .._base.encoding import CategoryEncoder, declared_categories, split_columns
from .._validation import check_probability_vector, validate_data
from .._warnings import warn
from ..priors import log_m_estimate
from ._fast import factorized_codes

__all__ = [
    "NOUN",
    "NetworkMEstimate",
    "UnknownStateError",
    "checked_table",
    "completed_frame",
    "declared_states",
    "evidence_codes",
    "fill_missing",
    "fit_states",
    "network_columns",
    "query_codes",
    "query_targets",
    "state_encoder",
    "warn_continuous",
]


class UnknownStateError(ValueError, KeyError):
    """Evidence names a state that its variable does not have.

    A ValueError, as every bad value given to bayeskit, and a KeyError, as
    pgmpy raises for the same evidence (``VariableElimination.query(...,
    evidence={"smoke": "maybe"})``), so that code written for either catches
    it. Its message is printed as is (a KeyError alone would quote it).
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


# How the encoder's errors name a network's columns, values and categories.
NOUN = ("variable", "state", "states")


# -- the prior -------------------------------------------------------------------
@dataclass(frozen=True)
class NetworkMEstimate:
    """The m-estimate of every CPT row (Mitchell 1997, section 6.9.1.1).

    ``P(x_v = a | pa(v) = u) = (n_ua + m_v p_va) / (n_u + m_v)``: the
    posterior mean under a Dirichlet of concentration ``m_v p_v``, which is
    also the posterior mode (MAP) under ``m_v p_v + 1``; :meth:`log_density`
    is the log density of the latter, so that the m-estimate is the MAP
    estimate of the prior it reports.

    Attributes
    ----------
    m : dict
        The equivalent sample size of every variable.
    p : dict
        The prior distribution of every variable's states.
    """

    m: dict
    p: dict

    @classmethod
    def of(cls, m, p, states: Mapping) -> NetworkMEstimate:
        """Checked ``m`` (a number, or a dict with 1.0 for the variables it
        leaves out) and ``p`` (a dict, uniform for the variables it leaves
        out) for variables with these states."""
        for name, value in (("m", m), ("p", p)):
            if isinstance(value, dict):
                unknown = [v for v in value if v not in states]
                if unknown:
                    raise ValueError(
                        f"{name} names {unknown!r}, which are not variables of the "
                        f"network {list(states)!r}"
                    )
        ms, ps = {}, {}
        for v, labels in states.items():
            k = len(labels)
            mv = m.get(v, 1.0) if isinstance(m, dict) else m
            if (
                not isinstance(mv, Real)
                or isinstance(mv, bool)
                or not (0 <= mv < np.inf)
            ):
                raise ValueError(f"m of {v!r} must be a finite number >= 0, got {mv!r}")
            ms[v] = float(mv)
            if p is not None and v in p:
                ps[v] = check_probability_vector(p[v], f"p[{v!r}]", k)
            else:
                ps[v] = np.full(k, 1.0 / k)
        return cls(ms, ps)

    def log_estimate(self, variable, counts: np.ndarray) -> np.ndarray:
        """The log CPT of ``variable`` from its counts ``(*parents, k)``."""
        m, p = self.m[variable], self.p[variable]
        return log_m_estimate(counts, counts.sum(axis=-1, keepdims=True), m, p)

    def log_density(self, variable, log_cpd: np.ndarray) -> float:
        """``sum m p_a log theta_a`` over the rows of the table (0 for m = 0)."""
        weight = self.m[variable] * self.p[variable]
        with np.errstate(invalid="ignore"):
            terms = np.where(weight > 0, weight * log_cpd, 0.0)
        return float(terms.sum())


# -- data in ---------------------------------------------------------------------
def network_columns(est, X, reset: bool) -> tuple[list, list]:
    """Validate ``X`` without casting: its columns as 1-d arrays, and the
    pandas ``CategoricalDtype`` of each (None for other columns)."""
    if hasattr(X, "iloc"):
        validate_data(est, X, reset=reset, skip_check_array=True)
    else:
        X = validate_data(est, X, reset=reset, dtype=None, ensure_all_finite=False)
    if X.shape[0] == 0:
        raise ValueError("X has 0 samples; at least one is required")
    if X.shape[1] == 0:
        raise ValueError("X has 0 columns; at least one variable is required")
    cols, dtypes = split_columns(X)
    if not reset:  # a latent variable's column: every cell missing
        for _ in getattr(est, "latent_", ()):
            cols.append(np.full(X.shape[0], None, dtype=object))
            dtypes.append(None)
    return cols, dtypes


# The start of the warning of :func:`warn_continuous` for fractional numbers.
FRACTIONAL = "hold fractional numbers"


def warn_continuous(
    est, names: list, cols: list, dtypes: list, codes, n_categories, keep=None
) -> None:
    """Warn once, at the caller's line, when columns of a fit look continuous.

    Every distinct value of a column is a state of its variable, so a
    column of measurements (fractional numbers: a float column whose values
    are not all whole) gives tables of about one row per state, which learn
    little, and a structure search that finds few edges. Such columns are
    named in one warning; without them, CategoricalNB's rule for columns of
    about as many distinct values as rows
    (:func:`~bayeskit._base.categorical.warn_nearly_unique`) applies.
    A pandas categorical column and a variable of declared ``states`` are
    never suspect. ``codes`` is ``(n_samples, n_columns)``.
    """
    declared = getattr(est, "states", None) or {}
    suspects = []
    for j, (name, col, dtype) in enumerate(zip(names, cols, dtypes)):
        if dtype is not None or name in declared or col.dtype.kind != "f":
            continue
        values = col if keep is None else col[keep]
        values = values[~np.isnan(values)]
        if values.size and (np.trunc(values) != values).any():
            suspects.append(f"{name!r} ({int(n_categories[j])} distinct values)")
    if not suspects:
        warn_nearly_unique(est, codes, n_categories, keep)
        return
    more = f" and {len(suspects) - 5} more" if len(suspects) > 5 else ""
    warn(
        f"{type(est).__name__}: column(s) {', '.join(suspects[:5])}{more} "
        f"{FRACTIONAL}, and every distinct value is a state of a discrete "
        "variable: their tables learn little, and structure learning finds few "
        "edges; declare them continuous (continuous=[...], or 'float' in "
        "HillClimbSearch), or bin them first (pandas.cut, or "
        "sklearn.preprocessing.KBinsDiscretizer)",
        UserWarning,
    )


def declared_states(states) -> dict:
    """The ``states`` parameter as a dict of arrays, each checked."""
    return {v: declared_categories(s, repr(v), NOUN) for v, s in (states or {}).items()}


def fit_states(
    est, names: list, cols: list, dtypes: list, keep, states=None
) -> CategoryEncoder:
    """The encoder of the variables ``names`` fixed from the columns of a
    first chunk (rows of ``keep``): declared states (``states``, by default
    the estimator's), a pandas categorical's own, or the sorted values seen."""
    states = est.states if states is None else states
    declared = declared_states(states)
    unknown = [v for v in declared if v not in set(names)]
    if unknown:
        raise ValueError(
            f"states names {unknown!r}, which are not columns of X; the "
            f"columns are {names!r}"
        )
    return CategoryEncoder.fit(
        cols,
        [repr(v) for v in names],
        dtypes=dtypes,
        declared=[declared.get(v) for v in names],
        keep=keep,
        noun=NOUN,
    )


def state_encoder(est) -> CategoryEncoder:
    """The encoder of the network's states, every variable's declared."""
    variables = est.variables_
    return CategoryEncoder(
        [est.states_[v] for v in variables],
        [repr(v) for v in variables],
        fixed=np.ones(len(variables), dtype=bool),
        noun=NOUN,
    )


def completed_frame(est, X):
    """A DataFrame of some of a fitted network's variables, in any order, as
    the frame of all of them in the order of fit, the absent ones missing.

    pgmpy's ``predict`` and ``predict_probability`` take the rows with the
    columns to predict left out; here too, a variable absent from the frame
    is unobserved in every row (*what is missing is latent*). Any other
    ``X`` (an array, a frame with an unknown or a repeated column) is
    returned as it is, for validation to judge.
    """
    names = getattr(est, "feature_names_in_", None)
    if names is None or not isinstance(X, pd.DataFrame):
        return X
    cols = X.columns.tolist()
    names = names.tolist()
    try:
        known = set(names)
        subset = len(set(cols)) == len(cols) and all(c in known for c in cols)
    except TypeError:  # an unhashable column name
        return X
    if not subset or cols == names:
        return X
    out = pd.DataFrame(index=X.index)
    for v in names:
        out[v] = X[v] if v in cols else pd.Series(None, index=X.index, dtype=object)
    return out


def query_codes(est, X) -> tuple[np.ndarray, list]:
    """Validate ``X`` and encode it: codes ``(n, n_variables)``, -1 unobserved.

    A network fitted to data reads ``X`` as it read the data, except that a
    DataFrame may hold some of its variables in any order
    (:func:`completed_frame`); one built by hand takes a DataFrame's columns
    by name (variables it lacks are unobserved) or an array with a column per
    variable.
    """
    X = completed_frame(est, X)
    if hasattr(est, "n_features_in_"):
        cols, _ = network_columns(est, X, reset=False)
    elif hasattr(X, "columns"):
        known = set(est.variables_)
        unknown = [c for c in X.columns if c not in known]
        if unknown:
            raise ValueError(
                f"X has columns {unknown!r} that are not variables of the "
                f"network; the variables are {est.variables_!r}"
            )
        if X.shape[0] == 0:
            raise ValueError("X has 0 samples; at least one is required")
        n = X.shape[0]
        cols = [
            X[v].to_numpy() if v in X.columns else np.full(n, None, dtype=object)
            for v in est.variables_
        ]
    else:
        X = validate_data(est, X, reset=False, dtype=None, ensure_all_finite=False)
        if X.shape[1] != len(est.variables_):
            raise ValueError(
                f"X has {X.shape[1]} columns; the network has "
                f"{len(est.variables_)} variables"
            )
        cols = [X[:, j] for j in range(X.shape[1])]
    codes = factorized_codes(est, cols)  # every value a state: no pandas index
    if codes is None:
        codes = state_encoder(est).encode(cols, unknown=est.handle_unknown)
    return codes, cols


def evidence_codes(est, evidence) -> dict:
    """Evidence ``{variable: state label}`` as ``{variable: array([code])}``."""
    if evidence is None:
        return {}
    if not isinstance(evidence, Mapping):
        raise TypeError(
            f"evidence must be a dict from variable to state, got "
            f"{type(evidence).__name__}"
        )
    codes = {}
    for v, state in evidence.items():
        est._check_variable(v)
        try:
            code = est._state_index_[v].get(state)
        except TypeError:
            code = None
        if code is None:
            raise UnknownStateError(
                f"evidence gives {v!r} the state {state!r}, which is not among "
                f"its states {est.states_[v].tolist()!r}"
            )
        codes[v] = np.array([code], dtype=np.intp)
    return codes


def query_targets(est, variables) -> tuple:
    """One variable, or several, as a tuple of distinct known variables."""
    try:
        single = variables in est._state_index_
    except TypeError:
        single = False
    if single:
        return (variables,)
    if isinstance(variables, (str, bytes)) or not hasattr(variables, "__iter__"):
        est._check_variable(variables)
    targets = tuple(variables)
    if not targets:
        raise ValueError("variables is empty: name at least one variable")
    for v in targets:
        est._check_variable(v)
    if len(set(targets)) != len(targets):
        raise ValueError(f"variables lists a variable twice: {list(targets)!r}")
    return targets


# -- data out --------------------------------------------------------------------
def fill_missing(est, X, cols, codes, filled):
    """``X`` with its missing cells set to the labels of ``filled``, of the
    same type (a DataFrame keeps its index and dtypes, categoricals too)."""
    changed = [j for j in range(codes.shape[1]) if (codes[:, j] < 0).any()]
    if hasattr(X, "columns"):
        out = X.copy()
        names = list(out.columns)
        if not hasattr(est, "n_features_in_"):
            changed = [j for j in changed if est.variables_[j] in names]
    else:
        obj = np.array(cols, dtype=object).T
        for j in changed:
            miss = codes[:, j] < 0
            obj[miss, j] = est.states_[est.variables_[j]][filled[miss, j]]
        numeric = all(
            est.states_[est.variables_[j]].dtype.kind in "biuf" for j in changed
        )
        arr = np.asarray(X)
        if arr.dtype.kind in "fc" and numeric:
            return obj.astype(arr.dtype)
        return obj
    for j in changed:
        v = est.variables_[j]
        col = names.index(v) if v in names else j
        miss = codes[:, j] < 0
        values = np.array(out.iloc[:, col].to_numpy(), dtype=object)
        values[miss] = est.states_[v][filled[miss, j]]
        series = pd.Series(values, index=out.index, name=out.columns[col])
        dtype = out.dtypes.iloc[col]
        if isinstance(dtype, pd.CategoricalDtype):
            series = series.astype(dtype)
        else:
            series = series.infer_objects()
        out.isetitem(col, series)
    return out


# -- tables by hand ----------------------------------------------------------------
def _is_tabular_cpd(table) -> bool:
    """Whether ``table`` looks like a pgmpy ``TabularCPD`` (duck-typed: pgmpy
    is never imported here)."""
    return all(
        hasattr(table, a)
        for a in ("variable", "variables", "get_values", "state_names")
    )


def _frame_parts(variable, table, parents):
    """A labelled table as ``(values, parent order, parent labels per row,
    child labels)``: a Series over the states (no parents), a DataFrame in
    ``get_cpd``'s layout (one row per joint parent state, the index named
    after the parents; one column per state), or one in pgmpy's layout (one
    row per state, the index named after the variable; one column per joint
    parent state, the columns named after the parents), which is transposed.
    """
    if isinstance(table, pd.Series):
        if parents:
            raise ValueError(
                f"table is a Series, which holds the CPD of a variable without "
                f"parents; {variable!r} has parents {list(parents)!r}: give a "
                "DataFrame with one row per joint state of the parents"
            )
        return table.to_numpy(dtype=float)[None, :], [], [()], list(table.index)
    rows, cols = list(table.index.names), list(table.columns.names)
    known = set(parents)
    if not known:
        if len(table) == 1:  # one row over the states
            return table.to_numpy(dtype=float), [], [()], list(table.columns)
        if table.shape[1] == 1:  # pgmpy's layout: one column, a row per state
            return table.to_numpy(dtype=float).T, [], [()], list(table.index)
    ours = len(rows) == len(known) and set(rows) == known
    if not ours and len(cols) == len(known) and set(cols) == known:
        if rows not in ([variable], [None]):
            raise ValueError(
                f"table's index is named {rows!r}: in pgmpy's layout (a column "
                f"per joint state of the parents) it is named {variable!r}"
            )
        table = table.T
        rows = cols
    elif not ours:
        raise ValueError(
            f"table is a DataFrame whose index is named {rows!r}; the CPD of "
            f"{variable!r} needs one row per joint state of its parents "
            f"{list(parents)!r}, the index named after them (or pgmpy's layout: "
            f"one column per joint state of the parents, the columns named after "
            f"them, and the index named {variable!r})"
        )
    keys = [k if isinstance(k, tuple) else (k,) for k in table.index.tolist()]
    return table.to_numpy(dtype=float), rows, keys, list(table.columns)


def _pgmpy_parts(variable, cpd):
    """A pgmpy ``TabularCPD`` as ``(values, parent order, states of every
    parent, child labels)``, in bayeskit's layout (parents first)."""
    if cpd.variable != variable:
        raise ValueError(
            f"table is the TabularCPD of {cpd.variable!r}, not of {variable!r}"
        )
    given = list(cpd.variables[1:])
    values = np.asarray(cpd.get_values(), dtype=float)
    k = values.shape[0]
    cards = [len(cpd.state_names[u]) for u in given]
    values = np.moveaxis(values.reshape(k, *cards), 0, -1)
    return (
        values,
        given,
        [list(cpd.state_names[u]) for u in given],
        list(cpd.state_names[variable]),
    )


def _order(labels, known, what: str) -> np.ndarray:
    """Positions of the labels ``known`` among ``labels`` (the same set)."""
    labels = list(labels)
    position = {}
    for i, s in enumerate(labels):
        try:
            position[s] = i
        except TypeError:
            raise TypeError(f"{what} has an unhashable label {s!r}") from None
    known = list(known)
    if len(position) != len(labels) or set(position) != set(known):
        raise ValueError(
            f"{what} has the states {labels!r}; expected {known!r} (in any order)"
        )
    return np.array([position[s] for s in known], dtype=np.intp)


# How far from one a table row may sum: pgmpy's check_model tolerance.
ROW_SUM_TOLERANCE = 0.01


def checked_table(
    est, variable, table, states, parents=None
) -> tuple[np.ndarray, np.ndarray]:
    """``set_cpd``'s table and states, checked: ``(values, states)`` with the
    parents' axes in the order of the network (``dag_.parents``)."""
    network = tuple(est.dag_.parents(variable))
    unknown = [u for u in network if u not in est.states_]
    if unknown:
        raise ValueError(
            f"the states of {unknown!r} (parents of {variable!r}) are unknown: "
            "set their CPDs first or declare them in `states`"
        )
    if parents is not None:
        if isinstance(parents, (str, bytes)) or not hasattr(parents, "__iter__"):
            raise TypeError(
                f"parents must be a list of the parents of {variable!r}, got "
                f"{parents!r}"
            )
        parents = list(parents)
        if len(parents) != len(network) or set(parents) != set(network):
            raise ValueError(
                f"parents is {parents!r}; the parents of {variable!r} in the "
                f"network are {list(network)!r} (in any order)"
            )
    labels = keys = None  # child labels; parent labels per row or per axis
    if isinstance(table, (pd.DataFrame, pd.Series)):
        values, given, keys, labels = _frame_parts(variable, table, network)
        per_axis = None
    elif _is_tabular_cpd(table):
        values, given, per_axis, labels = _pgmpy_parts(variable, table)
    else:
        given, per_axis = list(network) if parents is None else parents, None
        values = np.asarray(table, dtype=float)
    if parents is not None and list(given) != parents:
        raise ValueError(
            f"parents is {parents!r}, but table orders the parents {list(given)!r}"
        )
    if labels is not None:
        labels = declared_categories(labels, repr(variable), NOUN)
        if states is not None:
            states = declared_categories(states, repr(variable), NOUN)
            values = values[..., _order(labels, states, "table")]
            labels = states
    if states is not None:
        states = declared_categories(states, repr(variable), NOUN)
    elif labels is not None:
        states = labels
        known = est.states_.get(variable)
        if known is not None and set(known.tolist()) == set(labels.tolist()):
            values = values[..., _order(labels, known, "table")]
            states = known
    elif variable in est.states_:
        states = est.states_[variable]
    else:
        states = np.arange(values.shape[-1] if values.ndim else 0)
    cards = tuple(len(est.states_[u]) for u in given)
    if keys is not None:  # a DataFrame's rows, found by the parents' labels
        values = _rows_by_label(est, variable, values, given, keys, cards)
    if per_axis is not None:  # a TabularCPD's parent axes, by their labels
        for axis, (u, names) in enumerate(zip(given, per_axis)):
            values = np.take(
                values, _order(names, est.states_[u], f"table's {u!r}"), axis=axis
            )
    shape = (*cards, len(states))
    if values.ndim == 2 and values.shape == (int(np.prod(cards)), len(states)):
        values = values.reshape(shape)
    if values.shape != shape:
        raise ValueError(
            f"table (the CPD of {variable!r}) has shape {values.shape}; expected "
            f"shape {shape} (parents {list(given)!r}, then {len(states)} states of "
            f"{variable!r})"
        )
    if not np.all(np.isfinite(values)) or (values < 0).any():
        raise ValueError(f"table (the CPD of {variable!r}) must be finite and >= 0")
    sums = values.sum(axis=-1)
    gap = np.abs(sums - 1.0)
    if not np.all(gap <= ROW_SUM_TOLERANCE):
        raise ValueError(
            f"every row of table (the CPD of {variable!r}) must sum to one over its "
            f"states (within {ROW_SUM_TOLERANCE}, as pgmpy accepts); the sums are "
            f"{np.round(sums, 6).ravel()[:8]}"
        )
    # Published tables are rounded: alarm's rows sum to 1 +- 1e-7, pyAgrum
    # writes 6 significant digits, the bnlearn files 4 decimals. Such a row is
    # rescaled to sum to one, so that every algorithm, whether or not it sums
    # a barren variable out, gives the same answer. A row further from one
    # than rounding every entry to 4 decimals can make it is rescaled too (pgmpy
    # accepts it as it is), with a warning: it may be a typing error.
    if np.any(gap > 5e-5 * values.shape[-1]):
        worst = float(sums.ravel()[np.argmax(gap.ravel())])
        warn(
            f"a row of table (the CPD of {variable!r}) sums to {worst:.6g}, further "
            "from one than rounding to 4 decimals explains; the rows are rescaled "
            "to sum to one"
        )
    off = gap > 1e-12
    if off.any():
        values = np.where(off[..., None], values / sums[..., None], values)
    if list(given) != list(network):
        values = np.transpose(
            values, [given.index(u) for u in network] + [len(network)]
        )
    if variable in est.states_ and not np.array_equal(est.states_[variable], states):
        children = [c for c in est.dag_.children(variable) if c in est.cpds_]
        if hasattr(est, "stats_") or children:
            raise ValueError(
                f"the states of {variable!r} are already "
                f"{est.states_[variable].tolist()!r}"
            )
    return np.ascontiguousarray(values, dtype=float), states


def _rows_by_label(est, variable, values, given, keys, cards) -> np.ndarray:
    """A DataFrame's rows (one per joint parent state, in any order) placed
    by their labels: ``(*cards, k)``."""
    if not given:
        return values.reshape(-1)
    total = int(np.prod(cards))
    if len(keys) != total:
        raise ValueError(
            f"table (the CPD of {variable!r}) has {len(keys)} rows; expected one "
            f"per joint state of the parents {list(given)!r}, {total}"
        )
    flat = np.zeros(len(keys), dtype=np.intp)
    for axis, u in enumerate(given):
        index = est._state_index_[u]
        codes = []
        for key in keys:
            code = index.get(key[axis])
            if code is None:
                raise ValueError(
                    f"table gives {u!r} (a parent of {variable!r}) the state "
                    f"{key[axis]!r}, which is not among its states "
                    f"{est.states_[u].tolist()!r}"
                )
            codes.append(code)
        flat = flat * cards[axis] + np.array(codes, dtype=np.intp)
    if len(np.unique(flat)) != total:
        raise ValueError(
            f"table (the CPD of {variable!r}) repeats a joint state of the parents "
            f"{list(given)!r}"
        )
    out = np.empty((total, values.shape[-1]))
    out[flat] = values
    return out.reshape(*cards, values.shape[-1])
