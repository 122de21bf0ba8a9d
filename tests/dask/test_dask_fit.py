"""Fitting on Dask collections equals fitting in memory.

The reference is always the same estimator fitted on the same rows held in
one numpy array or pandas DataFrame: the statistics are exact sums, so the
supervised models agree to 1e-10, and EM from the same start to 1e-8.
"""

import subprocess
import sys

import numpy as np
import pandas as pd
import public_estimators
import pytest

from bayeskit import (
    BayesianNetwork,
    CategoricalNB,
    GaussianMixture,
    GaussianMixtureClassifier,
    GaussianNB,
    LinearDiscriminantAnalysis,
    MixedNB,
    QuadraticDiscriminantAnalysis,
)

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

pytestmark = pytest.mark.usefixtures("sync")

TIGHT = dict(rtol=1e-10, atol=1e-12)


def gaussian_data(rng, n=600, d=3, k=3):
    y = rng.integers(0, k, n)
    X = rng.normal(size=(n, d)) + y[:, None] * 0.7
    w = rng.integers(0, 4, n).astype(float)
    return X, y, w


def categorical_data(rng, n=600, d=4, k=3):
    y = rng.integers(0, k, n)
    X = (rng.integers(0, 3, (n, d)) + y[:, None]) % 5
    w = rng.integers(0, 4, n).astype(float)
    return X, y, w


def to_dask(X, y, w, chunks=(97, 150, 33, 200, 120)):
    """Irregular row chunks (and columns split in two), y and w chunked
    differently from X."""
    n = len(X)
    rows = list(chunks)
    rows.append(n - sum(rows))
    Xd = da.from_array(X, chunks=(tuple(rows), max(1, X.shape[1] // 2)))
    return Xd, da.from_array(y, chunks=64), da.from_array(w, chunks=250)


# Every public classifier whose fit is one sum of statistics, from the
# package's names (a new one is covered from its line in bayeskit/__init__.py
# alone), and configurations whose code paths the defaults miss.
SUMMED = public_estimators.summed_classifiers()
VARIANTS = [
    lambda: GaussianNB(m=2.0, var_smoothing=1e-3),
    lambda: LinearDiscriminantAnalysis(solver="eigen", shrinkage=0.2),
    lambda: LinearDiscriminantAnalysis(solver="lsqr"),
    lambda: QuadraticDiscriminantAnalysis(store_covariance=True),
    lambda: CategoricalNB(m=0.5),
]
MAKERS = [lambda cls=cls: public_estimators.make(cls) for cls in SUMMED] + VARIANTS
IDS = [cls.__name__ for cls in SUMMED] + [f"variant{i}" for i in range(len(VARIANTS))]


def _data(make, seed, n=600):
    """The rows and labels the estimator reads, and integer weights."""
    X, y = public_estimators.data(make(), n=n, seed=seed)
    w = np.random.default_rng(seed).integers(0, 4, n).astype(float)
    return np.asarray(X), np.asarray(y), w


# Eigenvectors, defined up to their sign: a sum rounded in another order may
# flip one.
UP_TO_SIGN = ("rotations_",)


def _signed_as(v, u):
    return v * np.where(np.sum(u * v, axis=0) < 0, -1.0, 1.0)


def assert_same_attributes(a, b, names, **tol):
    for name in names:
        left, right = getattr(a, name), getattr(b, name)
        if isinstance(left, list):
            assert len(left) == len(right)
            for u, v in zip(left, right):
                v = _signed_as(v, u) if name in UP_TO_SIGN else v
                np.testing.assert_allclose(v, u, **tol, err_msg=name)
        else:
            np.testing.assert_allclose(right, left, **tol, err_msg=name)


def assert_same_fit(ref, est, X):
    """Every public fitted array, and the joint log-probabilities."""
    np.testing.assert_array_equal(est.classes_, ref.classes_)
    names = public_estimators.fitted_arrays(ref)
    assert {"class_count_", "class_log_prior_"} <= set(names)
    assert set(public_estimators.fitted_arrays(est)) == set(names)
    assert_same_attributes(ref, est, names, **TIGHT)
    np.testing.assert_allclose(
        est.predict_joint_log_proba(X), ref.predict_joint_log_proba(X), **TIGHT
    )


def test_the_summed_classifiers_are_found_from_the_public_names():
    names = {cls.__name__ for cls in SUMMED}
    assert {"GaussianNB", "LinearDiscriminantAnalysis", "CategoricalNB"} <= names
    assert {"NaiveBayes", "MixedNB", "TreeAugmentedNB", "MultinomialNB"} <= names


@pytest.mark.parametrize("make", MAKERS, ids=IDS)
def test_fit_on_dask_array_equals_fit_in_memory(make):
    X, y, w = _data(make, seed=0)
    ref = make().fit(X, y, sample_weight=w)
    est = make().fit(*to_dask(X, y, w))
    assert_same_fit(ref, est, X)


@pytest.mark.parametrize("make", MAKERS, ids=IDS)
def test_partial_fit_on_dask_chunks_equals_one_fit(make):
    if not hasattr(make(), "partial_fit"):
        pytest.skip("no partial_fit")
    X, y, w = _data(make, seed=1)
    ref = make().fit(X, y, sample_weight=w)
    est = make()
    first, second = slice(0, 250), slice(250, None)
    Xd, yd, wd = to_dask(X[first], y[first], w[first], (40,))
    est.partial_fit(Xd, yd, classes=np.unique(y), sample_weight=wd)
    Xd, yd, wd = to_dask(X[second], y[second], w[second], (100, 7))
    est.partial_fit(Xd, yd, sample_weight=wd)
    assert_same_fit(ref, est, X)


def test_first_partial_fit_takes_classes_absent_from_the_chunk(rng):
    X, y, w = gaussian_data(rng)
    keep = y < 2
    Xd, yd, wd = to_dask(X[keep], y[keep], w[keep], (50,))
    est = GaussianNB().partial_fit(Xd, yd, classes=[0, 1, 2], sample_weight=wd)
    ref = GaussianNB().partial_fit(X[keep], y[keep], [0, 1, 2], w[keep])
    np.testing.assert_array_equal(est.classes_, [0, 1, 2])
    np.testing.assert_allclose(est.class_count_, ref.class_count_, **TIGHT)


def test_categories_of_zero_weight_rows_are_left_out(rng):
    # In memory, a row of weight 0 adds no category; on Dask neither.
    X, y, w = categorical_data(rng)
    X[5] = 7
    w[5] = 0
    ref = CategoricalNB().fit(X, y, sample_weight=w)
    est = CategoricalNB().fit(*to_dask(X, y, w))
    assert [len(c) for c in est.categories_] == [len(c) for c in ref.categories_]
    assert_same_attributes(ref, est, ["feature_log_prob_"], **TIGHT)


def mixed_frame(rng, n=500):
    y = rng.choice(np.array(["no", "yes"], dtype=object), n)
    df = pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], n),
            "size": rng.normal(size=n) + (y == "yes"),
            "level": pd.Categorical(
                rng.choice(["low", "high"], n), categories=["low", "mid", "high"]
            ),
            "count": rng.normal(size=n),
        }
    )
    df.loc[3, "colour"] = None  # a missing cell
    return df, y


def test_mixed_nb_on_dask_dataframe_with_a_series_of_labels(rng):
    df, y = mixed_frame(rng)
    w = rng.integers(0, 3, len(df)).astype(float)
    ref = MixedNB().fit(df, y, sample_weight=w)
    frame = df.assign(label=y, weight=w)
    ddf = dd.from_pandas(frame, npartitions=4)
    est = MixedNB().fit(ddf[df.columns.tolist()], ddf["label"], ddf["weight"])
    np.testing.assert_array_equal(est.categorical_features_, ref.categorical_features_)
    for a, b in zip(ref.categories_, est.categories_):
        assert list(a) == list(b)
    assert list(est.feature_names_in_) == list(df.columns)
    assert_same_attributes(ref, est, ["theta_", "var_", "feature_log_prob_"], **TIGHT)
    # Prediction on the DataFrame is lazy, and the in-memory answer.
    proba = est.predict_proba(ddf[df.columns.tolist()])
    np.testing.assert_allclose(proba.compute(), ref.predict_proba(df), **TIGHT)


def test_bayesian_network_counts_on_dask_dataframe(rng):
    X, _, w = categorical_data(rng, d=4)
    df = pd.DataFrame(X, columns=list("abcd"))
    edges = [("a", "b"), ("b", "c"), ("a", "d")]
    ref = BayesianNetwork(edges).fit(df, sample_weight=w)
    ddf = dd.from_pandas(df, npartitions=5)
    wd = dd.from_pandas(pd.Series(w), npartitions=5)
    est = BayesianNetwork(edges).fit(ddf, sample_weight=wd)
    assert est.states_.keys() == ref.states_.keys()
    for v in ref.cpds_:
        np.testing.assert_allclose(est.cpds_[v], ref.cpds_[v], **TIGHT)
    scores = est.score_samples(ddf)
    assert isinstance(scores, da.Array)
    np.testing.assert_allclose(scores.compute(), ref.score_samples(df), **TIGHT)
    # partial_fit adds the counts of more chunks.
    est.partial_fit(ddf, sample_weight=wd)
    both = BayesianNetwork(edges).fit(
        pd.concat([df, df]), sample_weight=np.concatenate([w, w])
    )
    for v in ref.cpds_:
        np.testing.assert_allclose(est.cpds_[v], both.cpds_[v], **TIGHT)


# -- Gaussian mixtures --------------------------------------------------------------
def mixture_data(rng, n=800):
    centres = np.array([[0.0, 0.0, 0.0], [4.0, 0.0, 1.0], [0.0, 5.0, -2.0]])
    X = centres[rng.integers(0, 3, n)] + rng.normal(size=(n, 3))
    return X, rng.integers(1, 4, n).astype(float)


@pytest.mark.parametrize("covariance_type", ["full", "tied", "diag", "spherical"])
def test_em_on_dask_equals_em_in_memory_from_the_same_start(covariance_type, rng):
    X, w = mixture_data(rng)
    start = GaussianMixture(
        3, covariance_type=covariance_type, max_iter=2, random_state=1
    )
    with pytest.warns(Warning):
        start.fit(X[:100])
    params = dict(
        n_components=3,
        covariance_type=covariance_type,
        weights_init=start.weights_,
        means_init=start.means_,
        precisions_init=start.precisions_,
        tol=1e-8,
        max_iter=40,
        covariance_prior="empirical",
        covariance_prior_weight=0.5,
    )
    ref = GaussianMixture(**params).fit(X, sample_weight=w)
    est = GaussianMixture(**params).fit(
        da.from_array(X, chunks=(150, 2)), sample_weight=da.from_array(w, chunks=99)
    )
    assert est.n_iter_ == ref.n_iter_
    assert est.converged_ == ref.converged_
    np.testing.assert_allclose(est.lower_bounds_, ref.lower_bounds_, rtol=1e-8)
    for name in ["weights_", "means_", "covariances_", "precisions_cholesky_"]:
        np.testing.assert_allclose(
            getattr(est, name), getattr(ref, name), rtol=1e-8, atol=1e-10
        )
    np.testing.assert_allclose(
        est.stats_.gaussian.scatter, ref.stats_.gaussian.scatter, rtol=1e-8
    )


def test_em_start_on_a_sample_of_all_rows_is_the_in_memory_start(rng):
    # Fewer rows than INIT_SAMPLE_SIZE: the sample is every row, so the same
    # random_state gives the in-memory k-means start, and the whole fit.
    X, _ = mixture_data(rng)
    ref = GaussianMixture(3, n_init=2, random_state=0).fit(X)
    est = GaussianMixture(3, n_init=2, random_state=0).fit(da.from_array(X, chunks=100))
    assert est.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(est.means_, ref.means_, rtol=1e-8)
    np.testing.assert_allclose(est.lower_bound_, ref.lower_bound_, rtol=1e-8)


def test_em_start_on_a_sample_of_many_rows(monkeypatch, rng):
    from bayeskit._dask import _em as _dask_em

    monkeypatch.setattr(_dask_em, "INIT_SAMPLE_SIZE", 200)
    X, _ = mixture_data(rng, n=3000)
    est = GaussianMixture(3, random_state=0, tol=1e-12, max_iter=1000).fit(
        da.from_array(X, chunks=500)
    )
    ref = GaussianMixture(3, random_state=0, tol=1e-12, max_iter=1000).fit(X)
    # Another start, the same well-separated optimum.
    order = np.argsort(est.means_[:, 0] + 10 * est.means_[:, 1])
    ref_order = np.argsort(ref.means_[:, 0] + 10 * ref.means_[:, 1])
    np.testing.assert_allclose(est.means_[order], ref.means_[ref_order], atol=1e-5)
    # ... whose parameters are a fixed point of one more in-memory EM step.
    again = GaussianMixture(
        3,
        weights_init=est.weights_,
        means_init=est.means_,
        precisions_init=est.precisions_,
        max_iter=1,
    )
    with pytest.warns(Warning):
        again.fit(X)
    np.testing.assert_allclose(again.means_, est.means_, atol=1e-5)


def test_the_start_sample_is_distinct_rows_of_x(rng):
    from sklearn.utils import check_random_state

    from bayeskit._dask import _em as _dask_em

    X = np.arange(3000.0).reshape(1000, 3)
    w = np.arange(1000.0)
    Xs, ws = _dask_em._sample_rows(
        da.from_array(X, chunks=128),
        da.from_array(w, chunks=128),
        200,
        check_random_state(0),
    )
    rows = (Xs[:, 0] / 3).astype(int)
    assert len(np.unique(rows)) == 200
    np.testing.assert_array_equal(Xs, X[rows])
    np.testing.assert_array_equal(ws, w[rows])


def test_mixture_on_dask_dataframe_keeps_feature_names(rng):
    X, _ = mixture_data(rng)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    ref = GaussianMixture(3, random_state=0).fit(df)
    est = GaussianMixture(3, random_state=0).fit(dd.from_pandas(df, npartitions=3))
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    np.testing.assert_allclose(est.means_, ref.means_, rtol=1e-8)


def test_partial_fit_of_a_mixture_on_dask_is_the_in_memory_step(rng):
    X, w = mixture_data(rng)
    ref, est = GaussianMixture(3, random_state=0), GaussianMixture(3, random_state=0)
    for part in (slice(0, 300), slice(300, None)):
        ref.partial_fit(X[part], sample_weight=w[part])
        est.partial_fit(
            da.from_array(X[part], chunks=70),
            sample_weight=da.from_array(w[part], chunks=70),
        )
    assert est.n_iter_ == ref.n_iter_ == 2
    np.testing.assert_allclose(est.lower_bounds_, ref.lower_bounds_, rtol=1e-8)
    np.testing.assert_allclose(est.means_, ref.means_, rtol=1e-8)
    np.testing.assert_allclose(est.covariances_, ref.covariances_, rtol=1e-8)


def test_fit_predict_of_a_mixture_on_dask(rng):
    X, _ = mixture_data(rng)
    ref = GaussianMixture(3, random_state=0).fit_predict(X)
    labels = GaussianMixture(3, random_state=0).fit_predict(da.from_array(X, chunks=99))
    assert isinstance(labels, da.Array)
    np.testing.assert_array_equal(labels.compute(), ref)


def test_mixture_classifier_on_dask_equals_in_memory(rng):
    centres = np.array([[0, 0], [6, 6], [0, 6], [6, 0]])
    X = np.vstack([rng.normal(c, 0.5, size=(150, 2)) for c in centres])
    y = np.repeat(["a", "a", "b", "b"], 150)
    w = rng.integers(1, 3, len(y)).astype(float)
    make = lambda: GaussianMixtureClassifier(n_components=2, random_state=0)  # noqa: E731
    ref = make().fit(X, y, sample_weight=w)
    est = make().fit(
        da.from_array(X, chunks=77), da.from_array(y, chunks=50), sample_weight=w
    )
    np.testing.assert_array_equal(est.classes_, ref.classes_)
    np.testing.assert_allclose(est.class_count_, ref.class_count_, **TIGHT)
    for a, b in zip(ref.mixtures_, est.mixtures_):
        assert a.n_iter_ == b.n_iter_
        np.testing.assert_allclose(b.means_, a.means_, rtol=1e-8)
        np.testing.assert_allclose(b.covariances_, a.covariances_, rtol=1e-8)
    np.testing.assert_allclose(est.predict_proba(X), ref.predict_proba(X), rtol=1e-8)
    # A later partial_fit is a stepwise EM update of every class's mixture.
    ref.partial_fit(X, y)
    est.partial_fit(da.from_array(X, chunks=100), da.from_array(y, chunks=100))
    for a, b in zip(ref.mixtures_, est.mixtures_):
        np.testing.assert_allclose(b.means_, a.means_, rtol=1e-8)


# -- prediction -----------------------------------------------------------------------
# Every method of every public estimator of tables on Dask: test_dask_methods.py.
def test_pipeline_of_dask_steps_stays_lazy(rng):
    from sklearn.pipeline import make_pipeline

    X, y, _ = gaussian_data(rng)
    pipe = make_pipeline(LinearDiscriminantAnalysis(n_components=2), GaussianNB())
    pipe.fit(da.from_array(X, chunks=150), da.from_array(y, chunks=150))
    ref = make_pipeline(LinearDiscriminantAnalysis(n_components=2), GaussianNB())
    ref.fit(X, y)
    out = pipe.predict_proba(da.from_array(X, chunks=150))
    assert isinstance(out, da.Array)
    np.testing.assert_allclose(out.compute(), ref.predict_proba(X), **TIGHT)


# -- the boundary -------------------------------------------------------------------
def test_bad_input_names_the_parameter(rng):
    X, y, w = gaussian_data(rng)
    Xd = da.from_array(X, chunks=100)
    with pytest.raises(ValueError, match="y"):
        GaussianNB().fit(Xd, da.from_array(y[:-1], chunks=100))
    with pytest.raises(ValueError, match="sample_weight"):
        GaussianNB().fit(Xd, y, sample_weight=w[:-5])
    with pytest.raises(ValueError, match="requires y"):
        GaussianNB().fit(Xd, None)
    with pytest.raises(ValueError, match="2-D"):
        GaussianNB().fit(da.from_array(X[:, 0], chunks=100), y)
    with pytest.raises(ValueError, match="sample_weight"):
        GaussianMixture(2).fit(Xd, sample_weight=w[:-5])


def test_failed_refit_leaves_the_model_as_it_was(rng):
    X, y, _ = gaussian_data(rng)
    est = GaussianNB().fit(X, y)
    theta = est.theta_.copy()
    with pytest.raises(ValueError):
        est.fit(da.from_array(X, chunks=100), da.from_array(y[:-1], chunks=100))
    np.testing.assert_array_equal(est.theta_, theta)


def test_fit_does_not_mutate_the_caller_data(rng):
    X, y, w = categorical_data(rng)
    copies = X.copy(), y.copy(), w.copy()
    CategoricalNB().fit(*to_dask(X, y, w))
    for a, b in zip((X, y, w), copies):
        np.testing.assert_array_equal(a, b)


def test_plain_input_never_imports_dask():
    code = (
        "import sys, numpy as np\n"
        "from bayeskit import GaussianNB, GaussianMixture, CategoricalNB\n"
        "X = np.random.default_rng(0).normal(size=(60, 2))\n"
        "y = (X[:, 0] > 0).astype(int)\n"
        "GaussianNB().fit(X, y).predict_proba(X)\n"
        "CategoricalNB().fit((X > 0).astype(int), y).predict(X > 0)\n"
        "GaussianMixture(2, random_state=0).fit(X).score_samples(X)\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_em_persists_nothing_without_a_distributed_client(rng):
    from bayeskit._dask._em import _persisted_if_it_fits

    Xd = da.from_array(rng.normal(size=(100, 2)), chunks=50)
    assert _persisted_if_it_fits(Xd) is Xd


def test_em_from_given_parameters_draws_no_sample(monkeypatch, rng):
    import bayeskit._dask._em as dask_em

    def no_sample(*args):
        raise AssertionError("a sample was drawn")

    monkeypatch.setattr(dask_em, "_sample_rows", no_sample)
    monkeypatch.setattr(dask_em, "INIT_SAMPLE_SIZE", 50)
    X, _, _ = gaussian_data(rng)
    start = GaussianMixture(3, max_iter=2, random_state=0).fit(X)
    params = dict(
        weights_init=start.weights_,
        means_init=start.means_,
        precisions_init=start.precisions_,
        tol=1e-8,
    )
    ref = GaussianMixture(3, **params).fit(X)
    got = GaussianMixture(3, **params).fit(da.from_array(X, chunks=(90, 3)))
    assert got.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(got.means_, ref.means_, rtol=1e-8)
    np.testing.assert_allclose(got.lower_bounds_, ref.lower_bounds_, rtol=1e-8)
