"""scikit-learn's estimator checks over every public estimator."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from bayeskit import CategoricalNB, GaussianNB, MixedNB

ESTIMATORS = [GaussianNB(), CategoricalNB(), MixedNB()]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
