"""How big a network's junction tree would be, found without building its tables.

Exact inference on a Bayesian network holds one table per clique of its
junction tree, and a clique's table has one entry per joint state of its
variables: the total grows exponentially in the treewidth. Before compiling,
:func:`junction_tree_size` runs the same elimination game that
:meth:`JunctionTree.from_dag` runs (moral graph, min-fill order, maximal
cliques) and multiplies out the clique sizes in Python integers, so that the
answer for a network that could never be compiled is a number, not a
``MemoryError``. :func:`fits` compares it with a memory budget in bytes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import NamedTuple

from .dag import DAG
from .triangulation import _cards_of, _eliminate

__all__ = ["DEFAULT_MEMORY_BUDGET", "TreeSize", "fits", "junction_tree_size"]

#: The default memory budget of exact inference, in bytes: 1 GiB, room for
#: 2**27 float64 clique entries.
DEFAULT_MEMORY_BUDGET = 2**30


class TreeSize(NamedTuple):
    """The size of a network's junction tree, estimated before compiling it.

    Attributes
    ----------
    entries : int
        The total number of entries of the clique tables (the sum over the
        cliques of the product of their variables' numbers of states), as an
        exact Python integer.
    largest : int
        The entries of the largest clique table.
    width : int
        The number of variables of the largest clique minus one (the width of
        the triangulation; at least the treewidth of the moral graph).
    n_cliques : int
        The number of cliques.
    """

    entries: int
    largest: int
    width: int
    n_cliques: int

    @property
    def nbytes(self) -> int:
        """The bytes of one float64 table per clique: ``8 * entries``."""
        return 8 * self.entries


def junction_tree_size(dag: DAG, cardinalities: Mapping) -> TreeSize:
    """The size of the junction tree that exact inference would build.

    Parameters
    ----------
    dag : DAG
        The network's structure.
    cardinalities : mapping of node -> int
        The number of states of every node.

    Returns
    -------
    TreeSize
        The cliques of the moral graph triangulated in min-fill order (the
        order :meth:`JunctionTree.from_dag` uses, so the numbers are those of
        the tree it builds); only the elimination game runs, in memory
        quadratic in the number of nodes, and no table is allocated.

    Examples
    --------
    The diamond ``A -> B, C -> D`` of binary variables: moralising joins
    ``B`` and ``C``, which leaves two cliques of three variables:

    >>> from bayeskit.graph import DAG
    >>> from bayeskit.graph.budget import junction_tree_size
    >>> dag = DAG([("A", "B"), ("A", "C"), ("B", "D"), ("C", "D")])
    >>> junction_tree_size(dag, dict.fromkeys("ABCD", 2))
    TreeSize(entries=16, largest=8, width=2, n_cliques=2)
    """
    nodes = list(dag.nodes)
    index = {node: i for i, node in enumerate(nodes)}
    groups: list[int] = []
    offsets = [0]
    for node in nodes:  # moralising makes every family a clique
        groups.append(index[node])
        groups += map(index.__getitem__, dag.parents(node))
        offsets.append(len(groups))
    cards = _cards_of(nodes, cardinalities)
    elim = _eliminate(len(nodes), groups, offsets, cards)
    sizes = [math.prod(int(cards[i]) for i in clique) for clique in elim.cliques]
    width = max((len(c) for c in elim.cliques), default=1) - 1
    return TreeSize(sum(sizes), max(sizes, default=0), width, len(sizes))


def fits(size: TreeSize, memory_budget: int | float) -> bool:
    """Whether one float64 table per clique (``size.nbytes``) fits the budget."""
    return size.nbytes <= memory_budget
