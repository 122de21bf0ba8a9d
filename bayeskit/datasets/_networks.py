"""Classic Bayesian networks, bundled as BIF files (no download).

The files are those of the bnlearn Bayesian network repository; see
``data/NETWORKS.md`` for their provenance.
"""

from __future__ import annotations

from importlib import resources

__all__ = ["load_network"]

# The bundled networks: name -> (variables, edges, free parameters, source).
_NETWORKS = {
    "asia": (8, 8, 18, "Lauritzen and Spiegelhalter (1988)"),
    "child": (20, 25, 230, "Spiegelhalter and Cowell (1992)"),
    "insurance": (27, 52, 1008, "Binder, Koller, Russell and Kanazawa (1997)"),
    "alarm": (37, 46, 509, "Beinlich, Suermondt, Chavez and Cooper (1989)"),
}


def load_network(name):
    """A classic Bayesian network, with its published tables.

    Parameters
    ----------
    name : {'asia', 'child', 'insurance', 'alarm'}
        The network:

        - ``'asia'``: 8 variables, 8 edges, 18 free parameters; a toy
          diagnosis of dyspnoea (Lauritzen and Spiegelhalter, 1988);
        - ``'child'``: 20 variables, 25 edges, 230 parameters; congenital
          heart disease in newborns (Spiegelhalter and Cowell, 1992);
        - ``'insurance'``: 27 variables, 52 edges, 1008 parameters; car
          insurance risk (Binder et al., 1997);
        - ``'alarm'``: 37 variables, 46 edges, 509 parameters; patient
          monitoring in intensive care (Beinlich et al., 1989).

    Returns
    -------
    BayesianNetwork
        Every table set (read by :func:`bayeskit.io.read_bif` from the BIF
        file of the bnlearn repository, Scutari 2010); states are strings.

    References
    ----------
    .. [1] S. L. Lauritzen and D. J. Spiegelhalter, "Local computations with
       probabilities on graphical structures and their application to expert
       systems", Journal of the Royal Statistical Society B, 50(2), 1988.
    .. [2] D. J. Spiegelhalter and R. G. Cowell, "Learning in probabilistic
       expert systems", Bayesian Statistics 4, 1992.
    .. [3] J. Binder, D. Koller, S. Russell and K. Kanazawa, "Adaptive
       probabilistic networks with hidden variables", Machine Learning,
       29(2-3), 1997.
    .. [4] I. A. Beinlich, H. J. Suermondt, R. M. Chavez and G. F. Cooper,
       "The ALARM monitoring system", Proceedings of the 2nd European
       Conference on Artificial Intelligence in Medicine, 1989.
    .. [5] M. Scutari, "Learning Bayesian networks with the bnlearn R
       package", Journal of Statistical Software, 35(3), 2010.

    Examples
    --------
    >>> from bayeskit.datasets import load_network
    >>> asia = load_network("asia")
    >>> asia.parents_["either"]
    ('lung', 'tub')
    >>> asia.query("lung", evidence={"dysp": "yes", "smoke": "yes"}).round(4)
    lung
    yes    0.1483
    no     0.8517
    Name: P(lung | evidence), dtype: float64
    """
    from ..io import read_bif

    if not isinstance(name, str) or name not in _NETWORKS:
        raise ValueError(f"name must be one of {sorted(_NETWORKS)!r}, got {name!r}")
    path = resources.files("bayeskit.datasets") / "data" / f"{name}.bif"
    with resources.as_file(path) as f:
        return read_bif(f)
