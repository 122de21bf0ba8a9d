"""pgmpy's BIF and XMLBIF readers and writers answered by bayeskit's
(:mod:`bayeskit.io`), for pgmpy's own test modules (``test_peer_pgmpy_bif.py``
and ``test_peer_pgmpy_xmlbif.py``).

The classes keep pgmpy's names, constructors and attributes, and translate
only: a reader parses with :func:`~bayeskit.io.read_bif` /
:func:`~bayeskit.io.read_xmlbif` and exposes the parsed network in pgmpy's
shapes (a table with one row per state of the variable and one column per
joint state of its parents, the first parent varying slowest; a property as
the ``"key = value"`` text); ``get_model`` builds pgmpy's model from those, as
pgmpy's readers do from theirs. A writer converts pgmpy's model
(:meth:`~bayeskit.BayesianNetwork.from_pgmpy`), carries its name and node
attributes over as the network's ``name_`` and ``variable_properties_``, and
writes with :func:`~bayeskit.io.write_bif` / :func:`~bayeskit.io.write_xmlbif`.

pgmpy's BIF tests read ``pgmpy/tests/test_readwrite/testdata/water.bif``
from its source tree, which its wheel does not ship; the wheel ships the same
file (the bnlearn repository's WATER network, byte for byte) as
``pgmpy/utils/example_models/water.bif.gz``, which the reader reads instead
(bayeskit's readers decompress gzip).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from bayeskit import BayesianNetwork
from bayeskit.io import read_bif, read_xmlbif, write_bif, write_xmlbif


def _source(path):
    """What bayeskit's readers take for pgmpy's ``path``: a file object as it
    is, a path as a ``pathlib.Path`` (pgmpy's test data found in its wheel)."""
    if hasattr(path, "read"):
        return path
    found = Path(os.fspath(path))
    if not found.exists() and found.as_posix().endswith("testdata/water.bif"):
        import pgmpy

        found = Path(pgmpy.__file__).parent / "utils/example_models/water.bif.gz"
    return found


def _text(source) -> str:
    """The text of the file (pgmpy's readers keep it as ``network``)."""
    if isinstance(source, str):
        return source
    import gzip

    data = source.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8-sig")


def _columns(network: BayesianNetwork, v) -> np.ndarray:
    """``cpds_[v]`` (the parents' axes first, the variable's last) as pgmpy's
    ``(n_states, n_parent_configurations)`` table."""
    table = np.asarray(network.cpds_[v])
    return np.moveaxis(table, -1, 0).reshape(table.shape[-1], -1)


def _property_texts(props: dict) -> list:
    """bayeskit's ``{key: value}`` as pgmpy's ``"key = value"`` texts."""
    return [k if x is None else f"{k} = {x}" for k, x in props.items()]


class _Reader:
    """What pgmpy's BIF and XMLBIF readers share, over a parsed network."""

    def _expose(self, network: BayesianNetwork) -> None:
        self._network = network
        self.network_name = network.name_
        names = list(network.variables_)
        self._names = names
        self._states = {v: network.states_[v].tolist() for v in names}
        self._parents = {v: list(network.parents_[v]) for v in names}
        self._edges = [[u, v] for v in names for u in self._parents[v]]
        self._tables = {v: _columns(network, v) for v in names}
        self._properties = {
            v: _property_texts(network.variable_properties_[v]) for v in names
        }

    def get_model(self, state_name_type=str):
        """pgmpy's ``DiscreteBayesianNetwork`` of the parsed file, built as
        pgmpy's readers build theirs (CPDs added in sorted order, the
        properties as node attributes)."""
        from pgmpy.factors.discrete import TabularCPD
        from pgmpy.models import DiscreteBayesianNetwork

        model = DiscreteBayesianNetwork()
        model.add_nodes_from(self._names)
        model.add_edges_from(self._edges)
        model.name = self.network_name
        cpds = []
        for v in sorted(self._names):
            parents = self._parents[v]
            cpds.append(
                TabularCPD(
                    v,
                    len(self._states[v]),
                    self._tables[v],
                    evidence=parents,
                    evidence_card=[len(self._states[u]) for u in parents],
                    state_names={
                        u: list(map(state_name_type, self._states[u]))
                        for u in [v, *parents]
                    },
                )
            )
        model.add_cpds(*cpds)
        if self._with_properties:
            for v, props in self._network.variable_properties_.items():
                for key, value in props.items():
                    model.nodes[v][key] = value
        return model


class BIFReader(_Reader):
    """bayeskit's :func:`~bayeskit.io.read_bif` in place of pgmpy's
    ``BIFReader``."""

    def __init__(self, path=None, string=None, include_properties=False):
        if path:
            source = _source(path)
        elif string:
            source = string
        else:
            raise ValueError("Must specify either path or string")
        self.network = _text(source)
        self._expose(read_bif(source))
        self.include_properties = self._with_properties = include_properties
        self.variable_names = self._names
        self.variable_states = self._states
        self.variable_parents = self._parents
        self.variable_edges = self._edges
        self.variable_cpds = self._tables
        if include_properties:
            self.variable_properties = self._properties


class XMLBIFReader(_Reader):
    """bayeskit's :func:`~bayeskit.io.read_xmlbif` in place of pgmpy's
    ``XMLBIFReader``."""

    _with_properties = True

    def __init__(self, path=None, string=None):
        if path:
            source = _source(path)
        elif string:
            source = string
        else:
            raise ValueError("Must specify either path or string")
        self._expose(read_xmlbif(source))
        self.variables = self._names
        self.variable_states = self.state_names = self._states
        self.variable_parents = self._parents
        self.edge_list = self._edges
        self.variable_CPD = self._tables
        self.variable_property = self._properties


def _network(model) -> BayesianNetwork:
    """pgmpy's model as bayeskit's network, its name and node attributes kept
    (``name_`` and ``variable_properties_``, which the writers write)."""
    network = BayesianNetwork.from_pgmpy(model)
    network.name_ = getattr(model, "name", None) or None
    network.properties_ = {}
    network.variable_properties_ = {
        v: {str(k): x for k, x in sorted(model.nodes[v].items())}
        for v in network.variables_
    }
    return network


class BIFWriter:
    """bayeskit's :func:`~bayeskit.io.write_bif` in place of pgmpy's
    ``BIFWriter``. ``round_values`` is accepted and not applied: bayeskit
    writes every probability with the shortest text that reads back as the
    same float."""

    def __init__(self, model, round_values=None):
        self.model = model
        self.round_values = round_values
        self._network = _network(model)

    def __str__(self):
        return write_bif(self._network)

    def write_bif(self, filename):
        write_bif(self._network, Path(os.fspath(filename)))

    write = write_bif


class XMLBIFWriter:
    """bayeskit's :func:`~bayeskit.io.write_xmlbif` in place of pgmpy's
    ``XMLBIFWriter``."""

    def __init__(self, model, encoding="utf-8", prettyprint=True):
        self.model = model
        self._network = _network(model)

    def __str__(self):
        return write_xmlbif(self._network)

    def write_xmlbif(self, filename):
        write_xmlbif(self._network, Path(os.fspath(filename)))

    write = write_xmlbif


SUBSTITUTES = {
    "pgmpy.readwrite": {
        "BIFReader": BIFReader,
        "BIFWriter": BIFWriter,
        "XMLBIFReader": XMLBIFReader,
        "XMLBIFWriter": XMLBIFWriter,
    }
}
