"""bayeskit in hostile environments: no cache location, a damaged cache, threads
under numba's workqueue layer. Each case runs in a fresh interpreter."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Fits and scores two HMMs (chain kernels, Gaussian and categorical emissions)
# and a naive Bayes, and prints the numbers. The data are large enough for the
# compiled kernels (smaller work runs them interpreted, compiling nothing).
_FIRST_USE = """
import json
import numpy as np
from bayeskit import CategoricalHMM, GaussianHMM, GaussianNB
rng = np.random.default_rng(0)
X = rng.normal(size=(10000, 2))
y = (X[:, 0] > 0).astype(int)
out = {"nb": GaussianNB().fit(X, y).predict_proba(X)[:3].tolist()}
hmm = GaussianHMM(2, random_state=0, n_iter=3).fit(X)
out["gaussian_hmm"] = hmm.score(X)
symbols = rng.integers(0, 3, size=(10000, 1))
out["categorical_hmm"] = CategoricalHMM(2, random_state=0, n_iter=3).fit(symbols).score(
    symbols
)
print(json.dumps(out))
"""

# numba's own cache locations all unusable, as in a read-only installation run
# by a user without a writable home: each answers "not here", as numba's do
# when they cannot write.
_NO_NUMBA_LOCATION = """
from numba.core import caching
for name in dir(caching):
    cls = getattr(caching, name)
    numba_class = isinstance(cls, type) and cls.__module__ == caching.__name__
    if numba_class and name.endswith("CacheLocator"):
        cls.from_function = classmethod(lambda cls, py_func, py_file: None)
"""


def _run(code: str, env: dict, tmp_path: Path) -> dict:
    full_env = {
        k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "TMP"))
    }
    full_env.update(env, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=full_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reference")
    return _run(_FIRST_USE, {"NUMBA_CACHE_DIR": str(tmp / "cache")}, tmp)


def test_no_writable_numba_cache_location_falls_back_to_a_private_temp_dir(
    tmp_path, reference
):
    out = _run(_NO_NUMBA_LOCATION + _FIRST_USE, {"TMPDIR": str(tmp_path)}, tmp_path)
    assert out == reference
    if hasattr(os, "getuid"):
        cache = tmp_path / f"bayeskit-numba-{os.getuid()}"
        assert any(cache.rglob("*.nbi")), "the kernels were not cached there"
        assert cache.stat().st_mode & 0o077 == 0


def test_no_writable_location_at_all_compiles_uncached(tmp_path, reference):
    # The temporary directory is a file: no cache directory can be made anywhere.
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")
    out = _run(_NO_NUMBA_LOCATION + _FIRST_USE, {"TMPDIR": str(blocked)}, tmp_path)
    assert out == reference


def test_a_foreign_owned_or_shared_temp_cache_is_not_used(tmp_path, reference):
    if not hasattr(os, "getuid"):
        pytest.skip("no user ids on this platform")
    shared = tmp_path / f"bayeskit-numba-{os.getuid()}"
    shared.mkdir()
    shared.chmod(0o777)  # anyone could have planted cache files here
    out = _run(_NO_NUMBA_LOCATION + _FIRST_USE, {"TMPDIR": str(tmp_path)}, tmp_path)
    assert out == reference
    assert not any(shared.rglob("*.nbi"))


def test_a_damaged_cache_is_recompiled_not_fatal(tmp_path, reference):
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    _run(_FIRST_USE, env, tmp_path)
    files = [*tmp_path.rglob("*.nbi"), *tmp_path.rglob("*.nbc")]
    assert files
    for path in files:
        path.write_bytes(b"\x80\x04 not a pickle")
    assert _run(_FIRST_USE, env, tmp_path) == reference
    # The cache was rewritten: a third process loads it.
    assert _run(_FIRST_USE, env, tmp_path) == reference


_THREADS = """
import json, threading
import numpy as np
from bayeskit.graph import forward_backward
rng = np.random.default_rng(0)
start = np.log(np.full(4, 0.25))
trans = np.log(rng.dirichlet(np.ones(4), size=4))
emission = rng.normal(size=(300_000, 4))  # large enough for the parallel kernels
lengths = [100_000] * 3
small = emission[:50]
expected = forward_backward(start, trans, emission, lengths).log_likelihood.sum()
expected_small = forward_backward(start, trans, small).log_likelihood.sum()
results = []
def work(i):
    if i % 2:
        post = forward_backward(start, trans, emission, lengths)
        results.append(bool(post.log_likelihood.sum() == expected))
    else:
        post = forward_backward(start, trans, small)
        results.append(bool(post.log_likelihood.sum() == expected_small))
threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
for t in threads: t.start()
for t in threads: t.join()
import numba
print(json.dumps({"ok": results, "layer": numba.threading_layer()}))
"""


@pytest.mark.slow
def test_eight_threads_under_the_workqueue_layer(tmp_path):
    env = {
        "NUMBA_THREADING_LAYER": "workqueue",
        "NUMBA_NUM_THREADS": "2",
        "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
    }
    out = _run(_THREADS, env, tmp_path)
    assert out["layer"] == "workqueue"
    assert out["ok"] == [True] * 8


def test_a_read_only_installation_run_without_a_home(tmp_path, reference):
    """The package copied to a read-only directory, run with no HOME and no
    numba cache setting, as a service account runs a system installation:
    import and first use give the reference answers and write nothing into
    the installation. (As root, whom file modes do not stop, numba's own
    locators are also told that they cannot write, as they would find.)"""
    import shutil
    import stat

    site = tmp_path / "site"
    shutil.copytree(
        ROOT / "bayeskit",
        site / "bayeskit",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    before = sorted(p.relative_to(site) for p in site.rglob("*"))
    for path in [*site.rglob("*"), site]:
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("NUMBA_", "TMP")) and k not in ("HOME", "PYTHONPATH")
    }
    env.update(PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1")
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    code = _FIRST_USE
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        code = _NO_NUMBA_LOCATION + code
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert json.loads(done.stdout.strip().splitlines()[-1]) == reference
        assert sorted(p.relative_to(site) for p in site.rglob("*")) == before
    finally:
        for path in [site, *site.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
