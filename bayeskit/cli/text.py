"""The compare tool on a text column: ``--csv PATH --target COL --text COL``.

Naive Bayes on word counts (bayeskit's MultinomialNB, ComplementNB and
BernoulliNB, scikit-learn's MultinomialNB as the baseline) against logistic
regression on TF-IDF, each a pipeline from the raw text (scikit-learn's
``CountVectorizer`` / ``TfidfVectorizer`` inside the pipeline, so every fold
builds its vocabulary from its own training rows only).

The bundled ``topics`` data set is generated from a documented model
(:func:`make_topics`): short documents of three topics that share a
Zipf-distributed background vocabulary, the setting where naive Bayes, with
its few parameters per word, learns from fewer documents than logistic
regression (Ng and Jordan, 2001).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# The vocabulary of the generated topics: a background of common words shared
# by every topic, and each topic's own words.
_BACKGROUND = (
    "the of and to in a is that for it as was with be by on not he this are or "
    "his from at which but have an they you were her she there been one all we "
    "their has would when if so no what up out more them some could into time"
).split()
_TOPICS = {
    "sport": (
        "match goal team season coach player league score win cup final striker "
        "keeper penalty referee stadium fans transfer injury derby"
    ).split(),
    "politics": (
        "vote election party minister parliament policy law campaign senate "
        "budget tax reform debate leader coalition poll bill court mayor union"
    ).split(),
    "science": (
        "cell study data experiment theory energy protein gene climate species "
        "particle model research molecule lab galaxy neuron quantum sample fossil"
    ).split(),
}


def make_topics(
    n_documents: int = 3000, topic_share: float = 0.2, random_state: int = 0
) -> pd.DataFrame:
    """Short documents of three topics, generated from a documented model.

    Each document has a topic drawn uniformly from ``sport``, ``politics`` and
    ``science`` and ``4 + Poisson(8)`` words. Each word is, with probability
    ``topic_share``, one of its topic's 20 words (word ``r`` of the list with
    probability proportional to ``1 / r``), and otherwise one of 60 background
    words shared by every topic (Zipf-distributed the same way). Every topic
    word belongs to one topic only, so the topic is identifiable from a few
    informative words among many uninformative ones.

    Parameters
    ----------
    n_documents : int, default=3000
    topic_share : float, default=0.2
        Probability that a word is drawn from the document's topic.
    random_state : int, default=0

    Returns
    -------
    DataFrame with columns ``text`` and ``topic``
    """
    rng = np.random.default_rng(random_state)

    def zipf(words):
        p = 1.0 / np.arange(1, len(words) + 1)
        return np.asarray(words), p / p.sum()

    background, p_background = zipf(_BACKGROUND)
    topics = list(_TOPICS)
    labels = rng.integers(len(topics), size=n_documents)
    texts = []
    for label in labels:
        words, p_words = zipf(_TOPICS[topics[label]])
        n_words = 4 + rng.poisson(8)
        own = rng.random(n_words) < topic_share
        drawn = np.where(
            own,
            rng.choice(words, n_words, p=p_words),
            rng.choice(background, n_words, p=p_background),
        )
        texts.append(" ".join(drawn))
    return pd.DataFrame({"text": texts, "topic": np.asarray(topics)[labels]})


def _text_pipeline(column: str, vectorizer, model):
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline

    return make_pipeline(make_column_transformer((vectorizer, column)), model)


def candidates(column: str) -> list:
    """``(name, library, input, pipeline)`` of the compare tool on text: each
    pipeline reads the raw text of ``column``."""
    from sklearn import naive_bayes as sk_nb
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    import bayeskit as bk

    def counts(model):
        return _text_pipeline(column, CountVectorizer(), model)

    return [
        ("MultinomialNB", "bayeskit", "word counts", counts(bk.MultinomialNB())),
        ("ComplementNB", "bayeskit", "word counts", counts(bk.ComplementNB())),
        ("BernoulliNB", "bayeskit", "word presence", counts(bk.BernoulliNB())),
        ("MultinomialNB", "scikit-learn", "word counts", counts(sk_nb.MultinomialNB())),
        (
            "LogisticRegression",
            "scikit-learn",
            "TF-IDF",
            _text_pipeline(
                column, TfidfVectorizer(), LogisticRegression(max_iter=1000)
            ),
        ),
    ]


def curve_models(column: str) -> list:
    """Naive Bayes on word counts and logistic regression on TF-IDF."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    import bayeskit as bk

    return [
        (
            "naive Bayes (bayeskit MultinomialNB, word counts)",
            _text_pipeline(column, CountVectorizer(), bk.MultinomialNB()),
        ),
        (
            "logistic regression (TF-IDF)",
            _text_pipeline(
                column, TfidfVectorizer(), LogisticRegression(max_iter=1000)
            ),
        ),
    ]
