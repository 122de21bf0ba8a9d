"""Greedy hill climbing over DAGs with a tabu list (Koller and Friedman 2009,
section 18.4.3), on a decomposable score.

The graph is a boolean adjacency matrix over variable indices. The change of
the score from toggling ``x`` in the parents of ``y`` is kept in a matrix
``delta[x, y]``; a move changes the parents of one variable (add, remove) or
two (reverse), and only their columns are recomputed, from the cached family
scores of :class:`~bayeskit.network._scores.FamilyScores`. The
reachability matrix (transitive closure) tells which additions and reversals
keep the graph acyclic. Every iteration takes the best legal move, as
pgmpy's ``HillClimbSearch.estimate`` does: ties (gains within rounding of the
best) go to the first (additions and removals by (parent, child) index, or by
their positions in a given order of the variables, then reversals).
:func:`iterated_hill_climb` adds perturbed restarts (iterated local search).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from ._scores import FamilyScores

__all__ = [
    "SearchResult",
    "hill_climb",
    "iterated_hill_climb",
    "legal_moves",
    "perturb",
    "reachability",
]


@dataclass(frozen=True)
class SearchResult:
    """The DAG found (adjacency matrix), its score and the number of moves made."""

    adjacency: np.ndarray
    score: float
    n_iter: int


def reachability(adjacency: np.ndarray) -> np.ndarray:
    """``reach[a, b]``: there is a directed path of one edge or more from a to b."""
    reach = adjacency.copy()
    while True:
        longer = reach | ((reach.astype(np.int64) @ reach.astype(np.int64)) > 0)
        if (longer == reach).all():
            return reach
        reach = longer


def legal_moves(
    adjacency: np.ndarray,
    allowed: np.ndarray,
    required: np.ndarray,
    max_indegree: float,
    tabu=(),
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boolean masks ``(add, remove, reverse)`` over the pairs ``(x, y)``.

    ``add[x, y]``: adding x -> y keeps a DAG, is allowed, does not give y more
    than ``max_indegree`` parents and is not tabu; ``remove[x, y]``: the edge
    is there, not required and its removal not tabu; ``reverse[x, y]``: the
    edge x -> y is there, not required, y -> x is allowed, no other path
    leads from x to y, x keeps at most ``max_indegree`` parents and neither
    reversal is tabu.
    """
    reach = reachability(adjacency)
    indegree = adjacency.sum(axis=0)
    room = indegree + 1 <= max_indegree
    add = ~adjacency & ~reach.T & allowed & room[None, :]
    np.fill_diagonal(add, False)
    remove = adjacency & ~required
    # Another path x -> c -> ... -> y (c a child of x other than y).
    other_path = (adjacency.astype(np.int64) @ reach.astype(np.int64)) > 0
    reverse = adjacency & ~required & allowed.T & ~other_path & room[:, None]
    for op, x, y in tabu:
        if op == "+":
            add[x, y] = False
        elif op == "-":
            remove[x, y] = False
        else:
            reverse[x, y] = reverse[y, x] = False
    return add, remove, reverse


def _column(scores: FamilyScores, y: int, parents: list, candidates) -> np.ndarray:
    """``delta[:, y]``: the change of y's local score when toggling each x."""
    d = len(scores.cards)
    column = np.full(d, -np.inf)
    base = scores.local_score(y, parents)
    current = set(parents)
    for x in candidates:
        new = [p for p in parents if p != x] if x in current else [*parents, x]
        column[x] = scores.local_score(y, new) - base
    return column


def hill_climb(
    scores: FamilyScores,
    start: np.ndarray,
    allowed: np.ndarray,
    required: np.ndarray,
    *,
    max_indegree: float = np.inf,
    tabu_length: int = 100,
    epsilon: float = 1e-4,
    max_iter: int = 1_000_000,
    max_tabu: int = 0,
    order: np.ndarray | None = None,
    tie: float = 1e-9,
) -> SearchResult:
    """Greedy search from ``start`` (an acyclic adjacency matrix holding every
    required edge and no disallowed one).

    Stops when the best legal move improves the score by less than
    ``epsilon`` (or there is none), or after ``max_iter`` moves. With
    ``max_tabu > 0`` it goes on from there as tabu search (Glover 1989): it
    takes the best legal move even when it does not improve the score, for
    up to ``max_tabu`` moves in a row that do not beat the best graph seen
    by ``epsilon``, then climbs greedily from the best graph seen (a move
    that was tabu there may improve it) and returns where that stops. Among
    equally good moves the first is taken, in the order of the variables'
    indices, or in ``order`` (a permutation of them) when given; gains
    within ``tie`` times the magnitude of the score of the best are equal
    (an edge and its reversal gain the same, but their computed gains differ
    by the rounding of different sums).
    """
    adjacency = start.copy()
    d = adjacency.shape[0]
    parents = [list(np.flatnonzero(adjacency[:, y])) for y in range(d)]

    def candidates(y: int) -> list:
        """The x whose toggle in y's parents some move may need."""
        has_room = len(parents[y]) + 1 <= max_indegree
        return [
            x
            for x in range(d)
            if x != y and (adjacency[x, y] or (has_room and allowed[x, y]))
        ]

    delta = np.column_stack(
        [_column(scores, y, parents[y], candidates(y)) for y in range(d)]
    )
    tabu: deque = deque(maxlen=tabu_length)
    n_iter = 0
    current = scores.score({y: parents[y] for y in range(d)})
    best, best_adjacency, worse = current, adjacency.copy(), 0
    while n_iter < max_iter:
        add, remove, reverse = legal_moves(
            adjacency, allowed, required, max_indegree, tabu
        )
        toggle = np.where(add | remove, delta, -np.inf)
        flip = np.where(reverse, delta + delta.T, -np.inf)
        if order is not None:  # ties go to the first pair in this order
            toggle, flip = toggle[np.ix_(order, order)], flip[np.ix_(order, order)]
        # Moves within rounding of the best are ties (an edge and its
        # reversal score alike, up to the rounding of different sums).
        top = max(toggle.max(), flip.max())
        near = top - tie * max(abs(current), 1.0) if np.isfinite(top) else top
        if (toggle >= near).any():
            best_toggle = int((toggle >= near).argmax())
            gain, (x, y), op = (
                toggle.flat[best_toggle],
                divmod(best_toggle, d),
                "toggle",
            )
        else:
            best_flip = int((flip >= near).argmax())
            gain, (x, y), op = flip.flat[best_flip], divmod(best_flip, d), "flip"
        if order is not None:
            x, y = int(order[x]), int(order[y])
        if not np.isfinite(gain) or (gain < epsilon and worse >= max_tabu):
            break
        if op == "flip":
            adjacency[x, y], adjacency[y, x] = False, True
            parents[y].remove(x)
            parents[x].append(y)
            tabu.append(("flip", x, y))
            changed = (x, y)
        elif adjacency[x, y]:
            adjacency[x, y] = False
            parents[y].remove(x)
            tabu.append(("+", x, y))
            changed = (y,)
        else:
            adjacency[x, y] = True
            parents[y].append(x)
            tabu.append(("-", x, y))
            changed = (y,)
        for v in changed:
            delta[:, v] = _column(scores, v, parents[v], candidates(v))
        n_iter += 1
        current += gain
        if current >= best + epsilon or (max_tabu == 0 and current > best):
            best, worse = current, 0
            best_adjacency[:] = adjacency
        else:
            worse += 1
    if max_tabu == 0:
        best_adjacency = adjacency
    else:
        # A move that was tabu may improve the best graph seen: climb on from
        # it by pgmpy's rule, so the result is a local optimum of every move.
        polished = hill_climb(
            scores,
            best_adjacency,
            allowed,
            required,
            max_indegree=max_indegree,
            tabu_length=tabu_length,
            epsilon=epsilon,
            max_iter=max(max_iter - n_iter, 0),
            order=order,
        )
        return SearchResult(
            polished.adjacency, polished.score, n_iter + polished.n_iter
        )
    parents = [list(np.flatnonzero(best_adjacency[:, y])) for y in range(d)]
    total = scores.score({y: parents[y] for y in range(d)})
    return SearchResult(best_adjacency, total, n_iter)


def perturb(
    adjacency: np.ndarray,
    allowed: np.ndarray,
    required: np.ndarray,
    max_indegree: float,
    n_moves: int,
    rng: np.random.RandomState,
) -> tuple[np.ndarray, int]:
    """``adjacency`` after ``n_moves`` random legal moves (a copy), and the
    number of moves made (fewer when no move is legal).

    Each move picks a kind (add, remove or reverse, among the kinds with a
    legal move) uniformly, then one of its legal moves uniformly, so that a
    graph with few edges is not perturbed by additions alone.
    """
    adjacency = adjacency.copy()
    for made in range(n_moves):
        masks = legal_moves(adjacency, allowed, required, max_indegree)
        kinds = [k for k, m in enumerate(masks) if m.any()]
        if not kinds:
            return adjacency, made
        kind = kinds[rng.randint(len(kinds))]
        pairs = np.argwhere(masks[kind])
        x, y = pairs[rng.randint(len(pairs))]
        if kind == 2:
            adjacency[x, y], adjacency[y, x] = False, True
        else:
            adjacency[x, y] = not adjacency[x, y]
    return adjacency, n_moves


def iterated_hill_climb(
    scores: FamilyScores,
    start: np.ndarray,
    allowed: np.ndarray,
    required: np.ndarray,
    *,
    n_restarts: int,
    n_perturb: int,
    rng: np.random.RandomState,
    max_indegree: float = np.inf,
    epsilon: float = 1e-4,
    **kwargs,
) -> SearchResult:
    """Hill climbing, then iterated local search (Lourenco, Martin and
    Stutzle 2003) from the best graph.

    The first search runs twice from ``start``, ties going to the first move
    in the order of the variables and in the reverse order (with the tabu
    phase of ``kwargs``), and the better is kept. Then, ``n_restarts``
    times, the best graph is perturbed by ``n_perturb`` random legal moves
    (:func:`perturb`) and greedy search climbs from there, ties going to a
    random order of the variables; its graph replaces the best when it beats
    it by ``epsilon``. ``n_iter`` counts the moves on the way from ``start``
    to the graph returned (perturbations included), at most ``max_iter``.
    """
    d = start.shape[0]
    common = dict(max_indegree=max_indegree, epsilon=epsilon)
    best = max(
        (
            hill_climb(
                scores, start, allowed, required, order=order, **common, **kwargs
            )
            for order in (None, np.arange(d)[::-1])
        ),
        key=lambda r: r.score,
    )
    max_iter = kwargs.pop("max_iter", 1_000_000)
    kwargs = {**kwargs, "max_tabu": 0}
    for _ in range(n_restarts):
        budget = max_iter - best.n_iter - n_perturb
        if budget <= 0:
            break
        kicked, n_made = perturb(
            best.adjacency, allowed, required, max_indegree, n_perturb, rng
        )
        parents = {y: list(np.flatnonzero(kicked[:, y])) for y in range(d)}
        if not np.isfinite(scores.score(parents)):
            continue  # a regression the data do not determine: no graph
        found = hill_climb(
            scores,
            kicked,
            allowed,
            required,
            order=rng.permutation(d),
            max_iter=budget,
            **common,
            **kwargs,
        )
        if found.score >= best.score + epsilon:
            best = SearchResult(
                found.adjacency, found.score, best.n_iter + n_made + found.n_iter
            )
    return best
