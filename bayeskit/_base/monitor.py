"""hmmlearn's ``ConvergenceMonitor``: what Baum-Welch did, iteration by iteration."""

from __future__ import annotations

import logging
import sys
from collections import deque

import numpy as np

__all__ = ["ConvergenceMonitor"]

# The hidden Markov models' logger, as before the monitor had its own module.
_log = logging.getLogger("bayeskit.hmm")


class ConvergenceMonitor:
    """What Baum-Welch did, with hmmlearn's ``ConvergenceMonitor`` interface.

    Parameters
    ----------
    tol : float
        EM has converged when the objective gains less than ``tol``.
    n_iter : int
        The iteration budget.
    verbose : bool
        Whether :meth:`report` prints every iteration to standard error.

    Attributes
    ----------
    history : collections.deque of float
        The monitored objective of every iteration (after ``fit``: the log
        posterior, log-likelihood of all sequences plus the log prior
        densities, of the best start).
    iter : int
        Iterations run.
    converged : bool
        hmmlearn's stopping rule: the budget is spent, or the last gain is
        below ``tol``. The estimator's ``converged_`` says whether the gain
        fell below ``tol``.
    """

    _template = "{iter:>10d} {log_prob:>16.8f} {delta:>+16.8f}"

    def __init__(self, tol, n_iter, verbose=False):
        self.tol = tol
        self.n_iter = n_iter
        self.verbose = verbose
        self.history = deque()
        self.iter = 0

    def __repr__(self):
        return (
            f"{type(self).__name__}(tol={self.tol}, n_iter={self.n_iter}, "
            f"verbose={self.verbose}, iter={self.iter}, "
            f"history={list(self.history)})"
        )

    def _reset(self):
        self.iter = 0
        self.history.clear()

    def report(self, log_prob):
        """Record one iteration's objective (printed when ``verbose``)."""
        if self.verbose:
            delta = log_prob - self.history[-1] if self.history else np.nan
            line = self._template.format(
                iter=self.iter + 1, log_prob=log_prob, delta=delta
            )
            print(line, file=sys.stderr)
        tolerance = np.sqrt(np.finfo(float).eps)
        if self.history and log_prob - self.history[-1] < -tolerance:
            _log.warning(
                "Model is not converging.  Current: %s is not greater than %s. "
                "Delta is %s",
                log_prob,
                self.history[-1],
                log_prob - self.history[-1],
            )
        self.history.append(log_prob)
        self.iter += 1

    @property
    def converged(self):
        """Budget spent, or the last gain below ``tol``."""
        return self.iter == self.n_iter or (
            len(self.history) >= 2 and self.history[-1] - self.history[-2] < self.tol
        )


class ChangeMonitor(ConvergenceMonitor):
    """scikit-learn's stopping rule for a mixture's EM: the objective (per
    sample) changed by less than ``tol`` in absolute value, or the budget
    (``max_iter``) is spent. A decrease is no log message here: scikit-learn's
    mixtures do not log one."""

    @property
    def converged(self):
        return self.iter == self.n_iter or (
            len(self.history) >= 2
            and abs(self.history[-1] - self.history[-2]) < self.tol
        )

    def report(self, log_prob):
        if self.verbose:
            print(f"  Iteration {self.iter + 1}\t lower bound {log_prob:.5f}")
        self.history.append(log_prob)
        self.iter += 1
