"""Bayesian networks in the files of the public network repositories.

:func:`read_bif` / :func:`write_bif` read and write the Bayesian Interchange
Format (BIF 0.15, the format of the bnlearn repository), and
:func:`read_xmlbif` / :func:`write_xmlbif` its XML version (XMLBIF 0.3);
:func:`read_uai` / :func:`write_uai` the UAI inference competitions' format,
:func:`read_net` / :func:`write_net` Hugin's NET and :func:`read_xdsl` /
:func:`write_xdsl` GeNIe's XDSL.
Readers take the text itself (a ``str`` is always the text, never a path),
its bytes, a file object, a ``pathlib.Path`` or ``path=`` (a path as a
``str``), read at most ``max_bytes`` of it and imply at most ``max_cells``
table cells, and return a :class:`~bayeskit.BayesianNetwork` with every table
set; writers return the text when no path is given, as pandas' ``to_csv``
does, and never write a file their reader would refuse or read back changed.
What a file says beside the tables is kept on the network: ``name_`` (the
network's name, or None), ``properties_`` (the network's ``{key: value}``)
and ``variable_properties_`` (``{variable: {key: value}}``: BIF's
``property`` lines, NET's ``label`` and ``position``, GeNIe's node names and
positions), and the writers write them back.
"""

from ._bif import read_bif, write_bif
from ._net import read_net, write_net
from ._uai import read_uai, write_uai
from ._xdsl import read_xdsl, write_xdsl
from ._xmlbif import read_xmlbif, write_xmlbif

__all__ = [
    "read_bif",
    "read_net",
    "read_uai",
    "read_xdsl",
    "read_xmlbif",
    "write_bif",
    "write_net",
    "write_uai",
    "write_xdsl",
    "write_xmlbif",
]
