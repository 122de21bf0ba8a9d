"""Conditional linear Gaussian (CLG) networks: exact inference by enumeration.

A CLG network (Lauritzen 1992; Lauritzen and Jensen 2001) has discrete nodes
with discrete parents only, and continuous nodes whose conditional
distribution given their parents is Gaussian, with a mean linear in the
continuous parents and coefficients and variance chosen by the discrete
parents' configuration ``u``:

.. math::

    x_v \\mid \\mathrm{pa}(v) \\sim \\mathcal{N}\\big(a_v(u) + b_v(u)^\\top
        x_{\\mathrm{cpa}(v)},\\ \\sigma_v^2(u)\\big).

Given every discrete configuration, the continuous nodes are one joint
Gaussian. Ordered topologically, ``x = B x + a + e`` with ``B`` strictly lower
triangular and ``e ~ N(0, D)``, so the precision is the canonical-form
:math:`K = (I - B)^\\top D^{-1} (I - B)` (Koller and Friedman 2009, section
7.2) with no inversion, and the log density of any row is the sum of every
node's residual term. Conditioning the hidden continuous nodes ``H`` on the
observed ones ``O`` is a least-squares problem in the whitened factor
:math:`W = D^{-1/2}(I - B)`: the posterior mean minimises
:math:`\\lVert W_H x_H + W_O x_O - D^{-1/2} a \\rVert^2`, solved by the
Cholesky factor of :math:`K_{HH} = W_H^\\top W_H`; the minimum is the
quadratic form of the marginal of ``x_O``, whose log determinant is
:math:`\\sum_v \\log \\sigma_v^2 + \\log\\det K_{HH}`. Rows that share a
pattern of observed continuous nodes share the factor and are solved
together.

**Hybrid networks.** This module enumerates the joint configurations of the
discrete nodes (their joint table, the product of the CPTs), weights every
configuration of a row by its prior times the Gaussian density of the row's
observed continuous cells given the configuration, and normalises in log
space. This is exact (the posterior of a continuous node is a mixture of
Gaussians with one component per configuration of the discrete parents of
the continuous nodes) and costs ``O(n_rows K)`` for ``K`` discrete
configurations, plus one Cholesky factor per pattern of observed continuous
cells and distinct continuous configuration. It is limited to
``max_configurations`` joint discrete configurations (an error beyond it);
the stable junction-tree scheme of Lauritzen and Jensen (2001), which scales
with the cliques instead, is the general method.

References
----------
.. [1] S. L. Lauritzen, "Propagation of probabilities, means and variances in
   mixed graphical association models", Journal of the American Statistical
   Association 87(420), 1992.
.. [2] S. L. Lauritzen and F. Jensen, "Stable local computation with
   conditional Gaussian distributions", Statistics and Computing 11, 2001.
.. [3] D. Koller and N. Friedman, "Probabilistic Graphical Models", MIT
   Press, 2009, sections 7.2 and 14.3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve, cholesky, solve_triangular
from scipy.special import logsumexp

__all__ = [
    "MAX_CONFIGURATIONS",
    "CLGNetwork",
    "CLGNode",
    "CLGPosterior",
    "continuous_components",
]

MAX_CONFIGURATIONS = 100_000
_LOG_2PI = np.log(2 * np.pi)
# From this many rows of one pattern, conditioning forms its affine maps first.
_MAPPED_ROWS = 256


@dataclass(frozen=True, eq=False)
class CLGNode:
    """The conditional linear Gaussian of one continuous node.

    Parameters
    ----------
    discrete_parents : tuple
        Names of the discrete parents, in the order of the leading axes.
    continuous_parents : tuple
        Names of the continuous parents, in the order of ``coef``'s last axis.
    intercept : ndarray
        One per configuration of the discrete parents: its shape is their
        cardinalities.
    coef : ndarray
        The discrete parents' cardinalities, then ``n_continuous_parents``.
    variance : ndarray
        Positive, of the discrete parents' cardinalities.
    """

    discrete_parents: tuple
    continuous_parents: tuple
    intercept: np.ndarray
    coef: np.ndarray
    variance: np.ndarray


@dataclass(frozen=True, eq=False)
class CLGPosterior:
    """Exact posteriors of a batch of rows.

    Attributes
    ----------
    log_evidence : ndarray of shape (n,)
        ``log p(observed cells)`` of every row (a density in the continuous
        cells).
    log_joint : ndarray of shape (n, K)
        ``log P(discrete configuration k | row)``, normalised per row
        (``-inf`` everywhere for a row of evidence of density zero).
    configs : ndarray of shape (K, n_discrete)
        The codes of every discrete configuration.
    component : ndarray of shape (K,)
        The continuous configuration (index into ``components``) of every
        discrete configuration.
    components : ndarray of shape (U, n_cdiscrete)
        Codes of the discrete parents of continuous nodes (``cdiscrete``) of
        every continuous configuration.
    means : ndarray of shape (n, U, n_continuous)
        ``E[x | row, configuration u]`` (observed cells keep their value).
    covariances : ndarray of shape (n_patterns, U, n_continuous, n_continuous)
        ``Cov[x | row, u]`` of the rows of each pattern of observed continuous
        cells (zero for observed cells); it does not depend on the values.
    pattern : ndarray of shape (n,)
        The pattern of every row: ``covariances[pattern[i]]`` is row ``i``'s.
    """

    log_evidence: np.ndarray
    log_joint: np.ndarray
    configs: np.ndarray
    component: np.ndarray
    components: np.ndarray
    means: np.ndarray
    covariances: np.ndarray
    pattern: np.ndarray
    net: CLGNetwork | None = None
    masks: np.ndarray | None = None

    def component_log_weights(self) -> np.ndarray:
        """``log P(u | row)`` of every continuous configuration, ``(n, U)``."""
        n, u = len(self.log_joint), len(self.components)
        if self.log_joint.shape[1] == u and np.array_equal(
            self.component, np.arange(u)
        ):
            return self.log_joint  # one discrete configuration per component
        out = np.full((n, u), -np.inf)
        for j in range(u):
            cols = self.log_joint[:, self.component == j]
            if cols.shape[1]:
                out[:, j] = logsumexp(cols, axis=1)
        return out

    def discrete_marginal(self, j: int, card: int) -> np.ndarray:
        """``P(discrete node j = a | row)``, shape ``(n, card)``."""
        out = np.zeros((len(self.log_joint), card))
        p = np.exp(self.log_joint)
        for a in range(card):
            out[:, a] = p[:, self.configs[:, j] == a].sum(axis=1)
        return out

    def joint_table(self, idx: list, row: int = 0) -> np.ndarray:
        """``P(discrete nodes idx | row)``, an array over their states."""
        shape = [int(self.configs[:, j].max()) + 1 for j in idx]
        if self.net is not None:
            shape = [self.net.cards[self.net.discrete[j]] for j in idx]
        table = np.zeros(shape)
        with np.errstate(under="ignore"):
            np.add.at(table, tuple(self.configs[:, idx].T), np.exp(self.log_joint[row]))
        return table

    def map_assignment(self) -> np.ndarray:
        """The most probable joint state of the discrete nodes of every row,
        ``(n, n_discrete)``."""
        return self.configs[np.argmax(self.log_joint, axis=1)]

    def mixture(self, j: int, row: int = 0) -> tuple:
        """The posterior of continuous node ``j`` in ``row``: a mixture over
        the configurations of the discrete parents of the nodes of its
        component (``clg_tree.continuous_components``: the factors joined to
        it by hidden continuous nodes), which alone decide its moments.

        Returns
        -------
        names : list
            The discrete nodes its components are indexed by.
        configs : ndarray of shape (m, len(names))
        weights, means, variances : ndarray of shape (m,)
        """
        w = np.exp(self.component_log_weights()[row])
        means = self.means[row, :, j]
        var = self.covariances[self.pattern[row], :, j, j]
        net = self.net
        members = next(
            m
            for m in continuous_components(
                net.continuous, net.nodes, self.masks[self.pattern[row]]
            )
            if j in m
        )
        seen = {
            p for i in members for p in net.nodes[net.continuous[i]].discrete_parents
        }
        names = [v for v in net.cdiscrete if v in seen]
        cols = [net.cdiscrete.index(v) for v in names]
        configs, first, inv = np.unique(
            self.components[:, cols], axis=0, return_index=True, return_inverse=True
        )
        weights = np.zeros(len(configs))
        np.add.at(weights, inv.ravel(), w)
        return names, configs, weights, means[first], var[first]

    def mean(self) -> np.ndarray:
        """The posterior mean of every continuous node, ``(n, n_continuous)``."""
        w = np.exp(self.component_log_weights())
        return np.einsum("nu,nuc->nc", w, self.means)

    def variance(self) -> np.ndarray:
        """The posterior variance of every continuous node (the mixture's),
        ``(n, n_continuous)``."""
        w = np.exp(self.component_log_weights())
        m = np.einsum("nu,nuc->nc", w, self.means)
        var = np.diagonal(self.covariances, axis1=2, axis2=3)[self.pattern]
        second = np.einsum("nu,nuc->nc", w, var + (self.means - m[:, None]) ** 2)
        return second


def continuous_components(continuous: list, nodes: dict, observed) -> list:
    """The components of the continuous factors given observed cells.

    Parameters
    ----------
    continuous : list
        The continuous nodes, in a topological order.
    nodes : dict
        ``{node: CLGNode}``.
    observed : array-like of bool of shape (n_continuous,)
        Which continuous cells are observed.

    Returns
    -------
    list of list of int
        Indices (into ``continuous``) of the nodes whose factors one
        component holds, increasing; factors are joined when they share a
        hidden node.
    """
    index = {v: j for j, v in enumerate(continuous)}
    parent = list(range(len(continuous)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for j, v in enumerate(continuous):
        for p in nodes[v].continuous_parents:
            q = index[p]
            if not observed[q]:  # the hidden parent joins the two factors
                parent[find(j)] = find(q)
    groups: dict = {}
    for j in range(len(continuous)):
        groups.setdefault(find(j), []).append(j)
    return list(groups.values())


def _patterns(observed: np.ndarray):
    """``(mask, rows)`` of every distinct row of the boolean ``observed``."""
    c = observed.shape[1]
    if c <= 62:  # one integer per row: a 1-d sort instead of a sort of rows
        keys = observed.astype(np.int64) @ (np.int64(1) << np.arange(c, dtype=np.int64))
    else:
        _, keys = np.unique(observed, axis=0, return_inverse=True)
        keys = keys.ravel()
    order = np.argsort(keys, kind="stable")
    bounds = np.flatnonzero(np.diff(keys[order])) + 1
    for rows in np.split(order, bounds):
        if len(rows):
            yield observed[rows[0]], rows


class CLGNetwork:
    """A conditional linear Gaussian network, ready for exact queries.

    Parameters
    ----------
    discrete : list
        The discrete nodes, in a topological order.
    cards : dict
        Number of states of every discrete node.
    log_cpds : dict
        ``{node: (parents, log table)}`` of every discrete node, the table of
        shape ``(*parent cardinalities, k)``.
    continuous : list
        The continuous nodes, in a topological order.
    nodes : dict
        ``{node: CLGNode}`` of every continuous node.
    max_configurations : int, default=MAX_CONFIGURATIONS
        The most joint configurations of the discrete nodes enumerated.
    """

    def __init__(
        self,
        discrete: list,
        cards: dict,
        log_cpds: dict,
        continuous: list,
        nodes: dict,
        max_configurations: int = MAX_CONFIGURATIONS,
    ):
        self.discrete = list(discrete)
        self.continuous = list(continuous)
        self.cards = {v: int(cards[v]) for v in self.discrete}
        n_configs = int(np.prod([self.cards[v] for v in self.discrete], dtype=float))
        if n_configs > max_configurations:
            raise ValueError(
                f"the discrete nodes have {n_configs} joint configurations, more "
                f"than the {max_configurations} that exact inference by "
                "enumeration handles in a network with continuous nodes; use "
                "fewer or smaller discrete nodes"
            )
        self.log_cpds = log_cpds
        self.nodes = nodes
        d_index = {v: j for j, v in enumerate(self.discrete)}
        shape = [self.cards[v] for v in self.discrete]
        self.configs = (
            np.indices(shape).reshape(len(shape), -1).T
            if shape
            else np.zeros((1, 0), dtype=int)
        )
        log_prior = np.zeros(len(self.configs))
        for v in self.discrete:
            parents, table = log_cpds[v]
            idx = tuple(self.configs[:, d_index[p]] for p in parents)
            log_prior = log_prior + table[(*idx, self.configs[:, d_index[v]])]
        self.log_prior = log_prior
        # The discrete parents of continuous nodes decide the Gaussian part.
        cd = [
            v
            for v in self.discrete
            if any(v in nodes[c].discrete_parents for c in self.continuous)
        ]
        self.cdiscrete = cd
        if cd:
            sub = self.configs[:, [d_index[v] for v in cd]]
            self.components, inv = np.unique(sub, axis=0, return_inverse=True)
            self.component = inv.ravel()
        else:
            self.components = np.zeros((1, 0), dtype=int)
            self.component = np.zeros(len(self.configs), dtype=int)
        self._gaussians = [
            self._gaussian(dict(zip(cd, row))) for row in self.components
        ]

    def _gaussian(self, config: dict) -> tuple:
        """``(a, B, var)``: intercepts, the strictly lower triangular
        coefficients and variances of the continuous nodes at one discrete
        configuration."""
        c = len(self.continuous)
        index = {v: j for j, v in enumerate(self.continuous)}
        a, var, B = np.zeros(c), np.zeros(c), np.zeros((c, c))
        for j, v in enumerate(self.continuous):
            node = self.nodes[v]
            u = tuple(config[p] for p in node.discrete_parents)
            a[j] = node.intercept[u]
            var[j] = node.variance[u]
            for p, b in zip(node.continuous_parents, node.coef[u]):
                B[j, index[p]] = b
        return a, B, var

    def joint_gaussian(self, u: int) -> tuple:
        """Mean and covariance of the continuous nodes at continuous
        configuration ``u``, in moment form (unit triangular solves)."""
        a, B, var = self._gaussians[u]
        L = np.eye(len(a)) - B
        mean = solve_triangular(L, a, lower=True, unit_diagonal=True)
        F = solve_triangular(L, np.diag(np.sqrt(var)), lower=True, unit_diagonal=True)
        return mean, F @ F.T

    def _condition(self, u: int, obs: np.ndarray, x_obs: np.ndarray) -> tuple:
        """Log density of the observed cells and the posterior of the hidden
        ones for the rows ``x_obs`` (all with the observed mask ``obs``).

        With the whitened residual targets :math:`r = t - W_O x_O` (``t =
        D^{-1/2} a``), the hidden means are :math:`G r` (``G = K_{HH}^{-1}
        W_H^\top``) and the least-squares residual is :math:`P r`, ``P = I -
        W_H G``. For many rows both are taken as the affine maps of
        :math:`x_O` they are, formed once (small matrices), so the rows take
        one product each: ``x_O [E | -P W_O^T] + [e | P t]``, ``E`` the
        identity on the observed columns (which keep their values exactly)
        and :math:`-(G W_O)^\top` on the hidden ones. For a few rows forming
        the maps costs more than it saves, and :math:`r`, :math:`G r` and
        :math:`r - W_H G r` are computed directly.
        """
        a, B, var = self._gaussians[u]
        c = len(a)
        scale = 1.0 / np.sqrt(var)
        W = scale[:, None] * (np.eye(c) - B)
        target = scale * a  # (c,)
        hid = ~obs
        Wo = W[:, obs]  # (c, o)
        logdet = np.sum(np.log(var))
        cov = np.zeros((c, c))
        o = int(obs.sum())
        gain = Wh = None
        if hid.any():
            Wh = W[:, hid]
            R = cholesky(Wh.T @ Wh, lower=False)
            gain = cho_solve((R, False), Wh.T)  # (h, c): G
            logdet += 2 * np.sum(np.log(np.diag(R)))
            cov[np.ix_(hid, hid)] = cho_solve((R, False), np.eye(R.shape[0]))
        if len(x_obs) < _MAPPED_ROWS:
            rhs = target[None, :] - x_obs @ Wo.T  # (n, c)
            means = np.zeros((len(x_obs), c))
            means[:, obs] = x_obs
            resid = rhs
            if gain is not None:
                mh = rhs @ gain.T  # (n, h)
                means[:, hid] = mh
                resid = rhs - mh @ Wh.T
        else:
            maps = np.zeros((o, 2 * c))  # x_O -> (means, residuals)
            shift = np.zeros(2 * c)
            maps[:, :c][:, obs] = np.eye(o)
            if gain is not None:
                proj = np.eye(c) - Wh @ gain  # P
                maps[:, :c][:, hid] = -(gain @ Wo).T
                shift[:c][hid] = gain @ target
                maps[:, c:] = -(proj @ Wo).T
                shift[c:] = proj @ target
            else:
                maps[:, c:] = -Wo.T
                shift[c:] = target
            means = x_obs @ maps[:, :c]
            means += shift[:c]
            resid = x_obs @ maps[:, c:]
            resid += shift[c:]
        quad = np.einsum("nc,nc->n", resid, resid)
        log_density = -0.5 * (o * _LOG_2PI + logdet + quad)
        return log_density, means, cov

    def posterior(
        self, codes: np.ndarray, values: np.ndarray, soft: dict | None = None
    ) -> CLGPosterior:
        """Exact posteriors of every row.

        Parameters
        ----------
        codes : ndarray of shape (n, n_discrete)
            Discrete evidence, ``-1`` where unobserved.
        values : ndarray of shape (n, n_continuous)
            Continuous evidence, NaN where unobserved.
        soft : dict, default=None
            ``{j: log likelihood}`` of discrete node ``j``, of shape
            ``(1, card)`` or ``(n, card)``: virtual evidence, multiplied into
            every configuration's weight.

        Returns
        -------
        CLGPosterior
        """
        n, c = len(values), len(self.continuous)
        U = len(self.components)
        observed = ~np.isnan(values)
        log_lik = np.zeros((n, U))
        means = None
        covs, pattern, masks = [], np.zeros(n, dtype=int), []
        if n and (observed == observed[0]).all():  # one pattern: no sorting
            groups = [(observed[0], slice(None))]
        else:
            groups = _patterns(observed)
        for p, (obs, rows) in enumerate(groups):
            pattern[rows] = p
            masks.append(obs)
            covs.append(np.zeros((U, c, c)))
            x_obs = (
                values[rows][:, obs]
                if isinstance(rows, slice)
                else values[np.ix_(rows, obs)]
            )
            for u in range(U):
                ld, m, cov = self._condition(u, obs, x_obs)
                log_lik[rows, u] = ld
                if U == 1 and isinstance(rows, slice):  # the rows' means as they are
                    means = m[:, None, :]
                else:
                    if means is None:
                        means = np.zeros((n, U, c))
                    means[rows, u] = m
                covs[p][u] = cov
        if means is None:
            means = np.zeros((n, U, c))
        log_joint = self.log_prior[None, :] + log_lik[:, self.component]
        for j in range(len(self.discrete)):
            seen = codes[:, j] >= 0
            if seen.any():
                clash = self.configs[None, :, j] != codes[seen, j][:, None]
                log_joint[seen] = np.where(clash, -np.inf, log_joint[seen])
        for j, lik in (soft or {}).items():
            log_joint = log_joint + np.asarray(lik, dtype=float)[:, self.configs[:, j]]
        if log_joint.shape[1] == 1:
            log_evidence = log_joint[:, 0].copy()
        else:
            log_evidence = logsumexp(log_joint, axis=1)
        with np.errstate(invalid="ignore"):
            log_joint = log_joint - log_evidence[:, None]
        log_joint[~np.isfinite(log_evidence)] = -np.inf
        return CLGPosterior(
            log_evidence,
            log_joint,
            self.configs,
            self.component,
            self.components,
            means,
            np.array(covs).reshape(-1, U, c, c),
            pattern,
            self,
            np.array(masks).reshape(-1, c),
        )

    def sample(self, n: int, rng) -> tuple:
        """Forward sampling: discrete codes ``(n, n_discrete)`` and continuous
        values ``(n, n_continuous)``."""
        p = np.exp(self.log_prior - logsumexp(self.log_prior))
        k = rng.choice(len(p), size=n, p=p)
        codes = self.configs[k]
        u = self.component[k]
        values = np.zeros((n, len(self.continuous)))
        for j in range(len(self.continuous)):
            a = np.array([g[0][j] for g in self._gaussians])[u]
            b = np.array([g[1][j] for g in self._gaussians])[u]
            var = np.array([g[2][j] for g in self._gaussians])[u]
            mean = a + np.einsum("nc,nc->n", b, values)
            values[:, j] = mean + np.sqrt(var) * rng.standard_normal(n)
        return codes, values
