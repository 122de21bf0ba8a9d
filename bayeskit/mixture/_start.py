"""How a Gaussian mixture starts: its components (node, family, prior), its
given initial parameters, checked, and the first responsibilities of
``init_params`` (as scikit-learn draws them)."""

from __future__ import annotations

import functools

import numpy as np
from sklearn.cluster import KMeans, kmeans_plusplus

from .._base.classifier import Triple
from .._base.em import LatentParams, LatentPrior
from .._validation import check_probability_vector
from ..emissions import GaussianParams, covariance_from_name
from ..emissions._guarded_gaussian import GuardedGaussian
from ..graph import LatentNode, NodeParams
from ..priors.niw import NormalInverseWishart
from ._missing import mean_imputed

__all__ = [
    "check_initial_parameters",
    "first_params",
    "initial_responsibilities",
    "mixture_components",
    "mixture_triple",
    "tied_start",
]


def mixture_triple(covariance_type, n_components, d, scatter, weight, reg) -> Triple:
    """The component node, the guarded Gaussian family of ``covariance_type``
    and the prior of ``weight`` virtual samples of ``scatter`` (plus ``reg``)."""
    structure = covariance_from_name(covariance_type)
    prior = NormalInverseWishart.from_covariance(scatter, weight, reg=reg).check(
        structure, n_components, d
    )
    return Triple(
        LatentNode(n_components),
        GuardedGaussian(structure, d),
        LatentPrior(None, prior),
    )


@functools.lru_cache(maxsize=64)
def mixture_components(covariance_type, n_components, d, reg, weight) -> Triple:
    """:func:`mixture_triple` with the identity as the prior scatter, built once for
    every fit with these hyperparameters: its parts are values no fit
    changes, and validating the prior costs about an M-step on iris-sized data."""
    return mixture_triple(covariance_type, n_components, d, np.eye(d), weight, reg)


def _finite_array(value, name):
    """``value`` as a float64 array, or a ValueError naming ``name``."""
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of numbers") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (it contains NaN or infinity)")
    return arr


def check_initial_parameters(
    structure, n_components, n_features, weights_init, means_init, precisions_init
):
    """Validated copies of the given initial parameters (None where not given).

    Shapes as scikit-learn's; ``weights_init`` a probability vector,
    ``means_init`` finite, ``precisions_init`` finite, symmetric and positive
    definite (for 'diag' and 'spherical', positive) in the covariance
    ``structure``'s shape.
    """
    k, d = n_components, n_features
    weights = means = precisions = None
    if weights_init is not None:
        weights = check_probability_vector(weights_init, "weights_init", k)
    if means_init is not None:
        means = _finite_array(means_init, "means_init")
        if means.shape != (k, d):
            raise ValueError(
                f"means_init must have shape ({k}, {d}), got {means.shape}"
            )
    if precisions_init is not None:
        precisions = _finite_array(precisions_init, "precisions_init")
        expected = structure.shape(k, d)
        if precisions.shape != expected:
            raise ValueError(
                f"precisions_init must have shape {expected} for "
                f"covariance_type={structure.name!r}, got {precisions.shape}"
            )
        blocks = 1 if structure.shared else k
        for j in range(blocks):
            p = structure.dense(precisions, j, d)
            which = f" (component {j})" if blocks > 1 else ""
            if not np.allclose(p, p.T):
                raise ValueError(f"precisions_init must be symmetric{which}")
            try:
                np.linalg.cholesky(p)
            except np.linalg.LinAlgError:
                raise ValueError(
                    f"precisions_init must be positive definite{which}"
                ) from None
    return weights, means, precisions


def initial_responsibilities(
    init_params, X, sample_weight, n_components, random_state, unit=None
):
    """First responsibilities; rows of zero weight never seed a component.
    ``unit``: whether every weight is 1, if the caller knows."""
    n, k = X.shape[0], n_components
    resp = np.zeros((n, k))
    if init_params == "kmeans":
        km = KMeans(n_clusters=k, n_init=1, random_state=random_state)
        # Unit weights are KMeans' default: not given, they skip its checks.
        if unit is None:
            unit = bool((sample_weight == 1.0).all())
        km.fit(X, sample_weight=None if unit else sample_weight)
        resp[np.arange(n), km.labels_] = 1.0
    elif init_params == "random":
        resp = random_state.uniform(size=(n, k))
        resp /= resp.sum(axis=1, keepdims=True)
    elif init_params == "random_from_data":
        # Equal weights draw as scikit-learn does (no p: another algorithm).
        p = None
        if np.ptp(sample_weight) > 0:
            p = sample_weight / sample_weight.sum()
        idx = random_state.choice(n, size=k, replace=False, p=p)
        resp[idx, np.arange(k)] = 1.0
    else:  # k-means++
        _, idx = kmeans_plusplus(
            X, k, random_state=random_state, sample_weight=sample_weight
        )
        resp[idx, np.arange(k)] = 1.0
    return resp


def tied_start(est, X, resp, sample_weight, means, structure):
    """For a tied ``est`` without a prior, scikit-learn's first covariance,
    ``(sum_i x_i x_i^T - sum_k n_k mu_k mu_k^T) / sum_k n_k + reg_covar``,
    with the second moment over every row. It is the pooled scatter when every row's
    responsibilities sum to one (``'kmeans'``, ``'random'``); with one
    seed row per component (``'k-means++'``, ``'random_from_data'``) the
    rows that seed nothing add their uncentred moment too, and the same
    ``random_state`` gives scikit-learn's fit only from the same start.

    Returns ``(covariance, precision_cholesky)`` in the covariance
    ``structure``'s form, or None where the first M-step's stand."""
    if est.covariance_type != "tied" or est.covariance_prior_weight:
        return None
    seeded = (resp * sample_weight[:, None]).sum(axis=0)
    if np.allclose(resp.sum(axis=1), 1.0):
        return None  # the pooled scatter: already what scikit-learn has
    nk = seeded + 10 * np.finfo(resp.dtype).eps
    means = np.asarray(means, dtype=float)
    covariance = ((X * sample_weight[:, None]).T @ X - (nk * means.T) @ means) / (
        nk.sum()
    )
    covariance.flat[:: covariance.shape[0] + 1] += est.reg_covar
    try:
        prec_chol = structure.precision_cholesky(covariance, rounding_floor=False)
    except np.linalg.LinAlgError:
        return None  # the pooled scatter's start stands
    return covariance, prec_chol


def first_params(
    est, X, sample_weight, random_state, complete=False, shifted=()
) -> LatentParams:
    """First parameters: the given ones, and for the others the M-step of
    the first responsibilities of ``init_params`` (as scikit-learn); with
    missing cells, on the mean-imputed rows (``complete``: the caller knows
    that no cell is missing). ``shifted``: ``(X - X[0], X[0], unit)`` of
    complete rows, if the caller has made them (``unit``: every weight is 1),
    read instead of made again."""
    if not complete:
        X = mean_imputed(X, sample_weight)  # no missing cell from here on
    weights, means, precisions = est._init_given
    _, family, prior = est._triple
    structure = family.covariance
    d = X.shape[1]
    covs = P = log_det = None
    if weights is None or means is None or precisions is None:
        # As scikit-learn: with all three given, nothing is drawn or estimated.
        unit = shifted[2] if shifted else None  # every weight 1, if known
        resp = initial_responsibilities(
            est.init_params, X, sample_weight, est.n_components, random_state, unit
        )
        # scikit-learn's first weights are n_k / n_samples: with one seed
        # row per component (k-means++, random_from_data) they sum to
        # n_components / n_samples, which only the first E-step sees.
        weighted = resp if unit else resp * sample_weight[:, None]
        raw = family.complete_stats(X, weighted, shifted=shifted[:2] or None)
        first = est._map(raw, prior, family, sample_weight.sum())
        given_weights = weights
        weights, gp = first.structure.weights, first.emission
        means_, covs, P = gp.means, gp.covariances, gp.precisions_cholesky
        log_det = gp.log_det
        tied = tied_start(est, X, resp, sample_weight, means_, structure)
        if tied is not None:  # scikit-learn's, if tied
            (covs, P), log_det = tied, None
        if given_weights is not None:
            weights = given_weights
        means = means_ if means is None else means
    weights, means = weights.copy(), means.copy()
    if precisions is not None:
        P, covs = structure.from_precision(precisions)
        log_det = None
    center = sample_weight @ X / sample_weight.sum()
    if log_det is None:
        log_det = structure.log_det_precision_cholesky(P, d)
    return LatentParams(
        NodeParams(weights), GaussianParams(means, covs, P, log_det, center)
    )
