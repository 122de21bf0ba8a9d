r"""
Tracking a moving point through a gap
=====================================

A point moves in the plane with a slowly changing velocity, and a sensor reports
its position with noise, except for a stretch of 40 steps where the sensor is
blind. A linear dynamical system with a constant-velocity motion model,

.. math::

   x_t = (p_x, p_y, v_x, v_y), \qquad
   x_{t+1} = \begin{pmatrix} I & I \\ 0 & I \end{pmatrix} x_t + w_t, \qquad
   y_t = \begin{pmatrix} I & 0 \end{pmatrix} x_t + v_t,

tracks it. :class:`~bayeskit.LinearGaussianSSM` learns the two noise covariances
``Q`` and ``R`` by EM from the track itself (the motion model stays fixed), with the
blind steps marked NaN: what is missing is latent. The Kalman filter then gives the
position the tracker believes at each step from the steps so far, and the smoother
the position given the whole track, which bridges the gap from both sides.
"""

# %%
# A track with a blind stretch
# ----------------------------

import matplotlib.pyplot as plt
import numpy as np

from bayeskit import LinearGaussianSSM

rng = np.random.default_rng(1)
n = 200
velocity = np.array([1.0, 0.3]) + np.cumsum(rng.normal(scale=0.08, size=(n, 2)), 0)
truth = np.cumsum(velocity, axis=0)
observed = truth + rng.normal(scale=1.5, size=truth.shape)
gap = slice(90, 130)
observed[gap] = np.nan  # the sensor is blind here

A = np.block([[np.eye(2), np.eye(2)], [np.zeros((2, 2)), np.eye(2)]])
C = np.hstack([np.eye(2), np.zeros((2, 2))])
model = LinearGaussianSSM(
    4,
    transition_matrices=A,
    observation_matrices=C,
    initial_state_mean=np.r_[observed[0], 1.0, 0.0],
    initial_state_covariance=np.diag([4.0, 4.0, 1.0, 1.0]),
    em_vars=["transition_covariance", "observation_covariance"],
    n_iter=50,
).fit(observed)
print("learned observation noise (true 1.5**2 = 2.25 on the diagonal):")
print(model.observation_covariance_.round(2))

# %%
# Filter and smoother
# -------------------
# The filter is what a tracker knows online: in the gap it carries the last
# velocity forward and its uncertainty grows. The smoother uses the steps after the
# gap too, so its path rejoins the truth and its uncertainty peaks in the middle.

filtered, filtered_cov = model.filter(observed)
smoothed, smoothed_cov = model.smooth(observed)
print("mean distance to the true position, all steps / in the gap:")
for name, est in (("filter", filtered), ("smoother", smoothed)):
    err = np.linalg.norm(est[:, :2] - truth, axis=1)
    print(f"  {name:8s} {err.mean():.2f} / {err[gap].mean():.2f}")

fig, (ax_map, ax_x) = plt.subplots(1, 2, figsize=(11, 4.5))
ax_map.plot(*truth.T, color="k", lw=1, label="true path")
ax_map.scatter(*observed.T, s=6, color="0.6", label="observed positions")
ax_map.plot(*filtered[:, :2].T, color="tab:orange", label="filtered")
ax_map.plot(*smoothed[:, :2].T, color="tab:blue", label="smoothed")
ax_map.plot(*truth[gap].T, color="tab:red", lw=3, alpha=0.3, label="blind stretch")
ax_map.set(xlabel="x", ylabel="y", title="The track")
ax_map.legend(fontsize=8)

t = np.arange(n)
for est, cov, color, name in (
    (filtered, filtered_cov, "tab:orange", "filtered"),
    (smoothed, smoothed_cov, "tab:blue", "smoothed"),
):
    sd = np.sqrt(cov[:, 0, 0])
    ax_x.plot(t, est[:, 0] - truth[:, 0], color=color, label=name)
    ax_x.fill_between(t, -2 * sd, 2 * sd, color=color, alpha=0.15)
ax_x.axvspan(gap.start, gap.stop, color="tab:red", alpha=0.1, label="blind stretch")
ax_x.axhline(0, color="k", lw=0.8)
ax_x.set(
    xlabel="step",
    ylabel="error in x",
    title="Error in x, with the model's 95% band",
)
ax_x.legend(fontsize=8)
fig.tight_layout()
plt.show()

# %%
# Forecasting
# -----------
# Past the last step, ``forecast`` carries the filter's last state through the
# dynamics: the mean continues the motion, and the covariance says how far to trust
# it.

means, covs = model.forecast(observed, n_steps=10)
print("10 steps ahead: x within +-", np.sqrt(covs[-1, 0, 0]).round(1))
