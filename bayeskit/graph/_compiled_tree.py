"""A calibration plan compiled to index arrays, run by one numba kernel.

Private to :mod:`bayeskit.graph.network`. :class:`CompiledCalibration` takes
a :class:`~bayeskit.graph.calibration.CalibrationPlan` and the tables of its
factors, and lays the whole two-pass schedule out as flat arrays: every
factor's table (every slice of it, one per joint state of the evidence that
reduces it) in one array, for every clique a map from its entries to each of
its factors' entries and to each of its separators' entries, and the order
of the messages. Evidence enters by index (the slice of each reduced factor),
so that one kernel call (:func:`_calibrate_rows`) calibrates the tree for
every row and writes the normalised marginal of every variable asked for,
with no Python between the messages: where the numpy plan pays some tens of
microseconds of interpreter time per message, which is most of a one-row
query on a small network, the kernel pays nanoseconds per table entry.

The messages are those of the plan, Shafer-Shenoy in log space (Shafer and
Shenoy 1990; Koller and Friedman 2009, section 10.2): the message from
clique ``c`` to ``d`` is the log-sum-exp, over the entries of ``c`` that
share a separator state, of ``c``'s potential plus the messages into ``c``
from its other neighbours, shifted by its maximum (``-inf`` where every term
is ``-inf``); no message is divided out. A variable's marginal is its
clique's belief exponentiated once (shifted by its maximum) and summed by
state, as :meth:`CalibrationPlan.variable_marginals` does.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._jit import njit, numpy_first, run_numpy

__all__ = ["CompiledCalibration", "for_query", "marginal_table", "state_columns"]


@njit(nogil=True, inline="always")
def _belief(
    c, skip, pot, pot_off, size, inc_ptr, inc_map_off, inc_msg_off, maps, msg, work
):
    """Clique ``c``'s log belief into ``work``: its potential plus the messages
    into it over every separator but the incidence ``skip`` (-1: none, the
    belief; an incidence, what ``c`` sends over it). Returns its size."""
    base = pot_off[c]
    s = size[c]
    for x in range(s):
        work[x] = pot[base + x]
    for j in range(inc_ptr[c], inc_ptr[c + 1]):
        if j == skip:
            continue
        m0 = inc_map_off[j]
        g0 = inc_msg_off[j]
        for x in range(s):
            work[x] += msg[g0 + maps[m0 + x]]
    return s


@njit(nogil=True, inline="always")
def _peak(work, s):
    """The largest of ``work[:s]`` (``-inf`` when all are)."""
    top = -np.inf
    for x in range(s):
        if work[x] > top:
            top = work[x]
    return top


@njit(nogil=True)
def _calibrate_rows(
    tab,  # float64 (all factor tables, every slice)
    tab_off,  # int64 (n_factors,): where each factor's table starts
    tab_size,  # int64 (n_factors,): entries of one slice of it
    slices,  # int64 (n, n_factors): each row's slice of each factor
    size,  # int64 (n_cliques,): entries of each clique
    pot_off,  # int64 (n_cliques + 1,): where each clique's potential starts
    fac_ptr,  # int64 (n_cliques + 1,): the clique's factors, CSR over fac_*
    fac_id,  # int64: a factor of the clique
    fac_map_off,  # int64: where its map from clique entries starts in maps
    inc_ptr,  # int64 (n_cliques + 1,): the clique's separators, CSR over inc_*
    inc_map_off,  # int64: where the map of clique entries to separator entries starts
    inc_msg_off,  # int64: where the message into the clique over it starts in msg
    inc_rev,  # int64: the same separator seen from the neighbour
    inc_sep,  # int64: entries of the separator
    maps,  # int32: every map
    sched_clique,  # int64: the clique sending each message, in order
    sched_inc,  # int64: the separator it is sent over (an incidence of that clique)
    n_msg,  # int64: total entries of all messages
    roots,  # int64: one clique per component of the tree
    constants,  # int64: the factors of no variable
    marg_clique,  # int64 (n_marg,): the clique each marginal is read from
    marg_stride,  # int64: the variable's stride in that clique's entries
    marg_card,  # int64: its number of states
    marg_out,  # int64: its first column in out
    out,  # float64 (n, n_columns): written at the marginals' columns
    log_z,  # float64 (n,): written
):
    n = slices.shape[0]
    n_cliques = size.shape[0]
    max_size = 1
    for c in range(n_cliques):
        max_size = max(max_size, size[c])
    pot = np.empty(pot_off[n_cliques])
    msg = np.empty(max(n_msg, 1))
    work = np.empty(max_size)
    acc = np.empty(max_size)
    for r in range(n):
        # The potentials: the sum of the clique's factors, each at this row's slice.
        for c in range(n_cliques):
            base = pot_off[c]
            s = size[c]
            for x in range(s):
                pot[base + x] = 0.0
            for k in range(fac_ptr[c], fac_ptr[c + 1]):
                f = fac_id[k]
                start = tab_off[f] + slices[r, f] * tab_size[f]
                m0 = fac_map_off[k]
                for x in range(s):
                    pot[base + x] += tab[start + maps[m0 + x]]
        # The messages, collect then distribute.
        for t in range(sched_clique.shape[0]):
            c = sched_clique[t]
            i_out = sched_inc[t]
            s = _belief(
                c,
                i_out,
                pot,
                pot_off,
                size,
                inc_ptr,
                inc_map_off,
                inc_msg_off,
                maps,
                msg,
                work,
            )
            dest = inc_msg_off[inc_rev[i_out]]
            sep = inc_sep[i_out]
            m0 = inc_map_off[i_out]
            for y in range(sep):
                msg[dest + y] = -np.inf
                acc[y] = 0.0
            for x in range(s):
                y = maps[m0 + x]
                if work[x] > msg[dest + y]:
                    msg[dest + y] = work[x]
            for x in range(s):
                y = maps[m0 + x]
                top = msg[dest + y]
                if top > -np.inf:
                    acc[y] += np.exp(work[x] - top)
            for y in range(sep):
                if msg[dest + y] > -np.inf:
                    msg[dest + y] += np.log(acc[y])
        # The log-evidence: every component's root belief, and the constants.
        total = 0.0
        for q in range(roots.shape[0]):
            c = roots[q]
            s = _belief(
                c,
                -1,
                pot,
                pot_off,
                size,
                inc_ptr,
                inc_map_off,
                inc_msg_off,
                maps,
                msg,
                work,
            )
            top = _peak(work, s)
            if top == -np.inf:
                total = -np.inf
                continue
            z = 0.0
            for x in range(s):
                z += np.exp(work[x] - top)
            total += top + np.log(z)
        for q in range(constants.shape[0]):
            f = constants[q]
            total += tab[tab_off[f] + slices[r, f] * tab_size[f]]
        log_z[r] = total
        # The marginals: each clique's belief exponentiated once.
        last = -1
        for q in range(marg_clique.shape[0]):
            c = marg_clique[q]
            s = size[c]
            if c != last:
                _belief(
                    c,
                    -1,
                    pot,
                    pot_off,
                    size,
                    inc_ptr,
                    inc_map_off,
                    inc_msg_off,
                    maps,
                    msg,
                    work,
                )
                top = _peak(work, s)
                if top == -np.inf:
                    top = 0.0
                for x in range(s):
                    work[x] = np.exp(work[x] - top)
                last = c
            stride = marg_stride[q]
            k = marg_card[q]
            o = marg_out[q]
            for y in range(k):
                out[r, o + y] = 0.0
            for x in range(s):
                out[r, o + (x // stride) % k] += work[x]
            z = 0.0
            for y in range(k):
                z += out[r, o + y]
            if z > 0.0:
                for y in range(k):
                    out[r, o + y] /= z


def _entry_map(layout: tuple, cards, scope: tuple) -> np.ndarray:
    """For every entry of a table over ``layout`` (C order), the entry of a
    table over ``scope`` (a subset of it) at the same states (read-only)."""
    shape = tuple(cards[v] for v in layout)
    if math.prod(shape) <= MAP_KEPT_ENTRIES:
        return _kept_map(layout, shape, scope)
    return _build_map(layout, shape, scope)


def _build_map(layout: tuple, shape: tuple, scope: tuple) -> np.ndarray:
    index = np.zeros(shape, dtype=np.int64)
    stride = 1
    for u in reversed(scope):
        axis = layout.index(u)
        step = np.arange(shape[axis], dtype=np.int64) * stride
        index += step.reshape([-1 if a == axis else 1 for a in range(len(shape))])
        stride *= shape[axis]
    out = index.reshape(-1).astype(np.int32)
    out.flags.writeable = False
    return out


#: The maps of small cliques are kept (at most 1024 of at most 1024 entries,
#: 4 MB): the patterns of evidence of one network compile the same cliques
#: and separators again (about 80 maps of 10 us each in a pattern of ALARM).
MAP_KEPT_ENTRIES = 1024
_kept_map = functools.lru_cache(maxsize=1024)(_build_map)


class CompiledCalibration:
    """A plan and its factors' tables as the flat arrays of
    :func:`_calibrate_rows`, with the marginals of some variables to read.

    Parameters
    ----------
    plan : CalibrationPlan
    tables : sequence of ndarray
        Every factor's log table, shape ``(n_slices, *cards of its scope)``:
        each row of evidence picks one slice of each (``slices`` of
        :meth:`run`).
    clique_of : mapping of node -> int
        The variables whose marginals are asked for, each with a clique of
        the plan's tree holding it.
    columns : mapping of node -> int
        Each such variable's first column in the output.
    """

    def __init__(self, plan, tables, clique_of, columns) -> None:
        tree = plan.tree
        layouts = tree._layout
        cards = plan.cardinalities
        n_cliques = len(layouts)
        sizes = [math.prod(cards[v] for v in lay) for lay in layouts]
        flat = [np.ascontiguousarray(t, dtype=float).reshape(-1) for t in tables]
        self.tab = np.concatenate(flat) if flat else np.zeros(0)
        self.tab_off = np.cumsum([0] + [len(t) for t in flat[:-1]], dtype=np.int64)
        self.tab_size = np.array(
            [math.prod(t.shape[1:]) for t in tables], dtype=np.int64
        )
        maps: list[np.ndarray] = []
        used = [0]

        def add_map(m: np.ndarray) -> int:
            maps.append(m)
            used[0] += len(m)
            return used[0] - len(m)

        fac_ptr, fac_id, fac_map_off = [0], [], []
        by_clique: list[list[int]] = [[] for _ in range(n_cliques)]
        for f, home in enumerate(plan.homes):
            if home is not None:
                by_clique[home].append(f)
        for c in range(n_cliques):
            for f in by_clique[c]:
                fac_id.append(f)
                entries = _entry_map(layouts[c], cards, plan.scopes[f])
                fac_map_off.append(add_map(entries))
            fac_ptr.append(len(fac_id))
        # Separators: one incidence per (clique, neighbour), with the message
        # into the clique; both sides map to the separator in one order.
        inc_ptr, inc_of = [0], {}
        inc_map_off, inc_msg_off, inc_sep, n_msg = [], [], [], 0
        for c in range(n_cliques):
            for d in tree._neighbours[c]:
                a = min(c, d)
                sep = tuple(v for v in layouts[a] if v in layouts[max(c, d)])
                inc_of[(c, d)] = len(inc_map_off)
                inc_map_off.append(add_map(_entry_map(layouts[c], cards, sep)))
                k = math.prod(cards[v] for v in sep)
                inc_sep.append(k)
                inc_msg_off.append(n_msg)
                n_msg += k
            inc_ptr.append(len(inc_map_off))
        inc_rev = [0] * len(inc_map_off)
        for (c, d), i in inc_of.items():
            inc_rev[i] = inc_of[(d, c)]
        order, roots = plan._schedule(None)
        schedule = [(c, p) for c, p in reversed(order) if p is not None]
        schedule += [(p, c) for c, p in order if p is not None]
        marg = sorted(clique_of.items(), key=lambda item: item[1])
        stride = []
        for v, c in marg:
            lay = layouts[c]
            stride.append(math.prod(cards[u] for u in lay[lay.index(v) + 1 :]))
        i64 = np.int64
        self.size = np.array(sizes, dtype=i64)
        self.pot_off = np.cumsum([0, *sizes], dtype=i64)
        self.fac_ptr = np.array(fac_ptr, dtype=i64)
        self.fac_id = np.array(fac_id, dtype=i64)
        self.fac_map_off = np.array(fac_map_off, dtype=i64)
        self.inc_ptr = np.array(inc_ptr, dtype=i64)
        self.inc_map_off = np.array(inc_map_off, dtype=i64)
        self.inc_msg_off = np.array(inc_msg_off, dtype=i64)
        self.inc_rev = np.array(inc_rev, dtype=i64)
        self.inc_sep = np.array(inc_sep, dtype=i64)
        self.maps = np.concatenate(maps) if maps else np.zeros(0, dtype=np.int32)
        self.sched_clique = np.array([c for c, _ in schedule], dtype=i64)
        self.sched_inc = np.array([inc_of[e] for e in schedule], dtype=i64)
        self.n_msg = n_msg
        self.roots = np.array(roots, dtype=i64)
        self.constants = np.array(
            [f for f, h in enumerate(plan.homes) if h is None], dtype=i64
        )
        self.marg_clique = np.array([c for _, c in marg], dtype=i64)
        self.marg_stride = np.array(stride, dtype=i64)
        self.marg_card = np.array([cards[v] for v, _ in marg], dtype=i64)
        self.marg_out = np.array([columns[v] for v, _ in marg], dtype=i64)

    def run(self, slices: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Calibrate for every row: the marginals written into ``out`` (shape
        ``(n, n_columns)``) at their columns; returns ``log P(evidence)`` of
        every row, shape ``(n,)`` (``-inf``: the row's marginals are
        meaningless)."""
        log_z = np.empty(slices.shape[0])
        _calibrate_rows(
            self.tab,
            self.tab_off,
            self.tab_size,
            slices,
            self.size,
            self.pot_off,
            self.fac_ptr,
            self.fac_id,
            self.fac_map_off,
            self.inc_ptr,
            self.inc_map_off,
            self.inc_msg_off,
            self.inc_rev,
            self.inc_sep,
            self.maps,
            self.sched_clique,
            self.sched_inc,
            self.n_msg,
            self.roots,
            self.constants,
            self.marg_clique,
            self.marg_stride,
            self.marg_card,
            self.marg_out,
            out,
            log_z,
        )
        return log_z


def state_columns(net) -> dict:
    """The first column of every variable of ``net`` in a table of the states
    of every variable, in network order (as :func:`marginal_table` writes)."""
    out, start = {}, 0
    for v in net.variables:
        out[v] = start
        start += net.cards[v]
    return out


def marginal_table(net, observed: tuple, values: np.ndarray):
    """The posterior marginal of every variable of ``net`` (a
    :class:`~bayeskit.graph.network.BayesNet`) in every row of evidence, as
    probabilities: shape ``(n, sum of the cardinalities)``, each variable's
    states in its columns (:func:`state_columns`), an observed variable's
    observed state 1; and ``log P(evidence)`` of every row.

    Calibrated by :func:`_calibrate_rows` on the plan of the pattern's
    :meth:`BayesNet.marginals` (the tree with the evidence entered), compiled
    once per pattern of observed variables and kept; while the kernel is not
    compiled (in this process or numba's disk cache) and for its first
    seconds of numpy work, by :meth:`BayesNet.marginals` itself (the same
    numbers up to rounding), so that a first query in a fresh environment
    compiles nothing.
    """
    key = (observed, "compiled")
    compiled = net._patterns.get(key)
    if compiled is None:
        if numpy_first(_calibrate_rows):
            return run_numpy(_calibrate_rows, _numpy_table, net, observed, values)
        pat = net._pattern(observed, (), "all")
        compiled = CompiledCalibration(
            pat.plan, pat.tables, pat.clique_of, state_columns(net)
        )
        compiled.lookups = list(pat.lookups)
        compiled.strides = pat.strides
        compiled.total = sum(net.cards.values())
        compiled.observed = _starts(net, observed)
        net._patterns[key] = compiled  # complete before another thread sees it
    n = values.shape[0]
    slices = np.zeros((n, len(compiled.tab_size)), dtype=np.int64)
    if compiled.lookups:
        slices[:, compiled.lookups] = values @ compiled.strides
    out = np.zeros((n, compiled.total))
    log_z = compiled.run(slices, out)
    if observed:
        out[np.arange(n)[:, None], compiled.observed + values] = 1.0
    return out, log_z


#: The most table entries of a pattern's tree for which one query's marginal
#: is read from the compiled calibration of every marginal: above it, the
#: numpy plan of the query alone (the part of the tree the target depends on,
#: the rest's messages kept) costs less (INSURANCE with a few observed
#: variables keeps a clique of 28,800 entries: 6 ms calibrated whole, 2.5 ms
#: pruned; ALARM's whole tree, about 1,000 entries, takes 0.1 ms).
QUERY_ENTRIES = 8192
#: Below it, what one query costs either way, in microseconds, as measured on
#: ASIA, CHILD and ALARM (160 patterns, one to three observed variables): the
#: kernel about ``KERNEL_CALL + KERNEL_ENTRY`` per entry of the whole tree,
#: the pruned numpy plan about ``PLAN_CLIQUE`` per clique it keeps (a target
#: whose evidence leaves one clique of ALARM: 25-34 us pruned, 43-57 us whole;
#: any pattern of ASIA: 13-15 us whole, 23-70 us pruned).
KERNEL_CALL, KERNEL_ENTRY, PLAN_CLIQUE = 12.0, 0.045, 22.0
#: What compiling a pattern's whole tree costs, in microseconds per clique of
#: the tree (its plan, then the kernel's index arrays): about 0.2 ms on ASIA,
#: 0.9 ms on ALARM.
COMPILE_CLIQUE = 30.0


def for_query(net, observed: tuple, target) -> bool:
    """Whether :func:`marginal_table` answers one query of ``target`` in
    ``net`` given ``observed``: the kernel is compiled, the pattern's tree is
    small, calibrating it whole costs less than the pruned plan of ``target``
    (which the first sighting built), and the pattern has been met often
    enough that what the kernel saved would have paid for compiling its
    tree: the rule of renting skis until their price is spent, which costs
    at most twice the better choice made knowing the future (compiled at a
    pattern's second sighting, a thousand queries of patterns met about
    three times each on a freshly read ALARM took 1.2-1.4 times as long as
    answering every one pruned)."""
    key = (observed, target, "kernel")
    found = net._patterns.get(key)
    if found is True or found is False:
        return found
    if numpy_first(_calibrate_rows):
        return False
    seen = (observed, "seen")
    met = net._patterns.get(seen, 0) + 1
    net._patterns[seen] = met
    if met == 1:
        return False
    if found is None:
        pruned = net._patterns.get((observed, (target,), "marginal"))
        if pruned is None:  # met before with another target: decided when
            return False  # this one's pruned plan, which it now builds, is known
        entries = _whole_entries(net, observed)
        cliques = len(pruned.plan._cards)
        saved = PLAN_CLIQUE * cliques - (KERNEL_CALL + KERNEL_ENTRY * entries)
        if entries > QUERY_ENTRIES or saved <= 0:
            net._patterns[key] = False
            return False
        tree, _ = net._network(())
        found = net._patterns[key] = (saved, COMPILE_CLIQUE * len(tree.layouts))
    saved, price = found
    if (observed, "compiled") in net._patterns or (met - 1) * saved >= price:
        net._patterns[key] = True
        return True
    return False


def _whole_entries(net, observed: tuple) -> int:
    """About the table entries of the whole tree with ``observed`` entered:
    the joint states of each clique's unobserved variables, counted without
    building the pattern's plan (which may merge some cliques)."""
    tree, _ = net._network(())
    cards, seen = net.cards, set(observed)
    return sum(
        math.prod(cards[v] for v in layout if v not in seen) for layout in tree.layouts
    )


def _starts(net, observed: tuple) -> np.ndarray:
    columns = state_columns(net)
    return np.array([columns[v] for v in observed], dtype=np.intp)


def _numpy_table(net, observed: tuple, values: np.ndarray):
    """:func:`marginal_table` by the numpy plan."""
    n = values.shape[0]
    columns = state_columns(net)
    post = net.marginals(observed, values)
    out = np.zeros((n, sum(net.cards.values())))
    for v, log_p in post.log_marginals.items():
        start = columns[v]
        out[:, start : start + net.cards[v]] = np.exp(log_p)
    if observed:
        out[np.arange(n)[:, None], _starts(net, observed) + values] = 1.0
    return out, np.broadcast_to(post.log_evidence, n)
