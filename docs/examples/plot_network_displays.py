r"""
Looking at a Bayesian network
=============================

The asia network (Lauritzen and Spiegelhalter 1988), bundled with bayeskit,
drawn by :mod:`bayeskit.plot` (laid out by Graphviz's ``dot`` when pydot and
Graphviz are installed, by bayeskit's own layered layout otherwise): the DAG
with every variable's posterior as bars, one of its tables, and the difference between
the structure learnt from data and the true one. In a notebook, the network
itself displays as its graph and tables (its ``_repr_html_``).
"""

# %%
# Posteriors on the graph
# -----------------------
# The nodes are laid out in layers, every edge pointing down. A patient with
# dyspnoea and a positive X-ray: each node shows its exact posterior
# marginal; the observed nodes are outlined.

import matplotlib.pyplot as plt

from bayeskit import HillClimbSearch
from bayeskit.datasets import load_network
from bayeskit.plot import CPTDisplay, NetworkDisplay, StructureDiffDisplay

asia = load_network("asia")
disp = NetworkDisplay.from_estimator(asia, evidence={"dysp": "yes", "xray": "yes"})

# %%
# A query's answer
# ----------------
# ``query`` returns a pandas Series; in a notebook (and on this page) it shows
# as a table with a column per queried variable, as pgmpy prints a factor.

asia.query(["lung", "tub"], evidence={"dysp": "yes", "xray": "yes"})

# %%
# A table
# -------
# The CPT of ``either`` (tuberculosis or lung cancer): a logical OR.

disp = CPTDisplay.from_estimator(asia, "either")

# %%
# Learnt against true
# -------------------
# Hill climbing on BIC from 500 samples: the common edges are grey, and the
# display would show an added edge in green and a reversed one in orange (the
# direction of an edge is not always identifiable from data). With so few rows
# the weak ``asia -> tub`` (one patient in a hundred has visited Asia) is
# missed: too few rows show it to pay BIC's price for its parameters.

df = asia.sample(500, random_state=1)
learnt = HillClimbSearch(scoring_method="bic").fit(df)
StructureDiffDisplay.from_estimator(learnt, asia)
plt.show()
