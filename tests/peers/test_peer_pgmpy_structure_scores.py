"""pgmpy's structure-score tests, run against bayeskit's scores.

pgmpy ships its test modules in its wheel. The discrete scores' modules in
``pgmpy/tests/test_structure_score/`` (AIC, BIC, BDeu, BDs, K2) are loaded
from the installed pgmpy with pgmpy's score classes answered by
:func:`bayeskit.score_structure` under pgmpy's names (``'aic-d'``, ``'bic-d'``,
``'bdeu'``, ``'bds'``, ``'k2'``). Their fixtures come from pgmpy's own
``conftest.py`` there. Every assertion is pgmpy's; the values of the BIC,
BDeu and K2 tests are bnlearn's, and those of BDs Scutari's published example.
"""

import importlib

import pytest
from peer_suite import load

from bayeskit import score_structure

pytest.importorskip("pgmpy")


class _Score:
    """A pgmpy discrete structure score answered by bayeskit."""

    method = ""

    def __init__(self, data, equivalent_sample_size=10, state_names=None):
        self.data = data
        self.equivalent_sample_size = equivalent_sample_size

    def score(self, model) -> float:
        nodes = list(model.nodes())
        if not nodes:
            return 0.0
        return score_structure(
            self.data[nodes],
            [tuple(e) for e in model.edges()],
            self.method,
            equivalent_sample_size=self.equivalent_sample_size,
        )


class AIC(_Score):
    method = "aic-d"


class BIC(_Score):
    method = "bic-d"


class BDeu(_Score):
    method = "bdeu"


class BDs(_Score):
    method = "bds"


class K2(_Score):
    method = "k2"


_SUBSTITUTES = {
    "pgmpy.structure_score": {
        "AIC": AIC,
        "BIC": BIC,
        "BDeu": BDeu,
        "BDs": BDs,
        "K2": K2,
    }
}
_bayeskit_peer_module = "pgmpy.tests.test_structure_score"
for _name in ("test_aic", "test_bic", "test_bdeu", "test_bds", "test_k2"):
    _namespace = load(f"{_bayeskit_peer_module}.{_name}", _SUBSTITUTES)
    # The test classes (TestAIC, TestBIC, ...); the score names stay ours.
    globals().update({k: v for k, v in _namespace.items() if k.startswith("Test")})
    _bayeskit_substituted = _namespace["_bayeskit_substituted"]

_fixtures = importlib.import_module("pgmpy.tests.test_structure_score.conftest")
small_df = _fixtures.small_df
small_df_models = _fixtures.small_df_models
bds_df = _fixtures.bds_df
bds_models = _fixtures.bds_models


@pytest.fixture
def titanic_data():
    pytest.skip("pgmpy's wheel does not ship its titanic_train.csv test data")
