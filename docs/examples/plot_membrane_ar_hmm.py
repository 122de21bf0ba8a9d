r"""
A spiking membrane potential: regimes of different dynamics
===========================================================

matplotlib ships a membrane-potential recording as sample data
(``matplotlib.cbook.get_sample_data("membrane.dat")``, 12,000 samples): a cell at
rest, then a train of some seventy spikes, then rest again. Between spikes the
potential relaxes slowly; during a spike it rises and falls within a few samples.
The two regimes do not differ by a level (a spike crosses every level the
relaxation visits) but by their *dynamics*, which is what an autoregressive HMM
models: in state :math:`j` every step is a linear function of the steps before it
plus Gaussian noise,

.. math::

   x_t = c_j + a_{j,1} x_{t-1} + a_{j,2} x_{t-2} + \varepsilon_t,
   \qquad \varepsilon_t \sim \mathcal{N}(0, \sigma_j^2).

We fit :class:`~bayeskit.ARGaussianHMM` with two states and ``order=2`` and
read the regimes off its coefficients and its decoded path.
"""

# %%
# The recording
# -------------

import matplotlib.cbook as cbook
import matplotlib.pyplot as plt
import numpy as np

from bayeskit import ARGaussianHMM

with cbook.get_sample_data("membrane.dat") as f:
    potential = np.frombuffer(f.read(), dtype=np.float32).astype(float)
X = 1000.0 * potential[:, None]  # one sequence, one feature (the file's units x 1000)
print(f"{len(X)} samples, from {X.min():.0f} to {X.max():.0f}")

# %%
# Two regimes of second-order dynamics
# ------------------------------------
# EM is local: ``n_init`` keeps the best of two starts. The first ``order`` steps
# enter only as the lags of later steps.

model = ARGaussianHMM(2, order=2, n_iter=100, n_init=2, random_state=0).fit(X)
states = model.predict(X)
print("converged:", model.converged_, "after", model.n_iter_, "iterations")

for j in range(2):
    a1, a2 = model.coef_[j, 0]
    roots = np.roots([1.0, -a1, -a2])  # of z^2 - a1 z - a2: the modes of the state
    print(
        f"state {j}: x_t = {model.intercept_[j, 0]:7.2f} + {a1:5.2f} x_(t-1) "
        f"+ {a2:5.2f} x_(t-2), noise sd {np.sqrt(model.covars_[j, 0, 0]):5.1f}, "
        f"{np.mean(states == j):4.0%} of the steps, modes {np.round(roots, 2)}"
    )

# %%
# One state is the slow relaxation: a mode close to 1 (a step is nearly the step
# before) and little noise. The other is the spike: a larger first coefficient and
# a negative second one, so that a step carries on the change of the step before
# (momentum), with noise an order of magnitude larger, since a spike's rise and fall
# are fast next to the sampling. The decoded path marks the spikes.

spike = int(np.argmax(np.sqrt(model.covars_[:, 0, 0])))
t = np.arange(len(X))
fig, axes = plt.subplots(2, 1, figsize=(9, 5), sharey=True)
for ax, window in zip(axes, [slice(None), slice(1400, 2200)]):
    ax.plot(t[window], X[window, 0], color="0.6", lw=0.8, label="recording")
    marked = np.where(states[window] == spike, X[window, 0], np.nan)
    ax.plot(t[window], marked, color="C3", lw=1.2, label="decoded spike state")
    ax.set_ylabel("potential")
axes[0].set_title("The recording, and the steps decoded in the spike state")
axes[1].set_xlabel("sample")
axes[1].set_title("A closer look: samples 1,400 to 2,200")
axes[0].legend(loc="upper left")
fig.tight_layout()
plt.show()

# %%
# An HMM whose states differ only by their means (``GaussianHMM``) would cut the
# trace by level instead, putting the top of every spike and the depolarised
# plateau in different states whatever their dynamics; here a state is a way of
# moving. The model is :math:`O(T K)` per EM iteration like any HMM: the lags enter
# the emission, not the chain.
