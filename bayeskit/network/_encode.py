"""A Bayesian network's rows in: the codes of the states, and on the first
chunk the variables, structure and states they fix."""

from __future__ import annotations

import numpy as np

from .._layout import fixed_by
from .._validation import check_sample_weight
from ._data import fit_states, network_columns, state_encoder, warn_continuous
from ._em import check_latent, latent_states

__all__ = ["encode_rows"]

_HINT = "; declare every state with `states`"


def encode_rows(est, X, sample_weight, reset: bool) -> tuple:
    """The codes of ``X`` (a latent variable's column all -1) and the
    checked weights; the first chunk fixes the variables and states."""
    before = dict(vars(est)) if reset else None
    cols, dtypes = network_columns(est, X, reset)
    dummy = np.empty((len(cols[0]), 0))
    sw = check_sample_weight(sample_weight, dummy, allow_all_zero=not reset)
    if reset and not (sw > 0).any():
        raise ValueError(
            "sample_weight is zero for every row: at least one row of non-zero "
            "weight is required"
        )
    keep = None if (sw > 0).all() else sw > 0
    if reset:
        names = list(X.columns) if hasattr(X, "columns") else list(range(len(cols)))
        latent = check_latent(est, names)
        est._set_structure(names, latent=latent)
        for _ in latent:
            cols.append(np.full(len(sw), None, dtype=object))
            dtypes.append(None)
        encoder = fit_states(
            est, est.variables_, cols, dtypes, keep, latent_states(est)
        )
        for v, states in zip(est.variables_, encoder.categories):
            est._set_states(v, states)
        # What this reset fixed (variables, structure, states): the layout
        # that counts from summarize carry.
        est._layout_keys = fixed_by(est, before)
    else:
        encoder = state_encoder(est)
    codes = encoder.encode(cols, fitting=True, keep=keep, hint=_HINT)
    if reset:
        d = len(names)  # the columns of X, not the latent variables
        warn_continuous(
            est,
            names,
            cols[:d],
            dtypes[:d],
            codes[:, :d],
            encoder.n_categories[:d],
            keep,
        )
    return codes, sw
