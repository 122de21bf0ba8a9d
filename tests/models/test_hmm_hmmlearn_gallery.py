"""hmmlearn 0.3.3's gallery computations, run with hmmlearn and with bayeskit.

Each test writes the computation of one example of hmmlearn's gallery
(``examples/`` at the tag 0.3.3: the dishonest casino, sampling and decoding,
model selection by AIC/BIC, the multinomial HMM, the Poisson HMM of
earthquake counts), at a reduced size where the example is long, runs it with
both libraries in the same process and compares: the samples bit for bit, the
fitted numbers to a tolerance. The starts and samples are the same draws (see
``test_hmm_hmmlearn_draws.py``); what remains is the rounding of two
implementations of Baum-Welch over up to 200 iterations, so parameters agree
to ``rtol=1e-6`` and log-likelihoods to ``rel=1e-9``.
"""

import logging

import numpy as np
import pytest

import bayeskit

hh = pytest.importorskip("hmmlearn.hmm")
pytestmark = pytest.mark.parity

LIBS = {"hmmlearn": hh, "bayeskit": bayeskit}


@pytest.fixture(autouse=True)
def _quiet():
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def _close(a, b, rtol=1e-6):
    np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=rtol, atol=1e-9)


def _casino(lib, n_rolls, n_fits):
    gen = lib.CategoricalHMM(n_components=2, random_state=99)
    gen.startprob_ = np.array([1.0, 0.0])
    gen.transmat_ = np.array([[0.95, 0.05], [0.1, 0.9]])
    gen.emissionprob_ = np.array([[1 / 6] * 6, [1 / 10] * 5 + [1 / 2]])
    rolls, states = gen.sample(n_rolls)
    train, validate = rolls[: n_rolls // 2], rolls[n_rolls // 2 :]
    np.random.seed(13)  # noqa: NPY002 (the example draws its transitions so)
    fits = []
    for idx in range(n_fits):
        model = lib.CategoricalHMM(n_components=2, random_state=idx, init_params="se")
        model.transmat_ = np.array(
            [np.random.dirichlet([0.9, 0.1]), np.random.dirichlet([0.1, 0.9])]  # noqa: NPY002
        )
        model.fit(train)
        fits.append(model)
    scores = [m.score(validate) for m in fits]
    best = fits[int(np.argmax(scores))]
    return rolls, states, gen.score(validate), scores, best, best.predict(rolls)


def test_casino():
    a, b = (_casino(lib, 6000, 8) for lib in LIBS.values())
    np.testing.assert_array_equal(b[0], a[0])  # the rolls
    np.testing.assert_array_equal(b[1], a[1])  # the dice behind them
    assert b[2] == pytest.approx(a[2], rel=1e-12)
    _close(a[3], b[3], rtol=1e-9)
    for attr in ("startprob_", "transmat_", "emissionprob_"):
        _close(getattr(a[4], attr), getattr(b[4], attr))
    np.testing.assert_array_equal(b[5], a[5])


def _sampling_and_decoding(lib, n_fits):
    gen = lib.GaussianHMM(n_components=4, covariance_type="full")
    gen.startprob_ = np.array([0.6, 0.3, 0.1, 0.0])
    gen.transmat_ = np.array(
        [
            [0.7, 0.2, 0.0, 0.1],
            [0.3, 0.5, 0.2, 0.0],
            [0.0, 0.3, 0.5, 0.2],
            [0.2, 0.0, 0.2, 0.6],
        ]
    )
    gen.means_ = np.array([[0.0, 0.0], [0.0, 11.0], [9.0, 10.0], [11.0, -1.0]])
    gen.covars_ = 0.5 * np.tile(np.identity(2), (4, 1, 1))
    np.random.seed(0)  # noqa: NPY002 (random_state=None: numpy's global generator)
    X, Z = gen.sample(500)
    scores, models = [], []
    for n_components in (3, 4, 5):
        for idx in range(n_fits):
            model = lib.GaussianHMM(
                n_components=n_components, covariance_type="full", random_state=idx
            )
            model.fit(X[: X.shape[0] // 2])
            models.append(model)
            scores.append(model.score(X[X.shape[0] // 2 :]))
    best = models[int(np.argmax(scores))]
    return X, Z, scores, best, best.predict(X)


def test_sampling_and_decoding():
    a, b = (_sampling_and_decoding(lib, 3) for lib in LIBS.values())
    np.testing.assert_array_equal(b[0], a[0])
    np.testing.assert_array_equal(b[1], a[1])
    _close(a[2], b[2], rtol=1e-9)
    assert b[3].n_components == a[3].n_components
    for attr in ("startprob_", "transmat_", "means_", "covars_"):
        _close(getattr(a[3], attr), getattr(b[3], attr))
    np.testing.assert_array_equal(b[4], a[4])


def _model_selection(lib, ns, n_fits, n_iter=200):
    rs = np.random.RandomState(546)  # one generator for everything, as the example
    model = lib.GaussianHMM(4, init_params="")
    model.n_features = 4
    model.startprob_ = np.array([1 / 4.0, 1 / 4.0, 1 / 4.0, 1 / 4.0])
    model.transmat_ = np.array(
        [
            [0.3, 0.4, 0.2, 0.1],
            [0.1, 0.2, 0.3, 0.4],
            [0.5, 0.2, 0.1, 0.2],
            [0.25, 0.25, 0.25, 0.25],
        ]
    )
    model.means_ = np.array([[-2.5], [0], [2.5], [5.0]])
    model.covars_ = np.sqrt([[0.25], [0.25], [0.25], [0.25]])
    X, _ = model.sample(1000, random_state=rs)
    results = []
    for n in ns:
        best_ll = best = None
        for _ in range(n_fits):
            h = lib.GaussianHMM(n, n_iter=n_iter, tol=1e-4, random_state=rs)
            h.fit(X)
            score = h.score(X)
            if not best_ll or best_ll < score:
                best_ll, best = score, h
        results.append((best.aic(X), best.bic(X), best.score(X), best))
    return X, results, rs.rand()


def test_model_selection_draws():
    """The sample and every fit's start (n_iter=0), all drawn from one shared
    generator: the same draws, and the generator left in the same state."""
    a, b = (_model_selection(lib, (2, 3, 4), 3, n_iter=0) for lib in LIBS.values())
    np.testing.assert_array_equal(b[0], a[0])
    for (aic_a, bic_a, ll_a, ma), (aic_b, bic_b, ll_b, mb) in zip(a[1], b[1]):
        assert (aic_b, bic_b, ll_b) == pytest.approx((aic_a, bic_a, ll_a), rel=1e-12)
        for attr in ("startprob_", "transmat_", "means_", "covars_"):
            _close(getattr(ma, attr), getattr(mb, attr), rtol=1e-12)
    assert b[2] == a[2]


@pytest.mark.xfail(
    strict=True,
    reason="bayeskit's monitor stops Baum-Welch on the log posterior (the "
    "log-likelihood plus the log density of covars_prior's prior), hmmlearn's on "
    "the log-likelihood alone: from the same start, one of these fits stops one "
    "iteration apart (127 and 128), so its scores differ at 3e-8",
)
def test_model_selection():
    a, b = (_model_selection(lib, (2, 3, 4), 3) for lib in LIBS.values())
    np.testing.assert_array_equal(b[0], a[0])
    for (aic_a, bic_a, ll_a, ma), (aic_b, bic_b, ll_b, mb) in zip(a[1], b[1]):
        assert mb.monitor_.iter == ma.monitor_.iter
        assert (aic_b, bic_b, ll_b) == pytest.approx((aic_a, bic_a, ll_a), rel=1e-9)
        _close(ma.means_, mb.means_)
    assert b[2] == a[2]  # the shared generator is left in the same state


def _multinomial(lib):
    vocabulary = ["tail", "fetch", "mouse", "food"]
    observations = [
        ["tail", "mouse", "mouse", "food", "mouse"],
        ["food", "mouse", "mouse", "food", "mouse"],
        ["tail", "mouse", "mouse", "tail", "mouse"],
        ["food", "mouse", "food", "food", "tail"],
        ["tail", "fetch", "mouse", "food", "tail"],
        ["tail", "fetch", "fetch", "food", "fetch"],
        ["fetch", "fetch", "fetch", "food", "tail"],
        ["food", "mouse", "food", "food", "tail"],
        ["tail", "mouse", "mouse", "tail", "mouse"],
        ["fetch", "fetch", "fetch", "fetch", "fetch"],
    ]
    data = np.array([[s.count(w) for w in vocabulary] for s in observations])
    lengths = [len(data)] * 5
    sequences = np.tile(data, (5, 1))
    model = lib.MultinomialHMM(n_components=2, n_trials=5, n_iter=50, init_params="")
    model.n_features = 4
    model.startprob_ = np.array([0.6, 0.4])
    model.transmat_ = np.array([[0.8, 0.2], [0.2, 0.8]])
    model.emissionprob_ = np.array([[0.25, 0.1, 0.4, 0.25], [0.2, 0.5, 0.1, 0.2]])
    model.fit(sequences, lengths)
    np.random.seed(7)  # noqa: NPY002 (random_state=None: numpy's global generator)
    new = lib.MultinomialHMM(n_components=2, n_trials=5, n_iter=50, init_params="ste")
    new.fit(sequences, lengths)
    return [(m, *m.decode(sequences)) for m in (model, new)]


def test_multinomial():
    for (ma, la, sa), (mb, lb, sb) in zip(_multinomial(hh), _multinomial(bayeskit)):
        for attr in ("startprob_", "transmat_", "emissionprob_"):
            _close(getattr(ma, attr), getattr(mb, attr))
        assert lb == pytest.approx(la, rel=1e-9)
        np.testing.assert_array_equal(sb, sa)


EARTHQUAKES = np.array(
    [13, 14, 8, 10, 16, 26, 32, 27, 18, 32, 36, 24, 22, 23, 22, 18, 25, 21, 21, 14,
     8, 11, 14, 23, 18, 17, 19, 20, 22, 19, 13, 26, 13, 14, 22, 24, 21, 22, 26, 21,
     23, 24, 27, 41, 31, 27, 35, 26, 28, 36, 39, 21, 17, 22, 17, 19, 15, 34, 10, 15,
     22, 18, 15, 20, 15, 22, 19, 16, 30, 27, 29, 23, 20, 16, 21, 21, 25, 16, 18, 15,
     18, 14, 10, 15, 8, 15, 6, 11, 8, 7, 18, 16, 13, 12, 13, 20, 15, 16, 12, 18,
     15, 16, 13, 15, 16, 11, 11]
)  # fmt: skip


def _poisson(lib):
    X = EARTHQUAKES[:, None]
    models = []
    for n_components in range(1, 5):
        for idx in range(10):
            model = lib.PoissonHMM(
                n_components=n_components, random_state=idx, n_iter=10
            )
            models.append(model.fit(X))
    scores = [m.score(X) for m in models]
    best = models[int(np.argmax(scores))]
    return models, scores, best.predict(X), best.predict_proba(X).mean(axis=0)


def test_poisson():
    """All 40 models of the example: the same lambdas and scores."""
    a, b = _poisson(hh), _poisson(bayeskit)
    for ma, mb in zip(a[0], b[0]):
        for attr in ("startprob_", "transmat_", "lambdas_"):
            _close(getattr(ma, attr), getattr(mb, attr))
    _close(a[1], b[1], rtol=1e-9)
    np.testing.assert_array_equal(b[2], a[2])
    _close(a[3], b[3])
