"""Bootstrap arc strength (bnlearn's ``boot.strength``): how often a structure
learner finds each arc on resamples of the data, and in which direction."""

from __future__ import annotations

from numbers import Integral

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.utils import check_random_state

from ._pc import orient

__all__ = ["arc_strength", "dag_to_cpdag"]


def dag_to_cpdag(edges, nodes) -> tuple[list, list]:
    """The completed partially directed graph of the DAG ``edges`` over
    ``nodes`` (its Markov equivalence class), as ``(directed, undirected)``
    lists of pairs: an arc is directed where every DAG of the class shares it.

    The skeleton and the unshielded colliders ``x -> z <- y`` of the DAG
    (Verma and Pearl 1990), then Meek's rules 1-3, which orient exactly the
    compelled arcs (Meek 1995); the undirected pairs are in the order of
    ``nodes``.
    """
    index = {v: i for i, v in enumerate(nodes)}
    d = len(nodes)
    parent = np.zeros((d, d), dtype=bool)
    for x, y in edges:
        parent[index[x], index[y]] = True
    adjacent = parent | parent.T
    # A common neighbour z of non-adjacent x and y "separates" them unless it
    # is a collider of the DAG: the colliders are then the DAG's.
    sepsets = {}
    for x in range(d):
        for y in range(x + 1, d):
            if not adjacent[x, y]:
                common = np.flatnonzero(adjacent[x] & adjacent[y])
                sepsets[frozenset((x, y))] = {
                    int(z) for z in common if not (parent[x, z] and parent[y, z])
                }
    graph = orient(adjacent, sepsets)
    directed = [
        (nodes[a], nodes[b])
        for a in range(d)
        for b in range(d)
        if graph[a, b] and not graph[b, a]
    ]
    undirected = [
        (nodes[a], nodes[b])
        for a in range(d)
        for b in range(a + 1, d)
        if graph[a, b] and graph[b, a]
    ]
    return directed, undirected


def _arcs(fitted, as_cpdag: bool) -> tuple[list, list]:
    """The directed and undirected arcs a fitted learner found."""
    if as_cpdag and hasattr(fitted, "undirected_edges_"):
        return list(fitted.directed_edges_), list(fitted.undirected_edges_)
    if as_cpdag:
        return dag_to_cpdag(fitted.edges_, list(fitted.variables_))
    return list(fitted.edges_), []


def _rows(X, index: np.ndarray):
    if hasattr(X, "iloc"):
        return X.iloc[index].reset_index(drop=True)
    return X[index]


def _fit_resample(estimator, X, seed: int, as_cpdag: bool) -> tuple[list, list]:
    n = X.shape[0]
    index = np.random.RandomState(seed).randint(n, size=n)
    return _arcs(clone(estimator).fit(_rows(X, index)), as_cpdag)


def arc_strength(
    estimator,
    X,
    *,
    n_resamples=200,
    cpdag=True,
    random_state=None,
    n_jobs=None,
) -> pd.DataFrame:
    """The bootstrap strength and direction of every arc (bnlearn's
    ``boot.strength``; Friedman, Goldszmidt and Wyner 1999).

    ``estimator`` (unfitted, or fitted: it is cloned) learns a structure on
    each of ``n_resamples`` bootstrap resamples of the rows of ``X``. The
    strength of a pair of variables is the fraction of the learnt graphs in
    which they are joined by an arc; the direction of ``from -> to`` is,
    among those graphs, the fraction in which the arc points from ``from``
    to ``to``, an undirected arc counting one half each way (Scutari and
    Denis 2014, section 2.5).

    Parameters
    ----------
    estimator : HillClimbSearch, PC or another structure learner
        A learner whose ``fit(X)`` sets ``edges_`` (and ``variables_``).
    X : DataFrame or array-like of shape (n_samples, n_variables)
        The data, one column per variable.
    n_resamples : int, default=200
        The number of bootstrap resamples (bnlearn's ``R``), each of
        ``n_samples`` rows drawn with replacement.
    cpdag : bool, default=True
        Count the arcs of each learnt graph's equivalence class (bnlearn's
        default): an arc that the data cannot orient is undirected, and
        counts one half in each direction. ``PC``'s own partially directed
        graph is used as it is; a DAG is turned into its class (its skeleton
        and colliders, then Meek's rules). ``False`` counts the arcs of the
        DAG learnt (``edges_``).
    random_state : int, RandomState instance or None, default=None
        Draws the resamples: resample ``r`` holds the rows
        ``RandomState(seed[r]).randint(n_samples, size=n_samples)``, where
        ``seed = check_random_state(random_state).randint(2**31 - 1,
        size=n_resamples)``, whatever ``n_jobs``. An int gives the same
        table from call to call.
    n_jobs : int, default=None
        Resamples fitted in parallel by joblib (``-1``: every core;
        ``None``: one, unless in a ``joblib.parallel_config`` context, such
        as Dask's ``backend="dask"``, which sends the fits to a Dask
        cluster).

    Returns
    -------
    DataFrame
        One row per ordered pair of distinct variables (by ``from``, then
        ``to``, in the order of the columns), with
        columns ``from``, ``to``, ``strength`` (in [0, 1], the same for both
        orders of a pair) and ``direction`` (in [0, 1]; the two orders of a
        pair sum to 1 where the strength is positive, both 0 where it is
        0), as bnlearn's.

    References
    ----------
    .. [1] N. Friedman, M. Goldszmidt and A. Wyner, "Data analysis with
       Bayesian networks: a bootstrap approach", Proceedings of the 15th
       Conference on Uncertainty in Artificial Intelligence, 1999.
    .. [2] M. Scutari and J.-B. Denis, "Bayesian Networks with Examples in
       R", Chapman & Hall/CRC, 2014.
    .. [3] C. Meek, "Causal inference and causal explanation with background
       knowledge", Proceedings of the 11th Conference on Uncertainty in
       Artificial Intelligence, 1995.

    Examples
    --------
    >>> from bayeskit import HillClimbSearch, arc_strength
    >>> from bayeskit.datasets import load_network
    >>> df = load_network("asia").sample(2000, random_state=0)
    >>> table = arc_strength(HillClimbSearch(), df, n_resamples=20, random_state=0)
    >>> row = table[(table["from"] == "smoke") & (table["to"] == "lung")]
    >>> float(row["strength"].iloc[0])
    1.0
    """
    if not hasattr(estimator, "fit") or not hasattr(estimator, "get_params"):
        raise TypeError(
            "estimator must be a structure learner such as HillClimbSearch() or "
            f"PC(), got {type(estimator).__name__}"
        )
    if (
        not isinstance(n_resamples, Integral)
        or isinstance(n_resamples, bool)
        or n_resamples < 1
    ):
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not isinstance(cpdag, (bool, np.bool_)):
        raise TypeError(f"cpdag must be True or False, got {cpdag!r}")
    if not hasattr(X, "iloc"):
        X = np.asarray(X, dtype=object) if not hasattr(X, "shape") else X
    if getattr(X, "ndim", 2) != 2 or X.shape[0] < 1:
        raise ValueError(
            "X must be a 2-D table of at least one row, got shape "
            f"{getattr(X, 'shape', None)!r}"
        )
    seeds = check_random_state(random_state).randint(2**31 - 1, size=n_resamples)
    found = Parallel(n_jobs=n_jobs)(
        delayed(_fit_resample)(estimator, X, int(seed), bool(cpdag)) for seed in seeds
    )
    names = list(X.columns) if hasattr(X, "columns") else list(range(X.shape[1]))
    index = {v: i for i, v in enumerate(names)}
    d = len(names)
    toward = np.zeros((d, d))  # from -> to, an undirected arc counting 1/2
    for directed, undirected in found:
        for x, y in directed:
            toward[index[x], index[y]] += 1.0
        for x, y in undirected:
            toward[index[x], index[y]] += 0.5
            toward[index[y], index[x]] += 0.5
    joined = toward + toward.T
    with np.errstate(invalid="ignore", divide="ignore"):
        direction = np.where(joined > 0, toward / joined, 0.0)
    pairs = [(a, b) for a in range(d) for b in range(d) if a != b]
    return pd.DataFrame(
        {
            "from": [names[a] for a, _ in pairs],
            "to": [names[b] for _, b in pairs],
            "strength": [joined[a, b] / n_resamples for a, b in pairs],
            "direction": [direction[a, b] for a, b in pairs],
        }
    )
