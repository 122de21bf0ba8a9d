"""What the estimator reads and draws: masked arrays, positive counts, the
covariances EM estimates, and sequences sampled from the model."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from ..graph.gaussian_chain import GaussianChainParams

__all__ = ["check_definite", "check_positive_int", "draw", "masked_to_nan"]


def draw(params: GaussianChainParams, n: int, rng, initial_state=None):
    k, d = params.n_state, params.n_obs
    states = np.empty((n, k))
    X = np.empty((n, d))
    LQ = np.linalg.cholesky(params.transition_covariance)
    LR = np.linalg.cholesky(params.observation_covariance)
    if initial_state is None:
        L0 = np.linalg.cholesky(params.initial_covariance)
        x = params.initial_mean + L0 @ rng.standard_normal(k)
    else:
        x = np.asarray(initial_state, dtype=float)
    for t in range(n):
        if t:
            x = params.transition_matrix @ x + params.transition_offset
            x = x + LQ @ rng.standard_normal(k)
        states[t] = x
        X[t] = (
            params.observation_matrix @ x
            + params.observation_offset
            + LR @ rng.standard_normal(d)
        )
    return states, X


def masked_to_nan(X):
    """A masked array's masked cells as NaN; pykalman drops a step with any
    cell masked, so a step only partly masked is an error saying how to write
    what bayeskit means."""
    mask = np.ma.getmaskarray(X)
    data = np.array(np.ma.getdata(X), dtype=np.float64)
    if mask.ndim == 2 and (mask.any(axis=1) & ~mask.all(axis=1)).any():
        raise ValueError(
            "X is a masked array with steps only partly masked: pykalman ignores "
            "such a step whole, bayeskit would use its unmasked values. Write "
            "NaN for the missing cells (np.ma.filled(X.astype(float), np.nan)) to "
            "use the observed values, or mask the whole step to drop it"
        )
    data[mask] = np.nan
    return data


def check_positive_int(value, name: str) -> None:
    if not isinstance(value, Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def check_definite(params: GaussianChainParams, n_steps) -> None:
    """ValueError naming a covariance the M-step left singular (too few steps
    for the parameters learned, or data on a subspace)."""
    for name, field in (
        ("observation_covariance", "observation_covariance"),
        ("transition_covariance", "transition_covariance"),
        ("initial_state_covariance", "initial_covariance"),
    ):
        value = getattr(params, field)
        try:
            np.linalg.cholesky(value)
        except np.linalg.LinAlgError:
            singular = True
        else:
            singular = not np.isfinite(value).all()
        if singular:
            raise ValueError(
                f"EM estimated a singular {name} from {n_steps:g} step(s) "
                f"(n_samples={n_steps:g}): the data do not determine it. Give it a "
                f"prior ({name}_prior_weight > 0), keep it fixed (leave it out "
                "of em_vars), or fit on more steps"
            )
