"""What a small mixture fit no longer pays for, and why the answers stay the
same: a seeded generator served again instead of built (the same draws as
``numpy.random.RandomState(seed)``), and a monitor copied without the generic
deep copy."""

import copy
import threading

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.datasets import load_iris
from sklearn.mixture import GaussianMixture as SkGM
from sklearn.utils import check_random_state

from bayeskit import GaussianMixture
from bayeskit._base.monitor import MixtureMonitor
from bayeskit._validation import random_state_of

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
