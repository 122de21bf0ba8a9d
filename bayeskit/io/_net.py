"""The Hugin NET format (the NET language of Hugin's API reference), Bayesian networks.

A file is a ``net { ... }`` block of the network's attributes, one
``node NAME { states = ("a" "b"); label = "..."; position = (x y); }`` block
per variable and one ``potential ( C | P1 P2 ) { data = ...; }`` block per
variable. ``data`` lists ``P(C | P1, P2)`` nested as Hugin writes it: the
first parent outermost, then the next, the child's states innermost (the
parentheses group, the order of the numbers is what counts). ``%`` starts a
comment. Continuous, decision and utility nodes and classes
(object-oriented networks) are not Bayesian networks of discrete
variables, and are refused.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ._common import (
    MAX_BYTES,
    MAX_CELLS,
    FileError,
    TokenStream,
    build_network,
    check_caps,
    check_labels,
    check_network,
    check_size,
    count_cells,
    decimal,
    decode,
    describe,
    description,
    label_text,
    number,
    read_source,
    shown,
    write_text,
)

__all__ = ["read_net", "write_net"]

_TOKEN = re.compile(
    r"""(?P<space>\s+)
      | (?P<comment>%[^\n]*)
      | (?P<string>"[^"]*")
      | (?P<punct>[{}()=;|])
      | (?P<word>[^\s{}()=;|"%]+)
      | (?P<bad>.)""",
    re.S | re.X,
)
# A name written bare in NET: what the reader reads as one word.
_NAME = re.compile(r'[^\s{}()=;|"%]+')
_KINDS = {"discrete", "continuous", "decision", "utility", "function"}


def _tokens(text: str) -> list:
    out, line = [], 1
    for m in _TOKEN.finditer(text):
        kind, value = m.lastgroup, m.group()
        if kind == "bad":
            raise FileError(line, f"unexpected character {shown(value)}")
        if kind in ("word", "punct", "string"):
            out.append((value, line, kind))
        line += value.count("\n")
    out.append(("", line, "end"))
    return out


class _Parser(TokenStream):
    def __init__(self, text: str) -> None:
        super().__init__(_tokens(text))

    def peek(self) -> tuple:
        return self.tokens[self.i]

    def name(self, what: str) -> str:
        text, line, kind = self.next()
        if kind != "word":
            raise FileError(line, f"expected {what}, got {shown(text)}")
        return text

    def value(self) -> list:
        """The tokens of a value, up to the ``;`` that ends it (parentheses
        balanced)."""
        out, depth = [], 0
        while True:
            token = self.next()
            text, line, kind = token
            if kind != "string" and text == ";" and depth == 0:
                if not out:
                    raise FileError(line, "expected a value before ';'")
                return out
            if kind != "string" and text in "{}=|":
                raise FileError(line, f"unexpected {text!r} in a value")
            if kind != "string" and text == "(":
                depth += 1
            elif kind != "string" and text == ")":
                depth -= 1
                if depth < 0:
                    raise FileError(line, "a ')' closes no '('")
            out.append(token)

    def attributes(self, owner: str):
        """The ``key = value;`` of a block, as ``(key, tokens, line)``."""
        self.expect("{")
        while self.peek()[0] != "}" or self.peek()[2] == "string":
            line = self.line
            key = self.name(f"an attribute of {owner} or '}}'")
            self.expect("=")
            yield key, self.value(), line
        self.next()


def _text(tokens: list) -> str:
    """A value as text: its tokens, one blank between them, none inside
    parentheses' edges (``(400 700)``, ``"Visit to Asia?"``)."""
    out = ""
    for text, _, kind in tokens:
        if out and not out.endswith("(") and not (text == ")" and kind == "punct"):
            out += " "
        out += text
    return out


def _net(p: _Parser, properties: dict):
    name = None
    for key, tokens, line in p.attributes("'net'"):
        if key in properties or (key == "name" and name is not None):
            raise FileError(line, f"the net block gives {shown(key)} twice")
        if key == "name" and len(tokens) == 1 and tokens[0][2] != "punct":
            text = tokens[0][0]
            name = text[1:-1] if tokens[0][2] == "string" else text
        else:
            properties[key] = _text(tokens)
    return name


def _node(p: _Parser, variables: dict, properties: dict) -> None:
    line = p.line
    name = p.name("a node name")
    if name in variables:
        raise FileError(line, f"node {shown(name)} is declared twice")
    states, props = None, {}
    for key, tokens, at in p.attributes(f"node {shown(name)}"):
        if key == "states":
            if states is not None:
                raise FileError(at, f"node {shown(name)} gives its states twice")
            inner = tokens[1:-1] if tokens[0][0] == "(" else None
            if (
                not inner
                or tokens[-1][0] != ")"
                or any(k == "punct" for _, _, k in inner)
            ):
                raise FileError(
                    at,
                    f"the states of {shown(name)} are a list of strings, "
                    f'("a" "b"); got {shown(_text(tokens))}',
                )
            # strings, or words as pyAgrum writes them: (yes no)
            states = [t[1:-1] if k == "string" else t for t, _, k in inner]
            if len(set(states)) != len(states):
                twice = next(x for x in states if states.count(x) > 1)
                raise FileError(
                    at, f"node {shown(name)} lists the state {shown(twice)} twice"
                )
        elif key in props:
            raise FileError(at, f"node {shown(name)} gives {shown(key)} twice")
        else:
            props[key] = _text(tokens)
    if states is None:
        raise FileError(line, f"node {shown(name)} has no 'states'")
    variables[name] = (states, line)
    properties[name] = props


def _potential(p, variables, tables, lines, cells, max_cells) -> int:
    line = p.line
    p.expect("(")
    names, given = [], None
    while p.peek()[0] != ")" or p.peek()[2] == "string":
        if p.peek()[0] == "|" and p.peek()[2] == "punct":
            if given is not None:
                raise FileError(p.line, "a potential has one '|'")
            given = len(names)
            p.next()
        else:
            names.append(p.name("a node name, '|' or ')'"))
    p.next()
    if not names:
        raise FileError(line, "a potential names no node")
    if given not in (None, 1):
        raise FileError(
            line,
            "a potential names one node before '|' (joint potentials, "
            f"{shown(' '.join(names[:given] if given else names), 60)}, are not "
            "a Bayesian network's tables)",
        )
    if given is None and len(names) > 1:
        raise FileError(line, "a potential of several nodes needs '|' after the child")
    child, parents = names[0], names[1:]
    for v in names:
        if v not in variables:
            raise FileError(line, f"unknown node {shown(v)}: declare it first")
    if child in tables:
        raise FileError(line, f"node {shown(child)} has two potentials")
    if len(set(names)) != len(names):
        raise FileError(line, "a potential repeats a node")
    shape = [len(variables[u][0]) for u in parents] + [len(variables[child][0])]
    cells = count_cells(shape[:-1], shape[-1], child, line, cells, max_cells)
    data = None
    for key, tokens, at in p.attributes(f"the potential of {shown(child)}"):
        if key != "data":
            continue  # experience, fading, model_nodes, ...: not the table
        if data is not None:
            raise FileError(at, f"the potential of {shown(child)} gives data twice")
        data = [number(t, n) for t, n, k in tokens if not (k == "punct")]
        if len(data) != math.prod(shape):
            raise FileError(
                at,
                f"the data of {shown(child)} has {len(data)} numbers; expected "
                f"{math.prod(shape)}",
            )
    if data is None:
        raise FileError(line, f"the potential of {shown(child)} has no data")
    tables[child] = (parents, np.asarray(data, dtype=float).reshape(shape))
    lines[child] = line
    return cells


def read_net(source=None, *, path=None, max_bytes=MAX_BYTES, max_cells=MAX_CELLS):
    """Read a Bayesian network from a Hugin NET file.

    Parameters
    ----------
    source : str, bytes, file object or path-like, default=None
        The file: its text (a ``str`` is always the text of the file, never a
        path), its bytes (UTF-8, or UTF-16 with its byte-order mark), an open
        file object, or a ``pathlib.Path``.
    path : str or path-like, default=None
        The path of the file, instead of ``source``; a gzip-compressed file is
        decompressed (told by its bytes, not its name).
    max_bytes : int, default=64 MiB
        The most text read (after decompression); a longer file is a
        ValueError, before it is parsed.
    max_cells : int, default=2**24
        The most table cells the file may imply, in all; more is a ValueError
        that names the line, before anything is allocated.

    Returns
    -------
    BayesianNetwork
        Every table set, the variables in the order of their ``node`` blocks,
        their states (strings) in the order listed, each variable's parents
        in the order of its ``potential``. ``name_`` is the ``name`` of the
        ``net`` block (None without one), ``properties_`` the net block's
        other attributes and ``variable_properties_[v]`` the attributes of
        node ``v`` other than ``states`` (``label``, ``position``, ...), each
        as its text, ``{"label": '"Visit to Asia?"', "position": "(400 700)"}``
        (a string keeps its quotes).

    Raises
    ------
    ValueError
        For a malformed file, with the line number: a syntax error, a
        continuous, decision or utility node or a class, an unknown node, a
        potential of several children, data of the wrong size or whose rows
        do not sum to one, a node without a potential, a cycle; or a file
        over ``max_bytes`` or ``max_cells``. A message quotes at most a short
        excerpt of the file.
    TypeError
        For a ``source`` or ``path`` of another type, or both given.

    Examples
    --------
    >>> from bayeskit.io import read_net
    >>> bn = read_net('''
    ... net { }
    ... node rain { label = "Rain?"; states = ("no" "yes"); }
    ... potential ( rain ) { data = ( 0.8 0.2 ); }
    ... ''')
    >>> bn.states_["rain"].tolist(), bn.variable_properties_["rain"]
    (['no', 'yes'], {'label': '"Rain?"'})
    """
    max_bytes, max_cells = check_caps(max_bytes, max_cells)
    data = read_source(source, path, "NET", max_bytes)
    text = decode(data, "NET")
    if "{" not in text:
        hint = (
            " (a str source is the text of the file: to read the file a str "
            "names, pass pathlib.Path(...) or path=...)"
            if isinstance(source, str)
            else ""
        )
        raise FileError(1, f"the NET text {shown(text)} declares no block{hint}")
    p = _Parser(text)
    variables: dict = {}
    tables: dict = {}
    lines: dict = {}
    properties: dict = {}
    node_properties: dict = {}
    name, seen_net, cells = None, False, 0
    while p.peek()[2] != "end":
        word, line, _ = p.next()
        if word == "net":
            if seen_net:
                raise FileError(line, "the file has two 'net' blocks")
            seen_net = True
            name = _net(p, properties)
        elif word == "node" or (word == "discrete" and p.peek()[0] == "node"):
            if word == "discrete":
                p.next()
            _node(p, variables, node_properties)
        elif word in _KINDS or word == "class":
            what = (
                "classes (object-oriented networks)"
                if word == "class"
                else (f"{word} nodes")
            )
            raise FileError(
                line,
                f"{what} are not supported: a Bayesian network of discrete "
                "variables is read",
            )
        elif word == "potential":
            cells = _potential(p, variables, tables, lines, cells, max_cells)
        else:
            raise FileError(
                line, f"expected 'net', 'node' or 'potential', got {shown(word)}"
            )
    if not variables:
        raise FileError(p.line, "the file declares no node")
    network = build_network(variables, tables, lines)
    return describe(network, name, properties, node_properties)


def _fmt_name(label, what: str) -> str:
    text = label_text(label, what, "NET")
    if _NAME.fullmatch(text) is None or text in _KINDS | {
        "net",
        "node",
        "potential",
        "class",
    }:
        raise ValueError(
            f"{what} {shown(label)} cannot be written in NET: a node name is one "
            'word, without blanks or any of {}()=;|"%, and no keyword'
        )
    return text


def _string(label, what: str) -> str:
    text = label_text(label, what, "NET")
    if '"' in text:
        raise ValueError(
            f"{what} {shown(label)} cannot be written in NET: a string must not "
            "hold a double quote"
        )
    return f'"{text}"'


def _value(value, what: str) -> str:
    """A property's text, written as it is when it reads back the same,
    else as a string."""
    if value is None:
        return '""'
    text = label_text(value, what, "NET")
    try:
        p = _Parser(text + ";")
        if p.peek()[2] != "end" and _text(p.value()) == text and p.peek()[2] == "end":
            return text
    except FileError:
        pass
    return _string(text, what)


def _key(key, what: str, reserved: str) -> str:
    text = _fmt_name(key, what)
    if text == reserved:
        raise ValueError(f"{what} {shown(key)} is a word NET reserves")
    return text


def write_net(network, path=None, *, max_bytes=MAX_BYTES, max_cells=MAX_CELLS):
    """Write a Bayesian network as a Hugin NET file.

    ``name_`` (when set) is written as the ``name`` of the ``net`` block,
    ``properties_`` as its other attributes and ``variable_properties_[v]``
    as the attributes of node ``v``: a value is written as it is when
    :func:`read_net` reads it back the same (a string, a number, a list
    ``(400 700)``), else as a string, and a property without a value (BIF's
    ``property text;``) as ``""``.

    Parameters
    ----------
    network : BayesianNetwork
        A network with every table set.
    path : str, path-like or file object, default=None
        Where to write (a ``.gz`` path is compressed); ``None`` returns the
        text.
    max_bytes, max_cells : int, default=64 MiB, 2**24
        The caps of :func:`read_net`: a network whose file would be over
        either is a ValueError (the reader would refuse the file).

    Returns
    -------
    str or None
        The text, when ``path`` is None. Probabilities are written as the
        shortest decimal that reads back as the same float, without an
        exponent (``0.00001``: pgmpy's reader reads none), nested as Hugin
        nests them (the first parent outermost).

    Raises
    ------
    TypeError
        If ``network`` is not a BayesianNetwork.
    ValueError
        If a table is not set; if a variable name is not one NET word, a
        state or string holds a double quote, a property key is not a word,
        or two states of a variable read back as one; or if the file would be
        over ``max_bytes`` or ``max_cells``.
    """
    max_bytes, max_cells = check_caps(max_bytes, max_cells)
    check_network(network, max_cells)
    name, properties, node_properties = description(network)
    variables = list(network.variables_)
    written = {v: _fmt_name(v, "variable") for v in variables}
    check_labels(variables, "variables", list(written.values()))
    out = ["net", "{"]
    if name is not None:
        out.append(f"    name = {_string(name, 'name_')};")
    for key, value in properties.items():
        out.append(
            f"    {_key(key, 'property', 'name')} = {_value(value, 'property')};"
        )
    out.append("}")
    for v in variables:
        states = network.states_[v].tolist()
        labels = [_string(s, f"a state of {shown(v)}") for s in states]
        check_labels(states, f"states of {shown(v)}", labels)
        out += ["", f"node {written[v]}", "{", f"    states = ({' '.join(labels)});"]
        for key, value in node_properties[v].items():
            out.append(
                f"    {_key(key, 'property', 'states')} = {_value(value, 'property')};"
            )
        out.append("}")
    for v in variables:
        parents = network.dag_.parents(v)
        table = np.asarray(network.cpds_[v], dtype=float)
        items = [
            "(" + " ".join(map(decimal, row)) + ")"
            for row in table.reshape(-1, table.shape[-1])
        ]
        for c in reversed(table.shape[:-1]):
            items = [
                "(" + "\n      ".join(items[i : i + c]) + ")"
                for i in range(0, len(items), c)
            ]
        given = " | " + " ".join(written[u] for u in parents) if parents else ""
        out += [
            "",
            f"potential ( {written[v]}{given} )",
            "{",
            f"    data = {items[0]};",
            "}",
        ]
    return write_text(check_size("\n".join(out) + "\n", max_bytes), path)
