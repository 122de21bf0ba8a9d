"""What LDA and QDA share: validation, statistics and covariance estimates.

Their statistics are those of the Gaussian family with every class's scatter
(:mod:`bayeskit.emissions`; the tied structure keeps them per class too),
the number of rows of positive weight of every class, and, for the covariance
estimates that need all the data at once (Ledoit-Wolf shrinkage, a
``covariance_estimator``), a part that does not merge.

Missing cells (NaN) are latent: the fit is EM over them with the class
known (Ghahramani and Jordan 1994), from the available-case means and
covariances of every class, accelerated by SQUAREM [4]; the statistics are
the expected ones under the fitted parameters, and prediction marginalises
the missing cells.

References
----------
.. [1] O. Ledoit and M. Wolf, "A well-conditioned estimator for
   large-dimensional covariance matrices", *Journal of Multivariate
   Analysis* 88(2), 2004, pp. 365-411.
.. [2] Z. Ghahramani and M. I. Jordan, "Supervised learning from incomplete
   data via an EM approach", *Advances in Neural Information Processing
   Systems* 6, 1994, pp. 120-127.
.. [3] R. J. A. Little and D. B. Rubin, *Statistical Analysis with Missing
   Data*, 2nd ed., Wiley, 2002.
.. [4] R. Varadhan and C. Roland, "Simple and globally convergent methods
   for accelerating the convergence of any EM algorithm", *Scandinavian
   Journal of Statistics* 35(2), 2008, pp. 335-353.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy import linalg
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from .._base.classifier import BaseGenerativeClassifier, Triple, float_input
from .._base.stored import forget_triple, stored_triple
from .._logmath import has_nan
from .._validation import validate_data
from .._warnings import warn
from ..emissions import FULL, TIED, Gaussian, GaussianStats
from ..priors.niw import NormalInverseWishart

__all__: list[str] = []

_EPS = np.finfo(np.float64).eps


# -- statistics -----------------------------------------------------------------
@dataclass(frozen=True)
class _DAStats:
    """Gaussian statistics, the rows of positive weight of every class, and the
    parts of a covariance estimate that need all the data at once (``whole``).

    ``gaussian`` and ``rows`` add; statistics with a ``whole`` part do not.
    """

    gaussian: GaussianStats
    rows: np.ndarray
    whole: object = None

    def __add__(self, other):
        whole = self.whole if self.whole is not None else other.whole
        if whole is not None:
            raise ValueError(whole.merge_error)
        return _DAStats(self.gaussian + other.gaussian, self.rows + other.rows)


@dataclass(frozen=True)
class _LedoitWolfStats:
    """The fourth moments Ledoit-Wolf shrinkage needs.

    ``q_class[k] = sum_i w_i ||(x_i - mu_k) / sigma_k||^4`` over class k's rows
    and ``q_total`` the same around the overall mean and standard deviation.
    They depend on the means of all the data, so they do not merge.
    """

    q_class: np.ndarray
    q_total: float | None
    merge_error = (
        "shrinkage='auto' (Ledoit-Wolf) needs all the data at once: use fit, or "
        "a float shrinkage with partial_fit"
    )


@dataclass(frozen=True)
class _EstimatedCovariances:
    """Covariances fitted by a ``covariance_estimator`` on each class's rows
    (``class_cov``) and on all the rows (``total_cov``, when needed)."""

    class_cov: np.ndarray
    total_cov: np.ndarray | None
    merge_error = (
        "a covariance_estimator needs all the data at once: use fit, not partial_fit"
    )


def _std(variances):
    std = np.sqrt(variances)
    return np.where(std == 0, 1.0, std)


def _ledoit_wolf(cov: np.ndarray, q: float, weight: float) -> np.ndarray:
    """Ledoit-Wolf shrunk covariance of standardized data, scaled back.

    ``cov`` is the maximum-likelihood covariance, ``q`` the weighted sum of
    the fourth powers of the norms of the standardized rows. The shrinkage
    intensity is Ledoit and Wolf's (2004), on the correlation matrix as
    scikit-learn's discriminant analysis does.
    """
    d = cov.shape[0]
    std = _std(np.diag(cov))
    corr = cov / np.outer(std, std)
    mu = np.trace(corr) / d
    delta_ = np.sum(corr**2)
    beta = (q / weight - delta_) / (d * weight)
    delta = (delta_ - 2.0 * mu * np.trace(corr) + d * mu**2) / d
    beta = min(beta, delta)
    alpha = 0.0 if beta == 0 else beta / delta
    shrunk = (1.0 - alpha) * corr + alpha * mu * np.eye(d)
    return shrunk * np.outer(std, std)


def _shrunk(cov: np.ndarray, alpha: float) -> np.ndarray:
    """``(1 - alpha) cov + alpha mu I`` with ``mu`` the mean variance."""
    d = cov.shape[0]
    return (1.0 - alpha) * cov + alpha * np.trace(cov) / d * np.eye(d)


def _fourth_moment(Xc: np.ndarray, std: np.ndarray, w: np.ndarray, labels, k):
    """``sum_i w_i ||Xc_i / std_i||^4`` per label (``std`` per row's label)."""
    z = np.einsum("ij,ij->i", Xc / std, Xc / std)
    return np.bincount(labels, w * z**2, minlength=k)


def _pinv_factor(cov: np.ndarray) -> np.ndarray:
    """``W`` of shape ``(d, rank)`` with ``W W^T`` the pseudo-inverse of ``cov``.

    The rank is the pseudo-inverse's (``scipy.linalg.pinv``,
    ``numpy.linalg.matrix_rank``): eigenvalues at or below ``d * eps * max``
    count as zero. A covariance that is singular in exact arithmetic (fewer
    rows than features, duplicated or constant columns) has null-space
    eigenvalues of the order of ``eps * max`` after rounding, on either side
    of the ``eps * max`` cut-off of LAPACK's least squares, so that cut-off
    keeps some of them at random and the solution then has entries of order
    ``1 / eps``; ``d * eps * max`` is above the rounding (Golub and Van Loan,
    *Matrix Computations*, 4th ed., 2013, section 5.4.1). ``W W^T mu`` is then
    the minimum-norm least-squares solution of ``cov x = mu``, scikit-learn's
    ``lstsq(cov, mu)`` whenever its rank is the exact one.

    That cut-off is in the units of the features: beside a feature of order
    1e8, one of order 1e-8 has eigenvalues below it although nothing is
    collinear. So the correlation matrix is tried first: when it is full rank
    to rounding (a test no rescaling of the features changes), ``cov`` is
    invertible and its factor is that of the correlation matrix, rescaled;
    only a covariance that is singular in every unit gets the minimum-norm
    pseudo-inverse.
    """
    factor = _correlation_factor(cov)
    if factor is not None:
        return factor
    evals, evecs = linalg.eigh(cov)
    keep = evals > len(evals) * _EPS * max(evals.max(), 0.0)
    if not keep.any():
        raise np.linalg.LinAlgError("the within-class covariance is zero")
    return evecs[:, keep] / np.sqrt(evals[keep])


def _correlation_factor(cov: np.ndarray) -> np.ndarray | None:
    """``W`` with ``W W^T = cov^{-1}`` from the correlation matrix, or None
    when that matrix is singular to rounding (an eigenvalue at or below
    ``d * eps * max``, or a zero variance): the rank test of
    :func:`_pinv_factor`, in units no rescaling of the features changes."""
    var = np.diag(cov)
    if not np.all(var > 0):
        return None
    std = np.sqrt(var)
    evals, evecs = linalg.eigh(cov / np.outer(std, std))
    if evals.min() <= len(var) * _EPS * evals.max():
        return None
    return (evecs / np.sqrt(evals)) / std[:, None]


def _check_priors(priors, k: int) -> np.ndarray:
    """Priors as a probability vector; renormalised with a warning (as
    scikit-learn's LDA) when they do not sum to one."""
    p = np.asarray(priors, dtype=float)
    if p.shape != (k,):
        raise ValueError(f"priors must have shape ({k},), got shape {p.shape}")
    if not np.all(np.isfinite(p)):
        raise ValueError(f"priors must be finite, got {p}")
    if (p < 0).any():
        raise ValueError(f"priors must be non-negative, got {p}")
    total = p.sum()
    if total <= 0:
        raise ValueError("priors must not all be zero")
    if abs(total - 1.0) > 1e-5:
        warn(
            f"The priors do not sum to 1 (they sum to {total:.6g}): renormalizing them",
            UserWarning,
        )
    return p / total


def _raise_not_full_rank(label, advice):
    raise np.linalg.LinAlgError(
        f"The covariance matrix of class {label} is not full rank. {advice}"
    )


class _GaussianClassifier(BaseGenerativeClassifier):
    """Validation, statistics and covariance estimates shared by LDA and QDA.

    Subclasses build their ``Triple`` (class node, Gaussian family, prior) in
    ``_make_components()``; its emission gathers the statistics.
    """

    _solvers_with_shrinkage = ("lsqr", "eigen")
    _unobserved_class_is_error = True  # no prior defines a blank class
    # The triple kept between calls is built from the layout, not part of it.
    _derived_attributes = ("_triple", "_triple_of")

    def _components(self) -> Triple:
        """The triple of the current fit: built by ``_make_components()`` once
        the classes and the number of features are fixed, and kept; built
        again after a hyperparameter changed (``set_params``) or a refit."""
        return stored_triple(self, (len(self.classes_), self.n_features_in_))

    def _prepare_X(self, X, reset, sample_weight=None):
        if reset:
            forget_triple(self)
        X = validate_data(
            self,
            X,
            reset=reset,
            dtype=[np.float64, np.float32],
            ensure_all_finite="allow-nan",
        )
        if reset:
            self._dtype = X.dtype
        return float_input(X)

    def _check_solver(self) -> None:
        """Combinations of solver, shrinkage and covariance estimator."""
        name = type(self).__name__
        if self.solver == "svd" and self.shrinkage is not None:
            others = " or ".join(repr(s) for s in self._solvers_with_shrinkage)
            raise NotImplementedError(
                f"shrinkage not supported with solver='svd' in {name}: use solver="
                f"{others}"
            )
        if self.covariance_estimator is not None:
            if self.solver == "svd":
                others = " or ".join(repr(s) for s in self._solvers_with_shrinkage)
                raise ValueError(f"{self._svd_estimator_error}; use solver={others}")
            if self.shrinkage is not None and self.shrinkage != 0:
                raise ValueError(
                    "covariance_estimator and shrinkage parameters are not None. "
                    "Only one of the two can be set: pass shrinkage=None to use "
                    "the covariance_estimator"
                )

    def _needs_total_covariance(self) -> bool:
        return False

    def _missing_cells(self, X) -> bool:
        return has_nan(X)

    def _emission_stats(self, X, weights, labels, missing=None):
        """The statistics of one chunk (``missing``: whether ``X`` holds a NaN,
        when :meth:`_missing_cells` has told already)."""
        self._check_solver()
        if missing is None:
            missing = has_nan(X)
        if labels is None:  # soft weights: unlabelled rows' class posterior
            if self.covariance_estimator is not None or self.shrinkage == "auto":
                raise ValueError(
                    "unlabelled rows need a covariance from statistics that "
                    "add: use shrinkage=None or a number, and no "
                    "covariance_estimator"
                )
            if missing:
                raise ValueError(
                    "unlabelled rows (unlabeled=) and missing values (NaN in X) "
                    "together are not supported by discriminant analysis yet: "
                    "drop the incomplete unlabelled rows, or fit the labelled rows"
                )
            gstats = self._components().emission.stats(X, weights)
            return _DAStats(gstats, (weights > 0).sum(axis=0).astype(float))
        if missing:
            return self._missing_emission_stats(X, weights, labels)
        self.n_iter_ = 1  # the closed-form estimate: one step, nothing latent
        k = weights.shape[1]
        w = weights[np.arange(len(labels)), labels]
        gstats = self._components().emission.stats(X, weights, labels)
        rows = np.bincount(labels[w > 0], minlength=k).astype(float)
        whole = None
        if self.covariance_estimator is not None:
            whole = self._estimated_covariances(X, w, labels, k)
        elif self.shrinkage == "auto":
            cov = self._ml_covariances(gstats)
            std_k = np.stack([_std(np.diag(c)) for c in cov])
            Xc = X - gstats.mean[labels]
            q_class = _fourth_moment(Xc, std_k[labels], w, labels, k)
            q_total = None
            if self._needs_total_covariance():
                mean = gstats.grand_mean()
                var = np.average((X - mean) ** 2, axis=0, weights=w)
                q_total = _fourth_moment(X - mean, _std(var), w, 0 * labels, 1)[0]
            whole = _LedoitWolfStats(q_class, q_total)
        return _DAStats(gstats, rows, whole)

    # -- missing cells -------------------------------------------------------------
    def _missing_emission_stats(self, X, weights, labels):
        """EM over the missing cells with the class known: the expected
        statistics under the fitted parameters (sets ``n_iter_`` and
        ``lower_bounds_``, the objective of every iteration)."""
        if self.covariance_estimator is not None:
            raise ValueError(
                "covariance_estimator is fitted on complete rows: with missing "
                "values (NaN in X) set covariance_estimator=None (a float "
                "shrinkage is supported)"
            )
        if self.shrinkage == "auto":
            raise ValueError(
                "shrinkage='auto' (Ledoit-Wolf) needs the fourth moments of "
                "complete rows: with missing values (NaN in X) use a float "
                "shrinkage or None"
            )
        n, d = X.shape
        k = weights.shape[1]
        w = weights[np.arange(n), labels]
        rows = np.bincount(labels[w > 0], minlength=k).astype(float)
        structure = self._components().emission.covariance
        family = Gaussian(FULL, d)
        total = w.sum()
        class_weight = weights.sum(axis=0)
        evaluations = 0

        def e_step(theta):
            """The objective per sample at ``theta`` and the expected
            statistics under it; None where a covariance is not positive
            definite (an extrapolation too far)."""
            nonlocal evaluations
            try:
                params = family.params_from(*theta)
            except np.linalg.LinAlgError:
                return None
            evaluations += 1
            ll = family.log_likelihood(X, params)[np.arange(n), labels]
            bound = (w @ ll + self._missing_log_prior(params)) / total
            gstats = family.expected_stats(X, weights, params)
            return bound, dataclasses.replace(gstats, covariance=structure)

        def m_step(gstats):
            return self._missing_m_step(_DAStats(gstats, rows), class_weight)

        theta = self._available_case_start(X, weights)
        current = e_step(theta)
        if current is None:
            raise ValueError(
                "a class covariance is singular at the start of EM over the "
                f"missing values of X: {self._missing_advice}"
            )
        history = [current[0]]
        converged = False
        while evaluations < self.max_iter:
            theta, current, stalled = self._squarem_cycle(
                theta, current, e_step, m_step, self.max_iter - evaluations
            )
            if stalled:
                raise ValueError(
                    "a class covariance became singular in EM over the missing "
                    "values of X (too few observed values of some features): "
                    f"{self._missing_advice}"
                )
            previous, bound = history[-1], current[0]
            history.append(bound)
            if abs(bound - previous) <= self.em_tol * max(abs(bound), 1.0):
                converged = True
                break
        if not converged:
            warn(
                f"EM over the missing values of X did not converge in "
                f"{self.max_iter} iterations (em_tol={self.em_tol}): increase "
                "max_iter or em_tol",
                ConvergenceWarning,
            )
        self.n_iter_ = evaluations
        self.lower_bounds_ = history
        return _DAStats(current[1], rows)

    @staticmethod
    def _squarem_cycle(theta, current, e_step, m_step, budget):
        """One cycle of EM accelerated by squared extrapolation (SQUAREM,
        Varadhan and Roland 2008, scheme S3), kept monotone.

        From ``theta`` (its objective and statistics in ``current``), two EM
        steps give ``theta1`` and ``theta2``; with ``r = theta1 - theta`` and
        ``v = theta2 - 2 theta1 + theta``, the point ``theta - 2 a r + a^2 v``
        with ``a = -|r| / |v|`` (at most -1) is taken when its covariances are
        positive definite and its objective is at least that of ``theta2``;
        otherwise ``theta2``. Each point is at least as good as the one
        before, so the objective never decreases. With a budget of fewer
        than three E-steps, plain EM steps. Returns the new point, its
        objective and statistics, and whether an EM step failed.
        """
        theta1 = m_step(current[1])
        first = e_step(theta1)
        if first is None:
            return theta, current, True
        if budget < 3:
            return theta1, first, False
        theta2 = m_step(first[1])
        second = e_step(theta2)
        if second is None:
            return theta1, first, True
        r = [a - b for a, b in zip(theta1, theta)]
        v = [a - 2.0 * b + c for a, b, c in zip(theta2, theta1, theta)]
        norm_v = np.sqrt(sum(np.sum(x**2) for x in v))
        if norm_v == 0:
            return theta2, second, False
        alpha = min(-np.sqrt(sum(np.sum(x**2) for x in r)) / norm_v, -1.0)
        jump = [t - 2.0 * alpha * a + alpha**2 * b for t, a, b in zip(theta, r, v)]
        jump[1] = 0.5 * (jump[1] + np.swapaxes(jump[1], 1, 2))
        if not np.all(np.isfinite(jump[1])):
            return theta2, second, False
        third = e_step(tuple(jump))
        if third is not None and third[0] >= second[0]:
            return tuple(jump), third, False
        return theta2, second, False

    def _available_case_start(self, X, weights):
        """Every class's means and covariances from its available cases
        (Little and Rubin 2002, section 3.4), as means ``(K, d)`` and
        covariances ``(K, d, d)`` (pooled over the classes when the model
        ties them): a mean over the class's observed values of the feature, a
        covariance over the rows where both features are observed, centred at
        those means. Such a matrix need not be positive definite: its
        correlation matrix's eigenvalues are raised to at least 1e-3 of the
        largest. A class without two observed values of a feature takes the
        pooled variance (1 if none), and a pair observed together in fewer
        than two rows a covariance of 0."""
        observed = ~np.isnan(X)
        o = observed.astype(float)
        wt = weights.T @ o  # (K, d): the weight of the observed values
        tot = wt.sum(axis=0)
        Xz = np.where(observed, X, 0.0)
        mean = (weights.T @ Xz) / np.where(wt > 0, wt, 1.0)
        grand = (wt * mean).sum(axis=0) / np.where(tot > 0, tot, 1.0)
        mean = np.where(wt > 0, mean, grand)
        # Per class: the products of the deviations over the rows where both
        # features are observed, and the weight of those rows.
        dev = [np.where(observed, X - m, 0.0) for m in mean]
        scatter = np.stack([(dz * c[:, None]).T @ dz for dz, c in zip(dev, weights.T)])
        pairs = np.stack([(o * c[:, None]).T @ o for c in weights.T])
        counts = np.stack([(o * (c > 0)[:, None]).T @ o for c in weights.T])
        pooled_var = np.diagonal(scatter.sum(axis=0)) / np.where(tot > 0, tot, 1.0)
        pooled_var = np.where(pooled_var > 0, pooled_var, 1.0)
        if self._ties_covariance:
            scatter, pairs = scatter.sum(axis=0)[None], pairs.sum(axis=0)[None]
            counts = counts.sum(axis=0)[None]
        cov = scatter / np.where(pairs > 0, pairs, 1.0)
        cov = np.where(counts > 1, cov, 0.0)
        idx = np.arange(X.shape[1])
        var = cov[:, idx, idx]
        var = np.where((counts[:, idx, idx] > 1) & (var > 0), var, pooled_var)
        cov[:, idx, idx] = var
        std = np.sqrt(var)
        corr = cov / (std[:, :, None] * std[:, None, :])
        evals, evecs = np.linalg.eigh(corr)
        evals = np.maximum(evals, 1e-3 * evals[:, -1:])
        corr = (evecs * evals[:, None, :]) @ np.swapaxes(evecs, 1, 2)
        covs = corr * (std[:, :, None] * std[:, None, :])
        return mean, np.broadcast_to(covs, (len(mean), *covs.shape[1:])).copy()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # missing values are latent
        return tags

    _ties_covariance = False
    _missing_advice = "set a covariance prior or a shrinkage"

    def _missing_log_prior(self, params) -> float:
        """The log prior of the EM objective at ``params`` (0: flat)."""
        prior = self._components().prior
        return prior.log_density(FULL, params.means, params.precisions_cholesky)

    def _missing_m_step(self, stats, class_weight):
        """``(means, covariances (K, d, d))`` from expected statistics, as the
        fit sets them: QDA's (MAP, or shrunk with 'eigen'); LDA's pooled
        covariance ('svd': the maximum-likelihood one; 'lsqr' and 'eigen':
        the classes' shrunk covariances pooled by the class priors)."""
        gstats = stats.gaussian
        if not self._ties_covariance:
            means, cov = self._components().prior.map(FULL, gstats)
            if self.solver == "eigen":
                cov = self._shrunk_covariances(stats, cov)
            return means, cov
        k = gstats.mean.shape[0]
        if self.solver == "svd":
            cov = NormalInverseWishart().map(TIED, gstats)[1]
        else:
            # The class priors the fit will use (given, or the m-estimate).
            if self.priors is not None:
                priors = np.asarray(self.priors, dtype=float)
            else:
                priors = class_weight + self.prior_m / k
            cov = TIED.pool(
                self._shrunk_covariances(stats, self._ml_covariances(gstats)),
                priors / priors.sum(),
            )
        return gstats.mean, np.broadcast_to(cov, (k, *cov.shape))

    def _estimated_covariances(self, X, w, labels, k):
        """Fit a clone of ``covariance_estimator`` on each class's rows."""
        if not np.all((w == 0) | (w == 1)):
            raise ValueError(
                "sample_weight must be 0 or 1 with a covariance_estimator (it is "
                "fitted on the rows of positive weight); use shrinkage for "
                "weighted rows"
            )

        def fit(rows):
            est = clone(self.covariance_estimator, safe=False)
            est.fit(rows)
            if not hasattr(est, "covariance_"):
                raise ValueError(
                    f"covariance_estimator {type(est).__name__} does not have a "
                    "covariance_ attribute after fit"
                )
            return np.atleast_2d(np.asarray(est.covariance_, dtype=float))

        keep = w > 0
        class_cov = np.stack([fit(X[keep & (labels == c)]) for c in range(k)])
        total = fit(X[keep]) if self._needs_total_covariance() else None
        return _EstimatedCovariances(class_cov, total)

    @staticmethod
    def _ml_covariances(stats: GaussianStats) -> np.ndarray:
        """Maximum-likelihood covariance of every class, ``(K, d, d)``, from its
        own scatter (a class without weight: the identity)."""
        return FULL.covariances(
            stats.scatter, stats.weight, 0.0, np.eye(stats.mean.shape[1]), 0.0
        )

    def _shrunk_covariances(self, stats: _DAStats, base: np.ndarray) -> np.ndarray:
        """Every class's covariance as ``shrinkage`` or the estimator says."""
        whole = stats.whole
        if isinstance(whole, _EstimatedCovariances):
            return whole.class_cov
        if isinstance(whole, _LedoitWolfStats):
            weight = stats.gaussian.weight
            return np.stack(
                [_ledoit_wolf(c, q, n) for c, q, n in zip(base, whole.q_class, weight)]
            )
        if self.shrinkage is not None:
            return np.stack([_shrunk(c, self.shrinkage) for c in base])
        return base

    def _checked_priors(self, k: int):
        """Priors that do not sum to one are renormalised with a warning."""
        return None if self.priors is None else _check_priors(self.priors, k)

    def _update_params(self) -> None:
        try:
            super()._update_params()
        except Exception:
            # A fit that fails leaves the estimator unfitted.
            for attr in [
                a for a in vars(self) if a.endswith("_") and not a.startswith("_")
            ]:
                delattr(self, attr)
            raise
