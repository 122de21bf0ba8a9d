"""Checks of an HMM's parameters at the boundary: the letters of ``params``
and ``init_params``, and the shapes of the chain's priors."""

from __future__ import annotations

from numbers import Integral

import numpy as np

__all__ = ["check_chain_priors", "check_currstate", "check_letters"]


def check_letters(est) -> None:
    """ValueError naming ``params`` or ``init_params`` when a letter names
    no parameter of ``est`` (its ``_param_names``)."""
    for name in ("params", "init_params"):
        unknown = sorted(set(getattr(est, name)) - set(est._param_names))
        if unknown:
            raise ValueError(
                f"{name} has unknown letter(s) {unknown}: the letters of "
                f"{type(est).__name__} are "
                + ", ".join(f"'{c}' ({v})" for c, v in est._param_names.items())
            )


def check_chain_priors(est) -> None:
    """ValueError naming ``startprob_prior`` or ``transmat_prior`` unless it
    is a scalar or broadcasts to its table (as in hmmlearn)."""
    k = est.n_components
    for name, shape in (("startprob_prior", (k,)), ("transmat_prior", (k, k))):
        try:
            np.broadcast_shapes(np.shape(getattr(est, name)), shape)
        except ValueError:
            raise ValueError(
                f"{name} must be a scalar or an array of shape {shape} (one "
                f"value per entry of the table, n_components = {k}), got "
                f"shape {np.shape(getattr(est, name))}"
            ) from None


def check_currstate(est, currstate):
    """The index of ``currstate``: None, a state index ``0 .. n_components -
    1``, or, for a model fitted with named states, one of its
    ``state_names_``; ValueError naming ``currstate`` otherwise."""
    names = getattr(est, "state_names_", None)
    if currstate is None:
        return None
    if names is not None:
        lookup = {name: j for j, name in enumerate(names.tolist())}
        key = currstate.item() if isinstance(currstate, np.generic) else currstate
        try:
            if key in lookup and not isinstance(key, Integral):
                return lookup[key]
        except TypeError:  # unhashable: not a name
            pass
    if isinstance(currstate, Integral) and 0 <= currstate < est.n_components:
        return int(currstate)
    named = "" if names is None else f" or a state name {names.tolist()[:10]}"
    raise ValueError(
        f"currstate must be a state, an integer in 0 .. "
        f"{est.n_components - 1}{named}, got {currstate!r}"
    )
