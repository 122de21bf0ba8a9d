"""MarkovChain and MarkovChainClassifier against counts made by hand, a
first-order hidden Markov model whose emissions are the identity, and the
per-class posterior written out."""

import pickle
from collections import Counter

import numpy as np
import pytest
from scipy.special import logsumexp

from bayeskit import CategoricalHMM, MarkovChain, MarkovChainClassifier


def random_sequences(rng, n_symbols, n_sequences, max_len=12):
    return [
        rng.randint(0, n_symbols, rng.randint(1, max_len + 1))
        for _ in range(n_sequences)
    ]


def hand_counts(seqs, order):
    starts = [Counter() for _ in range(order)]
    windows = Counter()
    for s in seqs:
        s = [int(v) for v in s]
        for j in range(min(order, len(s))):
            starts[j][tuple(s[: j + 1])] += 1
        for t in range(order, len(s)):
            windows[tuple(s[t - order : t + 1])] += 1
    return starts, windows


def m_estimate(counter, context, n, m, p):
    row = np.array([counter[(*context, s)] for s in range(n)], dtype=float)
    if row.sum() + m == 0:
        return p
    return (row + m * p) / (row.sum() + m)


@pytest.mark.parametrize("order", [0, 1, 2, 3])
@pytest.mark.parametrize("smoothing", ["alpha", "m", "ml"])
@pytest.mark.parametrize("seed", range(3))
def test_counts_and_smoothed_probabilities_by_hand(order, smoothing, seed):
    rng = np.random.RandomState(seed)
    n = 3
    seqs = random_sequences(rng, n, 15)
    if smoothing == "alpha":
        chain = MarkovChain(order, alpha=0.7)
        m, p = 0.7 * n, np.full(n, 1 / n)
    elif smoothing == "m":
        p = rng.dirichlet(np.ones(n))
        chain = MarkovChain(order, m=2.5, p=p)
        m = 2.5
    else:
        chain = MarkovChain(order, alpha=0)
        m, p = 0.0, np.full(n, 1 / n)
    chain.fit(seqs)
    starts, windows = hand_counts(seqs, order)
    for j in range(order):
        for cell in np.ndindex(*(n,) * (j + 1)):
            assert chain.stats_.starts[j][cell] == starts[j][cell]
    for cell in np.ndindex(*(n,) * (order + 1)):
        assert chain.stats_.windows[cell] == windows[cell]
        expected = m_estimate(windows, cell[:-1], n, m, p)[cell[-1]]
        np.testing.assert_allclose(np.exp(chain.log_prob_[cell]), expected, rtol=1e-12)
    for j in range(order):
        for cell in np.ndindex(*(n,) * (j + 1)):
            expected = m_estimate(starts[j], cell[:-1], n, m, p)[cell[-1]]
            np.testing.assert_allclose(
                np.exp(chain.start_log_prob_[j][cell]), expected, rtol=1e-12
            )
    # score: the first symbols under the starts' chains, the rest given k.
    test = random_sequences(rng, n, 6)
    expected = []
    # (the ML tables give an unseen window log 0 = -inf)
    for s in test:
        total = 0.0
        for t in range(len(s)):
            ctx = tuple(int(v) for v in s[max(0, t - order) : t])
            table = starts[t] if t < order else windows
            with np.errstate(divide="ignore"):
                total += np.log(m_estimate(table, ctx, n, m, p)[s[t]])
        expected.append(total)
    with np.errstate(divide="ignore"):
        got = chain.score_sequences(test)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    # predict_proba: the next symbol after each sequence.
    proba = chain.predict_proba(test)
    for s, row in zip(test, proba):
        t = len(s)
        ctx = tuple(int(v) for v in s[max(0, t - order) : t])
        table = starts[t] if t < order else windows
        np.testing.assert_allclose(row, m_estimate(table, ctx, n, m, p), rtol=1e-12)
    np.testing.assert_array_equal(chain.predict(test), np.argmax(proba, axis=1))


@pytest.mark.parametrize("seed", range(5))
def test_first_order_chain_is_an_hmm_with_identity_emissions(seed):
    rng = np.random.RandomState(seed)
    n = 4
    seqs = random_sequences(rng, n, 20)
    chain = MarkovChain(1, alpha=0.5, symbols=np.arange(n)).fit(seqs)
    hmm = CategoricalHMM(n, n_features=n, init_params="", params="", n_iter=0)
    hmm.startprob_ = np.exp(chain.start_log_prob_[0])
    hmm.transmat_ = np.exp(chain.log_prob_)
    hmm.emissionprob_ = np.eye(n)
    test = random_sequences(rng, n, 8)
    X, lengths = np.concatenate(test)[:, None], [len(s) for s in test]
    np.testing.assert_allclose(
        chain.score_sequences(test), hmm.score_sequences(X, lengths), rtol=1e-10
    )
    # And the fit: the HMM with every state known (its state is its symbol)
    # has the chain's maximum-likelihood tables.
    ml = MarkovChain(1, alpha=0, symbols=np.arange(n)).fit(seqs)
    Xs = np.concatenate(seqs)[:, None]
    lengths = [len(s) for s in seqs]
    labelled = CategoricalHMM(n, n_features=n, random_state=0)
    labelled.fit(Xs, lengths, states=Xs[:, 0])
    np.testing.assert_allclose(labelled.emissionprob_, np.eye(n), atol=1e-12)
    np.testing.assert_allclose(
        labelled.startprob_, np.exp(ml.start_log_prob_[0]), atol=1e-12
    )
    seen = ml.stats_.windows.sum(axis=1) > 0
    np.testing.assert_allclose(
        labelled.transmat_[seen], np.exp(ml.log_prob_)[seen], atol=1e-12
    )


def test_input_forms_agree():
    seqs = [list("abcab"), list("bca"), list("aab")]
    ref = MarkovChain(2).fit(seqs)
    flat = np.concatenate([np.array(s) for s in seqs])[:, None]
    forms = [
        MarkovChain(2).fit(flat, lengths=[5, 3, 3]),
        MarkovChain(2).fit(flat.ravel(), [5, 3, 3]),
        MarkovChain(2).fit([np.array(s) for s in seqs]),
    ]
    for got in forms:
        np.testing.assert_array_equal(got.stats_.windows, ref.stats_.windows)
    one = MarkovChain(1).fit("abcab")
    np.testing.assert_array_equal(
        one.stats_.windows, MarkovChain(1).fit(list("abcab")).stats_.windows
    )
    rows = np.array([[0, 1, 2], [2, 1, 0]])  # a table: one sequence per row
    by_rows = MarkovChain(1).fit(rows)
    assert by_rows.stats_.windows.sum() == 4
    column = MarkovChain(1).fit(rows.reshape(-1, 1))  # one column: one sequence
    assert column.stats_.windows.sum() == 5


@pytest.mark.parametrize("seed", range(4))
def test_partial_fit_summarize_and_weights_equal_one_fit(seed):
    rng = np.random.RandomState(seed)
    seqs = random_sequences(rng, 3, 12)
    full = MarkovChain(2, alpha=0.3, symbols=[0, 1, 2]).fit(seqs)
    chunked = MarkovChain(2, alpha=0.3, symbols=[0, 1, 2])
    for i in range(0, 12, 5):
        chunked.partial_fit(seqs[i : i + 5])
    np.testing.assert_allclose(chunked.log_prob_, full.log_prob_, rtol=1e-12)
    total = sum(full.summarize(seqs[i : i + 4]) for i in range(0, 12, 4))
    fresh = pickle.loads(pickle.dumps(MarkovChain(2, alpha=0.3))).from_stats(total)
    np.testing.assert_allclose(fresh.log_prob_, full.log_prob_, rtol=1e-12)
    np.testing.assert_array_equal(fresh.symbols_, full.symbols_)
    weights = rng.randint(0, 3, 12)
    weighted = MarkovChain(2, alpha=0.3, symbols=[0, 1, 2]).fit(
        seqs, sequence_weight=weights
    )
    repeated = MarkovChain(2, alpha=0.3, symbols=[0, 1, 2]).fit(
        [s for s, w in zip(seqs, weights) for _ in range(w)]
    )
    np.testing.assert_allclose(weighted.log_prob_, repeated.log_prob_, rtol=1e-12)


def test_sample_follows_the_chain():
    chain = MarkovChain(2, alpha=0).fit([list("abcabcabc"), list("abc")])
    assert "".join(chain.sample(9, random_state=0)) == "abcabcabc"
    rng = np.random.RandomState(0)
    loose = MarkovChain(1, alpha=1.0).fit(random_sequences(rng, 2, 30))
    draws = loose.sample(20000, random_state=1)
    pairs = Counter(zip(draws[:-1].tolist(), draws[1:].tolist()))
    for a in range(2):
        row = np.array([pairs[(a, b)] for b in range(2)], dtype=float)
        np.testing.assert_allclose(
            row / row.sum(), np.exp(loose.log_prob_[a]), atol=0.02
        )


@pytest.mark.parametrize(
    "kwargs, X, match",
    [
        ({}, [["a", None, "b"]], "missing symbol"),
        ({"m": 2.0, "alpha": 0.5}, ["a", "b"], "either alpha"),
        ({"p": [0.5, 0.5]}, ["a", "b"], "needs m"),
        ({"m": 1.0, "p": [1.0]}, ["a", "b"], "probability vector"),
        ({"order": 40}, list("abcdefgh"), "lower the order"),
    ],
)
def test_bad_input_is_an_error_naming_it(kwargs, X, match):
    with pytest.raises(ValueError, match=match):
        MarkovChain(**kwargs).fit(X)


def test_an_unseen_symbol_is_an_error_unless_declared():
    chain = MarkovChain(1).fit(list("abab"))
    with pytest.raises(ValueError, match="symbols="):
        chain.score(list("abz"))
    declared = MarkovChain(1, symbols=list("abz")).fit(list("abab"))
    assert np.isfinite(declared.score(list("abz")))


def test_classifier_is_the_class_posterior_of_per_class_chains():
    rng = np.random.RandomState(0)
    X = [rng.choice(list("xyz"), rng.randint(2, 9)) for _ in range(40)]
    y = rng.choice(["p", "q"], 40)
    clf = MarkovChainClassifier(MarkovChain(2, alpha=0.5)).fit(X, y)
    test = [rng.choice(list("xyz"), 6) for _ in range(10)]
    log_lik = []
    for c in ["p", "q"]:
        chain = MarkovChain(2, alpha=0.5, symbols=list("xyz"))
        chain.fit([s for s, label in zip(X, y) if label == c])
        log_lik.append(chain.score_sequences(test))
    log_prior = np.log([np.mean(y == "p"), np.mean(y == "q")])
    joint = np.column_stack(log_lik) + log_prior
    expected = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
    np.testing.assert_allclose(clf.predict_proba(test), expected, rtol=1e-10)
    np.testing.assert_array_equal(
        clf.predict(test), np.array(["p", "q"])[expected.argmax(1)]
    )


@pytest.mark.parametrize(
    "seqs",
    [
        [np.array([1, 2, 3]), np.array([4, 1], dtype=np.int8)],
        [np.array([1.5, 2.0]), np.array([np.float32(0.25)])],
        [np.array(["a", "bb"]), np.array(["ccc"])],
        [np.array([True, False]), np.array([True])],
        [np.array([1, 2]), np.array([2.5])],  # two kinds: through objects
        [np.array([1, 2]), np.array(["a"])],
        [np.array([1, 2], dtype=np.uint64), np.array([-1])],
    ],
)
def test_typed_symbols_are_concatenated_as_the_object_round_trip_types_them(seqs):
    from bayeskit.hmm._markov_chain import _concatenated, _tidy

    found = _concatenated(seqs)
    expected = _tidy(np.concatenate([np.asarray(s, dtype=object) for s in seqs]))
    assert found.dtype.kind == expected.dtype.kind
    assert found.tolist() == expected.tolist()


def test_numeric_sequences_score_as_the_same_symbols_as_objects():
    # The typed path (arrays of numbers) and the object path (the same
    # symbols in object arrays) give the same alphabet and the same scores.
    rng = np.random.default_rng(0)
    seqs = [rng.integers(0, 4, 30).astype(float) for _ in range(40)]
    objects = [s.astype(object) for s in seqs]
    y = ["a", "b"] * 20
    typed = MarkovChainClassifier().fit(seqs, y)
    boxed = MarkovChainClassifier().fit(objects, y)
    np.testing.assert_array_equal(typed.models_[0].symbols_, boxed.models_[0].symbols_)
    np.testing.assert_array_equal(
        typed.predict_proba(seqs), boxed.predict_proba(objects)
    )
    chain = MarkovChain().fit(np.concatenate(seqs), [30] * 40)
    np.testing.assert_array_equal(
        chain.score_sequences(np.concatenate(seqs), [30] * 40),
        chain.score_sequences(np.concatenate(objects), [30] * 40),
    )


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 20])
def test_scores_in_blocks_of_sequences_are_the_scores_at_once(block, monkeypatch):
    # score_sequences scores long data in blocks of whole sequences; every
    # blocking gives the same numbers, bit for bit, as one block.
    from bayeskit.hmm import _markov_chain

    rng = np.random.default_rng(block)
    lengths = rng.integers(1, 12, 60)
    X = rng.choice(list("abc"), lengths.sum())
    chain = MarkovChain(order=2).fit(X, lengths)
    expected = chain.score_sequences(X, lengths)
    monkeypatch.setattr(_markov_chain, "_BLOCK", block)
    np.testing.assert_array_equal(chain.score_sequences(X, lengths), expected)
    by_hand = [chain.score(X[e - n : e]) for n, e in zip(lengths, np.cumsum(lengths))]
    np.testing.assert_allclose(expected, by_hand, rtol=1e-12)
