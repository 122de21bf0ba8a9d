"""The variational HMMs' E-step in blocks of sequences: the statistics of the
blocks add up to the statistics of all the sequences taken at once."""

import numpy as np
import pytest

import bayeskit
import bayeskit.hmm._variational as variational


def _gaussian(rng, n_seq):
    lengths = rng.integers(1, 40, size=n_seq)
    X = (
        rng.normal(size=(lengths.sum(), 2))
        + 3.0 * rng.integers(0, 2, lengths.sum())[:, None]
    )
    return (
        bayeskit.VariationalGaussianHMM(3, "full", n_iter=2, random_state=0),
        X,
        lengths,
    )


def _categorical(rng, n_seq):
    lengths = rng.integers(1, 40, size=n_seq)
    X = rng.integers(0, 4, size=(lengths.sum(), 1))
    model = bayeskit.VariationalCategoricalHMM(3, n_iter=2, random_state=0)
    return model, X, lengths


@pytest.mark.parametrize(
    "make", [_gaussian, _categorical], ids=["gaussian", "categorical"]
)
@pytest.mark.parametrize("seed", range(4))
def test_blocks_of_sequences_add_up_to_one_pass(make, seed, monkeypatch):
    rng = np.random.default_rng(seed)
    model, X, lengths = make(rng, 30)
    weights = rng.random(lengths.size) + 0.5
    model.fit(X, lengths)
    whole = model._vb_e_step(X, lengths, weights)  # one block: under the default
    monkeypatch.setattr(variational, "_BLOCK_STEPS", int(rng.integers(20, 120)))
    blocks = model._vb_e_step(X, lengths, weights)
    np.testing.assert_allclose(blocks.lower_bound, whole.lower_bound, rtol=1e-12)
    for a, b in zip(
        (blocks.chain.start, blocks.chain.transitions, blocks.chain.occupancy),
        (whole.chain.start, whole.chain.transitions, whole.chain.occupancy),
    ):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    # Fits continued from the same posterior agree, in blocks or not.
    start = {k: np.copy(v) for k, v in vars(model).items() if k.endswith("posterior_")}
    model.set_params(n_iter=3, init_params="")
    in_blocks = model.fit(X, lengths, sequence_weight=weights).lower_bound_
    for name, value in start.items():
        setattr(model, name, value.copy())
    monkeypatch.setattr(variational, "_BLOCK_STEPS", 1 << 20)
    at_once = model.fit(X, lengths, sequence_weight=weights).lower_bound_
    assert in_blocks == pytest.approx(at_once, rel=1e-12)
