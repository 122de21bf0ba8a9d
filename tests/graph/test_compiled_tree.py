"""The compiled calibration of a network's every marginal equals the numpy plan's.

``marginal_table`` runs one numba kernel over index arrays compiled from a
pattern's calibration plan; ``BayesNet.marginals`` runs the numpy plan it was
compiled from, message by message. On the four bundled networks and
hypothesis-drawn patterns of evidence (observed variables and states, states
of probability zero included) they agree to 1e-12, and so do the
log-evidence and the one-hot columns of the observed variables.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayeskit.graph._compiled_tree as compiled_tree
from bayeskit.datasets import load_network
from bayeskit.graph._compiled_tree import _numpy_table, marginal_table, state_columns

NETWORKS = {
    name: load_network(name) for name in ("asia", "child", "insurance", "alarm")
}


@pytest.fixture
def kernel(monkeypatch):
    """``marginal_table`` on the compiled kernel, whatever numba's cache holds."""
    monkeypatch.setattr(compiled_tree, "numpy_first", lambda *kernels: False)


@st.composite
def evidence(draw):
    name = draw(st.sampled_from(sorted(NETWORKS)))
    net = NETWORKS[name]._engine_
    variables = net.variables
    mask = draw(
        st.lists(st.booleans(), min_size=len(variables), max_size=len(variables))
    )
    observed = tuple(v for v, m in zip(variables, mask) if m)
    n = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if draw(st.booleans()):  # states of sampled rows: never probability zero
        codes = net.sample(n, rng)
        values = codes[:, [variables.index(v) for v in observed]]
    else:  # any states, probability zero included
        values = np.array(
            [[rng.integers(net.cards[v]) for v in observed] for _ in range(n)],
            dtype=np.intp,
        ).reshape(n, len(observed))
    return net, observed, values


# The fixture only patches a module attribute, the same for every input.
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(case=evidence())
def test_kernel_equals_numpy_plan(kernel, case):
    net, observed, values = case
    got, log_z = marginal_table(net, observed, values)
    want, want_z = _numpy_table(net, observed, values)
    np.testing.assert_array_equal(np.isneginf(log_z), np.isneginf(want_z))
    ok = np.isfinite(want_z)
    np.testing.assert_allclose(log_z[ok], want_z[ok], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got[ok], want[ok], rtol=0, atol=1e-12)


def test_kernel_equals_enumeration_on_asia(kernel, rng):
    """Every marginal by brute force: the joint of asia's 8 variables summed."""
    net = NETWORKS["asia"]._engine_
    variables = net.variables
    shape = [net.cards[v] for v in variables]
    log_joint = np.zeros(shape)
    for v in variables:
        axes = [variables.index(u) for u in net.families[v]]
        table = net.log_cpds[v].transpose(np.argsort(axes))  # variables' order
        expand = [shape[a] if a in axes else 1 for a in range(len(shape))]
        log_joint = log_joint + table.reshape(expand)
    joint = np.exp(log_joint)
    columns = state_columns(net)
    for _ in range(30):
        mask = rng.random(len(variables)) < 0.4
        row = net.sample(1, rng)[0]
        observed = tuple(v for v, m in zip(variables, mask) if m)
        values = row[mask][None, :]
        table, log_z = marginal_table(net, observed, values)
        cut = joint.copy()
        for i in np.flatnonzero(mask):
            keep = np.zeros(shape[i], dtype=bool)
            keep[row[i]] = True
            keep = keep.reshape([-1 if a == i else 1 for a in range(8)])
            cut = np.where(keep, cut, 0)
        np.testing.assert_allclose(log_z[0], np.log(cut.sum()), atol=1e-12)
        for i, v in enumerate(variables):
            axes = tuple(a for a in range(8) if a != i)
            want = cut.sum(axis=axes) / cut.sum()
            got = table[0, columns[v] : columns[v] + net.cards[v]]
            np.testing.assert_allclose(got, want, atol=1e-12)


def _kernel_answers(monkeypatch) -> list:
    """A list that records, for every one-variable query from now on, whether
    the compiled calibration answered it (True) or the pruned plan (False)."""
    import bayeskit.network._queries as queries

    used = []
    one_marginal = queries._one_marginal

    def counted(*args):
        out = one_marginal(*args)
        used.append(out is not None)
        return out

    monkeypatch.setattr(queries, "_one_marginal", counted)
    return used


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_query_by_kernel_equals_pruned_query(kernel, name, rng, monkeypatch):
    """``query`` of one variable given dict evidence, read from the kernel's
    marginals, equals the numpy plan of the query alone (which prunes the
    evidence the target is d-separated from) to 1e-12."""
    import bayeskit.network._queries as queries

    bn = NETWORKS[name]
    # The kernel wherever the tree is small, whatever the pruned plan keeps.
    monkeypatch.setattr(compiled_tree, "PLAN_CLIQUE", np.inf)
    variables = list(bn.variables_)
    rows = bn.sample(40, random_state=int(rng.integers(1 << 30)))
    cases = []
    for _, row in rows.iterrows():
        chosen = rng.choice(len(variables), size=1 + rng.integers(0, 6), replace=False)
        target, *observed = (variables[i] for i in chosen)
        cases.append((target, {v: row[v] for v in observed}))
    for t, e in cases:  # a pattern met once is answered pruned: meet each
        bn.query(t, evidence=e)
    used = _kernel_answers(monkeypatch)
    got = [bn.query(t, evidence=e).to_numpy() for t, e in cases]
    # INSURANCE's trees of few observed variables are above QUERY_ENTRIES.
    assert all(used) if name != "insurance" else len(used) == len(cases)
    monkeypatch.setattr(queries, "_one_marginal", lambda *args: None)
    want = [bn.query(t, evidence=e).to_numpy() for t, e in cases]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-12)


def test_query_ignores_impossible_evidence_it_is_separated_from(kernel, monkeypatch):
    """Evidence of probability zero that the target is d-separated from: the
    whole tree's calibration has no mass, and the pruned path answers, as
    before (asia: ``either`` is ``tub`` or ``lung``, so ``either=no`` with
    ``lung=yes`` is impossible; ``xray``, whose one parent is ``either``, is
    d-separated from ``lung`` given ``either``)."""
    bn = NETWORKS["asia"]
    evidence = {"either": "no", "lung": "yes"}
    monkeypatch.setattr(compiled_tree, "COMPILE_CLIQUE", 0.0)  # compiled at once
    for _ in range(2):  # the second time by the kernel's calibration
        with pytest.raises(ValueError, match="probability zero"):
            bn.query("tub", evidence=evidence)
    got = bn.query("xray", evidence=evidence)
    want = bn.cpds_["xray"][list(bn.states_["either"]).index("no")]
    np.testing.assert_allclose(got.to_numpy(), want, atol=1e-12)


def test_a_network_keeps_a_bounded_number_of_patterns(kernel, monkeypatch):
    # Rows that keep showing new patterns of evidence must not grow what the
    # network keeps compiled without end; what it forgets it compiles again,
    # to the same answers.
    import bayeskit.graph.network as graph_network

    monkeypatch.setattr(graph_network, "MAX_PATTERNS", 5)
    engine = NETWORKS["asia"]._engine_
    fresh = type(engine)(engine.dag, engine.cards, engine.log_cpds)
    variables = engine.variables
    rng = np.random.default_rng(0)
    seen = []
    for _ in range(40):
        observed = tuple(v for v in variables if rng.random() < 0.5)
        values = np.array([[rng.integers(engine.cards[v]) for v in observed]])
        got, log_z = marginal_table(fresh, observed, values.reshape(1, -1))
        assert len(fresh._patterns) <= 5
        want, want_z = _numpy_table(engine, observed, values.reshape(1, -1))
        np.testing.assert_allclose(got, want, atol=1e-12)
        np.testing.assert_allclose(log_z, want_z, atol=1e-12)
        seen.append(observed)
    assert len(set(seen)) > 5  # more patterns than the bound were met


def test_a_query_takes_the_cheaper_of_kernel_and_pruned_plan(kernel, monkeypatch):
    """From a pattern's second sighting a one-variable query is answered by
    the kernel where calibrating the whole tree costs less than the pruned
    plan of the query (every clique of ASIA's small tree), and pruned where
    the evidence leaves the target one clique of ALARM's larger tree (the
    kernel had been chosen there, 1.3-1.6 times as slow); compiling the
    tree taken as free here (the rule of when to compile: next test)."""
    import bayeskit.network._queries as queries

    monkeypatch.setattr(compiled_tree, "COMPILE_CLIQUE", 0.0)
    used = _kernel_answers(monkeypatch)
    for name, target, evidence, by_kernel in [
        ("asia", "dysp", {"smoke": "yes", "xray": "yes"}, True),
        ("alarm", "LVFAILURE", {"HRBP": "HIGH", "EXPCO2": "LOW"}, False),
    ]:
        bn = NETWORKS[name]
        net = bn._engine_
        first = bn.query(target, evidence=evidence).to_numpy()
        used.clear()
        second = bn.query(target, evidence=evidence).to_numpy()
        assert used == [by_kernel], name
        np.testing.assert_allclose(second, first, atol=1e-12)
        observed, _ = net.evidence(queries.evidence_codes(bn, evidence))
        pruned = net._pattern(observed, (target,), "marginal").plan
        whole = compiled_tree._whole_entries(net, observed)
        kernel_cost = compiled_tree.KERNEL_CALL + compiled_tree.KERNEL_ENTRY * whole
        assert (kernel_cost <= compiled_tree.PLAN_CLIQUE * len(pruned._cards)) is (
            by_kernel
        )


def test_entry_maps_are_brute_force_and_built_once_per_clique(rng):
    """Every clique-to-scope map is the entry of the scope's table at the
    clique entry's states (``np.ravel_multi_index`` of the states); the maps
    of small cliques are built once and kept, so compiling a pattern again
    builds none, and compiles the same arrays (the kernel's input, hence its
    answers, bit for bit)."""
    for _ in range(200):
        n = int(rng.integers(1, 5))
        layout = tuple(rng.permutation(["a", "b", "c", "d", "e"])[:n].tolist())
        cards = {v: int(rng.integers(1, 5)) for v in layout}
        scope = tuple(v for v in rng.permutation(layout).tolist() if rng.random() < 0.6)
        shape = [cards[v] for v in layout]
        states = np.indices(shape).reshape(len(layout), -1)
        expected = (
            np.ravel_multi_index(
                [states[layout.index(v)] for v in scope], [cards[v] for v in scope]
            )
            if scope
            else np.zeros(states.shape[1], dtype=int)
        )
        got = compiled_tree._entry_map(layout, cards, scope)
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == np.int32 and not got.flags.writeable

    net = load_network("alarm")._engine_
    observed = ("HRBP", "EXPCO2")
    pat = net._pattern(tuple(sorted(observed, key=net.variables.index)), (), "all")
    args = (pat.plan, pat.tables, pat.clique_of, state_columns(net))
    first = compiled_tree.CompiledCalibration(*args)
    built = compiled_tree._kept_map.cache_info().misses
    again = compiled_tree.CompiledCalibration(*args)
    assert compiled_tree._kept_map.cache_info().misses == built
    for name, value in vars(first).items():
        np.testing.assert_array_equal(value, vars(again)[name], err_msg=name)
    compiled_tree._kept_map.cache_clear()
    fresh = compiled_tree.CompiledCalibration(*args)
    for name, value in vars(first).items():
        np.testing.assert_array_equal(value, vars(fresh)[name], err_msg=name)


@pytest.mark.parametrize("name", ["asia", "child"])
def test_a_pattern_is_compiled_once_its_savings_would_have_paid_for_it(
    kernel, name, rng, monkeypatch
):
    """A pattern's whole tree is compiled at the first sighting ``m`` with
    ``(m - 1) * saved >= price`` (``saved``: the pruned plan's cost less the
    kernel's per query; ``price``: compiling the tree), never before; then
    every query of the pattern the kernel answers cheaper is by the kernel,
    equal to the pruned answer to 1e-12."""
    import bayeskit.network._queries as queries

    used = _kernel_answers(monkeypatch)
    bn = NETWORKS[name]
    engine = bn._engine_
    variables = list(bn.variables_)
    row = bn.sample(1, random_state=int(rng.integers(1 << 30))).iloc[0]
    tested = 0
    for _ in range(30):
        chosen = rng.choice(len(variables), size=2 + rng.integers(0, 3), replace=False)
        target, *observed = (variables[i] for i in chosen)
        evidence = {v: row[v] for v in observed}
        fresh = type(engine)(engine.dag, engine.cards, engine.log_cpds)
        monkeypatch.setattr(bn, "_engine_", fresh)
        first = bn.query(target, evidence=evidence).to_numpy()  # its pruned plan
        obs, _ = fresh.evidence(queries.evidence_codes(bn, evidence))
        entries = compiled_tree._whole_entries(fresh, obs)
        cliques = len(fresh._pattern(obs, (target,), "marginal").plan._cards)
        saved = compiled_tree.PLAN_CLIQUE * cliques - (
            compiled_tree.KERNEL_CALL + compiled_tree.KERNEL_ENTRY * entries
        )
        if saved <= 0 or entries > compiled_tree.QUERY_ENTRIES:
            continue
        tree, _ = fresh._network(())
        price = compiled_tree.COMPILE_CLIQUE * len(tree.layouts)
        due = next(m for m in range(2, 10**6) if (m - 1) * saved >= price)
        used.clear()
        for _ in range(2, due + 2):
            got = bn.query(target, evidence=evidence).to_numpy()
            np.testing.assert_allclose(got, first, atol=1e-12)
        assert used == [False] * (due - 2) + [True, True]
        assert (obs, "compiled") in fresh._patterns
        tested += 1
    assert tested >= 5
