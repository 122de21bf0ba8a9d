"""pgmpy's parameter estimators answered by bayeskit's m-estimate, for pgmpy's
own test modules (``test_peer_pgmpy_mle.py`` and
``test_peer_pgmpy_bayesian_estimator.py``).

Each CPD is a :class:`~bayeskit.BayesianNetwork` fitted on the model's columns
(``missing='available'``: a row counts in every family it observes whole, as
pgmpy counts) and returned as pgmpy's own ``TabularCPD`` by ``to_pgmpy``.

pgmpy's priors are bayeskit's m-estimate ``(n_ua + m p_a) / (n_u + m)``
(Mitchell 1997, section 6.9.1.1; Heckerman, Geiger and Chickering 1995):

- maximum likelihood is ``m = 0`` (a parent configuration never seen is
  uniform, as in pgmpy);
- ``BDeu`` with equivalent sample size ``N'`` is ``m = N' / q`` for a variable
  whose parents take ``q`` joint states, ``p`` uniform;
- ``K2`` is one pseudo-count per cell, ``m = k`` for ``k`` states;
- ``dirichlet`` pseudo-counts ``alpha_a`` (the same in every parent
  configuration) are ``m = sum_a alpha_a`` and ``p_a = alpha_a / m``.
"""

import math

import numpy as np
import pytest

from bayeskit import BayesianNetwork


class _Estimator:
    """pgmpy's parameter estimators' interface, on bayeskit."""

    def __init__(self, model, data, state_names=None, **kwargs):
        if getattr(model, "latents", None):
            raise ValueError(
                f"Found latent variables: {sorted(model.latents)!r}; their CPDs "
                "need EM (bayeskit: BayesianNetwork(latent=[...]))"
            )
        self.model, self.data = model, data
        if not hasattr(model, "get_parents"):  # a JunctionTree: potentials only
            return
        nodes = list(model.nodes())
        declared = dict(state_names or {})
        self.state_names = {
            v: list(declared[v])
            if v in declared
            else sorted(data[v].dropna().unique().tolist())
            for v in nodes
        }

    def estimate_potentials(self):
        pytest.skip(
            "not applicable: a pgmpy JunctionTree's clique potentials; bayeskit "
            "estimates the CPDs of Bayesian networks"
        )

    def _cpd(self, node, m, p=None):
        nodes = list(self.model.nodes())
        bn = BayesianNetwork(
            [tuple(e) for e in self.model.edges()],
            m={v: (m if v == node else 1.0) for v in nodes},
            p=None if p is None else {node: p},
            states=self.state_names,
            missing="available",
        )
        cols = [v for v in nodes if v in self.data.columns]
        bn.fit(self.data[cols])
        return bn.to_pgmpy().get_cpds(node)

    def _q(self, node):
        return math.prod(len(self.state_names[u]) for u in self.model.get_parents(node))


class MaximumLikelihoodEstimator(_Estimator):
    """bayeskit in place of pgmpy's ``MaximumLikelihoodEstimator``: ``m=0``."""

    def estimate_cpd(self, node, weighted=False):
        return self._cpd(node, 0.0)

    def get_parameters(self, n_jobs=1, weighted=False):
        return [self.estimate_cpd(v) for v in self.model.nodes()]


class BayesianEstimator(_Estimator):
    """bayeskit in place of pgmpy's ``BayesianEstimator``: its priors as the
    m-estimate (see the module)."""

    def estimate_cpd(
        self,
        node,
        prior_type="BDeu",
        pseudo_counts=None,
        equivalent_sample_size=5,
        weighted=False,
    ):
        k = len(self.state_names[node])
        kind = prior_type.lower()
        if kind == "bdeu":
            ess = equivalent_sample_size
            if isinstance(ess, dict):
                ess = ess.get(node, 0)
            return self._cpd(node, float(ess) / self._q(node))
        if kind == "k2":
            return self._cpd(node, float(k))
        if kind != "dirichlet":
            raise ValueError(f"prior_type {prior_type!r} is not one of pgmpy's")
        alpha = np.asarray(pseudo_counts, dtype=float)
        if alpha.ndim == 0:
            alpha = np.full((k, 1), float(alpha))
        if alpha.shape[0] != k or not np.all(alpha == alpha[:, :1]):
            raise ValueError(
                "pseudo_counts that differ between parent configurations have no "
                "m-estimate (one prior distribution of the states per variable)"
            )
        alpha = alpha[:, 0]
        m = float(alpha.sum())
        if m == 0:
            return self._cpd(node, 0.0)
        return self._cpd(node, m, alpha / m)

    def get_parameters(
        self,
        prior_type="BDeu",
        equivalent_sample_size=5,
        pseudo_counts=None,
        n_jobs=1,
        weighted=False,
    ):
        out = []
        for v in self.model.nodes():
            counts = pseudo_counts
            if isinstance(pseudo_counts, dict):
                counts = pseudo_counts[v]
            out.append(
                self.estimate_cpd(
                    v,
                    prior_type=prior_type,
                    pseudo_counts=counts,
                    equivalent_sample_size=equivalent_sample_size,
                )
            )
        return out


SUBSTITUTES = {
    "pgmpy.estimators": {
        "MaximumLikelihoodEstimator": MaximumLikelihoodEstimator,
        "BayesianEstimator": BayesianEstimator,
    }
}
