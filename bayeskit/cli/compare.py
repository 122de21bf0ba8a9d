"""The compare tool: ``python -m bayeskit compare``.

Cross-validates every bayeskit classifier that fits the data, with
scikit-learn's ``LogisticRegression`` and its own naive Bayes / LDA / QDA as
baselines, and prints accuracy, log-loss, fit and predict time per model
(mean and standard deviation over the folds). ``--learning-curve`` adds the
generative-versus-discriminative comparison of Ng and Jordan (2001): test
error against training-set size for naive Bayes and logistic regression.
With ``--text COLUMN`` (or the bundled ``topics`` data) the models read a
column of documents: naive Bayes on word counts against logistic regression
on TF-IDF (:mod:`bayeskit.cli.text`).

Problems with the user's input raise :class:`CompareError`, which the command
line prints as one line (exit status 2).
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .curve import LearningCurve, check_plot, format_curve, learning_curve, save_plot
from .data import (
    DEFAULT_DATASET,
    N_BINS,
    CompareError,
    Dataset,
    _binned,
    _imputed,
    _n_codes,
    _one_hot,
    _standardised,
    load_dataset,
    read_csv,
    read_text_csv,
)
from .report import Progress, _pm, _summary, check_outputs, write_json

SMALL_DATA = 30  # fewer rows than this: leave-one-out cross-validation


@dataclass
class Candidate:
    """A model to cross-validate: a display name and an unfitted estimator."""

    name: str
    library: str
    input: str
    estimator: object


def candidates(
    data: Dataset, random_state: int = 0
) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """The models that apply to ``data``, and the skipped ones with the reason."""
    from sklearn import discriminant_analysis as sk_da
    from sklearn import naive_bayes as sk_nb
    from sklearn.linear_model import LogisticRegression

    import bayeskit as bk

    if data.text is not None:
        from .text import candidates as text_candidates

        return [Candidate(*c) for c in text_candidates(data.text)], []

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


def warm_up(estimator, data: Dataset, splitter, scorers: dict) -> None:
    """Everything the timed folds do, once and untimed: fit a clone on the first
    fold's training rows and score its test rows with every scorer (``predict``,
    ``predict_proba``). numba compiles each kernel on its first call; without
    this the compilation of the prediction path would land in the first timed
    fold (a cold cache made GaussianNB's predict look 50 times slower)."""
    from sklearn.base import clone
    from sklearn.metrics import get_scorer

    train, test = next(iter(splitter.split(data.X, data.y)))
    model = clone(estimator).fit(data.X.iloc[train], data.y.iloc[train])
    for scorer in scorers.values():
        scorer = get_scorer(scorer) if isinstance(scorer, str) else scorer
        scorer(model, data.X.iloc[test], data.y.iloc[test])


def time_candidate(candidate: Candidate, data: Dataset, splitter, scorers) -> Result:
    """One model's scores and fit and predict times on every fold of ``splitter``,
    after :func:`warm_up`; an error is kept in the result, not raised."""
    from sklearn.model_selection import cross_validate

    result = Result(candidate.name, candidate.library, candidate.input)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warm_up(candidate.estimator, data, splitter, scorers)
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
    return result


def compare(
    data: Dataset,
    cv="auto",
    random_state: int = 0,
    progress: bool | None = None,
    on_start=None,
    on_result=None,
) -> Comparison:
    """Cross-validate every candidate model on ``data`` with the same folds.

    ``on_start(comparison, candidates)`` is called once the folds and the
    models are known (``comparison.results`` still empty), and
    ``on_result(result)`` as each model finishes, so that a caller can print
    while the others run.
    """
    splitter, description = make_cv(data, cv, random_state)
    run, skipped = candidates(data, random_state)
    scorers = scoring(data)
    comparison = Comparison(data, splitter, description, [], skipped)
    if on_start is not None:
        on_start(comparison, run)
    bar = Progress(len(run), "compare", enabled=progress)
    for candidate in run:
        bar.show(f"{candidate.library} {candidate.name}")
        result = time_candidate(candidate, data, splitter, scorers)
        comparison.results.append(result)
        if on_result is not None:
            bar.clear()
            on_result(result)
        bar.advance()
    bar.close()
    return comparison


COLUMNS = ("model", "library", "input", "accuracy", "log-loss", "fit ms", "predict ms")


def result_row(r: Result) -> dict:
    """One model's row: mean ± standard deviation over the folds, as text."""
    row = dict.fromkeys(COLUMNS, "")
    row.update(model=r.name, library=r.library, input=r.input)
    if r.error:
        row["accuracy"] = "failed (below)"
    else:
        row["accuracy"] = _pm(r.mean("accuracy"), r.std("accuracy"), 3)
        row["log-loss"] = _pm(r.mean("log_loss"), r.std("log_loss"), 3)
        row["fit ms"] = _pm(r.mean("fit_time"), r.std("fit_time"), 1, 1e3)
        row["predict ms"] = _pm(r.mean("predict_time"), r.std("predict_time"), 1, 1e3)
    return row


def results_table(comparison: Comparison) -> pd.DataFrame:
    """One row per model: mean ± standard deviation over the folds, as text."""
    rows = [result_row(r) for r in comparison.results]
    return pd.DataFrame(rows, columns=list(COLUMNS)).fillna("")


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


class StreamedTable:
    """The results table, printed (and flushed) a row at a time as each model
    finishes, so that ``compare | cat`` shows progress.

    The text columns are as wide as the models' names and inputs, known before
    any model runs; the numbers' columns as wide as a typical ``mean ± std``
    (a wider value pushes the rest of its row, and only its row, to the right).
    """

    NUMBER_WIDTH = dict.fromkeys(("accuracy", "log-loss", "fit ms", "predict ms"), 13)

    def __init__(self, out) -> None:
        self.out = out
        self.widths: dict = {}

    def start(self, run: list) -> None:
        texts = {
            "model": [c.name for c in run],
            "library": [c.library for c in run],
            "input": [c.input for c in run],
        }
        self.widths = {
            c: max(len(c), *(len(v) for v in texts[c])) if c in texts else 0
            for c in COLUMNS
        }
        self.widths.update({c: max(w, len(c)) for c, w in self.NUMBER_WIDTH.items()})
        self._print(self._line(dict(zip(COLUMNS, COLUMNS))))
        self._print(self._line({c: "-" * self.widths[c] for c in COLUMNS}))

    def row(self, result: Result) -> None:
        self._print(self._line(result_row(result)))

    def _line(self, row: dict) -> str:
        cells = [
            str(row[c]).ljust(self.widths[c])
            if c in ("model", "library", "input")
            else str(row[c]).rjust(self.widths[c])
            for c in COLUMNS
        ]
        return "  ".join(cells).rstrip()

    def _print(self, line: str) -> None:
        print(line, file=self.out, flush=True)


def _wants_figures(args) -> bool:
    """``--comparison-plot`` or ``--html`` given (:mod:`bayeskit.cli.figures`)."""
    return any(
        getattr(args, name, None) is not None for name in ("comparison_plot", "html")
    )


def run(args, out=None) -> int:
    """The ``compare`` subcommand; ``args`` from :mod:`bayeskit.cli.main`."""
    out = sys.stdout if out is None else out
    if args.csv is not None and args.dataset is not None:
        raise CompareError("give either --dataset or --csv, not both")
    if args.csv is None and args.target is not None:
        raise CompareError("--target goes with --csv PATH (a bundled dataset has one)")
    if args.csv is not None and args.target is None:
        raise CompareError("--csv needs --target COLUMN, the column to predict")
    cv = parse_cv(args.cv)
    if args.plot is not None or _wants_figures(args):
        check_plot()
    text = getattr(args, "text", None)
    if text is not None and args.csv is None:
        raise CompareError(
            "--text COLUMN goes with --csv PATH --target COLUMN (the bundled "
            "text data set is --dataset topics)"
        )
    sep = getattr(args, "sep", None)
    if sep is not None and args.csv is None:
        raise CompareError("--sep goes with --csv PATH (a bundled dataset has none)")
    # Before any work: no report may write over the table, or over another report.
    check_outputs(
        {"--csv": args.csv},
        {
            "--json": args.json,
            "--plot": args.plot,
            "--comparison-plot": getattr(args, "comparison_plot", None),
            "--html": getattr(args, "html", None),
        },
    )
    if args.csv is not None:
        if text is not None:
            data = read_text_csv(args.csv, args.target, text, sep)
        else:
            data = read_csv(args.csv, args.target, sep)
    else:
        data = load_dataset(args.dataset or DEFAULT_DATASET)
    progress = False if args.no_progress else None

    start = time.perf_counter()
    table = StreamedTable(out)

    def header(comparison: Comparison, run: list) -> None:
        print(f"Data: {data.describe()}", file=out)
        print(f"Cross-validation: {comparison.cv_description}", file=out)
        print(
            "Mean ± standard deviation over the folds. Fit and predict are wall "
            "times per fold (predict: predict,\npredict_proba and scoring of the "
            "test fold), after one untimed fit and scoring of each model\non the "
            "first fold (numba compiles on first use).\n",
            file=out,
        )
        table.start(run)

    comparison = compare(
        data, cv, args.random_state, progress, on_start=header, on_result=table.row
    )
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
    if _wants_figures(args):
        from .figures import comparison_figure, save_figure, write_html

        if getattr(args, "comparison_plot", None) is not None:
            save_figure(comparison_figure(comparison), args.comparison_plot)
            print(f"comparison plot written to {args.comparison_plot}", file=out)
        if getattr(args, "html", None) is not None:
            write_html(comparison, results_table(comparison), args.html, curve)
            print(f"HTML report written to {args.html}", file=out)
    print(f"({time.perf_counter() - start:.1f} s)", file=out)
    return 0
