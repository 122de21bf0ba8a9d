"""A categorical feature with about as many distinct values as rows warns.

The rule (documented in docs/naive_bayes.rst): a feature observed in more than
20 fitted rows with more than half as many distinct values as those rows. The
data it must stay silent on include the data scikit-learn's own CategoricalNB
tests fit (iris, random integer codes, the toy matrix).
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_digits, load_iris

from bayeskit import CategoricalNB, MixedNB, TreeAugmentedNB
from bayeskit.datasets import load_playtennis

MESSAGE = "about as many distinct values as rows"


def ours(record):
    return [w for w in record if MESSAGE in str(w.message)]


def fit_recording(model, X, y, **kwargs):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        model.fit(X, y, **kwargs)
    return ours(record)


def brute_force_flags(X, weights=None):
    """The rule by hand: per column, non-missing rows of positive weight."""
    X = pd.DataFrame(X)
    keep = np.ones(len(X), bool) if weights is None else np.asarray(weights) > 0
    flags = []
    for name in X.columns:
        col = X.loc[keep, name].dropna()
        flags.append(len(col) > 20 and 2 * col.nunique() > len(col))
    return flags


@pytest.mark.parametrize("n", [21, 40, 200])
def test_continuous_values_as_categories_warn(n, rng):
    X = rng.normal(size=(n, 3))
    X[:, 1] = rng.integers(0, 3, size=n)  # a genuine categorical feature
    y = rng.integers(0, 2, size=n)
    assert brute_force_flags(X) == [True, False, True]
    record = fit_recording(CategoricalNB(categories="observed"), X, y)
    assert len(record) == 1
    w = record[0]
    assert w.category is UserWarning
    assert w.filename == __file__  # the caller's line, not bayeskit's
    text = str(w.message)
    assert f"0 ({n} distinct values in {n} rows)" in text
    assert f"2 ({n} distinct values in {n} rows)" in text
    assert "1 (" not in text


def test_the_rule_at_its_edges(rng):
    """20 rows never warn; over 20, more than half distinct warns and exactly
    half does not; missing values and zero-weight rows do not count."""
    y21 = np.arange(21) % 2
    assert fit_recording(CategoricalNB(), np.arange(20)[:, None], y21[:20]) == []
    assert len(fit_recording(CategoricalNB(), np.arange(21)[:, None], y21)) == 1
    half = np.repeat(np.arange(11), 2)[:, None]  # 11 distinct in 22 rows
    y22 = np.arange(22) % 2
    assert brute_force_flags(half) == [False]
    assert fit_recording(CategoricalNB(), half, y22) == []
    more = np.r_[np.arange(12), np.arange(10)][:, None]  # 12 distinct in 22 rows
    assert brute_force_flags(more) == [True]
    assert len(fit_recording(CategoricalNB(), more, y22)) == 1
    # 30 rows, 25 distinct, but 10 of them missing: 15 distinct in 20 rows.
    holes = np.r_[np.arange(25.0), np.full(5, 0.0)]
    holes[15:25] = np.nan
    y30 = np.arange(30) % 2
    assert brute_force_flags(holes[:, None]) == [False]
    assert fit_recording(CategoricalNB(), holes[:, None], y30) == []
    # The same 25 distinct in 30 rows, weight zero on ten of them.
    dense = np.r_[np.arange(25), np.zeros(5, int)][:, None]
    weights = np.r_[np.ones(15), np.zeros(10), np.ones(5)]
    assert brute_force_flags(dense) == [True]
    assert brute_force_flags(dense, weights) == [False]
    assert len(fit_recording(CategoricalNB(), dense, y30)) == 1
    assert fit_recording(CategoricalNB(), dense, y30, sample_weight=weights) == []


def test_string_labels_and_names(rng):
    n = 60
    X = pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], size=n),
            "customer_id": [f"c{i:03d}" for i in range(n)],
        }
    )
    y = rng.integers(0, 2, size=n)
    record = fit_recording(CategoricalNB(), X, y)
    assert len(record) == 1 and "'customer_id' (60 distinct" in str(record[0].message)
    assert "'colour'" not in str(record[0].message)
    # partial_fit: the first call reads the categories, and warns; later ones
    # do not repeat it.
    model = CategoricalNB()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        model.partial_fit(X, y, classes=[0, 1])
        model.partial_fit(X, y)
    assert len(ours(record)) == 1


def test_tan_and_mixed_columns_warn_too(rng):
    n = 50
    X = pd.DataFrame(
        {
            "a": rng.integers(0, 3, size=n).astype(str),
            "b": rng.normal(size=n).round(3).astype(str),  # floats become strings
            "c": rng.normal(size=n),
        }
    )
    y = rng.integers(0, 2, size=n)
    record = fit_recording(MixedNB(), X, y)
    assert len(record) == 1 and "'b' (50 distinct" in str(record[0].message)
    assert record[0].filename == __file__
    record = fit_recording(TreeAugmentedNB(), X[["a", "b"]], y)
    assert len(record) == 1 and "'b' (50 distinct" in str(record[0].message)
    # Read as numeric, the same floats are no categories: silent.
    numeric = X.assign(b=X["b"].astype(float))
    assert fit_recording(MixedNB(), numeric, y) == []


def test_ordinary_categorical_data_is_silent(rng):
    cases = []
    # scikit-learn's CategoricalNB tests: the toy matrix, random codes, iris.
    toy = np.array([[1, 0], [1, 1], [2, 1], [2, 0], [0, 1], [0, 0]])
    cases.append((toy, [1, 1, 2, 2, 3, 3]))
    for seed in range(5):
        codes = np.random.RandomState(seed).randint(5, size=(6, 100))
        cases.append((codes, [1, 1, 2, 2, 3, 3]))
    iris = load_iris()
    cases.append((iris.data, iris.target))
    digits = load_digits()
    cases.append((digits.data, digits.target))
    tennis = load_playtennis()
    cases.append((tennis.drop(columns="PlayTennis"), tennis["PlayTennis"]))
    # Larger categorical data: ten features of up to 40 values over 1000 rows.
    many = rng.integers(0, 40, size=(1000, 10))
    cases.append((many, rng.integers(0, 3, size=1000)))
    for X, y in cases:
        assert not any(brute_force_flags(X)), type(X)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            CategoricalNB().fit(X, y)
            CategoricalNB(categories="observed").fit(X, y)
        assert ours(record) == []
