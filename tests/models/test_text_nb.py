"""MultinomialNB, BernoulliNB and ComplementNB: parity with scikit-learn on dense
and sparse input, the m-estimate, a brute-force multinomial likelihood, and the
statistics API (partial_fit, summarize / from_stats, sample_weight)."""

import itertools
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import naive_bayes as sk
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline

from bayeskit import BernoulliNB, CategoricalNB, ComplementNB, MultinomialNB
from bayeskit.emissions import Multinomial, MultinomialParams

CLASSES = {
    "MultinomialNB": (MultinomialNB, sk.MultinomialNB),
    "BernoulliNB": (BernoulliNB, sk.BernoulliNB),
    "ComplementNB": (ComplementNB, sk.ComplementNB),
}

# Every parameter the peer has, one setting at a time (alpha arrays are laid
# out for the 30 features of ``_data``).
PARAMS = {
    "MultinomialNB": [
        {},
        {"alpha": 0.01},
        {"alpha": 2.5},
        {"alpha": np.linspace(0.1, 3.0, 30)},
        {"fit_prior": False},
        {"class_prior": [0.1, 0.2, 0.3, 0.4]},
        {"alpha": 0.0, "force_alpha": False},
    ],
    "BernoulliNB": [
        {},
        {"alpha": 0.3},
        {"binarize": 1.5},
        {"binarize": 0.0, "fit_prior": False},
        {"class_prior": [0.4, 0.3, 0.2, 0.1]},
        {"alpha": 0.0, "force_alpha": False},
    ],
    "ComplementNB": [
        {},
        {"alpha": 0.5},
        {"norm": True},
        {"norm": True, "alpha": np.linspace(0.1, 3.0, 30)},
        {"fit_prior": False, "class_prior": [0.25, 0.25, 0.25, 0.25]},
        {"alpha": 0.0, "force_alpha": False},
    ],
}

SPARSE = [sp.csr_matrix, sp.csr_array, sp.csc_matrix, sp.csc_array]


def _data(seed=0, n=120, d=30, k=4):
    """Zipf-like counts: a few frequent words, many rare ones."""
    rng = np.random.default_rng(seed)
    rates = 2.0 / np.arange(1, d + 1)
    y = rng.integers(0, k, n)
    shift = rng.permutation(d)[:k]
    X = rng.poisson(
        rates[None, :] * (1 + 3 * (np.arange(d)[None, :] == shift[y, None]))
    )
    return X.astype(np.int64), y


def _cases():
    return [
        pytest.param(name, params, id=f"{name}-{i}")
        for name, settings_ in PARAMS.items()
        for i, params in enumerate(settings_)
    ]


def _fit_both(name, params, X, y, **fit):
    ours, theirs = CLASSES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the alpha=0 warning
        warnings.simplefilter("ignore", RuntimeWarning)  # the peer's log(0)
        return ours(**params).fit(X, y, **fit), theirs(**params).fit(X, y, **fit)


ATTRS = ["class_count_", "class_log_prior_", "feature_count_", "feature_log_prob_"]


@pytest.mark.parametrize(("name", "params"), _cases())
@pytest.mark.parametrize("container", [np.asarray, *SPARSE])
def test_parity_with_sklearn(name, params, container):
    X, y = _data()
    w = np.random.default_rng(1).uniform(0.2, 2.0, len(y))
    Xc = container(X)
    ours, theirs = _fit_both(name, params, Xc, y, sample_weight=w)
    for attr in ATTRS + (["feature_all_"] if name == "ComplementNB" else []):
        assert_allclose(
            getattr(ours, attr), getattr(theirs, attr), rtol=1e-10, atol=1e-12
        )
    Xt, _ = _data(seed=2, n=50)
    if name == "BernoulliNB" and params.get("alpha") == 0.0:
        # alpha = 1e-10: P(absent | c) about 1e-11 for a feature of every row
        # of a class, which scikit-learn takes as 1 - exp(log P(present | c))
        # and so loses to cancellation (a relative error of 1e-5); bayeskit
        # counts the absences. The reference is that count, exactly.
        B = (Xt > 0).astype(float)
        n_c = ours.class_count_[:, None]
        present = ours.feature_count_
        log_pos = np.log(present + 1e-10) - np.log(n_c + 2e-10)
        log_neg = np.log(n_c - present + 1e-10) - np.log(n_c + 2e-10)
        joint = B @ log_pos.T + (1 - B) @ log_neg.T + ours.class_log_prior_
        assert_allclose(ours.predict_joint_log_proba(container(Xt)), joint, rtol=1e-10)
        return
    Xt = container(Xt)
    for method in ["predict_joint_log_proba", "predict_log_proba", "predict_proba"]:
        got, want = getattr(ours, method)(Xt), getattr(theirs, method)(Xt)
        assert_allclose(got, want, rtol=1e-10, atol=1e-10, err_msg=method)
    assert_array_equal(ours.predict(Xt), theirs.predict(Xt))


@pytest.mark.parametrize(("name", "params"), _cases())
def test_dense_and_sparse_identical(name, params):
    X, y = _data(seed=3)
    w = np.random.default_rng(4).uniform(0.0, 3.0, len(y))
    Xt, _ = _data(seed=5, n=40)
    results = []
    for container in [np.asarray, *SPARSE]:
        est, _ = _fit_both(name, params, container(X), y, sample_weight=w)
        results.append(
            (
                est.feature_count_,
                est.feature_log_prob_,
                est.predict_joint_log_proba(container(Xt)),
                est.predict_proba(container(Xt)),
            )
        )
    for other in results[1:]:
        for a, b in zip(results[0], other):
            assert_array_equal(a, b)  # bit for bit


def test_sparse_input_not_densified_nor_modified():
    X, y = _data(seed=6)
    Xs = sp.csc_matrix(X)
    # unsorted indices within columns: read through a sorted copy
    perm = Xs.copy()
    for j in range(perm.shape[1]):
        a, b = perm.indptr[j], perm.indptr[j + 1]
        perm.indices[a:b] = perm.indices[a:b][::-1]
        perm.data[a:b] = perm.data[a:b][::-1]
    perm.has_sorted_indices = False
    before = (perm.indices.copy(), perm.data.copy())
    est = MultinomialNB().fit(perm, y)
    assert_array_equal(perm.indices, before[0])
    assert_array_equal(perm.data, before[1])
    ref = sk.MultinomialNB().fit(X, y)
    assert_allclose(
        est.feature_log_prob_, ref.feature_log_prob_, rtol=1e-12, atol=1e-14
    )
    assert_allclose(est.predict_proba(perm), ref.predict_proba(X), rtol=1e-10)


def test_float32_and_coo_input():
    X, y = _data(seed=7)
    ref = MultinomialNB().fit(X, y)
    for Xc in [
        X.astype(np.float32),
        sp.coo_matrix(X),
        sp.csr_matrix(X, dtype=np.float32),
    ]:
        est = MultinomialNB().fit(Xc, y)
        assert_array_equal(est.feature_log_prob_, ref.feature_log_prob_)
        assert_array_equal(est.predict_proba(Xc), ref.predict_proba(X))


# -- the m-estimate ----------------------------------------------------------------
@pytest.mark.parametrize("alpha", [0.05, 1.0, 7.0])
@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB"])
def test_m_estimate_uniform_p_is_lidstone(name, alpha):
    X, y = _data(seed=8)
    d = X.shape[1]
    ours = CLASSES[name][0](m=alpha * d, p=np.full(d, 1.0 / d)).fit(sp.csr_matrix(X), y)
    theirs = CLASSES[name][1](alpha=alpha).fit(X, y)
    assert_allclose(
        ours.feature_log_prob_, theirs.feature_log_prob_, rtol=1e-12, atol=1e-14
    )
    assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=1e-10)


@pytest.mark.parametrize("alpha", [0.05, 1.0, 7.0])
def test_bernoulli_m_estimate_half_is_lidstone(alpha):
    X, y = _data(seed=9)
    ours = BernoulliNB(m=2 * alpha, p=np.full(X.shape[1], 0.5)).fit(X, y)
    theirs = sk.BernoulliNB(alpha=alpha).fit(X, y)
    assert_allclose(
        ours.feature_log_prob_, theirs.feature_log_prob_, rtol=1e-12, atol=1e-14
    )
    assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=1e-10)


def test_m_estimate_with_background_distribution():
    X, y = _data(seed=10)
    d = X.shape[1]
    p = np.random.default_rng(11).dirichlet(np.ones(d))
    m = 17.0
    est = MultinomialNB(m=m, p=p).fit(sp.csr_array(X), y)
    counts = np.vstack([X[y == c].sum(axis=0) for c in range(4)]).astype(float)
    want = (counts + m * p) / (counts.sum(axis=1, keepdims=True) + m)
    assert_allclose(np.exp(est.feature_log_prob_), want, rtol=1e-12, atol=1e-14)
    joint = X @ np.log(want).T + np.log(np.bincount(y) / len(y))
    assert_allclose(est.predict_joint_log_proba(X), joint, rtol=1e-10)

    # ComplementNB: the same estimate of every class's complement
    cnb = ComplementNB(m=m, p=p).fit(X, y)
    comp = counts.sum(axis=0) - counts
    theta = (comp + m * p) / (comp.sum(axis=1, keepdims=True) + m)
    assert_allclose(cnb.feature_log_prob_, -np.log(theta), rtol=1e-12, atol=1e-14)

    # BernoulliNB: m_j virtual rows with presence probability p_j
    q = np.random.default_rng(12).uniform(0.05, 0.95, d)
    bnb = BernoulliNB(m=np.full(d, 3.0), p=q).fit(X, y)
    present = np.vstack([(X[y == c] > 0).sum(axis=0) for c in range(4)])
    n_c = np.bincount(y)[:, None]
    assert_allclose(
        np.exp(bnb.feature_log_prob_), (present + 3.0 * q) / (n_c + 3.0), rtol=1e-12
    )


def test_bernoulli_alpha_array_is_per_feature():
    """An alpha array smooths every feature's two-category table by its own
    alpha_j (scikit-learn 1.9.1 adds the array to the class counts, which
    fails unless n_classes == n_features: the meaning its parameter docs
    give is the one kept here)."""
    X, y = _data(seed=24)
    alpha = np.linspace(0.1, 3.0, 30)
    est = BernoulliNB(alpha=alpha).fit(sp.csr_matrix(X), y)
    present = np.vstack([(X[y == c] > 0).sum(axis=0) for c in range(4)])
    n_c = np.bincount(y)[:, None]
    assert_allclose(
        np.exp(est.feature_log_prob_), (present + alpha) / (n_c + 2 * alpha), rtol=1e-12
    )


def test_m_and_p_errors():
    X, y = _data()
    with pytest.raises(ValueError, match="either alpha"):
        MultinomialNB(alpha=0.5, m=3.0).fit(X, y)
    with pytest.raises(ValueError, match="needs m"):
        MultinomialNB(p=np.full(30, 1 / 30)).fit(X, y)
    with pytest.raises(ValueError, match=r"p must have shape \(30,\)"):
        MultinomialNB(m=1.0, p=[0.5, 0.5]).fit(X, y)
    with pytest.raises(ValueError, match="probability distribution"):
        ComplementNB(m=1.0, p=np.full(30, 0.5)).fit(X, y)
    with pytest.raises(ValueError, match=r"p must have shape \(30,\)"):
        BernoulliNB(m=1.0, p=np.full(30, 1.5)).fit(X, y)
    with pytest.raises(ValueError, match="Negative values in data passed to Multi"):
        MultinomialNB().fit(sp.csr_matrix(-X), y)
    with pytest.raises(ValueError, match="binarize=None"):
        BernoulliNB(binarize=None).fit(X, y)


# -- the multinomial likelihood by brute force -------------------------------------
def test_multinomial_likelihood_brute_force():
    """log p(x | c) by summing the probability of every word sequence with the
    counts x (a vocabulary of 3 words, documents of up to 4 words)."""
    rng = np.random.default_rng(13)
    prob = rng.dirichlet(np.ones(3), size=2)
    docs = np.array([[0, 0, 0], [1, 0, 0], [2, 1, 1], [0, 3, 0], [1, 1, 2], [0, 2, 2]])
    want = np.zeros((len(docs), 2))
    for i, x in enumerate(docs):
        n = int(x.sum())
        for k in range(2):
            total = 0.0
            for seq in itertools.product(range(3), repeat=n):
                if np.array_equal(np.bincount(seq, minlength=3), x):
                    total += math.prod(prob[k, w] for w in seq)
            want[i, k] = np.log(total)
    family = Multinomial(3)
    params = MultinomialParams(prob)
    for Xc in [docs, sp.csr_matrix(docs), sp.csc_matrix(docs)]:
        assert_allclose(family.log_likelihood(Xc, params), want, rtol=1e-12, atol=1e-14)
    # the classifier's joint log-likelihood is this without the coefficient,
    # which is the same for every class: the posterior is the brute force's
    est = MultinomialNB(alpha=0.7).fit(docs, [0, 0, 0, 1, 1, 1])
    lik = Multinomial(3).log_likelihood(
        docs, MultinomialParams(np.exp(est.feature_log_prob_))
    )
    joint = lik + est.class_log_prior_
    post = np.exp(joint - np.logaddexp.reduce(joint, axis=1, keepdims=True))
    assert_allclose(est.predict_proba(docs), post, rtol=1e-12, atol=1e-14)


def test_bernoulli_is_categorical_with_two_categories():
    X, y = _data(seed=14)
    B = (X > 0).astype(int)
    bnb = BernoulliNB(alpha=0.4).fit(sp.csr_matrix(B), y)
    cnb = CategoricalNB(alpha=0.4, min_categories=2).fit(B, y)
    for j in range(B.shape[1]):
        assert_allclose(bnb.feature_log_prob_[:, j], cnb.feature_log_prob_[j][:, 1])
    assert_allclose(bnb.predict_proba(B), cnb.predict_proba(B), rtol=1e-10)


def test_zero_probability_is_minus_inf_not_nan():
    X = np.array([[2, 0, 1], [0, 3, 0], [1, 0, 0]])
    y = np.array([0, 1, 0])
    est = MultinomialNB(alpha=0.0).fit(X, y)
    joint = est.predict_joint_log_proba(X)
    assert not np.isnan(joint).any()
    assert np.isneginf(joint[1, 0]) and np.isneginf(joint[0, 1])
    assert_array_equal(est.predict(X), y)
    with pytest.warns(RuntimeWarning, match="probability zero under every class"):
        proba = est.predict_proba([[1, 1, 0]])
    assert_allclose(proba, [np.exp(est.class_log_prior_)])
    # BernoulliNB: a feature present in every row of a class makes its
    # absence impossible there
    bnb = BernoulliNB(alpha=0.0).fit((X > 0).astype(int), y)
    joint = bnb.predict_joint_log_proba([[1, 0, 0], [0, 1, 0]])
    assert not np.isnan(joint).any()
    assert np.isneginf(joint[1, 0]) and np.isneginf(joint[0, 1])


def test_complement_norm_with_alpha_zero_is_its_limit_not_nan():
    X = np.array([[2, 0, 1], [0, 3, 0], [1, 0, 0], [0, 1, 0]])
    y = np.array([0, 1, 0, 1])
    est = ComplementNB(alpha=0.0, norm=True).fit(X, y)
    assert not np.isnan(est.feature_log_prob_).any()
    # the limit of alpha -> 0 of the normalised weights
    tiny = ComplementNB(alpha=1e-300, norm=True).fit(X, y)
    assert_allclose(est.feature_log_prob_, tiny.feature_log_prob_, atol=0.01)
    assert not np.isnan(est.predict_proba(X)).any()


# -- statistics: partial_fit, summarize, sample_weight -----------------------------
@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    st.sampled_from(list(CLASSES)),
    st.lists(st.integers(1, 119), min_size=0, max_size=4, unique=True),
    st.sampled_from([np.asarray, sp.csr_matrix, sp.csc_array]),
)
def test_partial_fit_chunks_equal_one_fit(name, cuts, container):
    X, y = _data(seed=15)
    w = np.random.default_rng(16).uniform(0.5, 2.0, len(y))
    Est = CLASSES[name][0]
    full = Est().fit(container(X), y, sample_weight=w)
    part = Est()
    bounds = [0, *sorted(cuts), len(y)]
    for a, b in itertools.pairwise(bounds):
        part.partial_fit(
            container(X[a:b]), y[a:b], classes=np.arange(4), sample_weight=w[a:b]
        )
    for attr in ATTRS:
        assert_allclose(
            getattr(part, attr), getattr(full, attr), rtol=1e-12, atol=1e-14
        )
    assert_allclose(part.predict_proba(X), full.predict_proba(X), rtol=1e-10)


def test_summarize_from_stats_is_fit():
    X, y = _data(seed=17)
    Xs = sp.csr_matrix(X)
    est = MultinomialNB(alpha=0.3)
    stats = est.summarize(Xs[:60], y[:60]) + est.summarize(Xs[60:], y[60:])
    est.from_stats(stats)
    ref = sk.MultinomialNB(alpha=0.3).fit(X, y)
    assert_allclose(
        est.feature_log_prob_, ref.feature_log_prob_, rtol=1e-12, atol=1e-14
    )


@pytest.mark.parametrize("name", list(CLASSES))
def test_integer_sample_weight_is_repetition(name):
    X, y = _data(seed=18, n=40)
    w = np.random.default_rng(19).integers(0, 4, len(y))
    Est = CLASSES[name][0]
    weighted = Est().fit(sp.csr_matrix(X), y, sample_weight=w)
    repeated = Est().fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    for attr in ATTRS:
        assert_allclose(
            getattr(weighted, attr), getattr(repeated, attr), rtol=1e-12, atol=1e-14
        )


def test_hashing_vectorizer_stream():
    """partial_fit over a stream of hashed documents, classes on the first call,
    as scikit-learn's on the same stream."""
    rng = np.random.default_rng(20)
    words = np.array([f"w{i}" for i in range(200)])
    docs = [" ".join(rng.choice(words, rng.integers(3, 12))) for _ in range(300)]
    labels = np.array([int(d.split()[0][1:]) % 3 for d in docs])
    vec = HashingVectorizer(n_features=2**10, alternate_sign=False, norm=None)
    ours, theirs = MultinomialNB(), sk.MultinomialNB()
    for start in range(0, 300, 64):
        chunk = vec.transform(docs[start : start + 64])
        kw = {"classes": [0, 1, 2]} if start == 0 else {}
        ours.partial_fit(chunk, labels[start : start + 64], **kw)
        theirs.partial_fit(chunk, labels[start : start + 64], **kw)
    Xall = vec.transform(docs)
    assert_allclose(ours.feature_count_, theirs.feature_count_)
    assert_allclose(ours.predict_proba(Xall), theirs.predict_proba(Xall), rtol=1e-10)


# -- bayeskit's own parameters -----------------------------------------------------
@pytest.mark.parametrize("name", list(CLASSES))
def test_costs_give_the_bayes_decision(name):
    X, y = _data(seed=21)
    costs = np.array([[0, 1, 1, 1], [9, 0, 9, 9], [1, 1, 0, 1], [1, 1, 1, 0]])
    est = CLASSES[name][0](costs=costs).fit(X, y)
    proba = est.predict_proba(X)
    assert_array_equal(est.predict(X), np.argmin(proba @ costs, axis=1))
    plain = CLASSES[name][0]().fit(X, y)
    assert_allclose(plain.predict_proba(X), proba)  # costs leave proba alone
    assert (est.predict(X) == 1).sum() > (plain.predict(X) == 1).sum()


def test_prior_m_smooths_the_class_prior():
    X, y = _data(seed=22)
    y = np.where(y == 3, 0, y)  # class 3 absent, declared in partial_fit
    est = MultinomialNB(prior_m=2.0).partial_fit(X, y, classes=[0, 1, 2, 3])
    n_c = np.bincount(y, minlength=4)
    assert_allclose(np.exp(est.class_log_prior_), (n_c + 0.5) / (len(y) + 2.0))


# -- a text pipeline ---------------------------------------------------------------
def _corpus(n=240, seed=23):
    """Short documents from two topics over a shared vocabulary (a Zipf
    background plus each topic's own words)."""
    rng = np.random.default_rng(seed)
    common = [f"c{i}" for i in range(40)]
    topic = [[f"a{i}" for i in range(15)], [f"b{i}" for i in range(15)]]
    zipf = 1.0 / np.arange(1, 41)
    zipf /= zipf.sum()
    docs, y = [], rng.integers(0, 2, n)
    for label in y:
        words = list(rng.choice(common, rng.integers(4, 10), p=zipf))
        words += list(rng.choice(topic[label], rng.integers(1, 4)))
        docs.append(" ".join(words))
    vocab = sorted(set(common) | set(topic[0]) | set(topic[1]))
    return docs, y, vocab


def test_count_vectorizer_grid_search_over_alpha_and_m():
    docs, y, vocab = _corpus()
    cv = KFold(4, shuffle=True, random_state=0)
    alphas = [0.01, 0.1, 1.0, 10.0]
    theirs = GridSearchCV(
        make_pipeline(CountVectorizer(vocabulary=vocab), sk.MultinomialNB()),
        {"multinomialnb__alpha": alphas},
        cv=cv,
    ).fit(docs, y)
    ours = GridSearchCV(
        make_pipeline(CountVectorizer(vocabulary=vocab), MultinomialNB()),
        {"multinomialnb__alpha": alphas},
        cv=cv,
    ).fit(docs, y)
    assert_allclose(
        ours.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"]
    )
    # the m-estimate over the same grid: m = alpha * n_features
    by_m = GridSearchCV(
        make_pipeline(CountVectorizer(vocabulary=vocab), MultinomialNB()),
        {"multinomialnb__m": [a * len(vocab) for a in alphas]},
        cv=cv,
    ).fit(docs, y)
    assert_allclose(
        by_m.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"]
    )
    assert by_m.best_params_["multinomialnb__m"] == (
        theirs.best_params_["multinomialnb__alpha"] * len(vocab)
    )
    assert by_m.best_score_ > 0.8
