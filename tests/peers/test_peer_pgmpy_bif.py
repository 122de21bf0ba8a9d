"""pgmpy's ``test_BIF`` module, loaded from the installed pgmpy with its
``BIFReader`` and ``BIFWriter`` answered by bayeskit's
:func:`~bayeskit.io.read_bif` and :func:`~bayeskit.io.write_bif`
(``pgmpy_readwrite.py``). Every assertion is pgmpy's."""

import pytest
from peer_suite import DELIBERATE_DIFFERENCES, NOT_APPLICABLE, load
from pgmpy_readwrite import SUBSTITUTES

pytest.importorskip("pgmpy")

_bayeskit_peer_module = "pgmpy.tests.test_readwrite.test_BIF"
globals().update(load(_bayeskit_peer_module, SUBSTITUTES))

# pgmpy's Torch classes (skipped by pgmpy itself without torch) repeat the
# numpy classes' tests: the same entries apply to them.
for _cls in ("TestBIFWriter", "TestBIFWriterTorch"):
    NOT_APPLICABLE[_bayeskit_peer_module, f"{_cls}::test_str"] = (
        "asserts the exact text of pgmpy's writer (variables sorted by name, its "
        "indentation, probabilities rounded to round_values); bayeskit writes "
        "the network's own order in its own layout, which pgmpy's reader reads "
        "back to the same tables (tests/io/test_network_files.py)"
    )
_NO_TABLE = (
    "its file declares variables without a probability block ({}): pgmpy's "
    "reader reads the declarations (and its get_model leaves those CPDs out); "
    "bayeskit's read_bif returns a network with every table set and refuses "
    "the file with a ValueError naming the variable's line"
)
for _cls in ("TestBIFReader", "TestBIFReaderTorch"):
    DELIBERATE_DIFFERENCES[
        _bayeskit_peer_module, f"{_cls}::test_cpp_style_comments"
    ] = _NO_TABLE.format("'Smoking'")
    DELIBERATE_DIFFERENCES[
        _bayeskit_peer_module, f"{_cls}::test_variable_cpds_reordered"
    ] = _NO_TABLE.format("'Pollution' and 'Smoker'")
DELIBERATE_DIFFERENCES[
    _bayeskit_peer_module, "TestBIFWriter::test_comma_state_name_warning"
] = (
    "a state holding a comma: pgmpy's writer logs a warning and writes a file its "
    "reader refuses; bayeskit's write_bif quotes the state, logs nothing, and "
    "read_bif reads it back unchanged"
)


@pytest.fixture(autouse=True)
def _in_a_temporary_folder(tmp_path, monkeypatch):
    """pgmpy's tests write their files into the working folder."""
    monkeypatch.chdir(tmp_path)
