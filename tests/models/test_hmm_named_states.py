"""Named states: ``fit(X, lengths, states=names)`` and what ``predict`` returns.

The reference is the same fit with the states given as indices (the names'
positions in their sorted order): naming the states relabels them and
changes nothing else, and ``predict`` / ``decode`` return the names of the
indices the index fit decodes. Fitted without names, a model decodes state
indices, as hmmlearn's do.
"""

import warnings

import numpy as np
import pytest

from bayeskit import (
    GMMHMM,
    ARGaussianHMM,
    CategoricalHMM,
    GaussianHMM,
    HiddenMarkovModel,
    HiddenSemiMarkovModel,
    MultinomialHMM,
    PoissonHMM,
)

LENGTHS = [30, 20, 25]

MAKERS = {
    "categorical": lambda: CategoricalHMM(3, n_features=4, random_state=0),
    "gaussian": lambda: GaussianHMM(3, "diag", random_state=0),
    "poisson": lambda: PoissonHMM(3, random_state=0),
    "multinomial": lambda: MultinomialHMM(3, n_trials=5, random_state=0),
    "gmm": lambda: GMMHMM(3, n_mix=2, random_state=0),
    "model": lambda: HiddenMarkovModel(3, emission="gaussian", random_state=0),
    "semi_markov": lambda: HiddenSemiMarkovModel(3, max_duration=12, random_state=0),
    "autoregressive": lambda: ARGaussianHMM(3, order=1, random_state=0),
}


def sample(kind, rng):
    """Segments of random lengths in states 0, 1, 2 (no state twice in a
    row), and observations that tell the states apart."""
    n = sum(LENGTHS)
    z, state = [], 0
    while len(z) < n:
        z += [state] * int(rng.integers(2, 8))
        state = (state + 1 + int(rng.integers(2))) % 3
    z = np.array(z[:n])
    if kind == "categorical":
        X = np.where(rng.random(n) < 0.7, z, rng.integers(0, 4, n))[:, None]
    elif kind == "poisson":
        X = rng.poisson(1 + 4 * z[:, None], size=(n, 2))
    elif kind == "multinomial":
        p = np.array([[0.7, 0.1, 0.1, 0.1], [0.1, 0.7, 0.1, 0.1], [0.1, 0.1, 0.1, 0.7]])
        X = np.array([rng.multinomial(5, p[s]) for s in z])
    else:
        X = rng.normal(3.0 * z[:, None], 1.0, size=(n, 2))
    return X, z


@pytest.mark.parametrize("kind", list(MAKERS))
@pytest.mark.parametrize("seed", range(2))
def test_named_states_are_the_index_fit_relabelled(kind, seed):
    rng = np.random.default_rng(seed)
    X, z = sample(kind, rng)
    names = np.array(["storm", "calm", "fog"])  # sorted: calm, fog, storm
    order = np.argsort(names)
    position = np.argsort(order)  # the index of each name in sorted order
    known = rng.random(len(z)) < 0.3
    as_names = np.where(known, names[z], None)
    as_indices = np.where(known, position[z], -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_name = MAKERS[kind]().fit(X, LENGTHS, states=as_names)
        by_index = MAKERS[kind]().fit(X, LENGTHS, states=as_indices)
    np.testing.assert_array_equal(by_name.state_names_, ["calm", "fog", "storm"])
    assert not hasattr(by_index, "state_names_")
    assert list(by_name.monitor_.history) == list(by_index.monitor_.history)
    np.testing.assert_array_equal(by_name.transmat_, by_index.transmat_)
    path = by_index.predict(X, LENGTHS)
    np.testing.assert_array_equal(
        by_name.predict(X, LENGTHS), by_name.state_names_[path]
    )
    log_prob, decoded = by_name.decode(X, LENGTHS, algorithm="map")
    assert log_prob == by_index.decode(X, LENGTHS, algorithm="map")[0]
    np.testing.assert_array_equal(
        decoded, by_name.state_names_[by_index.decode(X, LENGTHS, algorithm="map")[1]]
    )
    # The fitted names are read by score, summarize and partial_fit.
    assert by_name.score(X, LENGTHS, states=as_names) == by_index.score(
        X, LENGTHS, states=as_indices
    )
    # Without names: hmmlearn's state indices, and no names kept.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_name.fit(X, LENGTHS)
    assert not hasattr(by_name, "state_names_")
    assert by_name.predict(X, LENGTHS).dtype.kind in "iu"


def test_per_sequence_names_and_lists_of_sequences():
    rng = np.random.default_rng(3)
    X, z = sample("gaussian", rng)
    names = np.array(["a", "b", "c"])[z].astype(object)
    names[rng.random(len(z)) < 0.5] = np.nan
    seqs = np.split(X, np.cumsum(LENGTHS)[:-1])
    parts = np.split(names, np.cumsum(LENGTHS)[:-1])
    rows = GaussianHMM(3, random_state=0, n_iter=5).fit(X, LENGTHS, states=names)
    lists = GaussianHMM(3, random_state=0, n_iter=5).fit(seqs, states=parts)
    predicted = lists.predict(seqs)
    assert isinstance(predicted, list) and len(predicted) == 3
    np.testing.assert_array_equal(np.concatenate(predicted), rows.predict(X, LENGTHS))


@pytest.mark.parametrize(
    "states, match",
    [
        (
            lambda z: np.array(["a" if s == 0 else int(s) for s in z], dtype=object),
            "all names or all",
        ),
        (lambda z: np.array(["a", "b", "b"])[z], "name 2 states"),
    ],
)
def test_bad_names_are_errors_naming_states(states, match):
    rng = np.random.default_rng(0)
    X, z = sample("gaussian", rng)
    labels = states(z)
    with pytest.raises(ValueError, match=match):
        GaussianHMM(3, random_state=0).fit(X, LENGTHS, states=labels)


def test_an_unknown_name_after_fit_is_an_error_naming_states():
    rng = np.random.default_rng(1)
    X, z = sample("gaussian", rng)
    hmm = GaussianHMM(3, random_state=0, n_iter=3).fit(
        X, LENGTHS, states=np.array(["a", "b", "c"])[z]
    )
    with pytest.raises(ValueError, match="state_names_"):
        hmm.score(X, LENGTHS, states=np.array(["a", "b", "d"])[z])
    with pytest.raises(ValueError, match="state_names_"):
        hmm.summarize(X, LENGTHS, states=z)  # indices: the model has names


@pytest.mark.parametrize("kind", list(MAKERS))
@pytest.mark.parametrize("seed", range(3))
def test_sample_of_a_named_fit_gives_the_names(kind, seed):
    """``sample`` draws what the index fit draws (the same parameters, the
    same generator) and gives its states as the names ``predict`` gives;
    ``currstate`` takes a name as the index of that name."""
    rng = np.random.default_rng(seed)
    X, z = sample(kind, rng)
    names = np.array(["storm", "calm", "fog"])
    position = np.argsort(np.argsort(names))
    known = rng.random(len(z)) < 0.3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_name = MAKERS[kind]().fit(X, LENGTHS, states=np.where(known, names[z], None))
        by_index = MAKERS[kind]().fit(
            X, LENGTHS, states=np.where(known, position[z], -1)
        )
    n = int(rng.integers(1, 40))
    X_name, s_name = by_name.sample(n, random_state=seed)
    X_index, s_index = by_index.sample(n, random_state=seed)
    np.testing.assert_array_equal(X_name, X_index)
    assert s_index.dtype.kind in "iu"
    np.testing.assert_array_equal(s_name, by_name.state_names_[s_index])
    assert set(s_name.tolist()) <= {"calm", "fog", "storm"}
    for j, name in enumerate(by_name.state_names_):
        X_name, s_name = by_name.sample(n, random_state=seed, currstate=name)
        X_index, s_index = by_index.sample(n, random_state=seed, currstate=j)
        assert s_name[0] == name
        np.testing.assert_array_equal(X_name, X_index)
        np.testing.assert_array_equal(s_name, by_name.state_names_[s_index])
    assert by_name.sample(0, random_state=seed)[1].shape == (0,)
    with pytest.raises(ValueError, match="currstate"):
        by_name.sample(3, currstate="drizzle")
    with pytest.raises(ValueError, match="currstate"):
        by_index.sample(3, currstate="calm")  # no names: indices only
