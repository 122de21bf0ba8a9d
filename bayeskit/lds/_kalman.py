"""``KalmanFilter``: the linear dynamical system with pykalman's names and habits."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state

from .._validation import Interval
from . import _params
from ._checks import check_positive_int, draw
from ._ssm import LinearGaussianSSM

__all__ = ["KalmanFilter"]


class KalmanFilter(LinearGaussianSSM):
    """:class:`~bayeskit.LinearGaussianSSM` with pykalman's defaults and methods.

    A pykalman user's calls mean what they mean in pykalman 0.11:
    ``n_dim_state`` and ``n_dim_obs`` size the model, ``em_vars=None`` learns
    pykalman's default set (the two noise covariances and the initial state's
    mean and covariance), every parameter not given starts at pykalman's
    default (identity matrices and covariances, zero offsets and mean), and
    :meth:`em`, :meth:`loglikelihood` and :meth:`sample` are pykalman's. It is
    also a scikit-learn estimator: :meth:`fit` is :meth:`em` that leaves the
    constructor's parameters unchanged and sets the fitted ``*_`` attributes.

    Parameters
    ----------
    transition_matrices, observation_matrices, transition_covariance, \
observation_covariance, transition_offsets, observation_offsets, \
initial_state_mean, initial_state_covariance : array-like, default=None
        As :class:`~bayeskit.LinearGaussianSSM` (pykalman's names).
    random_state : int, RandomState instance or None, default=None
        Seeds :meth:`sample` and the random starts of ``n_init``.
    em_vars : 'all' or list of str, default=None
        The parameters EM learns; None is pykalman's default set.
    n_dim_state : int, default=None
        The latent dimension (None: read from the parameters, else 1).
    n_dim_obs : int, default=None
        The dimension of the observations (None: read from the data). Given,
        it must match the data.
    n_iter : int, default=10
        EM iterations of :meth:`fit` (pykalman's ``em`` default).
    tol : float, default=0.0
        :meth:`fit` stops early only when the log posterior stops increasing
        (pykalman runs every iteration).
    transition_covariance_prior, observation_covariance_prior, \
initial_state_covariance_prior, transition_covariance_prior_weight, \
observation_covariance_prior_weight, initial_state_covariance_prior_weight, \
transition_matrices_prior, observation_matrices_prior, initial_state_mean_prior, \
transition_matrices_prior_weight, observation_matrices_prior_weight, \
initial_state_mean_prior_weight, n_init, verbose :
        As :class:`~bayeskit.LinearGaussianSSM`.

    Attributes
    ----------
    transition_matrices_, observation_matrices_, transition_covariance_, \
observation_covariance_, transition_offsets_, observation_offsets_, \
initial_state_mean_, initial_state_covariance_ : ndarray
        The fitted parameters.

    See Also
    --------
    LinearGaussianSSM : the same model with bayeskit's defaults.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import KalmanFilter
    >>> kf = KalmanFilter(transition_matrices=[[1, 1], [0, 1]],
    ...                   observation_matrices=[[0.1, 0.5], [-0.3, 0.0]])
    >>> X = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
    >>> kf = kf.em(X, n_iter=5)
    >>> means, covariances = kf.smooth(X)
    >>> means.shape
    (3, 2)
    """

    _parameter_constraints: dict = {
        **{
            k: v
            for k, v in LinearGaussianSSM._parameter_constraints.items()
            if k != "n_components"
        },
        "n_dim_state": [Interval(Integral, 1, None, closed="left"), None],
        "n_dim_obs": [Interval(Integral, 1, None, closed="left"), None],
    }

    _data_start = False

    def __init__(
        self,
        transition_matrices=None,
        observation_matrices=None,
        transition_covariance=None,
        observation_covariance=None,
        transition_offsets=None,
        observation_offsets=None,
        initial_state_mean=None,
        initial_state_covariance=None,
        random_state=None,
        em_vars=None,
        n_dim_state=None,
        n_dim_obs=None,
        *,
        n_iter=10,
        tol=0.0,
        transition_covariance_prior=None,
        observation_covariance_prior=None,
        initial_state_covariance_prior=None,
        transition_covariance_prior_weight=0.0,
        observation_covariance_prior_weight=0.0,
        initial_state_covariance_prior_weight=0.0,
        transition_matrices_prior=None,
        observation_matrices_prior=None,
        initial_state_mean_prior=None,
        transition_matrices_prior_weight=0.0,
        observation_matrices_prior_weight=0.0,
        initial_state_mean_prior_weight=0.0,
        n_init=1,
        verbose=False,
    ):
        self.transition_matrices = transition_matrices
        self.observation_matrices = observation_matrices
        self.transition_covariance = transition_covariance
        self.observation_covariance = observation_covariance
        self.transition_offsets = transition_offsets
        self.observation_offsets = observation_offsets
        self.initial_state_mean = initial_state_mean
        self.initial_state_covariance = initial_state_covariance
        self.random_state = random_state
        self.em_vars = em_vars
        self.n_dim_state = n_dim_state
        self.n_dim_obs = n_dim_obs
        self.n_iter = n_iter
        self.tol = tol
        self.transition_covariance_prior = transition_covariance_prior
        self.observation_covariance_prior = observation_covariance_prior
        self.initial_state_covariance_prior = initial_state_covariance_prior
        self.transition_covariance_prior_weight = transition_covariance_prior_weight
        self.observation_covariance_prior_weight = observation_covariance_prior_weight
        self.initial_state_covariance_prior_weight = (
            initial_state_covariance_prior_weight
        )
        self.transition_matrices_prior = transition_matrices_prior
        self.observation_matrices_prior = observation_matrices_prior
        self.initial_state_mean_prior = initial_state_mean_prior
        self.transition_matrices_prior_weight = transition_matrices_prior_weight
        self.observation_matrices_prior_weight = observation_matrices_prior_weight
        self.initial_state_mean_prior_weight = initial_state_mean_prior_weight
        self.n_init = n_init
        self.verbose = verbose

    def _n_components_param(self):
        return self.n_dim_state

    def _setup(self, Y):
        if self.n_dim_obs is not None and self.n_dim_obs != Y.shape[1]:
            raise ValueError(
                f"n_dim_obs is {self.n_dim_obs} but X has {Y.shape[1]} features"
            )
        return super()._setup(Y)

    def _current(self):
        if hasattr(self, "stats_") or hasattr(self, "transition_matrices_"):
            return super()._current()
        # pykalman filters with the constructor's parameters, no fit needed.
        d = self._n_obs_unfitted()
        self.n_features_in_ = d
        given = self._given()
        k = _params.n_state_of(given, self.n_dim_state)
        checked = _params.check_params(given, k, d)
        return _params.start(checked, k, d, frozenset(), np.empty((0, d)), False, None)

    def _n_obs_unfitted(self):
        for name, axis in (
            ("observation_matrices", 0),
            ("observation_offsets", 0),
            ("observation_covariance", 0),
        ):
            value = getattr(self, name)
            if value is not None and np.ndim(value) > axis:
                return int(np.shape(value)[axis])
        return 1 if self.n_dim_obs is None else int(self.n_dim_obs)

    def __sklearn_is_fitted__(self):
        return True  # the constructor's parameters are a model already

    def em(self, X, y=None, n_iter=10, em_vars=None):
        """pykalman's ``em``: EM from the current parameters, written back.

        Runs ``n_iter`` iterations (all of them) on the single sequence (or the
        list of sequences) ``X`` and stores the result in the constructor's
        parameters, as pykalman does, and in the fitted ``*_`` attributes.

        Parameters
        ----------
        X : array-like of shape (n_steps, n_dim_obs) or list of array-like
            NaN (or a masked step) marks a missing value.
        y : None
            Ignored.
        n_iter : int, default=10
        em_vars : 'all' or list of str, default=None
            None is the estimator's ``em_vars``.

        Returns
        -------
        self : object
        """
        if not hasattr(self, "stats_"):
            self._validate_params()
        Y, lengths, weights, _ = self._data(X, None, None, reset=True)
        # Every iteration runs (tol -inf), from the current parameters.
        self._em(Y, self._e_step(Y, lengths, weights), n_iter, -np.inf, 1, em_vars)
        for name in _params.NAMES:
            setattr(self, name, getattr(self, f"{name}_"))
        self.n_dim_state = self.n_components_
        return self

    def loglikelihood(self, X):
        """pykalman's ``loglikelihood``: the log-likelihood of ``X``."""
        return self.score(X)

    def sample(self, n_timesteps, initial_state=None, random_state=None):
        """pykalman's ``sample``: ``(states, observations)`` of one sequence.

        Parameters
        ----------
        n_timesteps : int
        initial_state : array-like of shape (n_dim_state,), default=None
            The first state (None: drawn from the initial distribution).
        random_state : int, RandomState instance or None, default=None
            None uses the estimator's ``random_state``.

        Returns
        -------
        states : ndarray of shape (n_timesteps, n_dim_state)
        observations : ndarray of shape (n_timesteps, n_dim_obs)
        """
        params = self._current()
        check_positive_int(n_timesteps, "n_timesteps")
        if initial_state is not None:
            initial_state = _params.check_value(
                "initial_state", initial_state, (params.n_state,)
            )
        rng = check_random_state(
            self.random_state if random_state is None else random_state
        )
        return draw(params, n_timesteps, rng, initial_state)
