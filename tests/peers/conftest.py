"""Fixtures the peers' test modules expect, and the not-applicable skips."""

import inspect
import os
import random

import numpy as np
import pytest
from peer_suite import (
    DELIBERATE_DIFFERENCES,
    NOT_APPLICABLE,
    is_substituted,
    reaches_bayeskit,
)


@pytest.fixture(params=[np.float32, np.float64])
def global_dtype(request):
    """scikit-learn's fixture: the dtypes its tests run with. scikit-learn runs
    float32 only when SKLEARN_RUN_FLOAT32_TESTS=1 (as some of its CI jobs do);
    bayeskit always runs both."""
    return request.param


def _seeds() -> list[int]:
    value = os.environ.get("SKLEARN_TESTS_GLOBAL_RANDOM_SEED", "42")
    if value == "all":
        return list(range(100))
    if "-" in value:
        start, stop = value.split("-")
        return list(range(int(start), int(stop) + 1))
    return [int(value)]


@pytest.fixture(params=_seeds())
def global_random_seed(request):
    """scikit-learn's fixture: 42, or as SKLEARN_TESTS_GLOBAL_RANDOM_SEED says."""
    return request.param


@pytest.fixture(autouse=True)
def _seeded_global_state():
    """hmmlearn's tests draw from numpy's global generator (its own conftest
    seeds it from HMMLEARN_SEED): a fixed seed per test keeps them repeatable."""
    seed = int(os.environ.get("HMMLEARN_SEED", "0"))
    np.random.seed(seed)  # noqa: NPY002 (the peers draw from it)
    random.seed(seed)


def _functions(item):
    funcs = [item.function]
    if item.cls is not None:
        for klass in inspect.getmro(item.cls):
            if klass.__module__ == item.function.__module__:
                funcs.extend(v for v in vars(klass).values() if inspect.isfunction(v))
    # The peer module's own fixtures the test uses (pgmpy builds its
    # estimators in fixtures).
    info = getattr(item, "_fixtureinfo", None)
    for defs in getattr(info, "name2fixturedefs", {}).values():
        for fixture in defs:
            func = getattr(fixture, "func", None)
            if getattr(func, "__module__", None) == item.function.__module__:
                funcs.append(func)
    return funcs


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = getattr(item, "module", None)  # doctest items have none
        namespace = getattr(module, "__dict__", {})
        substituted = namespace.get("_bayeskit_substituted")
        if substituted is None:
            continue
        peer = namespace["_bayeskit_peer_module"]
        name = item.name if item.cls is None else f"{item.cls.__name__}::{item.name}"
        reason = NOT_APPLICABLE.get((peer, name)) or NOT_APPLICABLE.get(
            (peer, name.split("[")[0])
        )
        if reason is None:
            params = getattr(getattr(item, "callspec", None), "params", {})
            if not any(
                is_substituted(v, substituted) for v in params.values()
            ) and not reaches_bayeskit(_functions(item), namespace, substituted):
                reason = "exercises only the peer's own code, no bayeskit class"
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"not applicable: {reason}"))
        elif (peer, name) in DELIBERATE_DIFFERENCES:
            why = DELIBERATE_DIFFERENCES[peer, name]
            item.add_marker(
                pytest.mark.xfail(strict=True, reason=f"deliberate difference: {why}")
            )
        elif name in namespace.get("KNOWN_FAILING", ()):
            item.add_marker(
                pytest.mark.xfail(strict=True, reason="bayeskit does not pass it yet")
            )
