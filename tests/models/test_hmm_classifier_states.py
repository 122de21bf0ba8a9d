"""HMMClassifier.fit(..., states=...): every class's HMM fitted with the known
states of its sequences.

The reference is each class's HMM fitted by hand on the class's sequences
with their states (the template's own ``fit(X, lengths, states=...)``).
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone

from bayeskit import GaussianHMM, HMMClassifier


def data(seed):
    rng = np.random.default_rng(seed)
    seqs, states, y = [], [], []
    for i in range(12):
        label = "ab"[i % 2]
        n = int(rng.integers(15, 30))
        z = (np.arange(n) // int(rng.integers(3, 6))) % 2
        shift = 0.0 if label == "a" else 1.5
        seqs.append(rng.normal(shift + 3.0 * z, 1.0)[:, None])
        known = np.where(rng.random(n) < 0.3, z, -1)
        states.append(known)
        y.append(label)
    return seqs, states, np.array(y)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("names", [False, True])
def test_every_class_hmm_is_fitted_with_its_sequences_states(seed, names):
    seqs, states, y = data(seed)
    if names:
        states = [np.where(s < 0, None, np.array(["low", "high"])[s]) for s in states]
    template = GaussianHMM(2, random_state=0, n_iter=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = HMMClassifier(template).fit(seqs, y, states=states)
        plain = HMMClassifier(template).fit(seqs, y)
        for c, model in zip(clf.classes_, clf.models_):
            rows = np.flatnonzero(y == c)
            by_hand = clone(template).fit(
                np.concatenate([seqs[i] for i in rows]),
                lengths=[len(seqs[i]) for i in rows],
                states=np.concatenate([states[i] for i in rows]),
            )
            assert list(model.monitor_.history) == list(by_hand.monitor_.history)
            np.testing.assert_array_equal(model.means_, by_hand.means_)
            np.testing.assert_array_equal(model.transmat_, by_hand.transmat_)
            if names:
                np.testing.assert_array_equal(model.state_names_, ["high", "low"])
    # The states change the fit (they are not ignored) ...
    assert any(
        not np.array_equal(a.means_, b.means_)
        for a, b in zip(clf.models_, plain.models_)
    )
    # ... and leave nothing behind on the classifier.
    assert not hasattr(clf, "_fit_states")


def test_bad_states_are_errors_naming_states():
    seqs, states, y = data(0)
    clf = HMMClassifier(GaussianHMM(2, random_state=0, n_iter=2))
    with pytest.raises(ValueError, match="states must be a list with one array"):
        clf.fit(seqs, y, states=states[:-1])
    with pytest.raises(ValueError, match="states"):
        clf.fit(seqs, y, states=[s[:-1] for s in states])
    y_partly = y.astype(object)
    y_partly[0] = "?"
    with pytest.raises(ValueError, match="states is not taken with unlabelled"):
        HMMClassifier(GaussianHMM(2, n_iter=2), unlabeled="?").fit(
            seqs, y_partly, states=states
        )
