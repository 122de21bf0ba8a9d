"""A network with continuous nodes on Dask: every partition is summarized
where it lives and the statistics summed by the tree.

The reference is the network fitted on the same rows in memory: the counts
are exact sums and the regressions' triangular factors add as accurately as
the rows, so every table and regression agrees to 1e-10.
"""

import numpy as np
import pandas as pd
import pytest

from bayeskit import BayesianNetwork

dd = pytest.importorskip("dask.dataframe")
pytestmark = pytest.mark.usefixtures("sync")

EDGES = [("a", "d"), ("a", "b"), ("d", "c"), ("b", "c"), ("e", "c")]
CONT = ["b", "e", "c"]


def simulate(rng, n):
    a = rng.choice(["lo", "hi", "mid"], size=n, p=[0.5, 0.3, 0.2])
    d = np.where(rng.random(n) < np.where(a == "hi", 0.8, 0.3), "yes", "no")
    b = np.select([a == "lo", a == "hi"], [-1.0, 2.0], 0.5) + rng.normal(size=n)
    e = 3.0 + rng.normal(size=n)
    c = 1.0 + np.where(d == "yes", 1.5, -0.5) * b + 0.4 * e + rng.normal(size=n)
    return pd.DataFrame({"a": a, "d": d, "b": b, "e": e, "c": c})


def assert_same(got, ref):
    assert got.variables_ == ref.variables_
    for v in ref.variables_:
        if v in ref.continuous_:
            for name in ("intercept", "coef", "variance"):
                np.testing.assert_allclose(
                    getattr(got.cpds_[v], name),
                    getattr(ref.cpds_[v], name),
                    rtol=1e-10,
                    atol=1e-12,
                )
        else:
            assert got.states_[v].tolist() == ref.states_[v].tolist()
            np.testing.assert_allclose(got.cpds_[v], ref.cpds_[v], rtol=1e-12)


@pytest.mark.parametrize("npartitions", [1, 3, 7])
def test_fit_on_partitions_equals_the_fit_in_memory(npartitions):
    rng = np.random.default_rng(npartitions)
    df = simulate(rng, 400)
    df.loc[rng.random(400) < 0.05, "e"] = np.nan
    df["w"] = rng.uniform(0, 2, 400)
    ddf = dd.from_pandas(df, npartitions=npartitions)
    # A partition of the first rows only (no "mid"): states add by union.
    ddf = ddf[(ddf.index >= 40) | (ddf["a"] != "mid")]
    kept = df[(df.index >= 40) | (df["a"] != "mid")]
    cols = ["a", "d", "b", "e", "c"]
    ref = BayesianNetwork(EDGES, continuous=CONT).fit(
        kept[cols], sample_weight=kept["w"].to_numpy()
    )
    got = BayesianNetwork(EDGES, continuous=CONT).fit(ddf[cols], sample_weight=ddf["w"])
    assert_same(got, ref)
    np.testing.assert_allclose(
        got.score_samples(kept[cols]), ref.score_samples(kept[cols]), rtol=1e-10
    )


def test_partial_fit_adds_a_dask_chunk_to_what_the_network_has_seen():
    rng = np.random.default_rng(0)
    df = simulate(rng, 500)
    bn = BayesianNetwork(EDGES, continuous=CONT).partial_fit(df.iloc[:200])
    bn.partial_fit(dd.from_pandas(df.iloc[200:], npartitions=3))
    assert_same(bn, BayesianNetwork(EDGES, continuous=CONT).fit(df))


def test_a_failing_fit_leaves_the_network_as_it_was():
    rng = np.random.default_rng(1)
    df = simulate(rng, 200)
    bn = BayesianNetwork(EDGES, continuous=CONT).fit(df)
    before = bn.cpds_["c"].intercept.copy()
    bad = df.assign(a=np.where(np.arange(200) == 7, "new", df["a"]))
    with pytest.raises(ValueError, match="new"):
        bn.partial_fit(dd.from_pandas(bad, npartitions=2))
    np.testing.assert_array_equal(bn.cpds_["c"].intercept, before)
    with pytest.raises(ValueError, match="latent"):
        BayesianNetwork(EDGES, continuous=CONT, latent=["z"]).fit(
            dd.from_pandas(df, npartitions=2)
        )
