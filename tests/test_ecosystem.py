"""Every public estimator in the scikit-learn ecosystem (issue 8, conformance).

``test_common.py`` runs scikit-learn's own estimator checks; this module checks
what users do with the estimators: clone them, set their parameters, pickle
them, put them in pipelines behind a ``ColumnTransformer``, search their
parameters (the prior parameters included) with cross-validation, in parallel
too, score them by log-loss, and wrap them in calibration and thresholding
meta-estimators.

Each estimator is a :class:`Case`: a factory, small data of the kind it takes
(numeric arrays, categorical DataFrames or lists of sequences), and the grid of
its own parameters to search. Where a check cannot apply to an estimator, the
parametrization skips it and says why.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import product

import numpy as np
import pandas as pd
import pytest
from scipy.stats import loguniform, randint
from sklearn.base import clone, is_classifier
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import (
    FixedThresholdClassifier,
    GridSearchCV,
    KFold,
    RandomizedSearchCV,
    StratifiedKFold,
    cross_val_score,
)
from sklearn.pipeline import FunctionTransformer, Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

from bayeskit import (
    BayesianNetwork,
    CategoricalHMM,
    CategoricalNB,
    GaussianHMM,
    GaussianMixture,
    GaussianMixtureClassifier,
    GaussianNB,
    HMMClassifier,
    LinearDiscriminantAnalysis,
    MixedNB,
    QuadraticDiscriminantAnalysis,
    TreeAugmentedNB,
)

# EM on these tiny data may stop at its iteration cap: not what is tested here.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

# -- data ------------------------------------------------------------------------
# Small, noisy and seeded: every class and every category appears in every
# training fold of a 3-fold split, and no model is certain of every row.


def _numeric(n_classes: int = 3, n: int = 90, seed: int = 0):
    """Two or three overlapping Gaussian classes in 3 features, as a DataFrame."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n_classes), n // n_classes)
    centres = np.array([[0.0, 0.0, 0.0], [1.5, 1.0, -1.0], [-1.0, 2.0, 1.0]])
    scales = np.array([1.0, 1.5, 0.7])
    X = centres[y] + rng.normal(size=(len(y), 3)) * scales[y, None]
    names = np.array(["setosa", "versicolor", "virginica"])
    return pd.DataFrame(X, columns=["x0", "x1", "x2"]), names[y]


def _categorical(n_classes: int = 3, n: int = 120, seed: int = 1):
    """Three string columns, each the class's favourite value 60% of the time."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n_classes), n // n_classes)
    values = {
        "outlook": ["sunny", "overcast", "rain"],
        "wind": ["weak", "strong", "calm"],
        "humidity": ["high", "normal", "low"],
    }
    columns = {}
    for shift, (name, labels) in enumerate(values.items()):
        favourite = (y + shift) % 3
        code = np.where(
            rng.random(len(y)) < 0.6, favourite, rng.integers(3, size=len(y))
        )
        columns[name] = np.array(labels, dtype=object)[code]
    return pd.DataFrame(columns), np.array(["no", "yes", "maybe"])[y]


def _mixed(n_classes: int = 3, seed: int = 2):
    """Two categorical and two numeric columns."""
    Xc, y = _categorical(n_classes, seed=seed)
    rng = np.random.default_rng(seed)
    code = pd.factorize(y, sort=True)[0]
    Xc = Xc.drop(columns="humidity")
    Xc["height"] = 1.7 + 0.1 * code + rng.normal(scale=0.1, size=len(y))
    Xc["weight"] = 70.0 - 5.0 * code + rng.normal(scale=6.0, size=len(y))
    return Xc, y


def _network(seed: int = 3):
    """Rows of a chain rain -> wet -> slippery (plus noise), no target."""
    rng = np.random.default_rng(seed)
    n = 150
    rain = np.where(rng.random(n) < 0.4, "rain", "dry")
    wet = np.where(rng.random(n) < np.where(rain == "rain", 0.85, 0.2), "wet", "damp")
    slippery = np.where(rng.random(n) < np.where(wet == "wet", 0.7, 0.1), "yes", "no")
    return pd.DataFrame({"rain": rain, "wet": wet, "slippery": slippery}), None


def _symbol_sequences(n_classes: int = 3, n_seq: int = 45, seed: int = 4):
    """Symbol sequences whose hidden state is sticky, flips, or wanders, by class."""
    rng = np.random.default_rng(seed)
    seqs, y = [], []
    for i in range(n_seq):
        c = i % n_classes
        length = int(rng.integers(8, 14))
        state, seq = int(rng.integers(2)), []
        for _ in range(length):
            stay = (0.9, 0.15, 0.55)[c]
            state = state if rng.random() < stay else 1 - state
            symbol = state if rng.random() < 0.8 else 2
            seq.append("abc"[symbol])
        seqs.append(seq)
        y.append(("steady", "flipping", "wandering")[c])
    return seqs, np.array(y)


def _gaussian_sequences(n_seq: int = 24, seed: int = 5):
    """2-d sequences switching between two means, no target."""
    rng = np.random.default_rng(seed)
    means = np.array([[0.0, 0.0], [3.0, -2.0]])
    seqs = []
    for _ in range(n_seq):
        length = int(rng.integers(10, 20))
        state, states = int(rng.integers(2)), []
        for _ in range(length):
            state = state if rng.random() < 0.8 else 1 - state
            states.append(state)
        seqs.append(means[states] + rng.normal(size=(length, 2)))
    return seqs, None


# -- the estimators --------------------------------------------------------------


@dataclass
class Case:
    """An estimator, data it takes, and a grid over its own parameters."""

    name: str
    make: Callable
    data: Callable  # n_classes -> (X, y); y is None for density models
    grid: dict
    distributions: dict
    kind: str  # "numeric", "categorical", "mixed" or "sequences"
    skip: dict = field(default_factory=dict)  # test name -> reason

    @property
    def classifier(self) -> bool:
        return is_classifier(self.make())


_SEQUENCES_NOT_TABULAR = (
    "takes a list of sequences, not a table: no columns to transform or name"
)
_ONE_SYMBOL = (
    "one symbol per step, not a table of named columns (its tags say two_d_array=False)"
)
_NOT_A_CLASSIFIER = "a density model: no classes, no probabilities of a class"

CASES = [
    Case(
        "GaussianNB",
        GaussianNB,
        _numeric,
        {"m": [0.0, 5.0], "var_smoothing": [1e-9, 1e-1]},
        {"m": loguniform(0.1, 10.0), "var_smoothing": loguniform(1e-9, 1e-1)},
        "numeric",
    ),
    Case(
        "LinearDiscriminantAnalysis",
        lambda: LinearDiscriminantAnalysis(solver="lsqr"),
        _numeric,
        {"shrinkage": [None, 0.5, "auto"], "prior_m": [0.0, 10.0]},
        {"shrinkage": loguniform(1e-3, 1.0), "prior_m": loguniform(0.1, 10.0)},
        "numeric",
    ),
    Case(
        "QuadraticDiscriminantAnalysis",
        QuadraticDiscriminantAnalysis,
        _numeric,
        {"covariance_prior_weight": [0.0, 5.0, 50.0], "reg_param": [0.0, 0.3]},
        {"covariance_prior_weight": loguniform(0.1, 100.0)},
        "numeric",
    ),
    Case(
        "GaussianMixtureClassifier",
        lambda: GaussianMixtureClassifier(random_state=0),
        _numeric,
        {"n_components": [1, 2], "covariance_prior_weight": [0.0, 10.0]},
        {"n_components": randint(1, 3), "covariance_prior_weight": loguniform(0.1, 10)},
        "numeric",
    ),
    Case(
        "CategoricalNB",
        CategoricalNB,
        _categorical,
        {"m": [0.0, 1.0, 30.0], "prior_m": [0.0, 50.0]},
        {"m": loguniform(0.01, 100.0), "prior_m": loguniform(0.1, 100.0)},
        "categorical",
    ),
    Case(
        "MixedNB",
        MixedNB,
        _mixed,
        {"m": [0.1, 30.0], "gaussian_m": [0.0, 20.0]},
        {"m": loguniform(0.01, 100.0), "gaussian_m": loguniform(0.1, 100.0)},
        "mixed",
    ),
    Case(
        "TreeAugmentedNB",
        TreeAugmentedNB,
        _categorical,
        {"m": [0.1, 1.0, 30.0]},
        {"m": loguniform(0.01, 100.0), "prior_m": loguniform(0.1, 100.0)},
        "categorical",
    ),
    Case(
        "HMMClassifier",
        lambda: HMMClassifier(CategoricalHMM(2, random_state=0, n_iter=100, tol=1e-4)),
        _symbol_sequences,
        {"hmm__n_components": [1, 2], "hmm__transmat_prior": [1.0, 5.0]},
        {
            "hmm__transmat_prior": loguniform(1.0, 10.0),
            "hmm__emissionprob_prior": loguniform(1.0, 10.0),
        },
        "sequences",
        skip={
            "column_transformer": _SEQUENCES_NOT_TABULAR,
            "feature_names": _SEQUENCES_NOT_TABULAR,
        },
    ),
    Case(
        "GaussianMixture",
        lambda: GaussianMixture(random_state=0),
        lambda n_classes=None: (_numeric()[0], None),
        {"n_components": [1, 2, 3], "covariance_prior_weight": [0.0, 10.0]},
        {"n_components": randint(1, 4), "covariance_prior_weight": loguniform(0.1, 10)},
        "numeric",
    ),
    Case(
        "GaussianHMM",
        lambda: GaussianHMM(2, random_state=0, n_iter=30),
        lambda n_classes=None: _gaussian_sequences(),
        {"transmat_prior": [1.0, 20.0], "covariance_prior_weight": [0.0, 50.0]},
        {
            "transmat_prior": loguniform(1.0, 20.0),
            "covariance_prior_weight": loguniform(0.1, 50.0),
        },
        "sequences",
        skip={"column_transformer": _SEQUENCES_NOT_TABULAR},
    ),
    Case(
        "CategoricalHMM",
        lambda: CategoricalHMM(2, random_state=0, n_iter=30, tol=1e-4),
        lambda n_classes=None: (_symbol_sequences()[0], None),
        {"n_components": [1, 2], "transmat_prior": [1.0, 20.0]},
        {
            "transmat_prior": loguniform(1.0, 20.0),
            "emissionprob_prior": loguniform(1.0, 20.0),
        },
        "sequences",
        skip={
            "column_transformer": _SEQUENCES_NOT_TABULAR,
            "feature_names": _ONE_SYMBOL,
        },
    ),
    Case(
        "BayesianNetwork",
        lambda: BayesianNetwork(edges=[("rain", "wet"), ("wet", "slippery")]),
        lambda n_classes=None: _network(),
        {
            "m": [0.1, 1.0, 100.0],
            "edges": [None, [("rain", "wet"), ("wet", "slippery")]],
        },
        {"m": loguniform(0.01, 100.0)},
        "categorical",
    ),
]


def _params(test: str, classifiers_only: bool = False):
    """Every case as a pytest parameter; skipped, with why, where it cannot apply."""
    out = []
    for case in CASES:
        reason = case.skip.get(test)
        if reason is None and classifiers_only and not case.classifier:
            reason = _NOT_A_CLASSIFIER
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        out.append(pytest.param(case, id=case.name, marks=marks))
    return out


# -- helpers ---------------------------------------------------------------------


def _fit(case: Case, n_classes: int = 3):
    X, y = case.data(n_classes)
    est = case.make()
    est.fit(X) if y is None else est.fit(X, y)
    return est, X, y


def _outputs(est, X) -> dict:
    """Everything the estimator says about X, to compare two fitted copies."""
    out = {}
    if is_classifier(est):
        out["predict"] = est.predict(X)
        out["predict_proba"] = est.predict_proba(X)
    elif isinstance(est, BayesianNetwork):
        hidden = X.assign(rain=np.nan)  # infer the first variable from the others
        out["predict_proba"] = est.predict_proba(hidden, variable="rain").to_numpy()
        out["predict"] = est.predict(hidden).to_numpy()
        out["score_samples"] = est.score_samples(X)
    else:
        if isinstance(est, (CategoricalHMM, GaussianHMM)):
            out["predict"] = np.concatenate(est.predict(X))
            out["score_sequences"] = est.score_sequences(X)
        else:
            out["predict"] = est.predict(X)
            out["score_samples"] = est.score_samples(X)
    if not is_classifier(est):
        out["score"] = est.score(X)
    return out


def _assert_same_outputs(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(np.asarray(a[key]), np.asarray(b[key]), key)


def _cv(case: Case, n_splits: int = 3):
    """Stratified folds for classifiers, shuffled folds for density models."""
    if case.classifier:
        return StratifiedKFold(n_splits, shuffle=True, random_state=0)
    return KFold(n_splits, shuffle=True, random_state=0)


def _fit_search(search, X, y):
    return search.fit(X) if y is None else search.fit(X, y)


# -- clone, parameters, pickling -----------------------------------------------------


@pytest.mark.parametrize("case", _params("clone"))
def test_clone_is_unfitted_with_equal_params(case):
    est, _, _ = _fit(case)
    copy = clone(est)
    assert type(copy) is type(est)
    assert copy is not est
    fitted = [a for a in vars(est) if a.endswith("_") and not a.startswith("_")]
    assert fitted, "fit set no fitted attribute"
    assert not [a for a in vars(copy) if a.endswith("_") and not a.startswith("_")]
    assert set(copy.get_params(deep=False)) == set(est.get_params(deep=False))
    for name, value in est.get_params(deep=False).items():
        other = copy.get_params(deep=False)[name]
        if hasattr(value, "get_params"):
            assert other is not value
            assert other.get_params() == value.get_params()
        else:
            assert other is value or other == value


@pytest.mark.parametrize("case", _params("params"))
def test_set_params_round_trip(case):
    est = case.make()
    params = est.get_params(deep=True)
    fresh = type(est)()
    fresh.set_params(**params)
    after = fresh.get_params(deep=True)
    assert after.keys() == params.keys()
    for name, value in params.items():
        if hasattr(value, "get_params"):
            assert after[name].get_params() == value.get_params()
        else:
            assert after[name] == value, name
    # A value from the grid takes effect on the fitted model.
    name, values = next(iter(case.grid.items()))
    fresh.set_params(**{name: values[-1]})
    assert fresh.get_params(deep=True)[name] == values[-1]
    X, y = case.data(3)
    fresh.fit(X) if y is None else fresh.fit(X, y)
    default = case.make().set_params(**{name: values[0]})
    default.fit(X) if y is None else default.fit(X, y)
    a, b = _outputs(fresh, X), _outputs(default, X)
    assert any(not np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in a), (
        f"{name}={values[-1]} fitted the same model as {name}={values[0]}"
    )


@pytest.mark.parametrize("case", _params("pickle"))
def test_pickle_round_trip_keeps_predictions(case):
    est, X, _ = _fit(case)
    before = _outputs(est, X)
    restored = pickle.loads(pickle.dumps(est, protocol=pickle.HIGHEST_PROTOCOL))
    assert type(restored) is type(est)
    assert restored.get_params(deep=False).keys() == est.get_params(deep=False).keys()
    _assert_same_outputs(before, _outputs(restored, X))
    # The clone of a restored model fits to the same model again.
    refit = clone(restored)
    Xf, y = case.data(3)
    refit.fit(Xf) if y is None else refit.fit(Xf, y)
    _assert_same_outputs(before, _outputs(refit, X))


# -- pipelines --------------------------------------------------------------------


def _upstream(case: Case):
    """A transformer that the estimator's inputs pass through unchanged in kind."""
    if case.kind == "numeric":
        return StandardScaler().set_output(transform="pandas")
    return FunctionTransformer(None)  # identity; takes lists of sequences too


@pytest.mark.parametrize("case", _params("pipeline"))
def test_pipeline_and_make_pipeline(case):
    X, y = case.data(3)
    pipe = Pipeline([("pre", _upstream(case)), ("model", case.make())])
    made = make_pipeline(_upstream(case), case.make())
    assert [type(s) for _, s in made.steps] == [type(s) for _, s in pipe.steps]
    for p in (pipe, made):
        p.fit(X) if y is None else p.fit(X, y)
    # The pipeline is the model fitted on the transformed data.
    Xt = pipe[0].transform(X)
    alone = case.make()
    alone.fit(Xt) if y is None else alone.fit(Xt, y)
    expected = _outputs(alone, Xt)
    if case.classifier:
        np.testing.assert_array_equal(pipe.predict(X), expected["predict"])
        np.testing.assert_array_equal(made.predict(X), expected["predict"])
        np.testing.assert_allclose(pipe.predict_proba(X), expected["predict_proba"])
        assert pipe.classes_.tolist() == alone.classes_.tolist()
        assert 0.0 <= pipe.score(X, y) <= 1.0
    else:
        assert pipe.score(X) == pytest.approx(alone.score(Xt))
        assert made.score(X) == pytest.approx(alone.score(Xt))
    # Parameters of the model reach it through the pipeline's names.
    name, values = next(iter(case.grid.items()))
    pipe.set_params(**{f"model__{name}": values[-1]})
    assert pipe.named_steps["model"].get_params()[name] == values[-1]


def _column_transformer(case: Case, X: pd.DataFrame) -> ColumnTransformer:
    """Scale the numeric columns, pass the others; a DataFrame out."""
    numeric = X.select_dtypes("number").columns.tolist()
    others = [c for c in X.columns if c not in numeric]
    parts = []
    if numeric:
        parts.append(("scale", StandardScaler(), numeric))
    if others:
        parts.append(("keep", "passthrough", others))
    return ColumnTransformer(parts, verbose_feature_names_out=False).set_output(
        transform="pandas"
    )


@pytest.mark.parametrize("case", _params("column_transformer"))
def test_column_transformer_upstream(case):
    X, y = case.data(3)
    X = X[X.columns[::-1]]  # the transformer reorders: scaled columns first
    ct = _column_transformer(case, X)
    pipe = make_pipeline(ct, case.make())
    pipe.fit(X) if y is None else pipe.fit(X, y)
    model = pipe[-1]
    names = ct.get_feature_names_out()
    assert sorted(names) == sorted(X.columns)
    np.testing.assert_array_equal(model.feature_names_in_, names)
    Xt = ct.transform(X)
    alone = case.make()
    alone.fit(Xt) if y is None else alone.fit(Xt, y)
    if case.classifier:
        np.testing.assert_allclose(pipe.predict_proba(X), alone.predict_proba(Xt))
        # With MixedNB, the scaled columns stay numeric and the others categorical.
        if isinstance(model, MixedNB):
            expected = [not pd.api.types.is_numeric_dtype(Xt[c]) for c in Xt]
            assert model.categorical_features_.tolist() == expected
            assert 0 < sum(expected) < len(expected)
    else:
        assert pipe.score(X) == pytest.approx(alone.score(Xt))


# -- hyper-parameter search ----------------------------------------------------------


def _as_keys(points) -> list:
    """Parameter dicts as sorted comparable strings (values may be lists or None)."""
    return sorted(repr(sorted(p.items(), key=str)) for p in points)


def _grid_size(grid: dict) -> int:
    return int(np.prod([len(v) for v in grid.values()]))


def _check_search(search, case: Case, X, y, n_candidates: int) -> None:
    res = search.cv_results_
    assert len(res["params"]) == n_candidates
    for key in ("mean_test_score", "std_test_score", "rank_test_score"):
        assert res[key].shape == (n_candidates,)
    for i in range(search.n_splits_):
        assert res[f"split{i}_test_score"].shape == (n_candidates,)
    assert search.n_splits_ == 3
    scores = res["mean_test_score"]
    assert np.isfinite(scores).all(), scores
    assert search.best_index_ == int(np.argmax(scores))
    assert search.best_params_ == res["params"][search.best_index_]
    assert search.best_score_ == pytest.approx(scores.max())
    best = search.best_estimator_
    for name, value in search.best_params_.items():
        assert best.get_params()[name] == value
    # The refitted best model is the estimator fitted with the best parameters.
    again = case.make().set_params(**search.best_params_)
    again.fit(X) if y is None else again.fit(X, y)
    _assert_same_outputs(_outputs(best, X), _outputs(again, X))


@pytest.mark.parametrize("case", _params("grid_search"))
def test_grid_search_over_own_and_prior_parameters(case):
    X, y = case.data(3)
    scoring = "neg_log_loss" if case.classifier else None
    search = GridSearchCV(case.make(), case.grid, cv=_cv(case), scoring=scoring)
    _fit_search(search, X, y)
    n = _grid_size(case.grid)
    _check_search(search, case, X, y, n)
    grid_points = [dict(zip(case.grid, v)) for v in product(*case.grid.values())]
    assert search.best_params_ in grid_points
    assert _as_keys(search.cv_results_["params"]) == _as_keys(grid_points)
    # The parameters reach the models: not every candidate scores the same.
    assert np.unique(search.cv_results_["mean_test_score"].round(12)).size > 1
    if case.classifier:
        assert (search.cv_results_["mean_test_score"] < 0).all()


@pytest.mark.parametrize("case", _params("randomized_search"))
def test_randomized_search_over_prior_parameters(case):
    X, y = case.data(3)
    search = RandomizedSearchCV(
        case.make(), case.distributions, n_iter=3, cv=_cv(case), random_state=0
    )
    _fit_search(search, X, y)
    _check_search(search, case, X, y, 3)
    for params in search.cv_results_["params"]:
        assert params.keys() == case.distributions.keys()
        for name, value in params.items():
            dist = case.distributions[name]
            assert dist.support()[0] <= value <= dist.support()[1], (name, value)
    # Three draws from continuous priors: three different candidates.
    assert len(set(_as_keys(search.cv_results_["params"]))) == 3


@pytest.mark.parametrize("case", _params("parallel_grid_search"))
def test_parallel_grid_search_matches_serial(case):
    X, y = case.data(3)
    grid = dict([next(iter(case.grid.items()))])
    runs = []
    for n_jobs in (1, 2):
        search = GridSearchCV(case.make(), grid, cv=_cv(case), n_jobs=n_jobs)
        runs.append(_fit_search(search, X, y))
    serial, parallel = runs
    np.testing.assert_allclose(
        parallel.cv_results_["mean_test_score"],
        serial.cv_results_["mean_test_score"],
        rtol=1e-12,
    )
    assert parallel.best_params_ == serial.best_params_
    _assert_same_outputs(
        _outputs(serial.best_estimator_, X), _outputs(parallel.best_estimator_, X)
    )


# -- classifiers: log-loss, calibration, thresholds ----------------------------------


@pytest.mark.parametrize("case", _params("log_loss", classifiers_only=True))
def test_cross_val_score_neg_log_loss(case):
    X, y = case.data(3)
    scores = cross_val_score(case.make(), X, y, cv=_cv(case), scoring="neg_log_loss")
    assert scores.shape == (3,)
    assert np.isfinite(scores).all(), scores
    assert (scores < 0).all(), scores
    # Better than knowing nothing: the log-loss of the class frequencies.
    assert scores.mean() > -np.log(len(np.unique(y)))


@pytest.mark.parametrize("case", _params("calibration", classifiers_only=True))
@pytest.mark.parametrize("method", ["sigmoid", "isotonic"])
def test_calibrated_classifier_cv(case, method):
    X, y = case.data(3)
    raw = case.make().fit(X, y)
    cal = CalibratedClassifierCV(case.make(), method=method, cv=_cv(case))
    cal.fit(X, y)
    assert len(cal.calibrated_classifiers_) == 3
    np.testing.assert_array_equal(cal.classes_, raw.classes_)
    proba = cal.predict_proba(X)
    assert proba.shape == (len(y), len(raw.classes_))
    assert np.isfinite(proba).all()
    assert ((proba >= 0) & (proba <= 1)).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # Calibration maps the model's probabilities: they change.
    assert not np.allclose(proba, raw.predict_proba(X), atol=1e-3)
    assert set(cal.predict(X)) <= set(raw.classes_)
    assert cal.score(X, y) > 1.0 / len(raw.classes_)


@pytest.mark.parametrize("case", _params("fixed_threshold", classifiers_only=True))
def test_fixed_threshold_classifier_on_a_binary_problem(case):
    X, y = case.data(2)
    assert len(np.unique(y)) == 2
    raw = case.make().fit(X, y)
    positive = raw.classes_[1]
    p = raw.predict_proba(X)[:, 1]
    for threshold in (0.2, 0.5, 0.8):
        clf = FixedThresholdClassifier(
            case.make(), threshold=threshold, response_method="predict_proba"
        ).fit(X, y)
        np.testing.assert_array_equal(clf.classes_, raw.classes_)
        pred = clf.predict(X)
        expected = np.where(p >= threshold, positive, raw.classes_[0])
        np.testing.assert_array_equal(pred, expected)
        np.testing.assert_allclose(clf.predict_proba(X), raw.predict_proba(X))
    # Thresholding the decision function at 0 is the model's own decision: it is
    # the log-odds of the positive class.
    if hasattr(raw, "decision_function"):
        d = raw.decision_function(X)
        assert d.shape == (len(y),)
        log_p = raw.predict_log_proba(X)
        np.testing.assert_allclose(d, log_p[:, 1] - log_p[:, 0], rtol=1e-9, atol=1e-9)
        at_zero = FixedThresholdClassifier(
            case.make(), threshold=0.0, response_method="decision_function"
        ).fit(X, y)
        np.testing.assert_array_equal(at_zero.predict(X), raw.predict(X))
    # A higher threshold never predicts more positives, and these differ.
    low = FixedThresholdClassifier(case.make(), threshold=0.2).fit(X, y)
    high = FixedThresholdClassifier(case.make(), threshold=0.8).fit(X, y)
    n_low = np.sum(low.predict(X) == positive)
    n_high = np.sum(high.predict(X) == positive)
    assert n_high < n_low


# -- pandas in and out -------------------------------------------------------------


@pytest.mark.parametrize("case", _params("feature_names"))
def test_feature_names_in_from_dataframes(case):
    X, y = case.data(3)
    kwargs = {}
    if isinstance(case.make(), GaussianHMM):
        # The other sequence form: the steps of all sequences in one table.
        kwargs = {"lengths": [len(s) for s in X]}
        X = pd.DataFrame(np.concatenate(X), columns=["speed", "heading"])
    assert isinstance(X, pd.DataFrame)
    est = case.make()
    est.fit(X, **kwargs) if y is None else est.fit(X, y)
    np.testing.assert_array_equal(est.feature_names_in_, X.columns.to_numpy())
    assert est.feature_names_in_.dtype == object
    assert est.n_features_in_ == X.shape[1]
    method = est.predict_proba if is_classifier(est) else est.score
    expected = method(X, **kwargs)
    if isinstance(est, BayesianNetwork):
        # A network reads its variables by name (pgmpy's meaning): columns in
        # another order give the same answer, not a mix-up.
        np.testing.assert_array_equal(method(X[X.columns[::-1]]), expected)
    else:  # columns in another order are an error, not a silent mix-up
        with pytest.raises(ValueError, match="feature names"):
            method(X[X.columns[::-1]], **kwargs)
    # Fitted on an array: no names; a DataFrame at predict time gives the same.
    arr = case.make()
    if isinstance(arr, BayesianNetwork):  # an array's columns are named 0, 1, ...
        arr.set_params(edges=[(0, 1), (1, 2)])
    if isinstance(arr, MixedNB):  # an object array has no dtypes to detect them by
        arr.set_params(categorical_features=[0, 1])
    values = X.to_numpy()
    arr.fit(values, **kwargs) if y is None else arr.fit(values, y)
    assert not hasattr(arr, "feature_names_in_")
    assert arr.n_features_in_ == X.shape[1]
    np.testing.assert_allclose(
        np.asarray(
            arr.predict_proba(values)
            if is_classifier(arr)
            else arr.score(values, **kwargs)
        ),
        np.asarray(expected),
    )


def test_lda_transform_set_output_pandas():
    X, y = _numeric()
    X.index = X.index + 1000  # the index must survive
    lda = LinearDiscriminantAnalysis().set_output(transform="pandas").fit(X, y)
    Z = lda.transform(X)
    assert isinstance(Z, pd.DataFrame)
    assert Z.shape == (len(X), 2)
    assert Z.columns.tolist() == lda.get_feature_names_out().tolist()
    assert Z.columns.tolist() == [
        "lineardiscriminantanalysis0",
        "lineardiscriminantanalysis1",
    ]
    assert Z.index.equals(X.index)
    np.testing.assert_allclose(
        Z.to_numpy(), LinearDiscriminantAnalysis().fit(X, y).transform(X)
    )
    # In a pipeline, fit_transform too.
    pipe = make_pipeline(StandardScaler(), LinearDiscriminantAnalysis(n_components=1))
    pipe.set_output(transform="pandas")
    Z = pipe.fit_transform(X, y)
    assert isinstance(Z, pd.DataFrame)
    assert Z.columns.tolist() == ["lineardiscriminantanalysis0"]
    assert Z.index.equals(X.index)
    # And back to arrays.
    lda.set_output(transform="default")
    assert isinstance(lda.transform(X), np.ndarray)
