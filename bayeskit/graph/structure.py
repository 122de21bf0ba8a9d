"""Latent structures: the discrete skeletons that estimators put emissions on.

A structure knows only state indices and log-potentials. :class:`LatentNode`
is the single class (or component) node of naive Bayes, LDA, QDA and the
mixtures: the smallest tree of :mod:`bayeskit.graph.tree`, whose posterior is
the normalised product of its prior and the emission message.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .tree import node_belief

__all__ = ["LatentNode", "NodePosterior"]


@dataclass(frozen=True)
class NodePosterior:
    """Posterior over one latent node for ``n`` rows.

    Attributes
    ----------
    log_resp : ndarray of shape (n, n_states)
        ``log P(z = k | x)``; a row whose every state has zero probability
        stays ``-inf``.
    log_joint : ndarray of shape (n, n_states)
        ``log P(z = k) + log p(x | z = k)``, before normalisation.
    log_evidence : ndarray of shape (n,)
        ``log p(x)``, the normaliser of each row.
    """

    log_resp: np.ndarray
    log_joint: np.ndarray
    log_evidence: np.ndarray


@dataclass(frozen=True)
class LatentNode:
    """One discrete latent node with ``n_states`` states and no parents."""

    n_states: int

    def posterior(self, log_lik: np.ndarray, log_prior: np.ndarray) -> NodePosterior:
        """Sum-product on the one-node tree.

        Parameters
        ----------
        log_lik : ndarray of shape (n, n_states)
            The emission message: ``log p(x | z = k)`` for every row and state.
        log_prior : ndarray of shape (n_states,)
            ``log P(z = k)``.
        """
        log_joint = log_lik + log_prior
        log_resp, log_evidence = node_belief(log_joint)
        return NodePosterior(log_resp, log_joint, log_evidence)

    def decode(self, log_lik: np.ndarray, log_prior: np.ndarray) -> np.ndarray:
        """Max-product on the one-node tree: the most probable state per row."""
        return np.argmax(log_lik + log_prior, axis=1)
