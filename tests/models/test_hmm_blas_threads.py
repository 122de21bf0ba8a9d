"""The sequence models compute their emissions' densities and statistics with
BLAS on one thread when the work is large: BLAS's worker threads spin for a
while after each call, on the cores that the parallel kernel that follows
would run on. Small work leaves BLAS as it is, and BLAS is restored after."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from bayeskit import GaussianHMM, HiddenSemiMarkovModel
from bayeskit._jit import BLAS_ALONE_SIZE


def _blas_threads():
    return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}


@pytest.mark.parametrize("model_class", [GaussianHMM, HiddenSemiMarkovModel])
@pytest.mark.parametrize("large", [False, True])
def test_large_work_runs_blas_on_one_thread_and_restores_it(
    monkeypatch, model_class, large
):
    rng = np.random.default_rng(0)
    n_rows = BLAS_ALONE_SIZE // 2 if large else 40  # two states
    X = rng.normal(size=(n_rows, 2)) + 4 * (np.arange(n_rows) // 20 % 2)[:, None]
    model = model_class(2, n_iter=1, random_state=0).fit(X[:40])
    family = type(model._components()[1])
    seen = []
    for name in ("messages", "log_likelihood", "expected_stats"):
        original = getattr(family, name)

        def spy(self, *args, original=original, **kwargs):
            seen.append(_blas_threads())
            return original(self, *args, **kwargs)

        monkeypatch.setattr(family, name, spy)
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        model.predict_proba(X)
        model.summarize(X)
        after = _blas_threads()
    assert before == after == {2}
    assert seen  # the densities and the statistics were computed
    assert all(threads == ({1} if large else {2}) for threads in seen), seen
