"""The compare tool's output: the progress bar, text tables, numbers as JSON,
and the files it writes: never over one of its inputs (or another of its
outputs), and atomically (a report appears whole or not at all; an old file of
the name is left as it was until the new one is complete)."""

from __future__ import annotations

import json
import math
import os
import stat
import sys
import tempfile

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


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one file: the same path once resolved (links,
    ``..``), or the same existing file (a hard link)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def check_outputs(inputs: dict, outputs: dict) -> None:
    """Refuse, before any work, an output that would write over an input or
    over another output. ``inputs`` and ``outputs`` map an option (``--csv``,
    ``--json``, ...) to its path, or to None when it is not given."""
    given_in = {k: v for k, v in inputs.items() if v is not None}
    given_out = {k: v for k, v in outputs.items() if v is not None}
    for option, path in given_out.items():
        if os.path.isdir(path):
            raise CompareError(f"{option} {path} is a directory; name a file")
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise CompareError(f"{option} {path}: the folder {folder} does not exist")
        for other, source in given_in.items():
            if _same_file(path, source):
                raise CompareError(
                    f"{option} {path} would write over the input {other} {source}: "
                    "name another file for the report"
                )
    names = list(given_out.items())
    for i, (option, path) in enumerate(names):
        for other, second in names[i + 1 :]:
            if _same_file(path, second):
                raise CompareError(
                    f"{option} and {other} name the same file, {path}: name two files"
                )


def write_atomic(path, write, binary: bool = False) -> None:
    """Call ``write(f)`` on a new file that replaces ``path`` only once it is
    complete (a temporary file in the same folder, then ``os.replace``): a
    failure leaves any old file of the name as it was, and no partial report.
    A path that names something other than a regular file (``/dev/stdout``,
    a pipe) is written directly, as is an open file object."""
    if hasattr(path, "write"):
        write(path)
        return
    path = os.fspath(path)
    target = os.path.realpath(path)
    try:
        mode = os.stat(target).st_mode
    except OSError:
        mode = None
    try:
        if mode is not None and not stat.S_ISREG(mode):
            with open(target, "wb" if binary else "w", **_text(binary)) as f:
                write(f)
            return
        folder = os.path.dirname(target)
        fd, tmp = tempfile.mkstemp(
            dir=folder, prefix=f".{os.path.basename(target)}.", suffix=".tmp"
        )
        try:
            with os.fdopen(fd, "wb" if binary else "w", **_text(binary)) as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())
            if mode is None:  # a new file: the permissions open() would give
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(tmp, 0o666 & ~umask)
            else:
                os.chmod(tmp, stat.S_IMODE(mode))
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError as exc:
        raise CompareError(f"cannot write {path}: {exc.strerror or exc}") from None


def _text(binary: bool) -> dict:
    return {} if binary else {"encoding": "utf-8", "newline": "\n"}


def write_json(payload: dict, path: str) -> None:
    """``payload`` as indented JSON, written atomically to ``path``."""

    def write(f) -> None:
        json.dump(payload, f, indent=2)
        f.write("\n")

    write_atomic(path, write)
