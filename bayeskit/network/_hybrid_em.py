"""Missing cells of a hybrid network by EM: exact E-steps, the same M-step.

With ``missing='em'`` a missing cell, discrete or continuous, is latent (the
design's rule: what is missing is latent), and the network is the MAP
estimate under missing at random (Dempster, Laird and Rubin 1977; Lauritzen
1995 for networks). Each E-step is the exact posterior of every row given its
observed cells (:meth:`bayeskit.graph.clg.CLGNetwork.posterior`): the
probability of every discrete configuration and, in each, the conditional
Gaussian of the hidden continuous cells. Its expected statistics have the
form of complete data's, so the M-step is :func:`hybrid_from_stats`:

- the discrete families' expected counts are the configurations' total
  posterior weights, summarized as rows;
- a regression's expected scatter :math:`E[z z^\\top] = m m^\\top + C` of its
  design row :math:`z = (1, x_{\\mathrm{pa}}, x_v)` is that of the rows
  :math:`m` (one per data row, weighted by the configuration's posterior)
  and :math:`(0, \\sqrt{\\lambda_j} q_j)` for the eigenpairs of :math:`C`
  (one set per pattern of observed cells, weighted by the rows' total), so
  their triangular factor is the statistics of
  :func:`~bayeskit.network._hybrid_fit.regression_stats`.

EM then never decreases the objective ``lower_bound_``: the log density of
the observed cells plus the log prior (the m-estimate's Dirichlet and the
regressions' normal-inverse-gamma, up to constants), per unit of weight.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from .._validation import check_sample_weight
from ..graph.clg import CLGNetwork
from ._hybrid_fit import _triangle, labels_of, prior_of
from ._hybrid_latent import checked_latent, latent_frame, latent_start

__all__ = ["expected_hybrid_stats", "fit_hybrid_em", "partial_fit_hybrid_em"]


def expected_hybrid_stats(est, codes, values, weights) -> tuple:
    """The expected statistics of the rows (discrete ``codes``, -1 where
    missing, and continuous ``values``, NaN where missing, in the engine's
    order) under ``est``'s parameters, and their weighted log density.

    Returns
    -------
    (HybridStats, float)
    """
    from ._hybrid_stats import HybridStats, _inner, _parts

    clg = est._clg_
    if not isinstance(clg, CLGNetwork):
        # The E-step reads each configuration's conditional Gaussian, which
        # enumeration gives (up to its number of configurations).
        clg = CLGNetwork(
            clg.discrete, clg.cards, clg.log_cpds, clg.continuous, clg.nodes
        )
    post = clg.posterior(codes, values)
    finite = np.isfinite(post.log_evidence)
    if not finite[weights > 0].all():
        row = int(np.flatnonzero(~finite & (weights > 0))[0])
        raise ValueError(
            f"row {row} of X has probability zero under the network's tables, so "
            "EM cannot weigh its missing cells; give the prior more weight (m) "
            "or check the row"
        )
    log_lik = float(weights @ np.where(finite, post.log_evidence, 0.0))
    layout = est._layout_
    _, _, discrete, cont, inner_edges = _parts(layout)
    states = est.states_
    counts = None
    if discrete:
        total = weights @ np.exp(post.log_joint)  # (K,)
        seen = total > 0
        frame = pd.DataFrame(
            {
                v: np.asarray(states[v], dtype=object)[post.configs[seen, j]]
                for j, v in enumerate(clg.discrete)
            }
        )
        inner = _inner(est, inner_edges, dict(est._discrete_net_.states_))
        counts = inner.summarize(frame[discrete], sample_weight=total[seen])
    c_index = {v: j for j, v in enumerate(clg.continuous)}
    d_index = {v: j for j, v in enumerate(clg.cdiscrete)}
    wu = weights[:, None] * np.exp(post.component_log_weights())  # (n, U)
    n_patterns = post.covariances.shape[0]
    pattern_weight = np.zeros((n_patterns, wu.shape[1]))
    np.add.at(pattern_weight, post.pattern, wu)
    regressions = {}
    for v in cont:
        node = clg.nodes[v]
        cols = [c_index[p] for p in node.continuous_parents] + [c_index[v]]
        blocks, weight = {}, {}
        for u in range(wu.shape[1]):
            key = labels_of(
                states,
                node.discrete_parents,
                [post.components[u, d_index[p]] for p in node.discrete_parents],
            )
            rows = wu[:, u] > 0
            if not rows.any():
                continue
            m = post.means[rows][:, u][:, cols]
            sw = np.sqrt(wu[rows, u])
            parts = [np.column_stack([np.ones(len(m)), m]) * sw[:, None]]
            for p in range(n_patterns):
                if pattern_weight[p, u] <= 0:
                    continue
                C = post.covariances[p, u][np.ix_(cols, cols)]
                lam, Q = np.linalg.eigh(C)
                keep = lam > 0
                if keep.any():
                    spread = (Q[:, keep] * np.sqrt(lam[keep])).T
                    spread = np.sqrt(pattern_weight[p, u]) * spread
                    parts.append(np.column_stack([np.zeros(len(spread)), spread]))
            blocks.setdefault(key, []).extend(parts)
            weight[key] = weight.get(key, 0.0) + float(wu[rows, u].sum())
        regressions[v] = {
            key: (_triangle(np.vstack(b)), weight[key]) for key, b in blocks.items()
        }
    return HybridStats(counts, regressions, layout), log_lik


def log_prior(est) -> float:
    """The log prior density at ``est``'s parameters, up to constants: the
    m-estimate's Dirichlet of the discrete tables and, for every regression,
    :math:`-\\kappa \\lVert \\theta - \\theta_0 \\rVert^2 / 2\\sigma^2 -
    \\psi / 2\\sigma^2 - (c / 2) \\log \\sigma^2`, whose maximiser with the
    data is :func:`~bayeskit.network._hybrid_fit.clg_from_stats`'s mode."""
    total = 0.0
    inner = est._discrete_net_
    if inner is not None:
        structure, _, prior = inner._components()
        total += structure.log_prior(inner._log_cpds_, prior)
    for v in est._clg_.continuous:
        node, prior = est.cpds_[v], prior_of(est, v)
        kappa, m0 = float(prior.mean_weight), float(prior.mean)
        psi, c = float(prior.scatter), float(prior.variance_weight)
        shape = np.shape(node.variance)
        for u in itertools.product(*[range(s) for s in shape]):
            var = float(node.variance[u])
            theta = np.concatenate([[node.intercept[u] - m0], node.coef[u]])
            total -= (kappa * float(theta @ theta) + psi) / (2 * var)
            total -= 0.5 * c * np.log(var)
    return total


def fit_hybrid_em(est, X, sample_weight):
    """Fit ``est`` (continuous nodes, ``missing='em'`` or latent nodes) by EM,
    started from the available-case estimate (rows with no missing cell need
    no iteration), or for latent nodes from ``n_init`` random starts, keeping
    the run of the highest objective."""
    from ._hybrid_stats import hybrid_from_stats, hybrid_summarize

    est._reset()
    if est.latent:
        rng = check_random_state(est.random_state)
        frame, latent, layout = _latent_frame(est, X)
        best = None
        for _ in range(est.n_init):
            latent_start(est, frame, latent, layout, rng)
            codes, values, sw = _rows(
                est, latent_frame(frame, latent, layout[1]), sample_weight
            )
            run = _run_em(est, codes, values, sw)
            if best is None or run[0][-1] > best[0][-1]:
                best = run
        bounds, converged, stats = best
        hybrid_from_stats(est, stats)
    else:
        hybrid_from_stats(est, hybrid_summarize(est, X, sample_weight, fit=True))
        codes, values, sw = _rows(est, X, sample_weight)
        bounds, converged, _ = _run_em(est, codes, values, sw)
    if not converged:
        warnings.warn(
            f"EM did not converge in {est.max_iter} iterations "
            f"(tol={est.tol}): increase max_iter or tol",
            ConvergenceWarning,
            stacklevel=3,
        )
    est.n_iter_ = 0 if len(bounds) == 1 and converged else len(bounds)
    est.converged_ = converged
    est.lower_bound_, est.lower_bounds_ = bounds[-1], bounds
    return est


def _rows(est, X, sample_weight) -> tuple:
    """The codes, values and weights of the rows of positive weight."""
    from ._hybrid import _evidence_rows

    codes, values, frame = _evidence_rows(est, X)
    sw = check_sample_weight(sample_weight, np.empty((len(frame), 0)))
    keep = sw > 0
    return codes[keep], values[keep], sw[keep]


def _run_em(est, codes, values, sw) -> tuple:
    """EM from ``est``'s parameters: the objective of every iteration, whether
    its change fell below ``tol``, and the statistics of the last E-step
    (whose M-step ``est`` holds); complete rows need no iteration."""
    from ._hybrid_stats import hybrid_from_stats

    total = float(sw.sum())
    if not ((codes < 0).any() or np.isnan(values).any()):
        stats, log_lik = expected_hybrid_stats(est, codes, values, sw)
        return [(log_lik + log_prior(est)) / total], True, stats
    bounds, converged, stats = [], False, None
    for _ in range(est.max_iter):
        stats, log_lik = expected_hybrid_stats(est, codes, values, sw)
        bounds.append((log_lik + log_prior(est)) / total)
        hybrid_from_stats(est, stats)
        if len(bounds) > 1 and abs(bounds[-1] - bounds[-2]) < est.tol:
            converged = True
            break
    return bounds, converged, stats


def _latent_frame(est, X) -> tuple:
    """The rows of ``X`` as a frame, the latent nodes (checked) and the
    layout of every node, latent ones included."""
    from ._hybrid import _frame
    from ._hybrid_stats import _layout

    frame = _frame(est, X, reset=True)
    names = list(frame.columns)
    latent = checked_latent(est, names)
    return frame, latent, _layout(est, names + latent)


def partial_fit_hybrid_em(est, X, sample_weight):
    """Add the expected statistics of a chunk, under the current parameters,
    to what the network has seen, and set the parameters from the sum (one
    step of incremental EM, Neal and Hinton 1998)."""
    from ._hybrid import _evidence_rows
    from ._hybrid_stats import hybrid_from_stats

    codes, values, frame = _evidence_rows(est, X)
    sw = check_sample_weight(sample_weight, np.empty((len(frame), 0)))
    keep = sw > 0
    chunk, _ = expected_hybrid_stats(est, codes[keep], values[keep], sw[keep])
    return hybrid_from_stats(est, est.stats_ + chunk)
