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
from bayeskit.hmm._base import BaseHMM
from bayeskit.lds._inference import Inference as _LDSInference


def classes():
    """Every estimator class ``bayeskit`` exports, in ``__all__``'s order (as
    :func:`runnable` gives it)."""
    out = []
    for name in bayeskit.__all__:
        obj = getattr(bayeskit, name)
        if isinstance(obj, type) and issubclass(obj, BaseEstimator):
            out.append(runnable(obj))
    return out


# -- metadata aligned with the steps (declared: ``_step_metadata``) ---------------
def step_metadata(est, X) -> dict:
    """The keyword arguments aligned with the steps of X that ``est`` declares
    it reads (``_step_metadata``: their names), as the suites supply them: one
    column per name, a function of every step's values (``tanh`` of their
    sum, missing values as 0), so that any cut or reordering of the steps
    carries the same values. A list of sequences gets a list, a Dask bag a
    bag and a Dask array an array chunked as X (lazily); X that is not
    numbers gets nothing (the estimator's own error on X comes first)."""
    names = getattr(est, "_step_metadata", ())
    if not names:
        return {}
    from bayeskit._base.sequences import _sequence_list

    def values(rows):
        rows = np.asarray(rows, dtype=float)
        rows = rows.reshape(len(rows), -1)
        return np.tanh(np.nan_to_num(rows, posinf=0.0, neginf=0.0).sum(axis=1))[:, None]

    try:
        if hasattr(X, "__dask_graph__"):  # a Dask array of rows, a bag of sequences
            if type(X).__module__.startswith("dask.bag"):  # a bag partitioned as X
                return dict.fromkeys(names, X.map(values))
            numbers = np.issubdtype(getattr(X, "dtype", object), np.number)
            if getattr(X, "ndim", 0) == 2 and numbers:  # a Dask array chunked as X
                rows = X.rechunk({1: -1})
                value = rows.map_blocks(
                    values, chunks=(rows.chunks[0], (1,)), dtype=float
                )
                return dict.fromkeys(names, value)
            X = X.compute()
            X = X if isinstance(X, np.ndarray) else list(X)
        seqs = _sequence_list(X, est._is_rows) if isinstance(X, list) else None
        value = [values(s) for s in seqs] if seqs is not None else values(X)
    except (TypeError, ValueError, AttributeError):
        return {}
    return dict.fromkeys(names, value)


_RUNNABLE: dict = {}


def runnable(cls):
    """``cls``, or, for a class that declares metadata aligned with the steps
    (``_step_metadata``), a subclass of the same name (defined in this module,
    so that it pickles) whose methods supply that metadata
    (:func:`step_metadata`) when the caller does not: the suites written for
    X alone run it unchanged."""
    names = getattr(cls, "_step_metadata", ())
    if not names:
        return cls
    if cls in _RUNNABLE:
        return _RUNNABLE[cls]

    def supplied(method):
        def call(self, X, *args, **kwargs):
            if all(kwargs.get(n) is None for n in names):
                kwargs.update(step_metadata(self, X))
            return method(self, X, *args, **kwargs)

        call.__name__, call.__doc__ = method.__name__, method.__doc__
        call.__wrapped__ = method
        return call

    def sample(self, n_samples=1, *args, **kwargs):
        if all(kwargs.get(n) is None for n in names) and isinstance(n_samples, int):
            steps = np.tanh(np.arange(max(n_samples, 0)))[:, None]
            kwargs.update(dict.fromkeys(names, steps))
        return cls.sample(self, n_samples, *args, **kwargs)

    methods = {
        m: supplied(getattr(cls, m))
        for m in (
            "fit", "partial_fit", "score", "score_samples", "score_sequences",
            "predict", "predict_proba", "decode", "summarize", "bic", "aic",
        )
        if hasattr(cls, m)
    }  # fmt: skip
    if hasattr(cls, "sample"):
        methods["sample"] = sample
    sub = type(
        cls.__name__,
        (cls,),
        {**methods, "__module__": __name__, "__doc__": cls.__doc__},
    )
    sub.__qualname__ = f"_runnable_{cls.__name__}"
    globals()[sub.__qualname__] = sub
    _RUNNABLE[cls] = sub
    return sub


def _params(est_or_cls) -> dict:
    est = est_or_cls() if isinstance(est_or_cls, type) else est_or_cls
    return est.get_params()


def make(cls):
    """An instance at its defaults (seeded where it draws); a classifier of
    a mixture per class with one component (the smallest per class)."""
    cls = runnable(cls)
    try:
        est = cls(random_state=0)
    except TypeError:
        est = cls()
    if getattr(est, "_fits_class_models_by_em", False) and "n_components" in (
        est.get_params()
    ):
        est.set_params(n_components=1)
    if "hmm" in est.get_params() and est.hmm is None:  # its default template, seeded
        est.set_params(hmm=bayeskit.CategoricalHMM(random_state=0))
    return est


# -- what an estimator is, asked of it (its base, tags, declared attributes
# and parameters), never of its concrete class -----------------------------------
def classifies_sequences(est) -> bool:
    """A classifier of whole sequences (X a list of them): a classifier
    that does not read 2-D tables."""
    tags = est.__sklearn_tags__()
    return tags.estimator_type == "classifier" and not tags.input_tags.two_d_array


def reads_steps(est) -> bool:
    """Whether a row of X is one step of a sequence (hidden Markov models,
    linear dynamical systems: their bases)."""
    return isinstance(est, (BaseHMM, _LDSInference))


def reads_sequences(est) -> bool:
    """Whether X holds sequences: rows that are steps, or a list of them."""
    return reads_steps(est) or classifies_sequences(est)


def is_network(est) -> bool:
    """A model of a table of named discrete variables (networks and their
    structure learners): a density model of 2-D tables of strings."""
    tags = est.__sklearn_tags__()
    return (
        tags.estimator_type == "density_estimator"
        and tags.input_tags.two_d_array
        and tags.input_tags.string
        and not reads_sequences(est)
    )


def support(est) -> str:
    """The values X's cells take: 'symbols', 'categories', 'counts',
    'fixed_counts' (counts of ``n_trials`` trials per row), 'positive',
    'nonnegative' or 'real', from the estimator's tags, declared attributes,
    parameters and emission family."""
    tags = est.__sklearn_tags__()
    params = est.get_params()
    if getattr(est, "_reads_symbols", False):
        return "symbols"
    if "n_trials" in params:
        return "fixed_counts"
    family = getattr(est, "_emission_family", None)
    if family is not None:
        return family().support
    if tags.input_tags.categorical and "categorical_features" not in params:
        return "categories"  # a model that reads mixed columns reads reals
    if tags.input_tags.positive_only or getattr(est, "_counts", False):
        return "counts"
    return "real"


def data(est, n=240, seed=0):
    """Rows (or sequences) and labels (None for a density model) the
    estimator reads: categories, counts or real numbers as it takes them."""
    rng = np.random.default_rng(seed)
    if is_network(est):
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
    if classifies_sequences(est):  # whole sequences, one label each
        y = rng.choice(["a", "b"], n)
        X = [rng.integers(0, 2 + i % 2, (5, 1)) for i in range(n)]
        return X, y
    kind = support(est)
    if kind == "symbols":
        X = rng.integers(0, 3, (n, 1))
    elif kind == "fixed_counts":
        X = rng.multinomial(5, [0.2, 0.3, 0.5], size=n)
    elif kind == "categories":
        X = rng.integers(0, 3, (n, 3))
    elif kind == "counts":
        X = rng.poisson(3.0, (n, 3)).astype(float)
    elif kind in ("positive", "nonnegative"):
        X = rng.gamma(2.0, size=(n, 3)) * np.array([1.0, 2.0, 3.0])
    else:
        X = rng.normal(size=(n, 3)) + np.array([0.0, 1.0, 2.0])
    y = rng.choice(["a", "b", "c"], n) if is_classifier(est) else None
    return X, y


def sequences(est, n_sequences=24, seed=0):
    """``n_sequences`` sequences (arrays of rows, 4 to 29 steps each) of the
    rows a sequence model reads."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(4, 30, n_sequences)
    X, _ = data(est, n=int(lengths.sum()), seed=seed)
    return np.split(np.asarray(X), np.cumsum(lengths)[:-1])


def rows(X, idx):
    """The rows (or sequences) ``idx`` of ``X``."""
    if isinstance(X, list):
        return [X[i] for i in idx]
    return X.iloc[idx] if hasattr(X, "iloc") else X[idx]


# -- the lists the suites parametrize over, built from the public names ------------
def hidden_markov_models():
    """Every public model whose rows are steps of a hidden chain fitted by
    Baum-Welch (hmmlearn's letters of its fitted parameters,
    ``_param_names``)."""
    return [
        cls
        for cls in classes()
        if reads_steps(make(cls)) and getattr(cls, "_param_names", None)
    ]


def fitted_parameters(est) -> tuple:
    """The public fitted parameters of an HMM (hmmlearn's names)."""
    names = getattr(est, "_param_names", {}).values()
    return tuple(n for n in names if not n.startswith("_"))


def linear_dynamical_systems():
    """Every public model whose rows are steps of a Gaussian state chain (a
    transformer to the states: the linear dynamical systems)."""
    return [
        cls
        for cls in classes()
        if reads_steps(make(cls)) and hasattr(make(cls), "transform")
    ]


def restartable():
    """Every public estimator that runs ``n_init`` starts, in parallel with
    ``n_jobs``."""
    return [
        cls for cls in classes() if {"n_init", "n_jobs"} <= set(make(cls).get_params())
    ]


def tabular():
    """Every public estimator that reads a table of numbers (arrays in, one
    output row per input row). Sequence models (a row is a step of a
    sequence), networks (frames) and the structure learners are left out."""
    out = []
    for cls in classes():
        est = make(cls)
        X, _ = data(est, n=4)
        if (
            isinstance(X, list)
            or hasattr(X, "iloc")
            or reads_sequences(est)
            or getattr(est, "_learns_structure", False)
        ):
            continue
        out.append(cls)
    return out


def summed_classifiers():
    """Every public classifier of tables whose fit is one sum of statistics
    (not an EM per class)."""
    out = []
    for cls in classes():
        est = make(cls)
        if not is_classifier(est) or getattr(est, "_fits_class_models_by_em", True):
            continue
        X, _ = data(est, n=4)
        if not isinstance(X, list):
            out.append(cls)
    return out


def fitted_arrays(est) -> dict:
    """Every public fitted attribute of ``est`` that is an array of numbers
    (or a list of them), by name."""
    out = {}
    for name, value in vars(est).items():
        if not name.endswith("_") or name.startswith("_"):
            continue
        if (
            isinstance(value, list)
            and value
            and all(isinstance(v, np.ndarray) and v.dtype.kind in "fiu" for v in value)
        ):
            out[name] = value
        elif isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
            out[name] = value
    return out
