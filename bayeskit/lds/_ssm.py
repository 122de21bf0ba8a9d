"""The linear dynamical system as a scikit-learn estimator."""

from __future__ import annotations

from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.utils import TransformerTags, check_random_state

from .._base.classifier import float_input
from .._base.em import described
from .._base.monitor import ConvergenceMonitor
from .._base.sequences import _as_rows, _check_sequence_weight
from .._collections import handler_for
from .._validation import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)
from ..graph.gaussian_chain import (
    GaussianChainParams,
    kalman_smoother,
)
from ..priors import NormalInverseWishart
from . import _checks, _params
from ._inference import Inference
from ._stats import (
    CovariancePrior,
    LDSStats,
    MeanPrior,
    expected_stats,
    log_prior,
    map_params,
)

__all__ = ["LinearGaussianSSM"]

_PRIORS = {  # field of GaussianChainParams -> prefix of its prior's parameters
    "transition_covariance": "transition_covariance",
    "observation_covariance": "observation_covariance",
    "initial_covariance": "initial_state_covariance",
}


def _covariance_param():
    return ["array-like", None]


class LinearGaussianSSM(Inference, DensityMixin, BaseEstimator):
    """Linear dynamical system (Kalman filter and smoother), fitted by EM.

    The hidden Markov model's chain with a Gaussian state vector: the state
    ``x_t`` of dimension ``n_components`` evolves linearly with Gaussian noise
    and is seen through a linear map with Gaussian noise. Filtering,
    smoothing and the log-likelihood are Gaussian belief propagation on the
    chain (the square-root Kalman filter and Rauch-Tung-Striebel smoother of
    ``bayeskit.graph.gaussian_chain``); fitting is EM over many sequences,
    learning the parameters named in ``em_vars`` (pykalman's names and
    meaning) and keeping the others at their given values.

    Parameters
    ----------
    n_components : int, default=None
        The dimension of the latent state. None reads it from the given
        parameters (pykalman's rule), and is 1 when none is given.
    transition_matrices : array-like of shape (n_components, n_components), default=None
        ``A``: the value EM starts from (or keeps, if not learned). None is
        the identity.
    observation_matrices : array-like of shape (n_features, n_components), default=None
        ``C``. None is a start from the data (the principal axes of the
        observations) when EM learns it, else pykalman's ``eye(n_features,
        n_components)``.
    transition_covariance : array-like of shape (n_components, n_components), \
default=None
        ``Q``, symmetric positive definite. None is the identity.
    observation_covariance : array-like of shape (n_features, n_features), default=None
        ``R``, symmetric positive definite. None is the identity, or a start
        from the data when EM learns ``C`` or ``R``.
    transition_offsets : array-like of shape (n_components,), default=None
        ``b``. None is zero.
    observation_offsets : array-like of shape (n_features,), default=None
        ``d``. None is zero, or the mean of the data when EM learns it.
    initial_state_mean : array-like of shape (n_components,), default=None
        ``mu_0``. None is zero.
    initial_state_covariance : array-like of shape (n_components, n_components), \
default=None
        ``P_0``, symmetric positive definite. None is the identity.
    em_vars : 'all' or list of str, default='all'
        The parameters EM learns, by the names above (pykalman's); the others
        keep their given (or default) values. None is pykalman's default,
        the two noise covariances and the initial state's mean and
        covariance.
    n_iter : int, default=10
        The maximum number of EM iterations.
    tol : float, default=1e-2
        EM stops when the log posterior gains less than ``tol``.
    transition_covariance_prior, observation_covariance_prior, \
initial_state_covariance_prior : array-like, default=None
        The prior covariance ``S`` of the inverse-Wishart prior of ``Q``,
        ``R`` and ``P_0`` (None: the identity); used with a positive weight.
    transition_covariance_prior_weight, observation_covariance_prior_weight, \
initial_state_covariance_prior_weight : float, default=0.0
        ``eta``: the number of virtual samples of covariance ``S``; the MAP
        estimate is ``(scatter + eta S) / (n + eta)``. 0 is maximum
        likelihood.
    transition_matrices_prior, observation_matrices_prior, \
initial_state_mean_prior : array-like, default=None
        The prior mean ``M`` of ``A``, of ``C`` and of ``mu_0`` (None: zero).
    transition_matrices_prior_weight, observation_matrices_prior_weight, \
initial_state_mean_prior_weight : float, default=0.0
        ``lambda``: the weight of a Gaussian prior on ``A`` given ``Q`` (each
        column of ``A - M`` has covariance ``Q / lambda``), on ``C`` given
        ``R``, and on ``mu_0`` given ``P_0``: the MAP estimate is the ridge
        ``(S_yx + lambda M)(S_xx + lambda I)^{-1}`` (for ``mu_0``, the mean
        of ``n`` values and ``lambda`` virtual ones at ``M``). 0 is maximum
        likelihood.
    n_init : int, default=1
        The number of EM runs, from the data start and then from random
        observation matrices; the best log posterior is kept.
    random_state : int, RandomState instance or None, default=None
        Seeds the random starts of ``n_init`` and :meth:`sample`.
    verbose : bool, default=False
        Print the log posterior of every iteration to standard error.

    Attributes
    ----------
    transition_matrices_, observation_matrices_, transition_covariance_, \
observation_covariance_, transition_offsets_, observation_offsets_, \
initial_state_mean_, initial_state_covariance_ : ndarray
        The fitted parameters (pykalman's names, with scikit-learn's
        trailing underscore).
    n_components_ : int
        The latent dimension.
    n_features_in_ : int
        The dimension of the observations.
    stats_ : LDSStats
        The expected statistics the parameters were derived from.
    monitor_ : ConvergenceMonitor
        What EM did (hmmlearn's monitor).
    n_iter_ : int
        EM iterations run (of the best start).
    converged_ : bool
        Whether the last gain was below ``tol``.
    lower_bound_ : float
        The log posterior (log-likelihood of all sequences plus the log prior)
        of the last E-step.

    See Also
    --------
    KalmanFilter : the same model with pykalman's defaults and methods.
    bayeskit.GaussianHMM : the chain with a discrete state.

    Notes
    -----
    The model (Bishop 2006, section 13.3; Roweis and Ghahramani 1999):

    .. math::

        x_0 \\sim \\mathcal N(\\mu_0, P_0), \\quad
        x_{t+1} = A x_t + b + w_t, \\; w_t \\sim \\mathcal N(0, Q), \\quad
        y_t = C x_t + d + v_t, \\; v_t \\sim \\mathcal N(0, R).

    Sequences come as hmmlearn's rows plus ``lengths`` or as a list with one
    array per sequence. NaN marks a missing value: a step whose values are all
    missing is a gap the chain moves through; a step with some values missing
    is updated with the observed ones (the missing ones are marginalised),
    and EM takes their expected values (Shumway and Stoffer 2006, section
    6.4). Each EM iteration is pykalman's sequence of conditional
    maximisations summed over the sequences (each weighted by its
    ``sequence_weight``); it never decreases the log posterior.

    The parameters are time-invariant (pykalman also takes one matrix per
    step; here that is a ValueError).

    References
    ----------
    .. [1] R. E. Kalman, "A new approach to linear filtering and prediction
       problems", Journal of Basic Engineering 82(1), 35-45, 1960.
    .. [2] R. H. Shumway and D. S. Stoffer, "An approach to time series
       smoothing and forecasting using the EM algorithm", Journal of Time
       Series Analysis 3(4), 253-264, 1982.
    .. [3] S. Roweis and Z. Ghahramani, "A unifying review of linear Gaussian
       models", Neural Computation 11(2), 305-345, 1999.
    .. [4] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
       2006, section 13.3.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import LinearGaussianSSM
    >>> rng = np.random.default_rng(0)
    >>> x = np.cumsum(rng.normal(size=(200, 1)), axis=0)
    >>> X = x @ np.array([[1.0, -0.5]]) + 0.1 * rng.normal(size=(200, 2))
    >>> model = LinearGaussianSSM(n_components=1, n_iter=20).fit(X)
    >>> means, covariances = model.smooth(X)
    >>> means.shape, covariances.shape
    ((200, 1), (200, 1, 1))
    """

    # Statistics are expected under the fitted parameters: those of several
    # parameters of one model add (incremental EM; bayeskit._layout).
    _em_statistics = True

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "transition_matrices": ["array-like", None],
        "observation_matrices": ["array-like", None],
        "transition_covariance": ["array-like", None],
        "observation_covariance": ["array-like", None],
        "transition_offsets": ["array-like", None],
        "observation_offsets": ["array-like", None],
        "initial_state_mean": ["array-like", None],
        "initial_state_covariance": ["array-like", None],
        "em_vars": [StrOptions({"all"}), "array-like", None],
        "n_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "transition_covariance_prior": ["array-like", None],
        "observation_covariance_prior": ["array-like", None],
        "initial_state_covariance_prior": ["array-like", None],
        "transition_covariance_prior_weight": [Interval(Real, 0, None, closed="left")],
        "observation_covariance_prior_weight": [Interval(Real, 0, None, closed="left")],
        "initial_state_covariance_prior_weight": [
            Interval(Real, 0, None, closed="left")
        ],
        "transition_matrices_prior": ["array-like", None],
        "observation_matrices_prior": ["array-like", None],
        "initial_state_mean_prior": ["array-like", None],
        "transition_matrices_prior_weight": [Interval(Real, 0, None, closed="left")],
        "observation_matrices_prior_weight": [Interval(Real, 0, None, closed="left")],
        "initial_state_mean_prior_weight": [Interval(Real, 0, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # Whether EM starts the observation model it learns from the data (False:
    # pykalman's defaults, for KalmanFilter).
    _data_start = True

    def __init__(
        self,
        n_components=None,
        *,
        transition_matrices=None,
        observation_matrices=None,
        transition_covariance=None,
        observation_covariance=None,
        transition_offsets=None,
        observation_offsets=None,
        initial_state_mean=None,
        initial_state_covariance=None,
        em_vars="all",
        n_iter=10,
        tol=1e-2,
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
        random_state=None,
        verbose=False,
    ):
        self.n_components = n_components
        self.transition_matrices = transition_matrices
        self.observation_matrices = observation_matrices
        self.transition_covariance = transition_covariance
        self.observation_covariance = observation_covariance
        self.transition_offsets = transition_offsets
        self.observation_offsets = observation_offsets
        self.initial_state_mean = initial_state_mean
        self.initial_state_covariance = initial_state_covariance
        self.em_vars = em_vars
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
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # missing values are latent
        tags.transformer_tags = TransformerTags(preserves_dtype=["float64"])
        return tags

    # -- hooks a subclass with other names changes ------------------------------
    def _n_components_param(self):
        return self.n_components

    def _em_vars_param(self):
        return self.em_vars

    def _given(self) -> dict:
        return {name: getattr(self, name) for name in _params.NAMES}

    # -- input ---------------------------------------------------------------------
    def _read(self, X, lengths, reset):
        """``(Y, lengths, as_list)``: the rows of all sequences, validated."""
        if isinstance(X, np.ma.MaskedArray):
            X = _checks.masked_to_nan(X)
        elif isinstance(X, (list, tuple)) and any(
            isinstance(s, np.ma.MaskedArray) for s in X
        ):
            X = [
                _checks.masked_to_nan(s) if isinstance(s, np.ma.MaskedArray) else s
                for s in X
            ]
        X, lengths, as_list = _as_rows(X, lengths, lambda rows: True)
        if as_list and np.ndim(X) == 1:
            X = np.asarray(X)[:, None]
        Y = validate_data(
            self, X, reset=reset, dtype=np.float64, ensure_all_finite="allow-nan"
        )
        return float_input(Y), np.asarray(lengths, dtype=np.intp), as_list

    def _data(self, X, lengths, sequence_weight, reset):
        Y, lengths, as_list = self._read(X, lengths, reset)
        weights = _check_sequence_weight(sequence_weight, len(lengths))
        return Y, lengths, weights, as_list

    # -- parameters ------------------------------------------------------------
    def _priors(self, k: int, d: int) -> dict:
        priors = {}
        dims = {
            "transition_covariance": k,
            "observation_covariance": d,
            "initial_covariance": k,
        }
        for field, prefix in _PRIORS.items():
            name = f"{prefix}_prior"
            weight = float(getattr(self, f"{name}_weight"))
            S = getattr(self, name)
            if S is None:
                S = np.eye(dims[field])
            else:
                S = _params.check_value(name, S, (dims[field], dims[field]))
            niw = NormalInverseWishart.from_covariance(S, weight)
            priors[field] = CovariancePrior(
                niw.scatter_matrix(dims[field]), float(niw.covariance_weight)
            )
        for field, prefix, shape in (
            ("transition_matrix", "transition_matrices", (k, k)),
            ("observation_matrix", "observation_matrices", (d, k)),
            ("initial_mean", "initial_state_mean", (k,)),
        ):
            name = f"{prefix}_prior"
            M = getattr(self, name)
            M = np.zeros(shape) if M is None else _params.check_value(name, M, shape)
            priors[field] = MeanPrior(M, float(getattr(self, f"{name}_weight")))
        return priors

    def _current(self) -> GaussianChainParams:
        """The fitted parameters as the chain kernels read them."""
        check_is_fitted(self)
        return GaussianChainParams(
            **{f: getattr(self, f"{n}_") for n, f in _params.NAMES.items()}
        )

    def _set(self, params: GaussianChainParams) -> None:
        for name, field in _params.NAMES.items():
            setattr(self, f"{name}_", np.array(getattr(params, field)))
        self.n_components_ = params.n_state

    def _objective(self, stats: LDSStats, params, priors) -> float:
        return stats.log_evidence + log_prior(params, priors)

    # -- fitting ---------------------------------------------------------------
    def _summarize(self, Y, lengths, weights, params) -> LDSStats:
        smoothed = kalman_smoother(Y, lengths, params)
        return expected_stats(Y, lengths, weights, params, smoothed)

    def _setup(self, Y):
        d = Y.shape[1]
        given = self._given()
        k = _params.n_state_of(given, self._n_components_param())
        checked = _params.check_params(given, k, d)
        learn = _params.resolve_em_vars(self._em_vars_param())
        return k, d, checked, learn, self._priors(k, d)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, lengths=None, *, y=None, sequence_weight=None):
        """Estimate the parameters named in ``em_vars`` by EM.

        Every iteration is :meth:`summarize` on all the sequences followed by
        :meth:`from_stats`; ``stats_`` keeps the statistics of the last one.

        Parameters
        ----------
        X : array-like of shape (n_steps, n_features) or list of array-like
            The steps of all sequences concatenated (with ``lengths``), or one
            array per sequence. NaN marks a missing value.
        lengths : array-like of int of shape (n_sequences,), default=None
            Steps of each sequence when X is concatenated; None is one
            sequence (hmmlearn's second positional argument).
        y : None
            Ignored; keyword only.
        sequence_weight : array-like of shape (n_sequences,), default=None
            The weight of each sequence in the statistics (an integer weight
            counts it that many times). None weighs each 1.

        Returns
        -------
        self : object
        """
        if (handler := handler_for(X)) is not None:  # a Dask bag or array
            return handler.fit_lds(self, X, lengths, sequence_weight)
        Y, lengths, weights, _ = self._data(X, lengths, sequence_weight, reset=True)
        return self._em(
            Y, self._e_step(Y, lengths, weights), self.n_iter, self.tol, self.n_init
        )

    def _e_step(self, Y, lengths, weights):
        return lambda params: self._summarize(Y, lengths, weights, params)

    def _em(self, Y, e_step, n_iter, tol, n_init, em_vars=None):
        """EM from ``n_init`` starts; the best log posterior's parameters.

        ``Y`` are the steps the start reads (all of them, or a sample of a
        Dask collection's), ``e_step(params)`` the statistics of all the data.
        """
        k, d, checked, learn, priors = self._setup(Y)
        if em_vars is not None:
            learn = _params.resolve_em_vars(em_vars)
        rng = check_random_state(self.random_state)
        best = None
        for run in range(n_init):
            params = _params.start(
                checked, k, d, learn, Y, self._data_start, None if run == 0 else rng
            )
            monitor = ConvergenceMonitor(tol, n_iter, self.verbose)
            stats = None
            for _ in range(n_iter):
                stats = e_step(params)
                monitor.report(self._objective(stats, params, priors))
                params = map_params(stats, params, learn, priors)
                _checks.check_definite(params, stats.n_obs)
                if monitor.converged:
                    break
            if stats is None:  # n_iter=0: the start, and its statistics
                stats = e_step(params)
                monitor.history.append(self._objective(stats, params, priors))
            objective = monitor.history[-1]
            if best is None or objective > best[0]:
                best = (objective, params, stats, monitor)
        objective, params, stats, monitor = best
        self._set(params)
        self.stats_ = stats
        self.monitor_ = monitor
        self.n_iter_ = monitor.iter
        self.lower_bound_ = float(objective)
        self.converged_ = bool(
            len(monitor.history) >= 2
            and monitor.history[-1] - monitor.history[-2] < tol
        )
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, lengths=None, *, y=None, sequence_weight=None):
        """One step of incremental EM on a chunk of sequences.

        The E-step runs on the chunk under the current parameters; its
        statistics are added to ``stats_`` and the M-step derives the
        parameters from the sum (Neal and Hinton 1998). A model with no
        statistics yet starts as :meth:`fit` does.

        Parameters
        ----------
        X, lengths, y, sequence_weight :
            As in :meth:`fit`.

        Returns
        -------
        self : object
        """
        first = not hasattr(self, "stats_")
        Y, lengths, weights, _ = self._data(X, lengths, sequence_weight, reset=first)
        k, d, checked, learn, priors = self._setup(Y)
        if first:
            params = _params.start(checked, k, d, learn, Y, self._data_start, None)
            total = LDSStats.zeros(k, d)
        else:
            params, total = self._current(), self.stats_
        total = total + self._summarize(Y, lengths, weights, params)
        params = map_params(total, params, learn, priors)
        _checks.check_definite(params, len(Y))
        self._set(params)
        self.stats_ = total
        return self

    def summarize(self, X, lengths=None, *, sequence_weight=None) -> LDSStats:
        """Expected statistics of a chunk of sequences under the current parameters.

        Statistics of chunks add with ``+``, so one EM iteration over data in
        many chunks is ``model.from_stats(sum(model.summarize(c) for c in
        chunks))``.

        Parameters
        ----------
        X, lengths, sequence_weight :
            As in :meth:`fit` (whole sequences).

        Returns
        -------
        stats : LDSStats
        """
        params = self._current()
        Y, lengths, weights, _ = self._data(X, lengths, sequence_weight, reset=False)
        return replace(
            self._summarize(Y, lengths, weights, params), layout=described(self)
        )

    def from_stats(self, stats: LDSStats):
        """The M-step: the parameters from ``stats`` (the current ones where
        ``em_vars`` learns nothing or no data reached).

        Parameters
        ----------
        stats : LDSStats
            From :meth:`summarize` (summed over chunks, by copies of this
            fitted model anywhere: they carry it).

        Returns
        -------
        self : object
        """
        if not isinstance(stats, LDSStats):
            raise TypeError(
                f"stats must be the LDSStats of summarize, got {type(stats).__name__}"
            )
        if stats.layout is not None:
            # Statistics carry the fitted model they were computed under: a
            # fresh estimator (a map-reduce's driver) takes it, as does a
            # KalmanFilter still at pykalman's default one-dimensional model.
            state = stats.layout.state.get("n_features_in_")
            if state is not None and getattr(self, "n_features_in_", None) != state:
                self._validate_params()
                stats.layout.apply(self)
            else:
                stats.layout.apply_if_fresh(self)
            stats = replace(stats, layout=None)
        params = self._current()
        k, d = params.n_state, params.n_obs
        if stats.yx.shape != (d, k):
            raise ValueError(
                f"stats are of a model with {stats.yx.shape[1]} latent dimensions "
                f"and {stats.yx.shape[0]} features, this one has {k} and {d}"
            )
        learn = _params.resolve_em_vars(self._em_vars_param())
        params = map_params(stats, params, learn, self._priors(k, d))
        _checks.check_definite(params, stats.n_obs)
        self._set(params)
        self.stats_ = stats
        return self
