"""
The dishonest casino: a hidden Markov model
===========================================

A casino mostly rolls a fair die but now and then switches to a loaded one, which
shows a six half of the time, and later switches back. We see only the rolls. This
is the classic example of Durbin, Eddy, Krogh and Mitchison's *Biological Sequence
Analysis* (1998): a two-state hidden Markov model with categorical emissions.

With :class:`~bayeskit.CategoricalHMM` we sample rolls from the casino's model,
learn a model back from the rolls alone by Baum-Welch, and decode which die was in
use: Viterbi (max-product) for the most probable sequence of dice, forward-backward
(sum-product) for the probability of the loaded die at every roll.
"""

# %%
# The casino's model
# ------------------
# State 0 is the fair die, state 1 the loaded one. The parameters of a model can be
# set by hand, as in hmmlearn; ``symbols_`` names the emission columns (the faces).

import matplotlib.pyplot as plt
import numpy as np

from bayeskit import CategoricalHMM

casino = CategoricalHMM(n_components=2)
casino.startprob_ = np.array([1.0, 0.0])
casino.transmat_ = np.array([[0.95, 0.05], [0.10, 0.90]])
casino.emissionprob_ = np.array([[1 / 6] * 6, [0.1] * 5 + [0.5]])
casino.symbols_ = np.array(["1", "2", "3", "4", "5", "6"])
casino.n_features_ = 6

rolls, dice = casino.sample(3000, random_state=0)
print("".join(rolls[:60, 0]))
print("".join(map(str, dice[:60])))

# %%
# Learning by Baum-Welch
# ----------------------
# Baum-Welch is EM on the chain of hidden states: the E-step is forward-backward,
# which gives the posterior of every state and the expected number of every
# transition; the M-step turns those expected counts into start, transition and
# emission probabilities. The likelihood has local maxima, so ``n_init`` random
# starts are run and the best kept.

hmm = CategoricalHMM(n_components=2, n_iter=300, tol=1e-4, n_init=3, random_state=0)
hmm.fit(rolls)

# The learnt states come in no particular order: call "loaded" the one that
# likes sixes, and show the parameters in the casino's order.
loaded = int(np.argmax(hmm.emissionprob_[:, -1]))
order = [1 - loaded, loaded]
np.set_printoptions(precision=3, suppress=True)
print("transitions\n", hmm.transmat_[np.ix_(order, order)])
print("emissions\n", hmm.emissionprob_[order])
print(f"converged after {hmm.n_iter_} iterations: {hmm.converged_}")
print(f"log-likelihood: learnt {hmm.score(rolls):.1f}, true {casino.score(rolls):.1f}")

# %%
# The learnt model is close to the casino's, and fits these rolls slightly better
# than the true parameters do, as a maximum-likelihood estimate should.
#
# Decoding
# --------
# Both decoders are belief propagation on the chain. Viterbi replaces the sums of
# the forward recursion by maxima and traces back the best path; forward-backward
# multiplies the forward and backward messages at every step into the posterior of
# the state.

path = hmm.predict(rolls) == loaded  # Viterbi
p_loaded = hmm.predict_proba(rolls)[:, loaded]  # forward-backward
truth = dice == 1
print(f"Viterbi agrees with the truth on {np.mean(path == truth):.1%} of the rolls")
print(f"posterior > 0.5 agrees on {np.mean((p_loaded > 0.5) == truth):.1%}")

span = slice(0, 400)
steps = np.arange(3000)[span]
fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 4.6), sharex=True)
ax1.fill_between(steps, truth[span], step="mid", alpha=0.3, color="C3", label="truth")
ax1.step(steps, path[span], where="mid", color="k", lw=1, label="Viterbi path")
ax1.set_yticks([0, 1], ["fair", "loaded"])
ax1.legend(loc="upper right", fontsize="small", ncols=2)
ax1.set_title("Which die? The first 400 rolls")
ax2.fill_between(steps, truth[span], step="mid", alpha=0.3, color="C3")
ax2.plot(steps, p_loaded[span], color="C0", lw=1.2)
ax2.set_ylabel("P(loaded | rolls)")
ax2.set_xlabel("roll")
fig.tight_layout()
plt.show()

# %%
# Viterbi commits to a single path, and a path pays for every switch of die; so it
# can skip a short loaded stretch that the posterior flags clearly, and it misses
# the shortest stretches altogether. Neither decoder can be right every time: one
# roll says little (a six is three times as likely from the loaded die, any other
# face three fifths as likely), and the casino keeps a die for only twenty rolls
# (fair) or ten (loaded) on average.
#
# The EM monitor
# --------------
# ``lower_bounds_`` holds the log posterior after every Baum-Welch iteration of the
# kept start; like every EM objective in bayeskit it never decreases.

fig, ax = plt.subplots(figsize=(6, 3.2))
ax.plot(hmm.lower_bounds_)
ax.set_xlabel("Baum-Welch iteration")
ax.set_ylabel("log posterior")
fig.tight_layout()
plt.show()
