"""The tables of a :class:`~bayeskit.BayesianNetwork` by hand: set and read one
CPT by its labels, and a network to and from pgmpy (and an all-continuous
one to and from pyAgrum's CLG).

A mixin of :class:`~bayeskit.BayesianNetwork` (its methods are the network's);
the labelled layouts are read in :mod:`bayeskit.network._data`, pgmpy's
objects in :mod:`bayeskit.network._pgmpy`.
"""

from __future__ import annotations

from .._logmath import safe_log
from ..graph import DAG
from ..graph.network import BayesNet
from ._data import checked_table, declared_states
from ._em import latent_states
from ._hybrid import hybrid_aware
from ._pgmpy import network_from_pgmpy, network_to_pgmpy
from ._pyagrum import clg_from_pyagrum, clg_to_pyagrum
from ._queries import labelled_cpd

__all__ = ["NetworkTables"]


class NetworkTables:
    """``set_cpd`` / ``get_cpd`` / ``from_pgmpy`` / ``to_pgmpy`` /
    ``from_pyagrum`` / ``to_pyagrum`` of a network."""

    # -- CPDs by hand ------------------------------------------------------------
    @hybrid_aware
    def set_cpd(self, variable, table, *, states=None, parents=None):
        """Set the CPT of one variable by hand.

        A network can be built without data: give the structure in ``edges``
        (and the states in the constructor's ``states`` or here), then call
        ``set_cpd`` for every variable, parents first when their states are
        not declared. The network's own order of a variable's parents, that
        of its axes in ``cpds_``, is ``parents_[variable]``; a table whose
        parents come in another order says so (``parents``, or the names of
        a DataFrame's index) and is transposed.

        Parameters
        ----------
        variable : hashable
            A variable of the network (for a network built by hand, a new
            isolated variable is added).
        table : array-like, DataFrame, Series or pgmpy TabularCPD
            ``P(variable | parents)``, every row summing to one over the
            variable's states. One of:

            - an array of shape ``(*parent cardinalities, k)``, the parents in
              the order of ``parents`` (default: ``parents_[variable]``), or
              its 2-d form ``(prod of parent cardinalities, k)`` (the rows of
              :meth:`get_cpd`);
            - a DataFrame in :meth:`get_cpd`'s layout: one row per joint state
              of the parents, in any order, its index (a MultiIndex for
              several parents) named after the parents; one column per state
              of the variable, labelled by the state. A variable without
              parents takes a Series over its states (or a one-row
              DataFrame);
            - a DataFrame in pgmpy's layout, told apart by its names: one row
              per state of the variable (the index named after the variable
              or unnamed), one column per joint state of the parents (the
              columns named after the parents); it is transposed;
            - a pgmpy ``TabularCPD`` (its ``values`` have one row per state
              and the first parent of its ``evidence`` varying slowest; its
              ``state_names`` label the axes).

            Labelled tables are matched by label: parent states and the
            variable's known states may come in any order.
        states : list, default=None
            Labels of the variable's states, if not known yet; ``None`` keeps
            the known ones, takes a labelled table's, or numbers them
            ``0 .. k - 1``.
        parents : list, default=None
            The order of the parent axes of an array ``table`` (the same
            parents as ``parents_[variable]``, in any order); ``None`` is the
            network's order.

        Returns
        -------
        self : object

        Raises
        ------
        ValueError
            Naming ``table`` for a table of the wrong shape, with a negative
            or non-finite entry, with a row that does not sum to one, or with
            unknown labels; naming ``parents`` for a list that is not the
            variable's parents.
        """
        if not hasattr(self, "variables_"):
            self._validate_params()
            declared = declared_states(latent_states(self))  # "H": 2 -> [0, 1]
            self._set_structure(list(declared), by_hand=True)
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
        values, states = checked_table(self, variable, table, states, parents)
        self._set_states(variable, states)
        self.cpds_[variable] = values
        self._log_cpds_[variable] = safe_log(values)
        if self.__sklearn_is_fitted__():
            self._engine_ = BayesNet(self.dag_, self._cards(), self._log_cpds_)
        return self

    @hybrid_aware
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
        return labelled_cpd(self, variable)

    # -- pgmpy -------------------------------------------------------------------------
    @classmethod
    def from_pgmpy(cls, model):
        """The network of a pgmpy ``DiscreteBayesianNetwork``, every table set,
        or of a ``LinearGaussianBayesianNetwork``, every node continuous.

        The variables keep pgmpy's order of nodes, their states pgmpy's
        ``state_names`` (in their order), and the edges pgmpy's order of
        edges, which fixes ``parents_``; every ``TabularCPD`` is read by its
        labels, so a CPD whose ``evidence`` lists the parents in another
        order is transposed. pgmpy itself is not imported.

        A ``LinearGaussianCPD``'s ``beta`` (the intercept, then one
        coefficient per ``evidence`` variable) and ``std`` (the residual
        standard deviation) become the node's regression, as :meth:`to_pgmpy`
        writes them.

        Parameters
        ----------
        model : pgmpy DiscreteBayesianNetwork or LinearGaussianBayesianNetwork
            A model with a ``TabularCPD`` for every node, or a
            ``LinearGaussianCPD`` for every node.

        Returns
        -------
        BayesianNetwork
            A network built by hand (no ``stats_``): queries, sampling and
            :meth:`to_pgmpy` work; :meth:`fit` would relearn the tables.
        """
        return network_from_pgmpy(cls, model)

    @hybrid_aware
    def to_pgmpy(self):
        """The network as a pgmpy ``DiscreteBayesianNetwork``.

        Needs pgmpy (an optional dependency; an ImportError says how to
        install it). Every table becomes a ``TabularCPD`` with the parents
        in the order of ``parents_`` as its ``evidence`` and the states as
        its ``state_names``.

        Returns
        -------
        pgmpy.models.DiscreteBayesianNetwork
        """
        self._check_ready()
        return network_to_pgmpy(self)

    # -- pyAgrum -------------------------------------------------------------------
    @classmethod
    def from_pyagrum(cls, model):
        """The all-continuous network of a pyAgrum ``CLG`` (``pyagrum.clg``).

        Every pyAgrum ``GaussianVariable`` becomes a continuous node: its
        ``mu`` the regression's intercept, each arc's coefficient
        (``coefArc``) that of the parent, and its ``sigma`` the residual
        standard deviation. pyAgrum itself is not imported.

        Parameters
        ----------
        model : pyagrum.clg.CLG

        Returns
        -------
        BayesianNetwork
            A network built by hand (no ``stats_``): queries, sampling and
            :meth:`to_pyagrum` work; :meth:`fit` would relearn the regressions.
        """
        return clg_from_pyagrum(cls, model)

    def to_pyagrum(self):
        """The network, every node continuous, as a pyAgrum ``CLG``.

        Needs pyAgrum (an optional dependency). A network with discrete nodes
        has no pyAgrum CLG counterpart: write it to a file pyAgrum reads
        (:func:`bayeskit.io.write_bif`, ``write_uai``, ``write_xdsl``).

        Returns
        -------
        pyagrum.clg.CLG
        """
        self._check_ready()
        return clg_to_pyagrum(self)
