"""Structure learning of discrete Bayesian networks from the statistics.

:class:`HillClimbSearch` learns a DAG by greedy search on a decomposable
score (BIC, BDeu or K2) and fits a :class:`~bayeskit.BayesianNetwork` on it;
:func:`score_structure` evaluates such a score on a given DAG. The family
counts and local scores are in :mod:`bayeskit.network._scores`, the
search in :mod:`bayeskit.network._hill_climb`.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.utils import check_random_state

from .._base.encoding import categorical_input_tags
from .._collections import handler_for
from .._validation import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    check_sample_weight,
    validate_data,
)
from ..graph import DAG
from ..graph.dag import CycleError
from ._data import FRACTIONAL, warn_continuous
from ._edges import edge_matrix as _matrix
from ._edges import edge_pairs as _edge_pairs
from ._edges import expert_parts as _expert_parts
from ._edges import tier_matrix as _tier_matrix
from ._hill_climb import iterated_hill_climb
from ._hybrid_scores import (
    CG_NAMES,
    GAUSS_NAMES,
    continuous_columns,
    hybrid_family_scores,
)
from ._network import BayesianNetwork
from ._scores import SCORES, FamilyScores, encode_frame, split_frame

__all__ = ["HillClimbSearch", "score_structure"]


def _family_scores(
    frame: tuple, method: str, ess: float, sample_weight, est=None, cont=()
):
    """The :class:`FamilyScores` of the columns ``frame`` (of
    :func:`split_frame`) and the checked weights; rows of zero weight are left
    out, their values included (integer weights are repeated rows). With the
    estimator ``est``, columns that look continuous warn. With continuous
    columns ``cont`` (indices), the scores of a conditional linear Gaussian
    network (:class:`HybridFamilyScores`)."""
    cols, dtypes, names = frame
    method = GAUSS_NAMES.get(method, method)
    n = len(cols[0])
    keep = sw = None
    if sample_weight is not None:
        sw = check_sample_weight(sample_weight, np.empty((n, 0)))
        if not (sw > 0).any():
            raise ValueError(
                "sample_weight is zero for every row: at least one row of non-zero "
                "weight is required"
            )
        keep = None if (sw > 0).all() else sw > 0
    kept = sw if keep is None else sw[keep]
    if cont:
        return hybrid_family_scores(cols, dtypes, names, cont, method, keep, kept), sw
    codes, cards = encode_frame(cols, dtypes, names, keep)
    if est is not None:
        kept_cols = cols if keep is None else [c[keep] for c in cols]
        warn_continuous(est, names, kept_cols, dtypes, codes.T, cards)
    return FamilyScores(codes, cards, SCORES[method], ess, kept), sw


def score_structure(
    X,
    edges,
    scoring_method="bic",
    *,
    equivalent_sample_size=10.0,
    sample_weight=None,
    continuous=None,
) -> float:
    """The score of a DAG: the sum of its families' local scores.

    Parameters
    ----------
    X : DataFrame or array-like of shape (n_samples, n_variables)
        Categorical data (any labels), one column per variable; missing
        values (NaN, None) are left out of the counts of the families that
        hold them.
    edges : list of (parent, child) or DAG
        The graph over the columns of ``X``; a column on no edge is a
        variable without parents.
    scoring_method : {'bic', 'aic', 'll', 'bdeu', 'bds', 'k2', 'bic-g', \
            'aic-g', 'll-g'}, default='bic'
        The score (pgmpy's names ``'bic-d'``, ``'aic-d'`` and ``'ll-d'`` are
        ``'bic'``, ``'aic'`` and ``'ll'``; its Gaussian scores ``'bic-g'``,
        ``'aic-g'`` and ``'ll-g'`` take every column as continuous); see
        :class:`HillClimbSearch`.
    equivalent_sample_size : float, default=10.0
        The equivalent sample size of BDeu and BDs (ignored by the other
        scores).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights of the rows (a weight of 2 counts a row twice).
    continuous : list or 'float', default=None
        The continuous columns (or ``'float'``: the float columns), scored
        as conditional linear Gaussian nodes (see :class:`HillClimbSearch`);
        a discrete node with a continuous parent is a ValueError.

    Returns
    -------
    float
        The score (higher is better); for the same data and graph it equals
        pgmpy's ``BIC``, ``AIC``, ``LogLikelihood``, ``BDeu`` and ``BDs``
        (``score(model)``, BDs with its graph prior), and pgmpy's ``K2`` where
        every joint state of every family's parents is seen in the data (see
        the Notes of :class:`HillClimbSearch`).

    Examples
    --------
    >>> import pandas as pd
    >>> from bayeskit import score_structure
    >>> df = pd.DataFrame({"a": list("xxyyxy"), "b": list("xxyyxy")})
    >>> round(score_structure(df, [("a", "b")]), 4)
    -6.8465
    >>> round(score_structure(df, []), 4)
    -10.1095
    """
    known = {*SCORES, *GAUSS_NAMES, *CG_NAMES}
    if not isinstance(scoring_method, str) or scoring_method not in known:
        raise ValueError(
            f"scoring_method must be one of {sorted(known)!r}, got {scoring_method!r}"
        )
    if not isinstance(equivalent_sample_size, Real) or not (equivalent_sample_size > 0):
        raise ValueError(
            "equivalent_sample_size must be a positive number, got "
            f"{equivalent_sample_size!r}"
        )
    frame = split_frame(X)
    names = frame[2]
    index = {v: i for i, v in enumerate(names)}
    pairs = _edge_pairs(edges, "edges", index)
    try:
        DAG(pairs, nodes=range(len(names)))
    except CycleError as exc:
        raise ValueError(f"edges form a cycle: {exc}") from None
    cont = continuous_columns(continuous, scoring_method, *frame)
    for x, y in pairs:
        if x in cont and y not in cont:
            raise ValueError(
                f"edges hold ({names[x]!r}, {names[y]!r}): the discrete node "
                f"{names[y]!r} has the continuous parent {names[x]!r}, which a "
                "conditional linear Gaussian network does not allow; reverse the "
                f"edge, or declare {names[y]!r} continuous"
            )
    scores, _ = _family_scores(
        frame, scoring_method, equivalent_sample_size, sample_weight, cont=cont
    )
    parents = {y: [x for x, c in pairs if c == y] for y in range(len(names))}
    return scores.score(parents)


def _fit_network(edges, m, X, sample_weight=None, continuous=()) -> BayesianNetwork:
    """The network of the learnt ``edges`` fitted to ``X`` (with the
    ``continuous`` nodes); the learner has warned already about columns that
    look continuous, so the network does not again."""
    with warnings.catch_warnings():
        for message in (FRACTIONAL, "about as many distinct values as rows"):
            warnings.filterwarnings("ignore", f".*{message}", UserWarning)
        net = BayesianNetwork(edges, m=m, continuous=list(continuous) or None)
        return net.fit(X, sample_weight=sample_weight)


def _validated(est, X) -> tuple:
    """``X`` checked as scikit-learn checks it at fit (``n_features_in_`` and
    ``feature_names_in_`` set), and its columns (:func:`split_frame`)."""
    if handler_for(X) is not None:
        raise TypeError(
            f"{type(est).__name__} learns a structure from data in memory, got a "
            f"{type(X).__name__}: compute it first (X.compute()), or learn the "
            "structure on a sample and fit BayesianNetwork(edges) on the Dask "
            "collection, which sums the counts where the chunks live"
        )
    if hasattr(X, "iloc"):
        validate_data(est, X, reset=True, skip_check_array=True)
    else:
        X = validate_data(est, X, reset=True, dtype=None, ensure_all_finite=False)
    return X, split_frame(X)


class _LearntNetwork(DensityMixin, BaseEstimator):
    """What a structure learner passes on to the network it fits (``network_``)."""

    # Structure learning reads its data in memory (the Dask edge refuses it).
    _learns_structure = True

    def _html_repr(self):
        # The notebook display: the learnt network, then scikit-learn's.
        from .._html import estimator_html

        return estimator_html(self)

    # -- the fitted network's methods --------------------------------------------
    def predict(self, X):
        """Fill the missing cells of every row (:meth:`BayesianNetwork.predict`)."""
        check_is_fitted(self)
        return self.network_.predict(X)

    def predict_proba(self, X, variable=None):
        """Posterior of a variable given each row
        (:meth:`BayesianNetwork.predict_proba`)."""
        check_is_fitted(self)
        return self.network_.predict_proba(X, variable)

    def score_samples(self, X):
        """Log-likelihood of every row (:meth:`BayesianNetwork.score_samples`)."""
        check_is_fitted(self)
        return self.network_.score_samples(X)

    def score(self, X, y=None, sample_weight=None) -> float:
        """Mean log-likelihood per row (:meth:`BayesianNetwork.score`)."""
        check_is_fitted(self)
        return self.network_.score(X, sample_weight=sample_weight)

    def query(self, variables, evidence=None):
        """Posterior of variables given evidence (:meth:`BayesianNetwork.query`)."""
        check_is_fitted(self)
        return self.network_.query(variables, evidence)

    def sample(self, n_samples=1, random_state=None):
        """Draw rows from the fitted network (:meth:`BayesianNetwork.sample`)."""
        check_is_fitted(self)
        return self.network_.sample(n_samples, random_state)

    def __sklearn_tags__(self):
        return categorical_input_tags(super().__sklearn_tags__())


class HillClimbSearch(_LearntNetwork):
    """Learn the structure of a Bayesian network by hill climbing.

    Starting from ``start_dag`` (the empty graph by default), every step
    makes the one change of one edge (add, remove or reverse it) that most
    improves a decomposable score, among the changes that keep the graph
    acyclic and within the constraints and that are not on the tabu list,
    until no change improves the score by ``epsilon`` (Koller and Friedman
    2009, section 18.4.3), then goes on as tabu search for ``max_tabu``
    moves and climbs again from the best graph seen (then, with
    ``n_restarts``, from random changes of the best graph).
    Then a
    :class:`~bayeskit.BayesianNetwork` with the learnt edges is fitted to the
    data with the m-estimate, and the prediction methods are its own.

    Parameters
    ----------
    scoring_method : {'bic', 'aic', 'll', 'bdeu', 'bds', 'k2', 'bic-g', \
            'aic-g', 'll-g'}, default='bic'
        The score to maximise (pgmpy's names ``'bic-d'``, ``'aic-d'`` and
        ``'ll-d'`` are ``'bic'``, ``'aic'`` and ``'ll'``); the formulas are in
        the Notes. The log-likelihood never prefers a sparser graph: without
        ``max_indegree`` it learns a complete DAG. With ``continuous``
        columns, ``'bic'``, ``'aic'`` and ``'ll'`` are those of a conditional
        linear Gaussian network; pgmpy's Gaussian scores ``'bic-g'``,
        ``'aic-g'`` and ``'ll-g'`` take every column as continuous (and
        equal pgmpy's ``BICGauss``, ``AICGauss``, ``LogLikelihoodGauss``).
        pgmpy's ``'bic-cg'`` family lets a discrete node have continuous
        parents, and is a ValueError that says what to write.
    equivalent_sample_size : float, default=10.0
        The equivalent sample size of BDeu and BDs (ignored by the others).
    tabu_length : int, default=100
        The last ``tabu_length`` moves may not be undone (an added edge
        removed, a removed edge added, a reversed edge reversed back).
    max_indegree : int, default=None
        The most parents a variable may have; ``None`` for no limit.
    black_list : list of (parent, child), default=None
        Edges that may not be in the graph (forbidden edges); a self-loop in
        it is ignored (never a legal move), as in pgmpy.
    white_list : list of (parent, child), default=None
        If given, the only edges the graph may have (pgmpy's search space);
        a self-loop in it is ignored.
    fixed_edges : list of (parent, child), default=None
        Edges that must be in the graph (required edges): added to the start
        and never removed or reversed.
    temporal_order : list of lists of column names, default=None
        Tiers of variables, earliest first (pgmpy's ``temporal_order``,
        bnlearn's tiers): no edge goes from a variable of a later tier to one
        of an earlier tier; edges within a tier may go either way, and a
        variable in no tier is not constrained (as in pgmpy). A fixed edge
        against the order is a ValueError.
    expert_knowledge : pgmpy ExpertKnowledge or dict, default=None
        pgmpy's way of writing the constraints, read and never changed: its
        ``forbidden_edges`` join ``black_list``, its ``required_edges``
        join ``fixed_edges``, its ``search_space`` narrows ``white_list``
        and its ``temporal_order`` is ``temporal_order`` (given once). A
        dict with these keys does the same. Where pgmpy silently drops a
        required edge that its other knowledge forbids, this is a
        ValueError naming both.
    start_dag : list of (parent, child) or DAG, default=None
        The graph to start from (pgmpy's or networkx's graphs too);
        ``None`` is the graph with no edges. Its edges in ``black_list`` (or
        outside ``white_list``) are dropped.
    epsilon : float, default=1e-4
        The search stops when the best move improves the score by less.
    max_iter : int, default=1_000_000
        The most moves made.
    max_tabu : int, default=10
        After the first graph that no legal move improves by ``epsilon``
        (where pgmpy stops), the search goes on as tabu search (Glover 1989;
        bnlearn's ``max.tabu``): the best legal move is taken even when it
        makes the score worse, until ``max_tabu`` moves in a row have not
        beaten the best graph seen by ``epsilon``; from the best graph seen
        it climbs again by pgmpy's rule, so the result is a local optimum of
        pgmpy's moves whose score is never below that of the first one.
        ``0`` stops at the first (pgmpy's search, up to its ties).
    n_restarts : int, default=0
        Restarts of iterated local search (bnlearn's ``restart``): each
        makes ``perturb`` random legal moves from the best graph so far and
        climbs greedily, ties to a random order of the variables; the graph
        reached replaces the best when it is higher by ``epsilon``. ``0``
        for none.
    perturb : int, default=5
        Random moves per restart (the kind of move drawn first, then the
        move; bnlearn's ``perturb``).
    random_state : int, RandomState instance or None, default=None
        Draws the restarts' moves and orders; an int gives the same graph
        from call to call.
    m : float, default=1.0
        The m-estimate's equivalent sample size for the CPTs of
        ``network_`` (see :class:`~bayeskit.BayesianNetwork`).
    continuous : list or 'float', default=None
        The continuous (real-valued) columns, as
        ``BayesianNetwork(continuous=...)`` takes them, or ``'float'``: the
        columns of float dtype (not pandas categoricals). They are
        conditional linear Gaussian nodes; a discrete node's parents are
        discrete, so an edge from a continuous node to a discrete one is
        never proposed, and one in ``fixed_edges`` is a ValueError naming it.
        See :doc:`/hybrid`.

    Attributes
    ----------
    edges_ : list of (parent, child)
        The learnt DAG, by child then parent in the order of the columns.
    continuous_ : list
        The continuous columns (empty for a discrete network).
    score_ : float
        Its score on the training data (:func:`score_structure`).
    n_iter_ : int
        The number of moves on the way from the start to the graph learnt
        (with ``max_tabu``, those past the best graph too; with restarts,
        the random moves too).
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
    score_structure : The score of a given graph.
    chow_liu_tree : The best tree, in one step.
    BayesianNetwork : CPTs and queries of a given graph.

    Notes
    -----
    Each score is a sum of local scores, one per family (a variable
    :math:`X_i` and its parents); with :math:`N_{ijk}` the (weighted) number
    of rows in which :math:`X_i` takes its state :math:`k` of
    :math:`r_i` and its parents their joint state :math:`j` of :math:`q_i`,
    :math:`N_{ij} = \\sum_k N_{ijk}` and :math:`N` the number of rows (natural
    logarithms):

    - BIC (Schwarz 1978), the log-likelihood at the maximum-likelihood CPTs
      less half of :math:`\\log N` per free parameter:

      .. math::

          \\sum_{j,k} N_{ijk} \\log \\frac{N_{ijk}}{N_{ij}}
          - \\frac{\\log N}{2} q_i (r_i - 1);

    - BDeu (Buntine 1991; Heckerman, Geiger and Chickering 1995), the log
      marginal likelihood under Dirichlet priors of equivalent sample size
      :math:`\\alpha`, uniform over the cells:

      .. math::

          \\sum_j \\Big[\\log\\Gamma\\big(\\tfrac{\\alpha}{q_i}\\big)
          - \\log\\Gamma\\big(N_{ij} + \\tfrac{\\alpha}{q_i}\\big)\\Big]
          + \\sum_{j,k} \\Big[\\log\\Gamma\\big(N_{ijk} +
          \\tfrac{\\alpha}{q_i r_i}\\big) - \\log\\Gamma\\big(\\tfrac{\\alpha}
          {q_i r_i}\\big)\\Big];

    - K2 (Cooper and Herskovits 1992), the same with every pseudo-count 1:

      .. math::

          \\sum_j \\Big[\\log\\Gamma(r_i) - \\log\\Gamma(N_{ij} + r_i)\\Big]
          + \\sum_{j,k} \\log\\Gamma(N_{ijk} + 1);

    - AIC (Akaike 1974), the log-likelihood less one per free parameter,
      :math:`q_i (r_i - 1)`, and ``'ll'``, the log-likelihood alone;
    - BDs (Scutari 2016), BDeu with :math:`\\alpha` spread over the
      :math:`\\tilde q_i` parent states the data show, in pgmpy 1.1.2's
      form: BDeu's sums with :math:`\\alpha / \\tilde q_i` in place of
      :math:`\\alpha / q_i` over the parent states seen, plus
      :math:`(\\tilde q_i - q_i) \\log\\Gamma(\\alpha / \\tilde q_i)`, and
      Scutari's marginal uniform prior over graphs, :math:`-\\log 2` per
      edge and :math:`-\\tfrac{1}{2} n (n - 1) \\log 2` for :math:`n`
      variables.

    These are pgmpy's ``BIC``, ``AIC``, ``LogLikelihood``, ``BDeu``, ``BDs``
    and ``K2`` scores, with one difference: pgmpy's ``K2`` adds
    :math:`\\log\\Gamma(r_i)` for every joint state of a variable's parents
    that the data never show (a term that is zero in the formula above).

    With continuous columns, a continuous node's local score is that of its
    linear regression on its continuous parents :math:`C`, fitted by
    weighted least squares in each of the :math:`q` joint states of its
    discrete parents: with :math:`W_j` the weight of the rows in state
    :math:`j` and :math:`\\mathrm{RSS}_j` their residual sum of squares,

    .. math::

        -\\frac{1}{2} \\sum_j W_j \\Big(\\log \\frac{2 \\pi
        \\mathrm{RSS}_j}{W_j} + 1\\Big) - \\frac{\\log N}{2} q (|C| + 2)

    for BIC (``- q (|C| + 2)`` for AIC): an intercept, a coefficient per
    continuous parent and a variance per state. A family whose regression
    the data do not determine (a state with no rows, collinear parents)
    is never taken, so ``network_`` can always be fitted.

    The counts of a family are taken once, by one ``bincount`` of the
    mixed-radix code of its columns, and every local score is cached, so a
    move rescores one family (add, remove) or two (reverse). A row with a
    missing value is left out of the counts of the families that hold it.
    The moves and the tabu list are those of pgmpy's ``HillClimbSearch``.
    Equally good moves are common (BIC and BDeu score an edge and its
    reversal alike while neither end has other parents), and which is
    taken decides the local optimum reached. Their computed gains differ by
    rounding, which would choose (pgmpy's does, then the order of a set,
    which changes from process to process); here gains within
    :math:`10^{-9}` times the score's magnitude of the best are ties. The
    first search runs with ties to the first move in the order of the
    columns (additions and removals by the position of their parent and
    child, then reversals) and in the reverse order, and keeps the better;
    restarts (iterated local search, Lourenco, Martin and Stutzle 2003)
    climb from random perturbations of the best graph. All share the cached
    local scores; the result is a local optimum of pgmpy's moves, the same
    for the same data (and ``random_state``) whatever ``PYTHONHASHSEED``.

    References
    ----------
    .. [1] G. Schwarz, "Estimating the dimension of a model", Annals of
       Statistics, 6(2), 1978.
    .. [2] W. Buntine, "Theory refinement on Bayesian networks", Proceedings
       of the 7th Conference on Uncertainty in Artificial Intelligence, 1991.
    .. [3] D. Heckerman, D. Geiger and D. M. Chickering, "Learning Bayesian
       networks: the combination of knowledge and statistical data", Machine
       Learning, 20(3), 1995.
    .. [4] G. F. Cooper and E. Herskovits, "A Bayesian method for the
       induction of probabilistic networks from data", Machine Learning,
       9(4), 1992.
    .. [5] D. Koller and N. Friedman, "Probabilistic Graphical Models", MIT
       Press, 2009, sections 18.3 and 18.4.
    .. [6] F. Glover, "Tabu search, part I", ORSA Journal on Computing, 1(3),
       1989.
    .. [7] H. Akaike, "A new look at the statistical model identification",
       IEEE Transactions on Automatic Control, 19(6), 1974.
    .. [8] M. Scutari, "An empirical-Bayes score for discrete Bayesian
       networks", Proceedings of the 8th International Conference on
       Probabilistic Graphical Models, JMLR W&CP 52, 2016.
    .. [9] H. R. Lourenco, O. C. Martin and T. Stutzle, "Iterated local
       search", in Handbook of Metaheuristics, Kluwer, 2003.
    .. [10] M. Scutari, "Learning Bayesian networks with the bnlearn R
       package", Journal of Statistical Software, 35(3), 2010.

    Examples
    --------
    >>> from bayeskit import HillClimbSearch
    >>> from bayeskit.datasets import load_network

    Data sampled from the asia network (Lauritzen and Spiegelhalter 1988)
    give its eight edges back:

    >>> asia = load_network("asia")
    >>> df = asia.sample(10000, random_state=0)
    >>> hc = HillClimbSearch(scoring_method="bic").fit(df)
    >>> hc.edges_[:3]
    [('asia', 'tub'), ('smoke', 'lung'), ('smoke', 'bronc')]
    >>> set(hc.edges_) == set(asia.dag_.edges)
    True
    >>> hc.query("lung", evidence={"smoke": "yes"}).round(2).tolist()
    [0.9, 0.1]
    """

    _parameter_constraints: dict = {
        "scoring_method": [StrOptions({*SCORES, *GAUSS_NAMES, *CG_NAMES})],
        "equivalent_sample_size": [Interval(Real, 0, None, closed="neither")],
        "tabu_length": [Interval(Integral, 0, None, closed="left")],
        "max_indegree": [Interval(Integral, 0, None, closed="left"), None],
        "black_list": ["array-like", None],
        "white_list": ["array-like", None],
        "fixed_edges": ["array-like", None],
        "temporal_order": ["array-like", None],
        "expert_knowledge": "no_validation",
        "start_dag": "no_validation",
        "epsilon": [Interval(Real, None, None, closed="neither")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "max_tabu": [Interval(Integral, 0, None, closed="left")],
        "n_restarts": [Interval(Integral, 0, None, closed="left")],
        "perturb": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "m": [Interval(Real, 0, None, closed="left")],
        "continuous": ["array-like", StrOptions({"float"}), None],
    }

    def __init__(
        self,
        scoring_method="bic",
        *,
        equivalent_sample_size=10.0,
        tabu_length=100,
        max_indegree=None,
        black_list=None,
        white_list=None,
        fixed_edges=None,
        temporal_order=None,
        expert_knowledge=None,
        start_dag=None,
        epsilon=1e-4,
        max_iter=1_000_000,
        max_tabu=10,
        n_restarts=0,
        perturb=5,
        random_state=None,
        m=1.0,
        continuous=None,
    ):
        self.scoring_method = scoring_method
        self.equivalent_sample_size = equivalent_sample_size
        self.tabu_length = tabu_length
        self.max_indegree = max_indegree
        self.black_list = black_list
        self.white_list = white_list
        self.fixed_edges = fixed_edges
        self.temporal_order = temporal_order
        self.expert_knowledge = expert_knowledge
        self.start_dag = start_dag
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.max_tabu = max_tabu
        self.n_restarts = n_restarts
        self.perturb = perturb
        self.random_state = random_state
        self.m = m
        self.continuous = continuous

    def _constraints(self, names: list, cont=()) -> tuple[np.ndarray, ...]:
        """The allowed and required edges and the start, as adjacency
        matrices; conflicts are ValueErrors naming the parameters. The parts
        of ``expert_knowledge`` join those of the parameters: its forbidden
        and required edges are added to ``black_list`` and ``fixed_edges``,
        its search space narrows ``white_list``, its temporal order is
        ``temporal_order``."""
        index = {v: i for i, v in enumerate(names)}
        d = len(names)
        expert = _expert_parts(self.expert_knowledge)
        src = "expert_knowledge's "

        def pairs(param, key, self_loops):
            out = [
                (pair, param)
                for pair in _edge_pairs(getattr(self, param), param, index, self_loops)
            ]
            if key in expert:
                label = src + key
                found = _edge_pairs(expert[key], label, index, self_loops)
                out += [(pair, label) for pair in found]
            return out

        black = _matrix([p for p, _ in pairs("black_list", "forbidden_edges", True)], d)
        allowed = ~black
        for param, key in (("white_list", None), (None, "search_space")):
            value = getattr(self, param) if param else expert.get(key)
            if value is not None:
                label = param or src + key
                allowed &= _matrix(_edge_pairs(value, label, index, True), d)
        if self.temporal_order is not None and "temporal_order" in expert:
            raise ValueError(
                "temporal_order is given twice, as a parameter and in "
                "expert_knowledge: give one"
            )
        order_name = "temporal_order" if self.temporal_order is not None else None
        order_name = order_name or src + "temporal_order"
        later_first = _tier_matrix(
            expert.get("temporal_order", self.temporal_order), order_name, index
        )
        np.fill_diagonal(allowed, False)
        fixed = pairs("fixed_edges", "required_edges", False)
        fixed_pairs = [p for p, _ in fixed]
        required = _matrix(fixed_pairs, d)
        black_name = " or ".join(
            ["black_list"] + [src + "forbidden_edges"] * ("forbidden_edges" in expert)
        )
        white_name = " and ".join(
            ["white_list"] * (self.white_list is not None)
            + [src + "search_space"] * ("search_space" in expert)
        )
        for (x, y), label in fixed:
            edge = f"{label} holds ({names[x]!r}, {names[y]!r}), which"
            if black[x, y]:
                raise ValueError(f"{edge} {black_name} forbids")
            if later_first[x, y]:
                raise ValueError(f"{edge} {order_name} forbids (a later tier first)")
            if not allowed[x, y]:
                raise ValueError(f"{edge} is not in {white_name}")
        allowed &= ~later_first
        if len(cont):  # a discrete node's parents are discrete
            is_cont = np.zeros(d, dtype=bool)
            is_cont[list(cont)] = True
            for (x, y), label in fixed:
                if is_cont[x] and not is_cont[y]:
                    raise ValueError(
                        f"{label} holds ({names[x]!r}, {names[y]!r}): the discrete "
                        f"node {names[y]!r} would have the continuous parent "
                        f"{names[x]!r}, which a conditional linear Gaussian network "
                        f"does not allow; declare {names[y]!r} continuous"
                    )
            allowed &= ~(is_cont[:, None] & ~is_cont[None, :])
        try:
            DAG(fixed_pairs, nodes=range(d))
        except CycleError as exc:
            cycle = " -> ".join(repr(names[i]) for i in exc.cycle)
            raise ValueError(f"fixed_edges form a cycle: {cycle}") from None
        if self.max_indegree is not None:
            over = np.flatnonzero(required.sum(axis=0) > self.max_indegree)
            if over.size:
                raise ValueError(
                    f"fixed_edges give {names[over[0]]!r} more than "
                    f"max_indegree={self.max_indegree} parents"
                )
        start = _matrix(_edge_pairs(self.start_dag, "start_dag", index), d)
        start = (start & allowed) | required
        try:
            DAG(list(zip(*np.nonzero(start))), nodes=range(d))
        except CycleError:
            raise ValueError(
                "fixed_edges and start_dag together form a cycle"
            ) from None
        return allowed, required, start

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Learn the DAG from data, then fit its CPTs.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_variables)
            Categorical data (any labels), and numbers in the
            ``continuous`` columns; one column per variable.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows.

        Returns
        -------
        self : object
        """
        X, frame = _validated(self, X)
        names = frame[2]
        cont = continuous_columns(self.continuous, self.scoring_method, *frame)
        allowed, required, start = self._constraints(names, cont)
        scores, sw = _family_scores(
            frame,
            self.scoring_method,
            self.equivalent_sample_size,
            sample_weight,
            self,
            cont,
        )
        for y in cont:  # fixed edges may give a regression the data do not fix
            pa = list(np.flatnonzero(start[:, y]))
            if not np.isfinite(scores.local_score(y, pa)):
                raise ValueError(
                    f"the data do not determine the regression of the continuous "
                    f"node {names[y]!r} on its parents {[names[p] for p in pa]!r} "
                    "of fixed_edges or start_dag (a state of its discrete parents "
                    "without rows, fewer rows than coefficients, or collinear "
                    "parents)"
                )
        # pgmpy breaks ties between equally good moves (an edge or its
        # reversal, which BIC and BDeu score alike) by the order of a set;
        # its local optimum depends on them. The first search runs with ties
        # to the first pair in the order of the columns and in the reverse
        # order, then perturbed restarts climb from the best graph; all
        # share the cached family scores.
        result = iterated_hill_climb(
            scores,
            start,
            allowed,
            required,
            n_restarts=self.n_restarts,
            n_perturb=self.perturb,
            rng=check_random_state(self.random_state),
            max_indegree=np.inf if self.max_indegree is None else self.max_indegree,
            tabu_length=self.tabu_length,
            epsilon=self.epsilon,
            max_iter=self.max_iter,
            max_tabu=self.max_tabu,
        )
        self.edges_ = [
            (names[x], names[y]) for y, x in zip(*np.nonzero(result.adjacency.T))
        ]
        self.score_ = result.score
        self.n_iter_ = result.n_iter
        self.continuous_ = [names[j] for j in cont]
        self.network_ = _fit_network(self.edges_, self.m, X, sw, self.continuous_)
        self.variables_ = list(names)
        return self
