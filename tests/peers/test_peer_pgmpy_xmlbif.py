"""pgmpy's ``test_XMLBIF`` module, loaded from the installed pgmpy with its
``XMLBIFReader`` and ``XMLBIFWriter`` answered by bayeskit's
:func:`~bayeskit.io.read_xmlbif` and :func:`~bayeskit.io.write_xmlbif`
(``pgmpy_readwrite.py``). Every assertion is pgmpy's."""

import pytest
from peer_suite import NOT_APPLICABLE, load
from pgmpy_readwrite import SUBSTITUTES

pytest.importorskip("pgmpy")

_bayeskit_peer_module = "pgmpy.tests.test_readwrite.test_XMLBIF"
globals().update(load(_bayeskit_peer_module, SUBSTITUTES))

NOT_APPLICABLE[
    _bayeskit_peer_module, "TestXMLBIFReaderMethods::test_make_valid_state_name"
] = (
    "calls XMLBIFWriter._make_valid_state_name, a private helper of pgmpy's "
    "writer (which rewrites states such as 'a-b' as 'a_b'); bayeskit's "
    "write_xmlbif escapes every state and reads it back unchanged"
)


@pytest.fixture(autouse=True)
def _in_a_temporary_folder(tmp_path, monkeypatch):
    """pgmpy's tests write their files into the working folder."""
    monkeypatch.chdir(tmp_path)
