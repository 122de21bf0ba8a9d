"""The two rules of hmmlearn's GaussianHMM update that are not part of the
Normal-inverse-Wishart density, as options of the prior: the bounded
denominator of the variances (min_denominator) and the covariance a state of
zero weight keeps (keep_unvisited). Each is compared with hmmlearn's own
M-step (``GaussianHMM._do_mstep``) on the same expected statistics."""

import dataclasses
import warnings

import numpy as np
import pytest

from bayeskit.emissions import DIAG, FULL, SPHERICAL, TIED, Gaussian
from bayeskit.priors import NormalInverseWishart

hmm = pytest.importorskip("hmmlearn.hmm")

STRUCTURES = [FULL, TIED, DIAG, SPHERICAL]


def hmmlearn_m_step(structure, X, weights, previous_means, previous_covars, **priors):
    """hmmlearn's new means and covariances from the statistics of ``X``
    under ``weights`` (its own names of the statistics)."""
    k, d = weights.shape[1], X.shape[1]
    model = hmm.GaussianHMM(k, structure.name, params="mc", **priors)
    model.n_features = d
    model.means_ = previous_means
    model.covars_ = previous_covars
    stats = {
        "nobs": 1,
        "start": np.zeros(k),
        "trans": np.zeros((k, k)),
        "post": weights.sum(axis=0),
        "obs": weights.T @ X,
        "obs**2": weights.T @ X**2,
        "obs*obs.T": np.einsum("ik,ij,il->kjl", weights, X, X),
    }
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        model._do_mstep(stats)
    return model.means_, np.asarray(model._covars_)


def data(rng, n=50, d=2, k=3):
    X = rng.normal(size=(n, d)) + rng.normal(scale=3.0, size=d)
    W = rng.dirichlet(np.ones(k), size=n)
    return X, W


@pytest.mark.parametrize("structure", [DIAG, SPHERICAL], ids=lambda s: s.name)
def test_the_variance_denominator_is_bounded_as_hmmlearns(structure, rng):
    """A state of weight 1e-8: hmmlearn divides its variances by max(c + n,
    1e-5), and so does from_hmmlearn's prior; the exact mode (no bound)
    divides by 1e-8 instead."""
    k, d = 3, 2
    X, W = data(rng, d=d, k=k)
    W[:, 2] *= 1e-8 / W[:, 2].sum()
    means0 = rng.normal(size=(k, d))
    cov0 = structure.from_matrix(np.eye(d), k)
    their_means, their_cov = hmmlearn_m_step(structure, X, W, means0, cov0)
    prior = NormalInverseWishart.from_hmmlearn(structure, d)
    assert prior.min_denominator == 1e-5
    stats = Gaussian(structure).stats(X, W)
    means, cov = prior.map(structure, stats)
    np.testing.assert_allclose(means, their_means, rtol=1e-9)
    if structure is SPHERICAL:
        their_cov = their_cov[:, 0]
    np.testing.assert_allclose(cov, their_cov, rtol=1e-7)
    assert np.all(cov[2] < 2e3)  # (1e-2 + ~1e-8) / 1e-5
    exact = dataclasses.replace(prior, min_denominator=0.0)
    assert np.all(exact.map(structure, stats)[1][2] > 1e5)  # / 1e-8


@pytest.mark.parametrize("structure", [FULL, TIED], ids=lambda s: s.name)
def test_matrices_have_no_bounded_denominator_as_hmmlearn(structure, rng):
    k, d = 3, 2
    X, W = data(rng, d=d, k=k)
    W[:, 2] *= 1e-3 / W[:, 2].sum()
    means0 = rng.normal(size=(k, d))
    cov0 = structure.from_matrix(np.eye(d), k)
    _, their_cov = hmmlearn_m_step(structure, X, W, means0, cov0)
    prior = NormalInverseWishart.from_hmmlearn(structure, d)
    assert prior.min_denominator == 0.0
    _, cov = prior.map(structure, Gaussian(structure).stats(X, W))
    np.testing.assert_allclose(cov, their_cov, rtol=1e-8)


@pytest.mark.parametrize("structure", [FULL, DIAG, SPHERICAL], ids=lambda s: s.name)
def test_a_state_of_zero_weight_keeps_its_covariance(structure, rng):
    """hmmlearn's update divides by the zero weight of a state no data
    reached (NaN, or a prior's mode alone); from_hmmlearn's prior keeps the
    previous covariance of that state and gives hmmlearn's update to the
    others."""
    k, d = 3, 2
    X, W = data(rng, d=d, k=k)
    W[:, 1] = 0.0
    means0 = rng.normal(size=(k, d))
    cov0 = structure.from_matrix(np.eye(d), k) * np.arange(1.0, 4.0).reshape(
        (k,) + (1,) * (len(structure.shape(k, d)) - 1)
    )
    priors = {"covars_weight": d + 3.0, "means_weight": 0.5}
    their_means, their_cov = hmmlearn_m_step(structure, X, W, means0, cov0, **priors)
    prior = NormalInverseWishart.from_hmmlearn(structure, d, **priors)
    assert prior.keep_unvisited
    previous = Gaussian(structure).params_from(means0, cov0)
    means, cov = prior.map(structure, Gaussian(structure).stats(X, W), previous)
    if structure is SPHERICAL:
        their_cov = their_cov[:, 0]
    visited = [0, 2]
    np.testing.assert_allclose(means[visited], their_means[visited], rtol=1e-9)
    np.testing.assert_allclose(cov[visited], their_cov[visited], rtol=1e-9)
    np.testing.assert_array_equal(cov[1], cov0[1])
    # Without the rule the prior's mode alone: Psi / c, not the old value.
    plain = dataclasses.replace(prior, keep_unvisited=False)
    _, mode = plain.map(structure, Gaussian(structure).stats(X, W), previous)
    assert not np.allclose(mode[1], cov0[1])


def test_the_options_are_checked_and_shown():
    with pytest.raises(ValueError, match="min_denominator"):
        NormalInverseWishart(min_denominator=-1.0)
    with pytest.raises(TypeError, match="keep_unvisited"):
        NormalInverseWishart(keep_unvisited="yes")
    prior = NormalInverseWishart(min_denominator=1e-5, keep_unvisited=True)
    assert "min_denominator=1e-05" in repr(prior)
    assert "keep_unvisited=True" in repr(prior)


def test_from_hmmlearn_errors_name_hmmlearns_parameters():
    with pytest.raises(ValueError, match=r"^covars_prior must be"):
        NormalInverseWishart.from_hmmlearn(FULL, 2, covars_prior=-1.0)
    with pytest.raises(ValueError, match=r"^means_weight must be"):
        NormalInverseWishart.from_hmmlearn(DIAG, 2, means_weight=-1.0)
