"""Warnings that point at the caller's line, however deep bayeskit raised them."""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["warn"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _skipped(filename: str) -> bool:
    # bayeskit's own frames and scikit-learn's wrappers around fit
    # (``_fit_context``, ``available_if``): the warning is about the call the
    # user wrote, not about where inside the library it was noticed.
    path = os.path.abspath(filename)
    return path.startswith(_PACKAGE) or (
        f"{os.sep}sklearn{os.sep}" in path
        and os.path.basename(path) in ("base.py", "_available_if.py")
    )


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` with the stack level of the first frame outside
    bayeskit (and outside scikit-learn's fit wrappers)."""
    frame = sys._getframe(1)
    level = 2  # 1 is this function, 2 its caller
    while frame is not None and _skipped(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
