"""The compare tool's files: no report over an input or another report, reports
written atomically, and a table read (decompressed) to a cap, never beyond."""

import bz2
import gzip
import io
import json
import lzma
import os
import stat
import tarfile
import tracemalloc
import zipfile

import numpy as np
import pandas as pd
import pytest

from bayeskit.cli import data as cd
from bayeskit.cli import report
from bayeskit.cli.main import main


def _table(n=24, seed=1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    x = rng.normal(y * 2.0, 1.0)
    return "a,y\n" + "".join(f"{v:.3f},{'p' if t else 'q'}\n" for v, t in zip(x, y))


def _outputs(tmp_path, how):
    """A CSV, and the ``--json`` / ``--plot`` arguments that name it (or each
    other) in a way of writing ``how``."""
    csv = tmp_path / "data.csv"
    csv.write_text(_table())
    if how == "same":
        return csv, ["--json", str(csv)]
    if how == "relative":
        return csv, ["--json", "./sub/../data.csv"]
    if how == "symlink":
        (tmp_path / "link.json").symlink_to(csv)
        return csv, ["--json", str(tmp_path / "link.json")]
    if how == "hardlink":
        os.link(csv, tmp_path / "hard.json")
        return csv, ["--json", str(tmp_path / "hard.json")]
    if how == "plot":
        return csv, ["--plot", str(csv)]
    if how == "json and plot":
        return csv, ["--json", str(tmp_path / "r"), "--plot", str(tmp_path / "r")]
    if how == "html":
        return csv, ["--html", str(csv)]
    if how == "comparison plot":
        return csv, ["--comparison-plot", str(csv)]
    if how == "html and json":
        return csv, ["--html", str(tmp_path / "r"), "--json", str(tmp_path / "r")]
    raise AssertionError(how)


@pytest.mark.parametrize(
    "how",
    [
        "same",
        "relative",
        "symlink",
        "hardlink",
        "plot",
        "json and plot",
        "html",
        "comparison plot",
        "html and json",
    ],
)
def test_no_report_writes_over_the_table_or_another_report(
    how, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    csv, outputs = _outputs(tmp_path, how)
    before = csv.read_bytes()
    args = ["compare", "--csv", str(csv), "--target", "y", "--cv", "2", *outputs]
    assert main([*args, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert csv.read_bytes() == before  # the user's table is untouched
    assert err.startswith("bayeskit compare: error: --")
    assert "would write over the input --csv" in err or "name the same file" in err
    assert not (tmp_path / "r").exists()


def test_an_output_in_a_missing_folder_or_a_folder_is_refused_before_any_work(
    tmp_path, capsys
):
    csv = tmp_path / "data.csv"
    csv.write_text(_table())
    base = ["compare", "--csv", str(csv), "--target", "y", "--no-progress"]
    assert main([*base, "--json", str(tmp_path / "no" / "r.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main([*base, "--json", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_a_report_that_fails_midway_leaves_the_old_file_whole(tmp_path, rng):
    path = tmp_path / "report.json"
    for _ in range(10):
        old = json.dumps({"old": rng.normal(size=5).tolist()})
        path.write_text(old)
        # json.dump writes the keys before the bad one, then raises.
        payload = {f"k{j}": list(range(50)) for j in range(rng.integers(1, 40))}
        payload["z"] = object()
        with pytest.raises(TypeError):
            report.write_json(payload, str(path))
        assert path.read_text() == old
        assert sorted(os.listdir(tmp_path)) == ["report.json"]  # no temporary left
    good = {"a": [1.0, None]}
    report.write_json(good, str(path))
    assert json.loads(path.read_text()) == good


def test_a_report_keeps_the_permissions_open_would_give(tmp_path):
    new = tmp_path / "new.json"
    report.write_json({"a": 1}, str(new))
    with open(tmp_path / "reference", "w") as f:
        f.write("x")
    mode = stat.S_IMODE(os.stat(tmp_path / "reference").st_mode)
    assert stat.S_IMODE(os.stat(new).st_mode) == mode
    os.chmod(new, 0o640)
    report.write_json({"a": 2}, str(new))
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o640
    assert json.loads(new.read_text()) == {"a": 2}
    # A path that is not a regular file is written, never replaced.
    report.write_json({"a": 3}, os.devnull)
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def _compressed(kind, data: bytes) -> bytes:
    if kind == "gzip":
        return gzip.compress(data, compresslevel=9)
    if kind == "bz2":
        return bz2.compress(data, 9)
    if kind == "xz":
        return lzma.compress(data)
    buffer = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("t.csv", data)
    else:  # a tar inside gzip
        with tarfile.open(fileobj=buffer, mode="w:gz") as t:
            info = tarfile.TarInfo("t.csv")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


KINDS = ["gzip", "bz2", "xz", "zip", "tar.gz"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["t.csv", "t.csv.gz", "t.data"])
def test_a_compressed_table_reads_as_the_plain_one_whatever_its_name(
    kind, name, tmp_path
):
    text = _table(60, seed=3)
    plain = tmp_path / "plain.csv"
    plain.write_text(text)
    path = tmp_path / name
    path.write_bytes(_compressed(kind, text.encode()))
    ours, expected = cd.read_csv(str(path), "y"), cd.read_csv(str(plain), "y")
    pd.testing.assert_frame_equal(ours.X, expected.X)
    pd.testing.assert_series_equal(ours.y, expected.y)


@pytest.mark.parametrize("kind", KINDS)
def test_a_decompression_bomb_stops_at_the_cap(kind, tmp_path, monkeypatch, capsys):
    cap = 10**6
    monkeypatch.setattr(cd, "MAX_CSV_BYTES", cap)
    rows = ("1.0,p\n" * (10**8 // 6)).encode()
    path = tmp_path / "bomb.csv"
    path.write_bytes(_compressed(kind, b"a,y\n" + rows))
    assert path.stat().st_size < 2 * 10**6
    tracemalloc.start()
    try:
        with pytest.raises(cd.CompareError, match="holds more than 1000000 bytes"):
            cd.read_csv(str(path), "y")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * cap  # the file expands to 100 times the cap
    assert main(["compare", "--csv", str(path), "--target", "y"]) == 2
    assert "take a sample of its rows" in capsys.readouterr().err


def test_a_plain_table_over_the_cap_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "t.csv"
    path.write_text(_table(60))
    size = path.stat().st_size
    monkeypatch.setattr(cd, "MAX_CSV_BYTES", size)
    assert len(cd.read_csv(str(path), "y").X) == 60
    monkeypatch.setattr(cd, "MAX_CSV_BYTES", size - 1)
    with pytest.raises(cd.CompareError, match=f"holds more than {size - 1} bytes"):
        cd.read_csv(str(path), "y")


def test_a_zip_of_two_tables_is_refused(tmp_path):
    path = tmp_path / "t.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("a.csv", _table())
        z.writestr("b.csv", _table())
    with pytest.raises(cd.CompareError, match="zip archive of 2 files"):
        cd.read_csv(str(path), "y")
