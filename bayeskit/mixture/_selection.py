"""Choosing a Gaussian mixture by an information criterion (mclust's workflow).

References
----------
.. [1] C. Fraley and A. E. Raftery, "Model-based clustering, discriminant
   analysis, and density estimation", *Journal of the American Statistical
   Association* 97(458), 2002, pp. 611-631.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.utils.parallel import Parallel, delayed

from ._gaussian_mixture import GaussianMixture

__all__ = ["select_mixture"]


def select_mixture(
    X,
    n_components=range(1, 10),
    covariance_types=("full", "tied", "diag", "spherical"),
    criterion="bic",
    *,
    n_jobs=None,
    **params,
):
    """Fit a mixture for every candidate and keep the best by BIC or AIC.

    mclust's workflow: one :class:`GaussianMixture` per number of components
    and covariance type, compared by an information criterion.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_components : iterable of int, default=range(1, 10)
    covariance_types : iterable of str, default=('full', 'tied', 'diag', 'spherical')
    criterion : {'bic', 'aic'}, default='bic'
    n_jobs : int, default=None
        Candidates fitted at once, through joblib (``None``: one, unless a
        ``joblib.parallel_config`` context says otherwise; ``-1``: every
        core). Under ``joblib.parallel_config(backend="dask")`` the candidates
        are fitted on a Dask cluster's workers. The result does not depend on
        it.
    **params
        Other parameters of every :class:`GaussianMixture` (``random_state``,
        ``covariance_prior_weight``, ...).

    Returns
    -------
    table : DataFrame
        One row per candidate: ``n_components``, ``covariance_type``, ``bic``,
        ``aic`` (lower is better), sorted by the criterion.
    best : GaussianMixture
        The best candidate, fitted.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import select_mixture
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.5, size=(100, 2)) for c in (0, 5, 10)])
    >>> table, best = select_mixture(X, range(1, 5), ["full"], random_state=0)
    >>> best.n_components
    3
    """
    if criterion not in ("bic", "aic"):
        raise ValueError(f"criterion must be 'bic' or 'aic', got {criterion!r}")
    template = GaussianMixture(**params)
    n_components, covariance_types = list(n_components), list(covariance_types)
    for name, values in (
        ("n_components", n_components),
        ("covariance_types", covariance_types),
    ):
        if not values:
            raise ValueError(f"{name} must hold at least one candidate, got none")
    candidates = [
        clone(template).set_params(n_components=k, covariance_type=cov)
        for cov in covariance_types
        for k in n_components
    ]
    fitted = Parallel(n_jobs=n_jobs)(delayed(_fit_and_score)(m, X) for m in candidates)
    models = [model for model, _ in fitted]
    table = pd.DataFrame([row for _, row in fitted])
    best = int(np.argmin(table[criterion].to_numpy()))
    return table.sort_values(criterion, kind="stable").reset_index(drop=True), models[
        best
    ]


def _fit_and_score(model, X):
    """One candidate fitted, and its row of the table."""
    model.fit(X)
    row = {
        "n_components": model.n_components,
        "covariance_type": model.covariance_type,
        "bic": model.bic(X),
        "aic": model.aic(X),
    }
    return model, row
