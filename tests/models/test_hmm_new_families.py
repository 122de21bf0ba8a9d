"""PoissonHMM, GMMHMM and MultinomialHMM: parity with hmmlearn 0.3.3 on identical
parameters (score, posteriors, Viterbi path, one Baum-Welch step), closed forms
where bayeskit's update differs, structural identities, the monotone log
posterior, and the hyperparameters' effects."""

import warnings

import numpy as np
import pytest
from scipy.stats import multinomial, poisson

from bayeskit import GMMHMM, CategoricalHMM, GaussianHMM, MultinomialHMM, PoissonHMM


def chain(rng, k):
    return rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k) * 2, size=k)


def set_params(model, **params):
    for name, value in params.items():
        setattr(model, name, np.array(value, copy=True))
    return model


def quiet_fit(model, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(*args)


def assert_inference_parity(ours, ref, X, lengths):
    assert ours.score(X, lengths) == pytest.approx(ref.score(X, lengths), rel=1e-10)
    np.testing.assert_allclose(
        ours.predict_proba(X, lengths), ref.predict_proba(X, lengths), atol=1e-10
    )
    (lo, po), (lr, pr) = ours.decode(X, lengths), ref.decode(X, lengths)
    np.testing.assert_array_equal(po, pr)
    assert lo == pytest.approx(lr, rel=1e-10)
    np.testing.assert_array_equal(ours.predict(X, lengths), ref.predict(X, lengths))


# -- PoissonHMM ------------------------------------------------------------------------


def poisson_case(seed=0, k=3, d=2):
    rng = np.random.default_rng(seed)
    start, trans = chain(rng, k)
    lambdas = rng.uniform(0.5, 8, size=(k, d))
    lengths = [40, 25, 35]
    X = rng.poisson(3.0, size=(sum(lengths), d))
    return dict(startprob_=start, transmat_=trans, lambdas_=lambdas), X, lengths


@pytest.mark.parity
def test_poisson_parity_with_hmmlearn():
    hh = pytest.importorskip("hmmlearn.hmm")
    params, X, lengths = poisson_case()
    ours = set_params(PoissonHMM(3, n_iter=1, init_params="", tol=0), **params)
    ref = set_params(hh.PoissonHMM(3, n_iter=1, init_params="", tol=-1), **params)
    assert_inference_parity(ours, ref, X, lengths)
    quiet_fit(ours, X, lengths)
    quiet_fit(ref, X, lengths)
    for name in params:
        np.testing.assert_allclose(getattr(ours, name), getattr(ref, name), atol=1e-10)
    # One state: hmmlearn's update with a prior is the Gamma posterior mean too.
    one = {"startprob_": [1.0], "transmat_": [[1.0]], "lambdas_": [[2.0, 3.0]]}
    kw = dict(lambdas_prior=2.0, lambdas_weight=0.5, n_iter=1, init_params="")
    ours = set_params(PoissonHMM(1, tol=0, **kw), **one)
    ref = set_params(hh.PoissonHMM(1, tol=-1, **kw), **one)
    quiet_fit(ours, X, lengths)
    quiet_fit(ref, X, lengths)
    np.testing.assert_allclose(ours.lambdas_, ref.lambdas_, rtol=1e-12)
    np.testing.assert_allclose(ours.lambdas_[0], (2.0 + X.sum(0)) / (0.5 + len(X)))


def test_poisson_prior_is_each_states_gamma_posterior_mean():
    """With several states, each state's rate is (alpha + sum_t g_tk x_t) /
    (beta + sum_t g_tk), g the step posteriors (hmmlearn 0.3.3 divides by the
    weight of all states instead; the docstring says so)."""
    params, X, lengths = poisson_case(seed=1)
    alpha, beta = np.array([[1.0, 4.0]]), 2.0
    model = set_params(
        PoissonHMM(3, lambdas_prior=alpha, lambdas_weight=beta, n_iter=1, tol=0,
                   init_params="", per_state_prior=True),
        **params,
    )  # fmt: skip
    gamma = model.predict_proba(X, lengths)
    expected = (alpha + gamma.T @ X) / (beta + gamma.sum(0))[:, None]
    quiet_fit(model, X, lengths)
    np.testing.assert_allclose(model.lambdas_, expected, rtol=1e-10)
    ref = set_params(PoissonHMM(3), **params)
    log_lik = [poisson.logpmf(X, lam).sum(axis=1) for lam in params["lambdas_"]]
    emission = model._make_components()[1].log_likelihood(
        X.astype(float), ref._current_params().emission
    )
    np.testing.assert_allclose(emission, np.column_stack(log_lik), rtol=1e-12)


def test_poisson_input_and_zero_rates():
    params, X, _ = poisson_case()
    model = set_params(PoissonHMM(3), **params)
    for bad in (X - 1.0, X + 0.5):
        with pytest.raises(ValueError, match="counts"):
            model.score(bad)
    # A zero rate emits only zeros: any other count is impossible there.
    params["lambdas_"][0, 0] = 0.0
    zero = set_params(PoissonHMM(3), **params)
    log_e = zero._make_components()[1].log_likelihood(
        np.array([[0.0, 2.0], [1.0, 2.0]]), zero._current_params().emission
    )
    assert np.isfinite(log_e[0]).all() and log_e[1, 0] == -np.inf
    with pytest.raises(ValueError, match="lambdas_ must have shape"):
        set_params(PoissonHMM(3), **{**params, "lambdas_": np.ones((2, 2))}).score(X)


# -- MultinomialHMM --------------------------------------------------------------------


def multinomial_case(seed=0, k=3, d=4, n=6):
    rng = np.random.default_rng(seed)
    start, trans = chain(rng, k)
    prob = rng.dirichlet(np.ones(d), size=k)
    lengths = [30, 20, 25]
    X = rng.multinomial(n, np.full(d, 1 / d), size=sum(lengths))
    return dict(startprob_=start, transmat_=trans, emissionprob_=prob), X, lengths


@pytest.mark.parity
def test_multinomial_parity_with_hmmlearn():
    hh = pytest.importorskip("hmmlearn.hmm")
    params, X, lengths = multinomial_case()
    ours = set_params(
        MultinomialHMM(3, n_trials=6, n_iter=1, init_params="", tol=0), **params
    )
    ref = set_params(
        hh.MultinomialHMM(3, n_trials=6, n_iter=1, init_params="", tol=-1), **params
    )
    assert_inference_parity(ours, ref, X, lengths)
    quiet_fit(ours, X, lengths)
    quiet_fit(ref, X, lengths)
    for name in params:
        np.testing.assert_allclose(getattr(ours, name), getattr(ref, name), atol=1e-10)
    log_lik = [multinomial.logpmf(X, 6, p) for p in params["emissionprob_"]]
    fixed = set_params(MultinomialHMM(3), **params)
    emission = fixed._make_components()[1].log_likelihood(
        X.astype(float), fixed._current_params().emission
    )
    np.testing.assert_allclose(emission, np.column_stack(log_lik), rtol=1e-12)


def test_multinomial_one_trial_is_the_categorical_hmm_and_its_prior():
    params, _, lengths = multinomial_case(seed=3)
    rng = np.random.default_rng(4)
    symbols = rng.integers(0, 4, size=(75, 1))
    onehot = np.eye(4, dtype=int)[symbols[:, 0]]
    for prior in (1.0, 2.5):
        kw = dict(n_iter=3, init_params="", tol=0, emissionprob_prior=prior)
        multi = set_params(MultinomialHMM(3, n_trials=1, **kw), **params)
        cat = set_params(CategoricalHMM(3, n_features=4, **kw), **params)
        assert multi.score(onehot, lengths) == pytest.approx(
            cat.score(symbols, lengths), rel=1e-12
        )
        quiet_fit(multi, onehot, lengths)
        quiet_fit(cat, symbols, lengths)
        np.testing.assert_allclose(multi.emissionprob_, cat.emissionprob_, rtol=1e-10)
        np.testing.assert_allclose(multi.transmat_, cat.transmat_, rtol=1e-10)


def test_multinomial_n_trials():
    params, X, lengths = multinomial_case()
    model = set_params(MultinomialHMM(3, n_trials=6), **params)
    sample, _ = model.sample(200, random_state=0)
    assert (sample.sum(axis=1) == 6).all()
    bad = X.copy()
    bad[0, 0] += 1
    with pytest.raises(ValueError, match="sum to n_trials"):
        model.score(bad)
    with pytest.raises(ValueError, match="one number of trials"):
        set_params(MultinomialHMM(3), **params).sample(5)
    # n_trials=None reads each row's own total.
    free = set_params(MultinomialHMM(3, n_trials=None), **params)
    X2 = X.copy()
    X2[::2] *= 2
    assert np.isfinite(free.score(X2, lengths))


# -- GMMHMM ----------------------------------------------------------------------------


def gmm_case(cov, seed=0, k=3, m=2, d=2):
    rng = np.random.default_rng(seed)
    start, trans = chain(rng, k)
    weights = rng.dirichlet(np.ones(m) * 3, size=k)
    means = rng.normal(size=(k, m, d)) * 2
    if cov == "spherical":
        covars = rng.uniform(0.5, 2, size=(k, m))
    elif cov == "diag":
        covars = rng.uniform(0.5, 2, size=(k, m, d))
    else:
        a = rng.normal(size=(k, m, d, d)) * 0.4
        covars = a @ np.swapaxes(a, -1, -2) + np.eye(d)
        if cov == "tied":
            covars = covars[:, 0]
    lengths = [40, 30, 50]
    X = rng.normal(size=(sum(lengths), d)) * 2
    params = dict(
        startprob_=start,
        transmat_=trans,
        weights_=weights,
        means_=means,
        covars_=covars,
    )
    return params, X, lengths


_GMM_PRIORS = {
    "hmmlearn's defaults": lambda cov: {},
    "every prior": lambda cov: {
        "weights_prior": 2.0,
        "means_prior": 0.5,
        "means_weight": 1.5,
        "covars_prior": 1.0 if cov in ("diag", "spherical") else 0.5 * np.eye(2),
        "covars_weight": 0.5 if cov in ("diag", "spherical") else 3.0,
    },
}


@pytest.mark.parity
@pytest.mark.parametrize("prior", list(_GMM_PRIORS))
@pytest.mark.parametrize("cov", ["spherical", "diag", "full", "tied"])
def test_gmm_parity_with_hmmlearn(cov, prior):
    hh = pytest.importorskip("hmmlearn.hmm")
    params, X, lengths = gmm_case(cov)
    kw = dict(n_mix=2, covariance_type=cov, n_iter=1, init_params="")
    kw.update(_GMM_PRIORS[prior](cov))
    ours = set_params(GMMHMM(3, tol=0, **kw), **params)
    ref = set_params(hh.GMMHMM(3, tol=-1, random_state=0, **kw), **params)
    assert_inference_parity(ours, ref, X, lengths)
    quiet_fit(ours, X, lengths)
    quiet_fit(ref, X, lengths)
    for name in params:
        np.testing.assert_allclose(
            getattr(ours, name), getattr(ref, name), rtol=1e-10, atol=1e-10
        )


@pytest.mark.parametrize("cov", ["diag", "full", "spherical"])
def test_one_component_gmmhmm_is_a_gaussian_hmm(cov):
    """n_mix=1 under maximum likelihood: the same Baum-Welch as GaussianHMM
    (the covariance from the scatter around the previous means, hmmlearn's
    GMMHMM update, equals it around the new ones after the means settle; one
    step is compared on the means and the transitions)."""
    params, X, lengths = gmm_case(cov, m=1)
    gaussian = dict(
        startprob_=params["startprob_"],
        transmat_=params["transmat_"],
        means_=params["means_"][:, 0],
        covars_=params["covars_"][:, 0],
    )
    gmm = set_params(GMMHMM(3, covariance_type=cov, init_params=""), **params)
    gh = set_params(GaussianHMM(3, cov, init_params=""), **gaussian)
    assert gmm.score(X, lengths) == pytest.approx(gh.score(X, lengths), rel=1e-12)
    np.testing.assert_allclose(
        gmm.predict_proba(X, lengths), gh.predict_proba(X, lengths), atol=1e-12
    )
    kw = dict(n_iter=1, tol=0)
    gmm.set_params(**kw)
    gh.set_params(covars_prior=0, covars_weight=1 if cov != "full" else 0, **kw)
    quiet_fit(gmm, X, lengths)
    quiet_fit(gh, X, lengths)
    np.testing.assert_allclose(gmm.means_[:, 0], gh.means_, rtol=1e-10)
    np.testing.assert_allclose(gmm.transmat_, gh.transmat_, rtol=1e-10)


def test_gmm_shapes_and_errors():
    params, X, _ = gmm_case("full")
    model = set_params(GMMHMM(3, n_mix=2, covariance_type="full"), **params)
    sample, states = model.sample(30, random_state=0)
    assert sample.shape == (30, 2) and states.shape == (30,)
    bad = params["covars_"].copy()
    bad[0, 0] = -np.eye(2)
    full = GMMHMM(3, n_mix=2, covariance_type="full")
    with pytest.raises(ValueError, match="positive definite"):
        set_params(full, **{**params, "covars_": bad}).score(X)
    with pytest.raises(ValueError, match="covars_ must have shape"):
        set_params(GMMHMM(3, n_mix=2, covariance_type="diag"), **params).score(X)
    with pytest.raises(ValueError, match="weights_"):
        set_params(
            GMMHMM(3, n_mix=2, covariance_type="full"),
            **{**params, "weights_": np.ones((3, 2))},
        ).score(X)


# -- all three ------------------------------------------------------------------------


def _fit_histories(make, X, seeds):
    for seed in seeds:
        model = make(seed)
        quiet_fit(model, X)
        yield np.asarray(model.monitor_.history)


@pytest.mark.parametrize(
    "make, data",
    [
        (
            lambda s: PoissonHMM(3, lambdas_prior=1.5, lambdas_weight=0.5,
                                 random_state=s, n_iter=25, tol=0,
                                 per_state_prior=True),
            lambda rng: rng.poisson(np.repeat([1.0, 6.0, 2.0], 40)[:, None], (120, 2)),
        ),
        (
            lambda s: MultinomialHMM(2, emissionprob_prior=1.7, transmat_prior=1.3,
                                     random_state=s, n_iter=25, tol=0),
            lambda rng: rng.multinomial(5, [0.2, 0.3, 0.5], size=100),
        ),
        (
            lambda s: GMMHMM(2, n_mix=2, covariance_type="spherical",
                             random_state=s, n_iter=25, tol=0),
            lambda rng: rng.normal(np.repeat([0.0, 4.0], 50)[:, None], 1, (100, 2)),
        ),
        (
            lambda s: GMMHMM(2, n_mix=2, covariance_type="full", covars_prior=0.1,
                             covars_weight=1.0, random_state=s, n_iter=25, tol=0),
            lambda rng: rng.normal(np.repeat([0.0, 4.0], 50)[:, None], 1, (100, 2)),
        ),
    ],
    ids=["poisson", "multinomial", "gmm-spherical", "gmm-full"],
)  # fmt: skip
def test_the_log_posterior_never_decreases(make, data):
    X = data(np.random.default_rng(0))
    for history in _fit_histories(make, X, range(4)):
        assert np.all(np.diff(history) >= -1e-9 * np.abs(history[1:]))


@pytest.mark.parametrize(
    "model, name, values",
    [
        (PoissonHMM, "lambdas_prior", (0.0, 5.0)),
        (PoissonHMM, "lambdas_weight", (0.0, 5.0)),
        (MultinomialHMM, "emissionprob_prior", (1.0, 3.0)),
        (GMMHMM, "weights_prior", (1.0, 4.0)),
        (GMMHMM, "means_weight", (0.0, 4.0)),
        (GMMHMM, "means_prior", (0.0, 3.0)),
        (GMMHMM, "covariance_type", ("diag", "full")),
        (GMMHMM, "covars_prior", (None, 2.0)),
        (GMMHMM, "covars_weight", (None, 2.0)),
        (GMMHMM, "min_covar", (1e-3, 1.0)),
        (GMMHMM, "n_mix", (1, 3)),
    ],
)
def test_every_hyperparameter_has_an_effect(model, name, values):
    rng = np.random.default_rng(2)
    if model is PoissonHMM:
        X = rng.poisson(np.repeat([1.0, 6.0], 30)[:, None], (60, 2))
    elif model is MultinomialHMM:
        X = rng.multinomial(4, [0.2, 0.3, 0.5], size=60)
    else:
        X = rng.normal(np.repeat([0.0, 3.0], 30)[:, None], 1, (60, 2))
    base = {"n_mix": 2, "means_weight": 1.0} if model is GMMHMM else {}
    if model is PoissonHMM:
        base = {"per_state_prior": True}
    base.pop(name, None)
    fits = [
        quiet_fit(model(2, random_state=0, n_iter=3, **base, **{name: v}), X)
        for v in values
    ]
    assert fits[0].score(X) != pytest.approx(fits[1].score(X), rel=1e-9)


@pytest.mark.parametrize("cls", [PoissonHMM, MultinomialHMM, GMMHMM])
def test_hmmlearn_positional_order(cls):
    hh = pytest.importorskip("hmmlearn.hmm")
    import inspect

    ours = list(inspect.signature(cls).parameters.values())
    theirs = list(inspect.signature(getattr(hh, cls.__name__)).parameters)
    positional = [p.name for p in ours if p.kind is p.POSITIONAL_OR_KEYWORD]
    assert positional == theirs
    defaults = {p.name: p.default for p in ours}
    ref = inspect.signature(getattr(hh, cls.__name__)).parameters
    assert all(defaults[n] == ref[n].default for n in theirs)


@pytest.mark.parametrize("kind", ["poisson", "multinomial", "gmm"])
def test_integer_sequence_weights_are_copies(kind):
    if kind == "poisson":
        params, X, lengths = poisson_case(seed=5)
        make = lambda: set_params(PoissonHMM(3, **kw), **params)  # noqa: E731
    elif kind == "multinomial":
        params, X, lengths = multinomial_case(seed=5)
        make = lambda: set_params(MultinomialHMM(3, **kw), **params)  # noqa: E731
    else:
        params, X, lengths = gmm_case("full", seed=5)
        make = lambda: set_params(  # noqa: E731
            GMMHMM(3, n_mix=2, covariance_type="full", **kw), **params
        )
    kw = dict(n_iter=4, init_params="", tol=0)
    seqs = np.split(X, np.cumsum(lengths)[:-1])
    weights = [2, 0, 3]
    copies = quiet_fit(make(), [s for s, w in zip(seqs, weights) for _ in range(w)])
    weighted = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        weighted.fit(seqs, sequence_weight=weights)
    for name in params:
        np.testing.assert_allclose(
            getattr(weighted, name), getattr(copies, name), rtol=1e-9, atol=1e-12
        )


def test_hmm_classifier_takes_the_new_models_as_templates():
    from bayeskit import HMMClassifier

    rng = np.random.default_rng(9)
    low = [rng.poisson(1.0, (30, 2)) for _ in range(10)]
    high = [  # switching to a high rate half way
        np.vstack([rng.poisson(1.0, (15, 2)), rng.poisson(8.0, (15, 2))])
        for _ in range(10)
    ]
    y = ["low"] * 10 + ["high"] * 10
    clf = HMMClassifier(PoissonHMM(2, random_state=0, n_iter=20))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(low + high, y)
    assert clf.score(low + high, y) >= 0.9


def test_a_poisson_prior_over_several_states_needs_per_state_prior():
    """hmmlearn 0.3.3 weighs the Gamma prior against all states' data, bayeskit
    against each state's: with more than one state the hmmlearn-style call is
    an error naming per_state_prior, never other rates in silence; with one
    state (where the two agree) or no prior, no flag is needed."""
    X = np.random.default_rng(3).poisson(3.0, (40, 2))
    with pytest.raises(ValueError, match="per_state_prior=True"):
        PoissonHMM(2, lambdas_prior=1.0, lambdas_weight=1.0).fit(X)
    quiet_fit(PoissonHMM(2, lambdas_prior=1.0, per_state_prior=True), X)
    quiet_fit(PoissonHMM(1, lambdas_prior=1.0, lambdas_weight=2.0), X)
    quiet_fit(PoissonHMM(2), X)
