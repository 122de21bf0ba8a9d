"""The queries of a Bayesian network, with labels: one row of evidence or many.

:class:`~bayeskit.BayesianNetwork`'s query methods read labels and return
labelled pandas objects; the structure they run on
(:class:`~bayeskit.graph.network.BayesNet`, the estimator's ``_engine_``)
knows codes. The functions here take the fitted estimator and state codes
(:func:`~bayeskit.network._data.query_codes`), call the structure,
and label what it returns. Rows of many are grouped by their pattern of
observed cells, and each group is propagated in one batched pass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from .._logmath import safe_log
from .._warnings import warn
from ..graph._compiled_tree import for_query, marginal_table, state_columns
from ..graph.network import BayesNet
from ._data import evidence_codes, query_targets
from ._fast import distinct_rows, frame_columns

__all__ = [
    "PosteriorSeries",
    "labelled_cpd",
    "log_likelihoods",
    "map_assignment",
    "most_probable",
    "posterior_frame",
    "posterior_series",
    "soft_messages",
]


class PosteriorSeries(pd.Series):
    """A posterior from :meth:`~bayeskit.BayesianNetwork.query`: a pandas
    Series, shown in a notebook as a table with named states.

    It is a ``pandas.Series`` in every respect (indexing, arithmetic,
    ``to_numpy``, ``isinstance(result, pd.Series)``); what is computed from
    it (a copy, a product, a slice) is a plain Series. Its only addition is
    ``_repr_html_``, which Jupyter calls: one column per queried variable
    holding its states, then the probability, one row per joint state, as
    pgmpy prints a ``DiscreteFactor``. ``to_frame()`` gives
    the same table as a DataFrame, and ``pd.Series(result)`` a plain Series
    (for ``pandas.testing.assert_series_equal``, which compares types).
    """

    @property
    def _constructor(self):
        return pd.Series

    def _repr_html_(self) -> str:
        from .._html import posterior_html

        return posterior_html(self)


# -- soft (virtual) evidence -----------------------------------------------------------
def soft_messages(est, soft_evidence, n_rows=None) -> dict:
    """``soft_evidence`` checked: ``{variable: log likelihood (rows, k)}``, with
    ``rows`` 1 (one vector) or ``n_rows`` (one per row, in a batch)."""
    if soft_evidence is None:
        return {}
    if not isinstance(soft_evidence, Mapping):
        raise TypeError(
            "soft_evidence must be a dict from variable to likelihoods over its "
            f"states, got {type(soft_evidence).__name__}"
        )
    out = {}
    for v, lik in soft_evidence.items():
        est._check_variable(v)
        k = len(est.states_[v])
        try:
            values = np.asarray(lik, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(
                f"soft_evidence[{v!r}] must be numbers, got {lik!r}"
            ) from None
        if values.ndim == 1:
            values = values[None, :]
        shapes = [(k,)] if n_rows is None else [(k,), (n_rows, k)]
        if (
            values.ndim != 2
            or values.shape[1] != k
            or (values.shape[0] != 1 and (n_rows is None or values.shape[0] != n_rows))
        ):
            raise ValueError(
                f"soft_evidence[{v!r}] has shape {np.shape(lik)}; expected "
                f"{' or '.join(map(str, shapes))}: a likelihood per state of {v!r}, "
                f"in the order of states_[{v!r}] {est.states_[v].tolist()!r}"
            )
        if not np.isfinite(values).all() or (values < 0).any():
            raise ValueError(f"soft_evidence[{v!r}] must be finite and >= 0")
        if not (values > 0).any(axis=1).all():
            raise ValueError(
                f"soft_evidence[{v!r}] is zero for every state: at least one state "
                "must have a positive likelihood"
            )
        out[v] = safe_log(values)
    return out


def _with_soft(log_joint, targets: tuple, extra: tuple, soft: dict, rows=None):
    """``log P(targets | hard evidence, soft evidence)`` from the joint
    posterior of ``targets + extra`` (axis 0 the rows), each soft variable's
    log likelihood added along its axis, ``extra`` summed out, normalised;
    also the log of the normaliser (``-inf``: the soft evidence has
    probability zero)."""
    scope = targets + extra
    out = np.array(log_joint, dtype=float)
    for v, log_lik in soft.items():
        if v not in scope:
            continue
        lik = log_lik if rows is None or log_lik.shape[0] == 1 else log_lik[rows]
        shape = [lik.shape[0]] + [1] * len(scope)
        shape[1 + scope.index(v)] = lik.shape[1]
        with np.errstate(invalid="ignore"):
            out = out + lik.reshape(shape)
    if extra:
        out = logsumexp(out, axis=tuple(range(1 + len(targets), 1 + len(scope))))
    axes = tuple(range(1, 1 + len(targets)))
    log_z = logsumexp(out, axis=axes, keepdims=True)
    with np.errstate(invalid="ignore"):
        normalised = np.where(np.isneginf(log_z), -np.inf, out - log_z)
    return normalised, log_z.reshape(-1)


# -- one row of evidence -------------------------------------------------------------
def _posterior(est, targets: tuple, codes: dict, entered=None):
    """The joint posterior of ``targets`` given one row of evidence codes
    (``entered``: the structure's ``evidence(codes)``, if computed already)."""
    both = [v for v in targets if v in codes]
    if both:
        raise ValueError(f"variables {both!r} are both queried and observed")
    net = est._engine_
    post = net.posterior(*(entered or net.evidence(codes)), targets)
    if np.isneginf(post.log_evidence[0]):
        raise ValueError("the evidence has probability zero under the network")
    return post


def posterior_series(
    est, targets: tuple, evidence, soft_evidence=None
) -> PosteriorSeries:
    """``P(targets | evidence)`` as a Series over the targets' states, with
    the likelihoods of ``soft_evidence`` as virtual evidence."""
    codes = evidence_codes(est, evidence)
    soft = soft_messages(est, soft_evidence)
    both = [v for v in soft if v in codes]
    if both:
        raise ValueError(
            f"variables {both!r} have both evidence and soft_evidence: give one"
        )
    entered = None
    if len(targets) == 1 and not soft and targets[0] not in codes:
        entered = est._engine_.evidence(codes)
        probs = _one_marginal(est, targets[0], *entered)
        if probs is not None:
            return _labelled(est, targets, probs)
    extra = tuple(v for v in soft if v not in targets)
    post = _posterior(est, targets + extra, codes, entered)
    log_post = post.log_marginals[targets + extra]
    if soft:
        log_post, log_z = _with_soft(log_post, targets, extra, soft)
        if np.isneginf(log_z[0]):
            raise ValueError(
                "the evidence and soft_evidence have probability zero under the network"
            )
    return _labelled(est, targets, np.exp(log_post[0]).ravel())


def _one_marginal(est, target, observed: tuple, values) -> np.ndarray | None:
    """``P(target | evidence)`` from the compiled calibration of every
    marginal (:func:`~bayeskit.graph._compiled_tree.marginal_table`); None
    when the kernel is not compiled yet or the tree is large
    (:func:`~bayeskit.graph._compiled_tree.for_query`), or when the evidence
    has probability zero, for the pruned path to answer from the evidence
    ``target`` is not d-separated from, or to raise."""
    net = est._engine_
    if not for_query(net, observed, target):
        return None
    table, log_z = marginal_table(net, observed, values)
    if np.isneginf(log_z[0]):
        return None
    start = state_columns(net)[target]
    return table[0, start : start + net.cards[target]]


def _labelled(est, targets: tuple, probs: np.ndarray) -> PosteriorSeries:
    name = f"P({', '.join(map(str, targets))} | evidence)"
    if len(targets) == 1:
        index = est._labels_[targets[0]]
    else:
        index = pd.MultiIndex.from_product(
            [est.states_[v] for v in targets], names=list(targets)
        )
    return PosteriorSeries(probs, index=index, name=name)


def map_assignment(est, variables, evidence, soft_evidence=None) -> dict:
    """The most probable joint state of ``variables`` (None: every unobserved
    variable, by max-product; otherwise the argmax of their joint posterior,
    with ``soft_evidence`` if given)."""
    if soft_evidence:
        if variables is None:
            raise ValueError(
                "map_query with soft_evidence needs variables: the argmax of their "
                "joint posterior (max-product over every variable takes no soft "
                "evidence)"
            )
        targets = query_targets(est, variables)
        post = posterior_series(est, targets, evidence, soft_evidence)
        best = np.unravel_index(
            int(np.argmax(post.to_numpy())), [len(est.states_[v]) for v in targets]
        )
        return {v: est.states_[v].tolist()[int(s)] for v, s in zip(targets, best)}
    codes = evidence_codes(est, evidence)
    hidden = [v for v in est.variables_ if v not in codes]
    targets = tuple(hidden)
    if variables is not None:
        targets = query_targets(est, variables)
        if set(targets) != set(hidden):
            log_post = _posterior(est, targets, codes).log_marginals[targets]
            best = np.unravel_index(np.argmax(log_post[0]), log_post.shape[1:])
            return {v: est.states_[v].tolist()[int(s)] for v, s in zip(targets, best)}
    assignment, score = est._engine_.map(*est._engine_.evidence(codes))
    if np.isneginf(score[0]):
        raise ValueError("the evidence has probability zero under the network")
    return {v: est.states_[v].tolist()[int(assignment[v][0])] for v in targets}


def labelled_cpd(est, variable):
    """The CPT of ``variable`` as a Series (no parents) or a DataFrame with
    one row per joint state of the parents."""
    if variable not in getattr(est, "cpds_", {}):
        raise ValueError(f"no CPD for {variable!r} yet")
    values = est.cpds_[variable]
    columns = pd.Index(est.states_[variable], name=variable)
    parents = est.dag_.parents(variable)
    if not parents:
        return pd.Series(values, index=columns, name=f"P({variable})")
    index = pd.MultiIndex.from_product(
        [est.states_[u] for u in parents], names=list(parents)
    )
    if len(parents) == 1:
        index = index.get_level_values(0)
    return pd.DataFrame(values.reshape(len(index), -1), index=index, columns=columns)


# -- many rows -----------------------------------------------------------------------
def _groups(est, codes: np.ndarray, distinct: bool = True):
    """Rows sharing a pattern of observed cells, with the structure's
    evidence: with ``distinct``, that of their distinct rows only, and the
    inverse that scatters the answers back to every row (None: the rows are
    distinct already)."""
    cards = est._engine_.cards
    for rows, observed in BayesNet.group_rows(codes < 0):
        columns = np.flatnonzero(observed)
        variables = tuple(est.variables_[j] for j in columns)
        values = codes[rows[:, None], columns]
        inverse = None
        if distinct:
            values, inverse = distinct_rows(values, [cards[v] for v in variables])
        yield rows, observed, (variables, values), inverse


def _scatter(values: np.ndarray, inverse):
    """The answers of distinct rows, for every row of their group."""
    return values if inverse is None else values[inverse]


def _impossible(log_evidence: np.ndarray, what: str) -> np.ndarray:
    bad = np.isneginf(log_evidence)
    if bad.any():
        warn(
            f"{int(bad.sum())} row(s) have probability zero under the network "
            f"(a state of zero estimated probability, e.g. with m=0); {what}",
            RuntimeWarning,
        )
    return bad


def log_likelihoods(est, codes: np.ndarray) -> np.ndarray:
    """``log P(observed cells)`` of every row of codes."""
    out = np.zeros(codes.shape[0])
    for rows, _, evidence, inverse in _groups(est, codes):
        out[rows] = _scatter(est._engine_.log_likelihood(*evidence), inverse)
    return out


def most_probable(est, codes: np.ndarray) -> np.ndarray:
    """``codes`` with every row's missing cells set to their MAP joint state."""
    filled = codes.copy()
    for rows, observed, evidence, inverse in _groups(est, codes):
        if observed.all():
            continue
        assignment, score = est._engine_.map(*evidence)
        what = "their missing cells take the first states"
        _impossible(_scatter(score, inverse), what)
        for j, v in enumerate(est.variables_):
            if not observed[j]:
                filled[rows, j] = _scatter(assignment[v], inverse)
    return filled


def _every_marginal(est, codes: np.ndarray, index) -> pd.DataFrame:
    """:func:`posterior_frame` of every variable with no soft evidence: each
    group's distinct rows calibrated by one call of
    :func:`~bayeskit.graph._compiled_tree.marginal_table`, which writes the
    probabilities in the frame's column order."""
    net = est._engine_
    n = codes.shape[0]
    inverse = None
    if n == 1:  # one row (a dashboard, an API call): one group
        observed = codes[0] >= 0
        variables = tuple(v for v, o in zip(net.variables, observed) if o)
        groups = [(None, observed, (variables, codes[:, observed]), None)]
    else:
        # A network of few joint states of its evidence (missing a state of
        # its own) finds the distinct rows once, before the patterns: small
        # networks' rows repeat, and their groups are then of distinct rows.
        cards = [net.cards[v] + 1 for v in net.variables]
        if math.prod(cards) < 2**62:
            codes, inverse = distinct_rows(codes + 1, cards)
            codes = codes - 1
        groups = _groups(est, codes, distinct=inverse is None)
    out = np.empty((codes.shape[0], sum(net.cards.values())))
    log_z = np.empty(codes.shape[0])
    bad_groups = []
    for rows, observed, (variables, values), within in groups:
        table, z = marginal_table(net, variables, values)
        table, z = _scatter(table, within), _scatter(z, within)
        if rows is None:
            out, log_z = table, z
        else:
            out[rows], log_z[rows] = table, z
        bad_groups.append((rows, observed))
    bad = _impossible(_scatter(log_z, inverse), "their posterior is uniform")
    if bad.any():
        columns = state_columns(net)
        bad_distinct = np.isneginf(log_z)
        for rows, observed in bad_groups:
            rows = slice(None) if rows is None else rows
            sel = np.zeros(len(log_z), dtype=bool)
            sel[rows] = True
            sel &= bad_distinct
            for j, v in enumerate(net.variables):
                if not observed[j]:
                    k = net.cards[v]
                    out[sel, columns[v] : columns[v] + k] = 1.0 / k
    out = _scatter(out, inverse)
    # ``out`` is this call's own array: the frame takes it without a copy.
    return pd.DataFrame(out, index=index, columns=frame_columns(est), copy=False)


def posterior_frame(
    est, codes: np.ndarray, index, variable=None, soft_evidence=None
) -> pd.DataFrame:
    """The posterior of ``variable`` (None: of every variable) in every row,
    with the likelihoods of ``soft_evidence`` as virtual evidence (a row in
    which a variable is observed ignores that variable's soft evidence)."""
    targets = est.variables_ if variable is None else [variable]
    n = codes.shape[0]
    soft = soft_messages(est, soft_evidence, n)
    if variable is None and not soft and tuple(targets) == est._engine_.variables:
        return _every_marginal(est, codes, index)
    probs = {v: np.zeros((n, len(est.states_[v]))) for v in targets}
    position = {v: j for j, v in enumerate(est.variables_)}
    # Soft evidence of one vector per row makes rows of equal codes differ.
    distinct = all(m.shape[0] == 1 for m in soft.values())
    for rows, observed, evidence, inverse in _groups(est, codes, distinct):
        for v in targets:
            if observed[position[v]]:
                probs[v][rows, codes[rows, position[v]]] = 1.0
        hidden = [v for v in targets if not observed[position[v]]]
        if not hidden:
            continue
        active = {v: m for v, m in soft.items() if not observed[position[v]]}
        if active:
            log_post, impossible = {}, np.zeros(len(evidence[1]), dtype=bool)
            for v in hidden:
                extra = tuple(u for u in active if u != v)
                post = est._engine_.posterior(*evidence, (v, *extra))
                joint = post.log_marginals[(v, *extra)]
                log_post[v], log_z = _with_soft(
                    joint, (v,), extra, active, rows if inverse is None else None
                )
                impossible |= np.isneginf(log_z) | np.isneginf(post.log_evidence)
            log_evidence = np.where(impossible, -np.inf, 0.0)
        elif variable is None:
            post = est._engine_.marginals(*evidence)
            log_post, log_evidence = post.log_marginals, post.log_evidence
        else:
            post = est._engine_.posterior(*evidence, (variable,))
            log_post = {variable: post.log_marginals[(variable,)]}
            log_evidence = post.log_evidence
        if log_evidence.shape[0] != len(evidence[1]):  # (1,): nothing relevant
            log_evidence = np.broadcast_to(log_evidence, len(evidence[1]))
        bad = _impossible(_scatter(log_evidence, inverse), "their posterior is uniform")
        for v in hidden:
            p = _scatter(np.exp(log_post[v]), inverse)
            if bad.any():
                p = np.where(bad[:, None], 1.0 / p.shape[1], p)
            probs[v][rows] = p
    if variable is not None:
        return pd.DataFrame(
            probs[variable],
            index=index,
            columns=pd.Index(est.states_[variable], name=variable),
        )
    return pd.DataFrame(
        np.hstack([probs[v] for v in targets]), index=index, columns=frame_columns(est)
    )
