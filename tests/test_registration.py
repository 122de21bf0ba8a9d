"""A new estimator is registered by its line in ``bayeskit/__init__.py`` alone.

Every suite that must cover every estimator (the common checks, the fuzzer,
the Dask tests, the self-describing statistics, the boundary tests) builds its
list from the package's public names and asks the estimator what it is (its
base, tags, declared attributes, parameters). Here a new public class of each
kind is added to ``bayeskit`` (monkeypatched, as a contributor's line in
``__init__.py`` would) and every list builder must see it, with the expected
check failures of its kind, and no edit to any list.
"""

import public_estimators as pe
import pytest
import test_boundary_estimators
import test_common
import test_fuzz

import bayeskit


# Subclasses stand for new estimators of each kind: to the builders they are
# new names, whose kind only their base, tags and parameters tell.
class NewNaiveBayes(bayeskit.GaussianNB):
    """A new classifier of real numbers, one sum of statistics."""


class NewCountMixture(bayeskit.PoissonMixture):
    """A new mixture over a family of counts."""


class NewHMM(bayeskit.PoissonHMM):
    """A new hidden Markov model of counts."""


class NewStateSpaceModel(bayeskit.LinearGaussianSSM):
    """A new linear dynamical system."""


class NewNetwork(bayeskit.BayesianNetwork):
    """A new network of named discrete variables."""


NEW = [NewNaiveBayes, NewCountMixture, NewHMM, NewStateSpaceModel, NewNetwork]


@pytest.fixture
def registered(monkeypatch):
    """The new classes, public: in ``bayeskit`` and its ``__all__``."""
    for cls in NEW:
        monkeypatch.setattr(bayeskit, cls.__name__, cls, raising=False)
    monkeypatch.setattr(
        bayeskit, "__all__", [*bayeskit.__all__, *(c.__name__ for c in NEW)]
    )
    return NEW


def _names(items):
    out = set()
    for item in items:
        if isinstance(item, type):
            out.add(item.__name__)
        elif isinstance(item, str):
            out.add(item)
        else:
            out.add(type(item).__name__)
    return out


def _fuzzed(kind, strings=True):
    return set(test_fuzz._public(kind, strings)[1])


def test_every_list_builder_sees_a_new_public_estimator(registered):
    expected = {
        "public classes": (_names(pe.classes()), set(_names(NEW))),
        "common checks": (
            _names(test_common._estimators())
            | {type(e).__mro__[1].__name__ for e in test_common._family_estimators()},
            set(_names(NEW)),
        ),
        "fuzzer: classifiers": (_fuzzed("classifier"), {"NewNaiveBayes"}),
        "fuzzer: density models": (
            _fuzzed("density_estimator", strings=False),
            {"NewCountMixture", "NewHMM", "NewStateSpaceModel"},
        ),
        "fuzzer: sequence models": (set(test_fuzz._sequence_models()), {"NewHMM"}),
        "fuzzer: hand-set HMMs": (set(test_fuzz._hand_set()), {"NewHMM"}),
        "fuzzer: Dask": (_names(test_fuzz._dask_estimators()), set(_names(NEW))),
        "Dask: tabular": (_names(pe.tabular()), {"NewNaiveBayes", "NewCountMixture"}),
        "Dask: summed classifiers": (
            _names(pe.summed_classifiers()),
            {"NewNaiveBayes"},
        ),
        "Dask: HMMs": (_names(pe.hidden_markov_models()), {"NewHMM"}),
        "Dask: restarts": (_names(pe.restartable()), {"NewCountMixture", "NewHMM"}),
        "Dask: LDS": (_names(pe.linear_dynamical_systems()), {"NewStateSpaceModel"}),
        "boundary: classifiers": (
            _names(test_boundary_estimators._classifiers()),
            {"NewNaiveBayes"},
        ),
    }
    for builder, (seen, new) in expected.items():
        assert new <= seen, f"{builder} misses {sorted(new - seen)}"
        others = set(_names(NEW)) - new
        # ... and only where it belongs (a network is no HMM).
        assert not (others & seen) or builder in ("public classes",), (
            f"{builder} takes {sorted(others & seen)}"
        )


@pytest.mark.parametrize("cls", NEW, ids=lambda c: c.__name__)
def test_a_new_estimator_gets_the_expected_failures_of_its_kind(cls):
    """The reasons of its base are the new class's: asked of what it is."""
    base = cls.__mro__[1]
    new = test_common.expected_failed_checks(cls())
    assert new == test_common.expected_failed_checks(base())
    assert pe.support(cls()) == pe.support(base())
    assert pe.reads_sequences(cls()) == pe.reads_sequences(base())
