"""The product of emission families: sums of the parts, part by part.

The log-likelihood must be scipy's densities and the tables' entries summed
over the parts; statistics must add part by part and equal each family's own;
the parameters must be each family's own under its own prior.
"""

import numpy as np
import pytest
from scipy.stats import norm

from bayeskit._base.categorical import CategoricalTables, MEstimate
from bayeskit.emissions import DIAG, Categorical, Gaussian
from bayeskit.emissions.base import Emission, ProductStats
from bayeskit.emissions.product import Product
from bayeskit.naive_bayes._numeric import NaiveGaussian, VarianceSmoothing


def mixed_data(rng, n=200, k=3):
    labels = rng.integers(0, k, n)
    codes = np.column_stack(
        [(rng.integers(0, 3, n) + labels) % 3, rng.integers(0, 2, n)]
    )
    codes[rng.random(codes.shape) < 0.1] = -1  # missing cells
    x = rng.normal(size=(n, 2)) + labels[:, None]
    weights = np.eye(k)[labels] * rng.uniform(0.5, 2.0, n)[:, None]
    return codes, x, weights, labels


def test_product_is_an_emission_and_its_log_likelihood_is_the_sum_of_parts(rng):
    codes, x, weights, labels = mixed_data(rng)
    cat, gauss = CategoricalTables([3, 2]), NaiveGaussian(2)
    family = Product([cat, gauss])
    assert isinstance(family, Emission)
    stats = family.stats((codes, x), weights, labels)
    prior = (MEstimate.of(2.0, None, [range(3), range(2)]), VarianceSmoothing(0.5))
    params = family.map_params(stats, prior)
    got = family.log_likelihood((codes, x), params)
    # By hand: the table entries of the observed codes, and scipy's densities.
    cat_params, num_params = params
    tables = cat.tables(cat_params.log_prob)
    expected = np.zeros((len(x), 3))
    for j in range(2):
        seen = codes[:, j] >= 0
        expected[seen] += tables[j][:, codes[seen, j]].T
    for j in range(2):
        expected += norm.logpdf(
            x[:, [j]], num_params.means[:, j], np.sqrt(num_params.covariances[:, j])
        )
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert family.n_parameters(3) == 3 * (2 + 1) + 2 * 3 * 2


def test_statistics_and_parameters_are_each_familys_own(rng):
    codes, x, weights, _ = mixed_data(rng)
    cat, gauss = CategoricalTables([3, 2]), NaiveGaussian(2)
    family = Product([cat, gauss])
    stats = family.stats((codes, x), weights)
    own_cat, own_num = cat.stats(codes, weights), gauss.stats(x, weights)
    np.testing.assert_array_equal(stats.parts[0].counts, own_cat.counts)
    np.testing.assert_allclose(stats.parts[1].mean, own_num.mean)
    np.testing.assert_allclose(stats.parts[1].scatter, own_num.scatter)
    prior = (MEstimate.of(1.0, None, [range(3), range(2)]), VarianceSmoothing(2.0))
    cat_params, num_params = family.map_params(stats, prior)
    np.testing.assert_array_equal(
        cat_params.log_prob, cat.map_params(own_cat, prior[0]).log_prob
    )
    np.testing.assert_allclose(
        num_params.covariances, gauss.map_params(own_num, prior[1]).covariances
    )


def test_statistics_add_part_by_part_and_zeros_is_their_zero(rng):
    codes, x, weights, _ = mixed_data(rng)
    family = Product([Categorical([3, 2]), NaiveGaussian(2)])
    whole = family.stats((codes, x), weights)
    a = family.stats((codes[:80], x[:80]), weights[:80])
    b = family.stats((codes[80:], x[80:]), weights[80:])
    for total in (a + b, b + a, family.zeros(3) + a + b):
        assert isinstance(total, ProductStats)
        np.testing.assert_allclose(total.parts[0].counts, whole.parts[0].counts)
        np.testing.assert_allclose(total.parts[1].weight, whole.parts[1].weight)
        np.testing.assert_allclose(total.parts[1].mean, whole.parts[1].mean)
        np.testing.assert_allclose(total.parts[1].scatter, whole.parts[1].scatter)


def test_columns_split_a_matrix_and_diagonal_gaussians_factorise(rng):
    """Two diagonal Gaussians on disjoint columns are one diagonal Gaussian."""
    x = rng.normal(size=(50, 3)) * [1.0, 3.0, 0.5]
    weights = np.eye(2)[rng.integers(0, 2, 50)]
    split = Product([NaiveGaussian(2), NaiveGaussian(1)], columns=[[0, 2], [1]])
    whole = NaiveGaussian(3)
    ll_split = split.log_likelihood(x, split.map_params(split.stats(x, weights)))
    ll_whole = whole.log_likelihood(x, whole.map_params(whole.stats(x, weights)))
    np.testing.assert_allclose(ll_split, ll_whole, rtol=1e-12)
    with pytest.raises(ValueError, match="disjoint"):
        Product([NaiveGaussian(2), NaiveGaussian(1)], columns=[[0, 1], [1]])
    with pytest.raises(TypeError, match="tuple of one block"):
        Product([NaiveGaussian(2)]).log_likelihood(x, None)


def test_a_part_without_columns_is_none(rng):
    _, x, weights, _ = mixed_data(rng)
    family = Product([None, NaiveGaussian(2)])
    stats = family.stats((None, x), weights)
    assert stats.parts[0] is None
    params = family.map_params(stats)
    assert params[0] is None
    alone = NaiveGaussian(2)
    np.testing.assert_allclose(
        family.log_likelihood((None, x), params),
        alone.log_likelihood(x, alone.map_params(alone.stats(x, weights))),
    )
    with pytest.raises(ValueError, match="no family"):
        Product([None]).log_likelihood((None,), (None,))


def test_grow_lays_the_categorical_counts_out_for_more_categories(rng):
    codes, x, weights, _ = mixed_data(rng)
    family = Product([Categorical([3, 2]), Gaussian(DIAG)])
    stats = family.stats((codes, x), weights)
    bigger = Product([Categorical([4, 2]), Gaussian(DIAG)])
    grown = family.grow(stats, bigger)
    counts = grown.parts[0].counts
    assert counts.shape == (6, 3)
    np.testing.assert_array_equal(counts[:3], stats.parts[0].counts[:3])
    np.testing.assert_array_equal(counts[3], 0.0)  # the new category of feature 0
    np.testing.assert_array_equal(counts[4:], stats.parts[0].counts[3:])
    assert grown.parts[1] is stats.parts[1]


def test_categorical_tables_sample_from_their_tables(rng):
    family = CategoricalTables([3, 2])
    codes = np.array([[0, 1], [1, 0], [2, 1], [0, 0], [1, 1]])
    weights = np.eye(2)[[0, 0, 1, 1, 1]]
    params = family.map_params(
        family.stats(codes, weights), MEstimate.of(1.0, None, [range(3), range(2)])
    )
    states = np.repeat([0, 1], 50_000)
    draws = Product([family]).sample((params,), states, np.random.default_rng(0))[0]
    for j, table in enumerate(family.tables(params.log_prob)):
        for k in (0, 1):
            freq = np.bincount(draws[states == k, j], minlength=table.shape[1])
            np.testing.assert_allclose(freq / 50_000, np.exp(table[k]), atol=0.01)
