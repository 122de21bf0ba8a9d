"""The covariance structures' layouts of given covariances (hmmlearn's
``covars_``): the start from one matrix, the full matrices of every state, the
accepted shapes and values, and the factor of a singular matrix, each against
hmmlearn's own helpers on the same arrays."""

import numpy as np
import pytest

from bayeskit.emissions import DIAG, FULL, SPHERICAL, TIED, Gaussian

hu = pytest.importorskip("hmmlearn._utils")
hutils = pytest.importorskip("hmmlearn.utils")
hstats = pytest.importorskip("hmmlearn.stats")

STRUCTURES = [FULL, TIED, DIAG, SPHERICAL]


def spd(rng, d):
    B = rng.normal(size=(d, d))
    return B @ B.T / d + np.eye(d)


@pytest.mark.parametrize("structure", STRUCTURES, ids=lambda s: s.name)
def test_from_matrix_is_hmmlearns_distribution_of_one_matrix(structure, rng):
    """hmmlearn starts every state from the data's covariance; spherical is
    the mean of its diagonal in bayeskit (hmmlearn averages every entry,
    off-diagonal ones too, which can make it negative)."""
    k, d = 3, 4
    cv = spd(rng, d)
    ours = structure.from_matrix(cv, k)
    assert ours.shape == structure.shape(k, d)
    if structure is SPHERICAL:
        np.testing.assert_array_equal(ours, np.full(k, np.mean(np.diag(cv))))
    else:
        theirs = hu.distribute_covar_matrix_to_match_covariance_type(
            cv, structure.name, k
        )
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("structure", STRUCTURES, ids=lambda s: s.name)
def test_dense_all_is_hmmlearns_fill_covars(structure, rng):
    k, d = 3, 4
    own = structure.from_matrix(spd(rng, d), k)
    if structure.shape(k, d)[0] == k and structure is not TIED:
        own = own * np.arange(1.0, k + 1).reshape((k,) + (1,) * (own.ndim - 1))
    theirs = hutils.fill_covars(own, structure.name, k, d)
    np.testing.assert_array_equal(structure.dense_all(own, k, d), theirs)


def test_spherical_layout_reads_hmmlearns_repeated_variances():
    """hmmlearn keeps a spherical variance repeated for every feature, (k, d):
    the layout reads it back as one per state; rows that differ are an error
    naming the attribute."""
    k, d = 3, 2
    repeated = np.repeat(np.array([1.0, 2.0, 3.0])[:, None], d, axis=1)
    np.testing.assert_array_equal(
        SPHERICAL.layout(repeated, k, "covars_"), [1.0, 2.0, 3.0]
    )
    # hmmlearn's own fit stores its spherical variances in that layout.
    hmm = pytest.importorskip("hmmlearn.hmm")
    X = np.random.default_rng(0).normal(size=(60, d))
    theirs = hmm.GaussianHMM(k, "spherical", n_iter=2, random_state=0).fit(X)
    assert np.shape(theirs._covars_) == (k, d)
    np.testing.assert_array_equal(
        SPHERICAL.layout(theirs._covars_, k, "covars_"), theirs._covars_[:, 0]
    )
    with pytest.raises(ValueError, match=r"covars_ must have shape \(3,\)"):
        SPHERICAL.layout(np.array([[1.0, 2.0], [1.0, 1.0], [3.0, 3.0]]), k, "covars_")


@pytest.mark.parametrize(
    ("structure", "value"),
    [
        (FULL, np.ones((3, 2))),
        (FULL, np.ones((3, 2, 3))),
        (TIED, np.ones((3, 2, 2))),
        (DIAG, np.ones(3)),
        (SPHERICAL, np.ones(4)),
    ],
    ids=["full-2d", "full-not-square", "tied-3d", "diag-1d", "spherical-k"],
)
def test_wrong_layouts_are_errors_naming_the_attribute(structure, value):
    with pytest.raises(ValueError, match=r"^covars_ must have shape"):
        structure.layout(value, 3, "covars_")
    with pytest.raises(ValueError):  # hmmlearn rejects them too
        hu._validate_covars(value, structure.name, 3)


def _cases(structure, rng):
    """(covariances, valid?) in the structure's shape."""
    k, d = 2, 3
    good = structure.from_matrix(spd(rng, d), k)
    out = [(good, True)]
    if structure in (FULL, TIED):
        asym = np.array(good, copy=True)
        asym[..., 0, 1] += 0.5
        not_pd = np.array(good, copy=True)
        not_pd[..., 0, 1] = not_pd[..., 1, 0] = 10.0
        out += [(asym, False), (not_pd, False), (np.zeros_like(good), False)]
    else:
        neg = np.array(good, copy=True)
        neg.flat[0] = -1.0
        zero = np.array(good, copy=True)
        zero.flat[-1] = 0.0
        out += [(neg, False), (zero, False)]
    return out


@pytest.mark.parametrize("structure", STRUCTURES, ids=lambda s: s.name)
def test_check_values_accepts_what_hmmlearn_accepts(structure, rng):
    """Finite values: valid exactly where hmmlearn's covars_ check says so
    (symmetric, every eigenvalue above zero; positive variances)."""
    for value, valid in _cases(structure, rng):
        try:
            hu._validate_covars(value, structure.name, 2)
            theirs = True
        except ValueError:
            theirs = False
        assert theirs is valid
        if valid:
            structure.check_values(value, "covars_")
        else:
            with pytest.raises(ValueError, match=r"^covars_(\[\d\])? must be"):
                structure.check_values(value, "covars_")


@pytest.mark.parametrize("structure", STRUCTURES, ids=lambda s: s.name)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_covariances_are_errors_naming_the_attribute(structure, bad, rng):
    value = np.array(structure.from_matrix(spd(rng, 3), 2), copy=True)
    value.flat[0] = bad
    with pytest.raises(ValueError, match=r"^covars_(\[0\])? must be finite"):
        structure.check_values(value, "covars_")


@pytest.mark.parametrize("structure", [FULL, TIED], ids=lambda s: s.name)
def test_a_singular_matrix_is_factored_with_the_jitter_as_hmmlearns_densities(
    structure, rng
):
    """hmmlearn's densities of a full or tied covariance factor a singular
    matrix with 1e-7 on its diagonal; so does singular_jitter=1e-7, and
    without a jitter the factor is a LinAlgError."""
    k, d = 2, 3
    v = rng.normal(size=d)
    singular = np.outer(v, v)  # rank one
    cov = np.stack([singular, spd(rng, d)]) if structure is FULL else singular
    means = rng.normal(size=(k, d))
    X = rng.normal(size=(20, d))
    params = Gaussian(structure, singular_jitter=1e-7).params_from(means, cov)
    theirs = hstats.log_multivariate_normal_density(X, means, cov, structure.name)
    np.testing.assert_allclose(
        Gaussian(structure).log_likelihood(X, params), theirs, rtol=1e-7
    )
    with pytest.raises(np.linalg.LinAlgError):
        Gaussian(structure).params_from(means, cov)
