"""Hidden Markov models on Dask: a bag of sequences, or a Dask array of rows
with ``lengths``.

The reference is the in-memory fit of the same sequences: Baum-Welch on Dask
sums the same expected statistics per iteration, so from the same start the
parameters agree to 1e-8 (the start itself is the in-memory start when the
sequences have at most ``INIT_SAMPLE_STEPS`` steps in all).
"""

import numpy as np
import public_estimators
import pytest

from bayeskit import CategoricalHMM, GaussianHMM

da = pytest.importorskip("dask.array")
db = pytest.importorskip("dask.bag")
pytestmark = pytest.mark.usefixtures("sync")

EM = dict(rtol=1e-8, atol=1e-10)


def _gaussian(rng, n=24, d=2):
    return [
        rng.normal(size=(int(rng.integers(4, 30)), d)) + 2.0 * (i % 3) for i in range(n)
    ]


def _quick(cls):
    """Two states, seeded."""
    est = public_estimators.make(cls)
    return est.set_params(n_components=2)


# Every public HMM, from the package's names: a new one is fitted on Dask from
# its line in bayeskit/__init__.py alone.
CASES = {cls.__name__: cls for cls in public_estimators.hidden_markov_models()}


def _data(case, rng):
    est = _quick(CASES[case])
    return public_estimators.sequences(est, seed=int(rng.integers(2**16)))


def _fitted_pair(case, seqs, X, lengths=None, **fit_kw):
    params = dict(n_iter=6, tol=0.0, random_state=0)
    ref = _quick(CASES[case]).set_params(**params).fit(seqs, **fit_kw)
    got = _quick(CASES[case]).set_params(**params).fit(X, lengths, **fit_kw)
    return ref, got


def _assert_same_fit(ref, got):
    expected = public_estimators.fitted_arrays(ref)
    assert {"startprob_", "transmat_"} <= set(expected)
    assert set(public_estimators.fitted_arrays(got)) == set(expected)
    for name, value in expected.items():
        if name in ("n_iter_", "n_features_in_"):
            continue
        np.testing.assert_allclose(getattr(got, name), value, **EM, err_msg=name)
    np.testing.assert_allclose(got.lower_bounds_, ref.lower_bounds_, **EM)
    assert got.n_iter_ == ref.n_iter_
    assert got.converged_ == ref.converged_


def test_the_hmms_are_found_from_the_public_names():
    assert {"GaussianHMM", "CategoricalHMM", "PoissonHMM", "GMMHMM"} <= set(CASES)
    assert {"MultinomialHMM", "HiddenMarkovModel"} <= set(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_baum_welch_on_a_bag_equals_in_memory(case, rng):
    seqs = _data(case, rng)
    ref, got = _fitted_pair(case, seqs, db.from_sequence(seqs, npartitions=5))
    _assert_same_fit(ref, got)
    # The statistics kept are those of the last iteration, as in memory (the
    # variational HMMs keep posteriors, not statistics).
    assert hasattr(got, "stats_") == hasattr(ref, "stats_")
    if hasattr(ref, "stats_"):
        np.testing.assert_allclose(
            got.stats_.structure.occupancy, ref.stats_.structure.occupancy, **EM
        )


@pytest.mark.parametrize("case", sorted(CASES))
def test_baum_welch_on_an_array_with_lengths_equals_in_memory(case, rng):
    seqs = _data(case, rng)
    rows = np.concatenate([np.reshape(s, (len(s), -1)) for s in seqs])
    lengths = [len(s) for s in seqs]
    # Chunks of 37 rows cut sequences: the blocks are moved to sequence ends.
    X = da.from_array(rows, chunks=(37, rows.shape[1]))
    ref, got = _fitted_pair(case, seqs, X, lengths)
    _assert_same_fit(ref, got)


def test_sequence_weight_on_a_bag_equals_in_memory(rng):
    seqs = _gaussian(rng)
    w = rng.integers(0, 3, size=len(seqs)).astype(float)
    w[:6] = 0.0  # a whole partition of zero weight
    bag = db.from_sequence(seqs, npartitions=4)
    ref, got = _fitted_pair("GaussianHMM", seqs, bag, sequence_weight=w)
    _assert_same_fit(ref, got)


def test_start_from_given_parameters_on_a_sample_equals_in_memory(monkeypatch, rng):
    import bayeskit._dask._hmm as dask_hmm

    # A sample smaller than the data: with every parameter given, the start
    # draws nothing, and Baum-Welch on all the sequences is the in-memory one.
    monkeypatch.setattr(dask_hmm, "INIT_SAMPLE_STEPS", 40)
    seqs = _gaussian(rng)
    first = GaussianHMM(3, "full", n_iter=2, random_state=1).fit(seqs[:5])
    given = dict(
        startprob_=first.startprob_,
        transmat_=first.transmat_,
        means_=first.means_,
        covars_=first.covars_,
    )

    def make():
        est = GaussianHMM(3, "full", n_iter=5, tol=0.0, init_params="")
        for name, value in given.items():
            setattr(est, name, value.copy())
        return est

    ref = make().fit(seqs)
    got = make().fit(db.from_sequence(seqs, npartitions=6))
    _assert_same_fit(ref, got)


def test_the_start_sample_is_whole_sequences_of_x(monkeypatch, rng):
    import bayeskit._dask._hmm as dask_hmm

    monkeypatch.setattr(dask_hmm, "INIT_SAMPLE_STEPS", 60)
    seqs = _gaussian(rng)
    seen = []
    original = GaussianHMM._initialize

    def spy(self, X, row_weight, random_state, components):
        seen.append(X.copy())
        return original(self, X, row_weight, random_state, components)

    monkeypatch.setattr(GaussianHMM, "_initialize", spy)
    GaussianHMM(2, n_iter=1, random_state=0).fit(db.from_sequence(seqs, 5))
    (X,) = seen
    assert 60 <= len(X) < 60 + 30
    # Rows of whole sequences of the data, in their order.
    starts = {s[0].tobytes(): s for s in seqs}
    i = 0
    while i < len(X):
        s = starts[X[i].tobytes()]
        np.testing.assert_array_equal(X[i : i + len(s)], s)
        i += len(s)


def test_categorical_alphabet_comes_from_all_sequences(monkeypatch, rng):
    import bayeskit._dask._hmm as dask_hmm

    monkeypatch.setattr(dask_hmm, "INIT_SAMPLE_STEPS", 5)
    seqs = [np.array(list(w)) for w in ["abab", "abba", "bbaa", "cdcd", "ddce"]]
    est = CategoricalHMM(2, n_iter=3, random_state=0).fit(db.from_sequence(seqs, 5))
    np.testing.assert_array_equal(est.symbols_, ["a", "b", "c", "d", "e"])
    ref = CategoricalHMM(2, n_iter=3, random_state=0).fit(seqs)
    np.testing.assert_array_equal(est.symbols_, ref.symbols_)


def test_prediction_on_a_bag_is_lazy_and_equals_in_memory(rng):
    seqs = _gaussian(rng)
    est = GaussianHMM(3, n_iter=4, random_state=0).fit(seqs)
    bag = db.from_sequence(seqs, npartitions=4)
    scores = est.score_sequences(bag)
    assert isinstance(scores, db.Bag)
    np.testing.assert_allclose(scores.compute(), est.score_sequences(seqs), **EM)
    assert est.score(bag) == pytest.approx(est.score(seqs), rel=1e-12)
    total, proba = est.score_samples(bag)
    assert isinstance(proba, db.Bag)
    ref_total, ref_proba = est.score_samples(seqs)
    assert total.compute() == pytest.approx(ref_total, rel=1e-12)
    for a, b in zip(proba.compute(), ref_proba):
        np.testing.assert_allclose(a, b, **EM)
    for a, b in zip(est.predict_proba(bag).compute(), est.predict_proba(seqs)):
        np.testing.assert_allclose(a, b, **EM)
    for algorithm in ("viterbi", "map"):
        log_prob, paths = est.decode(bag, algorithm=algorithm)
        ref_log_prob, ref_paths = est.decode(seqs, algorithm=algorithm)
        assert log_prob.compute() == pytest.approx(ref_log_prob, rel=1e-12)
        for a, b in zip(paths.compute(), ref_paths):
            np.testing.assert_array_equal(a, b)
    for a, b in zip(est.predict(bag).compute(), est.predict(seqs)):
        np.testing.assert_array_equal(a, b)


def test_prediction_on_an_array_with_lengths_is_a_dask_array(rng):
    seqs = _gaussian(rng)
    rows, lengths = np.concatenate(seqs), [len(s) for s in seqs]
    est = GaussianHMM(3, n_iter=4, random_state=0).fit(rows, lengths)
    X = da.from_array(rows, chunks=(50, 2))
    path = est.predict(X, lengths)
    assert isinstance(path, da.Array) and path.shape == (len(rows),)
    np.testing.assert_array_equal(path.compute(), est.predict(rows, lengths))
    proba = est.predict_proba(X, lengths)
    assert isinstance(proba, da.Array) and proba.shape == (len(rows), 3)
    np.testing.assert_allclose(proba.compute(), est.predict_proba(rows, lengths), **EM)
    np.testing.assert_allclose(
        est.score_sequences(X, lengths).compute(),
        est.score_sequences(rows, lengths),
        **EM,
    )
    assert est.score(X, lengths) == pytest.approx(est.score(rows, lengths), rel=1e-12)


def test_bad_dask_input_names_the_parameter(rng):
    seqs = _gaussian(rng, n=6)
    bag = db.from_sequence(seqs, npartitions=2)
    with pytest.raises(ValueError, match="lengths"):
        GaussianHMM(2).fit(bag, [3, 3])
    with pytest.raises(ValueError, match="lengths"):
        GaussianHMM(2).fit(da.from_array(np.zeros((10, 2)), chunks=5), [4, 4])
    with pytest.raises(ValueError, match="sequence_weight"):
        GaussianHMM(2).fit(bag, sequence_weight=[1.0, 2.0])
    with pytest.raises(ValueError, match="sequence"):
        GaussianHMM(2).fit(db.from_sequence([np.zeros((0, 2)), *seqs], 2))
    dd = pytest.importorskip("dask.dataframe")
    frame = dd.from_array(np.zeros((10, 2)), chunksize=5)
    with pytest.raises(TypeError, match="bag"):
        GaussianHMM(2).fit(frame)


def test_failed_refit_leaves_the_model_as_it_was(rng):
    seqs = _gaussian(rng)
    est = GaussianHMM(2, n_iter=3, random_state=0).fit(seqs)
    before = {k: np.copy(v) for k, v in vars(est).items() if k.endswith("_")}
    bad = db.from_sequence([*seqs[:3], np.zeros((4, 5))], npartitions=2)
    with pytest.raises(ValueError):
        est.fit(bad)
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(est, name), value)


def test_the_start_sample_skips_sequences_of_zero_weight(monkeypatch, rng):
    import bayeskit._dask._hmm as dask_hmm

    monkeypatch.setattr(dask_hmm, "INIT_SAMPLE_STEPS", 30)
    seqs = _gaussian(rng)
    w = np.zeros(len(seqs))
    w[-3:] = 1.0  # only the last three sequences weigh something
    seen = []
    original = GaussianHMM._initialize

    def spy(self, X, row_weight, random_state, components):
        seen.append(X.copy())
        return original(self, X, row_weight, random_state, components)

    monkeypatch.setattr(GaussianHMM, "_initialize", spy)
    bag = db.from_sequence(seqs, npartitions=4)
    GaussianHMM(2, n_iter=1, random_state=0).fit(bag, sequence_weight=w)
    (X,) = seen
    weighed = {s[0].tobytes(): s for s in seqs[-3:]}
    i = 0
    while i < len(X):
        s = weighed[X[i].tobytes()]  # a KeyError: a sequence of zero weight
        np.testing.assert_array_equal(X[i : i + len(s)], s)
        i += len(s)
    assert len(X) >= 30


def test_restarts_on_a_bag_equal_the_in_memory_restarts(rng):
    # All the sequences are the start's sample: every restart draws what the
    # in-memory restart draws, and the best one is the same.
    seqs = _gaussian(rng)
    params = dict(n_init=3, n_iter=5, tol=0.0, random_state=0)
    ref = GaussianHMM(3, **params).fit(seqs)
    got = GaussianHMM(3, **params).fit(db.from_sequence(seqs, npartitions=3))
    _assert_same_fit(ref, got)
