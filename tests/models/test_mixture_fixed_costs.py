"""What a small mixture fit no longer pays for, and why the answers stay the
same: a seeded generator served again instead of built (the same draws as
``numpy.random.RandomState(seed)``), a monitor copied without the generic
deep copy, the first M-step reading EM's shifted rows instead of making them
again, and no second pass over the data to look for a NaN."""

import copy
import threading

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.datasets import load_iris
from sklearn.mixture import GaussianMixture as SkGM
from sklearn.utils import check_random_state

from bayeskit import GaussianMixture
from bayeskit._base.gaussian_input import GAUSSIAN_LIMIT, float_input_complete
from bayeskit._base.monitor import MixtureMonitor
from bayeskit._logmath import has_nan
from bayeskit._validation import random_state_of
from bayeskit.mixture._start import first_params

SEEDS = [0, 1, 7, 42, 12345, 2**31 - 1, 2**32 - 1, np.int64(3), np.uint32(99)]


def draws(rng):
    """Draws of every kind a mixture's start makes (and a pending Gaussian)."""
    return [
        rng.standard_normal(3),
        rng.uniform(size=(2, 3)),
        rng.randint(0, 1000, size=5),
        rng.choice(10, size=4, replace=False),
        rng.multinomial(20, [0.2, 0.3, 0.5]),
        rng.randint(0, 2**31 - 1),
    ]


def use_up(rng, seed):
    """Leave ``rng`` in an arbitrary state, one Gaussian draw pending."""
    rng.standard_normal(seed % 7 + 1)
    rng.randint(0, 5, dtype=np.uint8, size=3)
    rng.standard_normal(1)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_state_of_a_seed_is_a_new_random_state_of_it(seed):
    for before in range(3):
        # The spare generator was used (a pending Gaussian draw, a partial word).
        with random_state_of(before + 11) as spare:
            use_up(spare, before)
        with random_state_of(seed) as rng:
            assert rng is spare  # served again, not built
            ours, theirs = rng.get_state(), np.random.RandomState(seed).get_state()
            assert ours[0] == theirs[0]
            assert_array_equal(ours[1], theirs[1])
            assert ours[2:] == theirs[2:]
            for a, b in zip(draws(rng), draws(np.random.RandomState(seed))):
                assert_array_equal(a, b)


def test_random_state_of_other_values_is_check_random_state():
    assert random_state_of(None).__enter__() is check_random_state(None)
    given = np.random.RandomState(3)
    with random_state_of(given) as rng:
        assert rng is given
    with pytest.raises(ValueError), random_state_of(-1):
        pass
    with pytest.raises(ValueError), random_state_of("a"):
        pass


def test_random_state_of_nested_blocks_get_their_own_generators():
    with random_state_of(5) as outer:
        first = outer.uniform(size=4)
        with random_state_of(6) as inner:
            assert inner is not outer
            assert_array_equal(
                inner.uniform(size=4), np.random.RandomState(6).uniform(size=4)
            )
        rest = outer.uniform(size=4)
    expected = np.random.RandomState(5).uniform(size=8)
    assert_array_equal(np.concatenate([first, rest]), expected)


def test_gaussian_mixture_fits_in_threads_give_scikit_learns_starts():
    """Generators are served per thread: fits with integer seeds running at
    once in several threads get scikit-learn's draws, as fits one after the
    other do."""
    X = load_iris().data
    cases = [(cov, seed) for cov in ("diag", "spherical", "tied") for seed in range(4)]

    def ours(cov, seed):
        kw = {"init_params": "random", "tol": 1e9, "covariance_type": cov}
        return GaussianMixture(3, random_state=seed, **kw).fit(X).means_

    expected = {
        case: SkGM(
            3,
            random_state=case[1],
            init_params="random",
            tol=1e9,
            covariance_type=case[0],
        )
        .fit(X)
        .means_
        for case in cases
    }
    results, errors = {}, []

    def work(chunk):
        try:
            for _ in range(3):
                for case in chunk:
                    results.setdefault(case, []).append(ours(*case))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(cases[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for case in cases:
        for means in results[case]:
            np.testing.assert_allclose(means, expected[case], rtol=1e-10, atol=1e-12)


def test_a_mixture_monitor_copy_has_its_own_history():
    monitor = MixtureMonitor(1e-3, 10, verbose=0, interval=2, before=-3.5)
    monitor.report(1.0)
    twin = copy.deepcopy(monitor)
    twin.report(2.0)
    assert list(monitor.history) == [1.0] and monitor.iter == 1
    assert list(twin.history) == [1.0, 2.0] and twin.iter == 2
    fields = ("tol", "n_iter", "verbose", "interval", "before")
    assert [getattr(twin, f) for f in fields] == [1e-3, 10, 0, 2, -3.5]


@pytest.mark.parametrize("covariance_type", ["full", "tied", "diag", "spherical"])
@pytest.mark.parametrize(
    "init_params", ["kmeans", "k-means++", "random", "random_from_data"]
)
@pytest.mark.parametrize("weighted", [False, True])
def test_first_params_from_shifted_rows_are_those_from_the_rows(
    covariance_type, init_params, weighted
):
    """The first M-step given EM's ``(X - X[0], X[0], unit)`` is, bit for bit,
    the one that makes them (the reference: the path every caller without
    them takes), for every start and seed, unit weights or not."""
    X = load_iris().data
    sw = np.arange(150) % 3 + 1.0 if weighted else np.ones(150)
    model = GaussianMixture(
        3, covariance_type=covariance_type, init_params=init_params
    ).fit(X)
    model._start(X, sw)
    shift = X[0].copy()
    shifted = (X - shift, shift, bool((sw == 1.0).all()))
    for seed in range(8):
        ours = first_params(model, X, sw, np.random.RandomState(seed), True, shifted)
        ref = first_params(model, X, sw, np.random.RandomState(seed), True)
        assert_array_equal(ours.structure.weights, ref.structure.weights)
        for name in ("means", "covariances", "precisions_cholesky", "log_det"):
            assert_array_equal(
                getattr(ours.emission, name), getattr(ref.emission, name)
            )


@pytest.mark.parametrize(
    "cell", [None, np.nan, np.inf, -np.inf, 2 * GAUSSIAN_LIMIT, GAUSSIAN_LIMIT]
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_input_complete_says_whether_a_cell_is_nan(cell, dtype):
    """One pass where the magnitude test holds: the answer is
    :func:`has_nan`'s (the reference), or the magnitude error."""
    X = np.arange(12.0).reshape(4, 3).astype(dtype)
    if cell is not None:
        # (float32 data hold inf where float64 would hold 1e150)
        big = abs(cell) > float(np.finfo(dtype).max)
        X[2, 1] = np.copysign(np.inf, cell) if big else cell
    if not np.isnan(X).any() and np.abs(X.astype(float)).max() > GAUSSIAN_LIMIT:
        with pytest.raises(ValueError, match="feature 1 of X"):
            float_input_complete(X)
        return
    out, complete = float_input_complete(X)
    assert out.dtype == np.float64
    assert complete is (not has_nan(X))
    assert float_input_complete(X[:0])[1] is True
