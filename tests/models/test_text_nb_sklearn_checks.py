"""scikit-learn's estimator checks over MultinomialNB, BernoulliNB and ComplementNB.

Every check runs, with the estimators' defaults and with bayeskit's own
parameters (the m-estimate, the prior of the class prior); none is expected to fail.
"""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from bayeskit import BernoulliNB, ComplementNB, MultinomialNB

ESTIMATORS = [
    MultinomialNB(),
    MultinomialNB(m=5.0, prior_m=1.0),
    BernoulliNB(),
    BernoulliNB(m=2.0, binarize=0.5),
    ComplementNB(),
    ComplementNB(norm=True, m=3.0),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("Estimator", [MultinomialNB, BernoulliNB, ComplementNB])
def test_tags_declare_sparse_input(Estimator):
    tags = Estimator().__sklearn_tags__()
    assert tags.input_tags.sparse
    assert tags.input_tags.positive_only == (Estimator is not BernoulliNB)
    assert not tags.input_tags.categorical
    assert np.isfinite(Estimator().fit([[1, 0], [0, 1]], [0, 1]).class_count_).all()
