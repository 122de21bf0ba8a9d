"""Interventions on a Bayesian network: do-queries by graph surgery, backdoor
adjustment sets and average treatment effects (Pearl 2009, chapter 3).

Setting a variable ``X`` to ``x`` (``do(X = x)``) is answered on the
mutilated network: the edges into ``X`` cut, every other table kept. There
``X`` is a root, so observing it at ``x`` is the same as giving it a point
mass at ``x``, and ``P(y | do(x), e)`` is the mutilated network's
``P(y | x, e)`` (Pearl 2009, section 3.2.3, the truncated factorisation).
The mutilated structure is compiled once per set of intervened variables and
kept beside the tables (:attr:`bayeskit.graph.network.BayesNet.memo`), so
rows intervening at different values share it, and a refit drops it.

Since the network specifies every variable's table, latent ones included,
every do-query is answered from it; an adjustment set (what to adjust for to
estimate the effect from observed data) is looked for among the observed
variables only, and its absence is an error that says so.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping

import numpy as np

from ..graph import DAG
from ..graph.network import BayesNet
from ._data import evidence_codes, query_targets
from ._queries import posterior_series

__all__ = ["NetworkCausal", "do_codes", "intervened", "intervened_rows"]

# The most candidate sets adjustment_set tries before it settles for the
# treatment's parents (a valid set, though maybe not a smallest one).
_MAX_TRIES = 4096


def do_codes(est, do) -> dict:
    """``do`` checked: ``{variable: code}`` of every intervened variable."""
    if not isinstance(do, Mapping):
        raise TypeError(
            f"do must be a dict from variable to the state it is set to, got "
            f"{type(do).__name__}"
        )
    if not do:
        raise ValueError("do is empty: name at least one variable to set")
    return {v: int(c[0]) for v, c in evidence_codes(est, do).items()}


def intervened(est, variables):
    """A view of ``est`` whose structure is the mutilated network: the edges
    into ``variables`` cut (their tables uniform: they are always observed)."""
    engine = est._engine_
    key = ("do", frozenset(variables))
    cut = engine.memo.get(key)
    if cut is None:
        dag = engine.dag
        edges = [(u, w) for u, w in dag.edges if w not in key[1]]
        log_cpds = dict(engine.log_cpds)
        for v in key[1]:
            log_cpds[v] = np.full(engine.cards[v], -np.log(engine.cards[v]))
        graph = DAG(edges, nodes=list(dag.nodes))
        cut = engine.memo[key] = BayesNet(graph, engine.cards, log_cpds)
    view = copy.copy(est)
    view._engine_ = cut
    view.dag_ = cut.dag
    return view


def intervened_rows(est, codes: np.ndarray, do) -> tuple:
    """The view of :func:`intervened` and the codes with every row's
    intervened cells set to their ``do`` states (a given cell is replaced)."""
    set_to = do_codes(est, do)
    codes = codes.copy()
    for v, c in set_to.items():
        codes[:, est.variables_.index(v)] = c
    return intervened(est, set_to), codes


def do_series(est, targets: tuple, evidence, soft_evidence, do):
    """``P(targets | do, evidence)`` as :func:`posterior_series` gives it."""
    set_to = do_codes(est, do)
    fixed = [v for v in targets if v in set_to]
    if fixed:
        raise ValueError(
            f"variables {fixed!r} are queried and set by do: their distribution "
            "is a point mass at the state they are set to"
        )
    evidence = {} if evidence is None else evidence
    if not isinstance(evidence, Mapping):
        raise TypeError(
            f"evidence must be a dict from variable to state, got "
            f"{type(evidence).__name__}"
        )
    both = [v for v in evidence if v in set_to]
    if both:
        raise ValueError(
            f"variables {both!r} are both observed (evidence) and set (do): give "
            "each variable in one of them"
        )
    view = intervened(est, set_to)
    out = posterior_series(view, targets, {**evidence, **do}, soft_evidence)
    setting = ", ".join(f"{v}={s!r}" for v, s in do.items())
    given = f"do({setting})"
    if evidence or soft_evidence:
        given += ", evidence"
    out.name = f"P({', '.join(map(str, targets))} | {given})"
    return out


class NetworkCausal:
    """``adjustment_set`` and ``average_treatment_effect`` of a network."""

    def adjustment_set(self, treatment, outcome) -> list:
        """A smallest set of observed variables that satisfies the backdoor
        criterion for the effect of ``treatment`` on ``outcome``.

        A set ``Z`` satisfies it when no variable of ``Z`` descends from the
        treatment and ``Z`` blocks every path between the two that enters
        the treatment by an arrow (Pearl 2009, definition 3.3.1); then
        ``P(y | do(x)) = sum_z P(y | x, z) P(z)``, which data in which
        ``Z``, ``x`` and ``y`` are observed estimate. Latent variables are
        never in it.

        Parameters
        ----------
        treatment, outcome : hashable
            Two different variables.

        Returns
        -------
        list
            The variables of the set, in the order of ``variables_``; the
            smallest such set (the first found among those of equal size),
            or the treatment's parents when more than 4,096 candidate sets
            were tried.

        Raises
        ------
        ValueError
            When no set of observed variables satisfies the criterion: the
            outcome is a cause of the treatment (``do(treatment)`` leaves it
            unchanged), or the effect is confounded through latent variables
            only. A do-query (:meth:`query` with ``do``) still answers it
            from the network's tables; identifying it from observed data
            alone (the ID algorithm) is not implemented.
        """
        self._check_ready()
        x, y = query_targets(self, [treatment, outcome])
        dag = self.dag_
        if y in dag.ancestors(x):
            raise ValueError(
                f"outcome {y!r} is a cause of treatment {x!r}: do({x!r}) leaves "
                f"it unchanged, P({y} | do({x})) = P({y}), and no set of "
                "variables satisfies the backdoor criterion"
            )
        latent = set(getattr(self, "latent_", ()))
        below = dag.descendants(x) | {x}
        near = dag.ancestors(x) | dag.ancestors(y)
        candidates = [
            v
            for v in self.variables_
            if v not in below and v != y and v not in latent and v in near
        ]
        # The backdoor paths are those left when the treatment's out-edges go.
        back = DAG([e for e in dag.edges if e[0] != x], nodes=list(dag.nodes))
        tries = 0
        for size in range(len(candidates) + 1):
            for z in itertools.combinations(candidates, size):
                if back.is_dseparated(x, y, z):
                    return list(z)
                tries += 1
                if tries > _MAX_TRIES:
                    parents = list(dag.parents(x))
                    if not latent.intersection(parents):
                        return [v for v in self.variables_ if v in parents]
                    break
            if tries > _MAX_TRIES:
                break
        raise ValueError(
            f"no set of observed variables satisfies the backdoor criterion for "
            f"the effect of {x!r} on {y!r}: it is confounded through the latent "
            f"variables {sorted(latent, key=repr)!r}. query(..., do=...) still "
            "answers it from the network's tables (the latent variables' "
            "included); identification from observed data alone (the ID "
            "algorithm) is not implemented"
        )

    def average_treatment_effect(
        self, treatment, outcome, treated=None, control=None, *, outcome_state=None
    ) -> float:
        """``E[Y | do(X = treated)] - E[Y | do(X = control)]``, exactly.

        Both terms are do-queries (:meth:`query` with ``do``) on the network,
        so the effect needs no adjustment set and holds with latent
        variables too.

        Parameters
        ----------
        treatment, outcome : hashable
            Two different variables.
        treated, control : state label, default=None
            The two states of the treatment to compare; for a treatment of
            two states, by default its second state against its first.
        outcome_state : state label, default=None
            Compare ``P(outcome = outcome_state)`` (a risk difference)
            instead of the expectation, which needs states that are numbers.

        Returns
        -------
        float
        """
        self._check_ready()
        x, y = query_targets(self, [treatment, outcome])
        states = self.states_[x].tolist()
        if treated is None and control is None:
            if len(states) != 2:
                raise ValueError(
                    f"treatment {x!r} has {len(states)} states {states!r}: give "
                    "treated and control, the two states to compare"
                )
            control, treated = states
        elif treated is None or control is None:
            raise ValueError("give both treated and control, or neither")
        labels = self.states_[y]
        if outcome_state is None:
            if labels.dtype.kind not in "biuf":
                raise ValueError(
                    f"the states of outcome {y!r} are not numbers "
                    f"({labels.tolist()!r}): give outcome_state, the state "
                    "whose probability to compare"
                )
            weights = labels.astype(float)
        else:
            position = self._state_index_[y].get(outcome_state)
            if position is None:
                raise ValueError(
                    f"outcome_state {outcome_state!r} is not a state of {y!r}: "
                    f"its states are {labels.tolist()!r}"
                )
            weights = np.eye(len(labels))[position]
        means = [
            float(self.query(y, do={x: s}).to_numpy() @ weights)
            for s in (treated, control)
        ]
        return means[0] - means[1]
