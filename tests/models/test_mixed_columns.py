"""MixedNB's categorical_features='auto': object columns of numbers are numeric.

The reference is the same data given with float columns, and the product of
CategoricalNB and GaussianNB on the two sides.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline

from bayeskit import CategoricalNB, GaussianNB, MixedNB


def raw_table(rng, n=120):
    """A table with strings, floats and integers, and holes in every column."""
    y = rng.integers(0, 2, size=n)
    colour = np.where(rng.random(n) < 0.3 + 0.4 * y, "red", "blue").astype(object)
    size = rng.normal(1.0 + 2.0 * y, 1.0)
    count = rng.poisson(2 + 3 * y).astype(float)
    for col in (colour, size, count):
        col[rng.random(n) < 0.1] = np.nan
    X = pd.DataFrame({"colour": colour, "size": size, "count": count})
    return X, y


def floats_after_imputation(X):
    """What SimpleImputer(strategy='most_frequent') fills, with float columns."""
    filled = X.copy()
    for name in X.columns:
        filled[name] = X[name].fillna(X[name].mode(dropna=True).sort_values().iloc[0])
    return filled.astype({"size": float, "count": float})


@pytest.mark.parametrize("output", ["default", "pandas"])
def test_simple_imputer_pipeline_reads_numbers_as_numbers(output, rng):
    X, y = raw_table(rng)
    imputer = SimpleImputer(strategy="most_frequent")
    if output == "pandas":
        imputer.set_output(transform="pandas")
    pipe = make_pipeline(imputer, MixedNB()).fit(X, y)
    Xt = pipe[0].transform(X)
    assert np.asarray(Xt).dtype == object  # what the pipeline hands MixedNB
    model = pipe[-1]
    np.testing.assert_array_equal(model.categorical_features_, [True, False, False])

    floats = floats_after_imputation(X)
    np.testing.assert_array_equal(np.asarray(Xt, dtype=object), floats.to_numpy(object))
    reference = MixedNB().fit(floats, y)
    np.testing.assert_array_equal(reference.categorical_features_, [True, False, False])
    np.testing.assert_allclose(model.theta_, reference.theta_, rtol=1e-12)
    np.testing.assert_allclose(model.var_, reference.var_, rtol=1e-12)
    np.testing.assert_allclose(
        pipe.predict_proba(X), reference.predict_proba(floats), rtol=1e-12
    )
    # And the model is the product of its two parts on those columns.
    cat = CategoricalNB().fit(floats[["colour"]], y)  # the defaults of both
    gauss = GaussianNB().fit(floats[["size", "count"]], y)
    np.testing.assert_allclose(
        reference.predict_joint_log_proba(floats),
        cat.predict_joint_log_proba(floats[["colour"]])
        + gauss.predict_joint_log_proba(floats[["size", "count"]])
        - cat.class_log_prior_,
        rtol=1e-12,
    )


def test_auto_rule_column_by_column():
    n = 6
    y = [0, 0, 0, 1, 1, 1]
    X = pd.DataFrame(
        {
            "ints": pd.Series([1, 2, 3, 4, 5, 7], dtype=object),
            "mixed_numbers": pd.Series(
                [1, 2.5, np.float64(3.0), np.int64(4), None, 6.5], dtype=object
            ),
            "strings": ["a", "b", "a", "b", "a", "b"],
            "digit_strings": ["1", "2", "1", "2", "1", "2"],
            "bools": [True, False, True, False, True, True],
            "object_bools": pd.Series([True, False] * 3, dtype=object),
            "bools_and_ints": pd.Series([True, 1, 0, False, 1, 0], dtype=object),
            "category": pd.Categorical([1, 2, 1, 2, 1, 2]),
            "string_dtype": pd.Series(["x", "y"] * 3, dtype="string"),
            "floats": np.linspace(0.0, 1.0, n),
            "codes": [0, 1, 0, 1, 1, 0],
        }
    )
    expected = [False, False, True, True, True, True, True, True, True, False, False]
    model = MixedNB().fit(X, y)
    np.testing.assert_array_equal(model.categorical_features_, expected)
    # An object array of the same values: the same reading, column by column.
    values = X.drop(columns=["category", "string_dtype"]).to_numpy(object)
    arr = MixedNB().fit(values, y)
    assert arr.categorical_features_.tolist() == expected[:7] + expected[9:]
    # The numeric object columns are the GaussianNB of their float values.
    numeric = X[["ints", "mixed_numbers", "floats", "codes"]].astype(float)
    np.testing.assert_allclose(
        model.theta_, GaussianNB().fit(numeric, y).theta_, rtol=1e-12
    )


def test_explicit_mask_still_takes_numbers_as_categories(rng):
    X, y = raw_table(rng)
    filled = floats_after_imputation(X).to_numpy(object)
    model = MixedNB(categorical_features=[0, 2]).fit(filled, y)
    np.testing.assert_array_equal(model.categorical_features_, [True, False, True])
    assert len(model.categories_[1]) == len(np.unique(filled[:, 2].astype(float)))


def test_an_array_of_strings_or_numbers_is_read_whole():
    y = [0, 1, 0, 1]
    strings = np.array([["a", "b"], ["b", "a"], ["a", "a"], ["b", "b"]])
    assert MixedNB().fit(strings, y).categorical_features_.tolist() == [True, True]
    floats = np.arange(8.0).reshape(4, 2) + [[0, 0.5]] * 4
    assert MixedNB().fit(floats, y).categorical_features_.tolist() == [False, False]
