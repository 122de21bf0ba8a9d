"""The short paths of a network's queries give the batched path's answers.

A frame of a few rows is read by dict lookups (``bayeskit.network._fast``),
rows repeating the same evidence are propagated once, and what is compiled
for a set of tables is dropped with them. Each is checked against the
batched path run by hand on the structure (every row of a pattern in one
propagation, no deduplication) and against enumeration of the joint.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_bayesnet import conditional, joint_of, marginal_of, random_network

from bayeskit import BayesianNetwork
from bayeskit.graph.network import BayesNet
from bayeskit.network import UnknownStateError
from bayeskit.network._data import query_codes, state_encoder
from bayeskit.network._fast import distinct_rows, factorized_codes, few_row_codes


def batched(bn, codes):
    """``predict_proba`` of every variable and the log-likelihood, by the
    structure on every row of each pattern at once, nothing deduplicated."""
    n = codes.shape[0]
    probs = {v: np.zeros((n, len(bn.states_[v]))) for v in bn.variables_}
    ll = np.zeros(n)
    for rows, observed in BayesNet.group_rows(codes < 0):
        cols = np.flatnonzero(observed)
        evidence = (
            tuple(bn.variables_[j] for j in cols),
            codes[rows[:, None], cols],
        )
        post = bn._engine_.marginals(*evidence)
        ll[rows] = bn._engine_.log_likelihood(*evidence)
        for j, v in enumerate(bn.variables_):
            if observed[j]:
                probs[v][rows, codes[rows, j]] = 1.0
            else:
                probs[v][rows] = np.exp(post.log_marginals[v])
    return np.hstack([probs[v] for v in bn.variables_]), ll


def rows_of(rng, bn, n_rows, p_missing, n_distinct=None):
    """Sampled rows with cells missing at random; ``n_distinct`` of them
    repeated to ``n_rows`` rows in random order."""
    df = bn.sample(n_distinct or n_rows, random_state=int(rng.integers(1 << 30)))
    df = df.astype(object).mask(rng.random(df.shape) < p_missing, None)
    if n_distinct:
        df = df.iloc[rng.integers(0, n_distinct, n_rows)].reset_index(drop=True)
    return df


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    n_nodes=st.integers(2, 9),
    p_missing=st.sampled_from([0.0, 0.3, 0.6, 1.0]),
    n_distinct=st.sampled_from([None, 1, 3]),
)
def test_one_row_and_repeated_rows_equal_the_batched_path(
    seed, n_nodes, p_missing, n_distinct
):
    rng = np.random.default_rng(seed)
    bn = random_network(rng, n_nodes)
    df = rows_of(rng, bn, 12, p_missing, n_distinct)
    codes, _ = query_codes(bn, df)
    expected, expected_ll = batched(bn, codes)
    # Repeated rows (n_distinct) are answered once and scattered.
    np.testing.assert_allclose(bn.predict_proba(df).to_numpy(), expected, atol=1e-14)
    np.testing.assert_allclose(bn.log_likelihood(df), expected_ll, atol=1e-14)
    # One row at a time: read by dict lookups, the same codes and answers.
    for i in range(len(df)):
        row = df.iloc[[i]]
        fast = few_row_codes(bn, row)
        assert fast is not None
        np.testing.assert_array_equal(fast, codes[[i]])
        got = bn.predict_proba(row)
        np.testing.assert_allclose(got.to_numpy(), expected[[i]], atol=1e-14)
        assert got.index.equals(row.index)


def test_answers_equal_enumeration_with_repeats_and_one_rows(rng):
    for trial in range(6):
        bn = random_network(rng, 3 + trial)
        joint = joint_of(bn)
        df = rows_of(rng, bn, 40, 0.4, n_distinct=5)
        proba = bn.predict_proba(df)
        filled = bn.predict(df)
        for r, (_, row) in enumerate(df.iterrows()):
            evidence = {v: s for v, s in row.items() if not pd.isna(s)}
            cond, _, hidden = conditional(bn, joint, evidence)
            one = bn.predict_proba(df.iloc[[r]])
            for v in hidden:
                expected = marginal_of(cond, hidden, [v])
                np.testing.assert_allclose(proba.iloc[r][v], expected, atol=1e-12)
                np.testing.assert_allclose(one.iloc[0][v], expected, atol=1e-12)
            if hidden:
                best = np.unravel_index(np.argmax(cond), cond.shape)
                for v, s in zip(hidden, best):
                    assert filled.loc[df.index[r], v] == bn.states_[v].tolist()[s]


def test_distinct_rows_scatter_back(rng):
    for _ in range(30):
        cards = list(rng.integers(1, 5, size=rng.integers(0, 5)))
        n = int(rng.integers(0, 40))
        values = np.stack(
            [rng.integers(0, k, n) for k in cards] or [np.zeros(n)], axis=1
        ).astype(np.intp)[:, : len(cards)]
        distinct, inverse = distinct_rows(values, cards)
        back = distinct if inverse is None else distinct[inverse]
        np.testing.assert_array_equal(back, values)
        assert len(np.unique(distinct, axis=0)) == len(distinct)
    # Cardinalities whose product overflows a flat key take the row sort.
    values = np.array([[1, 2], [1, 2], [0, 2]])
    distinct, inverse = distinct_rows(values, [2**40, 2**40])
    np.testing.assert_array_equal(distinct[inverse], values)
    assert len(distinct) == 2


def test_the_reader_steps_aside_for_what_it_does_not_read(rng):
    bn = random_network(rng, 4, int_labels=True)  # integer states
    df = bn.sample(3, random_state=0)
    assert few_row_codes(bn, df) is not None
    v = bn.variables_[0]
    state = bn.states_[v].tolist()[0]
    # A float for an integer state, an unknown state, another column, an
    # array, many rows: the full path reads them (or raises its error).
    as_float = df.astype({v: float})
    assert few_row_codes(bn, as_float) is None
    np.testing.assert_allclose(
        bn.predict_proba(as_float).to_numpy(), bn.predict_proba(df).to_numpy()
    )
    unknown = df.assign(**{v: [999, state, state]})
    assert few_row_codes(bn, unknown) is None
    with pytest.raises(ValueError, match="999"):
        bn.predict_proba(unknown)
    assert few_row_codes(bn, df.assign(other=1)) is None
    with pytest.raises(ValueError, match="other"):
        bn.predict_proba(df.assign(other=1))
    assert few_row_codes(bn, df.to_numpy()) is None
    many = bn.sample(500, random_state=1)
    assert few_row_codes(bn, many) is None
    # NaN, None and pd.NA are missing cells, as on the full path.
    for missing in (np.nan, None, pd.NA):
        holed = df.astype(object)
        holed.iloc[0, 0] = missing
        codes = few_row_codes(bn, holed)
        assert codes[0, bn.variables_.index(df.columns[0])] == -1
        np.testing.assert_array_equal(codes, query_codes(bn, holed)[0])


def fitted(rng, labels, n=300):
    """A two-variable network fitted to data over these labels."""
    a = rng.choice(labels, n)
    b = np.where(rng.random(n) < 0.8, a, rng.choice(labels, n))
    return pd.DataFrame({"a": a, "b": b})


def test_what_is_compiled_is_dropped_with_the_tables(rng):
    bn = BayesianNetwork([("a", "b")])
    first = fitted(rng, ["p", "q", "r"])
    second = fitted(rng, ["q", "r", "s", "t"])  # other states, other codes
    row = pd.DataFrame({"a": ["r"], "b": [None]})
    before = bn.fit(first).predict_proba(row)
    bn.predict_proba(row.assign(b="q"))
    assert bn._engine_.memo  # the reader and the columns are kept
    after = bn.fit(second).predict_proba(row)
    fresh = BayesianNetwork([("a", "b")]).fit(second).predict_proba(row)
    pd.testing.assert_frame_equal(after, fresh)
    assert list(after.columns.get_level_values("state")) != list(
        before.columns.get_level_values("state")
    )
    # A table set by hand after a query is used by the next one.
    bn.set_cpd("b", np.eye(4))
    np.testing.assert_allclose(bn.predict_proba(row)["b"].to_numpy(), [[0, 1, 0, 0]])
    # partial_fit changes the tables: the answers follow.
    bn = BayesianNetwork([("a", "b")]).fit(first)
    bn.predict_proba(row)
    extra = fitted(rng, ["p", "q", "r"], n=3000)
    bn.partial_fit(extra)
    whole = BayesianNetwork([("a", "b")]).fit(pd.concat([first, extra]))
    pd.testing.assert_frame_equal(bn.predict_proba(row), whole.predict_proba(row))


def test_the_columns_of_an_answer_are_its_own(rng):
    bn = random_network(rng, 4)
    row = bn.sample(1, random_state=0)
    first = bn.predict_proba(row)
    first.columns.names = ["x", "y"]
    assert list(bn.predict_proba(row).columns.names) == ["variable", "state"]


def test_an_unknown_state_of_evidence_is_a_value_and_a_key_error():
    pytest.importorskip("pgmpy")
    from pgmpy.inference import VariableElimination

    from bayeskit.datasets import load_network

    bn = load_network("asia")
    model = bn.to_pgmpy()
    with pytest.raises(KeyError):
        VariableElimination(model).query(
            ["lung"], evidence={"smoke": "maybe"}, show_progress=False
        )
    for error in (KeyError, ValueError, UnknownStateError):
        with pytest.raises(error, match="'maybe', which is not among"):
            bn.query("lung", evidence={"smoke": "maybe"})
    with pytest.raises(KeyError) as info:
        bn.map_query(evidence={"smoke": "maybe"})
    # Printed as is: a KeyError alone would quote its message.
    assert str(info.value).startswith("evidence gives 'smoke' the state 'maybe'")


def test_many_rows_are_read_by_their_distinct_values_as_the_encoder_reads_them(rng):
    for trial in range(8):
        bn = random_network(rng, 3 + trial, int_labels=trial % 2 == 0)
        df = rows_of(rng, bn, 300, 0.3)
        if trial % 3 == 0:
            df = df.fillna(np.nan)  # NaN rather than None
        cols = [df[v].to_numpy() for v in bn.variables_]
        fast = factorized_codes(bn, cols)
        assert fast is not None
        expected = state_encoder(bn).encode(cols, unknown="error")
        np.testing.assert_array_equal(fast, expected)
    # A value of another type than the states, or unknown: the encoder reads it.
    bn = random_network(rng, 3, int_labels=True)
    df = bn.sample(200, random_state=0)
    v = bn.variables_[0]
    assert factorized_codes(bn, [df[u].to_numpy(dtype=float) for u in df]) is None
    cols = [df[u].to_numpy() for u in bn.variables_]
    cols[0] = cols[0].astype(object)
    cols[0][5] = 12345
    assert factorized_codes(bn, cols) is None
    with pytest.raises(ValueError, match="12345"):
        bn.predict_proba(df.assign(**{v: cols[0]}))


def test_a_query_enters_its_evidence_once_and_skips_the_tags(monkeypatch):
    """The per-call bookkeeping of one query (benchmarks/bench_regression.py,
    ALARM): the evidence is entered into the structure once, whichever path
    answers (the kernel's marginals or the pruned plan), and a fitted
    network is not checked through scikit-learn's tags; the answers are the
    same, and an unfitted network still raises scikit-learn's error."""
    import sklearn.exceptions

    from bayeskit.datasets import load_network

    bn = load_network("alarm")
    evidence = {"HRBP": "HIGH", "EXPCO2": "LOW"}
    cases = [("LVFAILURE", evidence), ("HISTORY", evidence), ("CVP", {"HR": "LOW"})]
    first = [bn.query(t, evidence=e).to_numpy() for t, e in cases * 3]
    entered = []
    enter = BayesNet.evidence
    monkeypatch.setattr(
        BayesNet, "evidence", lambda s, c: entered.append(c) or enter(s, c)
    )
    import bayeskit.network._network as network

    tags = []
    monkeypatch.setattr(network, "check_is_fitted", lambda est: tags.append(est))
    again = [bn.query(t, evidence=e).to_numpy() for t, e in cases * 3]
    assert len(entered) == len(cases) * 3 and tags == []
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    monkeypatch.undo()
    with pytest.raises(sklearn.exceptions.NotFittedError):
        BayesianNetwork([("a", "b")]).query("a")
