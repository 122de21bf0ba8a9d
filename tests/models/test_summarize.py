"""``summarize`` / ``from_stats``: statistics of chunks that add up to one fit."""

import dataclasses
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

import bayeskit as bk

RNG = np.random.default_rng(7)
X_REAL = RNG.normal(size=(240, 4)) * [1.0, 3.0, 0.5, 10.0] + [0.0, 5.0, -2.0, 1e3]
X_CODES = RNG.integers(0, 4, size=(240, 3))
Y = RNG.integers(0, 3, size=240)

ESTIMATORS = [
    (bk.GaussianNB, X_REAL),
    (bk.CategoricalNB, X_CODES),
    (bk.MixedNB, X_REAL),
    (bk.LinearDiscriminantAnalysis, X_REAL),
    (bk.QuadraticDiscriminantAnalysis, X_REAL),
    (bk.TreeAugmentedNB, X_CODES),
]


def _arrays(stats):
    """The arrays of a statistics value, depth first."""
    if isinstance(stats, np.ndarray):
        return [stats]
    if isinstance(stats, (tuple, list)):
        return [a for part in stats for a in _arrays(part)]
    if hasattr(stats, "__dataclass_fields__"):
        return [
            a for f in stats.__dataclass_fields__ for a in _arrays(getattr(stats, f))
        ]
    return []


def _fitted_attributes(est):
    return {
        k: v
        for k, v in vars(est).items()
        if k.endswith("_") and not k.startswith("_") and isinstance(v, np.ndarray)
    }


@pytest.mark.parametrize("cls, X", ESTIMATORS, ids=lambda v: getattr(v, "__name__", ""))
@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_summed_statistics_of_any_chunking_in_any_order_give_one_fit(cls, X, data):
    """from_stats of the statistics of shuffled chunks, summed in any order,
    equals fit on all rows (the statistics are exact sums)."""
    n = len(Y)
    cuts = sorted(data.draw(st.sets(st.integers(1, n - 1), max_size=5)))
    # The first chunk shows every class and category; the rest come in any order.
    first = np.arange(0, 60)
    rest = np.split(np.arange(60, n), [c for c in cuts if c > 60])
    order = data.draw(st.permutations(range(len(rest))))
    weights = data.draw(st.sampled_from([None, "ints"]))
    sw = RNG.integers(0, 4, size=n).astype(float) if weights else None

    est = cls()
    chunks = [first] + [rest[i] for i in order]
    parts = [
        est.summarize(X[c], Y[c], None if sw is None else sw[c])
        for c in chunks
        if len(c)
    ]
    total = parts[0]
    for p in reversed(parts[1:]):
        total = p + total
    ours = est.from_stats(total)
    one = cls().fit(X, Y, sample_weight=sw)
    # The statistics agree to rounding (1e-12); the parameters derived from
    # them (eigenvectors, intercepts: differences of large terms) may
    # amplify rounding, so they get 1e-10.
    ours_stats, one_stats = _arrays(ours.stats_), _arrays(one.stats_)
    assert len(ours_stats) == len(one_stats) > 0
    for a, b in zip(ours_stats, one_stats):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())
    expected = _fitted_attributes(one)
    got = _fitted_attributes(ours)
    assert expected.keys() <= got.keys()
    for name, value in expected.items():
        np.testing.assert_allclose(
            got[name], value, rtol=1e-10, atol=1e-12, err_msg=name
        )
    np.testing.assert_allclose(ours.predict_proba(X), one.predict_proba(X), atol=1e-12)


@pytest.mark.parametrize("cls, X", ESTIMATORS, ids=lambda v: getattr(v, "__name__", ""))
def test_summarize_does_not_fit_and_from_stats_keeps_the_statistics(cls, X):
    """summarize leaves the estimator unfitted for prediction; from_stats sets
    stats_ to exactly the numbers it was given (their layout is now the
    estimator's own)."""
    est = cls()
    stats = est.summarize(X, Y)
    with pytest.raises(NotFittedError):
        est.predict(X)
    assert est.from_stats(stats) is est
    assert est.stats_.class_weight is stats.class_weight
    assert est.stats_.emission is stats.emission
    assert est.stats_.layout is None and stats.layout is not None
    np.testing.assert_array_equal(est.predict(X), cls().fit(X, Y).predict(X))


def test_from_stats_rejects_what_summarize_did_not_make():
    """Statistics of another class count, or another type, are a TypeError
    naming stats; from_stats before any summarize says to summarize first."""
    with pytest.raises(ValueError, match="summarize"):
        bk.GaussianNB().from_stats(None)
    est = bk.GaussianNB()
    est.summarize(X_REAL, Y)
    other = bk.GaussianNB().summarize(X_REAL, Y % 2)
    # Without the layout summarize attaches, statistics of other classes are
    # refused; with it, they describe the model they make.
    with pytest.raises(TypeError, match="stats"):
        est.from_stats(dataclasses.replace(other, layout=None))
    np.testing.assert_allclose(
        est.from_stats(other).predict_proba(X_REAL),
        bk.GaussianNB().fit(X_REAL, Y % 2).predict_proba(X_REAL),
        rtol=1e-12,
    )
    with pytest.raises(TypeError, match="stats"):
        est.from_stats({"class_weight": [1, 2, 3]})


def test_summarize_validates_hyperparameters_first():
    """A bad hyperparameter is reported by summarize as by fit."""
    with pytest.raises(ValueError, match="prior_m"):
        bk.GaussianNB(prior_m=-1).summarize(X_REAL, Y)


@pytest.mark.parametrize(
    "make, call",
    [
        (
            lambda: bk.LinearDiscriminantAnalysis(priors=[1.0, 2.0, 1.0]),
            lambda est: est.fit(X_REAL, Y),
        ),
        (
            lambda: bk.LinearDiscriminantAnalysis(priors=[1.0, 2.0, 1.0]),
            lambda est: est.from_stats(est.summarize(X_REAL, Y)),
        ),
        (
            lambda: bk.CategoricalNB(m=0).fit([[0, 0], [1, 1]], [0, 1]),
            lambda est: est.predict_proba([[0, 1]]),
        ),
    ],
)
def test_warnings_point_at_the_callers_line(make, call):
    """A warning raised deep inside bayeskit (through scikit-learn's fit
    wrapper) is attributed to the line that called bayeskit."""
    est = make()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        call(est)
    ours = [w for w in record if "bayeskit" not in w.filename]
    assert record and len(ours) == len(record)
    assert {w.filename for w in record} == {__file__}


def test_partial_fit_waits_for_rows_that_determine_the_parameters():
    """A first chunk of one row has no variance: partial_fit keeps
    its statistics (no error), prediction says why it cannot run yet, and
    later chunks give the model of one fit on all rows (fit on the one row
    is still an error)."""
    X = X_REAL[:40]
    y = np.arange(40) % 2
    est = bk.GaussianNB().partial_fit(X[:1], y[:1], classes=[0, 1])
    with pytest.raises(ValueError, match="partial_fit more rows"):
        est.predict_proba(X)
    est.partial_fit(X[1:], y[1:])
    whole = bk.GaussianNB().fit(X, y)
    np.testing.assert_allclose(est.var_, whole.var_, rtol=1e-12)
    np.testing.assert_allclose(est.predict_proba(X), whole.predict_proba(X))
    with pytest.raises(ValueError, match="zero variance"):
        bk.GaussianNB().fit(X[:1], y[:1])


@pytest.mark.parametrize("cls, X", ESTIMATORS, ids=lambda v: getattr(v, "__name__", ""))
def test_sum_of_chunk_statistics_and_partial_fit_after_summarize(cls, X):
    """``sum`` of chunk statistics (starting from 0) is their ``+``, and a
    ``partial_fit`` after the ``summarize`` that fixed the classes starts the
    statistics: both give the model of one fit."""
    est = cls()
    est.summarize(X, Y)  # fixes the classes and the encoding
    chunks = [est.summarize(X[i : i + 80], Y[i : i + 80]) for i in (0, 80, 160)]
    whole = cls().fit(X, Y)
    summed = sum(chunks)
    for a, b in zip(_arrays(summed), _arrays(whole.stats_)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    fresh = cls()
    fresh.summarize(X, Y)
    for i in (0, 80, 160):
        fresh.partial_fit(X[i : i + 80], Y[i : i + 80])
    np.testing.assert_allclose(
        fresh.predict_proba(X), whole.predict_proba(X), rtol=1e-9, atol=1e-12
    )


def test_from_stats_that_cannot_give_parameters_leaves_the_estimator_as_it_was():
    """Statistics whose parameters cannot be derived (one row: no variance)
    raise, and the fitted estimator keeps its statistics and parameters."""
    est = bk.GaussianNB().fit(X_REAL, Y)
    stats, theta = est.stats_, est.theta_.copy()
    bad = bk.GaussianNB()
    bad.summarize(X_REAL, Y)
    one_row = bad.summarize(X_REAL[:1], Y[:1])
    with pytest.raises(ValueError, match="variance"):
        est.from_stats(one_row)
    assert est.stats_ is stats
    np.testing.assert_array_equal(est.theta_, theta)
