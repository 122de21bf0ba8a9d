"""Hidden Markov models: hmmlearn parity, both input forms, Baum-Welch, the casino."""

import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.utils import get_tags

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
    # The reference: the Bayes decision with the models that drew the data
    # (the casino's HMM against a fair die), on the same sequences.
    _, _, emis = casino(n_seq=1, length=1)
    truth = with_params(
        CategoricalHMM(2, n_features=6),
        np.array([0.5, 0.5]),
        np.array([[0.98, 0.02], [0.05, 0.95]]),
        emissionprob_=emis,
    )
    bayes = np.where(truth.score_sequences(X) > 60 * np.log(1 / 6), "casino", "fair")
    assert clf.score(X, y) >= np.mean(bayes == y) - 0.05
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P.sum(1), 1.0)
    search = GridSearchCV(
        HMMClassifier(CategoricalHMM(random_state=0)),
        {"hmm__n_components": [1, 2]},
        cv=KFold(3, shuffle=True, random_state=0),
    ).fit(X, y)
    assert search.best_params_["hmm__n_components"] in (1, 2)
    assert hasattr(clf, "partial_fit")  # statistics add: tests/models/test_per_class.py
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


@pytest.mark.parametrize("cov", ["diag", "full", "spherical"])
def test_unvisited_gaussian_state_keeps_its_parameters(cov):
    start, trans = np.array([1.0, 0.0]), np.array([[1.0, 0.0], [0.5, 0.5]])
    means, covars = (
        np.array([[0.0, 0.0], [5.0, 5.0]]),
        _COVARS[cov](np.random.default_rng(0))[:2],
    )
    hmm = with_params(
        GaussianHMM(2, cov, init_params="", n_iter=3, covars_prior=0),
        start,
        trans,
        means_=means,
        covars_=covars,
    )
    X = np.random.default_rng(1).normal(size=(30, 2))
    with pytest.warns(RuntimeWarning, match=r"state\(s\) \[1\] were never visited"):
        hmm.fit(X)
    np.testing.assert_allclose(hmm.means_[1], means[1])
    np.testing.assert_allclose(hmm.covariances_[1], covars[1])
    assert np.isfinite(hmm.score(X))


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
    # Lengths whose int64 sum wraps around to the number of rows.
    with pytest.raises(ValueError, match=r"lengths .*second positional argument"):
        getattr(hmm, method)(X, [2**62] * 4 + [6])
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
    # A list of 1-d arrays np.asarray would stack into rows: both readings are
    # plausible, so neither is guessed.
    univariate = [np.arange(5.0), np.arange(5.0) + 1]
    with pytest.raises(ValueError, match=r"np\.reshape"):
        g.score(univariate)
    with pytest.raises(ValueError, match="2 sequences"):
        hmm.score([np.array([0]), np.array([1])])
    g1 = GaussianHMM(2, random_state=0, n_iter=2).fit(
        [np.reshape(s, (-1, 1)) for s in univariate]
    )
    assert g1.score_sequences([np.reshape(s, (-1, 1)) for s in univariate]).shape == (
        2,
    )
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

    def partial_fit(self, X, y=None, **kw):
        return super().partial_fit(X, y=y, **kw)


def test_sklearn_checks_with_y_by_keyword():
    from sklearn.utils import estimator_checks as ec

    path = Path(__file__).resolve().parents[1] / "test_common.py"
    spec = importlib.util.spec_from_file_location("_bayeskit_test_common", path)
    sys_test_common = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sys_test_common)

    for estimator in (_KeywordY(), _KeywordY(2, covariance_type="full")):
        for name in sys_test_common._HMM_LENGTHS_CHECKS:
            base = name.split("(")[0]
            if base == "check_estimators_nan_inf":
                # scikit-learn runs it only for estimators that reject NaN;
                # GaussianHMM takes NaN (a missing coordinate is latent) and
                # still rejects inf (tests/models/test_hmm_gaps.py)
                assert get_tags(estimator).input_tags.allow_nan
                continue
            kwargs = (
                {"readonly_memmap": True} if "(readonly_memmap=True)" in name else {}
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                getattr(ec, base)(type(estimator).__name__, estimator, **kwargs)


# -- hmmlearn's parameters, hooks and monitor ----------------------------------------


def _gaussian_model(cov, k=3, d=2, seed=3):
    rng = np.random.default_rng(seed)
    start, trans, _ = random_model(rng, k=k)
    means = rng.normal(size=(k, d)) * 4
    covars = _COVARS[cov](rng)
    return start, trans, means, covars


def _gaussian_pair(cov):
    """bayeskit's and hmmlearn's GaussianHMM with the same parameters set by hand."""
    hh = pytest.importorskip("hmmlearn.hmm")
    start, trans, means, covars = _gaussian_model(cov)
    ours = with_params(GaussianHMM(3, cov), start, trans, means_=means, covars_=covars)
    ref = with_params(
        hh.GaussianHMM(3, cov), start, trans, means_=means, covars_=covars
    )
    ref.n_features = 2
    return ours, ref


@pytest.mark.parity
@pytest.mark.parametrize("cov", ["diag", "full", "tied", "spherical"])
def test_covars_reads_as_hmmlearn(cov):
    """covars_ is set in the type's shape and read as full matrices."""
    ours, ref = _gaussian_pair(cov)
    covars = _gaussian_model(cov)[3]
    assert ours.covars_.shape == (3, 2, 2)
    np.testing.assert_allclose(ours.covars_, ref.covars_)
    np.testing.assert_allclose(ours.covariances_, covars)
    with pytest.raises(ValueError, match="covars_ must have shape"):
        ours.covars_ = np.ones((2, 2, 2, 2))


@pytest.mark.parity
@pytest.mark.parametrize("implementation", ["log", "scaling"])
def test_implementation_runs_the_one_exact_path(implementation):
    hh = pytest.importorskip("hmmlearn.hmm")
    start, trans, emis, X = _three_by_four()
    kw = {"n_features": 4, "implementation": implementation}
    ours = with_params(CategoricalHMM(3, **kw), start, trans, emissionprob_=emis)
    ref = hh.CategoricalHMM(3, init_params="", **kw)
    ref.startprob_, ref.transmat_, ref.emissionprob_ = start, trans, emis
    log = with_params(CategoricalHMM(3, n_features=4), start, trans, emissionprob_=emis)
    assert ours.score(X, [3, 4, 5]) == log.score(X, [3, 4, 5])
    assert ours.score(X, [3, 4, 5]) == pytest.approx(ref.score(X, [3, 4, 5]))
    with pytest.raises(ValueError, match="implementation"):
        CategoricalHMM(3, implementation="fast").fit(X)


@pytest.mark.parity
def test_convergence_monitor_as_hmmlearn(capsys, caplog):
    base = pytest.importorskip("hmmlearn.base")
    from bayeskit.hmm import ConvergenceMonitor

    values = [-5.0, -3.0, -2.5, -2.4999]
    for verbose in (False, True):
        ours = ConvergenceMonitor(0.01, 10, verbose)
        ref = base.ConvergenceMonitor(0.01, 10, verbose)
        for v in values:
            ours.report(v)
            ref.report(v)
            assert ours.converged == ref.converged
            assert ours.iter == ref.iter and list(ours.history) == list(ref.history)
    out = capsys.readouterr()
    assert out.out == "" and len(out.err.splitlines()) == 2 * len(values)
    # A decrease is reported in the log, as hmmlearn's monitor does.
    with caplog.at_level("WARNING"):
        ours.report(-7.0)
    assert any("not converging" in r.getMessage() for r in caplog.records)
    ours._reset()
    assert ours.iter == 0 and not ours.history
    # After fit, the monitor is hmmlearn's: a deque, iter, converged.
    X = np.random.default_rng(0).integers(0, 3, size=(60, 1))
    hmm = CategoricalHMM(2, random_state=0, n_iter=4, tol=0).fit(X)
    assert isinstance(hmm.monitor_.history, base.deque)
    assert hmm.monitor_.iter == hmm.n_iter_ == 4
    assert hmm.monitor_.converged and not hmm.converged_  # budget spent


@pytest.mark.parity
def test_unset_parameters_are_initialised_as_hmmlearn(caplog):
    """A parameter left out of init_params is initialised when unset; one set and
    in init_params is overwritten, with hmmlearn's logged warning."""
    X = np.random.default_rng(2).normal(size=(100, 2))
    hmm = GaussianHMM(2, init_params="", random_state=0, n_iter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hmm.fit(X)  # nothing set, nothing in init_params: all initialised
    assert hmm.means_.shape == (2, 2) and hmm.covars_.shape == (2, 2, 2)
    start = np.array([0.25, 0.75])
    kept = GaussianHMM(2, init_params="mc", params="mc", random_state=0, n_iter=2)
    kept.startprob_ = start.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept.fit(X)
    np.testing.assert_array_equal(kept.startprob_, start)  # set, not in init_params
    caplog.clear()
    over = GaussianHMM(2, random_state=0, n_iter=2)
    over.startprob_ = start.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        over.fit(X)
    assert any("will be overwritten" in r.getMessage() for r in caplog.records)
    assert not np.array_equal(over.startprob_, start)


@pytest.mark.parity
@pytest.mark.parametrize("cov", ["diag", "full", "tied", "spherical"])
def test_init_hook_and_min_covar_as_hmmlearn(cov):
    """_init(X, lengths) initialises covars_ from the data's covariance plus
    min_covar on the diagonal, as hmmlearn's _init."""
    hh = pytest.importorskip("hmmlearn.hmm")
    X = np.random.default_rng(4).normal(size=(300, 2)) * [1.0, 3.0]
    for min_covar in (1e-3, 0.5):
        ours = GaussianHMM(3, cov, min_covar=min_covar, init_params="c")
        ref = hh.GaussianHMM(3, cov, min_covar=min_covar, init_params="c")
        ours._init(X, [300])
        ref._init(X, [300])
        if cov == "spherical":
            # hmmlearn keeps the variance repeated for every feature: the mean
            # of every entry of the data's covariance plus min_covar I.
            np.testing.assert_allclose(
                ours.covariances_, ref._covars_[:, 0], rtol=1e-12
            )
        else:
            np.testing.assert_allclose(ours.covars_, ref.covars_, rtol=1e-12)
    assert ours.startprob_.shape == (3,) and ours.means_.shape == (3, 2)
    ours._check()
    ours.transmat_ = np.ones((3, 3))
    with pytest.raises(ValueError, match="transmat_"):
        ours._check()


def test_too_little_data_logs_a_degenerate_solution(caplog):
    hmm = GaussianHMM(3, init_params="")
    hmm._init(np.random.default_rng(0).normal(size=(5, 3)), 5)
    assert [r.getMessage() for r in caplog.records if "degenerate" in r.getMessage()]


@pytest.mark.parity
def test_stationary_distribution():
    hh = pytest.importorskip("hmmlearn.hmm")
    start, trans, emis = random_model(np.random.default_rng(5))
    ours = with_params(CategoricalHMM(3), start, trans, emissionprob_=emis)
    ref = with_params(hh.CategoricalHMM(3), start, trans, emissionprob_=emis)
    pi = ours.get_stationary_distribution()
    np.testing.assert_allclose(pi @ trans, pi, atol=1e-12)  # closed form
    np.testing.assert_allclose(pi, ref.get_stationary_distribution(), atol=1e-12)


@pytest.mark.parity
def test_n_features_is_set_by_fit_as_hmmlearn():
    hh = pytest.importorskip("hmmlearn.hmm")
    X = np.array([[0], [2], [1], [2], [0], [1], [1]])
    ours = CategoricalHMM(2, random_state=0, n_iter=2).fit(X)
    ref = hh.CategoricalHMM(2, random_state=0, n_iter=2).fit(X)
    assert ours.n_features == ref.n_features == 3
    assert CategoricalHMM(2, n_features=5, random_state=0).fit(X).n_features == 5
    assert CategoricalHMM(2, random_state=0).fit([list("abca")]).n_features is None
    g = GaussianHMM(2, random_state=0, n_iter=2).fit(
        np.random.default_rng(0).normal(size=(30, 4))
    )
    assert g.n_features == g.n_features_in_ == 4
    with pytest.raises(ValueError, match="non-negative integers"):
        CategoricalHMM(2)._check_and_set_n_features(np.array([[0.5], [1.0]]))


@pytest.mark.parity
@pytest.mark.parametrize("cov", ["diag", "full", "tied", "spherical"])
def test_sample_shapes_as_hmmlearn(cov):
    hh = pytest.importorskip("hmmlearn.hmm")
    ours, ref = _gaussian_pair(cov)
    (a, za), (b, zb) = ours.sample(50, random_state=0), ref.sample(50, random_state=0)
    assert a.shape == b.shape and a.dtype == b.dtype
    assert za.shape == zb.shape and za.dtype.kind == zb.dtype.kind == "i"
    start, trans, emis = random_model(np.random.default_rng(5))
    ours = with_params(CategoricalHMM(3), start, trans, emissionprob_=emis)
    ref = with_params(hh.CategoricalHMM(3), start, trans, emissionprob_=emis)
    (a, _), (b, _) = ours.sample(20, random_state=0), ref.sample(20, random_state=0)
    assert a.shape == b.shape == (20, 1) and a.dtype.kind == b.dtype.kind == "i"


def test_bic_aic_on_a_list_of_sequences():
    seqs = [
        np.random.default_rng(i).integers(0, 3, size=n)
        for i, n in enumerate((9, 14, 6))
    ]
    hmm = CategoricalHMM(2, random_state=0, n_iter=3).fit(seqs)
    X, lengths = np.concatenate(seqs)[:, None], [9, 14, 6]
    k = 1 + 2 + 2 * 2  # start, transitions, emissions: free parameters
    expected = -2 * hmm.score(X, lengths) + k * np.log(29)
    assert hmm.bic(seqs) == pytest.approx(expected, rel=1e-12)
    assert hmm.bic(X, lengths) == pytest.approx(expected, rel=1e-12)
    assert hmm.aic(seqs) == pytest.approx(-2 * hmm.score(X, lengths) + 2 * k)


@pytest.mark.parity
@pytest.mark.parametrize("cov", ["diag", "full"])
def test_covariance_prior_beside_covars_prior(cov):
    """bayeskit's eta S is hmmlearn's covars_prior = eta S with covars_weight
    raised by eta; with both set, an error says how to write it."""
    hh = pytest.importorskip("hmmlearn.hmm")
    start, trans, means, covars = _gaussian_model(cov)
    X = np.random.default_rng(8).normal(size=(120, 2)) * 2
    eta, S = 3.0, np.array([[2.0, 0.5], [0.5, 1.0]])
    if cov == "diag":
        theirs_kw = {"covars_prior": eta * np.diag(S), "covars_weight": 1 + eta}
    else:
        theirs_kw = {"covars_prior": eta * S, "covars_weight": 2 + eta}
    common = {"n_iter": 2, "init_params": ""}
    ours = GaussianHMM(
        3,
        cov,
        covars_prior=0,
        covariance_prior=S,
        covariance_prior_weight=eta,
        **common,
    )
    ref = hh.GaussianHMM(3, cov, tol=-1, **theirs_kw, **common)
    for m in (ours, ref):
        with_params(m, start, trans, means_=means, covars_=covars)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.fit(X)
    np.testing.assert_allclose(ours.covars_, ref.covars_, rtol=1e-9)
    with pytest.raises(ValueError, match="covars_prior"):
        GaussianHMM(2, covars_prior=0.5, covariance_prior_weight=1.0).fit(X)


def test_reg_covar_is_added_after_the_m_step():
    start, trans, means, covars = _gaussian_model("diag")
    X = np.random.default_rng(8).normal(size=(120, 2)) * 2
    fits = []
    for reg in (0.0, 0.25):
        m = GaussianHMM(3, n_iter=1, init_params="", reg_covar=reg)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits.append(
                with_params(m, start, trans, means_=means, covars_=covars).fit(X)
            )
    np.testing.assert_allclose(fits[1].covariances_ - fits[0].covariances_, 0.25)


def test_hmmlearn_positional_order():
    g = GaussianHMM(2, "full", 0.5)
    assert (g.covariance_type, g.min_covar) == ("full", 0.5)
    c = CategoricalHMM(2, 3.0, 4.0)
    assert (c.startprob_prior, c.transmat_prior) == (3.0, 4.0)


def test_float_symbols_warn_once_at_the_callers_line():
    """Continuous values given to CategoricalHMM (one symbol per distinct
    float) warn once, as CategoricalNB does, at the line of the user's fit;
    the rule is CategoricalNB's, checked by hand here."""
    rng = np.random.default_rng(0)
    for n in (35, 60):
        X = rng.normal(size=(n, 1))
        distinct = len(np.unique(X))
        assert n > 20 and 2 * distinct > n  # the rule by hand
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            CategoricalHMM(2, random_state=0, n_iter=2).fit(X)
        ours = [w for w in record if "distinct values" in str(w.message)]
        assert len(ours) == 1
        assert ours[0].category is UserWarning
        assert ours[0].filename == __file__
        assert f"({distinct} distinct values in {n} rows)" in str(ours[0].message)
        assert "GaussianHMM" in str(ours[0].message)
    # Genuine symbols (few distinct values, floats that are integers) do not.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CategoricalHMM(2, random_state=0, n_iter=2).fit(
            rng.integers(0, 4, (60, 1)).astype(float)
        )
