"""Partly labelled HMMs: held-out state accuracy with 5% of the steps labelled.

For each seed ``0 .. seeds - 1`` a true model with three states (start
uniform, transitions 0.8 to stay and 0.1 to each other state) draws twenty
sequences of 100 steps: ten to train on, ten held out. 5% of the training
steps, at random, keep their true state. Two fits of the same model from the
same ``random_state`` (``n_iter=100``):

- unlabelled Baum-Welch, scored after its best relabelling of the states
  (the permutation that maximises its held-out accuracy: information it
  would not have);
- ``fit(X, lengths, states=...)`` with the 5% known, which names its states
  by itself.

Both predict the held-out states by Viterbi. The models: ``GaussianHMM``
(diagonal, two features, unit variances, means drawn from N(0, 1.2^2)) and
``CategoricalHMM`` (six symbols, emission rows drawn from Dirichlet(0.7)).
Run from the repository root::

    python benchmarks/labelled_hmm_recovery.py --seeds 20

It prints the rST table of the user guide (docs/hmm.rst, "Partly labelled
sequences").
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from bayeskit import CategoricalHMM, GaussianHMM

K = 3


def best_permutation_accuracy(z, predicted):
    return max(
        np.mean(np.asarray(perm)[predicted] == z)
        for perm in itertools.permutations(range(K))
    )


def trial(seed, kind, fraction=0.05):
    rng = np.random.RandomState(seed)
    if kind == "GaussianHMM":
        true = GaussianHMM(K, covariance_type="diag")
        true.means_ = rng.randn(K, 2) * 1.2
        true.covars_ = np.ones((K, 2))

        def make():
            return GaussianHMM(K, covariance_type="diag", random_state=seed, n_iter=100)
    else:
        true = CategoricalHMM(K, n_features=6)
        true.emissionprob_ = rng.dirichlet(np.ones(6) * 0.7, size=K)

        def make():
            return CategoricalHMM(K, random_state=seed, n_iter=100, n_features=6)

    true.startprob_ = np.full(K, 1 / K)
    true.transmat_ = np.full((K, K), 0.1) + np.eye(K) * 0.7
    Xs, Zs = zip(*(true.sample(100, random_state=rng) for _ in range(20)))
    X, Z = np.concatenate(Xs[:10]), np.concatenate(Zs[:10])
    test_X, test_Z = np.concatenate(Xs[10:]), np.concatenate(Zs[10:])
    lengths = [100] * 10
    states = np.full(len(Z), -1)
    known = rng.rand(len(Z)) < fraction
    states[known] = Z[known]
    labelled = make().fit(X, lengths, states=states)
    plain = make().fit(X, lengths)
    ours = np.mean(labelled.predict(test_X, lengths) == test_Z)
    theirs = best_permutation_accuracy(test_Z, plain.predict(test_X, lengths))
    return ours, theirs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    print("   * - model\n     - unlabelled EM, best permutation")
    print("     - 5% of steps labelled\n     - seeds where labelled is better")
    for kind in ("GaussianHMM", "CategoricalHMM"):
        results = np.array([trial(seed, kind) for seed in range(args.seeds)])
        ours, theirs = results.mean(axis=0)
        wins = int(np.sum(results[:, 0] > results[:, 1]))
        print(f"   * - ``{kind}``\n     - {theirs:.3f}\n     - {ours:.3f}")
        print(f"     - {wins} of {args.seeds}")


if __name__ == "__main__":
    main()
