"""pgmpy's ``test_BayesianEstimator`` module, loaded from the installed
pgmpy with its
``BayesianEstimator`` answered by bayeskit (``pgmpy_estimators.py``). Every
assertion is pgmpy's; pgmpy's JunctionTree potentials are not applicable."""

import pytest
from peer_suite import load
from pgmpy_estimators import SUBSTITUTES

pytest.importorskip("pgmpy")

_bayeskit_peer_module = "pgmpy.tests.test_estimators.test_BayesianEstimator"
globals().update(load(_bayeskit_peer_module, SUBSTITUTES))
