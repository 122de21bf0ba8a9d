"""Networks with continuous nodes on Dask DataFrames: the statistics of every
partition, summarized where it lives by a copy of the network, summed by the
tree (they add over the union of the states the partitions show), then one
``from_stats``."""

from __future__ import annotations

from sklearn.base import clone

from ._edge import _row_blocks, _sum_stats, _summarize_unsupervised

__all__ = ["fit_hybrid_network"]


def fit_hybrid_network(est, X, sample_weight=None, partial=False):
    """``fit`` (or ``partial_fit``) of a :class:`~bayeskit.BayesianNetwork`
    with continuous nodes on a Dask DataFrame; the network is unchanged when
    it fails."""
    saved = dict(vars(est))
    try:
        xs, blocks = _row_blocks(X, {"sample_weight": sample_weight})
        later = partial and hasattr(est, "continuous_")
        # A fitted network reads the partitions with its states; a fresh copy
        # with its parameters (each partition's states, added by union).
        reader = est if later else clone(est)
        stats = _sum_stats(
            reader, xs, [blocks["sample_weight"]], _summarize_unsupervised
        )
        return est.from_stats(est.stats_ + stats if later else stats)
    except BaseException:
        vars(est).clear()
        vars(est).update(saved)
        raise
