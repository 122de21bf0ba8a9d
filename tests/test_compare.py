"""The compare tool: ``python -m bayeskit compare`` (issue 8)."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import StratifiedKFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from bayeskit import GaussianNB
from bayeskit.cli import compare as cmp
from bayeskit.cli import curve as lc
from bayeskit.cli import data as cd
from bayeskit.cli import report
from bayeskit.cli.main import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def iris_comparison():
    return cmp.compare(cd.load_dataset("iris"), progress=False)


def test_one_row_per_model_with_finite_metrics(iris_comparison):
    data = iris_comparison.data
    run, skipped = cmp.candidates(data)
    table = cmp.results_table(iris_comparison)
    assert list(table["model"]) == [c.name for c in run]
    assert len(table) == len(iris_comparison.results) == 11
    assert {r.library for r in iris_comparison.results} == {"bayeskit", "scikit-learn"}
    assert "LogisticRegression" in set(table["model"])
    for r in iris_comparison.results:
        assert r.error is None, r.error
        for metric in cmp.METRICS:
            assert len(r.scores[metric]) == 5
            assert math.isfinite(r.mean(metric)) and math.isfinite(r.std(metric))
        assert 0.8 < r.mean("accuracy") <= 1.0
    text = report.format_table(table)
    assert len(text.splitlines()) == 2 + len(table)
    assert [name for name, _ in skipped] == ["MixedNB"]


def test_numbers_equal_cross_validate_with_the_same_folds(iris_comparison):
    data = iris_comparison.data
    result = next(
        r
        for r in iris_comparison.results
        if (r.library, r.name) == ("bayeskit", "GaussianNB")
    )
    direct = cross_validate(
        make_pipeline(StandardScaler(), GaussianNB()),
        data.X,
        data.y,
        cv=StratifiedKFold(5, shuffle=True, random_state=0),
        scoring=["accuracy", "neg_log_loss"],
    )
    np.testing.assert_allclose(result.scores["accuracy"], direct["test_accuracy"])
    np.testing.assert_allclose(result.scores["log_loss"], -direct["test_neg_log_loss"])


def test_playtennis_uses_leave_one_out_and_categorical_models(capsys):
    assert main(["compare", "--dataset", "playtennis", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "leave-one-out" in out
    names = cmp.results_table(cmp.compare(cd.load_dataset("playtennis"))).model
    assert list(names) == [
        "CategoricalNB",
        "TreeAugmentedNB",
        "LogisticRegression",
        "CategoricalNB",
    ]


def test_csv_with_mixed_columns_and_json(tmp_path, capsys):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 80)
    colour = np.where(y == 1, "red", "blue")
    colour[:10] = "green"
    size = rng.normal(y * 2.0, 1.0)
    lines = ["colour,size,label"] + [
        f"{c},{s:.3f},{'yes' if t else 'no'}" for c, s, t in zip(colour, size, y)
    ]
    csv = tmp_path / "data.csv"
    csv.write_text("\n".join(lines) + "\n")
    out_json = tmp_path / "out.json"
    argv = ["compare", "--csv", str(csv), "--target", "label", "--cv", "4"]
    assert main([*argv, "--json", str(out_json), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    payload = json.loads(out_json.read_text())
    assert payload["dataset"]["categorical_features"] == ["colour"]
    assert payload["dataset"]["n_samples"] == 80
    assert payload["cv"]["n_splits"] == 4
    models = [(r["library"], r["model"]) for r in payload["results"]]
    assert ("bayeskit", "MixedNB") in models
    assert ("scikit-learn", "LogisticRegression") in models
    for r in payload["results"]:
        assert r["error"] is None
        assert len(r["accuracy"]["folds"]) == 4
        assert r["accuracy"]["mean"] == pytest.approx(np.mean(r["accuracy"]["folds"]))
        assert math.isfinite(r["log_loss"]["mean"])
        assert set(r) >= {"fit_time", "predict_time", "input"}
        assert f"{r['accuracy']['mean']:.3f}" in printed
    assert "learning_curve" not in payload


def test_learning_curve_table_shape(tmp_path):
    data = cd.load_dataset("iris")
    curve = lc.learning_curve(data, n_repeats=3, progress=False)
    table = curve.table()
    assert table.shape == (len(curve.sizes), 4)
    assert curve.errors.shape == (2, len(curve.sizes), 3)
    assert list(table.index) == sorted(table.index) and table.index[-1] == 105
    assert np.isfinite(curve.errors).all()
    assert (table.filter(like="error") <= 1).all().all()
    text = lc.format_curve(curve)
    assert len(text.splitlines()) == 2 + len(curve.sizes)
    assert "logistic regression" in text and "naive Bayes" in text


def test_learning_curve_option_and_json(tmp_path, capsys):
    out_json = tmp_path / "lc.json"
    argv = ["compare", "--dataset", "playtennis", "--learning-curve"]
    assert main([*argv, "--json", str(out_json), "--no-progress"]) == 0
    assert "Ng and Jordan" in capsys.readouterr().out
    curve = json.loads(out_json.read_text())["learning_curve"]
    for model in curve["models"].values():
        assert len(model["error_mean"]) == len(curve["training_rows"])


def _bad_csv(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("a,b\n1,2\n1,2,3,4\n")
    return path


def _one_class_csv(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("a,b,y\n1,x,p\n2,y,p\n3,x,p\n")
    return path


ERRORS = {
    "unknown dataset": (lambda tmp: ["--dataset", "mnist"], "unknown dataset"),
    "missing target": (
        lambda tmp: ["--csv", str(_one_class_csv(tmp)), "--target", "label"],
        "target column 'label' is not in",
    ),
    "one class": (
        lambda tmp: ["--csv", str(_one_class_csv(tmp)), "--target", "y"],
        "has one class",
    ),
    "csv does not parse": (
        lambda tmp: ["--csv", str(_bad_csv(tmp)), "--target", "a"],
        "cannot parse",
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_error_is_one_line_and_exit_status_2(case, tmp_path, capsys):
    make_args, message = ERRORS[case]
    assert main(["compare", *make_args(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert message in lines[0] and "Traceback" not in captured.err


def test_error_through_a_subprocess(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "bayeskit", "compare", "--dataset", "nope"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "bayeskit compare: error: unknown dataset 'nope': choose one of "
        "breast_cancer, iris, playtennis, topics, wine, or give --csv PATH --target "
        "COLUMN"
    ]


def test_plot_without_matplotlib_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    png = tmp_path / "curve.png"
    assert main(["compare", "--dataset", "iris", "--plot", str(png)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["bayeskit compare: error: " + lc.PLOT_MISSING]
    assert "pip install matplotlib" in err[0]
    assert not png.exists()


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    curve = lc.learning_curve(cd.load_dataset("iris"), n_repeats=2, progress=False)
    png = tmp_path / "curve.png"
    lc.save_plot(curve, str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_progress_bar_draws_on_a_terminal_only():
    import io

    stream = io.StringIO()
    bar = report.Progress(2, "compare", stream=stream, enabled=True)
    bar.show("first")
    bar.advance()
    bar.close()
    assert "compare [" in stream.getvalue() and "1/2" in stream.getvalue()
    quiet = io.StringIO()
    report.Progress(2, "compare", stream=quiet).advance()
    assert quiet.getvalue() == ""


def test_demo_is_still_a_subcommand(capsys):
    assert main(["demo"]) == 0
    assert "PlayTennis" in capsys.readouterr().out


# A first run of the timing in a fresh process with an empty numba cache (every
# kernel compiled on first use), then a second: the untimed warm-up must take
# every compilation, of predict and predict_proba as well as of fit.
COLD_RUN = """
import json
from bayeskit.cli import compare as cmp
from bayeskit.cli.data import load_dataset

data = load_dataset("iris")
splitter, _ = cmp.make_cv(data)
scorers = cmp.scoring(data)
run, _ = cmp.candidates(data)
times = {}
for c in run:
    if c.library == "bayeskit" and c.name in ("GaussianNB", "CategoricalNB"):
        results = [cmp.time_candidate(c, data, splitter, scorers) for _ in range(2)]
        assert all(r.error is None for r in results), results
        metrics = ("fit_time", "predict_time")
        times[c.name] = [r.mean(m) for r in results for m in metrics]
print(json.dumps(times))
"""


def test_a_first_run_on_a_cold_cache_times_as_a_second(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    proc = subprocess.run(
        [sys.executable, "-c", COLD_RUN],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    times = json.loads(proc.stdout.splitlines()[-1])
    assert set(times) == {"GaussianNB", "CategoricalNB"}
    for name, (fit1, predict1, fit2, predict2) in times.items():
        # Generous (a shared 2-core machine): a compilation costs 100s of ms.
        assert predict1 <= 4 * predict2 + 0.025, (name, predict1, predict2)
        assert fit1 <= 4 * fit2 + 0.025, (name, fit1, fit2)


def _table(n=40):
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, n)
    x = rng.normal(y * 2.0, 1.0)
    return "a,y\n" + "".join(f"{v:.3f},{'p' if t else 'q'}\n" for v, t in zip(x, y))


@pytest.mark.parametrize("suffix", [".gz", ".zip", ".xz", ".bz2", ".tar"])
def test_a_plain_csv_named_like_an_archive_is_read_as_plain(suffix, tmp_path):
    """A plain table whose name ends like a compressed file is read as the
    same table as its .csv twin (pandas would try to decompress it)."""
    text = _table()
    plain = tmp_path / "t.csv"
    plain.write_text(text)
    odd = tmp_path / f"t.csv{suffix}"
    odd.write_text(text)
    ours = cd.read_csv(str(odd), "y")
    expected = cd.read_csv(str(plain), "y")
    pd.testing.assert_frame_equal(ours.X, expected.X)
    pd.testing.assert_series_equal(ours.y, expected.y)


def test_a_compressed_csv_is_still_decompressed(tmp_path):
    """A real .gz table still reads as its contents."""
    import gzip

    path = tmp_path / "t.csv.gz"
    with gzip.open(path, "wt") as f:
        f.write(_table())
    plain = tmp_path / "t.csv"
    plain.write_text(_table())
    ours, expected = cd.read_csv(str(path), "y"), cd.read_csv(str(plain), "y")
    pd.testing.assert_frame_equal(ours.X, expected.X)


@pytest.mark.parametrize("seed", ["-1", str(2**32), "1.5", "x"])
def test_a_seed_numpy_cannot_take_is_a_usage_error(seed, capsys):
    """--random-state outside [0, 2**32) is argparse's usage error (exit 2),
    never a run where every model fails and the exit status is 0."""
    with pytest.raises(SystemExit) as exc:
        main(["compare", "--dataset", "iris", "--random-state", seed])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--random-state" in err and "Traceback" not in err


# -- the output streams: the header and each row as its model finishes -----------
# A launcher that holds each model until the test writes a line to its stdin and
# says on stderr when it waits: whatever compare printed before that moment is in
# the pipe, whatever the machine's load.
GATED = """
import sys
from bayeskit.cli import compare as cmp
from bayeskit.cli.main import main

original = cmp.time_candidate


def gated(*args, **kwargs):
    sys.stderr.write("waiting\\n")
    sys.stderr.flush()
    sys.stdin.readline()
    return original(*args, **kwargs)


cmp.time_candidate = gated
sys.exit(main(["compare", "--dataset", "iris", "--no-progress"]))
"""


def _wait_for(stream, line: bytes) -> None:
    """Read ``stream`` (stderr) up to ``line``, whatever comes before it."""
    while True:
        got = stream.readline()
        assert got, "the process ended before it waited"
        if got.strip() == line:
            return


def _available(fd: int) -> bytes:
    """What the pipe holds now, without waiting for more (a second of grace
    for the last write to land)."""
    import select

    out = b""
    while select.select([fd], [], [], 1.0)[0]:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        out += chunk
    return out


def test_header_and_rows_arrive_through_a_pipe_as_models_finish(tmp_path):
    launcher = tmp_path / "gated.py"
    launcher.write_text(GATED)
    proc = subprocess.Popen(
        [sys.executable, str(launcher)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        bufsize=0,
    )
    try:
        _wait_for(proc.stderr, b"waiting")  # held before the first model
        head = _available(proc.stdout.fileno()).decode()
        assert proc.poll() is None
        lines = head.splitlines()
        assert lines[0].startswith("Data: iris")
        assert lines[-2].split()[:3] == ["model", "library", "input"]
        assert set(lines[-1].replace(" ", "")) == {"-"}
        proc.stdin.write(b"\n")  # run the first model only
        _wait_for(proc.stderr, b"waiting")
        row = _available(proc.stdout.fileno()).decode()
        assert proc.poll() is None
        assert row.split()[:3] == ["GaussianNB", "bayeskit", "standardised"]
        assert row.count("±") == 4 and row.count("\n") == 1
        proc.stdin.close()  # every other model runs
        rest = proc.stdout.read().decode()
        assert proc.wait(timeout=600) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    table = cmp.results_table(cmp.compare(cd.load_dataset("iris"), progress=False))
    printed = [line.split("  ")[0].strip() for line in (row + rest).splitlines()]
    assert printed[: len(table)] == list(table.model)


def test_version(capsys):
    from bayeskit import __version__

    for argv in (["--version"], ["compare", "--version"]):
        with pytest.raises(SystemExit) as exit:
            main(argv)
        assert exit.value.code == 0
        assert capsys.readouterr().out == f"bayeskit {__version__}\n"
    proc = subprocess.run(
        [sys.executable, "-m", "bayeskit", "--version"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert (proc.returncode, proc.stdout) == (0, f"bayeskit {__version__}\n")


def _labelled_table(rng, n=40):
    return pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], n),
            "size": rng.normal(size=n).round(3),
            "y": rng.choice(["a", "b"], n),
        }
    )


@pytest.mark.parametrize(
    ("sep", "written", "hint"),
    [(";", None, "--sep ';'"), ("\t", None, "--sep '\\t'"), (",", ";", "--sep ','")],
)
def test_a_table_read_as_one_column_names_its_separator(
    sep, written, hint, tmp_path, capsys, rng
):
    frame = _labelled_table(rng)
    path = tmp_path / "table.csv"
    frame.to_csv(path, sep=sep, index=False)
    argv = ["compare", "--csv", str(path), "--target", "y"]
    argv += [] if written is None else ["--sep", written]
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert captured.out == "" and len(lines) == 1, captured.err
    assert "as one column" in lines[0] and lines[0].endswith("pass " + hint)
    # The separator it names reads the table (a tab also as '\t' and 'tab').
    spellings = {"\t": ["\t", "\\t", "tab"]}.get(sep, [sep])
    for spelling in spellings:
        data = cd.read_csv(str(path), "y", spelling)
        pd.testing.assert_frame_equal(data.X, frame.drop(columns="y"))
        pd.testing.assert_series_equal(data.y, frame["y"])


def test_sep_without_csv_is_a_usage_error(capsys):
    assert main(["compare", "--dataset", "iris", "--sep", ";"]) == 2
    assert "--sep goes with --csv" in capsys.readouterr().err


@pytest.mark.parametrize(
    "target",
    [
        lambda rng, n: rng.normal(size=n) * 1000,  # prices
        lambda rng, n: np.arange(n) * 1.0,  # whole numbers, every one distinct
        lambda rng, n: rng.integers(0, 10_000, n),  # integer amounts
    ],
)
def test_a_continuous_target_says_compare_is_for_classifiers(
    target, tmp_path, capsys, rng
):
    n = 120
    frame = _labelled_table(rng, n).assign(y=target(rng, n))
    path = tmp_path / "regression.csv"
    frame.to_csv(path, index=False)
    assert main(["compare", "--csv", str(path), "--target", "y"]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert captured.out == "" and len(lines) == 1, captured.err
    assert "looks continuous" in lines[0] and "classifiers" in lines[0]
    assert f"{frame['y'].nunique()} distinct numbers in {n} rows" in lines[0]


def test_class_labels_that_are_numbers_are_not_continuous(rng):
    n = 120
    for y in (
        rng.integers(0, 3, n),  # codes
        rng.integers(0, 3, n) * 1.0,  # codes read as floats
        rng.integers(0, 20, n),  # twenty classes
    ):
        X = _labelled_table(rng, n).drop(columns="y")
        data = cd.Dataset("t", X, pd.Series(y), "CSV")
        assert cd._checked(data, "target") is data


PLOT_LAUNCHER = """
import sys
sys.modules["matplotlib"] = None  # matplotlib cannot be imported
from bayeskit.cli.main import main
sys.exit(main(["compare", "--dataset", "iris", "--plot", sys.argv[1]]))
"""


def test_plot_without_matplotlib_through_a_subprocess(tmp_path):
    launcher = tmp_path / "no_matplotlib.py"
    launcher.write_text(PLOT_LAUNCHER)
    png = tmp_path / "curve.png"
    proc = subprocess.run(
        [sys.executable, str(launcher), str(png)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert "pip install matplotlib" in line
    assert 'pip install ".[plot]"' in line
    assert not png.exists()
