"""Discrete Bayesian networks.

A :class:`BayesianNetwork` is a DAG over categorical variables with one CPT per
variable, ``P(x_v | pa(v))``, and is its triple: the structure is the graph
core's :class:`~bayeskit.graph.network.BayesNet` (whose own statistics, the
counts of every family, add), no separate emission, and the m-estimate prior
of every CPT row; ``fit`` is ``from_stats(summarize(X))``. Every query is exact
belief propagation on a junction tree, batched over the rows that share a
pattern of observed columns. Labels in and out (through the one encoder of
:mod:`bayeskit._base.encoding`) are in :mod:`bayeskit.network._data`
and :mod:`bayeskit.network._queries`; Chow-Liu trees and TAN in
:mod:`bayeskit.network._tan`.
"""

from __future__ import annotations

from dataclasses import replace
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, DensityMixin

from .._base.classifier import Triple
from .._base.encoding import categorical_input_tags
from .._base.stored import forget_triple, stored_triple
from .._collections import handler_for
from .._validation import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    check_sample_weight,
)
from ..graph._network_em import expected_stats
from ..graph.network import BayesNet, NetworkStats
from ..priors import NormalInverseGamma
from ._approximate import approximate_frame, exact_only
from ._ask import NetworkQueries
from ._by_hand import NetworkTables
from ._causal import NetworkCausal, intervened_rows
from ._data import NetworkMEstimate, completed_frame, fill_missing, query_codes
from ._em import fit_em
from ._encode import encode_rows
from ._fast import few_row_codes
from ._hybrid import hybrid_aware
from ._queries import log_likelihoods, most_probable, posterior_frame
from ._relayout import DescribedCounts
from ._structure import NetworkStructure

__all__ = ["BayesianNetwork", "NetworkStats"]


class BayesianNetwork(
    DescribedCounts,
    NetworkTables,
    NetworkStructure,
    NetworkCausal,
    NetworkQueries,
    DensityMixin,
    BaseEstimator,
):
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
        variable to a list of labels (pgmpy's ``state_names``); states absent
        from the data are kept. A pandas categorical column takes its
        categories, in their order, absent ones included; any other variable
        takes the values that the data show, **sorted** (as pgmpy and
        scikit-learn's encoders sort them; values that do not sort together,
        such as numbers mixed with strings, keep their order of first
        appearance). A value outside the given states is an error.
    handle_unknown : {'error', 'ignore'}, default='error'
        A value never seen in fit when predicting or scoring: raise a
        ValueError, or treat the cell as missing.
    latent : list, default=None
        Latent (hidden) variables: nodes of ``edges`` that are no column of
        the data, each with its states declared in ``states`` (a list of
        labels, or a number ``k`` for the labels ``0 .. k - 1``), or listed in
        ``continuous`` (a continuous latent node). Their CPTs,
        and those of their children, are learnt by EM.
    missing : {'auto', 'available', 'em'}, default='auto'
        How :meth:`fit` treats missing cells (NaN, None, pd.NA).
        ``'available'``: available-case counts in one pass (a row counts in
        every CPT whose family it observes whole), as pgmpy's
        ``MaximumLikelihoodEstimator`` and ``BayesianEstimator`` count each
        family's complete rows. ``'em'``: as latent, the MAP estimate of the
        m-estimate's prior under missing at random, by EM started from the
        available-case estimate (``m=1`` there for a variable of ``m=0``;
        complete data need no iteration). ``'auto'``: ``'em'`` when
        ``latent`` is given (its variables are learnt by EM, and the missing
        cells with them), ``'available'`` otherwise, so that a network
        written as in pgmpy gets pgmpy's tables.
    max_iter : int, default=100
        The most EM iterations.
    n_init : int, default=1
        The number of EM runs from random starts when there are latent
        variables (each run's start drawn from ``random_state`` in turn); the
        run of the highest objective ``lower_bound_`` is kept. Missing cells
        alone have one start, the available-case estimate.
    tol : float, default=1e-3
        EM stops when the objective ``lower_bound_`` changes by less.
    random_state : int, RandomState instance or None, default=None
        Seeds the random start of the CPTs of a latent variable and of its
        children, and the draws of ``method="sampling"``.
    cpds_init : dict, default=None
        EM's start for some CPTs, ``{variable: table}`` in any form that
        :meth:`set_cpd` takes; the others start from the available-case
        estimate (random for a latent variable and its children).
    continuous : list, default=None
        Continuous (real-valued) variables: conditional linear Gaussian
        nodes, whose parents may be discrete and continuous; a discrete
        node's parents must be discrete. See :doc:`/hybrid`.
    continuous_prior : NormalInverseGamma or dict, default=None
        The prior of the continuous nodes' regressions (or a dict from node
        to prior); ``None`` is maximum likelihood.
    memory_budget : float, default=2**30
        Bytes that exact inference may spend on the junction tree's tables
        (estimated before compiling, one float64 per entry): ``method="auto"``
        of :meth:`query` and :meth:`predict_proba` is exact within it (for a
        query, on its ancestral sub-network) and samples beyond it
        (:ref:`approximate-inference`).

    Attributes
    ----------
    variables_ : list
        The variables, in the order of the columns.
    states_ : dict
        The labels of every variable's states, as arrays, in the order of the
        axes of ``cpds_`` and of the columns of :meth:`predict_proba`.
    dag_ : DAG
        The structure.
    cpds_ : dict
        ``P(x_v | pa(v))`` of every variable, an array of shape
        ``(*parent cardinalities, k_v)`` with the parents in the order of
        ``dag_.parents(v)``; every row sums to one over the last axis.
    stats_ : NetworkStats
        The weighted counts, absent for a network built by hand; ``fit(X)``
        is ``from_stats(summarize(X))``.
    n_features_in_ : int
        Number of columns seen in fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of the columns seen in fit, when they are all strings.
    latent_ : list
        The latent variables (after the columns in ``variables_``).
    n_iter_ : int
        EM iterations of the last :meth:`fit` by EM (0 for complete data);
        absent after available-case counts.
    converged_ : bool
        Whether the change of the objective fell below ``tol``.
    lower_bound_ : float
        The objective at the tables of the last E-step: the observed-data
        log-likelihood plus the log density of the m-estimate's prior,
        divided by the total weight (see Notes).
    lower_bounds_ : list of float
        ``lower_bound_`` of every iteration; it never decreases.

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
    in the others (available-case counts, the default without ``latent``:
    pgmpy's ``MaximumLikelihoodEstimator`` is ``m=0``, and its
    ``BayesianEstimator`` with ``prior_type='K2'`` is ``m`` equal to every
    variable's number of states). Counts add, so :meth:`partial_fit` on
    chunks equals one :meth:`fit`, and :meth:`summarize` of chunks (on
    several machines, say), summed and given to :meth:`from_stats`, is the
    same model again.

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

    **Missing cells and latent variables.** With ``missing='em'`` (or
    ``latent`` given and ``missing='auto'``) every
    missing cell, and every cell of a latent variable, is an unobserved
    variable of its row. The m-estimate is the posterior mode under a
    Dirichlet prior of concentration :math:`m p_a + 1` on every CPT row, so
    EM (Dempster, Laird and Rubin 1977; Lauritzen 1995) maximises

    .. math::

        \\frac{1}{\\sum_i w_i} \\Big( \\sum_i w_i \\log P(x_{i,\\mathrm{obs}})
        + \\sum_v \\sum_{u, a} m_v p_{v,a} \\log \\theta_{v,u,a} \\Big),

    ``lower_bound_``, which never decreases. The E-step gives every row the
    posterior of the missing cells of each family given its observed cells,
    by junction-tree propagation batched over the rows that share a pattern
    of missing cells; the M-step is the m-estimate of the expected counts
    (Koller and Friedman 2009, section 19.2). ``stats_`` holds the expected
    counts of the last E-step. A latent variable's tables start at random
    (a uniform start is a fixed point of EM: nothing would tell its states
    apart), so the states are found up to their order. EM finds a local
    maximum: the result depends on the start.

    References
    ----------
    .. [1] J. Pearl, "Probabilistic Reasoning in Intelligent Systems", Morgan
       Kaufmann, 1988.
    .. [2] D. Koller and N. Friedman, "Probabilistic Graphical Models", MIT
       Press, 2009, chapters 10 and 17.
    .. [3] T. M. Mitchell, "Machine Learning", McGraw-Hill, 1997, section
       6.9.1.1 (the m-estimate).
    .. [4] A. P. Dempster, N. M. Laird and D. B. Rubin, "Maximum likelihood
       from incomplete data via the EM algorithm", Journal of the Royal
       Statistical Society B 39(1), 1977.
    .. [5] S. L. Lauritzen, "The EM algorithm for graphical association
       models with missing data", Computational Statistics and Data
       Analysis 19(2), 1995.
    .. [6] D. Koller and N. Friedman, "Probabilistic Graphical Models", MIT
       Press, 2009, chapter 19.

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
        "latent": ["array-like", None],
        "missing": [StrOptions({"auto", "available", "em"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "cpds_init": [dict, None],
        "continuous": ["array-like", None],
        "continuous_prior": [NormalInverseGamma, dict, None],
        "memory_budget": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        edges=None,
        *,
        m=1.0,
        p=None,
        states=None,
        handle_unknown="error",
        latent=None,
        missing="auto",
        max_iter=100,
        n_init=1,
        tol=1e-3,
        random_state=None,
        cpds_init=None,
        continuous=None,
        continuous_prior=None,
        memory_budget=2**30,
    ):
        self.edges = edges
        self.m = m
        self.p = p
        self.states = states
        self.handle_unknown = handle_unknown
        self.latent = latent
        self.missing = missing
        self.max_iter = max_iter
        self.n_init = n_init
        self.tol = tol
        self.random_state = random_state
        self.cpds_init = cpds_init
        self.continuous = continuous
        self.continuous_prior = continuous_prior
        self.memory_budget = memory_budget

    def _make_components(self) -> Triple:
        """The structure (the DAG and every variable's number of states), no
        separate emission, and the m-estimate prior of the CPTs."""
        return Triple(
            BayesNet(self.dag_, self._cards()),
            None,
            NetworkMEstimate.of(self.m, self.p, self.states_),
        )

    def _components(self) -> Triple:
        """The triple of the current fit: built by ``_make_components()`` once
        the variables and their states are fixed, and kept; built again after
        a hyperparameter (``set_params``), the structure or a variable's
        states changed."""
        fixed = (self.dag_, *(self.states_[v] for v in self.variables_))
        return stored_triple(self, fixed)

    # -- fitted state ------------------------------------------------------------
    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "cpds_") and len(self.cpds_) == len(self.variables_)

    def _reset(self) -> None:
        forget_triple(self)
        for attr in [a for a in vars(self) if a[-1] == "_" and a[:2] != "__"]:
            delattr(self, attr)

    def _check_ready(self) -> None:
        if hasattr(self, "variables_") and hasattr(self, "cpds_"):
            missing = [v for v in self.variables_ if v not in self.cpds_]
            if missing:
                raise ValueError(
                    f"no CPD for variables {missing!r}: call set_cpd for each of "
                    "them, or fit the network to data"
                )
            if self.__sklearn_is_fitted__():
                return  # as check_is_fitted finds, without reading the tags
        check_is_fitted(self)

    # -- fitting: statistics that add --------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    @hybrid_aware
    def fit(self, X, y=None, sample_weight=None):
        """Learn the CPTs from data.

        Complete data, or available-case counts (the default without
        ``latent``): ``from_stats(summarize(X, sample_weight))``. Missing
        cells with ``missing='em'``, or latent variables: EM (see Notes).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_variables)
            One column per variable (none for a latent variable), any
            labels. Missing values (NaN, None, pd.NA) are left out of the
            counts of the families that hold them (``missing='available'``,
            and ``'auto'`` without ``latent``), or learnt by EM
            (``missing='em'``, and ``'auto'`` with ``latent``).
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; a weight of 2 counts the row twice.

        Returns
        -------
        self : object
        """
        if (handler := handler_for(X)) is not None:
            return handler.fit_network(self, X, sample_weight)
        self._reset()
        codes, sw = self._encode(X, sample_weight, reset=True)
        structure, _, prior = self._components()
        stats = structure.stats(codes, sw)
        if not self._by_em():
            return self.from_stats(stats)
        return fit_em(self, structure, prior, stats, codes, sw)

    @_fit_context(prefer_skip_nested_validation=True)
    @hybrid_aware
    def partial_fit(self, X, y=None, sample_weight=None):
        """Add the counts of a chunk of data and update the CPTs.

        The first call (or any call on a network without counts, such as one
        built by :meth:`set_cpd`) is :meth:`fit`; later ones keep the
        variables and their states (a new state is an error: declare it in
        ``states``) and re-derive every CPT from the summed counts. When
        missing cells are learnt by EM (``missing``) the counts of a chunk's
        missing cells (and latent variables) are their expected counts under
        the current tables: one step of incremental EM (Neal and Hinton 1998)
        per chunk.

        Parameters
        ----------
        X, y, sample_weight
            As :meth:`fit`.

        Returns
        -------
        self : object
        """
        if (handler := handler_for(X)) is not None:
            return handler.fit_network(self, X, sample_weight, partial=True)
        if not hasattr(self, "stats_"):
            self._reset()
            return self.from_stats(self._summarize(X, sample_weight, reset=True))
        if not self._by_em():
            chunk = self._summarize(X, sample_weight, False)
        else:
            codes, sw = self._encode(X, sample_weight, False)
            keep = sw > 0
            chunk, _ = expected_stats(self._engine_, codes[keep], sw[keep])
        return self.from_stats(self.stats_ + chunk)

    @hybrid_aware
    def summarize(self, X, sample_weight=None) -> NetworkStats:
        """The counts of a chunk of data, without fitting.

        The counts of chunks add (``a + b``), and :meth:`from_stats` of their
        sum is the network of one ``fit`` on all the rows. The first call on
        a network not fitted to data fixes the variables (the columns of
        ``X``) and their states (``states``, a pandas categorical's
        categories, or the sorted values of this chunk); later calls on it
        must show no other state. The counts carry the variables and states,
        so chunks may also be summarized by separate fresh networks (workers
        of a map-reduce): counts of chunks that showed different states add
        over their union, sorted as one ``fit`` on all the rows sorts them,
        and a fresh network's :meth:`from_stats` reads them. They pickle.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_variables)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        NetworkStats
            The weighted counts of every family.
        """
        reset = not hasattr(self, "n_features_in_")
        if reset:
            self._validate_params()
            self._reset()
        return replace(
            self._summarize(X, sample_weight, reset), layout=self._described()
        )

    @hybrid_aware
    def from_stats(self, stats: NetworkStats):
        """Set the CPTs from counts (summed over chunks).

        Parameters
        ----------
        stats : NetworkStats
            The counts of :meth:`summarize`, added over any number of chunks
            summarized by networks of this class (they carry their variables,
            structure and states, which this network takes).

        Returns
        -------
        self : object
            The fitted network; ``stats_`` holds the counts of ``stats``.
        """
        layout = getattr(stats, "layout", None)
        if layout is not None:
            self._validate_params()
            self._reset()
            layout.apply(self)
        if not hasattr(self, "n_features_in_"):
            raise ValueError(
                "from_stats needs the variables and states that summarize fixed: "
                "pass counts returned by summarize (they carry both), or call "
                "summarize on this network first"
            )
        structure, _, prior = self._components()
        shapes = [c.shape for c in structure.zeros().counts]
        if (
            not isinstance(stats, NetworkStats)
            or [np.shape(c) for c in stats.counts] != shapes
        ):
            raise TypeError(
                "stats must be the NetworkStats of summarize for the variables and "
                f"states of this network, got {type(stats).__name__}"
            )
        if self._by_em() and stats.incomplete_weight > 0:
            if getattr(self, "latent_", None):
                raise ValueError(
                    f"latent variables {self.latent_!r} are learnt by EM, which "
                    "needs the rows themselves: fit the network on data in "
                    "memory (counts from summarize or Dask input are not enough)"
                )
            raise ValueError(
                "stats count rows with missing cells, which EM needs row by row: "
                "fit the network on the rows in memory, or set "
                "missing='available' for available-case counts"
            )
        # The model's own statistics: their layout is now the model's.
        self.stats_ = stats if stats.layout is None else replace(stats, layout=None)
        self._log_cpds_ = structure.map_params(stats, prior)
        self.cpds_ = {v: np.exp(t) for v, t in self._log_cpds_.items()}
        self._engine_ = structure.with_cpds(self._log_cpds_)
        return self

    def _summarize(self, X, sample_weight, reset: bool) -> NetworkStats:
        codes, sw = self._encode(X, sample_weight, reset)
        return self._components().structure.stats(codes, sw)

    def _encode(self, X, sample_weight, reset: bool) -> tuple:
        """The codes of ``X`` and the checked weights (:func:`encode_rows`)."""
        return encode_rows(self, X, sample_weight, reset)

    # -- batched methods -------------------------------------------------------------
    def _codes(self, X) -> tuple[np.ndarray, list]:
        self._check_ready()
        return query_codes(self, X)

    def _row_codes(self, X) -> np.ndarray:
        # A few rows by dict lookups (bayeskit.network._fast), else pandas.
        self._check_ready()
        codes = few_row_codes(self, X)
        return query_codes(self, X)[0] if codes is None else codes

    @hybrid_aware
    def log_likelihood(self, X) -> np.ndarray:
        """``log P(observed cells)`` of every row, shape ``(n_samples,)``.

        Missing cells are summed out, and so are the variables a DataFrame
        leaves out; a row with nothing observed scores 0.
        """
        return log_likelihoods(self, self._row_codes(X))

    def score_samples(self, X) -> np.ndarray:
        """Same as :meth:`log_likelihood`."""
        if (handler := handler_for(X)) is not None:
            return handler.predict(self, "log_likelihood", X)
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
        # score_samples maps itself over a Dask DataFrame's partitions.
        ll = np.asarray(self.score_samples(X), dtype=float)
        sw = check_sample_weight(sample_weight, np.empty((len(ll), 0)))
        keep = sw > 0
        return float(np.average(ll[keep], weights=sw[keep]))

    @hybrid_aware
    def predict(self, X):
        """Fill the missing cells of every row with their most probable joint state.

        Each row's missing variables get the maximum-a-posteriori joint
        assignment given that row's observed cells (``map_query`` of the
        row's missing variables); observed cells are kept.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_variables)
            Missing cells are NaN, None or pd.NA (with
            ``handle_unknown='ignore'``, unknown states count as missing). A
            DataFrame may hold only some of the variables, in any order: the
            absent ones are missing in every row (pgmpy's ``predict`` of the
            rows with the columns to predict left out).

        Returns
        -------
        DataFrame or ndarray
            ``X`` with its missing cells filled, of the same type; a
            DataFrame that lacked variables gets their columns after its own.
        """
        if (handler := handler_for(X)) is not None:
            return handler.predict_frame(self, "predict", X)
        given = X
        X = completed_frame(self, X)
        codes, cols = self._codes(X)
        filled = most_probable(self, codes)
        d = len(cols) - len(getattr(self, "latent_", ()))  # the columns of X
        out = fill_missing(self, X, cols[:d], codes[:, :d], filled[:, :d])
        if X is not given:  # as pgmpy: the given columns, then the predicted
            shown = given.columns.tolist()
            out = out[shown + [v for v in out.columns if v not in shown]]
        return out

    @hybrid_aware
    def predict_proba(
        self,
        X,
        variable=None,
        *,
        soft_evidence=None,
        do=None,
        method="auto",
    ) -> pd.DataFrame:
        """Posterior of a variable (or of every variable) given each row.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_variables)
            Missing cells are NaN, None or pd.NA. A DataFrame may hold only
            some of the variables, in any order: the absent ones are missing
            in every row.
        variable : hashable, default=None
            The variable; ``None`` gives every variable.
        soft_evidence : dict, default=None
            Soft evidence as in :meth:`query`, ``{variable: likelihoods}``:
            an array of shape ``(k,)`` for every row, or ``(n_samples, k)``
            for one vector per row. A row in which the variable is observed
            ignores its soft evidence.
        do : dict, default=None
            Interventions as in :meth:`query`, in every row (a set variable's
            column is replaced by its state).
        method : {'auto', 'exact', 'loopy', 'sampling'} or object, default='auto'
            As in :meth:`query`.

        Returns
        -------
        DataFrame of shape (n_samples, k) or (n_samples, sum of k)
            ``P(variable = state | observed cells of the row)`` with one column
            per state, in the order of ``states_[variable]`` (a column
            MultiIndex ``(variable, state)`` for every variable), indexed like
            ``X``. Where the variable is observed the row is that state with
            probability one. A row of probability zero (possible with ``m=0``)
            is uniform, with a warning.
        """
        if (handler := handler_for(X)) is not None:
            if soft_evidence and any(np.ndim(v) > 1 for v in soft_evidence.values()):
                raise ValueError(
                    "soft_evidence: one vector per row cannot follow the "
                    "partitions of a Dask DataFrame; give one vector per "
                    "variable, or add the evidence as a child node's column"
                )
            return handler.predict_frame(
                self,
                "predict_proba",
                X,
                variable=variable,
                soft_evidence=soft_evidence,
                do=do,
                method=method,
            )
        codes, est = self._row_codes(X), self
        if variable is not None:
            self._check_variable(variable)
        if do is not None:
            exact_only(method)
            est, codes = intervened_rows(self, codes, do)
            return posterior_frame(
                est,
                codes,
                X.index if isinstance(X, pd.DataFrame) else None,
                variable,
                soft_evidence,
            )
        return approximate_frame(
            self,
            codes,
            X.index if isinstance(X, pd.DataFrame) else None,
            variable,
            soft_evidence,
            method,
        )

    def __sklearn_tags__(self):
        return categorical_input_tags(super().__sklearn_tags__())
