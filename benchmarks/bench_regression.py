"""Old bayeskit against new, in one process: has an operation become slower?

The package of an older commit (``--rev``, by default ``6965a25``, the tree
before the composition of issue 26: one EM base, the layout by family) is
extracted with ``git archive`` into a temporary directory under another name
(``bayeskit_old``). bayeskit imports itself only relatively, so the copy is a
complete second package: its numba kernels are compiled (and cached) beside
it, and the few places that name the package (the bundled data files) are
pointed at the copy. Both packages are imported into this one process, and
each row runs the same operation on the same data with the old package and
with this checkout's.

The rows are the bayeskit side of every benchmark of the old commit's
``benchmarks/run.py`` (naive Bayes, text naive Bayes, LDA / QDA, Gaussian
mixtures with and without missing cells, categorical HMMs, the chain kernels,
the ALARM network's queries, predictions, EM and structure search, reading a
BIF file), at the same sizes. The structure search is timed per family
scored (a pass over the data's columns): since the old commit, equal gains
are ties whatever their rounding, and the search takes another path, so its
row is marked as not the same result. Where a call changed between the two commits,
the old side keeps its old spelling (``BayesianNetwork.fit`` on missing cells
ran EM by default then, and needs ``missing="em"`` now; ``read_bif`` took a
path then, and takes ``path=`` now). ``bench_first_use.py``'s rows (the first
call in a fresh process) are not here: they time compilation across
processes, not an operation in one.

How a row is timed, to hold on a shared, loaded machine:

- the two results are compared first (untimed), so that both sides do the
  same computation;
- each side is warmed up (compiled, caches filled; the budgets under which
  a fresh process runs a kernel not yet compiled interpreted, or as a numpy
  stand-in, are set to zero in both packages), then the two are timed
  alternately (old, new, new, old, ...) so that drift hits both alike;
- the clock is the calling thread's CPU time (``time.thread_time``), with
  one BLAS thread (``threadpoolctl``) and one numba thread, so that waiting
  for a busy CPU counts for neither side. A call shorter than about 20 ms is
  repeated within a timed run;
- rows whose work uses BLAS or numba's threads are timed a second time with
  the default threads, in the process's CPU time (``time.process_time``, all
  its threads) and in wall-clock time, marked ``default``.

Each row prints the medians, the ratio new / old of the medians (above 1:
slower now) and its spread: the quartiles of the ratios of the paired runs
(each old run with the new run next to it).

Run from the repository root (a git checkout)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 \\
        MALLOC_TRIM_THRESHOLD_=100000000000 python benchmarks/bench_regression.py

``--quick`` runs small sizes with 3 repeats (seconds, then the old package's
kernels compile); ``--repeats N`` sets the timed runs of each side,
``--only NAME`` runs some groups (``--only hmm chain``), ``--workdir DIR``
extracts the old package there and keeps it (its compiled kernels too) for
the next run, ``--json PATH`` writes the rows for ``benchmarks/run.py``
(ours: the new package, theirs: the old, goal 1.05). Outside a git checkout
that holds ``--rev`` (a shallow clone) the script says so and measures
nothing.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import io
import math
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings
from collections.abc import Callable
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

_HERE = Path(__file__).resolve().parent
ROOT = _HERE.parent
sys.path[:0] = [str(ROOT), str(_HERE)]

from _timing import Result, add_json_option, write_json  # noqa: E402

import bayeskit  # noqa: E402

OLD_NAME = "bayeskit_old"
DEFAULT_REV = "6965a25"
MIN_RUN = 0.02  # seconds: shorter calls are repeated within one timed run


# --- the old package ---------------------------------------------------------


def resolve(rev: str) -> str | None:
    """The full hash of ``rev``, or None outside a git checkout that has it
    (a shallow clone, an unpacked release)."""
    try:
        return subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def extract(full: str, directory: Path) -> Path:
    """``git archive FULL bayeskit`` into ``directory/OLD_NAME`` (kept if there)."""
    target = directory / OLD_NAME
    stamp = target / ".rev"
    if stamp.exists() and stamp.read_text() == full:
        return target
    if target.exists():
        raise SystemExit(f"{target} holds another revision: remove it first")
    archive = subprocess.run(
        ["git", "archive", "--format=tar", full, "bayeskit"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith("bayeskit/")]
        for m in members:
            m.name = OLD_NAME + m.name[len("bayeskit") :]
        tar.extractall(directory, members=members, filter="data")
    # The only absolute names of the package: its bundled data files.
    for py in target.rglob("*.py"):
        text = py.read_text()
        fixed = text.replace(
            'resources.files("bayeskit.', f'resources.files("{OLD_NAME}.'
        )
        if fixed != text:
            py.write_text(fixed)
    leftover = subprocess.run(
        ["grep", "-rlE", r"^\s*(from|import) bayeskit\b", str(target)],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    if leftover:
        raise SystemExit(f"the old package imports itself by name: {leftover}")
    stamp.write_text(full)
    return target


def import_old(package: Path):
    """Import the extracted package ``package`` (a directory named OLD_NAME)."""
    sys.path.insert(0, str(package.parent))
    old = importlib.import_module(OLD_NAME)
    assert Path(old.__file__).resolve().parent == package.resolve()
    return old


def compile_first(pkg) -> None:
    """Make ``pkg`` run its compiled kernels from the first call.

    A fresh process runs a kernel that is not in the disk cache interpreted
    or as a numpy stand-in until it has used a budget of CPU seconds (so that
    a first use on small data compiles nothing); the timed runs would then
    measure the stand-in or the switch. With no budget, the warm-up call
    compiles (or loads) every kernel that the timed runs use.
    """
    jit = sub(pkg, "_jit")
    for budget in ("_INTERPRET_BUDGET", "_NUMPY_BUDGET"):
        if hasattr(jit, budget):
            setattr(jit, budget, 0.0)


def sub(pkg, name: str):
    """``pkg.name`` for a subpackage or module (``sub(old, "graph.chain")``)."""
    return importlib.import_module(f"{pkg.__name__}.{name}")


# --- rows and timing ---------------------------------------------------------


@dataclass
class Op:
    """One row: the same operation with the old and the new package."""

    group: str
    model: str
    operation: str
    sizes: str
    old: Callable[[], object]
    new: Callable[[], object]
    key: Callable[[object], object] = lambda r: r  # what must agree
    threaded: bool = False  # BLAS or numba threads: timed with both settings
    rtol: float = 1e-9
    # The units of work a result did (None: one call), each side's times
    # divided by its own: for searches that take another path since.
    units: Callable[[object], float] | None = None


@dataclass
class Row:
    group: str
    model: str
    operation: str
    sizes: str
    threads: str
    old: float
    new: float
    runs: int
    inner: int
    paired: list[float] = field(default_factory=list)
    wall_ratio: float | None = None
    differs: str | None = None  # why the two results differ, if they do

    @property
    def ratio(self) -> float:
        return self.new / self.old

    def quartiles(self) -> tuple[float, float]:
        q = statistics.quantiles(self.paired, n=4, method="inclusive")
        return q[0], q[2]


def agree(a, b, rtol: float, path: str = "") -> None:
    """Assert that two results are the same (arrays to ``rtol``)."""
    if isinstance(a, (pd.DataFrame, pd.Series)):
        assert a.shape == b.shape, path
        assert list(a.index) == list(b.index), f"{path}: index differs"
        if isinstance(a, pd.DataFrame):
            assert list(a.columns) == list(b.columns), f"{path}: columns differ"
        a, b = a.to_numpy(), b.to_numpy()
    if isinstance(a, dict):
        assert sorted(map(str, a)) == sorted(map(str, b)), f"{path}: keys differ"
        for k in a:
            agree(a[k], b[k], rtol, f"{path}[{k}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{path}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b)):
            agree(x, y, rtol, f"{path}[{i}]")
    elif sp.issparse(a):
        agree(a.toarray(), b.toarray(), rtol, path)
    else:
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12, err_msg=path)
        else:
            np.testing.assert_array_equal(a, b, err_msg=path)


@contextmanager
def threads(one: bool):
    if not one:
        yield
        return
    previous = numba.get_num_threads()
    with threadpool_limits(1):
        numba.set_num_threads(1)
        try:
            yield
        finally:
            numba.set_num_threads(previous)


def timed(func, inner: int, clock) -> tuple[float, float]:
    gc.collect()
    start, wall = clock(), time.perf_counter()
    for _ in range(inner):
        func()
    return (clock() - start) / inner, (time.perf_counter() - wall) / inner


def measure(op: Op, repeats: int, one_thread: bool) -> Row:
    clock = time.thread_time if one_thread else time.process_time
    with threads(one_thread):
        a, b = op.old(), op.new()  # warm-up: compiles, fills caches
        per = (op.units(a), op.units(b)) if op.units else (1.0, 1.0)
        try:
            agree(op.key(a), op.key(b), op.rtol, f"{op.model} {op.operation}")
            differs = None
        except AssertionError as exc:  # reported on the row, not fatal
            differs = str(exc).strip().splitlines()[0]
        del a, b
        first = min(timed(op.old, 1, clock)[0], timed(op.new, 1, clock)[0])
        inner = max(1, math.ceil(MIN_RUN / max(first, 1e-6)))
        t = {"old": [], "new": []}
        wall = {"old": [], "new": []}
        for r in range(repeats):
            order = ("old", "new") if r % 2 == 0 else ("new", "old")
            for side in order:
                cpu, w = timed(getattr(op, side), inner, clock)
                t[side].append(cpu)
                wall[side].append(w)
    row = Row(
        op.group,
        op.model,
        op.operation,
        op.sizes,
        "1" if one_thread else "default",
        statistics.median(t["old"]) / per[0],
        statistics.median(t["new"]) / per[1],
        repeats,
        inner,
        [n / o * per[0] / per[1] for n, o in zip(t["new"], t["old"])],
    )
    row.differs = differs
    if not one_thread:
        row.wall_ratio = statistics.median(wall["new"]) / statistics.median(wall["old"])
    return row


# --- the rows of the old commit's benchmarks --------------------------------


def group_naive_bayes(old, new, quick):
    """bench_naive_bayes.py: GaussianNB and CategoricalNB(m=10), 20 features."""
    n, d, k, c = (20_000 if quick else 1_000_000), 20, 5, 10
    rng = np.random.default_rng(0)
    y = rng.integers(k, size=n)
    means = rng.normal(size=(k, d))
    scales = rng.uniform(0.5, 2.0, size=(k, d))
    Xg = rng.standard_normal((n, d)) * scales[y] + means[y]
    probs = rng.dirichlet(np.full(c, 2.0), size=(k, d))
    Xc = np.empty((n, d), dtype=np.int64)
    for label in range(k):
        rows = np.flatnonzero(y == label)
        for j in range(d):
            Xc[rows, j] = rng.choice(c, size=rows.size, p=probs[label, j])
    ops = []
    for name, X, kw in (
        ("GaussianNB", Xg, {}),
        ("CategoricalNB", Xc, {"m": float(c)}),
    ):
        mo, mn = getattr(old, name)(**kw), getattr(new, name)(**kw)
        mo.fit(X, y), mn.fit(X, y)
        sizes = f"{n:,} x {d}, {k} classes"
        head = X[:2000]
        ops += [
            Op("naive_bayes", name, "fit", sizes, lambda m=mo, X=X: m.fit(X, y),
               lambda m=mn, X=X: m.fit(X, y), lambda m, h=head: m.predict_proba(h)),
            Op("naive_bayes", name, "predict_proba", sizes,
               lambda m=mo, X=X: m.predict_proba(X),
               lambda m=mn, X=X: m.predict_proba(X)),
        ]  # fmt: skip
    return ops


def group_text_nb(old, new, quick):
    """bench_text_nb.py: MultinomialNB, BernoulliNB, ComplementNB on CSR counts."""
    n, d = (5_000, 5_000) if quick else (200_000, 50_000)
    k, words = 20, 130
    rng = np.random.default_rng(0)
    y = rng.integers(k, size=n)
    base = 1.0 / np.arange(1, d + 1)
    rows, cols = [], []
    for c in range(k):
        docs = np.flatnonzero(y == c)
        p = base.copy()
        p[rng.choice(d, size=max(1, d // 50), replace=False)] *= 5.0
        cdf = np.cumsum(p / p.sum())
        w = np.searchsorted(cdf, rng.random(docs.size * words))
        rows.append(np.repeat(docs, words))
        cols.append(np.minimum(w, d - 1))
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, d))
    X.sum_duplicates()
    sizes = f"CSR {n:,} x {d:,}, {k} classes"
    ops = []
    for name in ("MultinomialNB", "BernoulliNB", "ComplementNB"):
        mo, mn = getattr(old, name)(), getattr(new, name)()
        mo.fit(X, y), mn.fit(X, y)
        head = X[:2000]
        ops += [
            Op("text_nb", name, "fit", sizes, lambda m=mo: m.fit(X, y),
               lambda m=mn: m.fit(X, y), lambda m, h=head: m.predict_proba(h)),
            Op("text_nb", name, "predict_proba", sizes,
               lambda m=mo: m.predict_proba(X), lambda m=mn: m.predict_proba(X)),
        ]  # fmt: skip
    return ops


def group_discriminant(old, new, quick):
    """bench_discriminant.py: LDA ('svd', 'lsqr') and QDA, 50 features."""
    n, d, k = (20_000 if quick else 1_000_000), 50, 5
    rng = np.random.default_rng(0)
    y = rng.integers(0, k, n)
    mixing = np.eye(d) + 0.3 * rng.normal(size=(d, d)) / np.sqrt(d)
    X = rng.normal(size=(n, d)) @ mixing
    X += rng.normal(size=(k, d))[y]
    sizes = f"{n:,} x {d}, {k} classes"
    ops = []
    for label, name, kw in (
        ("LDA svd", "LinearDiscriminantAnalysis", {}),
        ("LDA lsqr", "LinearDiscriminantAnalysis", {"solver": "lsqr"}),
        ("QDA", "QuadraticDiscriminantAnalysis", {}),
    ):
        mo, mn = getattr(old, name)(**kw), getattr(new, name)(**kw)
        mo.fit(X, y), mn.fit(X, y)
        head = X[:2000]
        ops += [
            Op("discriminant", label, "fit", sizes, lambda m=mo: m.fit(X, y),
               lambda m=mn: m.fit(X, y), lambda m, h=head: m.predict_proba(h),
               threaded=True, rtol=1e-7),
            Op("discriminant", label, "predict_proba", sizes,
               lambda m=mo: m.predict_proba(X), lambda m=mn: m.predict_proba(X),
               threaded=True, rtol=1e-7),
        ]  # fmt: skip
    return ops


def _gmm_data(n, missing=None):
    k, d = 8, 10
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=4.0, size=(k, d))
    X = centres[rng.integers(0, k, n)] + rng.normal(size=(n, d))
    holes = X.copy()
    holes[rng.random(X.shape) < (missing or 0.0)] = np.nan
    return X, holes


def _gmm_pair(old, new, X, iters, start_from):
    from sklearn.mixture import GaussianMixture as SkGM

    start = (start_from or SkGM)(8, random_state=0, max_iter=1).fit(X)
    init = {
        "weights_init": start.weights_,
        "means_init": start.means_,
        "precisions_init": start.precisions_,
    }
    return tuple(
        pkg.GaussianMixture(8, max_iter=iters, tol=0, **init) for pkg in (old, new)
    )


def group_mixture(old, new, quick):
    """bench_mixture.py (20 EM iterations, 'full') and bench_missing.py (30% NaN)."""
    n = 5_000 if quick else 200_000
    X, holes = _gmm_data(n, 0.3)
    mo, mn = _gmm_pair(old, new, X, 20, None)
    ho, hn = _gmm_pair(old, new, X, 5, new.GaussianMixture)
    for m in (mo, mn):
        m.fit(X)
    for m in (ho, hn):
        m.fit(holes)
    means = lambda m: (m.means_, m.covariances_, m.weights_)  # noqa: E731
    sizes = f"{n:,} x 10, 8 components ('full')"
    return [
        Op("mixture", "GaussianMixture", "fit (20 it.)", sizes,
           lambda: mo.fit(X), lambda: mn.fit(X), means, True, 1e-7),
        Op("mixture", "GaussianMixture", "score_samples", sizes,
           lambda: mo.score_samples(X), lambda: mn.score_samples(X), threaded=True,
           rtol=1e-9),
        Op("missing", "GaussianMixture", "fit, NaN cells (5 it.)", sizes + ", 30% NaN",
           lambda: ho.fit(holes), lambda: hn.fit(holes), means, True, 1e-7),
        Op("missing", "GaussianMixture", "score_samples, NaN", sizes + ", 30% NaN",
           lambda: ho.score_samples(holes), lambda: hn.score_samples(holes),
           threaded=True),
    ]  # fmt: skip


def group_hmm(old, new, quick):
    """bench_hmm.py: CategoricalHMM, 8 states, 20 symbols, two cases."""
    power = 4 if quick else 6
    cases = {
        f"(a) 1 x 10^{power}": [10**power],
        f"(b) 10^{power - 2} x 100": [100] * 10 ** (power - 2),
    }
    rng = np.random.default_rng(0)
    ops = []
    for case, lengths in cases.items():
        ops += _hmm_case(old, new, f"HMM {case}", lengths, rng)
    return ops


def _hmm_case(old, new, model, lengths, rng, K=8, M=20):
    X = rng.integers(0, M, size=(sum(lengths), 1))
    start = (
        rng.dirichlet(np.ones(K)),
        rng.dirichlet(np.ones(K), size=K),
        rng.dirichlet(np.ones(M), size=K),
    )

    def refit(m):
        m.startprob_, m.transmat_, m.emissionprob_ = start
        return m.fit(X, lengths=lengths)

    mo, mn = (
        refit(pkg.CategoricalHMM(K, n_features=M, n_iter=10, init_params="", tol=0))
        for pkg in (old, new)
    )
    sizes = f"{len(lengths):,} x {lengths[0]:,} steps, {K} states, {M} symbols"
    ops = [
        Op("hmm", model, op, sizes, lambda m=m: getattr(mo, m)(X, lengths=lengths),
           lambda m=m: getattr(mn, m)(X, lengths=lengths), threaded=True)
        for op, m in (("score", "score"), ("decode", "decode"),
                      ("predict_proba", "predict_proba"))
    ]  # fmt: skip
    ops.append(
        Op("hmm", model, "fit 10 it.", sizes, lambda: refit(mo), lambda: refit(mn),
           lambda m: (m.transmat_, m.emissionprob_), threaded=True, rtol=1e-8)
    )  # fmt: skip
    return ops


def group_chain(old, new, quick):
    """bench_chain.py: forward, forward-backward and Viterbi kernels alone."""
    K, M = 8, 20
    long_steps, n_short = (20_000, 200) if quick else (1_000_000, 10_000)
    rng = np.random.default_rng(0)
    log_start = np.log(rng.dirichlet(np.ones(K)))
    log_trans = np.log(rng.dirichlet(np.ones(K), size=K))
    log_b = np.ascontiguousarray(np.log(rng.dirichlet(np.ones(M), size=K)).T)
    keys = {
        "score": lambda r: r.log_likelihood,
        "fwd-bwd": lambda r: (r.log_likelihood, r.posterior),
        "viterbi": lambda r: r,
    }
    ops = []
    for case, n_steps, lengths in (
        (f"(a) 1x{long_steps}", long_steps, None),
        (f"(b) {n_short}x100", n_short * 100, np.full(n_short, 100)),
    ):
        X = rng.integers(0, M, size=n_steps)
        dense = np.take(log_b, X, axis=0)
        sizes = f"{n_steps:,} steps, {K} states, {M} symbols"
        for op, name in (
            ("score", "forward"),
            ("fwd-bwd", "forward_backward"),
            ("viterbi", "viterbi"),
        ):
            fo = getattr(sub(old, "graph.chain"), name)
            fn = getattr(sub(new, "graph.chain"), name)
            for how, args, kw in (
                ("", (log_b, lengths), {"symbols": X}),
                (" (kernel)", (dense, lengths), {}),
            ):
                ops.append(
                    Op("chain", f"chain {case}", op + how, sizes,
                       lambda f=fo, a=args, k=kw: f(log_start, log_trans, *a, **k),
                       lambda f=fn, a=args, k=kw: f(log_start, log_trans, *a, **k),
                       keys[op], threaded=True)
                )  # fmt: skip
    return ops


QUERIES = [
    ("HISTORY", {"CVP": "LOW", "HR": "HIGH", "BP": "LOW"}),
    ("LVFAILURE", {"HRBP": "HIGH", "EXPCO2": "LOW"}),
    ("PULMEMBOLUS", {"SAO2": "LOW", "PAP": "HIGH", "MINVOL": "ZERO"}),
]


def group_bayesnet(old, new, quick):
    """bench_bayesnet.py: ALARM queries (kept, cold, first), predict, predict_proba."""
    nets = [sub(p, "datasets").load_network("alarm") for p in (old, new)]
    n, n_mixed = (1_000, 200) if quick else (10_000, 2_000)
    target = "LVFAILURE"
    X = nets[1].sample(n, random_state=0).assign(**{target: None})
    mixed = nets[1].sample(n_mixed, random_state=1).astype(object)
    mixed = mixed.mask(np.random.default_rng(0).random(mixed.shape) < 0.3, None)
    mixed[target] = None
    net = "ALARM (37 variables)"
    ops = []
    for t, e in QUERIES:
        sizes = f"{net}, {len(e)} observed"

        def cold(bn, t=t, e=e):
            bn._engine_._patterns.clear()
            return bn.query(t, evidence=e)

        def first(bn, t=t, e=e):
            bn._engine_._patterns.clear()
            bn._engine_._networks.clear()
            return bn.query(t, evidence=e)

        for op, call in (
            ("query", lambda bn, t=t, e=e: bn.query(t, evidence=e)),
            ("query (cold)", cold),
            ("query (first)", first),
        ):
            ops.append(
                Op("bayesnet", t, op, sizes, lambda c=call: c(nets[0]),
                   lambda c=call: c(nets[1]))
            )  # fmt: skip

    def proba(bn):
        bn._engine_._patterns.clear()
        return bn.predict_proba(mixed, target)

    ops += [
        Op("bayesnet", f"{n} rows", "predict", f"{net}, {n:,} rows",
           lambda: nets[0].predict(X), lambda: nets[1].predict(X)),
        Op("bayesnet", f"{n_mixed} mixed rows", "predict_proba",
           f"{net}, {n_mixed:,} rows, 30% missing", lambda: proba(nets[0]),
           lambda: proba(nets[1])),
    ]  # fmt: skip
    return ops


def group_network(old, new, quick):
    """bench_network_em.py, bench_network_queries.py and bench_structure.py."""
    truth = sub(new, "datasets").load_network("alarm")
    rng = np.random.default_rng(0)
    n = 1_000 if quick else 10_000
    n_latent, n_iter = (200, 1) if quick else (2_000, 2)
    n_queries = 100 if quick else 1_000
    net = "ALARM (37 variables)"
    edges = list(truth.dag_.edges)
    states = {v: s.tolist() for v, s in truth.states_.items()}
    hidden = truth.sample(n, random_state=0).astype(object)
    hidden = hidden.mask(rng.random(hidden.shape) < 0.2, None)
    latent = "LVFAILURE"
    Xl = truth.sample(n_latent, random_state=1).drop(columns=latent)
    init = {}
    for v in truth.variables_:
        k = len(truth.states_[v])
        cards = [len(truth.states_[u]) for u in truth.dag_.parents(v)]
        init[v] = rng.dirichlet(np.ones(k), size=int(np.prod(cards))).reshape(*cards, k)

    def em_missing(pkg, **kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pkg.BayesianNetwork(edges, states=states, **kw).fit(hidden)

    def em_latent(pkg):
        est = pkg.BayesianNetwork(
            edges, m=0.0, latent=[latent], states={latent: 2}, cpds_init=init,
            max_iter=n_iter, tol=0,
        )  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return est.fit(Xl)

    bif = sub(new, "datasets").__path__[0] + "/data/alarm.bif"
    read_old = sub(old, "io").read_bif
    read_new = sub(new, "io").read_bif
    queries = []
    rows = truth.sample(n_queries, random_state=0).to_dict("records")
    variables = list(truth.variables_)
    for row in rows:
        chosen = rng.choice(len(variables), size=1 + rng.integers(1, 5), replace=False)
        t, *observed = (variables[i] for i in chosen)
        queries.append((t, {v: row[v] for v in observed}))

    def read_query(read):
        bn = read()
        return [bn.query(t, evidence=e) for t, e in queries]

    df = truth.sample(n, random_state=0)
    cpds = lambda m: m.cpds_  # noqa: E731
    # Since the old commit, equal gains are ties whatever their rounding, so
    # the search takes another path (other edges, other moves): the row is
    # the CPU time per family scored (a pass over the data's columns).
    scored = {
        pkg: _count_calls(sub(pkg, module).FamilyScores, "counts")
        for pkg, module in ((old, "models._structure_scores"), (new, "network._scores"))
    }

    def climb(pkg):
        before = scored[pkg][0]
        model = pkg.HillClimbSearch("bic").fit(df)
        return model, scored[pkg][0] - before

    return [
        Op("network_em", f"{n} rows, 20% missing", "fit (EM)", net,
           lambda: em_missing(old), lambda: em_missing(new, missing="em"),
           lambda m: (m.n_iter_, m.cpds_), rtol=1e-8),
        Op("network_em", f"{n_latent} rows", f"EM x{n_iter}, {latent} latent", net,
           lambda: em_latent(old), lambda: em_latent(new), cpds, rtol=1e-8),
        Op("network_queries", "ALARM", "read BIF", "ALARM BIF file",
           lambda: read_old(bif), lambda: read_new(path=bif), cpds),
        Op("network_queries", f"{n_queries} queries", "read + queries",
           "ALARM BIF file", lambda: read_query(lambda: read_old(bif)),
           lambda: read_query(lambda: read_new(path=bif))),
        Op("structure", f"ALARM {n} rows", "hill climb, per family", f"{net}, BIC",
           lambda: climb(old), lambda: climb(new),
           lambda r: (sorted(map(tuple, r[0].edges_)), r[0].score_),
           units=lambda r: r[1]),
    ]  # fmt: skip


def _count_calls(cls, name: str) -> list[int]:
    """Count the calls of the method ``name`` of ``cls`` (patched in place)."""
    calls = [0]
    method = getattr(cls, name)

    def counted(self, *args, **kwargs):
        calls[0] += 1
        return method(self, *args, **kwargs)

    setattr(cls, name, counted)
    return calls


GROUPS = {
    "naive_bayes": group_naive_bayes,
    "text_nb": group_text_nb,
    "discriminant": group_discriminant,
    "mixture": group_mixture,
    "hmm": group_hmm,
    "chain": group_chain,
    "bayesnet": group_bayesnet,
    "network": group_network,
}


# --- output ------------------------------------------------------------------

COLUMNS = ("model", "operation", "threads", "runs", "old (s)", "new (s)",
           "new/old", "paired q1-q3", "wall", "same")  # fmt: skip


def cells(row: Row) -> list[str]:
    q1, q3 = row.quartiles()
    runs = f"{row.runs}" + (f"x{row.inner}" if row.inner > 1 else "")
    wall = "" if row.wall_ratio is None else f"{row.wall_ratio:.3f}"
    same = "no" if row.differs else "yes"
    return [row.model, row.operation, row.threads, runs, f"{row.old:.4g}",
            f"{row.new:.4g}", f"{row.ratio:.3f}", f"{q1:.3f}-{q3:.3f}", wall,
            same]  # fmt: skip


def format_table(rows: list[Row]) -> str:
    table = [list(COLUMNS)] + [cells(r) for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(COLUMNS))]
    text = {"model", "operation", "threads"}
    lines = [
        "  ".join(
            v.ljust(w) if c in text else v.rjust(w)
            for c, v, w in zip(COLUMNS, line, widths)
        ).rstrip()
        for line in table
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", default=DEFAULT_REV, help="the old commit")
    parser.add_argument("--quick", action="store_true", help="small sizes, 3 runs")
    parser.add_argument("--repeats", type=int, default=None, help="default: 9")
    parser.add_argument("--only", nargs="+", choices=list(GROUPS), default=None)
    parser.add_argument("--workdir", default=None, help="keep the old package here")
    add_json_option(parser)
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 9)
    warnings.simplefilter("ignore")
    full = resolve(args.rev)
    if full is None:
        print(f"skipped: no commit {args.rev!r} in this checkout (a shallow clone?)")
        if args.json:
            write_json(args.json, [], [], f"bayeskit {args.rev}")
        return 0
    with ExitStack() as stack:
        if args.workdir:
            directory = Path(args.workdir).resolve()
            directory.mkdir(parents=True, exist_ok=True)
        else:
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        old = import_old(extract(full, directory))
        for pkg in (old, bayeskit):
            compile_first(pkg)
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(
            f"old: bayeskit {old.__version__} at {args.rev}; new: bayeskit "
            f"{bayeskit.__version__} (this checkout); numpy {np.__version__}, "
            f"numba {numba.__version__}, Python {platform.python_version()}; "
            f"{os.cpu_count()} CPUs, load average {load}; {repeats} runs a side",
            flush=True,
        )
        rows = []
        for name in args.only or list(GROUPS):
            ops = GROUPS[name](old, bayeskit, args.quick)
            for op in ops:
                for one in (True, False) if op.threaded else (True,):
                    row = measure(op, repeats, one)
                    rows.append(row)
                    print(format_table([row]).splitlines()[-1], flush=True)
            del ops
            gc.collect()
    print("\nnew / old, medians of interleaved runs in CPU seconds (above 1: slower)")
    print(format_table(rows))
    slower = [r for r in rows if r.ratio > 1.05]
    print(f"{len(slower)} of {len(rows)} rows above 1.05")
    for r in rows:
        if r.differs:
            per = " (timed per unit of work)" if "per " in r.operation else ""
            print(f"results differ{per}: {r.model} {r.operation}: {r.differs}")
    if args.json:
        # For benchmarks/run.py: "ours" is the new package, "theirs" the old,
        # the goal no slowdown beyond 5%.
        results = [
            Result(r.model, f"{r.operation} ({r.threads} thr.)", r.new, r.old, 1.05,
                   r.runs)
            for r in rows
        ]  # fmt: skip
        write_json(args.json, results, [r.sizes for r in rows], f"bayeskit {args.rev}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
