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
from sklearn.base import clone
from sklearn.naive_bayes import CategoricalNB as SkCategoricalNB

from bayeskit import (
    BayesianNetwork,
    CategoricalNB,
    MixedNB,
    TreeAugmentedNB,
    chow_liu_tree,
)
from bayeskit._base.encoding import (
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


# -- pd.NA and pd.NaT are missing, as NaN and None are ------------------------------
def _with_missing(X, cells, value, dtype=None):
    """A DataFrame of ``X`` in ``dtype`` (an object ndarray if None), ``value``
    in ``cells``."""
    if dtype is None:
        out = X.astype(object)
        out[cells] = value
        return out
    out = pd.DataFrame(X).astype(dtype)
    for i, j in zip(*np.nonzero(cells)):
        out.iloc[i, j] = value
    return out


@pytest.mark.parametrize("trial", range(6))
def test_pd_na_at_predict_is_nan_in_a_model_of_codes(trial, rng):
    """A CategoricalNB fitted on numeric codes reads pd.NA (and pd.NaT) as a
    missing cell in every container: the same scores as NaN in those cells."""
    n, d = 60, int(rng.integers(1, 4))
    k = 2 if trial % 2 else int(rng.integers(2, 6))  # two codes: booleans too
    X = rng.integers(0, k, size=(n, d))
    X[:k, :] = np.arange(k)[:, None]  # every code seen
    y = rng.integers(0, 3, size=n)
    model = CategoricalNB(alpha=float(rng.uniform(0.1, 2))).fit(X, y)
    cells = rng.random((n, d)) < 0.3
    cells[0] = True  # a row with nothing observed: the prior
    reference = X.astype(float)
    reference[cells] = np.nan
    expected = model.predict_joint_log_proba(reference)
    # Marginalised, not a category: the prior times the observed cells' tables.
    by_hand = np.tile(model.class_log_prior_, (n, 1))
    for i, j in zip(*np.nonzero(~cells)):
        by_hand[i] += model.feature_log_prob_[j][:, X[i, j]]
    np.testing.assert_allclose(expected, by_hand, rtol=1e-12)
    variants = {
        "object pd.NA": _with_missing(X, cells, pd.NA),
        "object pd.NaT": _with_missing(X, cells, pd.NaT),
        "object frame pd.NA": pd.DataFrame(_with_missing(X, cells, pd.NA)),
        "Int64": _with_missing(X, cells, pd.NA, "Int64"),
        "Float64": _with_missing(X, cells, pd.NA, "Float64"),
        "string": _with_missing(X, cells, pd.NA, "string"),
        "category": _with_missing(X, cells, np.nan, "category"),
    }
    if k == 2:
        variants["boolean"] = _with_missing(X, cells, pd.NA, "boolean")
    for name, Xna in variants.items():
        before = Xna.copy()
        np.testing.assert_allclose(
            model.predict_joint_log_proba(Xna), expected, rtol=1e-12, err_msg=name
        )
        np.testing.assert_array_equal(model.predict(Xna), model.predict(reference))
        if isinstance(Xna, pd.DataFrame):
            pd.testing.assert_frame_equal(Xna, before)  # the caller's data untouched
        else:
            assert all(a is b for a, b in zip(Xna.ravel(), before.ravel()))


@pytest.mark.parametrize("trial", range(4))
def test_pd_na_in_fit_is_nan(trial, rng):
    """Fitting on pd.NA / pd.NaT gives the model fitted on NaN in the same cells:
    CategoricalNB's codes and labels, a later partial_fit chunk of codes, and
    MixedNB's categorical and numeric object columns."""
    n, d = 80, 3
    X = rng.integers(0, 4, size=(n, d))
    X[:4, :] = np.arange(4)[:, None]
    y = rng.integers(0, 2, size=n)
    cells = rng.random((n, d)) < 0.25
    cells[:4] = False
    with_nan = X.astype(float)
    with_nan[cells] = np.nan
    test = X[4:20].astype(float)
    for missing in (pd.NA, pd.NaT):
        Xna = _with_missing(X, cells, missing)
        Xnan = _with_missing(X, cells, np.nan)
        for model in (CategoricalNB(), CategoricalNB(categories="observed")):
            expected = clone_fit(model, Xnan, y).predict_joint_log_proba(test)
            got = clone_fit(model, Xna, y).predict_joint_log_proba(test)
            np.testing.assert_allclose(got, expected, rtol=1e-12)
        # A later chunk of a model of codes: the new chunk's missing cells.
        first = CategoricalNB().partial_fit(X[:40], y[:40], classes=[0, 1])
        second = CategoricalNB().partial_fit(X[:40], y[:40], classes=[0, 1])
        first.partial_fit(Xna[40:], y[40:])
        second.partial_fit(with_nan[40:], y[40:])
        np.testing.assert_allclose(
            first.predict_joint_log_proba(test),
            second.predict_joint_log_proba(test),
            rtol=1e-12,
        )
        # MixedNB: column 0 of labels, columns 1 and 2 numbers in object columns.
        labels = np.array(["a", "b", "c", "d"], dtype=object)
        frame_na = pd.DataFrame(Xna, columns=["c", "u", "v"])
        frame_na["c"] = [missing if cells[i, 0] else labels[X[i, 0]] for i in range(n)]
        frame_nan = pd.DataFrame(Xnan, columns=["c", "u", "v"])
        frame_nan["c"] = [np.nan if cells[i, 0] else labels[X[i, 0]] for i in range(n)]
        test_frame = pd.DataFrame(test, columns=["c", "u", "v"]).assign(
            c=labels[X[4:20, 0]]
        )
        mixed_na = MixedNB().fit(frame_na, y)
        mixed_nan = MixedNB().fit(frame_nan, y)
        assert list(mixed_na.categorical_features_) == [True, False, False]
        assert list(mixed_nan.categorical_features_) == [True, False, False]
        np.testing.assert_allclose(
            mixed_na.predict_joint_log_proba(test_frame),
            mixed_nan.predict_joint_log_proba(test_frame),
            rtol=1e-12,
        )
        np.testing.assert_allclose(
            mixed_na.predict_joint_log_proba(frame_na),
            mixed_nan.predict_joint_log_proba(frame_nan),
            rtol=1e-12,
        )


def clone_fit(model, X, y):
    return clone(model).fit(X, y)


@pytest.mark.parametrize("kind", ["U", "S", "i"])
def test_binary_search_codes_are_pandas_hash_table_codes(kind, rng):
    # Sorted categories of strings (or integers) are looked up by binary
    # search; pandas' hash table is the reference: the same code for every
    # value, -2 for an unknown one, -1 where the mask says missing.
    alphabet = np.array(["", "a", "ab", "b", "ba", "z", "\u00e9", "\u4e2d"])
    if kind == "i":
        alphabet = np.array([-7, 0, 3, 4, 10, 11, 1 << 40, 1 << 50])
    elif kind == "S":
        alphabet = np.array([b"", b"a", b"ab", b"b", b"ba", b"z", b"\xff", b"\x01"])
    for _ in range(20):
        categories = np.sort(rng.choice(alphabet, rng.integers(1, 6), replace=False))
        col = rng.choice(alphabet, 200)
        missing = rng.random(200) < 0.1
        expected = pd.Index(categories).get_indexer(col)
        expected[expected < 0] = -2
        expected[missing] = -1
        found = encode_column(col, categories, missing)
        assert found.dtype == np.intp
        np.testing.assert_array_equal(found, expected)
