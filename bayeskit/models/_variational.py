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

__all__ = ["fit_variational"]


def fit_variational(model, X, sample_weight, random_state):
    """Variational EM on ``X`` with ``n_init`` starts; the best bound is kept.

    As scikit-learn's mixtures: with ``warm_start`` after a first fit there is
    one start, from the current posterior, and the first change is measured
    from the current ``lower_bound_``; every iteration is E-step, M-step, then
    the bound; the run stops when the bound changes by less than ``tol``;
    spending ``max_iter`` without converging emits a ``ConvergenceWarning``.

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
            if abs(change) < model.tol:
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
    if not model.converged_ and model.max_iter > 0:
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
