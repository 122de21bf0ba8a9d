"""The Dirichlet prior's two readings: the m-estimate (mean), the MAP update (mode)."""

import numpy as np
import pytest

from bayeskit.priors import Dirichlet, log_m_estimate


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, np.nan, [1.0, 0.0], []])
def test_concentration_is_positive_and_finite(bad):
    with pytest.raises(ValueError, match="positive and finite"):
        Dirichlet(bad)


def test_map_is_hmmlearns_update_and_keeps_structural_zeros():
    counts = np.array([[3.0, 0.2, 5.0], [0.0, 0.0, 0.0]])
    previous = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    prob, empty = Dirichlet(0.5).map(counts, previous)
    first = np.maximum(counts[0] - 0.5, 0) * [1, 1, 0]
    np.testing.assert_allclose(prob[0], first / first.sum())
    np.testing.assert_array_equal(prob[1], previous[1])  # nothing to normalise
    np.testing.assert_array_equal(empty, [False, True])
    assert Dirichlet(np.ones(3)).map(counts[:1], previous[:1])[0][0, 2] == 0


def test_the_mean_under_alpha_is_the_mode_under_alpha_plus_one():
    counts = np.array([4.0, 1.0, 0.0])
    m, p = 3.0, np.array([0.2, 0.3, 0.5])
    mean = np.exp(log_m_estimate(counts, counts.sum(), m, p))
    mode, _ = Dirichlet(m * p + 1.0).map(counts, np.ones(3))
    np.testing.assert_allclose(mean, mode)


def test_log_density_up_to_its_constant():
    prob = np.array([0.2, 0.3, 0.5])
    alpha = np.array([2.0, 1.0, 3.5])
    expected = float((alpha - 1) @ np.log(prob))
    assert Dirichlet(alpha).log_density(prob) == pytest.approx(expected)
    assert Dirichlet(1.0).log_density(np.array([0.0, 1.0])) == 0.0
    assert Dirichlet(2.0).log_density(np.array([0.0, 1.0])) == -np.inf
