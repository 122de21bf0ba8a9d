"""The stick-breaking prior of a Dirichlet process's weights, truncated at ``K``.

A Dirichlet process of concentration ``gamma`` gives a mixture's weights by
breaking a stick: ``v_k ~ Beta(1, gamma)`` independently and

.. math::

    \\pi_k = v_k \\prod_{j < k} (1 - v_j)

(Sethuraman 1994). Variational inference truncates it at ``K`` components
and keeps a Beta posterior per stick (Blei and Jordan 2006, section 3):
after expected counts ``n_k``, ``v_k ~ Beta(a_k + n_k, b_k + sum_{j > k}
n_j)``, so a component is weighted by its own count against all the counts
after it. The message into the component node is

.. math::

    E[\\log \\pi_k] = E[\\log v_k] + \\sum_{j < k} E[\\log(1 - v_j)],

and the evidence lower bound subtracts the sticks' Kullback-Leibler
divergence from their prior. As scikit-learn's ``BayesianGaussianMixture``,
every one of the ``K`` sticks keeps its Beta (the last is not fixed at one),
and the weights of the fitted mixture are the sticks' expected weights,
normalised.

References
----------
.. [1] J. Sethuraman, "A constructive definition of Dirichlet priors",
   *Statistica Sinica* 4, 1994, pp. 639-650.
.. [2] D. M. Blei and M. I. Jordan, "Variational inference for Dirichlet
   process mixtures", *Bayesian Analysis* 1(1), 2006, pp. 121-143.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import betaln

from .beta import Beta

__all__ = ["StickBreaking"]


@dataclass(frozen=True, eq=False)
class StickBreaking:
    """Independent Beta distributions on the ``K`` sticks of a truncated
    Dirichlet process.

    Parameters
    ----------
    sticks : Beta
        ``Beta(a_k, b_k)`` of every stick, shape ``(K,)``, every value
        positive.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.priors import StickBreaking
    >>> prior = StickBreaking.dirichlet_process(concentration=1.0, n_components=3)
    >>> post = prior.posterior(np.array([6.0, 3.0, 1.0]))
    >>> post.sticks.alpha, post.sticks.beta
    (array([7., 4., 2.]), array([5., 2., 1.]))
    """

    sticks: Beta

    def __post_init__(self):
        a, b = np.broadcast_arrays(self.sticks.alpha, self.sticks.beta)
        if a.ndim != 1 or not ((a > 0).all() and (b > 0).all()):
            raise ValueError(
                "the sticks of a stick-breaking prior must be one-dimensional and "
                "positive"
            )
        object.__setattr__(self, "sticks", Beta(a, b))

    @classmethod
    def dirichlet_process(cls, concentration: float, n_components: int):
        """The prior ``v_k ~ Beta(1, gamma)`` of a Dirichlet process of
        concentration ``gamma``, truncated at ``n_components`` sticks."""
        k = int(n_components)
        return cls(Beta(np.ones(k), np.full(k, float(concentration))))

    def posterior(self, counts) -> StickBreaking:
        """``Beta(a_k + n_k, b_k + sum_{j > k} n_j)`` for every stick (Blei
        and Jordan 2006, eqs. 18-19).

        Parameters
        ----------
        counts : array-like of shape (K,)
            Expected counts of the components.
        """
        n = np.asarray(counts, dtype=float)
        after = np.concatenate([np.cumsum(n[::-1])[-2::-1], [0.0]])
        return StickBreaking(self.sticks.posterior(n, after))

    def expected_log(self) -> np.ndarray:
        """``E[log pi_k] = E[log v_k] + sum_{j < k} E[log(1 - v_j)]``,
        shape ``(K,)``."""
        log_v, log_rest = self.sticks.expected_log()
        return log_v + np.concatenate([[0.0], np.cumsum(log_rest)[:-1]])

    def mean(self) -> np.ndarray:
        """The expected weights ``E[v_k] prod_{j<k} E[1 - v_j]``, normalised
        to sum to one (the truncation leaves the mass of the sticks after
        ``K`` out)."""
        a, b = self.sticks.alpha, self.sticks.beta
        total = a + b
        w = a / total * np.concatenate([[1.0], np.cumprod(b / total)[:-1]])
        return w / w.sum()

    def log_normalizer(self) -> np.ndarray:
        """``-log B(a_k, b_k)`` of every stick: its Beta's log normalising
        constant, shape ``(K,)``."""
        return -betaln(self.sticks.alpha, self.sticks.beta)

    def kl(self, prior: StickBreaking) -> float:
        """``KL(self || prior)``: the sum of the sticks' Beta divergences
        (:meth:`Beta.kl`)."""
        return float(np.sum(self.sticks.kl(prior.sticks)))
