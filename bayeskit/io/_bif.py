"""The Bayesian Interchange Format (BIF 0.15), as the bnlearn repository writes it.

A file is a ``network`` block, one ``variable`` block per variable (its
discrete states) and one ``probability`` block per variable: either
``table`` followed by every probability, the variable's states varying
slowest (pgmpy's and JavaBayes's reading), or one line per joint state of
the parents, ``(a, b) p1, p2, ...;``, with ``default`` for the rows not
listed. ``property`` lines and comments are skipped. A name (network,
variable or state) may be quoted, JavaBayes style (``variable "a" {``): the
quotes are not part of it, and it may then hold blanks, as pgmpy reads it.
"""

from __future__ import annotations

import re

import numpy as np

from ._common import FileError, build_network, check_word, number, read_text, write_text

__all__ = ["read_bif", "write_bif"]

_TOKEN = re.compile(
    r"""(?P<space>\s+)
      | (?P<comment>//[^\n]*|/\*.*?\*/)
      | (?P<string>"[^"]*")
      | (?P<punct>[{}()\[\];,|])
      | (?P<word>[^\s{}()\[\];,|"/]+(?:/(?![/*])[^\s{}()\[\];,|"/]*)*)
      | (?P<bad>.)""",
    re.S | re.X,
)


def _tokens(text: str) -> list:
    out, line = [], 1
    for m in _TOKEN.finditer(text):
        kind, value = m.lastgroup, m.group()
        if kind == "bad":
            raise FileError(line, f"unexpected character {value!r}")
        if kind in ("word", "punct", "string"):
            out.append((value, line, kind))
        line += value.count("\n")
    out.append(("", line, "end"))
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.i = 0

    @property
    def line(self) -> int:
        return self.tokens[self.i][1]

    def peek(self) -> str:
        return self.tokens[self.i][0]

    def next(self) -> tuple:
        token = self.tokens[self.i]
        if token[2] == "end":
            raise FileError(token[1], "the file ends inside a block")
        self.i += 1
        return token

    def expect(self, value: str) -> None:
        text, line, kind = self.next()
        if text != value or kind == "string":
            shown = repr(text) if text else "the end of the file"
            raise FileError(line, f"expected {value!r}, got {shown}")

    def word(self, what: str) -> str:
        """A name: a bare word, or a quoted string without its quotes
        (JavaBayes writes ``variable "a" {``; pgmpy reads both)."""
        text, line, kind = self.next()
        if kind == "string":
            return text[1:-1]
        if kind != "word":
            raise FileError(line, f"expected {what}, got {text!r}")
        return text

    def skip_statement(self) -> None:
        """Past the next ``;`` (a property)."""
        while self.next()[0] != ";":
            pass

    def skip_block(self) -> None:
        """Past the ``}`` that closes the block opened by the next ``{``."""
        while self.peek() != "{":
            self.next()
        depth = 0
        while True:
            text = self.next()[0]
            depth += {"{": 1, "}": -1}.get(text, 0)
            if depth == 0:
                return

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


def _variable(p: _Parser, variables: dict) -> None:
    line = p.line
    name = p.word("a variable name")
    if name in variables:
        raise FileError(line, f"variable {name!r} is declared twice")
    p.expect("{")
    states = None
    while p.peek() != "}":
        text, at, _ = p.next()
        if text == "property":
            p.skip_statement()
        elif text == "type":
            kind = p.word("the type 'discrete'")
            if kind != "discrete":
                raise FileError(
                    at,
                    f"variable {name!r} has type {kind!r}; only "
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
                raise FileError(
                    size_line,
                    f"variable {name!r} declares {size} states "
                    f"and lists {len(states)}: {states!r}",
                )
            if len(set(states)) != len(states):
                raise FileError(
                    size_line, f"variable {name!r} lists a state twice: {states!r}"
                )
        else:
            raise FileError(
                at, f"expected 'type' or 'property' in variable {name!r}, got {text!r}"
            )
    p.next()
    if states is None:
        raise FileError(line, f"variable {name!r} has no 'type discrete' line")
    variables[name] = (states, line)


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
    child, parents = names[0], names[1:]
    if given not in (None, 1):
        raise FileError(line, "a probability block names one variable before '|'")
    for v in names:
        if v not in variables:
            raise FileError(line, f"unknown variable {v!r}: declare it first")
    if child in tables:
        raise FileError(line, f"variable {child!r} has two probability tables")
    if len(set(names)) != len(names):
        raise FileError(line, f"probability ( {' '.join(names)} ) repeats a variable")
    states = {v: variables[v][0] for v in names}
    k = len(states[child])
    cards = [len(states[u]) for u in parents]
    rows = int(np.prod(cards))
    values = np.full((rows, k), np.nan)
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
            size = k * rows if text == "table" else k
            if len(numbers) != size:
                raise FileError(
                    at,
                    f"the {text} of {child!r} has {len(numbers)} "
                    f"probabilities; expected {size}",
                )
            if text == "table":  # the variable's states vary slowest
                values[:] = np.asarray(numbers).reshape(k, rows).T
            else:
                default = numbers
            continue
        p.expect("(")
        key = p.names(")", "a state")
        if len(key) != len(parents):
            raise FileError(
                at,
                f"a row of {child!r} names {len(key)} parent states; "
                f"its parents are {parents!r}",
            )
        flat = 0
        for u, s, c in zip(parents, key, cards):
            if s not in states[u]:
                raise FileError(at, f"{s!r} is not a state of {u!r}: {states[u]!r}")
            flat = flat * c + states[u].index(s)
        numbers = p.numbers()
        if len(numbers) != k:
            raise FileError(
                at,
                f"the row {tuple(key)!r} of {child!r} has "
                f"{len(numbers)} probabilities; expected {k}",
            )
        values[flat] = numbers
    p.next()
    unset = np.isnan(values).all(axis=1)
    if unset.any():
        if default is None:
            raise FileError(
                line,
                f"the table of {child!r} gives no row for "
                f"{int(unset.sum())} joint state(s) of its parents and "
                "no default",
            )
        values[unset] = default
    tables[child] = (parents, values.reshape(*cards, k))
    lines[child] = line


def read_bif(source):
    """Read a Bayesian network from a BIF file.

    Parameters
    ----------
    source : str, path-like or file object
        A path (a ``.gz`` one is decompressed), an open file, or the text of
        the file itself.

    Returns
    -------
    BayesianNetwork
        Every table set, the variables in the order of their declarations,
        their states (strings) in the order listed, and each variable's
        parents in the order of its ``probability`` line (``parents_``).

    Raises
    ------
    ValueError
        For a malformed file, with the line number: a syntax error, an
        unknown variable or state, a table of the wrong size, a row that
        does not sum to one, a variable without a table, a cycle.
    """
    p = _Parser(read_text(source, "BIF"))
    variables: dict = {}
    tables: dict = {}
    lines: dict = {}
    while p.peek() != "" or p.tokens[p.i][2] != "end":
        text, line, _ = p.tokens[p.i]
        if text == "network":
            p.next()
            p.skip_block()
        elif text == "variable":
            p.next()
            _variable(p, variables)
        elif text == "probability":
            p.next()
            _probability(p, variables, tables, lines)
        else:
            raise FileError(
                line, f"expected 'network', 'variable' or 'probability', got {text!r}"
            )
    if not variables:
        raise FileError(p.line, "the file declares no variable")
    return build_network(variables, tables, lines)


def _fmt(x: float) -> str:
    """The shortest text that reads back as the same float."""
    return repr(float(x))


def _word(label, what: str) -> str:
    """``label`` as written in BIF: a bare word, or quoted (JavaBayes style)
    when it holds blanks or punctuation; a quote or an empty label cannot be
    written."""
    try:
        return check_word(label, what)
    except ValueError:
        text = str(label)
        if not text or '"' in text:
            raise
        return f'"{text}"'


def write_bif(network, path=None, *, name="unknown"):
    """Write a Bayesian network as a BIF file.

    Parameters
    ----------
    network : BayesianNetwork
        A network with every table set.
    path : str, path-like or file object, default=None
        Where to write (a ``.gz`` path is compressed); ``None`` returns the
        text.
    name : str, default="unknown"
        The name in the ``network`` block.

    Returns
    -------
    str or None
        The text, when ``path`` is None. Probabilities are written with the
        shortest text that reads back as the same float, so
        ``read_bif(write_bif(bn))`` has the same tables exactly (states read
        back as strings).
    """
    network._check_ready()
    name = _word(name, "name")
    written = {v: _word(v, "variable") for v in network.variables_}
    labels = {
        v: [_word(s, f"state of {v!r}") for s in network.states_[v].tolist()]
        for v in network.variables_
    }
    out = [f"network {name} {{", "}"]
    for v in network.variables_:
        states = labels[v]
        out += [
            f"variable {written[v]} {{",
            f"  type discrete [ {len(states)} ] {{ {', '.join(states)} }};",
            "}",
        ]
    for v in network.variables_:
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
    return write_text("\n".join(out) + "\n", path)
