"""Stochastic variational inference: what the variational models' steps share.

A step of stochastic variational inference (Hoffman, Blei, Wang and Paisley
2013, algorithm 2) moves the natural parameters ``lambda`` of the global
posterior towards ``lambda_hat``, the posterior that the whole data would
give if it were made of copies of the mini-batch: ``lambda <- (1 - rho_t)
lambda + rho_t lambda_hat``, with ``rho_t = (learning_offset +
t)^(-learning_decay)``. With conjugate exponential-family priors this is the
natural-gradient step of the evidence lower bound (their section 2.3).

This module holds the schedule, the scaling of a family's statistics to
``total_samples`` and the step of every conjugate posterior's natural
parameters, written once for the variational hidden Markov models (the named
ones and :class:`~bayeskit.HiddenMarkovModel`).

References
----------
.. [1] M. D. Hoffman, D. M. Blei, C. Wang and J. Paisley, "Stochastic
   variational inference", *Journal of Machine Learning Research* 14, 2013,
   pp. 1303-1347.
"""

from __future__ import annotations

from dataclasses import fields
from dataclasses import replace as _replace

import numpy as np

__all__ = ["blend_normal", "blend_posterior", "scaled_stats", "step_size"]


def step_size(model, t: int) -> float:
    """``rho_t = (learning_offset + t)^(-learning_decay)`` of ``model``'s
    schedule at step ``t`` (counted from 0)."""
    return float((model.learning_offset + t) ** (-model.learning_decay))


def scaled_stats(stats, factor: float):
    """A family's statistics of ``factor`` times as much data alike: every
    weight, count, sum and scatter multiplied by ``factor``, the means kept
    (a ``mean`` field) and the descriptions (non-array fields) unchanged."""
    if isinstance(stats, np.ndarray):
        return stats * factor
    if hasattr(stats, "scaled"):
        return stats.scaled(factor)
    changes = {
        f.name: getattr(stats, f.name) * factor
        for f in fields(stats)
        if f.name != "mean" and isinstance(getattr(stats, f.name), np.ndarray)
    }
    return _replace(stats, **changes)


def blend_normal(a, b, kappa0, m0, kappa1, m1):
    """The step on a Normal-Wishart (Normal-Gamma) posterior's mean part,
    ``a (kappa0, kappa0 m0) + b (kappa1, kappa1 m1)``, in centred form.

    Returns ``(kappa, m, w, dev)``: the new ``kappa`` and ``m``, and the
    weight ``w = a kappa0 b kappa1 / kappa`` and deviation ``dev = m0 - m1``
    whose outer product ``w dev dev^T`` the scale matrix gains (the third
    natural parameter ``Psi + kappa m m^T`` moved without a difference of
    large numbers). ``kappa`` has the leading shape of ``m`` (``(K,)`` with
    ``m`` of ``(K, d)``, or the same shape as ``m``)."""
    kappa = a * kappa0 + b * kappa1
    k0, k1, kk = (
        (kappa0, kappa1, kappa)
        if np.ndim(kappa) == np.ndim(m0)
        else (kappa0[..., None], kappa1[..., None], kappa[..., None])
    )
    m = (a * k0 * m0 + b * k1 * m1) / kk
    return kappa, m, a * kappa0 * b * kappa1 / kappa, m0 - m1


def blend_posterior(old, new, rho: float):
    """``(1 - rho) old + rho new`` in the natural parameters of a conjugate
    posterior: a Dirichlet (the concentrations), a Gamma (shape and rate), a
    Normal-inverse-Wishart of full blocks (``kappa``, ``kappa m``, ``Psi +
    kappa m m^T``, ``nu``), a Normal-inverse-Gamma per state and feature
    (alike, elementwise), or a tuple of them."""
    from ..priors import Dirichlet, Gamma, NormalInverseGamma, NormalInverseWishart

    a, b = 1.0 - rho, rho
    if isinstance(old, tuple):
        return tuple(blend_posterior(o, n, rho) for o, n in zip(old, new))
    if isinstance(old, Dirichlet):
        return Dirichlet(a * old.concentration + b * new.concentration)
    if isinstance(old, Gamma):
        return Gamma(a * old.shape + b * new.shape, a * old.rate + b * new.rate)
    if isinstance(old, NormalInverseGamma):
        kappa, m, w, dev = blend_normal(
            a, b, old.mean_weight, old.mean, new.mean_weight, new.mean
        )
        return NormalInverseGamma(
            m,
            kappa,
            a * old.scatter + b * new.scatter + w * dev**2,
            a * old.variance_weight + b * new.variance_weight,
        )
    if isinstance(old, NormalInverseWishart):
        k, d = np.shape(new.mean)
        m0, kappa0, nu0, psi0 = old.normal_wishart(k, d)
        m1, kappa1, nu1, psi1 = new.normal_wishart(k, d)
        kappa, m, w, dev = blend_normal(a, b, kappa0, m0, kappa1, m1)
        psi = a * psi0 + b * psi1 + w[:, None, None] * dev[:, :, None] * dev[:, None, :]
        return type(new).from_normal_wishart(m, kappa, a * nu0 + b * nu1, psi)
    raise TypeError(f"no natural-parameter step for {type(old).__name__}")
