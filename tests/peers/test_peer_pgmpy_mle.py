"""pgmpy's ``test_MaximumLikelihoodEstimator`` module, loaded from the installed
pgmpy with its
``MaximumLikelihoodEstimator`` answered by bayeskit (``pgmpy_estimators.py``). Every
assertion is pgmpy's; pgmpy's JunctionTree potentials are not applicable."""

import pytest
from peer_suite import load
from pgmpy_estimators import SUBSTITUTES

pytest.importorskip("pgmpy")

_bayeskit_peer_module = "pgmpy.tests.test_estimators.test_MaximumLikelihoodEstimator"
globals().update(load(_bayeskit_peer_module, SUBSTITUTES))
