"""One categorical encoder, one ordering policy, for every categorical model.

The policy: declared categories (``categories=``, ``states=``) as given, the
absent ones kept; a pandas Categorical's own categories and order, the absent
ones kept; numeric codes read as codes ``0 .. max`` (CategoricalNB's
scikit-learn meaning); otherwise the observed values sorted. Every estimator
that reads categories (CategoricalNB, MixedNB, TreeAugmentedNB,
BayesianNetwork) must report the same categories for the same column, and
the tables of a pandas Categorical must be scikit-learn's on its codes.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import CategoricalNB as SkCategoricalNB

from bayeskit import (
    BayesianNetwork,
    CategoricalNB,
    MixedNB,
    TreeAugmentedNB,
    chow_liu_tree,
)
from bayeskit.models._encoding import (
    CategoryEncoder,
    encode_column,
    fit_categories,
    is_missing,
    split_columns,
)


def fit(cols, **kwargs):
    return CategoryEncoder.fit(cols, [str(j) for j in range(len(cols))], **kwargs)


# -- the encoder ---------------------------------------------------------------------
def test_observed_values_are_sorted():
    cols = [
        np.array(["b", "c", "a", "b"], dtype=object),
        np.array([3, 1, 2, 3]),
        np.array([True, False, True, True]),
        np.array([2.5, None, -1.0, 2.5], dtype=object),
    ]
    enc = fit(cols)
    assert [c.tolist() for c in enc.categories] == [
        ["a", "b", "c"],
        [1, 2, 3],
        [False, True],
        [-1.0, 2.5],
    ]
    codes = enc.encode(cols)
    for j, col in enumerate(cols):
        for i, value in enumerate(col):
            expected = -1 if value is None else enc.categories[j].tolist().index(value)
            assert codes[i, j] == expected


def test_values_that_do_not_sort_together_keep_their_order_of_appearance():
    col = np.array(["b", 2, "a", 2, 1], dtype=object)
    enc = fit([col])
    assert enc.categories[0].tolist() == ["b", 2, "a", 1]
    np.testing.assert_array_equal(enc.encode([col])[:, 0], [0, 1, 2, 1, 3])


def test_pandas_categorical_keeps_its_categories_and_order():
    df = pd.DataFrame(
        {
            "size": pd.Categorical(["s", "l", None, "s"], categories=["s", "m", "l"]),
            "level": pd.Categorical(
                ["hi", "lo", "lo", "hi"], categories=["lo", "mid", "hi"], ordered=True
            ),
        }
    )
    cols, dtypes = split_columns(df)
    enc = fit(cols, dtypes=dtypes)
    assert [c.tolist() for c in enc.categories] == [
        ["s", "m", "l"],
        ["lo", "mid", "hi"],
    ]
    # The codes are pandas' own codes of the categoricals.
    np.testing.assert_array_equal(
        enc.encode(cols), np.column_stack([df[c].cat.codes for c in df])
    )


def test_declared_categories_are_kept_and_fixed():
    col = np.array(["x", "y", "x"], dtype=object)
    enc = fit([col], declared=[["z", "y", "x"]])
    assert enc.categories[0].tolist() == ["z", "y", "x"]  # "z" absent, kept
    np.testing.assert_array_equal(enc.encode([col])[:, 0], [2, 1, 2])
    assert not enc.extend([np.array(["w"], dtype=object)])  # declared: no growth
    with pytest.raises(ValueError, match="feature 0 has value 'w', not among"):
        enc.encode([np.array(["w"], dtype=object)])
    ignored = enc.encode([np.array(["w", "x"], dtype=object)], unknown="ignore")
    np.testing.assert_array_equal(ignored[:, 0], [-1, 2])
    with pytest.raises(ValueError, match="repeat"):
        fit([col], declared=[["x", "x"]])


def test_codes_min_categories_and_growth():
    cols = [np.array([0, 2, 2]), np.array(["b", "a", "b"], dtype=object)]
    enc = fit(cols, coded=[True, False], min_categories=np.array([5, 0]))
    assert [c.tolist() for c in enc.categories] == [[0, 1, 2, 3, 4], ["a", "b"]]
    # New values come after the existing categories, in sorted order.
    assert enc.extend([np.array([6, 1]), np.array(["d", "c", "a"], dtype=object)])
    assert [c.tolist() for c in enc.categories] == [
        list(range(7)),
        ["a", "b", "c", "d"],
    ]
    with pytest.raises(ValueError, match="Negative values"):
        fit([np.array([0, -1])], coded=[True])


def test_zero_weight_rows_add_no_category():
    col = np.array(["a", "zz", "b"], dtype=object)
    keep = np.array([True, False, True])
    enc = fit([col], keep=keep)
    assert enc.categories[0].tolist() == ["a", "b"]
    np.testing.assert_array_equal(enc.encode([col], keep=keep)[:, 0], [0, -1, 1])
    with pytest.raises(ValueError, match="not among"):
        enc.encode([col], fitting=True)


def test_the_hmm_functions_follow_the_same_policy():
    col = np.array(["c", "a", None, "b", "a"], dtype=object)
    missing = is_missing(col)
    symbols = fit_categories(col, missing)
    assert symbols.tolist() == sorted({"a", "b", "c"})
    np.testing.assert_array_equal(
        encode_column(col, symbols, missing), [2, 0, -1, 1, 0]
    )
    np.testing.assert_array_equal(
        encode_column(np.array(["d"], dtype=object), symbols, np.array([False])), [-2]
    )


# -- every estimator reports the same categories ------------------------------------
def labelled_frame(rng, n=120):
    y = rng.integers(0, 2, n)
    size = np.array(["s", "l", "m"])[(rng.integers(0, 3, n) + y) % 3]
    df = pd.DataFrame(
        {
            "size": pd.Categorical(size, categories=["xs", "s", "m", "l", "xl"]),
            "colour": np.array(["red", "blue", "green"], dtype=object)[
                (rng.integers(0, 3, n) + y) % 3
            ],
            "flag": rng.random(n) < 0.3 + 0.4 * y,
        }
    )
    return df, y


def test_every_estimator_reads_the_same_categories(rng):
    df, y = labelled_frame(rng)
    expected = [
        ["xs", "s", "m", "l", "xl"],  # the categorical's own, absent ones kept
        ["blue", "green", "red"],  # sorted
        [False, True],  # sorted
    ]
    for clf in (
        CategoricalNB().fit(df, y),
        MixedNB().fit(df, y),
        TreeAugmentedNB().fit(df, y),
    ):
        assert [c.tolist() for c in clf.categories_] == expected, clf
    bn = BayesianNetwork([("size", "colour")]).fit(df)
    assert [bn.states_[v].tolist() for v in df.columns] == expected
    # The tree is a property of the data, not of the labels' order.
    assert chow_liu_tree(df) == chow_liu_tree(df.astype(object))


@pytest.mark.parity
def test_a_categorical_column_is_sklearns_model_of_its_codes(rng):
    """CategoricalNB on a pandas Categorical == scikit-learn's CategoricalNB on
    its codes with every category declared (min_categories)."""
    df, y = labelled_frame(rng)
    df = df[["size"]].assign(
        colour=pd.Categorical(df["colour"], categories=["red", "green", "blue", "pink"])
    )
    codes = np.column_stack([df[c].cat.codes for c in df])
    ours = CategoricalNB(alpha=0.5).fit(df, y)
    theirs = SkCategoricalNB(alpha=0.5, min_categories=[5, 4]).fit(codes, y)
    for a, b in zip(ours.feature_log_prob_, theirs.feature_log_prob_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(
        ours.predict_proba(df), theirs.predict_proba(codes), rtol=1e-12
    )


def test_mixed_nb_declares_categories(rng):
    df, y = labelled_frame(rng)
    X = df[["colour"]].assign(x=rng.normal(size=len(df)) + y)
    declared = [["red", "green", "blue", "pink"]]
    mixed = MixedNB(m=2.0, categories=declared).fit(X, y)
    assert mixed.categories_[0].tolist() == declared[0]
    cat = CategoricalNB(m=2.0, categories=declared).fit(X[["colour"]], y)
    np.testing.assert_allclose(mixed.feature_log_prob_[0], cat.feature_log_prob_[0])
    # "pink" never seen: the m-estimate's m p / (n_c + m) in every class.
    n_c = np.bincount(y)
    np.testing.assert_allclose(
        np.exp(mixed.feature_log_prob_[0][:, 3]), 2.0 * 0.25 / (n_c + 2.0)
    )
    with pytest.raises(ValueError, match="not among its categories"):
        MixedNB(categories=[["red", "green"]]).fit(X, y)


def test_a_column_with_nothing_observed_must_be_declared():
    df = pd.DataFrame({"a": ["x", "y", "x"], "b": [None, None, None]})
    with pytest.raises(ValueError, match="variable 'b' has no observed state; decl"):
        BayesianNetwork().fit(df)
    bn = BayesianNetwork(states={"b": ["u", "v"]}).fit(df)
    np.testing.assert_allclose(bn.cpds_["b"], [0.5, 0.5])  # the prior p, no data
    with pytest.raises(ValueError, match="feature 'b' has no observed value"):
        CategoricalNB().fit(df, [0, 1, 0])
