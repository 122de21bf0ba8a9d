"""hmmlearn's ``ConvergenceMonitor``: what Baum-Welch did, iteration by iteration."""

from __future__ import annotations

import copy
import logging
import sys
from collections import deque
from time import time

import numpy as np

__all__ = ["ChangeMonitor", "ConvergenceMonitor", "MixtureMonitor"]

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

    def _begin(self, init):
        """A start begins (``init``: its index); nothing to say here."""

    def _end(self):
        """A start ends; nothing to say here."""

    @property
    def reached_tol(self):
        """Whether the last change of the objective was below ``tol`` in
        absolute value (the fitted model's ``converged_``)."""
        h = self.history
        return len(h) >= 2 and abs(h[-1] - h[-2]) < self.tol

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


class MixtureMonitor(ChangeMonitor):
    """scikit-learn's ``GaussianMixture`` habits: its stopping rule, the
    objective before the first iteration (``before``: the previous fit's
    ``lower_bound_`` under ``warm_start``, else None, minus infinity) and its
    messages, word for word (``verbose`` 1: every start and every
    ``interval``-th iteration; 2: also their times, the change of the
    objective and the last bound)."""

    def __init__(self, tol, n_iter, verbose=0, interval=1, before=None):
        super().__init__(tol, n_iter, verbose)
        self.interval = interval
        self.before = before

    def __deepcopy__(self, memo):
        # Every start of EM watches a copy (bayeskit._base.em): the history
        # is the one mutable field, the others numbers, bools and times.
        # (copy.deepcopy's generic walk costs a fifth of an iris E-step.)
        twin = copy.copy(self)
        twin.history = deque(self.history)
        return twin

    def _last_change(self):
        h = self.history
        previous = h[-2] if len(h) >= 2 else self.before
        return h[-1] - (-np.inf if previous is None else previous)

    @property
    def reached_tol(self):
        return bool(self.history) and abs(self._last_change()) < self.tol

    @property
    def converged(self):
        return self.iter == self.n_iter or self.reached_tol

    def _begin(self, init):
        if self.verbose:
            print(f"Initialization {init}")
            self._start_time = self._iter_time = time()

    def report(self, log_prob):
        self.history.append(log_prob)
        self.iter += 1
        if not self.verbose or self.iter % self.interval:
            return
        if self.verbose == 1:
            print(f"  Iteration {self.iter}")
            return
        now = time()
        print(
            f"  Iteration {self.iter}\t time lapse {now - self._iter_time:.5f}s\t "
            f"ll change {self._last_change():.5f}"
        )
        self._iter_time = now

    def _end(self):
        if not self.verbose:
            return
        state = "converged" if self.reached_tol else "did not converge"
        if self.verbose == 1:
            print(f"Initialization {state}.")
            return
        bound = self.history[-1] if self.history else self.before
        bound = -np.inf if bound is None else bound
        print(
            f"Initialization {state}. time lapse {time() - self._start_time:.5f}s\t "
            f"lower bound {bound:.5f}."
        )
