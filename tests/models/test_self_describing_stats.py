"""Statistics describe themselves: a driver's ``clone(est).from_stats(sum)``.

A map-reduce written by hand (workers summarising chunks, a driver adding the
results) must give what one fit gives. The statistics of ``summarize`` carry
what ``from_stats`` needs (classes, encodings, variables and states, and for
EM the fitted model they were computed under), add by union where chunks
showed different classes or states, and pickle.

The references: ``fit`` on all the rows for the estimators fitted in one
pass, and the M-step of the fitted estimator itself for those fitted by EM.
"""

import copy
import itertools
import pickle

import numpy as np
import public_estimators
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone, is_classifier

import bayeskit
from bayeskit._base.per_class import PerClassClassifier
from bayeskit._layout import Layout


def _public_with_statistics():
    """Every public estimator whose instances summarize (HMMClassifier's
    models are fitted by EM per class: it has no additive statistics)."""
    return [
        cls for cls in public_estimators.classes() if hasattr(_make(cls), "summarize")
    ]


_make = public_estimators.make
_data = public_estimators.data
_rows = public_estimators.rows


def _one_pass(est) -> bool:
    """Fitted from one sum of statistics (not by EM over them)."""
    return (
        is_classifier(est)
        and not isinstance(est, PerClassClassifier)
        and not isinstance(est, bayeskit.HMMClassifier)
    ) or isinstance(est, bayeskit.BayesianNetwork)


def _summaries(est, X, y, chunks):
    """Statistics of every chunk, each by a fresh copy (one pass) or by a
    pickled copy of the fitted estimator (EM: a worker's copy)."""
    out = []
    for idx in chunks:
        worker = clone(est) if _one_pass(est) else pickle.loads(pickle.dumps(est))
        args = (_rows(X, idx),) if y is None else (_rows(X, idx), y[idx])
        out.append(pickle.loads(pickle.dumps(worker.summarize(*args))))
    return out


def _compare(got, ref, X, y):
    if is_classifier(ref):
        np.testing.assert_allclose(
            got.predict_proba(X), ref.predict_proba(X), rtol=1e-10, atol=1e-12
        )
    else:
        np.testing.assert_allclose(got.score(X), ref.score(X), rtol=1e-10)
    for name in ("classes_", "n_features_in_"):
        if hasattr(ref, name):
            np.testing.assert_array_equal(getattr(got, name), getattr(ref, name))


ESTIMATORS = _public_with_statistics()


def test_every_estimator_with_statistics_is_here():
    names = {cls.__name__ for cls in ESTIMATORS}
    assert {"GaussianMixture", "BayesianNetwork", "GaussianHMM", "CategoricalNB"} <= (
        names
    )


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_a_fresh_estimator_reads_summed_statistics(cls):
    est = _make(cls)
    X, y = _data(est)
    n = len(X)
    chunks = [np.arange(0, 70), np.arange(70, 150), np.arange(150, n)]
    if not _one_pass(est):
        est.fit(X, y) if y is not None else est.fit(X)
    parts = _summaries(est, X, y, chunks)
    total = parts[2] + parts[0] + parts[1]
    got = clone(est).from_stats(total)
    if _one_pass(est):
        ref = clone(est).fit(X, y) if y is not None else clone(est).fit(X)
    else:
        ref = copy.deepcopy(est).from_stats(total)
    _compare(got, ref, X, y)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_pickled_statistics_add_to_statistics_that_never_were(cls):
    # A driver adds what workers sent (pickled) to what it summarized itself:
    # the same labels reached through two containers are one object in one
    # process and two after pickling, which must not make the layouts differ.
    est = _make(cls)
    X, y = _data(est)
    chunks = [np.arange(0, 100), np.arange(100, len(X))]
    if not _one_pass(est):
        est.fit(X, y) if y is not None else est.fit(X)
    mine = []
    for idx in chunks:
        worker = clone(est) if _one_pass(est) else copy.deepcopy(est)
        args = (_rows(X, idx),) if y is None else (_rows(X, idx), y[idx])
        mine.append(worker.summarize(*args))
    sent = pickle.loads(pickle.dumps(mine[1]))
    got = clone(est).from_stats(mine[0] + sent)
    ref = clone(est).from_stats(mine[0] + mine[1])
    _compare(got, ref, X, y)


ONE_PASS = [cls for cls in ESTIMATORS if _one_pass(_make(cls))]


@pytest.mark.parametrize("cls", ONE_PASS, ids=lambda c: c.__name__)
def test_chunks_that_miss_a_class_or_a_state_add_by_union(cls):
    est = _make(cls)
    X, y = _data(est, seed=1)
    if y is not None:
        first = np.flatnonzero(y[:120] != "c")  # no row of class "c"
    else:
        first = np.flatnonzero(X["b"].to_numpy()[:120] != "lo")  # no state "lo"
    second = np.arange(120, len(X))
    rows = np.concatenate([first, second])
    for order in ((first, second), (second, first)):
        parts = _summaries(est, X, y, order)
        got = clone(est).from_stats(parts[0] + parts[1])
        Xa = _rows(X, rows)
        ref = clone(est).fit(Xa, y[rows]) if y is not None else clone(est).fit(Xa)
        _compare(got, ref, Xa, None if y is None else y[rows])


@settings(max_examples=15, deadline=None)
@given(
    cuts=st.lists(st.integers(1, 239), min_size=1, max_size=5, unique=True),
    seed=st.integers(0, 2**16),
)
def test_any_chunking_in_any_order_equals_one_fit(cuts, seed):
    rng = np.random.default_rng(seed)
    for cls in (bayeskit.CategoricalNB, bayeskit.GaussianNB, bayeskit.BayesianNetwork):
        est = _make(cls)
        X, y = _data(est, seed=seed % 7)
        bounds = [0, *sorted(cuts), len(X)]
        chunks = [np.arange(a, b) for a, b in itertools.pairwise(bounds)]
        parts = _summaries(est, X, y, [chunks[i] for i in rng.permutation(len(chunks))])
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        got = clone(est).from_stats(total)
        ref = clone(est).fit(X, y) if y is not None else clone(est).fit(X)
        _compare(got, ref, X, y)


def test_statistics_of_another_estimator_class_are_refused():
    X, y = _data(bayeskit.GaussianNB())
    stats = bayeskit.GaussianNB().summarize(X, y)
    with pytest.raises(TypeError, match="summarized by GaussianNB"):
        bayeskit.LinearDiscriminantAnalysis().from_stats(stats)


def test_em_statistics_under_successive_parameters_add_as_incremental_em():
    """Statistics of one model under successive parameters add (incremental
    EM, Neal and Hinton 1998): the sum carries the model of its last term, so
    a fresh estimator's from_stats gives the running model's step."""
    X, _ = _data(bayeskit.GaussianMixture())
    model = bayeskit.GaussianMixture(2, random_state=0, max_iter=2).fit(X)
    first = model.summarize(X[:100])
    model.from_stats(first)
    total = first + model.summarize(X[100:])
    ref = copy.deepcopy(model).from_stats(total)
    got = clone(model).from_stats(total)
    np.testing.assert_allclose(got.means_, ref.means_, rtol=1e-12)


def test_statistics_of_different_estimators_of_one_class_do_not_add_by_accident():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 2))
    y = rng.choice(["a", "b"], 60)
    one = bayeskit.GaussianMixtureClassifier(1, random_state=0).fit(X, y)
    two = bayeskit.GaussianMixtureClassifier(1, random_state=1).fit(X + 1, y)
    with pytest.raises(ValueError, match="differ in more than their classes"):
        one.summarize(X[:30], y[:30]) + two.summarize(X[30:], y[30:])


@pytest.mark.parametrize("cls", [bayeskit.CategoricalNB, bayeskit.TreeAugmentedNB])
def test_chunks_that_show_different_categories_add_by_union(cls):
    rng = np.random.default_rng(3)
    X = rng.choice(["p", "q", "r", "s"], size=(160, 3))
    y = rng.choice(["a", "b"], 160)
    first = np.flatnonzero((X[:80] != "s").all(axis=1))  # no "s" in any column
    second = np.arange(80, 160)
    rows = np.concatenate([first, second])
    one = cls().summarize(X[first], y[first])
    two = cls().summarize(X[second], y[second])
    for total in (one + two, two + one):
        got = cls().from_stats(total)
        ref = cls().fit(X[rows], y[rows])
        _compare(got, ref, X[rows], y[rows])


def test_differently_read_columns_are_refused_with_the_reason():
    rng = np.random.default_rng(3)
    y = rng.choice(["a", "b"], 100)
    codes = rng.integers(0, 3, (50, 2))  # numbers: read as codes
    labels = rng.choice(["lo", "hi"], size=(50, 2)).astype(object)
    one = bayeskit.CategoricalNB().summarize(codes, y[:50])
    two = bayeskit.CategoricalNB().summarize(labels, y[50:])
    with pytest.raises(ValueError, match="differently read columns"):
        one + two


def test_statistics_without_a_layout_still_need_a_prepared_estimator():
    X, y = _data(bayeskit.GaussianNB())
    stats = bayeskit.GaussianNB().summarize(X, y)
    bare = type(stats)(stats.class_weight, stats.emission)
    with pytest.raises(ValueError, match="carry both"):
        bayeskit.GaussianNB().from_stats(bare)


def test_an_hmm_s_caches_do_not_make_layouts_differ():
    # The per-class HMMs of an HMMClassifier travel in its statistics'
    # layout. What each keeps only as a cache (its stored triple and the
    # parameters validated under it) is rebuilt from the rest, and its last
    # bits depend on which kernels the process had compiled: two workers'
    # equal models must describe one layout whatever their caches hold.
    est = _make(bayeskit.HMMClassifier)
    X, y = _data(est)
    est.fit(X, y)
    a = copy.deepcopy(est).summarize(X[:100], y[:100])
    worker = copy.deepcopy(est)
    b = worker.summarize(X[100:], y[100:])
    for model in b.layout.state["models_"]:
        stored = model.__dict__.get("_params_of")
        assert stored is not None  # the cache this test is about is there
        # The same parameters one ulp away, as another kernel path gives them.
        model._params_of = (stored[0], copy.deepcopy(stored[1]))
        start = model._params_of[1].structure.log_startprob
        start[...] = np.nextafter(start, np.inf)
        # A set of letters as another insertion history (or hash seed) orders it.
        model._to_init = set(reversed(list(model._to_init)))
    b.layout._key = None
    assert b.layout.differing(a.layout) == []
    assert b.layout.key == a.layout.key
    total = a + pickle.loads(pickle.dumps(b))
    got = clone(est).from_stats(total)
    _compare(got, clone(est).from_stats(a + b), X, y)


class _Holder:
    def __init__(self, members):
        self.members = members


@pytest.mark.parametrize("kind", [set, frozenset])
def test_equal_sets_describe_one_layout_whatever_their_order(kind):
    # 0 and 8 share a slot of a small set's table, so the order of
    # insertion decides their order of iteration (and of pickling).
    first, second = kind([0, 8]), kind([8, 0])
    assert list(first) != list(second)
    for a, b in [(first, second), (_Holder(first), _Holder(second))]:
        la = Layout(bayeskit.HMMClassifier, {"value": a, "other": 1})
        lb = Layout(bayeskit.HMMClassifier, {"value": b, "other": 1})
        assert la.differing(lb) == []
        assert la.key == lb.key
    different = Layout(bayeskit.HMMClassifier, {"value": kind([0, 9]), "other": 1})
    assert la.differing(different) == ["value"]
