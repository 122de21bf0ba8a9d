"""XMLBIF 0.3, the XML version of the Bayesian Interchange Format.

A ``NETWORK`` holds one ``VARIABLE`` per variable (its ``NAME`` and
``OUTCOME`` states) and one ``DEFINITION`` per variable (``FOR`` the
variable, ``GIVEN`` each parent, and a ``TABLE`` of probabilities with the
variable's states varying fastest, then the last parent's, ..., the first
parent's slowest: the rows of ``get_cpd`` one after the other).
"""

from __future__ import annotations

from xml.parsers import expat
from xml.sax.saxutils import escape

import numpy as np

from ._common import FileError, build_network, number, read_text, write_text

__all__ = ["read_xmlbif", "write_xmlbif"]


class _Element:
    __slots__ = ("children", "line", "tag", "text")

    def __init__(self, tag: str, line: int) -> None:
        self.tag, self.line, self.children, self.text = tag, line, [], []

    def find_all(self, tag: str) -> list:
        return [c for c in self.children if c.tag.upper() == tag]

    def value(self) -> str:
        return "".join(self.text).strip()

    def one(self, tag: str, owner: str) -> _Element:
        found = self.find_all(tag)
        if len(found) != 1:
            raise FileError(self.line, f"{owner} needs one <{tag}>, found {len(found)}")
        return found[0]


def _parse(text: str) -> _Element:
    """The element tree of ``text``, each element with its line number."""
    parser = expat.ParserCreate()
    root = _Element("", 0)
    stack = [root]

    def start(tag, attrs):
        element = _Element(tag, parser.CurrentLineNumber)
        stack[-1].children.append(element)
        stack.append(element)

    def end(tag):
        stack.pop()

    def data(chunk):
        stack[-1].text.append(chunk)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = data
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        message = f"malformed XML: {expat.ErrorString(exc.code)}"
        raise FileError(exc.lineno, message) from None
    return root


def read_xmlbif(source):
    """Read a Bayesian network from an XMLBIF file.

    Parameters
    ----------
    source : str, path-like or file object
        A path (a ``.gz`` one is decompressed), an open file, or the text of
        the file itself.

    Returns
    -------
    BayesianNetwork
        Every table set, the variables in the order of their ``VARIABLE``
        elements, their states (strings) in the order of the ``OUTCOME``
        elements, and each variable's parents in the order of its ``GIVEN``
        elements (``parents_``).

    Raises
    ------
    ValueError
        For a malformed file, with the line number: malformed XML, a
        missing element, an unknown variable, a table of the wrong size or
        whose rows do not sum to one, a variable without a table, a cycle.
    """
    root = _parse(read_text(source, "XMLBIF"))
    bifs = root.find_all("BIF")
    if len(bifs) != 1:
        raise FileError(1, "an XMLBIF file has one <BIF> root element")
    network = bifs[0].one("NETWORK", "<BIF>")
    variables: dict = {}
    for element in network.find_all("VARIABLE"):
        name = element.one("NAME", "a <VARIABLE>").value()
        if name in variables:
            raise FileError(element.line, f"variable {name!r} is declared twice")
        states = [o.value() for o in element.find_all("OUTCOME")]
        if not states:
            raise FileError(element.line, f"variable {name!r} has no <OUTCOME>")
        if len(set(states)) != len(states):
            raise FileError(
                element.line, f"variable {name!r} lists a state twice: {states!r}"
            )
        variables[name] = (states, element.line)
    tables: dict = {}
    lines: dict = {}
    definitions = network.find_all("DEFINITION") + network.find_all("PROBABILITY")
    for element in definitions:
        child = element.one("FOR", "a <DEFINITION>").value()
        parents = [g.value() for g in element.find_all("GIVEN")]
        for v in [child, *parents]:
            if v not in variables:
                raise FileError(element.line, f"unknown variable {v!r}")
        if child in tables:
            raise FileError(
                element.line, f"variable {child!r} has two <DEFINITION> elements"
            )
        if len(set(parents)) != len(parents) or child in parents:
            raise FileError(element.line, f"the <GIVEN> of {child!r} repeat a variable")
        table = element.one("TABLE", "a <DEFINITION>")
        values = [number(t, table.line) for t in table.value().split()]
        shape = (*[len(variables[u][0]) for u in parents], len(variables[child][0]))
        if len(values) != int(np.prod(shape)):
            raise FileError(
                table.line,
                f"the <TABLE> of {child!r} has {len(values)} probabilities; expected "
                f"{int(np.prod(shape))}",
            )
        tables[child] = (parents, np.asarray(values).reshape(shape))
        lines[child] = element.line
    return build_network(variables, tables, lines)


def write_xmlbif(network, path=None, *, name="unknown"):
    """Write a Bayesian network as an XMLBIF 0.3 file.

    Parameters
    ----------
    network : BayesianNetwork
        A network with every table set.
    path : str, path-like or file object, default=None
        Where to write (a ``.gz`` path is compressed); ``None`` returns the
        text.
    name : str, default="unknown"
        The ``NAME`` of the network.

    Returns
    -------
    str or None
        The text, when ``path`` is None. Probabilities are written with the
        shortest text that reads back as the same float, so
        ``read_xmlbif(write_xmlbif(bn))`` has the same tables exactly
        (states read back as strings).
    """
    network._check_ready()
    out = [
        "<?xml version='1.0' encoding='utf-8'?>",
        '<BIF VERSION="0.3">',
        "  <NETWORK>",
        f"    <NAME>{escape(str(name))}</NAME>",
    ]
    for v in network.variables_:
        out += ['    <VARIABLE TYPE="nature">', f"      <NAME>{escape(str(v))}</NAME>"]
        out += [
            f"      <OUTCOME>{escape(str(s))}</OUTCOME>"
            for s in network.states_[v].tolist()
        ]
        out.append("    </VARIABLE>")
    for v in network.variables_:
        out += ["    <DEFINITION>", f"      <FOR>{escape(str(v))}</FOR>"]
        out += [
            f"      <GIVEN>{escape(str(u))}</GIVEN>" for u in network.dag_.parents(v)
        ]
        values = " ".join(repr(float(x)) for x in network.cpds_[v].ravel())
        out += [f"      <TABLE>{values}</TABLE>", "    </DEFINITION>"]
    out += ["  </NETWORK>", "</BIF>"]
    return write_text("\n".join(out) + "\n", path)
