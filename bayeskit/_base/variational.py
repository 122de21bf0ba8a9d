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

    def check_prior(self, family, prior, n_states=1):
        return prior

    def posterior(self, family, stats, prior):
        raise NotImplementedError

    def expected_log_likelihood(self, family, X, q):
        """``E_q[log p(x_i | theta_k)]``, ``(n, K)``: a new array, which the
        caller may overwrite."""
        raise NotImplementedError

    def expected_log_likelihood_function(self, family, q, n_features):
        """:meth:`expected_log_likelihood` under ``q`` as a function of the
        rows (an E-step over blocks of rows calls it per block; a family may
        compute its posterior's own terms once, here)."""
        return lambda X: self.expected_log_likelihood(family, X, q)

    def kl(self, q, prior) -> float:
        return float(np.sum(q.kl(prior)))

    def point(self, family, q):
        raise NotImplementedError

    def log_predictive(self, family, X, q):
        """``log p(x_i | data of state k)``: the posterior predictive density
        of every row under every state's posterior, ``(n, K)``."""
        raise NotImplementedError

    def default_prior_from_stats(self, family, stats):
        """The default prior from the statistics of all the states (the
        data's scale, for a classifier that has statistics, not rows)."""
        return self.default_prior(family, None, None)


class _PoissonVB(_VariationalFamily):
    """Poisson rates with a Gamma prior (Bishop 2006, eq. 2.146)."""

    def default_prior(self, family, X, sw):
        from ..priors import Gamma

        # An exponential prior whose mean is the data's mean count.
        mean = np.nanmean(np.where(np.isnan(X), np.nan, X), axis=0)
        return Gamma(1.0, 1.0 / np.maximum(mean, 1e-3))

    def check_prior(self, family, prior, n_states=1):
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

    def log_predictive(self, family, X, q):
        """Negative binomial: the Gamma-Poisson predictive of every count
        (Gelman et al. 2013, section 2.6), a missing cell left out."""
        from scipy.special import betaln

        missing = np.isnan(X)
        x = np.where(missing, 0.0, X)[:, None, :]
        a, b = q.shape[None], q.rate[None]
        # log Gamma(x + a) / (Gamma(a) x!) = -log(x + a) - log B(a, x + 1),
        # accurate for a strong prior's large a (no difference of lgammas)
        terms = (
            -np.log(x + a)
            - betaln(a, x + 1.0)
            - a * np.log1p(1.0 / b)
            - x * np.log1p(b)
        )
        return np.where(missing[:, None, :], 0.0, terms).sum(axis=2)

    def default_prior_from_stats(self, family, stats):
        from ..priors import Gamma

        mean = stats.sums.sum(axis=0) / np.maximum(stats.counts.sum(axis=0), 1e-300)
        return Gamma(1.0, 1.0 / np.maximum(mean, 1e-3))


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

    def log_predictive(self, family, X, q):
        """Lomax: the Gamma-exponential predictive ``a b^a / (b + x)^(a + 1)``
        of every value, a missing cell left out."""
        missing = np.isnan(X)
        x = np.where(missing, 0.0, X)[:, None, :]
        a, b = q.shape[None], q.rate[None]
        terms = np.log(a) - np.log(b + x) - a * np.log1p(x / b)
        return np.where(missing[:, None, :], 0.0, terms).sum(axis=2)

    def default_prior_from_stats(self, family, stats):
        from ..priors import Gamma

        mean = stats.sums.sum(axis=0) / np.maximum(stats.counts.sum(axis=0), 1e-300)
        return Gamma(1.0, np.maximum(mean, 1e-12))


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

    def check_prior(self, family, prior, n_states=1):
        from ..priors import NormalInverseWishart

        if not isinstance(prior, NormalInverseWishart):
            raise ValueError(
                "emission_prior must be a NormalInverseWishart for "
                "inference='variational' with Gaussian emissions"
            )
        prior.normal_wishart(n_states, family.n_features)  # proper, or ValueError
        return prior

    def posterior(self, family, stats, prior):
        return prior.posterior(stats)

    def expected_log_likelihood(self, family, X, q):
        return q.expected_log_likelihood(X)

    def expected_log_likelihood_function(self, family, q, n_features):
        return q.expected_log_likelihood_function(n_features)

    def point(self, family, q):
        from ..emissions import GaussianParams

        k, d = np.shape(q.mean)
        m, _, nu, psi = q.normal_wishart(k, d)
        cov = psi / nu[:, None, None]  # the inverse of E[Lambda]
        structure = family.covariance
        P = structure.precision_cholesky(cov, rounding_floor=False)
        log_det = structure.log_det_precision_cholesky(P, d)
        return GaussianParams(np.array(m), cov, P, log_det, np.zeros(d))

    def log_predictive(self, family, X, q):
        """The multivariate Student t of ``nu - d + 1`` degrees of freedom,
        location ``m`` and scale ``Psi (kappa + 1) / (kappa (nu - d + 1))``
        (Murphy 2012, eq. 4.215; Bishop 2006, eq. 10.81)."""
        from scipy.special import gammaln

        k, d = np.shape(q.mean)
        m, kappa, nu, psi = q.normal_wishart(k, d)
        dof = nu - d + 1.0
        shape = psi * ((kappa + 1.0) / (kappa * dof))[:, None, None]
        chol = np.linalg.cholesky(shape)
        out = np.empty((len(X), k))
        for j in range(k):
            z = np.linalg.solve(chol[j], (X - m[j]).T)
            maha = np.einsum("ij,ij->j", z, z)
            log_det = 2.0 * np.log(np.diagonal(chol[j])).sum()
            out[:, j] = (
                gammaln((dof[j] + d) / 2.0)
                - gammaln(dof[j] / 2.0)
                - 0.5 * d * np.log(dof[j] * np.pi)
                - 0.5 * log_det
                - 0.5 * (dof[j] + d) * np.log1p(maha / dof[j])
            )
        return out

    def default_prior_from_stats(self, family, stats):
        from ..priors import NormalInverseWishart

        w = stats.weight
        mean = w @ stats.mean / w.sum()
        dev = stats.mean - mean
        scatter = stats.scatter.sum(axis=0) + (w[:, None] * dev).T @ dev
        d = len(mean)
        cov = scatter / w.sum() + 1e-6 * np.eye(d)
        return NormalInverseWishart.from_normal_wishart(mean, 1.0, float(d), cov)


class _DiagGaussianVB(_VariationalFamily):
    """Gaussian means and diagonal covariances with a Normal-Gamma prior per
    state and feature (Bishop 2006, section 2.3.6; Murphy 2012, section
    4.6.3.7), held as :class:`~bayeskit.priors.NormalInverseGamma` objects:
    the precision is ``Gamma(a, b)`` with ``a = (c - 3) / 2``, ``b = psi / 2``,
    and the mean given it ``N(m, 1 / (kappa lambda))``."""

    def default_prior(self, family, X, sw):
        from ..priors import NormalInverseGamma

        mean = sw @ X / sw.sum()
        var = sw @ (X - mean) ** 2 / sw.sum() + 1e-6
        # a_0 = 1 and b_0 the data's variance: a precision of prior mean
        # 1 / variance; m_0 the data's mean with kappa_0 = 1 (scikit-learn's).
        return NormalInverseGamma(mean, 1.0, 2.0 * var, 5.0)

    def check_prior(self, family, prior, n_states=1):
        from ..priors import NormalInverseGamma

        if not isinstance(prior, NormalInverseGamma) or not (
            np.all(prior.mean_weight > 0)
            and np.all(prior.variance_weight > 3)
            and np.all(prior.scatter > 0)
        ):
            raise ValueError(
                "emission_prior must be a proper NormalInverseGamma (mean_weight "
                "> 0, variance_weight > 3 and scatter > 0) for "
                "inference='variational' with diagonal Gaussian emissions"
            )
        return prior

    def posterior(self, family, stats, prior):
        from ..priors import NormalInverseGamma

        n = stats.feature_weight()
        kappa = prior.mean_weight + n
        delta = stats.mean - prior.mean
        return NormalInverseGamma(
            (prior.mean_weight * prior.mean + n * stats.mean) / kappa,
            kappa,
            prior.scatter + stats.scatter + prior.mean_weight * n / kappa * delta**2,
            prior.variance_weight + n,
        )

    @staticmethod
    def _parts(q):
        a = (q.variance_weight - 3.0) / 2.0
        return q.mean, q.mean_weight, a, q.scatter / 2.0

    def _cells(self, X, q, cell):
        """``sum_j cell(x_ij, state k's parameters of feature j)``, ``(n, K)``,
        a missing cell left out."""
        missing = np.isnan(X)
        x = np.where(missing, 0.0, X)[:, None, :]
        terms = cell(x, *(np.asarray(v)[None] for v in self._parts(q)))
        return np.where(missing[:, None, :], 0.0, terms).sum(axis=2)

    def expected_log_likelihood(self, family, X, q):
        from scipy.special import digamma

        def cell(x, m, kappa, a, b):
            e_log = digamma(a) - np.log(b)
            return 0.5 * (e_log - np.log(2 * np.pi) - 1 / kappa - a / b * (x - m) ** 2)

        return self._cells(X, q, cell)

    def kl(self, q, prior) -> float:
        from ..priors import Gamma

        m, kappa, a, b = self._parts(q)
        m0, kappa0, a0, b0 = (np.broadcast_to(v, m.shape) for v in self._parts(prior))
        precision = Gamma(a, b).kl(Gamma(a0, b0))
        normal = 0.5 * (
            np.log(kappa / kappa0) + kappa0 / kappa - 1 + kappa0 * a / b * (m - m0) ** 2
        )
        return float(np.sum(precision + normal))

    def point(self, family, q):
        from ..emissions import GaussianParams

        m, _, a, b = self._parts(q)
        cov = b / a  # the inverse of E[lambda]
        d = m.shape[1]
        structure = family.covariance
        P = structure.precision_cholesky(cov, rounding_floor=False)
        log_det = structure.log_det_precision_cholesky(P, d)
        return GaussianParams(np.array(m), cov, P, log_det, np.zeros(d))

    def log_predictive(self, family, X, q):
        """Student t of ``2a`` degrees of freedom, location ``m`` and squared
        scale ``b (kappa + 1) / (a kappa)`` per feature (Murphy 2012, eq.
        4.207; Bishop 2006, eq. 2.159)."""
        from scipy.special import gammaln

        def cell(x, m, kappa, a, b):
            nu, s2 = 2 * a, b * (kappa + 1) / (a * kappa)
            return (
                gammaln((nu + 1) / 2)
                - gammaln(nu / 2)
                - 0.5 * np.log(nu * np.pi * s2)
                - (nu + 1) / 2 * np.log1p((x - m) ** 2 / (nu * s2))
            )

        return self._cells(X, q, cell)

    def default_prior_from_stats(self, family, stats):
        from ..priors import NormalInverseGamma

        var = stats.total_variance() + 1e-6
        return NormalInverseGamma(stats.grand_mean(), 1.0, 2.0 * var, 5.0)


class _CategoricalVB(_VariationalFamily):
    """Categorical tables with a Dirichlet prior on every state's distribution
    of every feature (Bishop 2006, eq. 2.41; MacKay 1997): the posterior is a
    tuple of Dirichlets, one per feature, of shape ``(n_states, t_j)``."""

    def default_prior(self, family, X, sw):
        from ..priors import Dirichlet

        return Dirichlet(1.0)  # uniform on every table

    def check_prior(self, family, prior, n_states=1):
        from ..priors import Dirichlet

        if not isinstance(prior, Dirichlet):
            raise ValueError(
                "emission_prior must be a Dirichlet for inference='variational' "
                f"with categorical emissions, got {type(prior).__name__}"
            )
        return prior

    def _priors(self, family, prior, n_states):
        from ..priors import Dirichlet

        try:
            return tuple(
                Dirichlet(np.broadcast_to(prior.concentration, (n_states, t)))
                for t in family.n_categories
            )
        except ValueError:
            raise ValueError(
                "emission_prior's concentration must broadcast against every "
                f"feature's table of shape (n_states, n_categories), got shape "
                f"{prior.concentration.shape}"
            ) from None

    def posterior(self, family, stats, prior):
        counts = stats.counts.T  # (n_states, sum_j t_j)
        priors = self._priors(family, prior, counts.shape[0])
        return tuple(
            p.posterior(counts[:, block]) for p, block in zip(priors, family._blocks())
        )

    def _log_table(self, family, q, values):
        table = np.empty((family.n_total, q[0].concentration.shape[0]))
        for part, block in zip(q, family._blocks()):
            table[block] = values(part).T
        return table

    def expected_log_likelihood(self, family, X, q):
        from ..emissions import CategoricalParams

        log_prob = self._log_table(family, q, lambda part: part.expected_log())
        return family.log_likelihood(X, CategoricalParams(log_prob))

    def kl(self, q, prior) -> float:
        return float(
            sum(part.kl(prior._broadcast(part.concentration.shape)).sum() for part in q)
        )

    def point(self, family, q):
        from .._logmath import safe_log
        from ..emissions import CategoricalParams

        mean = self._log_table(family, q, lambda part: part.mean())
        return CategoricalParams(safe_log(mean))

    def log_predictive(self, family, X, q):
        """The Dirichlet-categorical predictive of every feature: the
        posterior mean of its table (Bishop 2006, eq. 2.45)."""
        return family.log_likelihood(X, self.point(family, q))


class _MultinomialVB(_VariationalFamily):
    """Multinomial counts with a Dirichlet prior on every state's category
    probabilities (Bishop 2006, section 2.2.1): ``E[log p(x | p_k)] = log n!
    - sum_j log x_j! + sum_j x_j E[log p_kj]``."""

    default_prior = _CategoricalVB.default_prior

    def check_prior(self, family, prior, n_states=1):
        from ..priors import Dirichlet

        if not isinstance(prior, Dirichlet):
            raise ValueError(
                "emission_prior must be a Dirichlet for inference='variational' "
                f"with multinomial emissions, got {type(prior).__name__}"
            )
        return prior

    def posterior(self, family, stats, prior):
        from ..priors import Dirichlet

        counts = np.asarray(stats.counts, dtype=float)
        try:
            alpha = np.broadcast_to(prior.concentration, counts.shape)
        except ValueError:
            raise ValueError(
                "emission_prior's concentration must broadcast to shape "
                f"(n_states, n_features) = {counts.shape}, got shape "
                f"{prior.concentration.shape}"
            ) from None
        return Dirichlet(alpha).posterior(counts)

    def expected_log_likelihood(self, family, X, q):
        from ..emissions import MultinomialParams

        return family.log_likelihood(X, MultinomialParams(None, q.expected_log()))

    def kl(self, q, prior) -> float:
        return float(np.sum(q.kl(prior._broadcast(q.concentration.shape))))

    def point(self, family, q):
        from ..emissions import MultinomialParams

        return MultinomialParams(q.mean())

    def log_predictive(self, family, X, q):
        """The Dirichlet-multinomial (Polya) predictive of every row of
        counts (Murphy 2012, eq. 3.38 for one row)."""
        import scipy.sparse as sp
        from scipy.special import gammaln

        X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
        alpha = q.concentration  # (K, d)
        n = X.sum(axis=1)
        coef = gammaln(n + 1.0) - gammaln(X + 1.0).sum(axis=1)
        total = alpha.sum(axis=1)
        out = gammaln(total)[None] - gammaln(n[:, None] + total[None])
        for k in range(alpha.shape[0]):
            out[:, k] += (gammaln(X + alpha[k]) - gammaln(alpha[k])).sum(axis=1)
        return out + coef[:, None]


#: The families without a variational side, and why.
_NOT_CONJUGATE = {
    "Gamma": "its shape and rate have no conjugate prior",
    "NegativeBinomial": "its number of failures has no conjugate prior",
    "LogNormal": "its Normal-inverse-Gamma posterior is not written yet",
    "Bernoulli": "its Beta posterior is not written yet (use a Categorical "
    "family of two categories)",
    "GaussianMixtureEmission": "a mixture per state has latent components of its own",
    "Product": "a product of families is not written yet",
}


def variational_family(family) -> _VariationalFamily:
    """The variational side of ``family``, or a ValueError naming
    ``inference`` that says which families have one and why this one has
    not."""
    from ..emissions import DIAG, FULL, Categorical, Gaussian, Multinomial
    from ..emissions.exponential import Exponential
    from ..emissions.poisson import Poisson

    if isinstance(family, Poisson):
        return _PoissonVB()
    if isinstance(family, Exponential):
        return _ExponentialVB()
    if isinstance(family, Gaussian) and family.covariance is FULL:
        return _GaussianVB()
    if isinstance(family, Gaussian) and family.covariance is DIAG:
        return _DiagGaussianVB()
    if isinstance(family, Categorical):
        return _CategoricalVB()
    if isinstance(family, Multinomial):
        return _MultinomialVB()
    name = type(family).__name__
    if isinstance(family, Gaussian):
        why = (
            "only full (Normal-Wishart) and diagonal (Normal-Gamma) covariances "
            "have their posterior written; for tied or spherical ones use "
            "BayesianGaussianMixture or VariationalGaussianHMM"
        )
    else:
        why = _NOT_CONJUGATE.get(name, "it has no conjugate prior written for it")
    raise ValueError(
        "inference='variational' takes the emission families with a conjugate "
        "prior: 'poisson' and 'exponential' (Gamma), 'gaussian' with full "
        "(Normal-Wishart) or diagonal (Normal-Gamma) covariances, Categorical "
        "and Multinomial "
        f"(Dirichlet); got {name}: {why}. Use inference='em'"
    )
