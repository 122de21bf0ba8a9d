"""scikit-learn's naive Bayes tests, run against bayeskit's classes."""

import numpy as np
import pytest
from peer_suite import load

from bayeskit import CategoricalNB, GaussianNB

_bayeskit_peer_module = "sklearn.tests.test_naive_bayes"
globals().update(
    load(
        _bayeskit_peer_module,
        {
            "sklearn.naive_bayes": {
                "GaussianNB": GaussianNB,
                "CategoricalNB": CategoricalNB,
            }
        },
    )
)

# Tests of the peer that bayeskit does not pass yet: strict expected failures,
# so that a fix must take its entry out of this list.
KNOWN_FAILING = frozenset()


@pytest.fixture(autouse=True)
def _numpy_default_error_state():
    """scikit-learn's tests run under numpy's default error state (underflow
    ignored). hmmlearn's test package, imported when its peer suites are
    collected in the same session, sets ``np.seterr(all="warn")`` for the
    whole process; these tests get numpy's defaults back."""
    with np.errstate(divide="warn", over="warn", under="ignore", invalid="warn"):
        yield
