"""Fitting on Dask: rows per second on a local cluster, and data beyond memory.

Two measurements, on a ``dask.distributed.LocalCluster`` of worker processes
on this machine (the ``dask`` extra):

1. **Rows per second** of the Dask fit against the in-memory fit of the same
   rows: GaussianNB (one fit: two passes, the classes then the statistics) and
   GaussianMixture (per EM iteration, from the same initial parameters). The
   Dask data are persisted in the workers' memory first, so the time is the
   fit's, not the generation's. The goal: within 3x of the in-memory rows per
   second.
2. **Data at 5x the workers' memory**: GaussianNB and GaussianMixture fitted
   on rows generated lazily by the workers (never persisted), five times the
   sum of the workers' ``memory_limit``. It must complete; the peak resident
   memory of every process (this one, which holds the scheduler and the
   nannies, and each worker) is printed.

Run from the repository root::

    python benchmarks/dask_cluster.py            # full sizes: minutes
    python benchmarks/dask_cluster.py --quick    # small sizes, seconds; no 5x run

It is not one of the ``bench_*`` peer comparisons of ``run.py``: its reference
is bayeskit's own in-memory fit.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import warnings

import numpy as np


def peak_rss_mb() -> float:
    """Peak resident memory of the calling process, in MB (Linux: kB units)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def lazy_rows(n, d, chunk, seed=0):
    """``n`` rows of three Gaussian blobs and a label, generated chunk by chunk
    by whoever computes them."""
    import dask.array as da

    def block(block_info=None):
        info = block_info[None]
        size = info["chunk-shape"][0]
        r = np.random.default_rng(seed * 1_000_003 + info["chunk-location"][0])
        label = r.integers(0, 3, size)
        X = r.normal(size=(size, d)) + 3.0 * label[:, None]
        return np.column_stack([X, label])

    sizes = (chunk,) * (n // chunk) + ((n % chunk,) if n % chunk else ())
    XY = da.map_blocks(block, chunks=(sizes, (d + 1,)), dtype=float)
    return XY[:, :d], XY[:, d].astype(np.int64)


def best_of(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def start_params(X, k=3):
    from bayeskit import GaussianMixture

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm = GaussianMixture(k, max_iter=2, random_state=0).fit(X[:5000])
    return dict(
        n_components=k,
        weights_init=gm.weights_,
        means_init=gm.means_,
        precisions_init=gm.precisions_,
        tol=0.0,
    )


def throughput(client, n, d, n_chunks, repeats, em_only=False):
    import dask

    from bayeskit import GaussianMixture, GaussianNB

    Xd, yd = lazy_rows(n, d, n // n_chunks)
    Xd, yd = dask.persist(Xd, yd)
    X, y = (np.asarray(a) for a in dask.compute(Xd, yd))
    GaussianNB().fit(Xd, yd)  # the workers import and compile once
    rows = []
    if not em_only:
        t_mem = best_of(lambda: GaussianNB().fit(X, y), repeats)
        t_dask = best_of(lambda: GaussianNB().fit(Xd, yd), repeats)
        rows.append(("GaussianNB fit", t_mem, t_dask))
    params = start_params(X)
    iters = 5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = GaussianMixture(max_iter=iters, **params)
        est = GaussianMixture(max_iter=iters, **params)
        t_mem = best_of(lambda: ref.fit(X), repeats) / iters
        t_dask = best_of(lambda: est.fit(Xd), repeats) / iters
    assert np.allclose(est.means_, ref.means_, rtol=1e-8)
    rows.append(("GaussianMixture EM iteration", t_mem, t_dask))
    client.cancel([Xd, yd])
    # The same rows generated lazily (not persisted by the caller, and no
    # longer held by the cluster): the fit keeps them on the workers when they
    # fit (PERSIST_FRACTION), else it generates them in every iteration.
    lazy_X, _ = lazy_rows(n, d, n // n_chunks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = GaussianMixture(max_iter=iters, **params)
        t_lazy = best_of(lambda: est.fit(lazy_X), repeats) / iters
    assert np.allclose(est.means_, ref.means_, rtol=1e-8)
    rows.append(("  the rows generated lazily", t_mem, t_lazy))
    print(f"\nRows per second, {n:,} rows x {d} features in {n_chunks} chunks")
    print(f"{'':32}{'in memory':>14}{'Dask':>14}{'ratio':>8}{'goal':>7}")
    for name, t_mem, t_dask in rows:
        ratio = t_dask / t_mem
        print(
            f"{name:32}{n / t_mem:14,.0f}{n / t_dask:14,.0f}{ratio:8.2f}"
            f"{'<= 3':>7} {'met' if ratio <= 3 else 'missed'}"
        )


def beyond_memory(client, limit_bytes, n_workers, d, chunk):
    from bayeskit import GaussianMixture, GaussianNB

    total = 5 * limit_bytes * n_workers
    n = total // (8 * (d + 1))
    Xd, yd = lazy_rows(n, d, chunk, seed=1)
    print(
        f"\nData at 5x the workers' memory: {n:,} rows x {d} features "
        f"({total / 2**30:.2f} GiB, generated lazily), memory_limit "
        f"{limit_bytes / 2**20:.0f} MiB x {n_workers} workers"
    )
    for name, fit in [
        ("GaussianNB", lambda: GaussianNB().fit(Xd, yd)),
        (
            "GaussianMixture (3 EM iterations)",
            lambda: GaussianMixture(3, max_iter=3, random_state=0).fit(Xd),
        ),
    ]:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit()
        seconds = time.perf_counter() - start
        workers = client.run(peak_rss_mb)
        print(f"  {name}: completed in {seconds:.1f} s; peak resident memory:")
        print(f"    this process (client, scheduler, nannies) {peak_rss_mb():8.0f} MB")
        for address, mb in sorted(workers.items()):
            print(f"    worker {address:28} {mb:8.0f} MB")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, no 5x run")
    parser.add_argument(
        "--memory-only", action="store_true", help="only the 5x-memory run"
    )
    parser.add_argument(
        "--em-only",
        action="store_true",
        help="only the rows per second of an EM iteration (full size)",
    )
    parser.add_argument(
        "--no-persist",
        action="store_true",
        help="EM never keeps the rows on the workers (PERSIST_FRACTION = 0)",
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit-mb", type=int, default=600)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        print("needs the dask extra: pip install '.[dask]'", file=sys.stderr)
        return 1
    import dask

    limit = args.memory_limit_mb * 2**20
    if args.no_persist:
        import bayeskit._dask._em

        bayeskit._dask._em.PERSIST_FRACTION = 0.0
    # memory_limit is a hard ceiling here (a worker above 95% of it is
    # restarted), not a reason to pause or spill: a worker process with
    # numpy, pandas, scikit-learn and numba loaded starts at about 300 MB,
    # which the default thresholds (pause at 80%) would count against the data.
    dask.config.set(
        {
            "distributed.worker.memory.target": False,
            "distributed.worker.memory.spill": False,
            "distributed.worker.memory.pause": False,
        }
    )
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",  # any free port: never clashes
            memory_limit=limit,
        ) as cluster,
        Client(cluster) as client,
    ):
        if args.quick:
            throughput(client, 200_000, 5, 10, repeats=1)
        elif args.em_only:
            throughput(client, 2_000_000, 10, 20, args.repeats, em_only=True)
        else:
            if not args.memory_only:
                throughput(client, 2_000_000, 10, 20, repeats=args.repeats)
            beyond_memory(client, limit, args.workers, d=10, chunk=100_000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
