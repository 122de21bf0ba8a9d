r"""
Looking at a Gaussian mixture
=============================

Three views of the mixtures :func:`~bayeskit.select_mixture` considers for the
iris measurements (shipped with scikit-learn), drawn by :mod:`bayeskit.plot`:
the BIC of every candidate as mclust draws it, the chosen model's components
as ellipses over the data, and its density.
"""

# %%
# Every candidate's BIC
# ---------------------
# One line per covariance type against the number of components ``K``; the
# circle marks the lowest BIC, the model :func:`~bayeskit.select_mixture`
# returns. (bayeskit's BIC is :math:`-2 \log L + p \log n`, lower is better:
# mclust draws its negative.)

import matplotlib.pyplot as plt
from sklearn.datasets import load_iris

from bayeskit import select_mixture
from bayeskit.plot import (
    MixtureDensityDisplay,
    MixtureEllipsesDisplay,
    MixtureSelectionDisplay,
)

iris = load_iris(as_frame=True)
X = iris.data
table, best = select_mixture(X, range(1, 7), random_state=0, n_init=3)
fig, ax = plt.subplots(figsize=(6.5, 4), layout="constrained")
MixtureSelectionDisplay.from_table(table, ax=ax)
ax.set_title("iris: BIC of every candidate mixture")
print(table.head())

# %%
# The components
# --------------
# Each component's ellipses at one and two standard deviations over two of
# the four measurements: the marginal of each Gaussian over that pair (the
# other two measurements are integrated out, not fixed). The points are
# coloured by their most probable component, and a thicker outline is a
# heavier component.

fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), layout="constrained")
MixtureEllipsesDisplay.from_estimator(best, X, features=(0, 1), ax=axes[0])
MixtureEllipsesDisplay.from_estimator(best, X, features=(2, 3), ax=axes[1])
fig.suptitle(f"{best.n_components} {best.covariance_type} components")

# %%
# The density
# -----------
# Contours of the log density of the petal measurements (again the exact
# marginal of the four-dimensional mixture).

fig, ax = plt.subplots(figsize=(6, 4.5), layout="constrained")
MixtureDensityDisplay.from_estimator(best, X, features=(2, 3), ax=ax)
plt.show()
