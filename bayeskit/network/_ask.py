"""The questions of a fitted network, one at a time: ``query`` (posterior
marginals, interventions, approximate engines) and ``map_query`` (a mixin
of :class:`~bayeskit.BayesianNetwork`)."""

from __future__ import annotations

import pandas as pd

from ._approximate import approximate_series, exact_only
from ._causal import do_series
from ._data import query_targets
from ._hybrid import hybrid_aware
from ._queries import map_assignment

__all__ = ["NetworkQueries"]


class NetworkQueries:
    """``query`` and ``map_query`` of a network (the estimator gives
    ``_check_ready``)."""

    @hybrid_aware
    def query(
        self,
        variables,
        evidence=None,
        *,
        soft_evidence=None,
        do=None,
        method="auto",
    ) -> pd.Series:
        """Posterior marginal of a variable, or joint posterior of several.

        Parameters
        ----------
        variables : hashable or list of hashable
            One variable, or several for their joint posterior.
        evidence : dict, default=None
            Observed states, ``{variable: state label}``.
        soft_evidence : dict, default=None
            Soft (virtual, likelihood) evidence, ``{variable: likelihoods}``:
            one non-negative number per state of the variable, in the order
            of ``states_[variable]``, only their ratios mattering (Pearl
            1988, section 2.2.2). The posterior is that of a network with an
            added child of the variable, observed, whose probability given
            each state is proportional to these numbers: ``P(x | e, soft)``
            is proportional to ``P(x, e) * prod_v lambda_v(x_v)``, the other
            soft-evidenced variables summed out. A variable may be queried
            and have soft evidence, but not be observed and have it.
        do : dict, default=None
            Interventions, ``{variable: state label}``: ``P(variables |
            do(...), evidence)`` by graph surgery (the edges into each set
            variable cut; Pearl 2009, section 3.2), not conditioning.
        method : {'auto', 'exact', 'loopy', 'sampling'} or object, default='auto'
            How to compute it (:ref:`approximate-inference`); the result's
            ``attrs`` name the method used and its error estimate. An
            intervention (``do``) is answered exactly.

        Returns
        -------
        PosteriorSeries
            ``P(variables | evidence)``, a pandas Series indexed by the states
            of the variable (a MultiIndex over the variables' states, in the
            order given, for several); the values sum to one. In a notebook
            it shows as a table with named states
            (:class:`~bayeskit.network.PosteriorSeries`).

        Raises
        ------
        ValueError
            For an unknown variable or state (of evidence: an
            :class:`~bayeskit.network.UnknownStateError`, a KeyError too, as
            pgmpy raises), a queried variable that is also observed, or
            evidence of probability zero (only the evidence that the queried
            variables are not d-separated from is looked at).
        """
        self._check_ready()
        targets = query_targets(self, variables)
        if do is not None:
            exact_only(method)
            return do_series(self, targets, evidence, soft_evidence, do)
        return approximate_series(self, targets, evidence, soft_evidence, method)

    @hybrid_aware
    def map_query(self, variables=None, evidence=None, *, soft_evidence=None) -> dict:
        """The most probable joint assignment.

        Parameters
        ----------
        variables : list of hashable, default=None
            ``None``: every unobserved variable, by max-product. A list: the
            argmax of the exact joint posterior of those variables, the others
            summed out (never per-variable maxima).
        evidence : dict, default=None
            Observed states, ``{variable: state label}``.
        soft_evidence : dict, default=None
            Soft evidence as in :meth:`query`; it needs ``variables`` (the
            argmax of their joint posterior given both kinds of evidence).

        Returns
        -------
        dict
            ``{variable: state label}``, in the order of the variables. Ties
            go to the state listed first.
        """
        self._check_ready()
        return map_assignment(self, variables, evidence, soft_evidence)
