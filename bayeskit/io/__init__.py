"""Bayesian networks in the files of the public network repositories.

:func:`read_bif` / :func:`write_bif` read and write the Bayesian Interchange
Format (BIF 0.15, the format of the bnlearn repository), and
:func:`read_xmlbif` / :func:`write_xmlbif` its XML version (XMLBIF 0.3).
Readers take a path, a file object or the text itself and return a
:class:`~bayeskit.BayesianNetwork` with every table set; writers return the
text when no path is given, as pandas' ``to_csv`` does.
"""

from ._bif import read_bif, write_bif
from ._xmlbif import read_xmlbif, write_xmlbif

__all__ = ["read_bif", "read_xmlbif", "write_bif", "write_xmlbif"]
