"""Regression tests of the validation boundary: bad input is our ValueError or
TypeError naming what is wrong, raised by bayeskit, never numpy's message."""

import warnings

import numpy as np
import pandas as pd
import pytest

import bayeskit as bk

NUMERIC_MODELS = [
    bk.GaussianNB,
    bk.LinearDiscriminantAnalysis,
    bk.QuadraticDiscriminantAnalysis,
    bk.GaussianMixtureClassifier,
]


@pytest.mark.parametrize("cls", NUMERIC_MODELS, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "X",
    [
        pd.DataFrame({"a": ["1.0", "True", "x", "2"], "b": [1.0, 2.0, 3.0, 4.0]}),
        np.array([["1", "a"], ["2", "b"], ["3", "c"], ["4", "d"]], dtype=object),
        pd.DataFrame({"a": pd.array([1.0, None, 2.0, 3.0], dtype="string")}),
    ],
    ids=["text-frame", "text-object-array", "string-extension"],
)
def test_text_into_a_numeric_model_is_our_error_naming_X(cls, X):
    """Text where numbers are needed: a ValueError that names X and says what
    to do (scikit-learn lets numpy's "could not convert string to float"
    through for these forms)."""
    y = [0, 1, 0, 1]
    with pytest.raises((ValueError, TypeError), match="X must hold numbers") as info:
        cls().fit(X, y)
    assert "categorical" in str(info.value)
    assert "bayeskit" in info.traceback[-1].path.parts


def test_text_into_a_fitted_model_is_the_same_error():
    """The prediction boundary says the same as fit."""
    est = bk.GaussianNB().fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
    with pytest.raises(ValueError, match="X must hold numbers"):
        est.predict(np.array([["a"]], dtype=object))


def test_numbers_as_text_of_numbers_still_work_where_scikit_learn_accepts_them():
    """An object array of numeric strings converts, as in scikit-learn."""
    X = np.array([["1.5"], ["2.5"], ["0.5"], ["3.0"]], dtype=object)
    ours = bk.GaussianNB().fit(X, [0, 1, 0, 1])
    ref = bk.GaussianNB().fit(X.astype(float), [0, 1, 0, 1])
    np.testing.assert_array_equal(ours.theta_, ref.theta_)


def _validated(**params):
    from numbers import Integral, Real

    from sklearn.base import BaseEstimator

    from bayeskit._validation import ElementwiseInterval

    class Est(BaseEstimator):
        _parameter_constraints = {
            "alpha": [ElementwiseInterval(Real, 0, None, closed="neither")],
            "counts": [ElementwiseInterval(Integral, 1, None, closed="left"), None],
        }

        def __init__(self, alpha=1.0, counts=None):
            self.alpha = alpha
            self.counts = counts

    Est(**params)._validate_params()


@pytest.mark.parametrize(
    "params",
    [
        {"alpha": 0.5},
        {"alpha": [0.5, 2]},
        {"alpha": np.full((2, 3), 1.5)},
        {"alpha": np.float32(2.0)},
        {"counts": [1, 4]},
        {"counts": np.int64(3)},
    ],
)
def test_elementwise_constraints_accept_scalars_and_arrays_in_range(params):
    """A scalar or an array whose every element is in range passes."""
    _validated(**params)


@pytest.mark.parametrize(
    "params, name",
    [
        ({"alpha": [1.0, -1.0]}, "alpha"),
        ({"alpha": [[1.0], [np.nan]]}, "alpha"),
        ({"alpha": np.inf}, "alpha"),
        ({"alpha": []}, "alpha"),
        ({"alpha": ["a"]}, "alpha"),
        ({"counts": [-1, 2]}, "counts"),
        ({"counts": [1.5, 2]}, "counts"),
    ],
)
def test_elementwise_constraints_name_the_parameter_of_a_bad_element(params, name):
    """One bad element is the boundary's ValueError naming the parameter."""
    with pytest.raises(ValueError, match=f"'{name}' parameter .* array-like of such"):
        _validated(**params)


@pytest.mark.parametrize("cls", [bk.CategoricalNB, bk.TreeAugmentedNB, bk.MixedNB])
def test_a_frame_without_columns_is_the_no_features_error(cls):
    """A DataFrame with rows but no columns: scikit-learn's no-feature error,
    not an IndexError from inside the encoder."""
    with pytest.raises(ValueError, match="0 feature"):
        cls().fit(pd.DataFrame(index=range(4)), [0, 1, 0, 1])


def test_a_negative_min_categories_element_is_an_error_naming_it():
    """min_categories=[-1, 2] is refused as the scalar -1 would be."""
    with pytest.raises(ValueError, match="min_categories"):
        bk.CategoricalNB(min_categories=[-1, 2]).fit([[0, 1], [1, 0]], [0, 1])


@pytest.mark.parametrize("cls", NUMERIC_MODELS, ids=lambda c: c.__name__)
def test_float16_infinity_is_the_finiteness_error_without_numpy_warnings(cls):
    """float16 data holding inf and -inf: the finiteness error, and no
    'invalid value encountered' warning from the test that finds it."""
    X = np.array([[0.0, np.inf], [1.0, -np.inf], [2.0, 0.0], [3.0, 1.0]], np.float16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="infinity"):
            cls().fit(X, [0, 1, 0, 1])


def test_hmm_classifier_scores_a_symbol_only_one_class_saw():
    """Text symbols: every class's HMM shares one alphabet, so a symbol only
    class 'b' showed is scored by 'a' too; a symbol never seen is our error."""
    X = [list("xyxy"), list("yxyy"), list("xzzy"), list("zzxy")]
    clf = bk.HMMClassifier(bk.CategoricalHMM(random_state=0)).fit(X, list("aabb"))
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.predict(X), list("aabb"))
    for model in clf.models_:
        assert model.emissionprob_.shape[1] == 3
    with pytest.raises(ValueError, match="'q' was not seen in fit"):
        clf.predict([list("xq")])


@pytest.mark.parametrize(
    "template, name",
    [
        (lambda: bk.CategoricalHMM(n_iter=-1), "n_iter"),
        (lambda: bk.GaussianHMM(n_components=0), "n_components"),
    ],
)
def test_hmm_classifier_validates_its_template_when_it_fits(template, name):
    """A nested estimator's bad parameter is reported by the outer fit,
    never a classifier that trained nothing."""
    X = [[0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 0, 1]]
    with pytest.raises(ValueError, match=f"'{name}' parameter"):
        bk.HMMClassifier(template()).fit(X, [0, 0, 1, 1])


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: bk.CategoricalHMM(2, startprob_prior=[-1.0, 2.0]), "startprob_prior"),
        (
            lambda: bk.CategoricalHMM(2, transmat_prior=[[1, 1], [1, np.nan]]),
            "transmat_prior",
        ),
        (
            lambda: bk.CategoricalHMM(2, emissionprob_prior=[0.0, 1.0]),
            "emissionprob_prior",
        ),
        (lambda: bk.PoissonHMM(2, lambdas_prior=[1.0, -1.0]), "lambdas_prior"),
        (lambda: bk.MultinomialHMM(2, n_trials=[2, -1, 2]), "n_trials"),
    ],
)
def test_array_valued_hmm_priors_are_validated_element_by_element(make, name):
    """A negative, zero or NaN element of an array-valued prior is the
    boundary's error naming the parameter (it used to pin the parameter)."""
    X = [[0], [1], [0]] if name != "n_trials" else [[1, 1], [2, 0], [0, 2]]
    with pytest.raises(ValueError, match=f"'{name}' parameter"):
        make().fit(X)


@pytest.mark.parametrize("make", [lambda: bk.GaussianHMM(2), lambda: bk.GMMHMM(2)])
def test_fewer_steps_than_states_is_our_error_naming_n_components(make):
    """One step for two states: our ValueError naming n_components, not
    scikit-learn's k-means message from inside the initialisation."""
    with pytest.raises(ValueError, match="n_components=2") as info:
        make().fit([[0.5, 1.0]])
    assert "bayeskit" in info.traceback[-1].path.parts


@pytest.mark.parametrize("cls", [bk.CategoricalNB, bk.TreeAugmentedNB])
def test_float16_categories_are_read_as_their_values(cls):
    """float16 columns (which pandas cannot index) give the model of the same
    values in float32."""
    X = np.array([[0.125, 1.0], [0.5, 1.0], [0.125, 0.0], [0.5, 0.0]], np.float16)
    y = [0, 1, 0, 1]
    ours = cls(categories="observed").fit(X, y).predict_proba(X)
    ref = cls(categories="observed").fit(X.astype(np.float32), y).predict_proba(X)
    np.testing.assert_array_equal(ours, ref)


@pytest.mark.parametrize(
    "make",
    [
        bk.GaussianNB,
        bk.LinearDiscriminantAnalysis,
        bk.QuadraticDiscriminantAnalysis,
        lambda: bk.GaussianMixture(2),
    ],
)
def test_values_whose_squares_overflow_are_our_error_naming_the_feature(make):
    """Beyond 1e150 a Gaussian model cannot square a value in float64: our
    ValueError naming the feature, in fit and in prediction, never a NaN."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    y = np.arange(20) % 2
    far = X.copy()
    far[3, 2] = -1e300
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match="feature 2 of X"):
            make().fit(far, y)
        est = make().fit(X, y)
        with pytest.raises(ValueError, match="feature 2 of X"):
            est.predict_proba(far)


# -- causes the fuzzer found (tests/test_fuzz.py) ---------------------------------


def test_a_factor_batch_of_no_rows_normalises_and_max_marginalises():
    """A batch axis of length 0 (no rows of evidence) is a valid factor: its
    normaliser is an empty array and its max-marginal an empty batch, the
    shapes of the one-row case with 0 rows (numpy's reshape cannot infer a
    -1 from a size of 0, which was the error)."""
    from bayeskit.graph import LogFactor

    f = LogFactor(["a", "b"], [2, 3], np.zeros((0, 2, 3)))
    normed, log_z = f.normalize()
    assert normed.log_values.shape == (0, 2, 3) and log_z.shape == (0,)
    best, argmax = f.max_marginalize(["b"])
    assert best.log_values.shape == (0, 2) and argmax["b"].shape == (0, 2)
    one = LogFactor(["a", "b"], [2, 3], np.zeros((1, 2, 3)))
    np.testing.assert_allclose(one.normalize()[1], [np.log(6.0)])


@pytest.mark.parametrize("n", [0, 2])
def test_a_junction_tree_calibrates_a_batch_of_no_rows(n):
    """Calibration, marginals and max-product with a batched factor of 0 rows
    give results with 0 rows; with 2 rows, the brute-force marginal."""
    from bayeskit.graph import DAG, JunctionTree, LogFactor

    tree = JunctionTree.from_dag(DAG([("x0", "x1")]))
    prior = LogFactor.from_probabilities(["x0"], [2], [0.3, 0.7])
    cpt = LogFactor.from_probabilities(["x0", "x1"], [2, 2], [[0.9, 0.1], [0.2, 0.8]])
    evidence = LogFactor(["x1"], [2], np.log(np.tile([1.0, 0.5], (n, 1))))
    cal = tree.calibrate([prior, cpt, evidence])
    marginal = cal.marginal(["x0"])
    assert np.shape(cal.log_evidence) == (n,) and marginal.log_values.shape == (n, 2)
    assert tree.max_product([prior, cpt, evidence]).assignment.shape == (n, 2)
    joint = np.array([0.3, 0.7])[:, None] * np.array([[0.9, 0.1], [0.2, 0.8]])
    brute = (joint * [1.0, 0.5]).sum(axis=1)
    for row in np.exp(marginal.log_values):
        np.testing.assert_allclose(row, brute / brute.sum())


@pytest.mark.parametrize("bad", ["log_startprob", "log_transmat"])
def test_chain_log_masses_beyond_exp_range_are_a_value_error(bad):
    """A log-mass beyond float64's exp range is reported as such (it used to
    overflow while formatting the message)."""
    from bayeskit.graph import forward_backward

    start = np.array([1257.3]) if bad == "log_startprob" else np.zeros(1)
    trans = np.array([[1257.3]]) if bad == "log_transmat" else np.zeros((1, 1))
    with pytest.raises(ValueError, match=bad):
        forward_backward(start, trans, np.zeros((1, 1)))


def test_mixed_nb_numeric_values_whose_squares_overflow_are_our_error():
    """As GaussianNB: the ValueError names the feature by its column in X."""
    X = pd.DataFrame({"cat": list("abab"), "num": [1e300, 0.64, 0.1, 0.2]})
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match="feature 1 of X"):
            bk.MixedNB().fit(X, [0, 0, 1, 1])


@pytest.mark.parametrize(
    "make",
    [
        lambda: bk.GaussianHMM(2, n_iter=3, random_state=0),
        lambda: bk.GMMHMM(2, n_mix=2, n_iter=3, random_state=0),
    ],
    ids=["GaussianHMM", "GMMHMM"],
)
def test_gaussian_hmm_values_whose_squares_overflow_are_our_error(make):
    X = np.random.default_rng(0).normal(size=(12, 1))
    X[0, 0] = 1e300
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match="feature 0 of X"):
            make().fit(X)


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_tree_bp_log_unary_of_plus_inf_or_nan_is_our_error(bad):
    """+inf is no log-potential (it made the log-evidence +inf and the
    marginals NaN): a ValueError naming log_unary; -inf (a zero) is valid."""
    from bayeskit.graph import TreeBP

    bp = TreeBP({"a": 2, "b": 2}, [("a", "b")], [[[0.9, 0.1], [0.2, 0.8]]])
    with pytest.raises(ValueError, match="log_unary"):
        bp.sum_product(log_unary={"a": [[0.0, bad]]})
    post = bp.sum_product(log_unary={"a": [[0.0, -np.inf]]})
    np.testing.assert_allclose(post.marginal("a"), [[1.0, 0.0]])
    np.testing.assert_allclose(post.marginal("b"), [[0.9, 0.1]])
    np.testing.assert_allclose(post.log_evidence, [0.0], atol=1e-12)  # log(0.9 + 0.1)


@pytest.mark.parametrize("cls", NUMERIC_MODELS, ids=lambda c: c.__name__)
def test_a_dataframe_without_columns_is_the_array_message_naming_X(cls):
    """scikit-learn's validation lets numpy's "at least one array or dtype is
    required" through for a DataFrame of no columns; ours is scikit-learn's
    message for an array of the same shape, naming X."""
    y = [0, 1, 0]
    with pytest.raises(ValueError, match="0 feature") as ref:
        cls().fit(np.empty((3, 0)), y)
    with pytest.raises(ValueError, match=r"0 feature\(s\).*X is a DataFrame") as ours:
        cls().fit(pd.DataFrame(index=range(3)), y)
    assert str(ours.value).startswith(str(ref.value).split(" by ")[0])
    est = cls().fit([[0.0], [1.0], [0.5], [2.0]], [0, 1, 0, 1])
    with pytest.raises(ValueError, match="X is a DataFrame"):
        est.predict(pd.DataFrame(index=range(2)))


def test_mixture_classifier_class_of_one_sample_is_an_error_naming_the_class():
    X = np.random.default_rng(0).normal(size=(5, 2))
    with pytest.raises(ValueError, match=r"class 1\b"):
        bk.GaussianMixtureClassifier().fit(X, [0, 0, 0, 0, 1])


def test_categorical_nb_object_array_of_numbers_at_prediction():
    """An object array of numbers is read as the numbers it holds; an object
    array of text where codes were fitted is our error naming the feature."""
    est = bk.CategoricalNB().fit(np.array([[0], [1]], dtype=np.int8), [0, 1])
    ours = est.predict_proba(np.array([[0.0]], dtype=object))
    np.testing.assert_allclose(ours, est.predict_proba(np.array([[0]])))
    with pytest.raises(ValueError, match="feature 0 of X"):
        est.predict_proba(np.array([["a"]], dtype=object))


def test_object_array_with_nan_names_x():
    # scikit-learn's test of object arrays says "Input contains NaN" and no more
    from bayeskit._validation import validate_data

    X = np.array([[0.0, "a"], [np.nan, "b"]], dtype=object)
    with pytest.raises(ValueError, match="Input X contains NaN: MultinomialNB"):
        validate_data(bk.MultinomialNB(), X, dtype=None)
