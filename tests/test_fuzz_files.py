"""The fuzzer of tests/test_fuzz.py, on the network files: BIF and XMLBIF text
made by mutating the bundled networks (tokens deleted, repeated, swapped or
replaced by punctuation, keywords, odd numbers, control characters and long
words; files cut short; XML tags renamed, entities, DTDs and encodings) and
given as text, bytes, a file object or a (gzip-compressed) path.

Every case either reads, or raises a ValueError / TypeError from bayeskit
itself whose message names the line (or the parameter) and quotes at most a
short excerpt, with no numpy warning. What reads is a network the writer of
its format writes and reads back the same. Mutations that keep the meaning
(blanks, comments, quoted names, line endings, byte-order marks, encodings,
CDATA, character references) read as the original network, exactly.

The budget is the active hypothesis profile's (``ci`` by default,
``pytest --hypothesis-profile=thorough`` for more), as in tests/test_fuzz.py.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import tempfile
import traceback
import warnings
from importlib import resources
from xml.sax.saxutils import unescape

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from test_fuzz import _FEW  # half the active profile (ci or thorough)

import bayeskit
from bayeskit.io import read_bif, read_xmlbif, write_bif, write_xmlbif

_BAYESKIT = os.path.dirname(bayeskit.__file__) + os.sep
NAMES = ["asia", "child", "insurance", "alarm"]


def _bundled(name: str) -> str:
    path = resources.files("bayeskit.datasets") / "data" / f"{name}.bif"
    return path.read_text(encoding="utf-8")


BIF = {name: _bundled(name) for name in NAMES}
NETWORKS = {name: read_bif(text) for name, text in BIF.items()}
XML = {name: write_xmlbif(bn) for name, bn in NETWORKS.items()}

# -- the oracle ----------------------------------------------------------------

# What a refusal names: the line, or the parameter that was wrong.
_NAMES_IT = re.compile(
    r"^line \d+: |\b(source|path|max_bytes|max_cells)\b|probability tables"
)


def _same(a, b) -> None:
    assert a.variables_ == b.variables_
    for v in a.variables_:
        assert a.states_[v].tolist() == b.states_[v].tolist()
        assert a.parents_[v] == b.parents_[v]
        np.testing.assert_array_equal(a.cpds_[v], b.cpds_[v])


def _read_or_refuse(read, source):
    """The network read from ``source``, or None for a refusal that passes
    the oracle; anything else fails the test."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        try:
            network = read(source)
        except (ValueError, TypeError) as exc:
            frames = traceback.extract_tb(exc.__traceback__)
            where = os.path.abspath(frames[-1].filename) if frames else _BAYESKIT
            assert where.startswith(_BAYESKIT), (
                f"{type(exc).__name__} raised inside a dependency: {exc}\n"
                + "".join(traceback.format_tb(exc.__traceback__)[-3:])
            )
            message = str(exc)
            assert len(message) < 500, f"a message of {len(message)} characters"
            assert _NAMES_IT.search(message), f"names no line: {message}"
            network = None
    leaked = [
        w for w in record if "encountered in" in str(w.message) or "numpy" in w.filename
    ]
    assert not leaked, f"numpy warning escaped: {leaked[0].message}"
    return network


def _check_read(network, read, write) -> None:
    """A network that was read: proper tables, and a fixed point of its
    format's writer and reader."""
    if network is None:
        return
    for v in network.variables_:
        table = network.cpds_[v]
        assert np.isfinite(table).all() and (table >= 0).all()
        np.testing.assert_allclose(table.sum(axis=-1), 1.0, atol=1e-6)
    _same(read(write(network)), network)


def _forms(draw, text: str):
    """``text`` in one of the forms a reader takes (a str, bytes, a binary or
    text file object, a path, a gzip-compressed path), with the callable that
    cleans up after it."""
    form = draw(st.sampled_from(["str", "bytes", "binary", "stringio", "path", "gz"]))
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only the str can hold it
        form = "str"
    if form == "str":
        return text, None
    if form == "bytes":
        return data, None
    if form == "binary":
        return io.BytesIO(data), None
    if form == "stringio":
        return io.StringIO(text), None
    folder = tempfile.TemporaryDirectory()
    path = os.path.join(folder.name, "net{1}<x>.bif")  # braces do not make text
    with open(path, "wb") as f:
        f.write(gzip.compress(data) if form == "gz" else data)
    return {"path": path}, folder


def _call(read, source):
    """``read`` of ``source``, a path given as ``path=``."""
    if isinstance(source, dict):
        return lambda s: read(path=s["path"])
    return read


# -- BIF -----------------------------------------------------------------------

_BIF_TOKEN = re.compile(
    r'\s+|//[^\n]*|/\*.*?\*/|"[^"]*"|[{}()\[\];,|]|[^\s{}()\[\];,|"]+', re.S
)
_KEYWORDS = {"network", "variable", "probability", "property", "type", "table"}
_KEYWORDS |= {"default"}
_NUMBER = re.compile(r"[-+0-9.eE]+")
ODD_BIF = [
    "{", "}", "(", ")", "[", "]", ";", ",", "|", '"', "/", "/*", "//", "*/",
    "table", "default", "variable", "probability", "network", "property", "type",
    "discrete", "continuous", "nan", "NaN", "inf", "-inf", "-0.5", "1e309", "1e-400",
    "0x10", "1_0", "0.5.5", "99999999999999999999999", "0", "-1", "2.5", "",
    "\x00", "\x1c", "\u2028", "\ufeff", "é", "\ud800", "yes", "no", "a" * 3000,
    '""', '" "', '"a b"',
]  # fmt: skip


def _bif_tokens(text: str) -> list:
    tokens = [m.group() for m in _BIF_TOKEN.finditer(text)]
    assert "".join(tokens) == text
    return tokens


@st.composite
def mutated_bif(draw):
    """A bundled BIF file with one to four mutations of its tokens."""
    tokens = _bif_tokens(BIF[draw(st.sampled_from(NAMES))])
    for _ in range(draw(st.integers(1, 4))):
        if not tokens:
            break
        i = draw(st.integers(0, len(tokens) - 1))
        kind = draw(
            st.sampled_from(
                [
                    "delete",
                    "repeat",
                    "replace",
                    "swap",
                    "number",
                    "count",
                    "cut",
                    "text",
                ]
            )
        )
        if kind == "delete":
            del tokens[i]
        elif kind == "repeat":
            tokens.insert(i, tokens[i])
        elif kind == "replace":
            tokens[i] = draw(st.sampled_from(ODD_BIF))
        elif kind == "swap":
            j = draw(st.integers(0, len(tokens) - 1))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif kind == "number":  # a probability becomes another number
            numbers = [k for k, t in enumerate(tokens) if _NUMBER.fullmatch(t)]
            if numbers:
                k = draw(st.sampled_from(numbers))
                tokens[k] = draw(
                    st.one_of(
                        st.floats(allow_nan=True, allow_infinity=True).map(repr),
                        st.sampled_from(["1", "0", "1.0000001", "0.9999999", "1e-320"]),
                    )
                )
        elif kind == "count":  # a number of states, or any whole number
            digits = [k for k, t in enumerate(tokens) if t.isdigit()]
            if digits:
                tokens[draw(st.sampled_from(digits))] = str(
                    draw(st.integers(0, 10**30))
                )
        elif kind == "cut":
            tokens = tokens[:i]
        else:
            tokens.insert(i, draw(st.text(max_size=6)))
    return "".join(tokens)


@_FEW
@given(data=st.data())
def test_mutated_bif_reads_or_refuses_naming_the_line(data):
    text = data.draw(mutated_bif())
    source, folder = _forms(data.draw, text)
    try:
        network = _read_or_refuse(_call(read_bif, source), source)
    finally:
        if folder is not None:
            folder.cleanup()
    _check_read(network, read_bif, write_bif)


@st.composite
def rewritten_bif(draw):
    """A bundled BIF file written another way with the same meaning: other
    blanks, comments between tokens, quoted names, CRLF line ends, a
    byte-order mark, UTF-16."""
    name = draw(st.sampled_from(NAMES))
    tokens = _bif_tokens(BIF[name])
    blanks = st.sampled_from([" ", "\t", "\n", "\r\n", "  \n\t", "/* c */", "// c\n"])
    quoting = draw(st.booleans())
    out = []
    for t in tokens:
        if t.isspace() and draw(st.booleans()):
            t = draw(blanks)
        elif (
            quoting
            and not t.isspace()
            and t not in _KEYWORDS
            and not _NUMBER.fullmatch(t)
            and re.fullmatch(r"[^\s{}()\[\];,|\"]+", t)
        ):
            t = f'"{t}"'
        out.append(t)
    text = "".join(out)
    if draw(st.booleans()):
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    encoding = draw(st.sampled_from(["str", "utf-8", "utf-8-sig", "utf-16"]))
    source = text if encoding == "str" else text.encode(encoding)
    return name, source


@_FEW
@given(case=rewritten_bif())
def test_bif_written_another_way_reads_the_same(case):
    name, source = case
    _same(read_bif(source), NETWORKS[name])


# -- XMLBIF --------------------------------------------------------------------

_XML_PART = re.compile(r"(<[^>]*>)")
TAGS = ["BIF", "NETWORK", "VARIABLE", "NAME", "OUTCOME", "DEFINITION", "FOR"]
TAGS += ["GIVEN", "TABLE", "PROPERTY", "PROBABILITY", "x", "variable"]
ODD_TEXT = [
    "", " ", "&amp;", "&lt;", "&foo;", "&#0;", "&#x1F;", "<", ">", "]]>", "nan",
    "inf", "-1", "0.5 0.5", "1_0", "0x1", "yes", "no", "\x00", "\x01", "é", "\ud800",
    "x" * 3000,
]  # fmt: skip
DTD = [
    '<!DOCTYPE BIF [<!ENTITY s "yes">]>',
    '<!DOCTYPE BIF [<!ENTITY s SYSTEM "file:///etc/hostname">]>',
    '<!DOCTYPE BIF [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>',
    '<!DOCTYPE BIF SYSTEM "http://example.invalid/bif.dtd">',
    "<!DOCTYPE BIF [<!ELEMENT BIF ANY>]>",
]


@st.composite
def mutated_xmlbif(draw):
    """A bundled network's XMLBIF with one to four mutations of its tags and
    text, a DTD, or an encoding declaration, given as text or bytes."""
    parts = _XML_PART.split(XML[draw(st.sampled_from(NAMES))])
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(parts) - 1))
        kind = draw(
            st.sampled_from(
                ["delete", "repeat", "rename", "text", "swap", "cut", "dtd"]
            )
        )
        if kind == "delete":
            del parts[i]
        elif kind == "repeat":
            parts.insert(i, parts[i])
        elif kind == "rename" and parts[i].startswith("<"):
            closing = "/" if parts[i].startswith("</") else ""
            parts[i] = f"<{closing}{draw(st.sampled_from(TAGS))}>"
        elif kind == "text" and not parts[i].startswith("<"):
            parts[i] = draw(st.one_of(st.sampled_from(ODD_TEXT), st.text(max_size=6)))
        elif kind == "swap":
            j = draw(st.integers(0, len(parts) - 1))
            parts[i], parts[j] = parts[j], parts[i]
        elif kind == "cut":
            parts = parts[:i]
        elif kind == "dtd" and len(parts) > 1:
            parts.insert(2, "\n" + draw(st.sampled_from(DTD)) + "\n")
        if not parts:
            break
    text = "".join(parts)
    encoding = draw(st.sampled_from(["str", "utf-8", "utf-16", "iso-8859-1"]))
    if encoding == "str":
        return text
    text = text.replace("encoding='utf-8'", f"encoding='{encoding}'")
    return text.encode(encoding, errors="replace")


@_FEW
@given(data=st.data())
def test_mutated_xmlbif_reads_or_refuses_naming_the_line(data):
    source = data.draw(mutated_xmlbif())
    if isinstance(source, bytes) and data.draw(st.booleans()):
        folder = tempfile.TemporaryDirectory()
        path = os.path.join(folder.name, "net<1>.xml")
        with open(path, "wb") as f:
            f.write(gzip.compress(source) if data.draw(st.booleans()) else source)
        try:
            network = _read_or_refuse(lambda s: read_xmlbif(path=s), path)
        finally:
            folder.cleanup()
    else:
        network = _read_or_refuse(read_xmlbif, source)
    _check_read(network, read_xmlbif, write_xmlbif)


def _char_refs(text: str) -> str:
    return "".join(f"&#{ord(c)};" for c in text)


@st.composite
def rewritten_xmlbif(draw):
    """A bundled network's XMLBIF written another way with the same meaning:
    comments between elements, blanks around values, names as CDATA or
    character references, a DTD without entities, PROPERTY elements, lower
    case tags, another encoding."""
    name = draw(st.sampled_from(NAMES))
    parts = _XML_PART.split(XML[name])
    lower = draw(st.sets(st.sampled_from(TAGS[:9])))  # tags written in lower case
    out = []
    for k, part in enumerate(parts):
        if part.startswith("<") and not part.startswith("<?"):
            if re.match(r"</?(\w+)", part).group(1) in lower:
                part = part.lower()
            out.append(part)
            if part.lower() == '<variable type="nature">' and draw(st.booleans()):
                out.append("<PROPERTY>position = (1, 2)</PROPERTY>")
            continue
        if part.startswith("<?"):  # the XML declaration stays first
            out.append(part)
            continue
        if part.strip() and k > 0:
            how = draw(st.sampled_from(["same", "blanks", "cdata", "refs", "comment"]))
            tag = parts[k - 1].upper()
            if how == "blanks" or (how != "same" and tag == "<TABLE>"):
                part = (
                    "\n\t "
                    + part.replace(" ", draw(st.sampled_from([" ", "\n", "\t  "])))
                    + " \n"
                )
            elif how == "cdata":
                part = f"<![CDATA[{unescape(part)}]]>"
            elif how == "refs":
                part = _char_refs(unescape(part))
            elif how == "comment":
                part = f"<!-- {k} -->{part}"
        out.append(part)
    text = "".join(out)
    if draw(st.booleans()):
        head, body = text.split("\n", 1)
        text = (
            head
            + "\n<!DOCTYPE BIF [\n<!ELEMENT BIF ANY>\n"
            + "<!ATTLIST BIF VERSION CDATA #REQUIRED>\n]>\n"
            + body
        )
    encoding = draw(st.sampled_from(["str", "utf-8", "utf-16", "iso-8859-1", "cp1252"]))
    if encoding == "str":
        return name, text
    return name, text.replace("encoding='utf-8'", f"encoding='{encoding}'").encode(
        encoding
    )


@_FEW
@given(case=rewritten_xmlbif())
def test_xmlbif_written_another_way_reads_the_same(case):
    name, source = case
    _same(read_xmlbif(source), NETWORKS[name])


def test_the_seeds_read():
    for name in NAMES:
        _same(read_xmlbif(XML[name]), NETWORKS[name])
        assert NETWORKS[name].variables_
