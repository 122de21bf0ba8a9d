"""Command-line entry point: ``python -m bayeskit`` (or the ``bayeskit`` command)."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bayeskit",
        description="Generative Bayesian models on one belief-propagation core.",
    )
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("demo", help="exact inference on the lecture-notes tree network")
    args = parser.parse_args(argv)
    if args.command in (None, "demo"):
        from ._demo import run_demo

        run_demo()
    return 0


if __name__ == "__main__":
    sys.exit(main())
