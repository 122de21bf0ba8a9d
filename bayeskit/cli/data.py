"""The compare tool's data: the bundled data sets, the user's CSV, and the
encodings each model is given (standardised numbers, quantile bins, ordinal
codes, one-hot).

Problems with the user's input raise :class:`CompareError`, which the command
line prints as one line (exit status 2).
"""

from __future__ import annotations

import gzip
import io
import lzma
import tarfile
import zipfile
import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

DEFAULT_DATASET = "breast_cancer"
N_BINS = 5


class CompareError(Exception):
    """A problem with the input that the user can fix (one line, exit status 2)."""


# ------------------------------------------------------------------------- data


@dataclass
class Dataset:
    """A classification table: features ``X`` (a DataFrame) and target ``y``."""

    name: str
    X: pd.DataFrame
    y: pd.Series
    source: str
    text: str | None = None  # the column of documents, for the text models

    @property
    def categorical(self) -> list:
        """Columns taken as categorical: dtype object, string, category or bool."""
        return [c for c in self.X.columns if _is_categorical(self.X[c])]

    @property
    def numeric(self) -> list:
        cat = set(self.categorical)
        return [c for c in self.X.columns if c not in cat]

    @property
    def kind(self) -> str:
        """'numeric', 'categorical' or 'mixed'."""
        if not self.categorical:
            return "numeric"
        return "mixed" if self.numeric else "categorical"

    @property
    def classes(self) -> np.ndarray:
        return np.unique(self.y.to_numpy())

    def describe(self) -> str:
        if self.text is not None:
            return (
                f"{self.name} ({self.source}): {len(self.X)} documents in text "
                f"column {self.text!r}, {len(self.classes)} classes"
            )
        parts = []
        if self.numeric:
            parts.append(f"{len(self.numeric)} numeric")
        if self.categorical:
            parts.append(f"{len(self.categorical)} categorical")
        return (
            f"{self.name} ({self.source}): {len(self.X)} rows, "
            f"{' + '.join(parts)} features, {len(self.classes)} classes"
        )


def _is_categorical(column: pd.Series) -> bool:
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(dtype):
        return True
    return getattr(dtype, "kind", "O") in "OSUb"


def _sklearn_loader(loader_name):
    def load() -> tuple[pd.DataFrame, pd.Series]:
        from sklearn import datasets

        bunch = getattr(datasets, loader_name)(as_frame=True)
        y = pd.Series(
            np.asarray(bunch.target_names)[bunch.target.to_numpy()],
            name="target",
            index=bunch.data.index,
        )
        return bunch.data, y

    return load


def _load_playtennis() -> tuple[pd.DataFrame, pd.Series]:
    from ..datasets import load_playtennis

    df = load_playtennis()
    return df.drop(columns="PlayTennis"), df["PlayTennis"]


def _load_topics() -> tuple[pd.DataFrame, pd.Series]:
    from .text import make_topics

    df = make_topics()
    return df[["text"]], df["topic"]


DATASETS = {
    "breast_cancer": ("scikit-learn", _sklearn_loader("load_breast_cancer")),
    "iris": ("scikit-learn", _sklearn_loader("load_iris")),
    "wine": ("scikit-learn", _sklearn_loader("load_wine")),
    "playtennis": ("bayeskit", _load_playtennis),
    "topics": ("bayeskit, generated", _load_topics),
}

# Data sets whose one feature is a column of documents.
TEXT_DATASETS = {"topics": "text"}


def load_dataset(name: str = DEFAULT_DATASET) -> Dataset:
    """One of the bundled data sets (no download): see ``DATASETS``."""
    key = name.strip().lower().replace("-", "_")
    if key not in DATASETS:
        raise CompareError(
            f"unknown dataset {name!r}: choose one of {', '.join(sorted(DATASETS))}, "
            "or give --csv PATH --target COLUMN"
        )
    source, loader = DATASETS[key]
    X, y = loader()
    return _checked(Dataset(key, X, y, source, TEXT_DATASETS.get(key)), "target")


def read_text_csv(path: str, target: str, text: str, sep: str | None = None) -> Dataset:
    """The user's table with a column of documents: ``text`` is the one
    feature (the other columns are left out)."""
    data = read_csv(path, target, sep)
    if text == target:
        raise CompareError(f"--text {text!r} is the target column; name another")
    if text not in data.X.columns:
        shown = ", ".join(map(str, data.X.columns[:10]))
        raise CompareError(
            f"text column {text!r} is not in {path} or is empty (columns: {shown})"
        )
    X = data.X[[text]].fillna("").astype(str)
    return Dataset(data.name, X, data.y, data.source, text)


# The most bytes of a table read, after decompression: 256 MiB. A small
# compressed file can expand without bound; compare cross-validates a dozen
# models, and a table this large is far beyond what it is for.
MAX_CSV_BYTES = 256 * 2**20

_DECOMPRESSION_ERRORS = (
    gzip.BadGzipFile,
    lzma.LZMAError,
    zipfile.BadZipFile,
    zlib.error,
    tarfile.TarError,
    EOFError,
    OSError,  # bz2's "Invalid data stream"
)

# How each compressed format starts (told by the bytes, not by the name).
_MAGIC = {
    "gzip": b"\x1f\x8b",
    "bz2": b"BZh",
    "xz": b"\xfd7zXZ\x00",
    "zip": b"PK\x03\x04",
    "zstd": b"\x28\xb5\x2f\xfd",
}


def _capped(stream, path: str, max_bytes: int) -> bytes:
    data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        size = (
            f"{max_bytes / 2**20:g} MiB" if max_bytes >= 2**20 else f"{max_bytes} bytes"
        )
        raise CompareError(
            f"{path} holds more than {size} of text (after decompression): too "
            "large to compare models on; take a sample of its rows"
        )
    return data


def _one_member(names: list, path: str, kind: str) -> str:
    if len(names) != 1:
        raise CompareError(
            f"{path} is a {kind} archive of {len(names)} files: it must hold one table"
        )
    return names[0]


def _table_bytes(path: str, max_bytes: int | None = None) -> bytes:
    """The bytes of the table at ``path``: decompressed when they are gzip,
    bz2, xz, zstd or zip (a tar inside is unpacked), whatever the name, and
    never more than ``max_bytes`` of them (a CompareError beyond; None:
    ``MAX_CSV_BYTES``)."""
    import bz2

    max_bytes = MAX_CSV_BYTES if max_bytes is None else max_bytes

    with open(path, "rb") as f:
        head = f.read(8)
        f.seek(0)
        kind = next((k for k, m in _MAGIC.items() if head.startswith(m)), None)
        if kind is None:
            data = _capped(f, path, max_bytes)
        elif kind == "gzip":
            data = _capped(gzip.GzipFile(fileobj=f), path, max_bytes)
        elif kind == "bz2":
            data = _capped(bz2.BZ2File(f), path, max_bytes)
        elif kind == "xz":
            data = _capped(lzma.LZMAFile(f), path, max_bytes)
        elif kind == "zstd":
            try:
                import zstandard
            except ImportError:
                raise CompareError(
                    f"{path} is zstd-compressed: install zstandard "
                    "(pip install zstandard) or decompress it first"
                ) from None
            reader = zstandard.ZstdDecompressor().stream_reader(f)
            data = _capped(reader, path, max_bytes)
        else:
            with zipfile.ZipFile(f) as z:
                files = [i.filename for i in z.infolist() if not i.is_dir()]
                with z.open(_one_member(files, path, "zip")) as member:
                    data = _capped(member, path, max_bytes)
    if data[257:262] == b"ustar":  # a tar (.tar, .tar.gz, ...): its one table
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            files = [m for m in t.getmembers() if m.isfile()]
            member = _one_member([m.name for m in files], path, "tar")
            data = t.extractfile(member).read()
    return data


# Separators a table read as one column is likely to use, and how to name them
# on the command line.
_SEPARATORS = {",": "','", ";": "';'", "\t": "'\\t'", "|": "'|'", ":": "':'"}


def _separator(sep: str | None) -> str | None:
    """``--sep`` as pandas takes it: a tab may be written ``\\t`` or ``tab``."""
    if sep is None:
        return None
    if sep in ("\\t", "tab", "TAB"):
        return "\t"
    if sep == "":
        raise CompareError("--sep is empty; give the character between the columns")
    return sep


def _one_column_hint(df: pd.DataFrame, path: str, sep: str | None) -> str:
    """Why a table came out as one column, and the ``--sep`` that would read it."""
    header = str(df.columns[0])
    counts = {c: header.count(c) for c in _SEPARATORS if c != (sep or ",")}
    if len(header) > 60:
        header = header[:57] + "..."
    best = max(counts, key=counts.get)
    read_as = "comma-separated" if sep is None else f"separated by {sep!r}"
    if counts[best]:
        return (
            f"{path} was read ({read_as}) as one column, {header!r}; it looks "
            f"separated by {_SEPARATORS[best]}: pass --sep {_SEPARATORS[best]}"
        )
    return (
        f"{path} was read ({read_as}) as one column, {header!r}; a table to "
        "classify needs a target and features: pass --sep for the character "
        "between its columns"
    )


def read_csv(path: str, target: str, sep: str | None = None) -> Dataset:
    """The user's table: every column but ``target`` is a feature (``sep``:
    the separator, a comma if None)."""
    sep = _separator(sep)
    options = {} if sep is None else {"sep": sep}
    try:
        data = _table_bytes(path)
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        raise CompareError(f"cannot read {path}: {exc.strerror or exc}") from None
    except _DECOMPRESSION_ERRORS as exc:
        raise CompareError(f"cannot decompress {path}: {exc}") from None
    try:
        df = pd.read_csv(io.BytesIO(data), compression=None, **options)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CompareError(f"cannot parse {path} as CSV: {reason}") from None
    if df.shape[1] == 1:
        raise CompareError(_one_column_hint(df, path, sep))
    if target not in df.columns:
        shown = ", ".join(map(str, df.columns[:10]))
        more = ", ..." if len(df.columns) > 10 else ""
        raise CompareError(
            f"target column {target!r} is not in {path} (columns: {shown}{more})"
        )
    df = df[df[target].notna()]
    X = df.drop(columns=target)
    if X.shape[1] == 0:
        raise CompareError(f"{path} has no feature columns besides {target!r}")
    X = X.loc[:, X.notna().any()]
    if X.shape[1] == 0:
        raise CompareError(f"every feature column of {path} is empty")
    return _checked(
        Dataset(str(path), X, df[target], "CSV"), f"target column {target!r}"
    )


# A numeric target with more distinct values than this (and than a fifth of its
# rows) looks like a quantity to regress on, not class labels.
_MANY_CLASSES = 20


def _looks_continuous(y: pd.Series) -> bool:
    """Numbers (not booleans) with fractional values, or with more distinct
    values than ``_MANY_CLASSES`` and than a fifth of the rows."""
    if pd.api.types.is_bool_dtype(y.dtype) or not pd.api.types.is_numeric_dtype(
        y.dtype
    ):
        return False
    values = y.to_numpy(dtype=float)
    distinct = y.nunique()
    fractional = not np.all(np.mod(values, 1) == 0)
    return fractional or distinct > max(_MANY_CLASSES, len(y) // 5)


def _checked(data: Dataset, what: str) -> Dataset:
    y = data.y
    if _looks_continuous(y):
        raise CompareError(
            f"{what} looks continuous ({y.nunique()} distinct numbers in {len(y)} "
            "rows): compare cross-validates classifiers, which need class labels, "
            "not a quantity to regress on; bin it first (e.g. pandas.cut) to "
            "classify ranges of it"
        )
    counts = y.value_counts()
    if len(counts) < 2:
        only = f" ({counts.index[0]!r})" if len(counts) else ""
        raise CompareError(
            f"{what} has one class{only}: classification needs at least two"
        )
    rare = counts[counts < 2]
    if len(rare):
        raise CompareError(
            f"{what} has a class with a single row ({rare.index[0]!r}): "
            "cross-validation needs at least 2 rows per class"
        )
    return data


# -------------------------------------------------------------------- encodings


def _numeric_steps(data: Dataset, *final) -> list:
    from sklearn.impute import SimpleImputer

    missing = bool(data.numeric) and bool(data.X[data.numeric].isna().to_numpy().any())
    return [SimpleImputer(strategy="median")] * missing + list(final)


def _standardised(data: Dataset, model):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(*_numeric_steps(data, StandardScaler()), model)


def _bins():
    from sklearn.preprocessing import KBinsDiscretizer

    return KBinsDiscretizer(n_bins=N_BINS, encode="ordinal", strategy="quantile")


def _binned(data: Dataset, model, ordinal_codes: bool = False):
    """Numeric columns cut into quantile bins; categorical columns as they are
    (or as ordinal codes, unknown and missing values one extra code)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OrdinalEncoder

    parts = []
    if data.numeric:
        parts.append(
            ("num", make_pipeline(*_numeric_steps(data, _bins())), data.numeric)
        )
    if data.categorical and ordinal_codes:
        extra = _n_codes(data) - 1
        encoder = OrdinalEncoder(
            handle_unknown="use_encoded_value",
            unknown_value=extra,
            encoded_missing_value=extra,
        )
        parts.append(("cat", encoder, data.categorical))
    if not parts:
        return model
    columns = ColumnTransformer(
        parts, remainder="passthrough", verbose_feature_names_out=False
    ).set_output(transform="pandas")
    return make_pipeline(columns, model)


def _n_codes(data: Dataset) -> int:
    """Codes per column for scikit-learn's CategoricalNB: every bin or category,
    plus one for unknown and missing values."""
    most = max([data.X[c].nunique() for c in data.categorical], default=0)
    return max(most, N_BINS if data.numeric else 0) + 1


def _imputed(data: Dataset, model):
    """Missing numbers replaced by the column median (for MixedNB)."""
    steps = _numeric_steps(data)
    if not steps:
        return model
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline

    columns = ColumnTransformer(
        [("num", steps[0], data.numeric)],
        remainder="passthrough",
        verbose_feature_names_out=False,
    ).set_output(transform="pandas")
    return make_pipeline(columns, model)


def _one_hot(data: Dataset, model):
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    if data.kind == "numeric":
        return _standardised(data, model)
    parts = [("cat", OneHotEncoder(handle_unknown="ignore"), data.categorical)]
    if data.numeric:
        steps = _numeric_steps(data, StandardScaler())
        parts.insert(0, ("num", make_pipeline(*steps), data.numeric))
    return make_pipeline(ColumnTransformer(parts), model)
