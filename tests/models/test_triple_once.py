"""Every classifier and Bayesian network builds its triple once per fit.

``_make_components()`` builds ``(structure, emission, prior)`` from the
hyperparameters and what the data fixed (the classes and the number of
features; a network's structure and states). A fit builds it once, whatever
path it takes (EM over missing cells, semi-supervised EM, chunks added by
``partial_fit``), and prediction never does; a hyperparameter changed after
fit (by ``set_params`` or in place) is still honoured, checked against
scikit-learn's discriminant analysis and the m-estimate's closed form.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn import discriminant_analysis as skda
from sklearn import naive_bayes as sknb

import bayeskit as bk
from bayeskit import BayesianNetwork
from bayeskit import LinearDiscriminantAnalysis as LDA
from bayeskit import QuadraticDiscriminantAnalysis as QDA
from bayeskit._base.triple import TripleClassifier

# The classifiers built from a triple by the shared base (naive Bayes, the
# tree-augmented one, the mixture classifier), found from the public names.
TRIPLE_CLASSIFIERS = sorted(
    (
        cls
        for cls in map(lambda name: getattr(bk, name), bk.__all__)
        if isinstance(cls, type) and issubclass(cls, TripleClassifier)
    ),
    key=lambda cls: cls.__name__,
)


@pytest.fixture
def builds(monkeypatch):
    """The number of triples each class builds, by class name."""
    counts = {}
    for cls in (LDA, QDA, BayesianNetwork, *TRIPLE_CLASSIFIERS):
        make = cls._make_components

        def counted(self, *args, make=make, **kwargs):
            name = type(self).__name__
            counts[name] = counts.get(name, 0) + 1
            return make(self, *args, **kwargs)

        monkeypatch.setattr(cls, "_make_components", counted)
    return counts


def _rows(seed, n=150, d=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    return rng.normal(size=(n, d)) + 0.9 * y[:, None], y, rng


def _fits(X, y, rng):
    """``(name, fit)`` of every path a discriminant analysis fits by."""
    holes = X.copy()
    holes[rng.random(X.shape) < 0.1] = np.nan
    partly = y.astype(float)
    partly[rng.random(len(y)) < 0.3] = -1
    w = rng.integers(1, 4, len(y)).astype(float)

    def chunks(est):
        est.partial_fit(X[:60], y[:60], classes=[0, 1, 2])
        return est.partial_fit(X[60:], y[60:], sample_weight=w[60:])

    return [
        ("closed form", lambda est: est.fit(X, y)),
        ("weights", lambda est: est.fit(X, y, sample_weight=w)),
        ("missing cells (EM)", lambda est: est.fit(holes, y)),
        ("unlabelled rows (EM)", lambda e: e.set_params(unlabeled=-1).fit(X, partly)),
        ("partial_fit", chunks),
    ]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
    "make",
    [LDA, lambda: LDA(solver="lsqr", shrinkage=0.2), QDA, lambda: QDA(reg_param=0.1)],
)
def test_a_discriminant_analysis_fit_builds_its_triple_once(make, seed, builds):
    X, y, rng = _rows(seed)
    for path, fit in _fits(X, y, rng):
        est = make()
        builds.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit(est)
        assert sum(builds.values()) == 1, (path, builds)
        builds.clear()
        est.predict_proba(X), est.predict(X), est.score(X, y)
        assert not builds, (path, builds)


def test_a_network_fit_builds_its_triple_once(builds):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.choice(["lo", "mid", "hi"], (300, 3)), columns=list("abc"))
    holes = frame.astype(object)
    holes.loc[rng.random(300) < 0.2, "b"] = None
    edges = [("a", "b"), ("b", "c")]
    for fit in (
        lambda: BayesianNetwork(edges).fit(frame),
        lambda: BayesianNetwork(edges, missing="em").fit(holes),
        lambda: BayesianNetwork(edges).fit(frame[:100]).partial_fit(frame[100:]),
    ):
        builds.clear()
        bn = fit()
        assert builds == {"BayesianNetwork": 1}
        builds.clear()
        bn.score_samples(frame), bn.predict_proba(frame.assign(b=None))
        assert not builds


@pytest.mark.parametrize("seed", range(4))
def test_a_changed_hyperparameter_is_read_by_the_next_fit(seed):
    """QDA fitted, then ``reg_param`` (and the solver of LDA) changed by
    set_params: partial_fit of more rows gives scikit-learn's answer on all
    the rows with the new hyperparameters, not one under the old triple."""
    X, y, _ = _rows(seed)
    first, rest = slice(0, 70), slice(70, None)
    qda = QDA(store_covariance=True).fit(X[first], y[first])
    qda.set_params(reg_param=0.3).partial_fit(X[rest], y[rest])
    ref = skda.QuadraticDiscriminantAnalysis(reg_param=0.3, store_covariance=True)
    ref.fit(X, y)
    np.testing.assert_allclose(qda.means_, ref.means_, rtol=1e-12)
    for a, b in zip(qda.covariance_, ref.covariance_):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(qda.predict_proba(X), ref.predict_proba(X), atol=1e-10)
    lda = LDA().fit(X[first], y[first])
    lda.set_params(solver="lsqr", shrinkage=0.4).partial_fit(X[rest], y[rest])
    ref = skda.LinearDiscriminantAnalysis(solver="lsqr", shrinkage=0.4).fit(X, y)
    np.testing.assert_allclose(lda.coef_, ref.coef_, rtol=1e-10)
    np.testing.assert_allclose(lda.predict_proba(X), ref.predict_proba(X), atol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_a_covariance_prior_changed_in_place_is_read(seed):
    """The prior scatter changed in place (the same array object) after fit:
    the next partial_fit reads the new one, as a model built afresh would."""
    X, y, _ = _rows(seed)
    S = np.eye(3)
    est = QDA(covariance_prior=S, covariance_prior_weight=2.0).fit(X[:80], y[:80])
    S *= 4.0
    est.partial_fit(X[80:], y[80:])
    fresh = QDA(covariance_prior=4.0 * np.eye(3), covariance_prior_weight=2.0)
    fresh.fit(X, y)
    np.testing.assert_allclose(est.predict_proba(X), fresh.predict_proba(X), rtol=1e-12)
    # ... and it differs from the prior it replaced (else the check is void).
    old = QDA(covariance_prior=np.eye(3), covariance_prior_weight=2.0).fit(X, y)
    assert not np.allclose(est.predict_proba(X), old.predict_proba(X))


@pytest.mark.parametrize("m", [0.5, 3.0, 20.0])
def test_a_network_reads_m_changed_after_fit(m):
    """``m`` changed by set_params after fit: the next partial_fit's CPTs are
    the m-estimate (n_ua + m / |states|) / (n_u + m) of all the counts."""
    rng = np.random.default_rng(int(m * 10))
    frame = pd.DataFrame(rng.choice(["x", "y", "z"], (240, 2)), columns=["a", "b"])
    bn = BayesianNetwork([("a", "b")], m=1.0).fit(frame[:100])
    bn.set_params(m=m).partial_fit(frame[100:])
    counts = pd.crosstab(frame["a"], frame["b"]).to_numpy(dtype=float)
    expected = (counts + m / 3) / (counts.sum(axis=1, keepdims=True) + m)
    np.testing.assert_allclose(bn.cpds_["b"], expected, rtol=1e-12)  # rows: a


def _counts(seed, n=160, d=4):
    """Small counts (valid for every naive Bayes) and three classes."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    return rng.integers(0, 3, (n, d)) + y[:, None] % 2, y, rng


def _make(cls):
    return cls(categorical_features=[0, 1]) if cls is bk.MixedNB else cls()


def test_the_triple_classifiers_are_found():
    names = {cls.__name__ for cls in TRIPLE_CLASSIFIERS}
    assert {"GaussianNB", "MultinomialNB", "TreeAugmentedNB"} <= names


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("cls", TRIPLE_CLASSIFIERS, ids=lambda c: c.__name__)
def test_a_triple_classifier_fit_builds_its_triple_once(cls, seed, builds):
    X, y, rng = _counts(seed)
    partly = y.astype(float)
    partly[rng.random(len(y)) < 0.3] = -1
    w = rng.integers(1, 4, len(y)).astype(float)
    paths = [
        ("closed form", lambda est: est.fit(X, y)),
        ("weights", lambda est: est.fit(X, y, sample_weight=w)),
        ("unlabelled rows (EM)", lambda e: e.set_params(unlabeled=-1).fit(X, partly)),
    ]
    if hasattr(cls, "partial_fit"):
        paths.append(
            (
                "partial_fit",
                lambda est: (
                    est.partial_fit(X[:60], y[:60], classes=[0, 1, 2])
                    .partial_fit(X[60:110], y[60:110])
                    .partial_fit(X[110:], y[110:], sample_weight=w[110:])
                ),
            )
        )
    for path, fit in paths:
        est = _make(cls)
        if path.startswith("unlabelled") and "unlabeled" not in est.get_params():
            continue
        builds.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit(est)
        assert builds == {cls.__name__: 1}, (path, builds)
        builds.clear()
        est.predict_proba(X), est.predict(X), est.score(X, y)
        assert not builds, (path, builds)


def test_new_categories_in_a_later_chunk_rebuild_the_triple_once(builds):
    """CategoricalNB's later chunk bringing a new category grows the tables:
    one more build, and the answer of one fit on all the rows."""
    X, y, _ = _counts(0)
    later = X.copy()
    later[:5, 0] = 7
    est = bk.CategoricalNB().partial_fit(X, y, classes=[0, 1, 2])
    builds.clear()
    est.partial_fit(later, y)
    assert builds == {"CategoricalNB": 1}
    whole = bk.CategoricalNB().fit(np.vstack([X, later]), np.concatenate([y, y]))
    np.testing.assert_allclose(
        est.predict_proba(later), whole.predict_proba(later), rtol=1e-12
    )


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    ("name", "before", "after"),
    [
        ("MultinomialNB", {"alpha": 1.0}, {"alpha": 0.2}),
        ("ComplementNB", {"alpha": 1.0}, {"alpha": 3.0, "norm": True}),
        ("BernoulliNB", {"alpha": 1.0}, {"alpha": 0.05}),
        ("CategoricalNB", {"alpha": 1.0}, {"alpha": 0.3}),
        ("GaussianNB", {"var_smoothing": 1e-9}, {"var_smoothing": 0.5}),
    ],
)
def test_a_naive_bayes_reads_hyperparameters_changed_after_fit(
    name, before, after, seed
):
    """set_params after a first chunk: the next partial_fit gives
    scikit-learn's answer on all the rows with the new hyperparameters."""
    X, y, _ = _counts(seed)
    ours = getattr(bk, name)(**before).partial_fit(X[:70], y[:70], classes=[0, 1, 2])
    ours.set_params(**after).partial_fit(X[70:], y[70:])
    ref = getattr(sknb, name)(**{**before, **after}).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-10)
    stale = getattr(sknb, name)(**before).fit(X, y)
    assert not np.allclose(ref.predict_proba(X), stale.predict_proba(X))


@pytest.mark.parametrize("m", [0.5, 4.0])
def test_a_tree_augmented_nb_reads_m_changed_after_fit(m):
    """TreeAugmentedNB with ``m`` changed by set_params after a first chunk:
    the next partial_fit gives the model built with that ``m`` on all the
    rows (the tree and the m-estimated tables of every count)."""
    X, y, _ = _counts(int(m * 10))
    est = bk.TreeAugmentedNB(m=1.0).partial_fit(X[:70], y[:70], classes=[0, 1, 2])
    est.set_params(m=m).partial_fit(X[70:], y[70:])
    fresh = bk.TreeAugmentedNB(m=m).fit(X, y)
    np.testing.assert_allclose(est.predict_proba(X), fresh.predict_proba(X), rtol=1e-12)
