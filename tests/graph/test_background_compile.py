"""The kernels a numpy stand-in answers for are compiled in a child process.

In a fresh process on an empty numba cache, once the chain's numpy recursions
have spent their budget, the old code compiled the kernels on the next call
(seconds, on an arbitrary call of a notebook). Now a child process compiles
them into the disk cache while the recursions keep answering; then they are
loaded from it. These tests count compiles and cache loads in a fresh process
(no timing): no call of the parent compiles a chain kernel, the child's
compile lands in the cache and is then used, the answers are the kernels'; a
child outlives the process that started it and the next process loads what it
compiled; a lock file left by a dead process is taken over.
"""

import json
import os
import subprocess
import sys
import time

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
import json, os, pickle
import numpy as np
from bayeskit import _jit
from bayeskit.graph import _chain_numpy, chain

_jit._BACKGROUND_AFTER = 0.0
rng = np.random.default_rng(1)
args = (np.log([0.5, 0.5]), np.log([[0.9, 0.1], [0.2, 0.8]]), rng.normal(size=(50, 2)))
chain.forward_backward(*args)
child, lock, payload, _ = _jit._children["chain"]
with open(os.environ["ARGS_FILE"], "wb") as f:
    pickle.dump(args, f)
print(json.dumps({"pid": child.pid, "session": os.getsid(child.pid),
                  "lock": lock, "payload": payload}))
"""

_NEXT = """
import json, os, pickle
from bayeskit import _jit
from bayeskit.graph import _chain_kernels as k, _chain_numpy, chain

_jit._BACKGROUND_AFTER = 0.0
with open(os.environ["ARGS_FILE"], "rb") as f:
    args = pickle.load(f)
asked = []
spy = _chain_numpy.forward_backward
_chain_numpy.forward_backward = lambda *a: asked.append(1) or spy(*a)
kernels = [k._forward_pass, k._forward_backward_pass, k._viterbi_pass]
cached = [_jit._compiled(p.variant(False)) for p in kernels]
chain.forward(*args)
chain.forward_backward(*args)
chain.viterbi(*args)
stats = [p.variant(False).stats for p in kernels]
print(json.dumps({
    "cached": cached, "asked": len(asked),
    "hits": [sum(s.cache_hits.values()) for s in stats],
    "misses": sum(sum(s.cache_misses.values()) for s in stats),
    "children": sorted(_jit._children), "done": sorted(_jit._done),
}))
"""


def _run(source, cache, **variables):
    root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), **variables)
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


def _wait_until_ended(pid, seconds):
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not _alive(pid)


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="the background compile is POSIX's")
def test_a_child_outlives_its_parent_and_the_next_process_loads_its_kernels(
    tmp_path,
):
    """The old code stopped the child when its parent exited (on a loaded
    machine, before it had compiled anything), and the next process started
    the compile again from scratch: now the child, in a session of its own,
    finishes; the next process compiles nothing and starts no child."""
    cache = tmp_path / "cache"
    cache.mkdir()
    args_file = str(tmp_path / "args.pkl")
    got = _run(_EXIT, cache, ARGS_FILE=args_file)
    assert got["session"] == got["pid"]  # its own session, its own group
    assert _wait_until_ended(got["pid"], 1200), "the child ran for 20 minutes"
    assert not os.path.exists(got["lock"])
    assert not os.path.exists(got["payload"])
    later = _run(_NEXT, cache, ARGS_FILE=args_file)
    assert later["cached"] == [True, True, True]
    assert later["asked"] == 0  # no numpy pass: the kernels answered
    assert all(hits >= 1 for hits in later["hits"])
    assert later["misses"] == 0
    assert later["children"] == [] and later["done"] == []


_LEAVE = """
import functools, json, os, time
from bayeskit import _jit
from bayeskit.graph import _chain_kernels as k

replay = functools.partial(time.sleep, float(os.environ["NAP"]))
_jit.compile_in_background("a", k._forward_pass, replay)
child, lock, payload, _ = _jit._children["a"]
while os.path.exists(payload):  # the child has read its call
    time.sleep(0.05)
with open(lock) as f:
    holder = int(f.read())
print(json.dumps({"pid": child.pid, "lock": lock, "holder": holder}))
"""


@pytest.mark.skipif(os.name != "posix", reason="the background compile is POSIX's")
def test_a_process_that_exits_leaves_its_child_to_finish(tmp_path):
    got = _run(_LEAVE, tmp_path, NAP="2")
    # The parent has exited; the child still runs and holds the lock...
    assert got["holder"] == got["pid"]
    assert _alive(got["pid"]) and os.path.exists(got["lock"])
    # ...and removes it when its replay ends.
    assert _wait_until_ended(got["pid"], 120)
    assert not [p for p in tmp_path.rglob("*.compiling")]


_BOUNDED = """
import functools, json, os, signal, time
from bayeskit import _jit
from bayeskit.graph import _chain_kernels as k

# A replay that runs past the child's wall-clock bound (brought to 1 s).
replay = functools.partial(
    _jit.replay_all, functools.partial(signal.alarm, 1),
    functools.partial(time.sleep, 600),
)
_jit.compile_in_background("a", k._forward_pass, replay)
child, lock, _, _ = _jit._children["a"]
print(json.dumps({"pid": child.pid, "lock": lock}))
"""


@pytest.mark.skipif(os.name != "posix", reason="the background compile is POSIX's")
def test_a_child_past_its_bound_stops_and_releases_its_lock(tmp_path):
    got = _run(_BOUNDED, tmp_path)
    assert _wait_until_ended(got["pid"], 120), "the child ran past its bound"
    assert not os.path.exists(got["lock"])


_TAKE_OVER = """
import functools, json, os, subprocess, sys, time
from bayeskit import _jit
from bayeskit.graph import _chain_kernels as k

nap = functools.partial(time.sleep, 0.1)
kernel = k._forward_pass
dead = subprocess.Popen([sys.executable, "-c", "pass"])
dead.wait()  # exited and reaped: its id names no process
zombie = subprocess.Popen([sys.executable, "-c", "pass"])
while not os.path.exists(f"/proc/{zombie.pid}/stat"):
    time.sleep(0.01)
time.sleep(1.0)  # exited, not reaped: a zombie
holders = {"dead": dead.pid, "zombie": zombie.pid, "alive": os.getpid()}
got = {}
for key, pid in holders.items():
    lock = _jit._lock_path(key, kernel)
    with open(lock, "w") as f:
        f.write(str(pid))
    before = _jit.compiling(key, kernel)
    started = _jit.compile_in_background(key, kernel, nap)
    child = _jit._children.get(key)
    with open(lock) as f:
        holder = int(f.read() or 0)
    got[key] = {"before": before, "started": started, "child": child is not None,
                "holder_is_child": child is not None and holder == child[0].pid}
    while child is not None and _jit.compiling(key, kernel):
        time.sleep(0.05)
    got[key]["left"] = os.path.exists(lock)
    if key == "alive":
        os.remove(lock)
print(json.dumps(got))
"""


@pytest.mark.skipif(os.name != "posix", reason="the background compile is POSIX's")
def test_a_lock_left_by_a_dead_process_is_taken_over(tmp_path):
    got = _run(_TAKE_OVER, tmp_path)
    # A lock naming a process that has ended (reaped, or a zombie) is not
    # held: a child of this process takes it over, and removes it at its end.
    for key in ("dead", "zombie"):
        assert got[key] == {
            "before": False, "started": True, "child": True,
            "holder_is_child": True, "left": False,
        }  # fmt: skip
    # A lock naming a running process is held: no second child starts.
    assert got["alive"]["before"] is True
    assert got["alive"]["started"] is True
    assert got["alive"]["child"] is False


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


_PRIORITY_SEEN_AT_IMPORT = """
import os


def _autogroup_nice():
    try:
        with open("/proc/self/autogroup") as f:
            return int(f.read().split()[-1])
    except OSError:
        return None


print(os.nice(0), _autogroup_nice(), flush=True)


def _child_main():
    pass
"""


@pytest.mark.skipif(os.name != "posix", reason="the background compile is POSIX's")
def test_the_child_takes_the_lowest_priority_before_its_imports(tmp_path):
    """The old child lowered its niceness (to 5) only once it had imported
    numpy, numba and bayeskit, a second or two of CPU; and in a session of its
    own, a Linux autogroup of its own, its niceness did not count against its
    parent's threads: scikit-learn's k-means in the parent took 10 to 100
    times longer meanwhile. Now the first thing the child does is take
    niceness 19, and its autogroup's too where there are autogroups: a
    ``bayeskit._jit`` that reports them when imported sees them already."""
    from bayeskit import _jit

    fake = tmp_path / "bayeskit"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "_jit.py").write_text(_PRIORITY_SEEN_AT_IMPORT)
    out = subprocess.run(
        [sys.executable, "-c", _jit._CHILD_SOURCE, "payload", "lock"],
        env=dict(os.environ, PYTHONPATH=str(tmp_path)),
        cwd=tmp_path,  # not this checkout's bayeskit, first on the path
        # Its own session, as the child's: the autogroup's niceness is the
        # session's, and this one's is the test run's.
        start_new_session=True,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert int(out[0]) == 19
    if os.path.exists("/proc/self/autogroup"):
        assert int(out[1]) == 19


@pytest.mark.skipif(
    not hasattr(os, "getpriority"), reason="the background compile is POSIX's"
)
def test_a_running_child_has_niceness_19(tmp_path):
    got = _run(_LEAVE, tmp_path, NAP="3")
    try:
        assert os.getpriority(os.PRIO_PROCESS, got["pid"]) == 19
    finally:
        assert _wait_until_ended(got["pid"], 120)
