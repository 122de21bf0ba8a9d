"""Classifiers drawn: the shading is the posterior's mix of colours, the
regions are the Bayes decision (costs included), naive Bayes' panels are
scikit-learn's fitted distributions."""

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgb
from scipy.stats import norm
from sklearn import naive_bayes as sk
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression

import bayeskit as bk
from bayeskit.datasets import load_playtennis
from bayeskit.plot import DecisionRegionDisplay, FeatureDensityDisplay


def colours(k):
    import matplotlib.pyplot as plt

    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return np.array([to_rgb(cycle[i]) for i in range(k)])


def grid_of(disp, X, features):
    i, j = features
    grid = np.tile(np.median(X, axis=0), (disp.xx.size, 1))
    grid[:, i] = disp.xx.ravel()
    grid[:, j] = disp.yy.ravel()
    return grid


@pytest.mark.parametrize(
    "estimator",
    [
        bk.GaussianNB(),
        bk.QuadraticDiscriminantAnalysis(),
        LogisticRegression(max_iter=2000),
    ],
    ids=["GaussianNB", "QDA", "sklearn-LogisticRegression"],
)
def test_shading_is_the_posterior_mix_of_the_class_colours(estimator):
    X, y = load_iris(return_X_y=True)
    clf = estimator.fit(X, y)
    features = (2, 3)
    disp = DecisionRegionDisplay.from_estimator(
        clf, X, y, features=features, grid_resolution=40
    )
    grid = grid_of(disp, X, features)
    proba = clf.predict_proba(grid)
    expected = (0.55 * proba @ colours(3) + 0.45).reshape(40, 40, 3)
    np.testing.assert_allclose(disp.image_.get_array(), expected, atol=1e-12)
    np.testing.assert_array_equal(
        disp.prediction.ravel(), np.searchsorted(clf.classes_, clf.predict(grid))
    )


def test_regions_with_costs_are_the_least_expected_cost(rng):
    X = np.vstack([rng.normal(c, 1.0, size=(150, 2)) for c in (0, 2)])
    y = np.repeat([0, 1], 150)
    costs = np.array([[0.0, 1.0], [6.0, 0.0]])  # C[true, predicted]
    clf = bk.GaussianNB(costs=costs).fit(X, y)
    disp = DecisionRegionDisplay.from_estimator(clf, X, y, grid_resolution=50)
    proba = clf.predict_proba(np.c_[disp.xx.ravel(), disp.yy.ravel()])
    least_cost = np.argmin(proba @ costs, axis=1)  # the Bayes decision
    np.testing.assert_array_equal(disp.prediction.ravel(), least_cost)
    # and the costs moved the boundary: the argmax disagrees somewhere
    assert np.any(least_cost != np.argmax(proba, axis=1))


def test_dataframe_input_keeps_its_columns(rng):
    X, y = load_iris(return_X_y=True, as_frame=True)
    clf = bk.GaussianNB().fit(X, y)
    disp = DecisionRegionDisplay.from_estimator(clf, X, y, features=(0, 1))
    assert disp.ax_.get_xlabel() == X.columns[0]
    assert disp.ax_.get_ylabel() == X.columns[1]


def test_gaussian_nb_panels_are_scikit_learns_densities():
    X, y = load_iris(return_X_y=True)
    ours = bk.GaussianNB().fit(X, y)
    peer = sk.GaussianNB().fit(X, y)
    disp = FeatureDensityDisplay.from_estimator(ours)
    assert len(disp.artists_) == 4
    for f, lines in enumerate(disp.artists_):
        for k, line in enumerate(lines):
            x = line.get_xdata()
            expected = norm.pdf(x, peer.theta_[k, f], np.sqrt(peer.var_[k, f]))
            np.testing.assert_allclose(line.get_ydata(), expected, rtol=1e-9)


def test_categorical_nb_panels_are_scikit_learns_tables():
    df = load_playtennis()
    X, y = df.drop(columns="PlayTennis"), df["PlayTennis"]
    ours = bk.CategoricalNB().fit(X, y)
    codes = pd.DataFrame({c: pd.Categorical(X[c]).codes for c in X})
    peer = sk.CategoricalNB(alpha=1.0).fit(codes, y)  # categories sorted, as ours
    disp = FeatureDensityDisplay.from_estimator(ours)
    for f, bars in enumerate(disp.artists_):
        for k, container in enumerate(bars):
            heights = [p.get_height() for p in container.patches]
            np.testing.assert_allclose(
                heights, np.exp(peer.feature_log_prob_[f][k]), rtol=1e-12
            )
    labels = [t.get_text() for t in disp.axes_[0].get_xticklabels()]
    assert labels == sorted(X.iloc[:, 0].unique())


def test_bad_arguments_name_the_parameter():
    X, y = load_iris(return_X_y=True)
    clf = bk.GaussianNB().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        DecisionRegionDisplay.from_estimator(clf, X, features=(1, 1))
    with pytest.raises(ValueError, match="grid_resolution"):
        DecisionRegionDisplay.from_estimator(clf, X, grid_resolution=1)
    with pytest.raises(ValueError, match="features"):
        FeatureDensityDisplay.from_estimator(clf, features=[7])
    with pytest.raises(TypeError, match="FeatureDensityDisplay"):
        FeatureDensityDisplay.from_estimator(
            LogisticRegression(max_iter=2000).fit(X, y)
        )
