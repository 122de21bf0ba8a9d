"""A property-based fuzzer of every public estimator's boundary.

Random shapes, dtypes (bool, int8..uint64, float16..float64, object, text,
pandas extension types), magnitudes (1e-300..1e300), NaN and inf patterns, and
list, nested-list and DataFrame forms go into ``fit`` and the prediction
methods. Whatever the input, the estimator either works or raises a
ValueError / TypeError from its boundary (bayeskit's or scikit-learn's
validation, never from inside numpy, scipy or numba), and:

- no output that claims to be a probability holds NaN, and its rows sum to 1;
- the caller's objects are unchanged;
- no numpy RuntimeWarning ("... encountered in ...") escapes.

The budget is the active hypothesis profile's: ``ci`` (the default, 200
examples per estimator, derandomized) or ``thorough``
(``pytest --hypothesis-profile=thorough``).
"""

from __future__ import annotations

import copy
import os
import traceback
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayeskit as bk

settings.register_profile(
    "ci",
    max_examples=200,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    max_examples=3000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
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


@st.composite
def tables(draw, min_rows=0, max_rows=24, max_cols=4):
    """A table in one of the forms users pass: array, list, nested list,
    DataFrame (numpy or extension dtypes), with NaN/inf and any magnitude."""
    n = draw(st.integers(min_rows, max_rows))
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
    holes = draw(st.sampled_from(["none", "nan", "inf", "-inf", "mixed"]))
    if holes != "none" and values.size:
        mask = rng.random(values.shape) < draw(st.sampled_from([0.05, 0.5, 1.0]))
        fill = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}.get(holes)
        if fill is None:
            fill = rng.choice([np.nan, np.inf, -np.inf], size=values.shape)[mask]
        values[mask] = fill
    form = draw(st.sampled_from(["array", "list", "frame", "extension"]))
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


def _snapshot(obj):
    return copy.deepcopy(obj)


def _same(a, b) -> bool:
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
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
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
                error = exc
                break
    leaked = [
        w for w in record if "encountered in" in str(w.message) or "numpy" in w.filename
    ]
    assert not leaked, f"numpy warning escaped: {leaked[0].message}"
    return error


CLASSIFIERS = [
    bk.GaussianNB,
    bk.CategoricalNB,
    bk.MixedNB,
    bk.LinearDiscriminantAnalysis,
    bk.QuadraticDiscriminantAnalysis,
    lambda: bk.GaussianMixtureClassifier(n_components=1, max_iter=5),
    bk.TreeAugmentedNB,
]
CLASSIFIER_IDS = [
    "GaussianNB",
    "CategoricalNB",
    "MixedNB",
    "LDA",
    "QDA",
    "GaussianMixtureClassifier",
    "TreeAugmentedNB",
]


@pytest.mark.parametrize("make", CLASSIFIERS, ids=CLASSIFIER_IDS)
@given(data=st.data())
def test_classifiers_work_or_refuse_at_the_boundary(make, data):
    """fit / predict_proba / predict / score on any table and labels."""
    X = data.draw(tables(min_rows=1))
    n = len(X)
    y = data.draw(labels(n))
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
        _check_probabilities(out["new"], len(X_new))
    for original, now in zip(before, (X, y, X_new)):
        assert _same(original, now), "an input was modified"


@pytest.mark.parametrize(
    "make",
    [
        lambda: bk.GaussianMixture(n_components=2, max_iter=5),
        lambda: bk.GaussianMixture(covariance_type="diag", max_iter=5),
        lambda: bk.GaussianHMM(n_components=2, n_iter=3),
    ],
    ids=["GaussianMixture", "GaussianMixture-diag", "GaussianHMM"],
)
@given(data=st.data())
def test_density_models_work_or_refuse_at_the_boundary(make, data):
    """fit / score_samples / predict_proba of the unsupervised models."""
    X = data.draw(tables(min_rows=1))
    before = _snapshot(X)
    est = make()
    out = {}
    _run(
        [
            lambda: est.fit(X),
            lambda: out.setdefault("proba", est.predict_proba(X)),
            lambda: out.setdefault("score", est.score(X)),
        ]
    )
    if "proba" in out:
        _check_probabilities(out["proba"], len(X))
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
