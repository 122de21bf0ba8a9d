"""The generative-versus-discriminative comparison of Ng and Jordan (2001):
test error against training-set size for naive Bayes and logistic regression
(``python -m bayeskit compare --learning-curve``), as a table or a PNG.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .data import CompareError, Dataset, _imputed, _numeric_steps, _one_hot
from .report import Progress, _floats, _pm, write_atomic


@dataclass
class LearningCurve:
    """Test error of naive Bayes and logistic regression against training size."""

    dataset: str
    sizes: np.ndarray
    models: list  # display names
    errors: np.ndarray  # (n_models, n_sizes, n_repeats)
    n_test: int

    def table(self) -> pd.DataFrame:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean = np.nanmean(self.errors, axis=2)
            std = np.nanstd(self.errors, axis=2)
        columns = {}
        for name, m, s in zip(self.models, mean, std):
            columns[f"{name} error"] = m
            columns[f"{name} std"] = s
        return pd.DataFrame(columns, index=pd.Index(self.sizes, name="training rows"))

    def as_dict(self) -> dict:
        table = self.table()
        return {
            "n_test": self.n_test,
            "n_repeats": int(self.errors.shape[2]),
            "training_rows": [int(n) for n in self.sizes],
            "models": {
                name: {
                    "error_mean": _floats(table[f"{name} error"]),
                    "error_std": _floats(table[f"{name} std"]),
                }
                for name in self.models
            },
        }


def _curve_models(data: Dataset):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    import bayeskit as bk

    if data.text is not None:
        from .text import curve_models

        return curve_models(data.text)
    if data.kind == "numeric":
        nb = make_pipeline(*_numeric_steps(data), bk.GaussianNB())
        name = "naive Bayes (bayeskit GaussianNB)"
    elif data.kind == "categorical":
        nb = bk.CategoricalNB(m=1.0, categories="observed")
        name = "naive Bayes (bayeskit CategoricalNB)"
    else:
        nb, name = _imputed(data, bk.MixedNB()), "naive Bayes (bayeskit MixedNB)"
    logistic = _one_hot(data, LogisticRegression(max_iter=1000))
    return [(name, nb), ("logistic regression", logistic)]


def _training_sizes(n_classes: int, pool: int, n_points: int = 8) -> np.ndarray:
    low = min(max(2 * n_classes, 4), pool)
    return np.unique(np.round(np.geomspace(low, pool, n_points)).astype(int))


def _classes_first(y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random order of the rows in which the first rows hold one of each class."""
    order = rng.permutation(len(y))
    _, first = np.unique(y[order], return_index=True)
    head = order[np.sort(first)]
    return np.concatenate([head, order[~np.isin(order, head)]])


def learning_curve(
    data: Dataset,
    n_repeats: int = 10,
    test_size: float = 0.3,
    random_state: int = 0,
    progress: bool | None = None,
) -> LearningCurve:
    """Ng and Jordan's comparison: for each of ``n_repeats`` stratified splits,
    fit on growing random subsets of the training part (each holding every
    class) and measure the error on the held-out part."""
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedShuffleSplit

    X, y = data.X, data.y.to_numpy()
    n_classes = len(data.classes)
    n_test = min(max(math.ceil(test_size * len(y)), n_classes), len(y) - n_classes)
    splits = StratifiedShuffleSplit(
        n_repeats, test_size=n_test, random_state=random_state
    )
    sizes = _training_sizes(n_classes, len(y) - n_test)
    models = _curve_models(data)
    errors = np.full((len(models), len(sizes), n_repeats), np.nan)
    rng = np.random.default_rng(random_state)
    bar = Progress(n_repeats * len(sizes), "learning curve", enabled=progress)
    for r, (train, test) in enumerate(splits.split(X, y)):
        order = train[_classes_first(y[train], rng)]
        for i, size in enumerate(sizes):
            rows = order[:size]
            bar.show(f"{size} training rows")
            for j, (_, model) in enumerate(models):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        fitted = clone(model).fit(X.iloc[rows], y[rows])
                        predicted = fitted.predict(X.iloc[test])
                    except Exception:
                        continue
                errors[j, i, r] = np.mean(predicted != y[test])
            bar.advance()
    bar.close()
    return LearningCurve(data.name, sizes, [n for n, _ in models], errors, n_test)


def format_curve(curve: LearningCurve) -> str:
    table = curve.table()
    shown = pd.DataFrame(index=table.index)
    for name in curve.models:
        shown[f"{name} error"] = [
            _pm(m, s, 3) for m, s in zip(table[f"{name} error"], table[f"{name} std"])
        ]
    return shown.to_string()


PLOT_MISSING = (
    "--plot needs matplotlib, which is not installed: pip install matplotlib "
    '(or, from a checkout of bayeskit, pip install ".[plot]")'
)


def check_plot() -> None:
    """A :class:`CompareError` that says how to install matplotlib when it
    cannot be imported (absent, or hidden)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CompareError(PLOT_MISSING) from None


def save_plot(curve: LearningCurve, path: str) -> None:
    """The learning curves as a PNG (matplotlib, without pyplot's global state)."""
    check_plot()
    from matplotlib.figure import Figure

    table = curve.table()
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.add_subplot()
    for name in curve.models:
        mean, std = table[f"{name} error"], table[f"{name} std"]
        ax.plot(table.index, mean, marker="o", label=name)
        ax.fill_between(table.index, mean - std, mean + std, alpha=0.2)
    ax.set_xscale("log")
    ax.set_xlabel("training rows")
    ax.set_ylabel(f"test error ({curve.n_test} held-out rows)")
    ax.set_title(f"{curve.dataset}: generative vs discriminative (Ng & Jordan 2001)")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    write_atomic(path, lambda f: fig.savefig(f, format="png", dpi=120), binary=True)
