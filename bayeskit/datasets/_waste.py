"""The waste incinerator of Lauritzen (1992): a hybrid network by its tables."""

from __future__ import annotations

import numpy as np

__all__ = ["load_waste_incinerator"]


def load_waste_incinerator():
    """The waste incinerator, the classic conditional linear Gaussian network.

    A fictitious model of the emission of heavy metals from a waste
    incinerator (Lauritzen 1992, used throughout Cowell, Dawid, Lauritzen and
    Spiegelhalter 1999, chapter 7, and Lauritzen and Jensen 2001). Three
    discrete nodes: the burning regimen ``B`` (stable, unstable), the filter
    state ``F`` (intact, defective) and the type of waste ``W`` (industrial,
    household); six continuous ones: the filter efficiency ``E``, the CO2
    concentration ``C``, the metals in the waste ``Min``, the emission of
    dust ``D``, the light penetrability ``L`` and the emission of metals
    ``Mout``, with

    - ``P(B = stable) = 0.85``, ``P(F = intact) = 0.95``,
      ``P(W = industrial) = 2/7``;
    - ``E | F, W ~ N(-3.9, 0.00002)`` (intact, industrial), ``N(-3.2,
      0.00002)`` (intact, household), ``N(-0.4, 0.0001)`` (defective,
      industrial), ``N(-0.5, 0.0001)`` (defective, household);
    - ``C | B ~ N(-2, 0.1)`` (stable), ``N(-1, 0.3)`` (unstable);
    - ``Min | W ~ N(0.5, 0.01)`` (industrial), ``N(-0.5, 0.005)``
      (household);
    - ``D | B, W, E ~ N(a + E, s)`` with ``(a, s)`` = (6.5, 0.03) stable and
      industrial, (6.0, 0.04) stable and household, (7.5, 0.1) unstable and
      industrial, (7.0, 0.1) unstable and household;
    - ``L | D ~ N(3 - D / 2, 0.25)``, ``Mout | D, Min ~ N(D + Min, 0.002)``.

    Returns
    -------
    BayesianNetwork
        Fitted, with ``continuous_`` the six continuous nodes (its eight
        joint discrete configurations are enumerated; the strong junction
        tree, :class:`~bayeskit.graph.clg_tree.CLGJunctionTree`, gives the
        same answers).
        Built from its tables, it has no statistics of rows (no ``stats_``:
        ``partial_fit`` learns from its chunk alone, as ``fit``).

    References
    ----------
    .. [1] S. L. Lauritzen, "Propagation of probabilities, means and variances
       in mixed graphical association models", Journal of the American
       Statistical Association 87(420), 1992.
    .. [2] R. G. Cowell, A. P. Dawid, S. L. Lauritzen and D. J. Spiegelhalter,
       "Probabilistic Networks and Expert Systems", Springer, 1999,
       section 7.7.
    .. [3] S. L. Lauritzen and F. Jensen, "Stable local computation with
       conditional Gaussian distributions", Statistics and Computing 11, 2001.

    Examples
    --------
    Industrial waste, a light penetrability of 1.1 and a CO2 concentration of
    -0.9: the burning is almost surely unstable, the filter intact.

    >>> from bayeskit.datasets import load_waste_incinerator
    >>> bn = load_waste_incinerator()
    >>> evidence = {"W": "industrial", "L": 1.1, "C": -0.9}
    >>> bn.query("B", evidence=evidence).round(4).tolist()
    [0.0123, 0.9877]
    >>> bn.query(["F", "B"], evidence=evidence).round(4).tolist()
    [0.0122, 0.9874, 0.0001, 0.0004]
    >>> post = bn.query("Mout", evidence=evidence)
    >>> float((post["weight"] * post["mean"]).sum().round(4))
    4.1077
    """
    from ..graph.clg import CLGNode
    from ..network._hybrid_stats import hybrid_from_tables
    from ..network._network import BayesianNetwork

    edges = [
        ("F", "E"),
        ("W", "E"),
        ("B", "C"),
        ("W", "Min"),
        ("B", "D"),
        ("W", "D"),
        ("E", "D"),
        ("D", "L"),
        ("D", "Mout"),
        ("Min", "Mout"),
    ]
    states = {
        "B": ["stable", "unstable"],
        "F": ["intact", "defective"],
        "W": ["industrial", "household"],
    }
    cont = ["E", "C", "Min", "D", "L", "Mout"]
    bn = BayesianNetwork(edges, continuous=cont, states=states)
    tables = {"B": [0.85, 0.15], "F": [0.95, 0.05], "W": [2 / 7, 5 / 7]}
    none = np.zeros((2, 0))
    nodes = {
        # E | F, W: rows F (intact, defective), columns W (industrial, household)
        "E": CLGNode(
            ("F", "W"),
            (),
            np.array([[-3.9, -3.2], [-0.4, -0.5]]),
            np.zeros((2, 2, 0)),
            np.array([[0.00002, 0.00002], [0.0001, 0.0001]]),
        ),
        "C": CLGNode(("B",), (), np.array([-2.0, -1.0]), none, np.array([0.1, 0.3])),
        "Min": CLGNode(
            ("W",), (), np.array([0.5, -0.5]), none, np.array([0.01, 0.005])
        ),
        # D | B, W, E: rows B (stable, unstable), columns W
        "D": CLGNode(
            ("B", "W"),
            ("E",),
            np.array([[6.5, 6.0], [7.5, 7.0]]),
            np.ones((2, 2, 1)),
            np.array([[0.03, 0.04], [0.1, 0.1]]),
        ),
        "L": CLGNode((), ("D",), np.array(3.0), np.array([-0.5]), np.array(0.25)),
        "Mout": CLGNode(
            (), ("D", "Min"), np.array(0.0), np.array([1.0, 1.0]), np.array(0.002)
        ),
    }
    return hybrid_from_tables(bn, tables, nodes)
