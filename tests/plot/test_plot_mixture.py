"""Mixtures drawn: the ellipses, the density and the BIC lines hold what the
model and the table say."""

import numpy as np
import pytest
from scipy.integrate import quad

from bayeskit import GaussianHMM, GaussianMixture, select_mixture
from bayeskit.plot import (
    MixtureDensityDisplay,
    MixtureEllipsesDisplay,
    MixtureSelectionDisplay,
)

COVARIANCE_TYPES = ["full", "tied", "diag", "spherical"]


def pair_covariance(est, k, i, j):
    """The covariance of features (i, j) of component k, read by hand from
    each of scikit-learn's covariance layouts."""
    cov = est.covariances_
    kind = est.covariance_type
    if kind == "full":
        return cov[k][np.ix_([i, j], [i, j])]
    if kind == "tied":
        return cov[np.ix_([i, j], [i, j])]
    if kind == "diag":
        return np.diag(cov[k][[i, j]])
    return cov[k] * np.eye(2)


def outline(ellipse):
    """Points of the drawn outline (on its Bezier curves), in data coordinates."""
    t = np.linspace(0, 1, 33)
    pts = np.vstack(
        [curve(t) for curve, _ in ellipse.get_path().iter_bezier() if curve.degree == 3]
    )
    return ellipse.get_patch_transform().transform(pts)


def data(rng, n_features=3):
    A = rng.normal(size=(n_features, n_features))
    return np.vstack([rng.normal(size=(150, n_features)) @ A + 6 * c for c in range(3)])


@pytest.mark.parametrize("covariance_type", COVARIANCE_TYPES)
def test_ellipse_points_are_n_std_from_the_mean(rng, covariance_type):
    for draw in range(3):
        X = data(rng)
        gmm = GaussianMixture(3, covariance_type=covariance_type, random_state=draw)
        gmm.fit(X)
        i, j = rng.choice(3, size=2, replace=False)
        levels = (1.0, rng.uniform(1.5, 3.0))
        disp = MixtureEllipsesDisplay.from_estimator(
            gmm, X, features=(i, j), n_std=levels
        )
        assert len(disp.ellipses_) == 3
        for k, row in enumerate(disp.ellipses_):
            S = pair_covariance(gmm, k, i, j)
            mu = gmm.means_[k, [i, j]]
            for level, ellipse in zip(levels, row):
                pts = outline(ellipse)
                d = pts - mu
                maha = np.einsum("ni,ni->n", d, np.linalg.solve(S, d.T).T)
                # the Bezier circle of matplotlib is within 3e-4 of a circle
                np.testing.assert_allclose(np.sqrt(maha), level, rtol=1e-3)
                # its extent along each axis is level * sigma of that feature
                np.testing.assert_allclose(
                    d.max(axis=0), level * np.sqrt(np.diag(S)), rtol=1e-3
                )


def test_ellipses_of_a_gaussian_hmm_use_its_full_covariances(rng):
    X = data(rng, 2)
    hmm = GaussianHMM(2, covariance_type="full", random_state=0).fit(X)
    disp = MixtureEllipsesDisplay.from_estimator(hmm, n_std=2.0)
    for k, (ellipse,) in enumerate(disp.ellipses_):
        d = outline(ellipse) - hmm.means_[k]
        maha = np.einsum("ni,ni->n", d, np.linalg.solve(hmm.covars_[k], d.T).T)
        np.testing.assert_allclose(np.sqrt(maha), 2.0, rtol=1e-3)


def test_density_of_two_features_is_score_samples(rng):
    X = data(rng, 2)
    gmm = GaussianMixture(3, random_state=0).fit(X)
    disp = MixtureDensityDisplay.from_estimator(gmm, X, grid_resolution=30)
    grid = np.c_[disp.xx.ravel(), disp.yy.ravel()]
    np.testing.assert_allclose(
        disp.log_density.ravel(), gmm.score_samples(grid), rtol=1e-10, atol=1e-10
    )
    assert len(disp.contour_.levels) == 12


@pytest.mark.parametrize("covariance_type", COVARIANCE_TYPES)
def test_density_of_a_pair_is_the_marginal(rng, covariance_type):
    """The drawn density of features (0, 2) of a 3-d mixture is the integral
    of the 3-d density over feature 1 (numerical quadrature)."""
    X = data(rng)
    gmm = GaussianMixture(2, covariance_type=covariance_type, random_state=0).fit(X)
    disp = MixtureDensityDisplay.from_estimator(
        gmm, X, features=(0, 2), grid_resolution=6
    )
    for r, c in [(0, 0), (2, 3), (5, 1), (3, 3)]:
        x, z = disp.xx[r, c], disp.yy[r, c]

        def density(y, x=x, z=z):
            return np.exp(gmm.score_samples(np.array([[x, y, z]])))[0]

        integral, _ = quad(density, -np.inf, np.inf, epsabs=0, epsrel=1e-10)
        np.testing.assert_allclose(np.exp(disp.log_density[r, c]), integral, rtol=1e-6)


@pytest.mark.parametrize("criterion", ["bic", "aic"])
def test_selection_lines_hold_the_table(rng, criterion):
    X = data(rng, 2)
    table, best = select_mixture(
        X, range(1, 5), ["full", "diag", "spherical"], criterion, random_state=0
    )
    disp = MixtureSelectionDisplay.from_table(table, criterion=criterion)
    assert sorted(disp.lines_) == ["diag", "full", "spherical"]
    for kind, line in disp.lines_.items():
        rows = table[table["covariance_type"] == kind].sort_values("n_components")
        np.testing.assert_array_equal(line.get_xdata(), rows["n_components"])
        np.testing.assert_array_equal(line.get_ydata(), rows[criterion])
    # the marker sits on the lowest value, the model select_mixture returned
    assert disp.best_.get_xdata()[0] == best.n_components
    assert disp.best_.get_ydata()[0] == table[criterion].min()
    assert best.covariance_type in disp.best_.get_label()


def test_bad_arguments_name_the_parameter(rng):
    X = data(rng, 2)
    gmm = GaussianMixture(2, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        MixtureEllipsesDisplay.from_estimator(gmm, X, features=(0, 0))
    with pytest.raises(ValueError, match="features"):
        MixtureEllipsesDisplay.from_estimator(gmm, X, features=(0, 5))
    with pytest.raises(ValueError, match="n_std"):
        MixtureEllipsesDisplay.from_estimator(gmm, X, n_std=-1)
    with pytest.raises(ValueError, match="grid_resolution"):
        MixtureDensityDisplay.from_estimator(gmm, X, grid_resolution=1)
    table, _ = select_mixture(X, [1, 2], ["full"], random_state=0)
    with pytest.raises(ValueError, match="columns"):
        MixtureSelectionDisplay.from_table(table.drop(columns="bic"))
    with pytest.raises(ValueError, match="criterion"):
        MixtureSelectionDisplay.from_table(table, criterion="icl")


def test_the_caller_data_is_not_written(rng):
    X = data(rng, 2)
    before = X.copy()
    gmm = GaussianMixture(2, random_state=0).fit(X)
    MixtureEllipsesDisplay.from_estimator(gmm, X)
    MixtureDensityDisplay.from_estimator(gmm, X, grid_resolution=10)
    np.testing.assert_array_equal(X, before)
