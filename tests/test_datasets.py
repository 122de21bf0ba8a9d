"""The bundled data sets hold the values their documentation says."""

from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from bayeskit import PoissonHMM
from bayeskit.datasets import load_earthquakes, load_playtennis

ROOT = Path(__file__).resolve().parents[1]


def test_earthquakes_match_the_published_series():
    quakes = load_earthquakes()
    assert quakes.shape == (107, 1)
    assert list(quakes.columns) == ["count"]
    assert quakes.index.name == "year"
    np.testing.assert_array_equal(quakes.index, np.arange(1900, 2007))
    counts = quakes["count"].to_numpy()
    assert counts.dtype.kind == "i"
    # Zucchini and MacDonald (2009, chapter 1): mean 19.36, variance 51.57.
    assert counts.sum() == 2072
    assert round(counts.mean(), 2) == 19.36
    assert round(counts.var(ddof=1), 2) == 51.57
    assert (counts.min(), quakes["count"].idxmin()) == (6, 1986)
    assert (counts.max(), quakes["count"].idxmax()) == (41, 1943)
    # The first and last years as the book prints them.
    assert counts[:10].tolist() == [13, 14, 8, 10, 16, 26, 32, 27, 18, 32]
    assert counts[-7:].tolist() == [15, 16, 13, 15, 16, 11, 11]


@pytest.mark.slow
def test_earthquakes_three_state_fit_is_the_published_maximum():
    """Direct numerical maximisation with Zucchini and MacDonald's R code gives
    the three-state Poisson HMM with a free initial distribution -log L =
    328.5275 and rates (13.134, 19.713, 29.710); EM from ten starts reaches
    the same maximum."""
    X = load_earthquakes()[["count"]].to_numpy()
    model = PoissonHMM(3, n_iter=500, tol=1e-6, n_init=10, random_state=0).fit(X)
    assert model.score(X) == pytest.approx(-328.5275, abs=1e-3)
    np.testing.assert_allclose(
        np.sort(model.lambdas_.ravel()), [13.134, 19.713, 29.710], atol=2e-3
    )


def test_playtennis_counts():
    df = load_playtennis()
    assert df.shape == (14, 5)
    assert df["PlayTennis"].value_counts().to_dict() == {"Yes": 9, "No": 5}


def test_every_bundled_file_has_a_loader_and_provenance():
    data = resources.files("bayeskit.datasets") / "data"
    csvs = sorted(p.name for p in data.iterdir() if p.name.endswith(".csv"))
    assert csvs == ["earthquakes.csv", "playtennis.csv"]
    # The README sits beside the files in the source tree (the wheel ships
    # only the data).
    readme = (ROOT / "bayeskit" / "datasets" / "data" / "README.md").read_text()
    for name in csvs:
        assert f"## {name}" in readme
    assert "public domain" in readme


# -- the bundled linear-Gaussian networks ------------------------------------------
def _roots(bn):
    return [v for v in bn.variables_ if not bn.dag_.parents(v)]


def test_magic_irri_residual_parameter_is_a_variance():
    """Every root of magic-irri is a marker of inbred lines coded 0 or 2, so
    its variance is fixed by its mean m: m (2 - m), times n / (n - 1) for
    the sample estimate. The loaded network's marginal of each root (its
    query with no evidence) has that variance, to the 4 decimals of the
    published numbers; the file's field squared (its reading as a standard
    deviation) does not."""
    from bayeskit.datasets import load_network

    bn = load_network("magic-irri")
    roots = _roots(bn)
    assert len(roots) == 33
    ratios, as_sd = [], []
    for v in roots:
        post = bn.query(v)
        m, var = float(post["mean"].iloc[0]), float(post["variance"].iloc[0])
        assert m == pytest.approx(float(bn.cpds_[v].intercept), rel=1e-12)
        ratios.append(var / (m * (2 - m)))
        as_sd.append(var**2 / (m * (2 - m)))
    # n / (n - 1) for some n near 1000, blurred by the rounding of m and var.
    assert 1.0 < min(ratios) and max(ratios) < 1.002
    assert max(ratios) - min(ratios) < 1e-3
    assert min(as_sd) < 0.25 and max(as_sd) - min(as_sd) > 0.7


@pytest.mark.parametrize(
    ("name", "n_nodes", "n_edges"), [("ecoli70", 46, 70), ("magic-irri", 64, 102)]
)
def test_linear_gaussian_networks_by_their_marginals(name, n_nodes, n_edges):
    """The implied marginal of every node (query, no evidence) is the joint
    Gaussian's: mean (I - B)^-1 a, covariance (I - B)^-1 D (I - B)^-T."""
    from bayeskit.datasets import load_network

    bn = load_network(name)
    assert len(bn.variables_) == n_nodes and len(bn.dag_.edges) == n_edges
    assert bn.continuous_ == bn.variables_
    order = bn.dag_.topological_order()
    at = {v: i for i, v in enumerate(order)}
    B, a, D = np.zeros((n_nodes,) * 2), np.zeros(n_nodes), np.zeros(n_nodes)
    for v in order:
        node = bn.cpds_[v]
        a[at[v]], D[at[v]] = float(node.intercept), float(node.variance)
        for p, b in zip(node.continuous_parents, np.ravel(node.coef)):
            B[at[v], at[p]] = b
    inv = np.linalg.inv(np.eye(n_nodes) - B)
    mean, cov = inv @ a, inv @ np.diag(D) @ inv.T
    for v in order[:: max(1, n_nodes // 12)]:
        post = bn.query(v)
        assert float(post["mean"].iloc[0]) == pytest.approx(mean[at[v]], rel=1e-10)
        assert float(post["variance"].iloc[0]) == pytest.approx(
            cov[at[v], at[v]], rel=1e-10
        )


@pytest.mark.parity
@pytest.mark.parametrize("name", ["ecoli70", "magic-irri"])
def test_linear_gaussian_networks_equal_pgmpys_copies(name):
    pytest.importorskip("pgmpy")
    import warnings

    from pgmpy.utils import get_example_model

    from bayeskit import BayesianNetwork
    from bayeskit.datasets import load_network

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = BayesianNetwork.from_pgmpy(get_example_model(name))
    ours = load_network(name)
    assert sorted(ours.variables_) == sorted(theirs.variables_)
    assert set(ours.dag_.edges) == set(theirs.dag_.edges)
    for v in ours.variables_:
        a, b = ours.cpds_[v], theirs.cpds_[v]
        mine = dict(zip(a.continuous_parents, np.ravel(a.coef)))
        assert mine == dict(zip(b.continuous_parents, np.ravel(b.coef)))
        np.testing.assert_allclose(a.intercept, b.intercept, rtol=1e-15)
        np.testing.assert_allclose(a.variance, b.variance, rtol=1e-13)


def test_load_network_names_the_linear_gaussian_ones():
    from bayeskit.datasets import load_network

    with pytest.raises(ValueError, match="'ecoli70'"):
        load_network("ecoli71")
