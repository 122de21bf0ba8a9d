"""scikit-learn's Bayesian Gaussian mixture tests, run against bayeskit's class."""

from peer_suite import load

from bayeskit import BayesianGaussianMixture

_bayeskit_peer_module = "sklearn.mixture.tests.test_bayesian_mixture"
globals().update(
    load(
        _bayeskit_peer_module,
        {"sklearn.mixture": {"BayesianGaussianMixture": BayesianGaussianMixture}},
    )
)

# Tests of the peer that bayeskit does not pass yet: strict expected failures,
# so that a fix must take its entry out of this list.
KNOWN_FAILING = frozenset()
