"""scikit-learn's estimator checks over every public estimator."""

import warnings

import numpy as np
import public_estimators
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import estimator_checks as ec
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.utils.validation import (
    _is_arraylike_not_scalar,
    check_is_fitted,
    has_fit_parameter,
)

from bayeskit import (
    GMMHMM,
    BayesianGaussianMixture,
    BernoulliNB,
    ComplementNB,
    GaussianHMM,
    GaussianMixture,
    HiddenMarkovModel,
    LinearDiscriminantAnalysis,
    LinearGaussianSSM,
    MixtureModel,
    MultinomialNB,
    NaiveBayes,
    QuadraticDiscriminantAnalysis,
)
from bayeskit.emissions import DIAG, Emission, Gaussian, family_names

# Configurations beyond the defaults, whose code paths the defaults miss.
VARIANTS = [
    MultinomialNB(m=5.0, prior_m=1.0),
    BernoulliNB(m=2.0, binarize=0.5),
    ComplementNB(norm=True, m=3.0),
    LinearDiscriminantAnalysis(solver="eigen", shrinkage=0.1),
    QuadraticDiscriminantAnalysis(covariance_prior_weight=1.0),
    GaussianMixture(
        n_components=2, covariance_type="diag", covariance_prior_weight=1.0
    ),
    BayesianGaussianMixture(n_components=2, covariance_type="diag"),
    MixtureModel(n_components=2, emission=Gaussian(DIAG)),
    MixtureModel(n_components=2, inference="variational"),
    HiddenMarkovModel(n_components=2, emission=Gaussian(DIAG)),
    HiddenMarkovModel(n_components=2, inference="variational"),
    NaiveBayes(inference="variational"),
    GaussianHMM(n_components=2, covariance_type="full", covariance_prior_weight=1.0),
    GMMHMM(2, n_mix=2, covariance_type="full"),
    LinearGaussianSSM(
        2,
        observation_covariance_prior_weight=1.0,
        transition_covariance_prior_weight=1.0,
    ),
]


# Every public estimator at its defaults: a new one is checked here from its
# line in bayeskit/__init__.py alone.
def _outside_the_reals(cls) -> bool:
    """A model over a family whose data are not any real numbers (counts,
    positive values): scikit-learn's checks' data are moved into its support
    by the family list below (FAMILY_ESTIMATORS)."""
    family = getattr(cls(), "_emission_family", None)
    return family is not None and family().support != "real"


def _params(cls) -> dict:
    return cls().get_params()


def _estimators():
    """Every public estimator at its defaults (those of families outside the
    reals: FAMILY_ESTIMATORS), then the VARIANTS."""
    public = public_estimators.classes()
    return [cls() for cls in public if not _outside_the_reals(cls)] + VARIANTS


ESTIMATORS = _estimators()

_QDA_TINY = (
    "these checks' data give a class a constant feature, a singular covariance: "
    "without a covariance prior QDA raises LinAlgError there, as scikit-learn's "
    "QDA does (which takes no sample_weight, so these checks skip it)"
)


_EM_START = (
    "EM's random start (k-means) differs between weighted rows and repeated rows; "
    "from the same start integer weights equal repetition (test_mixture.py)"
)


_SEQUENCE = (
    "an HMM's per-step outputs depend on the neighbouring steps of the sequence, "
    "so they change when rows are reordered or a sequence is cut"
)


_LENGTHS = (
    "hmmlearn's signature: the second positional argument of fit and score is "
    "lengths, and this check passes a dummy target there (integers that do not "
    "sum to len(X)), which is a clear error rather than a silent misreading; "
    "they run with y given by keyword in tests/models/test_hmm.py (GaussianHMM) "
    "and in test_hmm_checks_with_y_by_keyword below (GMMHMM)"
)
_LENGTHS_NAME = (
    "hmmlearn's signature fit(X, lengths=None): the second parameter is lengths, "
    "not y (y is keyword-only)"
)
_HMM_LENGTHS_CHECKS = (
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


_FIRST_SEEN = (
    "this check's data are continuous, so every value is a state: the values of "
    "zero-weight rows are states the repeated fit never saw, and predict_proba "
    "on them is a ValueError under the default handle_unknown='error' (the state "
    "order no longer depends on the row order: observed states are sorted)"
)


_NOT_COUNTS = "this check's data are not counts: a ValueError that says so"
_ONE_SAMPLE_MIXTURE = (
    "one sample gives a component a zero variance under hmmlearn's default "
    "(maximum-likelihood) covariance prior: a ValueError that says so"
)


def _draws_own_start(estimator):
    family = type(estimator._emission_family())
    return family.init_params is not Emission.init_params


_LDS_LENGTHS_CHECKS = (
    *_HMM_LENGTHS_CHECKS,
    "check_transformer_data_not_an_array",
    "check_transformer_general",
    "check_transformer_preserve_dtypes",
)
_PYKALMAN_UNFITTED = (
    "pykalman's KalmanFilter filters, smooths and scores with the parameters it "
    "was made with, before any fit (bayeskit's KalmanFilter too)"
)


def _answers_unfitted(estimator) -> bool:
    """Whether a fresh copy says it is fitted (a model that predicts with
    the parameters it was made with)."""
    try:
        check_is_fitted(clone(estimator))
    except NotFittedError:
        return False
    return True


# What an estimator fails on purpose is asked of the estimator (its base, its
# tags, its parameters, its family), never of its concrete class: a new one
# gets the reasons of what it is from its line in bayeskit/__init__.py alone.
def _sequence_model_failures(estimator):
    expected = {
        "check_methods_sample_order_invariance": _SEQUENCE,
        "check_methods_subset_invariance": _SEQUENCE,
        "check_fit_score_takes_y": _LENGTHS_NAME,
    }
    transformer = hasattr(estimator, "transform")
    checks = _LDS_LENGTHS_CHECKS if transformer else _HMM_LENGTHS_CHECKS
    expected.update(dict.fromkeys(checks, _LENGTHS))
    if _answers_unfitted(estimator):
        expected["check_estimators_unfitted"] = _PYKALMAN_UNFITTED
        expected["check_fit_check_is_fitted"] = _PYKALMAN_UNFITTED
    if transformer:
        return expected
    params = estimator.get_params()
    # A singular full covariance is factored with min_covar on its
    # diagonal (as hmmlearn's densities), so a full GMMHMM fits one sample.
    full = params.get("covariance_type") == "full"
    counts = public_estimators.support(estimator) in ("counts", "fixed_counts")
    if counts and not getattr(estimator, "_moved_into_support", False):
        expected["check_fit2d_1sample"] = _NOT_COUNTS
    elif "n_mix" in params and not full:
        expected["check_fit2d_1sample"] = _ONE_SAMPLE_MIXTURE
    family = getattr(estimator, "_emission_family", None)
    if family is not None and _draws_own_start(estimator):
        # Two states from one row: the family's own start is degenerate,
        # which the y in lengths' place hides behind the lengths error
        # (a k-means start says n_samples=1 first).
        expected["check_fit2d_1sample"] = _LENGTHS
    return expected


def expected_failed_checks(estimator):
    """Checks an estimator fails on purpose, each with its reason."""
    if public_estimators.reads_steps(estimator):
        return _sequence_model_failures(estimator)
    if public_estimators.is_network(estimator):
        if not has_fit_parameter(estimator, "sample_weight"):
            return {}  # the weight checks do not run
        return {"check_sample_weight_equivalence_on_dense_data": _FIRST_SEEN}
    tags = estimator.__sklearn_tags__()
    params = estimator.get_params()
    if tags.estimator_type == "density_estimator" and (
        (params.get("n_components") or 1) > 1
    ):
        return {"check_sample_weight_equivalence_on_dense_data": _EM_START}
    if (
        tags.estimator_type == "classifier"
        and "reg_param" in params
        and params.get("covariance_prior_weight") == 0
    ):
        return {
            "check_sample_weights_shape": _QDA_TINY,
            "check_sample_weights_not_overwritten": _QDA_TINY,
            "check_sample_weight_equivalence_on_dense_data": _QDA_TINY,
        }
    return {}


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


@pytest.mark.parametrize("name", _HMM_LENGTHS_CHECKS)
@pytest.mark.parametrize("kwargs", [{}, {"n_components": 2, "n_mix": 2}])
def test_hmm_checks_with_y_by_keyword(name, kwargs):
    """The checks that pass a target in hmmlearn's lengths place, on GMMHMM
    with the target by keyword: they pass."""
    estimator = _KeywordY(**kwargs, covariance_type="full")
    base = name.split("(")[0]
    extra = {"readonly_memmap": True} if "(readonly_memmap=True)" in name else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        getattr(ec, base)("_KeywordY", estimator, **extra)


class _KeywordYLDS(LinearGaussianSSM):
    """LinearGaussianSSM taking scikit-learn's y positionally, as the checks pass it."""

    def fit(self, X, y=None, **kw):
        return super().fit(X, y=y, **kw)

    def score(self, X, y=None, **kw):
        return super().score(X, y=y, **kw)

    def partial_fit(self, X, y=None, **kw):
        return super().partial_fit(X, y=y, **kw)


@pytest.mark.parametrize(
    # NaN cells are data (allow_nan): scikit-learn does not run its NaN check.
    "name",
    [n for n in _LDS_LENGTHS_CHECKS if n != "check_estimators_nan_inf"],
)
def test_lds_checks_with_y_by_keyword(name):
    """The checks that pass a target in hmmlearn's lengths place, on
    LinearGaussianSSM with the target by keyword: they pass."""
    estimator = _KeywordYLDS(2)
    base = name.split("(")[0]
    extra = {"readonly_memmap": True} if "(readonly_memmap=True)" in name else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        getattr(ec, base)("_KeywordYLDS", estimator, **extra)


# -- models over every registered family --------------------------------------------
# scikit-learn's checks draw real numbers (non-negative ones for estimators
# that say positive_only), which a family of counts or of positive values
# refuses at its boundary. These run every check on the models over each
# family with their numeric input moved into the family's support on the way
# in (counts rounded, positive values shifted off zero): the estimator's own
# logic, on the data it models. A family registered by name (a module of
# bayeskit.emissions) joins here with no edit.
_INTO_SUPPORT = {  # negative values stay negative: their checks want an error
    "real": lambda v: v,
    "nonnegative": lambda v: v,
    "positive": lambda v: np.where(v >= 0, v + 0.5, v),
    "counts": np.round,
}


def _into_support(X, support):
    if hasattr(X, "columns"):  # a DataFrame stays one
        moved = _into_support(X.to_numpy(), support)
        return X if moved is X else type(X)(moved, columns=X.columns, index=X.index)
    if not _is_arraylike_not_scalar(X):
        return X
    try:
        values = np.asarray(X)
        if np.iscomplexobj(values):
            return X
        values = values.astype(float)
    except (TypeError, ValueError):  # not numbers: the estimator says so
        return X
    if np.isinf(values).any() or np.isnan(values).all():
        return values  # the checks of bad values keep them
    return _INTO_SUPPORT[support](values)


def _support(self):
    return self._emission_family().support


def _fit(self, X, y=None, **kwargs):
    return super(type(self), self).fit(_into_support(X, _support(self)), y, **kwargs)


def _moved(name, with_y):
    if with_y:

        def method(self, X, y=None, **kwargs):
            parent = getattr(super(type(self), self), name)
            return parent(_into_support(X, _support(self)), y, **kwargs)

    else:

        def method(self, X, *args, **kwargs):
            parent = getattr(super(type(self), self), name)
            return parent(_into_support(X, _support(self)), *args, **kwargs)

    method.__name__ = name
    return method


def _in_support(base):
    """``base`` whose methods read their numeric ``X`` moved into the
    family's support; a module-level class of this module (so it pickles)."""
    name = f"{base.__name__}InSupport"
    if name in globals():
        return globals()[name]
    namespace = {
        "__module__": __name__,
        "__qualname__": name,
        "fit": _fit,
        "_moved_into_support": True,
    }
    reads_x = ("predict", "predict_proba", "predict_log_proba", "score_samples")
    for method in ("partial_fit", "fit_predict", "score"):
        if hasattr(base, method):
            namespace[method] = _moved(method, with_y=True)
    for method in (*reads_x, "predict_joint_log_proba", "summarize", "decode"):
        if hasattr(base, method):
            namespace[method] = _moved(method, with_y=False)
    cls = type(name, (base,), namespace)
    globals()[name] = cls
    return cls


def _family_estimators():
    """The composed models over every registered family but the Gaussian
    (in ESTIMATORS), and every public estimator over a family outside the
    reals (PoissonMixture), from the package's names."""
    composed = [
        _in_support(cls)(emission=family, **kwargs)
        for family in family_names()
        if family != "gaussian"
        for cls, kwargs in (
            (MixtureModel, {"n_components": 2}),
            (NaiveBayes, {}),
            (HiddenMarkovModel, {"n_components": 2}),
        )
    ]
    public = [
        _in_support(cls)(
            **({"n_components": 2} if "n_components" in _params(cls) else {})
        )
        for cls in public_estimators.classes()
        if _outside_the_reals(cls)
    ]
    return composed + public


FAMILY_ESTIMATORS = _family_estimators()


def test_every_public_estimator_is_checked():
    checked = {type(e) for e in ESTIMATORS} | {
        type(e).__mro__[1] for e in FAMILY_ESTIMATORS
    }
    assert set(public_estimators.classes()) <= checked


@parametrize_with_checks(
    FAMILY_ESTIMATORS, expected_failed_checks=expected_failed_checks
)
def test_models_of_every_family_are_sklearn_compatible(estimator, check):
    check(estimator)
