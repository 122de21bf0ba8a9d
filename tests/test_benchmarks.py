"""The benchmark runner: discovery, the combined table, the rST page, failures.

No real benchmark runs here; the scripts in temporary directories are stand-ins.
"""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name):
    """Import ``benchmarks/<name>.py`` (benchmarks/ is not a package)."""
    saved = list(sys.path)
    try:
        spec = importlib.util.spec_from_file_location(
            f"_bench_{name}", BENCHMARKS / f"{name}.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module


run = _load("run")
timing = _load("_timing")


def row(model, operation, ours, theirs, goal, benchmark="naive_bayes"):
    result = run.Result(model, operation, ours, theirs, goal, repeats=3)
    return run.Row(benchmark, "sklearn", result, "1,000 x 20")


ROWS = [
    row("GaussianNB", "fit", 0.25, 1.0, 0.5),  # ratio 0.25, met
    row("GaussianNB", "predict_proba", 0.3, 0.2, 0.25),  # ratio 1.5, missed
    row("(a) 1x20000", "score", 0.01, 0.04, None, "chain"),  # no goal
    row("CategoricalNB", "fit", 0.5, 1.0, 0.5),  # exactly at the goal: met
]


def test_discovery_finds_every_bench_script_and_each_writes_json():
    scripts = run.discover()
    assert scripts == sorted(BENCHMARKS.glob("bench_*.py"))
    names = {run.bench_name(s) for s in scripts}
    assert {"naive_bayes", "discriminant", "mixture", "chain", "hmm", "bayesnet"} <= (
        names
    )
    for script in scripts:
        source = script.read_text()
        assert "add_json_option(parser)" in source, script.name
        assert "write_json(args.json" in source, script.name


def test_cells_format_ratios_and_mark_goals():
    cells = [run.cells(r) for r in ROWS]
    ratio, goal, met = (run.COLUMNS.index(c) for c in ("ratio", "goal", "met"))
    assert [c[ratio] for c in cells] == ["0.25", "1.5", "0.25", "0.5"]
    assert [c[goal] for c in cells] == ["0.50", "0.25", "", "0.50"]
    assert [c[met] for c in cells] == ["yes", "NO", "", "yes"]
    assert cells[0][run.COLUMNS.index("sizes")] == "1,000 x 20"
    assert cells[0][run.COLUMNS.index("runs")] == "3"
    assert cells[0][run.COLUMNS.index("ours (s)")] == "0.25"


def test_text_table_has_every_column_and_row_aligned():
    lines = run.format_table(ROWS).splitlines()
    assert lines[0].split()[:5] == ["benchmark", "peer", "model", "operation", "sizes"]
    assert len(lines) == 2 + len(ROWS)
    assert set(lines[1]) == {"-", " "}
    assert lines[3].endswith("NO")
    assert lines[4].endswith("0.25")  # no goal: the line ends at the ratio
    # Numbers are right-aligned under their headers.
    ratio_end = lines[0].index(" ratio ") + len(" ratio")
    assert all(line[ratio_end - 1] != " " for line in lines[2:])


def test_summary_counts_goals_and_names_the_misses():
    text = run.summary(ROWS)
    assert text.startswith("2 of 3 ratios with a goal meet it")
    assert "GaussianNB predict_proba (1.5 > 0.25)" in text
    assert "GaussianNB fit" not in text


def test_rst_fragment_is_a_list_table_with_the_machine():
    info = run.machine_info()
    for key in ("CPU", "OS", "Python", "Libraries", "Date"):
        assert info[key]
    for library in ("numpy", "scipy", "scikit-learn", "hmmlearn", "pgmpy", "numba"):
        assert library in info["Libraries"]
    command = "python benchmarks/run.py --quick --rst docs/benchmarks_table.rst"
    text = run.format_rst(ROWS, info, command, quick=True)
    assert text.startswith(":orphan:")
    body = text.split(run.RST_START, 1)[1]
    assert "Quick sizes" in body
    assert f":Command: ``{command}``" in body
    # One section and table per benchmark, its peer in the title.
    assert body.count(".. list-table::") == 2
    assert "naive_bayes (sklearn)\n~~~~~~~~~~~~~~~~~~~~~\n" in body
    assert "   :widths: auto\n" in body  # columns as wide as their text
    assert body.count("   * - ") == 2 + len(ROWS)
    # "(a) ..." would start an enumerated list; it is escaped.
    assert "   * - \\(a) 1x20000" in body
    assert "**no**" in body
    assert ":Data: 1,000 x 20" in body
    assert "Full sizes" in run.format_rst(ROWS, info, command, quick=False)


def test_docs_page_includes_the_generated_table():
    docs = BENCHMARKS.parent / "docs"
    page = (docs / "benchmarks.rst").read_text()
    assert ".. include:: benchmarks_table.rst" in page
    assert f":start-after: {run.RST_START}" in page
    table = (docs / "benchmarks_table.rst").read_text()
    assert table.startswith(":orphan:")
    assert table.count(run.RST_START) == 1
    assert ":Command: ``python benchmarks/run.py" in table
    assert ".. list-table::" in table


def test_rst_fragment_parses_without_warnings():
    docutils_core = pytest.importorskip("docutils.core")
    from docutils import nodes

    info = run.machine_info()
    text = run.format_rst(ROWS, info, "python benchmarks/run.py", quick=True)
    page = "Benchmarks\n==========\n\n" + text.split(run.RST_START, 1)[1]
    doc = docutils_core.publish_doctree(
        page, settings_overrides={"report_level": 5, "halt_level": 5}
    )
    assert not list(doc.findall(nodes.system_message))
    tables = list(doc.findall(nodes.table))
    assert len(tables) == 2
    assert sum(len(list(t.findall(nodes.row))) for t in tables) == 2 + len(ROWS)


def test_rst_tables_fit_a_page():
    """The tables of the page are narrow: the benchmark and its peer head each
    table and its sizes are notes, so the widest row of the published table,
    its cells' text side by side, is at most 90 characters (the documentation's
    content area shows about 100 of its table font)."""
    from docutils import nodes
    from docutils.core import publish_doctree

    docs = BENCHMARKS.parent / "docs"
    text = (docs / "benchmarks_table.rst").read_text()
    rows = []
    for table in publish_doctree(text).findall(nodes.table):
        for row in table.findall(nodes.row):
            rows.append([entry.astext() for entry in row.findall(nodes.entry)])
    assert len(rows) > 50
    for cells in rows:
        assert len(cells) <= 9
        widest = sum(max((len(w) for w in c.split()), default=0) for c in cells)
        assert widest <= 90, cells


def test_results_round_trip_through_json(tmp_path):
    results = [r.result for r in ROWS]
    sizes = [f"size {i}" for i in range(len(results))]
    timing.write_json(tmp_path / "one.json", results, sizes, "sklearn")
    peers, pairs = timing.read_json(tmp_path / "one.json")
    assert peers == ["sklearn"] * len(results)
    assert [(r.model, r.operation, r.ours, r.theirs, r.goal) for r, _ in pairs] == [
        (r.model, r.operation, r.ours, r.theirs, r.goal) for r in results
    ]
    assert [s for _, s in pairs] == sizes
    timing.write_json(tmp_path / "two.json", results, "same", "sklearn")
    assert {s for _, s in timing.read_json(tmp_path / "two.json")[1]} == {"same"}
    with pytest.raises(ValueError, match="size descriptions"):
        timing.write_json(tmp_path / "bad.json", results, ["one"], "sklearn")
    # Two peers in one benchmark: each row keeps its own.
    both = ["sklearn", "hmmlearn"] * (len(results) // 2) + ["sklearn"] * (
        len(results) % 2
    )
    timing.write_json(tmp_path / "both.json", results, "same", both)
    assert timing.read_json(tmp_path / "both.json")[0] == both
    with pytest.raises(ValueError, match="peers"):
        timing.write_json(tmp_path / "bad.json", results, "same", ["sklearn"])


def test_compare_reports_its_repeats():
    result = timing.compare("m", "op", lambda: None, lambda: None, repeats=4)
    assert result.repeats == 4


def test_bench_env_is_for_the_children_only():
    base = {"OPENBLAS_CORETYPE": "haswell", "OPENBLAS_L2_SIZE": "1", "HOME": "h"}
    env = run.bench_env(base)
    assert env == {
        "HOME": "h",
        "MALLOC_MMAP_MAX_": "0",
        "MALLOC_TRIM_THRESHOLD_": "100000000000",
    }
    assert "OPENBLAS_CORETYPE" in base  # the caller's environment is untouched


GOOD = """
import json, os, sys

args = sys.argv[1:]
assert "--quick" in args
assert "OPENBLAS_CORETYPE" not in os.environ
assert os.environ["MALLOC_MMAP_MAX_"] == "0"
row = {"model": "M", "operation": "fit", "ours": 1.0, "theirs": 4.0,
       "goal": 0.5, "repeats": 3, "sizes": "10 rows"}
with open(args[args.index("--json") + 1], "w") as f:
    json.dump({"peer": "sklearn", "results": [row]}, f)
"""


def test_runner_runs_each_script_and_fails_when_one_crashes(
    tmp_path, monkeypatch, capsys
):
    (tmp_path / "bench_good.py").write_text(textwrap.dedent(GOOD))
    (tmp_path / "bench_crash.py").write_text("raise SystemExit('it rotted')\n")
    (tmp_path / "bench_silent.py").write_text("pass\n")  # no JSON written
    monkeypatch.setenv("OPENBLAS_CORETYPE", "haswell")
    monkeypatch.setattr(run, "discover", lambda: sorted(tmp_path.glob("bench_*.py")))
    out_json = tmp_path / "all.json"

    assert run.main(["--quick", "--only", "good", "--json", str(out_json)]) == 0
    assert os.environ["OPENBLAS_CORETYPE"] == "haswell"
    assert "MALLOC_MMAP_MAX_" not in os.environ
    data = json.loads(out_json.read_text())
    (bench,) = data["benchmarks"]
    assert bench["name"] == "good" and bench["error"] is None
    assert bench["results"][0]["ratio"] == 0.25
    assert bench["results"][0]["met"] is True
    table = capsys.readouterr().out
    assert "10 rows" in table and "0.25" in table

    assert run.main(["--quick"]) == 1
    captured = capsys.readouterr()
    assert "it rotted" in captured.err
    assert "FAILED: crash, silent" in captured.err
    assert "good" in captured.out  # the good one is still in the table

    with pytest.raises(SystemExit):
        run.main(["--only", "nonexistent"])


def test_only_a_name_also_runs_the_scripts_named_after_it(tmp_path, monkeypatch):
    for name in ("good", "good_more", "goodbye"):
        (tmp_path / f"bench_{name}.py").write_text(textwrap.dedent(GOOD))
    monkeypatch.setattr(run, "discover", lambda: sorted(tmp_path.glob("bench_*.py")))
    out_json = tmp_path / "all.json"
    assert run.main(["--quick", "--only", "good", "--json", str(out_json)]) == 0
    names = [b["name"] for b in json.loads(out_json.read_text())["benchmarks"]]
    assert names == ["good", "good_more"]  # not goodbye
    assert run.main(["--quick", "--only", "good_more", "--json", str(out_json)]) == 0
    names = [b["name"] for b in json.loads(out_json.read_text())["benchmarks"]]
    assert names == ["good_more"]


def test_recorded_command_leaves_out_where_json_went():
    keep = ["--quick", "--rst", "docs/t.rst", "--only", "hmm"]
    for extra in (["--json", "out.json"], ["--json=out.json"], []):
        assert run._without_json(keep[:2] + extra + keep[2:]) == keep


def test_first_use_waits_for_the_compiles_whose_child_runs(tmp_path):
    # The background compile's child outlives the workflow's process: the
    # warm process, the next workflow and the cache's removal wait for it;
    # a lock file whose process has ended holds nothing up.
    first_use = _load("bench_first_use")
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "bayeskit-chain.compiling").write_text(str(os.getpid()))
    (tmp_path / "bayeskit-other.txt").write_text(str(os.getpid()))
    assert first_use._compiling(str(tmp_path)) == [
        str(folder / "bayeskit-chain.compiling")
    ]
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    (folder / "bayeskit-chain.compiling").write_text(ended.stdout.strip())
    assert first_use._compiling(str(tmp_path)) == []
    first_use.wait_for_background_compiles(str(tmp_path), timeout=1.0)
    (folder / "bayeskit-chain.compiling").write_text(str(os.getpid()))
    with pytest.raises(SystemExit, match="still running"):
        first_use.wait_for_background_compiles(str(tmp_path), timeout=0.3)
