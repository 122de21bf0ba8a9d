"""Calibration of a junction tree: Shafer-Shenoy message passing, compiled.

:class:`CalibrationPlan` is the message schedule of a
:class:`~bayeskit.graph.JunctionTree` compiled once for factors of given
scopes (which factor goes to which clique, how every message is eliminated
and laid out). It runs on raw log arrays with a leading batch axis, with a
:class:`~bayeskit.graph.Semiring` (sum-product for marginals and the
log-evidence, max-product for the most probable assignment with
traceback); :meth:`JunctionTree.calibrate` and estimators on their hot path
call it. :meth:`CalibrationPlan.message` gives the messages into the part of
a tree that :meth:`JunctionTree.span` finds, from the rest.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from .semiring import MAX_PRODUCT, SUM_PRODUCT, Semiring, SumProduct

if TYPE_CHECKING:
    from .junction_tree import JunctionTree

__all__ = ["CalibrationPlan"]

Node = Hashable


# ---------------------------------------------------------------------------
# The compiled schedule


def _rows(values: np.ndarray) -> np.ndarray:
    """A batch of tables as rows, one row per batch entry: the row length is
    the table size, not -1, which a batch of no rows cannot infer."""
    return values.reshape(values.shape[0], math.prod(values.shape[1:]))


def _reduce(semiring: Semiring, values: np.ndarray, axes: tuple) -> np.ndarray:
    """``semiring.eliminate`` of ``axes``, with a lean path for sum-product.

    Messages are small arrays, where numpy's own reductions cost less than the
    call overhead of the row kernels behind ``logsumexp``; the result is the
    same: shifted by the maximum, and ``-inf`` (never NaN) where all is ``-inf``.
    """
    if type(semiring) is not SumProduct:
        return semiring.eliminate(values, axes)
    top = values.max(axis=axes, keepdims=True)
    finite = np.isfinite(top)
    if finite.all():
        out = np.log(np.exp(values - top).sum(axis=axes, keepdims=True)) + top
    else:
        top = np.where(finite, top, 0.0)
        with np.errstate(divide="ignore"):
            out = np.log(np.exp(values - top).sum(axis=axes, keepdims=True)) + top
    return out.squeeze(axis=axes)


class _EdgeInfo:
    """How a message from clique ``c`` becomes an array in clique ``d``'s layout."""

    __slots__ = (
        "elim_axes",  # axes of c's belief (batch axis 0) summed or maximised out
        "elim_cards",
        "elim_vars",  # the eliminated variables in c's order
        "perm",  # separator order of c -> order of d (None: identity)
        "sep_cards_c",  # separator cardinalities in c's order
        "sep_first",  # transposition of c's belief: separator axes, then the rest
        "sep_vars_c",  # separator variables in c's order
        "shape_in_d",  # d's layout with 1 on every axis outside the separator
    )

    def __init__(self, lay_c: tuple, lay_d: tuple, cards: Mapping) -> None:
        in_d = set(lay_d)
        sep_c: list = []
        sep_axes: list = []
        elim_vars: list = []
        elim_axes: list = []
        for axis, v in enumerate(lay_c, 1):
            if v in in_d:
                sep_c.append(v)
                sep_axes.append(axis)
            else:
                elim_vars.append(v)
                elim_axes.append(axis)
        sep = set(sep_c)
        sep_d = [v for v in lay_d if v in sep]
        self.sep_vars_c = tuple(sep_c)
        self.elim_vars = tuple(elim_vars)
        self.elim_axes = tuple(elim_axes)
        self.perm = (
            None if sep_d == sep_c else (0, *(1 + sep_c.index(v) for v in sep_d))
        )
        self.sep_first = (0, *sep_axes, *elim_axes)
        self.sep_cards_c = tuple(cards[v] for v in sep_c)
        self.elim_cards = tuple(cards[v] for v in elim_vars)
        self.shape_in_d = tuple(cards[v] if v in sep else 1 for v in lay_d)


class CalibrationPlan:
    """The message schedule of a junction tree for factors of given scopes.

    Compiled once (which factor goes to which clique, how every message is
    eliminated and laid out), a plan runs on raw log arrays; estimators keep
    plans for the patterns of evidence they meet and call them on their hot
    path. Everything has a leading batch axis of size 1 or ``n``.

    Parameters
    ----------
    tree : JunctionTree
    scopes : sequence of sequence of hashable
        The variables of every factor, in the axis order of its array. An
        empty scope is a per-row constant added to the log-evidence.
    cardinalities : mapping of node -> int
        Number of states of every variable of the tree.
    static : sequence of bool, default=None
        For every factor, whether its values are the same in every call (no
        evidence in it). A message that depends on static factors only is
        computed once and reused.
    homes : sequence of int, default=None
        For every factor, the clique it goes to, which must contain its scope
        (ignored for an empty scope). ``None`` puts each factor in a smallest
        clique (fewest table entries) that contains its scope.

    Raises
    ------
    ValueError
        If no clique contains the scope of some factor, or its home does not.

    Attributes
    ----------
    homes : list of int or None
        The clique of every factor (``None`` for a constant).

    Notes
    -----
    Arrays returned by the methods may share memory with the messages the plan
    keeps (those of static factors): treat them as read-only.
    """

    def __init__(
        self,
        tree: JunctionTree,
        scopes: Sequence[Sequence[Node]],
        cardinalities: Mapping[Node, int],
        static: Sequence[bool] | None = None,
        homes: Sequence[int] | None = None,
    ) -> None:
        self.tree = tree
        self.scopes = [tuple(s) for s in scopes]
        self.cardinalities = {v: int(cardinalities[v]) for v in tree.variables}
        for scope in self.scopes:
            for v in scope:
                if v not in self.cardinalities:
                    raise ValueError(
                        f"a factor is over variable {v!r}, which is in no clique"
                    )
        layouts = tree._layout
        card = self.cardinalities.__getitem__
        self._cards = [tuple(map(card, lay)) for lay in layouts]
        n_cliques = len(layouts)
        static = [False] * len(self.scopes) if static is None else list(static)
        if len(static) != len(self.scopes):
            raise ValueError(
                f"static has {len(static)} entries for {len(scopes)} scopes"
            )

        # Factor -> clique: the smallest clique (fewest table entries) holding it.
        size = [math.prod(c) for c in self._cards] if homes is None else []
        self._assigned: list[list[int]] = [[] for _ in range(n_cliques)]
        self._constants: list[int] = []
        self.homes: list[int | None] = [None] * len(self.scopes)
        clique_static = [True] * n_cliques
        for f, scope in enumerate(self.scopes):
            if not scope:
                self._constants.append(f)
                continue
            if homes is not None:
                c = int(homes[f])
                if not tree.cliques[c].issuperset(scope):
                    raise ValueError(
                        f"factor {f} over {scope!r} is sent to clique {c}, which "
                        "does not contain its scope"
                    )
            else:
                holders = [
                    c
                    for c in tree._holders.get(scope[0], ())
                    if tree.cliques[c].issuperset(scope)
                ]
                if not holders:
                    raise ValueError(
                        f"no clique contains the scope {scope!r} of factor {f}: "
                        "the tree must be built from a graph in which its "
                        "variables are joined"
                    )
                c = min(holders, key=lambda h: (size[h], h))
            self.homes[f] = c
            self._assigned[c].append(f)
            clique_static[c] = clique_static[c] and static[f]
        self._assigned = [tuple(fs) for fs in self._assigned]

        # How factors are laid out in their cliques, message layouts and static
        # flags of directed edges: made when first used.
        self._clique_static = clique_static
        self._placed: dict[int, tuple] = {}
        self._edge: dict[tuple[int, int], _EdgeInfo] = {}
        self._static_edge: dict[tuple[int, int], bool] = {}
        self._cache: dict = {}
        self._schedules: dict = {}
        self._zeros: dict = {}

    def _place(self, c: int) -> tuple[tuple[int, tuple | None, tuple], ...]:
        """(factor, transposition into the clique's order, shape) per factor of c."""
        layout = self.tree._layout[c]
        out = []
        for f in self._assigned[c]:
            scope = self.scopes[f]
            perm = tuple(scope.index(v) for v in layout if v in scope)
            perm = (
                None
                if perm == tuple(range(len(scope)))
                else (0, *(1 + p for p in perm))
            )
            shape = tuple(self.cardinalities[v] if v in scope else 1 for v in layout)
            out.append((f, perm, shape))
        return tuple(out)

    def _info(self, c: int, d: int) -> _EdgeInfo:
        info = self._edge.get((c, d))
        if info is None:
            layouts = self.tree._layout
            key = (layouts[c], layouts[d], self._cards[c])
            shared = self.tree._edge_infos
            info = shared.get(key)
            if info is None:
                info = shared[key] = _EdgeInfo(
                    layouts[c], layouts[d], self.cardinalities
                )
            self._edge[(c, d)] = info
        return info

    def _static(self, c: int, d: int) -> bool:
        """Whether the message c -> d depends on static factors only."""
        flag = self._static_edge.get((c, d))
        if flag is None:
            flag = self._clique_static[c] and all(
                self._static(k, c) for k in self.tree._neighbours[c] if k != d
            )
            self._static_edge[(c, d)] = flag
        return flag

    def _schedule(self, root: int | None) -> tuple[tuple, tuple]:
        """(clique, parent) pairs, parents first, and the root of each component."""
        hit = self._schedules.get(root)
        if hit is not None:
            return hit
        order: list[tuple[int, int | None]] = []
        roots = []
        for component in self.tree._components:
            r = root if root is not None and root in component else component[0]
            roots.append(r)
            order.append((r, None))
            head = len(order) - 1
            while head < len(order):
                c, parent = order[head]
                head += 1
                order.extend((nb, c) for nb in self.tree._neighbours[c] if nb != parent)
        hit = self._schedules[root] = (tuple(order), tuple(roots))
        return hit

    # -- running ------------------------------------------------------------
    def _batch_size(self, arrays: Sequence[np.ndarray], n: int | None) -> int:
        if len(arrays) != len(self.scopes):
            raise ValueError(
                f"expected {len(self.scopes)} arrays (one per scope), got {len(arrays)}"
            )
        sizes = {a.shape[0] for a in arrays} - {1}
        if n is not None:
            sizes.add(int(n))
        if len(sizes) > 1:
            raise ValueError(f"the arrays disagree on the batch size: {sorted(sizes)}")
        return sizes.pop() if sizes else 1

    def _potential(self, c: int, arrays, memo: dict) -> np.ndarray:
        psi = memo.get(c)
        if psi is None:
            placed = self._placed.get(c)
            if placed is None:
                placed = self._placed[c] = self._place(c)
            for f, perm, shape in placed:
                a = arrays[f]
                if perm is not None:
                    a = a.transpose(perm)
                a = a.reshape((a.shape[0], *shape))
                psi = a if psi is None else psi + a
            if psi is None or psi.shape[1:] != self._cards[c]:
                zeros = self._zeros.get(c)
                if zeros is None:
                    zeros = self._zeros[c] = np.zeros((1, *self._cards[c]))
                psi = zeros if psi is None else zeros + psi
            memo[c] = psi
        return psi

    def potential(self, c: int, arrays: Sequence[np.ndarray]) -> np.ndarray:
        """The product of the factors that go to clique ``c`` (a sum of logs).

        Parameters
        ----------
        c : int
            A clique.
        arrays : sequence of ndarray
            As :meth:`collect`.

        Returns
        -------
        ndarray of shape (1 or n, *cards of clique c)
            In the layout of ``tree.cliques[c]``; zeros for a clique without
            factors.
        """
        return self._potential(c, arrays, {})

    def _send(self, c, d, arrays, memo, inbox, semiring, argmax=None) -> np.ndarray:
        static = self._static(c, d)
        key = (c, d, semiring, argmax is not None)
        if static:
            hit = self._cache.get(key)
            if hit is not None:
                if argmax is not None:
                    argmax[c] = hit[1]
                return hit[0]
        belief = self._potential(c, arrays, memo)
        for k in self.tree._neighbours[c]:
            if k != d:
                incoming = inbox.get((k, c))  # absent: known to be one
                if incoming is not None:
                    belief = belief + incoming
        info = self._info(c, d)
        arg = None
        if argmax is not None:
            sep = math.prod(info.sep_cards_c)
            b = belief.transpose(info.sep_first).reshape(
                belief.shape[0], sep, math.prod(belief.shape[1:]) // sep
            )
            arg = b.argmax(axis=2)
            out = np.take_along_axis(b, arg[:, :, None], axis=2)
            out = out.reshape((b.shape[0], *info.sep_cards_c))
            argmax[c] = arg
        elif info.elim_axes:
            out = _reduce(semiring, belief, info.elim_axes)
        else:
            out = belief
        if info.perm is not None:
            out = out.transpose(info.perm)
        out = out.reshape((out.shape[0], *info.shape_in_d))
        if static:
            self._cache[key] = (out, arg)
        return out

    def _collect(self, arrays, semiring, root, argmax=None):
        memo: dict = {}
        inbox: dict = {}
        order, roots = self._schedule(root)
        for c, parent in reversed(order):
            if parent is not None:
                inbox[(c, parent)] = self._send(
                    c, parent, arrays, memo, inbox, semiring, argmax
                )
        root_beliefs = {}
        for r in roots:
            belief = self._potential(r, arrays, memo)
            for k in self.tree._neighbours[r]:
                belief = belief + inbox[(k, r)]
            root_beliefs[r] = belief
        return memo, inbox, order, root_beliefs

    def message(
        self,
        c: int,
        d: int,
        arrays: Sequence[np.ndarray],
        semiring: Semiring = SUM_PRODUCT,
        ones: Callable[[int, int], bool] | None = None,
    ) -> np.ndarray:
        """The message from clique ``c`` to its neighbour ``d``.

        It combines the factors of every clique on ``c``'s side of the edge
        and eliminates all of their variables but the separator; a static
        message is computed once and kept.

        Parameters
        ----------
        c, d : int
            Two neighbouring cliques.
        arrays : sequence of ndarray
            As :meth:`collect`.
        semiring : Semiring, default=SUM_PRODUCT
        ones : callable, default=None
            ``ones(k, x)`` is true when the message from ``k`` to ``x`` is known
            to be one everywhere (zero in log space) for ``semiring``, such as
            the sum-product message of a part of a Bayesian network that holds
            the conditional distributions of its own variables only. Such
            messages on ``c``'s side are neither computed nor combined.

        Returns
        -------
        ndarray of shape (1 or n, ...)
            In the layout of clique ``d``, with an axis of length 1 for every
            variable of ``d`` outside the separator.
        """
        if d not in self.tree._neighbours[c]:
            raise ValueError(f"cliques {c} and {d} are not neighbours")
        if self._static(c, d):
            hit = self._cache.get((c, d, semiring, False))
            if hit is not None:
                return hit[0]
        order = [(c, d)]
        head = 0
        while head < len(order):
            x, parent = order[head]
            head += 1
            order.extend(
                (nb, x)
                for nb in self.tree._neighbours[x]
                if nb != parent and not (ones is not None and ones(nb, x))
            )
        memo: dict = {}
        inbox: dict = {}
        for x, parent in reversed(order):
            inbox[(x, parent)] = self._send(x, parent, arrays, memo, inbox, semiring)
        return inbox[(c, d)]

    def _log_evidence(self, root_beliefs, semiring, arrays, n) -> np.ndarray:
        total = np.zeros(n)
        for belief in root_beliefs.values():
            flat = _rows(belief)
            total = total + _reduce(semiring, flat, (1,))
        for f in self._constants:
            total = total + arrays[f].reshape(-1)
        return total

    def collect(
        self,
        arrays: Sequence[np.ndarray],
        semiring: Semiring = SUM_PRODUCT,
        root: int | None = None,
        n: int | None = None,
    ) -> tuple[np.ndarray | None, np.ndarray]:
        """One pass from the leaves to the roots.

        Parameters
        ----------
        arrays : sequence of ndarray
            The log-values of every factor, shape ``(1 or n, *cards)`` with the
            axes in the order of its scope.
        semiring : Semiring, default=SUM_PRODUCT
        root : int, default=None
            The clique to collect into; its component's messages all flow to
            it. Other components (and ``root=None``) use their first clique.
        n : int, default=None
            Number of rows when no array has more than one.

        Returns
        -------
        belief : ndarray of shape (1 or n, *cards of the root clique) or None
            The root's belief, in the layout of ``tree.cliques[root]``
            (``None`` when ``root`` is None).
        log_evidence : ndarray of shape (n,)
            The log of every row's normaliser (sum-product; ``log P(evidence)``
            for CPTs reduced by evidence) or of its largest term (max-product),
            over all components and constants.
        """
        n = self._batch_size(arrays, n)
        _, _, _, root_beliefs = self._collect(arrays, semiring, root)
        log_z = self._log_evidence(root_beliefs, semiring, arrays, n)
        return (None if root is None else root_beliefs[root]), log_z

    def calibrate(
        self,
        arrays: Sequence[np.ndarray],
        semiring: Semiring = SUM_PRODUCT,
        n: int | None = None,
    ) -> tuple[list[np.ndarray], np.ndarray]:
        """Two passes: the belief of every clique and the log-evidence.

        Parameters are those of :meth:`collect`. Returns the list of clique
        beliefs (each of shape ``(1 or n, *cards)`` in its clique's layout)
        and the log-evidence of shape ``(n,)``.
        """
        n = self._batch_size(arrays, n)
        memo, inbox, order, root_beliefs = self._collect(arrays, semiring, None)
        for c, parent in order:
            if parent is not None:
                inbox[(parent, c)] = self._send(
                    parent, c, arrays, memo, inbox, semiring
                )
        beliefs = []
        for c in range(len(self._cards)):
            if c in root_beliefs:
                beliefs.append(root_beliefs[c])
                continue
            belief = self._potential(c, arrays, memo)
            for k in self.tree._neighbours[c]:
                belief = belief + inbox[(k, c)]
            beliefs.append(belief)
        return beliefs, self._log_evidence(root_beliefs, semiring, arrays, n)

    def max_product(
        self, arrays: Sequence[np.ndarray], n: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The most probable joint assignment, by max-product and traceback.

        Parameters are those of :meth:`collect`. Returns ``assignment`` of
        shape ``(n, n_variables)`` (columns in the order of
        ``tree.variables``) and ``log_score`` of shape ``(n,)``. Ties go to the
        lowest state index (of the joint index of a clique's eliminated
        variables).
        """
        n = self._batch_size(arrays, n)
        argmax: dict = {}
        _, _, order, root_beliefs = self._collect(arrays, MAX_PRODUCT, None, argmax)
        column = {v: i for i, v in enumerate(self.tree.variables)}
        assignment = np.zeros((n, len(column)), dtype=np.intp)
        rows = np.arange(n)
        for r, belief in root_beliefs.items():
            best = _rows(belief).argmax(axis=1)
            states = np.unravel_index(best, self._cards[r])
            for v, s in zip(self.tree._layout[r], states):
                assignment[:, column[v]] = s
        for c, parent in order:
            if parent is None:
                continue
            info = self._info(c, parent)
            if not info.elim_vars:
                continue
            if info.sep_vars_c:
                sep = np.ravel_multi_index(
                    tuple(assignment[:, column[v]] for v in info.sep_vars_c),
                    info.sep_cards_c,
                )
            else:
                sep = np.zeros(n, dtype=np.intp)
            table = argmax[c]
            best = table[rows if table.shape[0] == n else 0, sep]
            states = np.unravel_index(best, info.elim_cards)
            for v, s in zip(info.elim_vars, states):
                assignment[:, column[v]] = s
        log_score = self._log_evidence(root_beliefs, MAX_PRODUCT, arrays, n)
        return assignment, log_score

    def posterior(
        self,
        arrays: Sequence[np.ndarray],
        variables: Sequence[Node],
        root: int,
        n: int | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The normalised joint marginal of variables that share a clique.

        One sum-product pass into ``root``, then the root's belief summed down
        to ``variables``.

        Parameters
        ----------
        arrays : sequence of ndarray
            As :meth:`collect`.
        variables : sequence of hashable
            Variables of clique ``root``: the axes of the result, in this order.
        root : int
            The clique to collect into.
        n : int, default=None
            Number of rows when no array has more than one.

        Returns
        -------
        log_posterior : ndarray of shape (1 or n, *cards of variables)
            Every row sums to one in probability (a row of zero mass stays
            ``-inf``).
        log_evidence : ndarray of shape (n,)
            As :meth:`collect`.
        """
        n = self._batch_size(arrays, n)
        _, _, _, root_beliefs = self._collect(arrays, SUM_PRODUCT, root)
        marginal = self._sum_down(root_beliefs.pop(root), root, variables)
        flat = _rows(marginal)
        norm = _reduce(SUM_PRODUCT, flat, (1,))
        log_z = self._log_evidence(root_beliefs, SUM_PRODUCT, arrays, n) + norm
        norm = np.where(np.isfinite(norm), norm, 0.0)  # no mass: stays -inf
        return (flat - norm[:, None]).reshape(marginal.shape), log_z

    def _sum_down(self, belief: np.ndarray, clique: int, variables) -> np.ndarray:
        """A clique belief summed down to ``variables``, in that order."""
        layout = self.tree._layout[clique]
        variables = tuple(variables)
        others = tuple(1 + i for i, v in enumerate(layout) if v not in variables)
        out = _reduce(SUM_PRODUCT, belief, others) if others else belief
        kept = [v for v in layout if v in variables]
        perm = [kept.index(v) for v in variables]
        if perm != list(range(len(perm))):
            out = out.transpose((0, *(1 + p for p in perm)))
        return out

    def variable_marginals(self, beliefs, clique_of: Mapping, variables) -> dict:
        """The normalised log marginal of each of ``variables`` (one each,
        from the clique ``clique_of[v]``), as :meth:`normalized_marginal`
        gives it, but each clique's belief exponentiated once for all its
        variables (shifted by its maximum per row) and summed down in
        probability: one exponential per clique instead of a ``logsumexp``
        per variable."""
        by_clique: dict = {}
        for v in variables:
            by_clique.setdefault(clique_of[v], []).append(v)
        out = {}
        with np.errstate(divide="ignore", invalid="ignore"):
            for c, group in by_clique.items():
                belief = beliefs[c]
                layout = self.tree._layout[c]
                axes = tuple(range(1, belief.ndim))
                top = belief.max(axis=axes, keepdims=True)
                top = np.where(np.isfinite(top), top, 0.0)
                probs = np.exp(belief - top)
                for v in group:
                    keep = 1 + layout.index(v)
                    m = probs.sum(axis=tuple(a for a in axes if a != keep))
                    total = m.sum(axis=1, keepdims=True)
                    # No mass (total 0): the row stays -inf, never NaN.
                    out[v] = np.where(total > 0, np.log(m) - np.log(total), -np.inf)
        return out

    def normalized_marginal(
        self, belief: np.ndarray, clique: int, variables: Sequence[Node]
    ) -> np.ndarray:
        """Sum a clique belief down to ``variables`` (in that order) and normalise.

        Returns an array of shape ``(1 or n, *cards of variables)`` whose every
        row sums to one in probability (a row of zero mass stays ``-inf``).
        """
        out = self._sum_down(belief, clique, variables)
        flat = _rows(out)
        norm = _reduce(SUM_PRODUCT, flat, (1,))
        norm = np.where(np.isfinite(norm), norm, 0.0)  # no mass: stays -inf
        return (flat - norm[:, None]).reshape(out.shape)
