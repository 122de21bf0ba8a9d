"""Discrete Bayesian networks.

A :class:`BayesianNetwork` is a DAG over categorical variables with one
conditional probability table (CPT) per variable, ``P(x_v | pa(v))``. Its CPTs
are m-estimates from weighted counts that add (``fit`` is ``partial_fit`` on
one chunk), and every query is exact: the CPTs are reduced by the evidence,
and the variables left are eliminated by belief propagation on a junction tree,
by the graph core's :class:`~bayeskit.graph.BayesNet`. Rows that share a
pattern of observed columns are solved together, by one calibration batched
over those rows.

Chow-Liu trees and tree-augmented naive Bayes are in :mod:`bayeskit.models.tan`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.utils import check_random_state

from .._logmath import safe_log
from .._validation import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    check_probability_vector,
    check_sample_weight,
    validate_data,
)
from .._warnings import warn
from ..graph import DAG, BayesNet, JunctionTree
from ..priors import log_m_estimate
from ._encoding import categorical_input_tags, encode_column, is_missing

__all__ = ["BayesianNetwork", "NetworkStats"]


# ---------------------------------------------------------------------------
# Statistics


@dataclass(frozen=True)
class NetworkStats:
    """Weighted counts of every family of a Bayesian network.

    ``counts[i]`` belongs to the ``i``-th variable and has shape
    ``(*parent cardinalities, k_i)``: the weight of the rows in which the
    variable and all of its parents are observed, per joint state. Counts of
    chunks add.
    """

    counts: tuple

    def __add__(self, other: NetworkStats) -> NetworkStats:
        return NetworkStats(tuple(a + b for a, b in zip(self.counts, other.counts)))


# ---------------------------------------------------------------------------
# Helpers: states


def _columns(est, X, reset: bool) -> list:
    """Validate ``X`` without casting; its columns as 1-d arrays."""
    if hasattr(X, "iloc"):
        validate_data(est, X, reset=reset, skip_check_array=True)
        cols = [X.iloc[:, j].to_numpy() for j in range(X.shape[1])]
    else:
        X = validate_data(est, X, reset=reset, dtype=None, ensure_all_finite=False)
        cols = [X[:, j] for j in range(X.shape[1])]
    if X.shape[0] == 0:
        raise ValueError("X has 0 samples; at least one is required")
    return cols


def _as_states(values, variable) -> np.ndarray:
    """State labels as an array, in the given order; distinct and not missing."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(
            f"states of {variable!r} must be a list of labels, got {values!r}"
        )
    index = pd.Index(list(values))
    if len(index) == 0:
        raise ValueError(f"states of {variable!r} is empty")
    if index.hasnans:
        raise ValueError(f"states of {variable!r} contain a missing value")
    if index.has_duplicates:
        dup = index[index.duplicated()].tolist()
        raise ValueError(f"states of {variable!r} repeat {dup!r}")
    return index.to_numpy()


def _observed_states(col: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """Distinct observed values in order of first appearance (never sorted)."""
    return pd.Index(pd.unique(col[~missing])).to_numpy()


# ---------------------------------------------------------------------------
# The estimator


class BayesianNetwork(DensityMixin, BaseEstimator):
    """A discrete Bayesian network: m-estimate CPTs and exact junction-tree inference.

    The joint distribution of the variables factorises along a DAG,

    .. math::

        P(x_1, \\ldots, x_n) = \\prod_{v} P(x_v \\mid \\mathrm{pa}(v)),

    with one conditional probability table (CPT) per variable. CPTs are learnt
    from data by :meth:`fit` (or chunk by chunk by :meth:`partial_fit`), or set
    by hand with :meth:`set_cpd`. Every query is exact.

    Parameters
    ----------
    edges : list of (parent, child), default=None
        The DAG. Node names are the columns of the DataFrame given to
        :meth:`fit` (``0 .. n - 1`` for an array); a column on no edge is an
        isolated variable. ``None`` is the network with no edges (every
        variable independent).
    m : float or dict, default=1.0
        Equivalent sample size of the m-estimate of every CPT row, or a dict
        from variable to its own ``m`` (missing variables take 1.0). ``m=0``
        is the maximum-likelihood estimate (unseen combinations get
        probability zero).
    p : dict, default=None
        Prior distribution of a variable's states for the m-estimate: a dict
        from variable to probabilities in the order of its states. Missing
        variables (and ``None``) take the uniform ``1 / k``.
    states : dict, default=None
        The states of some variables, in the order to keep: a dict from
        variable to a list of labels. Other variables take the values that
        the data show, in order of first appearance (a pandas categorical
        column: its categories); labels are never re-sorted. A value outside
        the given states is an error.
    handle_unknown : {'error', 'ignore'}, default='error'
        A value never seen in fit when predicting or scoring: raise a
        ValueError, or treat the cell as missing.

    Attributes
    ----------
    variables_ : list
        The variables, in the order of the columns.
    states_ : dict
        The labels of every variable's states, as arrays.
    dag_ : DAG
        The structure.
    cpds_ : dict
        ``P(x_v | pa(v))`` of every variable, an array of shape
        ``(*parent cardinalities, k_v)`` with the parents in the order of
        ``dag_.parents(v)``; every row sums to one over the last axis.
    stats_ : NetworkStats
        The weighted counts, absent for a network built by hand.
    n_features_in_ : int
        Number of columns seen in fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of the columns seen in fit, when they are all strings.

    See Also
    --------
    chow_liu_tree : Learn a tree-shaped structure.
    TreeAugmentedNB : A classifier whose features form a Chow-Liu tree.
    bayeskit.graph.junction_tree.JunctionTree : The inference engine.

    Notes
    -----
    **Learning.** With :math:`n_{u,a}` the weighted number of rows in which
    the variable has state :math:`a` and its parents the joint state
    :math:`u`, the m-estimate (Mitchell 1997, section 6.9.1.1) is

    .. math::

        P(x_v = a \\mid \\mathrm{pa}(v) = u) = \\frac{n_{u,a} + m\\, p_a}{n_u + m}.

    A row with a missing value is left out of the counts of every CPT whose
    family (the variable and its parents) holds that value, and still counts
    in the others. Counts add, so :meth:`partial_fit` on chunks equals one
    :meth:`fit`.

    **Inference.** The network is moralised, triangulated by min-fill and
    joined in a junction tree once (at the first query after the CPTs
    change); Shafer-Shenoy message passing in log space on it gives posterior
    marginals (sum-product) or the most probable joint assignment
    (max-product with traceback). A query uses only the evidence that the
    queried variables are not d-separated from (the rest cannot change the
    posterior), and only the smallest part of the tree that reaches it: the
    messages from the other parts hold no evidence, so they are computed once
    and shared by all queries, and the CPTs and messages of that part are
    reduced by the observed values. The compiled schedule of each pattern of
    observed variables is kept, and rows sharing a pattern are propagated
    together along a batch axis.

    References
    ----------
    .. [1] J. Pearl, "Probabilistic Reasoning in Intelligent Systems", Morgan
       Kaufmann, 1988.
    .. [2] D. Koller and N. Friedman, "Probabilistic Graphical Models", MIT
       Press, 2009, chapters 10 and 17.

    Examples
    --------
    A small flu network (:func:`bayeskit.datasets.flu_network`), with illustrative CPTs:
    the patient has a headache and a high temperature; does he have the flu?

    >>> from bayeskit.datasets import flu_network
    >>> bn = flu_network()
    >>> bn.n_parameters()
    13
    >>> bn.query("flu", evidence={"headache": "yes", "temperature": "high"}).round(4)
    flu
    no     0.4392
    yes    0.5608
    Name: P(flu | evidence), dtype: float64
    >>> bn.map_query(evidence={"headache": "yes", "temperature": "high"})
    {'flu': 'yes', 'fever': 'yes', 'sinus_infection': 'no', 'sinus_swelling': 'no'}
    >>> bn.is_dseparated("temperature", "headache", given="fever")
    True

    Learning the CPTs back from data sampled from the network (its
    ``P(fever | flu = yes)`` is ``[0.2, 0.8]``):

    >>> from bayeskit import BayesianNetwork
    >>> df = bn.sample(20000, random_state=0)
    >>> learnt = BayesianNetwork(bn.dag_.edges).fit(df)
    >>> learnt.get_cpd("fever").loc["yes"].round(2).tolist()
    [0.2, 0.8]
    >>> learnt.predict(df.head(2).assign(flu=None))  # fill the missing cells
      flu fever sinus_infection temperature sinus_swelling headache
    0  no    no              no        high             no       no
    1  no    no              no        high             no      yes
    """

    _parameter_constraints: dict = {
        "edges": ["array-like", None],
        "m": [Interval(Real, 0, None, closed="left"), dict],
        "p": [dict, None],
        "states": [dict, None],
        "handle_unknown": [StrOptions({"error", "ignore"})],
    }

    def __init__(
        self, edges=None, *, m=1.0, p=None, states=None, handle_unknown="error"
    ):
        self.edges = edges
        self.m = m
        self.p = p
        self.states = states
        self.handle_unknown = handle_unknown

    # -- fitted state ------------------------------------------------------------
    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "cpds_") and len(self.cpds_) == len(self.variables_)

    def _reset(self) -> None:
        for attr in [
            a for a in vars(self) if a.endswith("_") and not a.startswith("__")
        ]:
            delattr(self, attr)

    def _check_ready(self) -> None:
        if hasattr(self, "variables_") and hasattr(self, "cpds_"):
            missing = [v for v in self.variables_ if v not in self.cpds_]
            if missing:
                raise ValueError(
                    f"no CPD for variables {missing!r}: call set_cpd for each of "
                    "them, or fit the network to data"
                )
        check_is_fitted(self)

    def _set_states(self, variable, states: np.ndarray) -> None:
        self.states_[variable] = states
        self._state_index_[variable] = {s: i for i, s in enumerate(states.tolist())}
        self._labels_[variable] = pd.Index(states, name=variable)

    def _structure(self, variables: list) -> DAG:
        """The DAG over ``variables``; edges must name only these."""
        edges = [] if self.edges is None else list(self.edges)
        dag = DAG(edges, nodes=variables)
        known = set(variables)
        extra = [v for v in dag.nodes if v not in known]
        if extra:
            raise ValueError(
                f"edges name {extra!r}, which are not columns of X; the columns "
                f"are {list(variables)!r}"
            )
        return dag

    def _declared_states(self) -> dict:
        states = self.states or {}
        return {v: _as_states(s, v) for v, s in states.items()}

    # -- fitting -----------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Learn the CPTs from data.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_variables)
            One column per variable, any labels; missing values (NaN, None,
            pd.NA) are left out of the counts they touch.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; a weight of 2 counts the row twice.

        Returns
        -------
        self : object
        """
        self._reset()
        return self._partial_fit(X, sample_weight, reset=True)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, sample_weight=None):
        """Add the counts of a chunk of data and update the CPTs.

        The first call (or any call on a network without counts, such as one
        built by :meth:`set_cpd`) is :meth:`fit`; later ones keep the
        variables and their states (a new state is an error: declare it in
        ``states``) and re-derive every CPT from the summed counts.

        Parameters
        ----------
        X, y, sample_weight
            As :meth:`fit`.

        Returns
        -------
        self : object
        """
        reset = not hasattr(self, "stats_")
        if reset:
            self._reset()
        return self._partial_fit(X, sample_weight, reset=reset)

    def _partial_fit(self, X, sample_weight, reset: bool):
        cols = _columns(self, X, reset)
        if not cols:
            raise ValueError("X has 0 columns; at least one variable is required")
        n = len(cols[0])
        sw = check_sample_weight(sample_weight, np.empty((n, 0)))
        if not (sw > 0).any():
            raise ValueError(
                "sample_weight is zero for every row: at least one row of non-zero "
                "weight is required"
            )
        keep = None if (sw > 0).all() else sw > 0
        if reset:
            names = list(X.columns) if hasattr(X, "columns") else list(range(len(cols)))
            if len(set(names)) != len(names):
                raise ValueError(f"X has repeated column names: {names!r}")
            self.dag_ = self._structure(names)
            self.variables_ = list(self.dag_.nodes)
            declared = self._declared_states()
            unknown = [v for v in declared if v not in set(names)]
            if unknown:
                raise ValueError(
                    f"states names {unknown!r}, which are not columns of X; the "
                    f"columns are {names!r}"
                )
            self.states_, self._state_index_, self._labels_ = {}, {}, {}
            for j, v in enumerate(names):
                if v in declared:
                    states = declared[v]
                elif hasattr(X, "dtypes") and isinstance(
                    X.dtypes.iloc[j], pd.CategoricalDtype
                ):
                    states = X.iloc[:, j].cat.categories.to_numpy()
                else:
                    col = cols[j] if keep is None else cols[j][keep]
                    states = _observed_states(col, is_missing(col))
                if len(states) == 0:
                    raise ValueError(
                        f"variable {v!r} has no observed value; declare its states "
                        "with `states`"
                    )
                self._set_states(v, states)
        codes = self._encode(cols, fitting=True, keep=keep)
        stats = self._count(codes, sw)
        self.stats_ = stats if reset else self.stats_ + stats
        self._set_cpds_from_stats()
        return self

    def _encode(self, cols, fitting: bool, keep=None) -> np.ndarray:
        """Codes ``(n, n_variables)``; -1 where missing (or unknown and ignored)."""
        codes = np.empty((len(cols[0]), len(cols)), dtype=np.intp)
        for j, (v, col) in enumerate(zip(self.variables_, cols)):
            code = encode_column(col, self.states_[v], is_missing(col))
            if keep is not None:
                code[~keep & (code == -2)] = -1  # weight 0: not part of the data
            unknown = code == -2
            if unknown.any():
                if fitting or self.handle_unknown == "error":
                    value = col[np.argmax(unknown)]
                    raise ValueError(
                        f"variable {v!r} has state {value!r}, not among its states "
                        f"{self.states_[v].tolist()!r}"
                        + (
                            "; declare every state with `states`"
                            if fitting
                            else " seen in fit; use handle_unknown='ignore'"
                        )
                    )
                code[unknown] = -1
            codes[:, j] = code
        return codes

    def _cards(self) -> dict:
        return {v: len(self.states_[v]) for v in self.variables_}

    def _count(self, codes: np.ndarray, sw: np.ndarray) -> NetworkStats:
        cards = self._cards()
        column = {v: j for j, v in enumerate(self.variables_)}
        counts = []
        for v in self.variables_:
            family = [*self.dag_.parents(v), v]
            shape = tuple(cards[u] for u in family)
            sub = codes[:, [column[u] for u in family]]
            ok = (sub >= 0).all(axis=1)
            flat = np.ravel_multi_index(tuple(sub[ok].T), shape)
            c = np.bincount(flat, weights=sw[ok], minlength=math.prod(shape))
            counts.append(c.reshape(shape))
        return NetworkStats(tuple(counts))

    def _m_and_p(self, v, k: int) -> tuple[float, np.ndarray]:
        m = self.m.get(v, 1.0) if isinstance(self.m, dict) else self.m
        if not isinstance(m, Real) or isinstance(m, bool) or not (0 <= m < np.inf):
            raise ValueError(f"m of {v!r} must be a finite number >= 0, got {m!r}")
        if self.p is not None and v in self.p:
            p = check_probability_vector(self.p[v], f"p[{v!r}]", k)
        else:
            p = np.full(k, 1.0 / k)
        return float(m), p

    def _check_params_vs_data(self) -> None:
        known = set(self.variables_)
        for name, value in (("m", self.m), ("p", self.p)):
            if isinstance(value, dict):
                unknown = [v for v in value if v not in known]
                if unknown:
                    raise ValueError(
                        f"{name} names {unknown!r}, which are not variables of the "
                        f"network {self.variables_!r}"
                    )

    def _set_cpds_from_stats(self) -> None:
        self._check_params_vs_data()
        self.cpds_, self._log_cpds_ = {}, {}
        for v, counts in zip(self.variables_, self.stats_.counts):
            m, p = self._m_and_p(v, counts.shape[-1])
            log_cpd = log_m_estimate(counts, counts.sum(axis=-1, keepdims=True), m, p)
            self._log_cpds_[v] = log_cpd
            self.cpds_[v] = np.exp(log_cpd)
        self._engine_ = BayesNet(self.dag_, self._cards(), self._log_cpds_)

    # -- CPDs by hand ------------------------------------------------------------
    def set_cpd(self, variable, table, *, states=None):
        """Set the CPT of one variable by hand.

        A network can be built without data: give the structure in ``edges``
        (and the states in the constructor's ``states`` or here), then call
        ``set_cpd`` for every variable, parents first when their states are
        not declared.

        Parameters
        ----------
        variable : hashable
            A variable of the network (for a network built by hand, a new
            isolated variable is added).
        table : array-like of shape ``(*parent cardinalities, k)``
            ``P(variable | parents)``, parents in the order of
            ``dag_.parents(variable)`` (the order of their edges); every row
            must sum to one over the last axis. A 2-d array of shape
            ``(prod of parent cardinalities, k)`` is accepted too (the rows of
            :meth:`get_cpd`).
        states : list, default=None
            Labels of the variable's states, if not known yet; ``None`` keeps
            the known ones, or numbers them ``0 .. k - 1``.

        Returns
        -------
        self : object
        """
        if not hasattr(self, "variables_"):
            self._validate_params()
            declared = self._declared_states()
            names = list(declared)
            self.dag_ = self._structure_by_hand(names)
            self.variables_ = list(self.dag_.nodes)
            self.states_, self._state_index_, self._labels_ = {}, {}, {}
            for v, s in declared.items():
                self._set_states(v, s)
            self.cpds_, self._log_cpds_ = {}, {}
        if variable not in self.dag_:
            if hasattr(self, "stats_"):
                raise ValueError(
                    f"unknown variable {variable!r}; the variables are "
                    f"{self.variables_!r}"
                )
            self.dag_ = DAG(self.dag_.edges, nodes=[*self.variables_, variable])
            self.variables_ = list(self.dag_.nodes)
        parents = self.dag_.parents(variable)
        unknown = [u for u in parents if u not in self.states_]
        if unknown:
            raise ValueError(
                f"the states of {unknown!r} (parents of {variable!r}) are unknown: "
                "set their CPDs first or declare them in `states`"
            )
        values = np.asarray(table, dtype=float)
        if states is not None:
            states = _as_states(states, variable)
        elif variable in self.states_:
            states = self.states_[variable]
        else:
            states = np.arange(values.shape[-1] if values.ndim else 0)
        pcards = tuple(len(self.states_[u]) for u in parents)
        shape = (*pcards, len(states))
        if values.ndim == 2 and values.shape == (math.prod(pcards), len(states)):
            values = values.reshape(shape)
        if values.shape != shape:
            raise ValueError(
                f"the CPD of {variable!r} has shape {values.shape}; expected {shape} "
                f"(parents {list(parents)!r}, then {len(states)} states of "
                f"{variable!r})"
            )
        if not np.all(np.isfinite(values)) or (values < 0).any():
            raise ValueError(f"the CPD of {variable!r} must be finite and >= 0")
        sums = values.sum(axis=-1)
        if not np.allclose(sums, 1.0, rtol=0, atol=1e-6):
            raise ValueError(
                f"every row of the CPD of {variable!r} must sum to one over its "
                f"states; the sums are {np.round(sums, 6).ravel()[:8]}"
            )
        if variable in self.states_ and not np.array_equal(
            self.states_[variable], states
        ):
            children = [c for c in self.dag_.children(variable) if c in self.cpds_]
            if hasattr(self, "stats_") or children:
                raise ValueError(
                    f"the states of {variable!r} are already "
                    f"{self.states_[variable].tolist()!r}"
                )
        self._set_states(variable, states)
        self.cpds_[variable] = values.copy()
        self._log_cpds_[variable] = safe_log(values)
        if self.__sklearn_is_fitted__():
            self._engine_ = BayesNet(self.dag_, self._cards(), self._log_cpds_)
        return self

    def _structure_by_hand(self, names: list) -> DAG:
        edges = [] if self.edges is None else list(self.edges)
        return DAG(edges, nodes=names)

    def get_cpd(self, variable):
        """The CPT of one variable as a labelled pandas object.

        Returns
        -------
        Series or DataFrame
            For a variable without parents, a Series over its states; otherwise
            a DataFrame with one row per joint state of the parents (a
            MultiIndex named after them) and one column per state.
        """
        self._check_variable(variable)
        if variable not in getattr(self, "cpds_", {}):
            raise ValueError(f"no CPD for {variable!r} yet")
        values = self.cpds_[variable]
        columns = pd.Index(self.states_[variable], name=variable)
        parents = self.dag_.parents(variable)
        if not parents:
            return pd.Series(values, index=columns, name=f"P({variable})")
        index = pd.MultiIndex.from_product(
            [self.states_[u] for u in parents], names=list(parents)
        )
        if len(parents) == 1:
            index = index.get_level_values(0)
        return pd.DataFrame(
            values.reshape(len(index), -1), index=index, columns=columns
        )

    # -- structure -----------------------------------------------------------------
    def _dag(self) -> DAG:
        if hasattr(self, "dag_"):
            return self.dag_
        edges = [] if self.edges is None else list(self.edges)
        return DAG(edges, nodes=list(self.states or ()))

    def _check_variable(self, variable) -> None:
        known = getattr(self, "_state_index_", None)
        try:
            ok = known is not None and variable in self.dag_ and variable in known
        except TypeError:
            ok = False
        if not ok:
            names = getattr(self, "variables_", None)
            raise ValueError(
                f"unknown variable {variable!r}; the variables are {names!r}"
            )

    def is_dseparated(self, xs, ys, given=()) -> bool:
        """Whether ``xs`` and ``ys`` are d-separated by ``given``.

        See :meth:`bayeskit.graph.DAG.is_dseparated`.

        Parameters
        ----------
        xs, ys : hashable or iterable of hashable
            Two disjoint sets of variables (a single variable as is).
        given : hashable or iterable of hashable, default=()
            The conditioning variables.

        Returns
        -------
        bool
            ``True`` when every distribution that factorises along the DAG has
            ``xs`` independent of ``ys`` given ``given``.
        """
        return self._dag().is_dseparated(xs, ys, given)

    def moral_graph(self) -> dict:
        """The moral graph: a dict from each variable to the set of its neighbours."""
        return self._dag().moral_graph()

    def markov_blanket(self, node) -> set:
        """Parents, children and the children's other parents of ``node``."""
        return self._dag().markov_blanket(node)

    def junction_tree(self) -> JunctionTree:
        """The junction tree of the whole network (min-fill triangulation).

        Returns
        -------
        JunctionTree
            ``cliques`` is a list of frozensets of variables and ``edges`` a
            list of pairs of clique indices; cliques of disconnected parts of
            the network are not joined.
        """
        dag = self._dag()
        cards = (
            self._cards()
            if hasattr(self, "states_") and all(v in self.states_ for v in dag.nodes)
            else None
        )
        return JunctionTree.from_dag(dag, cards)

    def n_parameters(self) -> int:
        """Number of free parameters: ``sum_v (k_v - 1) prod_{u in pa(v)} k_u``."""
        if not hasattr(self, "states_") or len(self.states_) < len(self.variables_):
            check_is_fitted(self)
        cards = self._cards()
        return int(
            sum(
                (cards[v] - 1) * math.prod(cards[u] for u in self.dag_.parents(v))
                for v in self.variables_
            )
        )

    # -- data in -------------------------------------------------------------------
    def _codes(self, X) -> tuple[np.ndarray, list]:
        """Validate ``X`` and encode it: codes ``(n, n_variables)``, -1 unobserved."""
        self._check_ready()
        if hasattr(self, "n_features_in_"):
            cols = _columns(self, X, reset=False)
        elif hasattr(X, "columns"):
            known = set(self.variables_)
            unknown = [c for c in X.columns if c not in known]
            if unknown:
                raise ValueError(
                    f"X has columns {unknown!r} that are not variables of the "
                    f"network; the variables are {self.variables_!r}"
                )
            if X.shape[0] == 0:
                raise ValueError("X has 0 samples; at least one is required")
            n = X.shape[0]
            cols = [
                X[v].to_numpy() if v in X.columns else np.full(n, None, dtype=object)
                for v in self.variables_
            ]
        else:
            X = validate_data(self, X, reset=False, dtype=None, ensure_all_finite=False)
            if X.shape[1] != len(self.variables_):
                raise ValueError(
                    f"X has {X.shape[1]} columns; the network has "
                    f"{len(self.variables_)} variables"
                )
            cols = [X[:, j] for j in range(X.shape[1])]
        return self._encode(cols, fitting=False), cols

    def _evidence(self, evidence) -> dict:
        if evidence is None:
            return {}
        if not isinstance(evidence, Mapping):
            raise TypeError(
                f"evidence must be a dict from variable to state, got "
                f"{type(evidence).__name__}"
            )
        codes = {}
        for v, state in evidence.items():
            self._check_variable(v)
            try:
                code = self._state_index_[v].get(state)
            except TypeError:
                code = None
            if code is None:
                raise ValueError(
                    f"evidence gives {v!r} the state {state!r}, which is not among "
                    f"its states {self.states_[v].tolist()!r}"
                )
            codes[v] = np.array([code], dtype=np.intp)
        return codes

    def _targets(self, variables) -> tuple:
        try:
            single = variables in self._state_index_
        except TypeError:
            single = False
        if single:
            return (variables,)
        if isinstance(variables, (str, bytes)) or not hasattr(variables, "__iter__"):
            self._check_variable(variables)
        targets = tuple(variables)
        if not targets:
            raise ValueError("variables is empty: name at least one variable")
        for v in targets:
            self._check_variable(v)
        if len(set(targets)) != len(targets):
            raise ValueError(f"variables lists a variable twice: {list(targets)!r}")
        return targets

    # -- queries -------------------------------------------------------------------
    def query(self, variables, evidence=None) -> pd.Series:
        """Posterior marginal of a variable, or joint posterior of several.

        Parameters
        ----------
        variables : hashable or list of hashable
            One variable, or several for their joint posterior.
        evidence : dict, default=None
            Observed states, ``{variable: state label}``.

        Returns
        -------
        Series
            ``P(variables | evidence)``, indexed by the states of the variable
            (a MultiIndex over the variables' states, in the order given, for
            several); the values sum to one.

        Raises
        ------
        ValueError
            For an unknown variable or state, a queried variable that is also
            observed, or evidence of probability zero (only the evidence that
            the queried variables are not d-separated from is looked at: the
            rest cannot change the posterior).
        """
        self._check_ready()
        targets = self._targets(variables)
        codes = self._evidence(evidence)
        self._check_disjoint(targets, codes)
        ev = self._engine_.evidence(codes)
        log_post, log_z = self._engine_.posterior(*ev, targets)
        if np.isneginf(log_z[0]):
            raise ValueError("the evidence has probability zero under the network")
        probs = np.exp(log_post[0]).ravel()
        name = f"P({', '.join(map(str, targets))} | evidence)"
        if len(targets) == 1:
            index = self._labels_[targets[0]]
        else:
            index = pd.MultiIndex.from_product(
                [self.states_[v] for v in targets], names=list(targets)
            )
        return pd.Series(probs, index=index, name=name)

    def _check_disjoint(self, targets, codes) -> None:
        both = [v for v in targets if v in codes]
        if both:
            raise ValueError(f"variables {both!r} are both queried and observed")

    def map_query(self, variables=None, evidence=None) -> dict:
        """The most probable joint assignment.

        Parameters
        ----------
        variables : list of hashable, default=None
            ``None``: every unobserved variable, by max-product. A list: the
            argmax of the exact joint posterior of those variables, the others
            summed out (never per-variable maxima).
        evidence : dict, default=None
            Observed states, ``{variable: state label}``.

        Returns
        -------
        dict
            ``{variable: state label}``, in the order of the variables. Ties
            go to the state listed first.
        """
        self._check_ready()
        codes = self._evidence(evidence)
        hidden = [v for v in self.variables_ if v not in codes]
        if variables is not None:
            targets = self._targets(variables)
            self._check_disjoint(targets, codes)
            if set(targets) != set(hidden):
                ev = self._engine_.evidence(codes)
                log_post, log_z = self._engine_.posterior(*ev, targets)
                if np.isneginf(log_z[0]):
                    raise ValueError(
                        "the evidence has probability zero under the network"
                    )
                best = np.unravel_index(np.argmax(log_post[0]), log_post.shape[1:])
                return {
                    v: self.states_[v].tolist()[int(s)] for v, s in zip(targets, best)
                }
        else:
            targets = tuple(hidden)
        assignment, score = self._engine_.map(*self._engine_.evidence(codes))
        if np.isneginf(score[0]):
            raise ValueError("the evidence has probability zero under the network")
        return {v: self.states_[v].tolist()[int(assignment[v][0])] for v in targets}

    # -- batched methods -------------------------------------------------------------
    def _impossible(self, log_z: np.ndarray, rows: np.ndarray, what: str) -> np.ndarray:
        bad = np.isneginf(log_z)
        if bad.any():
            warn(
                f"{int(bad.sum())} row(s) have probability zero under the network "
                f"(a state of zero estimated probability, e.g. with m=0); {what}",
                RuntimeWarning,
            )
        return bad

    def _observed(self, codes: np.ndarray, rows: np.ndarray, observed: np.ndarray):
        """The engine's evidence for rows sharing a pattern of observed columns."""
        columns = np.flatnonzero(observed)
        variables = tuple(self.variables_[j] for j in columns)
        return variables, codes[rows[:, None], columns]

    def log_likelihood(self, X) -> np.ndarray:
        """``log P(observed cells)`` of every row, shape ``(n_samples,)``.

        Missing cells are summed out; a row with nothing observed scores 0.
        """
        codes, _ = self._codes(X)
        out = np.zeros(codes.shape[0])
        for rows, observed in BayesNet.group_rows(codes < 0):
            out[rows] = self._engine_.log_likelihood(
                *self._observed(codes, rows, observed)
            )
        return out

    def score_samples(self, X) -> np.ndarray:
        """Same as :meth:`log_likelihood`."""
        return self.log_likelihood(X)

    def score(self, X, y=None, sample_weight=None) -> float:
        """Mean log-likelihood per row (weighted by ``sample_weight``).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_variables)
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
        """
        ll = self.log_likelihood(X)
        sw = check_sample_weight(sample_weight, np.empty((len(ll), 0)))
        keep = sw > 0
        return float(np.average(ll[keep], weights=sw[keep]))

    def predict(self, X):
        """Fill the missing cells of every row with their most probable joint state.

        Each row's missing variables get the maximum-a-posteriori joint
        assignment given that row's observed cells (``map_query`` of the
        row's missing variables); observed cells are kept.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_variables)
            Missing cells are NaN, None or pd.NA (with
            ``handle_unknown='ignore'``, unknown states count as missing).

        Returns
        -------
        DataFrame or ndarray
            ``X`` with its missing cells filled, of the same type.
        """
        codes, cols = self._codes(X)
        filled = codes.copy()
        for rows, observed in BayesNet.group_rows(codes < 0):
            if observed.all():
                continue
            ev = self._observed(codes, rows, observed)
            assignment, score = self._engine_.map(*ev)
            self._impossible(score, rows, "their missing cells take the first states")
            for j, v in enumerate(self.variables_):
                if not observed[j]:
                    filled[rows, j] = assignment[v]
        return self._fill(X, cols, codes, filled)

    def _fill(self, X, cols, codes, filled):
        changed = [j for j in range(codes.shape[1]) if (codes[:, j] < 0).any()]
        if hasattr(X, "columns") and not hasattr(self, "n_features_in_"):
            out = X.copy()
            names = list(out.columns)
            changed = [j for j in changed if self.variables_[j] in names]
        elif hasattr(X, "columns"):
            out = X.copy()
            names = list(out.columns)
        else:
            obj = np.array(cols, dtype=object).T
            for j in changed:
                miss = codes[:, j] < 0
                obj[miss, j] = self.states_[self.variables_[j]][filled[miss, j]]
            numeric = all(
                self.states_[self.variables_[j]].dtype.kind in "biuf" for j in changed
            )
            arr = np.asarray(X)
            if arr.dtype.kind in "fc" and numeric:
                return obj.astype(arr.dtype)
            return obj
        for j in changed:
            v = self.variables_[j]
            col = names.index(v) if v in names else j
            miss = codes[:, j] < 0
            values = np.array(out.iloc[:, col].to_numpy(), dtype=object)
            values[miss] = self.states_[v][filled[miss, j]]
            series = pd.Series(values, index=out.index, name=out.columns[col])
            dtype = out.dtypes.iloc[col]
            if isinstance(dtype, pd.CategoricalDtype):
                series = series.astype(dtype)
            else:
                series = series.infer_objects()
            out.isetitem(col, series)
        return out

    def predict_proba(self, X, variable=None) -> pd.DataFrame:
        """Posterior of a variable (or of every variable) given each row.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_variables)
            Missing cells are NaN, None or pd.NA.
        variable : hashable, default=None
            The variable; ``None`` gives every variable.

        Returns
        -------
        DataFrame of shape (n_samples, k) or (n_samples, sum of k)
            ``P(variable = state | observed cells of the row)`` with one column
            per state (a column MultiIndex ``(variable, state)`` for every
            variable), indexed like ``X``. Where the variable is observed the
            row is that state with probability one. A row of probability zero
            (possible with ``m=0``) is uniform, with a warning.
        """
        codes, _ = self._codes(X)
        if variable is not None:
            self._check_variable(variable)
        targets = self.variables_ if variable is None else [variable]
        n = codes.shape[0]
        probs = {v: np.zeros((n, len(self.states_[v]))) for v in targets}
        position = {v: j for j, v in enumerate(self.variables_)}
        for rows, observed in BayesNet.group_rows(codes < 0):
            ev = self._observed(codes, rows, observed)
            for v in targets:
                if observed[position[v]]:
                    probs[v][rows, codes[rows, position[v]]] = 1.0
            hidden = [v for v in targets if not observed[position[v]]]
            if not hidden:
                continue
            if variable is None:
                log_post, log_z = self._engine_.marginals(*ev)
            else:
                post, log_z = self._engine_.posterior(*ev, (variable,))
                log_post = {variable: post}
            bad = self._impossible(log_z, rows, "their posterior is uniform")
            for v in hidden:
                p = np.exp(log_post[v])
                if bad.any():
                    p = np.where(bad[:, None], 1.0 / p.shape[1], p)
                probs[v][rows] = p
        index = X.index if hasattr(X, "index") else None
        if variable is not None:
            return pd.DataFrame(
                probs[variable],
                index=index,
                columns=pd.Index(self.states_[variable], name=variable),
            )
        columns = pd.MultiIndex.from_tuples(
            [(v, s) for v in targets for s in self.states_[v].tolist()],
            names=["variable", "state"],
        )
        return pd.DataFrame(
            np.hstack([probs[v] for v in targets]), index=index, columns=columns
        )

    # -- model selection and sampling ------------------------------------------
    def bic(self, X) -> float:
        """Bayesian information criterion on ``X`` (lower is better)."""
        ll = self.log_likelihood(X)
        return float(-2 * ll.sum() + self.n_parameters() * np.log(len(ll)))

    def aic(self, X) -> float:
        """Akaike information criterion on ``X`` (lower is better)."""
        return float(-2 * self.log_likelihood(X).sum() + 2 * self.n_parameters())

    def sample(self, n_samples=1, random_state=None) -> pd.DataFrame:
        """Draw rows by ancestral sampling.

        Parameters
        ----------
        n_samples : int, default=1
        random_state : int, RandomState or Generator, default=None

        Returns
        -------
        DataFrame of shape (n_samples, n_variables)
            One column per variable (in the order of ``variables_``) holding
            state labels.
        """
        self._check_ready()
        if not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
            raise ValueError(f"n_samples must be a positive int, got {n_samples!r}")
        if isinstance(random_state, np.random.Generator):
            uniform = random_state.random
        else:
            uniform = check_random_state(random_state).random_sample
        cards = self._cards()
        codes: dict = {}
        for v in self.dag_.topological_order():
            parents = self.dag_.parents(v)
            table = self.cpds_[v].reshape(-1, cards[v])
            if parents:
                flat = np.ravel_multi_index(
                    tuple(codes[u] for u in parents), [cards[u] for u in parents]
                )
                cdf = np.cumsum(table, axis=1)[flat]
            else:
                cdf = np.cumsum(table, axis=1)
            u = uniform(n_samples) * cdf[..., -1]
            codes[v] = np.minimum((u[:, None] >= cdf).sum(axis=1), cards[v] - 1)
        return pd.DataFrame(
            {v: self.states_[v][codes[v]] for v in self.variables_},
            columns=pd.Index(self.variables_),
        )

    def __sklearn_tags__(self):
        return categorical_input_tags(super().__sklearn_tags__())
