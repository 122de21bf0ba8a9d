"""A class with no observed value: the rule for missing data where nothing
is observed (an error naming it, where no prior defines its parameters)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

__all__ = ["check_every_class_observed", "check_observed_weight"]


def check_every_class_observed(X, idx, sw, classes) -> None:
    """ValueError naming the classes of positive weight none of whose cells
    is observed in ``X`` (a 2-d array or frame; other inputs are left to the
    emission family). What is missing is latent, but a class with nothing
    observed has nothing for its parameters to come from."""
    if sp.issparse(X) or isinstance(X, (list, tuple)):
        return
    try:
        missing = np.asarray(pd.isna(X), dtype=bool)
    except (TypeError, ValueError):
        return
    if missing.ndim != 2 or missing.shape[0] != len(idx) or not missing.any():
        return
    k = len(classes)
    seen = np.bincount(idx, weights=(~missing).sum(axis=1) * (sw > 0), minlength=k)
    check_observed_weight(seen, np.bincount(idx, weights=sw, minlength=k), classes)


def check_observed_weight(seen, weight, classes) -> None:
    """:func:`check_every_class_observed` from what statistics already hold:
    ``seen`` the weight of every class's observed cells (zero exactly when
    none of its rows of positive weight has an observed cell), ``weight``
    every class's weight. A family whose statistics keep the weight of every
    class and feature (the diagonal Gaussian's) gives both without another
    pass over ``X``."""
    blank = (np.asarray(seen) == 0) & (np.asarray(weight) > 0)
    if blank.any():
        names = classes[blank].tolist()
        more = f" (and {names[1:]!r})" if len(names) > 1 else ""
        raise ValueError(
            f"class {names[0]!r}{more} has no observed value in X: every cell "
            "of its rows is missing (NaN), so its parameters would come from "
            "nothing. Drop its rows, or give it at least one observed value"
        )
