"""scikit-learn's estimator checks over PoissonHMM, GMMHMM and MultinomialHMM.

As for GaussianHMM in ``tests/test_common.py``: the checks that pass a dummy
target in the second positional place (hmmlearn's ``lengths``) are expected
failures here and run again with the target by keyword; the count models
(Poisson, multinomial) cannot take the checks' continuous data at all.
"""

import warnings

import pytest
from sklearn.utils import estimator_checks as ec
from sklearn.utils.estimator_checks import parametrize_with_checks

from bayeskit import GMMHMM, MultinomialHMM, PoissonHMM

_LENGTHS_CHECKS = (
    "check_complex_data",
    "check_dict_unchanged",
    "check_dont_overwrite_parameters",
    "check_dtype_object",
    "check_estimator_sparse_array",
    "check_estimator_sparse_matrix",
    "check_estimator_sparse_tag",
    "check_estimators_dtypes",
    "check_estimators_empty_data_messages",
    "check_estimators_fit_returns_self",
    "check_estimators_nan_inf",
    "check_estimators_overwrite_params",
    "check_estimators_pickle",
    "check_estimators_pickle(readonly_memmap=True)",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1feature",
    "check_fit2d_predict1d",
    "check_fit_check_is_fitted",
    "check_fit_idempotent",
    "check_n_features_in",
    "check_n_features_in_after_fitting",
    "check_pipeline_consistency",
    "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input",
)
_LENGTHS = (
    "hmmlearn's signature: the second positional argument of fit and score is "
    "lengths, and this check passes a dummy target there, which is a clear error "
    "rather than a silent misreading; test_checks_with_y_by_keyword runs it"
)
_SEQUENCE = (
    "an HMM's per-step outputs depend on the neighbouring steps of the sequence, "
    "so they change when rows are reordered or a sequence is cut"
)
_ONE_SAMPLE = {
    GMMHMM: (
        "one sample gives a component a zero variance under hmmlearn's default "
        "(maximum-likelihood) covariance prior: a ValueError that says so"
    ),
    PoissonHMM: "this check's data are not counts: a ValueError that says so",
    MultinomialHMM: "this check's data are not counts: a ValueError that says so",
}


def expected_failed_checks(estimator):
    expected = {
        "check_methods_sample_order_invariance": _SEQUENCE,
        "check_methods_subset_invariance": _SEQUENCE,
        "check_fit_score_takes_y": _LENGTHS,
        **dict.fromkeys(_LENGTHS_CHECKS, _LENGTHS),
    }
    # A singular full covariance is factored with min_covar on its diagonal
    # (as hmmlearn's densities), so a full GMMHMM fits one sample.
    if getattr(estimator, "covariance_type", None) != "full":
        expected["check_fit2d_1sample"] = _ONE_SAMPLE[type(estimator)]
    return expected


ESTIMATORS = [
    GMMHMM(),
    GMMHMM(2, n_mix=2, covariance_type="full"),
    PoissonHMM(),
    MultinomialHMM(),
]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)


class _KeywordY(GMMHMM):
    """GMMHMM taking scikit-learn's y positionally, as the checks pass it."""

    def fit(self, X, y=None, **kw):
        return super().fit(X, y=y, **kw)

    def score(self, X, y=None, **kw):
        return super().score(X, y=y, **kw)

    def partial_fit(self, X, y=None, **kw):
        return super().partial_fit(X, y=y, **kw)


@pytest.mark.parametrize("name", _LENGTHS_CHECKS)
@pytest.mark.parametrize("kwargs", [{}, {"n_components": 2, "n_mix": 2}])
def test_checks_with_y_by_keyword(name, kwargs):
    estimator = _KeywordY(**kwargs, covariance_type="full")
    base = name.split("(")[0]
    extra = {"readonly_memmap": True} if "(readonly_memmap=True)" in name else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        getattr(ec, base)("_KeywordY", estimator, **extra)
