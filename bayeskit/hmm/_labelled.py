"""Partly labelled sequences: known states as evidence on the chain.

*What is missing is latent*: a step whose state is known is a latent node
with evidence, and a step whose state is unknown is an ordinary hidden one.
The evidence enters where every other message does: the emission
log-likelihood of a labelled step is added to a mask that is ``0`` at its
state and ``-inf`` at every other (the product of the emission message and
the indicator of the observed state, Koller and Friedman 2009, section
9.3.2), so the chain kernels run unchanged and give

- the posterior of every step given the observations *and* the known states
  (a labelled step's posterior is one-hot), the E-step of EM with those
  posteriors clamped;
- the log evidence ``log p(x, z_known)``, the joint log-likelihood of the
  observations and the labelled states (what :meth:`score` returns with
  ``states=``).

With every state known nothing is left latent in the chain: the statistics
are counts (the start state, the transitions and the family's statistics
under one-hot weights) and the parameters their MAP estimate, in one M-step
(:func:`supervised_stats`).

References
----------
.. [1] D. Koller and N. Friedman, Probabilistic Graphical Models, MIT Press,
   2009, section 9.3.2 (evidence as a reduced factor) and chapter 19
   (learning with partially observed data).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .._base.em import LatentStats
from .._base.sequences import _observed_steps
from ..emissions.base import Emission
from ..emissions.gaussian import Gaussian
from ..graph import ChainStats
from ..graph.semi_markov import SemiMarkovChain

__all__ = [
    "check_states",
    "clamp",
    "closed_form",
    "fit_supervised",
    "fold",
    "joint_log_likelihood",
    "labelled_start",
    "model_states",
    "named",
    "posterior",
    "refuse_collection",
    "supervised_stats",
]


def _flat(states, lengths) -> np.ndarray:
    """``states`` as one object array of an entry per step (from one array,
    or from one array per sequence); ValueError naming ``states`` if their
    shape is not the steps'."""
    n_steps = int(np.sum(lengths))
    if isinstance(states, (list, tuple)) and any(
        hasattr(s, "__len__") and not isinstance(s, (str, bytes)) for s in states
    ):
        parts = [np.asarray(s, dtype=object).ravel() for s in states]
        sizes = [len(p) for p in parts]
        if sizes != list(np.asarray(lengths)):
            raise ValueError(
                f"states given per sequence must have the sequences' lengths "
                f"{np.asarray(lengths).tolist()[:6]}, got {sizes[:6]}"
            )
        values = np.concatenate(parts) if parts else np.empty(0, dtype=object)
    else:
        values = np.asarray(states, dtype=object)
        if values.ndim != 1:
            raise ValueError(
                "states must be one state index per step (1-d), got shape "
                f"{values.shape}"
            )
    if len(values) != n_steps:
        raise ValueError(
            f"states must have one entry per step of X ({n_steps}), got {len(values)}"
        )
    return values


def _unknown(value) -> bool:
    return value is None or (
        isinstance(value, (float, np.floating)) and bool(np.isnan(value))
    )


def _is_name(value) -> bool:
    """Whether a known state is a name (a string or any label that is not a
    number) rather than an index."""
    return not _unknown(value) and (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, (int, float, np.integer, np.floating))
    )


def check_states(states, lengths, n_states: int, names=None):
    """The known state of every step as ``intp`` codes, ``-1`` where unknown;
    None when no state is known (the unlabelled path, unchanged).

    ``states`` holds one entry per step, in the order of the rows of all
    sequences (or, as X may be, a list with one array per sequence): a state
    index ``0 .. n_states - 1``, or ``-1``, NaN or None for an unknown state;
    with ``names`` (a model's ``state_names_``), one of those names or an
    unknown marker. Anything else is a ValueError naming ``states``.
    """
    if states is None:
        return None
    values = _flat(states, lengths)
    codes = np.full(len(values), -1, dtype=np.intp)
    if names is not None:
        lookup = {name: j for j, name in enumerate(names.tolist())}
        for i, value in enumerate(values):
            if _unknown(value) or (not _is_name(value) and value == -1):
                continue
            try:
                codes[i] = lookup[value.item() if hasattr(value, "item") else value]
            except (KeyError, TypeError):
                raise ValueError(
                    f"states must hold the state names the model was fitted "
                    f"with {names.tolist()[:10]} (state_names_) or -1 / NaN / "
                    f"None for an unknown state; got {value!r} at step {i}"
                ) from None
        return codes if (codes >= 0).any() else None
    for i, value in enumerate(values):
        if _unknown(value):
            continue
        if _is_name(value):
            raise ValueError(
                f"states must hold state indices (integers 0 .. {n_states - 1}) "
                f"or -1 / NaN for an unknown state; got {value!r} at step {i} "
                "(names are taken by fit, which then keeps them in state_names_)"
            )
        if value != int(value) or not -1 <= value < n_states:
            raise ValueError(
                f"states must hold state indices 0 .. {n_states - 1} (the "
                f"model's n_components) or -1 / NaN for an unknown state; got "
                f"{value!r} at step {i}"
            )
        codes[i] = int(value)
    return codes if (codes >= 0).any() else None


def model_states(model, states, lengths, reset: bool):
    """:func:`check_states` for ``model``: on a fit (``reset``), states that
    are names (strings, or any labels that are not numbers) name the states,
    sorted as ``np.unique`` sorts them, and are kept in ``state_names_``
    (removed by a fit without names); after it, the fitted names are read.
    Every state must be named: ValueError naming ``states`` otherwise."""
    if reset:
        model.__dict__.pop("state_names_", None)
        if states is not None:
            known = [
                v
                for v in _flat(states, lengths)
                if not _unknown(v) and (_is_name(v) or v != -1)
            ]
            named = [v for v in known if _is_name(v)]
            if named:
                if len(named) != len(known):
                    raise ValueError(
                        "states must be all names or all state indices (with "
                        "-1 / NaN / None for an unknown state), not both"
                    )
                try:
                    names = np.asarray(named, dtype=object)
                    if all(isinstance(v, str) for v in named):
                        names = names.astype(str)
                    names = np.unique(names)
                except TypeError as error:
                    raise ValueError(
                        f"states names must be sortable: {error}"
                    ) from None
                if len(names) != model.n_components:
                    raise ValueError(
                        f"states name {len(names)} states {names.tolist()[:10]} "
                        f"but n_components is {model.n_components}: name every "
                        "state (each at least once), or set n_components to "
                        "the number of names"
                    )
                model.state_names_ = names
    names = getattr(model, "state_names_", None)
    return check_states(states, lengths, model.n_components, names)


def named(model, path: np.ndarray) -> np.ndarray:
    """A decoded path as the states' names when the model was fitted with
    named states (``state_names_``), as indices otherwise (hmmlearn's)."""
    names = getattr(model, "state_names_", None)
    return path if names is None else names[path]


def refuse_collection(states) -> None:
    """ValueError naming ``states`` when they come with a Dask collection
    (the known states of sequences that live elsewhere are not routed)."""
    if states is not None:
        raise ValueError(
            "states is not taken with a Dask collection of sequences: fit the "
            "labelled sequences from numpy arrays or lists, or sum summarize("
            "chunk, states=...) over the chunks and call from_stats"
        )


def clamp(messages, labels: np.ndarray, n_states: int):
    """The messages with the known states as evidence (see the module).

    A dense message ``(n_steps, k)`` gets ``-inf`` at every state but the
    known one of a labelled step. A table message ``(table, codes)`` (the
    categorical family's) becomes the table stacked ``k + 1`` times, block 0
    as it is and block ``j + 1`` with every state but ``j`` at ``-inf``, with
    the codes of a step labelled ``j`` moved to block ``j + 1``; :func:`fold`
    sums the blocks' posterior weight back onto the table's rows.
    """
    table, codes = messages if isinstance(messages, tuple) else (messages, None)
    known = np.flatnonzero(labels >= 0)
    if codes is None:
        out = np.array(table, dtype=float, copy=True)
        kept = out[known, labels[known]]
        out[known] = -np.inf
        out[known, labels[known]] = kept
        return out, None
    k, n_rows = n_states, table.shape[0]
    mask = np.full((k + 1, k), -np.inf)
    mask[0] = 0.0
    mask[np.arange(1, k + 1), np.arange(k)] = 0.0
    stacked = (np.asarray(table, dtype=float)[None] + mask[:, None, :]).reshape(
        (k + 1) * n_rows, k
    )
    return np.ascontiguousarray(stacked), codes + n_rows * (labels + 1)


def fold(posterior, n_states: int):
    """A posterior of :func:`clamp`'s stacked table with its ``symbol_counts``
    summed back onto the rows of the table (unchanged for a dense message)."""
    counts = posterior.symbol_counts
    if counts is None:
        return posterior
    n_rows = counts.shape[0] // (n_states + 1)
    folded = counts.reshape(n_states + 1, n_rows, n_states).sum(axis=0)
    return replace(posterior, symbol_counts=folded)


def closed_form(components, X) -> bool:
    """Whether the known states leave nothing latent: the chain is the HMM's
    (a semi-Markov chain's last segment is right-censored, its duration
    latent beyond the steps seen, so that EM runs on it even when every state
    is known), and the family's statistics under one-hot weights have no
    latent variable of their own (a mixture's components) and no missing
    coordinate of a step it sees (a Gaussian marginalises them by EM)."""
    structure, emission, _ = components
    if isinstance(structure, SemiMarkovChain):
        return False
    if type(emission).expected_stats is Emission.expected_stats:
        return True
    if isinstance(emission, Gaussian):
        observed = _observed_steps(X)
        seen = X if observed is None else X[observed]
        return not np.isnan(seen).any()
    return False


def posterior(structure, messages, params, data):
    """The chain's posterior given the observations and the known states
    (the E-step with the labelled posteriors clamped)."""
    _, lengths, weights, labels = data
    k = structure.n_states
    try:
        post = structure.posterior(
            clamp(messages, labels, k), params.structure, lengths, weights
        )
    except ValueError as error:
        raise ValueError(
            "the known states are impossible under the model's parameters (a "
            "labelled state that cannot emit its step, or a start or "
            f"transition of probability zero between labelled steps): {error}. "
            "Check states, or let the parameters that forbid them be "
            "re-estimated (params, init_params)"
        ) from error
    return fold(post, k)


def joint_log_likelihood(model, data, params, components) -> np.ndarray:
    """``log p(x, z_known)`` of every sequence: the clamped chain's log
    evidence (``-inf`` where the known states are impossible)."""
    X, lengths, _, labels = data
    structure, emission, _ = components
    messages = model._messages(emission, X, params.emission)
    clamped = clamp(messages, labels, structure.n_states)
    return structure.filter(clamped, params.structure, lengths).log_evidence


def fit_supervised(model, data, start, components) -> None:
    """``fit`` with every state known: the counts' MAP parameters in one
    M-step, from the start ``fit`` would take for the parameters the counts
    leave alone (those not in ``params``, and rows no sequence reached)."""
    previous = start(None)
    stats = supervised_stats(model, data, previous, components, evidence=False)
    params = model._params_from_stats(stats, previous, components)
    model._set_params(params)
    joint = joint_log_likelihood(model, data, params, components)
    weights = data[2]
    total = float(joint.sum() if weights is None else weights @ joint)
    bound = total + model._log_prior_of(params, components)
    monitor = model._new_monitor()
    monitor._reset()
    monitor.history.append(bound)
    monitor.iter = 1
    model.monitor_ = monitor
    model.converged_ = True
    model.n_iter_ = 1
    model.lower_bound_ = bound
    model.lower_bounds_ = [bound]
    model.stats_ = replace(stats, log_evidence=total)


def labelled_start(model, start, data, components):
    """The ``start(random_state)`` of EM with known states: ``start``'s
    parameters, then the family's parameters that ``fit`` initialises
    re-estimated from the labelled steps (one M-step under their one-hot
    weights, plus every observed step spread evenly over the labelled states
    with as much weight in all as one state's labelled steps: a background
    that leaves no symbol at probability zero and no variance at the prior's
    alone), so that state ``j`` begins near the steps labelled ``j`` rather
    than wherever the unlabelled start put it (EM is local: from a start
    whose states are a permutation of the labelled ones, it keeps the
    permutation and the labels fight it). States with no labelled step keep
    their start; the start and transition tables are left to EM (a few
    labelled transitions would make structural zeros of every other one).
    """
    X, lengths, weights, labels = data
    known = labels >= 0
    seq_weight = np.ones(len(lengths)) if weights is None else weights
    row_weight = np.repeat(seq_weight, lengths)
    observed = _observed_steps(X)
    if observed is not None:
        known &= observed
    rows = np.flatnonzero(known)
    structure, emission, _ = components

    seen = np.flatnonzero(np.ones(len(X), bool) if observed is None else observed)
    k = structure.n_states
    resp = np.zeros((len(seen), k))
    labelled = np.unique(labels[rows])
    # The background: every observed step on every labelled state, weighing
    # as much in all as the labelled steps of one state on average.
    scale = row_weight[rows].sum() / max(row_weight[seen].sum(), 1e-300) / k
    resp[:, labelled] = (row_weight[seen] * scale)[:, None]
    where = np.searchsorted(seen, rows)
    resp[where, labels[rows]] += row_weight[rows]

    def begin(random_state):
        params = start(random_state)
        letters = model._emission_letters & model._to_init
        if not letters or not model._updates_emission() or not rows.size:
            return params
        stats = LatentStats(
            structure.zeros(),
            emission.expected_stats(X[seen], resp, params.emission),
        )
        new = model._params_from_stats(stats, params, components).emission
        attributes = model._emission_attributes(new)
        # In the order of _param_names: a set's order changes with the
        # process's hash seed (and so would the attributes' order).
        for letter, name in model._param_names.items():
            if letter not in letters:
                continue
            setattr(model, name, attributes[name])
        return model._current_params()

    return begin


def supervised_stats(
    model, data, params, components, evidence: bool = True
) -> LatentStats:
    """Statistics of fully labelled sequences: counts under one-hot weights.

    The chain's statistics are the weighted counts of the first states, the
    transitions and the occupancy; the family's are its statistics with each
    step weighted on its state (gaps add nothing). ``log_evidence`` is the
    joint log-likelihood ``log p(x, z)`` under ``params``.
    """
    X, lengths, weights, labels = data
    structure, emission, _ = components
    k = structure.n_states
    lengths = np.asarray(lengths, dtype=np.intp)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    seq_weight = np.ones(len(lengths)) if weights is None else weights
    row_weight = np.repeat(seq_weight, lengths)
    start = np.bincount(labels[starts], weights=seq_weight, minlength=k)
    inner = np.ones(len(labels), dtype=bool)
    inner[ends - 1] = False  # the last step of a sequence has no successor
    inner = np.flatnonzero(inner)
    transitions = np.zeros((k, k))
    np.add.at(transitions, (labels[inner], labels[inner + 1]), row_weight[inner])
    occupancy = np.bincount(labels, weights=row_weight, minlength=k)
    chain = ChainStats(start, transitions, occupancy)
    if model._updates_emission():
        resp = np.zeros((len(labels), k))
        resp[np.arange(len(labels)), labels] = row_weight
        observed = _observed_steps(X)
        Xo = X
        if observed is not None:
            Xo, resp = X[observed], resp[observed]
        emission_stats = emission.expected_stats(Xo, resp, params.emission)
    else:
        emission_stats = emission.zeros(k)
    total = 0.0
    if evidence:
        joint = joint_log_likelihood(model, data, params, components)
        total = float(joint.sum() if weights is None else weights @ joint)
    return LatentStats(chain, emission_stats, total)
