"""XMLBIF 0.3, the XML version of the Bayesian Interchange Format.

A ``NETWORK`` holds one ``VARIABLE`` per variable (its ``NAME`` and
``OUTCOME`` states) and one ``DEFINITION`` per variable (``FOR`` the
variable, ``GIVEN`` each parent, and a ``TABLE`` of probabilities with the
variable's states varying fastest, then the last parent's, ..., the first
parent's slowest: the rows of ``get_cpd`` one after the other).
"""

from __future__ import annotations

import math
import re
from xml.parsers import expat
from xml.sax.saxutils import escape

import numpy as np

from ._common import (
    MAX_BYTES,
    MAX_CELLS,
    FileError,
    build_network,
    check_caps,
    check_labels,
    check_network,
    check_size,
    count_cells,
    describe,
    description,
    label_text,
    number,
    read_source,
    shown,
    split_property,
    write_text,
)

# Characters XML 1.0 does not allow in a document (section 2.2).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

__all__ = ["read_xmlbif", "write_xmlbif"]


class _Element:
    __slots__ = ("attrs", "children", "line", "tag", "text")

    def __init__(self, tag: str, line: int, attrs: dict | None = None) -> None:
        self.tag, self.line, self.children, self.text = tag, line, [], []
        self.attrs = attrs or {}

    def find_all(self, tag: str) -> list:
        return [c for c in self.children if c.tag.upper() == tag]

    def value(self) -> str:
        return "".join(self.text).strip()

    def one(self, tag: str, owner: str) -> _Element:
        found = self.find_all(tag)
        if len(found) != 1:
            raise FileError(self.line, f"{owner} needs one <{tag}>, found {len(found)}")
        return found[0]


def _parse_once(data) -> _Element:
    """The element tree of ``data`` (``bytes``, in the encoding the XML
    declares, or ``str``), each element with its line number.

    A DTD may declare elements and attributes (XMLBIF 0.3 files often hold
    one) but no entity: an entity can expand without bound or stand for
    another file, and an undeclared one would be read as nothing.
    """
    parser = expat.ParserCreate()
    root = _Element("", 0)
    stack = [root]

    def start(tag, attrs):
        element = _Element(tag, parser.CurrentLineNumber, attrs)
        stack[-1].children.append(element)
        stack.append(element)

    def end(tag):
        stack.pop()

    def characters(chunk):
        stack[-1].text.append(chunk)

    def entity(name, *args):
        raise FileError(
            parser.CurrentLineNumber,
            f"the DTD declares the entity {shown(name)}: a file with entities is "
            "refused (they can expand without bound or read other files)",
        )

    def skipped(name, is_parameter):
        raise FileError(
            parser.CurrentLineNumber,
            f"the entity {shown(name)} is not declared in the file: a file with "
            "entities is refused",
        )

    def external(context, base, system_id, public_id):
        raise FileError(
            parser.CurrentLineNumber,
            f"the external entity {shown(system_id)} is refused: the reader reads "
            "no other file",
        )

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = characters
    parser.EntityDeclHandler = entity
    parser.UnparsedEntityDeclHandler = entity
    parser.SkippedEntityHandler = skipped
    parser.ExternalEntityRefHandler = external
    if isinstance(data, str) and data.startswith("\ufeff"):
        data = data[1:]  # a byte-order mark decoded as text
    try:
        parser.Parse(data, True)
    except UnicodeEncodeError as exc:  # text expat cannot take as UTF-8
        line = data.count("\n", 0, exc.start) + 1
        raise FileError(
            line,
            f"the text holds {shown(data[exc.start])}, which is no Unicode "
            "character (a lone surrogate): give the file's bytes, or text "
            "decoded from them",
        ) from None
    except expat.ExpatError as exc:
        message = f"malformed XML: {expat.ErrorString(exc.code)}"
        raise FileError(exc.lineno, message) from None
    return root


# The encoding an XML declaration names, read from ASCII-compatible bytes.
_DECLARED = re.compile(rb"""<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z][\w.:-]*)["']""")


def _parse(data) -> _Element:
    """The element tree of ``data``; bytes in an encoding expat does not know
    by the name declared (a Python name such as ``utf-16-le``, a multi-byte
    code page) are decoded by Python's codec of that name first."""
    try:
        return _parse_once(data)
    except FileError:
        raise
    except (ValueError, LookupError):  # expat's handler of unknown encodings
        if not isinstance(data, bytes):
            raise
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        name = "utf-16"
    else:
        found = _DECLARED.match(data.lstrip(b"\xef\xbb\xbf \t\r\n"))
        name = found.group(1).decode("ascii") if found else "utf-8"
    try:
        text = data.decode(name)
    except LookupError:
        raise FileError(
            1, f"the XML declares an unknown encoding, {shown(name)}"
        ) from None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FileError(
            line, f"the XML is not {shown(name)} text: {exc.reason}"
        ) from None
    return _parse_once(text)


def read_root(source, path, what: str, max_bytes: int):
    """The root element of an XML file (``what`` names its format), read
    from ``source`` or ``path`` within ``max_bytes``."""
    data = read_source(source, path, what, max_bytes)
    if isinstance(source, str) and "<" not in data:
        raise FileError(
            1,
            f"the {what} text {shown(data)} holds no element (a str source is the "
            "text of the file: to read the file a str names, pass "
            "pathlib.Path(...) or path=...)",
        )
    return _parse(data)


def read_xmlbif(source=None, *, path=None, max_bytes=MAX_BYTES, max_cells=MAX_CELLS):
    """Read a Bayesian network from an XMLBIF file.

    Parameters
    ----------
    source : str, bytes, file object or path-like, default=None
        The file: its text (a ``str`` is always the text of the file, never a
        path, so that text from elsewhere can never make the reader open a
        file), its bytes, an open file object, or a ``pathlib.Path``. Bytes
        are read in the encoding the XML declares (UTF-8, UTF-16,
        ISO-8859-1, ...), as XML says.
    path : str or path-like, default=None
        The path of the file, instead of ``source``
        (``read_xmlbif(path="a.xml")``); a gzip-compressed file is
        decompressed (told by its bytes, not its name).
    max_bytes : int, default=64 MiB
        The most bytes read (after decompression); a longer file is a
        ValueError, before it is parsed.
    max_cells : int, default=2**24
        The most table cells the file may imply, in all; more is a ValueError
        that names the line, before anything is allocated.

    Returns
    -------
    BayesianNetwork
        Every table set, the variables in the order of their ``VARIABLE``
        elements, their states (strings) in the order of the ``OUTCOME``
        elements, and each variable's parents in the order of its ``GIVEN``
        elements (``parents_``). ``name_`` is the ``NAME`` of the
        ``NETWORK`` (None without one), ``properties_`` its ``PROPERTY``
        elements and ``variable_properties_[v]`` those of variable ``v``,
        ``{key: value}`` (the text either side of the first ``=``, blanks
        stripped; a property without ``=`` is ``{text: None}``).

    Raises
    ------
    ValueError
        For a malformed file, with the line number: malformed XML, a DTD
        that declares an entity, a missing element, no variable, an unknown
        variable, a table of the wrong size or whose rows do not sum to one,
        a probability that is not a finite number, a variable without a
        table, a cycle; or a file over ``max_bytes`` or ``max_cells``. A
        message quotes at most a short excerpt of the file.
    TypeError
        For a ``source`` or ``path`` of another type, or both given.
    """
    max_bytes, max_cells = check_caps(max_bytes, max_cells)
    root = read_root(source, path, "XMLBIF", max_bytes)
    bifs = root.find_all("BIF")
    if len(bifs) != 1:
        raise FileError(1, "an XMLBIF file has one <BIF> root element")
    network = bifs[0].one("NETWORK", "<BIF>")
    names = network.find_all("NAME")
    if len(names) > 1:
        raise FileError(network.line, "the <NETWORK> has two <NAME> elements")
    network_name = names[0].value() if names else None
    variables: dict = {}
    variable_properties: dict = {}
    for element in network.find_all("VARIABLE"):
        name = element.one("NAME", "a <VARIABLE>").value()
        if name in variables:
            raise FileError(element.line, f"variable {shown(name)} is declared twice")
        states = [o.value() for o in element.find_all("OUTCOME")]
        if not states:
            raise FileError(element.line, f"variable {shown(name)} has no <OUTCOME>")
        if len(set(states)) != len(states):
            twice = next(x for x in states if states.count(x) > 1)
            raise FileError(
                element.line,
                f"variable {shown(name)} lists the state {shown(twice)} twice",
            )
        variables[name] = (states, element.line)
        variable_properties[name] = _properties(element)
    if not variables:
        raise FileError(network.line, "the <NETWORK> declares no <VARIABLE>")
    tables: dict = {}
    lines: dict = {}
    cells = 0
    definitions = network.find_all("DEFINITION") + network.find_all("PROBABILITY")
    for element in definitions:
        child = element.one("FOR", "a <DEFINITION>").value()
        parents = [g.value() for g in element.find_all("GIVEN")]
        for v in [child, *parents]:
            if v not in variables:
                raise FileError(element.line, f"unknown variable {shown(v)}")
        if child in tables:
            raise FileError(
                element.line, f"variable {shown(child)} has two <DEFINITION> elements"
            )
        if len(set(parents)) != len(parents) or child in parents:
            raise FileError(
                element.line, f"the <GIVEN> of {shown(child)} repeat a variable"
            )
        table = element.one("TABLE", "a <DEFINITION>")
        shape = (*[len(variables[u][0]) for u in parents], len(variables[child][0]))
        cells = count_cells(
            shape[:-1], shape[-1], child, element.line, cells, max_cells
        )
        size = math.prod(shape)
        words = table.value().split()
        if len(words) != size:
            raise FileError(
                table.line,
                f"the <TABLE> of {shown(child)} has {len(words)} probabilities; "
                f"expected {size}",
            )
        values = [number(t, table.line) for t in words]
        tables[child] = (parents, np.asarray(values).reshape(shape))
        lines[child] = element.line
    bn = build_network(variables, tables, lines)
    return describe(bn, network_name, _properties(network), variable_properties)


def _properties(element) -> dict:
    """The ``<PROPERTY>key = value</PROPERTY>`` of ``element``, split as
    pgmpy splits them."""
    out: dict = {}
    for prop in element.find_all("PROPERTY"):
        key, value = split_property(prop.value())
        if key in out:
            raise FileError(prop.line, f"the property {shown(key)} is given twice")
        out[key] = value
    return out


def _xml(label, what: str) -> str:
    """``label`` as XML text that reads back as ``str(label)``: no character
    XML 1.0 forbids, no blank at either end (the reader strips them), a
    carriage return as a character reference (XML reads a bare one as a
    newline)."""
    text = label_text(label, what, "XMLBIF")
    bad = _NOT_XML.search(text)
    if bad is not None:
        raise ValueError(
            f"{what} {shown(label)} cannot be written in XMLBIF: it holds the "
            f"character {bad.group()!r}, which XML 1.0 does not allow"
        )
    if text != text.strip():
        raise ValueError(
            f"{what} {shown(label)} cannot be written in XMLBIF: it starts or ends "
            "with a blank, which XMLBIF readers strip"
        )
    return escape(text).replace("\r", "&#13;")


def _labels(labels: list, what: str) -> list:
    written = [_xml(x, what) for x in labels]
    check_labels(labels, what, [str(x) for x in labels])
    return written


def _property_lines(properties: dict, indent: str) -> list:
    """``PROPERTY`` elements that read back as ``properties``."""
    out = []
    for key, value in properties.items():
        text = str(key) if value is None else f"{key} = {value}"
        expected = (str(key), None if value is None else str(value))
        if split_property(text) != expected or not str(key):
            raise ValueError(
                f"the property {shown(key)} = {shown(value)} cannot be written in "
                "XMLBIF: the key is not empty and holds no '=', and neither key "
                "nor value starts or ends with a blank"
            )
        out.append(f"{indent}<PROPERTY>{_xml(text, 'property')}</PROPERTY>")
    return out


def write_xmlbif(
    network,
    path=None,
    *,
    name=None,
    max_bytes=MAX_BYTES,
    max_cells=MAX_CELLS,
):
    """Write a Bayesian network as an XMLBIF 0.3 file.

    Parameters
    ----------
    network : BayesianNetwork
        A network with every table set.
    path : str, path-like or file object, default=None
        Where to write (a ``.gz`` path is compressed); ``None`` returns the
        text.
    name : str, default=None
        The ``NAME`` of the network; ``None`` takes ``network.name_`` (the
        name a reader read), else ``"unknown"``. The network's
        ``properties_`` and each variable's ``variable_properties_`` (see
        :func:`read_xmlbif`) are written as ``PROPERTY`` elements,
        ``key = value``.
    max_bytes, max_cells : int, default=64 MiB, 2**24
        The caps of :func:`read_xmlbif`: a network whose file would be over
        either is a ValueError (the reader would refuse the file).

    Returns
    -------
    str or None
        The text, when ``path`` is None. Probabilities are written with the
        shortest text that reads back as the same float, so
        ``read_xmlbif(write_xmlbif(bn))`` has the same tables exactly
        (states read back as strings, ``str(state)``).

    Raises
    ------
    TypeError
        If ``network`` is not a BayesianNetwork.
    ValueError
        If a table is not set; if a name or state cannot be written (a
        character XML forbids, a blank at either end, a lone surrogate), or
        two states of a variable (or two variables) read back as one
        (``1.5`` and ``'1.5'``); or if the file would be over ``max_bytes``
        or ``max_cells``.
    """
    max_bytes, max_cells = check_caps(max_bytes, max_cells)
    check_network(network, max_cells)
    own, properties, variable_properties = description(network)
    name = name if name is not None else own if own is not None else "unknown"
    variables = list(network.variables_)
    written = dict(zip(variables, _labels(variables, "variables")))
    out = [
        "<?xml version='1.0' encoding='utf-8'?>",
        '<BIF VERSION="0.3">',
        "  <NETWORK>",
        f"    <NAME>{_xml(name, 'name')}</NAME>",
        *_property_lines(properties, "    "),
    ]
    for v in variables:
        states = _labels(network.states_[v].tolist(), f"states of {shown(v)}")
        out += ['    <VARIABLE TYPE="nature">', f"      <NAME>{written[v]}</NAME>"]
        out += [f"      <OUTCOME>{s}</OUTCOME>" for s in states]
        out += _property_lines(variable_properties[v], "      ")
        out.append("    </VARIABLE>")
    for v in variables:
        out += ["    <DEFINITION>", f"      <FOR>{written[v]}</FOR>"]
        out += [f"      <GIVEN>{written[u]}</GIVEN>" for u in network.dag_.parents(v)]
        values = " ".join(repr(float(x)) for x in network.cpds_[v].ravel())
        out += [f"      <TABLE>{values}</TABLE>", "    </DEFINITION>"]
    out += ["  </NETWORK>", "</BIF>"]
    return write_text(check_size("\n".join(out) + "\n", max_bytes), path)
