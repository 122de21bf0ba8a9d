"""ARGaussianHMM: a chain of states, each with its own linear Gaussian dynamics.

The triple is the chain, the linear Gaussian family
(:class:`~bayeskit.emissions.linear_gaussian.LinearGaussian`, every state a
regression of the step on the ``order`` steps before it) and the
matrix-normal-inverse-Wishart prior
(:class:`~bayeskit.priors.matrix_normal.MatrixNormalInverseWishart`). The
model reads each step together with its lags: at the boundary the rows of a
sequence become ``[x_t, x_{t-1}, ..., x_{t-p}]``, and the first ``order``
steps of a sequence, whose lags are not all in the sequence, are conditioned
on (their message is 1, as a gap's, and their values are only lags).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from .._base.classifier import Triple
from .._base.em import LatentPrior
from .._validation import Interval, StrOptions, check_is_fitted
from ..emissions import DIAG, FULL
from ..emissions.linear_gaussian import LinearGaussian, LinearGaussianParams
from ..priors import NormalInverseWishart
from ..priors.matrix_normal import MatrixNormalInverseWishart
from ._base import BaseHMM
from ._gaussian import CovarsAttribute, hmmlearn_gaussian_start

__all__ = ["ARGaussianHMM"]

_STRUCTURES = {"full": FULL, "diag": DIAG}


def lagged_rows(X: np.ndarray, lengths: np.ndarray, order: int) -> np.ndarray:
    """The rows ``[x_t, x_{t-1}, ..., x_{t-order}]`` of every step, with the
    first ``order`` steps of every sequence all NaN (conditioned on)."""
    n, d = X.shape
    if order == 0:
        return X
    out = np.empty((n, d * (order + 1)))
    out[:, :d] = X
    for i in range(1, order + 1):
        out[i:, i * d : (i + 1) * d] = X[:-i]
        out[:i, i * d : (i + 1) * d] = np.nan
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    out[np.arange(n) - starts < order] = np.nan
    return out


class ARGaussianHMM(CovarsAttribute, BaseHMM):
    """Hidden Markov model with autoregressive Gaussian emissions.

    Every state ``k`` has its own linear dynamics with Gaussian noise: given
    the state, a step is a linear function of the ``order`` steps before it
    plus an intercept and noise (Murphy 2012, section 17.6; Fox et al. 2011).
    The API is hmmlearn's (``fit(X, lengths)``, ``score``, ``score_samples``,
    ``predict``, ``predict_proba``, ``decode``, ``sample``, ``params`` and
    ``init_params`` letters), with the parameters ``coef_``, ``intercept_``
    and ``covars_``. With ``order=0`` it is :class:`GaussianHMM` ('full' or
    'diag'): the same start, the same EM, the same answers.

    Parameters
    ----------
    n_components : int, default=1
        Number of hidden states.
    order : int, default=1
        ``p``: the number of previous steps every step is regressed on.
    covariance_type : {'diag', 'full'}, default='diag'
        The noise covariance of every state: a diagonal or a full matrix.
    min_covar : float, default=1e-3
        Added to the diagonal of the data's covariance from which ``fit``
        initialises ``covars_`` (as :class:`GaussianHMM`), and to the diagonal
        of a singular full covariance, for its densities.
    startprob_prior, transmat_prior : float or array-like, default=1.0
        Dirichlet concentrations, as :class:`CategoricalHMM`.
    intercept_prior, intercept_weight : float or array-like, default=0
        The normal prior of the intercepts: prior mean ``m0`` (a number, or
        shape ``(n_features,)`` or ``(n_components, n_features)``) and its
        weight ``kappa`` in pseudo-observations (a number or one per state);
        with ``order=0`` these are :class:`GaussianHMM`'s ``means_prior`` and
        ``means_weight``.
    covars_prior : float or array-like, default=1e-2
        The prior scatter ``Psi`` of the covariances, as :class:`GaussianHMM`'s
        (a number is added to every entry of a full matrix, to every variance
        of a diagonal). For 'full', hmmlearn's number is a scatter of rank
        one: a state on few steps can then get a singular covariance (its
        density adds ``min_covar`` to the diagonal, and EM may step down);
        a positive definite matrix, such as ``0.01 * np.eye(n_features)``,
        keeps every covariance positive definite.
    covars_weight : float or array-like, default=1
        ``a``: the covariance part's weight is ``c = max(a - d, 0)`` for full
        matrices and ``max(a - 1, 0)`` for variances, as :class:`GaussianHMM`.
    algorithm, random_state, n_iter, tol, verbose
        As :class:`CategoricalHMM`.
    params, init_params : str, default='stamc'
        s: start, t: transitions, a: autoregressive coefficients, m:
        intercepts, c: covariances (as in hmmlearn, ``fit`` initialises the
        parameters in ``init_params`` and those not set yet).
    implementation : {'log', 'scaling'}, default='log'
        Accepted for hmmlearn's calls; both run bayeskit's one exact path.
    coef_prior : float or array-like, default=0.0
        ``A0``, the prior mean of the coefficients: a number, or shape
        ``(n_features, order * n_features)`` or ``(n_components, n_features,
        order * n_features)``.
    coef_weight : float, default=0.0
        ``lambda``, the weight of the coefficients' matrix-normal prior: a
        ridge pulling ``coef_`` toward ``coef_prior`` (0: least squares).
    n_init : int, default=1
        Random starts; the one with the best log posterior is kept.
    n_jobs : int, default=None
        Jobs running the ``n_init`` starts in parallel, as :class:`GaussianHMM`.

    Attributes
    ----------
    startprob_, transmat_, monitor_, converged_, n_iter_, lower_bound_, stats_
        As :class:`CategoricalHMM` (``stats_.emission`` holds the weight, the
        means and the centred scatter of every state's rows ``[x_t, x_{t-1},
        ..., x_{t-p}]``).
    coef_ : ndarray of shape (n_components, n_features, order * n_features)
        ``[A_k1, ..., A_kp]``: the coefficients of the lags, most recent first.
    intercept_ : ndarray of shape (n_components, n_features)
        ``b_k``.
    covars_ : ndarray of shape (n_components, n_features, n_features)
        Every state's full noise covariance matrix, whatever
        ``covariance_type`` (set in the type's own shape: ``(n_components,
        n_features)`` diag).
    covariances_ : ndarray
        The covariances in the covariance type's own shape.
    n_features : int
        Dimension of the observations.

    See Also
    --------
    GaussianHMM : the case ``order=0``.
    LinearGaussianSSM : linear Gaussian dynamics of a continuous hidden state.

    Notes
    -----
    The model of a sequence ``x_1, ..., x_T`` with states ``z_1, ..., z_T``
    (a Markov chain with ``startprob_`` and ``transmat_``) is

    .. math::

        x_t \\mid z_t = k, x_{t-1}, \\ldots, x_{t-p} \\sim
        \\mathcal N\\Big(\\sum_{i=1}^{p} A_{ki} x_{t-i} + b_k,\\ \\Sigma_k\\Big),
        \\qquad t > p.

    **The first p steps of every sequence are conditioned on**: their values
    enter only as the lags of later steps, their states are part of the chain
    (``z_1`` has ``startprob_``) with emission message 1, so every method
    gives a state posterior for every step, and ``score`` is ``log p(x_{p+1},
    ..., x_T | x_1, ..., x_p)``. A sequence needs at least ``order + 1``
    steps (a ValueError naming ``lengths`` otherwise). BIC counts the
    ``T - p`` modelled steps.

    The M-step is the mode of the matrix-normal-inverse-Wishart prior
    (``bayeskit.priors.matrix_normal``): weighted least squares of every
    state's steps on their lags under the state posteriors, with the ridge
    ``coef_weight`` and the intercept prior, solved by a Cholesky
    factorisation (no explicit inverse); then the residual covariance with
    :class:`GaussianHMM`'s covariance prior. The monitored objective adds the
    log prior density, whose mode the M-step is, so it never decreases.

    EM starts as :class:`GaussianHMM`'s does (hmmlearn's draws): the intercepts
    from k-means on the modelled steps, every coefficient 0, every covariance
    the data's plus ``min_covar``. EM is local, and states that differ by
    their dynamics more than by their levels are often found only from some
    starts: use ``n_init`` restarts (the example below needs them).

    **Missing values.** With ``order=0`` a step whose every value is NaN is a
    gap (marginalised), as in :class:`GaussianHMM`. With ``order >= 1`` a
    missing step is also a lag of the next ``order`` steps: integrating it out
    couples their states (the posterior of a gap is a mixture over state paths,
    a switching linear dynamical system), which the chain's messages cannot
    carry exactly, so NaN is a ValueError naming X rather than an
    approximation.

    ``sample(n_samples, random_state, currstate, history=...)`` draws one
    sequence whose first ``order`` rows are ``history`` (the conditioned
    steps; zeros when not given) and whose later rows follow the dynamics.

    References
    ----------
    K. P. Murphy, *Machine Learning: A Probabilistic Perspective*, MIT Press,
    2012, section 17.6.

    E. B. Fox, E. B. Sudderth, M. I. Jordan and A. S. Willsky, "Bayesian
    nonparametric inference of switching dynamic linear models", *IEEE
    Transactions on Signal Processing* 59(4), 2011, pp. 1569-1585.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.hmm import ARGaussianHMM
    >>> rng = np.random.default_rng(0)
    >>> x = np.zeros((400, 1))
    >>> for t in range(1, 400):
    ...     a = 0.9 if (t // 100) % 2 == 0 else -0.5
    ...     x[t] = a * x[t - 1] + rng.normal(0, 0.3)
    >>> hmm = ARGaussianHMM(2, order=1, n_iter=100, n_init=3, random_state=0)
    >>> np.sort(hmm.fit(x).coef_.ravel()).round(1)
    array([-0.5,  0.9])
    """

    _parameter_constraints: dict = {
        **BaseHMM._parameter_constraints,
        "order": [Interval(Integral, 0, None, closed="left")],
        "covariance_type": [StrOptions({"diag", "full"})],
        "min_covar": [Interval(Real, 0, None, closed="left")],
        "intercept_prior": ["array-like", Real],
        "intercept_weight": ["array-like", Interval(Real, 0, None, closed="left")],
        "covars_prior": ["array-like", Real],
        "covars_weight": ["array-like", Real],
        "coef_prior": ["array-like", Real],
        "coef_weight": [Interval(Real, 0, None, closed="left")],
    }
    _param_names = {
        "s": "startprob_",
        "t": "transmat_",
        "a": "coef_",
        "m": "intercept_",
        "c": "covars_",
    }
    _features_from = "intercept_"
    _gaussian = True
    _stored_params = ("_covars_",)
    _covars_from = "intercept_"  # its second axis: the number of features

    def __init__(
        self,
        n_components=1,
        order=1,
        covariance_type="diag",
        min_covar=1e-3,
        startprob_prior=1.0,
        transmat_prior=1.0,
        intercept_prior=0,
        intercept_weight=0,
        covars_prior=1e-2,
        covars_weight=1,
        algorithm="viterbi",
        random_state=None,
        n_iter=10,
        tol=1e-2,
        verbose=False,
        params="stamc",
        init_params="stamc",
        implementation="log",
        *,
        coef_prior=0.0,
        coef_weight=0.0,
        n_init=1,
        n_jobs=None,
    ):
        self.n_components = n_components
        self.order = order
        self.covariance_type = covariance_type
        self.min_covar = min_covar
        self.startprob_prior = startprob_prior
        self.transmat_prior = transmat_prior
        self.intercept_prior = intercept_prior
        self.intercept_weight = intercept_weight
        self.covars_prior = covars_prior
        self.covars_weight = covars_weight
        self.algorithm = algorithm
        self.random_state = random_state
        self.n_iter = n_iter
        self.tol = tol
        self.verbose = verbose
        self.params = params
        self.init_params = init_params
        self.implementation = implementation
        self.coef_prior = coef_prior
        self.coef_weight = coef_weight
        self.n_init = n_init
        self.n_jobs = n_jobs

    # -- the components ------------------------------------------------------------
    def _order(self) -> int:
        order = self.order
        if not isinstance(order, Integral) or isinstance(order, bool) or order < 0:
            raise ValueError(f"order must be a non-negative integer, got {order!r}")
        return int(order)

    def _structure(self):
        if self.covariance_type not in _STRUCTURES:
            raise ValueError(
                "covariance_type must be 'diag' or 'full', got "
                f"{self.covariance_type!r}"
            )
        return _STRUCTURES[self.covariance_type]

    def _make_components(self):
        structure = self._structure()
        k, d, p = self.n_components, self.n_features, self._order()
        q = d * p
        niw = NormalInverseWishart.from_hmmlearn(
            structure,
            d,
            means_prior=self.intercept_prior,
            means_weight=self.intercept_weight,
            covars_prior=self.covars_prior,
            covars_weight=self.covars_weight,
        )
        try:
            niw.check(structure, k, d)
        except ValueError as exc:
            message = str(exc)
            for ours, theirs in (
                ("scatter", "covars_prior"),
                ("covariance_weight", "covars_weight"),
                ("mean_weight", "intercept_weight"),
                ("mean", "intercept_prior"),
            ):
                if message.startswith(ours + " "):
                    message = theirs + message[len(ours) :]
                    break
            raise ValueError(message) from None
        if np.ndim(niw.mean_weight) > 1:
            raise ValueError(
                f"intercept_weight must be a number or have shape ({k},), got "
                f"shape {np.shape(niw.mean_weight)}"
            )
        coef = np.asarray(self.coef_prior, dtype=float)
        if coef.shape not in ((), (d, q), (k, d, q)) or not np.all(np.isfinite(coef)):
            raise ValueError(
                f"coef_prior must be a finite number or have shape ({d}, {q}) or "
                f"({k}, {d}, {q}), got shape {coef.shape}"
            )
        prior = MatrixNormalInverseWishart(niw, coef, float(self.coef_weight))
        emission = LinearGaussian(
            structure,
            d,
            q,
            update_coef="a" in self.params,
            update_intercept="m" in self.params,
            update_covariances="c" in self.params,
            singular_jitter=self.min_covar,
        )
        return Triple(self._chain(), emission, LatentPrior(self._chain_prior(), prior))

    def _params_from_stats(self, stats, previous, components):
        try:
            return super()._params_from_stats(stats, previous, components)
        except np.linalg.LinAlgError:
            raise ValueError(
                "a state's covariance is singular: increase covars_prior or "
                "covars_weight"
            ) from None

    # -- input: every step with its lags -------------------------------------------
    def _check_missing(self, X) -> None:
        if not (self._order() and np.isnan(X).any()):
            return super()._check_missing(X)
        raise ValueError(
            f"X has missing values (NaN): with order={self.order} a missing "
            "step is also a lag of the next steps, whose states it couples "
            "(a switching linear dynamical system), which ARGaussianHMM does "
            "not integrate out exactly; with order=0 a step of NaN is a gap. "
            "Split the sequence at the gap, or impute it"
        )

    def _sequences(self, X, lengths, reset):
        Xt, lengths, as_list = super()._sequences(X, lengths, reset)
        p = self._order()
        short = np.flatnonzero(np.asarray(lengths) < p + 1)
        if short.size:
            i = int(short[0])
            raise ValueError(
                f"every sequence needs at least order + 1 = {p + 1} steps (its "
                f"first {p} are conditioned on), but sequence {i} of lengths has "
                f"{int(lengths[i])} (n_samples={int(lengths[i])}); give longer "
                "sequences or a smaller order"
            )
        return lagged_rows(Xt, lengths, p), lengths, as_list

    def _plan_init(self, n_values):
        # The values are those of the rows with their lags: count each once.
        super()._plan_init(n_values // (self._order() + 1))

    # -- the start -----------------------------------------------------------------
    def _emission_start(self, X, row_weight, random_state, emission):
        """:class:`GaussianHMM`'s start on the modelled steps (hmmlearn's
        draws): the intercepts from k-means, the covariances from the data's;
        every coefficient 0."""
        d, k = self.n_features, self.n_components
        means, covars = hmmlearn_gaussian_start(
            self, X[:, :d], row_weight, random_state, self._structure()
        )
        coef = np.zeros((k, d, emission.n_regressors))
        try:
            return emission.params_from(coef, means, covars)
        except np.linalg.LinAlgError:
            raise ValueError(
                "the data's covariance is singular: set min_covar > 0, or set "
                "covars_ and leave 'c' out of init_params"
            ) from None

    # -- hmmlearn-style names: coef_, intercept_, covars_ ---------------------------
    def _emission_params(self):
        k = self.n_components
        intercept = np.asarray(self.intercept_, dtype=float)
        if intercept.ndim != 2:
            raise ValueError(
                "intercept_ must have shape (n_components, n_features), got "
                f"{intercept.shape}"
            )
        if not hasattr(self, "n_features_in_"):  # set by hand, without fit
            self.n_features_in_ = intercept.shape[1]
        d = self.n_features_in_
        q = d * self._order()
        self.intercept_ = self._checked("intercept_", (k, d), signed=True)
        self.coef_ = self._checked("coef_", (k, d, q), signed=True)
        structure = self._structure()
        covars = np.asarray(self._covars_, dtype=float)
        shape = structure.shape(k, d)
        if covars.shape != shape:
            raise ValueError(
                f"covars_ must have shape {shape} for covariance_type="
                f"{self.covariance_type!r}, got {covars.shape}"
            )
        factors = self.__dict__.get("_factors")
        if factors is None or not np.array_equal(factors[0], covars):
            structure.check_values(covars, "covars_")
            emission = LinearGaussian(structure, d, q, singular_jitter=self.min_covar)
            try:
                given = emission.params_from(self.coef_, self.intercept_, covars)
            except np.linalg.LinAlgError:
                raise ValueError("covars_ must be positive definite") from None
            factors = (covars, given.precisions_cholesky, given.log_det)
            self._factors = factors
        return LinearGaussianParams(self.coef_, self.intercept_, *factors)

    def _emission_attributes(self, params):
        factors = (params.covariances, params.precisions_cholesky, params.log_det)
        return {
            "coef_": params.coef,
            "intercept_": params.intercept,
            "covars_": params.covariances,
            "_factors": factors,
        }

    # -- sampling ------------------------------------------------------------------
    def sample(self, n_samples=1, random_state=None, currstate=None, *, history=None):
        """Draw one sequence of ``n_samples`` steps: ``(X, states)``.

        The states are drawn as hmmlearn draws them (see
        :class:`GaussianHMM`), one uniform per step; the first ``order`` rows
        of X are ``history`` (the steps the model conditions on, no draw), and
        every later row is drawn from its state's dynamics given the rows
        before it (``rng.multivariate_normal``, as :class:`GaussianHMM`, so
        ``order=0`` draws :class:`GaussianHMM`'s sequence).

        Parameters
        ----------
        n_samples : int, default=1
            Number of steps (``history`` included).
        random_state : int, RandomState instance or None, default=None
            The generator of the draws (None: the model's ``random_state``).
        currstate : int or state name, default=None
            The state of the first step; None draws it from ``startprob_``
            (one of ``state_names_`` also, for a model fitted with named
            states).
        history : array-like of shape (order, n_features), default=None
            The first ``order`` steps, oldest first; None is zeros.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
        states : ndarray of shape (n_samples,)
            Indices, or the states' names when the model was fitted with
            named states (``state_names_``), as :meth:`predict` gives them.
        """
        check_is_fitted(self)
        p, d = self._order(), self.n_features
        if history is None:
            history = np.zeros((p, d))
        history = np.asarray(history, dtype=float)
        if history.shape != (p, d) or not np.all(np.isfinite(history)):
            raise ValueError(
                f"history must be finite with shape (order, n_features) = "
                f"({p}, {d}), got shape {history.shape}"
            )
        self.__dict__["_history"] = history
        try:
            return super().sample(n_samples, random_state, currstate)
        finally:
            self.__dict__.pop("_history", None)

    def _sampler(self, params):
        params = params.emission
        history = self.__dict__.get("_history")
        p = self._order()
        d = params.intercept.shape[1]
        if history is None:
            history = np.zeros((p, d))
        covs = self.covars_
        past = list(history)

        given = [0]  # the rows of the history given out

        def draw(state, rng):
            if state is None:
                return np.zeros((0, d))
            if given[0] < p:  # a step of the history: no draw
                given[0] += 1
                return history[given[0] - 1]
            lags = np.concatenate(past[-p:][::-1]) if p else np.zeros(0)
            mean = params.coef[state] @ lags + params.intercept[state]
            value = rng.multivariate_normal(mean, covs[state])
            past.append(value)
            return value

        return draw
