"""pgmpy's PC tests, run against bayeskit's PC.

pgmpy ships its test modules in its wheel. ``pgmpy/tests/test_causal_discovery/
test_PC.py`` is loaded from the installed pgmpy with its ``PC`` answered by
:class:`bayeskit.PC`: the class below keeps pgmpy's constructor, ``fit``
(data checks) and ``score``, and learns the structure with bayeskit (the
skeleton, separating sets and orientations are bayeskit's), returned as
pgmpy's ``skeleton_``, ``separating_sets_`` and ``causal_graph_``. A set of
independencies passed to ``fit`` is pgmpy's ``IndependenceMatch`` test passed
to bayeskit as ``ci_test``; pgmpy's ``expert_knowledge`` and
``enforce_expert_knowledge`` are passed as they are, and bayeskit's warnings
of knowledge in conflict with the data are logged to pgmpy's logger, where
pgmpy's tests look for pgmpy's. Every assertion is pgmpy's.
"""

import logging
import os
import warnings

import networkx as nx
import pgmpy
import pytest
from peer_suite import NOT_APPLICABLE, load

from bayeskit import PC as BayeskitPC
from bayeskit.datasets import load_network
from bayeskit.io import read_bif
from bayeskit.network._gauss_ci import GAUSS_TESTS
from bayeskit.network._pc import LAMBDAS

pgmpy_pc = pytest.importorskip("pgmpy.causal_discovery").PC


class PC(pgmpy_pc):
    """pgmpy's PC, its structure learnt by bayeskit."""

    def _fit(self, X, independencies=None):
        from pgmpy.base import DAG, PDAG, UndirectedGraph
        from pgmpy.ci_tests import IndependenceMatch, get_ci_test

        if self.orient_rule is not None:
            raise NotImplementedError("orient_rule")
        if independencies is not None:
            test = IndependenceMatch(independencies=independencies)
        elif self.ci_test is None or self.ci_test in {*LAMBDAS, *GAUSS_TESTS}:
            test = self.ci_test or "chi_square"
        else:
            test = get_ci_test(self.ci_test, data=X)
        pc = BayeskitPC(
            test,
            variant=self.variant,
            significance_level=self.significance_level,
            max_cond_vars=self.max_cond_vars,
            expert_knowledge=self.expert_knowledge,
            enforce_expert_knowledge=self.enforce_expert_knowledge,
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pc.fit(X)
        for w in caught:
            logging.getLogger("pgmpy").warning(str(w.message))
        self.ci_test_ = test
        self.separating_sets_ = pc.separating_sets_
        self.skeleton_ = UndirectedGraph()
        self.skeleton_.add_nodes_from(X.columns)
        self.skeleton_.add_edges_from(pc.directed_edges_ + pc.undirected_edges_)
        if self.return_type in ("pdag", "cpdag"):
            graph = PDAG(
                directed_ebunch=pc.directed_edges_,
                undirected_ebunch=pc.undirected_edges_,
            )
        elif self.return_type == "dag":
            graph = DAG(pc.edges_)
        else:
            raise ValueError(f"return_type is dag, pdag or cpdag: {self.return_type}")
        graph.add_nodes_from(X.columns)
        self.causal_graph_ = graph
        self.adjacency_matrix_ = nx.to_pandas_adjacency(graph, weight=1, dtype="int")
        return self


def load_model(name):
    """pgmpy's ``load_model`` of the bnlearn networks the tests use: asia and
    alarm are bayeskit's copies, the others (cancer, sachs) the BIF files
    pgmpy's wheel ships, read by bayeskit; all as pgmpy models."""
    name = name.removeprefix("bnlearn/")
    if name in ("asia", "child", "insurance", "alarm"):
        return load_network(name).to_pgmpy()
    folder = os.path.join(os.path.dirname(pgmpy.__file__), "utils", "example_models")
    return read_bif(path=os.path.join(folder, f"{name}.bif.gz")).to_pgmpy()


_MODULE = "pgmpy.tests.test_causal_discovery.test_PC"
_namespace = load(
    _MODULE,
    {
        "pgmpy.causal_discovery": {"PC": PC},
        "pgmpy.example_models": {"load_model": load_model},
    },
)
globals().update({k: v for k, v in _namespace.items() if k.startswith("test_")})
_bayeskit_substituted = _namespace["_bayeskit_substituted"]
_bayeskit_peer_module = _MODULE
fake_data = _namespace["fake_data"]

_PRIVATE = "pgmpy's private API (its own skeleton and collider methods), no bayeskit"
_ADULT = (
    "pgmpy's adult.csv, read from a path relative to pgmpy's source checkout, is "
    "not in pgmpy's wheel (bayeskit's PC takes search_space: tests/models/"
    "test_pc_expert.py)"
)
_CONTINUOUS = (
    "pgmpy's residual tests of mixed data (Pillai's trace, the generalised "
    "covariance measure), which bayeskit's PC does not offer (its continuous "
    "tests are pearsonr and fisher_z)"
)
NOT_APPLICABLE.update(
    {
        (_MODULE, "test_build_skeleton"): _PRIVATE,
        (_MODULE, "test_skeleton_to_pdag"): _PRIVATE,
        (_MODULE, "test_temporal_ordering_sepsets_and_skeleton"): _PRIVATE,
        (_MODULE, "test_search_space"): _ADULT,
        (_MODULE, "test_orient_rule"): (
            "pgmpy's orient_rule (Ramsey's max-p colliders), which bayeskit's PC "
            "does not offer"
        ),
        **{
            (_MODULE, f"{test}[{variant}-{ci}]"): _CONTINUOUS
            for test in ("test_build_skeleton_continuous", "test_build_dag_continuous")
            for variant in ("orig", "stable", "parallel")
            for ci in ("pillai", "gcm")
        },
    }
)
