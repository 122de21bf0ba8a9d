r"""
Looking at a hidden Markov model
================================

The annual counts of major earthquakes, 1900-2006
(:func:`~bayeskit.datasets.load_earthquakes`), under a two-state Poisson HMM
(Zucchini and MacDonald 2009): the series coloured by the decoded states, the
posterior state probabilities beneath, the transition matrix, and the
durations of the same two regimes under a hidden semi-Markov model, drawn by
:mod:`bayeskit.plot`.
"""

# %%
# Decoded states over the series
# ------------------------------
# Each band spans the years the Viterbi path assigns to one state; beneath,
# the posterior probability of each state in every year (forward-backward).
# Where the posterior hesitates, the band is one choice among close ones.

import matplotlib.pyplot as plt
import numpy as np

from bayeskit import HiddenSemiMarkovModel, PoissonHMM
from bayeskit.datasets import load_earthquakes
from bayeskit.plot import (
    DurationDisplay,
    StateDiagramDisplay,
    StateSequenceDisplay,
    TransitionDisplay,
)

quakes = load_earthquakes()
X = quakes[["count"]].to_numpy()
hmm = PoissonHMM(2, n_iter=200, random_state=0).fit(X)
print("rates:", hmm.lambdas_.ravel().round(1))

disp = StateSequenceDisplay.from_estimator(hmm, X, index=quakes.index)
disp.ax_.set_ylabel("earthquakes (M7+)")

# %%
# Transitions
# -----------
# Row ``i`` is the distribution of next year's state given this year's: both
# states persist, so busy and quiet decades alternate. On the left, the same
# matrix as a state diagram (an arrow per transition, as wide as it is
# probable; those below ``threshold`` are left out); on the right, as a heat
# map with every entry.

fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3.6), layout="constrained")
StateDiagramDisplay.from_estimator(hmm, threshold=0.02, ax=left)
TransitionDisplay.from_estimator(hmm, ax=right)
plt.show()

# %%
# How long a regime lasts
# -----------------------
# Under the HMM, the years spent in a state are geometric: one year is always
# the most likely stay. A hidden semi-Markov model gives each state its own
# duration distribution, here a negative binomial over 1 to 40 years (the
# geometric is one of them), with the same Poisson emissions. Its durations
# (solid) beside the HMM's implied geometric ones (dotted), state by state:

hsmm = HiddenSemiMarkovModel(
    2, emission="poisson", duration="negative_binomial", max_duration=40, random_state=0
).fit(X)
mean_years = hsmm.duration_pmf_ @ np.arange(1, 41)
print("mean years per regime, semi-Markov:", mean_years.round(1))
print("mean years per regime, HMM:", (1 / (1 - np.diag(hmm.transmat_))).round(1))
disp = DurationDisplay.from_estimator(hsmm)
d = np.arange(1, 41)
for j, p in enumerate(np.diag(hmm.transmat_)):
    disp.ax_.plot(d, (1 - p) * p ** (d - 1), ":", color=f"C{j}", label=f"HMM state {j}")
disp.ax_.legend(fontsize="small")
disp.ax_.set_title("Years in a regime")
plt.show()
