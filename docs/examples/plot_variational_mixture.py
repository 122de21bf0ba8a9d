r"""
A variational mixture chooses its size
======================================

:class:`~bayeskit.BayesianGaussianMixture` is given ten components for data drawn
from three. Its posterior over the mixture weights (here the stick-breaking weights
of a Dirichlet process) leaves the surplus components almost no weight: they die
away during the fit, and the three that remain describe the clusters, ellipses and
all. A small ``weight_concentration_prior`` favours fewer components; a large one
lets more of them keep some weight.
"""

# %%
# Three clusters, ten components
# ------------------------------

import warnings

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Ellipse
from sklearn.exceptions import ConvergenceWarning

from bayeskit import BayesianGaussianMixture

rng = np.random.default_rng(0)
X = np.vstack(
    [
        rng.multivariate_normal([0, 0], [[2.0, 1.2], [1.2, 1.5]], size=300),
        rng.multivariate_normal([7, 1], [[0.6, 0.0], [0.0, 0.6]], size=200),
        rng.multivariate_normal([3, 7], [[1.0, -0.6], [-0.6, 1.0]], size=250),
    ]
)

# %%
# The weights, iteration by iteration
# -----------------------------------
# One iteration per ``fit`` with ``warm_start``: the weights of the surplus
# components fall towards zero, and the lower bound rises at every step. (Each
# one-iteration fit would warn that it has not converged: here that is the point.)

model = BayesianGaussianMixture(
    n_components=10, max_iter=1, warm_start=True, random_state=0, tol=1e-4
)
history, bounds = [], []
for _ in range(150):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X)
    history.append(model.weights_.copy())
    bounds.append(model.lower_bound_)
    if model.converged_:
        break
history = np.array(history)
print("iterations:", len(history))
print("weights:", np.round(np.sort(model.weights_)[::-1], 3))

# %%
# The weights dying away, and the ellipses of the components that stay (two
# standard deviations of ``covariances_``; the line width is the weight).

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4.2))
ax1.plot(np.arange(1, len(history) + 1), history)
ax1.set_xlabel("iteration")
ax1.set_ylabel("weight of each component")
ax1.set_yscale("log")
ax1.set_title("surplus components die away")

ax2.scatter(X[:, 0], X[:, 1], s=4, c=model.predict(X), cmap="tab10")
for weight, mean, cov in zip(model.weights_, model.means_, model.covariances_):
    if weight < 0.01:
        continue
    values, vectors = np.linalg.eigh(cov)
    angle = np.degrees(np.arctan2(vectors[1, -1], vectors[0, -1]))
    width, height = 4 * np.sqrt(values[::-1])
    ax2.add_patch(
        Ellipse(
            mean, width, height, angle=angle, fill=False, lw=1 + 6 * weight, color="k"
        )
    )
ax2.set_title(f"{np.sum(model.weights_ >= 0.01)} components of weight >= 0.01")
ax2.set_aspect("equal")
fig.tight_layout()
plt.show()

# %%
# The lower bound
# ---------------
# ``lower_bound_`` never decreases; the fit stops when it gains less than ``tol``.

print("bound rises at every step:", bool(np.all(np.diff(bounds) >= 0)))
