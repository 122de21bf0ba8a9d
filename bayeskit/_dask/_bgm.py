"""BayesianGaussianMixture on Dask: variational EM with one reduction per
iteration.

Every iteration sums the variational E-step's statistics of every chunk
under the current posterior (:meth:`~bayeskit.BayesianGaussianMixture.summarize`,
where the chunk lives) by the tree of :mod:`bayeskit._dask._edge`, then takes
the M-step of the sum in memory (``from_stats``); the loop, the restarts and
the bound are the in-memory fit's (``fit_variational``). The validation, the
priors' data-dependent defaults and the start (``init_params``) read a
uniform sample of at most ``INIT_SAMPLE_SIZE`` rows in memory, as the
Gaussian mixtures' EM on Dask does: all the rows when there are no more, and
then the fit is the in-memory fit.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from ._edge import _sum_stats, _summarize_unsupervised, restoring
from ._em import INIT_SAMPLE_SIZE, _mixture_input, _sample_rows

__all__ = ["fit_bayesian_mixture"]


class _Distributed:
    """The estimator, with the E-step and its statistics taken over the
    chunks: the hooks ``fit_variational`` reads, every other attribute the
    estimator's own."""

    def __init__(self, est, xs, ws):
        self.__dict__.update(est=est, xs=xs, ws=ws)

    def __getattr__(self, name):
        return getattr(self.est, name)

    def __setattr__(self, name, value):
        setattr(self.est, name, value)

    def _e_step(self, X):
        return None  # the chunks' E-steps run in ``_stats``

    def _stats(self, X, log_resp, sample_weight):
        stats = _sum_stats(self.est, self.xs, [self.ws], _summarize_unsupervised)
        return replace(stats, layout=None)


def fit_bayesian_mixture(est, X, sample_weight=None):
    """Variational EM of a :class:`~bayeskit.BayesianGaussianMixture` on a
    Dask array or DataFrame (see the module); a failure leaves ``est`` as it
    was."""
    return restoring(_fit, est, X, sample_weight)


def _fit(est, X, sample_weight):
    from sklearn.utils import check_random_state

    from .._base.variational import fit_variational

    est._validate_params()
    X, xs, ws, sw_da, names = _mixture_input(X, sample_weight)
    rng = check_random_state(est.random_state)
    Xs, sws = _sample_rows(X, sw_da, INIT_SAMPLE_SIZE, rng)
    if names is not None:
        Xs = pd.DataFrame(Xs, columns=names)
    Xv, swv = est._validated_start(Xs, sws)
    # The start draws from random_state anew, as in memory.
    fit_variational(
        _Distributed(est, xs, ws), Xv, swv, check_random_state(est.random_state)
    )
    return est
