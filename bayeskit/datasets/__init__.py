"""Small data sets that ship with bayeskit (no download)."""

from __future__ import annotations

from importlib import resources

import pandas as pd

__all__ = ["load_playtennis"]


def load_playtennis() -> pd.DataFrame:
    """The PlayTennis data of Mitchell (1997), the naive Bayes example of the notes.

    Returns
    -------
    DataFrame of shape (14, 5)
        Columns Outlook, Temperature, Humidity, Wind and the target
        PlayTennis ('Yes' or 'No'), indexed by the day (D1 .. D14).

    Examples
    --------
    >>> from bayeskit.datasets import load_playtennis
    >>> df = load_playtennis()
    >>> df.shape
    (14, 5)
    >>> df["PlayTennis"].value_counts().to_dict()
    {'Yes': 9, 'No': 5}
    """
    path = resources.files("bayeskit.datasets") / "data" / "playtennis.csv"
    with resources.as_file(path) as f:
        return pd.read_csv(f, index_col="Day", dtype=str)
