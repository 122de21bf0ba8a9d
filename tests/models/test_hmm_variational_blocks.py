"""The variational HMMs' E-step in blocks of sequences: the statistics of the
blocks add up to the statistics of all the sequences taken at once."""

import copy

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


def _any_family(rng, n_seq):
    """HiddenMarkovModel(inference='variational'), with gaps (steps of NaN)."""
    lengths = rng.integers(1, 40, size=n_seq)
    X = (
        rng.normal(size=(lengths.sum(), 2))
        + 3.0 * rng.integers(0, 2, lengths.sum())[:, None]
    )
    X[rng.random(len(X)) < 0.1] = np.nan
    model = bayeskit.HiddenMarkovModel(
        3, emission="gaussian", inference="variational", n_iter=2, random_state=0
    )
    return model, X, lengths


def _categorical(rng, n_seq):
    lengths = rng.integers(1, 40, size=n_seq)
    X = rng.integers(0, 4, size=(lengths.sum(), 1))
    model = bayeskit.VariationalCategoricalHMM(3, n_iter=2, random_state=0)
    return model, X, lengths


@pytest.mark.parametrize(
    "make",
    [_gaussian, _categorical, _any_family],
    ids=["gaussian", "categorical", "any-family"],
)
@pytest.mark.parametrize("seed", range(4))
def test_blocks_of_sequences_add_up_to_one_pass(make, seed, monkeypatch):
    rng = np.random.default_rng(seed)
    model, X, lengths = make(rng, 30)
    weights = rng.random(lengths.size) + 0.5
    model.fit(X, lengths)
    monkeypatch.setattr(variational, "_BLOCK_STEPS", 1 << 20)
    monkeypatch.setattr(variational, "_BLOCK_BYTES", 1 << 40)
    whole = model._vb_e_step(X, lengths, weights)  # one block
    monkeypatch.setattr(variational, "_BLOCK_STEPS", int(rng.integers(20, 120)))
    blocks = model._vb_e_step(X, lengths, weights)
    np.testing.assert_allclose(blocks.lower_bound, whole.lower_bound, rtol=1e-12)
    for a, b in zip(
        (blocks.chain.start, blocks.chain.transitions, blocks.chain.occupancy),
        (whole.chain.start, whole.chain.transitions, whole.chain.occupancy),
    ):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    # Fits continued from the same posterior agree, in blocks or not.
    start = {
        k: copy.deepcopy(v) for k, v in vars(model).items() if k.endswith("posterior_")
    }
    model.set_params(n_iter=3, init_params="")
    in_blocks = model.fit(X, lengths, sequence_weight=weights).lower_bound_
    for name, value in start.items():
        setattr(model, name, copy.deepcopy(value))
    monkeypatch.setattr(variational, "_BLOCK_STEPS", 1 << 20)
    at_once = model.fit(X, lengths, sequence_weight=weights).lower_bound_
    assert in_blocks == pytest.approx(at_once, rel=1e-12)


@pytest.mark.parametrize("n_states, n_features", [(2, 1), (4, 3), (10, 10), (50, 20)])
def test_blocks_hold_a_bounded_number_of_steps(n_states, n_features):
    """Every block's sequences start within ``block_steps`` steps of its
    first step (so a block holds fewer than that plus its last sequence), the
    blocks cover every sequence once and in order, and the steps of a block
    shrink as states and features grow."""
    rng = np.random.default_rng(n_states)
    lengths = rng.integers(1, 700, size=400)
    lengths[7] = 5_000  # longer than a block
    steps = variational.block_steps(n_states, n_features)
    assert variational._MIN_BLOCK_STEPS <= steps <= variational._BLOCK_STEPS
    seen = []

    def e_step(X, block_lengths, weights):
        assert len(X) == block_lengths.sum()
        assert len(X) - block_lengths[-1] < steps
        assert np.array_equal(weights, 1.0 + X[np.cumsum(block_lengths) - 1, 0])
        seen.append(block_lengths)
        return 1

    ends = np.cumsum(lengths)
    X = np.repeat(np.arange(lengths.size, dtype=float), lengths)[:, None]
    assert X[ends - 1, 0].tolist() == list(range(lengths.size))
    total = variational.sum_over_blocks(
        e_step, X, lengths, 1.0 + np.arange(lengths.size), steps
    )
    assert total == len(seen) > 1
    assert np.array_equal(np.concatenate(seen), lengths)
    bigger = variational.block_steps(2 * n_states, 2 * n_features)
    assert bigger <= steps


def test_any_family_e_step_holds_about_what_the_named_model_holds():
    """HiddenMarkovModel(inference='variational') with Gaussian emissions sizes
    its blocks for the family's own arrays (every state's deviations): a fit
    continued from its posterior peaks, in traced memory, at most 1.5 times
    VariationalGaussianHMM's on the same sequences (it was twice as much)."""
    import tracemalloc

    from bayeskit import _jit

    rng = np.random.default_rng(1)
    k, d, n_seq, t = 4, 3, 300, 100
    centres = rng.normal(scale=3.0, size=(k, d))
    X = centres[np.repeat(rng.integers(0, k, n_seq * t // 10), 10)]
    X += rng.normal(size=X.shape)
    lengths = [t] * n_seq
    named = bayeskit.VariationalGaussianHMM(k, "full", n_iter=2, random_state=0)
    generic = bayeskit.HiddenMarkovModel(
        k, emission="gaussian", inference="variational", n_iter=2, random_state=0
    )
    peaks = []
    for model in (named, generic):
        previous, _jit._IN_CHILD = _jit._IN_CHILD, True  # the compiled kernels
        try:
            model.fit(X, lengths)
        finally:
            _jit._IN_CHILD = previous
        model.set_params(init_params="")
        if model is generic:
            model.set_params(emission_prior=model.emission_prior_)
        tracemalloc.start()
        try:
            model.fit(X, lengths)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    assert peaks[1] <= 1.5 * peaks[0]


@pytest.mark.parametrize("n_states, n_features", [(1, 1), (4, 3), (10, 10)])
def test_family_bytes_shrink_the_blocks(n_states, n_features):
    """Bytes a family adds per step make blocks of fewer steps (never fewer
    than the floor)."""
    plain = variational.block_steps(n_states, n_features)
    family = variational.block_steps(
        n_states, n_features, family_bytes=32 * n_states * n_features
    )
    assert variational._MIN_BLOCK_STEPS <= family <= plain
    if plain > variational._MIN_BLOCK_STEPS and plain < variational._BLOCK_STEPS:
        assert family < plain
