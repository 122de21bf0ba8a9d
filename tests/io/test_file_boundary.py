"""The boundary of the BIF and XMLBIF readers and writers: text and paths told
apart by type, capped reads and messages, encodings, entities, table sizes, and
writers that never write what their readers refuse or read back changed."""

import gzip
import io
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayeskit import BayesianNetwork, GaussianNB
from bayeskit.datasets import load_network
from bayeskit.io import read_bif, read_xmlbif, write_bif, write_xmlbif

GOOD = """network n {
}
variable a {
  type discrete [ 2 ] { lo, hi };
}
variable b {
  type discrete [ 2 ] { no, yes };
}
probability ( a ) {
  table 0.25, 0.75;
}
probability ( b | a ) {
  (lo) 0.5, 0.5;
  (hi) 0.1, 0.9;
}
"""


def assert_same_network(a, b):
    assert a.variables_ == b.variables_
    for v in a.variables_:
        assert a.states_[v].tolist() == b.states_[v].tolist()
        assert a.parents_[v] == b.parents_[v]
        np.testing.assert_array_equal(a.cpds_[v], b.cpds_[v])


# -- text and paths --------------------------------------------------------------


@pytest.mark.parametrize("read", [read_bif, read_xmlbif])
def test_a_str_is_the_text_and_never_opens_the_file_it_names(read, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-TOKEN")
    with pytest.raises(ValueError) as info:
        read(str(secret))
    message = str(info.value)
    assert "TOP-SECRET" not in message
    assert "path=" in message and "pathlib.Path" in message


@pytest.mark.parametrize(
    ("read", "write"), [(read_bif, write_bif), (read_xmlbif, write_xmlbif)]
)
@pytest.mark.parametrize("name", ["net{1}.bif", "net<a>.xml", "plain.bif"])
def test_a_path_holding_a_brace_or_angle_is_read_as_a_path(read, write, name, tmp_path):
    bn = load_network("asia")
    path = tmp_path / name
    write(bn, path)
    assert_same_network(read(path), bn)  # a pathlib.Path
    assert_same_network(read(path=str(path)), bn)  # a str given as path=
    with open(path, "rb") as f:
        assert_same_network(read(f), bn)  # a binary file object
    with pytest.raises(TypeError, match="not both"):
        read(write(bn), path=str(path))
    with pytest.raises(TypeError, match="path must be"):
        read(path=3)


def test_a_missing_path_is_a_value_error_naming_it(tmp_path):
    with pytest.raises(ValueError, match=r"path '.*nope\.bif' cannot be read"):
        read_bif(path=str(tmp_path / "nope.bif"))


# -- capped messages -----------------------------------------------------------


def _spoiled_bif(rng, big):
    """GOOD with one of its tokens replaced by ``big`` (a token of a million
    characters), where the reader quotes it in its message."""
    spots = [
        ("network n {", big),  # the first token
        ("variable b {", f"variable {big} {{\n}}\nvariable b {{"),
        ("(hi) 0.1, 0.9;", f"({big}) 0.1, 0.9;"),
        ("(hi) 0.1, 0.9;", f"(hi) 0.1, {big};"),
        ("probability ( b | a )", f"probability ( b | {big} )"),
        ("[ 2 ] { no, yes }", f"[ {big} ] {{ no, yes }}"),
        ("{ no, yes }", f"{{ no, yes, {big} }}"),
        ("network n {", f'"{big}'),  # an unclosed quote: a bad character
    ]
    old, new = spots[rng.integers(len(spots))]
    return GOOD.replace(old, new, 1)


def test_messages_quote_a_capped_excerpt(rng):
    for _ in range(20):
        big = "".join(rng.choice(list("abcXYZ019_.-"), size=10**5))
        with pytest.raises(ValueError) as info:
            read_bif(_spoiled_bif(rng, big))
        assert len(str(info.value)) < 500, str(info.value)[:200]
        assert str(info.value).startswith("line ")
    xml = write_xmlbif(read_bif(GOOD))
    big = "q" * 10**5
    for old, new in [
        ("<GIVEN>a</GIVEN>", f"<GIVEN>{big}</GIVEN>"),  # an unknown variable
        ("<FOR>b</FOR>", f"<FOR>{big}</FOR>"),
        ("<OUTCOME>no</OUTCOME>", f"<OUTCOME>{big}</OUTCOME>" * 2),  # twice
        ("<NAME>a</NAME>", f"<NAME>{big}</NAME><NAME>{big}</NAME>"),
        ("<NETWORK>", f"<NETWORK><{big}>"),  # malformed
    ]:
        with pytest.raises(ValueError) as info:
            read_xmlbif(xml.replace(old, new, 1))
        assert len(str(info.value)) < 500
    with pytest.raises(ValueError) as info:
        read_xmlbif(xml.replace("0.25 0.75", "0.25 x" + "7" * 10**6))
    assert len(str(info.value)) < 500


# -- size caps -----------------------------------------------------------------


def test_a_gzip_bomb_stops_at_max_bytes_without_expanding(tmp_path):
    path = tmp_path / "bomb.bif"
    path.write_bytes(gzip.compress(b" " * 10**8, compresslevel=9))
    assert path.stat().st_size < 200_000
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"max_bytes=1000000\b"):
            read_bif(path, max_bytes=10**6)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 10**6
    with pytest.raises(ValueError, match="max_bytes"):
        read_xmlbif(io.BytesIO(b" " * 2000), max_bytes=1000)
    with pytest.raises(ValueError, match="max_bytes"):
        read_bif(GOOD, max_bytes=len(GOOD) - 1)
    assert_same_network(read_bif(GOOD, max_bytes=len(GOOD)), read_bif(GOOD))


@pytest.mark.parametrize("bad", [0, -1, 2.5, "10", True, None])
def test_caps_must_be_positive_ints(bad):
    with pytest.raises((ValueError, TypeError), match="max_bytes must be a positive"):
        read_bif(GOOD, max_bytes=bad)
    with pytest.raises((ValueError, TypeError), match="max_cells must be a positive"):
        read_xmlbif(write_xmlbif(read_bif(GOOD)), max_cells=bad)


def _wide_bif(n_parents, card, table="default"):
    """A child with ``n_parents`` parents of ``card`` states each, its table one
    default row: a few kB of text that imply ``card**n_parents * 2`` cells."""
    out = []
    for j in range(n_parents):
        states = ", ".join(f"s{i}" for i in range(card))
        out.append(f"variable p{j} {{ type discrete [ {card} ] {{ {states} }}; }}")
        out.append(
            f"probability ( p{j} ) {{ table {', '.join(['1'] + ['0'] * (card - 1))}; }}"
        )
    out.append("variable c { type discrete [ 2 ] { x, y }; }")
    given = ", ".join(f"p{j}" for j in range(n_parents))
    out.append(f"probability ( c | {given} ) {{\n  {table} 0.5, 0.5;\n}}")
    return "\n".join(out) + "\n"


def _wide_xmlbif(n_parents, card, full=False):
    out = ['<BIF VERSION="0.3"><NETWORK><NAME>w</NAME>']
    for j in range(n_parents):
        states = "".join(f"<OUTCOME>s{i}</OUTCOME>" for i in range(card))
        out.append(f"<VARIABLE><NAME>p{j}</NAME>{states}</VARIABLE>")
    out.append(
        "<VARIABLE><NAME>c</NAME><OUTCOME>x</OUTCOME><OUTCOME>y</OUTCOME></VARIABLE>"
    )
    for j in range(n_parents):
        out.append(
            f"<DEFINITION><FOR>p{j}</FOR><TABLE>1{' 0' * (card - 1)}</TABLE>"
            "</DEFINITION>"
        )
    given = "".join(f"<GIVEN>p{j}</GIVEN>" for j in range(n_parents))
    table = " ".join(["0.5 0.5"] * (card**n_parents if full else 1))
    out.append(f"<DEFINITION><FOR>c</FOR>{given}<TABLE>{table}</TABLE></DEFINITION>")
    out.append("</NETWORK></BIF>")
    return "\n".join(out)


@pytest.mark.parametrize(
    ("n_parents", "card"),
    [
        (31, 2),  # 2**32 cells: 32 GiB of float64 from 3 kB of text
        (40, 4),  # 2**81 cells: more than int64 holds
        (64, 1),  # 2 cells, but 65 axes: more than numpy's 64
        (70, 3),
    ],
)
@pytest.mark.parametrize("fmt", ["bif", "xmlbif"])
def test_tables_too_large_for_numpy_or_the_cap_name_the_line(n_parents, card, fmt):
    if fmt == "bif":
        text = _wide_bif(n_parents, card)
        line = text.count("\n") - 2  # the child's probability block
        with pytest.raises(ValueError, match=rf"^line {line}: the table of 'c' has"):
            read_bif(text)
    else:
        with pytest.raises(ValueError, match=r"^line \d+: the table of 'c' has"):
            read_xmlbif(_wide_xmlbif(n_parents, card))


def test_the_cell_cap_counts_every_table_as_the_product_of_cardinalities(rng):
    for _ in range(30):
        n_parents = int(rng.integers(0, 5))
        card = int(rng.integers(1, 4))
        text = _wide_bif(n_parents, card)
        total = n_parents * card + 2 * card**n_parents  # brute force
        assert read_bif(text, max_cells=total).cpds_["c"].size == 2 * card**n_parents
        with pytest.raises(ValueError, match=f"max_cells={total - 1}"):
            read_bif(text, max_cells=total - 1)
        xml = _wide_xmlbif(n_parents, card, full=True)
        assert read_xmlbif(xml, max_cells=total).cpds_["c"].size == 2 * card**n_parents
        with pytest.raises(ValueError, match=f"max_cells={total - 1}"):
            read_xmlbif(xml, max_cells=total - 1)


@pytest.mark.parametrize("write", [write_bif, write_xmlbif])
def test_the_writers_refuse_what_the_readers_caps_refuse(write):
    bn = load_network("asia")
    cells = sum(t.size for t in bn.cpds_.values())
    assert write(bn, max_cells=cells)
    with pytest.raises(ValueError, match="max_cells"):
        write(bn, max_cells=cells - 1)
    text = write(bn)
    size = len(text.encode())
    assert write(bn, max_bytes=size) == text
    with pytest.raises(ValueError, match="max_bytes"):
        write(bn, max_bytes=size - 1)


# -- encodings -----------------------------------------------------------------

NON_ASCII = GOOD.replace("lo, hi", "café, naïve").replace("(lo)", "(café)")
NON_ASCII = NON_ASCII.replace("(hi)", "(naïve)")


def test_bif_bytes_with_a_byte_order_mark_read_as_without(tmp_path):
    expected = read_bif(NON_ASCII)
    assert expected.states_["a"].tolist() == ["café", "naïve"]
    for data in [
        b"\xef\xbb\xbf" + NON_ASCII.encode("utf-8"),
        NON_ASCII.encode("utf-16"),  # with its byte-order mark
        NON_ASCII.encode("utf-8"),
    ]:
        assert_same_network(read_bif(data), expected)
        path = tmp_path / "net.bif"
        path.write_bytes(data)
        assert_same_network(read_bif(path), expected)
        with open(path, encoding="utf-8-sig" if data[:1] != b"\xff" else "utf-16") as f:
            assert_same_network(read_bif(f), expected)
    assert_same_network(read_bif("\ufeff" + NON_ASCII), expected)
    with pytest.raises(ValueError, match=r"^line 4: the BIF file is not UTF-8"):
        read_bif(NON_ASCII.encode("latin-1"))


@pytest.mark.parametrize(
    "encoding", ["iso-8859-1", "utf-16", "UTF-16LE", "utf-16-le", "cp1252", "utf-8"]
)
def test_xmlbif_reads_in_the_encoding_it_declares(encoding, tmp_path):
    expected = read_bif(NON_ASCII)
    text = write_xmlbif(expected).replace("encoding='utf-8'", f"encoding='{encoding}'")
    data = text.encode(encoding)
    if encoding.lower().replace("-", "") == "utf16le":
        data = b"\xff\xfe" + data  # the byte-order mark XML reads it by
    path = tmp_path / "net.xml"
    path.write_bytes(data)
    for source in (data, path, io.BytesIO(data)):
        assert_same_network(read_xmlbif(source), expected)
    assert_same_network(read_xmlbif("\ufeff" + text), expected)


# -- entities ------------------------------------------------------------------

XML = write_xmlbif(read_bif(GOOD))
DTD = """<!DOCTYPE BIF [
  <!ELEMENT BIF ( NETWORK )*>
  <!ATTLIST BIF VERSION CDATA #REQUIRED>
  <!ELEMENT NETWORK ( NAME, ( PROPERTY | VARIABLE | DEFINITION )* )>
  <!ELEMENT NAME (#PCDATA)>
  <!ELEMENT OUTCOME (#PCDATA)>
  %s
]>
"""


def test_a_dtd_without_entities_reads_as_the_file_without_it():
    head, body = XML.split("\n", 1)
    assert_same_network(read_xmlbif(head + "\n" + DTD % "" + body), read_bif(GOOD))


@pytest.mark.parametrize(
    "entity",
    [
        '<!ENTITY s "lo">',
        '<!ENTITY s SYSTEM "file:///etc/hostname">',
        '<!ENTITY % p "x">',
        '<!ENTITY s SYSTEM "x.gif" NDATA gif><!NOTATION gif SYSTEM "gif">',
    ],
)
def test_a_dtd_declaring_an_entity_is_refused(entity):
    head, body = XML.split("\n", 1)
    text = head + "\n" + DTD % entity + body.replace(">lo<", ">&s;<", 1)
    with pytest.raises(ValueError, match=r"^line \d+: the DTD declares the entity"):
        read_xmlbif(text)


@pytest.mark.parametrize("where", [0, 1, -1])
def test_xml_text_with_a_lone_surrogate_is_refused_naming_the_line(where):
    # A str that is no Unicode text (a lone surrogate, as from a bad
    # decode with errors="surrogateescape") cannot reach expat as UTF-8:
    # a FileError naming its line, not a UnicodeEncodeError from inside.
    lines = XML.split("\n")
    at = where % len(lines)
    lines[at] = "\ud800" + lines[at]
    with pytest.raises(ValueError, match=rf"^line {at + 1}: the text holds '\\ud800'"):
        read_xmlbif("\n".join(lines))


@pytest.mark.parametrize(
    ("block", "line"),
    [
        ("network \ud800 {\n}\n", 1),
        ("variable \ud800 {\n  type discrete [ 1 ] { a };\n}\n", 1),
        ("variable v {\n  type discrete [ 1 ] { a\udc80 };\n}\n", 2),
    ],
)
def test_bif_text_with_a_lone_surrogate_is_refused_naming_the_line(block, line):
    # The thorough fuzzing profile's case: a network name of one lone
    # surrogate was read, and write_bif then refused the network it had read.
    rest = "variable w {\n  type discrete [ 1 ] { b };\n}\n"
    rest += "probability ( w ) {\n  table 1;\n}\n"
    text = "// a comment\n" + block + rest
    with pytest.raises(ValueError, match=rf"^line {line + 1}: the text holds '\\ud"):
        read_bif(text)


def test_an_undeclared_entity_under_an_external_dtd_is_refused():
    head, body = XML.split("\n", 1)
    text = head + '\n<!DOCTYPE BIF SYSTEM "bif.dtd">\n' + body.replace(">lo<", ">&s;<")
    with pytest.raises(ValueError, match="entity 's' is not declared"):
        read_xmlbif(text)


# -- silent wrong answers ------------------------------------------------------


def test_an_xmlbif_network_without_variables_is_refused():
    empty = '<BIF VERSION="0.3">\n<NETWORK>\n<NAME>x</NAME>\n</NETWORK>\n</BIF>'
    with pytest.raises(ValueError, match=r"^line 2: the <NETWORK> declares no"):
        read_xmlbif(empty)
    with pytest.raises(ValueError, match="declares no variable"):
        read_bif("network x { }")


@pytest.mark.parametrize(
    "row", ["(hi) nan, nan;", "(hi) NaN, 0.5;", "(hi) inf, 0;", "(hi) 0.1, 0.9_0;"]
)
def test_a_probability_that_is_not_a_finite_number_is_refused(row):
    text = GOOD.replace("(hi) 0.1, 0.9;", row + "\n  default 0.1, 0.9;")
    with pytest.raises(ValueError, match=r"^line 14: expected a probability"):
        read_bif(text)
    xml = XML.replace("0.5 0.5 0.1 0.9", "0.5 0.5 " + row[5:-1].replace(",", ""))
    with pytest.raises(ValueError, match=r"^line \d+: expected a probability"):
        read_xmlbif(xml)


def test_a_row_or_a_default_given_twice_is_refused():
    twice = GOOD.replace("(hi) 0.1, 0.9;", "(hi) 0.1, 0.9;\n  (hi) 0.2, 0.8;")
    with pytest.raises(
        ValueError, match=r"^line 15: the row \('hi',\) of 'b' is given"
    ):
        read_bif(twice)
    defaults = GOOD.replace("(hi) 0.1, 0.9;", "default 0.1, 0.9;\n  default 0.2, 0.8;")
    with pytest.raises(ValueError, match="two default rows"):
        read_bif(defaults)


@pytest.mark.parametrize("write", [write_bif, write_xmlbif])
def test_writing_anything_but_a_network_is_a_type_error(write, rng):
    X = rng.normal(size=(20, 2))
    for thing in [GaussianNB().fit(X, X[:, 0] > 0), None, "asia", {"a": [0.5, 0.5]}]:
        with pytest.raises(TypeError, match="network must be a bayeskit"):
            write(thing)


def _bif_refuses(text: str) -> bool:
    """What BIF cannot hold: a double quote, a lone surrogate."""
    return '"' in text or any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def _xml_refuses(text: str) -> bool:
    """What XML 1.0 cannot hold (section 2.2), a lone surrogate, and a blank at
    either end (which an XMLBIF reader strips)."""
    allowed = {0x9, 0xA, 0xD}
    for c in text:
        o = ord(c)
        if (
            (o < 0x20 and o not in allowed)
            or 0xD800 <= o <= 0xDFFF
            or o in (0xFFFE, 0xFFFF)
        ):
            return True
    return text != text.strip()


LABELS = st.one_of(
    st.text(st.characters(codec=None), min_size=0, max_size=6),
    st.sampled_from(
        [
            " lead",
            "trail ",
            "a b",
            "x\ty",
            "a\rb",
            "a\r\nb",
            "\x00",
            "\x1c",
            "a//b",
            "/x",
            "a/*b",
            "*/",
            "{",
            "}",
            ";",
            ",",
            "(",
            "|",
            "#",
            "table",
            "default",
            "property",
            "network",
            "\u2028",
            "\x85",
        ]
    ),
    st.integers(-3, 3),
    st.sampled_from([1.5, "1.5", 1, "1", True, "True", None, "None"]),
)


@settings(max_examples=300, deadline=None)
@given(states=st.lists(LABELS, min_size=1, max_size=4), name=LABELS)
@pytest.mark.parametrize(
    ("read", "write", "refuses"),
    [(read_bif, write_bif, _bif_refuses), (read_xmlbif, write_xmlbif, _xml_refuses)],
    ids=["bif", "xmlbif"],
)
def test_writers_write_only_what_their_reader_reads_back_the_same(
    read, write, refuses, states, name
):
    try:
        bn = BayesianNetwork([(name, "b")], states={name: states, "b": ["x", "y"]})
        k = len(states)
        bn.set_cpd(name, np.full(k, 1 / k)).set_cpd("b", np.full((k, 2), 0.5))
    except (ValueError, TypeError):
        return  # a network BayesianNetwork itself refuses: nothing to write
    # The labels as the network holds them (states [0, 1.5] become floats).
    texts = [str(s) for s in bn.states_[name].tolist()]
    expected_refusal = (
        len(set(texts)) != len(texts)
        or any(refuses(t) for t in [*texts, str(name)])
        or str(name) == "b"
    )
    try:
        text = write(bn)
    except ValueError as exc:
        assert expected_refusal, f"refused a writable network: {exc}"
        return
    assert not expected_refusal, f"wrote {states!r} / {name!r}"
    back = read(text)
    assert back.variables_ == [str(name), "b"]
    assert back.states_[str(name)].tolist() == texts
    np.testing.assert_array_equal(back.cpds_["b"], bn.cpds_["b"])


@pytest.mark.parametrize(
    ("read", "write"), [(read_bif, write_bif), (read_xmlbif, write_xmlbif)]
)
def test_the_writers_examples_of_the_report(read, write):
    clash = BayesianNetwork(states={"a": [1.5, "1.5"]}).set_cpd("a", [0.5, 0.5])
    with pytest.raises(ValueError, match=r"states of 'a' 1\.5 and '1\.5' are both"):
        write(clash)
    control = BayesianNetwork(states={"a": ["x\x01", "y"]}).set_cpd("a", [0.5, 0.5])
    lead = BayesianNetwork(states={"a": [" lead", "y"]}).set_cpd("a", [0.5, 0.5])
    if write is write_bif:  # quoted, they read back as they were
        assert read(write(control)).states_["a"].tolist() == ["x\x01", "y"]
        assert read(write(lead)).states_["a"].tolist() == [" lead", "y"]
    else:
        with pytest.raises(ValueError, match=r"XML 1\.0 does not allow"):
            write(control)
        with pytest.raises(ValueError, match="blank"):
            write(lead)


def test_from_pgmpy_of_an_empty_model_is_refused():
    pytest.importorskip("pgmpy")
    from pgmpy.models import DiscreteBayesianNetwork

    with pytest.raises(ValueError, match="model"):
        BayesianNetwork.from_pgmpy(DiscreteBayesianNetwork())
