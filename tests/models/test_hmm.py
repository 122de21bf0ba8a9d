"""Hidden Markov models: hmmlearn parity, both input forms, Baum-Welch, the casino."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

from bayeskit import CategoricalHMM, GaussianHMM, HMMClassifier


def random_model(rng, k=3, m=5):
    return (
        rng.dirichlet(np.ones(k)),
        rng.dirichlet(np.ones(k), size=k),
        rng.dirichlet(np.ones(m), size=k),
    )


def with_params(model, start, trans, **emission):
    model.startprob_, model.transmat_ = start.copy(), trans.copy()
    for name, value in emission.items():
        setattr(model, name, np.array(value, copy=True))
    return model


def casino(n_seq=30, length=500, seed=0):
    """The dishonest casino: a fair die and a loaded one (a six half the time)."""
    start = np.array([0.5, 0.5])
    trans = np.array([[0.98, 0.02], [0.05, 0.95]])
    emis = np.array([[1 / 6] * 6, [0.1] * 5 + [0.5]])
    hmm = with_params(CategoricalHMM(2, n_features=6), start, trans, emissionprob_=emis)
    seqs, states = [], []
    for i in range(n_seq):
        x, z = hmm.sample(length, random_state=seed + i)
        seqs.append(x[:, 0])
        states.append(z)
    return seqs, states, emis


@pytest.mark.parity
@pytest.mark.parametrize("prior", [1.0, 2.5])
def test_categorical_parity_with_hmmlearn(prior):
    hh = pytest.importorskip("hmmlearn.hmm")
    rng = np.random.default_rng(0)
    start, trans, emis = random_model(rng)
    X = rng.integers(0, 5, size=(200, 1))
    lengths = [50, 80, 70]
    priors = dict(startprob_prior=prior, transmat_prior=prior, emissionprob_prior=prior)
    theirs = with_params(
        hh.CategoricalHMM(
            3, n_iter=1, init_params="", implementation="scaling", tol=-1, **priors
        ),
        start,
        trans,
        emissionprob_=emis,
    )
    theirs.n_features = 5
    ours = with_params(
        CategoricalHMM(3, n_features=5, n_iter=1, init_params="", tol=0, **priors),
        start,
        trans,
        emissionprob_=emis,
    )
    ours.fit(X, lengths=lengths)
    ref = with_params(
        hh.CategoricalHMM(3, implementation="scaling"), start, trans, emissionprob_=emis
    )
    ref.n_features = 5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs.fit(X, lengths)
    for name in ("startprob_", "transmat_", "emissionprob_"):
        np.testing.assert_allclose(
            getattr(ours, name), getattr(theirs, name), atol=1e-10
        )
    # Scoring and decoding from identical parameters.
    fixed = with_params(CategoricalHMM(3), start, trans, emissionprob_=emis)
    assert fixed.score(X, lengths=lengths) == pytest.approx(
        ref.score(X, lengths), rel=1e-10
    )
    np.testing.assert_allclose(
        fixed.predict_proba(X, lengths=lengths),
        ref.predict_proba(X, lengths),
        atol=1e-10,
    )
    np.testing.assert_array_equal(
        fixed.predict(X, lengths=lengths), ref.predict(X, lengths)
    )
    assert fixed.decode(X, lengths=lengths)[0] == pytest.approx(
        ref.decode(X, lengths)[0], rel=1e-10
    )


_PRIORS = {
    "maximum likelihood": lambda cov: {
        "covars_prior": 0,
        "covars_weight": 1 if cov in ("diag", "spherical") else 0,
    },
    "hmmlearn's defaults": lambda cov: {},
    "normal and covariance priors": lambda cov: {
        "means_prior": np.array([[1.0, -1.0]] * 3),
        "means_weight": 3.0,
        "covars_prior": 0.5 if cov in ("diag", "spherical") else 0.5 * np.eye(2),
        "covars_weight": 4.0,
    },
}


@pytest.mark.parity
@pytest.mark.parametrize("prior", list(_PRIORS))
@pytest.mark.parametrize("cov", ["diag", "full", "tied", "spherical"])
def test_gaussian_parity_with_hmmlearn(cov, prior):
    """hmmlearn's priors (means_prior, means_weight, covars_prior, covars_weight)
    mean what they mean there: the same Baum-Welch steps from the same start."""
    hh = pytest.importorskip("hmmlearn.hmm")
    rng = np.random.default_rng(1)
    start, trans, _ = random_model(rng)
    means = rng.normal(size=(3, 2)) * 3
    covs = {
        "diag": np.ones((3, 2)),
        "full": np.stack([np.eye(2)] * 3),
        "spherical": np.ones(3),
        "tied": np.eye(2),
    }[cov]
    X = rng.normal(size=(200, 2)) * 2
    lengths = [50, 80, 70]
    kwargs = _PRIORS[prior](cov)

    def pair(n_iter):
        theirs = hh.GaussianHMM(3, cov, n_iter=n_iter, init_params="", tol=-1, **kwargs)
        ours = GaussianHMM(3, cov, n_iter=n_iter, init_params="", tol=0, **kwargs)
        return [
            with_params(m, start, trans, means_=means, covars_=covs)
            for m in (theirs, ours)
        ]

    ref, ours_fixed = pair(0)
    assert ours_fixed.score(X, lengths) == pytest.approx(
        ref.score(X, lengths), rel=1e-10
    )
    np.testing.assert_allclose(
        ours_fixed.predict_proba(X, lengths), ref.predict_proba(X, lengths), atol=1e-10
    )
    theirs, ours = pair(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs.fit(X, lengths)
        ours.fit(X, lengths)
    np.testing.assert_allclose(ours.means_, theirs.means_, atol=1e-9)
    # covars_ reads as full matrices in both; hmmlearn's spherical keeps one
    # column per feature internally, equal across features.
    expected = theirs._covars_[:, 0] if cov == "spherical" else theirs._covars_
    np.testing.assert_allclose(ours.covariances_, expected, atol=1e-9)
    if cov != "spherical":
        np.testing.assert_allclose(ours.covars_, theirs.covars_, atol=1e-9)
    np.testing.assert_allclose(ours.transmat_, theirs.transmat_, atol=1e-9)
    # The monitored objective (log-likelihood plus log prior) never decreases.
    assert np.all(np.diff(ours.monitor_.history) >= -1e-9)


_COVARS = {
    "diag": lambda rng: rng.uniform(0.5, 2, size=(3, 2)),
    "full": lambda rng: np.stack([np.eye(2) + 0.3 * np.ones((2, 2))] * 3),
    "spherical": lambda rng: rng.uniform(0.5, 2, size=3),
    "tied": lambda rng: np.array([[1.0, 0.4], [0.4, 2.0]]),
}


@pytest.mark.parity
@pytest.mark.parametrize("cov", ["diag", "full", "tied", "spherical"])
def test_parameters_set_by_hand_score_as_in_hmmlearn(cov):
    # hmmlearn's way of building a model: set the parameters, no fit; and
    # parameters changed by hand after a fit are the ones used.
    hh = pytest.importorskip("hmmlearn.hmm")
    rng = np.random.default_rng(7)
    start, trans, emis = random_model(rng)
    X = rng.integers(0, 5, size=(60, 1))
    ref = with_params(hh.CategoricalHMM(3), start, trans, emissionprob_=emis)
    ref.n_features = 5
    ours = with_params(CategoricalHMM(3), start, trans, emissionprob_=emis)
    assert ours.score(X) == pytest.approx(ref.score(X), rel=1e-10)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))

    means, covars = rng.normal(size=(3, 2)) * 3, _COVARS[cov](rng)
    Xg = rng.normal(size=(80, 2)) * 2
    ref = with_params(
        hh.GaussianHMM(3, covariance_type=cov),
        start,
        trans,
        means_=means,
        covars_=covars,
    )
    ours = with_params(
        GaussianHMM(3, covariance_type=cov), start, trans, means_=means, covars_=covars
    )
    assert ours.score(Xg) == pytest.approx(ref.score(Xg), rel=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours.set_params(n_iter=2).fit(Xg)
    with_params(ours, start, trans, means_=means + 1, covars_=covars * 1.5)
    with_params(ref, start, trans, means_=means + 1, covars_=covars * 1.5)
    assert ours.score(Xg) == pytest.approx(ref.score(Xg), rel=1e-10)
    np.testing.assert_allclose(
        ours.predict_proba(Xg), ref.predict_proba(Xg), atol=1e-10
    )
    with pytest.raises(ValueError, match="covars_ must have shape"):
        ours.covars_ = covars[..., :1]  # the setter or the next call says so
        ours.score(Xg)


@pytest.mark.parametrize("kind", ["categorical", "gaussian", "left-to-right"])
def test_sequence_weight_counts_a_sequence_as_copies(kind):
    rng = np.random.default_rng(11)
    start, trans, emis = random_model(rng)
    if kind == "left-to-right":  # zero transitions: the kernels watch for lost states
        trans = np.triu(trans)
        trans /= trans.sum(axis=1, keepdims=True)
    means = rng.normal(size=(3, 2)) * 4
    if kind == "categorical":
        seqs = [rng.integers(0, 5, size=n) for n in (30, 12, 25, 40)]
    else:
        seqs = [rng.normal(size=(n, 2)) * 4 for n in (30, 12, 25, 40)]

    def model():
        if kind == "categorical":
            hmm = CategoricalHMM(
                3, init_params="", n_iter=5, tol=0, emissionprob_prior=1.5
            )
            return with_params(hmm, start, trans, emissionprob_=emis)
        hmm = GaussianHMM(3, covariance_type="full", init_params="", n_iter=5, tol=0)
        covars = np.stack([np.eye(2) * 9] * 3)
        return with_params(hmm, start, trans, means_=means, covars_=covars)

    weights = np.array([2, 0, 1, 3])
    copies = model().fit([s for s, w in zip(seqs, weights) for _ in range(w)])
    weighted = model().fit(seqs, sequence_weight=weights)
    for name in ("startprob_", "transmat_", "emissionprob_", "means_", "covars_"):
        if hasattr(copies, name):
            np.testing.assert_allclose(
                getattr(weighted, name), getattr(copies, name), rtol=1e-9, atol=1e-12
            )
    np.testing.assert_allclose(
        weighted.monitor_.history, copies.monitor_.history, rtol=1e-10
    )
    for bad, message in [
        ([1, 2, 3], "sequence_weight must be 4 numbers, one per sequence"),
        (["a", "b", "c", "d"], "sequence_weight must be 4 numbers"),
        ([1, -1, 1, 1], "sequence_weight must be non-negative"),
        ([1, np.nan, 1, 1], "sequence_weight must be non-negative and finite"),
        ([0, 0, 0, 0], "not all zero"),
    ]:
        with pytest.raises(ValueError, match=message):
            model().fit(seqs, sequence_weight=bad)


def test_list_and_concatenated_forms_agree():
    seqs, _, _ = casino(n_seq=4, length=60)
    X = np.concatenate(seqs)[:, None]
    lengths = [len(s) for s in seqs]
    a = CategoricalHMM(2, random_state=0, n_iter=5).fit(seqs)
    b = CategoricalHMM(2, random_state=0, n_iter=5).fit(X, lengths=lengths)
    np.testing.assert_allclose(a.emissionprob_, b.emissionprob_, rtol=1e-12)
    per_step = a.predict_proba(seqs)
    assert isinstance(per_step, list) and len(per_step) == 4
    np.testing.assert_allclose(
        np.concatenate(per_step), b.predict_proba(X, lengths=lengths)
    )
    paths = a.predict(seqs)
    assert [len(p) for p in paths] == lengths
    np.testing.assert_allclose(a.score_sequences(seqs).sum(), a.score(seqs))


def test_string_symbols_and_unseen_symbols():
    seqs = [list("HHTHT"), list("TTHH"), list("HT")]
    hmm = CategoricalHMM(2, random_state=0).fit(seqs)
    assert hmm.symbols_.tolist() == ["H", "T"]
    with pytest.raises(ValueError, match="symbol 'X' was not seen in fit"):
        hmm.score([list("HXT")])
    # Declared but unseen: a legitimate symbol, with probability zero under
    # maximum likelihood and a smoothed one under a Dirichlet prior.
    ml = CategoricalHMM(2, n_features=4, random_state=0).fit([[0, 1, 1, 0]])
    assert np.isneginf(ml.score([[3, 2]]))
    smooth = CategoricalHMM(2, n_features=4, emissionprob_prior=2.0, random_state=0)
    assert np.isfinite(smooth.fit([[0, 1, 1, 0]]).score([[3, 2]]))
    with pytest.raises(ValueError, match="not seen in fit"):
        CategoricalHMM(2, random_state=0).fit([[0, 1, 1]]).score([[5]])


@pytest.mark.parametrize("prior", [1.0, 2.0])
def test_log_posterior_never_decreases(prior):
    seqs, _, _ = casino(n_seq=3, length=80, seed=7)
    for seed in range(25):
        hmm = CategoricalHMM(
            3,
            random_state=seed,
            n_iter=30,
            tol=0,
            startprob_prior=prior,
            transmat_prior=prior,
            emissionprob_prior=prior,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            hmm.fit(seqs)
        history = np.asarray(hmm.monitor_.history)
        assert np.all(np.diff(history) >= -1e-10 * np.abs(history[1:]))
    for seed in range(5):
        g = GaussianHMM(
            2,
            covariance_type="full",
            covariance_prior_weight=prior - 1,
            reg_covar=0,
            random_state=seed,
            n_iter=20,
            tol=0,
        )
        X = np.concatenate(
            [np.random.default_rng(seed).normal(m, 1, (40, 2)) for m in (0, 4, 0)]
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g.fit(X)
        h = np.asarray(g.monitor_.history)
        assert np.all(np.diff(h) >= -1e-10 * np.abs(h[1:]))


def test_dishonest_casino():
    seqs, states, emis = casino()
    hmm = CategoricalHMM(2, n_iter=200, tol=1e-6, random_state=3, n_init=3).fit(seqs)
    loaded = int(np.argmax(hmm.emissionprob_[:, 5]))
    np.testing.assert_allclose(hmm.emissionprob_[loaded], emis[1], atol=0.05)
    np.testing.assert_allclose(hmm.emissionprob_[1 - loaded], emis[0], atol=0.05)
    paths = hmm.predict(seqs)
    agree = np.mean(
        np.concatenate(paths)
        == (np.concatenate(states) == 1) * loaded
        + (np.concatenate(states) == 0) * (1 - loaded)
    )
    assert agree >= 0.8
    a, za = hmm.sample(100, random_state=5)
    b, zb = hmm.sample(100, random_state=5)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(za, zb)


def test_model_selection_with_sklearn():
    seqs, _, _ = casino(n_seq=12, length=100, seed=20)
    cv = KFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(CategoricalHMM(2, random_state=0), seqs, cv=cv)
    assert scores.shape == (3,) and np.all(np.isfinite(scores))
    search = GridSearchCV(
        CategoricalHMM(random_state=0, n_iter=100, n_init=3),
        {"n_components": [1, 2]},
        cv=cv,
    ).fit(seqs)
    assert search.best_params_["n_components"] == 2


def test_hmm_classifier():
    rng = np.random.default_rng(2)
    seqs_a, _, _ = casino(n_seq=20, length=60, seed=100)
    seqs_b = [rng.integers(0, 6, 60) for _ in range(20)]
    X = seqs_a + seqs_b
    y = np.array(["casino"] * 20 + ["fair"] * 20)
    clf = HMMClassifier(CategoricalHMM(2, random_state=0, n_iter=30)).fit(X, y)
    assert clf.score(X, y) > 0.8
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P.sum(1), 1.0)
    search = GridSearchCV(
        HMMClassifier(CategoricalHMM(random_state=0)),
        {"hmm__n_components": [1, 2]},
        cv=KFold(3, shuffle=True, random_state=0),
    ).fit(X, y)
    assert search.best_params_["hmm__n_components"] in (1, 2)
    assert not hasattr(clf, "partial_fit")
    # Integer weights count a sequence as that many copies.
    weights = np.arange(len(y)) % 3
    weighted = HMMClassifier(CategoricalHMM(2, random_state=0, n_iter=5))
    weighted.fit(X, y, sample_weight=weights)
    copies = HMMClassifier(CategoricalHMM(2, random_state=0, n_iter=5))
    copies.fit([x for x, w in zip(X, weights) for _ in range(w)], np.repeat(y, weights))
    np.testing.assert_allclose(
        weighted.predict_proba(X), copies.predict_proba(X), atol=1e-10
    )
    kept = HMMClassifier(CategoricalHMM(2, random_state=0, n_iter=30))
    kept.fit(X, y, sample_weight=np.r_[np.zeros(5), np.ones(35)])
    alone = HMMClassifier(CategoricalHMM(2, random_state=0, n_iter=30))
    alone.fit(X[5:], y[5:])
    np.testing.assert_allclose(kept.predict_proba(X), alone.predict_proba(X))


def test_unvisited_state_keeps_finite_parameters():
    start = np.array([1.0, 0.0])
    trans = np.array([[1.0, 0.0], [0.5, 0.5]])  # state 1 is never reached
    hmm = with_params(
        CategoricalHMM(2, n_features=3, init_params="", n_iter=3),
        start,
        trans,
        emissionprob_=np.full((2, 3), 1 / 3),
    )
    with pytest.warns(RuntimeWarning, match=r"state\(s\) \[1\] were never visited"):
        hmm.fit([[0, 1, 2, 2]])
    assert np.all(np.isfinite(hmm.emissionprob_)) and np.all(np.isfinite(hmm.transmat_))
    np.testing.assert_allclose(hmm.emissionprob_[1], 1 / 3)
    assert hmm.transmat_[0, 1] == 0.0  # structural zeros survive EM


def test_long_sequence():
    rng = np.random.default_rng(3)
    start, trans, emis = random_model(rng, 4, 6)
    hmm = with_params(CategoricalHMM(4), start, trans, emissionprob_=emis)
    X = rng.integers(0, 6, size=(1_000_000, 1))
    assert np.isfinite(hmm.score(X))
    assert np.all(np.isfinite(hmm.predict_proba(X)[-5:]))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: CategoricalHMM(2, n_features=3).fit([[0, 5]]), "out of range"),
        (lambda: CategoricalHMM(2).fit([[0, -1]]), "non-negative"),
        (
            lambda: CategoricalHMM(2).fit(np.zeros((5, 1), int), lengths=[2, 2]),
            "summing to the 5 rows",
        ),
        (lambda: CategoricalHMM(2).fit([[0, 1], []]), "sequence 1 is empty"),
        (
            lambda: with_params(
                CategoricalHMM(2, init_params="e"), np.array([0.5, 0.6]), np.eye(2)
            ).fit([[0, 1]]),
            "startprob_ must be non-negative with rows summing to one",
        ),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# -- hmmlearn's calls mean what they mean there ---------------------------------------


def _brute_force_log_likelihood(start, trans, emis, X, lengths):
    """Sum over every state path of every sequence (tiny models only)."""
    import itertools

    total, pos = 0.0, 0
    for n in lengths:
        x = X[pos : pos + n, 0]
        pos += n
        p = 0.0
        for path in itertools.product(range(len(start)), repeat=n):
            q = start[path[0]] * emis[path[0], x[0]]
            for t in range(1, n):
                q *= trans[path[t - 1], path[t]] * emis[path[t], x[t]]
            p += q
        total += np.log(p)
    return total


def _three_by_four():
    rng = np.random.default_rng(7)
    start, trans, emis = random_model(rng, k=3, m=4)
    X = rng.integers(0, 4, size=(12, 1))
    return start, trans, emis, X


@pytest.mark.parity
def test_positional_lengths_is_lengths():
    """hmmlearn's score(X, lengths) scores each sequence, not the concatenation."""
    hh = pytest.importorskip("hmmlearn.hmm")
    start, trans, emis, X = _three_by_four()
    lengths = [3, 4, 5]
    ours = with_params(
        CategoricalHMM(3, n_features=4), start, trans, emissionprob_=emis
    )
    ref = hh.CategoricalHMM(3, n_features=4, init_params="")
    ref.startprob_, ref.transmat_, ref.emissionprob_ = start, trans, emis
    expected = _brute_force_log_likelihood(start, trans, emis, X, lengths)
    assert ref.score(X, lengths) == pytest.approx(expected, rel=1e-10)
    assert ours.score(X, lengths) == pytest.approx(expected, rel=1e-10)
    assert ours.score(X) != pytest.approx(expected, rel=1e-6)  # one sequence
    np.testing.assert_allclose(
        ours.predict_proba(X, lengths), ref.predict_proba(X, lengths), rtol=1e-10
    )
    np.testing.assert_array_equal(ours.predict(X, lengths), ref.predict(X, lengths))
    assert ours.decode(X, lengths)[0] == pytest.approx(ref.decode(X, lengths)[0])
    assert ours.score_samples(X, lengths)[0] == pytest.approx(expected, rel=1e-10)


@pytest.mark.parity
def test_positional_lengths_in_fit_cuts_transitions():
    """fit(X, lengths): no transition is learnt across a sequence boundary."""
    hh = pytest.importorskip("hmmlearn.hmm")
    start, trans, emis, X = _three_by_four()
    lengths = [3, 4, 5]
    ours = with_params(
        CategoricalHMM(3, n_features=4, init_params="", n_iter=1, tol=0),
        start,
        trans,
        emissionprob_=emis,
    )
    ref = hh.CategoricalHMM(3, n_features=4, init_params="", n_iter=1, tol=0)
    ref.startprob_, ref.transmat_, ref.emissionprob_ = start, trans, emis
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours.fit(X, lengths)
        ref.fit(X, lengths)
    np.testing.assert_allclose(ours.transmat_, ref.transmat_, rtol=1e-10)
    np.testing.assert_allclose(ours.startprob_, ref.startprob_, rtol=1e-10)
    np.testing.assert_allclose(ours.emissionprob_, ref.emissionprob_, rtol=1e-10)


@pytest.mark.parametrize("method", ["fit", "score"])
def test_second_positional_target_is_an_error(method):
    """A scikit-learn target in lengths' place is an error, never ignored."""
    X = np.array([[0], [1], [2], [1], [0], [2]])
    hmm = CategoricalHMM(2, random_state=0).fit(X)
    with pytest.raises(ValueError, match=r"lengths .*second positional argument"):
        getattr(hmm, method)(X, np.array([0, 1, 0, 1, 0, 1]))
    with pytest.raises(ValueError, match=r"y=\.\.\."):
        getattr(hmm, method)(X, [2, 2])
    # None in y's place, as Pipeline passes it, and y by keyword are fine.
    assert getattr(hmm, method)(X, None) is not None
    assert getattr(hmm, method)(X, y=np.zeros(6)) is not None


@pytest.mark.parity
def test_nested_list_rows_form_is_one_sequence():
    """[[0], [1], [2]] is hmmlearn's rows form: one sequence of three steps."""
    hh = pytest.importorskip("hmmlearn.hmm")
    start, trans, emis, _ = _three_by_four()
    ours = with_params(
        CategoricalHMM(3, n_features=4), start, trans, emissionprob_=emis
    )
    ref = hh.CategoricalHMM(3, n_features=4, init_params="")
    ref.startprob_, ref.transmat_, ref.emissionprob_ = start, trans, emis
    rows = [[0], [1], [2]]
    expected = _brute_force_log_likelihood(start, trans, emis, np.array(rows), [3])
    assert ref.score(rows) == pytest.approx(expected, rel=1e-10)
    assert ours.score(rows) == pytest.approx(expected, rel=1e-10)
    assert ours.score(np.array(rows)) == pytest.approx(expected, rel=1e-10)
    assert ours.predict(rows).shape == (3,)  # rows in, rows out
    # Fitting on the nested list learns what fitting on the array learns.
    X = np.random.default_rng(0).integers(0, 4, size=(40, 1))
    a = CategoricalHMM(2, n_features=4, random_state=0, n_iter=5).fit(X.tolist())
    b = CategoricalHMM(2, n_features=4, random_state=0, n_iter=5).fit(X)
    np.testing.assert_allclose(a.transmat_, b.transmat_)
    # Gaussian rows written as nested lists, too.
    Xg = np.random.default_rng(1).normal(size=(30, 2))
    g = GaussianHMM(2, random_state=0, n_iter=3).fit(Xg)
    assert g.score(Xg.tolist()) == pytest.approx(g.score(Xg), rel=1e-12)


def test_list_of_sequences_stays_unambiguous():
    """Lists the peer cannot read as rows are one sequence per element."""
    hmm = CategoricalHMM(2, random_state=0, n_iter=3).fit([[0, 1, 1], [1, 0]])
    assert len(hmm.predict([[0, 1, 1], [1, 0]])) == 2
    # Sequences of equal length (more than one symbol each): one per element.
    assert hmm.score_sequences([[0, 1], [1, 0]]).shape == (2,)
    g = GaussianHMM(2, random_state=0, n_iter=3)
    seqs = [np.zeros((4, 2)) + i for i in range(3)]
    g.fit(
        [s + np.random.default_rng(i).normal(size=s.shape) for i, s in enumerate(seqs)]
    )
    assert g.score_sequences(seqs).shape == (3,)
    with pytest.raises(ValueError, match="mixing sequences of different dimensions"):
        g.score([np.zeros((3, 2)), np.zeros(2)])


def test_hmm_classifier_one_step_sequences():
    """HMMClassifier hands each class's sequences over with lengths, so
    sequences of one step each are not read as hmmlearn's rows form."""
    X = [[0], [0], [1], [1], [0], [1]]
    y = ["a", "a", "b", "b", "a", "b"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # no transitions to learn
        clf = HMMClassifier(CategoricalHMM(1, n_features=2, random_state=0))
        clf.fit(X, y)
    np.testing.assert_array_equal(clf.predict(X), y)
    assert clf.predict_proba(X).shape == (6, 2)


class _KeywordY(GaussianHMM):
    """GaussianHMM taking scikit-learn's y positionally, as check_estimator passes
    it: the checks that the lengths signature keeps from test_common run here."""

    def fit(self, X, y=None, **kw):
        return super().fit(X, y=y, **kw)

    def score(self, X, y=None, **kw):
        return super().score(X, y=y, **kw)


def test_sklearn_checks_with_y_by_keyword():
    from sklearn.utils import estimator_checks as ec

    sys_test_common = pytest.importorskip("tests.test_common")
    for estimator in (_KeywordY(), _KeywordY(2, covariance_type="full")):
        for name in sys_test_common._HMM_LENGTHS_CHECKS:
            base = name.split("(")[0]
            kwargs = (
                {"readonly_memmap": True} if "(readonly_memmap=True)" in name else {}
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                getattr(ec, base)(type(estimator).__name__, estimator, **kwargs)
