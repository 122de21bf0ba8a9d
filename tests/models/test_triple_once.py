"""Discriminant analysis and Bayesian networks build their triple once per fit.

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

from bayeskit import BayesianNetwork
from bayeskit import LinearDiscriminantAnalysis as LDA
from bayeskit import QuadraticDiscriminantAnalysis as QDA


@pytest.fixture
def builds(monkeypatch):
    """The number of triples each class builds, by class name."""
    counts = {}
    for cls in (LDA, QDA, BayesianNetwork):
        make = cls._make_components

        def counted(self, make=make, name=cls.__name__):
            counts[name] = counts.get(name, 0) + 1
            return make(self)

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
