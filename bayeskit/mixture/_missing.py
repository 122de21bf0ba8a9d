"""Missing cells (NaN) in the Gaussian mixtures: the start of EM, and the
prediction methods that marginalise them.

EM treats a missing cell as latent (Ghahramani and Jordan 1994): the E-step's
log-likelihood of a row is the marginal density of its observed cells, and
its statistics are those of the row completed by the conditional means of the
missing cells given the observed ones and the component, with the conditional
covariance added (:meth:`bayeskit.emissions.Gaussian.expected_stats`). EM
starts from the rows with every missing cell replaced by its column's mean
over the observed cells (the initialiser of ``init_params`` runs on them, and
the first parameters are their statistics); EM then moves away from that
start (Little and Rubin 2002, section 11.2).

References
----------
.. [1] Z. Ghahramani and M. I. Jordan, "Supervised learning from incomplete
   data via an EM approach", *Advances in Neural Information Processing
   Systems* 6, 1994, pp. 120-127.
.. [2] R. J. A. Little and D. B. Rubin, *Statistical Analysis with Missing
   Data*, 2nd ed., Wiley, 2002.
"""

from __future__ import annotations

import numpy as np

from .._base.classifier import float_input
from .._collections import handler_for
from .._logmath import has_nan, logsumexp
from .._validation import check_is_fitted, check_sample_weight, validate_data

__all__: list[str] = []


def mean_imputed(X: np.ndarray, sample_weight: np.ndarray) -> np.ndarray:
    """``X`` with every NaN replaced by its column's weighted mean over the
    observed cells (0 for a column with no observed cell); ``X`` itself when
    nothing is missing (never modified)."""
    missing = np.isnan(X)
    if not missing.any():
        return X
    observed = ~missing
    w = observed * sample_weight[:, None]
    total = w.sum(axis=0)
    means = (w * np.where(missing, 0.0, X)).sum(axis=0) / np.where(
        total > 0, total, 1.0
    )
    return np.where(missing, means, X)


class MixturePrediction:
    """The prediction methods of a Gaussian mixture; missing cells (NaN) are
    marginalised by the Gaussian family's log-likelihood."""

    def _output_spec(self, method: str, float32: bool) -> tuple:
        """The width (None: one value per row) and dtype of ``self.<method>``
        (for prediction over Dask blocks)."""
        if method == "predict":
            return None, np.dtype(np.intp)
        dtype = np.dtype(np.float32 if float32 else np.float64)
        return (self.n_components if method == "predict_proba" else None), dtype

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # missing values are latent
        return tags

    def _validate(self, X):
        check_is_fitted(self)
        return float_input(
            validate_data(
                self,
                X,
                dtype=[np.float64, np.float32],
                reset=False,
                ensure_all_finite="allow-nan",
            )
        )

    def _input_dtype(self, X):
        """float32 for float32 input (results keep it, as scikit-learn's)."""
        return np.float32 if getattr(X, "dtype", None) == np.float32 else np.float64

    def score_samples(self, X):
        """``log p(x)`` of every row, shape ``(n_samples,)``."""
        if (handler := handler_for(X)) is not None:
            return handler.predict(self, "score_samples", X)
        dtype, X = self._input_dtype(X), self._validate(X)
        log_prob = logsumexp(self._log_likelihood(X) + np.log(self.weights_), axis=1)
        return log_prob.astype(dtype, copy=False)

    def score(self, X, y=None, sample_weight=None):
        """Mean log-likelihood per sample (weighted by ``sample_weight``)."""
        log_prob = self.score_samples(X)
        if sample_weight is None:
            return float(np.mean(log_prob))
        # Non-negative numbers, one per row, named when they are not (the
        # weights of fit mean the same).
        sw = check_sample_weight(sample_weight, np.asarray(log_prob))
        return float(sw @ np.asarray(log_prob, dtype=np.float64) / sw.sum())

    def predict_proba(self, X):
        """Posterior over the components, shape ``(n_samples, n_components)``."""
        if (handler := handler_for(X)) is not None:
            return handler.predict(self, "predict_proba", X)
        dtype, X = self._input_dtype(X), self._validate(X)
        return np.exp(self._posterior(X).log_resp).astype(dtype, copy=False)

    def predict(self, X):
        """The most probable component of every row."""
        if (handler := handler_for(X)) is not None:
            return handler.predict(self, "predict", X)
        X = self._validate(X)
        return np.argmax(self._log_likelihood(X) + np.log(self.weights_), axis=1)


def check_observed(X, sample_weight) -> None:
    """ValueError when ``X`` (with positive weight) has no observed cell, or
    a feature with none: what is missing is latent, but a feature never
    observed has nothing for its means and variances to come from."""
    if not has_nan(X):
        return
    seen = (~np.isnan(X[sample_weight > 0])).any(axis=0)
    if not seen.any():
        raise ValueError(
            "X has no observed value: every cell is missing (NaN), so the "
            "mixture has nothing to fit"
        )
    if not seen.all():
        raise ValueError(
            f"feature(s) {np.flatnonzero(~seen).tolist()[:10]} of X have no "
            "observed value (every cell missing, NaN): drop them"
        )
