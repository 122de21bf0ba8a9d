import numpy as np
import pytest


@pytest.fixture
def rng():
    """A seeded generator: tests never touch the global random state."""
    return np.random.default_rng(20261122)
