"""The base of the models fitted by EM: posterior, statistics, parameters in a loop."""

from __future__ import annotations

import warnings
from time import time

import numpy as np
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.exceptions import ConvergenceWarning

__all__ = ["BaseLatentModel"]


class BaseLatentModel(DensityMixin, BaseEstimator):
    """Base of the models fitted by EM: mixtures now, hidden Markov models later.

    EM is "posterior, statistics, parameters" in a loop. Subclasses provide:
    ``_initialize(X, sample_weight, random_state)`` (set the first
    parameters), ``_e_step(X)`` returning ``(posterior, log_prob)`` (the graph
    core's posterior, in whatever form the model's M-step reads, and the
    log-likelihood of every sample or sequence under the current parameters),
    ``_m_step(X, posterior, sample_weight)``, ``_log_prior()`` (log density of
    the prior at the current parameters, up to a constant),
    ``_get_parameters()`` / ``_set_parameters(params)``, and
    ``_convergence_advice`` (what to change when EM does not converge).

    The monitored objective is the log posterior, ``sum_i w_i log p(x_i) +
    log p(theta)``, divided by ``sum_i w_i`` (``_objective``; the hidden Markov
    models keep hmmlearn's total instead). EM never decreases it.
    """

    _convergence_advice = "increase max_iter or tol"

    def _objective(self, log_prob, sample_weight):
        """Per-sample log posterior of the current parameters."""
        return (sample_weight @ log_prob + self._log_prior()) / sample_weight.sum()

    def _run_em(self, X, sample_weight, random_state, max_iter):
        """Fit by EM with ``n_init`` starts, keep the best; return the last posterior.

        Sets ``converged_``, ``n_iter_``, ``lower_bound_`` and ``lower_bounds_``.
        """
        do_init = not (self.warm_start and hasattr(self, "converged_"))
        n_init = self.n_init if do_init else 1
        interval = getattr(self, "verbose_interval", 1)
        best, best_bound = None, -np.inf
        self.converged_ = False
        for init in range(n_init):
            if self.verbose:
                print(f"Initialization {init}")
                start = time()
            if do_init:
                self._initialize(X, sample_weight, random_state)
            bound = -np.inf if do_init else self.lower_bound_
            bounds = []
            converged, n_iter = False, 0
            for n_iter in range(1, max_iter + 1):
                previous = bound
                posterior, log_prob = self._e_step(X)
                bound = self._objective(log_prob, sample_weight)
                self._m_step(X, posterior, sample_weight)
                bounds.append(bound)
                change = bound - previous
                if self.verbose >= 2 and n_iter % interval == 0:
                    print(
                        f"  Iteration {n_iter}\t time lapse {time() - start:.5f}s\t "
                        f"lower bound change {change:.5f}"
                    )
                if abs(change) < self.tol:
                    converged = True
                    break
            if self.verbose:
                state = "converged" if converged else "did not converge"
                print(
                    f"Initialization {state}. time lapse {time() - start:.5f}s\t "
                    f"lower bound {bound:.5f}"
                )
            # As scikit-learn: the best bound, or the last start when no bound
            # was computed (max_iter=0).
            if best is None or bound > best_bound or best_bound == -np.inf:
                best, best_bound = self._get_parameters(), bound
                best_iter, best_bounds = n_iter, bounds
                self.converged_ = converged
        if not self.converged_ and max_iter > 0:
            warnings.warn(
                f"EM did not converge in {max_iter} iterations (tol="
                f"{self.tol}): {self._convergence_advice}",
                ConvergenceWarning,
                stacklevel=3,
            )
        self._set_parameters(best)
        self.n_iter_ = best_iter
        self.lower_bound_ = best_bound
        self.lower_bounds_ = best_bounds
        return self._e_step(X)[0]
