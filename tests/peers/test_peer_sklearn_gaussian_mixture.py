"""scikit-learn's Gaussian mixture tests, run against bayeskit's class."""

from peer_suite import load

from bayeskit import GaussianMixture

_bayeskit_peer_module = "sklearn.mixture.tests.test_gaussian_mixture"
globals().update(
    load(
        _bayeskit_peer_module, {"sklearn.mixture": {"GaussianMixture": GaussianMixture}}
    )
)

# Tests of the peer that bayeskit does not pass yet: strict expected failures,
# so that a fix must take its entry out of this list.
KNOWN_FAILING = frozenset(
    [
        "test_check_means",
        "test_check_precisions",
        "test_check_weights",
        "test_gaussian_mixture_all_init_does_not_estimate_gaussian_parameters[42]",
        "test_gaussian_mixture_fit_convergence_warning",
        "test_gaussian_mixture_precisions_init[42-float64-diag]",
        "test_gaussian_mixture_precisions_init[42-float64-full]",
        "test_gaussian_mixture_precisions_init[42-float64-spherical]",
        "test_gaussian_mixture_precisions_init[42-float64-tied]",
        "test_gaussian_mixture_setting_best_params",
        "test_regularisation",
        "test_sample",
    ]
)
