"""
A Gaussian mixture on degenerate data, with and without the covariance prior
============================================================================

Maximum likelihood is ill-posed for Gaussian mixtures: a component that sits on a
single point, or on points that all lie on a line, can shrink its covariance toward
zero and drive the likelihood to infinity. Real data do this: a sensor stuck at one
value, a feature that is an exact function of another. This example fits
:class:`~bayeskit.GaussianMixture` to such data three ways: by plain maximum
likelihood, with scikit-learn's remedy (a tiny ``reg_covar`` added to every
covariance), and with a MAP prior on the covariances (Fraley and Raftery, 2007).
"""

# %%
# Degenerate data
# ---------------
# A round cloud of 150 points, 60 points lying exactly on a line, and one reading
# repeated 25 times.

import matplotlib.pyplot as plt
import numpy as np

from bayeskit import GaussianMixture
from bayeskit.plot import MixtureEllipsesDisplay

rng = np.random.default_rng(0)


def make_data(noise=0.0):
    cloud = rng.normal(0.0, 1.0, size=(150, 2))
    s = rng.uniform(-3, 3, size=60)
    line = np.c_[s, 4 + 0.5 * s]
    stuck = np.tile([4.0, -3.0], (25, 1))
    X = np.vstack([cloud, line, stuck])
    return X + noise * rng.normal(size=X.shape) * (np.arange(len(X)) >= 150)[:, None]


X = make_data()
# The same process, each degenerate point moved by a little noise: new data.
X_new = make_data(noise=0.05)

# %%
# Maximum likelihood
# ------------------
# With ``reg_covar=0`` and no prior, EM stops at the first component whose
# covariance is singular, and says what to do about it.

try:
    GaussianMixture(n_components=3, reg_covar=0.0, random_state=0).fit(X)
except ValueError as exc:
    print("ValueError:", exc)

# %%
# ``reg_covar`` and the MAP prior
# -------------------------------
# scikit-learn's default adds :math:`10^{-6}` to the diagonal of every covariance:
# the fit runs, but two components become needles of variance :math:`10^{-6}` on
# the line and on the repeated point. The Bayesian alternative is a prior on each
# covariance, :math:`\log p(\Sigma_k) = -\tfrac{\eta}{2}(\log|\Sigma_k| +
# \operatorname{tr}(\Sigma_k^{-1} S))` up to a constant, which turns the M-step into
#
# .. math::
#
#    \Sigma_k = \frac{\sum_n \tau_{nk} (x_n - \mu_k)(x_n - \mu_k)^T + \eta S}
#                    {\sum_n \tau_{nk} + \eta}:
#
# ``eta = covariance_prior_weight`` virtual samples of scatter ``S`` (the identity,
# ``covariance_prior``) added to every component. One virtual sample is enough.

fits = {
    "reg_covar = 1e-6 (maximum likelihood)": GaussianMixture(
        n_components=3, random_state=0
    ).fit(X),
    "MAP prior, eta = 1, S = I": GaussianMixture(
        n_components=3, covariance_prior_weight=1.0, random_state=0
    ).fit(X),
}
for name, gm in fits.items():
    smallest = np.linalg.eigvalsh(gm.covariances_).min(axis=1)
    print(f"{name}\n  smallest variance per component: {np.round(smallest, 6)}")
    train, new = gm.score(X), gm.score(X_new)
    print(f"  mean log-likelihood: training data {train:7.3f}, new data {new:7.3f}")

# %%
# The needles score the training data very well and new data very badly: a point
# 0.05 off the line is fifty standard deviations away from a component of
# variance :math:`10^{-6}`. The prior gives up a little on the training data and
# generalises.


def draw(ax, gm, title):
    # each component at one and two standard deviations, over the data
    MixtureEllipsesDisplay.from_estimator(gm, X, ax=ax)
    ax.set_title(title, fontsize="medium")
    ax.set_aspect("equal")
    ax.set_xlim(-4.5, 6)
    ax.set_ylim(-4.5, 6.5)


fig, axes = plt.subplots(1, 2, figsize=(9, 4.5))
for ax, (name, gm) in zip(axes, fits.items()):
    draw(ax, gm, name)
fig.tight_layout()
plt.show()

# %%
# The bound EM maximises
# ----------------------
# With the prior, EM maximises the log posterior
# :math:`\sum_n \log \sum_k \pi_k N(x_n; \mu_k, \Sigma_k) + \sum_k \log p(\Sigma_k)`
# through its lower bound: the E-step makes the bound touch the log posterior at
# the current parameters, the M-step maximises the bound, so the log posterior
# never decreases. ``lower_bounds_`` records it (per sample) at every iteration;
# here from six random starts, which end in two different local maxima.

fig, ax = plt.subplots(figsize=(7, 3.8))
for seed in range(6):
    gm = GaussianMixture(
        n_components=3,
        covariance_prior_weight=1.0,
        init_params="random_from_data",
        max_iter=200,
        random_state=seed,
    ).fit(X)
    ax.plot(np.arange(1, len(gm.lower_bounds_) + 1), gm.lower_bounds_, ".-")
ax.set_xlabel("EM iteration")
ax.set_ylabel("log posterior per sample")
ax.set_title("MAP-EM never decreases its objective")
fig.tight_layout()
plt.show()
