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
