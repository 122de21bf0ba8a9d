"""pgmpy's issue 2454: inference under an intervention on a descendant of the
query variable, P(Q | do(D = d), A = a) on Q -> D, Q -> A, D -> A.

pgmpy 1.1.2's ``CausalInference.query`` refuses it (a direct edge from the
query variable to the intervened one); the query is well defined: the surgery
replaces P(D | Q) by a point mass at d, so (Pearl 2009, section 3.2.3)

    P(Q = q | do(D = d), A = a)  is proportional to  P(q) P(a | q, d),

where conditioning on D = d would weight by P(d | q) as well. bayeskit's
``query(..., do=...)`` is checked against this closed form on random tables.
"""

import logging
import warnings

import numpy as np
import pytest

from bayeskit import BayesianNetwork


def _network(gen, kq, kd, ka):
    bn = BayesianNetwork([("Q", "D"), ("Q", "A"), ("D", "A")])
    p_q = gen.dirichlet(np.ones(kq))
    p_d = gen.dirichlet(np.ones(kd), size=kq)  # (q, d)
    p_a = gen.dirichlet(np.ones(ka), size=(kq, kd))  # (q, d, a)
    bn.set_cpd("Q", p_q, states=list(range(kq)))
    bn.set_cpd("D", p_d, states=list(range(kd)))
    bn.set_cpd("A", p_a, states=list(range(ka)), parents=["Q", "D"])
    return bn, p_q, p_d, p_a


def test_a_do_query_on_a_descendant_of_the_query_is_the_closed_form():
    gen = np.random.default_rng(2454)
    n_differ = 0
    for _ in range(40):
        kq, kd, ka = gen.integers(2, 4, size=3)
        bn, p_q, p_d, p_a = _network(gen, kq, kd, ka)
        d, a = int(gen.integers(kd)), int(gen.integers(ka))
        expected = p_q * p_a[:, d, a]
        expected /= expected.sum()
        got = bn.query("Q", evidence={"A": a}, do={"D": d}).to_numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
        # Conditioning on D = d is another answer (P(d | q) weighs in).
        seen = p_q * p_d[:, d] * p_a[:, d, a]
        seen /= seen.sum()
        n_differ += not np.allclose(expected, seen, atol=1e-6)
        # Without evidence, intervening downstream leaves Q's prior.
        prior = bn.query("Q", do={"D": d}).to_numpy()
        np.testing.assert_allclose(prior, p_q, rtol=1e-12)
    assert n_differ > 30


def test_pgmpy_refuses_the_query_bayeskit_answers():
    pgmpy_inference = pytest.importorskip("pgmpy.inference")
    gen = np.random.default_rng(0)
    bn, *_ = _network(gen, 2, 2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        try:
            infer = pgmpy_inference.CausalInference(bn.to_pgmpy())
            with pytest.raises(ValueError, match="query variable"):
                infer.query(["Q"], do={"D": 1}, evidence={"A": 0}, show_progress=False)
        finally:
            logging.disable(logging.NOTSET)
    assert bn.query("Q", evidence={"A": 0}, do={"D": 1}).sum() == pytest.approx(1.0)
