"""``import bayeskit`` reaches every public subpackage as an attribute, as
``import sklearn`` does (module ``__getattr__`` and ``__dir__``, PEP 562),
without importing the ones the estimators do not need, nor matplotlib or Dask.

Each check runs in a fresh interpreter: the test session has imported
everything already.
"""

import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import bayeskit

ROOT = Path(__file__).resolve().parents[1]

_CHECK = """
import importlib, json, sys
import bayeskit as bk
loaded = sorted(m for m in sys.modules if m.startswith("bayeskit."))
heavy = sorted(m for m in ("matplotlib", "dask") if m in sys.modules)
listed = sorted(n for n in dir(bk) if n in {names})
same = {{n: getattr(bk, n) is importlib.import_module("bayeskit." + n)
        for n in {names}}}
asia = sorted(map(list, bk.datasets.load_network("asia").edges))
from bayeskit.datasets import load_network
same_asia = asia == sorted(map(list, load_network("asia").edges))
try:
    bk.no_such_subpackage
    missing = None
except AttributeError as exc:
    missing = str(exc)
print(json.dumps({{
    "loaded": loaded, "heavy": heavy, "listed": listed, "same": same,
    "asia": same_asia and len(asia) == 8,
    "missing": missing,
}}))
"""


def public_subpackages() -> list:
    """The packages on disk under bayeskit/, their names not private."""
    return sorted(
        m.name
        for m in pkgutil.iter_modules(bayeskit.__path__)
        if m.ispkg and not m.name.startswith("_")
    )


def run(code: str, tmp_path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_public_subpackage_is_an_attribute(tmp_path):
    names = public_subpackages()
    assert {"datasets", "io", "graph", "emissions", "priors"} <= set(names)
    out = run(_CHECK.format(names=repr(names)), tmp_path)
    # import bayeskit loads neither the lazy subpackages nor matplotlib or Dask
    loaded = {m.split(".")[1] for m in out["loaded"]}
    assert "datasets" not in loaded and "io" not in loaded and "cli" not in loaded
    assert out["heavy"] == []
    assert out["listed"] == names  # dir(bayeskit) lists them
    assert out["same"] == dict.fromkeys(names, True)
    assert out["asia"] is True
    assert out["missing"] == "module 'bayeskit' has no attribute 'no_such_subpackage'"
