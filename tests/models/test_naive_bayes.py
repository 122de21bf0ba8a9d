"""Naive Bayes: the notes' numbers, scikit-learn parity, the shared classifier path."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from sklearn import naive_bayes as sknb
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OrdinalEncoder, StandardScaler

from bayeskit import CategoricalNB, GaussianNB, MixedNB
from bayeskit.datasets import load_playtennis


def playtennis():
    df = load_playtennis()
    return df.drop(columns="PlayTennis"), df["PlayTennis"]


def query_day():
    return pd.DataFrame(
        [["Sunny", "Cool", "High", "Strong"]],
        columns=["Outlook", "Temperature", "Humidity", "Wind"],
    )


# -- the notes' example ---------------------------------------------------------
def test_playtennis_numbers_of_the_notes():
    X, y = playtennis()
    clf = CategoricalNB(m=0).fit(X, y)
    joint = np.exp(clf.predict_joint_log_proba(query_day()))[0]
    no, yes = list(clf.classes_).index("No"), list(clf.classes_).index("Yes")
    np.testing.assert_allclose(joint[yes], 54 / 6561 * 9 / 14, rtol=1e-12)
    np.testing.assert_allclose(joint[no], 36 / 625 * 5 / 14, rtol=1e-12)
    assert round(joint[yes], 4) == 0.0053 and round(joint[no], 4) == 0.0206
    assert clf.predict(query_day())[0] == "No"
    assert round(clf.predict_proba(query_day())[0, no], 4) == 0.7954
    # The learnt tables are the notes' tables: P(Outlook = Sunny | Yes) = 2/9.
    sunny = list(clf.categories_[0]).index("Sunny")
    np.testing.assert_allclose(np.exp(clf.feature_log_prob_[0][yes, sunny]), 2 / 9)


def test_m_estimate_by_hand():
    X, y = playtennis()
    m = 3.0
    clf = CategoricalNB(m=m).fit(X, y)
    yes = list(clf.classes_).index("Yes")
    overcast = list(clf.categories_[0]).index("Overcast")
    # n_c = 4 overcast days among n = 9 Yes days, t = 3 outlooks, p = 1/3.
    expected = (4 + m / 3) / (9 + m)
    np.testing.assert_allclose(
        np.exp(clf.feature_log_prob_[0][yes, overcast]), expected, rtol=1e-14
    )
    p = [[0.5, 0.25, 0.25], [1 / 3] * 3, [0.5, 0.5], [0.5, 0.5]]
    clf = CategoricalNB(m=m, p=p).fit(X, y)
    np.testing.assert_allclose(
        np.exp(clf.feature_log_prob_[0][yes, overcast]), (4 + m * 0.5) / (9 + m)
    )


def test_posterior_is_bayes_rule_by_hand():
    X = np.array([["a", "x"], ["a", "y"], ["b", "y"], ["b", "y"], ["a", "x"]])
    y = np.array([0, 0, 1, 1, 1])
    clf = CategoricalNB(m=1.0).fit(X, y)
    # P(y): 2/5, 3/5. Feature 0 (a, b), m=1, p=1/2: class 0 counts a=2, b=0.
    p0 = np.array([(2 + 0.5) / 3, (0 + 0.5) / 3])
    p1 = np.array([(1 + 0.5) / 4, (2 + 0.5) / 4])
    q0 = np.array([(1 + 0.5) / 3, (1 + 0.5) / 3])  # feature 1 (x, y), class 0
    q1 = np.array([(1 + 0.5) / 4, (2 + 0.5) / 4])
    joint = np.array([0.4 * p0[1] * q0[0], 0.6 * p1[1] * q1[0]])  # row (b, x)
    np.testing.assert_allclose(
        clf.predict_proba([["b", "x"]])[0], joint / joint.sum(), rtol=1e-14
    )


# -- parity with scikit-learn ------------------------------------------------------
@pytest.mark.parity
@pytest.mark.parametrize("seed", range(5))
def test_categorical_parity_with_sklearn_laplace(seed):
    rng = np.random.default_rng(seed)
    n, t = 300, [2, 3, 5, 4]
    y = rng.integers(0, 3, n)
    X = np.column_stack([(rng.integers(0, k, n) + y) % k for k in t])
    ours = CategoricalNB(m=np.array(t, dtype=float)).fit(X, y)
    theirs = sknb.CategoricalNB(alpha=1.0).fit(X, y)
    np.testing.assert_allclose(
        ours.predict_proba(X), theirs.predict_proba(X), rtol=1e-12
    )
    np.testing.assert_allclose(
        ours.predict_log_proba(X), theirs.predict_log_proba(X), rtol=1e-12
    )
    for a, b in zip(ours.feature_log_prob_, theirs.feature_log_prob_):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parity
def test_categorical_parity_on_strings_via_ordinal_encoding():
    X, y = playtennis()
    t = [3, 3, 2, 2]
    ours = CategoricalNB(m=np.array(t, dtype=float)).fit(X, y)
    Xo = OrdinalEncoder().fit_transform(X).astype(int)
    theirs = sknb.CategoricalNB(alpha=1.0).fit(Xo, y)
    np.testing.assert_allclose(
        ours.predict_proba(X), theirs.predict_proba(Xo), rtol=1e-12
    )


@pytest.mark.parity
@pytest.mark.parametrize("shift", [0.0, 1e6])
@pytest.mark.parametrize("seed", range(3))
def test_gaussian_parity_with_sklearn(seed, shift):
    rng = np.random.default_rng(seed)
    n, d, k = 400, 6, 4
    y = rng.integers(0, k, n)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 2, d) + y[:, None] * 0.7 + shift
    ours = GaussianNB().fit(X, y)
    theirs = sknb.GaussianNB().fit(X, y)
    np.testing.assert_allclose(ours.theta_, theirs.theta_, rtol=1e-12)
    np.testing.assert_allclose(ours.var_, theirs.var_, rtol=1e-9)
    np.testing.assert_allclose(
        ours.predict_proba(X), theirs.predict_proba(X), atol=1e-10
    )
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_allclose(
        ours.predict_joint_log_proba(X), theirs.predict_joint_log_proba(X), rtol=1e-9
    )


def test_far_from_origin_matches_centred_data(rng):
    X = rng.normal(size=(200, 3))
    y = rng.integers(0, 2, 200)
    a = GaussianNB(var_smoothing=0).fit(X, y).predict_proba(X)
    b = GaussianNB(var_smoothing=0).fit(X + 1e6, y).predict_proba(X + 1e6)
    np.testing.assert_allclose(a, b, atol=1e-8)


# -- GaussianNB's m ---------------------------------------------------------------
def test_gaussian_m_shrinks_to_pooled_variance(rng):
    n, d = 120, 3
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, d)) * (1 + y[:, None])
    m = 7.0
    clf = GaussianNB(m=m, var_smoothing=0).fit(X, y)
    S = np.array([((X[y == c] - X[y == c].mean(0)) ** 2).sum(0) for c in range(3)])
    nc = np.bincount(y)[:, None]
    s2 = S.sum(0) / n
    np.testing.assert_allclose(clf.var_, (S + m * s2) / (nc + m), rtol=1e-12)
    big = GaussianNB(m=1e12, var_smoothing=0).fit(X, y)
    np.testing.assert_allclose(big.var_, np.broadcast_to(s2, big.var_.shape), rtol=1e-9)
    # With one variance per feature the log-odds are linear in x.
    grid = np.linspace(-3, 3, 7)[:, None] * np.ones((1, d))
    logodds = big.predict_joint_log_proba(grid) @ np.array([1.0, -1.0, 0.0])
    np.testing.assert_allclose(np.diff(logodds, 2), 0, atol=1e-8)


# -- the shared classifier path ------------------------------------------------------
def make_data(kind, rng, n=90):
    y = rng.choice(np.array(["ham", "spam", "eggs"]), n)
    if kind == "gaussian":
        return rng.normal(size=(n, 4)) + (y == "spam")[:, None], y
    X = rng.integers(0, 4, size=(n, 5))
    if kind == "mixed":
        return pd.DataFrame(
            {"a": X[:, 0].astype(str), "b": rng.normal(size=n), "c": X[:, 1] > 1}
        ), y
    return X, y


ALL = [
    ("gaussian", GaussianNB),
    ("categorical", CategoricalNB),
    ("mixed", MixedNB),
]


def rows(X, idx):
    return X.iloc[idx] if hasattr(X, "iloc") else X[idx]


@pytest.mark.parametrize("kind, Est", ALL)
def test_partial_fit_equals_fit(kind, Est, rng):
    X, y = make_data(kind, rng)
    full = Est().fit(X, y)
    chunked = Est()
    for part in np.array_split(np.arange(len(y)), 4):
        chunked.partial_fit(rows(X, part), y[part], classes=np.unique(y))
    np.testing.assert_allclose(
        chunked.predict_joint_log_proba(X), full.predict_joint_log_proba(X), rtol=1e-12
    )


@pytest.mark.parametrize("kind, Est", ALL)
def test_integer_weights_equal_repetition(kind, Est, rng):
    X, y = make_data(kind, rng)
    w = rng.integers(0, 4, len(y))
    w[:3] = [1, 2, 3]
    weighted = Est().fit(X, y, sample_weight=w)
    repeated = Est().fit(rows(X, np.repeat(np.arange(len(y)), w)), np.repeat(y, w))
    np.testing.assert_allclose(
        weighted.predict_joint_log_proba(X),
        repeated.predict_joint_log_proba(X),
        rtol=1e-12,
        atol=1e-12,
    )


@pytest.mark.parametrize("kind, Est", ALL)
def test_pickle_clone_pipeline_gridsearch(kind, Est, rng):
    X, y = make_data(kind, rng)
    clf = Est().fit(X, y)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict_proba(X), clf.predict_proba(X))
    grid = {
        "gaussian": {"m": [0.0, 5.0]},
        "categorical": {"m": [0.5, 4.0]},
        "mixed": {"m": [0.5, 4.0]},
    }[kind]
    search = GridSearchCV(Est(), grid, cv=3).fit(X, y)
    assert search.best_params_["m"] in grid["m"]
    assert len(search.cv_results_["mean_test_score"]) == 2


def test_pipeline_with_scaler(rng):
    X, y = make_data("gaussian", rng)
    pipe = make_pipeline(StandardScaler(), GaussianNB()).fit(X, y)
    direct = GaussianNB().fit(StandardScaler().fit_transform(X), y)
    np.testing.assert_allclose(
        pipe.predict_proba(X), direct.predict_proba(StandardScaler().fit_transform(X))
    )


def test_costs_change_predict_by_the_expected_cost_rule():
    X = np.array([[0.0], [0.2], [1.0], [1.2]])
    y = np.array(["a", "a", "b", "b"])
    base = GaussianNB().fit(X, y)
    q = np.array([[0.55], [0.62], [0.7]])
    P = base.predict_proba(q)
    C = np.array([[0.0, 10.0], [1.0, 0.0]])  # calling a true "a" a "b" costs 10
    clf = GaussianNB(costs=C).fit(X, y)
    expected = np.array(["a", "b"])[np.argmin(P @ C, axis=1)]
    np.testing.assert_array_equal(clf.predict(q), expected)
    assert (clf.predict(q) != base.predict(q)).any()
    np.testing.assert_array_equal(clf.predict_proba(q), P)
    vec = GaussianNB(costs=[10.0, 1.0]).fit(X, y)
    np.testing.assert_array_equal(vec.predict(q), expected)


def test_priors_and_prior_m():
    X, y = playtennis()
    clf = CategoricalNB(prior_m=4.0).fit(X, y)
    yes = list(clf.classes_).index("Yes")
    np.testing.assert_allclose(np.exp(clf.class_log_prior_[yes]), (9 + 2) / (14 + 4))
    fixed = CategoricalNB(class_prior=[0.5, 0.5]).fit(X, y)
    np.testing.assert_allclose(np.exp(fixed.class_log_prior_), [0.5, 0.5])
    assert not np.allclose(fixed.predict_proba(X), clf.predict_proba(X))


def test_log_proba_without_underflow(rng):
    X, y = make_data("gaussian", rng)
    clf = GaussianNB().fit(X, y)
    far = np.full((1, 4), 60.0)
    logp = clf.predict_log_proba(far)
    assert np.all(np.isfinite(logp))
    assert logp.min() < -745  # exp() of it underflows to 0
    with np.errstate(under="ignore"):  # that underflow, whatever numpy's state
        np.testing.assert_allclose(np.exp(logp), clf.predict_proba(far))


def test_labels_of_any_type(rng):
    X, _ = make_data("gaussian", rng)
    for labels in (np.array([-1, 1]), np.array(["no", "yes"]), np.array([0.0, 1.0])):
        y = labels[rng.integers(0, 2, len(X))]
        clf = GaussianNB().fit(X, y)
        assert set(clf.predict(X)) <= set(labels)
        np.testing.assert_array_equal(clf.classes_, np.sort(labels))


# -- categorical inputs, missing values, zeros -------------------------------------
def test_categorical_takes_any_labels_and_pandas_types():
    X, y = playtennis()
    ref = CategoricalNB().fit(X, y).predict_proba(X)
    cat = X.astype("category")
    np.testing.assert_allclose(CategoricalNB().fit(cat, y).predict_proba(cat), ref)
    as_obj = X.to_numpy(dtype=object)
    np.testing.assert_allclose(
        CategoricalNB().fit(as_obj, y).predict_proba(as_obj), ref
    )
    bools = pd.DataFrame({"windy": X["Wind"] == "Strong", "n": X["Outlook"].map(len)})
    clf = CategoricalNB().fit(bools, y)
    # A numeric feature is codes 0 .. max (scikit-learn); 'observed' takes labels.
    assert [list(c) for c in clf.categories_] == [[False, True], list(range(9))]
    clf = CategoricalNB(categories="observed").fit(bools, y)
    assert [list(c) for c in clf.categories_] == [[False, True], [4, 5, 8]]


def test_missing_values_are_marginalised():
    X, y = playtennis()
    Xm = X.copy().astype(object)
    Xm.iloc[0, 0] = None
    Xm.iloc[3, 1] = np.nan
    Xm.iloc[5, 2] = pd.NA
    clf = CategoricalNB(m=1.0).fit(Xm, y)
    # Counts leave the missing cells out: row 0 (Sunny, No) no longer counts.
    no = list(clf.classes_).index("No")
    sunny = list(clf.categories_[0]).index("Sunny")
    assert clf.category_count_[0][no, sunny] == 2
    assert clf.category_count_[0][no].sum() == 4
    # A missing cell at predict time drops that feature from the product.
    q = query_day().astype(object)
    q.iloc[0, 1] = None
    joint = clf.predict_joint_log_proba(q)[0]
    by_hand = clf.class_log_prior_ + sum(
        clf.feature_log_prob_[j][:, list(clf.categories_[j]).index(q.iloc[0, j])]
        for j in (0, 2, 3)
    )
    np.testing.assert_allclose(joint, by_hand, rtol=1e-14)


def test_gaussian_missing_values(rng):
    X = rng.normal(size=(60, 3))
    y = rng.integers(0, 2, 60)
    Xm = X.copy()
    Xm[rng.random(X.shape) < 0.2] = np.nan
    clf = GaussianNB(var_smoothing=0).fit(Xm, y)
    for c in (0, 1):
        np.testing.assert_allclose(clf.theta_[c], np.nanmean(Xm[y == c], 0))
        np.testing.assert_allclose(clf.var_[c], np.nanvar(Xm[y == c], 0), rtol=1e-12)
    q = np.array([[0.3, np.nan, -1.0]])
    by_hand = clf.class_log_prior_ + sum(
        norm.logpdf(q[0, j], clf.theta_[:, j], np.sqrt(clf.var_[:, j])) for j in (0, 2)
    )
    np.testing.assert_allclose(clf.predict_joint_log_proba(q)[0], by_hand, rtol=1e-12)


def test_zero_probabilities_with_m0_never_nan():
    X, y = playtennis()
    clf = CategoricalNB(m=0).fit(X, y)
    q = pd.DataFrame(
        [["Overcast", "Hot", "High", "Weak"]], columns=X.columns
    )  # Overcast never happens on a No day
    joint = clf.predict_joint_log_proba(q)[0]
    no = list(clf.classes_).index("No")
    assert np.isneginf(joint[no]) and np.isfinite(joint[1 - no])
    np.testing.assert_allclose(clf.predict_proba(q)[0, no], 0.0)
    assert clf.predict(q)[0] == "Yes"
    # Zero under every class: the prior, with a warning.
    Xz = pd.DataFrame({"f": ["a", "a", "b", "b"], "g": ["u", "v", "u", "v"]})
    yz = ["p", "p", "q", "q"]
    clfz = CategoricalNB(m=0).fit(Xz, yz)
    Xq = pd.DataFrame({"f": ["a"], "g": ["u"]})
    clfz2 = CategoricalNB(m=0).fit(Xz.assign(g=["u", "u", "v", "v"]), yz)
    with pytest.warns(RuntimeWarning, match="falls back to the class prior"):
        proba = clfz2.predict_proba(Xq.assign(f="b"))
    np.testing.assert_allclose(proba, [[0.5, 0.5]])
    assert not np.isnan(clfz.predict_log_proba(Xq)).any()


def test_handle_unknown_and_declared_categories():
    X, y = playtennis()
    q = query_day().assign(Outlook="Snow")
    clf = CategoricalNB().fit(X, y)
    ignored = clf.predict_joint_log_proba(q)[0]
    without = clf.class_log_prior_ + sum(
        clf.feature_log_prob_[j][:, list(clf.categories_[j]).index(q.iloc[0, j])]
        for j in (1, 2, 3)
    )
    np.testing.assert_allclose(ignored, without, rtol=1e-14)
    with pytest.raises(ValueError, match="feature 'Outlook' has value 'Snow'"):
        CategoricalNB(handle_unknown="error").fit(X, y).predict(q)
    cats = [["Sunny", "Overcast", "Rain", "Snow"], None, None, None]
    declared = CategoricalNB(
        m=4,
        categories=[
            c if c else sorted(X.iloc[:, j].unique()) for j, c in enumerate(cats)
        ],
    ).fit(X, y)
    assert declared.feature_log_prob_[0].shape == (2, 4)
    snow = declared.predict_proba(q)
    assert np.all(np.isfinite(snow))
    codes = np.array([[0, 1], [1, 0], [0, 0], [1, 1]])
    mc = CategoricalNB(m=1.0, min_categories=4).fit(codes, [0, 0, 1, 1])
    assert [len(c) for c in mc.categories_] == [4, 4]
    np.testing.assert_allclose(
        np.exp(mc.feature_log_prob_[0][0]),
        [(1 + 0.25) / 3, (1 + 0.25) / 3, 0.25 / 3, 0.25 / 3],
    )


def test_mixed_is_the_product_of_its_parts(rng):
    X, y = make_data("mixed", rng)
    mixed = MixedNB(m=2.0, gaussian_m=1.0).fit(X, y)
    np.testing.assert_array_equal(mixed.categorical_features_, [True, False, True])
    cat = CategoricalNB(m=2.0).fit(X[["a", "c"]], y)
    gauss = GaussianNB(m=1.0).fit(X[["b"]], y)
    prior = cat.class_log_prior_
    np.testing.assert_allclose(
        mixed.predict_joint_log_proba(X),
        cat.predict_joint_log_proba(X[["a", "c"]])
        + gauss.predict_joint_log_proba(X[["b"]])
        - prior,
        rtol=1e-12,
    )
    by_name = MixedNB(categorical_features=["a", "c"], m=2.0, gaussian_m=1.0).fit(X, y)
    np.testing.assert_allclose(by_name.predict_proba(X), mixed.predict_proba(X))
    arr = MixedNB(categorical_features=[0, 2], m=2.0, gaussian_m=1.0).fit(
        X.to_numpy(dtype=object), y
    )
    np.testing.assert_allclose(
        arr.predict_proba(X.to_numpy(dtype=object)), mixed.predict_proba(X), rtol=1e-12
    )


def random_mixed_frame(rng, n):
    """Categorical columns of labels (strings, booleans, a pandas categorical
    with a category never seen) and numeric columns, some cells missing."""
    n_cat, n_num = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    columns = {}
    for j in range(n_cat):
        t = int(rng.integers(2, 6))
        labels = np.array([f"v{a}" for a in range(t)], dtype=object)
        values = labels[rng.integers(0, t, size=n)]
        kind = j % 3
        if kind == 1:
            values = values == "v0"
        elif kind == 2:
            values = pd.Categorical(values, categories=[*labels, "never"])
        col = pd.Series(values)
        if kind == 0:
            col[rng.random(n) < 0.1] = None
        columns[f"cat{j}"] = col
    for j in range(n_num):
        col = rng.normal(size=n) * rng.uniform(0.1, 10) + rng.uniform(-5, 5)
        col[rng.random(n) < 0.1] = np.nan
        columns[f"num{j}"] = col
    X = pd.DataFrame(columns)
    cats = [c for c in X.columns if c.startswith("cat")]
    nums = [c for c in X.columns if c.startswith("num")]
    return X, cats, nums


def test_mixed_is_categorical_times_gaussian_at_the_defaults(rng):
    """MixedNB() == CategoricalNB() x GaussianNB(), the class prior counted once,
    with and without sample_weight and with parameters passed through to either
    part."""
    for trial in range(10):
        n = int(rng.integers(30, 120))
        X, cats, nums = random_mixed_frame(rng, n)
        y = rng.choice(np.array(["a", "b", "c"]), n)
        y[:3] = ["a", "b", "c"]
        weight = rng.uniform(0.0, 3.0, n) if trial % 2 else None
        n_cat = len(cats)
        k = 3
        shared, cat_only, num_only = {}, {}, {}
        if trial >= 2:  # parameters passed through
            choice = trial % 4
            if choice == 0:
                cat_only = {"alpha": rng.uniform(0.1, 3, n_cat).tolist()}
            elif choice == 1:
                sizes = [
                    len(pd.unique(X[c].dropna()))
                    if not isinstance(X[c].dtype, pd.CategoricalDtype)
                    else len(X[c].cat.categories)
                    for c in cats
                ]
                cat_only = {
                    "m": float(rng.uniform(0, 5)),
                    "p": [rng.dirichlet(np.ones(t)) for t in sizes],
                }
            elif choice == 2:
                cat_only = {"alpha": 0.0, "force_alpha": False}
            else:
                cat_only = {"alpha": float(rng.uniform(0.01, 4))}
            num_only = {"var_smoothing": float(10 ** rng.uniform(-12, -1))}
            gaussian_m = float(rng.uniform(0, 5))
            prior = rng.dirichlet(np.ones(k)) if trial % 3 == 0 else None
            shared = {"prior_m": float(rng.uniform(0, 3))}
        else:
            gaussian_m, prior = 0.0, None
        mixed = MixedNB(
            **cat_only, **num_only, gaussian_m=gaussian_m, priors=prior, **shared
        )
        cat = CategoricalNB(**cat_only, class_prior=prior, **shared)
        gauss = GaussianNB(**num_only, m=gaussian_m, priors=prior, **shared)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # alpha=0 -> 1e-10
            mixed.fit(X, y, sample_weight=weight)
            cat.fit(X[cats], y, sample_weight=weight)
            gauss.fit(X[nums], y, sample_weight=weight)
        assert mixed.categorical_features_.tolist() == [
            c.startswith("cat") for c in X.columns
        ]
        np.testing.assert_allclose(
            cat.class_log_prior_, gauss.class_log_prior_, rtol=1e-12
        )
        test = X.sample(frac=1.0, random_state=trial)  # rows in another order
        expected = (
            cat.predict_joint_log_proba(test[cats])
            + gauss.predict_joint_log_proba(test[nums])
            - cat.class_log_prior_
        )
        np.testing.assert_allclose(
            mixed.predict_joint_log_proba(test[X.columns]),
            expected,
            rtol=1e-10,
            atol=1e-10,
            err_msg=f"trial {trial}: {cat_only}, {num_only}",
        )


def test_fit_does_not_mutate_input(rng):
    X, y = make_data("gaussian", rng)
    X[0, 1] = np.nan
    X_copy, y_copy = X.copy(), y.copy()
    GaussianNB().fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(X, X_copy)
    np.testing.assert_array_equal(y, y_copy)
    Xc, yc = playtennis()
    before = Xc.copy()
    CategoricalNB().fit(Xc, yc).predict(Xc)
    pd.testing.assert_frame_equal(Xc, before)


# -- bad input ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "est, match",
    [
        (CategoricalNB(m=-1.0), "'m' parameter"),
        (CategoricalNB(m=[1.0, -2.0, 1.0, 1.0]), "m must be finite and >= 0"),
        (CategoricalNB(m=[1.0, 1.0]), r"m must be a number or have shape \(4,\)"),
        (
            CategoricalNB(
                m=2.0, p=[[0.5, 0.6, 0.1], [1 / 3] * 3, [0.5] * 2, [0.5] * 2]
            ),
            r"p\[0\] must sum to one",
        ),
        (CategoricalNB(class_prior=[0.2, 0.3, 0.5]), "class_prior has shape"),
        (CategoricalNB(class_prior=[-0.5, 1.5]), "class_prior must be finite"),
        (CategoricalNB(alpha=2.0, m=1.0), "give either alpha .* or m"),
        (CategoricalNB(p=[[1.0, 0, 0]] * 4), "p is the prior of the m-estimate"),
        (CategoricalNB(alpha=[1.0, 2.0]), r"alpha must .* shape \(4,\)"),
        (CategoricalNB(min_categories=[[3, 2]]), "'min_categories' should have"),
        (CategoricalNB(min_categories=2.5), "'min_categories' parameter"),
        (CategoricalNB(costs=np.ones((3, 3))), "costs must have shape"),
        (CategoricalNB(costs=[-1.0, 1.0]), "costs must be finite and non-negative"),
        (CategoricalNB(prior_m=-1), "'prior_m' parameter"),
    ],
)
def test_bad_parameters(est, match):
    X, y = playtennis()
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)


def test_bad_data():
    X, y = playtennis()
    with pytest.raises(ValueError, match="0 sample"):
        GaussianNB().fit(np.empty((0, 3)), [])
    with pytest.raises(ValueError, match="0 sample"):
        CategoricalNB().fit(X.iloc[:0], y.iloc[:0])
    clf = GaussianNB().fit(np.eye(4), [0, 0, 1, 1])
    with pytest.raises(ValueError, match="features"):
        clf.predict(np.ones((2, 3)))
    cat = CategoricalNB().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        cat.predict(X.to_numpy()[:, :3])
    with pytest.raises(ValueError, match="zero variance"):
        GaussianNB(var_smoothing=0).fit(np.ones((4, 2)), [0, 0, 1, 1])
    with pytest.raises(ValueError, match="do not exist in the initial classes"):
        GaussianNB().partial_fit(np.eye(4), [0, 0, 1, 1], classes=[0, 1]).partial_fit(
            np.eye(4)[:1], [5]
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GaussianNB(m=1.0, var_smoothing=0).fit(
            np.ones((4, 2)) + np.eye(4, 2), [0, 0, 1, 1]
        )


# -- scikit-learn's meaning for a scikit-learn call (drop-in) ------------------------
def _sk_fitted_attrs_match(ours, theirs):
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    np.testing.assert_allclose(ours.class_count_, theirs.class_count_)
    np.testing.assert_allclose(ours.class_log_prior_, theirs.class_log_prior_)
    np.testing.assert_array_equal(ours.n_categories_, theirs.n_categories_)
    for a, b in zip(ours.category_count_, theirs.category_count_, strict=True):
        np.testing.assert_allclose(a, b)
    for a, b in zip(ours.feature_log_prob_, theirs.feature_log_prob_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"alpha": 0.3},
        {"alpha": 2.0, "fit_prior": False},
        {"class_prior": [0.2, 0.3, 0.5]},
        {"min_categories": 7},
        {"min_categories": [2, 9, 1]},
        {"alpha": 0.0, "force_alpha": True},
    ],
)
def test_categorical_default_call_equals_sklearn(params, rng):
    # Codes with gaps (a feature seen as {0, 2, 5} has the 6 categories 0 .. 5).
    y = rng.integers(0, 3, 200)
    X = np.column_stack(
        [
            (rng.integers(0, 3, 200) + y) % 3 * 2,
            rng.choice([0, 5, 8], 200),
            (y + rng.integers(0, 2, 200)) % 4,
        ]
    )
    ours = CategoricalNB(**params).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # alpha=0: log(0) in sklearn
        theirs = sknb.CategoricalNB(**params).fit(X, y)
        _sk_fitted_attrs_match(ours, theirs)
        np.testing.assert_allclose(
            ours.predict_proba(X), theirs.predict_proba(X), rtol=1e-10, atol=1e-300
        )
        np.testing.assert_allclose(
            ours.predict_joint_log_proba(X), theirs.predict_joint_log_proba(X)
        )


def test_categorical_alpha_is_the_uniform_m_estimate(rng):
    y = rng.integers(0, 2, 100)
    X = rng.integers(0, 4, (100, 3))
    for alpha in (0.5, 1.0, 3.0):
        by_alpha = CategoricalNB(alpha=alpha).fit(X, y)
        by_m = CategoricalNB(m=alpha * np.array([4.0, 4.0, 4.0])).fit(X, y)
        np.testing.assert_allclose(by_alpha.predict_proba(X), by_m.predict_proba(X))
    per_feature = CategoricalNB(alpha=[1.0, 2.0, 0.5]).fit(X, y)
    np.testing.assert_allclose(
        per_feature.predict_proba(X),
        CategoricalNB(m=[4.0, 8.0, 2.0]).fit(X, y).predict_proba(X),
    )
    # m given: the m-estimate, and alpha left at its default is not used.
    m1 = CategoricalNB(m=1.0).fit(X, y)
    counts = m1.category_count_[0]
    np.testing.assert_allclose(
        np.exp(m1.feature_log_prob_[0]),
        (counts + 0.25) / (counts.sum(axis=1, keepdims=True) + 1.0),
    )


def test_force_alpha_false_clips_tiny_alpha_as_sklearn():
    X = np.array([[1, 0], [1, 1]])
    y = np.array([0, 1])
    msg = "alpha too small will result in numeric errors, setting alpha = 1.0e-10"
    with pytest.warns(UserWarning, match=msg):
        ours = CategoricalNB(alpha=0.0, force_alpha=False).fit(X, y)
    with pytest.warns(UserWarning, match=msg):
        theirs = sknb.CategoricalNB(alpha=0.0, force_alpha=False).fit(X, y)
    for a, b in zip(ours.feature_log_prob_, theirs.feature_log_prob_):
        np.testing.assert_allclose(a, b)
    assert np.isfinite(
        np.concatenate([t.ravel() for t in ours.feature_log_prob_])
    ).all()
    # force_alpha=True keeps alpha=0: the maximum-likelihood tables, log 0 = -inf.
    exact = CategoricalNB(alpha=0.0).fit(X, y)
    assert np.isneginf(exact.feature_log_prob_[1][0, 1])


def test_categorical_class_prior_and_fit_prior():
    X = np.array([[0], [0], [1], [1], [1]])
    y = np.array([0, 0, 0, 1, 1])
    uniform = CategoricalNB(fit_prior=False).fit(X, y)
    np.testing.assert_allclose(np.exp(uniform.class_log_prior_), [0.5, 0.5])
    given = CategoricalNB(class_prior=[0.9, 0.1], fit_prior=False).fit(X, y)
    np.testing.assert_allclose(np.exp(given.class_log_prior_), [0.9, 0.1])
    # Not summing to one: used as given (as scikit-learn), with a warning.
    with pytest.warns(UserWarning, match="class_prior sums to 2"):
        ours = CategoricalNB(class_prior=[1.0, 1.0]).fit(X, y)
    theirs = sknb.CategoricalNB(class_prior=[1.0, 1.0]).fit(X, y)
    np.testing.assert_allclose(ours.class_log_prior_, theirs.class_log_prior_)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X))
    with pytest.raises(ValueError, match="Number of priors must match"):
        CategoricalNB(class_prior=[1.0]).fit(X, y)


def test_partial_fit_adds_categories_as_sklearn():
    # scikit-learn's partial_fit extends the codes; they used to count as missing.
    ours, theirs = CategoricalNB(), sknb.CategoricalNB()
    for clf in (ours, theirs):
        clf.partial_fit([[0, 1]], [0], classes=[0, 1])
        clf.partial_fit([[1, 0]], [1])
        clf.partial_fit([[1, 1]], [1])
    np.testing.assert_allclose(
        ours.predict_proba([[1, 1]]), theirs.predict_proba([[1, 1]]), rtol=1e-12
    )
    np.testing.assert_allclose(
        ours.predict_proba([[1, 1]]), [[8 / 35, 27 / 35]], rtol=1e-12
    )
    for a, b in zip(ours.category_count_, theirs.category_count_):
        np.testing.assert_array_equal(a, b)
    full = CategoricalNB().fit([[0, 1], [1, 0], [1, 1]], [0, 1, 1])
    np.testing.assert_allclose(
        ours.predict_proba([[1, 1]]), full.predict_proba([[1, 1]])
    )


def test_partial_fit_adds_new_labels():
    X, y = playtennis()
    head = np.array([0, 1, 3, 4])  # Sunny and Rain only
    first, rest = X.iloc[head], X.drop(index=X.index[head])
    y1, y2 = y.iloc[head], y.drop(index=y.index[head])
    chunked = CategoricalNB().partial_fit(first, y1, classes=["No", "Yes"])
    assert list(chunked.categories_[0]) == ["Rain", "Sunny"]
    chunked.partial_fit(rest, y2)
    assert list(chunked.categories_[0]) == ["Rain", "Sunny", "Overcast"]
    full = CategoricalNB().fit(pd.concat([first, rest]), pd.concat([y1, y2]))
    np.testing.assert_allclose(chunked.predict_proba(X), full.predict_proba(X))
    # Declared categories cannot grow: a clear error, not a silent drop.
    cats = [["Sunny", "Rain"]] + [sorted(X.iloc[:, j].unique()) for j in (1, 2, 3)]
    declared = CategoricalNB(categories=cats).partial_fit(
        first, y1, classes=["No", "Yes"]
    )
    with pytest.raises(ValueError, match="'Overcast', not among its categories"):
        declared.partial_fit(rest, y2)
    # MixedNB too.
    mixed = MixedNB().partial_fit(first, y1, classes=["No", "Yes"])
    mixed.partial_fit(rest, y2)
    np.testing.assert_allclose(
        mixed.predict_proba(X),
        MixedNB().fit(pd.concat([first, rest]), pd.concat([y1, y2])).predict_proba(X),
    )


def test_alpha_and_m_together_is_an_error():
    X, y = playtennis()
    with pytest.raises(ValueError, match="give either alpha"):
        CategoricalNB(alpha=0.5, m=2.0).fit(X, y)
    with pytest.raises(ValueError, match="needs m"):
        CategoricalNB(p=[[1 / 3] * 3, [1 / 3] * 3, [0.5] * 2, [0.5] * 2]).fit(X, y)


def test_numeric_features_are_codes_and_observed_takes_labels():
    X = np.array([[1, 4], [2, 5]])
    y = [1, 2]
    assert list(CategoricalNB().fit(X, y).n_categories_) == [3, 6]
    assert list(CategoricalNB().fit(X.astype(float), y).n_categories_) == [3, 6]
    observed = CategoricalNB(categories="observed").fit(X, y)
    assert list(observed.n_categories_) == [2, 2]
    with pytest.raises(ValueError, match="Negative values in data passed to Cat"):
        CategoricalNB().fit([[0, -1], [1, 1]], y)
    neg = CategoricalNB(categories="observed").fit([[0, -1], [1, 1]], y)
    assert [list(c) for c in neg.categories_] == [[0, 1], [-1, 1]]
    with pytest.warns(UserWarning, match="fractional values"):
        frac = CategoricalNB().fit([[0.5, 1.0], [2.7, 0.0]], y)
    assert list(frac.n_categories_) == [3, 2]
    # A rejected X leaves the fitted model as it was (as scikit-learn).
    clf = CategoricalNB().fit(X, y)
    before = clf.predict_proba(X)
    with pytest.raises(ValueError, match="Negative"):
        clf.fit([[0, -1]], [1])
    np.testing.assert_array_equal(clf.predict_proba(X), before)
    with pytest.raises(ValueError, match="Negative"):
        clf.predict([[0, -1]])


def test_mixed_fits_one_class():
    X = pd.DataFrame({"colour": ["red", "blue", "red"], "size": [1.0, 2.0, 1.5]})
    clf = MixedNB().fit(X, ["a", "a", "a"])
    np.testing.assert_array_equal(clf.predict(X), ["a", "a", "a"])
    np.testing.assert_allclose(clf.predict_proba(X), np.ones((3, 1)))


@pytest.mark.parity
@pytest.mark.parametrize("Est", ["CategoricalNB", "GaussianNB"])
def test_one_class_fits_as_sklearn(Est):
    X = np.array([[1, 0, 0], [0, 1, 0]])
    y = [1, 1]
    ours = {"CategoricalNB": CategoricalNB, "GaussianNB": GaussianNB}[Est]().fit(X, y)
    theirs = getattr(sknb, Est)().fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X))
    np.testing.assert_allclose(ours.class_log_prior_, [0.0])


def test_discriminant_analysis_still_needs_two_classes():
    from bayeskit import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis

    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    for est in (LinearDiscriminantAnalysis(), QuadraticDiscriminantAnalysis()):
        with pytest.raises(ValueError, match="at least two classes"):
            est.fit(X, [1, 1, 1])


@pytest.mark.parametrize("Est", [CategoricalNB, GaussianNB])
def test_partial_fit_classes_as_sklearn(Est):
    X = np.array([[0, 1], [1, 0], [1, 1]])
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        Est().partial_fit(X, [0, 1, 1])
    clf = Est().partial_fit(X, [0, 1, 1], classes=[0, 1])
    clf.partial_fit(X, [0, 1, 1], classes=[1, 0, 0])  # the same classes: fine
    with pytest.raises(ValueError, match="is not the same as on last call"):
        clf.partial_fit(X, [0, 1, 1], classes=[0, 1, 2])
    with pytest.raises(ValueError, match=r"label\(s\) \[5\] in y do not exist"):
        clf.partial_fit(X[:1], [5])


@pytest.mark.parametrize("Est", [CategoricalNB, GaussianNB, MixedNB])
def test_nan_in_y_is_a_clear_error(Est):
    X = np.array([[0, 1], [1, 0], [1, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning of scikit-learn first
        with pytest.raises(ValueError, match="y contains NaN"):
            Est().fit(X, [0.0, np.nan, 1.0])
        with pytest.raises(ValueError, match="y contains NaN"):
            Est().partial_fit(X, [0.0, np.nan, 1.0], classes=[0.0, 1.0])


@pytest.mark.parametrize(
    "priors, match",
    [
        ([0.5, 0.25, 0.25], "Number of priors must match number of classes"),
        ([2.0, 1.0], "The sum of the priors should be 1"),
        ([-1.0, 2.0], "Priors must be non-negative"),
    ],
)
def test_gaussian_priors_checked_as_sklearn(priors, match):
    X = np.array([[-1.0], [-2.0], [1.0], [2.0]])
    y = [0, 0, 1, 1]
    with pytest.raises(ValueError, match=match):
        sknb.GaussianNB(priors=priors).fit(X, y)
    with pytest.raises(ValueError, match=match):
        GaussianNB(priors=priors).fit(X, y)
    ok = GaussianNB(priors=[0.3, 0.7]).fit(X, y)
    np.testing.assert_allclose(ok.class_prior_, [0.3, 0.7])


@pytest.mark.parity
def test_gaussian_class_of_zero_weight_as_sklearn():
    X = np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]], float)
    y = np.array([1, 1, 1, 2, 2, 2])
    w = (y == 1).astype(float)
    ours = GaussianNB().fit(X, y, sample_weight=w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # log(0) in sklearn
        theirs = sknb.GaussianNB().fit(X, y, sample_weight=w)
        np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    np.testing.assert_allclose(ours.class_prior_, theirs.class_prior_)
    np.testing.assert_allclose(ours.theta_[0], theirs.theta_[0])


@pytest.mark.parametrize("Est", [GaussianNB, CategoricalNB])
def test_far_apart_classes_do_not_underflow(Est):
    # Posteriors below 1e-308 are 0, without numpy's underflow warning (which
    # numpy raises when its error state asks for it, e.g. np.seterr(all="warn")).
    X = np.array([[0.0], [1.0], [1e6], [1e6 + 1]])
    y = [0, 0, 1, 1]
    if Est is CategoricalNB:
        X = np.repeat(np.array([[0], [0], [1], [1]]), 800, axis=1)
    clf = Est(alpha=1e-300) if Est is CategoricalNB else Est()
    clf.fit(X, y)
    with np.errstate(all="warn"), warnings.catch_warnings():
        warnings.simplefilter("error")
        proba = clf.predict_proba(X)
        clf.predict(X)
        log_proba = clf.predict_log_proba(X)
    np.testing.assert_array_equal(proba, [[1, 0], [1, 0], [0, 1], [0, 1]])
    assert (log_proba[[0, 1, 2, 3], [1, 1, 0, 0]] < -1000).all()


def test_tree_augmented_partial_fit_rejects_a_new_value():
    from bayeskit import TreeAugmentedNB

    # It cannot add a category to its pair tables: an error, not a silent drop.
    tan = TreeAugmentedNB().partial_fit([[0, 1], [1, 0]], [0, 1], classes=[0, 1])
    with pytest.raises(ValueError, match="value 2, not among its categories"):
        tan.partial_fit([[2, 1]], [0])
    declared = TreeAugmentedNB(categories=[[0, 1, 2], [0, 1]])
    declared.partial_fit([[0, 1], [1, 0]], [0, 1], classes=[0, 1])
    declared.partial_fit([[2, 1]], [0])
    assert declared.stats_.class_weight.tolist() == [2.0, 1.0]


@pytest.mark.parity
@pytest.mark.parametrize("n_chunks", [2, 3, 7])
def test_partial_fit_over_chunks_equals_fit_and_sklearn(n_chunks, rng):
    # Later chunks bring codes the first did not see (the first holds only
    # small values); the model equals one fit and scikit-learn's partial_fit.
    y = rng.integers(0, 3, 210)
    X = np.column_stack(
        [(y + rng.integers(0, 2, 210)) % 5, rng.integers(0, 6, 210) * (y > 0)]
    )
    order = np.argsort(X.sum(axis=1), kind="stable")
    X, y = X[order], y[order]
    ours, theirs = CategoricalNB(), sknb.CategoricalNB()
    for chunk in np.array_split(np.arange(210), n_chunks):
        for clf in (ours, theirs):
            clf.partial_fit(X[chunk], y[chunk], classes=[0, 1, 2])
    full = CategoricalNB().fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), full.predict_proba(X))
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X))
    for a, b in zip(ours.category_count_, theirs.category_count_):
        np.testing.assert_array_equal(a, b)


def test_sparse_X_is_refused_as_sklearn():
    import scipy.sparse as sp

    X = sp.csr_matrix(np.array([[1, 0], [1, 1]]))
    for Est in (CategoricalNB, sknb.CategoricalNB):
        with pytest.raises(TypeError, match="Sparse data was passed for X"):
            Est().fit(X, [0, 1])


def test_gaussian_nb_float32_input_gives_float32_attributes():
    """As scikit-learn's GaussianNB; the statistics stay float64."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = rng.integers(0, 2, size=60)
    single = GaussianNB().fit(X.astype(np.float32), y)
    double = GaussianNB().fit(X.astype(np.float32).astype(np.float64), y)
    for name in ("theta_", "var_", "class_prior_"):
        assert getattr(single, name).dtype == np.float32, name
        np.testing.assert_allclose(
            getattr(single, name), getattr(double, name), rtol=1e-6
        )
    chunked = GaussianNB().partial_fit(X[:30].astype(np.float32), y[:30], [0, 1])
    chunked.partial_fit(X[30:].astype(np.float32), y[30:])
    assert chunked.theta_.dtype == np.float32
    np.testing.assert_allclose(chunked.var_, single.var_, rtol=1e-6)


# -- the continuous-data warning: once per call, at the caller's line ------------
def _record(method, *args):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        result = method(*args)
    return result, record


def _fractional_by_hand(X):
    """The columns with a non-integer value (missing cells aside)."""
    values = pd.DataFrame(X).to_numpy(dtype=float)
    return [j for j in range(values.shape[1]) if (values[:, j] % 1 > 0).any()]


def _nearly_unique_by_hand(X):
    """The rule of docs/naive_bayes.rst over the truncated codes."""
    codes = pd.DataFrame(np.trunc(pd.DataFrame(X).to_numpy(dtype=float)))
    flags = []
    for j in codes.columns:
        col = codes[j].dropna()
        flags.append(len(col) > 20 and 2 * col.nunique() > len(col))
    return [j for j, flag in enumerate(flags) if flag]


@pytest.mark.parametrize("frame", [False, True])
def test_float_columns_warn_once_at_the_callers_line(frame, rng):
    for _ in range(12):
        n, d = int(rng.integers(5, 80)), int(rng.integers(1, 5))
        scale = rng.choice([1.0, 10.0, 1000.0], size=d)
        X = np.abs(rng.normal(size=(n, d))) * scale
        integral = rng.random(d) < 0.3  # some columns of whole numbers
        X[:, integral] = np.round(X[:, integral])
        X[rng.random((n, d)) < 0.1] = np.nan
        y = rng.integers(0, 2, size=n)
        if frame:
            X = pd.DataFrame(X, columns=[f"f{j}" for j in range(d)])
        fractional = _fractional_by_hand(X)
        unique = _nearly_unique_by_hand(X)
        model, record = _record(CategoricalNB().fit, X, y)
        if not fractional and not unique:
            assert record == []
            continue
        assert len(record) == 1, [str(w.message) for w in record]
        w = record[0]
        assert w.category is UserWarning
        assert w.filename == __file__
        text = str(w.message)
        assert text.startswith("CategoricalNB: ")
        names = [repr(f"f{j}") if frame else str(j) for j in range(d)]
        if fractional:
            listed = ", ".join(names[j] for j in fractional)
            assert f"feature(s) {listed} have fractional values" in text
        else:
            assert "fractional" not in text
        for j in range(d):
            assert (f"{names[j]} (" in text) == (j in unique)
        # A later call warns once too: predict, and partial_fit's next chunk.
        if fractional:
            _, record = _record(model.predict, X)
            assert len(record) == 1 and record[0].filename == __file__
            _, record = _record(model.partial_fit, X, y)
            assert len(record) == 1 and record[0].filename == __file__
            assert "fractional values" in str(record[0].message)


def test_object_columns_of_numbers_are_codes_as_in_scikit_learn(rng):
    """scikit-learn casts X to integers: an object array of integers is read
    as codes 0 .. max, so an unseen code below the maximum is a category."""
    from sklearn.naive_bayes import CategoricalNB as SkCategoricalNB

    for _ in range(10):
        X = rng.choice([0, 2, 3, 5], size=(40, 3))
        y = rng.integers(2, size=40)
        ref = SkCategoricalNB().fit(X, y)
        ours = CategoricalNB().fit(X.astype(object), y)
        np.testing.assert_array_equal(ours.n_categories_, ref.n_categories_)
        np.testing.assert_allclose(
            ours.predict_proba(X.astype(object)), ref.predict_proba(X), rtol=1e-12
        )
