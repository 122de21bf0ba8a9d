"""The compare tool: ``python -m bayeskit compare``.

Cross-validates every bayeskit classifier that fits the data, with
scikit-learn's ``LogisticRegression`` and its own naive Bayes / LDA / QDA as
baselines, and prints accuracy, log-loss, fit and predict time per model
(mean and standard deviation over the folds). ``--learning-curve`` adds the
generative-versus-discriminative comparison of Ng and Jordan (2001): test
error against training-set size for naive Bayes and logistic regression.

Problems with the user's input raise :class:`CompareError`, which the command
line prints as one line (exit status 2).
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

DEFAULT_DATASET = "breast_cancer"
N_BINS = 5
SMALL_DATA = 30  # fewer rows than this: leave-one-out cross-validation


class CompareError(Exception):
    """A problem with the input that the user can fix (one line, exit status 2)."""


# --------------------------------------------------------------------------- data


@dataclass
class Dataset:
    """A classification table: features ``X`` (a DataFrame) and target ``y``."""

    name: str
    X: pd.DataFrame
    y: pd.Series
    source: str

    @property
    def categorical(self) -> list:
        """Columns taken as categorical: dtype object, string, category or bool."""
        return [c for c in self.X.columns if _is_categorical(self.X[c])]

    @property
    def numeric(self) -> list:
        cat = set(self.categorical)
        return [c for c in self.X.columns if c not in cat]

    @property
    def kind(self) -> str:
        """'numeric', 'categorical' or 'mixed'."""
        if not self.categorical:
            return "numeric"
        return "mixed" if self.numeric else "categorical"

    @property
    def classes(self) -> np.ndarray:
        return np.unique(self.y.to_numpy())

    def describe(self) -> str:
        parts = []
        if self.numeric:
            parts.append(f"{len(self.numeric)} numeric")
        if self.categorical:
            parts.append(f"{len(self.categorical)} categorical")
        return (
            f"{self.name} ({self.source}): {len(self.X)} rows, "
            f"{' + '.join(parts)} features, {len(self.classes)} classes"
        )


def _is_categorical(column: pd.Series) -> bool:
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(dtype):
        return True
    return getattr(dtype, "kind", "O") in "OSUb"


def _sklearn_loader(loader_name):
    def load() -> tuple[pd.DataFrame, pd.Series]:
        from sklearn import datasets

        bunch = getattr(datasets, loader_name)(as_frame=True)
        y = pd.Series(
            np.asarray(bunch.target_names)[bunch.target.to_numpy()],
            name="target",
            index=bunch.data.index,
        )
        return bunch.data, y

    return load


def _load_playtennis() -> tuple[pd.DataFrame, pd.Series]:
    from .datasets import load_playtennis

    df = load_playtennis()
    return df.drop(columns="PlayTennis"), df["PlayTennis"]


DATASETS = {
    "breast_cancer": ("scikit-learn", _sklearn_loader("load_breast_cancer")),
    "iris": ("scikit-learn", _sklearn_loader("load_iris")),
    "wine": ("scikit-learn", _sklearn_loader("load_wine")),
    "playtennis": ("bayeskit", _load_playtennis),
}


def load_dataset(name: str = DEFAULT_DATASET) -> Dataset:
    """One of the bundled data sets (no download): see ``DATASETS``."""
    key = name.strip().lower().replace("-", "_")
    if key not in DATASETS:
        raise CompareError(
            f"unknown dataset {name!r}: choose one of {', '.join(sorted(DATASETS))}, "
            "or give --csv PATH --target COLUMN"
        )
    source, loader = DATASETS[key]
    X, y = loader()
    return _checked(Dataset(key, X, y, source), "target")


def read_csv(path: str, target: str) -> Dataset:
    """The user's table: every column but ``target`` is a feature."""
    try:
        df = pd.read_csv(path)
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        raise CompareError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CompareError(f"cannot parse {path} as CSV: {reason}") from None
    if target not in df.columns:
        shown = ", ".join(map(str, df.columns[:10]))
        more = ", ..." if len(df.columns) > 10 else ""
        raise CompareError(
            f"target column {target!r} is not in {path} (columns: {shown}{more})"
        )
    df = df[df[target].notna()]
    X = df.drop(columns=target)
    if X.shape[1] == 0:
        raise CompareError(f"{path} has no feature columns besides {target!r}")
    X = X.loc[:, X.notna().any()]
    if X.shape[1] == 0:
        raise CompareError(f"every feature column of {path} is empty")
    return _checked(
        Dataset(str(path), X, df[target], "CSV"), f"target column {target!r}"
    )


def _checked(data: Dataset, what: str) -> Dataset:
    y = data.y
    if pd.api.types.is_float_dtype(y.dtype) and not np.all(np.mod(y, 1) == 0):
        raise CompareError(
            f"{what} has non-integer numbers ({y.nunique()} distinct values): "
            "compare needs class labels"
        )
    counts = y.value_counts()
    if len(counts) < 2:
        only = f" ({counts.index[0]!r})" if len(counts) else ""
        raise CompareError(
            f"{what} has one class{only}: classification needs at least two"
        )
    rare = counts[counts < 2]
    if len(rare):
        raise CompareError(
            f"{what} has a class with a single row ({rare.index[0]!r}): "
            "cross-validation needs at least 2 rows per class"
        )
    return data


# ------------------------------------------------------------------------- models


@dataclass
class Candidate:
    """A model to cross-validate: a display name and an unfitted estimator."""

    name: str
    library: str
    input: str
    estimator: object


def _numeric_steps(data: Dataset, *final) -> list:
    from sklearn.impute import SimpleImputer

    missing = bool(data.numeric) and bool(data.X[data.numeric].isna().to_numpy().any())
    return [SimpleImputer(strategy="median")] * missing + list(final)


def _standardised(data: Dataset, model):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(*_numeric_steps(data, StandardScaler()), model)


def _bins():
    from sklearn.preprocessing import KBinsDiscretizer

    return KBinsDiscretizer(n_bins=N_BINS, encode="ordinal", strategy="quantile")


def _binned(data: Dataset, model, ordinal_codes: bool = False):
    """Numeric columns cut into quantile bins; categorical columns as they are
    (or as ordinal codes, unknown and missing values one extra code)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OrdinalEncoder

    parts = []
    if data.numeric:
        parts.append(
            ("num", make_pipeline(*_numeric_steps(data, _bins())), data.numeric)
        )
    if data.categorical and ordinal_codes:
        extra = _n_codes(data) - 1
        encoder = OrdinalEncoder(
            handle_unknown="use_encoded_value",
            unknown_value=extra,
            encoded_missing_value=extra,
        )
        parts.append(("cat", encoder, data.categorical))
    if not parts:
        return model
    columns = ColumnTransformer(
        parts, remainder="passthrough", verbose_feature_names_out=False
    ).set_output(transform="pandas")
    return make_pipeline(columns, model)


def _n_codes(data: Dataset) -> int:
    """Codes per column for scikit-learn's CategoricalNB: every bin or category,
    plus one for unknown and missing values."""
    most = max([data.X[c].nunique() for c in data.categorical], default=0)
    return max(most, N_BINS if data.numeric else 0) + 1


def _imputed(data: Dataset, model):
    """Missing numbers replaced by the column median (for MixedNB)."""
    steps = _numeric_steps(data)
    if not steps:
        return model
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline

    columns = ColumnTransformer(
        [("num", steps[0], data.numeric)],
        remainder="passthrough",
        verbose_feature_names_out=False,
    ).set_output(transform="pandas")
    return make_pipeline(columns, model)


def _one_hot(data: Dataset, model):
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    if data.kind == "numeric":
        return _standardised(data, model)
    parts = [("cat", OneHotEncoder(handle_unknown="ignore"), data.categorical)]
    if data.numeric:
        steps = _numeric_steps(data, StandardScaler())
        parts.insert(0, ("num", make_pipeline(*steps), data.numeric))
    return make_pipeline(ColumnTransformer(parts), model)


def candidates(
    data: Dataset, random_state: int = 0
) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """The models that apply to ``data``, and the skipped ones with the reason."""
    from sklearn import discriminant_analysis as sk_da
    from sklearn import naive_bayes as sk_nb
    from sklearn.linear_model import LogisticRegression

    from . import models as bk

    kind = data.kind
    std = "standardised"
    bins = {
        "numeric": f"{N_BINS} quantile bins",
        "categorical": "categories",
        "mixed": f"categories + {N_BINS} quantile bins",
    }[kind]
    codes = bins.replace("categories", "ordinal codes")
    onehot = {"numeric": std, "categorical": "one-hot"}.get(kind, f"one-hot + {std}")

    run: list[Candidate] = []
    skipped: list[tuple[str, str]] = []
    gaussian = [
        ("GaussianNB", "bayeskit", bk.GaussianNB()),
        ("LDA", "bayeskit", bk.LinearDiscriminantAnalysis()),
        (
            "QDA, covariance prior weight 1",
            "bayeskit",
            bk.QuadraticDiscriminantAnalysis(covariance_prior_weight=1.0),
        ),
        (
            "GaussianMixtureClassifier, 2 per class",
            "bayeskit",
            bk.GaussianMixtureClassifier(
                n_components=2, covariance_prior_weight=1.0, random_state=random_state
            ),
        ),
    ]
    if kind == "numeric":
        run += [
            Candidate(n, lib, std, _standardised(data, m)) for n, lib, m in gaussian
        ]
    else:
        why = (
            f"Gaussian model; the data have {len(data.categorical)} categorical columns"
        )
        skipped += [(n, why) for n, _, _ in gaussian]
    run += [
        Candidate(
            "CategoricalNB",
            "bayeskit",
            bins,
            _binned(data, bk.CategoricalNB(m=1.0, categories="observed")),
        ),
        Candidate(
            "TreeAugmentedNB", "bayeskit", bins, _binned(data, bk.TreeAugmentedNB())
        ),
    ]
    if kind == "mixed":
        mixed = _imputed(data, bk.MixedNB())
        run.append(Candidate("MixedNB", "bayeskit", "categories + numbers", mixed))
    else:
        same = "CategoricalNB" if kind == "categorical" else "GaussianNB"
        skipped.append(("MixedNB", f"the same model as {same} on {kind} data"))

    logistic = LogisticRegression(max_iter=1000)
    run.append(
        Candidate(
            "LogisticRegression", "scikit-learn", onehot, _one_hot(data, logistic)
        )
    )
    if kind == "numeric":
        run += [
            Candidate(
                "GaussianNB",
                "scikit-learn",
                std,
                _standardised(data, sk_nb.GaussianNB()),
            ),
            Candidate(
                "LDA",
                "scikit-learn",
                std,
                _standardised(data, sk_da.LinearDiscriminantAnalysis()),
            ),
            Candidate(
                "QDA",
                "scikit-learn",
                std,
                _standardised(data, sk_da.QuadraticDiscriminantAnalysis()),
            ),
        ]
    sk_cat = sk_nb.CategoricalNB(min_categories=_n_codes(data))
    run.append(
        Candidate(
            "CategoricalNB",
            "scikit-learn",
            codes,
            _binned(data, sk_cat, ordinal_codes=True),
        )
    )
    return run, skipped


# ---------------------------------------------------------------- cross-validation


def parse_cv(text) -> str | int:
    """``'auto'``, ``'loo'`` or a number of folds (at least 2)."""
    text = str(text).strip().lower()
    if text in ("auto", "loo"):
        return text
    try:
        folds = int(text)
    except ValueError:
        folds = 0
    if folds < 2:
        raise CompareError(
            f"--cv must be a number of folds of at least 2, 'loo' or 'auto', "
            f"not {text!r}"
        )
    return folds


def make_cv(data: Dataset, cv="auto", random_state: int = 0):
    """The splitter and a sentence that says what it is and why."""
    from sklearn.model_selection import LeaveOneOut, StratifiedKFold

    n = len(data.X)
    cv = parse_cv(cv)
    if cv == "loo" or (cv == "auto" and n < SMALL_DATA):
        why = f"{n} rows are few" if cv == "auto" else "as asked"
        return LeaveOneOut(), (
            f"leave-one-out ({why}): {n} folds of one test row each, so the "
            "accuracy of a fold is 0 or 1"
        )
    folds = 5 if cv == "auto" else cv
    smallest = int(data.y.value_counts().min())
    note = ""
    if folds > smallest:
        note = f"; {folds} asked, but the smallest class has {smallest} rows"
        folds = smallest
    splitter = StratifiedKFold(folds, shuffle=True, random_state=random_state)
    return splitter, (
        f"stratified {folds}-fold, shuffled (random_state={random_state}){note}"
    )


def scoring(data: Dataset) -> dict:
    """Accuracy and log-loss (with every class named, so a test fold may miss some)."""
    from sklearn.metrics import log_loss, make_scorer

    neg_log_loss = make_scorer(
        log_loss,
        greater_is_better=False,
        response_method="predict_proba",
        labels=data.classes,
    )
    return {"accuracy": "accuracy", "neg_log_loss": neg_log_loss}


METRICS = ("accuracy", "log_loss", "fit_time", "predict_time")


@dataclass
class Result:
    """One model's scores per fold (``METRICS``), or the error that stopped it."""

    name: str
    library: str
    input: str
    scores: dict = field(default_factory=dict)
    error: str | None = None

    def mean(self, metric: str) -> float:
        values = self.scores.get(metric)
        return float(np.mean(values)) if values is not None else math.nan

    def std(self, metric: str) -> float:
        values = self.scores.get(metric)
        return float(np.std(values)) if values is not None else math.nan


@dataclass
class Comparison:
    data: Dataset
    cv: object
    cv_description: str
    results: list
    skipped: list


class Progress:
    """A one-line progress bar on stderr (drawn only on a terminal)."""

    def __init__(self, total: int, label: str, stream=None, enabled=None):
        self.total, self.label, self.done = max(total, 1), label, 0
        self.stream = sys.stderr if stream is None else stream
        if enabled is None:
            enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.enabled = enabled
        self._width = 0

    def show(self, text: str = "") -> None:
        if not self.enabled:
            return
        filled = round(24 * self.done / self.total)
        line = f"{self.label} [{'#' * filled}{'.' * (24 - filled)}] "
        line += f"{self.done}/{self.total} {text}"[:100]
        self.stream.write("\r" + line.ljust(self._width))
        self.stream.flush()
        self._width = len(line)

    def advance(self, text: str = "") -> None:
        self.done += 1
        self.show(text)

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()


def compare(
    data: Dataset, cv="auto", random_state: int = 0, progress: bool | None = None
) -> Comparison:
    """Cross-validate every candidate model on ``data`` with the same folds."""
    from sklearn.base import clone
    from sklearn.model_selection import cross_validate

    splitter, description = make_cv(data, cv, random_state)
    run, skipped = candidates(data, random_state)
    scorers = scoring(data)
    bar = Progress(len(run), "compare", enabled=progress)
    results = []
    for candidate in run:
        bar.show(f"{candidate.library} {candidate.name}")
        result = Result(candidate.name, candidate.library, candidate.input)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # One fit before the timed ones: numba compiles on first use.
                clone(candidate.estimator).fit(data.X, data.y)
                scores = cross_validate(
                    candidate.estimator,
                    data.X,
                    data.y,
                    cv=splitter,
                    scoring=scorers,
                    error_score="raise",
                )
        except Exception as exc:
            result.error = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        else:
            result.scores = {
                "accuracy": scores["test_accuracy"],
                "log_loss": -scores["test_neg_log_loss"],
                "fit_time": scores["fit_time"],
                "predict_time": scores["score_time"],
            }
        results.append(result)
        bar.advance()
    bar.close()
    return Comparison(data, splitter, description, results, skipped)


def _pm(mean: float, std: float, digits: int, scale: float = 1.0) -> str:
    if math.isnan(mean):
        return "nan"
    return f"{mean * scale:.{digits}f} ± {std * scale:.{digits}f}"


def results_table(comparison: Comparison) -> pd.DataFrame:
    """One row per model: mean ± standard deviation over the folds, as text."""
    rows = []
    for r in comparison.results:
        row = {"model": r.name, "library": r.library, "input": r.input}
        if r.error:
            row["accuracy"] = "failed (below)"
        else:
            row["accuracy"] = _pm(r.mean("accuracy"), r.std("accuracy"), 3)
            row["log-loss"] = _pm(r.mean("log_loss"), r.std("log_loss"), 3)
            row["fit ms"] = _pm(r.mean("fit_time"), r.std("fit_time"), 1, 1e3)
            row["predict ms"] = _pm(
                r.mean("predict_time"), r.std("predict_time"), 1, 1e3
            )
        rows.append(row)
    columns = ["model", "library", "input", "accuracy", "log-loss", "fit ms"]
    return pd.DataFrame(rows, columns=[*columns, "predict ms"]).fillna("")


def format_table(table: pd.DataFrame) -> str:
    """Text columns left-aligned, numbers right-aligned."""
    left = {"model", "library", "input"}
    widths = {c: max(len(c), *(len(str(v)) for v in table[c])) for c in table}

    def line(values) -> str:
        cells = [
            str(v).ljust(widths[c]) if c in left else str(v).rjust(widths[c])
            for c, v in zip(table.columns, values)
        ]
        return "  ".join(cells).rstrip()

    out = [line(table.columns), line("-" * widths[c] for c in table.columns)]
    out += [line(row) for row in table.itertuples(index=False)]
    return "\n".join(out)


# ----------------------------------------------------------------- learning curve


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

    from . import models as bk

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
    "(or pip install 'bayeskit[plot]')"
)


def check_plot() -> None:
    if importlib.util.find_spec("matplotlib") is None:
        raise CompareError(PLOT_MISSING)


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
    try:
        fig.savefig(path, format="png", dpi=120)
    except OSError as exc:
        raise CompareError(f"cannot write {path}: {exc.strerror or exc}") from None


# ---------------------------------------------------------------------- output


def _floats(values) -> list:
    return [None if math.isnan(v) else float(v) for v in np.asarray(values, float)]


def _summary(values) -> dict:
    values = np.asarray(values, dtype=float)
    return {
        "mean": _floats([values.mean()])[0],
        "std": _floats([values.std()])[0],
        "folds": _floats(values),
    }


def as_dict(comparison: Comparison, curve: LearningCurve | None = None) -> dict:
    """Everything printed, as plain JSON-ready values (NaN becomes null)."""
    data = comparison.data
    out = {
        "dataset": {
            "name": data.name,
            "source": data.source,
            "n_samples": len(data.X),
            "n_features": data.X.shape[1],
            "categorical_features": [str(c) for c in data.categorical],
            "classes": [str(c) for c in data.classes],
        },
        "cv": {
            "description": comparison.cv_description,
            "splitter": repr(comparison.cv),
            "n_splits": comparison.cv.get_n_splits(data.X, data.y),
        },
        "results": [
            {
                "model": r.name,
                "library": r.library,
                "input": r.input,
                "error": r.error,
                **{m: _summary(r.scores[m]) for m in METRICS if m in r.scores},
            }
            for r in comparison.results
        ],
        "skipped": [{"model": n, "reason": why} for n, why in comparison.skipped],
    }
    if curve is not None:
        out["learning_curve"] = curve.as_dict()
    return out


def write_json(payload: dict, path: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(payload, f, indent=2)
            f.write("\n")
    except OSError as exc:
        raise CompareError(f"cannot write {path}: {exc.strerror or exc}") from None


def run(args, out=None) -> int:
    """The ``compare`` subcommand; ``args`` from :mod:`bayeskit.__main__`."""
    out = sys.stdout if out is None else out
    if args.csv is not None and args.dataset is not None:
        raise CompareError("give either --dataset or --csv, not both")
    if args.csv is None and args.target is not None:
        raise CompareError("--target goes with --csv PATH (a bundled dataset has one)")
    if args.csv is not None and args.target is None:
        raise CompareError("--csv needs --target COLUMN, the column to predict")
    cv = parse_cv(args.cv)
    if args.plot is not None:
        check_plot()
    if args.csv is not None:
        data = read_csv(args.csv, args.target)
    else:
        data = load_dataset(args.dataset or DEFAULT_DATASET)
    progress = False if args.no_progress else None

    start = time.perf_counter()
    comparison = compare(data, cv, args.random_state, progress)
    print(f"Data: {data.describe()}", file=out)
    print(f"Cross-validation: {comparison.cv_description}", file=out)
    print(
        "Mean ± standard deviation over the folds. Fit and predict are wall times "
        "per fold (predict: predict,\npredict_proba and scoring of the test fold), "
        "after one untimed fit of each model (numba compiles on first use).\n",
        file=out,
    )
    print(format_table(results_table(comparison)), file=out)
    for r in comparison.results:
        if r.error:
            print(f"failed: {r.library} {r.name}: {r.error}", file=out)
    for name, why in comparison.skipped:
        print(f"skipped: bayeskit {name} ({why})", file=out)

    curve = None
    if args.learning_curve or args.plot is not None:
        curve = learning_curve(data, random_state=args.random_state, progress=progress)
        print(
            "\nLearning curve (Ng and Jordan 2001): test error on "
            f"{curve.n_test} held-out rows against training rows, mean ± std over "
            f"{curve.errors.shape[2]} random splits\n",
            file=out,
        )
        print(format_curve(curve), file=out)
        if args.plot is not None:
            save_plot(curve, args.plot)
            print(f"\nplot written to {args.plot}", file=out)
    if args.json is not None:
        write_json(as_dict(comparison, curve), args.json)
        print(f"results written to {args.json}", file=out)
    print(f"({time.perf_counter() - start:.1f} s)", file=out)
    return 0
