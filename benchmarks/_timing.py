"""Timing helpers shared by the benchmarks: interleaved medians and a ratio table.

Each benchmark compares a bayeskit operation with its peer's in one process.
Both are warmed up, then timed alternately (ours, theirs, theirs, ours, ...) so
that drift of a shared, noisy machine hits both sides alike; the median of the
repeats is reported, and the ratio ours / theirs is the number that matters.

Every script also takes ``--json PATH`` (``add_json_option``), where it writes
its results and the sizes it ran at (``write_json``), so that
``benchmarks/run.py`` can run them all, one process each, and print one table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = [
    "Result",
    "add_json_option",
    "compare",
    "compiled_warmup",
    "peak_mb",
    "print_table",
    "read_json",
    "time_once",
    "write_json",
]


def peak_mb(func: Callable[[], object]) -> float:
    """Peak traced memory, in MB, of one call of ``func`` (numpy's allocations,
    which ``tracemalloc`` sees; not those of compiled kernels)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        func()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def compiled_warmup(func: Callable[[], object]) -> None:
    """Call ``func`` once with bayeskit's numpy stand-ins off, as the child
    that compiles kernels in the background runs, so that its kernels are
    compiled (or loaded from numba's disk cache) before any timing. Otherwise
    a fresh environment (an empty cache: a clean checkout's CI run) times the
    stand-ins that answer a first use until they have spent their budget of
    CPU seconds, and a machine whose cache is warm times the kernels."""
    from bayeskit import _jit

    previous = _jit._IN_CHILD
    _jit._IN_CHILD = True
    try:
        func()
    finally:
        _jit._IN_CHILD = previous


def time_once(func: Callable[[], object]) -> float:
    """Wall-clock seconds of one call of ``func``."""
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


@dataclass(frozen=True)
class Result:
    """Median seconds of one operation, ours and the peer's, and a goal ratio.

    ``repeats`` is the number of timed runs of each side behind the medians.
    """

    model: str
    operation: str
    ours: float
    theirs: float
    goal: float | None = None
    repeats: int | None = None

    @property
    def ratio(self) -> float:
        return self.ours / self.theirs

    @property
    def met(self) -> bool | None:
        return None if self.goal is None else self.ratio <= self.goal


def compare(
    model: str,
    operation: str,
    ours: Callable[[], object],
    theirs: Callable[[], object],
    repeats: int,
    goal: float | None = None,
    warmup: int = 1,
) -> Result:
    """Warm both up, time them interleaved ``repeats`` times, keep the medians."""
    for _ in range(warmup):
        ours()
        theirs()
    t_ours, t_theirs = [], []
    for r in range(repeats):
        if r % 2 == 0:
            t_ours.append(time_once(ours))
            t_theirs.append(time_once(theirs))
        else:
            t_theirs.append(time_once(theirs))
            t_ours.append(time_once(ours))
    return Result(
        model,
        operation,
        statistics.median(t_ours),
        statistics.median(t_theirs),
        goal,
        repeats,
    )


def print_table(results: list[Result], peer: str = "theirs") -> None:
    """One row per operation: medians, the ratio and whether it meets its goal."""
    header = (
        f"{'model':<16} {'operation':<14} {'ours (s)':>10} "
        f"{peer + ' (s)':>14} {'ratio':>7} {'goal':>6}  ok"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        goal = "" if r.goal is None else f"{r.goal:.2f}"
        ok = "" if r.met is None else ("yes" if r.met else "NO")
        print(
            f"{r.model:<16} {r.operation:<14} {r.ours:>10.4f} "
            f"{r.theirs:>14.4f} {r.ratio:>7.3f} {goal:>6}  {ok}"
        )


def add_json_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--json PATH`` to a benchmark's command line (see ``write_json``)."""
    parser.add_argument(
        "--json",
        metavar="PATH",
        default=None,
        help="also write the results and the sizes used as JSON "
        "(read by benchmarks/run.py)",
    )


def write_json(
    path: str | Path,
    results: Sequence[Result],
    sizes: str | Sequence[str],
    peer: str | Sequence[str],
) -> None:
    """Write ``results`` as JSON, each with the sizes it was measured at and
    the peer it was measured against.

    ``sizes`` and ``peer`` are each one value for all results or one per
    result, in order (a benchmark may compare against two peers).
    """
    if isinstance(sizes, str):
        sizes = [sizes] * len(results)
    if isinstance(peer, str):
        peer = [peer] * len(results)
    for what, values in (("size descriptions", sizes), ("peers", peer)):
        if len(values) != len(results):
            raise ValueError(f"{len(values)} {what} for {len(results)} results")
    rows = [
        {**asdict(r), "sizes": s, "peer": p, "ratio": r.ratio, "met": r.met}
        for r, s, p in zip(results, sizes, peer)
    ]
    Path(path).write_text(json.dumps({"results": rows}, indent=1))


def read_json(path: str | Path) -> tuple[list[str], list[tuple[Result, str]]]:
    """The peers and the (result, sizes) pairs that ``write_json`` wrote, one
    peer per pair."""
    data = json.loads(Path(path).read_text())
    fields = Result.__dataclass_fields__
    pairs = [
        (Result(**{k: v for k, v in row.items() if k in fields}), row["sizes"])
        for row in data["results"]
    ]
    # A row without its own peer has the file's (one peer for every row).
    peers = [row.get("peer", data.get("peer")) for row in data["results"]]
    if None in peers:
        raise KeyError("peer")
    return peers, pairs
