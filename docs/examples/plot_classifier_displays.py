r"""
Looking at a generative classifier
==================================

Three views of classifiers on the iris measurements (shipped with
scikit-learn), drawn by :mod:`bayeskit.plot` and scikit-learn's
``CalibrationDisplay``: decision regions shaded by
the posterior (with and without costs), naive Bayes' per-feature densities,
and a calibration curve beside logistic regression's.
"""

# %%
# Decision regions
# ----------------
# The shading mixes the class colours by the posterior :math:`P(y \mid x)`;
# the lines are the decisions. With a cost matrix, a
# :class:`~bayeskit.GaussianNB` decides for the class of least expected cost:
# here calling a *virginica* a *versicolor* costs twenty times the converse,
# and the *virginica* region grows into the flowers the model hesitates on.

import matplotlib.pyplot as plt
import numpy as np
from sklearn.calibration import CalibrationDisplay
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from bayeskit import GaussianNB
from bayeskit.plot import DecisionRegionDisplay, FeatureDensityDisplay

iris = load_iris(as_frame=True)
X = iris.data[["petal length (cm)", "petal width (cm)"]]
y = iris.target_names[iris.target]
costs = np.array([[0, 1, 1], [1, 0, 1], [1, 20, 0]])  # C[true, predicted]
fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), layout="constrained")
for ax, model, title in [
    (axes[0], GaussianNB(), "most probable class"),
    (axes[1], GaussianNB(costs=costs), "least expected cost"),
]:
    DecisionRegionDisplay.from_estimator(model.fit(X, y), X, y, ax=ax)
    ax.set_title(title)

# %%
# What naive Bayes learnt
# -----------------------
# A Gaussian per class and feature: the whole model, with the class prior.

disp = FeatureDensityDisplay.from_estimator(GaussianNB().fit(iris.data, y))

# %%
# Calibration beside logistic regression
# --------------------------------------
# Is *versicolor* as probable as the model says? On held-out flowers, the
# fraction that are *versicolor* among those given a probability near
# :math:`p` should be near :math:`p` (the diagonal). Naive Bayes multiplies
# correlated petal and sepal evidence as if it were independent, which pushes
# its probabilities towards 0 and 1; logistic regression fits the
# probabilities directly. With 75 test flowers and five bins, each point
# rests on a handful of flowers: read the curves as rough.

X_train, X_test, y_train, y_test = train_test_split(
    iris.data, y == "versicolor", test_size=0.5, random_state=0, stratify=y
)
fig, ax = plt.subplots(figsize=(5.5, 5), layout="constrained")
for model, name in [
    (GaussianNB(), "GaussianNB"),
    (LogisticRegression(max_iter=1000), "LogisticRegression"),
]:
    model.fit(X_train, y_train)
    CalibrationDisplay.from_estimator(model, X_test, y_test, n_bins=5, name=name, ax=ax)
plt.show()
