"""The input tags of MultinomialNB, BernoulliNB and ComplementNB, which
scikit-learn's estimator checks (``tests/test_common.py``, where the three run
with their defaults and with bayeskit's own parameters) read."""

import numpy as np
import pytest

from bayeskit import BernoulliNB, ComplementNB, MultinomialNB


@pytest.mark.parametrize("Estimator", [MultinomialNB, BernoulliNB, ComplementNB])
def test_tags_declare_sparse_input(Estimator):
    tags = Estimator().__sklearn_tags__()
    assert tags.input_tags.sparse
    assert tags.input_tags.positive_only == (Estimator is not BernoulliNB)
    assert not tags.input_tags.categorical
    assert np.isfinite(Estimator().fit([[1, 0], [0, 1]], [0, 1]).class_count_).all()
