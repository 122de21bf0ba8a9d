"""The PC algorithm as an estimator: :class:`PC` learns a discrete network's
structure from conditional independence tests (``_pc`` holds the algorithm)
and fits a :class:`~bayeskit.BayesianNetwork` on a DAG of the class found."""

from __future__ import annotations

from dataclasses import replace
from numbers import Integral, Real

import numpy as np

from .._validation import Interval, StrOptions, _fit_context
from ._data import warn_continuous
from ._edges import edge_matrix, edge_pairs, expert_parts, tier_matrix
from ._gauss_ci import GAUSS_TESTS
from ._hybrid_scores import column_values, continuous_columns, mixed_columns
from ._pc import LAMBDAS, Knowledge, learn
from ._scores import encode_frame
from ._structure_learning import _fit_network, _LearntNetwork, _validated

__all__ = ["PC"]


class PC(_LearntNetwork):
    """Learn the structure of a Bayesian network by the PC algorithm.

    The PC algorithm (Spirtes, Glymour and Scheines 2000) removes the edge
    between two variables that test independent given some neighbours (ever
    larger sets), orients the colliders ``x -> z <- y`` where ``z`` did not
    separate ``x`` and ``y``, then what Meek's rules 1-3 force. Skeleton,
    separating sets, directed and undirected edges are pgmpy's
    ``causal_discovery.PC``'s on the same data and parameters, but where tests
    conflict: an orientation that would close a directed cycle is refused
    (pgmpy returns the cycle), Meek's rules sweep the variables in the
    columns' order (pgmpy's follows Python's string hashing), and rule 3 keeps
    Meek's condition that the two parents be non-adjacent (pgmpy's omits it,
    orienting edges the class leaves open). A DAG of the
    class (Dor and Tarsi 1992) is fitted with the m-estimate (``network_``),
    whose prediction methods are passed on.

    Parameters
    ----------
    ci_test : str or callable, default='chi_square'
        pgmpy's names of Cressie and Read's (1984) power divergence tests:
        ``'chi_square'`` (Pearson), ``'g_sq'`` or ``'log_likelihood'`` (the
        G-test), ``'modified_log_likelihood'``, ``'power_divergence'``
        (lambda 2/3). Given conditioning variables, one table per joint state
        of them seen, over the states of the two variables seen there, the
        statistics and degrees of freedom summed; Yates's correction on tables
        of one degree of freedom (as ``scipy.stats.chi2_contingency``). Or a
        callable with pgmpy's signature, ``ci_test(X, Y, Z,
        significance_level=...)`` -> bool (True: independent), given two
        column names and a tuple of them, the data bound by the caller.
        For continuous data (every column numeric), pgmpy's partial
        correlation tests (``pgmpy.ci_tests``): ``'pearsonr'``, the
        t-test of the partial correlation :math:`r` of the two variables
        given the others (the correlation of their least-squares residuals,
        intercept included) with :math:`n - |Z| - 2` degrees of freedom,
        and ``'fisher_z'``, :math:`\\sqrt{n - |Z| - 3}\\,
        \\operatorname{atanh}(r)` against the standard normal (Fisher 1924);
        ``network_`` is then a linear-Gaussian network (every node
        continuous, see :doc:`/hybrid`). For mixed data, ``'mi_cg'``
        (bnlearn's conditional Gaussian mutual information test): the
        likelihood ratio of conditional Gaussian models (a table over the
        discrete variables, a Gaussian of the continuous ones per joint
        state; Lauritzen 1996),
        :math:`G = 2 [\\ell(X, Y, Z) + \\ell(Z) - \\ell(X, Z) - \\ell(Y, Z)]`
        against the chi-square with the difference of their numbers of
        parameters; it is the G-test on discrete data and
        :math:`-n \\log(1 - r^2)` on continuous data.
    variant : {'stable', 'orig', 'parallel'}, default='stable'
        ``'stable'`` (Colombo and Maathuis 2014): the neighbours of one size
        of conditioning set are those at its start, every candidate set is
        tested, and the separating set is the union of the independent ones;
        the skeleton does not depend on the columns' order. ``'orig'``: the
        edges in the columns' order, each removed at its first separating set
        (in pgmpy's Python set order of the candidates, which can change
        between processes, as pgmpy's), the next ones seeing the neighbours
        left. ``'parallel'``, pgmpy's parallel stable variant, is ``'stable'``.
    significance_level : float, default=0.01
        Two variables are taken as independent when the p-value is at least
        this.
    max_cond_vars : int, default=5
        The largest conditioning set tried.
    expert_knowledge : pgmpy ExpertKnowledge or dict, default=None
        pgmpy's ``ExpertKnowledge`` (read, never changed), or a dict of its
        keys: ``forbidden_edges`` and ``required_edges`` (lists of
        ``(parent, child)``), ``search_space`` (the only edges allowed: the
        others are forbidden) and ``temporal_order`` (tiers of column names,
        earliest first, every column in one). Used as pgmpy's PC uses it:
        with a temporal order, the separating sets of ``u - v`` are drawn
        from the neighbours of a tier no later than both, a collider ``x ->
        z <- y`` needs ``z`` in a tier no earlier than ``x`` and ``y``, and
        every edge between two tiers points forward in time; forbidden and
        required edges orient the undirected edges of their pairs (after
        Meek's rules 1-3, then the rules again with rule 4; Meek 1995),
        and a directed edge against them is kept with a warning, unless
        ``enforce_expert_knowledge``.
    enforce_expert_knowledge : bool, default=False
        pgmpy's: True removes the pairs of forbidden edges from the skeleton
        before any test (no edge between them either way) and never tests
        the pairs of required edges (an edge between them either way, its
        direction not guaranteed; pgmpy then skips their orientation unless
        a temporal order is given). Where pgmpy's skeleton keeps a required
        pair only when its graph lists the pair in the required direction,
        here it always does. A pair both forbidden and required is a
        ValueError.
    m : float, default=1.0
        The m-estimate's equivalent sample size for the CPTs of ``network_``.
    continuous : list or 'float', default=None
        With ``ci_test='mi_cg'``, the continuous columns (``None`` or
        ``'float'``: the columns of float dtype). An edge between a discrete
        and a continuous node is oriented toward the continuous one (a
        conditional linear Gaussian network: a discrete node's parents are
        discrete), as a forbidden edge of ``expert_knowledge`` is; a
        collider the tests orient the other way is kept with a warning, and
        fitting ``network_`` is then a ValueError naming the two nodes.
        Other tests refuse it.

    Attributes
    ----------
    edges_ : list of (parent, child)
        A DAG of the equivalence class found (the one ``network_`` has).
    directed_edges_ : list of (parent, child)
        The edges the algorithm oriented.
    undirected_edges_ : list of (u, v)
        The edges it left unoriented (``u`` before ``v`` among the columns).
    separating_sets_ : dict
        For every pair found independent (a frozenset), the variables given
        which they were (a tuple sorted by ``repr``, as pgmpy's).
    network_ : BayesianNetwork
        The network with ``edges_``, its CPTs fitted to the training data.
    variables_ : list
        The variables (the columns of ``X``).
    n_features_in_ : int
        Number of columns seen in fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of the columns seen in fit, when they are all strings.

    See Also
    --------
    HillClimbSearch : Score-based structure learning.

    References
    ----------
    .. [1] P. Spirtes, C. Glymour and R. Scheines, "Causation, Prediction,
       and Search", 2nd edition, MIT Press, 2000.
    .. [2] D. Colombo and M. H. Maathuis, "Order-independent constraint-based
       causal structure learning", Journal of Machine Learning Research, 15,
       2014.
    .. [3] C. Meek, "Causal inference and causal explanation with background
       knowledge", Proceedings of the 11th Conference on Uncertainty in
       Artificial Intelligence, 1995.
    .. [4] D. Dor and M. Tarsi, "A simple algorithm to construct a consistent
       extension of a partially oriented graph", Technical Report R-185,
       UCLA, 1992.
    .. [5] N. Cressie and T. R. C. Read, "Multinomial goodness-of-fit tests",
       Journal of the Royal Statistical Society B, 46(3), 1984.

    Examples
    --------
    >>> from bayeskit import PC
    >>> from bayeskit.datasets import load_network
    >>> df = load_network("asia").sample(10000, random_state=0)
    >>> pc = PC().fit(df)
    >>> ("lung", "either") in pc.directed_edges_  # a collider: lung -> either <- tub
    True
    """

    _parameter_constraints: dict = {
        "ci_test": [StrOptions({*LAMBDAS, *GAUSS_TESTS, "mi_cg"}), callable],
        "continuous": ["array-like", StrOptions({"float"}), None],
        "variant": [StrOptions({"stable", "orig", "parallel"})],
        "significance_level": [Interval(Real, 0, 1, closed="neither")],
        "max_cond_vars": [Interval(Integral, 0, None, closed="left")],
        "expert_knowledge": "no_validation",
        "enforce_expert_knowledge": ["boolean"],
        "m": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        ci_test="chi_square",
        *,
        variant="stable",
        significance_level=0.01,
        max_cond_vars=5,
        expert_knowledge=None,
        enforce_expert_knowledge=False,
        m=1.0,
        continuous=None,
    ):
        self.ci_test = ci_test
        self.variant = variant
        self.significance_level = significance_level
        self.max_cond_vars = max_cond_vars
        self.expert_knowledge = expert_knowledge
        self.enforce_expert_knowledge = enforce_expert_knowledge
        self.m = m
        self.continuous = continuous

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn the structure from data, then fit its CPTs.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_variables)
            Categorical data (any labels), one column per variable; a row
            with a missing value is left out of the tests that involve it.
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        X, (cols, dtypes, names) = _validated(self, X)
        values = is_cont = None
        knowledge = self._knowledge(list(names))
        if self.ci_test == "mi_cg":
            cont = continuous_columns(
                "float" if self.continuous is None else self.continuous,
                "bic",
                cols,
                dtypes,
                names,
            )
            is_cont = np.zeros(len(names), dtype=bool)
            is_cont[cont] = True
            codes, cards, values = mixed_columns(cols, dtypes, names, cont)
            # a discrete node's parents are discrete: orient its edges so
            forbidden = is_cont[:, None] & ~is_cont[None, :]
            if knowledge is None:
                knowledge = Knowledge(forbidden, np.zeros_like(forbidden), None, False)
            else:
                knowledge = replace(
                    knowledge, forbidden=knowledge.forbidden | forbidden
                )
        elif self.continuous is not None:
            raise ValueError(
                "continuous is for ci_test='mi_cg' (the conditional Gaussian test); "
                f"ci_test={self.ci_test!r} takes every column as "
                + ("continuous" if self.ci_test in GAUSS_TESTS else "discrete")
            )
        elif self.ci_test in GAUSS_TESTS:  # every column continuous
            try:
                values = np.array([column_values(c, v) for c, v in zip(cols, names)])
            except ValueError as exc:
                raise ValueError(
                    f"ci_test={self.ci_test!r} tests partial correlations, so every "
                    f"column must be continuous: {exc}; for discrete or mixed data "
                    "use a discrete test or ci_test='mi_cg'"
                ) from None
            codes = cards = None
        else:
            codes, cards = encode_frame(cols, dtypes, names)
            warn_continuous(self, names, cols, dtypes, codes.T, cards)
        (
            self.directed_edges_,
            self.undirected_edges_,
            self.edges_,
            self.separating_sets_,
        ) = learn(codes, cards, names, self, knowledge, values, is_cont)
        if is_cont is not None:
            continuous = [v for v, c in zip(names, is_cont) if c]
        elif self.ci_test in GAUSS_TESTS:
            continuous = list(names)
        else:
            continuous = []
        self.network_ = _fit_network(self.edges_, self.m, X, None, continuous)
        self.variables_ = list(names)
        return self

    def _knowledge(self, names: list) -> Knowledge | None:
        """``expert_knowledge`` on the columns' indices, checked; None when
        it holds nothing (pgmpy's empty ``ExpertKnowledge`` included)."""
        parts = expert_parts(self.expert_knowledge)
        if not parts and not self.enforce_expert_knowledge:
            return None
        index = {v: i for i, v in enumerate(names)}
        d = len(names)
        src = "expert_knowledge's "
        forbidden = edge_matrix(
            edge_pairs(
                parts.get("forbidden_edges"), src + "forbidden_edges", index, True
            ),
            d,
        )
        if "search_space" in parts:
            allowed = edge_matrix(
                edge_pairs(parts["search_space"], src + "search_space", index, True),
                d,
            )
            forbidden |= ~allowed
            np.fill_diagonal(forbidden, False)
        required = edge_matrix(
            edge_pairs(parts.get("required_edges"), src + "required_edges", index),
            d,
        )
        tiers = None
        if "temporal_order" in parts:
            order = parts["temporal_order"]
            tier_matrix(order, src + "temporal_order", index)  # checks it
            tiers = np.full(d, -1)
            for t, tier in enumerate(order):
                for v in tier:
                    tiers[index[v]] = t
            if (tiers < 0).any():
                missing = [names[i] for i in np.flatnonzero(tiers < 0)]
                raise ValueError(
                    f"{src}temporal_order leaves out {missing!r}: PC (as pgmpy's) "
                    "needs every column in a tier"
                )
        if self.enforce_expert_knowledge:
            clash = required & (forbidden | forbidden.T)
            if clash.any():
                u, v = (int(i[0]) for i in np.nonzero(clash))
                raise ValueError(
                    f"{src}required_edges holds ({names[u]!r}, {names[v]!r}), whose "
                    "pair its forbidden_edges (or search_space) forbids: with "
                    "enforce_expert_knowledge=True the pair cannot be both"
                )
        return Knowledge(forbidden, required, tiers, self.enforce_expert_knowledge)
