"""hmmlearn's ``test_variational_gaussian`` tests, against bayeskit's
variational HMMs."""

from peer_suite import hmmlearn_substitutes, load

_bayeskit_peer_module = "hmmlearn.tests.test_variational_gaussian"
globals().update(load(_bayeskit_peer_module, hmmlearn_substitutes()))

# Tests of the peer that bayeskit does not pass yet: strict expected failures,
# so that a fix must take its entry out of this list.
KNOWN_FAILING = frozenset()
