"""Duration families of the hidden semi-Markov model.

A family gives every state's duration distribution on ``1 .. D``
(``D = max_duration``) as a table ``pmf(params)`` of shape ``(k, D)``, and
its MAP parameters from the expected number of segments of every state and
duration (the semi-Markov chain's ``durations`` statistics): the table's
rows are sufficient for every family. The parametric families are
*truncated at* ``D`` and renormalised, so that the table is the model's
exact duration distribution and the M-step maximises the model's own
objective (EM stays monotone):

- :class:`DurationTable`: a nonparametric table, Dirichlet prior (MAP by its
  mode, as the transition tables);
- :class:`PoissonDuration`: ``d - 1 ~ Poisson(lambda)`` (the shifted
  Poisson, ``d >= 1``), Gamma prior on ``lambda``; the MAP rate solves a
  concave one-dimensional problem in ``log lambda`` (the truncated Poisson is
  an exponential family), by Newton's method on its derivative inside a
  bracket;
- :class:`NegativeBinomialDuration`: ``d - 1 ~ NB(n, p)`` (scipy's
  parametrisation: failures before the ``n``-th success), maximum likelihood
  by BFGS over ``(log n, logit p)`` from the previous parameters, kept
  unless the objective improves.

References
----------
.. [1] S.-Z. Yu, "Hidden semi-Markov models", Artificial Intelligence
   174(2), 215-243, 2010, section 4 (parametric durations).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import digamma, expit, gammaln

from .._logmath import logsumexp
from ..priors import Dirichlet, Gamma

__all__ = [
    "DurationTable",
    "NegativeBinomialDuration",
    "PoissonDuration",
    "duration_family",
]

_THETA = 40.0  # |log lambda| bound of the Poisson rate's search


def _check_array(value, name, shape):
    value = np.asarray(value, dtype=float)
    if value.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {value.shape}")
    if not np.all(np.isfinite(value) & (value >= 0)):
        raise ValueError(f"{name} must be non-negative and finite")
    return value


@dataclass(frozen=True)
class DurationTable:
    """A nonparametric duration table on ``1 .. max_duration``; Dirichlet prior."""

    max_duration: int
    fields = ("durations_",)
    prior_type = Dirichlet

    def default_prior(self):
        return Dirichlet(1.0)

    def pmf(self, params) -> np.ndarray:
        return params

    def init_params(self, k, rng) -> np.ndarray:
        return np.full((k, self.max_duration), 1.0 / self.max_duration)

    def map_params(self, counts, prior, previous) -> np.ndarray:
        return (prior or self.default_prior()).map(counts, previous)[0]

    def log_prior(self, params, prior) -> float:
        return 0.0 if prior is None else float(prior.log_density(params))

    def n_parameters(self, k) -> int:
        return k * (self.max_duration - 1)

    def attributes(self, params) -> dict:
        return {"durations_": params}

    def from_attributes(self, get, k) -> np.ndarray:
        table = _check_array(get("durations_"), "durations_", (k, self.max_duration))
        if not np.allclose(table.sum(axis=1), 1.0):
            raise ValueError("durations_ must have rows summing to one")
        return table


def _poisson_log_pmf(rates, D) -> np.ndarray:
    """Log pmf of ``d - 1 ~ Poisson(rate)`` truncated to ``1 .. D``, ``(k, D)``."""
    k = np.arange(D)
    rates = np.asarray(rates, dtype=float)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_rate = np.log(rates)
        terms = np.where(k == 0, 0.0, k * log_rate) - gammaln(k + 1)
    return terms - logsumexp(terms, axis=1, keepdims=True)


@dataclass(frozen=True)
class PoissonDuration:
    """``d - 1 ~ Poisson(lambda)`` truncated to ``1 .. max_duration``; Gamma prior."""

    max_duration: int
    fields = ("duration_rates_",)
    prior_type = Gamma

    def default_prior(self):
        return Gamma(0.0, 0.0)

    def pmf(self, params) -> np.ndarray:
        return np.exp(_poisson_log_pmf(params, self.max_duration))

    def init_params(self, k, rng) -> np.ndarray:
        return rng.uniform(0.5, 1.5, size=k) * max(self.max_duration - 1, 1) / 4

    def map_params(self, counts, prior, previous) -> np.ndarray:
        """Every state's MAP rate: the root in ``theta = log lambda`` of the
        log posterior's derivative ``s + alpha - N E_theta[d - 1] - beta
        e^theta`` (``N`` segments whose ``d - 1`` sum to ``s``; the
        expectation under the truncated Poisson), decreasing since the
        truncated Poisson is an exponential family (minus its derivative is
        ``N Var_theta[d - 1] + beta e^theta``). Newton's method on all the
        states at once, kept inside a bracket that every step narrows (a step
        that leaves it is a bisection), from the untruncated answer; rates
        beyond ``e^(+-40)`` are clipped there. A state with no segment and no
        prior keeps its rate; ``s + alpha <= 0`` gives rate 0."""
        prior = prior or self.default_prior()
        k = len(previous)
        alpha = np.broadcast_to(np.asarray(prior.shape, dtype=float), (k,))
        beta = np.broadcast_to(np.asarray(prior.rate, dtype=float), (k,))
        steps = np.arange(self.max_duration)
        log_fact = gammaln(steps + 1)
        total, sums = counts.sum(axis=1), counts @ steps

        def slopes(theta):
            terms = theta[:, None] * steps - log_fact
            w = np.exp(terms - terms.max(axis=1, keepdims=True))
            w /= w.sum(axis=1, keepdims=True)
            mean = w @ steps
            var = (w * (steps - mean[:, None]) ** 2).sum(axis=1)
            rate = np.exp(theta)
            size = np.abs(sums + alpha) + total * mean + beta * rate
            f = sums + alpha - total * mean - beta * rate
            # f and its rounding error (a few ulps of its terms' sum)
            return f, total * var + beta * rate, 8 * np.finfo(float).eps * size

        rates = np.asarray(previous, dtype=float).copy()
        keep = (total <= 0) & (alpha <= 0) & (beta <= 0)
        zero = ~keep & (sums + alpha <= 0)
        rates[zero] = 0.0
        lo, hi = np.full(k, -_THETA), np.full(k, _THETA)
        top = ~(keep | zero) & (slopes(hi)[0] >= 0)
        bottom = ~(keep | zero | top) & (slopes(lo)[0] <= 0)
        rates[top], rates[bottom] = np.exp(_THETA), np.exp(-_THETA)
        search = ~(keep | zero | top | bottom)
        todo = search.copy()
        with np.errstate(divide="ignore", invalid="ignore"):
            guess = np.log((sums + alpha) / (total + beta))
        theta = np.where(np.isfinite(guess), np.clip(guess, -_THETA, _THETA), 0.0)
        for _ in range(200):
            if not todo.any():
                break
            f, curvature, noise = slopes(theta)
            up = f > 0
            lo = np.where(todo & up, theta, lo)
            hi = np.where(todo & ~up, theta, hi)
            with np.errstate(divide="ignore", invalid="ignore"):
                step = theta + f / curvature
            new = np.where((step > lo) & (step < hi), step, 0.5 * (lo + hi))
            new = np.where(np.abs(f) <= noise, theta, new)
            tol = 1e-14 + 1e-15 * np.abs(theta)
            close = (np.abs(new - theta) <= tol) | (hi - lo <= tol)
            done = todo & (close | (np.abs(f) <= noise))
            theta = np.where(todo, new, theta)
            todo &= ~done
        rates[search] = np.exp(theta[search])
        return rates

    def log_prior(self, params, prior) -> float:
        return 0.0 if prior is None else float(prior.log_density(params))

    def n_parameters(self, k) -> int:
        return k

    def attributes(self, params) -> dict:
        return {"duration_rates_": params}

    def from_attributes(self, get, k) -> np.ndarray:
        return _check_array(get("duration_rates_"), "duration_rates_", (k,))


def _nb_log_pmf(n, p, D) -> np.ndarray:
    k = np.arange(D)
    n, p = np.asarray(n, dtype=float)[:, None], np.asarray(p, dtype=float)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = gammaln(k + n) - gammaln(n) - gammaln(k + 1) + n * np.log(p)
        terms = terms + np.where(k == 0, 0.0, k * np.log1p(-p))
    return terms - logsumexp(terms, axis=1, keepdims=True)


def _logit(p: float) -> float:
    p = min(max(p, 1e-300), 1.0 - 1e-16)
    return float(np.log(p) - np.log1p(-p))


def _nb_loss(x, counts):
    """``-sum_d counts[d] log pmf(d)`` of the truncated negative binomial at
    ``(log n, logit p)``, and its gradient: ``sum_k (C pmf_k - c_k)
    d log q_k`` (the normaliser's derivative is the pmf's mean of the
    unnormalised one's), with ``d/dlog n log q_k = n psi(k + n) + const`` and
    ``d/dlogit p log q_k = -p k + const`` (constants cancel: the weights sum
    to zero)."""
    n, p = float(np.exp(x[0])), float(expit(x[1]))
    log_pmf = _nb_log_pmf([n], [p], len(counts))[0]
    k = np.arange(len(counts))
    resid = counts.sum() * np.exp(log_pmf) - counts
    grad = np.array([n * (resid @ digamma(k + n)), -p * (resid @ k)])
    return -float(counts @ log_pmf), grad


@dataclass(frozen=True)
class NegativeBinomialDuration:
    """``d - 1 ~ NB(n, p)`` truncated to ``1 .. max_duration``; maximum likelihood."""

    max_duration: int
    fields = ("duration_n_", "duration_p_")
    prior_type = type(None)

    def default_prior(self):
        return None

    def pmf(self, params) -> np.ndarray:
        return np.exp(_nb_log_pmf(params[0], params[1], self.max_duration))

    def init_params(self, k, rng):
        mean = rng.uniform(0.5, 1.5, size=k) * max(self.max_duration - 1, 1) / 4
        return np.ones(k), 1.0 / (1.0 + mean)

    def map_params(self, counts, prior, previous):
        n, p = np.array(previous[0], dtype=float), np.array(previous[1], dtype=float)
        for j in range(len(n)):
            c = counts[j]
            if c.sum() <= 0:
                continue
            x0 = np.array([np.log(n[j]), _logit(p[j])])
            with np.errstate(over="ignore", invalid="ignore"):
                best = minimize(
                    _nb_loss, x0, args=(c,), jac=True, method="BFGS",
                    options={"gtol": 1e-9, "maxiter": 200},
                )  # fmt: skip
            x = np.clip(best.x, [-20.0, -30.0], [20.0, 30.0])
            if np.all(np.isfinite(x)) and _nb_loss(x, c)[0] < _nb_loss(x0, c)[0]:
                n[j], p[j] = np.exp(x[0]), expit(x[1])
        return n, p

    def log_prior(self, params, prior) -> float:
        return 0.0

    def n_parameters(self, k) -> int:
        return 2 * k

    def attributes(self, params) -> dict:
        return {"duration_n_": params[0], "duration_p_": params[1]}

    def from_attributes(self, get, k):
        n = _check_array(get("duration_n_"), "duration_n_", (k,))
        p = _check_array(get("duration_p_"), "duration_p_", (k,))
        if not np.all((n > 0) & (p > 0) & (p <= 1)):
            raise ValueError("duration_n_ must be positive and duration_p_ in (0, 1]")
        return n, p


_FAMILIES = {
    "table": DurationTable,
    "poisson": PoissonDuration,
    "negative_binomial": NegativeBinomialDuration,
}


def duration_family(name: str, max_duration: int):
    """The duration family ``name`` on ``1 .. max_duration``."""
    return _FAMILIES[name](int(max_duration))
