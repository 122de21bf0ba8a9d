"""The triple of a hidden Markov model is built once per fit and read after.

``_make_components()`` builds ``(structure, emission, prior)`` from the
hyperparameters and the size fit fixed. Prediction reads the stored triple
(and the parameters validated under it) instead of building it again; a
hyperparameter changed after fit, and parameters set by hand (assigned or
changed in place, as hmmlearn's users do), are still honoured: the answers
are checked against hmmlearn with the same parameters and against closed
forms.
"""

import os
import sys
import warnings

import numpy as np
import pytest

import bayeskit
from bayeskit import (
    GMMHMM,
    CategoricalHMM,
    GaussianHMM,
    HiddenMarkovModel,
    MultinomialHMM,
    PoissonHMM,
)
from bayeskit import priors as prior_module
from bayeskit._base.em import LatentPrior
from bayeskit.graph import ChainPrior

hmm = pytest.importorskip("hmmlearn.hmm")

_ROOT = os.path.dirname(bayeskit.__file__) + os.sep
_PRIORS = (
    *(c for c in vars(prior_module).values() if isinstance(c, type)),
    ChainPrior,
    LatentPrior,
)


def _file_of(frame):
    """The package file (relative) a frame runs in; a dataclass's generated
    ``__init__`` counts as its class's module. None outside the package."""
    name = frame.f_code.co_filename
    if name.startswith(_ROOT):
        return name[len(_ROOT) :]
    if name == "<string>":
        module = sys.modules.get(type(frame.f_locals.get("self")).__module__)
        name = getattr(module, "__file__", None) or ""
        if name.startswith(_ROOT):
            return name[len(_ROOT) :]
    return None


def _probe(call):
    """``(crossings, priors)`` of ``call()``: the calls from one file of the
    package into a function of another, and the prior objects built. The
    compiled kernels are leaves (``_jit.py`` runs small work interpreted until
    they are compiled, which says nothing of the call path)."""
    crossings, priors = [], []

    def profile(frame, event, arg):
        if event != "call" or frame.f_back is None:
            return
        callee, caller = _file_of(frame), _file_of(frame.f_back)
        if callee is None or caller is None or caller == "_jit.py":
            return
        if frame.f_code.co_name in ("__init__", "__post_init__"):
            if isinstance(frame.f_locals.get("self"), _PRIORS):
                priors.append(type(frame.f_locals["self"]).__name__)
        if callee.startswith("priors" + os.sep):
            priors.append(frame.f_code.co_name)
        if callee != caller:
            crossings.append((caller, callee, frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return crossings, priors


@pytest.mark.parametrize("covariance_type", ["diag", "full", "spherical", "tied"])
def test_gaussian_predict_proba_crosses_few_files_and_builds_no_prior(
    covariance_type,
):
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(m, 1.0, size=(60, 3)) for m in (-3, 0, 3)])
    model = GaussianHMM(3, covariance_type, random_state=0, n_iter=5).fit(X)
    model.predict_proba(X[:50])  # the kernels' first call
    crossings, priors = _probe(lambda: model.predict_proba(X[:50]))
    assert priors == []
    assert len(crossings) <= 20, crossings


def _count_builds(call):
    builds = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "_make_components":
            builds.append(frame)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return len(builds)


def _models():
    rng = np.random.default_rng(1)
    real = rng.normal(size=(80, 2)) + np.repeat([[0, 0], [4, 4]], 40, axis=0)
    counts = rng.poisson(3.0, size=(80, 2))
    symbols = rng.integers(0, 3, size=(80, 1))
    return [
        (GaussianHMM(2, random_state=0), real),
        (GMMHMM(2, n_mix=2, random_state=0), real),
        (PoissonHMM(2, random_state=0), counts),
        (MultinomialHMM(2, n_trials=6, random_state=0), counts[:, :1].repeat(2, 1)),
        (CategoricalHMM(2, random_state=0), symbols),
        (HiddenMarkovModel(2, emission="poisson", random_state=0), counts),
    ]


@pytest.mark.parametrize("index", range(6))
def test_the_triple_is_built_once_per_fit_and_never_after(index):
    model, X = _models()[index]
    if isinstance(model, MultinomialHMM):
        X = np.column_stack([X[:, 0], 6 - X[:, 0]]).clip(0, 6)
        X[:, 1] = 6 - X[:, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _count_builds(lambda: model.fit(X, [40, 40])) == 1
        calls = [
            lambda: model.predict_proba(X),
            lambda: model.predict(X),
            lambda: model.score(X),
            lambda: model.decode(X, algorithm="map"),
            lambda: model.summarize(X),
            lambda: model.bic(X),
            lambda: model.aic(X),
        ]
        if not isinstance(model, MultinomialHMM):
            calls.append(lambda: model.sample(5, random_state=0))
        for call in calls:
            assert _count_builds(call) == 0
        # A hyperparameter changed after fit: built again, once.
        model.set_params(startprob_prior=2.0)
        assert _count_builds(lambda: model.score(X)) == 1
        assert _count_builds(lambda: model.score(X)) == 0


def _peer_gaussian(model):
    peer = hmm.GaussianHMM(
        model.n_components, model.covariance_type, init_params="", params=""
    )
    peer.n_features = model.means_.shape[1]
    peer.startprob_ = np.array(model.startprob_, copy=True)
    peer.transmat_ = np.array(model.transmat_, copy=True)
    peer.means_ = np.array(model.means_, copy=True)
    peer.covars_ = np.array(model.covariances_, copy=True)
    return peer


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("covariance_type", ["diag", "full"])
def test_parameters_set_by_hand_between_calls_give_hmmlearns_answer(
    seed, covariance_type
):
    rng = np.random.default_rng(seed)
    k, d = 3, 2
    X = rng.normal(size=(90, d)) + np.repeat(rng.normal(0, 4, size=(3, d)), 30, 0)
    model = GaussianHMM(k, covariance_type, random_state=seed, n_iter=4).fit(X)

    def check():
        peer = _peer_gaussian(model)
        np.testing.assert_allclose(
            model.predict_proba(X), peer.predict_proba(X), rtol=1e-9, atol=1e-12
        )
        np.testing.assert_allclose(model.score(X), peer.score(X), rtol=1e-10)
        assert np.array_equal(model.predict(X), peer.predict(X))

    check()
    # Assigned anew.
    model.means_ = model.means_ + rng.normal(size=(k, d))
    check()
    # Changed in place (the stored parameters must not hide it).
    model.means_[0] += 1.0
    check()
    model.transmat_[:] = rng.dirichlet(np.ones(k), size=k)
    check()
    model.startprob_[:] = rng.dirichlet(np.ones(k))
    check()
    covars = model.covariances_
    covars *= 1.5
    model.covars_ = covars
    check()


@pytest.mark.parametrize("seed", range(5))
def test_categorical_emissions_changed_in_place_are_read(seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(120, 1))
    model = CategoricalHMM(2, random_state=seed, n_iter=3).fit(X)
    model.score(X)
    model.emissionprob_[:] = rng.dirichlet(np.ones(4), size=2)
    peer = hmm.CategoricalHMM(2, init_params="", params="", n_features=4)
    peer.startprob_ = model.startprob_.copy()
    peer.transmat_ = model.transmat_.copy()
    peer.emissionprob_ = model.emissionprob_.copy()
    np.testing.assert_allclose(model.score(X), peer.score(X), rtol=1e-10)
    np.testing.assert_allclose(
        model.predict_proba(X), peer.predict_proba(X), rtol=1e-9, atol=1e-12
    )


def test_hyperparameters_changed_after_fit_are_honoured():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(100, 2))
    n = len(X)
    model = GaussianHMM(3, "diag", random_state=0, n_iter=3).fit(X)
    k, d = 3, 2

    def bic(n_free):
        return -2 * model.score(X) + n_free * np.log(n)

    # 'params' says which parameters are free (BIC's count, in closed form).
    full = (k - 1) + k * (k - 1) + k * d + k * d
    np.testing.assert_allclose(model.bic(X), bic(full), rtol=1e-12)
    model.set_params(params="st")
    np.testing.assert_allclose(model.bic(X), bic((k - 1) + k * (k - 1)), rtol=1e-12)
    model.params = "stmc"  # assigned, not through set_params
    np.testing.assert_allclose(model.bic(X), bic(full), rtol=1e-12)
    # A prior given twice is refused when the triple is built again, as a
    # model built afresh refuses it.
    model.set_params(covariance_prior_weight=1.0, covars_prior=0.5)
    with pytest.raises(ValueError, match="covariance_prior_weight"):
        model.predict_proba(X)
    model.set_params(covariance_prior_weight=0.0, covars_prior=1e-2)
    # A different number of states: the fitted tables no longer fit.
    model.set_params(n_components=2)
    with pytest.raises(ValueError, match="startprob_"):
        model.predict_proba(X)
