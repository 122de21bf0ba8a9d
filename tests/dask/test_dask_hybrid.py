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


@pytest.mark.parametrize("npartitions", [1, 4])
def test_predictions_on_partitions_equal_those_in_memory(npartitions):
    """``predict_proba``, ``predict``, ``score_samples`` and ``score`` of a
    Dask DataFrame (a partition emptied by a filter, missing cells of both
    kinds, a column left out) are the in-memory answers, row for row."""
    rng = np.random.default_rng(npartitions)
    bn = BayesianNetwork(EDGES, continuous=CONT).fit(simulate(rng, 500))
    df = simulate(rng, 120)
    df.loc[rng.random(120) < 0.3, "a"] = None
    df.loc[rng.random(120) < 0.3, "b"] = np.nan
    ddf = dd.from_pandas(df, npartitions=npartitions)
    if npartitions > 1:  # the second partition's rows all filtered out
        first, second = ddf.divisions[1], ddf.divisions[2]

        def keep(frame):
            return frame[(frame.index < first) | (frame.index >= second)]

        ddf, df = ddf.map_partitions(keep), keep(df)
    df = ddf.compute()  # the same rows, with Dask's column types
    np.testing.assert_allclose(
        bn.score_samples(ddf).compute(), bn.score_samples(df), rtol=1e-12
    )
    assert bn.score(ddf) == pytest.approx(bn.score(df), rel=1e-12)
    for variable in (None, "a", "d"):
        got = bn.predict_proba(ddf.drop(columns=["d"]), variable).compute()
        ref = bn.predict_proba(df.drop(columns=["d"]), variable)
        pd.testing.assert_frame_equal(got, ref, rtol=1e-12)
    pd.testing.assert_frame_equal(bn.predict(ddf).compute(), bn.predict(df))


def test_the_score_of_a_discrete_network_on_partitions_is_computed():
    rng = np.random.default_rng(0)
    df = simulate(rng, 300)[["a", "d"]]
    bn = BayesianNetwork([("a", "d")]).fit(df)
    assert bn.score(dd.from_pandas(df, npartitions=3)) == pytest.approx(
        bn.score(df), rel=1e-12
    )
