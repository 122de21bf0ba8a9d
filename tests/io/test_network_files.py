"""BIF and XMLBIF files: our readers against pgmpy's on the same files, files
written by pgmpy's writers, exact round trips, and errors with line numbers."""

import io
import warnings

import numpy as np
import pytest

from bayeskit import BayesianNetwork
from bayeskit.datasets import load_network
from bayeskit.io import read_bif, read_xmlbif, write_bif, write_xmlbif

NAMES = ["asia", "child", "insurance", "alarm"]
SIZES = {
    "asia": (8, 8, 18),
    "child": (20, 25, 230),
    "insurance": (27, 52, 1008),
    "alarm": (37, 46, 509),
}


def assert_same_network(a, b):
    """Same variables, states, parents (in order) and tables, exactly."""
    assert a.variables_ == b.variables_
    for v in a.variables_:
        assert a.states_[v].tolist() == b.states_[v].tolist()
        assert a.parents_[v] == b.parents_[v]
        np.testing.assert_array_equal(a.cpds_[v], b.cpds_[v])


def assert_same_tables(a, b):
    """Same tables by label (the order of variables and parents aside)."""
    assert set(a.variables_) == set(b.variables_)
    for v in a.variables_:
        assert set(a.parents_[v]) == set(b.parents_[v])
        theirs = b.get_cpd(v)
        if a.parents_[v] and a.parents_[v] != b.parents_[v]:
            theirs = theirs.reorder_levels(list(a.parents_[v])).sort_index()
        ours = a.get_cpd(v)
        theirs = theirs.loc[ours.index]
        np.testing.assert_array_equal(ours.to_numpy(), theirs.to_numpy())


@pytest.mark.parametrize("name", NAMES)
def test_bundled_networks_and_exact_round_trips(name, tmp_path):
    bn = load_network(name)
    n_vars, n_edges, n_params = SIZES[name]
    assert (len(bn.variables_), len(bn.dag_.edges), bn.n_parameters()) == SIZES[name]
    assert n_vars and n_edges and n_params
    for write, read in ((write_bif, read_bif), (write_xmlbif, read_xmlbif)):
        text = write(bn)
        again = read(text)
        assert_same_network(bn, again)
        assert write(again) == text  # a fixed point
    # Through a file object and a compressed path too.
    buffer = io.StringIO()
    write_bif(bn, buffer)
    assert_same_network(bn, read_bif(io.StringIO(buffer.getvalue())))
    write_xmlbif(bn, tmp_path / "net.xml.gz")
    assert_same_network(bn, read_xmlbif(path=str(tmp_path / "net.xml.gz")))


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_our_reader_reads_as_pgmpys_and_reads_pgmpys_writers(name, tmp_path):
    pytest.importorskip("pgmpy")
    from pgmpy.readwrite import BIFReader, BIFWriter, XMLBIFReader, XMLBIFWriter

    ours = load_network(name)
    path = tmp_path / f"{name}.bif"
    write_bif(ours, path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = BIFReader(str(path)).get_model()  # pgmpy reads our file
    assert_same_tables(ours, BayesianNetwork.from_pgmpy(model))
    # pgmpy's writers (variables sorted by name, its own layout): read back.
    assert_same_tables(ours, read_bif(str(BIFWriter(model))))
    xml = str(XMLBIFWriter(model))
    if name == "child":
        # pgmpy 1.1.2's XMLBIF writer rewrites states such as '<7.5' and '>=7.5'
        # both as '_7_5': child cannot be written by it.
        assert "<OUTCOME>_7_5</OUTCOME>" in xml
    else:
        assert_same_tables(ours, read_xmlbif(xml))
    # And pgmpy reads our XMLBIF.
    write_xmlbif(ours, tmp_path / "ours.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back = XMLBIFReader(str(tmp_path / "ours.xml")).get_model()
    assert_same_tables(ours, BayesianNetwork.from_pgmpy(back))


def test_a_table_block_lists_the_variables_states_slowest():
    text = """network n {}
variable a { type discrete [ 2 ] { lo, hi }; }
variable b { type discrete [ 3 ] { x, y, z }; property note = "yes, a property"; }
// a comment
probability ( a ) { table 0.25, 0.75; }
probability ( b | a ) { table 0.1, 0.2, 0.3, 0.3, 0.6, 0.5; }
"""
    bn = read_bif(text)
    # Values: b = x over (a = lo, hi), then b = y, then b = z.
    np.testing.assert_array_equal(bn.cpds_["b"], [[0.1, 0.3, 0.6], [0.2, 0.3, 0.5]])
    rows = text.replace(
        "table 0.1, 0.2, 0.3, 0.3, 0.6, 0.5;",
        "(hi) 0.2, 0.3, 0.5; default 0.1, 0.3, 0.6;",
    )
    np.testing.assert_array_equal(read_bif(rows).cpds_["b"], bn.cpds_["b"])
    assert bn.states_["a"].tolist() == ["lo", "hi"]


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


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("[ 2 ] { lo, hi }", "[ 3 ] { lo, hi }", r"^line 4: variable 'a' declares 3"),
        ("(hi) 0.1, 0.9;", "(mid) 0.1, 0.9;", r"^line 14: 'mid' is not a state of 'a'"),
        ("(hi) 0.1, 0.9;", "(hi) 0.1, 0.9, 0.0;", r"^line 14: the row \('hi',\)"),
        ("(hi) 0.1, 0.9;", "(hi) 0.1, 0.8;", r"^line 12: every row of table"),
        ("(hi) 0.1, 0.9;", "(hi) 0.1, x9;", r"^line 14: expected a probability"),
        ("(hi) 0.1, 0.9;", "", r"^line 12: the table of 'b' gives no row for 1"),
        (
            "probability ( b | a )",
            "probability ( b | c )",
            r"^line 12: unknown variable 'c'",
        ),
        ("table 0.25, 0.75;", "table 0.25;", r"^line 10: the table of 'a' has 1"),
        ("type discrete", "type continuous", r"^line 4: variable 'a' has type"),
        ("variable b {", "variable a {", r"^line 6: variable 'a' is declared twice"),
        (
            "probability ( a ) {\n  table 0.25, 0.75;\n}",
            "",
            r"^line 3: variable 'a' has no",
        ),
        (
            "}\nprobability ( b",
            "\nprobability ( b",
            r"^line 12: expected '\(', got 'probability'",
        ),
        (
            "  (hi) 0.1, 0.9;\n}\n",
            "  (hi) 0.1, 0.9;\n",
            r"^line 15: the file ends inside",
        ),
        ("network n", "netwerk n", r"^line 1: expected 'network', 'variable'"),
    ],
)
def test_malformed_bif_names_the_line(old, new, message):
    assert old in GOOD
    with pytest.raises(ValueError, match=message):
        read_bif(GOOD.replace(old, new))


def test_malformed_xmlbif_names_the_line():
    bn = read_bif(GOOD)
    text = write_xmlbif(bn)
    lines = text.splitlines()
    assert read_xmlbif(text).cpds_["b"].tolist() == bn.cpds_["b"].tolist()
    broken = text.replace("</OUTCOME>", "</OUTCOM>", 1)
    at = next(i for i, s in enumerate(lines, 1) if "</OUTCOME>" in s)
    with pytest.raises(ValueError, match=rf"^line {at}: malformed XML"):
        read_xmlbif(broken)
    short = text.replace("<TABLE>0.5 0.5 0.1 0.9</TABLE>", "<TABLE>0.5 0.5 0.1</TABLE>")
    at = next(i for i, s in enumerate(lines, 1) if "0.5 0.5 0.1 0.9" in s)
    with pytest.raises(ValueError, match=rf"^line {at}: the <TABLE> of 'b' has 3"):
        read_xmlbif(short)
    unknown = text.replace("<GIVEN>a</GIVEN>", "<GIVEN>c</GIVEN>")
    with pytest.raises(ValueError, match=r"^line \d+: unknown variable 'c'"):
        read_xmlbif(unknown)
    cyclic = GOOD.replace(
        "probability ( a ) {\n  table 0.25, 0.75;",
        "probability ( a | b ) {\n  (no) 0.5, 0.5;\n  (yes) 0.5, 0.5;",
    )
    with pytest.raises(ValueError, match="cycle"):
        read_bif(cyclic)


def test_writing_checks_names_and_keeps_other_labels_as_text():
    bn = BayesianNetwork([("a", "b")], states={"a": [0, 1], "b": ["has space", "x"]})
    bn.set_cpd("a", [0.5, 0.5]).set_cpd("b", [[0.5, 0.5], [0.2, 0.8]])
    assert '{ "has space", x }' in write_bif(bn)  # quoted, JavaBayes style
    quote = BayesianNetwork(states={"a": ['say "hi"', "x"]}).set_cpd("a", [0.5, 0.5])
    with pytest.raises(ValueError, match="cannot be written in BIF"):
        write_bif(quote)
    back = read_xmlbif(write_xmlbif(bn))  # XML has no such limit
    assert back.states_["a"].tolist() == ["0", "1"]
    assert back.states_["b"].tolist() == ["has space", "x"]
    np.testing.assert_array_equal(back.cpds_["b"], bn.cpds_["b"])
    with pytest.raises(ValueError, match="no CPD for variables"):
        write_bif(
            BayesianNetwork([("a", "b")], states={"a": [0, 1]}).set_cpd("a", [1, 0])
        )
    with pytest.raises(ValueError, match="name must be one of"):
        load_network("nope")
    with pytest.raises(TypeError, match="source must be the text"):
        read_bif(3)
    one_line = (
        "variable a { type discrete [ 2 ] { x, y }; } "
        "probability ( a ) { table 0.5, 0.5; }"
    )
    assert read_bif(one_line).states_["a"].tolist() == ["x", "y"]


JAVABAYES = """// JavaBayes style: every name quoted
network "Quoted net" {
}
variable "sky" {
  type discrete [ 2 ] { "clear", "rain" };
}
variable "a" {
  type discrete [ 3 ] { "lo", "mid", "hi" };
  property "position = (10, 20)" ;
}
variable "wet" {
  type discrete [ 2 ] { "yes", "no" };
}
probability ( "sky" ) {
  table 0.3, 0.7 ;
}
probability ( "a" | "sky" ) {
  ("clear") 0.2, 0.3, 0.5;
  ("rain") 0.6, 0.3, 0.1;
}
probability ( "wet" | "sky", "a" ) {
  ("clear", "lo") 0.05, 0.95;
  ("clear", "mid") 0.5, 0.5;
  ("clear", "hi") 0.5, 0.5;
  ("rain", "lo") 0.5, 0.5;
  ("rain", "mid") 0.7, 0.3;
  ("rain", "hi") 0.9, 0.1;
}
"""


def _quoted(text):
    """A bnlearn BIF text with every name and state quoted, JavaBayes style."""
    import re

    keywords = {"network", "variable", "probability", "type", "discrete", "table"}
    keywords |= {"default", "property"}

    def quote(m):
        word = m.group()
        if word in keywords or re.fullmatch(r"[-+0-9.eE]+", word):
            return word
        return f'"{word}"'

    return re.sub(r"[^\s{}()\[\];,|\"]+", quote, text)


@pytest.mark.parametrize("name", NAMES)
def test_quoted_names_read_as_the_bare_ones(name):
    # pgmpy's BIF tests use JavaBayes files, every name in quotes: the quotes
    # are not part of the names.
    text = write_bif(load_network(name))
    assert_same_network(read_bif(_quoted(text)), read_bif(text))


@pytest.mark.parity
def test_javabayes_quoted_file_reads_as_pgmpys_and_round_trips(tmp_path):
    pytest.importorskip("pgmpy")
    from pgmpy.readwrite import BIFReader

    ours = read_bif(JAVABAYES)
    assert ours.variables_ == ["sky", "a", "wet"]
    assert ours.states_["sky"].tolist() == ["clear", "rain"]
    path = tmp_path / "quoted.bif"
    path.write_text(JAVABAYES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = BayesianNetwork.from_pgmpy(BIFReader(str(path)).get_model())
    assert_same_tables(ours, theirs)
    # Names with blanks (which pgmpy 1.1.2 cannot read) are quoted on writing.
    renamed = read_bif(JAVABAYES.replace('"sky"', '"sky state"'))
    assert renamed.variables_[0] == "sky state"
    assert_same_network(read_bif(write_bif(renamed)), renamed)
    # Written back, read by both readers again.
    text = write_bif(ours)
    assert_same_network(read_bif(text), ours)
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = BayesianNetwork.from_pgmpy(BIFReader(str(path)).get_model())
    assert_same_tables(ours, again)


def test_loaded_alarm_equals_pgmpys_example_model():
    pytest.importorskip("pgmpy")
    from pgmpy.utils import get_example_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = get_example_model("alarm")
    # The same tables; pgmpy orders the parents by its edges, not by the file.
    assert_same_tables(load_network("alarm"), BayesianNetwork.from_pgmpy(model))


@pytest.mark.parity
@pytest.mark.parametrize("seed", range(20))
def test_a_default_line_listing_the_whole_table_reads_as_pgmpy_reads_it(seed):
    # pgmpy reads 'default' followed by every probability of a block as its
    # 'table' (the variable's states slowest); such files were refused.
    pytest.importorskip("pgmpy")
    from pgmpy.readwrite import BIFReader

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 6))
    cards = rng.integers(2, 4, size=n)
    names = [f"v{i}" for i in range(n)]
    blocks, tables = [], {}
    for i, v in enumerate(names):
        blocks.append(
            f"variable {v} {{ type discrete [ {cards[i]} ] "
            f"{{ {', '.join(f's{j}' for j in range(cards[i]))} }}; }}"
        )
    for i, v in enumerate(names):
        parents = [u for j, u in enumerate(names[:i]) if rng.random() < 0.6]
        shape = [cards[names.index(u)] for u in parents] + [cards[i]]
        table = rng.dirichlet(np.ones(cards[i]), size=shape[:-1] or None)
        tables[v] = (parents, np.asarray(table).reshape(shape))
        # The variable's states slowest, as 'table' lists them.
        values = ", ".join(
            repr(float(x)) for x in np.moveaxis(tables[v][1], -1, 0).ravel()
        )
        head = v if not parents else f"{v} | {', '.join(parents)}"
        blocks.append(f"probability ( {head} ) {{ default {values}; }}")
    text = "network n { }\n" + "\n".join(blocks) + "\n"
    ours = read_bif(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = BayesianNetwork.from_pgmpy(BIFReader(string=text).get_model())
    assert_same_tables(ours, theirs)
    for v, (parents, table) in tables.items():
        assert list(ours.parents_[v]) == parents
        np.testing.assert_allclose(ours.cpds_[v], table, rtol=0, atol=1e-15)


@pytest.mark.parametrize("seed", range(20))
def test_properties_with_comment_marks_in_quotes_write_back(seed):
    # A quoted string is one token to read_bif: ';', '//' and '/*' in it are
    # text (pgmpy's test_cpp_style_comments: property "source" =
    # "http://..."). write_bif refused to write such a property back.
    rng = np.random.default_rng(seed)
    pieces = ["http://a.org/b", "/*", "*/", ";", "//", " ", "x", "=", "'"]

    def quoted():
        return '"' + "".join(rng.choice(pieces, size=rng.integers(1, 6))) + '"'

    net = {f"k{i}": f"{quoted()} and {quoted()}" for i in range(3)}
    var = {"note": quoted(), "where": f"at {quoted()}"}
    lines = "\n".join(f"  property {k} = {x} ;" for k, x in net.items())
    text = (
        f"network n {{\n{lines}\n}}\n"
        "variable a {\n  type discrete [ 2 ] { lo, hi };\n"
        + "\n".join(f"  property {k} = {x} ;" for k, x in var.items())
        + "\n}\nprobability ( a ) { table 0.25, 0.75; }\n"
    )
    bn = read_bif(text)
    assert bn.properties_ == net
    assert bn.variable_properties_["a"] == var
    again = read_bif(write_bif(bn))
    assert again.properties_ == net
    assert again.variable_properties_ == bn.variable_properties_
    # Outside quotes, a comment mark still cannot be written.
    bn.properties_ = {"url": "http://a.org"}
    with pytest.raises(ValueError, match="outside double quotes"):
        write_bif(bn)


@pytest.mark.parity
@pytest.mark.parametrize("seed", range(10))
def test_probability_blocks_may_name_variables_in_another_case(seed):
    # pgmpy reads a probability block that writes 'neuroticism' for the
    # variable declared 'NEUROTICISM'; read_bif refused it as unknown.
    pytest.importorskip("pgmpy")
    import re

    from pgmpy.readwrite import BIFReader

    rng = np.random.default_rng(seed)
    bn = load_network(["asia", "child", "insurance"][seed % 3])
    text = write_bif(bn)
    change = [str.lower, str.upper, str.swapcase]

    def recase(match):
        word = match.group()
        return change[rng.integers(3)](word) if word in bn.states_ else word

    mixed = "\n".join(
        re.sub(r"[^\s,(){}|]+", recase, line)
        if line.startswith("probability")
        else line
        for line in text.split("\n")
    )
    assert mixed != text
    ours = read_bif(mixed)
    assert_same_network(bn, ours)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = BayesianNetwork.from_pgmpy(BIFReader(string=mixed).get_model())
    assert_same_tables(ours, theirs)


def test_a_name_matching_two_declarations_but_for_case_is_unknown():
    text = """variable ab { type discrete [ 2 ] { x, y }; }
variable AB { type discrete [ 2 ] { x, y }; }
probability ( ab ) { table 0.5, 0.5; }
probability ( Ab ) { table 0.5, 0.5; }
"""
    with pytest.raises(ValueError, match="line 4: unknown variable 'Ab'"):
        read_bif(text)
    assert read_bif(text.replace("( Ab )", "( AB )")).variables_ == ["ab", "AB"]
