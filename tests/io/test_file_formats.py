"""UAI, Hugin NET and GeNIe XDSL files, and the names and properties of BIF
and XMLBIF: every network pgmpy ships round-trips through our five writers,
our files read in pgmpy's and pyAgrum's readers with the same tables, their
writers' files read in ours, and malformed files are errors with a line."""

import gzip
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from bayeskit.io import (
    read_bif,
    read_net,
    read_uai,
    read_xdsl,
    read_xmlbif,
    write_bif,
    write_net,
    write_uai,
    write_xdsl,
    write_xmlbif,
)

BIG = ["andes", "barley", "diabetes", "link", "mildew", "munin", "munin1",
       "munin2", "munin3", "munin4", "pathfinder", "pigs"]  # fmt: skip


def _example_dir():
    try:
        import pgmpy
    except ImportError:
        return None
    return Path(os.path.dirname(pgmpy.__file__)) / "utils" / "example_models"


def _shipped():
    d = _example_dir()
    if d is None:
        return []
    return sorted(p.name[: -len(".bif.gz")] for p in d.glob("*.bif.gz"))


SMALL = [n for n in _shipped() if n not in BIG]


def _uai_back(bn, text):
    return read_uai(
        text,
        names=list(bn.variables_),
        states={v: bn.states_[v].tolist() for v in bn.variables_},
    )


WRITERS = {
    "bif": (write_bif, read_bif),
    "xmlbif": (write_xmlbif, read_xmlbif),
    "uai": (write_uai, None),
    "net": (write_net, read_net),
    "xdsl": (write_xdsl, read_xdsl),
}


def _topological(bn):
    pos = {v: i for i, v in enumerate(bn.variables_)}
    return all(pos[u] < pos[v] for v in bn.variables_ for u in bn.parents_[v])


def assert_round_trips(bn):
    for fmt, (write, read) in WRITERS.items():
        text = write(bn)
        again = _uai_back(bn, text) if read is None else read(text)
        if fmt == "xdsl" and not _topological(bn):
            # GeNIe reads a node's parents before it: a topological order.
            assert sorted(again.variables_) == sorted(bn.variables_)
            assert _topological(again)
        else:
            assert again.variables_ == bn.variables_, fmt
        for v in bn.variables_:
            assert again.states_[v].tolist() == bn.states_[v].tolist(), fmt
            assert again.parents_[v] == bn.parents_[v], fmt
            np.testing.assert_allclose(again.cpds_[v], bn.cpds_[v], rtol=0, atol=1e-12)
        again_text = write(again)
        if fmt != "xdsl" or _topological(bn):
            assert again_text == text, fmt  # a fixed point


@pytest.mark.parametrize("name", SMALL)
def test_every_small_shipped_network_round_trips(name):
    bn = read_bif(_example_dir() / f"{name}.bif.gz")
    assert_round_trips(bn)


@pytest.mark.slow
@pytest.mark.parametrize("name", BIG)
def test_the_big_shipped_networks_round_trip(name):
    if _example_dir() is None:
        pytest.skip("pgmpy is not installed")
    assert_round_trips(read_bif(_example_dir() / f"{name}.bif.gz"))


def _pgmpy_tables(model, variables):
    """``{v: (parents, array (*parent cards, k))}`` of a pgmpy model, the
    parents in the order of ``variables``' tables, states by label."""
    out = {}
    for cpd in model.get_cpds():
        v = cpd.variable
        parents = list(cpd.variables[1:])
        values = cpd.get_values().T.reshape(*cpd.cardinality[1:], cpd.cardinality[0])
        out[v] = (parents, values, cpd.state_names)
    return out


def assert_equal_to_pgmpy(bn, model, names=None, states=None, atol=1e-12):
    """Our network's tables equal pgmpy's model's, by label (``names`` maps
    our variables to the model's, ``states`` our state labels)."""
    names = names or {v: v for v in bn.variables_}
    tables = _pgmpy_tables(model, bn.variables_)
    for v in bn.variables_:
        parents, values, labels = tables[names[v]]
        ours = [names[u] for u in bn.parents_[v]]
        assert sorted(parents) == sorted(ours)
        values = np.moveaxis(values, [parents.index(u) for u in ours], range(len(ours)))
        axes = [*ours, names[v]]
        for axis, u in enumerate([*bn.parents_[v], v]):
            mine = [str(s) for s in bn.states_[u]]
            if states is not None:
                mine = [str(s) for s in states[u]]
            theirs = [str(s) for s in labels[axes[axis]]]
            values = np.take(values, [theirs.index(s) for s in mine], axis=axis)
        np.testing.assert_allclose(bn.cpds_[v], values, rtol=0, atol=atol)


def pyagrum_uai(table):
    """How pyAgrum 3.3.1 reads a UAI or XDSL table of ours: the same entries,
    the child fastest, then the first parent, ..., the last parent slowest
    (the formats, and pgmpy's XDSL: the last parent before the child, the
    first slowest), and how it writes them."""
    *cards, k = table.shape
    m = len(cards)
    flat = table.reshape(*cards[::-1], k) if m else table
    return np.transpose(flat, [*range(m)[::-1], m]) if m else flat


def assert_equal_to_pyagrum(bn, gbn, transform=None, atol=1e-7):
    for v in bn.variables_:
        p = gbn.cpt(v)
        order = [p.variable(i).name() for i in range(p.nbrDim())]  # child first
        arr = np.asarray(p.toarray())  # axes in reverse of order
        names = order[::-1]  # the axes of toarray
        ours = [*bn.parents_[v], v]
        arr = np.moveaxis(arr, [names.index(u) for u in ours], range(len(ours)))
        for axis, u in enumerate(ours):
            labels = list(gbn.variable(u).labels())
            mine = [str(s) for s in bn.states_[u]]
            arr = np.take(arr, [labels.index(s) for s in mine], axis=axis)
        ours = bn.cpds_[v] if transform is None else transform(bn.cpds_[v])
        # pyAgrum's toarray gives single precision: equal to its rounding.
        np.testing.assert_allclose(ours, arr, rtol=0, atol=atol)


def _numbered(path):
    """A UAI file read as pyAgrum names it: variables and states as the
    strings of their indices."""
    bn = read_uai(path)
    return read_uai(
        path,
        names=[str(i) for i in range(len(bn.variables_))],
        states={
            str(i): [str(s) for s in bn.states_[v]] for i, v in enumerate(bn.variables_)
        },
    )


# What pyAgrum 3.3.1 cannot do with child's states ('<5', '>=7.5') and its
# six significant digits: limits of the peer, not of the files.
PYAGRUM_LIMITS = {
    ("bif", "child"): "pyAgrum's BIF reader refuses the states '<5', '>=7.5'",
    ("net", "child"): "pyAgrum writes NET states unquoted: '>=7.5' is no word",
    ("xdsl", "child"): "pyAgrum writes the state id '<5' unescaped in XML",
}

PEER_NETS = ["asia", "child", "insurance", "alarm"]


@pytest.mark.parity
@pytest.mark.parametrize("name", PEER_NETS)
def test_our_files_read_in_pgmpy_and_pgmpys_read_in_ours(name, tmp_path):
    pytest.importorskip("pgmpy")
    from pgmpy.readwrite import (
        BIFReader,
        NETReader,
        NETWriter,
        UAIReader,
        UAIWriter,
        XDSLReader,
        XDSLWriter,
    )

    bn = read_bif(_example_dir() / f"{name}.bif.gz")
    path = _example_dir() / f"{name}.bif.gz"
    model = BIFReader(string=gzip.open(path, "rt").read()).get_model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_net(bn, tmp_path / "a.net")
        assert_equal_to_pgmpy(bn, NETReader(str(tmp_path / "a.net")).get_model())
        write_xdsl(bn, tmp_path / "a.xdsl")
        assert_equal_to_pgmpy(bn, XDSLReader(str(tmp_path / "a.xdsl")).get_model())
        # pgmpy's writers' files in our readers.
        # (the files' rows of 0.3333333 sum to 0.9999999: set_cpd
        # renormalises them, 3e-8 away from pgmpy's own).
        assert_equal_to_pgmpy(read_net(str(NETWriter(model))), model, atol=1e-7)
        XDSLWriter(model).write(str(tmp_path / "p.xdsl"))
        assert_equal_to_pgmpy(read_xdsl(tmp_path / "p.xdsl"), model, atol=1e-7)
        # UAI: pgmpy 1.1.2 lists a table's child last in the scope, as the
        # format does, but its entries with the child's states slowest (the
        # format and pyAgrum: fastest). Our file in pgmpy's reader, and
        # pgmpy's file in ours, are the same tables transposed, exactly.
        text = write_uai(bn)
        theirs = UAIReader(string=text).get_model()
        for i, v in enumerate(bn.variables_):
            # pgmpy's values have a row per state of the child: it reads
            # each of our rows P(v | parents) as a column.
            values = theirs.get_cpds(f"var_{i}").get_values()
            np.testing.assert_array_equal(values.ravel(), bn.cpds_[v].ravel())
        pg = str(UAIWriter(model))
    with pytest.raises(ValueError, match="must sum to one"):
        read_uai(pg)  # the transposed tables: rows that do not sum to one


@pytest.mark.parity
@pytest.mark.parametrize("name", PEER_NETS)
# uai, net and xdsl against pyAgrum: not checked yet (the comparison of
# pyAgrum's tables by label fails for them and was not resolved in time).
@pytest.mark.parametrize("fmt", ["uai", "net", "xdsl", "bif"])
def test_our_files_read_in_pyagrum_and_pyagrums_read_in_ours(name, fmt, tmp_path):
    gum = pytest.importorskip("pyagrum")
    if _example_dir() is None:
        pytest.skip("pgmpy (the networks) is not installed")
    bn = read_bif(_example_dir() / f"{name}.bif.gz")
    write, read = WRITERS[fmt]
    limit = PYAGRUM_LIMITS.get((fmt, name))
    if fmt == "bif" and limit:
        pytest.xfail(limit)
    path = tmp_path / f"ours.{fmt}"
    write(bn, path)
    gbn = gum.loadBN(str(path))
    if fmt == "uai":
        # pyAgrum names the variables '0' .. 'n-1' and the states '0' .. 'k-1'.
        assert_equal_to_pyagrum(_numbered(path), gbn, transform=pyagrum_uai)
    else:
        assert_equal_to_pyagrum(bn, gbn, pyagrum_uai if fmt == "xdsl" else None)
    # pyAgrum's writer's file in our reader.
    if limit:
        pytest.xfail(limit)
    theirs = gum.loadBN(str(tmp_path / f"ours.{fmt}"))
    gum.saveBN(theirs, str(tmp_path / f"theirs.{fmt}"))
    if fmt == "uai":
        back = _numbered(tmp_path / f"theirs.{fmt}")
    else:
        back = read(tmp_path / f"theirs.{fmt}")
    transform = pyagrum_uai if fmt in ("uai", "xdsl") else None
    assert_equal_to_pyagrum(back, theirs, transform, atol=1e-6)


def test_rows_rounded_as_files_write_them_read_silently_and_sum_to_one(rng):
    # Files round their tables: the bnlearn repository to 4 decimals, pyAgrum
    # to 6 significant digits. Such rows are read without a word and rescaled;
    # a row further off is read as pgmpy reads it (within 0.01 of one), with a
    # warning naming the variable; beyond that it is an error.
    from bayeskit import BayesianNetwork

    for _ in range(50):
        k = int(rng.integers(2, 7))
        rows = rng.dirichlet(np.ones(k), size=3)
        rounded = (
            np.round(rows, 4)
            if rng.random() < 0.5
            else np.array([[float(f"{p:.6g}") for p in r] for r in rows])
        )
        bn = BayesianNetwork([("a", "b")], states={"a": ["x", "y", "z"]})
        bn.set_cpd("a", [0.2, 0.3, 0.5])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            bn.set_cpd("b", rounded, parents=["a"])
        expected = rounded / rounded.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(bn.cpds_["b"], expected, rtol=1e-15, atol=0)
    bn = BayesianNetwork([("a", "b")], states={"a": ["x", "y"]})
    with pytest.warns(UserWarning, match=r"CPD of 'a'.*0\.995.*rescaled"):
        bn.set_cpd("a", [0.495, 0.5])
    np.testing.assert_allclose(bn.cpds_["a"], [0.495 / 0.995, 0.5 / 0.995])
    with pytest.raises(ValueError, match=r"CPD of 'a'.*within 0\.01"):
        bn.set_cpd("a", [0.48, 0.5])


DOG = """network Dog-Problem {
  property author = someone ;
}
variable light-on { type discrete [ 2 ] { true, false };
  property position = (218, 195) ; }
variable dog-out { type discrete [ 2 ] { true, false };
  property position = (88, 95) ; property note ; }
probability ( light-on ) { table 0.6, 0.4; }
probability ( dog-out | light-on ) { (true) 0.9, 0.1; (false) 0.2, 0.8; }
"""


def _pgmpy_view(bn):
    """Our name and variable properties as pgmpy's readers give them."""
    props = {
        v: [k if x is None else f"{k} = {x}" for k, x in p.items()]
        for v, p in bn.variable_properties_.items()
    }
    return bn.name_, props


@pytest.mark.parity
def test_bif_and_xmlbif_keep_the_name_and_properties_as_pgmpy_reads_them():
    pytest.importorskip("pgmpy")
    from pgmpy.readwrite import BIFReader, XMLBIFReader

    bn = read_bif(DOG)
    assert bn.properties_ == {"author": "someone"}
    assert bn.variable_properties_["dog-out"] == {"position": "(88, 95)", "note": None}
    theirs = BIFReader(string=DOG, include_properties=True)
    name, props = _pgmpy_view(bn)
    assert name == theirs.network_name == "Dog-Problem"
    assert props == theirs.variable_properties
    for write, read, reader in (
        (write_bif, read_bif, lambda t: BIFReader(string=t, include_properties=True)),
        (write_xmlbif, read_xmlbif, lambda t: XMLBIFReader(string=t)),
    ):
        text = write(bn)
        again = read(text)
        assert again.name_ == bn.name_
        assert again.properties_ == bn.properties_
        assert again.variable_properties_ == bn.variable_properties_
        assert write(again) == text
        pg = reader(text)
        assert pg.network_name == "Dog-Problem"
        want = {v: [x for x in p if "=" in x] for v, p in props.items()}
        given = getattr(pg, "variable_properties", None) or pg.variable_property
        got = {v: [x for x in p if "=" in x] for v, p in given.items()}
        assert got == want
    # A name given to the writer wins; a network never read has none.
    assert read_bif(write_bif(bn, name="other")).name_ == "other"
    assert read_bif(write_bif(read_uai(write_uai(bn)))).name_ == "unknown"


NET = """% a comment
net { name = "dog"; node_size = (80 40); HR_Desc = "two nodes"; }
node light { label = "Light on?"; position = (218 195); states = ("on" "off"); }
discrete node dog { states = ("in" "out"); label = "Dog out"; }
potential ( light ) { data = ( 0.6 0.4 ); }
potential ( dog | light ) { data = (( 0.9 0.1 )  % light=on
                                    ( 0.2 0.8 )); }
"""


def test_net_keeps_labels_and_positions_and_nests_as_hugin():
    bn = read_net(NET)
    assert bn.name_ == "dog"
    assert bn.properties_ == {"node_size": "(80 40)", "HR_Desc": '"two nodes"'}
    assert bn.variable_properties_ == {
        "light": {"label": '"Light on?"', "position": "(218 195)"},
        "dog": {"label": '"Dog out"'},
    }
    np.testing.assert_array_equal(bn.cpds_["dog"], [[0.9, 0.1], [0.2, 0.8]])
    text = write_net(bn)
    again = read_net(text)
    assert (again.name_, again.properties_, again.variable_properties_) == (
        bn.name_,
        bn.properties_,
        bn.variable_properties_,
    )
    assert write_net(again) == text
    # Through XDSL, GeNIe's drawing keeps the position (its text) and XMLBIF
    # keeps them as property lines.
    x = read_xdsl(write_xdsl(bn))
    assert x.name_ == "dog" and x.variable_properties_ == bn.variable_properties_
    # Hugin's nesting: the first parent outermost, brute force over a random
    # table of three parents.
    rng = np.random.default_rng(0)
    table = rng.dirichlet(np.ones(3), size=(2, 3, 2))
    text = "\n".join(
        [
            "net { }",
            'node a { states = ("0" "1"); }',
            'node b { states = ("0" "1" "2"); }',
            'node c { states = ("0" "1"); }',
            'node d { states = ("0" "1" "2"); }',
            "potential ( a ) { data = (0.5 0.5); }",
            "potential ( b ) { data = (0.2 0.3 0.5); }",
            "potential ( c ) { data = (0.5 0.5); }",
            "potential ( d | a b c ) { data = ("
            + " ".join(
                "("
                + " ".join(
                    "("
                    + " ".join(
                        "(" + " ".join(repr(float(x)) for x in table[i, j, k]) + ")"
                        for k in range(2)
                    )
                    + ")"
                    for j in range(3)
                )
                + ")"
                for i in range(2)
            )
            + "); }",
        ]
    )
    np.testing.assert_array_equal(read_net(text).cpds_["d"], table)


def test_xdsl_keeps_genie_names_and_positions_and_properties():
    text = """<?xml version="1.0" encoding="UTF-8"?>
<smile version="1.0" id="Net1" numsamples="10000">
  <properties><property id="owner">me</property></properties>
  <nodes>
    <cpt id="dog"><state id="in"/><state id="out"/><parents>light</parents>
      <property id="unit">none</property>
      <probabilities>0.9 0.1 0.2 0.8</probabilities></cpt>
    <cpt id="light"><state id="on"/><state id="off"/>
      <probabilities>0.6 0.4</probabilities></cpt>
  </nodes>
  <extensions><genie version="1.0" app="GeNIe" name="Net1">
    <node id="light"><name>Light on?</name><interior color="e5f6f7"/>
      <position>10 20 82 68</position></node>
  </genie></extensions>
</smile>"""
    bn = read_xdsl(text)
    assert bn.variables_ == ["dog", "light"]  # a parent may come after its child
    assert bn.name_ == "Net1" and bn.properties_ == {"owner": "me"}
    assert bn.variable_properties_ == {
        "dog": {"unit": "none"},
        "light": {"name": "Light on?", "position": "10 20 82 68"},
    }
    np.testing.assert_array_equal(bn.cpds_["dog"], [[0.9, 0.1], [0.2, 0.8]])
    again = read_xdsl(write_xdsl(bn))
    assert again.variables_ == ["light", "dog"]  # written parents first
    assert (again.name_, again.properties_, again.variable_properties_) == (
        bn.name_,
        bn.properties_,
        bn.variable_properties_,
    )


UAI = """BAYES
2
2 3
2
1 0
2 0 1

2 0.25 0.75
6 0.1 0.2 0.7
  0.3 0.3 0.4
"""

MALFORMED = [
    (read_uai, UAI.replace("BAYES", "MARKOV"), 1, "Markov network"),
    (read_uai, UAI.replace("2 0 1", "2 0 5"), 6, "out of range"),
    (read_uai, UAI.replace("2 0 1", "2 1 0"), 6, "child"),
    (read_uai, UAI.replace("6 0.1", "5 0.1"), 9, "has 5 entries"),
    (read_uai, UAI.replace("0.2 0.7", "0.2 0.7x"), 9, "expected a probability"),
    (read_uai, UAI.replace("0.2 0.7", "0.2 0.8"), 9, "sum to one"),
    (read_uai, UAI + "1\n", 11, "after the last"),
    (read_uai, UAI[:-12], 10, "the file ends"),
    (read_net, NET.replace("potential ( dog", "potential ( cat"), 6, "unknown"),
    (read_net, NET.replace("( 0.6 0.4 )", "( 0.6 )"), 5, "has 1 numbers"),
    (read_net, NET.replace("0.2 0.8", "0.2 x"), 7, "expected a probability"),
    (read_net, NET.replace("discrete node", "continuous node"), 4, "continuous"),
    (read_net, NET.replace('"Dog out";', '"Dog out"'), 4, "expected"),
    (read_net, NET.replace(" light )", " dog light )"), 5, "needs '|'"),
    (read_net, NET.replace('("in" "out")', '("in" "in")'), 4, "twice"),
]


@pytest.mark.parametrize(("read", "text", "line", "message"), MALFORMED)
def test_malformed_files_name_the_line(read, text, line, message):
    with pytest.raises(ValueError, match=f"^line {line}: .*{message}"):
        read(text)


def test_malformed_xdsl_and_the_shared_boundary(tmp_path):
    good = write_xdsl(read_net(NET))
    bad = good.replace("<probabilities>0.9", "<probabilities>0.9 0.5")
    with pytest.raises(ValueError, match=r"^line 1[0-9]: .*has 5 numbers"):
        read_xdsl(bad)
    with pytest.raises(ValueError, match="noisymax"):
        read_xdsl(
            good.replace('<cpt id="dog">', '<noisymax id="dog">').replace(
                "</cpt>\n  </nodes>", "</noisymax>\n  </nodes>"
            )
        )
    bomb = '<?xml version="1.0"?><!DOCTYPE smile [<!ENTITY a "aaaa">]><smile/>'
    with pytest.raises(ValueError, match="entity"):
        read_xdsl(bomb)
    for read, write, text in (
        (read_uai, write_uai, UAI),
        (read_net, write_net, NET),
        (read_xdsl, write_xdsl, good),
    ):
        with pytest.raises(ValueError, match="max_cells=4"):
            read(text, max_cells=4)
        with pytest.raises(ValueError, match="max_bytes=20"):
            read(text, max_bytes=20)
        bn = read(text)
        with pytest.raises(ValueError, match="max_cells=4"):
            write(bn, max_cells=4)
        # A str is the text; a path goes by path= or pathlib.Path.
        path = tmp_path / "f.txt"
        write(bn, path)
        with pytest.raises(ValueError, match="path="):
            read(str(path))
        for again in (read(path=str(path)), read(path)):
            for v in bn.variables_:
                np.testing.assert_array_equal(again.cpds_[v], bn.cpds_[v])
        with pytest.raises(TypeError, match="not both"):
            read(text, path=str(path))
    # A message quotes at most a short excerpt of the file.
    long_word = "y" * 5000
    with pytest.raises(ValueError) as info:
        read_uai(UAI.replace("0.2 0.7", "0.2 " + long_word))
    assert len(str(info.value)) < 200
    # names= and states= are checked against the file.
    with pytest.raises(ValueError, match="names has 1 names"):
        read_uai(UAI, names=["a"])
    with pytest.raises(ValueError, match=r"states\['b'\] has 2 states"):
        read_uai(UAI, names=["a", "b"], states={"b": ["x", "y"]})
    with pytest.raises(TypeError, match="names must be a list"):
        read_uai(UAI, names="ab")


def test_properties_read_from_one_format_write_in_the_others():
    """NET's quoted labels and GeNIe's node names go through every writer
    that has properties and come back as they were read (a BIF property
    without a value, ``property note ;``, is written ``""`` where a value is
    needed: left out here)."""
    dog = read_bif(DOG.replace(" property note ;", ""))
    for bn in (read_net(NET), read_xdsl(write_xdsl(read_net(NET))), dog):
        want = (bn.name_, bn.properties_, bn.variable_properties_)
        for write, read in (
            (write_bif, read_bif),
            (write_xmlbif, read_xmlbif),
            (write_net, read_net),
            (write_xdsl, read_xdsl),
        ):
            again = read(write(bn))
            assert again.variable_properties_ == want[2], write.__name__
            assert again.name_ == want[0], write.__name__
            if write is not write_xdsl:  # XDSL: the network's own properties
                assert again.properties_ == want[1], write.__name__
