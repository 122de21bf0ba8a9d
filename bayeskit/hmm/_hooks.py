"""hmmlearn's monitor, hooks and sampling of a hidden Markov model.

A mixin of :class:`~bayeskit.hmm._base.BaseHMM`: the ``monitor_`` that
Baum-Welch reports to, hmmlearn's hooks ``_check_and_set_n_features`` and
``_check``, the stationary distribution, and :meth:`HMMHooks.sample`, which
draws as hmmlearn's ``sample`` draws.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state

from .._base.monitor import ConvergenceMonitor
from .._validation import check_is_fitted, check_n_samples
from ._checks import check_currstate
from ._labelled import named

__all__ = ["HMMHooks"]


class HMMHooks:
    """hmmlearn's monitor, hooks and sampling (a mixin of ``BaseHMM``)."""

    @property
    def monitor_(self):
        """hmmlearn's ``ConvergenceMonitor``: what Baum-Welch did (after
        ``fit``), or the one the next ``fit`` reports to. A monitor assigned
        here (a subclass with its own stopping rule, say) is used by ``fit``."""
        monitor = self.__dict__.get("_monitor")
        if monitor is None:
            return ConvergenceMonitor(self.tol, self.n_iter, self.verbose)
        return monitor

    @monitor_.setter
    def monitor_(self, monitor):
        self._monitor = monitor
        self._monitor_given = monitor is not self.__dict__.get("_monitor_made")

    def _new_monitor(self):
        """The monitor of this fit: the one assigned to ``monitor_``, or a new
        one with the current ``tol``, ``n_iter`` and ``verbose``."""
        if self.__dict__.get("_monitor_given"):
            return self._monitor
        self._monitor_made = ConvergenceMonitor(self.tol, self.n_iter, self.verbose)
        return self._monitor_made

    def _check_and_set_n_features(self, X):
        """hmmlearn's hook: check the number of features of ``X`` against
        ``n_features`` if that is set, or set it."""
        n = np.shape(X)[1]
        if hasattr(self, "n_features"):
            if self.n_features != n:
                raise ValueError(
                    f"Unexpected number of dimensions, got {n} but expected "
                    f"{self.n_features}"
                )
        else:
            self.n_features = n

    def _check(self):
        """hmmlearn's hook: validate the hyperparameters and the parameters
        (shapes, rows summing to one); raises ValueError."""
        self._validate_params()
        self._current_params()

    def get_stationary_distribution(self):
        """The stationary distribution of the states: the left eigenvector of
        ``transmat_`` for eigenvalue 1, normalised."""
        check_is_fitted(self, "transmat_")
        values, vectors = np.linalg.eig(np.asarray(self.transmat_, dtype=float).T)
        vector = np.real_if_close(vectors[:, np.argmin(np.abs(values - 1.0))])
        return vector / vector.sum()

    def sample(self, n_samples=1, random_state=None, currstate=None):
        """Draw one sequence of ``n_samples`` steps: ``(X, states)``.

        The draws are hmmlearn's, in its order, so the same ``random_state``
        gives hmmlearn's sequence: the first state (``currstate`` if given,
        else the first index whose cumulative ``startprob_`` exceeds a uniform
        draw), its observation, then for every further step the next state
        (the same rule on the current state's row of ``transmat_``) and its
        observation. ``random_state`` None reads the model's ``random_state``.
        ``n_samples`` is a non-negative integer (a TypeError or ValueError
        naming it otherwise).

        Parameters
        ----------
        n_samples : int, default=1
            Number of steps.
        random_state : int, RandomState instance or None, default=None
            The generator of the draws (None: the model's ``random_state``).
        currstate : int or state name, default=None
            The state of the first step; None draws it from ``startprob_``.
            A model fitted with named states also takes one of its
            ``state_names_``.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
            The observations.
        states : ndarray of shape (n_samples,)
            The state of every step: indices (int), or the states' names
            (``state_names_``) when the model was fitted with named states,
            as :meth:`predict` gives them.
        """
        check_n_samples(n_samples)
        check_is_fitted(self)
        params = self._current_params()
        currstate = check_currstate(self, currstate)
        rng = check_random_state(
            self.random_state if random_state is None else random_state
        )
        kept = self.__dict__.get("_generator")
        if random_state is None and kept is not None:
            seed = self.random_state
            if isinstance(seed, Integral) and not isinstance(seed, bool):
                if seed == kept[0]:
                    rng = kept[1]  # hmmlearn's model drew its start from it
        draw = self._sampler(params)
        if n_samples == 0:
            return self._samples(draw(None, rng)), named(self, np.zeros(0, dtype=int))
        # hmmlearn's rule, a cumulative table against one uniform draw per step.
        start_cdf = np.cumsum(params.structure.startprob)
        trans_cdf = np.cumsum(params.structure.transmat, axis=1)
        state = currstate
        if state is None:
            state = (start_cdf > rng.rand()).argmax()
        states, X = [state], [draw(state, rng)]
        for _ in range(n_samples - 1):
            state = (trans_cdf[state] > rng.rand()).argmax()
            states.append(state)
            X.append(draw(state, rng))
        return self._samples(np.atleast_2d(X)), named(self, np.array(states, dtype=int))

    def _sampler(self, params):
        """``draw(state, rng)``: one observation of ``state``, drawn as
        hmmlearn's ``_generate_sample_from_state`` draws it;
        ``draw(None, rng)`` is the empty sample ``(0, n_features)``."""
        raise NotImplementedError

    def _samples(self, X):
        """The family's samples as the model gives them out."""
        return X
