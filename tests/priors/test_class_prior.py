"""The class node's prior: the m-estimate of the class counts, or a fixed
distribution given by the user, through ``LatentNode.log_estimate``."""

import numpy as np
import pytest

import bayeskit as bk
from bayeskit.graph import LatentNode
from bayeskit.priors import Fixed, MEstimate


@pytest.mark.parametrize("m", [0.0, 1.0, 7.5])
def test_the_m_estimate_of_the_class_counts_is_mitchells_formula(m):
    """(n_c + m / k) / (N + m), Mitchell (1997), section 6.9.1.1."""
    counts = np.array([3.0, 0.0, 9.5])
    got = LatentNode(3).log_estimate(counts, MEstimate(m, np.full(3, 1 / 3)))
    with np.errstate(divide="ignore"):
        want = np.log((counts + m / 3) / (counts.sum() + m))
    np.testing.assert_allclose(got, want, rtol=1e-15)
    assert LatentNode(3).n_parameters() == 2


def test_a_fixed_prior_ignores_the_counts_and_keeps_zeros():
    got = LatentNode(3).log_estimate(
        [5.0, 1.0, 0.0], Fixed(np.array([0.0, 0.25, 0.75]))
    )
    np.testing.assert_array_equal(got, [-np.inf, np.log(0.25), np.log(0.75)])
    assert Fixed(np.array([0.5, 0.5])).log_density(np.array([0.1, 0.9])) == 0.0


@pytest.mark.parametrize(
    "cls", [bk.GaussianNB, bk.LinearDiscriminantAnalysis, bk.MixedNB]
)
def test_classifiers_take_their_class_prior_from_the_class_node(cls):
    """class_log_prior_ is the class node's MAP under the classifier's prior:
    the relative frequencies by default, the m-estimate with prior_m, the
    given priors otherwise."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    y = np.repeat([0, 1, 2], [10, 20, 30])
    counts = np.array([10.0, 20.0, 30.0])
    np.testing.assert_allclose(
        cls().fit(X, y).class_log_prior_, np.log(counts / 60), rtol=1e-14
    )
    np.testing.assert_allclose(
        cls(prior_m=6.0).fit(X, y).class_log_prior_,
        np.log((counts + 2.0) / 66.0),
        rtol=1e-14,
    )
    np.testing.assert_allclose(
        cls(priors=[0.5, 0.25, 0.25]).fit(X, y).class_log_prior_,
        np.log([0.5, 0.25, 0.25]),
        rtol=1e-15,
    )
