r"""
The flu network: exact inference in a Bayesian network
======================================================

A small diagnostic network has six binary variables: flu
(:math:`x_1`), fever (:math:`x_2`), sinus infection (:math:`x_3`), temperature
(:math:`x_4`), sinus swelling (:math:`x_5`) and headache (:math:`x_6`), with

.. math::

   p(x) = p(x_1)\, p(x_2 \mid x_1)\, p(x_3 \mid x_1)\, p(x_4 \mid x_2)\,
          p(x_5 \mid x_3)\, p(x_6 \mid x_2, x_5).

A patient has a headache and a high temperature: does he have the flu?
``bayeskit.datasets.flu_network()`` returns this network as a
:class:`~bayeskit.BayesianNetwork`, with made-up but plausible conditional
probability tables (made up for illustration).
"""

# %%
# The network
# -----------
# Thirteen free parameters (one per row of each binary table) instead of the
# :math:`2^6 - 1 = 63` of the full joint table.

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from bayeskit import BayesianNetwork
from bayeskit.datasets import flu_network

bn = flu_network()
print("free parameters:", bn.n_parameters())
print(bn.get_cpd("headache"))

positions = {
    "flu": (1.5, 3),
    "fever": (0.5, 2),
    "sinus_infection": (2.5, 2),
    "temperature": (0, 0.5),
    "sinus_swelling": (2.5, 1),
    "headache": (1.3, 0),
}
fig, ax = plt.subplots(figsize=(6, 4))
box_style = dict(boxstyle="round", fc="lightyellow", ec="0.3")
text_style = dict(ha="center", va="center", bbox=box_style)
boxes = {
    node: ax.text(x, y, node.replace("_", "\n"), **text_style)
    for node, (x, y) in positions.items()
}
for parent, child in bn.dag_.edges:
    ax.annotate(
        "",
        xy=(0.5, 0.5),
        xycoords=boxes[child],
        xytext=(0.5, 0.5),
        textcoords=boxes[parent],
        arrowprops=dict(
            arrowstyle="-|>",
            lw=1.5,
            patchA=boxes[parent].get_bbox_patch(),
            patchB=boxes[child].get_bbox_patch(),
            shrinkA=2,
            shrinkB=2,
        ),
    )
ax.set_xlim(-0.6, 3.2)
ax.set_ylim(-0.5, 3.5)
ax.set_axis_off()
ax.set_title("The flu network")
fig.tight_layout()
plt.show()

# %%
# Inference
# ---------
# ``query`` returns the exact posterior of a variable given any evidence, by
# belief propagation on the network's junction tree. Each row below adds
# evidence.

evidence_sets = {
    "no evidence": {},
    "headache": {"headache": "yes"},
    "high temperature": {"temperature": "high"},
    "headache, high temperature": {"headache": "yes", "temperature": "high"},
    "headache, sinus swelling": {"headache": "yes", "sinus_swelling": "yes"},
}
posteriors = pd.DataFrame(
    {
        name: {
            "P(flu)": bn.query("flu", evidence=ev)["yes"],
            "P(fever)": bn.query("fever", evidence=ev)["yes"],
        }
        for name, ev in evidence_sets.items()
    }
).T
print(posteriors.round(4))

# %%
# The answer to the question is
# :math:`P(\text{flu} \mid \text{headache}, \text{high temperature}) \approx 0.56`,
# up from a prior of 0.1. The last row shows *explaining away*: a headache makes
# fever more likely, but a headache together with a swollen sinus, its other
# cause, makes fever less likely than the headache alone did.
#
# ``map_query`` gives the most probable joint state of every unobserved variable
# (max-product on the same tree), which is not the collection of the most probable
# states one by one.

print(bn.map_query(evidence={"headache": "yes", "temperature": "high"}))

fig, ax = plt.subplots(figsize=(8, 3.6))
y = np.arange(len(posteriors))
ax.barh(y + 0.2, posteriors["P(flu)"], height=0.4, label="flu")
ax.barh(y - 0.2, posteriors["P(fever)"], height=0.4, label="fever")
ax.set_yticks(y, posteriors.index)
ax.invert_yaxis()
ax.set_xlim(0, 1)
ax.set_xlabel("posterior probability of 'yes'")
ax.legend(loc="lower right")
ax.set_title("What the evidence says about flu and fever")
fig.tight_layout()
plt.show()

# %%
# The junction tree
# -----------------
# Exact inference in a DAG runs on a tree of cliques. Moralising the graph marries
# fever and sinus swelling, the parents of headache, which closes the loop fever,
# flu, sinus infection, sinus swelling; triangulating adds one chord to it (fever,
# sinus infection); the maximal cliques of the result, joined by a maximum spanning
# tree on their overlaps, form a tree in which the cliques holding any one variable
# are connected. Messages between cliques are then belief propagation, as on any
# tree.

tree = bn.junction_tree()
for i, clique in enumerate(tree.cliques):
    print(i, sorted(clique))
print("edges:", tree.edges)

# %%
# d-separation
# ------------
# Independence can be read off the graph without looking at the numbers. Four
# questions, answered by the ancestral moral graph test (Lauritzen, Dawid, Larsen
# and Leimer, 1990):

questions = [
    ("temperature", "headache", ["fever"]),
    ("temperature", "sinus_swelling", ["flu"]),
    ("temperature", "sinus_swelling", ["flu", "headache"]),
    ("flu", "headache", ["fever", "sinus_swelling"]),
]
for xs, ys, given in questions:
    answer = bn.is_dseparated(xs, ys, given=given)
    print(f"{xs} _||_ {ys} | {', '.join(given)}: {answer}")

# %%
# The third answer is explaining away again: headache is a common effect of fever
# and sinus swelling, and observing it connects their two sides of the network.
#
# Learning the tables back
# ------------------------
# Given the structure, the conditional probability tables are m-estimates from
# counts. Sampling 20,000 patients from the network and fitting a new one recovers
# the tables.

patients = bn.sample(20_000, random_state=0)
learnt = BayesianNetwork(edges=bn.dag_.edges).fit(patients)
print(learnt.get_cpd("headache").round(3))
answer = learnt.query("flu", evidence={"headache": "yes", "temperature": "high"})
print(f"learnt network: P(flu | headache, high temperature) = {answer['yes']:.3f}")
