"""Answers do not depend on ``PYTHONHASHSEED``: two fresh processes with
different hash seeds give bit-identical results.

Python salts ``str`` hashes per process, so a set of names iterates in another
order in each; where that order reaches the numbers (which clique a
likelihood's sums start from, the order fitted attributes are set in) the
answers differ by a few ulps from one run to the next. The workloads are
tests/hash_seed_workloads.py's compact ones (one per family: naive Bayes,
discriminant analysis, a mixture, an HMM, a network's fit, likelihood with
missing cells, EM, HillClimbSearch, PC and the BIF / XMLBIF files); run
``python tests/hash_seed_workloads.py --broad --seeds 0 1 2 3`` for every
public estimator and the classic networks.
"""

import hash_seed_workloads
import pytest


@pytest.mark.slow
def test_two_hash_seeds_give_bit_identical_answers():
    first = hash_seed_workloads.run_fresh(0, broad=False)
    second = hash_seed_workloads.run_fresh(1, broad=False)
    assert not [n for n, d in first.items() if d.startswith("error")], first
    differ = sorted(name for name in first if first[name] != second.get(name))
    assert not differ, f"answers depend on PYTHONHASHSEED: {differ}"
