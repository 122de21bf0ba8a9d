"""Networks of continuous nodes to and from pyAgrum's conditional linear
Gaussian model (``pyagrum.clg.CLG``), with pyAgrum's own inference
(``CLGVariableElimination``) as the reference on the same network."""

import numpy as np
import pandas as pd
import pytest

from bayeskit import BayesianNetwork

clg = pytest.importorskip("pyagrum.clg")


def _random_clg(rng, k):
    """A pyAgrum CLG over ``k`` nodes, each with up to three earlier parents,
    random intercepts, coefficients and standard deviations."""
    model = clg.CLG()
    names = [f"x{i}" for i in range(k)]
    for v in names:
        model.add(clg.GaussianVariable(v, rng.normal(0, 2), rng.uniform(0.3, 1.5)))
    for j, v in enumerate(names):
        for p in rng.choice(names[:j], min(j, int(rng.integers(0, 4))), replace=False):
            model.addArc(str(p), v, float(rng.normal()))
    return model, names


@pytest.mark.parity
@pytest.mark.parametrize("seed", range(8))
def test_posteriors_of_a_pyagrum_clg_equal_pyagrum_s(seed):
    rng = np.random.default_rng(seed)
    model, names = _random_clg(rng, int(rng.integers(3, 9)))
    bn = BayesianNetwork.from_pyagrum(model)
    assert bn.continuous_ == names
    assert set(bn.dag_.edges) == {(p, v) for v in names for p in model.parent_names(v)}
    row = bn.sample(1, random_state=seed).iloc[0]
    seen = [v for v in names if rng.random() < 0.5] or names[:1]
    evidence = {v: float(row[v]) for v in seen}
    engine = clg.CLGVariableElimination(model)
    engine.updateEvidence(evidence)
    for v in names:
        if v in seen:
            continue
        theirs = engine.posterior(v)
        ours = bn.query(v, evidence=evidence)
        assert ours["mean"].iloc[0] == pytest.approx(theirs.mu(), rel=1e-9, abs=1e-9)
        assert ours["variance"].iloc[0] == pytest.approx(theirs.sigma() ** 2, rel=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_to_pyagrum_and_back_keeps_every_regression(seed):
    rng = np.random.default_rng(seed)
    model, names = _random_clg(rng, 6)
    bn = BayesianNetwork.from_pyagrum(model)
    again = bn.to_pyagrum()
    for v in names:
        assert again.variable(v).mu() == model.variable(v).mu()
        assert again.variable(v).sigma() == pytest.approx(
            model.variable(v).sigma(), rel=1e-15
        )
        assert sorted(again.parent_names(v)) == sorted(model.parent_names(v))
        for p in model.parent_names(v):
            assert again.coefArc(p, v) == model.coefArc(p, v)
    data = bn.sample(50, random_state=seed)
    np.testing.assert_allclose(
        BayesianNetwork.from_pyagrum(again).score_samples(data),
        bn.score_samples(data),
        rtol=1e-14,
    )


def test_a_fitted_network_goes_to_pyagrum(rng):
    x = rng.normal(size=400)
    df = pd.DataFrame({"x": x, "y": 0.5 + 2.0 * x + rng.normal(size=400)})
    bn = BayesianNetwork([("x", "y")], continuous=["x", "y"]).fit(df)
    model = bn.to_pyagrum()
    assert model.coefArc("x", "y") == pytest.approx(float(bn.cpds_["y"].coef[0]))
    assert model.variable("y").mu() == pytest.approx(float(bn.cpds_["y"].intercept))


def test_what_has_no_pyagrum_clg_is_refused(rng):
    df = pd.DataFrame(
        {"a": rng.choice(["u", "v"], 50), "b": rng.choice(["s", "t"], 50)}
    )
    with pytest.raises(ValueError, match="every node is continuous"):
        BayesianNetwork([("a", "b")]).fit(df).to_pyagrum()
    with pytest.raises(TypeError, match="pyAgrum CLG"):
        BayesianNetwork.from_pyagrum(object())
    model = clg.CLG()
    model.add(clg.GaussianVariable("a", 0.0, 1.0))
    model.variable("a").setSigma(0.0)
    with pytest.raises(ValueError, match=r"'a'.*positive sigma"):
        BayesianNetwork.from_pyagrum(model)
