"""Exact posteriors equal pyAgrum's on the bundled networks.

pyAgrum 3.3.1 (C++, the speed anchor of ``benchmarks/bench_network.py``) is
given the same variables, states and tables (built from bayeskit's network:
its BIF reader refuses child's state ``Asy/Patch``) and answers one row of
evidence at a time with ``LazyPropagation``; bayeskit answers every row at
once by ``predict_proba`` (rows with repeated evidence, and one-row frames
read by dict lookups) and one at a time by ``query`` with dict evidence;
the marginals of every variable both by the numpy plan and by the compiled
kernel (``bayeskit.graph._compiled_tree``). Skipped when pyagrum is not installed.
"""

import numpy as np
import pytest

import bayeskit.graph._compiled_tree as compiled_tree
from bayeskit.datasets import load_network

gum = pytest.importorskip("pyagrum")


def to_pyagrum(bn):
    model = gum.BayesNet()
    for v in bn.variables_:
        model.add(gum.LabelizedVariable(v, v, [str(s) for s in bn.states_[v]]))
    for u, v in bn.dag_.edges:
        model.addArc(u, v)
    for v in bn.variables_:
        parents = list(bn.dag_.parents(v))
        table = bn.cpds_[v]
        for index in np.ndindex(*table.shape[:-1]):
            where = {u: int(i) for u, i in zip(parents, index)}
            model.cpt(v)[where] = table[index].tolist()
    return model


def posteriors(engine, names, evidence):
    engine.eraseAllEvidence()
    engine.setEvidence(evidence)
    engine.makeInference()
    return {v: engine.posterior(v).toarray() for v in names}


@pytest.mark.parametrize("kernel", [False, True], ids=["numpy", "kernel"])
@pytest.mark.parametrize("name", ["asia", "child", "insurance", "alarm"])
def test_posteriors_equal_pyagrums(name, kernel, rng, monkeypatch):
    monkeypatch.setattr(compiled_tree, "numpy_first", lambda *kernels: not kernel)
    bn = load_network(name)
    engine = gum.LazyPropagation(to_pyagrum(bn))
    names = list(bn.variables_)
    rows = bn.sample(12, random_state=int(rng.integers(1 << 30))).astype(object)
    rows = rows.mask(rng.random(rows.shape) < 0.6, None)
    rows = rows.iloc[rng.integers(0, 12, 40)].reset_index(drop=True)  # repeats
    proba = bn.predict_proba(rows)
    for r in range(len(rows)):
        evidence = {v: s for v, s in rows.iloc[r].items() if s is not None}
        theirs = posteriors(engine, names, evidence)
        one = bn.predict_proba(rows.iloc[[r]])
        for v in names:
            np.testing.assert_allclose(proba.iloc[r][v], theirs[v], atol=1e-12)
            np.testing.assert_allclose(one.iloc[0][v], theirs[v], atol=1e-12)
        hidden = [v for v in names if v not in evidence]
        for v in hidden[:3]:
            got = bn.query(v, evidence=evidence).to_numpy()
            np.testing.assert_allclose(got, theirs[v], atol=1e-12)
