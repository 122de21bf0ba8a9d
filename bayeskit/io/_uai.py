"""The UAI format of the UAI inference competitions (2008 onwards), Bayesian networks.

A file is a preamble and the function tables, numbers separated by blanks:
``BAYES``, the number of variables, the number of states of each, the number
of functions, then the scope of each function (its size, then the indices of
its variables, the child last), then each function's table in the order of
the scopes (its number of entries, then the entries, the last variable of the
scope varying fastest, as the format's description has it). The peers
differ: pgmpy 1.1.2's ``UAIWriter`` and ``UAIReader`` take the child's
states slowest (a table with parents reads transposed), and pyAgrum 3.3.1
takes the child fastest, then the first parent, ..., the last parent slowest
(a table with two parents or more reads with its parents' order reversed).
The format has no names: variables are numbered ``0 .. n - 1`` and states
``0 .. k - 1``. ``#`` starts a comment, as pyAgrum writes them.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ._common import (
    MAX_BYTES,
    MAX_CELLS,
    FileError,
    build_network,
    check_caps,
    check_network,
    check_size,
    count_cells,
    decimal,
    decode,
    describe,
    number,
    read_source,
    shown,
    write_text,
)

__all__ = ["read_uai", "write_uai"]

# A word, or a comment to the end of the line (pyAgrum writes ``# name``
# after each scope; the competition's files have none).
_TOKEN = re.compile(r"#[^\n]*|[^\s#]+")
# A probability as the files write it (what _common.number accepts).
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class _Tokens:
    """The blank-separated words of the file, with their lines on demand."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.matches = _TOKEN.finditer(text)
        self.last = 0  # where the last word read starts

    def line(self) -> int:
        return self.text.count("\n", 0, self.last) + 1

    def next(self, what: str) -> str:
        m = next(self.matches, None)
        while m is not None and m.group().startswith("#"):
            m = next(self.matches, None)
        if m is None:
            self.last = len(self.text)
            raise FileError(self.line(), f"the file ends where {what} is expected")
        self.last = m.start()
        return m.group()

    def count(self, what: str, low: int = 0) -> int:
        word = self.next(what)
        if not word.isdigit() or int(word) < low:
            raise FileError(self.line(), f"expected {what}, got {shown(word)}")
        return int(word)

    def probability(self, what: str) -> float:
        word = self.next(what)
        if _NUMBER.fullmatch(word) is None:
            number(word, self.line())  # the error, with the line
        return float(word)

    def rest(self):
        m = next(self.matches, None)
        while m is not None and m.group().startswith("#"):
            m = next(self.matches, None)
        if m is not None:
            self.last = m.start()
            raise FileError(
                self.line(),
                f"unexpected {shown(m.group())} after the last function table",
            )


def _labels(names, states, cards: list) -> tuple:
    """The variables' names and states: ``names`` / ``states`` checked, or
    ``0 .. n - 1`` and ``0 .. k - 1``."""
    n = len(cards)
    if names is None:
        names = [f"x{i}" for i in range(n)]
    else:
        if isinstance(names, (str, bytes)) or not hasattr(names, "__len__"):
            raise TypeError(
                f"names must be a list of the {n} variables' names, got "
                f"{type(names).__name__}"
            )
        names = list(names)
        if len(names) != n:
            raise ValueError(
                f"names has {len(names)} names; the file has {n} variables"
            )
        if len(set(names)) != n:
            twice = next(x for x in names if names.count(x) > 1)
            raise ValueError(f"names lists {shown(twice)} twice")
    if states is None:
        states = {}
    if not isinstance(states, dict):
        raise TypeError(
            f"states must be a dict from variable name to its states, got "
            f"{type(states).__name__}"
        )
    unknown = [v for v in states if v not in names]
    if unknown:
        raise ValueError(f"states names {shown(unknown[0])}, which is not a variable")
    out = {}
    for v, k in zip(names, cards):
        labels = list(states[v]) if v in states else list(range(k))
        if len(labels) != k:
            raise ValueError(
                f"states[{shown(v)}] has {len(labels)} states; the file gives "
                f"{shown(v)} {k}"
            )
        if len(set(labels)) != k:
            raise ValueError(f"states[{shown(v)}] lists a state twice")
        out[v] = labels
    return names, out


def read_uai(
    source=None,
    *,
    path=None,
    names=None,
    states=None,
    max_bytes=MAX_BYTES,
    max_cells=MAX_CELLS,
):
    """Read a Bayesian network from a UAI file (``BAYES``).

    Parameters
    ----------
    source : str, bytes, file object or path-like, default=None
        The file: its text (a ``str`` is always the text of the file, never a
        path), its bytes (UTF-8 or ASCII), an open file object, or a
        ``pathlib.Path``.
    path : str or path-like, default=None
        The path of the file, instead of ``source``; a gzip-compressed file is
        decompressed (told by its bytes, not its name).
    names : list, default=None
        The names of the variables, in the order of the file (UAI has none):
        ``None`` names them ``'x0' .. 'x{n-1}'``.
    states : dict, default=None
        The labels of some variables' states, ``{name: labels}``, in the order
        of the file's state indices; the others are ``0 .. k - 1`` (ints).
    max_bytes : int, default=64 MiB
        The most text read (after decompression); a longer file is a
        ValueError, before it is parsed.
    max_cells : int, default=2**24
        The most table cells the file may imply, in all; more is a ValueError
        that names the line, before anything is allocated.

    Returns
    -------
    BayesianNetwork
        Every table set, the variables in the order of the file, each
        variable's parents in the order of its function's scope.

    Raises
    ------
    ValueError
        For a malformed file, with the line number: a preamble other than
        ``BAYES`` (a ``MARKOV`` file is a Markov network, not a Bayesian
        one), a count that is not a non-negative integer, a variable index out
        of range, a variable that is the child of no function or of two, a
        table of the wrong size or whose rows do not sum to one, a cycle,
        words after the last table; a file over ``max_bytes`` or
        ``max_cells``; ``names`` or ``states`` that do not fit the file.
    TypeError
        For a ``source``, ``path``, ``names`` or ``states`` of another type.

    Examples
    --------
    >>> from bayeskit.io import read_uai
    >>> bn = read_uai('''BAYES
    ... 2
    ... 2 2
    ... 2
    ... 1 0
    ... 2 0 1
    ... 2 0.8 0.2
    ... 4 0.9 0.1 0.3 0.7''', names=["rain", "wet"])
    >>> bn.parents_["wet"], bn.get_cpd("wet").to_numpy().tolist()
    (('rain',), [[0.9, 0.1], [0.3, 0.7]])
    """
    max_bytes, max_cells = check_caps(max_bytes, max_cells)
    data = read_source(source, path, "UAI", max_bytes)
    t = _Tokens(decode(data, "UAI"))
    kind = t.next("the preamble 'BAYES'")
    if kind.upper() != "BAYES":
        hint = (
            ": a MARKOV file is a Markov network, not a Bayesian network"
            if kind.upper() == "MARKOV"
            else (
                " (a str source is the text of the file: to read the file a str "
                "names, pass pathlib.Path(...) or path=...)"
                if isinstance(source, str)
                else ""
            )
        )
        raise FileError(
            t.line(), f"expected the preamble 'BAYES', got {shown(kind)}{hint}"
        )
    n = t.count("the number of variables", 1)
    cards = [t.count(f"the number of states of variable {i}", 1) for i in range(n)]
    n_functions = t.count("the number of functions")
    if n_functions != n:
        raise FileError(
            t.line(),
            f"the file declares {n_functions} functions for {n} variables; a "
            "Bayesian network has one table per variable",
        )
    scopes, children, cells = [], {}, 0
    for f in range(n_functions):
        size = t.count(f"the size of the scope of function {f}", 1)
        line = t.line()
        scope = []
        for _ in range(size):
            i = t.count(f"a variable of the scope of function {f}")
            if i >= n:
                raise FileError(
                    t.line(), f"variable {i} is out of range: the file has {n}"
                )
            scope.append(i)
        if len(set(scope)) != len(scope):
            raise FileError(line, f"the scope of function {f} repeats a variable")
        child = scope[-1]
        if child in children:
            raise FileError(
                line,
                f"variable {child} is the child (the last of the scope) of "
                f"functions {children[child]} and {f}",
            )
        children[child] = f
        cells = count_cells(
            [cards[i] for i in scope[:-1]],
            cards[child],
            f"variable {child}",
            line,
            cells,
            max_cells,
        )
        scopes.append((scope, line))
    lonely = [i for i in range(n) if i not in children]
    if lonely:
        raise FileError(t.line(), f"variable {lonely[0]} is the child of no function")
    names, labels = _labels(names, states, cards)
    variables = {v: (labels[v], 1) for v in names}
    tables, lines = {}, {}
    for f, (scope, _) in enumerate(scopes):
        size = t.count(f"the number of entries of function {f}")
        line = t.line()
        shape = [cards[i] for i in scope]
        if size != math.prod(shape):
            raise FileError(
                line,
                f"function {f} has {size} entries; its scope has "
                f"{math.prod(shape)} joint states",
            )
        values = np.empty(size)
        for j in range(size):
            values[j] = t.probability(f"an entry of function {f}")
        child = names[scope[-1]]
        tables[child] = ([names[i] for i in scope[:-1]], values.reshape(shape))
        lines[child] = line
    t.rest()
    network = build_network(variables, tables, lines)
    return describe(network, None, {}, {})


def write_uai(network, path=None, *, max_bytes=MAX_BYTES, max_cells=MAX_CELLS):
    """Write a Bayesian network as a UAI file (``BAYES``).

    UAI has no names: variable ``i`` of the file is ``network.variables_[i]``
    and its state ``j`` is ``network.states_[v][j]``; function ``i`` is the
    table of variable ``i``, its scope the variable's parents (in the order
    of ``parents_``) and the variable last. Read it back with the names
    and states::

        read_uai(text, names=list(bn.variables_),
                 states={v: list(bn.states_[v]) for v in bn.variables_})

    Parameters
    ----------
    network : BayesianNetwork
        A network with every table set.
    path : str, path-like or file object, default=None
        Where to write (a ``.gz`` path is compressed); ``None`` returns the
        text.
    max_bytes, max_cells : int, default=64 MiB, 2**24
        The caps of :func:`read_uai`: a network whose file would be over
        either is a ValueError (the reader would refuse the file).

    Returns
    -------
    str or None
        The text, when ``path`` is None. Probabilities are written as the
        shortest decimal that reads back as the same float, without an
        exponent (``0.00001``: pgmpy's reader reads none).

    Raises
    ------
    TypeError
        If ``network`` is not a BayesianNetwork.
    ValueError
        If a table is not set, or the file would be over ``max_bytes`` or
        ``max_cells``.
    """
    max_bytes, max_cells = check_caps(max_bytes, max_cells)
    check_network(network, max_cells)
    variables = list(network.variables_)
    index = {v: i for i, v in enumerate(variables)}
    out = [
        "BAYES",
        str(len(variables)),
        " ".join(str(len(network.states_[v])) for v in variables),
        str(len(variables)),
    ]
    for v in variables:
        scope = [index[u] for u in network.dag_.parents(v)] + [index[v]]
        out.append(" ".join(map(str, [len(scope), *scope])))
    for v in variables:
        table = np.asarray(network.cpds_[v], dtype=float)
        out.append("")
        out.append(str(table.size))
        for row in table.reshape(-1, table.shape[-1]):
            out.append(" " + " ".join(map(decimal, row)))
    return write_text(check_size("\n".join(out) + "\n", max_bytes), path)
