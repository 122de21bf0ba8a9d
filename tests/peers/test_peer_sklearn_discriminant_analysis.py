"""scikit-learn's discriminant analysis tests, run against bayeskit's classes."""

from peer_suite import load

from bayeskit import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis

_bayeskit_peer_module = "sklearn.tests.test_discriminant_analysis"
globals().update(
    load(
        _bayeskit_peer_module,
        {
            "sklearn.discriminant_analysis": {
                "LinearDiscriminantAnalysis": LinearDiscriminantAnalysis,
                "QuadraticDiscriminantAnalysis": QuadraticDiscriminantAnalysis,
            }
        },
    )
)

# Tests of the peer that bayeskit does not pass yet: strict expected failures,
# so that a fix must take its entry out of this list.
KNOWN_FAILING = frozenset()
