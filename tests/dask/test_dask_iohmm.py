"""InputOutputHMM on Dask: generalised EM with the E-step where the sequences
live and the logistic M-step's terms summed over the partitions.

The reference is the in-memory fit of the same sequences and covariates: the
E-step of every partition and the Newton steps of the M-step are the
in-memory ones up to the order of the sums, so from the same start every
fitted parameter agrees to 1e-10. (With ``transition_alpha=0`` and separable
steps the coefficients have no finite optimum and where Newton stops is
decided by rounding: the tests keep a positive penalty.)
"""

import dataclasses
import pickle

import numpy as np
import public_estimators
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from bayeskit import InputOutputHMM

da = pytest.importorskip("dask.array")
db = pytest.importorskip("dask.bag")
pytestmark = pytest.mark.usefixtures("sync")

TIGHT = dict(rtol=1e-10, atol=1e-10)


def _case(seed, n_sequences=12, d=2):
    """Sequences whose regime follows the first covariate, and covariates."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 30, n_sequences)
    n = int(lengths.sum())
    U = rng.normal(size=(n, d))
    X = rng.normal(size=(n, 2)) + 2.5 * (U[:, :1] > 0)
    return X, lengths, U


def _model(seed=0, **kw):
    params = dict(
        n_iter=5, tol=0.0, random_state=seed, transition_alpha=0.5, transmat_prior=1.5
    )
    return InputOutputHMM(3, **{**params, **kw})


def _assert_same_fit(got, ref):
    expected = public_estimators.fitted_arrays(ref)
    assert {"startprob_coef_", "transmat_coef_"} <= set(expected)
    assert set(public_estimators.fitted_arrays(got)) == set(expected)
    # The family's parameters (the means and covariances)
    for field in dataclasses.fields(ref.emission_params_):
        value = getattr(ref.emission_params_, field.name)
        if isinstance(value, np.ndarray):
            expected[f"emission_params_.{field.name}"] = value
    got_emission = {
        f"emission_params_.{f.name}": getattr(got.emission_params_, f.name)
        for f in dataclasses.fields(got.emission_params_)
    }
    for name, value in expected.items():
        mine = got_emission[name] if "." in name else getattr(got, name)
        np.testing.assert_allclose(mine, value, **TIGHT, err_msg=name)
    np.testing.assert_allclose(got.lower_bounds_, ref.lower_bounds_, **TIGHT)
    assert got.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(
        got.stats_.structure.occupancy, ref.stats_.structure.occupancy, **TIGHT
    )


class EStepTasks:
    """Records the steps of the partition of every E-step task."""

    def __init__(self, monkeypatch):
        import bayeskit._dask._iohmm as iohmm

        self.steps = []
        inner = iohmm._partition_stats

        def spy(est, params, part, covs, weights):
            from bayeskit._dask._hmm import _rows_of

            _, lens = _rows_of(part)
            self.steps.append(int(np.sum(lens)))
            return inner(est, params, part, covs, weights)

        monkeypatch.setattr(iohmm, "_partition_stats", spy)


def cuts(n):
    """Row chunk sizes of ``n`` rows, zero-size chunks included."""
    return st.lists(st.integers(0, n), max_size=5).map(
        lambda points: tuple(np.diff([0, *sorted(points), n]).tolist())
    )


# No shrinking: every example is a few fits.
@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    phases=(Phase.explicit, Phase.generate),
)
@given(seed=st.integers(0, 2**16), data=st.data())
def test_fit_on_a_dask_array_in_any_chunks_is_the_in_memory_fit(seed, data):
    X, lengths, U = _case(seed)
    chunks = data.draw(cuts(len(X)))
    dask_covariates = data.draw(st.booleans())
    ref = _model(seed).fit(X, lengths, covariates=U)
    covariates = da.from_array(U, chunks=(chunks, -1)) if dask_covariates else U
    with pytest.MonkeyPatch.context() as mp:
        spy = EStepTasks(mp)
        got = _model(seed).fit(
            da.from_array(X, chunks=(chunks, -1)), lengths, covariates=covariates
        )
    _assert_same_fit(got, ref)
    # One E-step task per non-empty block (cut where sequences end) and
    # iteration, each on its own block's steps only.
    ends = np.cumsum(lengths)
    bounds = np.cumsum(chunks)
    cut = np.unique(ends[np.minimum(np.searchsorted(ends, bounds), len(ends) - 1)])
    blocks = np.diff(np.r_[0, cut])
    assert sorted(spy.steps) == sorted(blocks.tolist() * got.n_iter_)


@pytest.mark.parametrize("form", ["bag", "list", "array"])
def test_fit_on_a_bag_with_its_covariates_is_the_in_memory_fit(form, monkeypatch):
    X, lengths, U = _case(3)
    seqs = np.split(X, np.cumsum(lengths)[:-1])
    covs = np.split(U, np.cumsum(lengths)[:-1])
    ref = _model().fit(seqs, covariates=covs)
    covariates = {
        "bag": db.from_sequence(covs, npartitions=4),
        "list": covs,
        "array": U,
    }[form]
    spy = EStepTasks(monkeypatch)
    got = _model().fit(db.from_sequence(seqs, npartitions=4), covariates=covariates)
    _assert_same_fit(got, ref)
    assert len(spy.steps) == 4 * got.n_iter_
    assert max(spy.steps) < len(X)  # no task reads all the sequences


def test_an_emptied_partition_and_filtered_rows(monkeypatch):
    from dask import delayed

    X, lengths, U = _case(5)
    seqs = np.split(X, np.cumsum(lengths)[:-1])
    covs = np.split(U, np.cumsum(lengths)[:-1])
    ref = _model().fit(seqs, covariates=covs)
    # A bag of three partitions, the middle one empty.
    groups = [seqs[:5], [], seqs[5:]]
    bag = db.from_delayed([delayed(list)(g) for g in groups])
    cov_bag = db.from_delayed([delayed(list)(g) for g in [covs[:5], [], covs[5:]]])
    spy = EStepTasks(monkeypatch)
    got = _model().fit(bag, covariates=cov_bag)
    _assert_same_fit(got, ref)
    # The empty partition's task returns at once (no sequences).
    per_partition = [sum(map(len, g)) for g in groups]
    assert sorted(spy.steps) == sorted(per_partition * got.n_iter_)
    # Rows filtered on Dask (chunks of unknown size, whole sequences kept),
    # the covariates filtered alike.
    keep_seq = np.arange(len(lengths)) % 3 != 1
    keep = np.repeat(keep_seq, lengths)
    chunks = (40, 0, 60, len(X) - 100)
    mask = da.from_array(keep, chunks=(chunks,))
    Xd = da.from_array(X, chunks=(chunks, -1))[mask]
    Ud = da.from_array(U, chunks=(chunks, -1))[mask]
    assert np.isnan(Xd.chunks[0]).any()
    ref = _model().fit(X[keep], lengths[keep_seq], covariates=U[keep])
    got = _model().fit(Xd, lengths[keep_seq], covariates=Ud)
    _assert_same_fit(got, ref)


def test_sequence_weight_with_a_partition_of_zero_weight():
    X, lengths, U = _case(7)
    seqs = np.split(X, np.cumsum(lengths)[:-1])
    covs = np.split(U, np.cumsum(lengths)[:-1])
    w = np.random.default_rng(0).integers(0, 3, len(seqs)).astype(float)
    w[:3] = 0.0  # the whole first partition weighs nothing
    ref = _model().fit(seqs, covariates=covs, sequence_weight=w)
    got = _model().fit(
        db.from_sequence(seqs, npartitions=4), covariates=covs, sequence_weight=w
    )
    _assert_same_fit(got, ref)


def test_the_m_step_reads_per_step_posteriors_where_they_live(monkeypatch):
    """The M-step's rows are evaluated by one reduction per Newton round over
    the persisted E-step results: no round computes an E-step again, and the
    statistics kept gather into the in-memory ones (pickling gathers them)."""
    import bayeskit._dask._iohmm as iohmm

    X, lengths, U = _case(11)
    ref = _model().fit(X, lengths, covariates=U)
    rounds = []
    inner = iohmm.PartitionedInputStats.row_terms

    def counted(self, asks):
        rounds.append(len(asks))
        return inner(self, asks)

    monkeypatch.setattr(iohmm.PartitionedInputStats, "row_terms", counted)
    spy = EStepTasks(monkeypatch)
    got = _model().fit(da.from_array(X, chunks=(50, -1)), lengths, covariates=U)
    _assert_same_fit(got, ref)
    n_blocks = len(spy.steps) // got.n_iter_
    assert len(spy.steps) == n_blocks * got.n_iter_ and n_blocks > 1
    # Every round asks for every row still moving (start and 3 transitions).
    assert rounds and max(rounds) == 4
    back = pickle.loads(pickle.dumps(got))
    for name in ("first", "first_inputs", "pairs", "pair_inputs", "occupancy"):
        np.testing.assert_allclose(
            getattr(back.stats_.structure, name),
            getattr(ref.stats_.structure, name),
            **TIGHT,
            err_msg=name,
        )
    np.testing.assert_allclose(
        back.predict_proba(X, lengths, covariates=U),
        ref.predict_proba(X, lengths, covariates=U),
        **TIGHT,
    )


def test_partial_fit_after_a_fit_on_dask_is_the_in_memory_one():
    """The statistics kept on Dask take a chunk in memory as one more piece:
    one incremental EM step from either fit gives the same model."""
    X, lengths, U = _case(6)
    Y, more, V = _case(16, n_sequences=4)
    ref = _model().fit(X, lengths, covariates=U)
    got = _model().fit(da.from_array(X, chunks=(70, -1)), lengths, covariates=U)
    ref.partial_fit(Y, more, covariates=V)
    got.partial_fit(Y, more, covariates=V)
    for name, value in public_estimators.fitted_arrays(ref).items():
        np.testing.assert_allclose(getattr(got, name), value, **TIGHT, err_msg=name)
    np.testing.assert_allclose(
        got.stats_.structure.occupancy, ref.stats_.structure.occupancy, **TIGHT
    )


@pytest.mark.parametrize("form", ["array", "bag"])
def test_summarize_and_partial_fit_on_dask_are_the_in_memory_ones(form):
    """summarize of Dask chunks (posteriors left where they were computed)
    added and taken by from_stats, and partial_fit on Dask chunks (the first
    one starting the parameters), give the in-memory models."""
    X, lengths, U = _case(9, n_sequences=16)
    ends = np.cumsum(lengths)[:-1]
    seqs, covs = np.split(X, ends), np.split(U, ends)
    halves = [slice(0, 8), slice(8, 16)]

    def chunk(h):
        rows, lens = np.concatenate(seqs[h]), lengths[h]
        mem = (rows, lens), {"covariates": np.concatenate(covs[h])}
        if form == "array":
            lazy = (
                (da.from_array(rows, chunks=(45, -1)), lens),
                {"covariates": da.from_array(np.concatenate(covs[h]), chunks=(45, -1))},
            )
        else:
            lazy = (
                (db.from_sequence(seqs[h], npartitions=3),),
                {"covariates": db.from_sequence(covs[h], npartitions=3)},
            )
        return mem, lazy

    chunks = [chunk(h) for h in halves]
    fitted = _model(n_iter=2).fit(X, lengths, covariates=U)
    ref = _model().from_stats(sum(fitted.summarize(*a, **k) for (a, k), _ in chunks))
    got = _model().from_stats(sum(fitted.summarize(*a, **k) for _, (a, k) in chunks))
    _assert_same_params(got, ref)
    ref, got = _model(), _model()
    for (a, k), (b, j) in chunks + chunks:
        ref.partial_fit(*a, **k)
        got.partial_fit(*b, **j)
        _assert_same_params(got, ref)
    np.testing.assert_allclose(
        got.stats_.structure.occupancy, ref.stats_.structure.occupancy, **TIGHT
    )


def _assert_same_params(got, ref):
    for name, value in public_estimators.fitted_arrays(ref).items():
        np.testing.assert_allclose(getattr(got, name), value, **TIGHT, err_msg=name)
    for field in dataclasses.fields(ref.emission_params_):
        value = getattr(ref.emission_params_, field.name)
        if isinstance(value, np.ndarray):
            mine = getattr(got.emission_params_, field.name)
            np.testing.assert_allclose(mine, value, **TIGHT, err_msg=field.name)


def test_misaligned_or_missing_covariates_are_value_errors_naming_them():
    X, lengths, U = _case(2)
    Xd = da.from_array(X, chunks=(40, -1))
    seqs = np.split(X, np.cumsum(lengths)[:-1])
    covs = np.split(U, np.cumsum(lengths)[:-1])
    bad = [
        (Xd, lengths, da.from_array(U, chunks=(30, -1)), "chunked along the rows"),
        (Xd, lengths, U[:-1], "one row per step"),
        (Xd, lengths, None, "covariates are required"),
        (Xd, lengths, db.from_sequence(covs, 2), "covariates must be a Dask array"),
        (db.from_sequence(seqs, 3), None, db.from_sequence(covs, 2), "partitions"),
        (db.from_sequence(seqs, 3), None, [c[1:] for c in covs], "covariates must"),
        (db.from_sequence(seqs, 3), None, U[:-2], "covariates must"),
        (db.from_sequence(seqs, 3), None, U[:, :1] * np.nan, "finite"),
    ]
    for X_, lengths_, covariates, message in bad:
        with pytest.raises(ValueError, match=message) as info:
            _model().fit(X_, lengths_, covariates=covariates)
        assert "covariates" in str(info.value)


def test_a_failed_fit_leaves_the_model_as_it_was():
    X, lengths, U = _case(4)
    model = _model().fit(X, lengths, covariates=U)
    before = {k: np.copy(v) for k, v in vars(model).items() if k.endswith("_")}
    stats = model.stats_
    seqs = np.split(X, np.cumsum(lengths)[:-1])
    covs = np.split(U, np.cumsum(lengths)[:-1])
    covs[-1] = covs[-1][:, :1]  # the last partition's covariates lack a column
    with pytest.raises(ValueError, match="covariates"):
        model.fit(db.from_sequence(seqs, 3), covariates=db.from_sequence(covs, 3))
    assert model.stats_ is stats
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(model, name), value)


@pytest.mark.parametrize("form", ["array", "bag"])
def test_prediction_is_lazy_and_equals_in_memory(form):
    from dask.callbacks import Callback

    X, lengths, U = _case(8)
    model = _model().fit(X, lengths, covariates=U)
    seqs = np.split(X, np.cumsum(lengths)[:-1])
    covs = np.split(U, np.cumsum(lengths)[:-1])
    if form == "array":
        Xd, lens = da.from_array(X, chunks=(45, -1)), lengths
        Ud = da.from_array(U, chunks=(45, -1))
    else:
        Xd, lens, Ud = db.from_sequence(seqs, npartitions=3), None, covs

    def computed(out):
        out = out.compute()  # a bag: one item per sequence
        if form == "bag":
            return np.concatenate(out) if np.ndim(out[0]) else np.array(out)
        return out

    ran = []
    with Callback(pretask=lambda *a: ran.append(a)):
        calls = {
            "score_sequences": model.score_sequences(Xd, lens, covariates=Ud),
            "score_samples": model.score_samples(Xd, lens, covariates=Ud),
            "predict_proba": model.predict_proba(Xd, lens, covariates=Ud),
            "viterbi": model.decode(Xd, lens, covariates=Ud),
            "map": model.decode(Xd, lens, algorithm="map", covariates=Ud),
            "predict": model.predict(Xd, lens, covariates=Ud),
        }
    assert not ran, f"{len(ran)} tasks ran before any result was computed"
    np.testing.assert_allclose(
        computed(calls["score_sequences"]),
        model.score_sequences(X, lengths, covariates=U),
        **TIGHT,
    )
    total, proba = calls["score_samples"]
    ref_total, ref_proba = model.score_samples(X, lengths, covariates=U)
    assert total.compute() == pytest.approx(ref_total, rel=1e-12)
    np.testing.assert_allclose(computed(proba), ref_proba, **TIGHT)
    np.testing.assert_allclose(computed(calls["predict_proba"]), ref_proba, **TIGHT)
    for algorithm in ("viterbi", "map"):
        log_prob, path = calls[algorithm]
        ref_log_prob, ref_path = model.decode(
            X, lengths, algorithm=algorithm, covariates=U
        )
        assert log_prob.compute() == pytest.approx(ref_log_prob, rel=1e-12)
        np.testing.assert_array_equal(computed(path), ref_path)
    np.testing.assert_array_equal(
        computed(calls["predict"]), model.predict(X, lengths, covariates=U)
    )
    assert model.score(Xd, lens, covariates=Ud) == pytest.approx(
        model.score(X, lengths, covariates=U), rel=1e-12
    )


@pytest.fixture(scope="module")
def client():
    """A LocalCluster of two worker processes, torn down after the module."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=":0",
        worker_dashboard_address=":0",
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.mark.xdist_group("dask_cluster")
def test_fit_on_a_cluster_keeps_the_posteriors_on_the_workers(client):
    """On worker processes the persisted E-step results stay there (the
    M-step's rounds run next to them), the fit is the in-memory one, and a
    pickled model carries the gathered statistics."""
    import dask

    X, lengths, U = _case(13, n_sequences=20)
    ref = _model().fit(X, lengths, covariates=U)
    with dask.config.set(scheduler=client.get):
        got = _model().fit(
            da.from_array(X, chunks=(60, -1)),
            lengths,
            covariates=da.from_array(U, chunks=(60, -1)),
        )
    _assert_same_fit(got, ref)
    prefixes = client.run_on_scheduler(
        lambda dask_scheduler: [str(k) for k in dask_scheduler.task_prefixes]
    )
    assert {"partition_stats", "piece_terms"} <= set(prefixes), prefixes
    back = pickle.loads(pickle.dumps(got))
    np.testing.assert_allclose(
        back.stats_.structure.pairs, ref.stats_.structure.pairs, **TIGHT
    )
