"""Regression tests of the estimators' boundaries: labels, weights, markers of
unlabelled rows and the mixtures' scoring and sampling arguments. Bad input is
a ValueError or TypeError naming the argument, raised by bayeskit."""

import inspect
import warnings

import numpy as np
import pandas as pd
import public_estimators
import pytest
import scipy.sparse as sp
from sklearn.base import is_classifier

import bayeskit as bk


def _classifiers():
    out = []
    for name in bk.__all__:
        cls = getattr(bk, name)
        if inspect.isclass(cls):
            try:
                if is_classifier(cls()):
                    out.append(cls)
            except TypeError:
                continue
    return out


CLASSIFIERS = _classifiers()


def _data(cls, rng, n=24):
    """Data every classifier reads: counts (read as numbers or categories), or
    a list of short sequences for the sequence classifier."""
    if public_estimators.classifies_sequences(cls()):
        return [rng.integers(0, 3, size=5) for _ in range(n)]
    return rng.poisson(3, size=(n, 3)).astype(float)


def test_every_classifier_is_found():
    assert len(CLASSIFIERS) >= 10


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_y_mixing_text_and_numbers_is_an_error_naming_y(cls, rng):
    X = _data(cls, rng)
    for y in (
        np.array([1, "a"] * 12, dtype=object),
        [0.5, "b", "c"] * 8,
        np.array([b"x", 2] * 12, dtype=object),
    ):
        with pytest.raises(ValueError, match="y mixes text and non-text"):
            cls().fit(X, y)


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_sample_weight_of_text_is_a_type_error_naming_it(cls, rng):
    """Including text numpy would parse ('2'): weights are numbers."""
    X = _data(cls, rng)
    y = [0, 1] * 12
    for sw in (["a"] * 24, ["2"] * 24, np.array([1.0, "x"] * 12, dtype=object)):
        with pytest.raises(TypeError, match="sample_weight must hold numbers"):
            cls().fit(X, y, sample_weight=sw)


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_text_marker_spelling_an_integer_label_is_an_error_naming_unlabeled(cls, rng):
    """``unlabeled='-1'`` with integer labels used to mark nothing, and -1
    became a class."""
    if "unlabeled" not in cls().get_params():
        pytest.skip("no unlabeled parameter")
    X = _data(cls, rng)
    y = np.array([0, 1, -1, 1] * 6)
    with pytest.raises(ValueError, match=r"unlabeled='-1'.*write unlabeled=-1"):
        cls(unlabeled="-1").fit(X, y)
    with pytest.raises(ValueError, match=r"unlabeled=-1 .*write unlabeled='-1'"):
        cls(unlabeled=-1).fit(X, y.astype(str))
    # A text marker that spells no label marks no row: a warning, then the
    # supervised fit, equal to the fit without the marker.
    y = np.array([0, 1] * 12)
    with pytest.warns(UserWarning, match="unlabeled='\\?' .* can mark no row"):
        with_marker = cls(unlabeled="?").fit(X, y)
    if cls is bk.HMMClassifier:
        return
    np.testing.assert_array_equal(
        with_marker.predict_proba(X), cls().fit(X, y).predict_proba(X)
    )


# -- the Gaussian mixtures' score and sample ---------------------------------

MIXTURES = [bk.GaussianMixture, bk.BayesianGaussianMixture]


@pytest.mark.parametrize("cls", MIXTURES, ids=lambda c: c.__name__)
def test_mixture_score_checks_sample_weight(cls, rng):
    X = rng.normal(size=(40, 2))
    model = cls(n_components=2, random_state=0).fit(X)
    with pytest.raises(ValueError, match="sample_weight"):
        model.score(X, sample_weight=-np.ones(40))
    with pytest.raises(ValueError, match="sample_weight"):
        model.score(X, sample_weight=np.ones(39))
    with pytest.raises(TypeError, match="sample_weight"):
        model.score(X, sample_weight=["1"] * 40)
    w = rng.uniform(0, 3, size=40)
    np.testing.assert_allclose(
        model.score(X, sample_weight=w),
        np.sum(w * model.score_samples(X)) / w.sum(),
        rtol=1e-12,
    )


@pytest.mark.parametrize("cls", MIXTURES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("n", [2.5, 3.0, "3", True])
def test_mixture_sample_takes_an_integer_count(cls, n, rng):
    model = cls(n_components=2, random_state=0).fit(rng.normal(size=(40, 2)))
    with pytest.raises(TypeError, match="n_samples"):
        model.sample(n)
    assert model.sample(np.int64(3))[0].shape == (3, 2)


def test_select_mixture_with_no_candidate_names_the_parameter(rng):
    X = rng.normal(size=(30, 2))
    with pytest.raises(ValueError, match="n_components must hold"):
        bk.select_mixture(X, n_components=[])
    with pytest.raises(ValueError, match="covariance_types must hold"):
        bk.select_mixture(X, covariance_types=())


def test_select_mixture_reads_one_pass_iterables_for_every_type(rng):
    """A generator of component counts used to be exhausted by the first
    covariance type: every (count, type) pair is a candidate."""
    X = rng.normal(size=(30, 2))
    table, _ = bk.select_mixture(
        X, (k for k in (1, 2)), iter(["full", "diag"]), random_state=0
    )
    assert sorted(zip(table.n_components, table.covariance_type)) == [
        (1, "diag"),
        (1, "full"),
        (2, "diag"),
        (2, "full"),
    ]


# -- sparse counts in every scipy format, duplicates included -----------------


def _duplicated(rng, n, d, fmt):
    """A random count matrix with duplicate entries (non-canonical) in
    ``fmt``, and its dense sum."""
    nnz = 3 * n
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, d, nnz)
    vals = rng.integers(1, 3, nnz).astype(float)
    dense = np.zeros((n, d))
    np.add.at(dense, (rows, cols), vals)
    if fmt in ("csr", "csc"):
        major, minor = (rows, cols) if fmt == "csr" else (cols, rows)
        order = np.argsort(major, kind="stable")
        indptr = np.searchsorted(
            major[order], np.arange((n if fmt == "csr" else d) + 1)
        )
        cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
        X = cls((vals[order], minor[order], indptr), shape=(n, d))
    else:
        X = sp.coo_matrix((vals, (rows, cols)), shape=(n, d))
    return X, dense


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize(
    "cls", [bk.BernoulliNB, bk.MultinomialNB, bk.ComplementNB], ids=lambda c: c.__name__
)
def test_duplicate_sparse_entries_read_as_their_sum(cls, fmt, rng):
    """A non-canonical matrix means what scipy's arithmetic and ``toarray``
    say: duplicates summed (BernoulliNB read them one by one, so a cell of
    1 + 1 was not above ``binarize=1.5``). The caller's matrix is not touched."""
    for seed in range(10):
        r = np.random.default_rng(seed)
        X, dense = _duplicated(r, 30, 6, fmt)
        if fmt != "coo":
            assert not X.has_canonical_format
        before = (X.data.copy(), (X.row if fmt == "coo" else X.indices).copy())
        y = r.integers(0, 2, 30)
        kw = {"binarize": 1.5} if cls is bk.BernoulliNB else {}
        sparse_fit = cls(**kw).fit(X, y)
        dense_fit = cls(**kw).fit(dense, y)
        np.testing.assert_allclose(
            sparse_fit.feature_log_prob_, dense_fit.feature_log_prob_, rtol=1e-12
        )
        np.testing.assert_allclose(
            sparse_fit.predict_proba(X), dense_fit.predict_proba(dense), rtol=1e-10
        )
        np.testing.assert_array_equal(X.data, before[0])
        np.testing.assert_array_equal((X.row if fmt == "coo" else X.indices), before[1])


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "bsr", "lil", "dok", "dia"])
@pytest.mark.parametrize("array", [False, True], ids=["matrix", "array"])
def test_bernoulli_reads_every_sparse_format(fmt, array, rng):
    dense = rng.poisson(0.7, size=(25, 5)).astype(float)
    X = (sp.csr_array if array else sp.csr_matrix)(dense).asformat(fmt)
    y = rng.integers(0, 3, 25)
    got = bk.BernoulliNB(binarize=0.5).fit(X, y)
    want = bk.BernoulliNB(binarize=0.5).fit(dense, y)
    np.testing.assert_allclose(got.feature_log_prob_, want.feature_log_prob_)
    np.testing.assert_allclose(got.predict_proba(X), want.predict_proba(dense))


# -- structure learning's edge lists -----------------------------------------


@pytest.mark.parametrize(
    "param", ["black_list", "white_list", "fixed_edges", "start_dag"]
)
def test_hill_climb_edge_lists_name_the_parameter(param, rng):
    """A flat list of names, or a pair holding an unhashable name, used to
    fail inside Python (``len()`` of an int, an unhashable type) without
    naming the parameter."""
    from bayeskit.network import HillClimbSearch

    data = pd.DataFrame(rng.integers(0, 2, (60, 3)), columns=[1, 2, 3])
    with pytest.raises(ValueError, match=f"{param} must hold \\(parent, child\\)"):
        HillClimbSearch(**{param: [1, 2]}).fit(data)
    for bad in ([(1, [2])], [([1], 2)], [({1: 2}, 3)]):
        with pytest.raises(TypeError, match=f"{param} must hold .* variable names"):
            HillClimbSearch(**{param: bad}).fit(data)
    # the same edges written well are read
    HillClimbSearch(**{param: [(1, 2)]}).fit(data)


# -- nothing observed: a class, a feature, the whole of X --------------------

GAUSSIAN_CLASSIFIERS = [
    bk.LinearDiscriminantAnalysis,
    bk.QuadraticDiscriminantAnalysis,
    bk.GaussianMixtureClassifier,
    bk.MixedNB,
    bk.GaussianNB,
]


@pytest.mark.parametrize("cls", GAUSSIAN_CLASSIFIERS, ids=lambda c: c.__name__)
def test_a_class_with_no_observed_value_is_an_error_naming_it(cls):
    """Such a class used to fit silently and predict its prior (0.5 / 0.5)."""
    for seed in range(5):
        r = np.random.default_rng(seed)
        X = r.normal(size=(30, 3))
        y = r.choice(np.array(["a", "b", "c"]), 30)
        y[:3] = ["a", "b", "c"]
        blank = r.choice(["a", "b", "c"])
        X[y == blank] = np.nan
        X[r.random(X.shape) < 0.1] = np.nan  # scattered gaps elsewhere
        X[np.flatnonzero(y != blank)[:3], 0] = 0.5  # ... never a whole class
        with pytest.raises(ValueError, match=f"class '{blank}' has no observed"):
            cls().fit(X, y)
        # a row of weight 0 observed in that class does not count
        keep = np.flatnonzero(y == blank)[0]
        X[keep] = 1.0
        sw = np.ones(30)
        sw[keep] = 0.0
        with pytest.raises(ValueError, match=f"class '{blank}' has no observed"):
            cls().fit(X, y, sample_weight=sw)


@pytest.mark.parametrize("cls", [bk.GaussianMixture], ids=lambda c: c.__name__)
def test_a_mixture_with_nothing_observed_is_an_error(cls, rng):
    """All-NaN data used to "fit" with zero means; a column never observed
    was given the mean 0 from nothing."""
    with pytest.raises(ValueError, match="X has no observed value"):
        cls(n_components=2).fit(np.full((10, 2), np.nan))
    X = rng.normal(size=(20, 3))
    X[:, 1] = np.nan
    with pytest.raises(ValueError, match=r"feature\(s\) \[1\] of X have no observed"):
        cls(n_components=2).fit(X)


# -- semi-supervised EM: the objective's guarantee and its exception ---------


def test_complement_nb_em_objective_is_documented_as_not_monotone():
    """ComplementNB's M-step (complement counts) is not the maximiser of the
    objective it reports, so its EM objective can decrease (it does on every
    draw below); MultinomialNB's, a true EM on the same data, never does. The
    docs say which is which."""
    decreases = {bk.ComplementNB: 0, bk.MultinomialNB: 0}
    for seed in range(15):
        r = np.random.default_rng(seed)
        X = r.poisson(r.uniform(0.2, 3, size=(3, 8))[r.integers(0, 3, 60)])
        y = r.integers(0, 3, 60)
        y[r.random(60) < 0.7] = -1
        for cls in decreases:
            bounds = np.asarray(cls(unlabeled=-1).fit(X, y).em_lower_bounds_)
            step = np.diff(bounds)
            decreases[cls] += bool((step < -1e-9 * np.abs(bounds[1:])).any())
    assert decreases[bk.MultinomialNB] == 0
    assert decreases[bk.ComplementNB] > 0
    assert "can decrease" in bk.ComplementNB.__doc__
    assert "not EM on a likelihood" in bk.ComplementNB.__doc__


# -- hidden Markov models: params letters, prior shapes, lengths, ragged lists --
HMMS = [bk.GaussianHMM, bk.CategoricalHMM, bk.PoissonHMM, bk.GMMHMM, bk.MultinomialHMM]


def _hmm_data(cls, rng):
    if cls is bk.CategoricalHMM:
        return rng.integers(0, 3, size=(40, 1))
    if cls in (bk.PoissonHMM, bk.MultinomialHMM):
        return rng.integers(0, 4, size=(40, 3))
    return rng.normal(size=(40, 2))


@pytest.mark.parametrize("cls", HMMS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", ["params", "init_params"])
def test_hmm_letters_name_a_parameter(cls, name, rng):
    X = _hmm_data(cls, rng)
    letters = "".join(cls._param_names) + "qz"
    with pytest.raises(
        ValueError, match=rf"{name} has unknown letter\(s\) \['q', 'z'\]"
    ):
        cls(n_components=2, **{name: letters}).fit(X)
    cls(n_components=2, n_iter=2, **{name: "".join(cls._param_names)}).fit(X)


@pytest.mark.parametrize("cls", HMMS, ids=lambda c: c.__name__)
def test_hmm_chain_prior_shapes_are_checked(cls, rng):
    X = _hmm_data(cls, rng)
    with pytest.raises(ValueError, match=r"startprob_prior must be .* shape \(2,\)"):
        cls(n_components=2, startprob_prior=np.ones(5)).fit(X)
    with pytest.raises(ValueError, match=r"transmat_prior must be .* shape \(2, 2\)"):
        cls(n_components=2, transmat_prior=np.ones((3, 3))).fit(X)
    # what broadcasts, as in hmmlearn, is a prior: one per row of the table
    row = cls(n_components=2, n_iter=1, transmat_prior=np.array([[2.0, 3.0]]))
    row.fit(X)


@pytest.mark.parametrize("lengths", [[20.0, 20.0], np.array([20.0, 20.0])])
def test_hmm_lengths_of_floats_are_an_error(lengths, rng):
    X = _hmm_data(bk.CategoricalHMM, rng)
    with pytest.raises(ValueError, match=r"lengths .* of dtype float64"):
        bk.CategoricalHMM(2).fit(X, lengths)


def test_hmm_sequences_of_different_widths_are_an_error_naming_x(rng):
    seqs = [rng.normal(size=(10, 2)), rng.normal(size=(12, 3))]
    with pytest.raises(ValueError, match=r"different numbers of features \(\[2, 3\]\)"):
        bk.GaussianHMM(2).fit(seqs)


@pytest.mark.parametrize(
    "cls", [bk.PoissonHMM, bk.MultinomialHMM], ids=lambda c: c.__name__
)
def test_hmm_counts_beyond_exact_floats_are_an_error_naming_x(cls):
    # the fuzzer's case: a start from the counts' moments overflowed to inf
    with pytest.raises(ValueError, match=r"X holds counts above 2\*\*53"):
        cls(n_components=2, n_iter=3).fit(np.full((3, 4), 1e300))
    with warnings.catch_warnings():  # a state no step reaches: not the point here
        warnings.simplefilter("ignore")
        cls(n_components=2, n_iter=3).fit(np.full((3, 4), 2.0**52))  # exact: fitted


def test_sampling_poisson_rates_beyond_numpys_limit_names_them(rng):
    # the fuzzer's case: numpy's own 'lam value too large' escaped from sample
    hmm = bk.PoissonHMM(2, n_iter=1, random_state=0).fit(rng.poisson(3.0, (30, 2)))
    hmm.lambdas_ = np.full((2, 2), 3e300)
    with pytest.raises(ValueError, match="lambdas_ up to 3e"):
        hmm.sample(5, random_state=0)
    hmm.lambdas_ = np.full((2, 2), 1e18)  # within numpy's limit: drawn
    assert hmm.sample(5, random_state=0)[0].min() > 9e17
    family = bk.emissions.Poisson(2)
    params = bk.emissions.PoissonParams(np.full((2, 2), 3e300))
    with pytest.raises(ValueError, match="lambdas up to 3e"):
        family.sample(params, np.array([0, 1]), np.random.RandomState(0))


@pytest.mark.parametrize("cls", [bk.MultinomialNB, bk.ComplementNB])
def test_counts_summing_past_the_float_maximum_are_an_error_naming_x(cls):
    # A class whose counts sum past 1.8e308 has infinite totals, and its
    # log-probabilities were NaN (log inf - log inf) with numpy's "invalid
    # value" warning escaping; scikit-learn returns NaN there too. The sum
    # is taken once, so one class is enough; partial_fit keeps the model.
    big = np.finfo(np.float64).max
    for X, weight in [
        (np.array([[big, 0.0], [big, 1.0]]), None),
        (np.array([[big / 2, big / 2], [0.0, 0.0]]), np.full(2, 3.0)),
    ]:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(ValueError, match=r"counts of X .* float64 maximum"):
                cls().fit(X, [0, 0], sample_weight=weight)
    model = cls().partial_fit(np.array([[big / 2, 1.0]]), [0], classes=[0, 1])
    before = model.feature_count_.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="counts of X"):
            model.partial_fit(np.array([[big, 1.0]]), [0])
    np.testing.assert_array_equal(model.feature_count_, before)
    X = np.array([[big / 2, big / 2], [0.0, 0.0]])  # a total of exactly the max
    proba = cls().fit(X, [0, 0]).predict_proba(X)
    assert np.isfinite(proba).all()


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_categorical_text_read_as_numbers_passes_the_finiteness_test(cls, rng):
    """scikit-learn's validation hands a DataFrame's categorical column of
    text back unread: its "nan" and "inf" became NaN and inf counts past the
    finiteness test (a NaN probability, found by the thorough fuzzing
    profile). Now every classifier refuses them, naming X, reads them as
    missing where it takes NaN, or reads the column as categories: no NaN
    probability either way."""
    if public_estimators.classifies_sequences(cls()):
        pytest.skip("reads sequences, not tables")
    X = _data(cls, rng)
    y = [0, 1] * 12
    est = cls().fit(X, y)
    for text in ("nan", "inf", "-inf"):
        new = pd.DataFrame({"x0": pd.Categorical([text, "1"])})
        new["x1"], new["x2"] = 1.0, 2.0
        new.columns = range(3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                proba = est.predict_proba(new)
            except ValueError as exc:
                assert "X" in str(exc)
                continue
        assert not np.isnan(proba).any(), (text, proba)
    if cls in (bk.MultinomialNB, bk.ComplementNB):
        new = pd.DataFrame({"a": pd.Categorical(["nan", "1"]), "b": [1.0, 2.0]})
        with pytest.raises(ValueError, match="Input X contains NaN"):
            cls().fit(new, [0, 1])
