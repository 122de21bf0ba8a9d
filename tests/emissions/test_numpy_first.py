"""The numpy stand-ins that run while the row kernels are not compiled.

In a fresh environment (an empty numba cache) the emission families' row
kernels and the rows' log-normalisation run numpy stand-ins, on any size up to
a bound, until they have taken about what compiling would (a CPU budget per
kernel): these tests ask that each stand-in gives its kernel's results (the
same sums in the same order: equal to the last bit), that the choice follows
the compiled state and the budget, and that a first workflow of naive Bayes,
discriminant analysis and mixtures in a fresh process compiles none of them.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from bayeskit import _jit, _logmath
from bayeskit.emissions import _kernels


@pytest.mark.parametrize("seed", range(10))
def test_diag_class_moments_by_numpy_are_the_kernels(seed):
    rng = np.random.default_rng(seed)
    n, d, k = int(rng.integers(1, 3 * _kernels._BLOCK)), int(rng.integers(1, 6)), 3
    X = rng.normal(size=(n, d)) * 10 + rng.normal(scale=1e6, size=d)
    X[rng.random((n, d)) < 0.1] = np.nan
    X[: min(n, 3), 0] = np.nan  # a first value missing: the reference is later
    weights = rng.random((n, k))
    labels = rng.integers(k - 1, size=n)  # the last state has no data
    results = []
    for run in (
        _kernels.diag_class_moments.compiled,
        _kernels._diag_class_moments_numpy,
    ):
        out = [np.empty(d), *(np.zeros((k, d)) for _ in range(4))]
        run(X, weights, labels, *out)
        results.append(out[1:4])
    for got, expected in zip(*results[::-1]):
        assert_array_equal(got, expected)


@pytest.mark.parametrize("seed", range(10))
def test_categorical_counts_by_numpy_are_the_kernels(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 5000)), int(rng.integers(1, 5))
    n_categories = rng.integers(1, 6, size=int(rng.integers(1, 6)))
    offsets = np.concatenate([[0], np.cumsum(n_categories)]).astype(np.intp)
    codes = (rng.random((n, len(n_categories))) * n_categories).astype(np.intp)
    codes[rng.random(codes.shape) < 0.1] = -1  # missing
    weights = rng.random((n, k))
    labels = rng.integers(k, size=n)
    for kernel, numpy, args in [
        (_kernels.categorical_counts, _kernels._categorical_counts_numpy, (labels,)),
        (_kernels.categorical_soft_counts, _kernels._categorical_soft_counts_numpy, ()),
    ]:
        counts = [np.zeros((offsets[-1], k)) for _ in range(2)]
        kernel.compiled(codes, offsets, weights, *args, counts[0])
        numpy(codes, offsets, weights, *args, counts[1])
        assert_array_equal(counts[1], counts[0])


def test_the_choice_follows_the_compiled_state_and_the_budget(monkeypatch):
    """Not compiled: numpy, its CPU time counted; compiled (or the budget
    spent): the kernel."""
    kernel = _kernels.categorical_counts.compiled
    monkeypatch.setattr(_jit, "_known_compiled", set())
    monkeypatch.setattr(_jit, "_numpy_seconds", {})
    monkeypatch.setattr(_jit, "_compiled", lambda k: False)
    assert _jit.numpy_first(kernel)
    rng = np.random.default_rng(0)
    codes = rng.integers(3, size=(20_000, 2)).astype(np.intp)
    offsets = np.array([0, 3, 6], dtype=np.intp)
    weights = np.ones((20_000, 2))
    counts = np.zeros((6, 2))
    _kernels.categorical_counts(codes, offsets, weights, codes[:, 0] % 2, counts)
    assert 0.0 < _jit._numpy_seconds[kernel] < _jit._NUMPY_BUDGET
    _jit._numpy_seconds[kernel] = _jit._NUMPY_BUDGET
    assert not _jit.numpy_first(kernel)
    _jit._numpy_seconds.clear()
    monkeypatch.setattr(_jit, "_compiled", lambda k: True)
    assert not _jit.numpy_first(kernel)
    monkeypatch.setattr(_jit, "_compiled", lambda k: False)
    assert not _jit.numpy_first(kernel)  # compiled stays compiled
    # The rows' log-normalisation: the numpy rows on a large matrix.
    _jit._known_compiled.clear()
    a = rng.normal(size=(_logmath._NUMPY_SIZE, 3))
    out, lse = _logmath._normalize_rows(a)
    assert _jit._numpy_seconds[_logmath._shift_rows] > 0.0
    expected = _logmath._normalize_rows_numpy(a)
    assert_array_equal(out, expected[0])
    assert_array_equal(lse, expected[1])


_FIRST_USE = """
import json
import numpy as np
import pandas as pd
import bayeskit
from bayeskit import _logmath
from bayeskit.emissions import _kernels as k

rng = np.random.default_rng(0)
for n in (100, 10_000, 100_000):
    y = rng.integers(3, size=n)
    X = rng.normal(size=(n, 5)) + 2 * y[:, None]
    colour = np.array(["a", "b", "c"])[(y + rng.integers(2, size=n)) % 3]
    mixed = pd.DataFrame({"c": colour, "x": X[:, 0]})
    for model, data in [
        (bayeskit.GaussianNB(), X),
        (bayeskit.QuadraticDiscriminantAnalysis(), X),
        (bayeskit.MixedNB(), mixed),
        (bayeskit.CategoricalNB(), (X > 1).astype(int)),
    ]:
        model.fit(data, y).predict_proba(data)
        model.score(data, y)
    model = bayeskit.GaussianMixture(3, random_state=0).fit(X)
    model.predict_proba(X)
kernels = [k.diag_log_likelihood.compiled, k.diag_class_moments.compiled,
           k.full_log_likelihood, k.categorical_log_likelihood.compiled,
           k.categorical_counts.compiled, k.categorical_soft_counts.compiled,
           _logmath._shift_rows, _logmath._row_sums, _logmath._subtract_rows]
print(json.dumps({kern.py_func.__name__: len(kern.signatures) for kern in kernels}))
"""


def test_a_first_workflow_in_a_fresh_environment_compiles_no_row_kernel(tmp_path):
    """GaussianNB, QDA, MixedNB, CategoricalNB and GaussianMixture on 100,
    10,000 and 100,000 rows in a fresh process with an empty numba cache: no
    row kernel is compiled (each takes about a second)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, "-c", _FIRST_USE],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    compiled = json.loads(out.strip().splitlines()[-1])
    assert compiled == dict.fromkeys(compiled, 0)
