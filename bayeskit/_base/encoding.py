"""Turning columns of categories (any labels, missing values) into integer codes.

One encoder, :class:`CategoryEncoder`, with one policy for the categories of
a column and their order, used by naive Bayes, tree-augmented naive Bayes, the
Bayesian networks and Chow-Liu trees:

1. categories **declared** by a parameter (``categories=`` of the naive Bayes
   classifiers, ``states=`` of a network) are kept as given, in the order
   given, states absent from the data included;
2. a **pandas Categorical** column keeps its own categories, in their order,
   the categories absent from the data included;
3. a **numeric column read as codes** (scikit-learn's ``CategoricalNB``, and so
   ours with ``categories='auto'``) has the categories ``0 .. max``, at least
   ``min_categories`` of them;
4. any other column has the distinct values the data show, **sorted** (values
   that do not sort together, such as numbers mixed with strings, keep their
   order of first appearance).

Sorted observed values are also the rule of scikit-learn's encoders and of
pgmpy's state names, and of the hidden Markov models' symbols
(:func:`fit_categories` and :func:`encode_column`, which the encoder is made
of).

Columns of any labels go through pandas, one column at a time. A matrix of
integers, the most common coded input, has a faster path over the whole
matrix: its categories from one pass for the range of every column and one
pass marking the values seen (:func:`integer_categories`), and, when every
feature's categories are ``0 .. t_j - 1``, the matrix itself as the codes once
a pass has found no value out of range (:func:`count_out_of_range`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._jit import njit
from .._warnings import warn

__all__ = [
    "CategoryEncoder",
    "categorical_input_tags",
    "count_out_of_range",
    "encode_column",
    "fit_categories",
    "fractional_message",
    "holds_real_numbers",
    "integer_categories",
    "is_integer_matrix",
    "is_missing",
    "split_columns",
]


def is_missing(col: np.ndarray) -> np.ndarray:
    """NaN, None and pd.NA, as a boolean mask."""
    if col.dtype.kind in "iub":
        return np.zeros(col.shape, dtype=bool)
    return np.asarray(pd.isna(col), dtype=bool)


def fit_categories(col: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """Sorted distinct observed values of a column (first-seen order if unsortable)."""
    values = pd.unique(col[~missing]) if missing.any() else pd.unique(col)
    values = np.asarray(values)
    try:
        return np.sort(values, kind="stable")
    except TypeError:
        return values


def encode_column(
    col: np.ndarray, categories: np.ndarray, missing: np.ndarray
) -> np.ndarray:
    """Codes ``0 .. len(categories) - 1``; ``-1`` for missing, ``-2`` for unknown."""
    k = len(categories)
    integers = col.dtype.kind in "iu" and categories.dtype.kind in "iu"
    if integers and np.array_equal(categories, np.arange(k)):
        codes = col.astype(np.intp, copy=True)
        if codes.size and (codes.min() < 0 or codes.max() >= k):
            codes[(codes < 0) | (codes >= k)] = -2
        return codes
    # Integers, or strings of one kind: a binary search of sorted categories
    # (pandas' hash table turns numpy strings into its own first, some ten
    # times slower, and first in a process slower still).
    strings = col.dtype.kind == categories.dtype.kind and col.dtype.kind in "US"
    if (integers or strings) and k and np.all(categories[:-1] < categories[1:]):
        codes = np.searchsorted(categories, col).astype(np.intp, copy=False)
        np.minimum(codes, k - 1, out=codes)
        codes[categories[codes] != col] = -2
    else:
        codes = pd.Index(categories).get_indexer(col).astype(np.intp)
        codes[codes < 0] = -2
    codes[missing] = -1
    return codes


def split_columns(X) -> tuple[list, list]:
    """The columns of a validated ``X`` as contiguous 1-d arrays, and the
    pandas ``CategoricalDtype`` of each (None for other columns)."""
    if hasattr(X, "iloc"):
        dtypes = [
            dt if isinstance(dt, pd.CategoricalDtype) else None for dt in X.dtypes
        ]
        cols = [_indexable(X.iloc[:, j].to_numpy()) for j in range(X.shape[1])]
        return cols, dtypes
    # One transposed copy: distinct values and casts of strided columns take
    # several times longer.
    return list(_indexable(np.ascontiguousarray(X.T))), [None] * X.shape[1]


def _indexable(values: np.ndarray) -> np.ndarray:
    """float16 values as float32 (exactly): pandas has no float16 index."""
    return values.astype(np.float32) if values.dtype == np.float16 else values


_NEGATIVE = (
    "Negative values in data passed to CategoricalNB (input X): feature {} is "
    "numeric, so its values are category codes 0, 1, 2, ...; to take any "
    "numbers as labels, pass categories='observed' (or list them in categories=)"
)


# The largest number of categories a column read as codes may ask for: the
# tables hold a row per category (and class), so a code of 1e150 or 2**62 is
# a mistake to report, not an allocation to attempt.
MAX_CATEGORIES = 1 << 26


def check_code_range(top, name) -> None:
    """A code ``top`` (the largest of a column) that implies more than
    :data:`MAX_CATEGORIES` categories is a ValueError naming the feature."""
    if top >= MAX_CATEGORIES:
        raise ValueError(
            f"feature {name} has the code {top:.6g}: numeric features are "
            "category codes 0, 1, 2, ..., so it would need more than "
            f"{MAX_CATEGORIES:,} categories; pass categories='observed' to "
            "make each value its own category"
        )


def fractional_message(names: list) -> str:
    """What truncating the fractional values of the features ``names`` says."""
    return (
        f"feature(s) {', '.join(names)} have fractional values; numeric features "
        "are category codes and are truncated to integers (as scikit-learn does); "
        "pass categories='observed' to make each value its own category, or model "
        "a continuous feature with GaussianNB or MixedNB"
    )


# What pandas infers for an object column whose values are all real numbers
# (Python or numpy integers and floats; missing values skipped). Booleans
# ("boolean"), strings, decimals, complex numbers and mixtures of numbers with
# anything else infer to other names.
_REAL_NUMBERS = frozenset({"integer", "floating", "mixed-integer-float"})


def holds_real_numbers(col: np.ndarray) -> bool:
    """Whether an object column's values (missing ones aside) are all real
    numbers, integers or floats but not booleans, and there is at least one.
    Missing values are the encoder's (NaN, None, pd.NA, pd.NaT)."""
    missing = is_missing(col)
    observed = col[~missing] if missing.any() else col
    return pd.api.types.infer_dtype(observed, skipna=True) in _REAL_NUMBERS


def code_values(
    col: np.ndarray, name: str, fractional: list | None = None
) -> np.ndarray:
    """A numeric column as codes, ``-1`` where missing (NaN, None, pd.NA).

    As scikit-learn's CategoricalNB: negative values are an error, and
    fractional values are truncated toward zero. A column with fractional
    values appends ``name`` to ``fractional`` (when given), so that the
    caller warns once for all of them.
    """
    if col.dtype.kind in "iu":
        if col.size and col.min() < 0:
            raise ValueError(_NEGATIVE.format(name))
        if col.size:
            check_code_range(int(col.max()), name)
        return col.astype(np.intp)
    if col.dtype.kind not in "fc":  # an object column of numbers, bools
        # Missing as everywhere in the encoder (NaN, None, pd.NA, pd.NaT): a
        # new array, never the caller's.
        missing = is_missing(col)
        if missing.any():
            col = np.where(missing, np.nan, col)
        try:
            col = col.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"feature {name} of X holds values that are not numbers, where "
                "the model was fitted on numeric category codes"
            ) from None
    missing = np.isnan(col)
    values = np.where(missing, 0.0, col)
    if (values < 0).any():
        raise ValueError(_NEGATIVE.format(name))
    if np.isinf(values).any():
        raise ValueError(f"feature {name} of X contains infinity")
    if values.size:
        check_code_range(float(values.max()), name)
    whole = np.trunc(values)
    if fractional is not None and (whole != values).any():
        fractional.append(name)
    codes = whole.astype(np.intp)
    codes[missing] = -1
    return codes


class CategoryEncoder:
    """The categories of every column, by one policy, and the codes of data.

    Build it with :meth:`fit` (or :meth:`fit_integers` for an integer matrix);
    it then encodes every later ``X`` the same way. Codes are ``0 .. t_j - 1``
    in the order of ``categories[j]``, ``-1`` where a value is missing, and
    ``-2`` where it is not among the categories (see the module for the
    policy).

    Parameters
    ----------
    categories : list of ndarray
        The categories of every column, in the order of their codes.
    names : list of str
        How errors name each column (``"0"``, ``"'colour'"``).
    fixed : array-like of bool, default=None
        Columns whose categories were declared by a parameter: :meth:`extend`
        never adds to them. None: none.
    coded : array-like of bool, default=None
        Numeric columns read as codes ``0, 1, 2, ...``. None: none.
    noun : tuple of str, default=("feature", "value", "categories")
        What a column, a value and the categories are called in errors
        (a network says ``("variable", "state", "states")``).
    """

    def __init__(
        self,
        categories: list,
        names: list,
        fixed=None,
        coded=None,
        noun: tuple = ("feature", "value", "categories"),
    ) -> None:
        d = len(categories)
        self.categories = list(categories)
        self.names = list(names)
        self.fixed = np.zeros(d, dtype=bool) if fixed is None else np.asarray(fixed)
        self.coded = np.zeros(d, dtype=bool) if coded is None else np.asarray(coded)
        self.noun = noun
        self._set_identity()

    def _set_identity(self) -> None:
        # Categories 0 .. t_j - 1 everywhere: an integer matrix is its own codes.
        self.identity = all(
            c.dtype.kind in "iu" and np.array_equal(c, np.arange(len(c)))
            for c in self.categories
        )

    @property
    def n_categories(self) -> np.ndarray:
        """Number of categories of every column."""
        return np.array([len(c) for c in self.categories], dtype=np.intp)

    # -- fitting ---------------------------------------------------------------
    @classmethod
    def fit(
        cls,
        cols: list,
        names: list,
        *,
        dtypes: list | None = None,
        declared: list | None = None,
        coded=None,
        min_categories=None,
        keep: np.ndarray | None = None,
        noun: tuple = ("feature", "value", "categories"),
        allow_empty: bool = False,
    ) -> CategoryEncoder:
        """The categories of ``cols`` by the policy of the module.

        Parameters
        ----------
        cols : list of ndarray
            The columns (:func:`split_columns`).
        names : list of str
            How errors name each column.
        dtypes : list, default=None
            Each column's pandas ``CategoricalDtype``, or None.
        declared : list, default=None
            Each column's declared categories (array-like of distinct labels),
            or None.
        coded : array-like of bool, default=None
            The numeric columns to read as codes ``0 .. max``.
        min_categories : array-like of int of shape (n_columns,), default=None
            At least this many categories ``0 .. t - 1`` for columns whose
            categories are non-negative integers (0: no minimum).
        keep : ndarray of bool, default=None
            The rows that count (positive weight); None: all of them.
        noun : tuple of str, default=("feature", "value", "categories")
            As the class.
        allow_empty : bool, default=False
            Whether a column may have no category (no observed value and
            none declared); otherwise that is a ValueError.

        Returns
        -------
        CategoryEncoder
        """
        d = len(cols)
        dtypes = [None] * d if dtypes is None else dtypes
        declared = [None] * d if declared is None else declared
        coded = np.zeros(d, dtype=bool) if coded is None else np.asarray(coded)
        mins = np.zeros(d, dtype=np.intp) if min_categories is None else min_categories
        categories, fixed = [], np.zeros(d, dtype=bool)
        for j, col in enumerate(cols):
            col = col if keep is None else col[keep]
            if declared[j] is not None:
                cats = declared_categories(declared[j], names[j], noun)
                fixed[j] = True
            elif dtypes[j] is not None:
                cats = dtypes[j].categories.to_numpy()
            elif coded[j]:
                # Fractional values are reported by the encoding that follows.
                cats = np.arange(code_values(col, names[j]).max(initial=-1) + 1)
            else:
                cats = fit_categories(col, is_missing(col))
            if mins[j] > 0:
                cats = _at_least(cats, int(mins[j]), names[j])
            if len(cats) == 0 and not allow_empty:
                raise ValueError(
                    f"{noun[0]} {names[j]} has no observed {noun[1]}; declare its "
                    f"{noun[2]}"
                )
            categories.append(cats)
        return cls(categories, names, fixed, coded, noun)

    @classmethod
    def fit_matrix(
        cls,
        X,
        names: list,
        *,
        as_codes: bool = False,
        declared: list | None = None,
        min_categories=None,
        keep: np.ndarray | None = None,
    ) -> tuple[CategoryEncoder, list | None]:
        """The encoder of every column of a validated ``X`` (an ndarray or a
        DataFrame), by the policy of the module.

        An integer matrix with nothing declared takes its fast path
        (:meth:`fit_integers`); otherwise the columns are split and fitted
        one by one (:meth:`fit`). With ``as_codes``, numeric columns (a
        numeric pandas categorical included: scikit-learn reads its values)
        are codes ``0 .. max``.

        Returns
        -------
        encoder : CategoryEncoder
        cols : list of ndarray or None
            The columns, for :meth:`encode_matrix` to reuse; None when the
            integer path fitted the categories from the rows themselves.
        """
        d = X.shape[1]
        declared = [None] * d if declared is None else list(declared)
        if is_integer_matrix(X) and all(c is None for c in declared):
            encoder = cls.fit_integers(
                X, names, as_codes=as_codes, min_categories=min_categories, keep=keep
            )
            if encoder is not None:
                return encoder, None
        cols, dtypes = split_columns(X)
        # As scikit-learn, which casts X to integers: numeric columns, and
        # plain object columns of numbers, are codes.
        coded = np.array(
            [
                as_codes
                and declared[j] is None
                and (
                    col.dtype.kind in "iuf"
                    or (
                        dtypes[j] is None
                        and col.dtype.kind == "O"
                        and holds_real_numbers(col)
                    )
                )
                for j, col in enumerate(cols)
            ],
            dtype=bool,
        )
        dtypes = [None if coded[j] else dt for j, dt in enumerate(dtypes)]
        encoder = cls.fit(
            cols,
            names,
            dtypes=dtypes,
            declared=declared,
            coded=coded,
            min_categories=min_categories,
            keep=keep,
        )
        return encoder, cols

    @classmethod
    def fit_integers(
        cls,
        X: np.ndarray,
        names: list,
        *,
        as_codes: bool,
        min_categories=None,
        keep: np.ndarray | None = None,
    ) -> CategoryEncoder | None:
        """The encoder of an integer matrix, in one or two passes over it.

        ``as_codes``: every column is read as codes (categories ``0 .. max``);
        otherwise the categories are the sorted distinct values. None when the
        values span too wide a range for the passes (:func:`integer_categories`):
        :meth:`fit` on the columns then gives the same encoder.
        """
        d = X.shape[1]
        Xk = X if keep is None else X[keep]
        if as_codes:
            if Xk.size and Xk.min() < 0:
                raise ValueError(_NEGATIVE.format(names[int(np.argmin(Xk.min(0)))]))
            tops = Xk.max(axis=0) if Xk.size else np.full(d, -1)
            for j, t in enumerate(tops.tolist()):
                check_code_range(t, names[j])
            categories = [np.arange(int(t) + 1) for t in tops]
            coded = np.ones(d, dtype=bool)
        else:
            categories = integer_categories(Xk)
            if categories is None:
                return None
            coded = None
        mins = np.zeros(d, dtype=np.intp) if min_categories is None else min_categories
        for j in range(d):
            if mins[j] > 0:
                categories[j] = _at_least(categories[j], int(mins[j]), names[j])
            if len(categories[j]) == 0:
                raise ValueError(f"feature {names[j]} has no observed value")
        return cls(categories, names, None, coded)

    def extend(self, cols: list, keep: np.ndarray | None = None) -> bool:
        """Add the values of ``cols`` (rows of ``keep``) that are not yet
        categories, after the existing ones, to every column whose categories
        were not declared. Returns whether any column grew."""
        grew = False
        for j, col in enumerate(cols):
            col = col if keep is None else col[keep]
            cats = self.categories[j]
            if self.coded[j]:
                top = code_values(col, self.names[j]).max(initial=-1)  # as fit
                if top >= len(cats):
                    self.categories[j] = np.arange(top + 1)
                    grew = True
            elif not self.fixed[j]:
                missing = is_missing(col)
                unknown = encode_column(col, cats, missing) == -2
                if unknown.any():
                    added = fit_categories(col[unknown], missing[unknown])
                    self.categories[j] = np.concatenate([cats, added])
                    grew = True
        if grew:
            self._set_identity()
        return grew

    # -- encoding ----------------------------------------------------------------
    def integer_codes(self, X: np.ndarray, in_range: bool = False):
        """An integer matrix as its own codes, or None if :meth:`encode` must
        map it (categories other than ``0 .. t_j - 1``, or values out of range).

        ``in_range`` says the categories were found in these very rows, so no
        value can be out of range. The codes may be ``X`` itself (no copy):
        they are only read.
        """
        if not self.identity:
            return None
        codes = np.ascontiguousarray(X, dtype=np.intp)
        if not in_range and count_out_of_range(codes, self.n_categories):
            return None
        return codes

    def encode_matrix(
        self,
        X,
        cols: list | None = None,
        *,
        in_range: bool = False,
        **kwargs,
    ) -> np.ndarray:
        """Codes of a validated ``X``: an integer matrix is its own codes when
        it can be (:meth:`integer_codes`), any other ``X`` is encoded column by
        column (:meth:`encode`, which takes the keyword arguments; ``cols``:
        the columns of ``X`` if already split)."""
        if is_integer_matrix(X):
            codes = self.integer_codes(X, in_range=in_range)
            if codes is not None:
                return codes
        if cols is None:
            cols, _ = split_columns(X)
        return self.encode(cols, **kwargs)

    def encode(
        self,
        cols: list,
        *,
        unknown: str = "error",
        fitting: bool = False,
        keep: np.ndarray | None = None,
        hint: str = "",
        fractional: list | None = None,
    ) -> np.ndarray:
        """Codes ``(n, n_columns)``: -1 where missing or ignored.

        Parameters
        ----------
        cols : list of ndarray
        unknown : {'error', 'ignore'}, default='error'
            A value outside the categories: a ValueError, or a missing cell.
        fitting : bool, default=False
            Whether the rows are being fitted: an unknown value is then an
            error whatever ``unknown`` says, and ``hint`` tells how to
            declare it.
        keep : ndarray of bool, default=None
            In fit, the rows of positive weight: an unknown value in another
            row is not part of the data (a missing cell).
        hint : str, default=''
            The end of the error of an unknown value in fit.
        fractional : list, default=None
            Where to append the name of every column read as codes that has
            fractional values (truncated), for the caller's one warning. None:
            one warning here, naming them all.
        """
        sink = [] if fractional is None else fractional
        # Written a column at a time into contiguous rows, transposed once.
        codes = np.empty((len(cols), len(cols[0])), dtype=np.intp)
        for j, col in enumerate(cols):
            if self.coded[j]:
                code = code_values(col, self.names[j], sink)
                code[code >= len(self.categories[j])] = -2
            else:
                code = encode_column(col, self.categories[j], is_missing(col))
            if keep is not None:
                code[~keep & (code == -2)] = -1  # weight 0: not part of the data
            bad = code == -2
            if bad.any():
                if fitting or unknown == "error":
                    self._raise_unknown(j, col[np.argmax(bad)], fitting, hint)
                code[bad] = -1
            codes[j] = code
        if fractional is None and sink:
            warn(fractional_message(sink), UserWarning)
        return np.ascontiguousarray(codes.T)

    def _raise_unknown(self, j: int, value, fitting: bool, hint: str):
        if isinstance(value, np.generic):
            value = value.item()
        column, item, plural = self.noun
        raise ValueError(
            f"{column} {self.names[j]} has {item} {value!r}, not among its "
            f"{plural} {self.categories[j].tolist()!r}"
            + (hint if fitting else "; use handle_unknown='ignore'")
        )


def declared_categories(values, name: str, noun: tuple) -> np.ndarray:
    """Declared labels as an array, in the given order; distinct and not missing."""
    column, _, plural = noun
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(
            f"{plural} of {column} {name} must be a list of labels, got {values!r}"
        )
    index = pd.Index(list(values))
    if len(index) == 0:
        raise ValueError(f"{plural} of {column} {name} is empty")
    if index.hasnans:
        raise ValueError(f"{plural} of {column} {name} contain a missing value")
    if index.has_duplicates:
        dup = index[index.duplicated()].tolist()
        raise ValueError(f"{plural} of {column} {name} repeat {dup!r}")
    return index.to_numpy()


def _at_least(cats: np.ndarray, minimum: int, name: str) -> np.ndarray:
    """Categories ``0 .. max(minimum, top) - 1`` of a column coded ``0, 1, ...``
    (scikit-learn's ``min_categories``)."""
    if cats.dtype.kind not in "iu" or (len(cats) and cats.min() < 0):
        raise ValueError(
            "min_categories applies to features coded 0, 1, 2, ...; "
            f"feature {name} has other values"
        )
    top = int(cats.max()) + 1 if len(cats) else 0
    if minimum > MAX_CATEGORIES:
        raise ValueError(
            f"min_categories asks for {minimum:,} categories of feature {name}; "
            f"at most {MAX_CATEGORIES:,} are supported"
        )
    check_code_range(top - 1, name)
    return np.arange(max(minimum, top))


def is_integer_matrix(X) -> bool:
    """Whether ``X`` is a 2-d ndarray of integers that ``intp`` holds exactly."""
    return (
        isinstance(X, np.ndarray)
        and X.ndim == 2
        and (X.dtype.kind == "i" or (X.dtype.kind == "u" and X.dtype.itemsize < 8))
    )


def integer_categories(X: np.ndarray) -> list | None:
    """Sorted distinct values of every column of an integer matrix.

    None when ``X`` has no rows, or when the columns' ranges together span more
    values than ``X`` has cells (plus 65536): marking seen values would then
    cost more than sorting each column.
    """
    values = np.ascontiguousarray(X, dtype=np.intp)
    n, d = values.shape
    if n == 0:
        return None
    low = np.empty(d, dtype=np.intp)
    high = np.empty(d, dtype=np.intp)
    if values.size < _NUMPY_SIZE:
        values.min(axis=0, out=low)
        values.max(axis=0, out=high)
    else:
        _column_ranges(values, low, high)
    spans = [int(h) - int(lo) + 1 for lo, h in zip(low, high)]  # no overflow
    if sum(spans) > values.size + (1 << 16):
        return None
    offsets = np.zeros(d + 1, dtype=np.intp)
    np.cumsum(spans, out=offsets[1:])
    seen = np.zeros(offsets[-1], dtype=np.bool_)
    if values.size < _NUMPY_SIZE:
        seen[values + (offsets[:-1] - low)] = True
    else:
        _mark_values(values, offsets[:-1] - low, seen)
    return [
        (low[j] + np.flatnonzero(seen[offsets[j] : offsets[j + 1]])).astype(X.dtype)
        for j in range(d)
    ]


def count_out_of_range(codes: np.ndarray, n_categories: np.ndarray) -> int:
    """Number of entries of column ``j`` of ``codes`` outside ``0 .. t_j - 1``.

    ``codes`` is a C-ordered ``intp`` matrix.
    """
    n_categories = np.asarray(n_categories, dtype=np.intp)
    if codes.size < _NUMPY_SIZE:
        return int(np.count_nonzero((codes < 0) | (codes >= n_categories)))
    return int(_count_out_of_range(codes, n_categories))


# Below this many cells numpy does the passes below: the compiled ones save
# microseconds there, and compiling them takes a second in an environment whose
# disk cache is empty (a first fit).
_NUMPY_SIZE = 1 << 14


# Serial, as the emission kernels are (see bayeskit.emissions._kernels).
_JIT = {"nogil": True}


@njit(**_JIT)
def _column_ranges(X, low, high):  # pragma: no cover - compiled
    """Minimum and maximum of every column, one pass over the rows."""
    n, d = X.shape
    for j in range(d):
        low[j] = X[0, j]
        high[j] = X[0, j]
    for i in range(1, n):
        for j in range(d):
            v = X[i, j]
            low[j] = min(low[j], v)
            high[j] = max(high[j], v)


@njit(**_JIT)
def _mark_values(X, base, seen):  # pragma: no cover - compiled
    """``seen[base[j] + x] = True`` for every value ``x`` of column ``j``."""
    n, d = X.shape
    for i in range(n):
        for j in range(d):
            seen[base[j] + X[i, j]] = True


@njit(**_JIT)
def _count_out_of_range(X, n_categories):  # pragma: no cover - compiled
    n, d = X.shape
    bad = 0
    for i in range(n):
        for j in range(d):
            v = X[i, j]
            bad += (v < 0) | (v >= n_categories[j])
    return bad


def categorical_input_tags(tags):
    """Declare what every categorical estimator takes: category labels of any
    type (strings included), with missing values."""
    tags.input_tags.categorical = True
    tags.input_tags.string = True
    tags.input_tags.allow_nan = True
    return tags
