"""benchmarks/bench_text_nb.py at a tiny size: its data and its results file."""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _load():
    saved = list(sys.path)
    try:
        spec = importlib.util.spec_from_file_location(
            "_bench_text_nb", BENCHMARKS / "bench_text_nb.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module


bench = _load()


def test_zipf_counts_are_csr_with_zipf_word_frequencies():
    X, y = bench.zipf_counts(2000, 400, np.random.default_rng(0))
    assert X.format == "csr" and X.shape == (2000, 400)
    assert (np.asarray(X.sum(axis=1)).ravel() == bench.WORDS_PER_DOC).all()
    assert set(np.unique(y)) <= set(range(bench.N_CLASSES))
    freq = np.asarray(X.sum(axis=0)).ravel()
    # word r about 1 / r as frequent as word 1 (each class boosts 2% of words)
    assert freq[0] > 5 * freq[9] > 0
    assert np.corrcoef(np.log(freq[:100] + 1), -np.log(np.arange(1, 101)))[0, 1] > 0.8


def test_runs_and_writes_every_comparison(tmp_path, capsys):
    out = tmp_path / "r.json"
    args = ["--n-samples", "400", "--n-features", "300", "--repeats", "1"]
    assert bench.main([*args, "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["results"]
    ops = {(r["model"], r["operation"]) for r in rows}
    for model in bench.MODELS:
        for op in ["fit", "predict_proba", "fit [peak MB]", "predict_proba [peak MB]"]:
            assert (model, op) in ops
    assert all(r["ours"] > 0 and r["theirs"] > 0 for r in rows)
    assert "CSR 400 x 300" in capsys.readouterr().out
