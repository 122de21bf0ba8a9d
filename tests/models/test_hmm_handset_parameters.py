"""Parameters set by hand, as hmmlearn's users set them (``init_params=""``):
valid ones give hmmlearn's scores, invalid ones (not finite, a covariance that
is not symmetric positive definite, a wrong shape) a ValueError naming the
attribute at fit, score, predict and sample, never a numpy or scipy message
or NaN; ``sample``'s ``n_samples`` is checked by every HMM."""

import warnings

import numpy as np
import pytest

from bayeskit import GMMHMM, CategoricalHMM, GaussianHMM, MultinomialHMM, PoissonHMM

hmm = pytest.importorskip("hmmlearn.hmm")

TYPES = ["full", "tied", "diag", "spherical"]
K, D = 2, 3


def covars(rng, covariance_type):
    mats = []
    for _ in range(K):
        B = rng.normal(size=(D, D))
        mats.append(B @ B.T / D + np.eye(D))
    return {
        "full": np.stack(mats),
        "tied": mats[0],
        "diag": np.stack([np.diag(m) for m in mats]),
        "spherical": np.array([1.5, 0.7]),
    }[covariance_type]


def handset(cls, rng, covariance_type, **changes):
    model = cls(K, covariance_type, init_params="", n_iter=2)
    model.startprob_ = np.array([0.6, 0.4])
    model.transmat_ = np.array([[0.9, 0.1], [0.2, 0.8]])
    model.means_ = rng.normal(size=(K, D))
    model.covars_ = covars(rng, covariance_type)
    for name, value in changes.items():
        setattr(model, name, value)
    return model


def X_of(rng):
    return rng.normal(size=(30, D))


@pytest.mark.parametrize("covariance_type", TYPES)
def test_valid_handset_parameters_score_as_hmmlearn(covariance_type, rng):
    X = X_of(rng)
    ours = handset(GaussianHMM, np.random.default_rng(1), covariance_type)
    theirs = handset(hmm.GaussianHMM, np.random.default_rng(1), covariance_type)
    np.testing.assert_allclose(ours.score(X), theirs.score(X), rtol=1e-10)
    np.testing.assert_allclose(ours.covars_, theirs.covars_, rtol=1e-14)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


def _calls(model, X):
    return {
        "fit": lambda: model.fit(X),
        "score": lambda: model.score(X),
        "predict": lambda: model.predict(X),
        "sample": lambda: model.sample(5, random_state=0),
    }


def _bad_covars(covariance_type, kind, rng):
    c = np.array(covars(rng, covariance_type), copy=True)
    if kind == "nan":
        c.flat[0] = np.nan
    elif kind == "inf":
        c.flat[-1] = np.inf
    elif kind == "not_symmetric":
        c[..., 0, 1] += 0.5
    elif kind == "not_positive_definite":
        if c.ndim >= 2 and covariance_type in ("full", "tied"):
            c[..., 0, 1] = c[..., 1, 0] = 50.0
        else:
            c.flat[0] = -1.0
    return c


CASES = [
    (t, kind)
    for t in TYPES
    for kind in ("nan", "inf", "not_symmetric", "not_positive_definite")
    if not (kind == "not_symmetric" and t in ("diag", "spherical"))
]


@pytest.mark.parametrize(("covariance_type", "kind"), CASES)
def test_invalid_covars_are_errors_naming_covars(covariance_type, kind, rng):
    bad = _bad_covars(covariance_type, kind, rng)
    if kind in ("not_symmetric", "not_positive_definite"):
        # hmmlearn rejects these too (when they are set).
        with pytest.raises(ValueError):
            hmm.GaussianHMM(K, covariance_type).covars_ = bad
    X = X_of(rng)
    for method in ("fit", "score", "predict", "sample"):
        model = handset(GaussianHMM, np.random.default_rng(2), covariance_type)
        model.covars_ = bad
        with pytest.raises(ValueError, match=r"covars_"):
            _calls(model, X)[method]()


@pytest.mark.parametrize("covariance_type", ["full", "diag"])
@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("means_", np.array([[0.0, np.nan, 0.0], [1.0, 1.0, 1.0]])),
        ("means_", np.array([[0.0, np.inf, 0.0], [1.0, 1.0, 1.0]])),
        ("means_", np.zeros((3, D))),
        ("means_", np.zeros(D)),
        ("startprob_", np.array([np.nan, 1.0])),
        ("startprob_", np.array([1.0])),
        ("startprob_", np.array([0.7, 0.7])),
        ("transmat_", np.array([[np.nan, 1.0], [0.5, 0.5]])),
        ("transmat_", np.array([[-0.5, 1.5], [0.5, 0.5]])),
        ("transmat_", np.eye(3)),
    ],
    ids=[
        "means-nan",
        "means-inf",
        "means-states",
        "means-1d",
        "start-nan",
        "start-shape",
        "start-sum",
        "trans-nan",
        "trans-negative",
        "trans-shape",
    ],
)
def test_invalid_handset_parameters_are_errors_naming_them(
    covariance_type, name, value, rng
):
    X = X_of(rng)
    for method in ("fit", "score", "predict", "sample"):
        model = handset(GaussianHMM, np.random.default_rng(3), covariance_type)
        setattr(model, name, value)
        with pytest.raises(ValueError, match=name):
            _calls(model, X)[method]()


@pytest.mark.parametrize("covariance_type", TYPES)
def test_covars_of_the_wrong_shape_are_errors_naming_covars(covariance_type, rng):
    X = X_of(rng)
    wrong = {
        "full": np.stack([np.eye(D + 1)] * K),
        "tied": np.eye(D + 1),
        "diag": np.ones((K, D + 1)),
        "spherical": np.ones(K + 1),
    }[covariance_type]
    model = handset(GaussianHMM, rng, covariance_type)
    with pytest.raises(ValueError, match="covars_"):
        model.covars_ = wrong
        model.score(X)


def _models(rng):
    g = handset(GaussianHMM, rng, "diag")
    c = CategoricalHMM(K, n_features=3, init_params="")
    c.emissionprob_ = np.full((K, 3), 1 / 3)
    p = PoissonHMM(K, init_params="")
    p.lambdas_ = np.ones((K, 2))
    m = MultinomialHMM(K, n_trials=3, init_params="")
    m.emissionprob_ = np.full((K, 3), 1 / 3)
    gm = GMMHMM(K, n_mix=2, init_params="")
    gm.weights_ = np.full((K, 2), 0.5)
    gm.means_ = np.zeros((K, 2, 2))
    gm.covars_ = np.ones((K, 2, 2))
    models = [g, c, p, m, gm]
    for model in models[1:]:
        model.startprob_ = np.array([0.6, 0.4])
        model.transmat_ = np.array([[0.9, 0.1], [0.2, 0.8]])
    return models


@pytest.mark.parametrize(
    ("n_samples", "error"),
    [
        (2.5, TypeError),
        ("3", TypeError),
        (None, TypeError),
        (True, TypeError),
        (-1, ValueError),
    ],
)
def test_sample_checks_n_samples_in_every_hmm(n_samples, error, rng):
    """hmmlearn passes n_samples on to range() (a TypeError about 'float' or
    'str' objects, or one sample for -1); every bayeskit HMM names it."""
    for model in _models(rng):
        with pytest.raises(error, match="n_samples must be a non-negative integer"):
            model.sample(n_samples)
    theirs = handset(hmm.GaussianHMM, rng, "diag")
    if n_samples in (2.5, "3"):
        with pytest.raises(TypeError):
            theirs.sample(n_samples)


def test_sample_takes_numpy_integers_and_zero(rng):
    for model in _models(rng):
        X, states = model.sample(np.int64(4), random_state=0)
        assert len(X) == len(states) == 4
        X, states = model.sample(0, random_state=0)
        assert len(X) == len(states) == 0


def test_fit_from_handset_parameters_keeps_hmmlearns_answer(rng):
    """A checked start changes nothing for valid values: Baum-Welch from
    hand-set parameters gives hmmlearn's parameters."""
    X = X_of(rng)
    ours = handset(GaussianHMM, np.random.default_rng(4), "full")
    theirs = handset(hmm.GaussianHMM, np.random.default_rng(4), "full")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours.fit(X)
        theirs.fit(X)
    np.testing.assert_allclose(ours.means_, theirs.means_, rtol=1e-8)
    np.testing.assert_allclose(ours.covars_, theirs.covars_, rtol=1e-8)


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"means_weight": np.ones(K + 1)}, "means_weight"),
        ({"means_prior": np.zeros((K + 1, D))}, "means_prior"),
        ({"covars_prior": -1.0}, "covars_prior"),
        ({"covars_weight": np.ones(K), "covariance_type": "tied"}, "covars_weight"),
    ],
)
def test_priors_that_do_not_fit_are_errors_naming_them(params, name, rng):
    model = GaussianHMM(K, n_iter=1, random_state=0).set_params(**params)
    with pytest.raises(ValueError, match=rf"^{name}"):
        model.fit(X_of(rng))


@pytest.mark.parametrize("covariance_type", ["full", "tied", "diag", "spherical"])
def test_gmmhmm_handset_covars_are_checked_as_hmmlearn_checks_them(
    covariance_type, rng
):
    """A non-symmetric matrix, or a negative variance, in GMMHMM's covars_ is
    a ValueError naming covars_ (hmmlearn's own check refuses the same)."""
    from hmmlearn.hmm import GMMHMM as PeerGMMHMM

    X = rng.normal(size=(20, 2))
    ours = GMMHMM(K, n_mix=2, covariance_type=covariance_type, random_state=0)
    ours.fit(X)
    covars = ours.covars_.copy()
    if covariance_type in ("full", "tied"):
        covars[..., 0, 1] += 0.5  # no longer symmetric
    else:
        covars[0, 0] = -1.0
    ours.covars_ = covars
    ours.init_params = ""
    with pytest.raises(ValueError, match="covars_"):
        ours.score(X)
    peer = PeerGMMHMM(K, n_mix=2, covariance_type=covariance_type, init_params="")
    for name in ("startprob_", "transmat_", "weights_", "means_"):
        setattr(peer, name, getattr(ours, name))
    peer.covars_ = covars
    with pytest.raises(ValueError):
        peer.score(X)
