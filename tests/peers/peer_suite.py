"""Run the peers' own test modules against bayeskit's classes.

scikit-learn and hmmlearn ship their test modules inside their wheels. Each
module is loaded from the installed peer, as it is, with one change: while it
is imported, the modules it imports the estimators from answer with bayeskit's
classes for the names bayeskit offers (``from sklearn.naive_bayes import
GaussianNB`` binds ``bayeskit.GaussianNB``). Every other name, and every
assertion, is the peer's. Nothing of the peers is copied into this tree.

A test that never reaches a bayeskit class (it exercises one of the peer's own
classes or private functions) is skipped as not applicable; so is every test
named in ``NOT_APPLICABLE``, each with its reason.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import types

import numpy as np
import pytest


def load(module_name: str, substitutes: dict[str, dict[str, object]]) -> dict:
    """The namespace of the peer's test module ``module_name``, imported with
    ``substitutes`` (module name -> {name: bayeskit object}) in place.

    Returns the module's public names, to be merged into a test module's
    globals so that pytest collects the peer's tests there.
    """
    pytest.importorskip(module_name.partition(".")[0])
    # hmmlearn's test package sets np.seterr(all="warn") when imported (which
    # find_spec does): the rest of the session keeps numpy's error state.
    errstate = np.geterr()
    spec = importlib.util.find_spec(module_name)
    package = module_name.rpartition(".")[0]
    alias = f"{module_name}__bayeskit"
    module = importlib.util.module_from_spec(
        importlib.util.spec_from_file_location(alias, spec.origin)
    )
    module.__package__ = package
    saved_modules, saved_attrs = {}, []
    try:
        importlib.import_module(package)  # for the module's relative imports
        for name, names in substitutes.items():
            real = importlib.import_module(name)
            shim = types.ModuleType(name, real.__doc__)
            shim.__dict__.update(real.__dict__)
            shim.__dict__.update(names)
            saved_modules[name] = sys.modules[name]
            sys.modules[name] = shim
            parent, _, child = name.rpartition(".")
            if parent:
                owner = sys.modules[parent]
                saved_attrs.append((owner, child, getattr(owner, child)))
                setattr(owner, child, shim)
        sys.modules[alias] = module
        spec_loader = module.__spec__.loader
        spec_loader.exec_module(module)
    finally:
        for owner, child, value in saved_attrs:
            setattr(owner, child, value)
        sys.modules.update(saved_modules)
        np.seterr(**errstate)
    namespace = {k: v for k, v in vars(module).items() if not k.startswith("__")}
    namespace["_bayeskit_substituted"] = {
        id(obj) for names in substitutes.values() for obj in names.values()
    }
    return namespace


def hmmlearn_substitutes() -> dict[str, dict[str, object]]:
    """bayeskit's classes in place of hmmlearn's, for its test modules."""
    from bayeskit import GMMHMM, CategoricalHMM, GaussianHMM, MultinomialHMM, PoissonHMM
    from bayeskit.hmm import (
        ConvergenceMonitor,
        VariationalCategoricalHMM,
        VariationalGaussianHMM,
    )

    return {
        "hmmlearn.hmm": {
            "CategoricalHMM": CategoricalHMM,
            "GaussianHMM": GaussianHMM,
            "GMMHMM": GMMHMM,
            "MultinomialHMM": MultinomialHMM,
            "PoissonHMM": PoissonHMM,
        },
        "hmmlearn.vhmm": {
            "VariationalCategoricalHMM": VariationalCategoricalHMM,
            "VariationalGaussianHMM": VariationalGaussianHMM,
        },
        "hmmlearn.base": {"ConvergenceMonitor": ConvergenceMonitor},
    }


def reaches_bayeskit(functions, namespace: dict, substituted: set[int]) -> bool:
    """Whether any of ``functions`` names a substituted object, directly or
    through the module's own helper functions and classes it calls."""
    seen, todo = set(), list(functions)
    while todo:
        func = inspect.unwrap(todo.pop())
        code = getattr(func, "__code__", None)
        if code is None or code in seen:
            continue
        seen.add(code)
        names = set(code.co_names)
        codes = [code]
        while codes:  # nested functions, lambdas and comprehensions
            c = codes.pop()
            names.update(c.co_names)
            codes.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        for name in names:
            obj = namespace.get(name)
            if obj is None:
                continue
            if id(obj) in substituted:
                return True
            if isinstance(obj, types.ModuleType) and any(
                id(v) in substituted for v in vars(obj).values()
            ):
                return True
            if inspect.isfunction(obj):
                todo.append(obj)
            elif inspect.isclass(obj) and obj.__module__ == func.__module__:
                todo.extend(v for v in vars(obj).values() if inspect.isfunction(v))
    return False


def is_substituted(value, substituted: set[int]) -> bool:
    """A parameter that is a bayeskit object, or an instance of one."""
    return id(value) in substituted or id(type(value)) in substituted


# (peer module, test) -> why it does not apply to bayeskit. A test is named as
# pytest names it, ``Class::test`` for methods; without brackets the entry
# covers every parametrization.
_ARRAY_API = (
    "scikit-learn's Array API dispatch (array_api_dispatch=True, arrays of other "
    "libraries in and out), which bayeskit does not offer"
)
NOT_APPLICABLE: dict[tuple[str, str], str] = {
    # -- scikit-learn: sklearn/tests/test_naive_bayes.py ------------------------
    ("sklearn.tests.test_naive_bayes", "test_gnb_array_api_compliance"): _ARRAY_API,
    ("sklearn.tests.test_naive_bayes", "test_gnb_check_update_with_no_data"): (
        "calls GaussianNB._update_mean_variance, a private static method"
    ),
    # -- scikit-learn: sklearn/tests/test_discriminant_analysis.py: none ---------
    # -- scikit-learn: sklearn/mixture/tests/test_gaussian_mixture.py -----------
    (
        "sklearn.mixture.tests.test_gaussian_mixture",
        "test_gaussian_mixture_array_api_compliance",
    ): _ARRAY_API,
    (
        "sklearn.mixture.tests.test_gaussian_mixture",
        "test_gaussian_mixture_raises_where_array_api_not_implemented",
    ): _ARRAY_API,
    (
        "sklearn.mixture.tests.test_gaussian_mixture",
        "test_check_weights",
    ): "exact message text ('weights'); bayeskit names weights_init (ours)",
    ("sklearn.mixture.tests.test_gaussian_mixture", "test_check_means"): (
        "exact message text ('means'); bayeskit names means_init (ours)"
    ),
    ("sklearn.mixture.tests.test_gaussian_mixture", "test_check_precisions"): (
        "exact message text ('full precision'); bayeskit names precisions_init"
    ),
    (
        "sklearn.mixture.tests.test_gaussian_mixture",
        "test_gaussian_mixture_fit_convergence_warning",
    ): "exact message text of the ConvergenceWarning (its category is tested)",
    ("sklearn.mixture.tests.test_gaussian_mixture", "test_regularisation"): (
        "exact message text of the singular-covariance error (behaviour: ours)"
    ),
    (
        "sklearn.mixture.tests.test_gaussian_mixture",
        "test_gaussian_mixture_precisions_init",
    ): "calls the peer's private _set_parameters/_initialize signatures",
    (
        "sklearn.mixture.tests.test_gaussian_mixture",
        "test_gaussian_mixture_all_init_does_not_estimate_gaussian_parameters",
    ): "mocks the peer's private _estimate_gaussian_parameters",
    # -- hmmlearn: hmmlearn/tests/test_base.py: none -----------------------------------
    # -- hmmlearn: hmmlearn/tests/test_categorical_hmm.py: none ------------------------
    # -- hmmlearn: hmmlearn/tests/test_gaussian_hmm.py: none ---------------------------
    # -- hmmlearn: hmmlearn/tests/test_poisson_hmm.py: none ----------------------------
    # -- hmmlearn: hmmlearn/tests/test_gmm_hmm.py: none --------------------------------
    # -- hmmlearn: hmmlearn/tests/test_gmm_hmm_new.py: none ----------------------------
    # -- hmmlearn: hmmlearn/tests/test_gmm_hmm_multisequence.py: none ------------------
    # -- hmmlearn: hmmlearn/tests/test_multinomial_hmm.py: none ------------------------
}


# (peer module, test) -> the deliberate difference it meets. These tests assert
# a limitation of the peer that bayeskit does not share; they run as strict
# expected failures, so that the difference stays as documented.
DELIBERATE_DIFFERENCES: dict[tuple[str, str], str] = {
    (
        "pgmpy.tests.test_estimators.test_BayesianEstimator",
        "test_estimate_cpd_improper_prior",
    ): (
        "all pseudo-counts zero and a parent configuration never seen: pgmpy's "
        "row is 0/0 = NaN; bayeskit's m=0 row is uniform, as pgmpy's own "
        "MaximumLikelihoodEstimator gives (a NaN table cannot answer a query)"
    ),
    (
        "hmmlearn.tests.test_gaussian_hmm",
        "TestGaussianHMMWithSphericalCovars::test_underflow_from_scaling[scaling]",
    ): (
        "asserts that hmmlearn's scaled recursion underflows on an outlier and "
        "raises; bayeskit's one exact path fits it (GaussianHMM's docstring)"
    ),
}
