"""The parameters of a linear dynamical system: names, checks and the start of EM.

The estimator's parameters carry pykalman's names (``transition_matrices``,
``observation_covariance``, ...); the chain kernels read a
:class:`~bayeskit.graph.gaussian_chain.GaussianChainParams`. This module
translates between the two, checks values given by a user (shapes, finite
values, symmetric positive definite covariances), and chooses the values EM
starts from where none is given.
"""

from __future__ import annotations

import numpy as np

from ..graph.gaussian_chain import GaussianChainParams

__all__ = ["NAMES", "PYKALMAN_EM_VARS", "check_params", "resolve_em_vars"]

# pykalman's name -> the field of GaussianChainParams.
NAMES = {
    "transition_matrices": "transition_matrix",
    "observation_matrices": "observation_matrix",
    "transition_offsets": "transition_offset",
    "observation_offsets": "observation_offset",
    "transition_covariance": "transition_covariance",
    "observation_covariance": "observation_covariance",
    "initial_state_mean": "initial_mean",
    "initial_state_covariance": "initial_covariance",
}

#: pykalman's default ``em_vars``.
PYKALMAN_EM_VARS = (
    "transition_covariance",
    "observation_covariance",
    "initial_state_mean",
    "initial_state_covariance",
)

_COVARIANCES = (
    "transition_covariance",
    "observation_covariance",
    "initial_state_covariance",
)


def resolve_em_vars(em_vars) -> frozenset:
    """The fields of :class:`GaussianChainParams` that EM learns."""
    if isinstance(em_vars, str):
        if em_vars != "all":
            raise ValueError(
                f"em_vars must be 'all' or a list of parameter names, got {em_vars!r}"
            )
        return frozenset(NAMES.values())
    if em_vars is None:
        em_vars = PYKALMAN_EM_VARS
    try:
        names = list(em_vars)
    except TypeError:
        raise TypeError(
            f"em_vars must be 'all' or a list of parameter names, got {em_vars!r}"
        ) from None
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        raise ValueError(
            f"em_vars names unknown parameter(s) {unknown}; the names are "
            f"{sorted(NAMES)} (pykalman's)"
        )
    return frozenset(NAMES[n] for n in names)


def shapes(k: int, d: int) -> dict:
    """The shape of every parameter, by pykalman's name."""
    return {
        "transition_matrices": (k, k),
        "observation_matrices": (d, k),
        "transition_offsets": (k,),
        "observation_offsets": (d,),
        "transition_covariance": (k, k),
        "observation_covariance": (d, d),
        "initial_state_mean": (k,),
        "initial_state_covariance": (k, k),
    }


def check_value(name: str, value, shape) -> np.ndarray:
    """``value`` as a float64 array of ``shape``: finite, and for a covariance
    symmetric positive definite; a ValueError naming ``name`` otherwise."""
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of numbers") from None
    if arr.ndim == len(shape) + 1 and arr.shape[1:] == tuple(shape):
        raise ValueError(
            f"{name} has shape {arr.shape}: one value per time step (pykalman's "
            f"time-varying parameters) is not supported; give one of shape {shape}"
        )
    if arr.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (no NaN or infinite value)")
    if name in _COVARIANCES:
        if not np.allclose(arr, arr.T, rtol=1e-10, atol=0):
            raise ValueError(f"{name} must be symmetric")
        arr = 0.5 * (arr + arr.T)
        try:
            np.linalg.cholesky(arr)
        except np.linalg.LinAlgError:
            raise ValueError(f"{name} must be positive definite") from None
    return arr


def n_state_of(given: dict, n_components) -> int:
    """The latent dimension: ``n_components``, or read from the given arrays
    (pykalman's rule); 1 when nothing says."""
    axes = {
        "transition_matrices": -2,
        "transition_offsets": -1,
        "transition_covariance": -2,
        "initial_state_mean": -1,
        "initial_state_covariance": -2,
        "observation_matrices": -1,
    }
    found = {}
    for name, axis in axes.items():
        value = given.get(name)
        if value is not None and np.ndim(value) >= -axis:
            found[name] = np.shape(value)[axis]
    if n_components is not None:
        bad = {n: v for n, v in found.items() if v != n_components}
        if bad:
            name, v = next(iter(bad.items()))
            raise ValueError(
                f"{name} is for a latent dimension of {v}, but n_components is "
                f"{n_components}"
            )
        return int(n_components)
    values = set(found.values())
    if len(values) > 1:
        raise ValueError(
            f"the given parameters disagree on the latent dimension: {found}"
        )
    return values.pop() if values else 1


def check_params(given: dict, k: int, d: int) -> dict:
    """The given (not None) parameters, checked, by pykalman's name."""
    expected = shapes(k, d)
    return {
        name: check_value(name, value, expected[name])
        for name, value in given.items()
        if value is not None
    }


def start(checked: dict, k: int, d: int, learn: frozenset, Y, data_start, rng):
    """The parameters EM starts from.

    Given values are kept. Others are pykalman's defaults (identity matrices
    and covariances, zero offsets and mean), except, when ``data_start``, the
    observation matrix, offset and covariance that EM learns: the principal
    axes of the observed steps (their first ``k``, scaled by their standard
    deviations), the mean of the observations, and the variance the axes
    leave (Roweis and Ghahramani 1999 start factor models this way). ``rng``
    (not None) draws the observation matrix at random instead (a restart of
    ``n_init``).
    """
    values = {
        "transition_matrices": np.eye(k),
        "observation_matrices": np.eye(d, k),
        "transition_offsets": np.zeros(k),
        "observation_offsets": np.zeros(d),
        "transition_covariance": np.eye(k),
        "observation_covariance": np.eye(d),
        "initial_state_mean": np.zeros(k),
        "initial_state_covariance": np.eye(k),
    }
    rows = Y[~np.isnan(Y).any(axis=1)]
    if data_start and len(rows) >= 2:
        mean = rows.mean(axis=0)
        centred = rows - mean
        var = centred.var(axis=0)
        if "observation_offset" in learn:
            values["observation_offsets"] = mean
        if "observation_matrix" in learn:
            if rng is None:
                _, s, Vt = np.linalg.svd(centred, full_matrices=False)
                r = min(k, len(s))
                C = np.zeros((d, k))
                C[:, :r] = Vt[:r].T * (s[:r] / np.sqrt(len(rows)))
            else:
                C = rng.normal(size=(d, k)) * np.sqrt(var / k)[:, None]
            values["observation_matrices"] = C
        if "observation_covariance" in learn and var.all():
            C = values["observation_matrices"]
            left = var - (C**2).sum(axis=1)
            # At least a tenth of each variance, so the start is never
            # singular where the axes explain a feature fully.
            values["observation_covariance"] = np.diag(np.maximum(left, 0.1 * var))
    values.update(checked)
    return GaussianChainParams(**{NAMES[n]: v for n, v in values.items()})
