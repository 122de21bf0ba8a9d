"""The compare tool's output: the progress bar, text tables, numbers as JSON."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pandas as pd

from .data import CompareError


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

    def clear(self) -> None:
        """Erase the bar (before other output on the terminal); the next
        :meth:`show` draws it again."""
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()


def _pm(mean: float, std: float, digits: int, scale: float = 1.0) -> str:
    if math.isnan(mean):
        return "nan"
    return f"{mean * scale:.{digits}f} ± {std * scale:.{digits}f}"


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


def _floats(values) -> list:
    return [None if math.isnan(v) else float(v) for v in np.asarray(values, float)]


def _summary(values) -> dict:
    values = np.asarray(values, dtype=float)
    return {
        "mean": _floats([values.mean()])[0],
        "std": _floats([values.std()])[0],
        "folds": _floats(values),
    }


def write_json(payload: dict, path: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(payload, f, indent=2)
            f.write("\n")
    except OSError as exc:
        raise CompareError(f"cannot write {path}: {exc.strerror or exc}") from None
