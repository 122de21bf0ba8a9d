"""Command-line entry point: ``python -m bayeskit`` (or the ``bayeskit`` command).

``compare`` (the default) cross-validates the bayeskit classifiers against
scikit-learn's; ``demo`` prints exact inference on small textbook networks.
The tool itself is the package :mod:`bayeskit.cli`.
"""

from __future__ import annotations

import os
import sys

from .cli.main import main

__all__ = ["main"]

if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # output piped into a reader that stopped (``| head``)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
