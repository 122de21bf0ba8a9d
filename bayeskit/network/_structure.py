"""The structure of a :class:`~bayeskit.BayesianNetwork` and what it gives
without data: parents, d-separation, the moral graph, Markov blankets, the
junction tree, the number of parameters; and model selection and sampling.

A mixin of :class:`~bayeskit.BayesianNetwork` (its methods are the network's;
it holds no state of its own).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from .._validation import check_is_fitted
from ..graph import DAG, JunctionTree
from ..graph.budget import DEFAULT_MEMORY_BUDGET, fits
from ..graph.gibbs import gibbs_sample
from ..graph.network import BayesNet
from ..graph.network_sampling import posterior_sample
from ._approximate import tree_size
from ._data import evidence_codes
from ._hybrid import hybrid_aware

__all__ = ["NetworkStructure"]


class NetworkStructure:
    """The structure's methods of a network, and ``bic`` / ``aic`` / ``sample``."""

    def _set_structure(
        self, names: list, by_hand: bool = False, latent: list = ()
    ) -> None:
        """The DAG over the variables ``names`` (the columns of X) and the
        ``latent`` ones; edges must name only these, unless the network is
        built by hand."""
        if len(set(names)) != len(names):
            raise ValueError(f"X has repeated column names: {names!r}")
        edges = [] if self.edges is None else list(self.edges)
        self.latent_ = list(latent)
        names = list(names) + self.latent_
        self.dag_ = DAG(edges, nodes=names)
        extra = [v for v in self.dag_.nodes if v not in set(names)]
        if extra and not by_hand:
            raise ValueError(
                f"edges name {extra!r}, which are not columns of X; the columns "
                f"are {list(names)!r}"
            )
        self.variables_ = list(self.dag_.nodes)
        self.states_, self._state_index_, self._labels_ = {}, {}, {}

    def _set_states(self, variable, states: np.ndarray) -> None:
        self.states_[variable] = states
        self._state_index_[variable] = {s: i for i, s in enumerate(states.tolist())}
        self._labels_[variable] = pd.Index(states, name=variable)

    def _by_em(self) -> bool:
        """Whether missing cells are learnt by EM: ``missing='em'``, or
        ``'auto'`` with latent variables."""
        if self.missing == "auto":
            return bool(self.latent)
        return self.missing == "em"

    def _cards(self) -> dict:
        return {v: len(self.states_[v]) for v in self.variables_}

    def _html_repr(self):
        # The notebook display (scikit-learn's _repr_html_ calls it): what
        # the fitted model holds, then scikit-learn's display.
        from .._html import estimator_html

        return estimator_html(self)

    # -- structure -----------------------------------------------------------------
    def _dag(self) -> DAG:
        if hasattr(self, "dag_"):
            return self.dag_
        edges = [] if self.edges is None else list(self.edges)
        return DAG(edges, nodes=list(self.states or ()))

    @property
    def parents_(self) -> dict:
        """The parents of every variable, in the order of the axes of its CPT.

        A dict from variable to a tuple of its parents, in the order of their
        edges in ``edges``: the order of the axes of ``cpds_[variable]``, of
        the index levels of :meth:`get_cpd` and of an array given to
        :meth:`set_cpd`. Known from ``edges`` (and ``states``) alone, before
        any table is set or learnt.
        """
        dag = self._dag()
        return {v: dag.parents(v) for v in dag.nodes}

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

    @hybrid_aware
    def n_parameters(self) -> int:
        """Number of free parameters: ``sum_v (k_v - 1) prod_{u in pa(v)} k_u``."""
        if not hasattr(self, "states_") or len(self.states_) < len(self.variables_):
            check_is_fitted(self)
        return BayesNet(self.dag_, self._cards()).n_parameters()

    # -- model selection and sampling ------------------------------------------
    def bic(self, X) -> float:
        """Bayesian information criterion on ``X`` (lower is better)."""
        ll = self.log_likelihood(X)
        return float(-2 * ll.sum() + self.n_parameters() * np.log(len(ll)))

    def aic(self, X) -> float:
        """Akaike information criterion on ``X`` (lower is better)."""
        return float(-2 * self.log_likelihood(X).sum() + 2 * self.n_parameters())

    @hybrid_aware
    def sample(self, n_samples=1, random_state=None, *, evidence=None) -> pd.DataFrame:
        """Draw rows by forward (ancestral) sampling, or given evidence.

        Parameters
        ----------
        n_samples : int, default=1
        random_state : int, RandomState or Generator, default=None
        evidence : dict, default=None
            Observed states, ``{variable: state label}``: the rows are then
            drawn from the posterior given them, and hold the evidence. When
            the junction tree fits ``memory_budget`` (as for exact queries),
            they are independent exact draws from the calibrated tree
            (:func:`bayeskit.graph.posterior_sample`);
            otherwise they come from Gibbs sampling (200 chains side by side
            after 100 sweeps each, rows of one chain together; dependent
            draws of a Markov chain, see :func:`bayeskit.graph.gibbs_sample`).

        Returns
        -------
        DataFrame of shape (n_samples, n_variables)
            One column per variable (in the order of ``variables_``) holding
            state labels.
        """
        self._check_ready()
        if not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
            raise ValueError(f"n_samples must be a positive int, got {n_samples!r}")
        if not isinstance(random_state, np.random.Generator):
            random_state = check_random_state(random_state)
        if evidence:
            codes = evidence_codes(self, evidence)
            observed, values = self._engine_.evidence(codes)
            budget = getattr(self, "memory_budget", DEFAULT_MEMORY_BUDGET)
            if fits(tree_size(self), budget):
                codes = posterior_sample(
                    self._engine_, observed, values, int(n_samples), random_state
                )
            else:
                codes = gibbs_sample(
                    self._engine_,
                    observed,
                    values,
                    int(n_samples),
                    random_state=random_state,
                )
        else:
            codes = self._engine_.sample(int(n_samples), random_state)
        return labelled_rows(self, codes)


def labelled_rows(est, codes: np.ndarray) -> pd.DataFrame:
    """Rows of state codes as a DataFrame of state labels, one column per
    variable: each column taken from its states as pandas holds them (the
    array pandas makes of ``states_[v]``, kept in the structure's memo), so
    no label is converted once per row."""
    memo = est._engine_.memo
    labels = memo.get("labels")
    if labels is None:
        labels = memo["labels"] = [
            pd.Series(est.states_[v], copy=True).array for v in est.variables_
        ]
    return pd.DataFrame(
        {v: labels[j].take(codes[:, j]) for j, v in enumerate(est.variables_)},
        columns=pd.Index(est.variables_),
    )
