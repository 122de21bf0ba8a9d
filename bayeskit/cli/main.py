"""The command line: ``bayeskit [compare|demo] ...``, its parser and ``main``.

``compare`` (the default) cross-validates the bayeskit classifiers against
scikit-learn's (:mod:`bayeskit.cli.compare`); ``demo`` prints exact inference
on small textbook networks (:mod:`bayeskit.cli.demo`). ``python -m
bayeskit`` and the ``bayeskit`` command both run :func:`main`.
"""

from __future__ import annotations

import argparse
import sys


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayeskit",
        description="Generative Bayesian models on one belief-propagation core.",
    )
    _add_version(parser)
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("demo", help="exact inference on small textbook networks")
    compare = sub.add_parser(
        "compare",
        help="cross-validate the bayeskit classifiers against scikit-learn's "
        "(the default)",
        description="Cross-validate every bayeskit classifier that fits the data "
        "and scikit-learn's LogisticRegression, naive Bayes, LDA and QDA as "
        "baselines; print accuracy, log-loss, fit and predict time per model.",
    )
    _add_compare_arguments(compare)
    return parser


def _add_version(parser: argparse.ArgumentParser) -> None:
    from .. import __version__

    parser.add_argument(
        "--version", action="version", version=f"bayeskit {__version__}"
    )


def _seed(text: str) -> int:
    """A seed as numpy's generators take it: an integer in [0, 2**32)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(
            f"must be between 0 and 2**32 - 1, got {value}"
        )
    return value


def _add_compare_arguments(parser: argparse.ArgumentParser) -> None:
    from .data import DATASETS, DEFAULT_DATASET

    data = parser.add_argument_group(
        "data (default: --dataset " + DEFAULT_DATASET + ")"
    )
    data.add_argument(
        "--dataset",
        metavar="NAME",
        help=f"a bundled dataset, no download: {', '.join(sorted(DATASETS))}",
    )
    data.add_argument("--csv", metavar="PATH", help="your own table, with a header")
    data.add_argument(
        "--target",
        metavar="COLUMN",
        help="the CSV column to predict (text, bool and category columns are "
        "taken as categorical features)",
    )
    data.add_argument(
        "--sep",
        metavar="SEP",
        help="the CSV's column separator (default ','; e.g. ';', or '\\t' for tabs)",
    )
    data.add_argument(
        "--text",
        metavar="COLUMN",
        help="the CSV column of documents: compare naive Bayes on its word "
        "counts with logistic regression on TF-IDF (other columns are left out)",
    )
    parser.add_argument(
        "--cv",
        default="auto",
        metavar="K",
        help="folds of stratified K-fold, or 'loo' for leave-one-out; 'auto' "
        "(default): 5 folds, leave-one-out under 30 rows",
    )
    parser.add_argument(
        "--random-state",
        type=_seed,
        default=0,
        metavar="N",
        help="seed, 0 to 2**32 - 1 (default 0)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument(
        "--learning-curve",
        action="store_true",
        help="also print test error against training size for naive Bayes and "
        "logistic regression (Ng and Jordan 2001)",
    )
    parser.add_argument(
        "--plot",
        metavar="PATH",
        help="save the learning curve as a PNG (needs matplotlib; implies "
        "--learning-curve)",
    )
    parser.add_argument(
        "--comparison-plot",
        metavar="PATH",
        help="save the accuracy and log-loss of every model as a PNG (needs "
        "matplotlib)",
    )
    parser.add_argument(
        "--html",
        metavar="PATH",
        help="write a self-contained HTML report: the results and the figures "
        "(needs matplotlib)",
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar on stderr"
    )
    _add_version(parser)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["compare", *argv]
    args = parser.parse_args(argv)
    if args.command == "demo":
        from .demo import run_demo

        run_demo()
        return 0
    from .compare import CompareError, run

    try:
        return run(args)
    except CompareError as exc:
        print(f"bayeskit compare: error: {exc}", file=sys.stderr)
        return 2
