"""CategoricalNB's integer-matrix path against its general path, and the labels.

An integer ndarray takes a path of its own (categories from a range pass and a
seen-values pass, the matrix as its own codes when the categories are
``0 .. t_j - 1``); the same data as an object array takes the general,
column-by-column path. Both must give the same model and the same errors.
"""

import numpy as np
import pandas as pd
import pytest

from bayeskit import CategoricalNB, GaussianNB, MixedNB
from bayeskit._base.encoding import integer_categories


def assert_same_model(fast, general, X_fast, X_general):
    assert len(fast.categories_) == len(general.categories_)
    for a, b in zip(fast.categories_, general.categories_):
        np.testing.assert_array_equal(a, b.astype(a.dtype))
        assert a.dtype.kind in "iu"
    for a, b in zip(fast.category_count_, general.category_count_):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(fast.feature_log_prob_, general.feature_log_prob_):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(
        fast.predict_joint_log_proba(X_fast), general.predict_joint_log_proba(X_general)
    )


def shuffled_categories(rng, n=300):
    """Features whose categories are not 0 .. t - 1: gaps, negatives, one value."""
    y = rng.integers(0, 3, n)
    values = [
        np.array([7, 3, 11, -2]),
        np.array([0, 2, 5]),
        np.array([4]),
        np.arange(6),
    ]
    X = np.column_stack([v[(rng.integers(0, len(v), n) + y) % len(v)] for v in values])
    return X, y


@pytest.mark.parametrize(
    "make",
    [
        lambda X: X,
        lambda X: X.astype(np.int32),
        lambda X: X.astype(np.int8),
        lambda X: np.asfortranarray(X),
        lambda X: np.repeat(X, 2, axis=1)[:, ::2],  # a strided view
    ],
    ids=["int64", "int32", "int8", "fortran", "strided"],
)
@pytest.mark.parametrize("kind", ["identity", "shuffled"])
def test_integer_path_equals_general_path(make, kind, rng):
    if kind == "identity":
        y = rng.integers(0, 3, 300)
        X = np.column_stack([(rng.integers(0, t, 300) + y) % t for t in (2, 5, 3)])
    else:
        X, y = shuffled_categories(rng)
    Xf = make(X)
    fast = CategoricalNB(m=2.0, categories="observed").fit(Xf, y)
    general = CategoricalNB(m=2.0, categories="observed").fit(X.astype(object), y)
    assert_same_model(fast, general, Xf, X.astype(object))
    assert fast.categories_[0].dtype == Xf.dtype


def test_integer_categories_match_the_distinct_values(rng):
    X, _ = shuffled_categories(rng)
    for j, cats in enumerate(integer_categories(X)):
        np.testing.assert_array_equal(cats, np.unique(X[:, j]))
    # Ranges wider than the data fall back to sorting each column.
    assert integer_categories(np.array([[0], [10**12]])) is None
    assert integer_categories(np.array([[-(2**63)], [2**63 - 1]])) is None
    extreme = np.array([[-(2**63), 2**63 - 1], [1 - 2**63, 2**63 - 3]])
    for j, cats in enumerate(integer_categories(extreme)):
        np.testing.assert_array_equal(cats, np.unique(extreme[:, j]))
    wide = np.array([[0, 1], [10**12, 1], [5, 0]])
    y = [0, 1, 1]
    assert_same_model(
        CategoricalNB(categories="observed").fit(wide, y),
        CategoricalNB(categories="observed").fit(wide.astype(object), y),
        wide,
        wide.astype(object),
    )


def test_unknown_values_at_predict(rng):
    y = rng.integers(0, 2, 100)
    X = np.column_stack([rng.integers(0, 3, 100), rng.integers(0, 4, 100)])
    clf = CategoricalNB(categories="observed").fit(X, y)
    q = np.array([[1, 2], [3, 1], [-1, 0], [2, 4]])  # out of range in rows 1-3
    by_hand = clf.class_log_prior_ + np.stack(
        [
            sum(
                clf.feature_log_prob_[j][:, a]
                for j, a in enumerate(row)
                if 0 <= a < len(clf.categories_[j])
            )
            for row in q
        ]
    )
    np.testing.assert_allclose(clf.predict_joint_log_proba(q), by_hand, rtol=1e-14)
    strict = CategoricalNB(handle_unknown="error", categories="observed").fit(X, y)
    with pytest.raises(ValueError, match=r"feature 0 has value \S*\b3\b"):
        strict.predict(q)
    with pytest.raises(ValueError, match=r"feature 0 has value \S*\b3\b"):
        strict.predict(q.astype(object))


def test_declared_categories_and_min_categories():
    X = np.array([[0, 1], [1, 0], [2, 2], [1, 1]])
    y = [0, 0, 1, 1]
    # Declared in another order: the codes follow the declared order.
    declared = CategoricalNB(categories=[[2, 0, 1], [0, 1, 2]]).fit(X, y)
    general = CategoricalNB(categories=[[2, 0, 1], [0, 1, 2]]).fit(X.astype(object), y)
    assert_same_model(declared, general, X, X.astype(object))
    np.testing.assert_array_equal(declared.category_count_[0], [[0, 1, 1], [1, 0, 1]])
    # Declared 0 .. t - 1, with a value outside at predict.
    ranged = CategoricalNB(categories=[[0, 1, 2, 3], [0, 1, 2]]).fit(X, y)
    assert ranged.feature_log_prob_[0].shape == (2, 4)
    q = np.array([[3, 5]])
    np.testing.assert_allclose(
        ranged.predict_joint_log_proba(q)[0],
        ranged.class_log_prior_ + ranged.feature_log_prob_[0][:, 3],
    )
    with pytest.raises(ValueError, match="not among its categories"):
        CategoricalNB(categories=[[0, 1], [0, 1, 2]]).fit(X, y)
    mc = CategoricalNB(min_categories=[4, 1]).fit(X, y)
    assert [len(c) for c in mc.categories_] == [4, 3]
    with pytest.raises(ValueError, match="min_categories applies"):
        CategoricalNB(min_categories=3, categories="observed").fit(X - 1, y)


def test_zero_weight_rows_do_not_add_categories(rng):
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0], [9, 7]])
    y = np.array([0, 0, 1, 1, 1])
    w = np.array([1.0, 2.0, 1.0, 1.0, 0.0])
    fast = CategoricalNB(categories="observed").fit(X, y, sample_weight=w)
    general = CategoricalNB(categories="observed").fit(
        X.astype(object), y, sample_weight=w
    )
    assert [list(c) for c in fast.categories_] == [[0, 1], [0, 1]]
    assert_same_model(fast, general, X[:4], X[:4].astype(object))
    np.testing.assert_allclose(
        fast.predict_joint_log_proba(X), general.predict_joint_log_proba(X)
    )


def test_integer_path_leaves_X_untouched_and_matches_dataframes(rng):
    X, y = shuffled_categories(rng)
    X = np.abs(X) % 4  # categories 0 .. 3: the matrix is its own codes
    before = X.copy()
    clf = CategoricalNB(m=1.0, categories="observed").fit(X, y)
    clf.predict_proba(X)
    np.testing.assert_array_equal(X, before)
    df = pd.DataFrame(X, columns=list("abcd"))
    np.testing.assert_array_equal(
        CategoricalNB(m=1.0, categories="observed").fit(df, y).predict_proba(df),
        clf.predict_proba(X),
    )
    mixed = MixedNB(categorical_features=[0, 1, 2, 3], m=1.0).fit(X, y)
    np.testing.assert_allclose(mixed.predict_proba(X), clf.predict_proba(X))
    # At the defaults of both (alpha=1), MixedNB's columns being the values seen.
    np.testing.assert_allclose(
        MixedNB(categorical_features=[0, 1, 2, 3]).fit(X, y).predict_proba(X),
        CategoricalNB(categories="observed").fit(X, y).predict_proba(X),
    )


# -- labels (one sort gives the classes and the class of every row) ---------------
def test_labels_are_encoded_once_and_checked(rng):
    X = rng.normal(size=(12, 2))
    for y in (
        np.array(["b", "a", "c"] * 4),
        np.array([3, -1, 3, 7] * 3),
        np.array([1.0, 0.0, 2.0] * 4),
        np.array(["b", "a", "c"] * 4, dtype=object),
    ):
        clf = GaussianNB().fit(X, y)
        np.testing.assert_array_equal(clf.classes_, np.unique(y))
        counts = [np.sum(y == c) for c in clf.classes_]
        np.testing.assert_array_equal(clf.class_count_, counts)
        chunked = GaussianNB().partial_fit(X[:5], y[:5], classes=np.unique(y))
        chunked.partial_fit(X[5:], y[5:])
        np.testing.assert_allclose(
            chunked.predict_joint_log_proba(X), clf.predict_joint_log_proba(X)
        )
    with pytest.raises(ValueError, match="Unknown label type"):
        GaussianNB().fit(X, rng.normal(size=12))
    with pytest.raises(ValueError, match="y mixes text and non-text"):
        GaussianNB().fit(X, np.array([1, "a"] * 6, dtype=object))
    with pytest.raises(ValueError, match="NaN"):
        GaussianNB().fit(X, np.array([0.0, 1.0, np.nan] * 4))
    with pytest.raises(ValueError, match="do not exist in the initial classes"):
        GaussianNB().partial_fit(X, [0, 1] * 6, classes=[0, 1]).partial_fit(
            X, [0, 2] * 6
        )


def test_gaussian_nb_checks_for_a_blank_class_from_its_statistics(monkeypatch):
    """GaussianNB's statistics hold the weight of every class and feature, so
    the check that each class has an observed cell reads them instead of
    scanning X once more (``pd.isna`` on every cell: a tenth of a fit on
    1,000,000 x 20, benchmarks/bench_regression.py). Over random patterns of
    NaN and weights (classes blank, nearly blank, blank but for rows of
    weight 0) the fit raises exactly when the scan does, with its message."""
    import bayeskit._base.classifier as base
    from bayeskit._base.observed import check_every_class_observed

    scans = []
    monkeypatch.setattr(base, "check_every_class_observed", lambda *a: scans.append(a))
    raised = 0
    for seed in range(60):
        r = np.random.default_rng(seed)
        n, d = int(r.integers(6, 40)), int(r.integers(1, 4))
        X = r.normal(size=(n, d))
        y = r.choice(np.array(["a", "b", "c"]), n)
        y[:3] = ["a", "b", "c"]
        X[r.random(X.shape) < r.uniform(0, 0.6)] = np.nan
        for label in ("a", "b", "c"):
            if r.random() < 0.4:
                X[y == label] = np.nan
        sw = r.choice([0.0, 0.5, 1.0, 2.0], size=n)
        sw[:3] = 1.0
        classes, idx = np.unique(y, return_inverse=True)
        try:
            check_every_class_observed(X, idx, sw, classes)
            expected = None
        except ValueError as exc:
            expected = str(exc)
        try:
            GaussianNB().fit(X, y, sample_weight=sw)
            got = None
        except ValueError as exc:
            got = str(exc)
        assert got == expected, seed
        raised += expected is not None
    assert 10 < raised < 50  # both outcomes are drawn often
    assert scans == []  # no second pass over X
