"""Semi-supervised variational Bayes for :class:`~bayeskit.NaiveBayes`.

With unlabelled rows the class of each is latent, and the posterior over the
parameters is no longer in closed form: mean-field variational Bayes
(Bishop 2006, section 10.2; the variational mixture with some components
observed) alternates

- the class posterior ``r_ic`` of every unlabelled row under the expected
  log-parameters, ``log r_ic = E[log pi_c] + E[log p(x_i | theta_c)] +
  const``;
- the posteriors ``q(pi)`` (a Dirichlet of concentration ``prior_m /
  n_classes`` plus the class weights) and ``q(theta)`` (the family's
  conjugate posterior) of the labelled rows' statistics plus the unlabelled
  rows' statistics weighted by ``r`` (times ``unlabeled_weight``).

The bound of an iteration, that of the posterior it starts from at its
optimal ``r``, is

.. math::

    \\mathcal L = \\sum_{\\text{labelled}} w_i (E[\\log \\pi_{y_i}] +
        E[\\log p(x_i \\mid \\theta_{y_i})]) + \\lambda \\sum_{\\text{unlabelled}}
        w_i \\log \\sum_c e^{E[\\log \\pi_c] + E[\\log p(x_i \\mid \\theta_c)]}
        - \\mathrm{KL}(q(\\pi) \\| p(\\pi)) - \\mathrm{KL}(q(\\theta) \\|
        p(\\theta)),

which never decreases. The fitted classifier then predicts with the posterior
predictive of the final posterior, as with labelled rows only.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning

from .._base.classifier import ClassifierStats
from .._base.semi_supervised import EM_MAX_ITER, EM_TOL, _no_labels_error, _split
from .._base.variational import variational_family
from .._warnings import warn
from ..priors import Dirichlet

__all__ = ["fit_semi_supervised_variational"]


def fit_semi_supervised_variational(est, X, y, sample_weight, mask):
    """``fit`` of ``NaiveBayes(inference='variational')`` with unlabelled
    rows (see the module). Sets ``em_n_iter_``, ``em_lower_bound_``,
    ``em_lower_bounds_`` (the bounds) and ``em_converged_``."""
    Xl, yl, wl, Xu, wu, sw = _split(est, X, y, sample_weight, mask)
    if Xl is None or not (wl > 0).any():
        raise _no_labels_error(est)
    saved = dict(vars(est))
    for attr in [a for a in saved if a.endswith("_") and a[0] != "_"]:
        delattr(est, attr)
    try:
        est._prepare_X(X, reset=True, sample_weight=sw)
        stats_l, Xl, idx, wl = est._read_labelled(
            Xl, yl, None, wl, reset=True, keep_encoding=True
        )
        k = len(est.classes_)
        est._set_stats(stats_l)  # the labelled rows' exact posterior
        if est._priors is None and not est.prior_m > 0:
            raise ValueError(
                "prior_m must be positive for a semi-supervised fit with "
                "inference='variational': the class weights' Dirichlet prior "
                f"(concentration prior_m / n_classes) must be proper, got "
                f"prior_m={est.prior_m!r}"
            )
        Xu = est._prepare_X(Xu, reset=False)
        if est.emission_prior is None:
            # The default prior reads the scale of every row, labelled or
            # not (the same for any split of the unlabelled rows among the
            # classes), once: a prior that moved would move the bound.
            uniform = np.full((len(Xu), k), 1.0 / k) * wu[:, None]
            every = stats_l + ClassifierStats(
                uniform.sum(axis=0), est._emission_stats(Xu, uniform, None)
            )
            family = est._triple.emission
            est._vb_prior = variational_family(family).default_prior_from_stats(
                family, every.emission
            )
            est._set_stats(stats_l)
        bounds, converged = _run(est, stats_l, Xl, idx, wl, Xu, wu, k)
    except Exception:
        vars(est).clear()
        vars(est).update(saved)
        raise
    finally:
        est.__dict__.pop("_vb_prior", None)
    if not converged:
        warn(
            f"semi-supervised variational EM did not converge in {EM_MAX_ITER} "
            "iterations; the posterior is that of the last one",
            ConvergenceWarning,
        )
    est.em_n_iter_ = len(bounds) - 1
    est.em_lower_bound_ = bounds[-1]
    est.em_lower_bounds_ = bounds
    est.em_converged_ = converged
    return est


def _run(est, stats_l, Xl, idx, wl, Xu, wu, k):
    family = est._triple.emission
    vb = variational_family(family)
    prior = est.emission_prior_
    lam = float(est.unlabeled_weight)
    fixed = est._priors is not None
    pi_prior = None if fixed else Dirichlet(np.full(k, est.prior_m / k))
    total_weight = float(wl.sum() + lam * wu.sum())
    stats = stats_l
    bounds, converged = [], False
    for it in range(EM_MAX_ITER + 1):
        q_theta = est.emission_posterior_
        if fixed:
            e_log_pi, kl_pi = np.log(est._priors), 0.0
        else:
            q_pi = pi_prior.posterior(stats.class_weight)
            e_log_pi, kl_pi = q_pi.expected_log(), float(q_pi.kl(pi_prior))
        labelled = vb.expected_log_likelihood(family, Xl, q_theta)
        labelled = labelled[np.arange(len(idx)), idx] + e_log_pi[idx]
        weighted = vb.expected_log_likelihood(family, Xu, q_theta) + e_log_pi
        log_norm = logsumexp(weighted, axis=1)
        keep_l, keep_u = wl > 0, wu > 0
        bound = (
            float(wl[keep_l] @ labelled[keep_l])
            + lam * float(wu[keep_u] @ log_norm[keep_u])
            - kl_pi
            - vb.kl(q_theta, prior)
        )
        bounds.append(bound)
        if lam == 0 or (it and abs(bound - bounds[-2]) < EM_TOL * total_weight):
            converged = True
            break
        if it == EM_MAX_ITER:
            break
        resp = np.exp(weighted - log_norm[:, None]) * (lam * wu)[:, None]
        stats_u = ClassifierStats(resp.sum(axis=0), est._emission_stats(Xu, resp, None))
        stats = stats_l + stats_u
        est._set_stats(stats)
    return bounds, converged
