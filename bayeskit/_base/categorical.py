"""The categorical side of naive Bayes and TAN: reading X, the tables, their prior.

- :func:`read_categorical`: how CategoricalNB and TreeAugmentedNB read ``X``
  (validation, then the one :class:`~bayeskit._base.encoding.CategoryEncoder`,
  with its integer-matrix fast path);
- :class:`CategoricalTables`: the categorical emission family as the
  estimators call it (``map_params(stats, prior)`` with the prior an object);
- :class:`MEstimate`: the m-estimate prior of the stacked tables (Mitchell
  1997, section 6.9.1.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from .. import priors
from .._validation import (
    Interval,
    StrOptions,
    check_probability_vector,
    validate_data,
)
from .._warnings import warn
from ..emissions import Categorical
from .classifier import BaseGenerativeClassifier
from .encoding import (
    CategoryEncoder,
    fractional_message,
    is_integer_matrix,
    split_columns,
)

__all__ = [
    "CATEGORICAL_CONSTRAINTS",
    "CategoricalTables",
    "MEstimate",
    "declared_list",
    "feature_name",
    "kept_rows",
    "read_categorical",
    "validated",
    "warn_nearly_unique",
]


# Parameters shared by the categorical models (CategoricalNB, TreeAugmentedNB).
CATEGORICAL_CONSTRAINTS: dict = {
    **BaseGenerativeClassifier._parameter_constraints,
    "m": [Interval(Real, 0, None, closed="left"), "array-like"],
    "p": [list, tuple, None],
    "categories": [StrOptions({"auto", "observed"}), list],
    "min_categories": [
        Interval(Integral, 1, None, closed="left"),
        "array-like",
        None,
    ],
    "handle_unknown": [StrOptions({"ignore", "error"})],
}


# -- the prior and the family -------------------------------------------------------
@dataclass(frozen=True, eq=False)
class MEstimate(priors.MEstimate):
    """The m-estimate (:class:`bayeskit.priors.MEstimate`) laid out over every
    table of a product of categorical tables.

    ``P(x_j = a | z = k) = (n_kja + m_j p_ja) / (n_kj + m_j)`` (Mitchell
    1997, section 6.9.1.1): the posterior mean under a Dirichlet prior of
    concentration ``m_j p_j``, which is also the posterior mode (MAP) under
    the concentration ``m_j p_j + 1``.

    Attributes
    ----------
    m : ndarray of shape (d,)
        The equivalent sample size of every feature; 0 is maximum likelihood.
    p : ndarray of shape (sum_j t_j,)
        The prior distributions of the features' categories, stacked like the
        counts of :class:`~bayeskit.emissions.CategoricalStats`.
    """

    n_categories: np.ndarray

    @classmethod
    def of(cls, m, p, categories: list) -> MEstimate:
        """Checked ``m`` (a number or one per feature) and ``p`` (None for
        uniform, or one distribution per feature) for these categories."""
        d = len(categories)
        m = np.asarray(m, dtype=float)
        if m.ndim > 1 or (m.ndim == 1 and m.shape[0] != d):
            raise ValueError(f"m must be a number or have shape ({d},), got {m.shape}")
        if not np.all(np.isfinite(m)) or (m < 0).any():
            raise ValueError(f"m must be finite and >= 0, got {m}")
        sizes = np.array([len(c) for c in categories], dtype=np.intp)
        if p is None:
            stacked = np.repeat(1.0 / sizes, sizes)
        else:
            if len(p) != d:
                raise ValueError(f"p must have one distribution per feature ({d})")
            stacked = np.concatenate(
                [
                    check_probability_vector(pj, f"p[{j}]", sizes[j])
                    for j, pj in enumerate(p)
                ]
            )
        return cls(np.broadcast_to(m, (d,)).astype(float), stacked, sizes)

    @classmethod
    def maximum_likelihood(cls, n_categories) -> MEstimate:
        """``m = 0``: the relative frequencies."""
        sizes = np.asarray(n_categories, dtype=np.intp)
        return cls(np.zeros(len(sizes)), np.repeat(1.0 / sizes, sizes), sizes)

    def log_density(self, params) -> float:
        """Log density, up to its constant, of the Dirichlet prior under which
        the m-estimate is the MAP estimate: ``sum_ja m_j p_ja log theta_ja``
        over every state (0 for ``m = 0``)."""
        weight = (np.repeat(self.m, self.n_categories) * self.p)[:, None]
        with np.errstate(invalid="ignore"):
            terms = np.where(weight > 0, weight * params.log_prob, 0.0)
        return float(terms.sum())


class CategoricalTables(Categorical):
    """The categorical family, called with a prior object.

    ``map_params(stats, prior)`` takes an :class:`MEstimate` (None: maximum
    likelihood); the rest is :class:`~bayeskit.emissions.Categorical`'s.
    """

    def map_params(self, stats, prior: MEstimate | None = None, previous=None):
        if prior is None:
            prior = MEstimate.maximum_likelihood(self.n_categories)
        return Categorical.map_params(self, stats, prior.m, prior.p)

    def log_prior(self, params, prior=None) -> float:
        return 0.0 if prior is None else prior.log_density(params)

    def n_parameters(self, n_states: int) -> int:
        return int(n_states * (self.n_categories - 1).sum())

    def tables(self, stacked: np.ndarray) -> list:
        """Per-feature tables ``(n_states, t_j)`` from a stacked array
        ``(sum_j t_j, n_states)`` (counts or log-probabilities)."""
        off = self.offsets
        return [stacked[off[j] : off[j + 1]].T.copy() for j in range(len(off) - 1)]

    def sample(self, params, states: np.ndarray, random_state) -> np.ndarray:
        """Codes of one row per state of ``states``, ``(len(states), d)``."""
        out = np.empty((len(states), len(self.n_categories)), dtype=np.intp)
        off = self.offsets
        for j in range(len(self.n_categories)):
            prob = np.exp(params.log_prob[off[j] : off[j + 1]]).T[states]
            u = random_state.random(len(states))[:, None]
            out[:, j] = np.minimum(
                (u >= np.cumsum(prob, axis=1)).sum(axis=1), self.n_categories[j] - 1
            )
        return out


# -- reading X ---------------------------------------------------------------------
def feature_name(est, j: int) -> str:
    names = getattr(est, "feature_names_in_", None)
    return repr(names[j]) if names is not None else str(j)


def kept_rows(sample_weight):
    """Rows of positive weight, or None when every row counts."""
    if sample_weight is None or (sample_weight > 0).all():
        return None
    return sample_weight > 0


def validated(est, X, reset: bool):
    """Validate ``X`` without casting: a DataFrame as it is, else an ndarray."""
    if hasattr(X, "iloc"):
        validate_data(est, X, reset=reset, skip_check_array=True)
    else:
        X = validate_data(est, X, reset=reset, dtype=None, ensure_all_finite=False)
    if X.shape[0] == 0:
        raise ValueError("X has 0 samples; at least one is required")
    if X.shape[1] == 0:
        raise ValueError(
            f"0 feature(s) (shape={tuple(X.shape)}) while a minimum of 1 is required."
        )
    return X


def _min_categories(min_categories, d: int) -> np.ndarray:
    """scikit-learn's checks of ``min_categories``, one value per feature."""
    mins = np.asarray(0 if min_categories is None else min_categories)
    if mins.dtype.kind not in "iu":
        raise ValueError(
            f"'min_categories' should have integral type. Got {mins.dtype} instead."
        )
    if mins.ndim > 1 or (mins.ndim == 1 and mins.shape != (d,)):
        raise ValueError(
            f"'min_categories' should have shape ({d},) when an array-like is "
            f"provided. Got {mins.shape} instead."
        )
    if (mins < 0).any():
        raise ValueError(
            f"min_categories must be non-negative (a number of categories), got "
            f"{mins.tolist()}"
        )
    return np.broadcast_to(mins, (d,))


def declared_list(categories, d: int) -> list:
    if isinstance(categories, str):
        return [None] * d
    if len(categories) != d:
        raise ValueError(
            f"categories has {len(categories)} entries for {d} categorical features"
        )
    return list(categories)


_HINT = "; list every category in categories= for the first fit"

# A categorical feature is suspect when it was observed in more than
# ``_FEW_ROWS`` rows and its distinct values outnumber half of those rows: a
# table with about one column per row learns next to nothing, and that is what
# continuous values read as categories look like. Below ``_FEW_ROWS`` rows a
# small table of genuine categories can meet the ratio by chance.
_FEW_ROWS = 20


def warn_nearly_unique(
    est,
    codes: np.ndarray,
    n_categories,
    keep=None,
    columns=None,
    complete=False,
    fractional=(),
    continuous="GaussianNB (or MixedNB's numeric columns)",
) -> None:
    """Warn (once, at the caller's line) for every feature whose fitted rows
    hold nearly as many distinct values as rows (``columns``: the index in
    ``X`` of every column of ``codes``, when they are not ``0 .. d - 1``;
    ``complete``: no code is missing, as in an integer matrix;
    ``continuous``: the model the message names for continuous values).

    The rule: a feature observed (not missing, positive weight) in ``n > 20``
    rows with more than ``n / 2`` distinct values. Only features with more
    than ten categories can meet it, so ordinary data costs nothing.
    ``fractional`` names the features whose values were truncated to codes
    (:func:`~bayeskit._base.encoding.code_values`): the other sign of
    continuous data, told in the same warning.
    """
    suspects = _nearly_unique(codes, n_categories, keep, complete)
    if not suspects:
        if len(fractional):
            warn(f"{type(est).__name__}: {fractional_message(fractional)}", UserWarning)
        return
    described = ", ".join(
        f"{feature_name(est, j if columns is None else columns[j])} "
        f"({distinct} distinct values in {n} rows)"
        for j, distinct, n in suspects[:5]
    )
    more = f" and {len(suspects) - 5} more" if len(suspects) > 5 else ""
    truncated = (
        f"feature(s) {', '.join(fractional)} have fractional values, truncated "
        "to integer category codes (as scikit-learn does); "
        if len(fractional)
        else ""
    )
    warn(
        f"{type(est).__name__}: {truncated}feature(s) {described}{more} have about "
        "as many distinct values as rows, so each value is a category seen about "
        f"once and its table learns little; continuous features belong in "
        f"{continuous}, or binned first "
        "(sklearn.preprocessing.KBinsDiscretizer)",
        UserWarning,
    )


def _nearly_unique(codes, n_categories, keep, complete) -> list:
    """``(j, distinct, n)`` of every feature that meets the rule."""
    n_categories = np.asarray(n_categories)
    n_rows = codes.shape[0] if keep is None else int(np.count_nonzero(keep))
    # More than 20 observed rows and more than half as many distinct values:
    # more than ten categories. Without missing codes, more than half as many
    # categories as rows too, so ordinary data is not read again.
    wide = n_categories > _FEW_ROWS // 2
    if complete:
        wide &= 2 * n_categories > n_rows
    if n_rows <= _FEW_ROWS or not wide.any():
        return []
    suspects = []
    for j in np.flatnonzero(wide):
        seen = codes[:, j] >= 0
        if keep is not None:
            seen &= keep
        n = int(np.count_nonzero(seen))
        if n <= _FEW_ROWS or 2 * n_categories[j] <= n:
            continue
        distinct = int(np.count_nonzero(np.bincount(codes[seen, j])))
        if 2 * distinct > n:
            suspects.append((j, distinct, n))
    return suspects


def read_categorical(est, X, reset, sample_weight, grows):
    """Codes of categorical ``X`` for CategoricalNB-like estimators.

    ``sample_weight`` is given exactly when the rows are being fitted; with
    ``grows`` their new values extend the categories of a later chunk. With
    ``categories='auto'`` and ``est._numeric_codes``, numeric features are
    codes ``0 .. max`` (scikit-learn's CategoricalNB).
    """
    X = validated(est, X, reset)
    keep = kept_rows(sample_weight)
    cols, in_range, grew = None, False, False
    if reset:
        d = X.shape[1]
        est._encoder, cols = CategoryEncoder.fit_matrix(
            X,
            [feature_name(est, j) for j in range(d)],
            as_codes=est.categories == "auto" and est._numeric_codes,
            declared=declared_list(est.categories, d),
            min_categories=_min_categories(est.min_categories, d),
            keep=keep,
        )
        # Categories found in all of these rows: none can be out of range.
        in_range = cols is None and keep is None
    elif grows:
        cols, _ = split_columns(X)
        grew = est._encoder.extend(cols, keep)
    fractional = []  # features truncated to codes: one warning for them all
    codes = est._encoder.encode_matrix(
        X,
        cols,
        in_range=in_range,
        unknown=est.handle_unknown,
        fitting=sample_weight is not None,
        keep=keep,
        hint=_HINT,
        fractional=fractional,
    )
    if reset and sample_weight is not None:
        warn_nearly_unique(
            est,
            codes,
            est._encoder.n_categories,
            keep,
            complete=is_integer_matrix(X),
            fractional=fractional,
        )
    elif fractional:
        warn(f"{type(est).__name__}: {fractional_message(fractional)}", UserWarning)
    return codes, grew
