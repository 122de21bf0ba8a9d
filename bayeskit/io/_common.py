"""What the BIF and XMLBIF readers and writers share.

The boundary of the file formats: where the bytes come from (a path, a file
object, or the text itself, told apart by type, never by content), how much
of them is read (``max_bytes``), how many table cells they may imply
(``max_cells``), and how a message quotes the file (a capped excerpt).
"""

from __future__ import annotations

import gzip
import math
import os
import re

import numpy as np

__all__ = [
    "MAX_BYTES",
    "MAX_CELLS",
    "FileError",
    "TokenStream",
    "build_network",
    "check_caps",
    "check_network",
    "decimal",
    "describe",
    "description",
    "label_text",
    "number",
    "read_source",
    "shown",
    "split_property",
    "write_text",
]

# A name or state written bare in BIF: no blank, comma, bracket, brace,
# parenthesis, semicolon, bar or quote, and no slash that starts a comment.
WORD = re.compile(r'[^\s{}()\[\];,|"/]+(?:/(?![/*])[^\s{}()\[\];,|"/]*)*')

# The readers' default caps: 64 MiB of text (decompressed), and 2**24 table
# cells in all (128 MiB of float64). The largest networks of the bnlearn
# repository (diabetes: 429,409 parameters, about 8 MB of BIF) are well inside.
MAX_BYTES = 64 * 2**20
MAX_CELLS = 2**24
# numpy's limit on the number of axes of an array (32 before numpy 2).
MAX_AXES = 64 if int(np.__version__.split(".")[0]) >= 2 else 32
# What a message quotes of the file, at most.
_EXCERPT = 40
_MESSAGE = 400

_GZIP_MAGIC = b"\x1f\x8b"
# A probability as the files write it: a decimal number (no '_', no 'nan').
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class FileError(ValueError):
    """A malformed network file: the message starts with the line number."""

    def __init__(self, line: int | None, message: str) -> None:
        self.line = line
        if len(message) > _MESSAGE:
            message = message[: _MESSAGE - 3] + "..."
        super().__init__(message if line is None else f"line {line}: {message}")


def shown(value, limit: int = _EXCERPT) -> str:
    """``repr`` of ``value`` (a piece of the file), cut to about ``limit``
    characters: a message never echoes a whole token (which may be a whole
    file)."""
    if isinstance(value, str) and len(value) > limit:
        return repr(value[:limit]) + f"... ({len(value)} characters)"
    text = repr(value)
    return text if len(text) <= limit + 2 else text[:limit] + "..."


def _check_cap(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be a positive int, got {shown(value)}")
    if value < 1:
        raise ValueError(f"{name} must be a positive int, got {value}")
    return int(value)


def check_caps(max_bytes, max_cells) -> tuple[int, int]:
    """The caps, checked: positive ints."""
    return _check_cap(max_bytes, "max_bytes"), _check_cap(max_cells, "max_cells")


def _too_big(what: str, max_bytes: int) -> ValueError:
    return ValueError(
        f"{what} holds more than max_bytes={max_bytes} bytes of text; a network "
        "file that large is refused (pass a larger max_bytes to read it)"
    )


def _read_capped(stream, max_bytes: int, what: str):
    data = stream.read(max_bytes + 1)
    if data is None:
        data = b""
    if len(data) > max_bytes:
        raise _too_big(what, max_bytes)
    return data


def _open_path(path, max_bytes: int) -> bytes:
    """The bytes of the file at ``path``, decompressed when they are gzip's
    (told by the bytes, not by the name), at most ``max_bytes`` of them."""
    shown_path = shown(os.fspath(path), 200)
    try:
        f = open(path, "rb")
    except OSError as exc:
        raise ValueError(
            f"path {shown_path} cannot be read: {exc.strerror or exc}"
        ) from None
    with f:
        magic = f.peek(2)[:2]  # no seek: a pipe can be read too
        if magic == _GZIP_MAGIC:
            try:
                with gzip.GzipFile(fileobj=f) as z:
                    return _read_capped(z, max_bytes, f"path {shown_path}")
            except (OSError, EOFError) as exc:
                raise ValueError(
                    f"path {shown_path} is not a valid gzip file: {exc}"
                ) from None
        return _read_capped(f, max_bytes, f"path {shown_path}")


def read_source(source, path, what: str, max_bytes: int):
    """What a reader reads, as ``bytes`` (a file's, to decode) or ``str``.

    Exactly one of ``source`` and ``path`` is given. ``source`` is the text of
    the file (``str`` or ``bytes``), an open file object, or a path-like
    object (``pathlib.Path``); a ``str`` is always the text, never a path
    (``path=`` takes a path as a ``str``). Nothing is ever opened because of
    what a string holds.
    """
    if path is not None:
        if source is not None:
            raise TypeError(
                f"give the {what} file as source (its text, a file object or a "
                "pathlib.Path) or as path=, not both"
            )
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(
                f"path must be a str or path-like object, got {type(path).__name__}"
            )
        return _open_path(path, max_bytes)
    if source is None:
        raise TypeError(
            f"{what} needs a source (the text of the file, a file object or a "
            "pathlib.Path) or path="
        )
    if isinstance(source, str):
        if len(source) > max_bytes:
            raise _too_big("source", max_bytes)
        return source
    if isinstance(source, (bytes, bytearray, memoryview)):
        if len(source) > max_bytes:
            raise _too_big("source", max_bytes)
        return bytes(source)
    if isinstance(source, os.PathLike):
        return _open_path(source, max_bytes)
    if callable(getattr(source, "read", None)):
        data = _read_capped(source, max_bytes, "source")
        if isinstance(data, (bytes, bytearray)):
            return bytes(data)
        if isinstance(data, str):
            return data
        raise TypeError(
            f"source.read() must return str or bytes, got {type(data).__name__}"
        )
    raise TypeError(
        f"source must be the text of a {what} file (str or bytes), a file object "
        f"or a pathlib.Path (or give path=), got {type(source).__name__}"
    )


def decode(data, what: str) -> str:
    """Text from the bytes of a file: UTF-8 (a byte-order mark skipped), or
    UTF-16 when it starts with its byte-order mark."""
    if isinstance(data, str):
        return data[1:] if data.startswith("\ufeff") else data
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16"
    else:
        encoding = "utf-8-sig"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1 if encoding != "utf-16" else None
        raise FileError(
            line, f"the {what} file is not {encoding.upper()[:6]} text: {exc.reason}"
        ) from None


def write_text(text: str, path):
    """``text`` written to ``path`` (``.gz`` compressed), or returned for None."""
    if path is None:
        return text
    if hasattr(path, "write"):
        path.write(text)
        return None
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(
            "path must be None, a str, a path-like object or a file object, got "
            f"{type(path).__name__}"
        )
    s = os.fspath(path)
    gz = s.endswith(b".gz" if isinstance(s, bytes) else ".gz")
    opener = gzip.open if gz else open
    with opener(s, "wt", encoding="utf-8", newline="") as f:
        f.write(text)
    return None


def decimal(x) -> str:
    """The shortest decimal that reads back as ``x``, without an exponent
    (``0.00001``, not ``1e-05``: pgmpy's NET and UAI readers read none)."""
    return np.format_float_positional(float(x), unique=True, trim="0")


def number(text: str, line: int) -> float:
    """A probability of the file: a finite decimal number."""
    if _NUMBER.fullmatch(text) is None:
        raise FileError(line, f"expected a probability, got {shown(text)}")
    value = float(text)
    if not math.isfinite(value):
        raise FileError(line, f"expected a probability, got {shown(text)}")
    return value


def count_cells(cards, k: int, owner: str, line: int, total: int, max_cells: int):
    """The cells of a table of ``owner`` over parents of ``cards`` states and
    ``k`` states of its own, added to ``total``; a table numpy cannot hold,
    or a total above ``max_cells``, is an error before anything is allocated."""
    if len(cards) + 1 > MAX_AXES:
        raise FileError(
            line,
            f"the table of {shown(owner)} has {len(cards)} parents; a table has "
            f"at most {MAX_AXES - 1} (numpy's {MAX_AXES} axes)",
        )
    cells = math.prod(cards) * k  # Python ints: no overflow
    if total + cells > max_cells:
        raise FileError(
            line,
            f"the table of {shown(owner)} has {cells} cells, which brings the "
            f"network over max_cells={max_cells}; pass a larger max_cells to "
            "read it",
        )
    return total + cells


def build_network(variables: dict, tables: dict, lines: dict):
    """The network of parsed ``variables`` ``{name: (states, line)}`` and
    ``tables`` ``{name: (parents, values (*parent cards, k))}``; ``lines``
    gives the line of each table, for errors."""
    from .. import BayesianNetwork

    missing = [v for v in variables if v not in tables]
    if missing:
        v = missing[0]
        raise FileError(
            variables[v][1], f"variable {shown(v)} has no probability table"
        )
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


def check_network(network, max_cells: int):
    """``network`` as the writers take it: a BayesianNetwork with every table
    set, no more than ``max_cells`` cells in all (what the readers read)."""
    from .. import BayesianNetwork

    if not isinstance(network, BayesianNetwork):
        raise TypeError(
            "network must be a bayeskit BayesianNetwork with every table set, got "
            f"{type(network).__name__}"
        )
    network._check_ready()
    cells = sum(int(np.asarray(network.cpds_[v]).size) for v in network.variables_)
    if cells > max_cells:
        raise ValueError(
            f"network has {cells} table cells, more than max_cells={max_cells}: "
            "the readers would refuse the file; pass a larger max_cells here and "
            "to the reader"
        )
    return network


def check_size(text: str, max_bytes: int) -> str:
    """``text`` if the readers read it with ``max_bytes``."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise ValueError(
            f"the file would hold {size} bytes, more than max_bytes={max_bytes}: "
            "the readers would refuse it; pass a larger max_bytes here and to "
            "the reader"
        )
    return text


def label_text(label, what: str, fmt: str) -> str:
    """``str(label)``, which a file in format ``fmt`` writes as UTF-8: a
    label holding a lone surrogate cannot be."""
    text = str(label)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            f"{what} {shown(label)} cannot be written in {fmt}: it holds a lone "
            "surrogate, which UTF-8 cannot encode"
        ) from None
    return text


def check_labels(labels: list, owner: str, written: list) -> None:
    """Labels that are written the same would read back as one."""
    seen: dict = {}
    for label, text in zip(labels, written):
        if text in seen:
            raise ValueError(
                f"{owner} {shown(seen[text])} and {shown(label)} are both written "
                f"as {shown(text)} and would read back as one: rename one of them"
            )
        seen[text] = label


def split_property(text: str) -> tuple:
    """A property as the BIF and XMLBIF files write it, ``key = value``: the
    key and the value (the text after the first ``=``, blanks stripped), or
    the whole text and None when it holds no ``=``."""
    key, eq, value = text.partition("=")
    if not eq:
        return text.strip(), None
    return key.strip(), value.strip()


def describe(network, name, properties: dict, variable_properties: dict):
    """``network`` with what a file says of it beside its tables: ``name_``
    (None when the file names none), ``properties_`` (the network's
    ``{key: value}``) and ``variable_properties_`` (``{variable: {key:
    value}}``, every variable, in the file's order)."""
    network.name_ = name
    network.properties_ = dict(properties)
    network.variable_properties_ = {
        v: dict(variable_properties.get(v, {})) for v in network.variables_
    }
    return network


def description(network) -> tuple:
    """The name, network properties and variable properties a writer writes:
    those a reader set (:func:`describe`), checked, or None and empty."""
    name = getattr(network, "name_", None)
    properties = getattr(network, "properties_", None) or {}
    variable_properties = getattr(network, "variable_properties_", None) or {}
    for what, value in (
        ("properties_", properties),
        ("variable_properties_", variable_properties),
    ):
        if not isinstance(value, dict):
            raise TypeError(
                f"network.{what} must be a dict, got {type(value).__name__}"
            )
    checked = {}
    for v in network.variables_:
        props = variable_properties.get(v, {})
        if not isinstance(props, dict):
            raise TypeError(
                f"network.variable_properties_[{shown(v)}] must be a dict, got "
                f"{type(props).__name__}"
            )
        checked[v] = props
    unknown = [v for v in variable_properties if v not in network.dag_]
    if unknown:
        raise ValueError(
            f"network.variable_properties_ names {shown(unknown[0])}, which is not "
            "a variable of the network"
        )
    return name, properties, checked


class TokenStream:
    """The tokens ``(text, line, kind)`` of a text file format (BIF, Hugin
    NET), read in order; the last token's kind is ``'end'``."""

    def __init__(self, tokens) -> None:
        self.tokens = tokens
        self.i = 0

    @property
    def line(self) -> int:
        return self.tokens[self.i][1]

    def next(self) -> tuple:
        token = self.tokens[self.i]
        if token[2] == "end":
            raise FileError(token[1], "the file ends inside a block")
        self.i += 1
        return token

    def expect(self, value: str) -> None:
        text, line, kind = self.next()
        if text != value or kind == "string":
            got = shown(text) if text else "the end of the file"
            raise FileError(line, f"expected {value!r}, got {got}")
