"""Semi-supervised EM for the generative classifiers: unlabelled rows' classes
are latent.

A row whose label is the ``unlabeled`` marker is a row whose class node is not
observed. Its statistics are gathered under the class posterior of the
current model (the graph core's, the one every prediction uses), weighted by
``unlabeled_weight`` (lambda), and added to the labelled rows' one-hot
statistics; the parameters follow from the sum by the prior, as in a
supervised fit. Starting from the labelled fit, this EM (Dempster, Laird and
Rubin 1977) maximises

.. math::

    \\sum_{i \\in L} w_i \\log P(x_i, y_i) + \\lambda \\sum_{i \\in U} w_i
    \\log \\sum_c P(x_i, c) + \\log p(\\theta),

Nigam, McCallum, Thrun and Mitchell's (2000) objective with their weight
lambda of the unlabelled rows; each iteration never decreases it (for the
models whose scores are a likelihood: not ComplementNB's complement weights,
see its Notes).

The loop is written once here, for every classifier: what it needs of one is
the base's hooks (``_prepare_X``, ``_emission_stats`` under soft weights with
``labels=None``, ``_set_stats``, ``_log_likelihood``, ``_decision_log_prior``,
``_log_prior_density``).

References
----------
.. [1] K. Nigam, A. K. McCallum, S. Thrun and T. Mitchell, "Text
   classification from labeled and unlabeled documents using EM", Machine
   Learning, 39, 2000, pp. 103-134.
.. [2] A. P. Dempster, N. M. Laird and D. B. Rubin, "Maximum likelihood from
   incomplete data via the EM algorithm", Journal of the Royal Statistical
   Society B, 39, 1977, pp. 1-38.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import _safe_indexing

from .._validation import _num_samples, check_sample_weight
from .._warnings import warn
from ..graph import LatentNode

__all__ = [
    "EM_MAX_ITER",
    "EM_TOL",
    "check_in_memory",
    "check_label_types",
    "check_marker_not_a_class",
    "fit_semi_supervised",
    "partial_fit_semi_supervised",
    "summarize_semi_supervised",
    "unlabeled_rows",
]

# The EM over the unlabelled rows' classes stops when an iteration gains less
# than EM_TOL per unit of row weight, or after EM_MAX_ITER iterations.
EM_MAX_ITER = 100
EM_TOL = 1e-6


def _is_nan(value) -> bool:
    return isinstance(value, (float, np.floating)) and value != value


def _as_1d(y):
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    return y if y.ndim == 1 else None


def check_label_types(y) -> None:
    """ValueError naming ``y`` when its labels mix text and numbers (numpy
    cannot order them, and scikit-learn's ValueError names no argument)."""
    if isinstance(y, (list, tuple)):
        # numpy turns a list of text and numbers into text: read it as given
        values = [
            v[0] if isinstance(v, (list, tuple)) and len(v) == 1 else v for v in y
        ]
    else:
        y = _as_1d(y)
        if y is None or y.dtype.kind != "O" or y.size == 0:
            return
        values = y.tolist()
    text = [isinstance(v, (str, bytes, np.str_, np.bytes_)) for v in values]
    if any(text) and not all(text):
        first_text = values[text.index(True)]
        first_other = values[text.index(False)]
        raise ValueError(
            "y mixes text and non-text labels (for example "
            f"{first_text!r} and {first_other!r}); the labels of y must be all "
            "strings or all numbers"
        )


def _as_number(text):
    """The number a text marker spells (``'-1'`` -> -1), or None."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if np.isfinite(value) else None


def _check_marker_type(marker, y) -> None:
    """A marker of the other kind than the labels can never match a row: an
    error naming ``unlabeled`` when it spells one of the labels (``'-1'`` for
    the integer -1, which would otherwise become a class), else a warning."""
    values = np.unique(y)
    if isinstance(marker, (str, bytes, np.str_)):
        number = _as_number(marker)
        hit = number is not None and bool(np.any(values == number))
        fix = f"unlabeled={number:g}" if number is not None else None
    else:
        hit = bool(np.any(values.astype(str) == str(marker)))
        fix = f"unlabeled={str(marker)!r}"
    if hit:
        raise ValueError(
            f"unlabeled={marker!r} is {type(marker).__name__} but the labels of y "
            f"are {values.dtype}: it marks no row, and the rows it was meant to "
            f"mark would be fitted as a class of their own; write {fix}"
        )
    warn(
        f"unlabeled={marker!r} is {type(marker).__name__} but the labels of y "
        f"are {values.dtype}: it can mark no row, every row is fitted as labelled"
    )


def unlabeled_rows(est, y):
    """The mask of the rows whose label is ``est.unlabeled``, or None when
    there are none (or no marker is set): then the fit is the supervised one."""
    marker = getattr(est, "unlabeled", None)
    if marker is None or y is None:
        return None
    y = _as_1d(y)
    if y is None or y.size == 0:
        return None
    kind = y.dtype.kind
    if _is_nan(marker):
        if kind in "fc":
            mask = np.isnan(y)
        elif kind == "O":
            mask = np.asarray(pd.isna(y), dtype=bool)
        else:
            return None
    elif kind in "iufc" and (
        not isinstance(marker, (Real, np.number)) or isinstance(marker, bool)
    ):
        _check_marker_type(marker, y)  # a string marker never equals a number
        return None
    elif kind == "b" and (
        not isinstance(marker, (Real, np.number)) or isinstance(marker, bool)
    ):
        return None
    elif kind in "US" and not isinstance(marker, (str, bytes, np.str_)):
        _check_marker_type(marker, y)
        return None
    elif kind == "O":
        mask = np.fromiter((_equals(v, marker) for v in y), bool, count=y.size)
    else:
        mask = np.asarray(y == marker, dtype=bool)
    return mask if mask.any() else None


def _equals(value, marker) -> bool:
    try:
        return bool(value == marker)
    except (TypeError, ValueError):
        return False


def check_marker_not_a_class(est, classes) -> None:
    """The marker of unlabelled rows cannot also name a class."""
    marker = getattr(est, "unlabeled", None)
    if marker is None or classes is None:
        return
    values = np.asarray(classes).ravel()
    if _is_nan(marker):
        hit = values.dtype.kind in "fcO" and bool(np.any(pd.isna(values)))
    else:
        hit = any(_equals(v, marker) for v in values)
    if hit:
        raise ValueError(
            f"unlabeled={marker!r} marks unlabelled rows, so it cannot also be "
            f"one of the classes {values.tolist()[:10]}; choose another marker "
            "or leave it out of `classes`"
        )


def check_in_memory(est) -> None:
    """Semi-supervised EM reads the data several times: in-memory data only."""
    if getattr(est, "unlabeled", None) is not None:
        raise ValueError(
            f"unlabeled={est.unlabeled!r}: fitting with unlabelled rows takes "
            "in-memory data (numpy, pandas, scipy.sparse), not Dask collections; "
            "set unlabeled=None to fit the labelled rows of a Dask collection"
        )


def _split(est, X, y, sample_weight, mask):
    """The labelled and unlabelled parts: ``(X_l, y_l, w_l, X_u, w_u)``, and
    every row's weight."""
    y = _as_1d(y)
    n = y.shape[0]
    if n != _num_samples(X):
        raise ValueError(
            f"X has {_num_samples(X)} samples but y has {n}; they must match"
        )
    sw = check_sample_weight(sample_weight, np.empty((n, 0)), allow_all_zero=True)
    lab, unl = np.flatnonzero(~mask), np.flatnonzero(mask)
    yl = y[lab]
    if yl.dtype == object and pd.api.types.infer_dtype(yl) in (
        "integer",
        "floating",
        "mixed-integer-float",
    ):
        # Numbers that shared an object array with a string marker ("?"):
        # the labels are the numbers.
        yl = np.asarray(yl.tolist())
    return (
        _safe_indexing(X, lab) if lab.size else None,
        yl,
        sw[lab],
        _safe_indexing(X, unl),
        sw[unl],
        sw,
    )


def _no_labels_error(est):
    return ValueError(
        f"every row of y is unlabelled (unlabeled={est.unlabeled!r}): EM over "
        "the unlabelled rows' classes starts from a fit of labelled rows, so y "
        "needs at least one labelled row of positive sample_weight"
    )


def _posterior(est, Xu):
    """The class posterior of every unlabelled row and its log evidence
    ``log sum_c P(x, c)`` under the current model (the graph core's)."""
    log_prior = est._decision_log_prior()
    with np.errstate(under="ignore"):
        post = LatentNode(len(est.classes_)).posterior(
            est._log_likelihood(Xu), log_prior
        )
        log_resp = post.log_resp
        impossible = np.isneginf(post.log_evidence)
        if impossible.any():
            # As prediction: a row impossible under every class falls back to
            # the class prior.
            log_resp = log_resp.copy()
            log_resp[impossible] = log_prior - np.logaddexp.reduce(log_prior)
        return np.exp(log_resp), post.log_evidence


def _unlabelled_stats(est, Xu, wu, lam):
    """The unlabelled rows' statistics under the current model's posterior,
    weighted by ``lam * wu``, and their weighted log evidence."""
    from .classifier import ClassifierStats

    resp, log_evidence = _posterior(est, Xu)
    weights = resp * (lam * wu)[:, None]
    stats = ClassifierStats(weights.sum(axis=0), est._emission_stats(Xu, weights, None))
    keep = wu > 0  # a row of weight 0 adds nothing, even when impossible
    return stats, lam * float(wu[keep] @ log_evidence[keep])


def _labelled_log_likelihood(est, Xl, idx, wl) -> float:
    joint = est._log_likelihood(Xl)[np.arange(len(idx)), idx]
    joint = joint + est._decision_log_prior()[idx]
    keep = wl > 0
    return float(wl[keep] @ joint[keep])


def fit_semi_supervised(est, X, y, sample_weight, mask):
    """``fit`` with unlabelled rows: the labelled fit, then EM.

    The encoding of ``X`` (the categories of each feature, the alphabet) is
    fixed from every row, the classes from the labelled rows. Sets
    ``em_n_iter_``, ``em_lower_bound_``, ``em_lower_bounds_`` and
    ``em_converged_``.
    """
    from .classifier import ClassifierStats

    Xl, yl, wl, Xu, wu, sw = _split(est, X, y, sample_weight, mask)
    if Xl is None or not (wl > 0).any():
        raise _no_labels_error(est)
    if not est._has_additive_stats():
        raise ValueError(
            f"unlabeled={est.unlabeled!r}: EM over unlabelled rows needs class "
            "models with summarize and from_stats (every bayeskit model has "
            "them); this template has not"
        )
    saved = dict(vars(est))
    for attr in [a for a in saved if a.endswith("_") and a[0] != "_"]:
        delattr(est, attr)
    try:
        # The encoding from every row: a value only unlabelled rows show is a
        # category all the same.
        est._prepare_X(X, reset=True, sample_weight=sw)
        stats_l, Xl, idx, wl = est._read_labelled(
            Xl, yl, None, wl, reset=True, keep_encoding=True
        )
        est._set_stats(stats_l)
        est._freeze_structure()
        Xu = est._prepare_X(Xu, reset=False)
        lam = float(est.unlabeled_weight)
        onehot = np.zeros((len(idx), len(est.classes_)))
        onehot[np.arange(len(idx)), idx] = wl
        total = float(wl.sum() + lam * wu.sum())
        bounds, converged = [], False
        for it in range(EM_MAX_ITER + 1):
            stats_u, unlabelled = _unlabelled_stats(est, Xu, wu, lam)
            bound = (
                _labelled_log_likelihood(est, Xl, idx, wl)
                + unlabelled
                + est._log_prior_density()
            )
            bounds.append(bound)
            if lam == 0 or (it and abs(bound - bounds[-2]) < EM_TOL * total):
                converged = True
                break
            if it == EM_MAX_ITER:
                break
            if not est._labelled_stats_fixed:
                # The E-step of the labelled rows under the current
                # parameters (their class models' latent parts).
                stats_l = ClassifierStats(
                    stats_l.class_weight, est._emission_stats(Xl, onehot, idx)
                )
            est._set_stats(stats_l + stats_u)
    except Exception:
        vars(est).clear()
        vars(est).update(saved)
        raise
    if not converged:
        warn(
            f"semi-supervised EM did not converge in {EM_MAX_ITER} iterations; "
            "the parameters are those of the last one",
            ConvergenceWarning,
        )
    est.em_n_iter_ = len(bounds) - 1
    est.em_lower_bound_ = bounds[-1]
    est.em_lower_bounds_ = bounds
    est.em_converged_ = converged
    return est


def _check_parameters(est, what: str) -> None:
    if not hasattr(est, "stats_") or getattr(est, "_insufficient", None):
        raise ValueError(
            f"{what} received unlabelled rows (unlabeled={est.unlabeled!r}) "
            "before labelled rows determined the parameters: their statistics "
            "are taken under the current model's class posterior, so fit or "
            "partial_fit labelled rows first"
        )


def partial_fit_semi_supervised(est, X, y, classes, sample_weight, mask):
    """One incremental EM step (Neal and Hinton 1998): the chunk's labelled
    rows are added first, then its unlabelled rows' statistics under the
    class posterior of the model so far, weighted by ``unlabeled_weight``."""
    Xl, yl, wl, Xu, wu, _ = _split(est, X, y, sample_weight, mask)
    first = not hasattr(est, "classes_")
    if Xl is not None:
        est._partial_fit(Xl, yl, classes, wl, reset=first)
    elif first:
        raise _no_labels_error(est)
    _check_parameters(est, "partial_fit")
    est._freeze_structure()
    Xu = est._prepare_X(Xu, reset=False, sample_weight=wu)
    stats_u, _ = _unlabelled_stats(est, Xu, wu, float(est.unlabeled_weight))
    return est._set_stats(est.stats_ + stats_u)


def summarize_semi_supervised(est, X, y, sample_weight, mask):
    """The statistics of a chunk with unlabelled rows under the current model:
    ``from_stats`` of their sum over chunks is one EM iteration."""
    _check_parameters(est, "summarize")
    Xl, yl, wl, Xu, wu, _ = _split(est, X, y, sample_weight, mask)
    est._freeze_structure()
    Xt = est._prepare_X(Xu, reset=False)
    stats, _ = _unlabelled_stats(est, Xt, wu, float(est.unlabeled_weight))
    if Xl is not None:
        stats = est._summarize(Xl, yl, None, wl, False, chunk=True) + stats
    return stats
