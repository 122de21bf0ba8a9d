"""The kernels a numpy stand-in answers for are compiled in a child process.

In a fresh process on an empty numba cache, once the chain's numpy recursions
have spent their budget, the old code compiled the kernels on the next call
(seconds, on an arbitrary call of a notebook). Now a child process compiles
them into the disk cache while the recursions keep answering; then they are
loaded from it. These tests count compiles and cache loads in a fresh process
(no timing): no call of the parent compiles a chain kernel, the child's
compile lands in the cache and is then used, the answers are the kernels', and
no child is left behind.
"""

import json
import os
import subprocess
import sys

import pytest

_WAIT = """
import json, os, time
import numpy as np
from numpy.testing import assert_allclose
from bayeskit import _jit
from bayeskit.graph import _chain_kernels as k, _chain_numpy, chain

_jit._BACKGROUND_AFTER = 0.0
_chain_numpy.BUDGET = 0.0  # spent from the start: the old code compiled here
rng = np.random.default_rng(0)
args = (np.log([0.6, 0.3, 0.1]), np.log(rng.dirichlet(np.ones(3), size=3)),
        rng.normal(size=(600, 3)), [200, 300, 100])
answered = []
spy = _chain_numpy.forward_backward
def counted(*a):
    found = spy(*a)
    answered.append(found is not None)
    return found
_chain_numpy.forward_backward = counted
kernels = [k._forward_pass, k._forward_backward_pass, k._viterbi_pass, k._shift_rows]
first = chain.forward_backward(*args)
pid = _jit._children["chain"][0].pid
waits, deadline = 0, time.monotonic() + 1200
while _jit.compiling("chain", k._forward_pass) and time.monotonic() < deadline:
    chain.forward_backward(*args)
    chain.viterbi(*args)
    waits += 1
    time.sleep(0.2)
finished = not _jit.compiling("chain", k._forward_pass)
later = chain.forward_backward(*args)
stats = [p.variant(False).stats for p in kernels]
for name in ("log_likelihood", "posterior", "transition_counts"):
    assert_allclose(getattr(later, name), getattr(first, name), rtol=1e-12, atol=1e-12)
print(json.dumps({
    "finished": finished, "answered": answered, "waits": waits,
    "hits": sum(stats[1].cache_hits.values()),
    "misses": sum(sum(s.cache_misses.values()) for s in stats),
    "left": [f for f in os.listdir(_jit._cache_dir(k._forward_pass))
             if f.endswith(".compiling")],
    "pid": pid,
}))
"""

_EXIT = """
import json
import numpy as np
from bayeskit import _jit
from bayeskit.graph import _chain_numpy, chain

_jit._BACKGROUND_AFTER = 0.0
rng = np.random.default_rng(1)
chain.forward_backward(np.log([0.5, 0.5]), np.log([[0.9, 0.1], [0.2, 0.8]]),
                       rng.normal(size=(50, 2)))
print(json.dumps({"pid": _jit._children["chain"][0].pid}))
"""


def _run(source, cache):
    root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    env["BAYESKIT_COMPILE_IN_BACKGROUND"] = "1"  # the suite turns it off
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, "-c", source],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by init) is not running.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="the background compile is POSIX's")
def test_the_stand_in_answers_while_a_child_compiles_then_the_cache_is_used(
    tmp_path,
):
    got = _run(_WAIT, tmp_path)
    assert got["finished"], "the child did not finish within 20 minutes"
    # The numpy passes answered every call that asked them (the old code
    # compiled on the first: the budget was spent), some while the child
    # compiled; no chain kernel was compiled here (no cache miss), and the
    # sum-product kernel was then loaded from the child's cache.
    assert got["waits"] >= 1
    assert got["answered"] and all(got["answered"])
    assert got["hits"] >= 1
    assert got["misses"] == 0
    assert got["left"] == []
    assert not _alive(got["pid"])


@pytest.mark.skipif(os.name != "posix", reason="the background compile is POSIX's")
def test_a_process_that_exits_leaves_no_child_behind(tmp_path):
    got = _run(_EXIT, tmp_path)
    assert not _alive(got["pid"])
    assert not [p for p in tmp_path.rglob("*.compiling")]


_ONE_AT_A_TIME = """
import functools, json, time
from bayeskit import _jit
from bayeskit.graph import _chain_kernels as k, _gaussian_kernels as g

nap = functools.partial(time.sleep, 0.1)  # a replay that compiles nothing
started = [_jit.compile_in_background("a", k._forward_pass, nap),
           _jit.compile_in_background("b", g.filter_kernel, nap)]
running = [sorted(_jit._children)]
deadline = time.monotonic() + 600
while "b" not in _jit._children and "b" not in _jit._done:
    _jit.compile_in_background("b", g.filter_kernel, nap)
    running.append(sorted(_jit._children))
    assert time.monotonic() < deadline
    time.sleep(0.05)
while _jit.compiling("b", g.filter_kernel):
    assert time.monotonic() < deadline
    time.sleep(0.05)
print(json.dumps({"started": started, "running": running, "done": sorted(_jit._done)}))
"""


@pytest.mark.skipif(os.name != "posix", reason="the background compile is POSIX's")
def test_a_process_runs_one_child_at_a_time(tmp_path):
    got = _run(_ONE_AT_A_TIME, tmp_path)
    # Both report a compile under way; b's child starts once a's has ended.
    assert got["started"] == [True, True]
    assert got["running"][0] == ["a"]
    assert all(len(keys) <= 1 for keys in got["running"])
    assert got["done"] == ["a", "b"]
    assert not [p for p in tmp_path.rglob("*.compiling")]


def test_the_environment_variable_turns_the_child_off(monkeypatch, tmp_path):
    """``BAYESKIT_COMPILE_IN_BACKGROUND=0``: no child starts (the kernels
    compile in the calling process when needed), and no lock file is made."""
    import functools

    from bayeskit import _jit
    from bayeskit.graph import _chain_kernels

    monkeypatch.setenv("BAYESKIT_COMPILE_IN_BACKGROUND", "0")
    monkeypatch.setattr(_jit, "_cache_dir", lambda kernel: str(tmp_path))
    started = _jit.compile_in_background(
        "env-test", _chain_kernels._forward_pass, functools.partial(print)
    )
    assert started is False
    assert list(tmp_path.iterdir()) == []
