"""The compare tool on a column of documents: ``--text COLUMN`` and the bundled
``topics`` data set."""

import json

import numpy as np
import pytest
from sklearn.compose import make_column_transformer
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.model_selection import StratifiedKFold, cross_validate
from sklearn.pipeline import make_pipeline

from bayeskit import MultinomialNB
from bayeskit.cli import curve as lc
from bayeskit.cli import data as cd
from bayeskit.cli.main import main
from bayeskit.cli.text import _BACKGROUND, _TOPICS, make_topics


@pytest.fixture(scope="module")
def topics_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("text") / "topics.csv"
    df = make_topics(240, random_state=1)
    df["extra"] = np.arange(len(df))  # a column --text leaves out
    df.to_csv(path, index=False)
    return path, df


def test_text_csv_models_and_their_scores(topics_csv, tmp_path, capsys):
    path, df = topics_csv
    out = tmp_path / "r.json"
    args = ["--csv", str(path), "--target", "topic", "--text", "text"]
    assert main([*args, "--no-progress", "--cv", "3", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "240 documents in text column 'text'" in printed
    results = {
        (r["model"], r["library"]): r for r in json.loads(out.read_text())["results"]
    }
    assert set(results) == {
        ("MultinomialNB", "bayeskit"),
        ("ComplementNB", "bayeskit"),
        ("BernoulliNB", "bayeskit"),
        ("MultinomialNB", "scikit-learn"),
        ("LogisticRegression", "scikit-learn"),
    }
    # the same folds and pipeline by hand
    pipe = make_pipeline(
        make_column_transformer((CountVectorizer(), "text")), MultinomialNB()
    )
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    want = cross_validate(pipe, df[["text"]], df["topic"], cv=cv)["test_score"]
    got = results["MultinomialNB", "bayeskit"]["accuracy"]["mean"]
    assert got == pytest.approx(want.mean(), abs=1e-12)
    # scikit-learn's MultinomialNB on the same counts: the same accuracy
    same = results["MultinomialNB", "scikit-learn"]["accuracy"]["mean"]
    assert got == pytest.approx(same, abs=1e-12)


def test_learning_curve_naive_bayes_wins_with_few_documents():
    data = cd.load_dataset("topics")
    curve = lc.learning_curve(data, n_repeats=3, progress=False)
    assert curve.models[0].startswith("naive Bayes (bayeskit MultinomialNB")
    error = np.nanmean(curve.errors, axis=2)
    nb, logistic = error
    assert (nb[:3] < logistic[:3]).all()  # the fewest training documents
    assert nb[-1] < 0.1 and logistic[-1] < 0.1  # both learn the topics


def test_topics_follow_their_documented_model():
    df = make_topics(2000, topic_share=0.2, random_state=3)
    assert set(df["topic"]) == set(_TOPICS)
    words = df["text"].str.split()
    assert words.map(len).min() >= 4
    assert words.map(len).mean() == pytest.approx(12, abs=0.5)
    own = [np.mean([w in _TOPICS[t] for w in ws]) for ws, t in zip(words, df["topic"])]
    assert np.mean(own) == pytest.approx(0.2, abs=0.02)
    background = set(_BACKGROUND)
    assert all(
        w in background or w in _TOPICS[t]
        for ws, t in zip(words, df["topic"])
        for w in ws
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--text", "text"], "--text COLUMN goes with --csv"),
        (
            ["--csv", "{csv}", "--target", "topic", "--text", "nope"],
            "text column 'nope'",
        ),
        (["--csv", "{csv}", "--target", "topic", "--text", "topic"], "is the target"),
    ],
)
def test_text_errors_are_one_line(extra, message, topics_csv, capsys):
    args = [a.replace("{csv}", str(topics_csv[0])) for a in extra]
    assert main(["compare", *args]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and message in err[0]
