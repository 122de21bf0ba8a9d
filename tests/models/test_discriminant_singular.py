"""LDA with a singular within-class covariance, against scikit-learn and the
minimum-norm least-squares solution of known rank."""

import warnings

import numpy as np
import pytest
from scipy import linalg
from sklearn import discriminant_analysis as skda
from sklearn.covariance import OAS
from sklearn.datasets import make_blobs

from bayeskit import LinearDiscriminantAnalysis as LDA

pytestmark = pytest.mark.parity


def singular_draw(seed):
    """Data whose within-class covariance is singular in exact arithmetic,
    and that covariance's rank: fewer rows than features, duplicated columns
    or constant columns (or several), two to four classes, random priors."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 5))
    n = int(rng.integers(3 * k, 30))
    d = int(rng.integers(max(2, n - 2 * k), 80))
    y = np.concatenate([np.arange(k), np.arange(k), rng.integers(0, k, n - 2 * k)])
    scale = rng.uniform(0.2, 5.0, d) if rng.random() < 0.5 else 1.0
    X = rng.normal(size=(n, d)) * scale + 2.0 * rng.normal(size=(k, d))[y]
    kind = rng.integers(0, 4)
    if kind in (1, 3):  # duplicated (scaled) columns
        dup = rng.integers(0, d, int(rng.integers(1, 4)))
        X = np.column_stack([X, X[:, dup] * rng.uniform(0.5, 2.0, len(dup))])
    if kind in (2, 3):  # constant columns
        X = np.column_stack([X, np.full((n, int(rng.integers(1, 3))), 3.0)])
    X = X[:, rng.permutation(X.shape[1])]
    rank = min(n - k, d)
    priors = rng.dirichlet(np.ones(k)) if rng.random() < 0.3 else None
    return X, y, rank, priors


def min_norm_coef(cov, means, rank):
    """``pinv(cov) @ mu`` with the pseudo-inverse of the given rank."""
    u, s, _ = linalg.svd(cov)
    w = u[:, :rank] / np.sqrt(s[:rank])
    return means @ w @ w.T


def sklearn_rank(lda):
    """The rank scikit-learn's least squares gave its own covariance."""
    return linalg.lstsq(lda.covariance_, lda.means_.T)[2]


@pytest.mark.parametrize(
    "seed, shrinkage",
    [(seed, None) for seed in range(100)]
    + [(seed, s) for seed in range(40) for s in ("auto", 0.3)],
)
def test_lsqr_singular_covariance_as_sklearn(seed, shrinkage):
    X, y, rank, priors = singular_draw(seed)
    ours = LDA(solver="lsqr", shrinkage=shrinkage, priors=priors).fit(X, y)
    theirs = skda.LinearDiscriminantAnalysis(
        solver="lsqr", shrinkage=shrinkage, priors=priors
    ).fit(X, y)
    np.testing.assert_allclose(ours.covariance_, theirs.covariance_, atol=1e-12)
    if shrinkage is None:
        # The minimum-norm solution of the exact rank, whatever rounding does.
        coef = min_norm_coef(theirs.covariance_, theirs.means_, rank)
        if len(ours.classes_) == 2:
            coef = coef[1:] - coef[:1]
        scale = np.abs(coef).max()
        np.testing.assert_allclose(ours.coef_, coef, rtol=1e-6, atol=1e-9 * scale)
        if sklearn_rank(theirs) != rank:
            # scikit-learn's cut-off (eps * max) kept a rounding-level singular
            # value of its covariance: its coefficients along that direction
            # are rounding noise divided by rounding noise (up to 1 / eps).
            assert sklearn_rank(theirs) > rank
            return
    scale = np.abs(theirs.coef_).max()
    np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=1e-6, atol=1e-9 * scale)
    scale = max(np.abs(theirs.intercept_).max(), 1.0)
    np.testing.assert_allclose(
        ours.intercept_, theirs.intercept_, rtol=1e-6, atol=1e-9 * scale
    )
    np.testing.assert_allclose(
        ours.predict_proba(X), theirs.predict_proba(X), atol=1e-8
    )


@pytest.mark.parametrize("seed", range(60))
def test_svd_and_eigen_on_singular_covariance_as_sklearn(seed):
    X, y, rank, priors = singular_draw(seed)
    ours = LDA(priors=priors).fit(X, y)
    theirs = skda.LinearDiscriminantAnalysis(priors=priors).fit(X, y)
    scale = np.abs(theirs.coef_).max()
    np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=1e-6, atol=1e-9 * scale)
    np.testing.assert_allclose(
        ours.predict_proba(X), theirs.predict_proba(X), atol=1e-8
    )
    # 'eigen' needs a non-singular covariance. Where the covariance is
    # singular in exact arithmetic, scikit-learn's generalized eigenproblem
    # fails or returns directions from rounding noise; ours fails, with advice.
    if rank < X.shape[1]:
        with pytest.raises(np.linalg.LinAlgError, match=r"singular.*shrinkage"):
            LDA(solver="eigen", priors=priors).fit(X, y)
    else:
        ours = LDA(solver="eigen", priors=priors).fit(X, y)
        theirs = skda.LinearDiscriminantAnalysis(solver="eigen", priors=priors)
        np.testing.assert_allclose(
            ours.predict_proba(X), theirs.fit(X, y).predict_proba(X), atol=1e-8
        )


def _blobs(n_samples, n_features, rng):
    X, y = make_blobs(
        n_samples=n_samples, n_features=1, centers=[[-2], [2]], random_state=rng
    )
    if n_features > 1:
        X = np.hstack([X, rng.randn(n_samples, n_features - 1)])
    return X, y


def test_shrinkage_example_accuracies_as_sklearn():
    # scikit-learn's example comparing LDA without shrinkage, with Ledoit-Wolf
    # shrinkage and with the OAS estimator (examples/classification/plot_lda.py:
    # 20 training rows, one informative feature among up to 75, 200 test
    # rows), with fewer repetitions: every test accuracy is scikit-learn's.
    rng = np.random.RandomState(0)
    settings = [
        {"shrinkage": None},
        {"shrinkage": "auto"},
        {"covariance_estimator": OAS(store_precision=False, assume_centered=False)},
    ]
    for n_features in range(1, 76, 4):
        for _ in range(10):
            X, y = _blobs(20, n_features, rng)
            X_test, y_test = _blobs(200, n_features, rng)
            for kwargs in settings:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    theirs = skda.LinearDiscriminantAnalysis(solver="lsqr", **kwargs)
                    ours = LDA(solver="lsqr", **kwargs)
                    expected = theirs.fit(X, y).score(X_test, y_test)
                    got = ours.fit(X, y).score(X_test, y_test)
                assert got == expected, (n_features, kwargs)
