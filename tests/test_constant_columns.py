"""A constant column at a large magnitude (1e9, 1e12 everywhere) beside
ordinary features.

A constant feature carries no information: the fit must be the fit with that
column at 0. In float64 its value ``c`` is known to ``eps |c|`` only after a
weighted sum, and the covariance models divide such rounding by a variance of
order ``reg_covar`` (1e-6): about ``(n eps c)**2 / reg_covar``, 1e-9 at 1e9 and
1e-3 at 1e12, enough to move the posteriors. The mixtures gather their statistics in
coordinates shifted by a row of the data, where the column is exactly zero,
so the results agree to rounding of the *other* features (a few ulps of
order-1 numbers, amplified by at most the iterations of EM): 1e-9.
"""

import warnings

import numpy as np
import pytest

import bayeskit as bk


def _pair(constant):
    rng = np.random.default_rng(0)
    n = 200
    y = rng.integers(0, 2, size=n)
    Z = rng.normal(size=(n, 3)) + y[:, None]
    Z[:, 1] += 0.5 * Z[:, 0]  # correlated features: the full and tied statistics
    return (
        np.column_stack([Z, np.zeros(n)]),
        np.column_stack([Z, np.full(n, constant)]),
        y,
    )


def _fit(est, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no collapse or convergence warning
        return est.fit(*args)


MAGNITUDES = [1e9, 1e12, -1e12]


@pytest.mark.parametrize("constant", MAGNITUDES)
@pytest.mark.parametrize("covariance_type", ["full", "tied", "diag", "spherical"])
@pytest.mark.parametrize("init_params", ["kmeans", "random"])
def test_gaussian_mixture_ignores_a_constant_column_at_any_magnitude(
    constant, covariance_type, init_params
):
    X0, Xc, _ = _pair(constant)
    params = dict(
        n_components=2,
        covariance_type=covariance_type,
        init_params=init_params,
        random_state=0,
    )
    at_zero = _fit(bk.GaussianMixture(**params), X0)
    shifted = _fit(bk.GaussianMixture(**params), Xc)
    np.testing.assert_allclose(
        shifted.predict_proba(Xc), at_zero.predict_proba(X0), atol=1e-9
    )
    np.testing.assert_allclose(
        shifted.score_samples(Xc), at_zero.score_samples(X0), rtol=1e-9, atol=1e-9
    )
    np.testing.assert_array_equal(shifted.means_[:, 3], constant)
    np.testing.assert_allclose(shifted.means_[:, :3], at_zero.means_[:, :3], atol=1e-9)
    assert shifted.n_iter_ == at_zero.n_iter_


@pytest.mark.parametrize("constant", MAGNITUDES)
@pytest.mark.parametrize("covariance_type", ["full", "tied", "diag", "spherical"])
def test_mixture_classifier_ignores_a_constant_column(constant, covariance_type):
    X0, Xc, y = _pair(constant)
    params = dict(n_components=2, covariance_type=covariance_type, random_state=0)
    at_zero = _fit(bk.GaussianMixtureClassifier(**params), X0, y)
    shifted = _fit(bk.GaussianMixtureClassifier(**params), Xc, y)
    np.testing.assert_allclose(
        shifted.predict_proba(Xc), at_zero.predict_proba(X0), atol=1e-9
    )


@pytest.mark.parametrize("constant", [*MAGNITUDES, 1e15])
@pytest.mark.parametrize(
    "params",
    [
        {"reg_param": 0.1},
        {"covariance_prior_weight": 1.0},
        {"solver": "eigen", "shrinkage": 0.1},
    ],
    ids=["reg_param", "prior", "eigen-shrinkage"],
)
def test_qda_ignores_a_constant_column(constant, params):
    """Regularised (a constant column has no ML covariance): the fit with the
    column at 0; unregularised, the same clear error in both."""
    X0, Xc, y = _pair(constant)
    at_zero = _fit(bk.QuadraticDiscriminantAnalysis(**params), X0, y)
    shifted = _fit(bk.QuadraticDiscriminantAnalysis(**params), Xc, y)
    np.testing.assert_allclose(
        shifted.predict_proba(Xc), at_zero.predict_proba(X0), atol=1e-9
    )
    for X in (X0, Xc):
        with pytest.raises(np.linalg.LinAlgError, match="not full rank"):
            bk.QuadraticDiscriminantAnalysis().fit(X, y)


@pytest.mark.parametrize("constant", [*MAGNITUDES, 1e15])
@pytest.mark.parametrize(
    "params",
    [
        {"solver": "svd"},
        {"solver": "lsqr"},
        {"solver": "lsqr", "shrinkage": "auto"},
        {"solver": "eigen", "shrinkage": 0.1},
    ],
    ids=["svd", "lsqr", "lsqr-auto", "eigen-shrinkage"],
)
def test_lda_ignores_a_constant_column(constant, params):
    """The tied statistics: the fit with the column at 0; 'eigen' without
    shrinkage cannot use a singular covariance, a clear error in both."""
    X0, Xc, y = _pair(constant)
    at_zero = _fit(bk.LinearDiscriminantAnalysis(**params), X0, y)
    shifted = _fit(bk.LinearDiscriminantAnalysis(**params), Xc, y)
    np.testing.assert_allclose(
        shifted.predict_proba(Xc), at_zero.predict_proba(X0), atol=1e-9
    )
    for X in (X0, Xc):
        with pytest.raises(np.linalg.LinAlgError, match="singular"):
            bk.LinearDiscriminantAnalysis(solver="eigen").fit(X, y)
