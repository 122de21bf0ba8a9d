"""GeNIe's XDSL format (SMILE's XML), Bayesian networks.

A ``<smile id="NAME">`` holds ``<nodes>``: one ``<cpt id="v">`` per variable,
listing its ``<state id="..."/>``, its ``<parents>`` (ids separated by
blanks) and its ``<probabilities>``, the variable's states varying fastest,
then the last parent's, ..., the first parent's slowest (as pgmpy 1.1.2
reads and writes them; pyAgrum 3.3.1 takes the first parent's next after the
variable's and the last parent's slowest, so a table with two parents or
more reads with its parents' order reversed between the two). The optional
``<extensions><genie>`` block holds GeNIe's drawing: one ``<node id="v">``
per variable with its display ``<name>``, ``<position>`` and so on. The XML
is parsed as :func:`~bayeskit.io.read_xmlbif` parses it: a DTD that declares
an entity is refused.
"""

from __future__ import annotations

import math
import re
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
    shown,
    write_text,
)
from ._xmlbif import _NOT_XML, read_root

__all__ = ["read_xdsl", "write_xdsl"]

# The properties of a variable that GeNIe's drawing holds (<genie><node>);
# the others are the node's <property id="..."> elements.
_GENIE = ("name", "comment", "position")


def _properties(element) -> dict:
    """``{id: text}`` of the ``<property id="...">`` in ``<properties>`` or
    directly in ``element``."""
    out = {}
    holders = [element, *element.find_all("PROPERTIES")]
    for holder in holders:
        for prop in holder.find_all("PROPERTY"):
            if "id" not in prop.attrs:
                raise FileError(prop.line, "a <property> has no id")
            out[prop.attrs["id"]] = prop.value()
    return out


def _states(element) -> list:
    states = []
    for state in element.find_all("STATE"):
        if "id" not in state.attrs:
            raise FileError(state.line, "a <state> has no id")
        states.append(state.attrs["id"])
    return states


def _cpt(element, declared, variables, tables, lines, properties, cells, max_cells):
    name = element.attrs["id"]
    if name in variables:
        raise FileError(element.line, f"node {shown(name)} is declared twice")
    states = declared[name]
    if not states:
        raise FileError(element.line, f"node {shown(name)} has no <state>")
    if len(set(states)) != len(states):
        twice = next(x for x in states if states.count(x) > 1)
        raise FileError(
            element.line, f"node {shown(name)} lists the state {shown(twice)} twice"
        )
    given = element.find_all("PARENTS")
    if len(given) > 1:
        raise FileError(element.line, f"node {shown(name)} has two <parents>")
    parents = given[0].value().split() if given else []
    for u in parents:
        if u not in declared:
            raise FileError(element.line, f"unknown parent {shown(u)} of {shown(name)}")
    if len(set(parents)) != len(parents):
        raise FileError(element.line, f"the <parents> of {shown(name)} repeat a node")
    shape = [len(declared[u]) for u in parents] + [len(states)]
    cells = count_cells(shape[:-1], shape[-1], name, element.line, cells, max_cells)
    table = element.one("PROBABILITIES", f"node {shown(name)}")
    words = table.value().split()
    if len(words) != math.prod(shape):
        raise FileError(
            table.line,
            f"the <probabilities> of {shown(name)} has {len(words)} numbers; "
            f"expected {math.prod(shape)}",
        )
    values = [number(t, table.line) for t in words]
    variables[name] = (states, element.line)
    tables[name] = (parents, np.asarray(values, dtype=float).reshape(shape))
    lines[name] = element.line
    properties[name] = _properties(element)
    return cells


def read_xdsl(source=None, *, path=None, max_bytes=MAX_BYTES, max_cells=MAX_CELLS):
    """Read a Bayesian network from a GeNIe XDSL file.

    Parameters
    ----------
    source : str, bytes, file object or path-like, default=None
        The file: its text (a ``str`` is always the text of the file, never a
        path), its bytes (in the encoding the XML declares), an open file
        object, or a ``pathlib.Path``.
    path : str or path-like, default=None
        The path of the file, instead of ``source``; a gzip-compressed file is
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
        Every table set, the variables in the order of their ``<cpt>``
        elements, their states in the order listed, each variable's parents
        in the order of its ``<parents>``. ``name_`` is the ``id`` of the
        ``<smile>`` element, ``properties_`` its ``<property id="...">``
        elements, and ``variable_properties_[v]`` those of ``<cpt id="v">``
        together with the texts of GeNIe's ``<node id="v">`` (``name``,
        ``position``, ``comment``, ...).

    Raises
    ------
    ValueError
        For a malformed file, with the line number: malformed XML, a DTD that
        declares an entity, a node other than a ``<cpt>`` (a noisy-MAX,
        deterministic, equation, decision or utility node), a parent not
        declared before its child, probabilities of the wrong number or whose
        rows do not sum to one; or a file over ``max_bytes`` or ``max_cells``.
    TypeError
        For a ``source`` or ``path`` of another type, or both given.
    """
    max_bytes, max_cells = check_caps(max_bytes, max_cells)
    root = read_root(source, path, "XDSL", max_bytes)
    smiles = root.find_all("SMILE")
    if len(smiles) != 1:
        raise FileError(1, "an XDSL file has one <smile> root element")
    smile = smiles[0]
    nodes = smile.one("NODES", "<smile>")
    variables: dict = {}
    tables: dict = {}
    lines: dict = {}
    node_properties: dict = {}
    cells = 0
    declared = {}  # every node's states: a parent may come after its child
    for element in nodes.children:
        if element.tag.lower() != "cpt":
            raise FileError(
                element.line,
                f"<{shown(element.tag, 20)[1:-1]}> nodes are not supported: a "
                "Bayesian network of <cpt> nodes is read",
            )
        if "id" not in element.attrs:
            raise FileError(element.line, "a <cpt> has no id")
        declared.setdefault(element.attrs["id"], _states(element))
    for element in nodes.children:
        cells = _cpt(
            element,
            declared,
            variables,
            tables,
            lines,
            node_properties,
            cells,
            max_cells,
        )
    if not variables:
        raise FileError(nodes.line, "the <nodes> declare no <cpt>")
    for extensions in smile.find_all("EXTENSIONS"):
        for genie in extensions.find_all("GENIE"):
            for node in genie.find_all("NODE"):
                v = node.attrs.get("id")
                if v not in variables:
                    continue  # a submodel or a text box of the drawing
                for leaf in node.children:
                    if not leaf.children and leaf.value():
                        node_properties[v][leaf.tag] = leaf.value()
    network = build_network(variables, tables, lines)
    return describe(network, smile.attrs.get("id"), _properties(smile), node_properties)


def _text(label, what: str) -> str:
    """``label`` as XML text or attribute that reads back as ``str(label)``."""
    text = label_text(label, what, "XDSL")
    bad = _NOT_XML.search(text)
    if bad is not None:
        raise ValueError(
            f"{what} {shown(label)} cannot be written in XDSL: it holds the "
            f"character {bad.group()!r}, which XML 1.0 does not allow"
        )
    return escape(text, {'"': "&quot;", "\r": "&#13;", "\n": "&#10;", "\t": "&#9;"})


def _id(label, what: str) -> str:
    text = label_text(label, what, "XDSL")
    if not text or re.search(r"\s", text):
        raise ValueError(
            f"{what} {shown(label)} cannot be written in XDSL: an id is not "
            "empty and holds no blank (<parents> lists ids separated by blanks)"
        )
    return _text(text, what)


def _leaf(value, what: str) -> str:
    text = "" if value is None else label_text(value, what, "XDSL")
    if text != text.strip():
        raise ValueError(
            f"{what} {shown(value)} cannot be written in XDSL: it starts or ends "
            "with a blank, which the reader strips"
        )
    return _text(text, what)


def write_xdsl(
    network, path=None, *, name=None, max_bytes=MAX_BYTES, max_cells=MAX_CELLS
):
    """Write a Bayesian network as a GeNIe XDSL file.

    The variables are written in the order of ``variables_`` when every
    parent comes before its child, else in a topological order (GeNIe reads
    a node's parents before it). ``name_`` is the ``id`` of ``<smile>``,
    ``properties_`` its ``<property>`` elements; of ``variable_properties_[v]``,
    ``name``, ``comment`` and ``position`` go to GeNIe's ``<node id="v">``
    (with GeNIe's default colours and font) and the others to ``<cpt id="v">``'s
    ``<property>`` elements.

    Parameters
    ----------
    network : BayesianNetwork
        A network with every table set.
    path : str, path-like or file object, default=None
        Where to write (a ``.gz`` path is compressed); ``None`` returns the
        text.
    name : str, default=None
        The ``id`` of the network; ``None`` takes ``network.name_`` (the
        name a reader read), else ``"Network1"``.
    max_bytes, max_cells : int, default=64 MiB, 2**24
        The caps of :func:`read_xdsl`: a network whose file would be over
        either is a ValueError (the reader would refuse the file).

    Returns
    -------
    str or None
        The text, when ``path`` is None. Probabilities are written with the
        shortest text that reads back as the same float.

    Raises
    ------
    TypeError
        If ``network`` is not a BayesianNetwork.
    ValueError
        If a table is not set; if a variable name is empty or holds a blank,
        a label holds a character XML forbids, a property starts or ends with
        a blank, or two states of a variable read back as one; or if the file
        would be over ``max_bytes`` or ``max_cells``.
    """
    max_bytes, max_cells = check_caps(max_bytes, max_cells)
    check_network(network, max_cells)
    own, properties, node_properties = description(network)
    name = name if name is not None else own if own is not None else "Network1"
    variables = list(network.variables_)
    pos = {v: i for i, v in enumerate(variables)}
    if any(pos[u] > pos[v] for v in variables for u in network.dag_.parents(v)):
        variables = list(network.dag_.topological_order())
    ids = {v: _id(v, "variable") for v in variables}
    check_labels(variables, "variables", [str(v) for v in variables])
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<smile version="1.0" id="{_id(name, "name")}" numsamples="10000" '
        'discsamples="10000">',
    ]
    if properties:
        out.append("  <properties>")
        out += [
            f'    <property id="{_text(k, "property")}">'
            f"{_leaf(x, 'property')}</property>"
            for k, x in properties.items()
        ]
        out.append("  </properties>")
    out.append("  <nodes>")
    drawn = {}
    for v in variables:
        out.append(f'    <cpt id="{ids[v]}">')
        states = network.states_[v].tolist()
        check_labels(states, f"states of {shown(v)}", [str(s) for s in states])
        for s in states:
            out.append(f'      <state id="{_leaf(s, f"a state of {shown(v)}")}" />')
        parents = network.dag_.parents(v)
        if parents:
            out.append(f"      <parents>{' '.join(ids[u] for u in parents)}</parents>")
        values = " ".join(repr(float(x)) for x in np.asarray(network.cpds_[v]).ravel())
        out.append(f"      <probabilities>{values}</probabilities>")
        props = node_properties[v]
        for k, x in props.items():
            if k not in _GENIE:
                out.append(
                    f'      <property id="{_text(k, "property")}">'
                    f"{_leaf(x, 'property')}</property>"
                )
        drawn[v] = {k: x for k, x in props.items() if k in _GENIE}
        out.append("    </cpt>")
    out.append("  </nodes>")
    out += [  # pyAgrum's reader needs the block, even empty
        "  <extensions>",
        f'    <genie version="1.0" app="bayeskit" name="{_text(name, "name")}">',
    ]
    for v in variables:
        if not drawn[v]:
            continue
        props = drawn[v]
        out += [
            f'      <node id="{ids[v]}">',
            *(
                [f"        <name>{_leaf(props['name'], 'name')}</name>"]
                if "name" in props
                else []
            ),
            '        <interior color="e5f6f7" />',
            '        <outline color="000080" />',
            '        <font color="000000" name="Arial" size="8" />',
        ]
        for k in ("comment", "position"):
            if k in props:
                out.append(f"        <{k}>{_leaf(props[k], k)}</{k}>")
        out.append("      </node>")
    out += ["    </genie>", "  </extensions>"]
    out.append("</smile>")
    return write_text(check_size("\n".join(out) + "\n", max_bytes), path)
