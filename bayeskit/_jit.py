"""numba compilation for bayeskit's kernels: a disk cache that never fails a call.

Every compiled kernel of bayeskit is declared with :func:`njit`, numba's own
decorator with its on-disk cache made safe:

- Where numba finds no writable cache location (a read-only installation run
  by a user without a writable home: a service account, a read-only root
  filesystem), numba's ``cache=True`` raises at import. Here the kernels are
  cached in a directory of this user's under the temporary directory instead,
  made private (mode 0700) and used only if this user owns it and nobody else
  can write to it; failing that, they are compiled in every process, uncached.
- A cache file that cannot be read (truncated, damaged, written by an
  incompatible build) is a cache miss: the kernel is compiled again and the
  cache rewritten. A cache that cannot be written is skipped.

:func:`parallel_pair` gives a kernel written with ``numba.prange`` as two
dispatchers, one compiled serial and one parallel, compiled only when first
called: small problems never compile, load or launch the parallel variant,
and :func:`run_parallel` runs the parallel one safely from several threads
whatever numba's threading layer (its ``workqueue`` fallback, used where no
OpenMP or TBB runtime is installed, aborts the process when two threads
launch parallel work at once).

:func:`interpreted` gives a kernel's own source run by the Python interpreter
(with the kernels it calls interpreted too): the same arithmetic in the same
order, at interpreter speed but with nothing to compile. Work so small that
compiling a kernel would cost far more than running its source (a first fit on
a few hundred rows in a fresh environment, where the disk cache is empty) runs
it, through :func:`run_small` (``run_parallel`` with ``n_threads=0``), until
the kernel has spent ``_INTERPRET_BUDGET`` seconds interpreted in this process
or is compiled anyway: many small calls then get the compiled kernel.

:func:`compile_in_background` compiles kernels that a numpy stand-in answers
for in a child process, which fills the disk cache while the stand-in keeps
answering in this one: a process that keeps calling then loads them (a few
tenths of a second) instead of compiling them (up to some fifteen seconds on
the call that happens to spend the stand-in's budget). The child replays the
call that asked, with the stand-ins off, so it compiles exactly the
specialisations this process would; it holds neither this process's GIL nor
numba's compiler lock. It runs in a session of its own and outlives its parent:
a process that exits before the compile ends (a short script, a notebook
restarted) leaves it to finish filling the cache, bounded by
``_CHILD_CPU_SECONDS`` of CPU and ``_CHILD_SECONDS`` of wall-clock time, and
the next process loads the kernels instead of starting the compile again.
A lock file naming the child's process id tells other processes that it is
running; one left by a child that died (a crash, a kill) is taken over.
"""

from __future__ import annotations

import atexit
import os
import pickle
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import types
import warnings
from contextlib import suppress
from functools import cache

import numba
import numpy as np
from numba.core import caching

__all__ = [
    "BLAS_ALONE_SIZE",
    "blas_alone",
    "compile_in_background",
    "compiling",
    "interpreted",
    "njit",
    "numpy_first",
    "parallel_pair",
    "run_numpy",
    "run_parallel",
    "run_small",
]


def _numba_name(*names):
    """A class of ``numba.core.caching`` (its private names changed in 0.61)."""
    for name in names:
        if hasattr(caching, name):
            return getattr(caching, name)
    raise ImportError(f"numba.core.caching has none of {names}")


_Locator = _numba_name("_CacheLocator")
_SourceFileBacked = _numba_name("_SourceFileBackedLocatorMixin")
_ResultCacheImpl = _numba_name("CompileResultCacheImpl", "_CompileResultCacheImpl")


class _PrivateTempLocator(_SourceFileBacked, _Locator):
    """A cache under this user's private directory in the temporary directory."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(
            _private_temp_dir(), self.get_suitable_cache_subpath(py_file)
        )

    def get_cache_path(self):
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        if _private_temp_dir() is None or not os.path.exists(py_file):
            return None
        self = cls(py_func, py_file)
        try:
            self.ensure_cache_path()
        except OSError:
            return None
        return self


def _private_temp_dir() -> str | None:
    """``<tmp>/bayeskit-numba-<uid>``, if it is (or can be made) this user's
    alone; None where there is no such directory (or no user ids)."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return None
    path = os.path.join(tempfile.gettempdir(), f"bayeskit-numba-{getuid()}")
    with suppress(OSError):
        os.mkdir(path, 0o700)
    try:
        info = os.lstat(path)
    except OSError:
        return None
    private = (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == getuid()
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )
    return path if private else None


class _SafeCacheImpl(_ResultCacheImpl):
    _locator_classes = [*_ResultCacheImpl._locator_classes, _PrivateTempLocator]


class _SafeCache(caching.FunctionCache):
    """numba's function cache, whose failures are cache misses, not errors."""

    _impl_class = _SafeCacheImpl

    def load_overload(self, sig, target_context):
        # numba writes an entry's index line before its data file: an entry
        # listed but not loaded may be one that another process (a background
        # compile) is writing, so it is asked again, briefly, before compiling.
        failed = False
        for wait in (0.05, 0.2, 0.5, None):
            try:
                found = super().load_overload(sig, target_context)
            except Exception:  # a damaged or foreign cache file
                found, failed = None, True
            if found is not None:
                return found
            if wait is None or not self._listed(sig, target_context):
                break
            time.sleep(wait)
        if failed:  # compile again
            with suppress(Exception):
                self.flush()  # an empty index, so the next save succeeds
        return None

    def _listed(self, sig, target_context) -> bool:
        """Whether the index lists an entry for ``sig``."""
        try:
            key = self._index_key(sig, target_context.codegen())
            return key in self._cache_file._load_index()
        except Exception:
            return False

    def save_overload(self, sig, data):
        with suppress(Exception):  # an unwritable cache costs only the cache
            super().save_overload(sig, data)


def _with_safe_cache(dispatcher):
    try:
        dispatcher._cache = _SafeCache(dispatcher.py_func)
    except Exception:  # no location at all: compile in every process
        pass
    return dispatcher


def njit(**options):
    """``numba.njit(**options)`` with the safe disk cache (never ``cache=``)."""

    def decorate(func):
        return _with_safe_cache(numba.njit(**options)(func))

    return decorate


class _Pair:
    """A kernel's serial and parallel variants, each compiled on first use."""

    def __init__(self, func, options):
        self.func = func
        self.options = options
        self._variants = {}
        self._lock = threading.Lock()

    def variant(self, parallel: bool):
        found = self._variants.get(parallel)
        if found is None:
            with self._lock:
                found = self._variants.get(parallel)
                if found is None:
                    func = _renamed(self.func, "_parallel") if parallel else self.func
                    found = njit(**self.options, parallel=parallel)(func)
                    self._variants[parallel] = found
        return found

    def __call__(self, *args):
        """The serial variant (what a problem too small for threads runs)."""
        return self.variant(False)(*args)


def _renamed(func, suffix: str):
    """A copy of ``func`` under another name: numba keys its cache files by
    the function's name and line, not by the compile options, so the parallel
    variant needs a name of its own."""
    copy = types.FunctionType(
        func.__code__,
        func.__globals__,
        func.__name__ + suffix,
        func.__defaults__,
        func.__closure__,
    )
    copy.__qualname__ = func.__qualname__ + suffix
    copy.__module__ = func.__module__
    copy.__doc__ = func.__doc__
    return copy


def parallel_pair(**options):
    """Decorate a ``prange`` kernel as a serial and a parallel variant."""

    def decorate(func):
        return _Pair(func, options)

    return decorate


# numba's threading layers other than these may not be launched from two
# threads at once; until the first parallel launch says which layer numba
# chose, launches are serialised.
_THREAD_SAFE_LAYERS = ("omp", "tbb")
_launch_lock = threading.Lock()
_layer_is_thread_safe: bool | None = None


def run_parallel(pair: _Pair, n_threads: int, chunksize: int, *args):
    """Run ``pair`` on at most ``n_threads`` threads (1: its serial variant; 0:
    its source, :func:`interpreted`, nothing compiled), handing out
    ``chunksize`` iterations of its parallel loop at a time (0: equal static
    blocks)."""
    global _layer_is_thread_safe
    if n_threads <= 0:
        return run_small(pair, *args)
    previous = numba.get_num_threads()
    n_threads = max(1, min(n_threads, previous))
    if n_threads == 1:
        return pair.variant(False)(*args)
    kernel = pair.variant(True)

    def launch():
        numba.set_num_threads(n_threads)
        try:
            with numba.parallel_chunksize(chunksize):
                return kernel(*args)
        finally:
            numba.set_num_threads(previous)

    if _layer_is_thread_safe:
        return launch()
    with _launch_lock:
        result = launch()
        _layer_is_thread_safe = numba.threading_layer() in _THREAD_SAFE_LAYERS
    return result


# Seconds a kernel may run interpreted in a process before it is compiled
# (a few times what compiling it takes, so a first use never pays for it, and
# a process that keeps calling it with small work soon runs it compiled).
_INTERPRET_BUDGET = 1.0
_interpreted_seconds: dict = {}


def _compiled(kernel) -> bool:
    """Compiled in this process, or in the disk cache (a load of milliseconds)."""
    if isinstance(kernel, _Pair):
        kernel = kernel.variant(False)  # creating a dispatcher compiles nothing
    signatures = getattr(kernel, "signatures", None)
    if signatures is None or signatures:  # not a numba kernel, or compiled
        return True
    cache_file = getattr(getattr(kernel, "_cache", None), "_cache_file", None)
    index = getattr(cache_file, "_index_path", None)
    return index is not None and os.path.exists(index)


# CPU seconds a kernel's numpy stand-in may run in a process while the kernel
# is not compiled (in this process or the disk cache): about what compiling
# it costs, so that a fresh environment's first calls compile nothing and a
# process that keeps calling soon runs the kernel compiled.
_NUMPY_BUDGET = 2.0
_numpy_seconds: dict = {}
_known_compiled: set = set()


def numpy_first(*kernels) -> bool:
    """Whether to run a numpy stand-in for ``kernels`` (whole-array operations
    giving the same results) instead of them: while one of them is not
    compiled, in this process or in the disk cache, and until the stand-in
    has taken ``_NUMPY_BUDGET`` CPU seconds in this process (counted under
    the first kernel by :func:`run_numpy`)."""
    if _IN_CHILD or _numpy_seconds.get(kernels[0], 0.0) >= _NUMPY_BUDGET:
        return False
    for kernel in kernels:
        if kernel not in _known_compiled:
            if not _compiled(kernel):
                return True
            _known_compiled.add(kernel)  # compiled stays compiled
    return False


def run_numpy(kernel, func, *args):
    """``func(*args)``, its CPU time counted against ``kernel``'s budget."""
    start = time.process_time()
    try:
        return func(*args)
    finally:
        spent = time.process_time() - start
        _numpy_seconds[kernel] = _numpy_seconds.get(kernel, 0.0) + spent


def run_small(kernel, *args):
    """Run ``kernel`` (a dispatcher or a pair's serial variant) on work too small
    to pay for compiling it: :func:`interpreted`, unless it is compiled already
    (in this process or in the disk cache) or has used up its interpreted time
    in this process."""
    spent = _interpreted_seconds.get(kernel, 0.0)
    if spent >= _INTERPRET_BUDGET or _IN_CHILD or _compiled(kernel):
        return kernel(*args)  # a pair's __call__ is its serial variant
    start = time.perf_counter()
    try:
        # Quiet as the compiled kernel, whose arithmetic sets no numpy
        # floating-point warning (numpy scalars' would: an overflow to inf
        # that the caller checks for, say).
        with np.errstate(all="ignore"):
            return interpreted(kernel)(*args)
    finally:
        _interpreted_seconds[kernel] = spent + time.perf_counter() - start


@cache
def interpreted(kernel):
    """The Python function behind ``kernel`` (an :func:`njit` dispatcher or a
    :func:`parallel_pair`), calling the interpreted versions of the kernels it
    calls, so that running it compiles nothing.

    ``numba.prange`` is ``range`` in Python, so a parallel loop runs serially,
    in order. The kernels' own arithmetic is kept; only what numba's typing
    would change (integer overflow, which the kernels never rely on) differs.
    """
    func = kernel.func if isinstance(kernel, _Pair) else kernel.py_func
    namespace = dict(func.__globals__)
    for name in func.__code__.co_names:
        value = namespace.get(name)
        if isinstance(value, _Pair | numba.core.registry.CPUDispatcher):
            namespace[name] = interpreted(value)
    copy = types.FunctionType(
        func.__code__, namespace, func.__name__, func.__defaults__, func.__closure__
    )
    copy.__qualname__ = func.__qualname__
    copy.__module__ = func.__module__
    copy.__doc__ = func.__doc__
    return copy


# --- compiling in the background ---------------------------------------------
#
# CPU seconds a family's numpy stand-ins may take in a process before its
# kernels are compiled in a child process: more than a first fit takes (a
# short script never starts one), far less than the stand-ins' budgets (so the
# kernels land long before those are spent).
_BACKGROUND_AFTER = 1.0
# Set in the child: stand-ins off, kernels compiled (never interpreted), no
# child of its own.
_IN_CHILD = False
_children: dict = {}  # key -> (child process, lock file, payload file)
_done: set = set()  # keys whose child has finished in this process
_children_lock = threading.Lock()


def _cache_dir(kernel) -> str | None:
    """Where ``kernel`` (a dispatcher or a pair) is cached, if it is cached
    somewhere this user may write."""
    if isinstance(kernel, _Pair):
        kernel = kernel.variant(False)
    path = getattr(getattr(kernel, "_cache", None), "_cache_path", None)
    if not isinstance(path, str) or not os.access(path, os.W_OK | os.X_OK):
        return None
    return path


def _lock_path(key: str, kernel) -> str | None:
    path = _cache_dir(kernel)
    return None if path is None else os.path.join(path, f"bayeskit-{key}.compiling")


def _holder_alive(lock: str) -> bool:
    """Whether the lock file names a process that is still running (and is
    younger than ``_LOCK_STALE`` seconds: a holder killed and its process id
    reused does not hold it for ever)."""
    try:
        age = time.time() - os.stat(lock).st_mtime
        with open(lock) as f:
            pid = int(f.read().strip() or 0)
    except (OSError, ValueError):
        return False
    if age > _LOCK_STALE:
        return False
    if pid <= 0:
        return age < 30.0  # being written: its parent is starting the child
    return _running(pid)


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and has not exited (a zombie, dead but
    not yet reaped by its parent, has)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):  # no /proc here
        return True


# The child's bounds: CPU seconds (compiling the largest family takes some
# fifteen), wall-clock seconds (at a lower priority on a loaded machine), and
# the age past which a lock file is stale whatever process holds its id.
_CHILD_CPU_SECONDS = 120
_CHILD_SECONDS = 480
_LOCK_STALE = 600.0


def _background_allowed() -> bool:
    """Whether kernels may compile in a child process: unless the environment
    variable ``BAYESKIT_COMPILE_IN_BACKGROUND`` is ``0``."""
    return os.environ.get("BAYESKIT_COMPILE_IN_BACKGROUND", "1").strip() != "0"


def compiling(key: str, kernel) -> bool:
    """Whether the kernels of ``key`` (``kernel`` is one of them) are being
    compiled in the background: by a child of this process, or of another
    process sharing the disk cache (a joblib worker, a forked process)."""
    if _IN_CHILD or key in _done or not _background_allowed():
        return False
    found = _children.get(key)
    if found is not None and found[3] == os.getpid():
        if found[0].poll() is None:
            return True
        _finish(key)
        return False
    lock = _lock_path(key, kernel)
    return lock is not None and os.path.exists(lock) and _holder_alive(lock)


def _finish(key: str) -> None:
    """Forget the child of ``key``, which has ended; its files with it."""
    with _children_lock:
        found = _children.pop(key, None)
        _done.add(key)
    if found is None or found[3] != os.getpid():  # a forked copy's: not ours
        return
    child, lock, payload, _ = found
    if child.poll() is None:  # at exit: it finishes alone, its files its own
        return
    for path in (lock, payload):  # the child removes them; unless it died
        with suppress(OSError):
            _remove_own(path, child.pid)


def compile_in_background(key: str, kernel, replay) -> bool:
    """Start compiling the kernels of ``key`` in a child process, unless one
    is compiling them already (see :func:`compiling`) or has done in this
    process; returns whether a compile is under way.

    ``replay`` is a picklable callable (a module-level function with its
    arguments, :func:`functools.partial`) making the calls that asked for the
    kernels: the child runs it with the numpy stand-ins off and every kernel
    compiled, so that the specialisations it saves to the disk cache are the
    ones this process would compile. A process runs one child at a time (the
    others' kernels wait their turn, their stand-ins answering meanwhile). It
    needs a disk cache this user can write (``kernel``'s); where there is
    none, nothing starts and the kernels are compiled in this process when
    they are needed; so are they where the environment variable
    ``BAYESKIT_COMPILE_IN_BACKGROUND`` is ``0``. The child reads the replay's
    arguments (the call's arrays, at most some megabytes: the numpy
    stand-ins take no larger work) from a temporary file only this user can
    read, removed when the child has read it or has ended.
    """
    if not _background_allowed():
        return False  # the user's choice: compile in this process when needed
    if compiling(key, kernel):
        return True
    if _IN_CHILD or key in _done or not sys.executable or os.name != "posix":
        return False
    lock = _lock_path(key, kernel)
    if lock is None:
        return False
    if any(compiling(other, None) for other in list(_children)):
        return True  # one child at a time: this one starts when that one ends
    with _children_lock:
        if key in _children or key in _done:
            return key in _children
        try:
            fd = _create(lock)
        except FileExistsError:  # another process has just started one
            return True
        except OSError:
            _done.add(key)  # compile here when needed
            return False
        payload = None
        try:
            with tempfile.NamedTemporaryFile(
                "wb", prefix="bayeskit-compile-", suffix=".pkl", delete=False
            ) as f:
                payload = f.name
                pickle.dump(replay, f, protocol=pickle.HIGHEST_PROTOCOL)
            child = subprocess.Popen(
                [sys.executable, "-c", _CHILD_SOURCE, payload, lock],
                env=_child_env(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                close_fds=True,
                # Its own session: the terminal's Ctrl-C, a notebook's restart
                # (which signals the kernel's process group) leave it be.
                start_new_session=True,
            )
            os.write(fd, str(child.pid).encode())
        except Exception:  # cannot pickle, cannot start: compile here
            os.close(fd)
            for path in (lock, payload):
                with suppress(OSError, TypeError):
                    os.remove(path)
            _done.add(key)
            return False
        os.close(fd)
        _children[key] = (child, lock, payload, os.getpid())
    return True


def _remove_own(path: str, pid: int) -> None:
    """Remove ``path`` unless it is a lock file naming another process than
    ``pid`` (one that took over after ``pid`` died)."""
    if path.endswith(".compiling"):
        with suppress(OSError, ValueError), open(path) as f:
            if int(f.read().strip() or 0) not in (0, pid):
                return
    os.remove(path)


def _create(lock: str) -> int:
    """The lock file, created; a dead holder's is replaced once."""
    flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY
    try:
        return os.open(lock, flags, 0o600)
    except FileExistsError:
        if _holder_alive(lock):
            raise
        os.remove(lock)
        return os.open(lock, flags, 0o600)


# The child takes the lowest priority first, before its imports (a second or
# two of CPU): the user's own calls come first. It runs in a session of its
# own, which on Linux is a scheduling group of its own (an "autogroup") that
# competes with the parent's as an equal whatever the child's niceness or
# scheduling class; so the group takes niceness 19 too. At an equal share, on
# a machine with as many cores as the parent has threads, a parent's thread
# shared its core with the child half and half, and the threads waiting for it
# (OpenMP's barriers, BLAS) spun: scikit-learn's k-means, which every Gaussian
# HMM's start calls, took 10 to 100 times longer while the child lived.
_CHILD_SOURCE = """\
import os
try:
    os.nice(19 - os.nice(0))
except OSError:
    pass
try:
    if os.getsid(0) == os.getpid():  # its own session's group, not a caller's
        with open("/proc/self/autogroup", "w") as f:
            f.write("19")
except OSError:
    pass
from bayeskit._jit import _child_main
_child_main()
"""


def _child_env() -> dict:
    """This process's environment, with this bayeskit first on the path."""
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    return env


class _OutOfTime(BaseException):
    """The child has run past its bounds."""


def _out_of_time(signum, frame):  # pragma: no cover (runs in the child)
    raise _OutOfTime(signum)


def _bound_child() -> None:  # pragma: no cover (runs in the child)
    """Stop the child, its files removed, past ``_CHILD_CPU_SECONDS`` of CPU
    or ``_CHILD_SECONDS`` of wall-clock time (a stuck compile does not run on
    unseen; the kernel's hard CPU limit, a little later, kills it, and its
    lock file is then a dead process's)."""
    with suppress(Exception):
        import resource

        cpu = _CHILD_CPU_SECONDS
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 10))
        signal.signal(signal.SIGXCPU, _out_of_time)
    with suppress(Exception):
        signal.signal(signal.SIGALRM, _out_of_time)
        signal.alarm(_CHILD_SECONDS)


def _child_main() -> None:  # pragma: no cover (runs in the child)
    """The child: run the pickled replay with the stand-ins off (at the
    lowest priority, see ``_CHILD_SOURCE``, within its bounds), then remove
    its lock and payload files."""
    global _IN_CHILD
    _IN_CHILD = True
    payload, lock = sys.argv[1], sys.argv[2]
    _bound_child()
    try:
        with open(payload, "rb") as f:
            replay = pickle.load(f)
        with suppress(OSError):  # the call's arrays stay on disk no longer
            os.remove(payload)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            replay()
    except _OutOfTime:
        pass
    finally:
        for path in (lock, payload):
            with suppress(OSError):
                _remove_own(path, os.getpid())


def _forget_children() -> None:
    """In a forked copy of this process: the children are not its own (their
    lock files still tell it that they are compiling)."""
    global _children_lock
    _children.clear()
    _children_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_children)


@atexit.register
def _leave_children() -> None:
    """At exit: the children still compiling are left to finish (they are not
    waited for; their lock files tell the next process that they run)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)  # "still running"
        for key in list(_children):
            _finish(key)


# BLAS's worker threads, once a call has woken them, spin for a while after it
# (OpenBLAS: some 0.1 s), on the cores that the threads of a parallel kernel
# called next would run on: on two cores, a semi-Markov model's posteriors on
# 2,000 sequences after their emissions' densities took 44 ms, and 28 ms with
# the densities on one BLAS thread (whose products, of a few columns, gain
# nothing from more). Work below this many values is left alone (setting the
# threads costs some 20 us).
BLAS_ALONE_SIZE = 1 << 16


@cache
def _blas_pools():
    """The BLAS thread pools loaded in this process (threadpoolctl's, which
    scikit-learn requires), found once, at the first use."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(user_api="blas")


def blas_alone():
    """A context in which BLAS runs on the calling thread alone (for work of
    at least ``BLAS_ALONE_SIZE`` values, which a parallel kernel may follow;
    the caller tests the size, so that small work calls nothing)."""
    return _blas_pools().limit(limits=1)


def replay_all(*calls) -> None:
    """Make every call of ``calls`` (picklable callables) in turn, each one's
    failure not stopping the next: what a child replays."""
    for call in calls:
        with suppress(Exception):
            call()
