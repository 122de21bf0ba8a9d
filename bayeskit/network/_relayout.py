"""Counts of a network re-laid over more states: the union of chunks' states.

A chunk that did not show a state of a variable has zero counts for it, so
the counts of every family (the variable and its parents, shaped ``(*parent
states, states)``) over some states become counts over a superset by placing
them at their positions in it and zeros elsewhere. The ordering policy is a
fit's: the sorted distinct values.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np

from .._layout import Layout
from ..graph.network import NetworkStats

__all__ = ["DescribedCounts", "union_of_states"]

_STATES = ("states_", "_state_index_", "_labels_")


def union_of_states(cls, a: NetworkStats, b: NetworkStats) -> NetworkStats:
    """``a + b`` for the counts of networks whose layouts differ in states."""
    la, lb = a.layout, b.layout
    other = [name for name in la.differing(lb) if name not in _STATES]
    if other:
        raise ValueError(
            "these counts were summarized by networks that differ in more than "
            f"the states of their variables ({', '.join(other)} differ) and do "
            "not add: summarize every chunk with networks of the same variables "
            "and structure"
        )
    dag, variables = la.state["dag_"], la.state["variables_"]
    sa, sb = la.state["states_"], lb.state["states_"]
    union = {}
    for v in variables:
        try:
            union[v] = np.union1d(sa[v], sb[v])
        except TypeError as exc:
            raise ValueError(
                f"the states of variable {v!r} in these counts "
                f"({list(sa[v])[:5]} and {list(sb[v])[:5]}) cannot be ordered "
                "together: declare them with states="
            ) from exc

    def relaid(stats, states):
        counts = []
        for v, c in zip(variables, stats.counts):
            family = (*dag.parents(v), v)
            out = np.zeros(tuple(len(union[u]) for u in family))
            out[np.ix_(*(np.searchsorted(union[u], states[u]) for u in family))] = c
            counts.append(out)
        return NetworkStats(tuple(counts), stats.incomplete_weight)

    total = relaid(a, sa) + relaid(b, sb)
    network = cls.__new__(cls)
    vars(network).update(copy.deepcopy(la.state))
    for v in variables:
        network._set_states(v, union[v])
    state = {name: getattr(network, name) for name in la.state}
    return replace(total, layout=Layout(cls, state))


class DescribedCounts:
    """What a network's counts say of themselves, and what it tells the Dask
    edge (a mixin of :class:`~bayeskit.BayesianNetwork`)."""

    def _described(self) -> Layout:
        """The layout of this network's counts: the variables, the structure
        and the states its last reset fixed (``_layout_keys``)."""
        keys = getattr(self, "_layout_keys", ())
        return Layout(
            type(self), {k: getattr(self, k) for k in keys if hasattr(self, k)}
        )

    @classmethod
    def _union_stats(cls, a: NetworkStats, b: NetworkStats) -> NetworkStats:
        """``a + b`` over chunks that showed different states of some
        variables: both re-laid over the sorted union of every variable's
        states (the order a fit on all the rows gives)."""
        return union_of_states(cls, a, b)

    def _output_spec(self, method: str, float32: bool) -> tuple:
        """``log_likelihood`` / ``score_samples``: one float per row."""
        return None, np.dtype(np.float64)

    def _encoded_columns(self, X) -> list:
        """Every column is a variable whose states the data fix."""
        return list(range(X.shape[1]))
