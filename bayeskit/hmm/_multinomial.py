"""MultinomialHMM: a chain of states, each emitting counts of n trials."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.stats import multinomial

from .._base.classifier import Triple
from .._base.em import LatentPrior
from .._validation import ElementwiseInterval
from ..emissions.multinomial import Multinomial, MultinomialParams
from ..priors import Dirichlet
from ._base import BaseHMM

__all__ = ["MultinomialHMM"]


class MultinomialHMM(BaseHMM):
    """Hidden Markov model with multinomial emissions (counts of trials).

    hmmlearn's ``MultinomialHMM`` (the same parameters, order, defaults and
    attributes) with the additions of :class:`CategoricalHMM`.

    Parameters
    ----------
    n_components : int, default=1
        Number of hidden states.
    n_trials : int, array-like or None, default=None
        Trials of every row (each row of ``X`` must sum to it), or None to
        read each row's own total; ``sample`` needs one number.
    startprob_prior, transmat_prior : float or array-like, default=1.0
        Dirichlet concentrations, as :class:`CategoricalHMM`.
    algorithm, random_state, n_iter, tol, verbose, implementation, n_init, n_jobs
        As :class:`CategoricalHMM`.
    params, init_params : str, default='ste'
        s: start, t: transitions, e: emissions; as :class:`CategoricalHMM`.
    emissionprob_prior : float or array-like, default=1.0
        Dirichlet concentration of every state's row (bayeskit's addition;
        1.0 is hmmlearn's maximum likelihood).

    Attributes
    ----------
    emissionprob_ : ndarray of shape (n_components, n_features)
        Every state's probability of each category.
    startprob_, transmat_, monitor_, converged_, n_iter_, lower_bound_, stats_
        As :class:`CategoricalHMM`.

    See Also
    --------
    CategoricalHMM : One trial per step, symbols of any type.

    Notes
    -----
    State :math:`k` emits :math:`x_t \\sim \\mathrm{Multinomial}(n_t, p_k)`,
    :math:`n_t = \\sum_j x_{tj}`. The M-step is the Dirichlet posterior mode,
    :math:`p_{kj} \\propto \\max(\\sum_t \\gamma_{tk} x_{tj} + \\alpha - 1, 0)`
    (Bishop 2006, section 2.2).

    References
    ----------
    C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer, 2006.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import MultinomialHMM
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.multinomial(5, p, 40) for p in ([.8, .2], [.1, .9])])
    >>> hmm = MultinomialHMM(2, n_trials=5, random_state=0, n_iter=50).fit(X)
    >>> np.sort(hmm.emissionprob_[:, 0]).round(1)
    array([0.1, 0.8])
    """

    _parameter_constraints: dict = {
        **BaseHMM._parameter_constraints,
        "n_trials": [ElementwiseInterval(Integral, 1, None, closed="left"), None],
        "emissionprob_prior": [ElementwiseInterval(Real, 0, None, closed="neither")],
    }
    _keeps_generator = True
    _param_names = {"s": "startprob_", "t": "transmat_", "e": "emissionprob_"}
    _features_from, _counts = "emissionprob_", True
    _emission_fields = {"emissionprob_": "emissionprob"}

    def __init__(
        self, n_components=1, n_trials=None, startprob_prior=1.0,
        transmat_prior=1.0, algorithm="viterbi", random_state=None, n_iter=10,
        tol=1e-2, verbose=False, params="ste", init_params="ste",
        implementation="log", *, emissionprob_prior=1.0, n_init=1, n_jobs=None,
    ):  # fmt: skip
        self.n_components, self.n_trials, self.n_init = n_components, n_trials, n_init
        self.n_jobs = n_jobs
        self.startprob_prior, self.transmat_prior = startprob_prior, transmat_prior
        self.algorithm, self.random_state = algorithm, random_state
        self.n_iter, self.tol, self.verbose = n_iter, tol, verbose
        self.params, self.init_params = params, init_params
        self.implementation, self.emissionprob_prior = (
            implementation,
            emissionprob_prior,
        )

    def _make_components(self):
        prior = LatentPrior(self._chain_prior(), Dirichlet(self.emissionprob_prior))
        return Triple(self._chain(), Multinomial(self.n_features, self.n_trials), prior)

    def _sampler(self, params):
        trials = np.unique(np.asarray([] if self.n_trials is None else self.n_trials))
        if trials.size != 1:
            raise ValueError(
                "n_trials must be one number of trials to sample, got "
                f"{self.n_trials!r}"
            )
        prob = np.asarray(self.emissionprob_)

        def draw(state, rng):
            if state is None:
                return np.zeros((0, prob.shape[1]), dtype=int)
            # hmmlearn's draw: scipy's multinomial, one row per step.
            return multinomial.rvs(n=trials[0], p=prob[state], random_state=rng)

        return draw

    def _emission_params(self):
        shape = (self.n_components, self.n_features)
        return MultinomialParams(
            self._checked("emissionprob_", shape, rows_sum_to_one=True)
        )

    def _check_values(self, X):
        super()._check_values(X)
        if self.n_trials is None:
            return
        gaps = np.isnan(X).all(axis=1) if np.isnan(X).any() else None
        if gaps is None:
            if np.any(X.sum(axis=1) != self.n_trials):
                raise ValueError("every row of X must sum to n_trials")
        else:  # a gap (every count NaN) has no total to check
            trials = np.asarray(self.n_trials)
            if trials.ndim:
                trials = trials[~gaps] if trials.shape == gaps.shape else None
            if trials is None or np.any(X[~gaps].sum(axis=1) != trials):
                raise ValueError(
                    "every row of X must sum to n_trials (n_trials of every row, "
                    "gaps included, or one number)"
                )

    def _check_and_set_n_features(self, X):
        """hmmlearn's hook: also checks X holds integer counts summing to
        ``n_trials``, and sets ``n_trials`` from X if it is None."""
        super()._check_and_set_n_features(X)
        X = np.asarray(X)
        if not np.issubdtype(X.dtype, np.integer) or X.min() < 0:
            raise ValueError("Symbol counts should be nonnegative integers")
        if self.n_trials is None:
            self.n_trials = X.sum(axis=1)
        self._check_values(X)
