"""Classic Bayesian networks, bundled as BIF files (no download), and two
linear-Gaussian networks of the same repository as JSON files.

The files are those of the bnlearn Bayesian network repository; see
``data/NETWORKS.md`` for their provenance.
"""

from __future__ import annotations

import json
from importlib import resources

import numpy as np

__all__ = ["load_network"]

# The bundled networks: name -> (variables, edges, free parameters, source).
_NETWORKS = {
    "asia": (8, 8, 18, "Lauritzen and Spiegelhalter (1988)"),
    "child": (20, 25, 230, "Spiegelhalter and Cowell (1992)"),
    "insurance": (27, 52, 1008, "Binder, Koller, Russell and Kanazawa (1997)"),
    "alarm": (37, 46, 509, "Beinlich, Suermondt, Chavez and Cooper (1989)"),
}

# The linear-Gaussian networks: name -> (variables, edges, source).
_GAUSSIAN = {
    "ecoli70": (46, 70, "Opgen-Rhein and Strimmer (2007)"),
    "magic-irri": (64, 102, "Scutari, Howell, Balding and Mackay (2014)"),
}


def load_network(name):
    """A classic Bayesian network, with its published tables.

    Parameters
    ----------
    name : {'asia', 'child', 'insurance', 'alarm', 'ecoli70', 'magic-irri'}
        The network:

        - ``'asia'``: 8 variables, 8 edges, 18 free parameters; a toy
          diagnosis of dyspnoea (Lauritzen and Spiegelhalter, 1988);
        - ``'child'``: 20 variables, 25 edges, 230 parameters; congenital
          heart disease in newborns (Spiegelhalter and Cowell, 1992);
        - ``'insurance'``: 27 variables, 52 edges, 1008 parameters; car
          insurance risk (Binder et al., 1997);
        - ``'alarm'``: 37 variables, 46 edges, 509 parameters; patient
          monitoring in intensive care (Beinlich et al., 1989);
        - ``'ecoli70'``: a linear-Gaussian network, 46 continuous variables
          and 70 edges; the expression of E. coli genes (Opgen-Rhein and
          Strimmer, 2007);
        - ``'magic-irri'``: a linear-Gaussian network, 64 continuous variables
          and 102 edges; genetic markers and traits of a MAGIC rice
          population (Scutari et al., 2014).

    Returns
    -------
    BayesianNetwork
        Every table set (read by :func:`bayeskit.io.read_bif` from the BIF
        file of the bnlearn repository, Scutari 2010); states are strings.
        A linear-Gaussian network has every node continuous
        (``continuous_``), its regressions in ``cpds_`` and
        :meth:`~bayeskit.BayesianNetwork.get_cpd`.

    Notes
    -----
    The linear-Gaussian networks are the JSON copies of the repository's
    ``bn.fit`` objects that pgmpy 1.1.2 ships (``utils/example_models``),
    with every number rounded to 4 decimals. Each node has its
    ``coefficients`` and a residual parameter named ``variance``; bnlearn's
    own objects hold the residual *standard deviation* (``sd``), so which of
    the two the copies hold was established before reading them:

    - the field is the variance :math:`\\sigma^2`. pgmpy's loader
      (``LinearGaussianBayesianNetwork.load``) reads it so, as the
      ``std=sqrt(variance)`` of its ``LinearGaussianCPD``, and pgmpy's script
      that converts bnlearn's objects to this format
      (``devtools/scripts/convert_bnrep_models.R`` in its repository)
      writes ``variance = sd^2``;
    - the published numbers say so too: in ``magic-irri`` every root is a
      genetic marker of inbred lines, coded 0 or 2, whose variance is fixed
      by its mean :math:`m`, :math:`m (2 - m)` (times :math:`n / (n - 1)`
      for the sample estimate). For all 33 roots the field equals it within
      the rounding (the ratio is 1.0007 to 1.0014), whereas its square (the
      variance were the field a standard deviation) would be 0.21 to 0.996
      of it, which would need many heterozygous lines (coded 1), as inbred
      lines are not. A test checks this.

    So a node's regression has ``variance`` the field as written.

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
    .. [6] R. Opgen-Rhein and K. Strimmer, "From correlation to causation
       networks: a simple approximate learning algorithm and its application
       to high-dimensional plant gene expression data", BMC Systems Biology,
       1(37), 2007.
    .. [7] M. Scutari, P. Howell, D. J. Balding and I. Mackay, "Multiple
       trait analysis of genetic mapping populations using Bayesian
       networks", Genetics, 198(1), 2014.

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

    known = {**_NETWORKS, **_GAUSSIAN}
    if not isinstance(name, str) or name not in known:
        raise ValueError(f"name must be one of {sorted(known)!r}, got {name!r}")
    if name in _GAUSSIAN:
        return _linear_gaussian(name)
    path = resources.files("bayeskit.datasets") / "data" / f"{name}.bif"
    with resources.as_file(path) as f:
        return read_bif(f)


def _linear_gaussian(name):
    """The linear-Gaussian network ``name`` from its bundled JSON file (see
    :func:`load_network`'s Notes: its ``variance`` is a variance)."""
    from .. import BayesianNetwork
    from ..graph.clg import CLGNode
    from ..graph.dag import DAG
    from ..network._hybrid_stats import install_hybrid

    path = resources.files("bayeskit.datasets") / "data" / f"{name}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    nodes = list(data["nodes"])
    edges = [tuple(e) for e in data["arcs"]]
    dag = DAG(edges, nodes=nodes)
    regressions = {}
    for v in nodes:
        cpd = data["cpds"][v]
        parents = tuple(dag.parents(v))
        coef = cpd["coefficients"]
        regressions[v] = CLGNode(
            (),
            parents,
            np.asarray(float(coef["(Intercept)"][0])),
            np.array([float(coef[p][0]) for p in parents]),
            np.asarray(float(cpd["variance"][0])),
        )
    network = BayesianNetwork(edges, continuous=nodes)
    network._validate_params()
    install_hybrid(
        network, (tuple(nodes), tuple(nodes), tuple(edges)), None, regressions
    )
    return network
