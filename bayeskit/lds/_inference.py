"""What a fitted linear dynamical system answers: the filtered and smoothed
states, the log-likelihood, forecasts and samples (a mixin of
:class:`~bayeskit.LinearGaussianSSM`)."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from .._base.sequences import _split
from .._collections import handler_for
from ..graph.gaussian_chain import kalman_filter, kalman_smoother
from . import _checks

__all__ = ["Inference"]


class Inference:
    """The inference methods of a linear dynamical system: the estimator
    gives ``_current()`` (its parameters, validated) and ``_read``."""

    def _inputs(self, X, lengths):
        params = self._current()
        Y, lengths, as_list = self._read(X, lengths, reset=False)
        return params, Y, lengths, as_list

    def filter(self, X, lengths=None):
        """The filtered state of every step: ``E[x_t | y_1..t]`` and its covariance.

        Parameters
        ----------
        X, lengths :
            As in :meth:`fit`.

        Returns
        -------
        means : ndarray of shape (n_steps, n_components) (a list for a list X)
        covariances : ndarray of shape (n_steps, n_components, n_components)
            For a Dask array with ``lengths``, both are lazy Dask arrays; for
            a Dask bag of sequences, a lazy bag of one pair per sequence.
        """
        if (handler := handler_for(X)) is not None:
            return handler.states_lds(self, "filter", X, lengths)
        params, Y, lengths, as_list = self._inputs(X, lengths)
        result = kalman_filter(Y, lengths, params)
        return self._back(
            result.filtered_means, result.filtered_covariances, lengths, as_list
        )

    def smooth(self, X, lengths=None):
        """The smoothed state of every step: ``E[x_t | y]`` and its covariance.

        Parameters
        ----------
        X, lengths :
            As in :meth:`fit`.

        Returns
        -------
        means : ndarray of shape (n_steps, n_components) (a list for a list X)
        covariances : ndarray of shape (n_steps, n_components, n_components)
            For a Dask array with ``lengths``, both are lazy Dask arrays; for
            a Dask bag of sequences, a lazy bag of one pair per sequence.
        """
        if (handler := handler_for(X)) is not None:
            return handler.states_lds(self, "smooth", X, lengths)
        params, Y, lengths, as_list = self._inputs(X, lengths)
        result = kalman_smoother(Y, lengths, params)
        return self._back(result.means, result.covariances, lengths, as_list)

    @staticmethod
    def _back(means, covariances, lengths, as_list):
        if as_list:
            return _split(means, lengths), _split(covariances, lengths)
        return means, covariances

    def predict(self, X, lengths=None):
        """The smoothed state means, ``(n_steps, n_components)`` (lazy for
        Dask input: a Dask array, or a bag of one array per sequence)."""
        if (handler := handler_for(X)) is not None:
            return handler.states_lds(self, "predict", X, lengths)
        params, Y, lengths, as_list = self._inputs(X, lengths)
        means = kalman_smoother(Y, lengths, params).means
        return _split(means, lengths) if as_list else means

    def transform(self, X, lengths=None):
        """The smoothed state means (the latent features of every step).

        Parameters
        ----------
        X, lengths :
            As in :meth:`fit`.

        Returns
        -------
        Z : ndarray of shape (n_steps, n_components)
            (Rows of all sequences, also for a list X, so that the next step
            of a pipeline reads a table.)
        """
        if (handler := handler_for(X)) is not None:
            return handler.states_lds(self, "transform", X, lengths)
        params, Y, lengths, _ = self._inputs(X, lengths)
        return kalman_smoother(Y, lengths, params).means

    def fit_transform(self, X, y=None, *, lengths=None, **fit_params):
        """:meth:`fit`, then :meth:`transform` (``y`` ignored, as in a pipeline).

        Returns
        -------
        Z : ndarray of shape (n_steps, n_components)
        """
        return self.fit(X, lengths, **fit_params).transform(X, lengths)

    def score_sequences(self, X, lengths=None):
        """The log-likelihood of every sequence, shape ``(n_sequences,)`` (a
        Dask bag or array of them for Dask input)."""
        if (handler := handler_for(X)) is not None:
            return handler.predict_lds(self, "score_sequences", X, lengths)
        params, Y, lengths, _ = self._inputs(X, lengths)
        return kalman_filter(Y, lengths, params).log_likelihood

    def score(self, X, lengths=None, *, y=None):
        """The log-likelihood of all the sequences (their sum).

        ``lengths`` is the second positional argument, as in hmmlearn.
        """
        if (handler := handler_for(X)) is not None:
            return handler.predict_lds(self, "score", X, lengths)
        return float(self.score_sequences(X, lengths).sum())

    def forecast(self, X, n_steps=1, lengths=None):
        """The observations of the next ``n_steps`` steps after every sequence.

        Parameters
        ----------
        X, lengths :
            As in :meth:`fit`.
        n_steps : int, default=1
            How many steps ahead.

        Returns
        -------
        means : ndarray of shape (n_steps, n_features)
            ``E[y_{T+h} | y_1..T]`` for ``h = 1..n_steps`` (a list, one per
            sequence, when there are several sequences).
        covariances : ndarray of shape (n_steps, n_features, n_features)
            Their covariances.
        """
        _checks.check_positive_int(n_steps, "n_steps")
        params, Y, lengths, as_list = self._inputs(X, lengths)
        result = kalman_filter(Y, lengths, params)
        last = np.cumsum(lengths) - 1
        m, P = result.filtered_means[last], result.filtered_covariances[last]
        A, b, Q = (
            params.transition_matrix,
            params.transition_offset,
            params.transition_covariance,
        )
        C, off, R = (
            params.observation_matrix,
            params.observation_offset,
            params.observation_covariance,
        )
        means, covs = [], []
        for _ in range(n_steps):
            m = m @ A.T + b
            P = A @ P @ A.T + Q
            means.append(m @ C.T + off)
            covs.append(C @ P @ C.T + R)
        means = np.stack(means, axis=1)
        covs = np.stack(covs, axis=1)
        if len(lengths) == 1 and not as_list:
            return means[0], covs[0]
        return list(means), list(covs)

    def sample(self, n_samples=1, random_state=None):
        """Draw one sequence from the model.

        Parameters
        ----------
        n_samples : int, default=1
            The number of steps.
        random_state : int, RandomState instance or None, default=None
            None uses the estimator's ``random_state``.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
            The observations (hmmlearn's order: observations first).
        states : ndarray of shape (n_samples, n_components)
            The latent states.
        """
        params = self._current()
        _checks.check_positive_int(n_samples, "n_samples")
        rng = check_random_state(
            self.random_state if random_state is None else random_state
        )
        states, X = _checks.draw(params, n_samples, rng)
        return X, states
