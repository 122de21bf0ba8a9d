"""Features on mixed scales: one column of order 1e-8, one of 1e8, the others
of order 1.

The Gaussian models are equivariant under rescaling a feature (Bishop 2006,
section 2.3: ``x -> D x`` maps ``N(mu, Sigma)`` to ``N(D mu, D Sigma D)``), so
apart from their regularisation (``var_smoothing``, ``reg_covar``, ``tol``,
which are absolute numbers in the units of the data, as in scikit-learn) the
posteriors on the rescaled data equal those on the standardized data, and the
log-densities differ by ``-sum(log D)``. A rounding test written in the units
of the data would see the 1e-8 column as collinear beside the 1e8 one; these
tests pin that it does not.

Tolerances. The reference is the same model fitted on the standardized data
(``Z``, every column of order 1). The closed-form models (LDA, QDA, GaussianNB)
are a handful of float64 operations per entry on matrices whose correlation
matrix is well conditioned (about 10 here), so they agree to 1e-9. EM
(the mixtures) repeats its rounding over up to 100 iterations from the same
start; the probabilities agree to 1e-6, the same order as scikit-learn's own
runs on rescaled data from the same start.
"""

import warnings

import numpy as np
import pytest
from sklearn import discriminant_analysis as sk_da
from sklearn import mixture as sk_mixture
from sklearn import naive_bayes as sk_nb

import bayeskit as bk

SCALE = np.array([1e-8, 1e8, 1.0, 1.0])


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    n = 300
    y = rng.integers(0, 3, size=n)
    centres = np.array([[0, 0, 0, 0], [2, 1, 0, -1], [-1, 2, 1, 0]], dtype=float)
    Z = (
        rng.normal(size=(n, 4))
        @ np.array([[1, 0.3, 0, 0], [0, 1, 0.2, 0], [0, 0, 1, 0.4], [0, 0, 0, 1]])
        + centres[y]
    )
    return Z * SCALE, Z, y


def _fit_quietly(est, *args):
    """Fit with every warning an error: a spurious collinearity or collapse
    warning fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return est.fit(*args)


@pytest.mark.parametrize("solver", ["svd", "lsqr", "eigen"])
def test_lda_on_mixed_scales_equals_the_fit_on_standardized_data(data, solver):
    """Every solver: the same posteriors as on the standardized data. 'svd'
    and 'eigen' also equal scikit-learn on the same data; scikit-learn's
    'lsqr' (``lstsq`` with a cut-off relative to the largest singular value)
    drops the 1e-8 feature's direction, which is not a rank deficiency, so
    'lsqr' is compared with scikit-learn on the standardized data only."""
    X, Z, y = data
    ours = _fit_quietly(bk.LinearDiscriminantAnalysis(solver=solver), X, y)
    ref = _fit_quietly(bk.LinearDiscriminantAnalysis(solver=solver), Z, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(Z), atol=1e-9)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(Z))
    peer_z = sk_da.LinearDiscriminantAnalysis(solver=solver).fit(Z, y)
    np.testing.assert_allclose(ref.predict_proba(Z), peer_z.predict_proba(Z), atol=1e-9)
    if solver != "lsqr":
        peer = sk_da.LinearDiscriminantAnalysis(solver=solver).fit(X, y)
        np.testing.assert_allclose(
            ours.predict_proba(X), peer.predict_proba(X), atol=1e-9
        )


def test_lda_lsqr_still_gives_the_minimum_norm_answer_when_truly_singular():
    """A feature that is an exact copy of another is singular in every unit:
    'lsqr' keeps scikit-learn's minimum-norm solution there."""
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 20)
    X = rng.normal(size=(40, 2)) + y[:, None]
    X = np.column_stack([X, X[:, 0]])
    ours = bk.LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    peer = sk_da.LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), peer.predict_proba(X), atol=1e-9)


def test_qda_on_mixed_scales_equals_the_fit_on_standardized_data(data):
    """QDA's ``tol`` is scikit-learn's absolute threshold on the variances, so
    with the default (1e-4) the 1e-8 feature is rank deficient there as in
    scikit-learn (the same error); with ``tol=0`` nothing is collinear (no
    rounding-level test fires) and the posteriors equal the standardized fit's,
    and scikit-learn's with ``tol=0`` on the same data."""
    X, Z, y = data
    with pytest.raises(np.linalg.LinAlgError, match="not full rank"):
        sk_da.QuadraticDiscriminantAnalysis().fit(X, y)
    with pytest.raises(np.linalg.LinAlgError, match="not full rank"):
        bk.QuadraticDiscriminantAnalysis().fit(X, y)
    ours = _fit_quietly(bk.QuadraticDiscriminantAnalysis(tol=0.0), X, y)
    ref = _fit_quietly(bk.QuadraticDiscriminantAnalysis(tol=0.0), Z, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(Z), atol=1e-9)
    peer = sk_da.QuadraticDiscriminantAnalysis(tol=0.0).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), peer.predict_proba(X), atol=1e-9)


def test_gaussian_nb_on_mixed_scales(data):
    """``var_smoothing`` adds a fraction of the largest variance (scikit-learn's
    definition), which on mixed scales swamps the small feature: the same as
    scikit-learn there; with ``var_smoothing=0`` the standardized fit's."""
    X, _, y = data
    ours = _fit_quietly(bk.GaussianNB(), X, y)
    peer = sk_nb.GaussianNB().fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), peer.predict_proba(X), atol=1e-9)


def test_gaussian_nb_without_smoothing_on_mixed_scales(data):
    """With ``var_smoothing=0``: the standardized fit's posteriors."""
    X, Z, y = data
    ours = _fit_quietly(bk.GaussianNB(var_smoothing=0.0), X, y)
    ref = _fit_quietly(bk.GaussianNB(var_smoothing=0.0), Z, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(Z), atol=1e-9)


@pytest.mark.parametrize("covariance_type", ["full", "tied", "diag"])
def test_gaussian_mixture_on_mixed_scales_equals_the_fit_on_standardized_data(
    data, covariance_type
):
    """From the same start (random responsibilities, so the start is the same
    rows' in both units) and with ``reg_covar=0``: the same posteriors, and
    log-densities shifted by the Jacobian ``-sum(log SCALE)``, with no warning
    of a collapsed covariance (scikit-learn gives none on these data)."""
    X, Z, _ = data
    params = dict(
        n_components=3,
        covariance_type=covariance_type,
        reg_covar=0.0,
        init_params="random",
        random_state=0,
    )
    ours = _fit_quietly(bk.GaussianMixture(**params), X)
    ref = _fit_quietly(bk.GaussianMixture(**params), Z)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(Z), atol=1e-6)
    np.testing.assert_allclose(
        ours.score_samples(X), ref.score_samples(Z) - np.log(SCALE).sum(), rtol=1e-6
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        peer = sk_mixture.GaussianMixture(**params).fit(X)
    np.testing.assert_allclose(ours.predict_proba(X), peer.predict_proba(X), atol=1e-6)


def test_spherical_mixture_on_mixed_scales_agrees_with_scikit_learn(data):
    """A spherical covariance is not equivariant under rescaling one feature
    (one variance for all), so the reference is scikit-learn on the same data
    from the same start."""
    X, _, _ = data
    params = dict(
        n_components=3,
        covariance_type="spherical",
        init_params="random",
        random_state=0,
    )
    ours = _fit_quietly(bk.GaussianMixture(**params), X)
    peer = sk_mixture.GaussianMixture(**params).fit(X)
    np.testing.assert_allclose(ours.predict_proba(X), peer.predict_proba(X), atol=1e-6)


@pytest.mark.parametrize("covariance_type", ["full", "tied", "diag"])
def test_mixture_classifier_on_mixed_scales_equals_the_fit_on_standardized_data(
    data, covariance_type
):
    """GaussianMixtureClassifier (a mixture per class) likewise."""
    X, Z, y = data
    params = dict(
        n_components=2,
        covariance_type=covariance_type,
        reg_covar=0.0,
        init_params="random",
        random_state=0,
    )
    ours = _fit_quietly(bk.GaussianMixtureClassifier(**params), X, y)
    ref = _fit_quietly(bk.GaussianMixtureClassifier(**params), Z, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(Z), atol=1e-6)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(Z))
