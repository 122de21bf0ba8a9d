"""The package's public estimators, and data each one reads.

The suites that must cover every estimator (the common checks, the
self-describing statistics, the Dask edge) build their lists here from
``bayeskit.__all__``, so that a new estimator is covered from its line in
``bayeskit/__init__.py`` alone.
"""

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, is_classifier

import bayeskit


def classes():
    """Every estimator class ``bayeskit`` exports, in ``__all__``'s order."""
    out = []
    for name in bayeskit.__all__:
        obj = getattr(bayeskit, name)
        if isinstance(obj, type) and issubclass(obj, BaseEstimator):
            out.append(obj)
    return out


def make(cls):
    """An instance at its defaults (seeded where it draws)."""
    if cls is bayeskit.GaussianMixtureClassifier:
        return cls(n_components=1, random_state=0)
    try:
        est = cls(random_state=0)
    except TypeError:
        est = cls()
    if "hmm" in est.get_params() and est.hmm is None:  # its default template, seeded
        est.set_params(hmm=bayeskit.CategoricalHMM(random_state=0))
    return est


def reads_sequences(est) -> bool:
    return isinstance(
        est, (bayeskit.hmm._base.BaseHMM, bayeskit.LinearGaussianSSM)
    ) or isinstance(est, bayeskit.HMMClassifier)


def data(est, n=240, seed=0):
    """Rows (or sequences) and labels (None for a density model) the
    estimator reads: categories, counts or real numbers as it takes them."""
    rng = np.random.default_rng(seed)
    tags = est.__sklearn_tags__()
    if isinstance(
        est, (bayeskit.BayesianNetwork, bayeskit.HillClimbSearch, bayeskit.PC)
    ):
        return (
            pd.DataFrame(
                {
                    "a": rng.choice(["x", "y"], n),
                    "b": rng.choice(["lo", "mid", "hi"], n),
                    "c": rng.choice(["u", "v", "w"], n),
                }
            ),
            None,
        )
    if isinstance(est, bayeskit.HMMClassifier):
        y = rng.choice(["a", "b"], n)
        X = [rng.integers(0, 2 + i % 2, (5, 1)) for i in range(n)]
        return X, y
    if isinstance(est, bayeskit.CategoricalHMM):
        X = rng.integers(0, 3, (n, 1))
    elif isinstance(est, bayeskit.MultinomialHMM):
        X = rng.multinomial(5, [0.2, 0.3, 0.5], size=n)
    elif tags.input_tags.categorical and not isinstance(est, bayeskit.MixedNB):
        X = rng.integers(0, 3, (n, 3))
    elif isinstance(
        est,
        (
            bayeskit.MultinomialNB,
            bayeskit.ComplementNB,
            bayeskit.BernoulliNB,
            bayeskit.PoissonHMM,
            bayeskit.PoissonMixture,
        ),
    ):
        X = rng.poisson(3.0, (n, 3)).astype(float)
    else:
        X = rng.normal(size=(n, 3)) + np.array([0.0, 1.0, 2.0])
    y = rng.choice(["a", "b", "c"], n) if is_classifier(est) else None
    return X, y


def rows(X, idx):
    """The rows (or sequences) ``idx`` of ``X``."""
    if isinstance(X, list):
        return [X[i] for i in idx]
    return X.iloc[idx] if hasattr(X, "iloc") else X[idx]
