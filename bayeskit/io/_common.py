"""What the BIF and XMLBIF readers and writers share."""

from __future__ import annotations

import gzip
import os
import re

import numpy as np

__all__ = ["FileError", "build_network", "number", "read_text", "write_text"]

# A name or state written bare in BIF: no blank, comma, bracket, brace,
# parenthesis, semicolon, bar or quote.
WORD = re.compile(r'[^\s{}()\[\];,|"]+')


class FileError(ValueError):
    """A malformed network file: the message starts with the line number."""

    def __init__(self, line: int | None, message: str) -> None:
        self.line = line
        super().__init__(message if line is None else f"line {line}: {message}")


def read_text(source, what: str) -> str:
    """The text of ``source``: a path (``.gz`` decompressed), a file object,
    or the text itself (a string holding a newline, ``{`` or ``<``, which
    no path of a network file does)."""
    if hasattr(source, "read"):
        text = source.read()
        return text.decode("utf-8") if isinstance(text, bytes) else text
    if isinstance(source, bytes):
        return source.decode("utf-8")
    if isinstance(source, (str, os.PathLike)):
        s = os.fspath(source)
        if isinstance(source, str) and any(c in s for c in "\n{<"):
            return s
        opener = gzip.open if s.endswith(".gz") else open
        with opener(s, "rt", encoding="utf-8") as f:
            return f.read()
    raise TypeError(
        f"source must be a path, a file object or the text of a {what} file, "
        f"got {type(source).__name__}"
    )


def write_text(text: str, path):
    """``text`` written to ``path`` (``.gz`` compressed), or returned for None."""
    if path is None:
        return text
    if hasattr(path, "write"):
        path.write(text)
        return None
    s = os.fspath(path)
    opener = gzip.open if s.endswith(".gz") else open
    with opener(s, "wt", encoding="utf-8") as f:
        f.write(text)
    return None


def number(text: str, line: int) -> float:
    """A probability of the file."""
    try:
        value = float(text)
    except ValueError:
        raise FileError(line, f"expected a probability, got {text!r}") from None
    return value


def build_network(variables: dict, tables: dict, lines: dict):
    """The network of parsed ``variables`` ``{name: (states, line)}`` and
    ``tables`` ``{name: (parents, values (*parent cards, k))}``; ``lines``
    gives the line of each table, for errors."""
    from ..network._network import BayesianNetwork

    missing = [v for v in variables if v not in tables]
    if missing:
        v = missing[0]
        raise FileError(variables[v][1], f"variable {v!r} has no probability table")
    edges = [(u, v) for v, (parents, _) in tables.items() for u in parents]
    states = {v: list(s) for v, (s, _) in variables.items()}
    try:
        network = BayesianNetwork(edges, states=states)
        network._dag()  # the DAG: a cycle is an error here
    except ValueError as exc:
        raise FileError(None, f"the probability tables' parents: {exc}") from None
    for v in variables:
        parents, values = tables[v]
        try:
            network.set_cpd(v, np.asarray(values), parents=list(parents))
        except ValueError as exc:
            raise FileError(lines[v], str(exc)) from None
    return network


def check_word(label, what: str) -> str:
    """``label`` as it is written in a BIF file: a word of its own."""
    text = str(label)
    if WORD.fullmatch(text) is None:
        raise ValueError(
            f"{what} {label!r} cannot be written in BIF: a name or state must have "
            "no blank, comma, bracket, brace, parenthesis, semicolon, bar or quote"
        )
    return text
