"""Fits and queries whose answers must not depend on ``PYTHONHASHSEED``.

Python salts the hash of ``str`` and ``bytes`` per process, so iterating a
``set`` (or a dict built by iterating one) of names visits them in an order
that changes from one process to the next. Where that order reaches the
numbers (the order of a sum, of a product of factors, of the variables of a
clique), a fresh process gives an answer a few ulps away. This module runs a
set of workloads and prints one SHA-256 per workload, of every number and
name in its answers, bit for bit:

    python tests/hash_seed_workloads.py [--broad] [--seeds 0 1 2 3]

With ``--seeds`` it runs itself once per seed, each time in a fresh process
with that ``PYTHONHASHSEED``, and prints the workloads whose digests differ
(exit status 1 if any). ``--broad`` runs every public estimator at its
defaults, the classic networks (fit, EM with a latent variable and with
missing cells, HillClimbSearch, PC, TreeAugmentedNB, queries, the BIF and
XMLBIF writers and readers); without it, one compact workload per family,
which tests/test_hash_seed.py runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))


def _feed(h, obj, depth=0) -> None:
    """Feed ``obj``'s numbers, names and structure into the hash ``h``."""
    from sklearn.base import BaseEstimator

    h.update(type(obj).__name__.encode())
    if obj is None or isinstance(obj, (bool, int, str, bytes, np.bool_)):
        h.update(repr(obj).encode())
    elif isinstance(obj, (float, np.floating)):
        h.update(float(obj).hex().encode())
    elif isinstance(obj, np.integer):
        h.update(repr(int(obj)).encode())
    elif isinstance(obj, np.ndarray):
        h.update(f"{obj.dtype}{obj.shape}".encode())
        if obj.dtype == object:
            for v in obj.ravel():
                _feed(h, v, depth + 1)
        else:
            h.update(np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, pd.DataFrame):
        _feed(h, list(obj.columns), depth + 1)
        _feed(h, list(obj.index), depth + 1)
        for c in obj.columns:
            _feed(h, obj[c].to_numpy(), depth + 1)
    elif isinstance(obj, (pd.Series, pd.Index)):
        if isinstance(obj, pd.Series):
            _feed(h, list(obj.index), depth + 1)
        _feed(h, obj.to_numpy(), depth + 1)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _feed(h, v, depth + 1)
    elif isinstance(obj, dict):  # in its order: the order is part of the answer
        for k, v in obj.items():
            _feed(h, k, depth + 1)
            _feed(h, v, depth + 1)
    elif isinstance(obj, (set, frozenset)):  # a set has no order to compare
        for v in sorted(obj, key=repr):
            _feed(h, v, depth + 1)
    elif depth > 6:
        return
    elif isinstance(obj, BaseEstimator):
        for k, v in vars(obj).items():
            if k.endswith("_") and not k.startswith("_"):
                h.update(k.encode())
                _feed(h, v, depth + 1)
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            _feed(h, getattr(obj, f.name), depth + 1)


def digest(*answers) -> str:
    h = hashlib.sha256()
    for a in answers:
        _feed(h, a)
    return h.hexdigest()


def _answers(est, X, y=None):
    """``est`` fitted on ``X`` (``y``), and what its methods answer on ``X``."""
    est.fit(X) if y is None else est.fit(X, y)
    out = [est]
    for name in ("predict_proba", "score_samples", "predict"):
        if hasattr(est, name):
            try:
                out.append(getattr(est, name)(X))
            except (TypeError, ValueError, NotImplementedError):
                out.append(name)
    return out


def _estimator(cls, n=240):
    from public_estimators import data, make

    def run():
        est = make(cls)
        # Seeded, nested estimators too (a random start is not a hash seed).
        seeds = [k for k in est.get_params() if k.split("__")[-1] == "random_state"]
        for key in seeds:
            if est.get_params()[key] is None:
                est.set_params(**{key: 0})
        X, y = data(est, n=n)
        return _answers(est, X, y)

    return run


def _network_sample(name, n, seed=0):
    import bayeskit as bk

    bn = bk.datasets.load_network(name)
    return bn, bn.sample(n, random_state=seed)


def _network_fit(name, n):
    def run():
        import bayeskit as bk

        true, X = _network_sample(name, n)
        bn = bk.BayesianNetwork(true.dag_.edges).fit(X)
        target = true.variables_[-1]
        rest = X.iloc[:50].astype(object)
        rest[target] = np.nan
        rest = rest.mask(np.random.default_rng(0).random(rest.shape) < 0.3)
        return [
            bn,
            bn.predict_proba(rest, target),
            bn.query([target], evidence=dict(X.drop(columns=[target]).iloc[0])),
            bn.map_query(evidence={true.variables_[0]: X.iloc[0, 0]}),
            bn.score_samples(X.iloc[:50]),
        ]

    return run


def _network_likelihood(name):
    def run():
        import bayeskit as bk

        bn = bk.datasets.load_network(name)
        X = bn.sample(40, random_state=1).astype(object)
        # Missing cells: every row's likelihood sums over a span of the tree.
        X = X.mask(np.random.default_rng(1).random(X.shape) < 0.5)
        return [bn.score_samples(X)]

    return run


def _network_queries(name):
    def run():
        import bayeskit as bk

        bn = bk.datasets.load_network(name)
        X = bn.sample(40, random_state=1).astype(object)
        X = X.mask(np.random.default_rng(1).random(X.shape) < 0.5)
        first, last = bn.variables_[0], bn.variables_[-1]
        evidence = {v: X[v].dropna().iloc[0] for v in bn.variables_[1:4]}
        out = [
            bn.predict_proba(X),
            bn.score_samples(X),
            bn.query([first, last], evidence=evidence),
            bn.query([last], evidence=evidence, method="loopy"),
        ]
        with_seed = bk.BayesianNetwork(bn.dag_.edges, random_state=0)
        with_seed.fit(bn.sample(500, random_state=2))
        out.append(with_seed.query([last], evidence=evidence, method="sampling"))
        out.append(bn.sample(20, random_state=3, evidence=evidence))
        return out

    return run


def _network_em(name, n, how):
    def run():
        import bayeskit as bk

        true, X = _network_sample(name, n)
        X = X.astype(object)
        if how == "latent":
            hidden = true.variables_[len(true.variables_) // 2]
            X = X.drop(columns=[hidden])
            bn = bk.BayesianNetwork(
                true.dag_.edges,
                latent=[hidden],
                states={hidden: list(true.states_[hidden])},
                max_iter=5,
                random_state=0,
            )
        else:
            rng = np.random.default_rng(0)
            X = X.mask(rng.random(X.shape) < 0.2)
            bn = bk.BayesianNetwork(true.dag_.edges, max_iter=5, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bn.fit(X)
        return [bn]

    return run


def _structure(name, n, learner):
    def run():
        import bayeskit as bk

        _, X = _network_sample(name, n)
        make = {"hill_climb": bk.HillClimbSearch, "pc": bk.PC}[learner]
        est = make().fit(X)
        return [est, est.edges_]

    return run


def _tan(name, n):
    def run():
        import bayeskit as bk

        true, X = _network_sample(name, n)
        target = true.variables_[-1]
        y = X.pop(target)
        return _answers(bk.TreeAugmentedNB(), X, y)

    return run


def _files(name):
    def run():
        import bayeskit as bk
        from bayeskit.io import read_bif, read_xmlbif, write_bif, write_xmlbif

        bn = bk.datasets.load_network(name)
        bif, xml = write_bif(bn), write_xmlbif(bn)
        return [bif, xml, read_bif(bif), read_xmlbif(xml)]

    return run


def workloads(broad: bool) -> dict:
    """The workloads by name: every public estimator and the networks
    (``broad``), or one compact workload per family."""
    import bayeskit as bk

    if not broad:
        return {
            "naive_bayes": _estimator(bk.MixedNB, n=60),
            "discriminant_analysis": _estimator(bk.QuadraticDiscriminantAnalysis, 60),
            "mixture": _estimator(bk.GaussianMixture, n=60),
            "hmm": _estimator(bk.CategoricalHMM, n=60),
            "network-fit": _network_fit("asia", 300),
            "network-likelihood": _network_likelihood("asia"),
            "network-em": _network_em("asia", 300, "missing"),
            "hill_climb": _structure("asia", 300, "hill_climb"),
            "pc": _structure("asia", 300, "pc"),
            "files": _files("asia"),
        }
    from public_estimators import classes

    out = {cls.__name__: _estimator(cls) for cls in classes()}
    for name in ("asia", "alarm"):
        out[f"{name}-fit"] = _network_fit(name, 2000)
        out[f"{name}-queries"] = _network_queries(name)
        out[f"{name}-em-latent"] = _network_em(name, 1000, "latent")
        out[f"{name}-em-missing"] = _network_em(name, 1000, "missing")
        out[f"{name}-hill_climb"] = _structure(name, 2000, "hill_climb")
        out[f"{name}-pc"] = _structure(name, 2000, "pc")
        out[f"{name}-tan"] = _tan(name, 2000)
    for name in ("asia", "child", "insurance", "alarm"):
        out[f"{name}-files"] = _files(name)
    return out


def run_here(broad: bool) -> dict:
    """Each workload's digest, computed in this process (the ``bayeskit`` of
    this checkout, not one installed elsewhere)."""
    sys.path[:0] = [os.path.dirname(HERE), HERE]
    out = {}
    for name, run in workloads(broad).items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out[name] = digest(run())
        except Exception as exc:  # reported in the digest, not hidden
            out[name] = f"error: {type(exc).__name__}: {exc}"[:200]
    return out


def run_fresh(seed, broad: bool) -> dict:
    """The digests computed by a fresh process with ``PYTHONHASHSEED=seed``."""
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    args = [sys.executable, os.path.abspath(__file__)]
    proc = subprocess.run(
        args + (["--broad"] if broad else []),
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=os.path.dirname(HERE),
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--broad", action="store_true")
    parser.add_argument("--seeds", nargs="*", type=int)
    args = parser.parse_args(argv)
    if not args.seeds:
        print(json.dumps(run_here(args.broad)))
        return 0
    runs = {seed: run_fresh(seed, args.broad) for seed in args.seeds}
    first = runs[args.seeds[0]]
    differ = sorted(
        name for name in first if len({r.get(name) for r in runs.values()}) > 1
    )
    errors = sorted(n for n, d in first.items() if d.startswith("error"))
    print(f"{len(first)} workloads, PYTHONHASHSEED in {args.seeds}")
    for name in errors:
        print(f"  {name}: {first[name]}")
    for name in differ:
        print(f"DIFFERS: {name}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
