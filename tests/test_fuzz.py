"""A property-based fuzzer of every public estimator's boundary.

The estimators come from the package's public names (a new one is fuzzed
from its line in ``bayeskit/__init__.py``). Random shapes, dtypes (bool,
int8..uint64, float16..float64, object, text, pandas extension types),
magnitudes (1e-300..1e300), NaN and inf patterns (scattered, whole rows, whole
columns, every row of a class), and
list, nested-list, DataFrame and scipy sparse forms (every format, duplicate
entries included) go into ``fit`` and the prediction
methods; mixed-type DataFrames into MixedNB and TreeAugmentedNB; rows and
``lengths`` (zeros, negatives, wrong sums, sums that wrap around int64) into
every HMM; hand-set HMM parameters (NaN, inf, negative, zero, unnormalised,
misshapen); categorical frames and random evidence into BayesianNetwork;
degenerate data into the mixtures; random shapes and NaN/inf/-inf
log-potentials into the graph core's public functions (the chain kernels,
LogFactor, JunctionTree, TreeBP); Dask arrays in random chunks with empty
ones, and DataFrames with partitions emptied by a filter, into every estimator
that takes Dask (the answer must be the in-memory one). The network files
are fuzzed in tests/test_fuzz_files.py. Whatever the input, the code either works or
raises a ValueError / TypeError from its boundary (bayeskit's or scikit-learn's
validation, never from inside numpy, scipy or numba) whose message names what
is wrong, and:

- no output that claims to be a probability holds NaN, and its rows sum to 1;
- the caller's objects are unchanged;
- no numpy RuntimeWarning ("... encountered in ...") escapes.

The budget is the active hypothesis profile's (registered in
tests/conftest.py): ``ci`` (the default, 200 examples per estimator,
derandomized; the slower targets a half, a third or a fiftieth of it) or
``thorough`` (``pytest --hypothesis-profile=thorough``, 3000).
"""

from __future__ import annotations

import copy
import itertools
import os
import re
import traceback
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bayeskit as bk

# The profiles ``ci`` and ``thorough`` are registered in tests/conftest.py (so
# that ``--hypothesis-profile=thorough`` finds them when pytest starts).
if settings._current_profile == "default":  # pytest's --hypothesis-profile wins
    settings.load_profile("ci")

_BAYESKIT = os.path.dirname(bk.__file__) + os.sep
# Where a boundary error may be raised: bayeskit itself, or scikit-learn's
# validation that bayeskit's boundary calls (its messages name the input).
_SKLEARN_BOUNDARY = (
    "sklearn/utils/validation.py",
    "sklearn/utils/_param_validation.py",
)

DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint64",
    "float16",
    "float32",
    "float64",
    "object",
    "str",
]
EXTENSION = ["Int64", "Float64", "boolean", "string", "category"]
# Every scipy sparse format, and COO / CSR with duplicate entries (not in
# canonical form: a cell's value is the sum of its entries).
SPARSE = ["csr", "csc", "coo", "bsr", "lil", "dok", "dia", "coo_dup", "csr_dup"]


def _sparse(arr, fmt, rng):
    """``arr`` as a scipy sparse matrix of format ``fmt``."""
    import scipy.sparse as sp

    if arr.dtype == np.float16:  # a dtype scipy.sparse does not hold
        arr = arr.astype(np.float32)
    if not fmt.endswith("_dup"):
        return sp.coo_matrix(arr).asformat(fmt)
    rows, cols = np.nonzero(arr)
    values = arr[rows, cols].astype(np.float64)
    split = rng.random(values.shape) < 0.5  # these cells get two entries
    parts = np.where(split, values / 2, values)
    rows = np.concatenate([rows, rows[split]])
    cols = np.concatenate([cols, cols[split]])
    parts = np.concatenate([parts, values[split] / 2])
    if fmt == "coo_dup":
        return sp.coo_matrix((parts, (rows, cols)), shape=arr.shape)
    order = np.lexsort((cols, rows))  # CSR arrays kept as given: not summed
    indptr = np.searchsorted(rows[order], np.arange(arr.shape[0] + 1))
    return sp.csr_matrix((parts[order], cols[order], indptr), shape=arr.shape)


@st.composite
def tables(draw, min_rows=0, max_rows=24, max_cols=4, classes=None):
    """A table in one of the forms users pass: array, list, nested list,
    DataFrame (numpy or extension dtypes), with NaN/inf and any magnitude,
    and missing values in patterns: scattered, whole rows, whole columns and,
    given the rows' ``classes`` (then as many rows), every row of a class."""
    n = draw(st.integers(min_rows, max_rows)) if classes is None else len(classes)
    d = draw(st.integers(0, max_cols))
    kind = draw(st.sampled_from(["small_ints", "normal", "magnitude", "constant"]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if kind == "small_ints":
        values = rng.integers(0, draw(st.integers(1, 5)), size=(n, d)).astype(float)
    elif kind == "normal":
        values = rng.normal(size=(n, d))
    elif kind == "magnitude":
        scale = 10.0 ** draw(st.integers(-300, 300))
        offset = draw(st.sampled_from([0.0, 1e6, -1e150, 1e300]))
        values = offset + scale * rng.normal(size=(n, d))
    else:
        values = np.full((n, d), draw(st.sampled_from([0.0, 1.0, -5.0, 1e200])))
    patterns = ["rows", "columns"] + ([] if classes is None else ["class"])
    holes = draw(st.sampled_from(["none", "nan", "inf", "-inf", "mixed", *patterns]))
    if holes in patterns and values.size:
        if holes == "rows":  # some rows missing in every column
            values[rng.random(n) < draw(st.sampled_from([0.2, 0.5, 1.0]))] = np.nan
        elif holes == "columns":  # some columns missing in every row
            values[:, rng.random(d) < draw(st.sampled_from([0.3, 1.0]))] = np.nan
        else:  # every row of the first row's class missing
            values[np.asarray(classes) == classes[0]] = np.nan
    elif holes != "none" and values.size:
        mask = rng.random(values.shape) < draw(st.sampled_from([0.05, 0.5, 1.0]))
        fill = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}.get(holes)
        if fill is None:
            fill = rng.choice([np.nan, np.inf, -np.inf], size=values.shape)[mask]
        values[mask] = fill
    form = draw(st.sampled_from(["array", "list", "frame", "extension", "sparse"]))
    dtype = draw(st.sampled_from(DTYPES))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if d == 0 or n == 0:
            arr = values.astype(dtype if dtype != "str" else object)
        elif dtype == "str":
            arr = values.astype(str)
        elif dtype == "object":
            arr = values.astype(object)
        else:
            finite = np.where(np.isfinite(values), values, 0.0)
            arr = (
                values.astype(dtype)
                if dtype.startswith("float")
                else finite.astype(dtype)
            )
    if form == "array":
        return arr
    if form == "list":
        return arr.tolist()
    if form == "sparse" and arr.dtype.kind in "biuf":
        return _sparse(arr, draw(st.sampled_from(SPARSE)), rng)
    columns = [f"f{j}" for j in range(d)]
    frame = pd.DataFrame(arr, columns=columns)
    if form == "extension" and d:
        ext = draw(st.sampled_from(EXTENSION))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                frame = frame.astype(ext)
            except Exception:
                pass  # an extension type that cannot hold these values
    return frame


@st.composite
def labels(draw, n):
    """Class labels of ``n`` rows: ints, strings, floats with NaN, bools."""
    k = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    codes = np.random.default_rng(seed).integers(0, k, size=n)
    kind = draw(st.sampled_from(["int", "str", "float", "bool", "series", "list"]))
    if kind == "int":
        return codes
    if kind == "str":
        return np.array(["a", "b", "c", "d"])[codes]
    if kind == "float":
        y = codes.astype(float)
        if n and draw(st.booleans()):
            y[0] = np.nan
        return y
    if kind == "bool":
        return codes % 2 == 0
    if kind == "series":
        return pd.Series(np.array(["x", "y", "z", "w"])[codes], dtype="category")
    return codes.tolist()


def _rows(X) -> int:
    """The number of rows of a table in any of its forms (sparse included)."""
    return X.shape[0] if hasattr(X, "shape") else len(X)


def _snapshot(obj):
    return copy.deepcopy(obj)


def _same(a, b) -> bool:
    if hasattr(a, "tocoo"):  # a scipy sparse matrix: its format and entries
        return (
            a.format == b.format
            and a.shape == b.shape
            and all(
                _same(getattr(a, k), getattr(b, k))
                for k in ("data", "indices", "indptr", "row", "col", "offsets")
                if hasattr(a, k)
            )
            and (a.format != "dok" or dict(a.items()) == dict(b.items()))
        )
    if isinstance(a, pd.DataFrame | pd.Series):
        return a.equals(b) and list(getattr(a, "columns", [])) == list(
            getattr(b, "columns", [])
        )
    if isinstance(a, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype.kind == "O":
            return _same(a.ravel().tolist(), b.ravel().tolist())
        return np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b or (a != a and b != b)  # NaN is itself


def _raised_at_the_boundary(exc: BaseException) -> bool:
    """The innermost frame of the traceback is bayeskit's or scikit-learn's
    validation, not numpy, scipy, pandas or numba."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return True
    path = os.path.abspath(frames[-1].filename)
    return path.startswith(_BAYESKIT) or path.replace(os.sep, "/").endswith(
        _SKLEARN_BOUNDARY
    )


def _check_probabilities(proba, n_rows):
    proba = np.asarray(proba, dtype=float)
    assert proba.shape[0] == n_rows
    assert not np.isnan(proba).any(), "a probability is NaN"
    assert np.all(proba >= 0) and np.all(proba <= 1 + 1e-12)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)


# What a boundary error names: an argument (X, y, lengths, ...), or the part of
# one that is wrong (a feature, a class, a column, a state, a variable).
_NAMED = re.compile(
    r"\b(X|y|lengths|sample_weight|sequence|symbols?|features?|class(es)?|"
    r"columns?|categor\w*|labels?|states?|variables?|evidence|n_components|"
    r"n_trials|priors|log_\w+|cardinalit\w+|potential|weights_?|duration\w*|\w+_prior\w*|"
    r"reg_\w+|covars_\w*|[a-z]\w*_)\b"  # the last: any fitted attribute, by its name
)
# Known defects of files owned elsewhere, each pinned by a strict xfail in
# test_boundary.py: GaussianMixtureClassifier's message for a class of one
# sample, and _encoding.py's np.isnan on an object column at prediction.
# scikit-learn's own message for an X of too few rows, as its mixtures say it.
_KNOWN = (
    "is required by GaussianMixture.",
    "is required by BayesianGaussianMixture.",
)


def _names_what_is_wrong(exc):
    assert _NAMED.search(str(exc)) or any(k in str(exc) for k in _KNOWN), (
        f"the error names no argument: {type(exc).__name__}: {exc}"
    )


def _run(calls):
    """Run ``calls`` (callables) in order; stop at the first boundary error.

    Returns the exception (or None). Any other exception, or one raised from
    inside a dependency, fails the test; so does an escaping numpy warning.
    """
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        error = None
        for call in calls:
            try:
                call()
            except (ValueError, TypeError) as exc:
                assert _raised_at_the_boundary(exc), (
                    f"{type(exc).__name__} raised inside a dependency: {exc}\n"
                    + "".join(traceback.format_tb(exc.__traceback__)[-3:])
                )
                _names_what_is_wrong(exc)
                error = exc
                break
    leaked = [
        w for w in record if "encountered in" in str(w.message) or "numpy" in w.filename
    ]
    assert not leaked, f"numpy warning escaped: {leaked[0].message}"
    return error


def _public(kind, strings=True):
    """``(makers, ids)`` of every public estimator of ``kind`` (``'classifier'``
    or ``'density_estimator'``) that reads a table (``two_d_array``; of
    numbers only unless ``strings``), from the
    package's names: a new one is fuzzed without an edit here. Two components
    and a short EM where it has them."""
    import public_estimators as pe
    from sklearn.base import BaseEstimator
    from sklearn.utils import get_tags

    makers, ids = [], []
    for name in bk.__all__:
        cls = getattr(bk, name)
        if not (isinstance(cls, type) and issubclass(cls, BaseEstimator)):
            continue
        cls = pe.runnable(cls)  # with the metadata it declares (_step_metadata)
        tags = get_tags(cls())
        if tags.estimator_type != kind or not tags.input_tags.two_d_array:
            continue
        if tags.input_tags.string and not strings:
            continue
        params = cls().get_params()
        quick = {"n_components": 2 if kind != "classifier" else 1}
        quick = quick if "n_components" in params else {}
        quick.update({k: 3 for k in ("max_iter", "n_iter") if k in params})
        # Seeded: a failing example must fail again when replayed.
        quick.update({"random_state": 0} if "random_state" in params else {})
        makers.append(lambda cls=cls, quick=quick: cls(**quick))
        ids.append(name)
    return makers, ids


def _classifiers():
    makers, ids = _public("classifier")
    # the options whose code paths differ
    makers.append(lambda: bk.BernoulliNB(binarize=0.5))
    ids.append("BernoulliNB-binarize")
    return makers, ids


CLASSIFIERS, CLASSIFIER_IDS = _classifiers()


def test_the_classifiers_are_found_from_the_public_names():
    for name in ("GaussianNB", "MixedNB", "NaiveBayes", "TreeAugmentedNB"):
        assert name in CLASSIFIER_IDS
    assert "HMMClassifier" not in CLASSIFIER_IDS  # lists of sequences: below


def _class_codes(y):
    """The class of every row of the labels ``y`` (NaN one more class)."""
    return pd.factorize(pd.Series(np.asarray(y, dtype=object)))[0]


@pytest.mark.parametrize("make", CLASSIFIERS, ids=CLASSIFIER_IDS)
@given(data=st.data())
def test_classifiers_work_or_refuse_at_the_boundary(make, data):
    """fit / predict_proba / predict / score on any table and labels."""
    n = data.draw(st.integers(1, 24))
    y = data.draw(labels(n))
    X = data.draw(tables(classes=_class_codes(y)))
    X_new = data.draw(tables(min_rows=1, max_rows=8))
    before = [_snapshot(v) for v in (X, y, X_new)]
    est = make()
    out = {}
    _run(
        [
            lambda: est.fit(X, y),
            lambda: out.setdefault("proba", est.predict_proba(X)),
            lambda: out.setdefault("pred", est.predict(X)),
            lambda: out.setdefault("score", est.score(X, y)),
            lambda: out.setdefault("new", est.predict_proba(X_new)),
        ]
    )
    if "proba" in out:
        _check_probabilities(out["proba"], n)
    if "new" in out:
        _check_probabilities(out["new"], _rows(X_new))
    for original, now in zip(before, (X, y, X_new)):
        assert _same(original, now), "an input was modified"


def _density_models():
    """Every public density model of numeric tables (models of categorical
    tables, the networks and symbol sequences, have fuzzers of their own,
    below); plus the options whose code paths differ."""
    makers, ids = _public("density_estimator", strings=False)
    makers.append(lambda: bk.GaussianMixture(covariance_type="diag", max_iter=5))
    ids.append("GaussianMixture-diag")
    return makers, ids


DENSITY_MODELS, DENSITY_IDS = _density_models()


def test_the_density_models_are_found_from_the_public_names():
    for name in (
        "BayesianGaussianMixture",
        "GaussianMixture",
        "GaussianHMM",
        "MixtureModel",
        "PoissonMixture",
    ):
        assert name in DENSITY_IDS


@pytest.mark.parametrize("make", DENSITY_MODELS, ids=DENSITY_IDS)
@given(data=st.data())
def test_density_models_work_or_refuse_at_the_boundary(make, data):
    """fit / score_samples / predict_proba of the unsupervised models."""
    X = data.draw(tables(min_rows=1))
    before = _snapshot(X)
    est = make()
    out = {}
    calls = [lambda: est.fit(X), lambda: out.setdefault("score", est.score(X))]
    if hasattr(est, "predict_proba"):  # a linear dynamical system has no states
        calls.insert(1, lambda: out.setdefault("proba", est.predict_proba(X)))
    _run(calls)
    if "proba" in out:
        _check_probabilities(out["proba"], _rows(X))
    if "score" in out:
        assert not np.isnan(out["score"])
    assert _same(before, X), "an input was modified"


@st.composite
def symbol_sequences(draw):
    """Symbols for CategoricalHMM: a column, a list of sequences, or odd input."""
    n = draw(st.integers(0, 20))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["ints", "strings", "huge", "negative", "floats"]))
    if kind == "ints":
        values = rng.integers(0, 4, size=n)
    elif kind == "strings":
        values = np.array(list("abcd"))[rng.integers(0, 4, size=n)]
    elif kind == "huge":
        values = rng.integers(0, 4, size=n)
        if n:
            values[0] = 2**40
    elif kind == "negative":
        values = rng.integers(-2, 3, size=n)
    else:
        values = rng.normal(size=n)
    form = draw(st.sampled_from(["column", "lists", "ragged"]))
    if form == "column":
        return values.reshape(-1, 1), None
    if form == "lists":
        return [values.tolist(), values[::-1].tolist()], None
    cuts = sorted(draw(st.sets(st.integers(1, max(n - 1, 1)), max_size=3)))
    lengths = np.diff([0, *[c for c in cuts if c < n], n]).tolist() if n else [0]
    return values.reshape(-1, 1), lengths


@given(data=st.data())
def test_categorical_hmm_works_or_refuses_at_the_boundary(data):
    """CategoricalHMM on any symbols and lengths."""
    X, lengths = data.draw(symbol_sequences())
    before = _snapshot((X, lengths))
    est = bk.CategoricalHMM(n_components=2, n_iter=3, random_state=0)
    out = {}
    _run(
        [
            lambda: est.fit(X, lengths),
            lambda: out.setdefault("proba", est.predict_proba(X, lengths)),
            lambda: out.setdefault("score", est.score(X, lengths)),
        ]
    )
    if "proba" in out:
        proba = out["proba"]
        proba = np.concatenate(proba) if isinstance(proba, list) else proba
        _check_probabilities(proba, len(proba))
    assert _same(before[0], X) and before[1] == lengths, "an input was modified"


# -- the estimators the tests above leave out ------------------------------------------

# A smaller budget for each of the targets below, a fraction of the profile's
# (100 and 66 examples on ci), so that the file stays within a few minutes.
_FEW = settings(max_examples=max(settings().max_examples // 2, 1))
# The slowest targets (EM fits of several models per example): fewer still.
_FEWER = settings(max_examples=max(settings().max_examples // 3, 1))


def _names_a_parameter(error, names):
    """A boundary error names one of ``names`` (the offending parameter)."""
    text = str(error)
    assert any(name in text for name in names), (
        f"the error names none of {names}: {type(error).__name__}: {text}"
    )


def _bad_cells(draw, rng, n):
    """A column of ``n`` numbers with NaN, inf, large values (1e140, or 1e300
    which a Gaussian model refuses) or none of them."""
    values = rng.normal(size=n) * 10.0 ** draw(st.integers(-10, 10))
    spoil = draw(st.sampled_from(["none", "none", "nan", "inf", "huge", "beyond"]))
    if spoil != "none" and n:
        at = rng.integers(0, n)
        values[at] = {"nan": np.nan, "inf": np.inf, "huge": 1e140, "beyond": 1e300}[
            spoil
        ]
    return values


@st.composite
def mixed_frames(draw, min_rows=1, max_rows=16):
    """DataFrames mixing category, object, bool, string and numeric columns,
    with NaN/None, inf, huge values and empty (all-missing) columns."""
    n = draw(st.integers(min_rows, max_rows))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kinds = draw(
        st.lists(
            st.sampled_from(
                ["category", "object", "bool", "string", "float", "int", "empty"]
            ),
            min_size=0,
            max_size=4,
        )
    )
    columns = {}
    for j, kind in enumerate(kinds):
        letters = np.array(list("pqrs"))[rng.integers(0, 3, size=n)].astype(object)
        if kind in ("category", "object", "string") and n and draw(st.booleans()):
            letters[rng.integers(0, n)] = None
        if kind == "category":
            col = pd.Series(letters, dtype="category")
        elif kind == "object":
            col = pd.Series(letters, dtype=object)
        elif kind == "string":
            col = pd.Series(letters, dtype="string")
        elif kind == "bool":
            col = pd.Series(rng.integers(0, 2, size=n).astype(bool))
        elif kind == "float":
            col = pd.Series(_bad_cells(draw, rng, n))
        elif kind == "int":
            col = pd.Series(rng.integers(-3, 3, size=n))
        else:
            col = pd.Series(
                [None] * n, dtype=draw(st.sampled_from(["object", "float"]))
            )
        columns[f"{kind}{j}"] = col
    return pd.DataFrame(columns, index=range(n))


@pytest.mark.parametrize(
    "make",
    [bk.MixedNB, lambda: bk.TreeAugmentedNB()],
    ids=["MixedNB", "TreeAugmentedNB"],
)
@_FEW
@given(data=st.data())
def test_mixed_frames_work_or_refuse_at_the_boundary(make, data):
    """MixedNB and TreeAugmentedNB on DataFrames of mixed column types."""
    X = data.draw(mixed_frames())
    y = data.draw(labels(len(X)))
    X_new = data.draw(mixed_frames(max_rows=6))
    before = [_snapshot(v) for v in (X, y, X_new)]
    est = make()
    out = {}
    _run(
        [
            lambda: est.fit(X, y),
            lambda: out.setdefault("proba", est.predict_proba(X)),
            lambda: out.setdefault("pred", est.predict(X)),
            lambda: out.setdefault("new", est.predict_proba(X_new)),
        ]
    )
    if "proba" in out:
        _check_probabilities(out["proba"], len(X))
    if "new" in out:
        _check_probabilities(out["new"], _rows(X_new))
    for original, now in zip(before, (X, y, X_new)):
        assert _same(original, now), "an input was modified"


@st.composite
def sequence_lengths(draw, n):
    """``lengths`` for ``n`` rows: None, a valid split, or an invalid one
    (zeros, negatives, a wrong sum, floats, huge values whose int64 sum wraps
    around to ``n``)."""
    kind = draw(
        st.sampled_from(
            ["none", "valid", "valid", "zero", "negative", "sum", "wrap", "float", "2d"]
        )
    )
    if kind == "none":
        return None, True
    cuts = sorted(draw(st.sets(st.integers(1, max(n - 1, 1)), max_size=3)))
    valid = np.diff([0, *[c for c in cuts if c < n], n]).tolist() if n else []
    if kind == "valid":
        return valid, n > 0
    if kind == "zero":
        return [*valid, 0], False
    if kind == "negative":
        return [*valid, -2, 2], False
    if kind == "sum":
        return [*valid, draw(st.integers(1, 3))], False
    if kind == "wrap":
        return [2**62, 2**62, 2**62, 2**62 + n], False
    if kind == "float":
        return [float(v) + 0.5 for v in valid] or [0.5], False
    return [valid], False


@st.composite
def sequence_rows(draw, family):
    """Rows for an HMM of ``family`` ('gaussian', 'poisson', 'multinomial',
    'positive'), valid or spoiled (NaN, inf, negative or fractional counts,
    huge values)."""
    n = draw(st.integers(0, 20))
    d = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if family == "gaussian":
        X = rng.normal(size=(n, d)) * 10.0 ** draw(st.integers(-6, 6))
        if draw(st.booleans()):
            X[:, 0] = draw(st.sampled_from([0.0, 1e9]))  # a constant column
    elif family == "poisson":
        X = rng.poisson(3.0, size=(n, d)).astype(float)
    elif family == "positive":
        X = rng.gamma(2.0, size=(n, d)) + 0.1
    else:
        X = rng.multinomial(4, np.ones(d) / d, size=n).astype(float)
    spoil = draw(
        st.sampled_from(["none", "none", "nan", "inf", "negative", "half", "huge"])
    )
    if spoil != "none" and n:
        X[rng.integers(0, n), rng.integers(0, d)] = {
            "nan": np.nan,
            "inf": np.inf,
            "negative": -1.0,
            "half": 0.5,
            # Beyond 1e150 every model refuses it, naming the feature.
            "huge": 1e300,
        }[spoil]
    return X, spoil == "none" or (
        (family == "gaussian" and spoil in ("negative", "half"))
        or (family == "positive" and spoil == "half")
    )


def _sequence_models():
    """Every public HMM of numeric rows (symbols have a fuzzer of their own,
    above), by the rows its family reads: two states, a short EM, seeded;
    from the package's names, so that a new HMM is fuzzed without an edit
    here. Plus the options whose code paths differ."""
    import public_estimators as pe

    rows = {"fixed_counts": "multinomial", "counts": "poisson", "positive": "positive"}
    out = {}
    for cls in pe.hidden_markov_models():
        est = pe.make(cls)
        kind = pe.support(est)
        if kind == "symbols":
            continue
        quick = {"n_components": 2, "n_iter": 3, "random_state": 0}
        if "n_trials" in est.get_params():
            quick["n_trials"] = 4  # the rows' (sequence_rows)

        def make(cls=cls, quick=quick):
            return pe.make(cls).set_params(**quick)

        out[cls.__name__] = (rows.get(kind, "gaussian"), make)
    out["GaussianHMM-full"] = (
        "gaussian",
        lambda: bk.GaussianHMM(2, "full", n_iter=3, random_state=0),
    )
    return out


HMMS = _sequence_models()


def test_the_sequence_models_are_found_from_the_public_names():
    for name in ("GaussianHMM", "PoissonHMM", "GMMHMM", "MultinomialHMM"):
        assert name in HMMS
    assert "HiddenMarkovModel" in HMMS and "CategoricalHMM" not in HMMS


@pytest.mark.parametrize("name", list(HMMS))
@_FEWER
@given(data=st.data())
def test_sequence_models_work_or_refuse_at_the_boundary(name, data):
    """fit / predict_proba / score / predict of the HMMs on any rows and any
    ``lengths``; a wrong ``lengths`` with good rows is an error naming it."""
    family, make = HMMS[name]
    X, X_ok = data.draw(sequence_rows(family))
    lengths, lengths_ok = data.draw(sequence_lengths(len(X)))
    before = _snapshot((X, lengths))
    est = make()
    out = {}
    error = _run(
        [
            lambda: est.fit(X, lengths),
            lambda: out.setdefault("proba", est.predict_proba(X, lengths)),
            lambda: out.setdefault("score", est.score(X, lengths)),
            lambda: out.setdefault("path", est.predict(X, lengths)),
        ]
    )
    if X_ok and len(X) and not lengths_ok:
        assert error is not None, f"lengths={lengths} was accepted"
        _names_a_parameter(error, ["lengths"])
    if "proba" in out:
        _check_probabilities(out["proba"], len(X))
    if "score" in out:
        assert np.isfinite(out["score"]) or out["score"] == -np.inf
    assert _same(before[0], X) and before[1] == lengths, "an input was modified"


def _hand_set():
    """Every public HMM (an estimator with ``_param_names``, hmmlearn's letters
    of its fitted parameters), two states, one EM iteration, the rows it reads
    and its public fitted parameters: from the package's names, so that a new
    HMM is fuzzed without an edit here."""
    import public_estimators as pe

    out = {}
    for cls in pe.classes():
        est = pe.make(cls)
        names = getattr(est, "_param_names", {}).values()
        names = tuple(n for n in names if not n.startswith("_"))
        if not names:
            continue
        quick = {k: 1 for k in ("n_iter", "max_iter") if k in est.get_params()}

        def make(cls=cls, quick=quick):
            return pe.make(cls).set_params(n_components=2, **quick)

        def rows(rng, est=est):
            return np.asarray(pe.data(est, n=60, seed=int(rng.integers(2**16)))[0])

        out[cls.__name__] = (make, rows, names)
    return out


HAND_SET = _hand_set()


def test_the_hand_set_hmms_are_found_from_the_public_names():
    for name in ("GaussianHMM", "GMMHMM", "MultinomialHMM", "HiddenSemiMarkovModel"):
        assert name in HAND_SET


@st.composite
def spoiled(draw, value, rng):
    """``value`` (a fitted parameter) spoiled in one way, or left valid."""
    kinds = ["valid", "nan", "inf", "negative", "zeros", "unnormalised", "shape"]
    kind = draw(st.sampled_from([*kinds, "huge"]))
    v = np.array(value, dtype=float)
    if kind == "nan":
        v.flat[rng.integers(0, v.size)] = np.nan
    elif kind == "inf":
        v.flat[rng.integers(0, v.size)] = np.inf
    elif kind == "negative":
        v.flat[rng.integers(0, v.size)] = -0.5
    elif kind == "zeros":
        v = np.zeros_like(v)
    elif kind == "unnormalised":
        v = v * 2.0
    elif kind == "shape":
        v = np.concatenate([v, v[:1]], axis=0)
    elif kind == "huge":
        v = v * 1e300
    return v


@pytest.mark.parametrize("name", list(HAND_SET))
@_FEWER
@given(data=st.data())
def test_hand_set_hmm_parameters_work_or_refuse_naming_them(name, data):
    """A fitted HMM with one parameter set by hand to anything: every method
    works, or refuses at the boundary naming what is wrong."""
    make, rows, names = HAND_SET[name]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    X = rows(rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            est = make().fit(X)
        except ValueError:  # a start too degenerate to fit (fuzzed elsewhere)
            return
    attr = data.draw(st.sampled_from(names))
    value = data.draw(spoiled(getattr(est, attr), rng))
    out = {}
    error = _run(
        [
            lambda: setattr(est, attr, value),
            lambda: out.setdefault("proba", est.predict_proba(X)),
            lambda: out.setdefault("score", est.score(X)),
            lambda: out.setdefault("path", est.decode(X)),
            lambda: out.setdefault("sample", est.sample(5, random_state=0)),
        ]
    )
    if error is not None:
        _names_a_parameter(
            error, [attr, attr.rstrip("_"), "X", "sequence", *est.get_params()]
        )
    if "proba" in out:
        _check_probabilities(out["proba"], len(X))
    if "score" in out:
        assert not np.isnan(out["score"])


@_FEW
@given(data=st.data())
def test_hmm_classifier_works_or_refuses_at_the_boundary(data):
    """HMMClassifier on lists of symbol sequences, some empty or spoiled."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    n_seq = data.draw(st.integers(0, 6))
    kind = data.draw(st.sampled_from(["ints", "ints", "empty", "negative", "floats"]))
    seqs = []
    for _ in range(n_seq):
        length = data.draw(st.integers(0 if kind == "empty" else 1, 6))
        s = rng.integers(0, 3, size=(length, 1))
        if kind == "negative" and length:
            s[0, 0] = -1
        seqs.append(s.astype(float) + 0.5 if kind == "floats" else s)
    y = data.draw(labels(n_seq))
    before = _snapshot((seqs, y))
    est = bk.HMMClassifier(bk.CategoricalHMM(2, n_iter=2, random_state=0))
    out = {}
    _run(
        [
            lambda: est.fit(seqs, y),
            lambda: out.setdefault("proba", est.predict_proba(seqs)),
            lambda: out.setdefault("pred", est.predict(seqs)),
        ]
    )
    if "proba" in out:
        _check_probabilities(out["proba"], n_seq)
    assert _same(before[0], seqs) and _same(before[1], y), "an input was modified"


@st.composite
def categorical_frames(draw, min_rows=1, max_rows=16):
    """Categorical DataFrames of 1 to 4 columns (letters, ints, bools), some
    cells missing."""
    n = draw(st.integers(min_rows, max_rows))
    d = draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    columns = {}
    for j in range(d):
        kind = draw(st.sampled_from(["letters", "ints", "bools", "category"]))
        k = draw(st.integers(1, 3))
        codes = rng.integers(0, k, size=n)
        if kind == "letters":
            col = pd.Series(np.array(list("abc"))[codes], dtype=object)
        elif kind == "ints":
            col = pd.Series(codes)
        elif kind == "bools":
            col = pd.Series(codes % 2 == 0)
        else:
            col = pd.Series(np.array(list("xyz"))[codes], dtype="category")
        columns[f"v{j}"] = col
    frame = pd.DataFrame(columns)
    if draw(st.booleans()) and n:
        frame = frame.astype(object)
        frame.iloc[rng.integers(0, n), rng.integers(0, d)] = None
    return frame


@_FEW
@given(data=st.data())
def test_bayesian_network_works_or_refuses_at_the_boundary(data):
    """BayesianNetwork: fit on a random categorical frame with a random chain
    structure, then predict_proba / predict / score_samples and query with
    random evidence (known and unknown variables and states)."""
    X = data.draw(categorical_frames())
    cols = list(X.columns)
    edges = [(a, b) for a, b in itertools.pairwise(cols) if data.draw(st.booleans())]
    X_new = X.iloc[: data.draw(st.integers(1, len(X)))].copy()
    if data.draw(st.booleans()):
        X_new = X_new.astype(object)
        X_new.iloc[0, 0] = None
    target = data.draw(st.sampled_from([*cols, "nowhere"]))
    evidence = {}
    for c in cols:
        if c != target and data.draw(st.booleans()):
            evidence[c] = data.draw(st.sampled_from([X[c].iloc[0], "zz", 7]))
    m = data.draw(st.sampled_from([1.0, 0.0]))
    before = _snapshot((X, X_new, evidence))
    est = bk.BayesianNetwork(edges, m=m)
    out = {}
    _run(
        [
            lambda: est.fit(X),
            lambda: out.setdefault("proba", est.predict_proba(X_new)),
            lambda: out.setdefault("fill", est.predict(X_new)),
            lambda: out.setdefault("ll", est.score_samples(X_new)),
            lambda: out.setdefault("query", est.query(target, evidence)),
        ]
    )
    if "proba" in out:
        proba = out["proba"]
        for v in cols:
            _check_probabilities(proba[v].to_numpy(), len(X_new))
    if "ll" in out:
        ll = out["ll"]
        assert not np.isnan(ll).any() and np.all(ll <= 1e-9)
    if "query" in out:
        q = out["query"].to_numpy()
        assert not np.isnan(q).any() and np.all((q >= 0) & (q <= 1))
        np.testing.assert_allclose(q.sum(), 1.0, atol=1e-9)
    for original, now in zip(before, (X, X_new, evidence)):
        assert _same(original, now), "an input was modified"


# -- the graph core's public functions -----------------------------------------------


@st.composite
def log_tables(draw, shape, max_exponent=300):
    """Log-potentials of ``shape``: log-probabilities (rows summing to one),
    arbitrary finite values (up to ``10**max_exponent`` in magnitude), or
    spoiled with NaN, +inf, -inf."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["normalised", "normalised", "free", "zeros"]))
    if kind == "normalised" and shape and shape[-1]:
        p = rng.dirichlet(np.ones(shape[-1]), size=shape[:-1]) if shape else None
        with np.errstate(divide="ignore"):
            values = np.log(p).reshape(shape)
    elif kind == "zeros":
        values = np.zeros(shape)
    else:
        values = rng.normal(size=shape) * 10.0 ** draw(st.integers(0, max_exponent))
    spoil = draw(
        st.sampled_from(["none", "none", "none", "nan", "inf", "-inf", "all-inf"])
    )
    values = np.asarray(values, dtype=float)  # a table of shape () too
    if values.size and spoil != "none":
        mask = np.asarray(rng.random(shape) < 0.3)
        if spoil == "all-inf":
            mask[...] = True
        values[mask] = {"nan": np.nan, "inf": np.inf}.get(spoil, -np.inf)
    return values, spoil in ("none", "-inf", "all-inf")


CHAIN_NAMES = ["log_startprob", "log_transmat", "log_emission", "lengths", "symbols"]


@_FEW
@given(data=st.data())
def test_chain_functions_work_or_refuse_naming_the_argument(data):
    """forward / forward_backward / viterbi on random shapes and values: a
    result whose probabilities are probabilities and whose log-likelihoods
    are finite or -inf, or an error naming the argument."""
    from bayeskit.graph import forward, forward_backward, viterbi

    k = data.draw(st.integers(0, 3))
    k_t = data.draw(st.sampled_from([k, k, k + 1]))
    n = data.draw(st.integers(0, 8))
    # Start and transition log-masses beyond ~709 make chain.py's own error
    # message overflow (an OverflowError, a known defect of chain.py pinned by
    # a strict xfail in test_boundary.py): their magnitudes stay below 1e2.
    start, _ = data.draw(log_tables((k,), max_exponent=2))
    trans, _ = data.draw(log_tables((k, k_t), max_exponent=2))
    emission, _ = data.draw(log_tables((n, k)))
    lengths, _ = data.draw(sequence_lengths(n))
    use_symbols = data.draw(st.booleans()) and n
    symbols = None
    if use_symbols:
        symbols = np.random.default_rng(n).integers(-1 if k == 3 else 0, n, size=n)
    args = (start, trans, emission, lengths)
    before = _snapshot((*args, symbols))
    out = {}
    error = _run(
        [
            lambda: out.setdefault("fb", forward_backward(*args, symbols=symbols)),
            lambda: out.setdefault("f", forward(*args, symbols=symbols)),
            lambda: out.setdefault("v", viterbi(*args, symbols=symbols)),
        ]
    )
    if error is not None:
        _names_a_parameter(error, CHAIN_NAMES)
    if "fb" in out:
        post = out["fb"]
        ll = np.asarray(post.log_likelihood)
        assert not np.isnan(ll).any() and np.all(ll < np.inf)
        gamma = np.exp(np.asarray(post.log_posterior))
        assert not np.isnan(gamma).any()
        assert np.all((gamma >= 0) & (gamma <= 1 + 1e-9))
        # Rows of sequences of positive likelihood sum to one.
        bounds = np.concatenate([[0], np.cumsum(lengths if lengths else [n])])
        for s, (a, b) in enumerate(itertools.pairwise(bounds)):
            if ll[s] > -np.inf:
                np.testing.assert_allclose(gamma[a:b].sum(axis=1), 1.0, atol=1e-9)
    if "f" in out:
        ll = np.asarray(out["f"].log_likelihood)
        assert not np.isnan(ll).any() and np.all(ll < np.inf)
        np.testing.assert_allclose(ll, np.asarray(out["fb"].log_likelihood))
    if "v" in out:
        path, score = out["v"]
        assert np.all((np.asarray(path) >= 0) & (np.asarray(path) < k))
        assert not np.isnan(score).any()
    for original, now in zip(before, (*args, symbols)):
        assert _same(original, now), "an input was modified"


@_FEW
@given(data=st.data())
def test_factor_operations_work_or_refuse(data):
    """LogFactor construction, product, marginalisation, reduction and
    normalisation on random tables, batch axes and evidence."""
    from bayeskit.graph import MAX_PRODUCT, LogFactor

    cards_a = data.draw(st.lists(st.integers(0, 3), min_size=0, max_size=3))
    batch = data.draw(st.sampled_from([None, 0, 2]))
    names_a = [f"v{j}" for j in range(len(cards_a))]
    shape_a = tuple(cards_a) if batch is None else (batch, *cards_a)
    values_a, _ = data.draw(log_tables(shape_a))
    cards_b = [data.draw(st.integers(1, 3)), *cards_a[:1]]
    names_b = ["w", *names_a[:1]]
    values_b, _ = data.draw(log_tables(tuple(cards_b)))
    evidence = {}
    if names_a and data.draw(st.booleans()):
        evidence[names_a[0]] = data.draw(
            st.sampled_from([0, -1, 5, 1.5, np.array([0, 1]), "a"])
        )
    before = _snapshot((values_a, values_b, evidence))
    out = {}
    error = _run(
        [
            lambda: out.setdefault("a", LogFactor(names_a, cards_a, values_a)),
            lambda: out.setdefault("b", LogFactor(names_b, cards_b, values_b)),
            lambda: out.setdefault("ab", out["a"] * out["b"]),
            lambda: out.setdefault("m", out["ab"].marginalize(["w"])),
            lambda: out.setdefault("mx", out["ab"].marginalize(["w"], MAX_PRODUCT)),
            lambda: out.setdefault("r", out["ab"].reduce(evidence)),
            lambda: out.setdefault("n", out["r"].normalize()),
        ]
    )
    if error is not None:
        _names_a_parameter(
            error,
            ["log_values", "cardinalities", "variables", "evidence", "batch", "states"],
        )
    for key in ("ab", "m", "mx", "r"):
        if key in out:
            assert not np.isnan(out[key].log_values).any()
            assert not (out[key].log_values == np.inf).any()
    if "n" in out:
        normed, log_z = out["n"]
        assert not np.isnan(normed.log_values).any()
        assert not np.isnan(log_z).any()
        p = np.exp(normed.log_values)
        lead = p.shape[0] if normed.batched else 1
        sums = p.reshape(lead, int(np.prod(normed.cardinalities))).sum(axis=1)
        ok = np.asarray(log_z).reshape(-1) > -np.inf
        np.testing.assert_allclose(sums[ok], 1.0, atol=1e-9)
    for original, now in zip(before, (values_a, values_b, evidence)):
        assert _same(original, now), "an input was modified"


@_FEW
@given(data=st.data())
def test_junction_tree_works_or_refuses(data):
    """JunctionTree.from_dag / calibrate / marginal / max_product on random
    chains and trees with random (spoiled) tables and batched evidence."""
    from bayeskit.graph import DAG, JunctionTree, LogFactor

    n_nodes = data.draw(st.integers(1, 4))
    names = [f"x{j}" for j in range(n_nodes)]
    parents = {
        v: [names[data.draw(st.integers(0, j - 1))]] if j else []
        for j, v in enumerate(names)
    }
    edges = [(p, v) for v, ps in parents.items() for p in ps]
    cards = {v: data.draw(st.integers(1, 3)) for v in names}
    tables = []
    for v in names:
        shape = (*tuple(cards[p] for p in parents[v]), cards[v])
        values, _ = data.draw(log_tables(shape))
        tables.append(([*list(parents[v]), v], shape, values))
    batch = data.draw(st.sampled_from([None, 0, 3]))
    if batch is not None:
        ev_values, _ = data.draw(log_tables((batch, cards[names[-1]])))
    before = _snapshot([t[2] for t in tables])
    out = {}
    semiring = data.draw(st.sampled_from(["sum", "max"]))

    def factors():
        fs = [LogFactor(scope, shape, values) for scope, shape, values in tables]
        if batch is not None:
            fs.append(LogFactor([names[-1]], [cards[names[-1]]], ev_values))
        return fs

    def calibrate():
        from bayeskit.graph import MAX_PRODUCT, SUM_PRODUCT

        tree = JunctionTree.from_dag(DAG(edges) if edges else DAG(nodes=names))
        sr = SUM_PRODUCT if semiring == "sum" else MAX_PRODUCT
        return tree, tree.calibrate(factors(), sr)

    error = _run(
        [
            lambda: out.setdefault("f", factors()),
            lambda: out.setdefault("cal", calibrate()),
            lambda: out.setdefault("marg", out["cal"][1].marginal([names[0]])),
            lambda: out.setdefault("map", out["cal"][0].max_product(factors())),
        ]
    )
    if error is not None:
        _names_a_parameter(error, ["log_values", "cardinalities", "factor", "batch"])
    if "cal" in out:
        log_z = np.asarray(out["cal"][1].log_evidence)
        assert not np.isnan(log_z).any() and np.all(log_z < np.inf)
    if "marg" in out and semiring == "sum":
        m = out["marg"]
        p = np.exp(m.log_values)
        assert not np.isnan(p).any()
        p = p.reshape(-1, cards[names[0]])
        ok = np.isfinite(np.asarray(out["cal"][1].log_evidence)).reshape(-1)
        np.testing.assert_allclose(p.sum(axis=1)[ok], 1.0, atol=1e-9)
    if "map" in out:
        assignment = np.asarray(out["map"].assignment)
        assert np.all(assignment >= 0)
        assert not np.isnan(out["map"].log_score).any()
    for original, now in zip(before, [t[2] for t in tables]):
        assert _same(original, now), "an input was modified"


@st.composite
def degenerate_rows(draw):
    """Degenerate data for the mixtures: duplicate rows, fewer distinct points
    than components, a single row, zero-variance columns, large offsets."""
    kind = draw(st.sampled_from(["duplicates", "few", "single", "zero_var", "offset"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    d = draw(st.integers(1, 3))
    if kind == "duplicates":
        X = np.repeat(rng.normal(size=(1, d)), draw(st.integers(2, 12)), axis=0)
    elif kind == "few":
        X = rng.normal(size=(2, d))[rng.integers(0, 2, size=10)]
    elif kind == "single":
        X = rng.normal(size=(1, d))
    elif kind == "zero_var":
        X = rng.normal(size=(12, d))
        X[:, 0] = draw(st.sampled_from([0.0, 3.0, 1e9]))
    else:
        X = rng.normal(size=(12, d)) + draw(st.sampled_from([1e6, 1e12, -1e15]))
    return X * draw(st.sampled_from([1.0, 1e-8, 1e8]))


@_FEWER
@given(data=st.data())
def test_mixtures_on_degenerate_data_let_no_numpy_warning_escape(data):
    """GaussianMixture, GaussianMixtureClassifier and select_mixture on
    degenerate data: a fit with finite scores, or a boundary error; never a
    numpy RuntimeWarning."""
    covariance_type = data.draw(st.sampled_from(["full", "tied", "diag", "spherical"]))
    X = data.draw(degenerate_rows())
    k = data.draw(st.integers(1, 3))
    y = np.arange(len(X)) % 2
    before = _snapshot(X)
    out = {}
    gm = bk.GaussianMixture(k, covariance_type=covariance_type, random_state=0)
    gmc = bk.GaussianMixtureClassifier(
        n_components=k, covariance_type=covariance_type, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        _run(
            [
                lambda: out.setdefault("gm", gm.fit(X).score_samples(X)),
                lambda: out.setdefault("gm_proba", gm.predict_proba(X)),
            ]
        )
        _run([lambda: out.setdefault("gmc", gmc.fit(X, y).predict_proba(X))])
        _run(
            [
                lambda: out.setdefault(
                    "sel",
                    bk.select_mixture(
                        X,
                        n_components=range(1, k + 1),
                        covariance_types=(covariance_type,),
                        random_state=0,
                    ),
                )
            ]
        )
    if "gm" in out:
        assert np.all(np.isfinite(out["gm"]))
    if "gm_proba" in out:
        _check_probabilities(out["gm_proba"], len(X))
    if "gmc" in out:
        _check_probabilities(out["gmc"], len(X))
    if "sel" in out:
        table, _ = out["sel"]
        assert not table[["bic", "aic"]].isna().to_numpy().any()
    assert _same(before, X), "an input was modified"


@_FEW
@given(data=st.data())
def test_tree_bp_works_or_refuses(data):
    """TreeBP on random trees: potentials (some negative, NaN, inf or zero),
    evidence (valid, -1, out of range, batched) and log-unary messages (with
    NaN, +inf, -inf); sum-product and max-product."""
    from bayeskit.graph import TreeBP

    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    n_nodes = data.draw(st.integers(1, 4))
    names = [f"t{j}" for j in range(n_nodes)]
    cards = {v: data.draw(st.integers(1, 3)) for v in names}
    edges = [
        (names[data.draw(st.integers(0, j - 1))], names[j]) for j in range(1, n_nodes)
    ]
    spoil = data.draw(
        st.sampled_from(["none", "none", "zero", "negative", "nan", "inf"])
    )
    potentials = []
    for u, v in edges:
        pot = rng.random((cards[u], cards[v]))
        if spoil != "none":
            pot[0, 0] = {"zero": 0.0, "negative": -1.0, "nan": np.nan, "inf": np.inf}[
                spoil
            ]
        potentials.append(pot)
    n = data.draw(st.sampled_from([None, 0, 1, 3]))
    evidence = {}
    if data.draw(st.booleans()):
        v = data.draw(st.sampled_from(names))
        rows = 1 if n is None else n
        evidence[v] = data.draw(
            st.sampled_from(
                [
                    rng.integers(-1, cards[v], size=rows),
                    np.full(rows, cards[v]),
                    0,
                    np.zeros(rows + 1, dtype=int),
                ]
            )
        )
    log_unary = {}
    if data.draw(st.booleans()):
        v = data.draw(st.sampled_from(names))
        values, _ = data.draw(log_tables((1 if n is None else n, cards[v])))
        log_unary[v] = values
    before = _snapshot((potentials, evidence, log_unary))
    out = {}
    error = _run(
        [
            lambda: out.setdefault("bp", TreeBP(cards, edges, potentials)),
            lambda: out.setdefault(
                "sum", out["bp"].sum_product(evidence, log_unary, n=n)
            ),
            lambda: out.setdefault(
                "max", out["bp"].max_product(evidence, log_unary, n=n)
            ),
        ]
    )
    if error is not None:
        _names_a_parameter(
            error, ["potential", "evidence", "log_unary", "cardinality", "n ", "rows"]
        )
    if "sum" in out:
        post = out["sum"]
        log_z = np.asarray(post.log_evidence)
        assert not np.isnan(log_z).any() and np.all(log_z < np.inf)
        for v in names:
            p = post.marginal(v)  # probabilities
            assert not np.isnan(p).any()
            ok = log_z > -np.inf
            np.testing.assert_allclose(p[ok].sum(axis=1), 1.0, atol=1e-9)
    if "max" in out:
        assert not np.isnan(out["max"].log_score).any()
    for original, now in zip(before, (potentials, evidence, log_unary)):
        assert _same(original, now), "an input was modified"


# -- Dask: chunkings with empty chunks ------------------------------------------

# Two fits and a Dask graph per example: a fiftieth of the budget.
_DASK_FEW = settings(max_examples=max(settings().max_examples // 50, 4))


def _dask_estimators():
    """Every public estimator that fits on a Dask array or DataFrame: all but
    those that read lists of sequences (a bag per class) and the structure
    learners (which refuse Dask input, saying how to compute it)."""
    import public_estimators as pe

    out = []
    for cls in pe.classes():
        est = pe.make(cls)
        X, _ = pe.data(est, n=4)
        if isinstance(X, list) or getattr(est, "_learns_structure", False):
            continue
        out.append(cls)
    return out


def _chunk_sizes(n, min_size=0):
    """Sizes of a random chunking of ``n`` rows, zero-size chunks included
    (``min_size=0``)."""
    return st.lists(st.integers(0, n), max_size=6).map(
        lambda cuts: tuple(
            int(c) for c in np.diff([0, *sorted(cuts), n]) if c >= min_size
        )
    )


@pytest.mark.parametrize("cls", _dask_estimators(), ids=lambda c: c.__name__)
@_DASK_FEW
@given(data=st.data())
def test_dask_chunkings_with_empty_chunks_give_the_in_memory_answer(cls, data):
    """A Dask array in random chunks, some of zero size (a DataFrame with
    empty partitions, as after a filter; sequences with ``lengths``), gives
    the fit and the predictions of the same rows in memory; input the
    in-memory fit refuses is refused too."""
    import dask
    import public_estimators as pe
    from sklearn.base import clone

    da = pytest.importorskip("dask.array")
    dd = pytest.importorskip("dask.dataframe")
    est = pe.make(cls)
    n = data.draw(st.integers(1, 60))
    X, y = pe.data(est, n=n, seed=data.draw(st.integers(0, 2**16)))
    chunks = data.draw(_chunk_sizes(n))
    fit_kw = {}
    if hasattr(X, "iloc"):  # a frame: partitions emptied by a filter
        keep = np.asarray(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
        if not keep.any():
            keep[0] = True
        parts = data.draw(st.integers(1, 5))
        frame = dd.from_pandas(X.assign(_keep=keep, _y=y), npartitions=parts)
        frame = frame[frame._keep]
        X_dask = frame.drop(columns=["_keep", "_y"])
        y_dask = None if y is None else frame._y
        X = X[keep].reset_index(drop=True)
        y = None if y is None else y[keep]
    else:
        X = np.asarray(X)
        X_dask = da.from_array(X, chunks=(chunks, -1))
        y_dask = None
        if y is not None:
            y_dask = da.from_array(y, chunks=(data.draw(_chunk_sizes(n)),))
    if pe.reads_sequences(est):
        fit_kw["lengths"] = list(data.draw(_chunk_sizes(n, min_size=1)))
    with warnings.catch_warnings(), dask.config.set(scheduler="synchronous"):
        warnings.simplefilter("ignore")
        ref, got = clone(est), clone(est)
        args = () if y is None else (y,)
        try:
            ref.fit(X, *args, **fit_kw)
        except ValueError:
            with pytest.raises((ValueError, TypeError)):
                got.fit(X_dask, *(() if y is None else (y_dask,)), **fit_kw)
            return
        got.fit(X_dask, *(() if y is None else (y_dask,)), **fit_kw)
        if "lengths" in fit_kw:
            lengths = fit_kw["lengths"]
            np.testing.assert_allclose(
                got.score(X, lengths), ref.score(X, lengths), rtol=1e-6, atol=1e-8
            )
            return
        for method in ("predict_proba", "score_samples"):
            if not hasattr(ref, method):
                continue
            expected = np.asarray(getattr(ref, method)(X), dtype=float)
            mine = np.asarray(getattr(got, method)(X), dtype=float)
            np.testing.assert_allclose(mine, expected, rtol=1e-6, atol=1e-8)
            lazy = getattr(got, method)(X_dask)
            lazy = np.asarray(lazy.compute() if hasattr(lazy, "compute") else lazy)
            np.testing.assert_allclose(lazy, expected, rtol=1e-6, atol=1e-8)
