r"""
A mixture fitted on data that need not fit in memory (Dask)
===========================================================

Every bayeskit model learns from statistics that add, so EM on data split
into chunks is the in-memory EM: each iteration computes the expected
statistics of every chunk under the current parameters (the E-step), adds
them, and sets the next parameters from the sum (the M-step; Dempster, Laird
and Rubin 1977). With the ``dask`` extra, ``fit`` takes a Dask array whose
chunks are produced where and when they are needed (read from files, or
generated as here), so the rows never need to be in memory at once, and
prediction on a Dask array returns a lazy Dask array.

The data here are small so that the example runs in seconds on Dask's
default scheduler (threads in this process); on a cluster nothing changes
but the ``dask.distributed.Client`` (see :doc:`/dask`).
"""

# %%
# Rows generated chunk by chunk
# -----------------------------
# Each chunk of 20,000 rows is drawn from three Gaussian blobs by a function
# of the chunk's position: nothing is generated until a computation asks for
# the chunk, and a chunk asked for twice is generated twice, identically.

import dask
import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
from sklearn.pipeline import make_pipeline

from bayeskit import GaussianMixture, GaussianNB, LinearDiscriminantAnalysis

dask.config.set(scheduler="threads")

CENTRES = np.array([[0.0, 0.0], [5.0, 4.0], [0.5, 6.0]])
CHUNK, N_CHUNKS = 20_000, 8


def blobs(block_id=None):
    r = np.random.default_rng(block_id[0])
    component = r.integers(0, 3, CHUNK)
    return CENTRES[component] + r.normal(size=(CHUNK, 2)) * [1.0, 0.6]


X = da.map_blocks(blobs, chunks=((CHUNK,) * N_CHUNKS, (2,)), dtype=float)
print(X)

# %%
# EM on the chunks
# ----------------
# The start (k-means, as in memory) runs on a random sample of 10,000 rows;
# then every iteration is one pass over the chunks, the statistics of each
# summed by a small tree of tasks.

gm = GaussianMixture(n_components=3, random_state=0).fit(X)
print("iterations:", gm.n_iter_, " converged:", gm.converged_)
print("weights:", gm.weights_.round(3))
print("means:\n", gm.means_.round(2))

# %%
# The same EM in memory
# ---------------------
# These rows do fit in memory, so the fit can be checked: from the same
# initial parameters (here a perturbed copy of the fit), EM on all the rows at
# once takes the same iterations to the same parameters.

start = dict(
    weights_init=np.full(3, 1 / 3),
    means_init=gm.means_ + 1.0,
    precisions_init=gm.precisions_,
    tol=1e-6,
)
on_chunks = GaussianMixture(3, **start).fit(X)
in_memory = GaussianMixture(3, **start).fit(X.compute())
print("iterations:", on_chunks.n_iter_, in_memory.n_iter_)
print(
    "largest difference of the means:",
    np.abs(on_chunks.means_ - in_memory.means_).max(),
)

# %%
# A pipeline whose prediction stays lazy
# --------------------------------------
# The mixture's components (a lazy Dask array) label the rows; a pipeline of
# Fisher's discriminant direction and a Gaussian naive Bayes learns them from
# the chunks, and its ``predict_proba`` is again a Dask array: a plan, not
# numbers, until it is computed.

labels = gm.predict(X)  # lazy
pipe = make_pipeline(LinearDiscriminantAnalysis(n_components=2), GaussianNB())
pipe.fit(X, labels)
proba = pipe.predict_proba(X)
print(type(proba).__name__, proba.shape, "chunks:", proba.numblocks)

# %%
# Only the first chunk is computed for the figure.

first = X.blocks[0].compute()
first_proba = proba.blocks[0].compute()
fig, ax = plt.subplots(figsize=(5, 4.5))
ax.scatter(first[:, 0], first[:, 1], c=first_proba @ np.arange(3), s=2, cmap="viridis")
ax.scatter(*gm.means_.T, marker="x", s=120, c="red", label="mixture means")
ax.set_xlabel("$x_1$")
ax.set_ylabel("$x_2$")
ax.set_title("First chunk, coloured by the pipeline's expected component")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()
