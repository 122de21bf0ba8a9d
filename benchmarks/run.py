"""Run every peer comparison, one process each, and print one table of ratios.

Finds every ``benchmarks/bench_*.py`` (scikit-learn, hmmlearn and pgmpy peers)
and runs each in its own Python process, with the environment the benchmarks
are meant to run in: ``OPENBLAS_CORETYPE`` and ``OPENBLAS_L2_SIZE`` unset, and
glibc's malloc told to keep freed memory (``MALLOC_MMAP_MAX_=0``,
``MALLOC_TRIM_THRESHOLD_=100000000000``) so that page faults of fresh
allocations do not dominate the timings. Only the children get this
environment. Each script writes its results as JSON (``--json``); this runner
prints them as one table: the sizes used, the number of timed runs behind each
median, the medians of ours and theirs, the ratio ours / theirs (lower is
better), bayeskit's goal for the ratio and whether it is met.

Run from the repository root::

    python benchmarks/run.py            # full sizes: minutes, on a quiet machine
    python benchmarks/run.py --quick    # small sizes, seconds each (CI runs this)

``--repeats N`` passes the number of timed runs to every script, ``--only NAME``
runs some of them (``--only hmm chain``; a name also runs the scripts named
after it: ``--only network`` runs the pyAgrum and pgmpy comparisons of
networks), ``--rst PATH`` writes the table as a reStructuredText fragment
with the machine it ran on (``docs/benchmarks_table.rst`` is made this way)
and ``--json PATH`` writes everything for programs. The exit status is 1 when
a script fails (a crash, a disagreement between the two
libraries, a missing peer), so that CI catches benchmarks that rot; a ratio
that misses its goal is reported, not a failure.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

_HERE = Path(__file__).resolve().parent
ROOT = _HERE.parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from _timing import Result, read_json  # noqa: E402

# docs/benchmarks.rst includes the --rst fragment from the line after this one.
RST_START = ".. begin-benchmarks-table"

# The benchmark environment of the children (never set for tests).
UNSET = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
SET = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": "100000000000"}

LIBRARIES = ("numpy", "scipy", "scikit-learn", "hmmlearn", "pgmpy", "pykalman", "numba")

COLUMNS = (
    "benchmark",
    "peer",
    "model",
    "operation",
    "sizes",
    "runs",
    "ours (s)",
    "theirs (s)",
    "ratio",
    "goal",
    "met",
)


@dataclass(frozen=True)
class Row:
    """One comparison of the combined table."""

    benchmark: str
    peer: str
    result: Result
    sizes: str


@dataclass
class Outcome:
    """What one benchmark script's process gave."""

    name: str
    seconds: float
    rows: list[Row]
    output: str = ""
    error: str | None = None  # why the script failed, if it did

    @property
    def ok(self) -> bool:
        return self.error is None


#: Benchmarks that run only when named (``--only regression``):
#: ``bench_regression.py`` compiles an older bayeskit's kernels beside this
#: one's (minutes on an empty cache) and compares two bayeskits, not a peer.
ON_REQUEST = frozenset({"regression"})


def discover(directory: Path = _HERE) -> list[Path]:
    """Every ``bench_*.py`` in ``directory``, sorted by name."""
    return sorted(Path(directory).glob("bench_*.py"))


def bench_name(script: Path) -> str:
    """``bench_naive_bayes.py`` -> ``naive_bayes``."""
    return script.stem.removeprefix("bench_")


def bench_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of ``base`` (default: this process's) set up for benchmarking."""
    env = dict(os.environ if base is None else base)
    for name in UNSET:
        env.pop(name, None)
    env.update(SET)
    return env


def run_one(
    script: Path, quick: bool, repeats: int | None, verbose: bool = False
) -> Outcome:
    """Run one script in a fresh process and read the results it wrote."""
    name = bench_name(script)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{name}.json"
        cmd = [sys.executable, str(script), "--json", str(out)]
        if quick:
            cmd.append("--quick")
        if repeats:
            cmd += ["--repeats", str(repeats)]
        start = time.perf_counter()
        proc = subprocess.run(
            cmd,
            cwd=ROOT,
            env=bench_env(),
            stdout=None if verbose else subprocess.PIPE,
            stderr=None if verbose else subprocess.STDOUT,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - start
        output = proc.stdout or ""
        if proc.returncode != 0:
            error = f"exit status {proc.returncode}"
            return Outcome(name, seconds, [], output, error)
        try:
            peers, pairs = read_json(out)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            error = f"no results written with --json: {exc!r}"
            return Outcome(name, seconds, [], output, error)
    rows = [Row(name, p, result, sizes) for p, (result, sizes) in zip(peers, pairs)]
    return Outcome(name, seconds, rows, output)


def _fmt(x: float | None, digits: int) -> str:
    return "" if x is None else f"{x:.{digits}g}"


def cells(row: Row) -> list[str]:
    """The formatted cells of one row, in the order of ``COLUMNS``."""
    r = row.result
    met = "" if r.met is None else ("yes" if r.met else "NO")
    return [
        row.benchmark,
        row.peer,
        r.model,
        r.operation,
        row.sizes,
        "" if r.repeats is None else str(r.repeats),
        _fmt(r.ours, 4),
        _fmt(r.theirs, 4),
        _fmt(r.ratio, 3),
        "" if r.goal is None else f"{r.goal:.2f}",
        met,
    ]


def format_table(rows: list[Row]) -> str:
    """The combined table as aligned text: text left, numbers right."""
    table = [list(COLUMNS)] + [cells(row) for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(COLUMNS))]
    numeric = {"runs", "ours (s)", "theirs (s)", "ratio", "goal"}

    def line(values):
        return "  ".join(
            v.rjust(w) if c in numeric else v.ljust(w)
            for c, v, w in zip(COLUMNS, values, widths)
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(table[0]), rule, *(line(t) for t in table[1:])])


def summary(rows: list[Row]) -> str:
    """How many comparisons with a goal meet it, and which miss."""
    goals = [row for row in rows if row.result.goal is not None]
    missed = [row for row in goals if not row.result.met]
    text = f"{len(goals) - len(missed)} of {len(goals)} ratios with a goal meet it"
    if missed:
        text += "; missed: " + ", ".join(
            f"{r.benchmark} {r.result.model} {r.result.operation} "
            f"({r.result.ratio:.3g} > {r.result.goal:g})"
            for r in missed
        )
    return text + "."


def _cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    match = re.search(r"^model name\s*:\s*(.+)$", text, flags=re.M)
    return match.group(1).strip() if match else (platform.processor() or "unknown")


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _bayeskit_version() -> str:
    """The checkout's version, and its commit when git knows it."""
    init = (ROOT / "bayeskit" / "__init__.py").read_text()
    match = re.search(r'^__version__ = "(.+)"$', init, flags=re.M)
    version = match.group(1) if match else "unknown"
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return version
    return f"{version} (commit {commit})"


def machine_info() -> dict[str, str]:
    """The machine and software the table was measured on."""
    cores = f"{os.cpu_count()} logical CPUs"
    if hasattr(os, "sched_getaffinity"):
        cores += f" ({len(os.sched_getaffinity(0))} available to the process)"
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    libraries = ", ".join(f"{p} {_version(p)}" for p in LIBRARIES)
    return {
        "CPU": f"{_cpu_model()}, {cores}",
        "OS": platform.platform(),
        "Python": f"{platform.python_version()} ({platform.python_implementation()})",
        "bayeskit": _bayeskit_version(),
        "Libraries": libraries,
        "Load average": f"{load} (1, 5, 15 min, at the start)",
        "Date": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M UTC"
        ),
    }


def rst_escape(text: str) -> str:
    """Plain text for a table cell: no markup, and no list read into "(a) ..."."""
    text = re.sub(r"([\\*`|])", r"\\\1", text)
    if re.match(r"[-+#(]|\w+[.)](\s|$)", text):
        text = "\\" + text
    return text


# The columns of each table of the rST page: the benchmark and its peer head the
# table, and its data sizes are notes under it (a letter in the "data" column when
# the rows of one benchmark ran on different data), so that every table fits the
# width of a documentation page.
RST_COLUMNS = ("model", "operation", "runs", "ours (s)", "theirs (s)", "ratio")
RST_COLUMNS += ("goal", "met")


def _groups(rows: list[Row]) -> dict[tuple[str, str], list[Row]]:
    """The rows of each benchmark (and peer), in the order they came."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((row.benchmark, row.peer), []).append(row)
    return groups


def _rst_group(benchmark: str, peer: str, rows: list[Row]) -> list[str]:
    """One benchmark as an rST section (its peer in the title): its data, then
    its table."""
    sizes = list(dict.fromkeys(row.sizes for row in rows))
    letters = "abcdefghijklmnopqrstuvwxyz"
    columns = list(RST_COLUMNS)
    title = f"{benchmark} ({peer})"
    out = [title, "~" * len(title), ""]
    if len(sizes) > 1:
        columns.insert(2, "data")
        out.append(":Data:")
        out += [f"   - {letters[i]}: {rst_escape(s)}" for i, s in enumerate(sizes)]
    else:
        out.append(f":Data: {rst_escape(sizes[0])}")
    out += [
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: auto",
        "",
    ]
    table = [columns]
    for row in rows:
        values = dict(zip(COLUMNS, cells(row)))
        if values["met"] == "NO":
            values["met"] = "**no**"
        values["data"] = letters[sizes.index(row.sizes)]
        table.append([values[c] for c in columns])
    for values in table:
        values = [v if v.startswith("**") else rst_escape(v) for v in values]
        out.append(f"   * - {values[0]}")
        out += [f"     - {v}".rstrip() for v in values[1:]]
    return [*out, ""]


def format_rst(rows: list[Row], info: dict[str, str], command: str, quick: bool) -> str:
    """The tables as a reStructuredText fragment, with the machine they ran on.

    The fragment is made to be included after ``RST_START``; the part before
    marks the file ``:orphan:``, so that Sphinx builds it alone without a
    warning that no table of contents lists it. Each benchmark is a section
    with a table of the columns ``RST_COLUMNS``: narrow enough for a page.
    """

    if quick:
        sizes = (
            "**Quick sizes** (``--quick``, CI's smoke run): at these small inputs "
            "fixed overheads weigh more than at full size, so the ratios are not "
            "the performance claims. The full run replaces these tables."
        )
    else:
        sizes = "Full sizes: the numbers the goals are about."
    out = [
        ":orphan:",
        "",
        f".. Generated by {command}; do not edit by hand.",
        "",
        RST_START,
        "",
        sizes,
        "",
        *(f":{key}: {rst_escape(value)}" for key, value in info.items()),
        f":Command: ``{command}``",
        "",
        rst_escape(summary(rows)),
        "",
        "Each table gives the median seconds of the interleaved runs of each "
        "side, ours and theirs (peak megabytes in the rows marked [peak MB]), "
        "and the ratio ours / theirs: lower is better.",
        "",
    ]
    for (benchmark, peer), group in _groups(rows).items():
        out += _rst_group(benchmark, peer, group)
    return "\n".join(out)


def _without_json(args: list[str]) -> list[str]:
    """The arguments less ``--json PATH``: where the numbers were also written
    does not change them, and a local path has no place in the docs."""
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--json":
            skip = True
        elif not arg.startswith("--json="):
            out.append(arg)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Runs every benchmarks/bench_*.py but those run only when named "
        "(bench_regression.py: --only regression); see that file's docstring.",
    )
    parser.add_argument(
        "--quick", action="store_true", help="small sizes, seconds each (for CI)"
    )
    parser.add_argument(
        "--repeats", type=int, default=None, help="timed runs per operation"
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        default=None,
        help="run these benchmarks only (naive_bayes, hmm, ...)",
    )
    parser.add_argument("--rst", metavar="PATH", help="write the table as rST")
    parser.add_argument("--json", metavar="PATH", help="write everything as JSON")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="show each script's output"
    )
    args = parser.parse_args(argv)
    raw = sys.argv[1:] if argv is None else argv
    command = shlex.join(["python", "benchmarks/run.py", *_without_json(raw)])

    scripts = discover()
    if not args.only:  # the benchmarks run only when named
        scripts = [s for s in scripts if bench_name(s) not in ON_REQUEST]
    if args.only:
        names = {bench_name(s) for s in scripts}
        wanted = {bench_name(Path(n).with_suffix(".py")) for n in args.only}
        # A name also takes its family: network runs network_em and
        # network_queries beside network.
        family = {n for n in names for w in wanted if n.startswith(w + "_")}
        if unknown := sorted(
            w for w in wanted - names if not any(n.startswith(w + "_") for n in names)
        ):
            parser.error(f"no benchmark {unknown}; there are {sorted(names)}")
        scripts = [s for s in scripts if bench_name(s) in wanted | family]

    info = machine_info()
    print(f"{len(scripts)} benchmarks, one process each; " + command)
    for key, value in info.items():
        print(f"{key}: {value}")
    print()

    outcomes = []
    for script in scripts:
        print(f"{script.name} ...", end=" " if not args.verbose else "\n", flush=True)
        outcome = run_one(script, args.quick, args.repeats, args.verbose)
        outcomes.append(outcome)
        status = "ok" if outcome.ok else f"FAILED: {outcome.error}"
        print(f"{status} ({outcome.seconds:.1f} s)", flush=True)
        if not outcome.ok and outcome.output:
            print(outcome.output.rstrip(), file=sys.stderr, flush=True)

    rows = [row for outcome in outcomes for row in outcome.rows]
    sizes = "quick sizes" if args.quick else "full sizes"
    print(
        f"\nOurs / theirs at {sizes}: medians of the timed runs of each side "
        "(interleaved, after a warm-up); lower is better."
    )
    print(format_table(rows))
    print(summary(rows))
    failed = [o.name for o in outcomes if not o.ok]
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)

    if args.rst:
        Path(args.rst).write_text(format_rst(rows, info, command, args.quick))
    if args.json:
        data = {
            "command": command,
            "quick": args.quick,
            "machine": info,
            "benchmarks": [
                {
                    "name": o.name,
                    "error": o.error,
                    "seconds": o.seconds,
                    "results": [
                        {
                            "peer": row.peer,
                            **asdict(row.result),
                            "sizes": row.sizes,
                            "ratio": row.result.ratio,
                            "met": row.result.met,
                        }
                        for row in o.rows
                    ],
                }
                for o in outcomes
            ],
        }
        Path(args.json).write_text(json.dumps(data, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
