"""Maximum-weight spanning forests (Kruskal's algorithm).

A maximum-weight spanning forest of the maximal cliques of a chordal graph,
weighted by separator sizes, is a junction tree (the compiled elimination of
:mod:`bayeskit.graph.triangulation` builds that one itself);
:func:`maximum_spanning_tree` is the general algorithm on given candidate
edges, used for instance by the Chow-Liu tree of a network's structure.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["maximum_spanning_tree"]


def maximum_spanning_tree(
    n_nodes: int, weighted_edges: Iterable[tuple[int, int, float]]
) -> list[tuple[int, int]]:
    """A maximum-weight spanning forest (Kruskal's algorithm).

    Parameters
    ----------
    n_nodes : int
        Nodes are ``0 .. n_nodes - 1``.
    weighted_edges : iterable of (i, j, weight)
        Candidate edges. Only these can be chosen, so nodes joined by no
        candidate path end up in different trees of the forest.

    Returns
    -------
    edges : list of (i, j)
        The chosen edges, heaviest first; ties go to the edge listed first.
        Their total weight is the largest of all spanning forests of the
        candidate graph.

    Examples
    --------
    >>> from bayeskit.graph.spanning_tree import maximum_spanning_tree
    >>> maximum_spanning_tree(3, [(0, 1, 1.0), (1, 2, 3.0), (0, 2, 2.0)])
    [(1, 2), (0, 2)]
    """
    candidates = []
    for i, j, w in weighted_edges:
        i, j = int(i), int(j)
        if not (0 <= i < n_nodes and 0 <= j < n_nodes) or i == j:
            raise ValueError(f"edge ({i}, {j}) is not between two of {n_nodes} nodes")
        candidates.append((i, j, float(w)))
    return _kruskal(n_nodes, candidates)


def _kruskal(n_nodes: int, candidates: list[tuple]) -> list[tuple[int, int]]:
    """Kruskal on checked (i, j, weight) edges; ties go to the edge listed first."""
    parent = list(range(n_nodes))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    chosen = []
    for i, j, _ in sorted(candidates, key=lambda e: -e[2]):  # stable
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[ri] = rj
            chosen.append((i, j))
    return chosen
