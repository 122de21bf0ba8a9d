"""pgmpy's HillClimbSearch tests, run against bayeskit's HillClimbSearch.

pgmpy ships its test modules in its wheel. ``pgmpy/tests/test_estimators/
test_HillClimbSearch.py`` is loaded from the installed pgmpy with its
``HillClimbSearch`` answered by :class:`bayeskit.HillClimbSearch`: the class
below keeps pgmpy's constructor (the data) and ``estimate`` (its arguments,
pgmpy's ``ExpertKnowledge`` passed on as it is), learns the graph with
bayeskit and returns it as pgmpy's ``DAG``. Every assertion is pgmpy's.

The module reads pgmpy's data files (the titanic and adult data) from
``pgmpy/tests/test_estimators/testdata/``, which pgmpy's wheel does not
ship. With the environment variable ``BAYESKIT_PGMPY_TESTDATA`` naming a
folder that holds them (pgmpy's source tree has them), the tests on them run;
without it they are skipped, and the titanic frame of the module's ``setUp``
is an empty frame with the file's columns, so the other tests run.
"""

import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from peer_suite import DELIBERATE_DIFFERENCES, NOT_APPLICABLE, load

from bayeskit import HillClimbSearch as BayeskitHillClimbSearch
from bayeskit.network._scores import SCORES

pytest.importorskip("pgmpy")

_TESTDATA = os.environ.get("BAYESKIT_PGMPY_TESTDATA")
# The columns of pgmpy's titanic_train.csv (Kaggle's Titanic training set).
_TITANIC_COLUMNS = [
    "PassengerId",
    "Survived",
    "Pclass",
    "Name",
    "Sex",
    "Age",
    "SibSp",
    "Parch",
    "Ticket",
    "Fare",
    "Cabin",
    "Embarked",
]


def _read_csv(path, *args, **kwargs):
    """pandas' ``read_csv``, pgmpy's test data found in ``BAYESKIT_PGMPY_TESTDATA``."""
    name = Path(str(path)).name
    if _TESTDATA is not None:
        return pd.read_csv(Path(_TESTDATA) / name, *args, **kwargs)
    if name == "titanic_train.csv":
        return pd.DataFrame({c: pd.Series(dtype=object) for c in _TITANIC_COLUMNS})
    raise FileNotFoundError(f"pgmpy's test data {name} (see BAYESKIT_PGMPY_TESTDATA)")


class HillClimbSearch:
    """pgmpy's HillClimbSearch, its structure learnt by bayeskit."""

    def __init__(self, data, use_cache=True, **kwargs):
        self.data = data
        self.variables = list(data.columns)

    def estimate(
        self,
        scoring_method=None,
        start_dag=None,
        tabu_length=100,
        max_indegree=None,
        expert_knowledge=None,
        epsilon=1e-4,
        max_iter=int(1e6),
        show_progress=True,
    ):
        from pgmpy.base import DAG

        method = "bic-d" if scoring_method is None else scoring_method
        if not isinstance(method, str) or method.lower() not in SCORES:
            raise NotImplementedError(
                f"scoring_method={scoring_method!r}: bayeskit's HillClimbSearch "
                "learns discrete networks"
            )
        hc = BayeskitHillClimbSearch(
            method.lower(),
            start_dag=start_dag,
            tabu_length=tabu_length,
            max_indegree=max_indegree,
            expert_knowledge=expert_knowledge,
            epsilon=epsilon,
            max_iter=max_iter,
        ).fit(self.data)
        dag = DAG()
        dag.add_nodes_from(self.variables)
        dag.add_edges_from(hc.edges_)
        return dag


_MODULE = "pgmpy.tests.test_estimators.test_HillClimbSearch"
_namespace = load(_MODULE, {"pgmpy.estimators": {"HillClimbSearch": HillClimbSearch}})
# The module's own ``pd`` reads pgmpy's data files as _read_csv does (pandas
# itself is not changed).
_peer = sys.modules[f"{_MODULE}__bayeskit"]
_peer.pd = SimpleNamespace(**{**vars(pd), "read_csv": _read_csv})
globals().update({k: v for k, v in _namespace.items() if k.startswith("Test")})
_bayeskit_substituted = _namespace["_bayeskit_substituted"]
_bayeskit_peer_module = _MODULE

_DISCRETE = "TestHillClimbEstimatorDiscrete"
_PRIVATE = "pgmpy's private API (_legal_operations and its score functions)"
_CONDITIONAL_GAUSSIAN = (
    "pgmpy's conditional Gaussian scores (ll-cg, aic-cg, bic-cg) let a discrete "
    "node have continuous parents; bayeskit's HillClimbSearch learns conditional "
    "linear Gaussian networks and refuses these names with a ValueError that "
    "says to pass 'll', 'aic' or 'bic' with continuous= (its Gaussian scores "
    "are tested against pgmpy's in tests/models/test_structure_hybrid.py)"
)
NOT_APPLICABLE.update(
    {
        (_MODULE, f"{_DISCRETE}::test_legal_operations"): _PRIVATE,
        (_MODULE, f"{_DISCRETE}::test_legal_operations_forbidden_required"): _PRIVATE,
        (_MODULE, f"{_DISCRETE}::test_legal_operations_titanic"): _PRIVATE,
        (_MODULE, f"{_DISCRETE}::test_estimate"): (
            "its second half fits the conditional Gaussian scores to titanic's "
            "continuous Age and Fare: " + _CONDITIONAL_GAUSSIAN
        ),
        (_MODULE, "TestHillClimbEstimatorMixed::test_estimate"): _CONDITIONAL_GAUSSIAN,
    }
)
if _TESTDATA is None:
    _NO_DATA = (
        "pgmpy's wheel does not ship its test data ({}); set "
        "BAYESKIT_PGMPY_TESTDATA to a folder holding it to run this test"
    )
    NOT_APPLICABLE.update(
        {
            (_MODULE, f"{_DISCRETE}::test_estimate_titanic"): _NO_DATA.format(
                "titanic_train.csv"
            ),
            (_MODULE, f"{_DISCRETE}::test_search_space"): _NO_DATA.format("adult.csv"),
            (_MODULE, "TestHillClimbEstimatorGaussian::test_estimate"): (
                _NO_DATA.format("gaussian_testdata.csv")
            ),
        }
    )
DELIBERATE_DIFFERENCES[_MODULE, f"{_DISCRETE}::test_no_legal_operation"] = (
    "its required edges are also forbidden: pgmpy drops them silently (and "
    "learns the empty graph); bayeskit refuses the contradiction with a "
    "ValueError naming both (HillClimbSearch's expert_knowledge)"
)
