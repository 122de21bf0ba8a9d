"""The same ``random_state`` gives hmmlearn's start and hmmlearn's samples.

hmmlearn 0.3.3 draws its start in ``_init``: the start distribution and every
row of the transitions from Dirichlet(1 / n_components) with
``check_random_state(random_state)``, then the emissions (CategoricalHMM and
MultinomialHMM: uniform rows from a second ``check_random_state``; PoissonHMM:
Gamma rates from it; GaussianHMM and GMMHMM: k-means seeded with
``random_state``). ``sample`` draws state, observation, state, observation...
Every test runs hmmlearn on the same data and parameters as the reference.
"""

import logging

import numpy as np
import pytest

import bayeskit

hh = pytest.importorskip("hmmlearn.hmm")

SEEDS = [0, 1, 7, 12345]


@pytest.fixture(autouse=True)
def _quiet():
    # hmmlearn's MultinomialHMM announces its change of meaning on every
    # construction; the degenerate-solution notices are not under test.
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def _data(name, rng):
    if name == "categorical":
        return rng.randint(0, 4, (80, 1))
    if name == "gaussian":
        return np.r_[rng.normal(0, 1, (50, 2)), rng.normal(4, 1.5, (50, 2))]
    if name == "gmm":
        # Three well separated states, each a pair of blobs: no component
        # collapses, where Baum-Welch's rounding would decide the outcome.
        centres = [(0, 0), (0, 3), (12, 0), (12, 3), (0, 12), (3, 12)]
        return np.concatenate([rng.normal(c, 0.7, (40, 2)) for c in centres])
    if name == "poisson":
        return rng.poisson(rng.choice([1.0, 6.0], (80, 1)), (80, 2))
    return rng.multinomial(6, [0.2, 0.3, 0.5], size=80)


# name -> (hmmlearn's class, bayeskit's, keyword arguments, emission attributes)
MODELS = {
    "categorical": (hh.CategoricalHMM, bayeskit.CategoricalHMM, {}, ["emissionprob_"]),
    "gaussian": (hh.GaussianHMM, bayeskit.GaussianHMM, {}, ["means_", "covars_"]),
    "gmm": (
        hh.GMMHMM,
        bayeskit.GMMHMM,
        {"n_mix": 2},
        ["means_", "covars_", "weights_"],
    ),
    "poisson": (hh.PoissonHMM, bayeskit.PoissonHMM, {}, ["lambdas_"]),
    "multinomial": (
        hh.MultinomialHMM,
        bayeskit.MultinomialHMM,
        {"n_trials": 6},
        ["emissionprob_"],
    ),
}
CASES = [
    (name, cov)
    for name in MODELS
    for cov in (
        ("diag", "full", "tied", "spherical")
        if name in ("gaussian", "gmm")
        else (None,)
    )
]


def _pair(name, cov, **kwargs):
    theirs, ours, extra, _ = MODELS[name]
    kw = {**extra, **kwargs}
    if cov is not None:
        kw["covariance_type"] = cov
    return theirs(3, **kw), ours(3, **kw)


def _letters(name):
    return {"gaussian": "mc", "gmm": "mcw", "poisson": "l"}.get(name, "e")


def _assert_same_params(theirs, ours, name, rtol):
    names = ["startprob_", "transmat_", *MODELS[name][3]]
    for attr in names:
        a, b = np.asarray(getattr(theirs, attr)), np.asarray(getattr(ours, attr))
        if (
            attr == "covars_"
            and name == "gaussian"
            and theirs.covariance_type == ("spherical")
        ):
            a, b = theirs._covars_[:, 0], ours.covariances_  # hmmlearn's layout
        np.testing.assert_allclose(b, a, rtol=rtol, atol=rtol, err_msg=attr)


def _reference_params(name, cov, X):
    """Parameters to set by hand (those left out of init_params)."""
    ref, _ = _pair(name, cov, random_state=99, n_iter=3)
    return ref.fit(X)


def _set(model, ref, letters):
    names = {"s": ["startprob_"], "t": ["transmat_"], "e": ["emissionprob_"]}
    names.update(m=["means_"], c=["covars_"], w=["weights_"], l=["lambdas_"])
    for letter in letters:
        for attr in names[letter]:
            value = getattr(ref, attr)
            if attr == "covars_" and hasattr(ref, "_covars_"):
                value = ref._covars_
            setattr(model, attr, np.copy(value))


@pytest.mark.parity
@pytest.mark.parametrize("name, cov", CASES)
def test_start_is_hmmlearns(name, cov):
    """After ``n_iter=0`` the parameters are hmmlearn's start, to 1e-12, for
    every subset of init_params (the others set by hand in both models)."""
    emission = _letters(name)
    subsets = ["st" + emission, "s" + emission, "t" + emission, emission, "st"]
    rng = np.random.RandomState(0)
    for seed in SEEDS:
        X = _data(name, rng)
        ref = _reference_params(name, cov, X)
        for init in subsets:
            theirs, ours = _pair(
                name, cov, random_state=seed, n_iter=0, init_params=init
            )
            given = "".join(c for c in "st" + emission if c not in init)
            if name == "gmm" and "m" not in init:
                # hmmlearn's GMMHMM runs its k-means whatever init_params
                # says; the subset without the means is tested with them.
                continue
            _set(theirs, ref, given)
            _set(ours, ref, given)
            theirs.fit(X)
            ours.fit(X)
            _assert_same_params(theirs, ours, name, rtol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize("name, cov", CASES)
def test_fit_from_a_generator_is_hmmlearns(name, cov):
    """A RandomState goes on drawing as in hmmlearn: the same start after
    n_iter=0, the same fitted parameters after Baum-Welch, and the generator
    left in the same state."""
    rng = np.random.RandomState(1)
    for seed in SEEDS[:2]:
        X = _data(name, rng)
        ra, rb = np.random.RandomState(seed), np.random.RandomState(seed)
        for n_iter, rtol in [(0, 1e-12), (15, 1e-7)]:
            theirs = _pair(name, cov, random_state=ra, n_iter=n_iter, tol=0.0)[0]
            ours = _pair(name, cov, random_state=rb, n_iter=n_iter, tol=0.0)[1]
            _assert_same_params(theirs.fit(X), ours.fit(X), name, rtol=rtol)
            assert ra.rand() == rb.rand()


@pytest.mark.parity
@pytest.mark.parametrize("name, cov", CASES)
def test_fitted_parameters_are_hmmlearns(name, cov):
    """From the same start, Baum-Welch gives hmmlearn's fitted parameters
    (the tolerance covers the rounding of two implementations over 15
    iterations; the starts agree exactly)."""
    rng = np.random.RandomState(2)
    for seed in SEEDS:
        X = _data(name, rng)
        theirs, ours = _pair(name, cov, random_state=seed, n_iter=15, tol=0.0)
        _assert_same_params(theirs.fit(X), ours.fit(X), name, rtol=1e-7)
        assert ours.score(X) == pytest.approx(theirs.score(X), rel=1e-9)


@pytest.mark.parametrize("name", ["categorical", "gaussian", "poisson"])
def test_restarts_are_hmmlearns_starts(name):
    """n_init > 1: the first start is hmmlearn's from random_state, restart
    i hmmlearn's from the i-th seed ``RandomState(random_state).randint``
    draws (with n_iter=0 the last start is kept)."""
    rng = np.random.RandomState(3)
    X = _data(name, rng)
    for seed in SEEDS[:2]:
        seeds = np.random.RandomState(seed).randint(np.iinfo(np.int32).max, size=2)
        for n_init, expected in [(1, seed), (2, seeds[0]), (3, seeds[1])]:
            _, ours = _pair(name, None, random_state=seed, n_iter=0)
            ours.set_params(n_init=n_init)
            theirs, _ = _pair(name, None, random_state=int(expected), n_iter=0)
            _assert_same_params(theirs.fit(X), ours.fit(X), name, rtol=1e-12)


def _by_hand(name, cov, rng):
    """hmmlearn's and bayeskit's model with the same parameters set by hand."""
    k, d = 3, 2
    theirs, ours = _pair(name, cov, init_params="")
    start = rng.dirichlet(np.ones(k))
    trans = rng.dirichlet(np.ones(k), size=k)
    trans[0] = [0.0, 0.6, 0.4]  # a structural zero
    values = {"startprob_": start, "transmat_": trans}
    if name == "categorical":
        values["emissionprob_"] = rng.dirichlet(np.ones(5), size=k)
    elif name == "multinomial":
        values["emissionprob_"] = rng.dirichlet(np.ones(4), size=k)
    elif name == "poisson":
        values["lambdas_"] = rng.uniform(0.5, 9.0, (k, d))
    else:
        shape = (k,) if name == "gaussian" else (k, 2)
        values["means_"] = rng.normal(0, 5, (*shape, d))
        a = rng.normal(size=(*shape, d, d))
        full = a @ np.swapaxes(a, -1, -2) + np.eye(d)
        values["covars_"] = {
            "full": full,
            "diag": rng.uniform(0.5, 2.0, (*shape, d)),
            "spherical": rng.uniform(0.5, 2.0, shape),
            "tied": full[0] if name == "gaussian" else full[:, 0],
        }[cov]
        if name == "gmm":
            values["weights_"] = rng.dirichlet(np.ones(2), size=k)
    for model in (theirs, ours):
        model.n_features = (
            5 if name == "categorical" else (4 if name == "multinomial" else d)
        )
        for attr, value in values.items():
            setattr(model, attr, np.copy(value))
    return theirs, ours


@pytest.mark.parity
@pytest.mark.parametrize("name, cov", CASES)
def test_sample_is_hmmlearns(name, cov):
    """``sample(n, random_state=s)`` is hmmlearn's, bit for bit, with the same
    dtype and shape, from startprob_ or from a given currstate."""
    rng = np.random.RandomState(4)
    for seed in SEEDS:
        theirs, ours = _by_hand(name, cov, rng)
        for n, currstate in [(1, None), (40, None), (40, 2), (7, 0)]:
            xa, za = theirs.sample(n, random_state=seed, currstate=currstate)
            xb, zb = ours.sample(n, random_state=seed, currstate=currstate)
            assert xb.dtype == xa.dtype and xb.shape == xa.shape
            assert zb.dtype == za.dtype and zb.shape == za.shape
            np.testing.assert_array_equal(xb, xa)
            np.testing.assert_array_equal(zb, za)
        # A shared generator goes on as in hmmlearn.
        ra, rb = np.random.RandomState(seed), np.random.RandomState(seed)
        for _ in range(2):
            np.testing.assert_array_equal(
                ours.sample(5, random_state=rb)[0], theirs.sample(5, random_state=ra)[0]
            )


@pytest.mark.parity
@pytest.mark.parametrize("name", ["categorical", "poisson", "multinomial"])
def test_sample_after_fit_goes_on_from_the_start_generator(name):
    """hmmlearn's CategoricalHMM, PoissonHMM and MultinomialHMM replace an int
    random_state by the generator their emission start drew from, so
    ``sample()`` after ``fit`` goes on drawing from it; bayeskit's sample()
    draws the same (and the same again on the next call)."""
    rng = np.random.RandomState(5)
    for seed in SEEDS[:3]:
        X = _data(name, rng)
        theirs, ours = _pair(name, None, random_state=seed, n_iter=0)
        theirs.fit(X)
        ours.fit(X)
        for n in (30, 20):
            xa, za = theirs.sample(n)
            xb, zb = ours.sample(n)
            np.testing.assert_array_equal(xb, xa)
            np.testing.assert_array_equal(zb, za)
