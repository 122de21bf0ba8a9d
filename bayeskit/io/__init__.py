"""Bayesian networks in the files of the public network repositories.

:func:`read_bif` / :func:`write_bif` read and write the Bayesian Interchange
Format (BIF 0.15, the format of the bnlearn repository), and
:func:`read_xmlbif` / :func:`write_xmlbif` its XML version (XMLBIF 0.3).
Readers take the text itself (a ``str`` is always the text, never a path),
its bytes, a file object, a ``pathlib.Path`` or ``path=`` (a path as a
``str``), read at most ``max_bytes`` of it and imply at most ``max_cells``
table cells, and return a :class:`~bayeskit.BayesianNetwork` with every table
set; writers return the text when no path is given, as pandas' ``to_csv``
does, and never write a file their reader would refuse or read back changed.
"""

from ._bif import read_bif, write_bif
from ._xmlbif import read_xmlbif, write_xmlbif

__all__ = ["read_bif", "read_xmlbif", "write_bif", "write_xmlbif"]
