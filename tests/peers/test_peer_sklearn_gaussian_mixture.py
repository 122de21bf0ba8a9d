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
        "test_gaussian_mixture_fit_predict[float64-3-300-1e-07]",
        "test_gaussian_mixture_fit_predict[float64-4-300-0.1]",
        "test_gaussian_mixture_precisions_init[float64-42-diag]",
        "test_gaussian_mixture_precisions_init[float64-42-full]",
        "test_gaussian_mixture_precisions_init[float64-42-spherical]",
        "test_gaussian_mixture_precisions_init[float64-42-tied]",
        "test_gaussian_mixture_setting_best_params",
        "test_init",
        "test_init_means_not_duplicated[42-k-means++]",
        "test_init_means_not_duplicated[42-random_from_data]",
        "test_means_for_all_inits[float64-42-k-means++]",
        "test_means_for_all_inits[float64-42-random_from_data]",
        "test_regularisation",
        "test_sample",
    ]
)
