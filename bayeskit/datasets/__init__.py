"""Small data sets that ship with bayeskit (no download)."""

from __future__ import annotations

from importlib import resources

import pandas as pd

from ._networks import load_network
from ._waste import load_waste_incinerator

__all__ = [
    "flu_network",
    "load_earthquakes",
    "load_network",
    "load_playtennis",
    "load_waste_incinerator",
]


def load_playtennis() -> pd.DataFrame:
    """The PlayTennis data of Mitchell (1997, table 3.2), his naive Bayes example.

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


def load_earthquakes() -> pd.DataFrame:
    """Annual counts of major earthquakes worldwide, 1900-2006.

    The number of earthquakes of magnitude 7 or more in every year from 1900
    to 2006, as compiled by the U.S. Geological Survey's National Earthquake
    Information Center and tabulated by Zucchini and MacDonald (2009, table
    1.1), who use the series throughout their book to introduce Poisson hidden
    Markov models. The counts are overdispersed for a single Poisson
    distribution (mean 19.36, variance 51.57) and serially correlated: busy
    and quiet decades alternate. USGS data are in the public domain.

    Returns
    -------
    DataFrame of shape (107, 1)
        One integer column, ``count``, indexed by ``year`` (1900 .. 2006).

    Notes
    -----
    These are the counts the USGS catalogue gave in 2007, when Zucchini and
    MacDonald retrieved them; later revisions of the catalogue (such as the
    ISC-GEM relocations) count some years differently.

    References
    ----------
    W. Zucchini and I. L. MacDonald, *Hidden Markov Models for Time Series:
    An Introduction Using R*, Chapman & Hall/CRC, 2009, chapter 1.

    Examples
    --------
    >>> from bayeskit.datasets import load_earthquakes
    >>> quakes = load_earthquakes()
    >>> quakes.shape, int(quakes["count"].sum())
    ((107, 1), 2072)
    >>> quakes.loc[1900:1904, "count"].tolist()
    [13, 14, 8, 10, 16]
    """
    path = resources.files("bayeskit.datasets") / "data" / "earthquakes.csv"
    with resources.as_file(path) as f:
        return pd.read_csv(f, index_col="year", dtype={"year": int, "count": int})


def flu_network():
    """A small medical-diagnosis network around flu, with illustrative CPTs.

    Six binary variables: flu (x1), fever (x2), sinus_infection (x3),
    temperature (x4), sinus_swelling (x5) and headache (x6), with

    .. math::

        p(x) = p(x_1)\\, p(x_2 \\mid x_1)\\, p(x_3 \\mid x_1)\\, p(x_4 \\mid x_2)
               \\, p(x_5 \\mid x_3)\\, p(x_6 \\mid x_2, x_5):

    13 free parameters against 63 for the full joint table. **The numbers in
    the CPTs are made up for illustration**, chosen only to be plausible.

    Returns
    -------
    BayesianNetwork
        Built by hand with ``set_cpd``: every variable has the states
        ``["no", "yes"]`` except temperature, ``["normal", "high"]``.

    Examples
    --------
    "The patient has a headache and a high temperature: does he have the flu?"

    >>> from bayeskit.datasets import flu_network
    >>> bn = flu_network()
    >>> bn.query("flu", evidence={"headache": "yes",
    ...                           "temperature": "high"})["yes"].round(4)
    np.float64(0.5608)
    """
    from ..network._network import BayesianNetwork

    no_yes = ["no", "yes"]
    bn = BayesianNetwork(
        [
            ("flu", "fever"),
            ("flu", "sinus_infection"),
            ("fever", "temperature"),
            ("sinus_infection", "sinus_swelling"),
            ("fever", "headache"),
            ("sinus_swelling", "headache"),
        ],
        states={
            "flu": no_yes,
            "fever": no_yes,
            "sinus_infection": no_yes,
            "temperature": ["normal", "high"],
            "sinus_swelling": no_yes,
            "headache": no_yes,
        },
    )
    bn.set_cpd("flu", [0.9, 0.1])
    bn.set_cpd("fever", [[0.95, 0.05], [0.2, 0.8]])  # rows: flu = no, yes
    bn.set_cpd("sinus_infection", [[0.9, 0.1], [0.6, 0.4]])  # rows: flu
    bn.set_cpd("temperature", [[0.9, 0.1], [0.1, 0.9]])  # rows: fever
    bn.set_cpd("sinus_swelling", [[0.95, 0.05], [0.3, 0.7]])  # rows: infection
    bn.set_cpd(  # [fever, sinus_swelling, headache]
        "headache", [[[0.9, 0.1], [0.4, 0.6]], [[0.5, 0.5], [0.1, 0.9]]]
    )
    return bn
