import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# The fuzzers' budgets (tests/test_fuzz.py, tests/test_fuzz_files.py), registered
# here too so that ``pytest --hypothesis-profile=thorough`` finds them: hypothesis
# loads the profile when pytest starts, before any test module is imported.
_FUZZ = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("ci", max_examples=200, derandomize=True, **_FUZZ)
settings.register_profile("thorough", max_examples=3000, **_FUZZ)

# No kernel compiles in a child process during the suite (tests/graph/
# test_background_compile.py turns it on for the processes it starts): test
# workers on an empty numba cache would each start one, and the suite's
# timings and its kernels' compiles would depend on when they finish.
os.environ.setdefault("BAYESKIT_COMPILE_IN_BACKGROUND", "0")


@pytest.fixture
def rng():
    """A seeded generator: tests never touch the global random state."""
    return np.random.default_rng(20261122)
