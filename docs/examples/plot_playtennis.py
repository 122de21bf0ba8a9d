"""
Naive Bayes on PlayTennis: Mitchell's worked example
====================================================

The fourteen days of the PlayTennis table are the naive Bayes example of Mitchell's
*Machine Learning* (1997, section 6.9.1). :class:`~bayeskit.CategoricalNB` takes the
table as it is (strings, no encoder), reproduces the book's numbers with ``m=0``
(maximum likelihood), and shows what the m-estimate changes.
"""

# %%
# The data
# --------
# Four categorical features and the target, one row per day.

import matplotlib.pyplot as plt
import numpy as np

from bayeskit import CategoricalNB
from bayeskit.datasets import load_playtennis

df = load_playtennis()
X, y = df.drop(columns="PlayTennis"), df["PlayTennis"]
print(df)

# %%
# Learning: the conditional tables
# --------------------------------
# With ``m=0`` every table is a relative frequency: :math:`\hat P(x_j = a \mid y = c)
# = n_{c,j,a} / n_{c,j}`. Mitchell's tables come out as they are, for example
# Outlook given the class (rows: No, Yes; columns: the categories in sorted order).

clf = CategoricalNB(m=0).fit(X, y)
for name, cats, log_prob in zip(X.columns, clf.categories_, clf.feature_log_prob_):
    table = np.exp(log_prob)
    print(f"{name:12s}", dict(zip(cats, table.round(3).T.tolist())))
class_prior = np.exp(clf.class_log_prior_)
print("P(class)    ", dict(zip(clf.classes_, class_prior.round(4).tolist())))

# %%
# Prediction: the day (Sunny, Cool, High, Strong)
# -----------------------------------------------
# The joint scores :math:`P(x, y)` are Mitchell's products,
# :math:`\tfrac{2}{9}\cdot\tfrac{3}{9}\cdot\tfrac{3}{9}\cdot\tfrac{3}{9}\cdot
# \tfrac{9}{14} \approx 0.0053` for Yes and
# :math:`\tfrac{3}{5}\cdot\tfrac{1}{5}\cdot\tfrac{4}{5}\cdot\tfrac{3}{5}\cdot
# \tfrac{5}{14} \approx 0.0206` for No, so the Bayes decision is No, with
# :math:`P(\text{No} \mid x) = 0.0206 / (0.0206 + 0.0053) \approx 0.795`.

day = X.iloc[:1].assign(
    Outlook="Sunny", Temperature="Cool", Humidity="High", Wind="Strong"
)
joint = np.exp(clf.predict_joint_log_proba(day))[0]
posterior = clf.predict_proba(day)[0]
for c, j, p in zip(clf.classes_, joint, posterior):
    print(f"{c:3s}  P(x, y) = {j:.4f}   P(y | x) = {p:.4f}")
print("prediction:", clf.predict(day)[0])

# %%
# The m-estimate
# --------------
# Overcast was never seen on a No day, so with ``m=0`` an overcast day gets
# :math:`P(\text{No} \mid x) = 0` whatever its other features say: one zero count
# vetoes the whole product. The m-estimate adds ``m`` virtual samples drawn from a
# prior ``p`` (uniform by default),
#
# .. math::
#
#    \hat P(x_j = a \mid y = c) = \frac{n_{c,j,a} + m\, p_{j,a}}{n_{c,j} + m},
#
# which removes the zeros and pulls every table toward ``p``. A small ``m`` already
# lets the other three features of the overcast day speak; with a large ``m`` every
# table is nearly uniform, the features say less and less, and both posteriors drift
# toward the class prior, :math:`P(\text{No}) = 5/14 \approx 0.357`.

stormy = day.assign(Outlook="Overcast")  # overcast, cool, humid and windy
ms = np.array([0, 0.5, 1, 2, 4, 8, 16, 32, 64])
p_no = np.array(
    [
        [CategoricalNB(m=m).fit(X, y).predict_proba(d)[0, 0] for m in ms]
        for d in (day, stormy)
    ]
)

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
ax1.bar(clf.classes_, joint, color=["tab:red", "tab:blue"])
for i, j in enumerate(joint):
    ax1.text(i, j, f"{j:.4f}", ha="center", va="bottom")
ax1.set_title("Joint scores P(x, y), m = 0")
ax1.set_ylabel("P(x, y)")
ax2.plot(ms, p_no[0], "o-", label="Sunny, Cool, High, Strong")
ax2.plot(ms, p_no[1], "s-", label="Overcast, Cool, High, Strong")
ax2.set_xscale("symlog", linthresh=0.5)
ax2.set_xticks([0, 1, 4, 16, 64], ["0", "1", "4", "16", "64"])
ax2.set_xlabel("m (virtual samples per table)")
ax2.set_ylabel("P(No | x)")
ax2.set_ylim(-0.03, 1.03)
ax2.set_title("The m-estimate")
ax2.legend(loc="upper right", fontsize="small")
fig.tight_layout()
plt.show()

# %%
# ``m = t_j`` (the number of categories of feature ``j``) with the uniform prior is
# Laplace smoothing, scikit-learn's ``alpha=1``; a different ``m`` per feature, and a
# separate ``prior_m`` for the class prior, are parameters of the same estimator.
