"""LogFactor operations against direct numpy computations on probability tables."""

import numpy as np
import pytest

from bayeskit._logmath import logsumexp, safe_log
from bayeskit.graph import MAX_PRODUCT, LogFactor


def table(rng, shape, zeros=False):
    t = rng.gamma(1.0, size=shape)
    if zeros:
        t[rng.random(shape) < 0.3] = 0.0
    return t


def test_product_is_elementwise_product_over_union_scope(rng):
    a, b = table(rng, (2, 3)), table(rng, (3, 4))
    fa = LogFactor.from_probabilities(["A", "B"], [2, 3], a)
    fb = LogFactor.from_probabilities(["B", "C"], [3, 4], b)
    prod = fa * fb
    assert prod.variables == ("A", "B", "C")
    np.testing.assert_allclose(prod.to_probabilities(), np.einsum("ab,bc->abc", a, b))
    # Scope order differs the other way round, values agree after transposing.
    back = (fb * fa).transpose(["A", "B", "C"])
    np.testing.assert_allclose(back.log_values, prod.log_values)


def test_batched_product_and_reduce(rng):
    n = 5
    cpt = table(rng, (3, 2))
    batch = rng.normal(size=(n, 3))
    f = LogFactor(["A"], [3], batch) * LogFactor.from_probabilities(
        ["A", "B"], [3, 2], cpt
    )
    assert f.batched and f.n_batch == n
    np.testing.assert_allclose(f.log_values, batch[:, :, None] + np.log(cpt)[None])
    states = rng.integers(0, 2, size=n)
    red = f.reduce({"B": states})
    np.testing.assert_allclose(red.log_values, batch + np.log(cpt[:, states].T))
    # Batched evidence on an unbatched factor creates the batch axis.
    red2 = LogFactor.from_probabilities(["A", "B"], [3, 2], cpt).reduce({"A": [2, 0]})
    np.testing.assert_allclose(red2.to_probabilities(), cpt[[2, 0]])
    scalar = LogFactor.from_probabilities(["A", "B"], [3, 2], cpt).reduce({"B": 1})
    np.testing.assert_allclose(scalar.to_probabilities(), cpt[:, 1])


def test_marginalize_sum_and_max(rng):
    t = table(rng, (2, 3, 4), zeros=True)
    f = LogFactor.from_probabilities(["A", "B", "C"], [2, 3, 4], t)
    np.testing.assert_allclose(f.marginalize(["B"]).to_probabilities(), t.sum(axis=1))
    np.testing.assert_allclose(
        f.marginalize(["A", "C"], MAX_PRODUCT).to_probabilities(), t.max(axis=(0, 2))
    )


def test_max_marginalize_recovers_joint_argmax(rng):
    t = table(rng, (3, 2, 4))
    f = LogFactor.from_probabilities(["A", "B", "C"], [3, 2, 4], t)
    res, arg = f.max_marginalize(["A", "C"])
    assert res.variables == ("B",)
    for b in range(2):
        a, c = np.unravel_index(np.argmax(t[:, b, :]), (3, 4))
        assert (arg["A"][b], arg["C"][b]) == (a, c)
        np.testing.assert_allclose(res.log_values[b], np.log(t[a, b, c]))


def test_normalize_and_zero_mass_rows():
    vals = np.array([[[0.2, 0.2], [0.1, 0.5]], [[0.0, 0.0], [0.0, 0.0]]])
    f = LogFactor(["A", "B"], [2, 2], safe_log(vals))
    normed, log_z = f.normalize()
    np.testing.assert_allclose(normed.to_probabilities()[0], vals[0] / 1.0)
    np.testing.assert_allclose(log_z[0], 0.0, atol=1e-15)
    assert np.isneginf(log_z[1])
    assert np.all(np.isneginf(normed.log_values[1]))
    assert not np.isnan(normed.log_values).any()
    summed = f.marginalize(["A"])
    assert not np.isnan(summed.log_values).any()


def test_all_zero_slices_stay_minus_inf():
    f = LogFactor(["A", "B"], [2, 2], safe_log(np.array([[0.0, 0.0], [0.3, 0.7]])))
    out = f.marginalize(["B"]).log_values
    assert np.isneginf(out[0]) and np.isclose(out[1], 0.0)
    assert np.isneginf(logsumexp(np.full((3,), -np.inf)))


@pytest.mark.parametrize(
    "args, match",
    [
        ((["A", "A"], [2, 2], np.zeros((2, 2))), "distinct"),
        ((["A"], [2, 3], np.zeros(2)), "cardinalities"),
        ((["A", "B"], [2, 3], np.zeros((3, 2))), "shape"),
        ((["A"], [2], np.array([0.0, np.nan])), "NaN"),
    ],
)
def test_bad_factor(args, match):
    with pytest.raises(ValueError, match=match):
        LogFactor(*args)


def test_bad_probabilities_and_evidence():
    with pytest.raises(ValueError, match="non-negative"):
        LogFactor.from_probabilities(["A"], [2], [0.5, -0.5])
    f = LogFactor.from_probabilities(["A", "B"], [2, 2], np.ones((2, 2)))
    with pytest.raises(ValueError, match="out of range"):
        f.reduce({"A": 2})
    with pytest.raises(ValueError, match="unknown variable 'Z'"):
        f.reduce({"Z": 0})
    with pytest.raises(ValueError, match="unknown variable 'Z'"):
        f.marginalize(["Z"])
    g = LogFactor.from_probabilities(["A"], [3], np.ones(3))
    with pytest.raises(ValueError, match="'A' has 2 states in one factor and 3"):
        f * g
