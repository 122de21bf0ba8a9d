"""Variational EM: the EM loop with posteriors over the parameters.

Mean-field variational Bayes approximates the posterior of a latent model's
latent variables ``Z`` and parameters ``theta`` by a product ``q(Z) q(theta)``
and maximises the evidence lower bound

.. math::

    \\mathcal L(q) = E_q[\\log p(X, Z, \\theta)] - E_q[\\log q(Z) q(\\theta)]
        \\le \\log p(X)

one factor at a time (Bishop 2006, section 10.1; Attias 2000). With conjugate
priors both updates are the steps of EM with two changes:

- **E-step**: the latent structure's posterior is computed as in EM, but fed
  by the *expected* log-parameters under ``q(theta)`` (``E[log pi_k]`` from
  the weights' Dirichlet or stick-breaking posterior, ``E[log N(x | mu_k,
  Sigma_k)]`` from the Normal-Wishart) instead of the log-parameters;
- **M-step**: the same expected sufficient statistics turn into the
  *posterior hyperparameters* (the prior objects' ``posterior``) instead of
  the MAP parameters.

The loop (:func:`fit_variational`) is written once over a model's hooks, in
scikit-learn's order: E-step, M-step, then the bound, evaluated with ``q(Z)``
of the E-step and ``q(theta)`` of the M-step (the bound of the new
parameters), which never decreases from one iteration to the next. A model
provides ``_initialize(X, sample_weight, random_state)``, ``_e_step(X)`` (the
log-responsibilities), ``_stats(X, log_resp, sample_weight)`` (the expected
statistics, values that add), ``_from_stats(stats)`` (the M-step), and
``_lower_bound(stats)``, with ``_get_parameters`` / ``_set_parameters``.

References
----------
.. [1] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, chapter 10 (variational inference; section 10.2, the variational
   mixture of Gaussians).
.. [2] H. Attias, "A variational Bayesian framework for graphical models",
   *Advances in Neural Information Processing Systems* 12, 2000.
.. [3] D. M. Blei and M. I. Jordan, "Variational inference for Dirichlet
   process mixtures", *Bayesian Analysis* 1(1), 2006, pp. 121-143.
"""

from __future__ import annotations

from time import time

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._warnings import warn

__all__ = ["fit_variational", "variational_family"]


def fit_variational(model, X, sample_weight, random_state, *, monitor=None):
    """Variational EM on ``X`` with ``n_init`` starts; the best bound is kept.

    As scikit-learn's mixtures: with ``warm_start`` after a first fit there is
    one start, from the current posterior, and the first change is measured
    from the current ``lower_bound_``; every iteration is E-step, M-step, then
    the bound; the run stops when the bound changes by less than ``tol``;
    spending ``max_iter`` without converging emits a ``ConvergenceWarning``.

    With ``monitor`` (hmmlearn's ``ConvergenceMonitor``, for the variational
    hidden Markov models), hmmlearn's habits instead: every bound is reported
    to it, the run stops when ``monitor.converged`` (the budget spent, or a
    gain below ``tol``), and spending the budget is no warning (the monitor
    and ``converged_`` tell).

    Sets ``converged_``, ``n_iter_``, ``lower_bound_``, ``lower_bounds_`` and
    ``stats_`` (the statistics of the kept posterior's last M-step) on
    ``model``, and leaves it with the best start's posterior.
    """
    do_init = not (model.warm_start and hasattr(model, "converged_"))
    n_init = model.n_init if do_init else 1
    best = None
    model.converged_ = False
    for init in range(n_init):
        if model.verbose:
            print(f"Initialization {init}")
            begin = prev_time = time()
        if do_init:
            model._initialize(X, sample_weight, random_state)
        bound = -np.inf if do_init else model.lower_bound_
        bounds, converged, n_iter = [], False, 0
        if monitor is not None:
            monitor._reset()
        for n_iter in range(1, model.max_iter + 1):
            previous = bound
            stats = model._stats(X, model._e_step(X), sample_weight)
            model._from_stats(stats)
            bound = model._lower_bound(stats)
            bounds.append(bound)
            change = bound - previous
            if model.verbose >= 2 and n_iter % model.verbose_interval == 0:
                now = time()
                print(
                    f"  Iteration {n_iter}\t time lapse {now - prev_time:.5f}s\t "
                    f"lower bound change {change:.5f}"
                )
                prev_time = now
            if monitor is not None:
                monitor.report(bound)
                if monitor.converged:
                    converged = monitor.reached_tol
                    break
            elif abs(change) < model.tol:
                converged = True
                break
        if model.verbose:
            state = "converged" if converged else "did not converge"
            print(
                f"Initialization {state}. time lapse {time() - begin:.5f}s\t "
                f"lower bound {bound:.5f}"
            )
        # As scikit-learn: the best bound, or the last start when no bound was
        # computed (max_iter=0).
        if best is None or bound > best[0] or best[0] == -np.inf:
            best = (bound, model._get_parameters(), n_iter, bounds)
            model.converged_ = converged
    bound, params, n_iter, bounds = best
    if not model.converged_ and model.max_iter > 0 and monitor is None:
        warn(
            "Best performing initialization did not converge (variational "
            f"EM, max_iter={model.max_iter}, tol={model.tol}): try other "
            "init_params, or increase max_iter or tol, or check for degenerate "
            "data",
            ConvergenceWarning,
        )
    model._set_parameters(params)
    model.n_iter_ = n_iter
    model.lower_bound_ = bound
    model.lower_bounds_ = bounds


# -- any family: the variational side of the conjugate families ------------------------
class _VariationalFamily:
    """How variational EM reads one emission family: its conjugate prior's
    default, posterior, expected log-likelihood, KL divergence and the point
    parameters shown as fitted attributes (the posterior means)."""

    def default_prior(self, family, X, sw):
        raise NotImplementedError

    def check_prior(self, family, prior):
        return prior

    def posterior(self, family, stats, prior):
        raise NotImplementedError

    def expected_log_likelihood(self, family, X, q):
        raise NotImplementedError

    def kl(self, q, prior) -> float:
        return float(np.sum(q.kl(prior)))

    def point(self, family, q):
        raise NotImplementedError


class _PoissonVB(_VariationalFamily):
    """Poisson rates with a Gamma prior (Bishop 2006, eq. 2.146)."""

    def default_prior(self, family, X, sw):
        from ..priors import Gamma

        # An exponential prior whose mean is the data's mean count.
        mean = np.nanmean(np.where(np.isnan(X), np.nan, X), axis=0)
        return Gamma(1.0, 1.0 / np.maximum(mean, 1e-3))

    def check_prior(self, family, prior):
        from ..priors import Gamma

        if not isinstance(prior, Gamma) or not (
            np.all(prior.shape > 0) and np.all(prior.rate > 0)
        ):
            raise ValueError(
                "emission_prior must be a proper Gamma (shape > 0 and rate > 0) "
                "for inference='variational' with Poisson or exponential emissions"
            )
        return prior

    def posterior(self, family, stats, prior):
        return prior.posterior(stats.sums, stats.counts)

    def expected_log_likelihood(self, family, X, q):
        from scipy.special import gammaln

        missing = np.isnan(X)
        X0 = np.where(missing, 0.0, X)
        observed = (~missing).astype(float)
        return (
            X0 @ q.expected_log().T
            - observed @ q.mean().T
            - gammaln(X0 + 1.0).sum(axis=1)[:, None]
        )

    def point(self, family, q):
        from ..emissions.poisson import PoissonParams

        return PoissonParams(q.mean())


class _ExponentialVB(_PoissonVB):
    """Exponential rates with a Gamma prior: the posterior adds the weight to
    the shape and the weighted sum of the observations to the rate."""

    def default_prior(self, family, X, sw):
        from ..priors import Gamma

        # An exponential prior on the rate whose mean is 1 / the data's mean.
        mean = np.nanmean(np.where(np.isnan(X), np.nan, X), axis=0)
        return Gamma(1.0, np.maximum(mean, 1e-12))

    def posterior(self, family, stats, prior):
        return prior.posterior(stats.counts, stats.sums)

    def expected_log_likelihood(self, family, X, q):
        missing = np.isnan(X)
        X0 = np.where(missing, 0.0, X)
        observed = (~missing).astype(float)
        return observed @ q.expected_log().T - X0 @ q.mean().T

    def point(self, family, q):
        from ..emissions.exponential import ExponentialParams

        return ExponentialParams(q.mean())


class _GaussianVB(_VariationalFamily):
    """Gaussian means and full covariances with a Normal-Wishart prior
    (Bishop 2006, section 10.2)."""

    def default_prior(self, family, X, sw):
        from ..priors import NormalInverseWishart

        d = X.shape[1]
        mean = sw @ X / sw.sum()
        r = X - mean
        cov = np.atleast_2d((r * sw[:, None]).T @ r / sw.sum())
        cov = cov + 1e-6 * np.eye(d)
        # scikit-learn's BayesianGaussianMixture defaults: m_0 the mean,
        # beta_0 = 1, nu_0 = d, W_0^{-1} the data's covariance.
        return NormalInverseWishart.from_normal_wishart(mean, 1.0, float(d), cov)

    def check_prior(self, family, prior):
        from ..priors import NormalInverseWishart

        if not isinstance(prior, NormalInverseWishart):
            raise ValueError(
                "emission_prior must be a NormalInverseWishart for "
                "inference='variational' with Gaussian emissions"
            )
        prior.normal_wishart(1, family.n_features)  # proper, or a ValueError
        return prior

    def posterior(self, family, stats, prior):
        return prior.posterior(stats)

    def expected_log_likelihood(self, family, X, q):
        return q.expected_log_likelihood(X)

    def point(self, family, q):
        from ..emissions import GaussianParams

        k, d = np.shape(q.mean)
        m, _, nu, psi = q.normal_wishart(k, d)
        cov = psi / nu[:, None, None]  # the inverse of E[Lambda]
        structure = family.covariance
        P = structure.precision_cholesky(cov, rounding_floor=False)
        log_det = structure.log_det_precision_cholesky(P, d)
        return GaussianParams(np.array(m), cov, P, log_det, np.zeros(d))


def variational_family(family) -> _VariationalFamily:
    """The variational side of ``family``, or a ValueError that says which
    families have one."""
    from ..emissions import FULL, Gaussian
    from ..emissions.exponential import Exponential
    from ..emissions.poisson import Poisson

    if isinstance(family, Poisson):
        return _PoissonVB()
    if isinstance(family, Exponential):
        return _ExponentialVB()
    if isinstance(family, Gaussian) and family.covariance is FULL:
        return _GaussianVB()
    raise ValueError(
        "inference='variational' supports the emission families with a "
        "conjugate prior written for it: 'poisson' and 'exponential' (Gamma) "
        "and 'gaussian' with full covariances (Normal-Wishart); "
        f"got {type(family).__name__}. For diagonal, tied or spherical "
        "Gaussians use BayesianGaussianMixture"
    )
