"""Variational EM of a mixture of any family with a conjugate prior.

The hooks that the variational loop of ``bayeskit._base.variational`` runs
for :class:`~bayeskit.MixtureModel` with ``inference="variational"``.
"""

from __future__ import annotations

import numpy as np

from .._base.variational import fit_variational, variational_family

__all__ = ["MixtureVariationalRun"]


class MixtureVariationalRun:
    """Variational EM of a mixture of any family with a conjugate prior: one
    component node (:class:`~bayeskit.graph.LatentNode`) x the family x its
    prior, with a Dirichlet posterior on the weights.

    The hooks of :func:`fit_variational`; the bound is the evidence lower
    bound itself (Bishop 2006, eq. 10.3), per unit of sample weight:
    ``sum_i w_i sum_k r_ik (E[log pi_k] + E[log p(x_i | theta_k)])`` plus the
    entropy of ``q(Z)``, minus the KL divergences of ``q(pi)`` and
    ``q(theta)`` from their priors.
    """

    def __init__(self, model, X, sw, node, family, weight_prior, emission_prior):
        self.model = model
        self.node, self.family = node, family
        self.vb = variational_family(family)
        self.weight_prior = weight_prior
        self.emission_prior = emission_prior
        self.X, self.sw = X, sw
        for name in ("n_init", "max_iter", "tol", "verbose", "warm_start"):
            setattr(self, name, getattr(model, name))
        self.verbose_interval = 1
        if hasattr(model, "_vb_state"):
            self.q_weights, self.q_emission = model._vb_state
            self.converged_ = model.converged_
            self.lower_bound_ = model.lower_bound_

    # the hooks of fit_variational
    def _initialize(self, X, sw, random_state):
        from ._missing import mean_imputed
        from ._start import initial_responsibilities

        Xi = mean_imputed(X, sw)
        resp = initial_responsibilities(
            self.model.init_params, Xi, sw, self.node.n_states, random_state
        )
        w = resp * sw[:, None]
        self._m_step(self.family.stats(Xi, w), w.sum(axis=0))

    def _m_step(self, emission_stats, counts):
        self.q_weights = self.weight_prior.posterior(counts)
        self.q_emission = self.vb.posterior(
            self.family, emission_stats, self.emission_prior
        )

    def _weighted(self, X):
        return (
            self.vb.expected_log_likelihood(self.family, X, self.q_emission)
            + self.q_weights.expected_log()
        )

    def _e_step(self, X):
        from scipy.special import logsumexp

        weighted = self._weighted(X)
        return weighted - logsumexp(weighted, axis=1, keepdims=True)

    def _stats(self, X, log_resp, sw):
        resp = np.exp(log_resp) * sw[:, None]
        with np.errstate(invalid="ignore"):
            plogp = np.where(log_resp > -np.inf, np.exp(log_resp) * log_resp, 0.0)
        return (
            self.family.stats(X, resp),
            resp.sum(axis=0),
            resp,
            -float(sw @ plogp.sum(axis=1)),
        )

    def _from_stats(self, stats):
        emission_stats, counts, _, _ = stats
        self._m_step(emission_stats, counts)

    def _lower_bound(self, stats):
        _, _, resp, entropy = stats
        expected = float(np.sum(resp * self._weighted(self.X)))
        kl = float(np.sum(self.q_weights.kl(self.weight_prior))) + self.vb.kl(
            self.q_emission, self.emission_prior
        )
        return (expected + entropy - kl) / float(self.sw.sum())

    def _get_parameters(self):
        return self.q_weights, self.q_emission

    def _set_parameters(self, params):
        self.q_weights, self.q_emission = params

    # results
    def run(self, random_state):
        fit_variational(self, self.X, self.sw, random_state)
        model = self.model
        for name in ("converged_", "n_iter_", "lower_bound_", "lower_bounds_"):
            setattr(model, name, getattr(self, name))
        model._vb_state = (self.q_weights, self.q_emission)
        model.weights_posterior_ = self.q_weights
        model.emission_posterior_ = self.q_emission
        return self.q_weights.mean(), self.vb.point(self.family, self.q_emission)

    def log_resp(self, X):
        """``(log-responsibilities, log of the normaliser)`` of ``X`` under
        the posterior (the E-step's messages)."""
        from scipy.special import logsumexp

        weighted = self._weighted(X)
        norm = logsumexp(weighted, axis=1)
        return weighted - norm[:, None], norm
