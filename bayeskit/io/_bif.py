"""The Bayesian Interchange Format (BIF 0.15), as the bnlearn repository writes it.

A file is a ``network`` block, one ``variable`` block per variable (its
discrete states) and one ``probability`` block per variable: either
``table`` followed by every probability, the variable's states varying
slowest (pgmpy's and JavaBayes's reading), or one line per joint state of
the parents, ``(a, b) p1, p2, ...;``, with ``default`` for the rows not
listed. A ``default`` line that lists the whole table (a probability for
every state and joint state of the parents, where one row's worth is
expected) is read as ``table``; a variable that a ``probability`` block
names in another case than its declaration (and no other declared name
matches) is the declared one: both as pgmpy reads them. The ``property``
lines of the network and of each variable are kept (``key = value``: the
network's ``properties_``, a variable's ``variable_properties_``); those of
a probability block and comments are skipped. A name (network, variable or
state) may be quoted, JavaBayes style (``variable "a" {``): the quotes are
not part of it, and it may then hold blanks, as pgmpy reads it.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ._common import (
    MAX_BYTES,
    MAX_CELLS,
    WORD,
    FileError,
    TokenStream,
    build_network,
    check_caps,
    check_labels,
    check_network,
    check_size,
    count_cells,
    decode,
    describe,
    description,
    label_text,
    number,
    read_source,
    shown,
    split_property,
    write_text,
)

__all__ = ["read_bif", "write_bif"]

# What a property line cannot hold outside its quoted strings: it ends at the
# first ';' and the reader skips comments (a string, balanced, is read as it
# is, ';', '//' and '/*' included: "http://..."). A line break, nowhere.
_UNWRITABLE = re.compile(r"[;\n\r]|//|/\*")
_STRING = re.compile(r'"[^"]*"')

_TOKEN = re.compile(
    r"""(?P<space>\s+)
      | (?P<comment>//[^\n]*|/\*.*?\*/)
      | (?P<string>"[^"]*")
      | (?P<punct>[{}()\[\];,|])
      | (?P<word>[^\s{}()\[\];,|"/]+(?:/(?![/*])[^\s{}()\[\];,|"/]*)*)
      | (?P<bad>.)""",
    re.S | re.X,
)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _tokens(text: str) -> tuple:
    """The tokens ``(text, line, kind)`` and where each starts in ``text``;
    a lone surrogate (a ``str`` that is no Unicode text, which no writer can
    write back) is a FileError naming its line, as in the XML readers."""
    if (bad := _SURROGATE.search(text)) is not None:
        raise FileError(
            text.count("\n", 0, bad.start()) + 1,
            f"the text holds {shown(bad.group())}, which is no Unicode character "
            "(a lone surrogate): give the file's bytes, or text decoded from them",
        )
    out, starts, line = [], [], 1
    for m in _TOKEN.finditer(text):
        kind, value = m.lastgroup, m.group()
        if kind == "bad":
            raise FileError(line, f"unexpected character {shown(value)}")
        if kind in ("word", "punct", "string"):
            out.append((value, line, kind))
            starts.append(m.start())
        line += value.count("\n")
    out.append(("", line, "end"))
    starts.append(len(text))
    return out, starts


class _Parser(TokenStream):
    def __init__(self, text: str, max_cells: int = MAX_CELLS) -> None:
        self.text = text
        tokens, self.starts = _tokens(text)
        super().__init__(tokens)
        self.cells, self.max_cells = 0, max_cells  # table cells read so far

    def peek(self) -> str:
        return self.tokens[self.i][0]

    def word(self, what: str) -> str:
        """A name: a bare word, or a quoted string without its quotes
        (JavaBayes writes ``variable "a" {``; pgmpy reads both)."""
        text, line, kind = self.next()
        if kind == "string":
            return text[1:-1]
        if kind != "word":
            got = shown(text) if kind != "end" else "the end of the file"
            raise FileError(line, f"expected {what}, got {got}")
        return text

    def skip_statement(self) -> None:
        """Past the next ``;``."""
        while self.next()[0] != ";":
            pass

    def property(self, properties: dict) -> None:
        """A ``property`` statement (the word read), as ``key = value`` in
        ``properties``: its text up to the ``;``, unquoted when it is one
        string (JavaBayes writes ``property "position = (10, 20)" ;``)."""
        line, start = self.line, self.starts[self.i]
        while self.peek() != ";" or self.tokens[self.i][2] == "string":
            self.next()
        text = self.text[start : self.starts[self.i]].strip()
        self.next()
        if len(text) > 1 and text[0] == text[-1] == '"' and text.count('"') == 2:
            text = text[1:-1]
        key, value = split_property(text)
        if key in properties:
            raise FileError(line, f"the property {shown(key)} is given twice")
        properties[key] = value

    def names(self, close: str, what: str) -> list:
        """Words separated by commas (or blanks) up to ``close``."""
        out = []
        while self.peek() != close:
            if self.peek() == ",":
                self.next()
                continue
            out.append(self.word(what))
        self.next()
        return out

    def numbers(self) -> list:
        """Probabilities separated by commas (or blanks) up to ``;``."""
        out = []
        while True:
            text, line, _ = self.next()
            if text == ";":
                return out
            if text != ",":
                out.append(number(text, line))


def _variable(p: _Parser, variables: dict, properties: dict) -> None:
    line = p.line
    name = p.word("a variable name")
    if name in variables:
        raise FileError(line, f"variable {shown(name)} is declared twice")
    p.expect("{")
    states, props = None, {}
    while p.peek() != "}":
        text, at, _ = p.next()
        if text == "property":
            p.property(props)
        elif text == "type":
            kind = p.word("the type 'discrete'")
            if kind != "discrete":
                raise FileError(
                    at,
                    f"variable {shown(name)} has type {shown(kind)}; only "
                    "discrete variables are supported",
                )
            p.expect("[")
            size_line = p.line
            size = p.word("the number of states")
            p.expect("]")
            p.expect("{")
            states = p.names("}", "a state")
            p.expect(";")
            if not size.isdigit() or int(size) != len(states):
                declared = size if size.isdigit() and len(size) < 20 else shown(size)
                raise FileError(
                    size_line,
                    f"variable {shown(name)} declares {declared} states "
                    f"and lists {len(states)}: {shown(states, 80)}",
                )
            if len(set(states)) != len(states):
                twice = next(x for x in states if states.count(x) > 1)
                raise FileError(
                    size_line,
                    f"variable {shown(name)} lists the state {shown(twice)} twice",
                )
        else:
            raise FileError(
                at,
                f"expected 'type' or 'property' in variable {shown(name)}, "
                f"got {shown(text)}",
            )
    p.next()
    if states is None:
        raise FileError(line, f"variable {shown(name)} has no 'type discrete' line")
    variables[name] = (states, line)
    properties[name] = props


def _declared(name: str, variables: dict, line: int) -> str:
    """The declared variable a probability block's ``name`` stands for: the
    one of that name, else the only one whose name differs from it in case
    alone (pgmpy reads such files: a block may write ``neuroticism`` for the
    variable ``NEUROTICISM``)."""
    if name in variables:
        return name
    lower = name.lower()
    found = [v for v in variables if v.lower() == lower]
    if len(found) != 1:
        raise FileError(line, f"unknown variable {shown(name)}: declare it first")
    return found[0]


def _probability(p: _Parser, variables: dict, tables: dict, lines: dict) -> None:
    line = p.line
    p.expect("(")
    names = []
    given = None
    while p.peek() != ")":
        text = p.peek()
        if text == "|":
            given = len(names)
            p.next()
        elif text == ",":
            p.next()
        else:
            names.append(p.word("a variable name"))
    p.next()
    if not names:
        raise FileError(line, "a probability block names no variable")
    if given not in (None, 1):
        raise FileError(line, "a probability block names one variable before '|'")
    names = [_declared(v, variables, line) for v in names]
    child, parents = names[0], names[1:]
    if child in tables:
        raise FileError(line, f"variable {shown(child)} has two probability tables")
    if len(set(names)) != len(names):
        listed = shown(" ".join(names), 80)
        raise FileError(line, f"probability ( {listed} ) repeats a variable")
    states = {v: variables[v][0] for v in names}
    k = len(states[child])
    cards = [len(states[u]) for u in parents]
    p.cells = count_cells(cards, k, child, line, p.cells, p.max_cells)
    rows = math.prod(cards)
    values = np.zeros((rows, k))
    given_rows = np.zeros(rows, dtype=bool)  # which rows the block sets
    default = None
    p.expect("{")
    while p.peek() != "}":
        at = p.line
        text = p.peek()
        if text == "property":
            p.next()
            p.skip_statement()
            continue
        if text in ("table", "default"):
            p.next()
            numbers = p.numbers()
            if text == "default" and rows > 1 and len(numbers) == k * rows:
                text = "table"  # a whole table after 'default': pgmpy's reading
            size = k * rows if text == "table" else k
            if len(numbers) != size:
                raise FileError(
                    at,
                    f"the {text} of {shown(child)} has {len(numbers)} "
                    f"probabilities; expected {size}",
                )
            if text == "table":  # the variable's states vary slowest
                if given_rows.any():
                    raise FileError(at, f"the table of {shown(child)} is given twice")
                values[:] = np.asarray(numbers).reshape(k, rows).T
                given_rows[:] = True
            elif default is not None:
                raise FileError(at, f"{shown(child)} has two default rows")
            else:
                default = numbers
            continue
        p.expect("(")
        key = p.names(")", "a state")
        if len(key) != len(parents):
            raise FileError(
                at,
                f"a row of {shown(child)} names {len(key)} parent states; "
                f"its parents are {shown(parents, 80)}",
            )
        flat = 0
        for u, s, c in zip(parents, key, cards):
            if s not in states[u]:
                raise FileError(
                    at,
                    f"{shown(s)} is not a state of {shown(u)}: {shown(states[u], 80)}",
                )
            flat = flat * c + states[u].index(s)
        numbers = p.numbers()
        if len(numbers) != k:
            raise FileError(
                at,
                f"the row {shown(tuple(key), 80)} of {shown(child)} has "
                f"{len(numbers)} probabilities; expected {k}",
            )
        if given_rows[flat]:
            raise FileError(
                at, f"the row {shown(tuple(key), 80)} of {shown(child)} is given twice"
            )
        values[flat] = numbers
        given_rows[flat] = True
    p.next()
    unset = ~given_rows
    if unset.any():
        if default is None:
            raise FileError(
                line,
                f"the table of {shown(child)} gives no row for "
                f"{int(unset.sum())} joint state(s) of its parents and "
                "no default",
            )
        values[unset] = default
    tables[child] = (parents, values.reshape(*cards, k))
    lines[child] = line


def read_bif(source=None, *, path=None, max_bytes=MAX_BYTES, max_cells=MAX_CELLS):
    """Read a Bayesian network from a BIF file.

    Parameters
    ----------
    source : str, bytes, file object or path-like, default=None
        The file: its text (a ``str`` is always the text of the file, never a
        path, so that text from elsewhere can never make the reader open a
        file), an open file object, or a ``pathlib.Path``. Bytes are UTF-8
        (a byte-order mark is skipped) or UTF-16 with its byte-order mark.
    path : str or path-like, default=None
        The path of the file, instead of ``source`` (``read_bif(path="a.bif")``
        reads a path given as a ``str``); a gzip-compressed file is
        decompressed (told by its bytes, not its name).
    max_bytes : int, default=64 MiB
        The most text read (after decompression); a longer file is a
        ValueError, before it is parsed.
    max_cells : int, default=2**24
        The most table cells the file may imply, in all (a ``default`` row
        implies every row it stands for); more is a ValueError that names the
        table's line, before anything is allocated.

    Returns
    -------
    BayesianNetwork
        Every table set, the variables in the order of their declarations,
        their states (strings) in the order listed, and each variable's
        parents in the order of its ``probability`` line (``parents_``).
        ``name_`` is the name of the ``network`` block (None without one),
        ``properties_`` its ``property`` lines and ``variable_properties_[v]``
        those of variable ``v``, ``{key: value}`` (the text either side of the
        first ``=``, blanks stripped; a line without ``=`` is ``{text:
        None}``), as pgmpy's reader splits them.

    Raises
    ------
    ValueError
        For a malformed file, with the line number: a syntax error, an
        unknown variable or state, a table of the wrong size, a row given
        twice, a probability that is not a finite number, a row that does not
        sum to one, a variable without a table, a cycle; or a file over
        ``max_bytes`` or ``max_cells``. A message quotes at most a short
        excerpt of the file.
    TypeError
        For a ``source`` or ``path`` of another type, or both given.

    Examples
    --------
    >>> from bayeskit.io import read_bif
    >>> bn = read_bif('''
    ... variable rain { type discrete [ 2 ] { no, yes }; }
    ... probability ( rain ) { table 0.8, 0.2; }
    ... ''')
    >>> bn.states_["rain"].tolist()
    ['no', 'yes']
    """
    max_bytes, max_cells = check_caps(max_bytes, max_cells)
    data = read_source(source, path, "BIF", max_bytes)
    text = decode(data, "BIF")
    if "{" not in text:
        hint = (
            " (a str source is the text of the file: to read the file a str "
            "names, pass pathlib.Path(...) or path=...)"
            if isinstance(source, str)
            else ""
        )
        raise FileError(
            1, f"the BIF text {shown(text)} declares no variable block{hint}"
        )
    p = _Parser(text, max_cells)
    variables: dict = {}
    tables: dict = {}
    lines: dict = {}
    name, properties, variable_properties = None, {}, {}
    while p.peek() != "" or p.tokens[p.i][2] != "end":
        text, line, _ = p.tokens[p.i]
        if text == "network":
            p.next()
            if name is not None:
                raise FileError(line, "the file has two network blocks")
            name = _network(p, properties)
        elif text == "variable":
            p.next()
            _variable(p, variables, variable_properties)
        elif text == "probability":
            p.next()
            _probability(p, variables, tables, lines)
        else:
            raise FileError(
                line,
                f"expected 'network', 'variable' or 'probability', got {shown(text)}",
            )
    if not variables:
        raise FileError(p.line, "the file declares no variable")
    network = build_network(variables, tables, lines)
    return describe(network, name, properties, variable_properties)


def _network(p: _Parser, properties: dict) -> str:
    """The ``network NAME { property ...; }`` block (the word read): its
    name, and its properties in ``properties``; other statements in it are
    skipped."""
    name = p.word("the network's name")
    p.expect("{")
    while p.peek() != "}" or p.tokens[p.i][2] == "string":
        if p.next()[0] == "property":
            p.property(properties)
        else:
            p.i -= 1
            p.skip_statement()
    p.next()
    return name


def _fmt(x: float) -> str:
    """The shortest text that reads back as the same float."""
    return repr(float(x))


def _word(label, what: str) -> str:
    """``label`` as written in BIF: a bare word, or quoted (JavaBayes style)
    when it holds blanks or punctuation or is empty (``""``, as the reader
    reads it); a double quote or a lone surrogate cannot be written."""
    text = label_text(label, what, "BIF")
    if WORD.fullmatch(text) is not None:
        return text
    if '"' in text:
        raise ValueError(
            f"{what} {shown(label)} cannot be written in BIF: a name or state must "
            "not hold a double quote"
        )
    return f'"{text}"'


def _labels(labels: list, what: str) -> list:
    """``labels`` as written, every one checked: each writable, and no two
    that read back as one (``1.5`` and ``'1.5'``)."""
    written = [_word(x, what) for x in labels]
    check_labels(labels, what, [str(x) for x in labels])
    return written


def _property(key, value, what: str) -> str:
    """A ``property`` line that reads back as ``key`` and ``value``."""
    text = label_text(key, what, "BIF")
    if value is not None:
        text += " = " + label_text(value, what, "BIF")
    expected = (str(key), None if value is None else str(value))
    quotes = text.count('"')
    one_string = quotes == 2 and text[0] == text[-1] == '"'  # read unquoted
    if (
        split_property(text) != expected
        or _UNWRITABLE.search(_STRING.sub('""', text))
        or "\n" in text
        or "\r" in text
        or not key
        or quotes % 2
        or one_string
    ):
        raise ValueError(
            f"{what} {shown(key)} = {shown(value)} cannot be written in BIF: the "
            "key is not empty and holds no '=', neither starts or ends with a "
            "blank, neither holds a line break, nor a ';' or a comment outside "
            "double quotes, and the double quotes pair up (and do not quote the "
            "whole line)"
        )
    return f"property {text} ;"


def write_bif(
    network,
    path=None,
    *,
    name=None,
    max_bytes=MAX_BYTES,
    max_cells=MAX_CELLS,
):
    """Write a Bayesian network as a BIF file.

    Parameters
    ----------
    network : BayesianNetwork
        A network with every table set.
    path : str, path-like or file object, default=None
        Where to write (a ``.gz`` path is compressed); ``None`` returns the
        text.
    name : str, default=None
        The name in the ``network`` block; ``None`` takes ``network.name_``
        (the name a reader read), else ``"unknown"``. The network's
        ``properties_`` and each variable's ``variable_properties_`` (see
        :func:`read_bif`) are written as ``property key = value ;`` lines.
    max_bytes, max_cells : int, default=64 MiB, 2**24
        The caps of :func:`read_bif`: a network whose file would be over
        either is a ValueError (the reader would refuse the file).

    Returns
    -------
    str or None
        The text, when ``path`` is None. Probabilities are written with the
        shortest text that reads back as the same float, so
        ``read_bif(write_bif(bn))`` has the same tables exactly (states read
        back as strings, ``str(state)``).

    Raises
    ------
    TypeError
        If ``network`` is not a BayesianNetwork.
    ValueError
        If a table is not set; if a name or state cannot be written (empty,
        holding a double quote or a lone surrogate), or two states of a
        variable (or two variables) read back as one (``1.5`` and ``'1.5'``);
        or if the file would be over ``max_bytes`` or ``max_cells``.
    """
    max_bytes, max_cells = check_caps(max_bytes, max_cells)
    check_network(network, max_cells)
    own, properties, variable_properties = description(network)
    name = name if name is not None else own if own is not None else "unknown"
    name = _word(name, "name")
    variables = list(network.variables_)
    written = dict(zip(variables, _labels(variables, "variables")))
    labels = {
        v: _labels(network.states_[v].tolist(), f"states of {shown(v)}")
        for v in variables
    }
    out = [f"network {name} {{"]
    out += [f"  {_property(k, x, 'property')}" for k, x in properties.items()]
    out.append("}")
    for v in variables:
        states = labels[v]
        out += [
            f"variable {written[v]} {{",
            f"  type discrete [ {len(states)} ] {{ {', '.join(states)} }};",
        ]
        out += [
            f"  {_property(k, x, 'property')}"
            for k, x in variable_properties[v].items()
        ]
        out.append("}")
    for v in variables:
        parents = network.dag_.parents(v)
        table = network.cpds_[v]
        if not parents:
            out += [
                f"probability ( {written[v]} ) {{",
                f"  table {', '.join(map(_fmt, table))};",
                "}",
            ]
            continue
        given = ", ".join(written[u] for u in parents)
        out.append(f"probability ( {written[v]} | {given} ) {{")
        for index in np.ndindex(*table.shape[:-1]):
            key = ", ".join(labels[u][i] for u, i in zip(parents, index))
            out.append(f"  ({key}) {', '.join(map(_fmt, table[index]))};")
        out.append("}")
    return write_text(check_size("\n".join(out) + "\n", max_bytes), path)
