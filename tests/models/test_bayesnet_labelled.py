"""Labelled CPTs and pgmpy models in and out of a Bayesian network.

``set_cpd`` reads tables by their labels (an explicit parent order, a
DataFrame in either layout, a pgmpy ``TabularCPD``), checked against the
table set in the network's own order; ``from_pgmpy`` on pgmpy's example
networks answers as pgmpy's VariableElimination on the same model.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from bayeskit import BayesianNetwork

STATES = {"rain": ["no", "yes"], "sprinkler": ["off", "on"], "wet": ["dry", "wet"]}
EDGES = [("rain", "wet"), ("sprinkler", "wet")]
# P(wet | rain, sprinkler): axis 0 rain, axis 1 sprinkler, axis 2 wet.
WET = np.array([[[0.99, 0.01], [0.10, 0.90]], [[0.20, 0.80], [0.01, 0.99]]])


def sprinkler():
    bn = BayesianNetwork(EDGES, states=STATES)
    return bn.set_cpd("rain", [0.8, 0.2]).set_cpd("sprinkler", [0.6, 0.4])


def test_parents_are_known_before_any_table():
    bn = BayesianNetwork([("b", "c"), ("a", "c"), ("a", "b")])
    assert bn.parents_ == {"b": ("a",), "c": ("b", "a"), "a": ()}
    assert not hasattr(bn, "cpds_")
    bn = sprinkler().set_cpd("wet", WET)
    assert bn.parents_["wet"] == ("rain", "sprinkler")
    assert bn.get_cpd("wet").index.names == ["rain", "sprinkler"]


def test_an_explicit_parent_order_is_transposed():
    bn = sprinkler().set_cpd(
        "wet", WET.transpose(1, 0, 2), parents=["sprinkler", "rain"]
    )
    np.testing.assert_array_equal(bn.cpds_["wet"], WET)
    flat = WET.transpose(1, 0, 2).reshape(4, 2)  # the 2-d form, same order
    bn.set_cpd("wet", flat, parents=("sprinkler", "rain"))
    np.testing.assert_array_equal(bn.cpds_["wet"], WET)
    # The answer is that of the network's own order: P(rain = yes | wet).
    joint = np.einsum("r,s,rsw->rw", [0.8, 0.2], [0.6, 0.4], WET)
    expected = joint[:, 1] / joint[:, 1].sum()
    np.testing.assert_allclose(bn.query("rain", {"wet": "wet"}), expected, atol=1e-12)


def test_dataframes_are_read_by_label_in_either_layout():
    ref = sprinkler().set_cpd("wet", WET)
    frame = ref.get_cpd("wet")
    shuffled = frame.reorder_levels(["sprinkler", "rain"]).sample(
        frac=1, random_state=0
    )[["wet", "dry"]]
    for table in (frame, shuffled, shuffled.T, frame.T):
        bn = sprinkler().set_cpd("wet", table)
        np.testing.assert_array_equal(bn.cpds_["wet"], WET)
        pd.testing.assert_frame_equal(bn.get_cpd("wet"), frame)
    # A root takes a Series (states in any order) or pgmpy's one-column frame.
    bn = sprinkler().set_cpd("rain", pd.Series({"yes": 0.3, "no": 0.7}))
    np.testing.assert_array_equal(bn.cpds_["rain"], [0.7, 0.3])
    one_column = pd.DataFrame({"p": [0.25, 0.75]}, index=["on", "off"])
    bn.set_cpd("sprinkler", one_column)
    np.testing.assert_array_equal(bn.cpds_["sprinkler"], [0.75, 0.25])
    # A network without declared states takes the labels of the tables.
    free = BayesianNetwork(EDGES)
    free.set_cpd("rain", pd.Series([0.8, 0.2], index=["no", "yes"]))
    free.set_cpd("sprinkler", pd.Series([0.6, 0.4], index=["off", "on"]))
    free.set_cpd("wet", shuffled)
    assert free.states_["wet"].tolist() == ["wet", "dry"]
    np.testing.assert_array_equal(free.cpds_["wet"], WET[..., ::-1])


def test_labelled_table_errors_name_the_parameter():
    bn = sprinkler()
    frame = sprinkler().set_cpd("wet", WET).get_cpd("wet")
    with pytest.raises(ValueError, match=r"^parents is \['rain'\]"):
        bn.set_cpd("wet", WET, parents=["rain"])
    with pytest.raises(ValueError, match=r"^parents is \['rain', 'x'\]"):
        bn.set_cpd("wet", WET, parents=["rain", "x"])
    with pytest.raises(TypeError, match=r"^parents must be a list"):
        bn.set_cpd("wet", WET, parents="rain")
    with pytest.raises(ValueError, match="table orders the parents"):
        bn.set_cpd("wet", frame, parents=["sprinkler", "rain"])
    with pytest.raises(ValueError, match=r"^table \(the CPD of 'wet'\) has shape"):
        bn.set_cpd("wet", WET[:1])
    with pytest.raises(ValueError, match=r"^every row of table"):
        bn.set_cpd("wet", WET * 2)
    with pytest.raises(ValueError, match=r"^table \(the CPD of 'wet'\) has 3 rows"):
        bn.set_cpd("wet", frame.iloc[:3])
    with pytest.raises(ValueError, match="repeats a joint state"):
        bn.set_cpd("wet", pd.concat([frame.iloc[:3], frame.iloc[:1]]))
    renamed = frame.rename(index={"yes": "maybe"}, level="rain")
    with pytest.raises(ValueError, match=r"^table gives 'rain'.*'maybe'"):
        bn.set_cpd("wet", renamed)
    with pytest.raises(ValueError, match=r"^table's index is named"):
        bn.set_cpd("wet", frame.T.rename_axis("other"))
    unnamed = pd.DataFrame(WET.reshape(4, 2))
    with pytest.raises(ValueError, match=r"^table is a DataFrame whose index"):
        bn.set_cpd("wet", unnamed)
    with pytest.raises(ValueError, match=r"^table is a Series"):
        bn.set_cpd("wet", pd.Series([0.5, 0.5]))
    with pytest.raises(ValueError, match=r"^table has the states"):
        bn.set_cpd("wet", frame, states=["dry", "soaked"])


# -- pgmpy ---------------------------------------------------------------------------
def _pgmpy_wet(order):
    pytest.importorskip("pgmpy")
    from pgmpy.factors.discrete import TabularCPD

    values = np.moveaxis(
        WET.transpose([["rain", "sprinkler"].index(u) for u in order] + [2]), -1, 0
    ).reshape(2, 4)
    return TabularCPD(
        "wet", 2, values, evidence=order, evidence_card=[2, 2], state_names=STATES
    )


@pytest.mark.parity
def test_a_tabular_cpd_is_read_by_its_labels():
    for order in (["rain", "sprinkler"], ["sprinkler", "rain"]):
        bn = sprinkler().set_cpd("wet", _pgmpy_wet(order))
        np.testing.assert_array_equal(bn.cpds_["wet"], WET)
    with pytest.raises(ValueError, match="TabularCPD of 'wet', not of 'rain'"):
        sprinkler().set_cpd("rain", _pgmpy_wet(["rain", "sprinkler"]))


def _example_model(name):
    pytest.importorskip("pgmpy")
    from pgmpy.utils import get_example_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return get_example_model(name)


def _random_queries(rng, bn, n):
    for _ in range(n):
        size = int(rng.integers(0, 5))
        observed = rng.choice(bn.variables_, size=size, replace=False).tolist()
        evidence = {
            v: bn.states_[v].tolist()[rng.integers(len(bn.states_[v]))]
            for v in observed
        }
        hidden = [v for v in bn.variables_ if v not in evidence]
        targets = rng.choice(hidden, size=int(rng.integers(1, 3)), replace=False)
        targets = targets.tolist()
        yield targets, evidence


@pytest.mark.parity
@pytest.mark.parametrize("name", ["asia", "alarm", "insurance", "child"])
def test_from_pgmpy_answers_as_variable_elimination(name, rng):
    model = _example_model(name)
    from pgmpy.inference import VariableElimination

    bn = BayesianNetwork.from_pgmpy(model)
    assert bn.variables_ == list(model.nodes())
    for cpd in model.get_cpds():
        assert set(bn.parents_[cpd.variable]) == set(cpd.variables[1:])
        assert bn.states_[cpd.variable].tolist() == cpd.state_names[cpd.variable]
    # Published tables are rounded (alarm's rows sum to 1 +- 1e-7); set_cpd
    # rescales such rows to sum to one, and so does pgmpy's normalize.
    for cpd in model.get_cpds():
        cpd.normalize()
    ve = VariableElimination(model)
    answered = 0
    for targets, evidence in _random_queries(rng, bn, 25):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                theirs = ve.query(targets, evidence=evidence, show_progress=False)
            except (ValueError, ZeroDivisionError, FloatingPointError):
                continue
        if not np.isfinite(theirs.values).all():
            continue  # evidence of probability zero: pgmpy divides 0 by 0
        values = np.transpose(
            theirs.values, [theirs.variables.index(v) for v in targets]
        )
        ours = bn.query(targets, evidence)
        np.testing.assert_allclose(ours.to_numpy(), values.ravel(), rtol=0, atol=1e-10)
        answered += 1
    assert answered >= 15
    # And back: the same tables, whatever the order of the parents.
    back = bn.to_pgmpy()
    model = _example_model(name)
    for cpd in model.get_cpds():
        assert back.get_cpds(cpd.variable) == cpd
    assert set(back.edges()) == set(model.edges())


@pytest.mark.parity
def test_insurance_good_student_parents_in_another_order():
    """GoodStudent's TabularCPD lists its parents (SocioEcon, Age) in another
    order than its edges do: a converter that ignores this transposes it."""
    model = _example_model("insurance")
    cpd = model.get_cpds("GoodStudent")
    bn = BayesianNetwork.from_pgmpy(model)
    assert list(bn.parents_["GoodStudent"]) == cpd.variables[:0:-1]  # reversed
    theirs = cpd.get_values().reshape(
        len(cpd.state_names["GoodStudent"]),
        *[len(cpd.state_names[u]) for u in cpd.variables[1:]],
    )
    ours = bn.cpds_["GoodStudent"]  # (Age, SocioEcon, GoodStudent)
    np.testing.assert_array_equal(ours, np.transpose(theirs, [2, 1, 0]))
    age, socio = cpd.state_names["Age"], cpd.state_names["SocioEcon"]
    frame = bn.get_cpd("GoodStudent")
    for i, a in enumerate(age):
        for j, s in enumerate(socio):
            np.testing.assert_array_equal(frame.loc[(a, s)].to_numpy(), theirs[:, j, i])


def test_pgmpy_errors():
    with pytest.raises(TypeError, match=r"^model must be a pgmpy"):
        BayesianNetwork.from_pgmpy({"a": 1})
    bn = BayesianNetwork([("a", "b")], states={"a": [0, 1]}).set_cpd("a", [0.5, 0.5])
    with pytest.raises(ValueError, match=r"no CPD for variables \['b'\]"):
        bn.to_pgmpy()


def test_rounded_rows_are_rescaled_and_exact_rows_kept():
    bn = sprinkler().set_cpd("rain", [0.3, 0.7 + 1e-8])
    np.testing.assert_array_equal(
        bn.cpds_["rain"], np.array([0.3, 0.7 + 1e-8]) / (1 + 1e-8)
    )
    exact = [0.1, 0.2, 0.7]  # sums to 1 within one rounding: kept as given
    bn = BayesianNetwork(states={"x": ["a", "b", "c"]}).set_cpd("x", exact)
    np.testing.assert_array_equal(bn.cpds_["x"], exact)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["asia", "sachs"])
def test_a_fitted_network_predicts_the_columns_a_frame_leaves_out_as_pgmpy(name, rng):
    # pgmpy's idiom: fit on every column, then predict the rows with the
    # columns to predict dropped. The absent variables are missing in every
    # row; the answers are pgmpy's on the same tables.
    truth = BayesianNetwork.from_pgmpy(_example_model(name))
    data = truth.sample(3000, random_state=int(rng.integers(1 << 30)))
    edges = [(u, v) for v in truth.variables_ for u in truth.parents_[v]]
    bn = BayesianNetwork(edges).fit(data)
    model = bn.to_pgmpy()
    for _ in range(3):
        kept = rng.choice(bn.variables_, size=3, replace=False).tolist()
        rows = data[kept].iloc[rng.choice(len(data), 30, replace=False)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = model.predict(rows).loc[rows.index]  # pgmpy sorts the rows
            their_proba = model.predict_probability(rows).loc[rows.index]
        ours = bn.predict(rows)
        assert ours.columns.tolist()[:3] == kept  # the given columns first
        pd.testing.assert_frame_equal(
            ours[theirs.columns].astype(str), theirs.astype(str), check_dtype=False
        )
        for v in bn.variables_:
            if v in kept:
                continue
            proba = bn.predict_proba(rows, v)
            cols = [f"{v}_{s}" for s in bn.states_[v]]
            np.testing.assert_allclose(
                proba.to_numpy(), their_proba[cols].to_numpy(), atol=1e-10
            )
        # Leaving a column out is leaving its cells missing.
        full = rows.reindex(columns=bn.variables_[::-1])
        np.testing.assert_array_equal(bn.score_samples(rows), bn.score_samples(full))
    with pytest.raises(ValueError, match="unseen at fit time"):
        bn.predict(data[kept].assign(other=1))
    with pytest.raises(ValueError, match="fit"):
        bn.fit(data).partial_fit(data[kept])  # learning still needs every column
