"""
Semi-supervised naive Bayes: learning from unlabelled documents
===============================================================

Labels are expensive, documents are cheap. Nigam, McCallum, Thrun and Mitchell
(2000) showed that a naive Bayes text classifier trained on a few labelled
documents improves when many unlabelled documents are added by EM: the class of an
unlabelled document is a latent variable, its posterior under the current model
weights the document's word counts in every class, and the model is re-estimated
from the labelled counts plus these expected counts, until the likelihood of all
the documents stops growing (Dempster, Laird and Rubin, 1977).

In bayeskit this is a parameter of every generative classifier: mark the
unlabelled rows of ``y`` (here with ``"?"``) and name the marker in
``unlabeled=``. This example draws the learning curve of
:class:`~bayeskit.MultinomialNB` on labelled documents only and with the
unlabelled ones, as the number of labels grows.
"""

# %%
# The data
# --------
# bayeskit's generated ``topics`` documents: three topics (sport, politics,
# science), short documents of 4 + Poisson(8) words, most of them drawn from a
# background vocabulary shared by every topic. 2000 documents are for training
# and 1000 for testing; of the training documents only ``n`` keep their label.

import matplotlib.pyplot as plt
import numpy as np
from sklearn.feature_extraction.text import CountVectorizer

from bayeskit import MultinomialNB
from bayeskit.cli.text import make_topics

docs = make_topics(3000, random_state=0)
X = CountVectorizer().fit_transform(docs["text"])
y = docs["topic"].to_numpy()
X_train, y_train, X_test, y_test = X[:2000], y[:2000], X[2000:], y[2000:]

# %%
# The learning curves
# -------------------
# For every number of labels ``n`` and 5 random draws of the labelled documents
# (one of each topic at least), fit on the ``n`` labelled documents alone, and
# on all 2000 with the others marked ``"?"``.

sizes = [6, 10, 20, 40, 80, 160, 320]
rng = np.random.default_rng(0)
labelled_only, with_unlabelled = [], []
for n in sizes:
    a, b = [], []
    for _ in range(5):
        rows = np.concatenate(
            [rng.choice(np.flatnonzero(y_train == t), 1) for t in np.unique(y)]
        )
        rest = np.setdiff1d(np.arange(2000), rows)
        rows = np.concatenate([rows, rng.choice(rest, n - len(rows), replace=False)])
        y_semi = np.full(2000, "?", dtype=object)
        y_semi[rows] = y_train[rows]
        a.append(
            MultinomialNB().fit(X_train[rows], y_train[rows]).score(X_test, y_test)
        )
        semi = MultinomialNB(unlabeled="?").fit(X_train, y_semi)
        b.append(semi.score(X_test, y_test))
    labelled_only.append(np.mean(a))
    with_unlabelled.append(np.mean(b))
    print(f"{n:4d} labels: {np.mean(a):.3f} labelled only, {np.mean(b):.3f} with EM")

# %%
fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(sizes, labelled_only, "o-", label="labelled documents only")
ax.plot(sizes, with_unlabelled, "s-", label="+ unlabelled documents (EM)")
ax.set_xscale("log")
ax.set_xlabel("number of labelled training documents (of 2000)")
ax.set_ylabel("test accuracy")
ax.set_title("MultinomialNB on the topics documents")
ax.legend()
fig.tight_layout()
plt.show()

# %%
# The unlabelled documents help most when labels are fewest: with a handful of
# labels, the class-conditional word distributions are guesses from a few dozen
# words, and EM lets every document's words sharpen them. As labels grow, the
# labelled estimate approaches the truth and the gap closes. The weight of the
# unlabelled documents, ``unlabeled_weight`` (Nigam et al.'s lambda), tempers EM
# when the model is wrong enough for the unlabelled data to mislead it; the
# fitted ``em_lower_bounds_`` record the objective of every iteration, which never
# decreases.
