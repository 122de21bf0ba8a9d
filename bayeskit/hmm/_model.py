"""HiddenMarkovModel: a chain of states over any emission family."""

from __future__ import annotations

from numbers import Real

import numpy as np

from .._base.classifier import Triple
from .._base.composed import FamilyAttributes, check_family_data, degenerate
from .._base.em import LatentPrior
from .._logmath import has_nan
from .._validation import (
    ElementwiseInterval,
    StrOptions,
    _fit_context,
    check_is_fitted,
)
from ..emissions import Emission
from ..mixture._start import initial_responsibilities
from ._base import BaseHMM, _handler
from ._variational import VariationalChainStats
from ._vmodel import ChainVariationalRun, stochastic_step
from ._vonline import SVI_CONSTRAINTS

__all__ = ["HiddenMarkovModel"]


class HiddenMarkovModel(FamilyAttributes, BaseHMM):
    """Hidden Markov model over any emission family, fitted by Baum-Welch.

    A chain of ``n_components`` hidden states (hmmlearn's start and
    transition tables, their Dirichlet priors, ``lengths``, ``params`` and
    ``init_params`` letters, the ``monitor_``), each emitting rows from the
    family with that state's parameters.

    Parameters
    ----------
    n_components : int, default=1
        Number of states.
    emission : str or emission family, default='gaussian'
        The family of every state: a name of
        ``bayeskit.emissions.family_names()`` or a family object of
        ``bayeskit.emissions``.
    emission_prior : object, default=None
        The family's prior object of ``bayeskit.priors``; None is the
        family's default (maximum likelihood; for Gaussians a ridge of
        ``1e-6`` on every covariance).
    startprob_prior, transmat_prior : float or array-like, default=1.0
        Dirichlet concentrations of the start and transition tables (1 is
        maximum likelihood), as hmmlearn.
    algorithm, random_state, n_iter, tol, verbose, n_init, n_jobs
        As in :class:`GaussianHMM`.
    params, init_params : str, default='ste'
        Letters of the parameters to update and to initialise: 's' start,
        't' transitions, 'e' the family's parameters.
    implementation : {'log', 'scaling'}, default='log'
        Accepted for hmmlearn's calls; both are bayeskit's one chain kernel.
    inference : {'em', 'variational'}, default='em'
        'em' fits the MAP parameters by Baum-Welch. 'variational' keeps a
        posterior over the parameters by variational EM (MacKay 1997; Beal
        2003, ch. 3): Dirichlet posteriors on the start distribution and
        every row of the transition matrix (``startprob_prior`` and
        ``transmat_prior`` are then their prior concentrations, 1 a uniform
        prior) and the family's conjugate posterior (``emission_prior``, or
        the family's default: see Notes). The families with one are
        'poisson' and 'exponential' (Gamma rates), 'gaussian' with full
        covariances (Normal-Wishart, a ``NormalInverseWishart``) or
        ``Gaussian(DIAG)`` (Normal-Gamma per feature, a
        ``NormalInverseGamma``), ``Categorical`` and ``Multinomial``
        (Dirichlet); the others are a ValueError naming ``inference``, as
        are: 'gamma' (its shape and rate have no conjugate prior), the
        negative binomial (nor has its number of failures), a Gaussian
        mixture per state (latent components of its own), and the
        log-normal, Bernoulli, product, tied and spherical Gaussian
        families (conjugate, but their posteriors are not written yet; for
        tied or spherical Gaussians use :class:`VariationalGaussianHMM`).
        ``summarize`` and ``from_stats`` split an iteration over chunks of
        sequences (and a fit on a Dask bag or array runs its E-steps where
        the partitions live); ``partial_fit`` is a step of stochastic
        variational inference.
    total_samples : float, default=1e6
        With ``inference='variational'``: the number of steps (weighted)
        that :meth:`partial_fit` scales a mini-batch's statistics to (that of
        the whole data), as :class:`VariationalGaussianHMM`.
    learning_offset : float, default=10.0
        With ``inference='variational'``: ``tau_0`` of the step size
        ``rho_t = (tau_0 + t)^(-kappa)`` of :meth:`partial_fit` (at least 1).
    learning_decay : float, default=0.7
        With ``inference='variational'``: ``kappa`` of that step size, in
        ``(0.5, 1]`` (the Robbins-Monro conditions).

    Attributes
    ----------
    startprob_, transmat_ : ndarray
    emission_params_ : object
        The family's parameters, one state per hidden state; every field is
        also an attribute with a trailing underscore.
    monitor_, converged_, n_iter_, lower_bound_, stats_
        With ``inference='variational'``, ``lower_bound_`` is the evidence
        lower bound of the last iteration and ``lower_bounds_`` that of
        every iteration; ``stats_`` is EM's only.
    startprob_prior_, startprob_posterior_ : ndarray of shape (n_components,)
        With ``inference='variational'``: the Dirichlet concentrations of the
        start distribution.
    transmat_prior_, transmat_posterior_ : ndarray of shape \
(n_components, n_components)
        With ``inference='variational'``: those of the transition rows.
    emission_prior_, emission_posterior_ : object
        With ``inference='variational'``: the family's prior and posterior
        (a ``Gamma``, a ``NormalInverseWishart``, a ``Dirichlet``, or a
        tuple of Dirichlets, one per feature, for ``Categorical``).

    See Also
    --------
    GaussianHMM, PoissonHMM, MixtureModel, NaiveBayes

    Notes
    -----
    Baum-Welch (Rabiner 1989): the chain's posterior (forward-backward) fed
    by the family's log-likelihoods, the family's statistics weighted by the
    step posteriors, then the MAP parameters. The family's start is its own
    (``init_params`` of the family with the row weights, drawn from
    ``random_state`` after the chain's tables).

    With ``inference='variational'`` the E-step is forward-backward fed by
    the expected log-parameters (``E[log pi_i]``, ``E[log A_ij]``, ``E[log
    p(x_t | theta_k)]``) and the M-step sets the posterior hyperparameters;
    the bound of an iteration, that of the posterior it starts from,

    .. math::

        \\mathcal L = \\sum_{\\text{sequences}} \\log \\sum_{z}
            e^{E[\\log \\pi_{z_1}] + \\sum_t E[\\log A_{z_{t-1} z_t}]
            + \\sum_t E[\\log p(x_t \\mid \\theta_{z_t})]}
            - \\mathrm{KL}(q(\\pi, A, \\theta) \\| p(\\pi, A, \\theta)),

    never decreases (Beal 2003, eq. 3.57). The start is the priors plus
    hmmlearn's random counts for the chain, and for the family the
    posterior of first responsibilities (k-means; random ones for
    ``Categorical`` and ``Multinomial``). The family's default prior is
    scikit-learn's ``BayesianGaussianMixture``'s for Gaussians (the data's
    mean, ``mean_weight`` 1, ``n_features`` degrees of freedom, the data's
    covariance as scale), an exponential prior of the data's mean for
    Poisson and exponential rates, and a uniform Dirichlet for the tables.
    The fitted ``startprob_``, ``transmat_`` and family parameters are the
    posterior means, which :meth:`score`, :meth:`predict` and
    :meth:`sample` read, as hmmlearn's variational models do. Gaps (steps
    of NaN) are latent; ``sequence_weight`` weighs every sequence's counts
    and evidence.

    References
    ----------
    .. [1] L. R. Rabiner, "A tutorial on hidden Markov models and selected
       applications in speech recognition", Proceedings of the IEEE 77(2),
       257-286, 1989.
    .. [2] D. J. C. MacKay, "Ensemble learning for hidden Markov models",
       technical report, Cavendish Laboratory, University of Cambridge, 1997.
    .. [3] M. J. Beal, *Variational Algorithms for Approximate Bayesian
       Inference*, PhD thesis, University College London, 2003, chapter 3.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import HiddenMarkovModel
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.poisson(lam, (100, 1)) for lam in (2, 20, 2, 20)])
    >>> hmm = HiddenMarkovModel(2, emission="poisson", random_state=0).fit(X)
    >>> np.sort(hmm.lambdas_.ravel()).round(0)
    array([ 2., 20.])
    """

    _parameter_constraints: dict = {
        **BaseHMM._parameter_constraints,
        "emission": [str, object],
        "emission_prior": [None, object],
        "transmat_prior": [ElementwiseInterval(Real, 0, None, closed="neither")],
        "inference": [StrOptions({"em", "variational"})],
        **SVI_CONSTRAINTS,
    }
    _param_names = {"s": "startprob_", "t": "transmat_", "e": "_emission_value"}

    def __init__(
        self, n_components=1, *, emission="gaussian", emission_prior=None,
        startprob_prior=1.0, transmat_prior=1.0, algorithm="viterbi",
        random_state=None, n_iter=10, tol=1e-2, verbose=False, params="ste",
        init_params="ste", n_init=1, n_jobs=None, implementation="log",
        inference="em", total_samples=1e6, learning_offset=10.0,
        learning_decay=0.7,
    ):  # fmt: skip
        self.n_components = n_components
        self.emission, self.emission_prior = emission, emission_prior
        self.startprob_prior, self.transmat_prior = startprob_prior, transmat_prior
        self.algorithm, self.random_state = algorithm, random_state
        self.n_iter, self.tol, self.verbose = n_iter, tol, verbose
        self.params, self.init_params = params, init_params
        self.n_init, self.n_jobs = n_init, n_jobs
        self.implementation = implementation
        self.inference = inference
        self.total_samples = total_samples
        self.learning_offset = learning_offset
        self.learning_decay = learning_decay

    def _make_components(self) -> Triple:
        family = self._sized_family(self.n_features)
        prior = self.emission_prior
        if prior is None:
            prior = family.default_prior()
        self._triple = Triple(
            self._chain(), family, LatentPrior(self._chain_prior(), prior)
        )
        return self._triple

    def _check_values(self, X) -> None:
        values = X[~np.isnan(X).all(axis=1)] if has_nan(X) else X
        check_family_data(self._emission_family(), values)

    def _emission_params(self):
        return self._emission_value

    def _emission_attributes(self, params) -> dict:
        return {"_emission_value": params}

    def _params_from_stats(self, stats, previous, components):
        try:
            return super()._params_from_stats(stats, previous, components)
        except np.linalg.LinAlgError:
            raise degenerate(self, "state") from None

    def _emission_start(self, X, row_weight, random_state, emission):
        """The family's own start where it draws one (Poisson, the independent
        families); otherwise its estimate from the rows split among the
        states by k-means, as scikit-learn's mixtures start."""
        if len(X) < self.n_components:
            raise ValueError(
                f"X has too few steps to start {self.n_components} states from: "
                f"n_samples = {len(X)} (complete steps)"
            )
        try:
            if type(emission).init_params is not Emission.init_params:
                return super()._emission_start(X, row_weight, random_state, emission)
            resp = initial_responsibilities(
                "kmeans", X, row_weight, self.n_components, random_state
            )
            return emission.init_params(
                X, resp * row_weight[:, None], self.n_components, random_state
            )
        except np.linalg.LinAlgError:
            raise degenerate(self, "state", len(X)) from None

    def _sampler(self, params):
        """One row of a state from the family's own sampler."""
        emission = self._components().emission

        def draw(state, rng):
            if state is None:
                return np.empty((0, self.n_features))
            return emission.sample(params.emission, np.array([state]), rng)[0]

        return draw

    # -- variational Bayes ---------------------------------------------------------
    def _variational(self) -> bool:
        return getattr(self, "inference", "em") == "variational"

    def fit(self, X, lengths=None, *, y=None, sequence_weight=None, states=None):
        """Estimate the parameters: Baum-Welch (``inference='em'``, see
        :meth:`BaseHMM.fit <bayeskit.GaussianHMM.fit>`), or the posterior over
        them by variational EM (``inference='variational'``).

        Parameters
        ----------
        X : array-like of shape (n_steps, n_features) or list of array-like
            The steps of all sequences concatenated (with ``lengths``), or
            one array per sequence; a step of NaN is a gap.
        lengths : array-like of int of shape (n_sequences,), default=None
            Steps of each sequence when X is concatenated; None is one
            sequence.
        y : None
            Ignored.
        sequence_weight : array-like of shape (n_sequences,), default=None
            Non-negative weight of each sequence (an integer weight counts
            the sequence as that many copies).
        states : array-like of shape (n_steps,) or list, default=None
            Known states (EM only; see :meth:`GaussianHMM.fit`).

        Returns
        -------
        self : object
        """
        if not self._variational():
            return super().fit(
                X, lengths, y=y, sequence_weight=sequence_weight, states=states
            )
        return self._fit_variational(X, lengths, sequence_weight, states)

    @_fit_context(prefer_skip_nested_validation=True)
    def _fit_variational(self, X, lengths, sequence_weight, states):
        if states is None and (handler := _handler(X)) is not None:  # Dask
            return handler.fit_variational_hmm(self, X, lengths, sequence_weight)
        Xt, lengths, weights = self._variational_data(
            X, lengths, sequence_weight, states, reset=True
        )
        self._vb_fit(Xt, lengths, weights)
        return self

    def _variational_data(self, X, lengths, sequence_weight, states, *, reset):
        if _handler(X) is not None:  # a Dask collection with states: in memory
            X = X.compute()
        data = self._data(X, lengths, sequence_weight, reset=reset, states=states)
        if len(data) > 3:
            raise ValueError(
                "states (known states) are taken by inference='em' only; "
                "inference='variational' fits unlabelled sequences"
            )
        self._check_gaps(data[0])
        return data

    def _vb_fit(self, Xt, lengths, weights, e_step=None):
        """Variational EM started on ``Xt`` (whose E-step is ``e_step()``
        when given: a distributed one's)."""
        for name in ("stats_", "n_batch_iter_"):  # EM's; a new SVI schedule
            self.__dict__.pop(name, None)
        run = ChainVariationalRun(self, Xt, lengths, weights, e_step)
        run.run(self._new_monitor())

    def partial_fit(
        self, X, lengths=None, *, y=None, sequence_weight=None, states=None
    ):
        """One step of incremental EM (``inference='em'``, see
        :meth:`GaussianHMM.partial_fit`), or of stochastic variational
        inference (``inference='variational'``) on a mini-batch of sequences.

        With ``inference='variational'``: the variational E-step on the
        batch's sequences under the current posterior; its statistics, scaled
        by ``total_samples`` over the batch's (weighted) steps, give the
        posterior ``lambda_hat`` that the whole data would give if it were
        made of copies of the batch, and the natural parameters of the
        posterior of every letter of ``params`` move towards it by the step
        ``rho_t = (learning_offset + t)^(-learning_decay)`` (Hoffman, Blei,
        Wang and Paisley 2013, algorithm 2), as in
        :meth:`VariationalGaussianHMM.partial_fit`. The first call on a model
        without a posterior fits its batch as :meth:`fit` does (``n_iter``
        iterations; the family's default prior read from that batch), then
        takes a step of size 1 to that fit's statistics scaled to
        ``total_samples``; after :meth:`fit` the steps continue from the
        fitted posterior by the schedule. That fit crosses the plateaus of
        the bound near the start only with iterations to spare: the defaults
        ``n_iter=10`` and ``tol=1e-2`` are EM's, and for SVI a budget such as
        ``n_iter=300, tol=1e-9`` (the variational HMMs' defaults are 100 and
        1e-6) is what the user guide's figures use. ``lower_bound_`` is not
        updated (see :meth:`summarize` and :meth:`from_stats`).

        Parameters
        ----------
        X : array-like of shape (n_steps, n_features) or list of array-like
        lengths : array-like of int of shape (n_sequences,), default=None
        y : None
            Ignored.
        sequence_weight : array-like of shape (n_sequences,), default=None
        states : array-like, default=None
            EM only.

        Returns
        -------
        self : object
        """
        if not self._variational():
            return BaseHMM.partial_fit(
                self, X, lengths, y=y, sequence_weight=sequence_weight, states=states
            )
        return self._partial_fit_variational(X, lengths, sequence_weight, states)

    @_fit_context(prefer_skip_nested_validation=True)
    def _partial_fit_variational(self, X, lengths, sequence_weight, states):
        first = "emission_posterior_" not in self.__dict__
        Xt, lengths, weights = self._variational_data(
            X, lengths, sequence_weight, states, reset=first
        )
        self.__dict__.pop("stats_", None)  # EM's
        stochastic_step(self, Xt, lengths, weights, first)
        return self

    def summarize(self, X, lengths=None, *, sequence_weight=None, states=None):
        """Expected statistics of a chunk of sequences under the current
        parameters (EM) or posterior (``inference='variational'``).

        For EM see :meth:`GaussianHMM.summarize`. With
        ``inference='variational'``: the variational E-step on ``X`` alone
        under the fitted posterior, a ``VariationalChainStats`` of the
        chain's expected counts, the family's statistics and the chunk's log
        evidence under the expected log-parameters; they add with ``+``, and
        ``model.from_stats(sum(model.summarize(c) for c in chunks))`` is one
        iteration of variational EM over all the chunks.

        Parameters
        ----------
        X : array-like of shape (n_steps, n_features) or list of array-like
        lengths : array-like of int of shape (n_sequences,), default=None
        sequence_weight : array-like of shape (n_sequences,), default=None
        states : array-like, default=None
            EM only.

        Returns
        -------
        stats : LatentStats or VariationalChainStats
        """
        if not self._variational():
            return super().summarize(
                X, lengths, sequence_weight=sequence_weight, states=states
            )
        check_is_fitted(self, "emission_posterior_")
        data = self._data(X, lengths, sequence_weight, reset=False, states=states)
        if len(data) > 3:
            raise ValueError("states are taken by inference='em' only")
        return self._vb_e_step(*data)

    def _vb_e_step(self, Xt, lengths, weights):
        """The variational E-step of validated sequences under the fitted
        posterior (a Dask partition's, and :meth:`summarize`'s)."""
        self._check_gaps(Xt)
        run = ChainVariationalRun.fitted(self)
        run._data(Xt, lengths, weights)
        return run.evidence_stats(Xt)

    def from_stats(self, stats):
        """The M-step from summed statistics (see :meth:`summarize`);
        returns self. With ``inference='variational'``, the posteriors of
        the letters of ``params`` from the fitted priors and ``stats``, and
        ``lower_bound_`` the bound of the posterior the statistics were
        computed under.

        Parameters
        ----------
        stats : LatentStats or VariationalChainStats

        Returns
        -------
        self : object
        """
        if not self._variational():
            return super().from_stats(stats)
        check_is_fitted(self, "emission_posterior_")
        if not isinstance(stats, VariationalChainStats):
            raise TypeError(
                "stats must be the statistics summarize() returns with "
                "inference='variational' (VariationalChainStats), got "
                f"{type(stats).__name__}"
            )
        run = ChainVariationalRun.fitted(self)
        self.lower_bound_ = stats.lower_bound - run._kl()
        run._from_stats(stats)
        run.publish()
        return self

    def _check_gaps(self, Xt):
        if not has_nan(Xt):
            return
        missing = np.isnan(Xt)
        if (missing.any(axis=1) & ~missing.all(axis=1)).any():
            raise ValueError(
                "X has steps with some but not all values missing (NaN): "
                "inference='variational' takes only whole missing steps "
                "(gaps); use inference='em', which marginalises them"
            )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self._variational():
            tags.input_tags.allow_nan = False
        return tags
